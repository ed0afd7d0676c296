//! Newton's method with a forward-difference Jacobian and dense LU, for the small coupled
//! stage systems of `lobatto` and `gauss-index3` (the residual closure is the only
//! method-specific part). The iteration runs in the workspace's Newton kernel
//! ([`driftlab_solver::newton`]): each iteration evaluates the residual, a fresh
//! forward-difference Jacobian, and applies the full Newton correction; the kernel stops
//! when `η ‖Δ‖∞ ≤ tol (1 + ‖x‖∞)` (`η = θ/(1 − θ)` from the observed contraction; `η = 1`
//! in the first iteration), and fails on divergence (`θ ≥ 0.99`), a NaN residual or the
//! iteration limit.
//!
//! Round-off floor: a residual below 1e-9 that no longer halves has converged
//! ([`crate::roundoff::stalled`]) — scaled constraint rows `Φ/h` carry about `ε ℓ²/h` of
//! noise that no update removes.

use driftlab_core::{StepError, StepReport};
use driftlab_solver::dense::solve_dense;
use driftlab_solver::newton::{NewtonFailure, NewtonKernel, NewtonOptions};

/// Solve `F(x) = 0` in place from the initial guess `x`; `t` names the step in errors.
pub fn solve(
    x: &mut [f64], tol: f64, max_iter: usize, t: f64, mut residual: impl FnMut(&[f64], &mut [f64]),
) -> Result<StepReport, StepError> {
    let dim = x.len();
    let (mut res, mut pert, mut jac) = (vec![0.0; dim], vec![0.0; dim], vec![0.0; dim * dim]);
    let mut previous = f64::INFINITY;
    let mut last_residual = f64::NAN;
    let mut kernel = NewtonKernel::new(NewtonOptions::full(max_iter));
    let solved = kernel.solve(|_| {
        residual(x, &mut res);
        let rnorm = res.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
        last_residual = rnorm;
        if rnorm.is_nan() {
            return Err(StepError::NewtonDiverged {
                t,
                iterations: 0,
                residual: rnorm,
                tol,
            });
        }
        if crate::roundoff::stalled(rnorm, previous, 1.0, crate::roundoff::NEWTON) {
            return Ok(0.0);
        }
        previous = rnorm;
        forward_difference_jacobian(x, &res, &mut pert, &mut jac, &mut residual);
        let mut delta: Vec<f64> = res.iter().map(|r| -r).collect();
        solve_dense(dim, &jac, &mut delta).map_err(|e| StepError::LinearSolve {
            t,
            detail: e.to_string(),
        })?;
        for (xi, d) in x.iter_mut().zip(&delta) {
            *xi += d;
        }
        let size = x.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
        let step = delta.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
        Ok(step / (tol * (1.0 + size)))
    });
    let iterations = kernel.counters.iterations;
    let fail = |iterations: usize| StepError::NewtonDiverged {
        t,
        iterations,
        residual: last_residual,
        tol,
    };
    match solved {
        Ok(r) => Ok(StepReport {
            newton_iterations: r.iterations,
            factorizations: r.iterations,
            ..StepReport::default()
        }),
        Err(NewtonFailure::Iteration(StepError::NewtonDiverged { .. })) => Err(fail(iterations)),
        Err(NewtonFailure::Iteration(e)) => Err(e),
        Err(
            NewtonFailure::Slow { iterations, .. } | NewtonFailure::Diverged { iterations, .. },
        ) => Err(fail(iterations)),
    }
}

/// Column `j` of `jac` (row-major) = `(F(x + e_j δ_j) − F(x)) / δ_j`, `δ_j = 1e-7 (1 + |x_j|)`.
fn forward_difference_jacobian(
    x: &[f64], res: &[f64], pert: &mut [f64], jac: &mut [f64],
    residual: &mut impl FnMut(&[f64], &mut [f64]),
) {
    let dim = x.len();
    let mut xp = x.to_vec();
    for j in 0..dim {
        let e = 1e-7 * (1.0 + x[j].abs());
        xp[j] = x[j] + e;
        residual(&xp, pert);
        xp[j] = x[j];
        for i in 0..dim {
            jac[i * dim + j] = (pert[i] - res[i]) / e;
        }
    }
}
