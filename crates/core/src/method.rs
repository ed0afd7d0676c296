//! The [`Method`] trait: a method implements one step; it never owns a time loop.

use crate::error::{MethodError, StepError};
use crate::state::State;
use crate::system::{MechanicalSystem, SystemForm, SystemRef};
use serde::{Deserialize, Serialize};

/// Declared global convergence orders (of the error at fixed `t` as `h → 0`), each with
/// the citation of where the order comes from. `None` where the method gives no value
/// (e.g. no multipliers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeclaredOrders {
    /// Order in positions (or differential variables of an index-1 DAE).
    pub q: Option<f64>,
    /// Order in velocities.
    pub v: Option<f64>,
    /// Order in multipliers (or algebraic variables of an index-1 DAE).
    pub lambda: Option<f64>,
}

/// Which constraint levels a method keeps at solver tolerance by construction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConstraintLevels {
    /// `Φ(t, q) = 0`.
    pub position: bool,
    /// `Φ_q v + Φ_t = 0`.
    pub velocity: bool,
    /// `Φ_q a = γ`.
    pub acceleration: bool,
}

/// Declared properties of a method: tests and reports read these, never method names.
#[derive(Clone, Debug, Serialize)]
pub struct MethodInfo {
    /// Catalog id (for a decorated method, e.g. `taylor+projection`).
    pub id: String,
    /// Family (`explicit-taylor`, `baumgarte`, `projection`, `implicit-rk`, …).
    pub family: String,
    /// One-line title.
    pub title: String,
    /// The scheme's equations in plain text with Unicode math.
    pub equations: String,
    /// Source of the scheme and of its declared orders.
    pub citation: String,
    /// Declared convergence orders.
    pub orders: DeclaredOrders,
    /// Constraint levels held at solver tolerance.
    pub enforces: ConstraintLevels,
    /// Implicit (solves nonlinear stage equations).
    pub implicit: bool,
    /// Symmetric (time-reversible).
    pub symmetric: bool,
    /// Symplectic.
    pub symplectic: bool,
    /// System forms the method accepts.
    pub forms: Vec<SystemForm>,
    /// Whether the method accepts nonholonomic rows `A(q) v = 0`
    /// ([`crate::MechanicalSystem::nonholonomic_rows`]): only methods that enforce the
    /// constraints at velocity or acceleration level can; position-level Newton or
    /// projection on `Φ` has nothing to act on for such rows. Checked by [`crate::drive()`].
    pub nonholonomic: bool,
    /// Whether the method enforces unilateral rows `g(q) ≥ 0`
    /// ([`crate::MechanicalSystem::unilateral`]); the others are refused by
    /// [`crate::drive()`] rather than silently ignoring the limits.
    pub unilateral: bool,
    /// Whether the method resolves prioritized (possibly conflicting) constraint groups
    /// ([`crate::MechanicalSystem::prioritized`]).
    pub priorities: bool,
    /// The local error estimate the method returns with each step, if any: only such
    /// methods can run error-controlled (adaptive) steps in [`crate::drive()`].
    pub error_estimate: Option<ErrorEstimate>,
}

impl Default for MethodInfo {
    /// An explicit, non-symmetric, non-symplectic method for mechanical systems that
    /// enforces no constraint level, declares no orders and has no error estimate: the
    /// base that a method's `info()` overrides field by field (`..MethodInfo::default()`).
    /// The text fields are empty; every catalog method fills them.
    fn default() -> Self {
        Self {
            id: String::new(),
            family: String::new(),
            title: String::new(),
            equations: String::new(),
            citation: String::new(),
            orders: DeclaredOrders::default(),
            enforces: ConstraintLevels::default(),
            implicit: false,
            symmetric: false,
            symplectic: false,
            forms: vec![SystemForm::Mechanical],
            nonholonomic: false,
            unilateral: false,
            priorities: false,
            error_estimate: None,
        }
    }
}

/// A method's local error estimate: how it is formed and its order in `h`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ErrorEstimate {
    /// `k` in `err ≈ C h^k` (the embedded order plus one); the controller's exponent is
    /// `1/k` ([`crate::control`]).
    pub order: u8,
    /// How the estimate is formed and how components are scaled, with its source.
    pub rule: String,
    /// The method controls its own step size (an external code such as SUNDIALS IDA):
    /// [`crate::drive()`] offers the distance to the next output time as `h`, the method
    /// takes one internal step of at most that length and reports its length in
    /// [`StepReport::taken`], with its own rejections in [`StepReport::rejected`] and
    /// [`StepReport::retried`]. The loop's controller is then not used.
    pub own_controller: bool,
}

/// What one step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Newton iterations in this step.
    pub newton_iterations: usize,
    /// Numeric factorizations in this step.
    pub factorizations: usize,
    /// Projection iterations in this step.
    pub projection_iterations: usize,
    /// Scaled local error norm of this step (acceptable when ≤ 1), for methods with an
    /// [`ErrorEstimate`]; `None` otherwise.
    pub error: Option<f64>,
    /// The method's Newton iteration limit (0 without Newton); the step-size controller
    /// lowers its safety factor when `newton_iterations` comes close to it.
    pub newton_limit: usize,
    /// For a method with its own controller ([`ErrorEstimate::own_controller`]): the
    /// length of the step it took (at most the `h` offered).
    pub taken: Option<f64>,
    /// Attempts the method's own controller rejected by its error test in this step.
    pub rejected: usize,
    /// Attempts the method's own controller retried after a Newton failure in this step.
    pub retried: usize,
}

