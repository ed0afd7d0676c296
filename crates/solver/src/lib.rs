//! # driftlab-solver
//!
//! Linear algebra for constrained dynamics, on faer. It knows no particular problem and
//! no method: it sees patterns, values and closures, and through [`ConstraintsAt`] the
//! constraint functions of any `driftlab_core::MechanicalSystem`.
//!
//! * [`kkt`]: the saddle-point matrix `K = [[A, Bᵀ], [B, −C]]` (A = mass or iteration
//!   matrix, B = constraint Jacobian, C = optional regularization) assembled into a fixed
//!   pattern; **symbolic analysis once**, numeric factorization per step.
//!   Backends: sparse LDLᵀ (faer, AMD ordering) with a quasi-definite shift and iterative
//!   refinement, and a dense LU oracle.
//! * [`projection`]: mass-orthogonal projection of `q` onto `{Φ = 0}` (Newton) and of `v`
//!   onto `{Φ_q v + Φ_t = 0}` (one KKT solve).
//! * [`dense`]: small dense LU for index-1 Newton systems.
//! * [`rank`]: numerical rank of a constraint Jacobian (redundant or singular constraints).

pub mod dense;
pub mod error;
pub mod kkt;
pub mod newton;
pub mod projection;
pub mod rank;

pub use error::SolverError;
pub use faer::Par;
pub use kkt::{par_of, KktBackend, KktOptions, KktPattern, KktSolver, KktStats, DENSE_MAX_DIM};
pub use projection::{
    project_position, project_velocity, ConstraintEval, ConstraintsAt, ProjectionParams,
    ProjectionReport,
};
pub use rank::{numerical_rank, RankReport};
