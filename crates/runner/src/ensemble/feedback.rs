//! The performance-driven curriculum of seed 001 §3.6.3 ("动态约束松弛：根据策略性能动态调整约束
//! 强度"):
//!
//! ```text
//! k = k_min + (k_max − k_min) σ(performance)
//! ```
//!
//! where the seed leaves σ as "a sigmoid of the performance". Without a policy in the loop,
//! the performance an ensemble can see is its own rollouts': the members run in
//! generations of `generation` episodes, and
//!
//! ```text
//! r_g        = fraction of generation g's members that reached t_end
//! p_0 = 0,   p_{g+1} = (1 − β) p_g + β r_g                 (β = smoothing)
//! s_g        = start + (1 − start) σ̃(p_g)
//! σ̃(p)       = (σ(a(p − c)) − σ(−ac)) / (σ(a(1 − c)) − σ(−ac)),  σ(x) = 1/(1 + e^{−x})
//! ```
//!
//! with gain `a` and midpoint `c`: σ̃ is the logistic sigmoid rescaled so that σ̃(0) = 0 and
//! σ̃(1) = 1, so that `s` spans exactly `start … 1` (`k_min = start·k`, `k_max = k` for an
//! exponent of 1). Generations that succeed raise the strength, step by step through the
//! smoothing; a generation whose stiff members diverge (the seed's "过硬约束", §3.6.2) lowers
//! it. The index ramps of the seed's listing cannot back off. A generation's members run in
//! parallel; the generations run in order, so the strengths are the same on any number of
//! threads.

use serde::{Deserialize, Serialize};

/// The feedback's parameters (`ensemble.curriculum.feedback`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Feedback {
    /// Members per generation (they share one strength).
    pub generation: usize,
    /// Sigmoid gain `a` (> 0; larger is steeper).
    #[serde(default = "default_gain")]
    pub gain: f64,
    /// Sigmoid midpoint `c` in (0, 1): the performance at which the *unrescaled*
    /// logistic σ(a(p − c)) is ½ (σ̃(c) = ½ only for c = ½; for c = 0.9, a = 10 it is 0.68).
    #[serde(default = "default_midpoint")]
    pub midpoint: f64,
    /// Smoothing `β` in (0, 1] of the performance over generations (1: the last
    /// generation's success rate alone).
    #[serde(default = "default_smoothing")]
    pub smoothing: f64,
}

fn default_gain() -> f64 {
    10.0
}

fn default_midpoint() -> f64 {
    0.5
}

fn default_smoothing() -> f64 {
    0.5
}

/// The logistic function `1/(1 + e^{−x})`.
fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

impl Feedback {
    /// `σ̃(p)`: the logistic of gain `a` and midpoint `c`, rescaled to `σ̃(0) = 0`,
    /// `σ̃(1) = 1`; `p` is clamped to `[0, 1]`.
    pub fn sigmoid(&self, p: f64) -> f64 {
        let (a, c) = (self.gain, self.midpoint);
        let low = logistic(-a * c);
        let high = logistic(a * (1.0 - c));
        (logistic(a * (p.clamp(0.0, 1.0) - c)) - low) / (high - low)
    }

    /// The strength `start + (1 − start) σ̃(p)` at performance `p`.
    pub fn strength(&self, start: f64, p: f64) -> f64 {
        start + (1.0 - start) * self.sigmoid(p)
    }

    /// The performance after a generation with success rate `rate`:
    /// `(1 − β) p + β rate`.
    pub fn update(&self, p: f64, rate: f64) -> f64 {
        (1.0 - self.smoothing) * p + self.smoothing * rate
    }

    /// `Err` naming the field and the fix.
    pub fn validate(&self) -> Result<(), String> {
        let at = "`ensemble.curriculum.feedback";
        if self.generation == 0 {
            return Err(format!(
                "{at}.generation` = 0: give the members per generation (≥ 1)"
            ));
        }
        if !(self.gain.is_finite() && self.gain > 0.0) {
            return Err(format!(
                "{at}.gain` = {}: give a finite sigmoid gain > 0",
                self.gain
            ));
        }
        if !(self.midpoint > 0.0 && self.midpoint < 1.0) {
            return Err(format!(
                "{at}.midpoint` = {}: give a performance in (0, 1)",
                self.midpoint
            ));
        }
        if !(self.smoothing > 0.0 && self.smoothing <= 1.0) {
            return Err(format!(
                "{at}.smoothing` = {}: give β in (0, 1]",
                self.smoothing
            ));
        }
        Ok(())
    }
}

/// The strength of every generation in order, from the success rate of each before it.
#[derive(Clone, Debug)]
pub struct Generations {
    feedback: Feedback,
    start: f64,
    performance: f64,
}

impl Generations {
    /// Before the first generation: performance 0, strength `start`.
    pub fn new(feedback: Feedback, start: f64) -> Self {
        Self {
            feedback,
            start,
            performance: 0.0,
        }
    }

    /// The strength of the next generation.
    pub fn strength(&self) -> f64 {
        self.feedback.strength(self.start, self.performance)
    }

