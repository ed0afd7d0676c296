//! RADAU's order selection between s = 3, 5 and 7 stages (orders 5, 9, 13), from the
//! Newton iteration's contraction: a fast contraction makes the Newton iterations of a
//! higher order cheap, a slow one or a failure makes a lower order safer (Hairer &
//! Wanner, *Stiff differential equations solved by Radau methods*, J. Comput. Appl.
//! Math. 111 (1999) 93–111; the rules as `radau.f` codes them, `RADCOV` lines 898–958
//! of the 1998/2002 version):
//!
//! ```text
//! θ̄ = min(10, max(θ, θ̄/2))                       smoothed contraction (THETAT)
//! s + 2  if the last Newton solve took ≥ 2 iterations, θ̄ ≤ 0.002 and 0.8 < h/h_old < 1.2
//! s − 2  if θ̄ ≥ 0.8, or after a Newton failure, or after a slow Newton solve cut h by ≤ 0.5
//! ```
//!
//! (the decrease wins), never an increase within 10 factorizations or kept steps of the
//! last change. The test runs where RADAU runs it: before each factorization, and on a
//! step that keeps its factorization once 10 have passed since the last change (which
//! then refactors, so that the increase can be tested).

use driftlab_solver::newton::{NewtonFailure, NewtonReport};

/// RADAU's `VITU`, `VITD`, `HHOU`, `HHOD` (`radau.f` defaults, `WORK(10)`–`WORK(13)`).
const FAST: f64 = 0.002;
const SLOW: f64 = 0.8;
const RATIO_BAND: (f64, f64) = (0.8, 1.2);
/// Passes after a change before an increase is considered.
const LOCKOUT: usize = 10;

/// The state of the order selection over a run.
pub(super) struct OrderSelection {
    min: usize,
    max: usize,
    /// Factorizations and kept steps since the last change (`ICHAN`).
    passes: usize,
    /// `θ̄` (`THETAT`).
    smoothed: f64,
    /// Iterations and contraction of the last Newton solve (`NEWT`, `THETA`).
    pub last_iterations: usize,
    pub last_theta: f64,
    /// A Newton failure (`UNEXP`) or a slow solve that cut the step by ≤ 0.5 (`UNEXN`)
    /// since the last test.
    pub failed: bool,
    pub cut: bool,
    /// The last accepted step size (`HOLD`).
    h_accepted: f64,
    /// Accepted steps at s = 3, 5, 7, and order changes.
    steps: [usize; 3],
    pub changes: usize,
}

impl OrderSelection {
    /// Orders between `min` and `max` stages (3 ≤ min ≤ max ≤ 7, odd).
    pub fn new(min: usize, max: usize) -> Self {
        Self {
            min,
            max,
            passes: 0,
            smoothed: 0.0,
            last_iterations: 0,
            last_theta: 0.0,
            failed: false,
            cut: false,
            h_accepted: f64::NAN,
            steps: [0; 3],
            changes: 0,
        }
    }

    /// A step of size `h` at `s` stages was accepted.
    pub fn accepted(&mut self, s: usize, h: f64) {
        self.h_accepted = h;
        self.steps[(s - 3) / 2] += 1;
    }

    /// The last Newton solve: `iterations` and its outcome (the contraction of a
    /// converged solve, `reuse` (RADAU's `THET`) after a single iteration, as RADAU
    /// leaves it; a failure marks the next test).
    pub fn after_newton<E>(
        &mut self, iterations: usize, outcome: &Result<NewtonReport, NewtonFailure<E>>, reuse: f64,
    ) {
        self.last_iterations = iterations;
        match outcome {
            Ok(r) => {
                self.last_theta = if r.theta.is_nan() {
                    reuse.abs()
                } else {
                    r.theta
                }
            }
            Err(NewtonFailure::Slow { theta, factor, .. }) => {
                self.last_theta = *theta;
                self.cut |= *factor <= 0.5;
            }
            Err(NewtonFailure::Diverged { theta, .. }) => {
                self.last_theta = *theta;
                self.failed = true;
            }
            Err(NewtonFailure::Iteration(_)) => self.failed = true,
        }
    }

    /// The runs table's counters: accepted steps per order, order changes.
    pub fn counters(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("steps_order5", self.steps[0]),
            ("steps_order9", self.steps[1]),
            ("steps_order13", self.steps[2]),
            ("order_changes", self.changes),
        ]
    }

    /// A step at `s` stages keeps its factorization: whether to refactor anyway, so that
    /// an increase can be tested.
    pub fn keeps(&mut self, s: usize) -> bool {
        self.passes += 1;
        self.passes >= LOCKOUT && s < self.max
    }

    /// Before a factorization for step `h` at `s` stages: the stages to use.
    pub fn decide(&mut self, s: usize, h: f64) -> usize {
        self.passes += 1;
        let ratio = h / self.h_accepted;
        self.smoothed = self.last_theta.max(self.smoothed * 0.5).min(10.0);
        let mut next = s;
        if self.last_iterations > 1
            && self.smoothed <= FAST
            && ratio > RATIO_BAND.0
            && ratio < RATIO_BAND.1
        {
            next = (s + 2).min(self.max);
        }
        if self.smoothed >= SLOW || self.failed || self.cut {
            next = s.saturating_sub(2).max(self.min);
        }
        if self.passes <= LOCKOUT {
            next = next.min(s);
        }
        (self.failed, self.cut) = (false, false);
        if next != s {
            self.passes = 1;
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::OrderSelection;

    /// The rules of `radau.f`: no increase in the first 10 passes; then an increase on
    /// fast contraction with a steady step; a failure or slow contraction lowers the
    /// order, never below the minimum.
    #[test]
    fn follows_radau_rules() {
        let mut o = OrderSelection::new(3, 7);
        o.accepted(3, 1.0);
        (o.last_iterations, o.last_theta) = (2, 1e-4);
        for _ in 0..9 {
            assert_eq!(o.decide(3, 1.0), 3, "locked out");
        }
        assert_eq!(o.decide(3, 1.0), 3, "10th pass: still locked (passes ≤ 10)");
        assert_eq!(o.decide(3, 1.0), 5, "11th pass: fast contraction → s = 5");
        assert_eq!(
            o.decide(5, 1.5),
            5,
            "h/h_old = 1.5 outside the band, and locked"
        );
        o.failed = true;
        assert_eq!(o.decide(5, 1.0), 3, "a Newton failure lowers the order");
        o.failed = true;
        assert_eq!(o.decide(3, 1.0), 3, "not below the minimum");
        o.last_theta = 0.9;
        assert_eq!(o.decide(3, 1.0), 3);
        // A kept step asks for a factorization once 10 passes are reached below max.
        let mut o = OrderSelection::new(3, 7);
        assert!((0..9).all(|_| !o.keeps(3)));
        assert!(o.keeps(3));
        assert!(!o.keeps(7), "at the maximum there is nothing to test");
    }
}
