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

use driftlab_core::{MechanicalSystem, SparsityPattern, StepError, StepReport};
use driftlab_solver::dense::DenseLu;
use driftlab_solver::newton::{NewtonFailure, NewtonKernel, NewtonOptions};

/// The data of the step whose stage system is solved: system, start time, step size,
/// `q_n`, `v_n` (the stage residuals of `lobatto` and `gauss-index3` read them).
pub(crate) struct StepData<'a> {
    pub(crate) sys: &'a dyn MechanicalSystem,
    pub(crate) t0: f64,
    pub(crate) h: f64,
    pub(crate) qn: &'a [f64],
    pub(crate) vn: &'a [f64],
}

/// `M(q)` and `Φ_q` value buffers with their patterns, built once per run (a problem may
/// assemble a pattern on every call).
pub(crate) struct ModelBuffers {
    pub(crate) mass_pattern: SparsityPattern,
    pub(crate) jac_pattern: SparsityPattern,
    pub(crate) mass: Vec<f64>,
    pub(crate) jac: Vec<f64>,
}

impl ModelBuffers {
    /// Buffers for `sys`.
    pub(crate) fn new(sys: &dyn MechanicalSystem) -> Self {
        let (mass_pattern, jac_pattern) = (sys.mass_pattern(), sys.jacobian_pattern());
        Self {
            mass: vec![0.0; mass_pattern.nnz()],
            jac: vec![0.0; jac_pattern.nnz()],
            mass_pattern,
            jac_pattern,
        }
    }
}

/// The starting guess of a collocation stage system whose unknowns begin with the stage
/// velocities and the scaled multipliers: `V_i = v_n + c_i h a_n`, `Λ̃_i = h λ_n`
/// (`x = (V_1…V_s, Λ̃_1…Λ̃_s, …)`; the rest is left to the caller).
pub(crate) fn stage_guess(x: &mut [f64], state: &driftlab_core::State, c: &[f64], h: f64) {
    let (s, n, m) = (c.len(), state.v.len(), state.lambda.len());
    for i in 0..s {
        for k in 0..n {
            x[i * n + k] = state.v[k] + c[i] * h * state.a[k];
        }
        for r in 0..m {
            x[s * n + i * m + r] = h * state.lambda[r];
        }
    }
}

/// The work arrays of the iteration for `dim` unknowns, kept across steps so that a step
/// allocates nothing (the LU is refactored in place).
pub struct FdNewton {
    res: Vec<f64>,
    pert: Vec<f64>,
    /// The perturbed point of the forward differences.
    xp: Vec<f64>,
    jac: Vec<f64>,
    delta: Vec<f64>,
    lu: DenseLu,
}

impl FdNewton {
    /// Work arrays for `dim` unknowns.
    pub fn new(dim: usize) -> Self {
        Self {
            res: vec![0.0; dim],
            pert: vec![0.0; dim],
            xp: vec![0.0; dim],
            jac: vec![0.0; dim * dim],
            delta: vec![0.0; dim],
            lu: DenseLu::new(dim),
        }
    }

    /// Solve `F(x) = 0` in place from the initial guess `x`; `t` names the step in errors.
    pub fn solve(
        &mut self, x: &mut [f64], tol: f64, max_iter: usize, t: f64,
        mut residual: impl FnMut(&[f64], &mut [f64]),
    ) -> Result<StepReport, StepError> {
        let mut previous = f64::INFINITY;
        let mut last_residual = f64::NAN;
        let mut kernel = NewtonKernel::new(NewtonOptions::full(max_iter));
        let solved = kernel.solve(|_| {
            residual(x, &mut self.res);
            let rnorm = self.res.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
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
            self.newton_correction(x, t, &mut residual)?;
            let size = x.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
            let step = self.delta.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
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
            Err(NewtonFailure::Iteration(StepError::NewtonDiverged { .. })) => {
                Err(fail(iterations))
            }
            Err(NewtonFailure::Iteration(e)) => Err(e),
            Err(
                NewtonFailure::Slow { iterations, .. } | NewtonFailure::Diverged { iterations, .. },
            ) => Err(fail(iterations)),
        }
    }

    /// `x += δ` with `J δ = −F(x)`, `J` by forward differences at `x` (`F(x)` in `res`).
    fn newton_correction(
        &mut self, x: &mut [f64], t: f64, residual: &mut impl FnMut(&[f64], &mut [f64]),
    ) -> Result<(), StepError> {
        self.forward_difference_jacobian(x, residual);
        for (d, r) in self.delta.iter_mut().zip(&self.res) {
            *d = -r;
        }
        let (dim, jac) = (x.len(), &self.jac);
        let linear = |e: driftlab_solver::SolverError| StepError::LinearSolve {
            t,
            detail: e.to_string(),
        };
        self.lu.refactor(|i, j| jac[i * dim + j]).map_err(linear)?;
        self.lu.solve(&mut self.delta).map_err(linear)?;
        for (xi, d) in x.iter_mut().zip(&self.delta) {
            *xi += d;
        }
        Ok(())
    }

    /// Column `j` of `jac` (row-major) = `(F(x + e_j δ_j) − F(x)) / δ_j`,
    /// `δ_j = 1e-7 (1 + |x_j|)`.
    fn forward_difference_jacobian(
        &mut self, x: &[f64], residual: &mut impl FnMut(&[f64], &mut [f64]),
    ) {
        let dim = x.len();
        self.xp.copy_from_slice(x);
        for j in 0..dim {
            let e = 1e-7 * (1.0 + x[j].abs());
            self.xp[j] = x[j] + e;
            residual(&self.xp, &mut self.pert);
            self.xp[j] = x[j];
            for i in 0..dim {
                self.jac[i * dim + j] = (self.pert[i] - self.res[i]) / e;
            }
        }
    }
}
