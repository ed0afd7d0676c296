//! Typed failures. Every variant carries the numbers that explain it; the runner turns
//! them into a `failed` row with `fail_time`, `fail_kind` (the variant's tag) and
//! `fail_reason` (its message), never a panic.

use driftlab_results::FailKind;
use thiserror::Error;

/// A step could not be completed.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum StepError {
    /// The run would not fit in memory: refused before allocating ([`crate::memory`]).
    #[error(
        "refused before allocating {what} at t = {t}: an estimated {} > the limit {} ({limit_source}); \
         use a smaller problem, or raise the limit with --memory-limit",
        crate::memory::human(*estimate),
        crate::memory::human(*limit)
    )]
    OutOfMemory {
        /// Time of the refusal.
        t: f64,
        /// What would have been allocated.
        what: String,
        /// Estimated bytes.
        estimate: u64,
        /// The limit in bytes.
        limit: u64,
        /// Where the limit comes from.
        limit_source: String,
    },
    /// A linear solve failed or was inaccurate.
    #[error("linear solve failed at t = {t}: {detail}")]
    LinearSolve {
        /// Time of the step start.
        t: f64,
        /// Solver message (with its numbers).
        detail: String,
    },
    /// Newton's method did not converge.
    #[error("Newton did not converge at t = {t}: {iterations} iterations, residual {residual:e} > tol {tol:e}")]
    NewtonDiverged {
        /// Time of the step start.
        t: f64,
        /// Iterations done.
        iterations: usize,
        /// Final residual norm.
        residual: f64,
        /// Requested tolerance.
        tol: f64,
    },
    /// A fixed-point (functional) stage iteration diverged: its correction kept growing,
    /// the signature of forces too stiff for the step (contraction needs `h²‖M⁻¹K‖ ≲ 1`).
    #[error("stage iteration diverged at t = {t}: the correction grew in {growing} consecutive iterations to {correction:e} (iteration {iterations}); a fixed-point stage iteration contracts only while h²‖M⁻¹∂f/∂q‖ < 1 — take a smaller h, give the problem a tangent stiffness (MechanicalSystem::tangent), or use a method with a Newton matrix (generalized-alpha, implicit-euler, lobatto)")]
    StageIterationDiverged {
        /// Time of the step start.
        t: f64,
        /// Iterations done.
        iterations: usize,
        /// Consecutive iterations in which the correction grew.
        growing: usize,
        /// Last correction `‖Δ‖∞`.
        correction: f64,
    },
    /// A projection onto a constraint manifold did not converge.
    #[error("projection did not converge at t = {t}: {iterations} iterations, ‖Φ‖∞ = {residual:e} > tol {tol:e}")]
    ProjectionFailed {
        /// Time.
        t: f64,
        /// Iterations done.
        iterations: usize,
        /// Final residual.
        residual: f64,
        /// Requested tolerance.
        tol: f64,
    },
    /// The state became non-finite.
    #[error("non-finite {field}[{index}] at t = {t}")]
    NonFinite {
        /// Time.
        t: f64,
        /// Which vector.
        field: &'static str,
        /// Component index.
        index: usize,
    },
    /// The state left every plausible bound (`‖q‖∞` above the divergence bound).
    #[error("diverged at t = {t}: ‖q‖∞ = {norm:e} exceeds the bound {bound:e}")]
    Diverged {
        /// Time.
        t: f64,
        /// ‖q‖∞.
        norm: f64,
        /// Bound.
        bound: f64,
    },
    /// A simplified Newton iteration contracts, but too slowly to converge within its
    /// iteration limit (Hairer & Wanner II §IV.8: `θ^(k_max − k) / (1 − θ) ‖Δ‖ > tol`).
    /// An error-controlled run retries with `h · factor`.
    #[error("Newton too slow at t = {t}: contraction θ = {theta:.3} after {iterations} iterations predicts no convergence within the limit; retry with h × {factor:.3}")]
    NewtonSlow {
        /// Time of the step start.
        t: f64,
        /// Iterations done.
        iterations: usize,
        /// Observed contraction factor.
        theta: f64,
        /// Suggested step-size factor (< 1).
        factor: f64,
    },
    /// An error-controlled run needed a step below its smallest admissible step.
    #[error("step size underflow at t = {t}: the controller asked for h = {h:e} < h_min = {h_min:e} (last reason: {reason}) — loosen rtol/atol, lower `h_min`, or the problem is singular here")]
    StepSizeUnderflow {
        /// Time reached.
        t: f64,
        /// Step size asked for.
        h: f64,
        /// Smallest admissible step.
        h_min: f64,
        /// Why the last step was rejected.
        reason: String,
    },
    /// The run exceeded its step budget.
    #[error("step budget of {budget} steps exhausted at t = {t} (t_end = {t_end})")]
    StepBudget {
        /// Time reached.
        t: f64,
        /// End time requested.
        t_end: f64,
        /// Budget.
        budget: usize,
    },
    /// The run exceeded its wall-time budget (`cell_seconds`): stopped where it was, as
    /// work–precision tools stop a method past its timeout.
    #[error("time budget of {budget} s exhausted at t = {t} after {elapsed:.3} s of wall time (t_end = {t_end}); raise `cell_seconds` (or --cell-seconds), or take larger steps")]
    TimeBudget {
        /// Time reached.
        t: f64,
        /// End time requested.
        t_end: f64,
        /// Wall seconds spent.
        elapsed: f64,
        /// The budget in seconds.
        budget: f64,
    },
    /// A fixed-step interval needs more steps than the budget allows (refused before the
    /// first step).
    #[error("the interval needs t_end / h = {steps:e} steps of h = {h:e}, beyond the step budget of {budget}: raise h, shorten t_end, or raise max_steps")]
    StepsBeyondBudget {
        /// Steps asked for (a real number: no overflow however large).
        steps: f64,
        /// Step size.
        h: f64,
        /// Budget.
        budget: usize,
    },
    /// The emergency recovery of a `+rollback`/`+reset`/`+relax` decorator could not bring
    /// the step back within its tolerance.
    #[error("recovery by {strategy} failed at t = {t} after {attempts} attempt(s): {cause}")]
    RecoveryFailed {
        /// Time of the step start.
        t: f64,
        /// The strategy.
        strategy: &'static str,
        /// Attempts made (halvings for rollback).
        attempts: u32,
        /// What the first attempt ran into.
        cause: String,
    },
    /// A method that declares a local error estimate returned none for a step of an
    /// error-controlled run (a decorator that does not pass the tolerances on?).
    #[error("the method declares a local error estimate but returned no estimate for the step of h = {h:e} at t = {t}: an error-controlled run needs one every step (a decorator that does not pass the tolerances on?)")]
    MissingEstimate {
        /// Time of the step start.
        t: f64,
        /// Step size.
        h: f64,
    },
    /// An external integrator (SUNDIALS IDA) gave up, with its own return flag and message.
    #[error("{solver} failed at t = {t}: {flag}: {message}")]
    External {
        /// The integrator.
        solver: &'static str,
        /// Time of the call's start.
        t: f64,
        /// Its return flag's name (e.g. `IDA_CONV_FAIL`).
        flag: String,
        /// Its last error message (with its numbers).
        message: String,
    },
}

