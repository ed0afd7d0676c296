//! The contact group of `typed` (seed 001 exercise 8: "接触约束：LCP求解器"): the
//! unilateral rows `g(q) ≥ 0` of a problem, treated after the step as their own group by
//! velocity-level impulses, in the group order the parameters give.
//!
//! At the state `(t, q, v)` after the step (and after the groups before it), with the
//! active rows `A = {i : g_i(q) ≤ 0}`, the impulses `P ≥ 0` solve the LCP
//!
//! ```text
//! 0 ≤ P ⊥ G_A v⁺ + e min(G_A v_n, 0) ≥ 0,   v⁺ = v + M⁻¹ G_Aᵀ P,   W = G_A M⁻¹ G_Aᵀ
//! ```
//!
//! (Newton's impact law with the approach velocity at the step's start `v_n` — a row
//! that was separating then is held at ġ⁺ ≥ 0; Acary & Brogliato,
//! *Numerical Methods for Nonsmooth Dynamical Systems*, 2008, §10.1), by projected
//! Gauss–Seidel. The Delassus matrix is taken with the **mass alone**: the group does not
//! see the bilateral rows, as the seed's loop "for each constraint_group in
//! priority_order" treats one group at a time. An impulse then moves the bilateral rows'
//! velocities, and a projection after it moves the contacts' — which group is treated last
//! is the one that holds at the end of the step (`typed`'s `order`). Moreau–Jean solves
//! both groups at once, with the Delassus matrix of the bilateral KKT matrix.

use crate::unilateral::moreau_jean::pgs;
use driftlab_core::prelude::*;
use driftlab_solver::dense::DenseLu;

/// PGS settings of the contact group.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lcp {
    /// Complementarity tolerance `max_i |min(P_i, w_i)|`.
    pub(super) tol: f64,
    /// Sweep cap.
    pub(super) max_iter: usize,
}

/// Apply the contact impulses to `y.v` (see the module documentation); `vn` is the
/// velocity at the step's start. Returns the PGS sweeps (0 without an active row).
pub(super) fn apply_contacts(
    sys: &dyn MechanicalSystem, y: &mut State, vn: &[f64], lcp: Lcp,
) -> Result<usize, StepError> {
    let Some(u) = sys.unilateral() else {
        return Ok(0);
    };
    let (t, n, k) = (y.t, y.q.len(), u.rows());
    let mut g = vec![0.0; k];
    u.gaps(t, &y.q, &mut g);
    let active: Vec<usize> = (0..k).filter(|&i| g[i] <= 0.0).collect();
    if active.is_empty() {
        return Ok(0);
    }
    let mut gq = vec![0.0; k * n];
    u.gap_jacobian(t, &y.q, &mut gq);
    let cols = inverse_mass_columns(sys, y, &gq, &active)?;
    let dot = |i: usize, x: &[f64]| (0..n).map(|c| gq[i * n + c] * x[c]).sum::<f64>();
    let na = active.len();
    let (mut w, mut b) = (vec![0.0; na * na], vec![0.0; na]);
    let e = u.restitution();
    for (a, &i) in active.iter().enumerate() {
        b[a] = dot(i, &y.v) + e * dot(i, vn).min(0.0);
        for (c, col) in cols.iter().enumerate() {
            w[a * na + c] = dot(i, col);
        }
    }
    let mut p = vec![0.0; na];
    let sweeps = pgs(&w, &b, &mut p, lcp.tol, lcp.max_iter).map_err(|residual| {
        StepError::NewtonDiverged {
            t,
            iterations: lcp.max_iter,
            residual,
            tol: lcp.tol,
        }
    })?;
    for (pa, col) in p.iter().zip(&cols) {
        for (vi, ci) in y.v.iter_mut().zip(col) {
            *vi += pa * ci;
        }
    }
    Ok(sweeps)
}

/// `M(q)⁻¹ G_iᵀ` for every active row `i` (dense LU of M: the groups of a typed problem
/// are small).
fn inverse_mass_columns(
    sys: &dyn MechanicalSystem, y: &State, gq: &[f64], active: &[usize],
) -> Result<Vec<Vec<f64>>, StepError> {
    let n = y.q.len();
    let mp = sys.mass_pattern();
    let mut mv = vec![0.0; mp.nnz()];
    sys.mass(&y.q, &mut mv);
    let fail = |e: driftlab_solver::SolverError| StepError::LinearSolve {
        t: y.t,
        detail: format!("typed contact group, M⁻¹Gᵀ: {e}"),
    };
    let lu = DenseLu::factor(n, &mp.to_dense(&mv, true)).map_err(fail)?;
    active
        .iter()
        .map(|&i| {
            let mut c = gq[i * n..(i + 1) * n].to_vec();
            lu.solve(&mut c).map_err(fail)?;
            Ok(c)
        })
        .collect()
}
