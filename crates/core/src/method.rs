//! The [`Method`] trait: a method implements one step; it never owns a time loop.

use crate::error::{MethodError, StepError};
use crate::state::State;
use crate::system::{ImplicitDae, MechanicalSystem, SemiExplicitDae, SystemForm};
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
    /// Symplectic: the step preserves the canonical form on the constraint manifold
    /// `{Φ = 0, Φ_q M⁻¹p = 0}` (Hairer, Lubich & Wanner, GNI §VII.1.3). Measured for the
    /// catalog by `crates/methods/tests/symplecticity.rs`.
    pub symplectic: bool,
    /// Why the method is or is not symplectic, with its source.
    pub symplectic_reason: String,
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
    /// Whether every mass matrix the method uses is `M(t, q, v)` at the state it is
    /// evaluated at ([`crate::MechanicalSystem::mass_at`]), so that it runs a problem whose
    /// mass varies with time or velocity; the others are refused by [`crate::drive()`].
    pub varying_mass: bool,
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
            symplectic_reason: String::new(),
            forms: vec![SystemForm::Mechanical],
            nonholonomic: false,
            unilateral: false,
            priorities: false,
            error_estimate: None,
            varying_mass: false,
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
    /// For a variable-order method: the order `k` in `h` of this step's error estimate,
    /// when it differs from [`ErrorEstimate::order`] (the controller then uses it).
    pub error_order: Option<u8>,
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

/// What a run gives a method when it starts: the tolerances and step bounds of an
/// error-controlled run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StartOptions {
    /// Tolerances of an error-controlled run (`None` at fixed steps: the method keeps its
    /// own defaults). Methods with an [`ErrorEstimate`] scale their error and Newton
    /// tolerance by them.
    pub tolerances: Option<crate::control::Tolerances>,
    /// The first step and the largest step of an error-controlled run, for methods that
    /// control their own steps ([`ErrorEstimate::own_controller`]); the loop's controller
    /// applies them to the others.
    pub step_bounds: Option<(f64, f64)>,
    /// Threads the method's linear solvers may use inside this run (0 and 1: sequential,
    /// the default). The runner sets it per cell: cells side by side use 1, so that the
    /// pool over cells and the solver's threads inside a cell never oversubscribe the
    /// cores.
    pub threads: usize,
}

/// A mechanical system as a method's start borrows it for the run.
pub type Mechanical<'s> = &'s dyn MechanicalSystem;

/// What [`Method::start`] returns: the stepper bound to the system, or why it cannot be.
pub type Started<'s> = Result<Box<dyn Stepper + 's>, MethodError>;

/// A method's configuration: built from its parameters before it sees a system, and
/// bound to one by `start`, which returns the [`Stepper`] that owns the run's work
/// buffers. The time loop is [`crate::drive()`], never the method.
///
/// The system forms are three start functions: a method for index-3 mechanical systems
/// implements [`Method::start`]; one that also runs semi-explicit index-1 DAEs overrides
/// [`Method::start_index1`], one that runs fully implicit systems
/// [`Method::start_implicit`] (and lists the forms in [`MethodInfo::forms`]).
pub trait Method: Send + Sync {
    /// Declared properties.
    fn info(&self) -> MethodInfo;
    /// Bind to a mechanical system at `state` (the method may fill consistent `λ` and
    /// `a`, and performs its symbolic analyses).
    fn start<'s>(&self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions)
        -> Started<'s>;
    /// Bind to a semi-explicit index-1 DAE. Default: refused with the forms it accepts.
    fn start_index1<'s>(
        &self, _sys: &'s dyn SemiExplicitDae, _state: &mut State, _opts: &StartOptions,
    ) -> Result<Box<dyn Stepper + 's>, MethodError> {
        Err(unsupported(&self.info(), SystemForm::SemiExplicit))
    }
    /// Bind to a fully implicit system `F(t, y, y′) = 0`. Default: refused with the
    /// forms it accepts.
    fn start_implicit<'s>(
        &self, _sys: &'s dyn ImplicitDae, _state: &mut State, _opts: &StartOptions,
    ) -> Result<Box<dyn Stepper + 's>, MethodError> {
        Err(unsupported(&self.info(), SystemForm::Implicit))
    }
    /// Whether its stepper's next step depends on `State` alone (caches and counters
    /// aside), so that a decorator may take a step from a copy of the state and discard
    /// it (Richardson step control, rollback, symmetric projection). A declared property,
    /// decided by the parameters, known before the start. Default `false`: methods with
    /// memory across steps (an auxiliary acceleration, an integral term, a collocation
    /// polynomial) must not be restarted.
    fn restartable(&self) -> bool {
        false
    }
}

