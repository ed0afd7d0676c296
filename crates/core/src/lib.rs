//! # driftlab-core
//!
//! The shared vocabulary of driftlab and its one time loop.
//!
//! * [`system`]: the [`MechanicalSystem`] trait for the index-3 DAE
//!   `M(q) v' = f(t, q, v) − Φ_q(t, q)ᵀ λ`, `q' = v`, `Φ(t, q) = 0`, and the
//!   [`SemiExplicitDae`] trait for index-1 systems `x' = f(t, x, z)`, `0 = g(t, x, z)`.
//!   Optional capabilities are traits of their own behind accessors: [`ConstraintHessian`],
//!   [`TangentMatrices`], [`Unilateral`], [`Prioritized`].
//! * [`method`]: the [`Method`] trait (a method's configuration, started on a system as a
//!   [`Stepper`] that takes one step at a time, never a loop), and the declared metadata
//!   [`MethodInfo`].
//! * The results contract (the tables' columns, claims, fail kinds) is the
//!   `driftlab-results` crate; core maps its typed errors onto its [`FailKind`]s.
//! * [`observe`]: observers that sample constraint residuals, energy and errors.
//! * [`drive()`]: **the only time loop in the workspace**.
//! * [`error`]: typed failures carrying the numbers that explain them.
//!
//! Sign convention used everywhere: the constraint force is `−Φ_qᵀ λ`, so the KKT system
//! for accelerations is `[[M, Φ_qᵀ], [Φ_q, 0]] [a; λ] = [f; γ]` with the curvature term
//! `γ = −(Φ_q v)_q v − 2 Φ_qt v − Φ_tt` (seed 002 §18.2).

pub mod control;
pub mod drive;
pub mod error;
pub mod evaluate;
pub mod forward;
pub mod memory;
pub mod method;
pub mod observe;
pub mod params;
pub mod pattern;
pub mod row_selection;
pub mod state;
pub mod system;

/// What a method's file needs to implement [`Method`] and [`Stepper`] on either system
/// form: `use driftlab_core::prelude::*;` (the catalog's methods and a user's own crate).
pub mod prelude {
    pub use crate::control::Tolerances;
    pub use crate::error::{MethodError, ParamError, StepError};
    pub use crate::method::{
        ConstraintLevels, DeclaredOrders, ErrorEstimate, Mechanical, Method, MethodInfo,
        MethodStats, StartOptions, Started, StepReport, Stepper,
    };
    pub use crate::pattern::SparsityPattern;
    pub use crate::state::State;
    pub use crate::system::{ImplicitDae, MechanicalSystem, SemiExplicitDae, SystemForm};
}

pub use control::{ControllerKind, StepController, Tolerances};
pub use driftlab_results::FailKind;
pub use drive::{
    drive, Adaptive, AdaptiveStats, Deadline, Retained, Rollout, RunOutcome, RunStatus, Schedule,
    StepReportSummary, Steps,
};
pub use error::{MethodError, ParamError, RunError, StepError};
pub use method::{
    ConstraintLevels, DeclaredOrders, ErrorEstimate, Mechanical, Method, MethodInfo, MethodStats,
    StartOptions, Started, StepReport, Stepper,
};
pub use observe::{
    AllowedViolation, Metrics, MetricsObserver, Observation, Observer, Published, RefResiduals,
    Sample, SummaryMetrics, TrajectoryRecorder, ViolationWarnings,
};
pub use pattern::SparsityPattern;
pub use state::State;
pub use system::{
    Actuator, Attitude, ConstraintHessian, Dims, ExactSolution, ImplicitDae, Index1Jacobians,
    MechanicalSystem, Prioritized, ProblemInfo, ReferenceDomain, ReferenceSolution, ScdComponents,
    SemiExplicitDae, SystemForm, SystemRef, TangentMatrices, Unilateral,
};
