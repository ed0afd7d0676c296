//! Symmetric projection (Hairer, "Symmetric projection methods for differential equations
//! on manifolds", BIT 40 (2000) 726–734; Hairer, Lubich & Wanner, Geometric Numerical
//! Integration, 2nd ed., §V.4.1): the state is pushed *off* the manifold before the inner
//! step by the same amount that brings it back after it,
//!
//! ```text
//! ỹ_n     = y_n + N(y_n) c,
//! ŷ_{n+1} = Φ_h(ỹ_n),
//! y_{n+1} = ŷ_{n+1} + N(y_{n+1}) c,      g(y_{n+1}) = 0,
//! ```
//!
//! with one `c` for both ends. Exchanging `n ↔ n+1`, `h ↔ −h`, `c ↔ −c` gives the same
//! equations, so the projected method is symmetric whenever the inner `Φ_h` is — unlike the
//! standard projection `y_{n+1} = π(Φ_h(y_n))`, which is not, and which after Gauss drifts
//! in energy over long runs (seed 004 §1; seed 001 exercise 3).
//!
//! For a mechanical system `y = (q, v)` and `g = (Φ(t, q), Φ_q v + Φ_t)`; each level has
//! its own `c` (`c_q`, `c_v ∈ ℝᵐ`) and the direction at a position `q` is
//!
//! ```text
//! N(q) c = x   from   [W Φ_qᵀ; Φ_q 0] [x; y] = [0; c],   i.e. x = W⁻¹Φ_qᵀ (Φ_q W⁻¹Φ_qᵀ)⁻¹ c,
//! ```
//!
//! a function of `q` alone (any smooth `N` keeps the symmetry; this one satisfies
//! `Φ_q N c = c`). Then `g(y_{n+1}) ≈ g(ŷ) + 2c`, and `c` is found by the simplified
//! Newton iteration `c ← c − g(y_{n+1})/2`; each iteration retakes the inner step from
//! the new `ỹ_n`, so the inner method must be restartable. `N(y_{n+1})` is evaluated at
//! the previous iterate of `y_{n+1}`, which converges with `c`.
//!
//! It cannot work after a method whose step undoes the start perturbation: Gauss on the
//! index-3 form (`gauss-index3`) with s odd has R(∞) = −1, its stage constraints map the
//! normal part of `ỹ_n − y_n` to −1 times itself, so `∂g(y_{n+1})/∂c ≈ Φ_q(−N + N) = 0`
//! and the iteration ends as a `projection-failed` row (measured in
//! `tests/reversibility.rs`).

use super::metric::{fill_metric, projection_error, Metric};
use crate::dynamics::{linear_error, ConstraintsAt};
use driftlab_core::prelude::*;
use driftlab_solver::newton::{NewtonFailure, NewtonKernel, NewtonOptions};
use driftlab_solver::{ConstraintEval, KktSolver, SolverError};

/// The settings of one symmetric projection step.
pub(crate) struct SymmetricSettings {
    /// Metric `W` of the directions.
    pub metric: Metric,
    /// Number of stored entries of `M`.
    pub n_mass: usize,
    /// Stop when `‖Φ‖∞ ≤ tol` and `‖Φ_q v + Φ_t‖∞ ≤ tol · max(1, ‖v‖∞)`.
    pub tol: f64,
    /// Iteration cap (each iteration is one inner step).
    pub max_iter: usize,
    /// Also the velocity level.
    pub velocity: bool,
}

/// A KKT matrix `[W Φ_qᵀ; Φ_q 0]` factored at one point, applying `N(q)`.
struct Direction<'a> {
    kkt: &'a mut KktSolver,
    n: usize,
    rhs: Vec<f64>,
}

impl<'a> Direction<'a> {
    /// Factor at `(t, q)`.
    fn at(
        kkt: &'a mut KktSolver, s: &dyn MechanicalSystem, set: &SymmetricSettings, t: f64,
        q: &[f64],
    ) -> Result<Self, SolverError> {
        let n = q.len();
        let a_len = set.n_mass + n;
        let (mut mass, mut metric) = (vec![0.0; a_len], vec![0.0; a_len]);
        fill_metric(set.metric, set.n_mass, &mut mass, &mut metric, s, q);
        let mut jac = vec![0.0; kkt.b_len()];
        ConstraintsAt { sys: s, t }.jacobian(q, &mut jac);
        kkt.factorize(&metric, &jac, None)?;
        let rhs = vec![0.0; kkt.dim()];
        Ok(Self { kkt, n, rhs })
    }

