//! The one rule by which the iterations of this crate (Newton in `fd_newton` and
//! `implicit-euler`, SHAKE in `rattle`, the stage iteration of `gauss`) recognize that
//! their correction has reached its round-off floor rather than diverging.
//!
//! A correction `c` (an update or a residual, in the iteration's own norm) has stalled
//! when it is already tiny relative to the size of the unknowns, `c < 1e-9 · scale`, and
//! the last iteration did not reduce it by more than the expected contraction:
//! `c > contraction · previous`. Newton-type iterations (quadratic, or at least halving)
//! use `contraction = 0.5`; fixed-point iterations, which may contract slowly but
//! steadily, use `1.0` (no decrease at all). Badly scaled systems need it: Andrews' mass
//! entries of 1e-7 next to forces of 1e2 leave ≈ 1e-9 relative noise in the accelerations,
//! and a 1000-link chain's |q| = 1000 leaves ≈ 1e-13 of cancellation in |d|² − ℓ².

/// Contraction expected of a Newton-type iteration.
pub const NEWTON: f64 = 0.5;
/// Contraction expected of a fixed-point iteration (any decrease continues it).
pub const FIXED_POINT: f64 = 1.0;

/// Whether `correction` is at the round-off floor (see the module documentation).
pub fn stalled(correction: f64, previous: f64, scale: f64, contraction: f64) -> bool {
    correction < 1e-9 * scale && correction >= contraction * previous
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_only_when_tiny_and_not_contracting() {
        assert!(stalled(1e-12, 1.5e-12, 1.0, NEWTON));
        assert!(!stalled(1e-12, 1e-10, 1.0, NEWTON), "still contracting");
        assert!(!stalled(1e-6, 1e-6, 1.0, NEWTON), "not at round-off");
        assert!(
            !stalled(0.9e-12, 1e-12, 1.0, FIXED_POINT),
            "a fixed point still decreasing"
        );
        assert!(stalled(1e-12, 1e-12, 1.0, FIXED_POINT));
    }
}
