//! Baumgarte gains adapted from the violation history (seed 001 §3.10 exercise 5): over a
//! sliding window of the last `N` steps,
//!
//! ```text
//! trend  = least-squares slope of ‖Φ_k‖∞ against k, divided by their mean   (per step)
//! osc    = fraction of steps with Φ_k · Φ_{k−1} < 0   (the violation reverses)
//! β ← β (1 + γ · trend)   if trend > 0
//! α ← α (1 + δ · osc)     if osc > 0,     then α ← min(α, β)   ("keep α ≤ β")
//! ```
//!
//! The seed's own trend, `Σ i C_i / Σ i²`, is a regression through the origin: for any
//! constant positive violation it is positive (`C (N + 1)·3 / (2(2N + 1))` per unit C), so
//! β would grow without bound while nothing changes ([`seed_trend`], test below); the
//! least-squares slope about the mean is used instead. Nothing in the seed's rule keeps
//! the gains inside the stability region of the explicit update, `β²h/4 < α < 1/h`
//! (`baumgarte.rs`); with `stable_region = true` every update is clamped into it (with a
//! 10 % margin), without it the rule runs as the seed gives it.

use crate::explicit::baumgarte_gains::Gains;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Parameters of the history rule.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HistoryParams {
    /// Window length N (steps).
    pub window: usize,
    /// Gain γ on the relative trend.
    pub gamma: f64,
    /// Gain δ on the oscillation fraction.
    pub delta: f64,
    /// Clamp (α, β) into the exact stability region of the update after each change.
    pub stable_region: bool,
}

impl Default for HistoryParams {
    fn default() -> Self {
        Self {
            window: 20,
            gamma: 1.0,
            delta: 0.1,
            stable_region: true,
        }
    }
}

/// The seed's trend `Σ i C_i / Σ i²` (i = 1 … N), kept to show why it is not used.
pub fn seed_trend(c: &[f64]) -> f64 {
    let num: f64 = c.iter().enumerate().map(|(i, x)| (i + 1) as f64 * x).sum();
    let den: f64 = (1..=c.len()).map(|i| (i * i) as f64).sum();
    num / den
}

/// Least-squares slope of `c` against its index, divided by the mean of `c` (0 for a
/// window of fewer than two values or a zero mean).
pub fn relative_trend(c: &[f64]) -> f64 {
    let n = c.len() as f64;
    if c.len() < 2 {
        return 0.0;
    }
    let (mx, my) = ((n - 1.0) / 2.0, c.iter().sum::<f64>() / n);
    let sxy: f64 = c
        .iter()
        .enumerate()
        .map(|(i, y)| (i as f64 - mx) * (y - my))
        .sum();
    let sxx: f64 = (0..c.len()).map(|i| (i as f64 - mx).powi(2)).sum();
    if my > 0.0 {
        sxy / sxx / my
    } else {
        0.0
    }
}

/// The window and what it did.
#[derive(Clone, Debug)]
pub struct GainHistory {
    p: HistoryParams,
    norms: VecDeque<f64>,
    reversals: VecDeque<bool>,
    previous: Vec<f64>,
    /// Steps where β was raised.
    pub beta_raised: usize,
    /// Steps where α was raised.
    pub alpha_raised: usize,
    /// Updates the stability clamp changed.
    pub clamped: usize,
}

impl GainHistory {
    /// An empty window.
    pub fn new(p: HistoryParams) -> Self {
        Self {
            p,
            norms: VecDeque::with_capacity(p.window),
            reversals: VecDeque::with_capacity(p.window),
            previous: Vec::new(),
            beta_raised: 0,
            alpha_raised: 0,
            clamped: 0,
        }
    }

    /// Record the violation `phi` after a step of size `h` and adapt `g` for the next.
    pub fn update(&mut self, phi: &[f64], h: f64, g: &mut Gains) {
        let norm = phi.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        let dot: f64 = phi.iter().zip(&self.previous).map(|(a, b)| a * b).sum();
        if self.norms.len() == self.p.window {
            self.norms.pop_front();
            self.reversals.pop_front();
        }
        self.norms.push_back(norm);
        self.reversals
            .push_back(!self.previous.is_empty() && dot < 0.0);
        self.previous.clear();
        self.previous.extend_from_slice(phi);
        if self.norms.len() < self.p.window {
            return;
        }
        let trend = relative_trend(self.norms.make_contiguous());
        let osc = self.reversals.iter().filter(|r| **r).count() as f64 / self.p.window as f64;
        if trend > 0.0 {
            g.beta *= 1.0 + self.p.gamma * trend;
            self.beta_raised += 1;
        }
        if osc > 0.0 {
            g.alpha *= 1.0 + self.p.delta * osc;
            self.alpha_raised += 1;
        }
        g.alpha = g.alpha.min(g.beta);
        if self.p.stable_region {
            // β²h/4 < α < 1/h, with a 10 % margin on each side.
            let (a, b) = (
                g.alpha.min(0.9 / h),
                g.beta.min((4.0 * 0.9 * g.alpha / h).sqrt()),
            );
            if (a, b) != (g.alpha, g.beta) {
                self.clamped += 1;
            }
            (g.alpha, g.beta) = (a, b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For a constant violation the seed's trend is positive and grows with nothing to
    /// grow; the least-squares slope is 0. For a linearly growing one both are positive.
    #[test]
    fn the_seeds_trend_is_positive_for_a_constant_violation() {
        let constant = [1e-3; 20];
        let seed = seed_trend(&constant);
        // Σ i / Σ i² = (N(N+1)/2) / (N(N+1)(2N+1)/6) = 3/(2N+1) = 3/41 per unit C.
        assert!((seed - 1e-3 * 3.0 / 41.0).abs() < 1e-18, "{seed}");
        assert!(relative_trend(&constant).abs() < 1e-15);
        let growing: Vec<f64> = (1..=20).map(|i| 1e-3 * i as f64).collect();
        // slope 1e-3 per step over the mean 10.5e-3.
        assert!((relative_trend(&growing) - 1.0 / 10.5).abs() < 1e-12);
    }

    #[test]
    fn the_clamp_keeps_the_gains_inside_the_stability_region() {
        let h = 1e-2;
        let mut g = Gains {
            alpha: 50.0,
            beta: 60.0,
        };
        let mut hist = GainHistory::new(HistoryParams {
            window: 3,
            gamma: 10.0,
            ..HistoryParams::default()
        });
        for k in 1..=10 {
            hist.update(&[1e-3 * f64::from(k * k)], h, &mut g);
            assert!(
                g.alpha < 1.0 / h && g.beta * g.beta * h / 4.0 < g.alpha,
                "{g:?}"
            );
        }
        assert!(hist.beta_raised > 0 && hist.clamped > 0);
    }
}