impl StepError {
    /// The variant as a stable kebab-case tag (the runs table's `fail_kind`), so that a
    /// reader filters failures by kind instead of parsing messages.
    pub fn kind(&self) -> &'static str {
        self.fail_kind().tag()
    }

    /// The variant's kind in the closed set of [`FailKind`]s.
    pub fn fail_kind(&self) -> FailKind {
        match self {
            StepError::OutOfMemory { .. } => FailKind::Memory,
            StepError::LinearSolve { .. } => FailKind::LinearSolve,
            StepError::NewtonDiverged { .. } => FailKind::NewtonDiverged,
            StepError::StageIterationDiverged { .. } => FailKind::StageIterationDiverged,
            StepError::ProjectionFailed { .. } => FailKind::ProjectionFailed,
            StepError::NonFinite { .. } => FailKind::NonFinite,
            StepError::Diverged { .. } => FailKind::Diverged,
            StepError::NewtonSlow { .. } => FailKind::NewtonSlow,
            StepError::StepSizeUnderflow { .. } => FailKind::StepSizeUnderflow,
            StepError::StepBudget { .. } | StepError::StepsBeyondBudget { .. } => {
                FailKind::StepBudget
            }
            StepError::TimeBudget { .. } => FailKind::TimeBudget,
            StepError::RecoveryFailed { .. } => FailKind::RecoveryFailed,
            StepError::MissingEstimate { .. } => FailKind::MissingEstimate,
            StepError::External { .. } => FailKind::External,
        }
    }

    /// Whether an error-controlled run may retry the step with a smaller `h` (a Newton
    /// or stage iteration that failed, a singular or inaccurate linear solve, a failed
    /// projection, a non-finite state), and the step-size factor to retry with when the
    /// failure suggests one. `None`: the run ends.
    pub fn retry(&self) -> Option<Option<f64>> {
        match self {
            StepError::NewtonSlow { factor, .. } => Some(Some(*factor)),
            StepError::NewtonDiverged { .. }
            | StepError::LinearSolve { .. }
            | StepError::StageIterationDiverged { .. }
            | StepError::ProjectionFailed { .. }
            | StepError::NonFinite { .. } => Some(None),
            _ => None,
        }
    }
}

