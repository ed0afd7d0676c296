//! Planar mechanisms: the pendulum (with and without stops), point-mass chains in
//! Cartesian and angle coordinates, the priority conflict, the circle rotor, the bead on a
//! spinning rod, the free-floating space robot, the ball stack and the tracked arm.

/// The [`MechanicalSystem`](driftlab_core::MechanicalSystem) functions of a point mass
/// `self.p.m` in the plane under one constraint row: `dims` (n = 2, m = 1),
/// `mass_pattern` and `mass` (`M = m I`).
macro_rules! planar_point_mass {
    () => {
        fn dims(&self) -> driftlab_core::Dims {
            driftlab_core::Dims { n: 2, m: 1 }
        }
        fn mass_pattern(&self) -> driftlab_core::SparsityPattern {
            driftlab_core::SparsityPattern::diagonal(2)
        }
        fn mass(&self, _q: &[f64], out: &mut [f64]) {
            out.iter_mut().for_each(|x| *x = self.p.m);
        }
    };
}

/// The [`MechanicalSystem`](driftlab_core::MechanicalSystem) functions of the circle
/// `Φ = x² + y² − r²` with `r = self.p.$radius`: `constraints`, `jacobian_pattern`,
/// `jacobian` (`Φ_q = [2x, 2y]`), `curvature` (`γ = −2|v|²`) and `constraint_hessian`
/// (the type implements it with [`circle_hessian!`]).
macro_rules! circle_constraint {
    ($radius:ident) => {
        fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
            out[0] = q[0] * q[0] + q[1] * q[1] - self.p.$radius * self.p.$radius;
        }
        fn jacobian_pattern(&self) -> driftlab_core::SparsityPattern {
            driftlab_core::SparsityPattern::new(1, 2, vec![(0, 0), (0, 1)])
        }
        fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
            out[0] = 2.0 * q[0];
            out[1] = 2.0 * q[1];
        }
        fn curvature(&self, _t: f64, _q: &[f64], v: &[f64], out: &mut [f64]) {
            out[0] = -2.0 * (v[0] * v[0] + v[1] * v[1]);
        }
        fn constraint_hessian(&self) -> Option<&dyn driftlab_core::ConstraintHessian> {
            Some(self)
        }
    };
}

/// `impl ConstraintHessian for $system` of the circle of [`circle_constraint!`]:
/// `λ ∇²Φ = 2λ I`.
macro_rules! circle_hessian {
    ($system:ty) => {
        impl driftlab_core::ConstraintHessian for $system {
            fn pattern(&self) -> driftlab_core::SparsityPattern {
                driftlab_core::SparsityPattern::diagonal(2)
            }
            fn values(&self, _t: f64, _q: &[f64], lambda: &[f64], out: &mut [f64]) {
                out[0] = 2.0 * lambda[0];
                out[1] = 2.0 * lambda[0];
            }
        }
    };
}

pub mod ball_stack;
pub mod chain_floor;
pub mod circle_rotor;
pub mod elastic_rod;
pub mod leaking_pendulum;
pub mod pendulum;
pub mod pendulum_limits;
pub mod planar_chain;
pub mod planar_chain_angles;
pub mod priority_conflict;
pub mod rotating_rod;
pub mod space_robot;
pub mod tracked_arm;

use driftlab_core::ParamError;

/// Refuse a count parameter `field` of problem `id` that is zero (a chain of no links):
/// out of range, with `fix`.
pub(crate) fn at_least_one(
    id: &str, field: &'static str, count: usize, fix: &str,
) -> Result<(), ParamError> {
    if count == 0 {
        return Err(ParamError::OutOfRange {
            id: id.into(),
            field,
            value: 0.0,
            fix: fix.into(),
        });
    }
    Ok(())
}
