//! What failed, as a closed set of stable tags: the runs table's `fail_kind` column.
//!
//! Every failed row carries exactly one [`FailKind`] tag beside its human-readable
//! `fail_reason`, so that a report or a user groups failures without parsing messages.
//! The typed errors of `driftlab-core` map onto it (`StepError::fail_kind`,
//! `MethodError::fail_kind`); the runner adds the failures that happen around a
//! run (`build`, `thread-pool`, `panic`). The table of kinds in docs/bad-inputs.md is checked against
//! [`FailKind::ALL`].

/// One kind of failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum FailKind {
    /// Refused before allocating: the estimate exceeds the limit or what is available.
    Memory,
    /// A linear system (KKT or Newton matrix) was singular or solved inaccurately.
    LinearSolve,
    /// Newton's iteration diverged or did not converge within its iteration limit.
    NewtonDiverged,
    /// A fixed-point stage iteration diverged.
    StageIterationDiverged,
    /// A projection onto the constraint manifold did not converge.
    ProjectionFailed,
    /// The state became NaN or infinite.
    NonFinite,
    /// The state grew beyond the divergence bound (finite but unbounded).
    Diverged,
    /// Newton converged too slowly for the error-controlled step to be kept.
    NewtonSlow,
    /// Error control asked for a step below the smallest admissible one.
    StepSizeUnderflow,
    /// More steps than the step budget allows.
    StepBudget,
    /// More wall time than the cell's time budget allows.
    TimeBudget,
    /// An emergency recovery decorator could not restore the constraints.
    RecoveryFailed,
    /// Error control without a local error estimate from the method.
    MissingEstimate,
    /// An external solver (SUNDIALS IDA) reported a failure.
    External,
    /// The method does not support the problem's form (index-1, nonholonomic, …).
    UnsupportedForm,
    /// The method needs a property the problem lacks.
    Incompatible,
    /// The method's initialization failed (consistent λ₀, symbolic analysis).
    Init,
    /// The initial state is inconsistent with the constraints and could not be repaired.
    InitialState,
    /// The cell's problem or method could not be built from its parameters.
    Build,
    /// The cell's thread pool could not start.
    ThreadPool,
    /// An internal error (a panic, caught per cell): a bug to report.
    Panic,
}

impl FailKind {
    /// Every kind, in the order of the table in docs/bad-inputs.md.
    pub const ALL: &[FailKind] = &[
        FailKind::Memory,
        FailKind::LinearSolve,
        FailKind::NewtonDiverged,
        FailKind::StageIterationDiverged,
        FailKind::ProjectionFailed,
        FailKind::NonFinite,
        FailKind::Diverged,
        FailKind::NewtonSlow,
        FailKind::StepSizeUnderflow,
        FailKind::StepBudget,
        FailKind::TimeBudget,
        FailKind::RecoveryFailed,
        FailKind::MissingEstimate,
        FailKind::External,
        FailKind::UnsupportedForm,
        FailKind::Incompatible,
        FailKind::Init,
        FailKind::InitialState,
        FailKind::Build,
        FailKind::ThreadPool,
        FailKind::Panic,
    ];