/// Cumulative counters of a method over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MethodStats {
    /// Steps taken.
    pub steps: usize,
    /// Newton iterations.
    pub newton_iterations: usize,
    /// Symbolic analyses of sparse matrices (once per run and matrix structure).
    pub symbolic_analyses: usize,
    /// Numeric factorizations.
    pub factorizations: usize,
    /// Of those, sparse factorizations that ran supernodal (dense blocks, which faer
    /// parallelizes) rather than simplicial (column by column, sequential in faer).
    pub supernodal_factorizations: usize,
    /// Linear solves (right-hand sides).
    pub solves: usize,
    /// Iterative-refinement steps in KKT solves.
    pub refinement_steps: usize,
    /// Projection (Newton) iterations onto the position manifold.
    pub projection_iterations: usize,
    /// Evaluations of a Newton Jacobian (finite differences or analytic).
    pub jacobian_evaluations: usize,
    /// Emergency rollbacks (a step retaken with substeps; seed 001 §3.5.4).
    pub rollbacks: usize,
    /// Emergency resets (projection onto the nearest valid configuration).
    pub resets: usize,
    /// Emergency relaxations (the constraint restored gradually over several steps).
    pub relaxations: usize,
}

impl MethodStats {
    /// Sum of two counters (a decorator adds its own to its inner method's).
    pub fn merged(self, o: MethodStats) -> MethodStats {
        MethodStats {
            steps: self.steps.max(o.steps),
            newton_iterations: self.newton_iterations + o.newton_iterations,
            symbolic_analyses: self.symbolic_analyses + o.symbolic_analyses,
            factorizations: self.factorizations + o.factorizations,
            supernodal_factorizations: self.supernodal_factorizations + o.supernodal_factorizations,
            solves: self.solves + o.solves,
            refinement_steps: self.refinement_steps + o.refinement_steps,
            projection_iterations: self.projection_iterations + o.projection_iterations,
            jacobian_evaluations: self.jacobian_evaluations + o.jacobian_evaluations,
            rollbacks: self.rollbacks + o.rollbacks,
            resets: self.resets + o.resets,
            relaxations: self.relaxations + o.relaxations,
        }
    }
}

