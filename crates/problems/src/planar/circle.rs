//! A point mass `m` in the plane, `q = (x, y)`, `M = m I`, on the circle
//! `Φ = x² + y² − r²` (the pendulum, the circle rotor; the bead on the rod shares the
//! point mass only): the pieces their `MechanicalSystem` functions call, each written out
//! in the problem's own `impl` so a reader sees every function of the trait there.
//!
//! ```text
//! Φ_q = [2x, 2y],   γ = −Φ_qq(v, v) = −2|v|²,   λ ∇²Φ = 2λ I
//! ```

use driftlab_core::{Dims, SparsityPattern};

/// `n = 2` coordinates, `m = 1` row.
pub(crate) const DIMS: Dims = Dims { n: 2, m: 1 };

/// `M = m I` in the order of `SparsityPattern::diagonal(2)`.
pub(crate) fn mass(m: f64, out: &mut [f64]) {
    out.iter_mut().for_each(|x| *x = m);
}

/// `Φ = x² + y² − r²`.
pub(crate) fn phi(q: &[f64], r: f64) -> f64 {
    q[0] * q[0] + q[1] * q[1] - r * r
}

/// The pattern of `Φ_q`: one row, both coordinates.
pub(crate) fn jacobian_pattern() -> SparsityPattern {
    SparsityPattern::new(1, 2, vec![(0, 0), (0, 1)])
}

/// `Φ_q = [2x, 2y]`.
pub(crate) fn jacobian(q: &[f64], out: &mut [f64]) {
    out[0] = 2.0 * q[0];
    out[1] = 2.0 * q[1];
}

/// `γ = −2|v|²`.
pub(crate) fn curvature(v: &[f64]) -> f64 {
    -2.0 * (v[0] * v[0] + v[1] * v[1])
}

/// `λ ∇²Φ = 2λ I` in the order of `SparsityPattern::diagonal(2)`.
pub(crate) fn hessian(lambda: &[f64], out: &mut [f64]) {
    out[0] = 2.0 * lambda[0];
    out[1] = 2.0 * lambda[0];
}