/// A method bound to its system: advances the state one step at a time.
///
/// Contract: `step` advances `state` from `state.t` by `h` and sets `state.t += h`; the
/// loop then calls `accept` or `reject` (a rejected or failed step's state is restored by
/// the loop before `reject`); `refresh` recomputes whatever the stepper derives from
/// `(q, v)` (multipliers, accelerations, cached factorizations) after a decorator
/// changed them.
pub trait Stepper: Send {
    /// Advance one step of size `h`.
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError>;
    /// The step just taken was accepted. A stepper with memory across steps (a Jacobian,
    /// dense output) commits the step here. Default: nothing, or the wrapped stepper's
    /// ([`Stepper::inner`]).
    fn accept(&mut self) {
        if let Some(inner) = self.inner_mut() {
            inner.accept();
        }
    }
    /// The step just taken was rejected by the step-size controller (or failed and will
    /// be retried with a smaller `h`); the state of its start has been restored. A
    /// stepper with memory across steps must not treat the step as accepted. Default:
    /// nothing, or the wrapped stepper's.
    fn reject(&mut self) {
        if let Some(inner) = self.inner_mut() {
            inner.reject();
        }
    }
    /// Recompute derived quantities after `(q, v)` were changed from outside. A decorator
    /// that itself recomputes `a` and `λ` consistently with the new `(q, v)` (the
    /// projection's acceleration level) does not call it. Default: nothing, or the
    /// wrapped stepper's.
    fn refresh(&mut self, state: &mut State) -> Result<(), StepError> {
        self.inner_mut()
            .map_or(Ok(()), |inner| inner.refresh(state))
    }
    /// Start again from `state` as after [`Method::start`], after a change between steps
    /// that the stepper's derived state cannot know of: the velocities replaced, or the
    /// system's applied forces changed (a policy's action through [`crate::Rollout`]).
    /// Recompute whatever the next step takes from the state besides `q` and `v` — the
    /// consistent acceleration and multipliers, a method's own memory of them. Default:
    /// the wrapped stepper's ([`Stepper::inner`]), else [`Stepper::refresh`]; a method
    /// whose step reads an acceleration it carries over (RATTLE's `a_n`, generalized-α's
    /// algorithmic acceleration) overrides it. Only [`crate::Rollout`] calls it, so a run
    /// of [`crate::drive()`] never does.
    fn restart(&mut self, state: &mut State) -> Result<(), StepError> {
        match self.inner_mut() {
            Some(inner) => inner.restart(state),
            None => self.refresh(state),
        }
    }
    /// Cumulative counters.
    fn stats(&self) -> MethodStats;
    /// The method's own named counters beyond [`MethodStats`] (e.g. how many steps each
    /// regime of a switching method took), cumulative over the run; the runner writes
    /// them to the runs table's `counters` column. Default: none, or the wrapped
    /// stepper's.
    fn counters(&self) -> Vec<(&'static str, usize)> {
        self.inner().map_or_else(Vec::new, Stepper::counters)
    }
    /// The stepper this one wraps, when it is a decorator's: the defaults of `accept`,
    /// `reject`, `refresh`, `restart` and `counters` then pass the call on to it, and
    /// the decorator writes only what it changes. `None` (the default) for a method's
    /// own stepper, whose defaults do nothing.
    fn inner(&self) -> Option<&dyn Stepper> {
        None
    }
    /// [`Stepper::inner`], to call on.
    fn inner_mut(&mut self) -> Option<&mut dyn Stepper> {
        None
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
