//! Step-size control for error-controlled (adaptive) runs of [`crate::drive()`].
//!
//! A method that estimates its local error returns, with each step, the scaled norm
//! `err = ‖e / sc‖` (RMS over the components, `sc_i = atol + rtol |y_i|`, index-2 and
//! index-3 components scaled as the method documents), so that the step is acceptable
//! when `err ≤ 1`. [`StepController`] accepts or rejects and proposes the next step size
//! from `err ≈ C h^k`, where `k` ([`crate::ErrorEstimate::order`]) is the order of the
//! estimate in `h` (`k = p̂ + 1` for an embedded method of order `p̂`).
//!
//! Three controllers (Hairer & Wanner, *Solving ODEs II*, 2nd ed., 1996, §IV.8, and
//! *Solving ODEs I*, §II.4):
//!
//! * [`ControllerKind::I`], the elementary one: `h_new = h · fac · err^(−1/k)`;
//! * [`ControllerKind::Pi`], the proportional–integral controller
//!   `h_new = h · fac · err^(−0.7/k) · err_prev^(0.4/k)` (Gustafsson 1991; HW I (4.13));
//! * [`ControllerKind::Gustafsson`], the predictive controller of RADAU5
//!   (HW II (8.25)): the elementary proposal and
//!   `h_new = h · fac · (h / h_acc) · (err_acc / err²)^(1/k)` from the last two accepted
//!   steps, whichever is smaller.
//!
//! Common rules, as in RADAU5 (Hairer & Wanner's Fortran code, `radau5.f`, step-size
//! selection): the safety factor `fac = min(0.9, 0.9 (2 k_max + 1) / (k + 2 k_max))`
//! shrinks when Newton needed many of its `k_max` iterations; `h_new / h` is limited to
//! `[0.2, 8]`; after a rejection the step may not grow; a rejected *first* step is cut by
//! 10 (the initial guess was poor, the estimate says little); a failed Newton iteration
//! halves `h` unless the method suggests a factor. The Gustafsson controller also keeps
//! RADAU5's hold band: an accepted proposal within `[1, 1.2] h` keeps `h`, so that the
//! method can reuse its factorization (the I and PI controllers are the textbook ones,
//! without it).

use serde::{Deserialize, Serialize};

/// Which step-size controller to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ControllerKind {
    /// Elementary (integral) controller.
    I,
    /// Proportional–integral controller (Gustafsson 1991).
    Pi,
    /// Gustafsson's predictive controller (RADAU5's default).
    #[default]
    Gustafsson,
}

impl ControllerKind {
    /// The spec spelling.
    pub fn name(self) -> &'static str {
        match self {
            ControllerKind::I => "i",
            ControllerKind::Pi => "pi",
            ControllerKind::Gustafsson => "gustafsson",
        }
    }
}

/// Relative and absolute tolerances of the local error test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tolerances {
    /// Relative tolerance (> 0).
    pub rtol: f64,
    /// Absolute tolerance (≥ 0).
    pub atol: f64,
}

/// The controller's verdict on one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    /// Whether the step is accepted.
    pub accept: bool,
    /// The step size to try next (after an acceptance: the next step; after a
    /// rejection: the retry).
    pub h_next: f64,
}

/// Safety factor of RADAU5.
const SAFE: f64 = 0.9;
/// Smallest ratio `h_new / h`.
const SHRINK_LIMIT: f64 = 0.2;
/// Largest ratio `h_new / h`.
const GROW_LIMIT: f64 = 8.0;
/// Ratios `h_new / h` in this band keep `h` after an acceptance.
const HOLD_BAND: (f64, f64) = (1.0, 1.2);
/// Lower bound of a remembered accepted error (RADAU5's `ERRACC = max(1e-2, err)`).
const ERR_FLOOR: f64 = 1e-2;

/// A step-size controller; one per run.
#[derive(Clone, Debug)]
pub struct StepController {
    kind: ControllerKind,
    /// Order `k` of the error estimate (`err ∝ h^k`).
    k: f64,
    accepted: usize,
    rejected_last: bool,
    h_acc: f64,
    err_acc: f64,
    /// The estimate's order changed since the last accepted step.
    order_changed: bool,
}