    /// `x += N c`.
    fn add(&mut self, c: &[f64], x: &mut [f64]) -> Result<(), SolverError> {
        self.rhs[..self.n].iter_mut().for_each(|r| *r = 0.0);
        self.rhs[self.n..].copy_from_slice(c);
        self.kkt.solve(&mut self.rhs)?;
        x.iter_mut()
            .zip(&self.rhs[..self.n])
            .for_each(|(x, d)| *x += d);
        Ok(())
    }
}

/// One symmetric projection step around `inner`'s step: `state` goes from `y_n` to
/// `y_{n+1}`. `kkts` are the factorizations at the two ends. Returns the inner steps'
/// reports summed and the number of iterations.
pub(crate) fn symmetric_step(
    inner: &mut dyn Stepper, s: &dyn MechanicalSystem, state: &mut State, h: f64,
    kkts: (&mut KktSolver, &mut KktSolver), set: &SymmetricSettings,
) -> Result<(StepReport, usize), StepError> {
    let start = state.clone();
    let m = start.lambda.len();
    let t0 = start.t;
    let mut at_start =
        Direction::at(kkts.0, s, set, t0, &start.q).map_err(|e| linear_error(t0, e))?;
    let (mut c_q, mut c_v) = (vec![0.0; m], vec![0.0; m]);
    let (mut r_q, mut r_v) = (vec![0.0; m], vec![0.0; m]);
    let mut report = StepReport {
        factorizations: 1,
        ..StepReport::default()
    };
    let mut end_point: Option<Vec<f64>> = None;
    let (mut res_q, mut res_v) = (f64::NAN, f64::NAN);
    let mut result: Option<State> = None;
    // Each kernel iteration retakes the inner step from the moved start; the kernel's
    // own test is off (tol 0): an iteration reports 0 once both residuals are within the
    // tolerance (as `project_position` does).
    let mut kernel = NewtonKernel::new(NewtonOptions::residual_stop(set.max_iter));
    let solved = kernel.solve(|k| -> Result<f64, StepError> {
        let mut y = start.clone();
        if k > 1 {
            at_start
                .add(&c_q, &mut y.q)
                .map_err(|e| linear_error(t0, e))?;
            at_start
                .add(&c_v, &mut y.v)
                .map_err(|e| linear_error(t0, e))?;
            inner.reject();
        }
        let r = inner.step(&mut y, h)?;
        report.newton_iterations += r.newton_iterations;
        report.factorizations += r.factorizations + 1;
        report.newton_limit = r.newton_limit;
        let t1 = y.t;
        let q_at = end_point.take().unwrap_or_else(|| y.q.clone());
        let mut at_end =
            Direction::at(kkts.1, s, set, t1, &q_at).map_err(|e| linear_error(t1, e))?;
        at_end
            .add(&c_q, &mut y.q)
            .map_err(|e| linear_error(t1, e))?;
        at_end
            .add(&c_v, &mut y.v)
            .map_err(|e| linear_error(t1, e))?;
        (res_q, res_v) =
            driftlab_core::system::constraint_residuals(s, t1, &y.q, &y.v, &mut r_q, &mut r_v);
        let v_scale = y.v.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
        let res = res_q.max(if set.velocity { res_v / v_scale } else { 0.0 });
        if res <= set.tol {
            result = Some(y);
            return Ok(0.0);
        }
        if k > set.max_iter || res.is_nan() {
            return Err(diverged(t0 + h, k - 1, res, set.tol));
        }
        c_q.iter_mut().zip(&r_q).for_each(|(c, r)| *c -= 0.5 * r);
        if set.velocity {
            c_v.iter_mut().zip(&r_v).for_each(|(c, r)| *c -= 0.5 * r);
        }
        end_point = Some(y.q);
        Ok(res / set.tol)
    });
    let iterations = kernel.counters.iterations - 1;
    match (solved, result) {
        (Ok(_), Some(y)) => {
            *state = y;
            Ok((report, iterations))
        }
        (Err(NewtonFailure::Iteration(e)), _) => Err(e),
        _ => Err(diverged(t0 + h, iterations, res_q.max(res_v), set.tol)),
    }
}

/// The error of a symmetric projection that did not converge.
fn diverged(t: f64, iterations: usize, residual: f64, tol: f64) -> StepError {
    projection_error(
        t,
        SolverError::ProjectionDiverged {
            iterations,
            residual,
            tol,
        },
    )
}
