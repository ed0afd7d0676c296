//! `+rollback`, `+reset`, `+relax`: the emergency recovery of seed 001 §3.5.4 as a
//! decorator over any method, with its adaptive tolerance and constraint scaling.
//!
//! After every step of the inner method the decorator measures the scaled violation and
//! compares it with the adaptive tolerance (seed 001 §3.5.4 "自适应容差", "约束缩放"):
//!
//! ```text
//! ‖C̃‖∞ = maxᵢ |Φᵢ(t, q)| / wᵢ,   wᵢ = max(‖∇Φᵢ(q)‖₂, ε_scale)
//! ε_tol = ε₀ (1 + α ‖v‖∞ + β ‖f(t, q, v)‖∞)
//! ```
//!
//! A step that fails (a Newton divergence, a singular or inaccurate solve, a non-finite
//! state) or ends with `‖C̃‖∞ > ε_tol` is an emergency, handled by the strategy
//! ("紧急恢复机制"):
//!
//! * **rollback** (回滚): restore the state of the step's start and take the step again
//!   as 2, 4, …, 2^`max_halvings` substeps until every substep succeeds within ε_tol
//!   (needs a restartable inner method, [`Method::restartable`]);
//! * **reset** (重置): project `q` onto `Φ = 0` and `v` onto `Φ_q v + Φ_t = 0` (mass-
//!   orthogonal, the nearest valid configuration); a failed step is retried once from
//!   the projected start;
//! * **relax** (松弛): bring the state back gradually — after the emergency step only the
//!   fraction κ = 1/K of the projection's correction is applied, after the next ones
//!   2/K, …, K/K = 1 (K = `relax_steps`), so the constraint is soft for K steps and then
//!   restored fully; a failed step is handled as by reset.
//!
//! Each intervention is counted (`rollbacks`, `resets`, `relaxations` in the runs table).
//! Rollback recovers accuracy where a smaller step suffices and costs the substeps; reset
//! and relax keep the step and change the state, which is not the inner method's
//! solution: they trade drift for an energy and accuracy error that the runs show.

use crate::decorators::projection::metric::projection_error;
use crate::dynamics::{add_kkt_stats, kkt_pattern, linear_error, ConstraintsAt, KktChoice};
use driftlab_core::prelude::*;
use driftlab_solver::{project_position, project_velocity, KktSolver};
use serde::{Deserialize, Serialize};

/// What to do in an emergency.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Restore the step's start and retry with halved substeps.
    #[default]
    Rollback,
    /// Project onto the nearest valid configuration.
    Reset,
    /// Apply the projection's correction gradually over `relax_steps` steps.
    Relax,
}

impl Strategy {
    fn name(self) -> &'static str {
        match self {
            Strategy::Rollback => "rollback",
            Strategy::Reset => "reset",
            Strategy::Relax => "relax",
        }
    }
}

/// Parameters (`recovery = { … }` in a spec's `[[methods]]` entry).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecoveryParams {
    /// `rollback` (default), `reset` or `relax`.
    pub strategy: Strategy,
    /// ε₀ of the adaptive tolerance (default 1e-6).
    pub eps0: f64,
    /// α: growth of the tolerance with ‖v‖∞ (default 0).
    pub alpha: f64,
    /// β: growth of the tolerance with ‖f‖∞ (default 0).
    pub beta: f64,
    /// Measure the violation row-scaled by `max(‖∇Φᵢ‖₂, eps_scale)` (default true).
    pub scale_constraints: bool,
    /// ε_scale of the row scaling (default 1e-8).
    pub eps_scale: f64,
    /// Rollback: at most 2^max_halvings substeps (default 6).
    pub max_halvings: u32,
    /// Relax: steps over which the correction ramps to full (default 10).
    pub relax_steps: usize,
}

