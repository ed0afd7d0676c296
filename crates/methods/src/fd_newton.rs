//! Newton's method with a forward-difference Jacobian and dense LU, for the small coupled
//! stage systems of `lobatto` and `gauss-index3` (the residual closure is the only
//! method-specific part).
//!
//! Stops when `‖Δ‖∞ ≤ tol (1 + ‖x‖∞)`, or when the residual has reached its round-off
//! floor (below 1e-9 and no longer halving — scaled constraint rows `Φ/h` carry about
//! `ε ℓ²/h` of noise that no update removes). Fails with [`StepError::NewtonDiverged`]
//! after `max_iter` iterations or on a NaN residual.

use driftlab_core::{StepError, StepReport};
use driftlab_solver::dense::solve_dense;

/// Solve `F(x) = 0` in place from the initial guess `x`; `t` names the step in errors.
pub fn solve(
    x: &mut [f64],
    tol: f64,
    max_iter: usize,
    t: f64,
    mut residual: impl FnMut(&[f64], &mut [f64]),
) -> Result<StepReport, StepError> {
    let dim = x.len();
    let (mut res, mut pert, mut jac) = (vec![0.0; dim], vec![0.0; dim], vec![0.0; dim * dim]);
    let mut report = StepReport::default();
    let mut previous = f64::INFINITY;
    loop {
        residual(x, &mut res);
        let rnorm = res.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
        if report.newton_iterations >= max_iter || rnorm.is_nan() {
            return Err(StepError::NewtonDiverged {
                t,
                iterations: report.newton_iterations,
                residual: rnorm,
                tol,
            });
        }
        if crate::roundoff::stalled(rnorm, previous, 1.0, crate::roundoff::NEWTON) {
            return Ok(report);
        }
        previous = rnorm;
        let mut xp = x.to_vec();
        for j in 0..dim {
            let e = 1e-7 * (1.0 + x[j].abs());
            xp[j] = x[j] + e;
            residual(&xp, &mut pert);
            xp[j] = x[j];
            for i in 0..dim {
                jac[i * dim + j] = (pert[i] - res[i]) / e;
            }
        }
        let mut delta: Vec<f64> = res.iter().map(|r| -r).collect();
        solve_dense(dim, &jac, &mut delta).map_err(|e| StepError::LinearSolve {
            t,
            detail: e.to_string(),
        })?;
        report.newton_iterations += 1;
        report.factorizations += 1;
        for j in 0..dim {
            x[j] += delta[j];
        }
        let size = x.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
        if delta.iter().fold(0.0_f64, |a, v| a.max(v.abs())) <= tol * (1.0 + size) {
            return Ok(report);
        }
    }
}
