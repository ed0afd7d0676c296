//! Projection as a decorator over any method (seed 001 §3.4.2–3.4.3, post-stabilization,
//! decoupled variant): after the inner method's step, `q` is projected onto
//! `{Φ(t, q) = 0}` in the metric of `M` by Newton iteration (tolerance and iteration cap
//! are parameters), then `v` onto `{Φ_q v + Φ_t = 0}` at the projected `q`; then the
//! inner method recomputes what it derives from `(q, v)` (e.g. `a`, `λ`).
//!
//! ```text
//! q_{n+1} = argmin ½‖q − q̃_{n+1}‖²_M  s.t. Φ(t_{n+1}, q) = 0
//! v_{n+1} = argmin ½‖v − ṽ_{n+1}‖²_M  s.t. Φ_q(q_{n+1}) v + Φ_t = 0
//! ```
//!
//! Projection onto the exact solution manifold keeps the order of the underlying one-step
//! method (Hairer, Lubich & Wanner, Geometric Numerical Integration, 2nd ed., §IV.4,
//! Thm. 4.2; Hairer & Wanner, Solving ODEs II, §VII.2), so the declared orders are the
//! inner method's.

use crate::dynamics::{add_kkt_stats, kkt_pattern, linear_error, ConstraintsAt, KktChoice};
use driftlab_core::method::unsupported;
use driftlab_core::{
    Method, MethodError, MethodInfo, MethodStats, ParamError, State, StepError, StepReport,
    SystemForm, SystemRef,
};
use driftlab_solver::{project_position, project_velocity, KktSolver, SolverError};
use serde::{Deserialize, Serialize};

/// Parameters of the projection decorator.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProjectionParams {
    /// Newton stops when `‖Φ‖∞ ≤ tol`.
    pub tol: f64,
    /// Newton iteration cap; exceeding it fails the run (a recorded row).
    pub max_iter: usize,
    /// Also project the velocity (seed 001 §3.4.3 decoupled: position, then velocity).
    pub velocity: bool,
    /// Also project the acceleration onto `{Φ_q a = γ}` in the metric of `M` (seed 004
    /// §3.2.3): the `(a, λ)` consistent with the projected `(q, v)`, from the KKT system
    /// already factored for the velocity projection (one extra solve). Without it, a
    /// method that computes λ inside its step (implicit Euler, generalized-α) reports the
    /// multiplier of the unprojected state — measured: λ then loses its order entirely
    /// after implicit Euler (every step becomes a first step with an O(1) layer) and drops
    /// to order 1 after generalized-α.
    pub acceleration: bool,
    /// KKT factorization.
    pub kkt: KktChoice,
}

impl Default for ProjectionParams {
    fn default() -> Self {
        Self {
            tol: 1e-12,
            max_iter: 20,
            velocity: true,
            acceleration: true,
            kkt: KktChoice::SparseLdlt,
        }
    }
}

impl ProjectionParams {
    /// Validate.
    pub fn validate(&self) -> Result<(), ParamError> {
        driftlab_core::params::positive("projection", "tol", self.tol)?;
        if self.max_iter == 0 {
            return Err(ParamError::OutOfRange {
                id: "projection".into(),
                field: "max_iter",
                value: 0.0,
                fix: "give max_iter ≥ 1".into(),
            });
        }
        Ok(())
    }
}

/// Any method followed by mass-orthogonal projections.
pub struct Projected {
    inner: Box<dyn Method>,
    p: ProjectionParams,
    kkt: Option<KktSolver>,
    mass: Vec<f64>,
    iterations: usize,
}

impl Projected {
    /// Wrap `inner`.
    pub fn new(inner: Box<dyn Method>, p: ProjectionParams) -> Result<Self, ParamError> {
        p.validate()?;
        Ok(Self {
            inner,
            p,
            kkt: None,
            mass: Vec::new(),
            iterations: 0,
        })
    }
}

fn projection_error(t: f64, e: SolverError) -> StepError {
    match e {
        SolverError::ProjectionDiverged {
            iterations,
            residual,
            tol,
        } => StepError::ProjectionFailed {
            t,
            iterations,
            residual,
            tol,
        },
        other => linear_error(t, other),
    }
}

