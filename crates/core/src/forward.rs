//! [`forward_mechanical!`](crate::forward_mechanical): the pass-through functions of a
//! problem that wraps another (another start, a force pulse, a subset of rows, perturbed
//! constraints), written once. A wrapper implements what it changes and forwards the rest
//! by name:
//!
//! ```ignore
//! impl MechanicalSystem for Wrapper {
//!     driftlab_core::forward_mechanical!(inner; info, dims, mass_pattern, mass);
//!     fn forces(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) { /* changed */ }
//!     // …
//! }
//! ```
//!
//! `inner` is the field holding the wrapped system (anything that derefs to
//! `dyn MechanicalSystem`). Every function of the trait has a name here, so a wrapper
//! that should forward a function added to the trait later lists it, instead of
//! silently keeping the trait's default.

/// Forward the named [`MechanicalSystem`](crate::MechanicalSystem) functions to the field
/// `inner` (see the module doc).
#[macro_export]
macro_rules! forward_mechanical {
    ($inner:ident; $($name:ident),* $(,)?) => {
        $( $crate::forward_mechanical!(@one $inner $name); )*
    };
    (@one $i:ident info) => {
        fn info(&self) -> $crate::ProblemInfo { self.$i.info() }
    };
    (@one $i:ident dims) => {
        fn dims(&self) -> $crate::Dims { self.$i.dims() }
    };
    (@one $i:ident mass_pattern) => {
        fn mass_pattern(&self) -> $crate::SparsityPattern { self.$i.mass_pattern() }
    };
    // The mass matrix is one thing: `mass` forwards `M(q)`, `M(t, q, v)` and whether it
    // varies together, so that a wrapper cannot forward one and keep another's default.
    (@one $i:ident mass) => {
        fn mass(&self, q: &[f64], out: &mut [f64]) { self.$i.mass(q, out) }
        fn mass_at(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
            self.$i.mass_at(t, q, v, out)
        }
        fn mass_varies(&self) -> bool { self.$i.mass_varies() }
    };
    (@one $i:ident forces) => {
        fn forces(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
            self.$i.forces(t, q, v, out)
        }
    };
    (@one $i:ident constraints) => {
        fn constraints(&self, t: f64, q: &[f64], out: &mut [f64]) {
            self.$i.constraints(t, q, out)
        }
    };
    (@one $i:ident jacobian_pattern) => {
        fn jacobian_pattern(&self) -> $crate::SparsityPattern { self.$i.jacobian_pattern() }
    };
    (@one $i:ident jacobian) => {
        fn jacobian(&self, t: f64, q: &[f64], out: &mut [f64]) { self.$i.jacobian(t, q, out) }
    };
    (@one $i:ident phi_t) => {
        fn phi_t(&self, t: f64, q: &[f64], out: &mut [f64]) { self.$i.phi_t(t, q, out) }
    };
    (@one $i:ident curvature) => {
        fn curvature(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
            self.$i.curvature(t, q, v, out)
        }
    };
    (@one $i:ident constraint_hessian) => {
        fn constraint_hessian(&self) -> Option<&dyn $crate::ConstraintHessian> {
            self.$i.constraint_hessian()
        }
    };
    (@one $i:ident tangent) => {
        fn tangent(&self) -> Option<&dyn $crate::TangentMatrices> { self.$i.tangent() }
    };
    (@one $i:ident energy) => {
        fn energy(&self, t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
            self.$i.energy(t, q, v)
        }
    };
    (@one $i:ident row_kinds) => {
        fn row_kinds(&self) -> Vec<&'static str> { self.$i.row_kinds() }
    };
    (@one $i:ident momentum) => {
        fn momentum(&self, t: f64, q: &[f64], v: &[f64]) -> Option<Vec<f64>> {
            self.$i.momentum(t, q, v)
        }
    };
    (@one $i:ident energy_scale) => {
        fn energy_scale(&self) -> f64 { self.$i.energy_scale() }
    };
    (@one $i:ident initial_state) => {
        fn initial_state(&self) -> $crate::State { self.$i.initial_state() }
    };
    (@one $i:ident exact) => {
        fn exact(&self, t: f64) -> Option<$crate::ExactSolution> { self.$i.exact(t) }
    };
    (@one $i:ident nonholonomic_rows) => {
        fn nonholonomic_rows(&self) -> usize { self.$i.nonholonomic_rows() }
    };
    (@one $i:ident prioritized) => {
        fn prioritized(&self) -> Option<&dyn $crate::Prioritized> { self.$i.prioritized() }
    };
    (@one $i:ident unilateral) => {
        fn unilateral(&self) -> Option<&dyn $crate::Unilateral> { self.$i.unilateral() }
    };
    (@one $i:ident attitude) => {
        fn attitude(&self) -> Option<&dyn $crate::Attitude> { self.$i.attitude() }
    };
    (@one $i:ident reference) => {
        fn reference(&self) -> Option<$crate::ReferenceSolution> { self.$i.reference() }
    };
    (@one $i:ident threads) => {
        fn use_threads(&self, threads: usize) { self.$i.use_threads(threads) }
    };
    (@one $i:ident actuators) => {
        fn actuators(&self) -> Vec<$crate::Actuator> { self.$i.actuators() }
    };
}
