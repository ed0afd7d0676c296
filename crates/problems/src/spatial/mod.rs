//! Spatial mechanisms: rod chains on spherical joints, the heavy top, the torque-free body
//! in Euler parameters and in natural coordinates, the prismatic slider.

pub mod heavy_top;
pub mod natural_body;
pub mod prismatic_slider;
pub mod quaternion_body;
pub mod spatial_chain;
pub mod spatial_double_pendulum;