impl Default for RecoveryParams {
    fn default() -> Self {
        Self {
            strategy: Strategy::Rollback,
            eps0: 1e-6,
            alpha: 0.0,
            beta: 0.0,
            scale_constraints: true,
            eps_scale: 1e-8,
            max_halvings: 6,
            relax_steps: 10,
        }
    }
}

impl RecoveryParams {
    fn validate(&self) -> Result<(), ParamError> {
        let bad = |field: &'static str, value: f64, fix: &str| ParamError::OutOfRange {
            id: "recovery".into(),
            field,
            value,
            fix: fix.into(),
        };
        let nonneg = [("alpha", self.alpha), ("beta", self.beta)];
        if !(self.eps0.is_finite() && self.eps0 > 0.0) {
            return Err(bad(
                "eps0",
                self.eps0,
                "give a finite tolerance > 0, e.g. 1e-6",
            ));
        }
        if !(self.eps_scale.is_finite() && self.eps_scale > 0.0) {
            return Err(bad(
                "eps_scale",
                self.eps_scale,
                "give a finite scale > 0, e.g. 1e-8",
            ));
        }
        if let Some((f, x)) = nonneg
            .into_iter()
            .find(|(_, x)| !(x.is_finite() && *x >= 0.0))
        {
            return Err(bad(f, x, "give a finite weight ≥ 0"));
        }
        if !(1..=20).contains(&self.max_halvings) {
            let x = f64::from(self.max_halvings);
            return Err(bad("max_halvings", x, "give 1 to 20 (2^k substeps)"));
        }
        if self.relax_steps == 0 {
            return Err(bad("relax_steps", 0.0, "give at least 1 step"));
        }
        Ok(())
    }
}

/// The projection work set (KKT with the mass metric, scratch).
struct Work {
    kkt: KktSolver,
    mass: Vec<f64>,
    jac: Vec<f64>,
    jac_entries: Vec<(usize, usize)>,
    phi: Vec<f64>,
    force: Vec<f64>,
    row_norms: Vec<f64>,
    target: State,
}

/// Interventions of a run.
#[derive(Clone, Copy, Debug, Default)]
struct Interventions {
    rollbacks: usize,
    resets: usize,
    relaxations: usize,
    projection_iterations: usize,
}

/// Any method with emergency recovery.
pub struct Recovered {
    inner: Box<dyn Method>,
    p: RecoveryParams,
}

/// [`Recovered`] bound to its system: the inner stepper and the recovery's work.
struct RecoveredStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    inner: Box<dyn Stepper + 's>,
    p: RecoveryParams,
    work: Work,
    /// The state at the start of the step being taken.
    start: State,
    /// Relax: steps of the ramp already taken (0: not relaxing).
    ramp: usize,
    count: Interventions,
}

impl Recovered {
    /// Wrap `inner` (rollback needs a restartable one).
    pub fn new(inner: Box<dyn Method>, p: RecoveryParams) -> Result<Self, ParamError> {
        p.validate()?;
        if p.strategy == Strategy::Rollback && !inner.restartable() {
            return Err(ParamError::Invalid {
                kind: "method",
                id: inner.info().id,
                message: "recovery `rollback` retakes a step from a copy of its start, which a \
                          method with memory across steps cannot; use `reset` or `relax`, or a \
                          restartable method (taylor, rattle, gauss, lobatto, implicit-euler)"
                    .into(),
            });
        }
        Ok(Self { inner, p })
    }
}

impl Work {
    fn new(
        s: &dyn MechanicalSystem, state: &State, opts: &StartOptions,
    ) -> Result<Self, StepError> {
        let d = s.dims();
        // The projections' KKT matrix [M Φ_qᵀ; Φ_q 0], laid out as for every KKT method.
        let pattern = kkt_pattern(s);
        let (n_mass, jac_entries) = (pattern.a_lower.len(), pattern.b.clone());
        let kkt = KktSolver::new(&pattern, KktChoice::Auto.options(opts))
            .map_err(|e| linear_error(state.t, e))?;
        Ok(Self {
            kkt,
            mass: vec![0.0; n_mass],
            jac: vec![0.0; jac_entries.len()],
            jac_entries,
            phi: vec![0.0; d.m],
            force: vec![0.0; d.n],
            row_norms: vec![0.0; d.m],
            target: state.clone(),
        })
    }