impl StepController {
    /// A controller of `kind` for an error estimate of order `k` (≥ 1).
    pub fn new(kind: ControllerKind, k: u8) -> Self {
        Self {
            kind,
            k: f64::from(k.max(1)),
            accepted: 0,
            rejected_last: false,
            h_acc: f64::NAN,
            err_acc: f64::NAN,
            order_changed: false,
        }
    }

    /// The order of the estimate of the step about to be decided, for a variable-order
    /// method. A change skips the predictive correction of that step, whose history is
    /// of the other order (as RADAU does: `PRED .AND. .NOT. CHANGE`).
    pub fn use_order(&mut self, k: u8) {
        let k = f64::from(k.max(1));
        if (k - self.k).abs() >= 1.0 {
            self.k = k;
            self.order_changed = true;
        }
    }

    /// Decide on a step of size `h` whose scaled error norm is `err`, reached after
    /// `newton` iterations of at most `newton_max` (0, 0 for a method without Newton).
    pub fn decide(&mut self, h: f64, err: f64, newton: usize, newton_max: usize) -> Decision {
        let err = if err.is_nan() {
            f64::INFINITY
        } else {
            err.max(1e-10)
        };
        let fac = safety(newton, newton_max);
        // quot = h / h_new, limited so that h_new / h ∈ [SHRINK_LIMIT, GROW_LIMIT].
        let clamp = |q: f64| q.clamp(1.0 / GROW_LIMIT, 1.0 / SHRINK_LIMIT);
        let mut quot = clamp(err.powf(1.0 / self.k) / fac);
        if err > 1.0 {
            let h_next = if self.accepted == 0 && !self.rejected_last {
                h * 0.1
            } else {
                h / quot
            };
            self.rejected_last = true;
            return Decision {
                accept: false,
                h_next,
            };
        }
        if self.accepted > 0 && !self.order_changed {
            quot = match self.kind {
                ControllerKind::I => quot,
                ControllerKind::Pi => {
                    let pi = err.powf(0.7 / self.k) / self.err_acc.powf(0.4 / self.k) / fac;
                    clamp(pi)
                }
                ControllerKind::Gustafsson => {
                    let g = (self.h_acc / h) * (err * err / self.err_acc).powf(1.0 / self.k) / SAFE;
                    quot.max(clamp(g))
                }
            };
        }
        self.h_acc = h;
        self.err_acc = err.max(ERR_FLOOR);
        self.accepted += 1;
        self.order_changed = false;
        let mut h_next = h / quot;
        if self.rejected_last {
            h_next = h_next.min(h);
        }
        self.rejected_last = false;
        let ratio = h_next / h;
        if self.kind == ControllerKind::Gustafsson && ratio >= HOLD_BAND.0 && ratio <= HOLD_BAND.1 {
            h_next = h;
        }
        Decision {
            accept: true,
            h_next,
        }
    }

    /// The retry step after a failed step (Newton divergence, a singular matrix, a
    /// non-finite state): `h · factor` with the method's suggested factor, else `h / 2`.
    pub fn after_failure(&mut self, h: f64, factor: Option<f64>) -> f64 {
        self.rejected_last = true;
        h * factor.filter(|f| *f > 0.0 && *f < 1.0).unwrap_or(0.5)
    }
}