    /// Record a generation: `succeeded` of its `members` reached t_end.
    pub fn record(&mut self, succeeded: usize, members: usize) {
        let rate = succeeded as f64 / members.max(1) as f64;
        self.performance = self.feedback.update(self.performance, rate);
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // the values compared are exact (formulas at exact points)
mod tests {
    use super::*;

    fn feedback() -> Feedback {
        Feedback {
            generation: 8,
            gain: 10.0,
            midpoint: 0.5,
            smoothing: 0.5,
        }
    }

    /// σ̃ spans [0, 1] exactly, is ½ at the midpoint when c = ½ (the logistic's symmetry
    /// σ(−x) = 1 − σ(x)), is increasing, and is clamped outside [0, 1].
    #[test]
    fn rescaled_sigmoid_spans_zero_to_one() {
        let f = feedback();
        assert_eq!(f.sigmoid(0.0), 0.0);
        assert!((f.sigmoid(1.0) - 1.0).abs() < 1e-15);
        assert!((f.sigmoid(0.5) - 0.5).abs() < 1e-15);
        let mut last = -1.0;
        for i in 0..=100 {
            let v = f.sigmoid(f64::from(i) / 100.0);
            assert!(v > last, "σ̃ not increasing at {i}");
            last = v;
        }
        assert_eq!(f.sigmoid(-3.0), 0.0);
        assert_eq!(f.sigmoid(7.0), f.sigmoid(1.0));
        assert_eq!(f.strength(0.1, 0.0), 0.1);
        assert!((f.strength(0.1, 1.0) - 1.0).abs() < 1e-15);
    }

    /// Generations that all succeed raise p as 1 − (1 − β)^g; a generation that fails
    /// whole lowers it by the factor (1 − β), and the strength with it.
    #[test]
    fn performance_rises_with_success_and_falls_with_failure() {
        let f = feedback();
        let mut g = Generations::new(f, 0.1);
        assert_eq!(g.strength(), 0.1);
        let mut strengths = vec![g.strength()];
        for k in 1..=6 {
            g.record(8, 8);
            let p = 1.0 - 0.5f64.powi(k);
            assert!((g.performance - p).abs() < 1e-15);
            strengths.push(g.strength());
        }
        assert!(strengths.windows(2).all(|w| w[1] > w[0]));
        let before = g.strength();
        let p = g.performance;
        g.record(0, 8);
        assert!((g.performance - 0.5 * p).abs() < 1e-15);
        assert!(g.strength() < before);
    }

    /// The performance `p*` at which the strength is `s*`: σ̃(p*) = (s* − start)/(1 − start),
    /// by bisection (σ̃ is increasing).
    fn performance_at(f: &Feedback, start: f64, s_star: f64) -> f64 {
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if f.strength(start, mid) < s_star {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }

    /// The steady state the experiment `performance-curriculum` reads: when every
    /// strength above s* fails and every one below succeeds, the generations cycle around
    /// s(p*) = s*, and the failed fraction over many generations is 1 − p* within β. (From
    /// p_{g+1} − p_g = β(r_g − p_g): the mean success rate equals the mean performance up
    /// to (p_G − p_0)/(βG), and p cycles in [(1 − β)p*, p* + β(1 − p*)]; a feedback that
    /// never fails would fall outside.)
    #[test]
    fn failed_fraction_settles_at_one_minus_the_threshold_performance() {
        for (midpoint, smoothing, s_star) in [(0.5, 0.5, 0.76), (0.9, 0.2, 0.76), (0.7, 0.05, 0.4)]
        {
            let f = Feedback {
                midpoint,
                smoothing,
                ..feedback()
            };
            let mut g = Generations::new(f, 0.1);
            let n = 20_000;
            let mut failed = 0usize;
            for _ in 0..n {
                let ok = g.strength() <= s_star;
                failed += usize::from(!ok);
                g.record(usize::from(ok) * 8, 8);
            }
            let p_star = performance_at(&f, 0.1, s_star);
            let observed = failed as f64 / f64::from(n);
            // p cycles in [(1 − β)p*, p* + β(1 − p*)]: one failure from above p* takes
            // off βp, one success from below adds β(1 − p).
            let (low, high) = (
                1.0 - p_star - smoothing * (1.0 - p_star),
                1.0 - p_star + smoothing * p_star,
            );
            assert!(
                observed >= low && observed <= high,
                "c = {midpoint}, β = {smoothing}: failed fraction {observed} outside [{low}, {high}] around 1 − p* = {}",
                1.0 - p_star
            );
        }
    }

    #[test]
    fn bad_feedback_names_the_field() {
        let bad = [
            (
                Feedback {
                    generation: 0,
                    ..feedback()
                },
                "generation",
            ),
            (
                Feedback {
                    gain: 0.0,
                    ..feedback()
                },
                "gain",
            ),
            (
                Feedback {
                    midpoint: 1.0,
                    ..feedback()
                },
                "midpoint",
            ),
            (
                Feedback {
                    smoothing: 0.0,
                    ..feedback()
                },
                "smoothing",
            ),
        ];
        for (f, field) in bad {
            assert!(f.validate().unwrap_err().contains(field), "{field}");
        }
        assert!(feedback().validate().is_ok());
    }
}