    /// `‖C̃‖∞` at `state` (∞ for a non-finite state).
    fn violation(&mut self, s: &dyn MechanicalSystem, state: &State, p: &RecoveryParams) -> f64 {
        if state.first_non_finite().is_some() {
            return f64::INFINITY;
        }
        s.constraints(state.t, &state.q, &mut self.phi);
        self.row_norms.iter_mut().for_each(|w| *w = 0.0);
        if p.scale_constraints {
            s.jacobian(state.t, &state.q, &mut self.jac);
            for (k, &(i, _)) in self.jac_entries.iter().enumerate() {
                self.row_norms[i] += self.jac[k] * self.jac[k];
            }
        }
        let weight = |w2: f64| {
            if p.scale_constraints {
                w2.sqrt().max(p.eps_scale)
            } else {
                1.0
            }
        };
        let worst = self
            .phi
            .iter()
            .zip(&self.row_norms)
            .map(|(c, w2)| c.abs() / weight(*w2))
            .fold(0.0_f64, f64::max);
        if worst.is_nan() {
            f64::INFINITY
        } else {
            worst
        }
    }

    /// `(‖C̃‖∞, ε_tol)` at `state`; leaves the row weights for [`Self::project`].
    fn measure(
        &mut self, s: &dyn MechanicalSystem, state: &State, p: &RecoveryParams,
    ) -> (f64, f64) {
        (self.violation(s, state, p), self.tolerance(s, state, p))
    }

    /// `ε_tol = ε₀ (1 + α‖v‖∞ + β‖f‖∞)`.
    fn tolerance(&mut self, s: &dyn MechanicalSystem, state: &State, p: &RecoveryParams) -> f64 {
        let inf = |x: &[f64]| x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        let f_norm = if p.beta > 0.0 {
            s.forces(state.t, &state.q, &state.v, &mut self.force);
            inf(&self.force)
        } else {
            0.0
        };
        p.eps0 * (1.0 + p.alpha * inf(&state.v) + p.beta * f_norm)
    }

    /// `self.target` = `state` projected onto `Φ = 0`, `Φ_q v + Φ_t = 0` (mass metric)
    /// to a tenth of the tolerance in unscaled units; returns the projection iterations.
    fn project(
        &mut self, s: &dyn MechanicalSystem, state: &State, tol: f64,
    ) -> Result<usize, StepError> {
        let t = state.t;
        self.target.clone_from(state);
        s.mass(&state.q, &mut self.mass);
        let mut eval = ConstraintsAt { sys: s, t };
        // The violation is row-scaled: unscaled, a tenth of it on the smallest row weight.
        let min_w = self
            .row_norms
            .iter()
            .fold(f64::INFINITY, |m, w| m.min(w.sqrt()));
        let abs_tol = 0.1
            * tol
            * if min_w.is_finite() && min_w > 0.0 {
                min_w.min(1.0)
            } else {
                1.0
            };
        let params = driftlab_solver::ProjectionParams {
            tol: abs_tol,
            ..driftlab_solver::ProjectionParams::default()
        };
        let target = &mut self.target;
        let pos = project_position(&mut self.kkt, &self.mass, &mut target.q, &mut eval, &params)
            .map_err(|e| projection_error(t, e))?;
        s.mass(&target.q, &mut self.mass);
        project_velocity(
            &mut self.kkt,
            &self.mass,
            &target.q,
            &mut target.v,
            &mut eval,
        )
        .map_err(|e| projection_error(t, e))?;
        Ok(pos.iterations)
    }
}

