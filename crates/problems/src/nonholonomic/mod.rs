//! Nonholonomic systems (seed 001 §3.8): the rolling disk, the knife edge, the parking
//! unicycle and the wheeled snake.

/// The [`MechanicalSystem`](driftlab_core::MechanicalSystem) functions of a planar body
/// `q = (x, y, θ)` with `M = diag(m, m, J)` (`self.p.m`, `self.p.inertia`) and one
/// nonholonomic row, no sideways slip ([`knife_edge::no_slip_row`],
/// [`knife_edge::no_slip_curvature`]): everything but the forces, shared by the knife edge
/// and the parking unicycle.
macro_rules! no_slip_body {
    () => {
        fn dims(&self) -> driftlab_core::Dims {
            driftlab_core::Dims { n: 3, m: 1 }
        }
        fn nonholonomic_rows(&self) -> usize {
            1
        }
        fn mass_pattern(&self) -> driftlab_core::SparsityPattern {
            driftlab_core::SparsityPattern::diagonal(3)
        }
        fn mass(&self, _q: &[f64], out: &mut [f64]) {
            out.copy_from_slice(&[self.p.m, self.p.m, self.p.inertia]);
        }
        /// No position-level constraint: the row is nonholonomic.
        fn constraints(&self, _t: f64, _q: &[f64], out: &mut [f64]) {
            out[0] = 0.0;
        }
        fn jacobian_pattern(&self) -> driftlab_core::SparsityPattern {
            driftlab_core::SparsityPattern::new(1, 3, vec![(0, 0), (0, 1)])
        }
        fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
            $crate::nonholonomic::knife_edge::no_slip_row(q, out);
        }
        fn curvature(&self, _t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
            $crate::nonholonomic::knife_edge::no_slip_curvature(q, v, out);
        }
    };
}

pub mod knife_edge;
pub mod parallel_parking;
pub mod rolling_disk;
pub mod snake_robot;
