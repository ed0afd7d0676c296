//! Typed solver failures with their numbers.

use thiserror::Error;

/// A linear-algebra failure.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum SolverError {
    /// The pattern is malformed (index out of range).
    #[error("invalid pattern: {0}")]
    Pattern(String),
    /// The factor would not fit in memory: refused before allocating it
    /// ([`driftlab_core::memory`]).
    #[error(transparent)]
    OutOfMemory(driftlab_core::StepError),
    /// faer's symbolic analysis failed.
    #[error("symbolic analysis failed: {0}")]
    Symbolic(String),
    /// The numeric factorization failed.
    #[error("numeric factorization failed: {0}")]
    Factorization(String),
    /// The solve did not reach the requested accuracy (singular or rank-deficient KKT:
    /// redundant constraints or a singular configuration).
    #[error("KKT solve inaccurate: relative residual {residual:e} after {refinements} refinement steps (accept ≤ {accept:e}); Φ_q may be rank deficient")]
    Inaccurate {
        /// ‖K x − b‖∞ / (‖K‖∞ ‖x‖∞ + ‖b‖∞).
        residual: f64,
        /// Refinement steps done.
        refinements: usize,
        /// Acceptance threshold.
        accept: f64,
    },
    /// The solve produced a non-finite component: the factorization holds a zero or
    /// overflowing pivot that the shift did not catch (singular KKT matrix).
    #[error("KKT solve gave non-finite x[{index}] = {value} (singular KKT matrix: Φ_q may be rank deficient)")]
    NonFiniteSolution {
        /// First non-finite component.
        index: usize,
        /// Its value (NaN or ±∞).
        value: f64,
    },
    /// The right-hand side given to the solve is already non-finite: the caller's
    /// residual or iterate diverged before this solve (not a singular matrix).
    #[error("KKT right-hand side non-finite: b[{index}] = {value} (the iteration diverged before this solve; the matrix is not the cause)")]
    NonFiniteRhs {
        /// First non-finite component.
        index: usize,
        /// Its value (NaN or ±∞).
        value: f64,
    },
    /// `solve` called before a successful `factorize`.
    #[error("solve called before factorize")]
    NotFactorized,
    /// Position projection did not converge.
    #[error(
        "projection did not converge: {iterations} iterations, ‖Φ‖∞ = {residual:e} > tol {tol:e}"
    )]
    ProjectionDiverged {
        /// Iterations done.
        iterations: usize,
        /// Final constraint residual.
        residual: f64,
        /// Tolerance.
        tol: f64,
    },
}