/// `state ← state + κ (target − state)` in `q` and `v`.
fn move_towards(state: &mut State, target: &State, kappa: f64) {
    for (x, y) in state
        .q
        .iter_mut()
        .zip(&target.q)
        .chain(state.v.iter_mut().zip(&target.v))
    {
        *x += kappa * (y - *x);
    }
}

fn add_reports(a: &mut StepReport, b: StepReport) {
    a.newton_iterations += b.newton_iterations;
    a.factorizations += b.factorizations;
    a.projection_iterations += b.projection_iterations;
}

impl RecoveredStepper<'_> {
    /// `(‖C̃‖∞, ε_tol)` at `state`.
    fn measure(
        &mut self, s: &dyn MechanicalSystem, state: &State,
    ) -> Result<(f64, f64), StepError> {
        Ok(self.work.measure(s, state, &self.p))
    }

    /// Whether `state` is within the tolerance.
    fn within(&mut self, s: &dyn MechanicalSystem, state: &State) -> Result<bool, StepError> {
        let (violation, tol) = self.measure(s, state)?;
        Ok(violation <= tol)
    }

    /// Rollback: the step again as 2^j substeps, j = 1 … max_halvings (each substep but
    /// the last accepted by the inner stepper; the loop accepts the whole step).
    fn rollback(
        &mut self, s: &dyn MechanicalSystem, state: &mut State, h: f64, first: String,
    ) -> Result<StepReport, StepError> {
        let start = self.start.clone();
        let mut report = StepReport::default();
        for j in 1..=self.p.max_halvings {
            let n = 1usize << j;
            state.clone_from(&start);
            self.inner.reject();
            self.inner.refresh(state)?;
            let mut ok = true;
            for k in 0..n {
                let res = self.inner.step(state, h / n as f64);
                state.t = start.t + (k + 1) as f64 * h / n as f64;
                match res {
                    Ok(r) if self.within(s, state)? => {
                        add_reports(&mut report, r);
                        if k + 1 < n {
                            self.inner.accept();
                        }
                    }
                    _ => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                self.count.rollbacks += 1;
                return Ok(report);
            }
        }
        state.clone_from(&start);
        Err(recovery_failed(
            start.t,
            "rollback",
            self.p.max_halvings,
            first,
        ))
    }

    /// Reset or relax after a step that ended outside the tolerance (`kappa` = 1: reset).
    fn correct(
        &mut self, s: &dyn MechanicalSystem, state: &mut State, kappa: f64,
    ) -> Result<usize, StepError> {
        let (_, tol) = self.measure(s, state)?;
        let w = &mut self.work;
        let iterations = w.project(s, state, tol)?;
        move_towards(state, &w.target, kappa);
        self.count.projection_iterations += iterations;
        self.inner.refresh(state)?;
        Ok(iterations)
    }

    /// A failed step under reset or relax: project the start and retry once.
    fn retry_from_projected_start(
        &mut self, s: &dyn MechanicalSystem, state: &mut State, h: f64, first: String,
    ) -> Result<StepReport, StepError> {
        let start = self.start.clone();
        state.clone_from(&start);
        self.inner.reject();
        self.correct(s, state, 1.0)?;
        self.count.resets += 1;
        match self.inner.step(state, h) {
            Ok(r) => Ok(r),
            Err(_) => {
                state.clone_from(&start);
                Err(recovery_failed(start.t, self.p.strategy.name(), 1, first))
            }
        }
    }
}

fn recovery_failed(t: f64, strategy: &'static str, attempts: u32, cause: String) -> StepError {
    StepError::RecoveryFailed {
        t,
        strategy,
        attempts,
        cause,
    }
}