impl Method for Projected {
    fn info(&self) -> MethodInfo {
        let mut i = self.inner.info();
        i.id = format!("{}+projection", i.id);
        i.title = format!(
            "{} + mass-orthogonal projection (position{})",
            i.title,
            if self.p.velocity { ", velocity" } else { "" }
        );
        i.equations = format!(
            "{};  then q ← argmin ½‖q − q̃‖²_M s.t. Φ = 0 (Newton, tol {:e}){}",
            i.equations,
            self.p.tol,
                        match (self.p.velocity, self.p.acceleration) {
                (true, true) => ";  v ← argmin ½‖v − ṽ‖²_M s.t. Φ_q v + Φ_t = 0;  (a, λ) from [M Φ_qᵀ; Φ_q 0][a; λ] = [f; γ]",
                (true, false) => ";  v ← argmin ½‖v − ṽ‖²_M s.t. Φ_q v + Φ_t = 0",
                _ => "",
            }
        );
        i.citation = format!("{}; projection: seed 001 §3.4.2–3.4.3; Hairer, Lubich & Wanner, GNI §IV.4 (order kept)", i.citation);
        i.enforces.position = true;
        i.enforces.velocity |= self.p.velocity;
        i.enforces.acceleration |= self.p.velocity && self.p.acceleration;
        i.symmetric = false;
        i.symplectic = false;
        i
    }
    fn init(&mut self, sys: SystemRef<'_>, state: &mut State) -> Result<(), MethodError> {
        let SystemRef::Mechanical(s) = sys else {
            let mut i = self.info();
            i.forms = vec![SystemForm::Mechanical];
            return Err(unsupported(&i, sys.form()));
        };
        self.kkt = Some(
            KktSolver::new(&kkt_pattern(s), self.p.kkt.options())
                .map_err(|e| MethodError::Init(linear_error(state.t, e)))?,
        );
        self.mass = vec![0.0; s.mass_pattern().nnz()];
        self.inner.init(sys, state)?;
        if self.p.acceleration && self.p.velocity {
            // Start with the (a, λ) consistent with the initial state as well, so that the
            // declared acceleration level holds from t₀ on, whatever the inner method set.
            let Some(kkt) = self.kkt.as_mut() else {
                return Ok(());
            };
            let t = state.t;
            s.mass(&state.q, &mut self.mass);
            let mut jac = vec![0.0; s.jacobian_pattern().nnz()];
            s.jacobian(t, &state.q, &mut jac);
            kkt.factorize(&self.mass, &jac, None)
                .map_err(|e| MethodError::Init(linear_error(t, e)))?;
            let (n, m) = (state.q.len(), state.lambda.len());
            let mut rhs = vec![0.0; n + m];
            s.forces(t, &state.q, &state.v, &mut rhs[..n]);
            s.curvature(t, &state.q, &state.v, &mut rhs[n..]);
            kkt.solve(&mut rhs)
                .map_err(|e| MethodError::Init(linear_error(t, e)))?;
            state.a.copy_from_slice(&rhs[..n]);
            state.lambda.copy_from_slice(&rhs[n..]);
        }
        Ok(())
    }
    fn step(
        &mut self,
        sys: SystemRef<'_>,
        state: &mut State,
        h: f64,
    ) -> Result<StepReport, StepError> {
        let mut report = self.inner.step(sys, state, h)?;
        let (SystemRef::Mechanical(s), Some(kkt)) = (sys, self.kkt.as_mut()) else {
            return Err(StepError::LinearSolve {
                t: state.t,
                detail: "projection: step before init".into(),
            });
        };
        let t = state.t;
        s.mass(&state.q, &mut self.mass);
        let mut eval = ConstraintsAt { sys: s, t };
        let pos = project_position(
            kkt,
            &self.mass,
            &mut state.q,
            &mut eval,
            &driftlab_solver::ProjectionParams {
                tol: self.p.tol,
                max_iter: self.p.max_iter,
                step_factor: 1.0,
            },
        )
        .map_err(|e| projection_error(t, e))?;
        self.iterations += pos.iterations;
        report.projection_iterations += pos.iterations;
        report.factorizations += pos.iterations;
        if self.p.velocity {
            s.mass(&state.q, &mut self.mass);
            project_velocity(kkt, &self.mass, &state.q, &mut state.v, &mut eval)
                .map_err(|e| projection_error(t, e))?;
            report.factorizations += 1;
        }
        if self.p.acceleration && self.p.velocity {
            // [M Φ_qᵀ; Φ_q 0][a; λ] = [f; γ] at the projected state, on the factorization
            // just made for the velocity projection.
            let (n, m) = (state.q.len(), state.lambda.len());
            let mut rhs = vec![0.0; n + m];
            s.forces(t, &state.q, &state.v, &mut rhs[..n]);
            s.curvature(t, &state.q, &state.v, &mut rhs[n..]);
            kkt.solve(&mut rhs).map_err(|e| projection_error(t, e))?;
            state.a.copy_from_slice(&rhs[..n]);
            state.lambda.copy_from_slice(&rhs[n..]);
        } else {
            self.inner.refresh(sys, state)?;
        }
        Ok(report)
    }
    fn refresh(&mut self, sys: SystemRef<'_>, state: &mut State) -> Result<(), StepError> {
        self.inner.refresh(sys, state)
    }
    fn stats(&self) -> MethodStats {
        let mut s = self.inner.stats();
        if let Some(k) = &self.kkt {
            add_kkt_stats(&mut s, k.stats());
        }
        s.projection_iterations += self.iterations;
        s
    }
}