/// A time-stepping method for constrained systems.
///
/// Contract: `init` is called once with the initial state (it may fill consistent
/// `lambda` and `a`, and performs symbolic analyses); `step` advances `state` from
/// `state.t` by `h` and sets `state.t += h`; `refresh` recomputes whatever the method
/// derives from `(q, v)` (multipliers, accelerations, cached factorizations) after a
/// decorator changed them. The time loop is [`crate::drive()`], never the method.
pub trait Method: Send {
    /// Declared properties.
    fn info(&self) -> MethodInfo;
    /// Prepare for a run on `sys` starting at `state`.
    fn init(&mut self, sys: SystemRef<'_>, state: &mut State) -> Result<(), MethodError>;
    /// Advance one step of size `h`.
    fn step(
        &mut self,
        sys: SystemRef<'_>,
        state: &mut State,
        h: f64,
    ) -> Result<StepReport, StepError>;
    /// Recompute derived quantities after `(q, v)` were changed from outside. A decorator
    /// that itself recomputes `a` and `λ` consistently with the new `(q, v)` (the
    /// projection's acceleration level) does not call it.
    fn refresh(&mut self, _sys: SystemRef<'_>, _state: &mut State) -> Result<(), StepError> {
        Ok(())
    }
    /// Cumulative counters.
    fn stats(&self) -> MethodStats;
    /// The method's own named counters beyond [`MethodStats`] (e.g. how many steps each
    /// regime of a switching method took), cumulative over the run; the runner writes
    /// them to the runs table's `counters` column. A decorator forwards its inner
    /// method's. Default: none.
    fn counters(&self) -> Vec<(&'static str, usize)> {
        Vec::new()
    }
    /// Tolerances of an error-controlled run, given by [`crate::drive()`] before `init`
    /// (methods with an [`ErrorEstimate`] scale their error and Newton tolerance by them).
    fn set_tolerances(&mut self, _tol: crate::control::Tolerances) {}
    /// The first step and the largest step of an error-controlled run, given by
    /// [`crate::drive()`] before `init`, for methods that control their own steps
    /// ([`ErrorEstimate::own_controller`]); the loop's controller applies them to the others.
    fn set_step_bounds(&mut self, _h0: f64, _h_max: f64) {}
    /// The step just taken was rejected by the step-size controller (or failed and will
    /// be retried with a smaller `h`); [`crate::drive()`] has restored the state of its
    /// start. A method that keeps memory across steps (a Jacobian, dense output) updates
    /// it here; it must not treat the rejected step as accepted.
    fn reject(&mut self) {}
    /// Whether the next step depends on `State` alone (caches and counters aside), so that
    /// a decorator may take a step from a copy of the state and discard it (Richardson
    /// step control). Default `false`: methods with memory across steps (an auxiliary
    /// acceleration, an integral term, a collocation polynomial) must not be restarted.
    fn restartable(&self) -> bool {
        false
    }
}

/// A method for index-3 mechanical systems only: [`Method`]'s contract with the system
/// already typed. Every such method implements this trait, and the one blanket
/// `impl<T: MechanicalMethod> Method for T` does the form dispatch for all of them: another
/// form is refused at `init` ([`MethodError::UnsupportedForm`]) and at `step`/`refresh`
/// ([`StepError::NotReady`]), so no method matches on [`SystemRef`] itself. See [`Method`]
/// for what each function must do. (With both traits in scope, call the shared names
/// through one of them, e.g. `Method::info(&m)`: the blanket impl gives a
/// `MechanicalMethod` both.)
pub trait MechanicalMethod: Send {
    /// Declared properties.
    fn info(&self) -> MethodInfo;
    /// Prepare for a run on `sys` starting at `state`.
    fn init(&mut self, sys: &dyn MechanicalSystem, state: &mut State) -> Result<(), MethodError>;
    /// Advance one step of size `h`.
    fn step(
        &mut self,
        sys: &dyn MechanicalSystem,
        state: &mut State,
        h: f64,
    ) -> Result<StepReport, StepError>;
    /// Recompute derived quantities after `(q, v)` were changed from outside.
    fn refresh(
        &mut self,
        _sys: &dyn MechanicalSystem,
        _state: &mut State,
    ) -> Result<(), StepError> {
        Ok(())
    }
    /// Cumulative counters.
    fn stats(&self) -> MethodStats;
    /// The method's own named counters ([`Method::counters`]).
    fn counters(&self) -> Vec<(&'static str, usize)> {
        Vec::new()
    }
    /// Tolerances of an error-controlled run ([`Method::set_tolerances`]).
    fn set_tolerances(&mut self, _tol: crate::control::Tolerances) {}
    /// Step bounds of an error-controlled run ([`Method::set_step_bounds`]).
    fn set_step_bounds(&mut self, _h0: f64, _h_max: f64) {}
    /// The step just taken was rejected ([`Method::reject`]).
    fn reject(&mut self) {}
    /// Whether the next step depends on `State` alone ([`Method::restartable`]).
    fn restartable(&self) -> bool {
        false
    }
}

impl<T: MechanicalMethod> Method for T {
    /// The declared properties, with `forms` = mechanical (what this impl accepts).
    fn info(&self) -> MethodInfo {
        let mut i = MechanicalMethod::info(self);
        i.forms = vec![SystemForm::Mechanical];
        i
    }
    fn init(&mut self, sys: SystemRef<'_>, state: &mut State) -> Result<(), MethodError> {
        match sys {
            SystemRef::Mechanical(s) => MechanicalMethod::init(self, s, state),
            other => Err(unsupported(&MechanicalMethod::info(self), other.form())),
        }
    }
    fn step(
        &mut self,
        sys: SystemRef<'_>,
        state: &mut State,
        h: f64,
    ) -> Result<StepReport, StepError> {
        match sys {
            SystemRef::Mechanical(s) => MechanicalMethod::step(self, s, state, h),
            _ => Err(not_ready(&MechanicalMethod::info(self).id, state.t)),
        }
    }
    fn refresh(&mut self, sys: SystemRef<'_>, state: &mut State) -> Result<(), StepError> {
        match sys {
            SystemRef::Mechanical(s) => MechanicalMethod::refresh(self, s, state),
            _ => Err(not_ready(&MechanicalMethod::info(self).id, state.t)),
        }
    }
    fn stats(&self) -> MethodStats {
        MechanicalMethod::stats(self)
    }
    fn counters(&self) -> Vec<(&'static str, usize)> {
        MechanicalMethod::counters(self)
    }
    fn set_tolerances(&mut self, tol: crate::control::Tolerances) {
        MechanicalMethod::set_tolerances(self, tol)
    }
    fn set_step_bounds(&mut self, h0: f64, h_max: f64) {
        MechanicalMethod::set_step_bounds(self, h0, h_max)
    }
    fn reject(&mut self) {
        MechanicalMethod::reject(self)
    }
    fn restartable(&self) -> bool {
        MechanicalMethod::restartable(self)
    }
}

/// The error of a `step`/`refresh` before `init` or on a system of another form.
pub fn not_ready(method: &str, t: f64) -> crate::StepError {
    crate::StepError::NotReady {
        method: method.into(),
        t,
    }
}

/// The error for a method offered a system form it does not support.
pub fn unsupported(info: &MethodInfo, form: SystemForm) -> MethodError {
    let ok: Vec<&str> = info.forms.iter().map(|f| f.name()).collect();
    MethodError::UnsupportedForm {
        method: info.id.clone(),
        form: form.name(),
        hint: format!("`{}` accepts {} systems only", info.id, ok.join(" or ")),
    }
}