/// RADAU5's safety factor `min(SAFE, SAFE (1 + 2 k_max) / (k + 2 k_max))`.
fn safety(newton: usize, newton_max: usize) -> f64 {
    if newton_max == 0 {
        return SAFE;
    }
    let cfac = SAFE * (1.0 + 2.0 * newton_max as f64);
    SAFE.min(cfac / (newton as f64 + 2.0 * newton_max as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact equality of two step sizes (the controller returns them unrounded).
    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits()
    }

    /// Synthetic local error `err(h) = (h / h_star)^k`: the ideal step is `h_star`.
    fn run(kind: ControllerKind, h0: f64, h_star: f64, k: u8, steps: usize) -> (Vec<f64>, usize) {
        let mut c = StepController::new(kind, k);
        let (mut h, mut hs, mut rejected) = (h0, Vec::new(), 0);
        while hs.len() < steps {
            let err = (h / h_star).powi(i32::from(k));
            let d = c.decide(h, err, 0, 0);
            if d.accept {
                hs.push(h);
            } else {
                rejected += 1;
            }
            h = d.h_next;
        }
        (hs, rejected)
    }

    #[test]
    fn accepts_below_one_and_rejects_above() {
        let mut g = StepController::new(ControllerKind::Gustafsson, 4);
        let d = g.decide(0.1, 0.5, 0, 0);
        assert!(d.accept);
        // err = 0.5, k = 4: h_new = 0.1 · 0.9 · 0.5^(−1/4) = 0.10703 (inside the hold band).
        assert!(same(d.h_next, 0.1));
        let mut c = StepController::new(ControllerKind::I, 4);
        let d = c.decide(0.1, 0.5, 0, 0);
        assert!((d.h_next - 0.1 * 0.9 / 0.5f64.powf(0.25)).abs() < 1e-12);
        let d = c.decide(0.1, 1e-2, 0, 0);
        assert!(d.accept);
        assert!((d.h_next - 0.1 * 0.9 / 1e-2f64.powf(0.25)).abs() < 1e-12);
        let d = c.decide(0.1, 16.0, 0, 0);
        assert!(!d.accept);
        assert!((d.h_next - 0.1 * 0.9 / 2.0).abs() < 1e-12, "{}", d.h_next);
    }

    #[test]
    fn growth_and_shrink_are_limited() {
        let mut c = StepController::new(ControllerKind::I, 4);
        assert!(c.decide(1.0, 1.0, 0, 0).accept);
        let d = c.decide(1.0, 1e-30, 0, 0);
        assert!(same(d.h_next, GROW_LIMIT), "growth limited to 8");
        let d = c.decide(1.0, 1e30, 0, 0);
        assert!(!d.accept);
        assert!(
            (d.h_next - SHRINK_LIMIT).abs() < 1e-15,
            "shrink limited to 0.2"
        );
    }

    #[test]
    fn first_rejection_cuts_by_ten_and_no_growth_after_a_rejection() {
        let mut c = StepController::new(ControllerKind::Gustafsson, 4);
        let d = c.decide(1.0, 5.0, 0, 0);
        assert!(!d.accept && (d.h_next - 0.1).abs() < 1e-15);
        let d = c.decide(0.1, 1e-12, 0, 0);
        assert!(d.accept && d.h_next <= 0.1, "{}", d.h_next);
        let d = c.decide(0.1, 1e-12, 0, 0);
        assert!(d.h_next > 0.1, "grows again after an accepted step");
    }

    #[test]
    fn newton_iterations_reduce_the_safety_factor() {
        assert!(same(safety(1, 7), 0.9));
        // k = 7 of k_max = 7: 0.9 · 15 / 21.
        assert!((safety(7, 7) - 0.9 * 15.0 / 21.0).abs() < 1e-15);
    }

    #[test]
    fn every_controller_settles_near_the_ideal_step() {
        for kind in [
            ControllerKind::I,
            ControllerKind::Pi,
            ControllerKind::Gustafsson,
        ] {
            let (hs, rejected) = run(kind, 1e-6, 1e-2, 4, 60);
            let last = hs[hs.len() - 1];
            // The safety factor 0.9 settles the I controller at 0.9 h_star and the PI
            // controller at 0.9^(1/0.3) h_star = 0.70 h_star; the hold band of the
            // Gustafsson controller stops growth within 20 % above that.
            assert!(last > 0.6e-2 && last <= 1e-2, "{kind:?}: {last}");
            assert!(
                rejected <= 2,
                "{kind:?}: {rejected} rejections on a smooth model"
            );
        }
    }

    #[test]
    fn failure_halves_or_takes_the_suggested_factor() {
        let mut c = StepController::new(ControllerKind::I, 2);
        assert!(same(c.after_failure(1.0, None), 0.5));
        assert!(same(c.after_failure(1.0, Some(0.3)), 0.3));
        assert!(
            same(c.after_failure(1.0, Some(3.0)), 0.5),
            "a growing factor is ignored"
        );
    }
}
