//! Published benchmarks with reference solutions: the IVP Test Set (Andrews' squeezer, car
//! axis, flexible slider-crank) and the IFToMM / A Coruña library (N four-bars, Bricard).

pub mod andrews;
pub mod bricard;
pub mod car_axis;
pub mod n_four_bar;
pub mod n_four_bar_angle;
pub mod slider_crank;