    /// The stable kebab-case tag written to `fail_kind`.
    pub fn tag(self) -> &'static str {
        match self {
            FailKind::Memory => "memory",
            FailKind::LinearSolve => "linear-solve",
            FailKind::NewtonDiverged => "newton-diverged",
            FailKind::StageIterationDiverged => "stage-iteration-diverged",
            FailKind::ProjectionFailed => "projection-failed",
            FailKind::NonFinite => "non-finite",
            FailKind::Diverged => "diverged",
            FailKind::NewtonSlow => "newton-slow",
            FailKind::StepSizeUnderflow => "step-size-underflow",
            FailKind::StepBudget => "step-budget",
            FailKind::TimeBudget => "time-budget",
            FailKind::RecoveryFailed => "recovery-failed",
            FailKind::MissingEstimate => "missing-estimate",
            FailKind::External => "external",
            FailKind::UnsupportedForm => "unsupported-form",
            FailKind::Incompatible => "incompatible",
            FailKind::Init => "init",
            FailKind::InitialState => "initial-state",
            FailKind::Build => "build",
            FailKind::ThreadPool => "thread-pool",
            FailKind::Panic => "panic",
        }
    }

    /// Whether the row is a refusal rather than a failure: the method declined the
    /// problem before stepping (its form, or a property it needs), as RATTLE declines
    /// unilateral rows. A report counts these apart from the runs that failed.
    pub fn is_refusal(self) -> bool {
        matches!(self, FailKind::UnsupportedForm | FailKind::Incompatible)
    }

    /// Whether the stored tag `tag` is a refusal ([`FailKind::is_refusal`]).
    pub fn tag_is_refusal(tag: &str) -> bool {
        Self::from_tag(tag).is_some_and(Self::is_refusal)
    }

    /// The kind of a tag, if it is one.
    pub fn from_tag(tag: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.tag() == tag)
    }

    /// The kind's row in the table of docs/bad-inputs.md: `| tag | meaning |`.
    pub fn readme_row(self) -> String {
        format!("| `{}` | {} |", self.tag(), self.meaning())
    }

    /// What the kind means, for the table of docs/bad-inputs.md.
    pub fn meaning(self) -> &'static str {
        match self {
            FailKind::Memory => "refused before allocating: the cell's estimated memory exceeds `--memory-limit` or the memory available",
            FailKind::LinearSolve => "a KKT or Newton linear system was singular or solved inaccurately (redundant or contradictory constraints, a singular mass matrix)",
            FailKind::NewtonDiverged => "Newton's iteration diverged or did not converge within its iteration limit",
            FailKind::StageIterationDiverged => "a fixed-point stage iteration diverged",
            FailKind::ProjectionFailed => "the projection onto the constraint manifold did not converge",
            FailKind::NonFinite => "the state became NaN or infinite",
            FailKind::Diverged => "the state grew beyond the divergence bound (finite but unbounded)",
            FailKind::NewtonSlow => "Newton converged too slowly for an error-controlled step",
            FailKind::StepSizeUnderflow => "error control asked for a step below the smallest admissible one",
            FailKind::StepBudget => "the run needs more steps than `max_steps` allows",
            FailKind::TimeBudget => "the run took more wall time than its budget (`cell_seconds`, `--cell-seconds`); `fail_time` is the time it reached",
            FailKind::RecoveryFailed => "an emergency recovery decorator (`+rollback`, `+reset`, `+relax`) could not restore the constraints",
            FailKind::MissingEstimate => "error control over a method that gives no local error estimate",
            FailKind::External => "an external solver (SUNDIALS IDA) reported a failure",
            FailKind::UnsupportedForm => "the method does not support the problem's form (index-1, nonholonomic, unilateral)",
            FailKind::Incompatible => "the method needs a property the problem lacks",
            FailKind::Init => "the method's initialization failed (consistent λ₀, symbolic analysis)",
            FailKind::InitialState => "the initial state (an ensemble member's perturbed start) is inconsistent with the constraints and its projection onto them failed",
            FailKind::Build => "the cell's problem or method could not be built from its parameters",
            FailKind::ThreadPool => "the cell's thread pool could not start",
            FailKind::Panic => "an internal error (a panic, caught per cell): a bug — please report it",
        }
    }
}

impl std::fmt::Display for FailKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.tag())
    }
}

#[cfg(test)]
mod tests {
    use super::FailKind;

    #[test]
    fn tags_are_distinct_and_round_trip() {
        for (i, k) in FailKind::ALL.iter().enumerate() {
            assert_eq!(FailKind::from_tag(k.tag()), Some(*k));
            assert!(FailKind::ALL[..i].iter().all(|o| o.tag() != k.tag()));
        }
        assert_eq!(FailKind::from_tag("exploded"), None);
    }
}