impl Method for Recovered {
    fn info(&self) -> MethodInfo {
        let mut i = self.inner.info();
        // Its metric (projection) or restart (recovery) evaluates M(q) only.
        i.varying_mass = false;
        let name = self.p.strategy.name();
        i.id = format!("{}+{name}", i.id);
        i.title = format!("{} with emergency recovery ({name})", i.title);
        i.equations.push_str(&format!(
            ";  ‖C̃‖∞ = maxᵢ |Φᵢ|/max(‖∇Φᵢ‖, ε_s) > ε₀(1 + α‖v‖ + β‖f‖) ⇒ {name}"
        ));
        i.citation = format!("{}; recovery: seed 001 §3.5.4", i.citation);
        i.forms = vec![SystemForm::Mechanical];
        // Reset and relax change the state between steps: neither symmetric nor symplectic;
        // rollback changes the step sequence.
        i.symmetric = false;
        i.symplectic = false;
        i.symplectic_reason =
            "no: rollback, reset and relax change the state or the steps between steps".into();
        i.error_estimate = None;
        i
    }

    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let inner = self.inner.start(sys, state, opts)?;
        Ok(Box::new(RecoveredStepper {
            sys,
            inner,
            p: self.p.clone(),
            work: Work::new(sys, state, opts)?,
            start: state.clone(),
            ramp: 0,
            count: Interventions::default(),
        }))
    }

    fn restartable(&self) -> bool {
        self.p.strategy != Strategy::Relax && self.inner.restartable()
    }
}

impl Stepper for RecoveredStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let s = self.sys;
        self.start.clone_from(state);
        let t0 = state.t;
        let first = self.inner.step(state, h);
        state.t = t0 + h;
        let first = match first {
            Ok(r) if self.within(s, state)? => Ok(r),
            Ok(r) => Err((Some(r), self.violation_text(s, state)?)),
            Err(e) => Err((None, e.to_string())),
        };
        match (self.p.strategy, first) {
            (Strategy::Rollback, Ok(r)) => Ok(r),
            (Strategy::Rollback, Err((_, why))) => self.rollback(s, state, h, why),
            (_, Err((None, why))) => self.retry_from_projected_start(s, state, h, why),
            (Strategy::Reset, Ok(r)) => Ok(r),
            (Strategy::Reset, Err((Some(mut r), _))) => {
                r.projection_iterations += self.correct(s, state, 1.0)?;
                self.count.resets += 1;
                Ok(r)
            }
            (Strategy::Relax, first) => {
                let violated = first.is_err();
                let mut r = match first {
                    Ok(r) | Err((Some(r), _)) => r,
                    Err((None, _)) => StepReport::default(),
                };
                if violated && self.ramp == 0 {
                    self.ramp = 1;
                    self.count.relaxations += 1;
                }
                if self.ramp > 0 {
                    let kappa = self.ramp as f64 / self.p.relax_steps as f64;
                    r.projection_iterations += self.correct(s, state, kappa)?;
                    self.ramp = if self.ramp >= self.p.relax_steps {
                        0
                    } else {
                        self.ramp + 1
                    };
                }
                Ok(r)
            }
        }
    }

    fn inner(&self) -> Option<&dyn Stepper> {
        Some(self.inner.as_ref())
    }
    fn inner_mut(&mut self) -> Option<&mut dyn Stepper> {
        Some(self.inner.as_mut())
    }
    fn stats(&self) -> MethodStats {
        let mut st = self.inner.stats();
        add_kkt_stats(&mut st, self.work.kkt.stats());
        st.projection_iterations += self.count.projection_iterations;
        st.rollbacks += self.count.rollbacks;
        st.resets += self.count.resets;
        st.relaxations += self.count.relaxations;
        st
    }
}

impl RecoveredStepper<'_> {
    /// "‖C̃‖∞ = … > ε_tol = …" for a failed row's reason.
    fn violation_text(
        &mut self, s: &dyn MechanicalSystem, state: &State,
    ) -> Result<String, StepError> {
        let (v, tol) = self.measure(s, state)?;
        Ok(format!(
            "scaled violation ‖C̃‖∞ = {v:.3e} > ε_tol = {tol:.3e} at t = {}",
            state.t
        ))
    }
}
