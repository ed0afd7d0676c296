//! Mass-orthogonal projections onto the constraint manifolds (seed 001 §3.4.2–3.4.4;
//! seed 004 §3.2.1–3.2.2).
//!
//! Position: `q = argmin ½ (q − q*)ᵀ M (q − q*)` subject to `Φ(t, q) = 0`. Its KKT
//! conditions `M (q − q*) + Φ_qᵀ μ = 0`, `Φ(q) = 0` are solved by the Newton-type
//! iteration (constraint curvature `μ·Φ_qq` dropped from the Hessian, so the matrix is
//! the ordinary KKT matrix):
//!
//! ```text
//! [ M      Φ_q(q_k)ᵀ ] [ Δq ]   [ M (q* − q_k) ]
//! [ Φ_q(q_k)   0     ] [ μ  ] = [ −Φ(q_k)      ],      q_{k+1} = q_k + α Δq,
//! ```
//!
//! whose fixed points are exactly the KKT points of the projection. It stops when
//! `‖Φ(q_k)‖∞ ≤ tol` (after at least one update if the input violates the tolerance).
//!
//! Velocity: `v = argmin ½ (v − v*)ᵀ M (v − v*)` subject to `Φ_q v + Φ_t = 0`, one solve:
//! `[[M, Φ_qᵀ], [Φ_q, 0]] [v; μ] = [M v*; −Φ_t]`.

use crate::error::SolverError;
use crate::kkt::KktSolver;
use crate::newton::{NewtonFailure, NewtonKernel, NewtonOptions};

/// Constraint functions at a fixed time, as the projections need them.
pub trait ConstraintEval {
    /// `Φ(q)`.
    fn phi(&mut self, q: &[f64], out: &mut [f64]);
    /// `Φ_q(q)` values in the KKT solver's `B` pattern order.
    fn jacobian(&mut self, q: &[f64], out: &mut [f64]);
    /// `Φ_t(q)`.
    fn phi_t(&mut self, q: &[f64], out: &mut [f64]);
}

/// A mechanical system's constraints frozen at time `t`: the one adapter from
/// [`driftlab_core::MechanicalSystem`] to [`ConstraintEval`] (methods' projections and
/// the problems' consistent initial data both use it).
pub struct ConstraintsAt<'a> {
    /// The system.
    pub sys: &'a dyn driftlab_core::MechanicalSystem,
    /// Time.
    pub t: f64,
}

impl ConstraintEval for ConstraintsAt<'_> {
    fn phi(&mut self, q: &[f64], out: &mut [f64]) {
        self.sys.constraints(self.t, q, out);
    }
    fn jacobian(&mut self, q: &[f64], out: &mut [f64]) {
        self.sys.jacobian(self.t, q, out);
    }
    fn phi_t(&mut self, q: &[f64], out: &mut [f64]) {
        self.sys.phi_t(self.t, q, out);
    }
}

/// Parameters of the position projection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProjectionParams {
    /// Stop when `‖Φ‖∞ ≤ tol`.
    pub tol: f64,
    /// Iteration cap (a failed projection is an error, not a silent result).
    pub max_iter: usize,
    /// Step factor `α ∈ (0, 1]` (seed 001 §3.4.4).
    pub step_factor: f64,
    /// Linearized projection (seed 001 §3.4.2 "线性化投影"): exactly one update from the
    /// linearized constraint, no iteration to the tolerance.
    pub linearized: bool,
}

impl Default for ProjectionParams {
    fn default() -> Self {
        Self {
            tol: 1e-12,
            max_iter: 20,
            step_factor: 1.0,
            linearized: false,
        }
    }
}

/// What a projection did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProjectionReport {
    /// Newton iterations (each one factorization).
    pub iterations: usize,
    /// Final `‖Φ‖∞` (position) or `‖Φ_q v + Φ_t‖∞` (velocity, before round-off).
    pub residual: f64,
}

fn inf_norm(x: &[f64]) -> f64 {
    x.iter().fold(
        0.0_f64,
        |m, v| if v.is_nan() { f64::NAN } else { m.max(v.abs()) },
    )
}

/// Project `q` in place onto `{Φ = 0}` in the metric of `M` (lower values `mass`).
/// `jac` is scratch for the Jacobian values; on return it holds `Φ_q` at the last
/// factorized iterate.
pub fn project_position(
    kkt: &mut KktSolver, mass: &[f64], q: &mut [f64], eval: &mut dyn ConstraintEval,
    params: &ProjectionParams,
) -> Result<ProjectionReport, SolverError> {
    let n = q.len();
    let m = kkt.dim() - n;
    let q_star = q.to_vec();
    let mut phi = vec![0.0; m];
    let mut jac = vec![0.0; kkt.b_len()];
    let mut diff = vec![0.0; n];
    let mut rhs = vec![0.0; n + m];
    // The projection stops on its residual, not on a correction: the kernel's η test is
    // off (tol 0); an iteration reports 0 once ‖Φ(q_k)‖∞ ≤ tol (or after the one update
    // of the linearized projection), and the call after the last allowed update fails.
    let mut kernel = NewtonKernel::new(NewtonOptions::residual_stop(params.max_iter));
    let mut res = f64::NAN;
    let solved = kernel.solve(|k| {
        let updates = k - 1;
        eval.phi(q, &mut phi);
        res = inf_norm(&phi);
        if res <= params.tol || (params.linearized && updates == 1) {
            return Ok(0.0);
        }
        if updates >= params.max_iter || res.is_nan() {
            return Err(SolverError::ProjectionDiverged {
                iterations: updates,
                residual: res,
                tol: params.tol,
            });
        }
        eval.jacobian(q, &mut jac);
        kkt.factorize(mass, &jac, None)?;
        for i in 0..n {
            diff[i] = q_star[i] - q[i];
        }
        kkt.mul_a(mass, &diff, &mut rhs[..n]);
        for r in 0..m {
            rhs[n + r] = -phi[r];
        }
        kkt.solve(&mut rhs)?;
        for i in 0..n {
            q[i] += params.step_factor * rhs[i];
        }
        Ok(res / params.tol)
    });
    let iterations = kernel.counters.iterations - 1;
    match solved {
        Ok(_) => Ok(ProjectionReport {
            iterations,
            residual: res,
        }),
        Err(NewtonFailure::Iteration(e)) => Err(e),
        Err(_) => Err(SolverError::ProjectionDiverged {
            iterations,
            residual: res,
            tol: params.tol,
        }),
    }
}

/// Project `v` in place onto `{Φ_q v + Φ_t = 0}` in the metric of `M`, at the position
/// `q` (one factorization, one solve).
pub fn project_velocity(
    kkt: &mut KktSolver, mass: &[f64], q: &[f64], v: &mut [f64], eval: &mut dyn ConstraintEval,
) -> Result<ProjectionReport, SolverError> {
    let n = v.len();
    let m = kkt.dim() - n;
    let mut jac = vec![0.0; kkt.b_len()];
    eval.jacobian(q, &mut jac);
    kkt.factorize(mass, &jac, None)?;
    let mut rhs = vec![0.0; n + m];
    kkt.mul_a(mass, v, &mut rhs[..n]);
    let mut phit = vec![0.0; m];
    eval.phi_t(q, &mut phit);
    for r in 0..m {
        rhs[n + r] = -phit[r];
    }
    let rel = kkt.solve(&mut rhs)?;
    v.copy_from_slice(&rhs[..n]);
    Ok(ProjectionReport {
        iterations: 1,
        residual: rel,
    })
}