/// A method cannot be set up for a system.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum MethodError {
    /// The method does not support the system's form.
    #[error("method `{method}` does not support {form} systems: {hint}")]
    UnsupportedForm {
        /// Method id.
        method: String,
        /// Form of the system offered.
        form: &'static str,
        /// What would work instead.
        hint: String,
    },
    /// The method requires a property the system lacks.
    #[error("method `{method}` cannot run `{problem}`: {reason}")]
    Incompatible {
        /// Method id.
        method: String,
        /// Problem id.
        problem: String,
        /// Why.
        reason: String,
    },
    /// Initialization (consistent λ0, symbolic analysis) failed.
    #[error("initialization failed: {0}")]
    Init(#[from] StepError),
}

impl MethodError {
    /// The variant as a stable kebab-case tag (the runs table's `fail_kind`); the step
    /// error of a failed initialization is in the message.
    pub fn kind(&self) -> &'static str {
        self.fail_kind().tag()
    }

    /// The variant's kind in the closed set of [`FailKind`]s.
    pub fn fail_kind(&self) -> FailKind {
        match self {
            MethodError::UnsupportedForm { .. } => FailKind::UnsupportedForm,
            MethodError::Incompatible { .. } => FailKind::Incompatible,
            MethodError::Init(StepError::OutOfMemory { .. }) => FailKind::Memory,
            MethodError::Init(_) => FailKind::Init,
        }
    }
}

/// Why a run ended before its end time: it could not start, or a step failed.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum RunError {
    /// The method could not be set up for the system (refused or failed `init`).
    #[error(transparent)]
    Setup(#[from] MethodError),
    /// A step failed and the run could not continue.
    #[error(transparent)]
    Step(#[from] StepError),
}

impl RunError {
    /// Stable kebab-case tag of the failure ([`StepError::kind`], [`MethodError::kind`]).
    pub fn kind(&self) -> &'static str {
        match self {
            RunError::Setup(e) => e.kind(),
            RunError::Step(e) => e.kind(),
        }
    }

    /// The failure's kind in the closed set of [`FailKind`]s.
    pub fn fail_kind(&self) -> FailKind {
        match self {
            RunError::Setup(e) => e.fail_kind(),
            RunError::Step(e) => e.fail_kind(),
        }
    }
}

/// A parameter table could not be turned into typed parameters.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ParamError {
    /// Unknown id in a catalog.
    #[error("unknown {kind} `{id}`; known: {known}")]
    UnknownId {
        /// "problem" or "method".
        kind: &'static str,
        /// The id given.
        id: String,
        /// Comma-separated valid ids.
        known: String,
    },
    /// A catalog entry that exists only in builds with an optional cargo feature.
    #[error("{kind} `{id}` is not in this build: it needs the cargo feature `{feature}`; {fix}")]
    NotBuilt {
        /// "problem" or "method".
        kind: &'static str,
        /// The id given.
        id: String,
        /// The cargo feature that adds it.
        feature: &'static str,
        /// How to get a build that has it.
        fix: &'static str,
    },
    /// The table did not deserialize (unknown field, wrong type).
    #[error("invalid parameters for {kind} `{id}`: {message}")]
    Invalid {
        /// "problem" or "method".
        kind: &'static str,
        /// The id.
        id: String,
        /// Deserializer message, naming the field.
        message: String,
    },
    /// A value is out of its admissible range.
    #[error("parameter `{field}` of `{id}` = {} is invalid: {fix}", shown(*value))]
    OutOfRange {
        /// The id.
        id: String,
        /// Field name.
        field: &'static str,
        /// Value given.
        value: f64,
        /// How to fix it.
        fix: String,
    },
    /// Values that are each admissible alone break a relation between them (an order, a
    /// sum, a derived quantity): the message names every parameter in the relation with
    /// its value, so that the one the user changed is among them.
    #[error("parameters {} of `{id}` are inconsistent: {fix}", list_fields(fields))]
    Inconsistent {
        /// The id.
        id: String,
        /// Every parameter in the relation, with the value given (or defaulted).
        fields: Vec<(&'static str, f64)>,
        /// The relation to satisfy.
        fix: String,
    },
}

/// "`a` = 1, `b` = 2" for [`ParamError::Inconsistent`].
fn list_fields(fields: &[(&'static str, f64)]) -> String {
    fields
        .iter()
        .map(|(name, value)| format!("`{name}` = {}", shown(*value)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A parameter's value as the user would write it: `-2`, `0.5`, `NaN` as they are, and a
/// magnitude below 1e-5 or from 1e16 on in exponent form (`1e-200`, not 200 zeros).
fn shown(value: f64) -> String {
    let a = value.abs();
    if value.is_finite() && value != 0.0 && !(1e-5..1e16).contains(&a) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}
