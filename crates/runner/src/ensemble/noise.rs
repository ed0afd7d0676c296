//! The random parts of an ensemble (seed 001 §3.6.2), as pure functions of their indices
//! so that every member is reproducible bit for bit whatever thread runs it and in which
//! order:
//!
//! * [`Stream`]: a counter-based normal stream keyed by `(seed, member, purpose)`;
//! * [`NoiseSchedule`]: the constraint noise `C + N(0, σ²)` with `σ(x) = σ₀ e^{−x/τ}`,
//!   where `x` is the simulated time or the member (episode) index;
//! * [`Curriculum`]: the constraint-strength curriculum of the seed's listing, or the
//!   performance-driven one of §3.6.3 ([`super::feedback`]).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The SplitMix64 output function (Steele, Lea & Flood, "Fast splittable pseudorandom
/// number generators", OOPSLA 2014): a bijection of 64-bit words that passes BigCrush
/// when applied to a counter.
pub fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What a stream draws for (so that the initial-state and the constraint noise of one
/// member are independent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// Perturbation of `q₀` and `v₀`.
    Initial = 1,
    /// Constraint noise `N(0, σ²)` per step and row.
    Constraint = 2,
}

/// A counter-based stream of standard normals: draw `k` is a pure function of
/// `(seed, member, purpose, k)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream {
    key: u64,
}

impl Stream {
    /// The stream of `member` of the ensemble seeded with `seed`, for `purpose`.
    pub fn new(seed: u64, member: u64, purpose: Purpose) -> Self {
        Self {
            key: mix64(mix64(seed ^ mix64(member)) ^ purpose as u64),
        }
    }

    /// Draw `k` as a uniform number in the open interval (0, 1): the top 53 bits of a
    /// mixed counter, offset by half a unit so that 0 never occurs.
    pub fn uniform(&self, k: u64) -> f64 {
        ((mix64(self.key ^ mix64(k)) >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// Draw `k` as a standard normal (Box & Muller, Ann. Math. Stat. 29, 1958), from the
    /// uniforms `2k` and `2k + 1`.
    pub fn normal(&self, k: u64) -> f64 {
        let u1 = self.uniform(2 * k);
        let u2 = self.uniform(2 * k + 1);
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// What the noise level decays over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decay {
    /// Simulated time `t` within each rollout.
    #[default]
    Time,
    /// The member index, read as the training episode (the seed's training time).
    Member,
}

/// Constraint noise `C_noisy = C + N(0, σ²)` with `σ(x) = σ₀ e^{−x/τ}` (seed 001 §3.6.2).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseSchedule {
    /// σ₀ ≥ 0, in the constraint's units.
    pub sigma0: f64,
    /// τ > 0 (`inf`: constant σ), in seconds or episodes as `over` says.
    pub tau: f64,
    /// What `x` is.
    #[serde(default)]
    pub over: Decay,
}

impl NoiseSchedule {
    /// σ at simulated time `t` for `member`.
    pub fn sigma(&self, t: f64, member: usize) -> f64 {
        let x = match self.over {
            Decay::Time => t,
            Decay::Member => member as f64,
        };
        self.sigma0 * (-x / self.tau).exp()
    }

    /// `Err` naming the field and the fix when σ₀ < 0, τ ≤ 0 or either is NaN.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.sigma0.is_finite() && self.sigma0 >= 0.0) {
            return Err(format!(
                "`ensemble.constraint_noise.sigma0` = {}: give a finite noise level ≥ 0",
                self.sigma0
            ));
        }
        if self.tau.is_nan() || self.tau <= 0.0 {
            return Err(format!(
                "`ensemble.constraint_noise.tau` = {}: give a decay constant > 0 (inf for constant noise)",
                self.tau
            ));
        }
        Ok(())
    }
}

/// How the strength ramps: over the episode index between `warmup` and `episodes`, or
/// with the rollouts' performance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ramp {
    /// As the seed's listing writes it: `start + (1 − start)(e − warmup)/episodes`, which
    /// jumps by `(1 − start)(warmup + 1)/episodes` to 1 at `e = episodes`.
    #[default]
    Seed,
    /// `start + (1 − start)(e − warmup)/(episodes − warmup)`: equal increments up to 1.
    Linear,
    /// Seed 001 §3.6.3's `k = k_min + (k_max − k_min) σ(performance)`: members run in
    /// generations, each at the strength the previous generations' performance sets
    /// ([`super::feedback::Feedback`]).
    Performance,
}

/// The constraint-strength curriculum of seed 001 §3.6.2 ("早期训练阶段放松约束"): member
/// (episode) `e` runs with strength `s(e)` = `start` before `warmup`, ramping to 1 at
/// `episodes`; each parameter named in `params` is scaled by `s^exponent`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Curriculum {
    /// Method parameter → exponent (e.g. `{ k_p = 1.0, omega_n = 0.5 }`: the penalty
    /// stiffness and Baumgarte's stiffness `ω_n²` both scale with `s`). Methods without
    /// any of these parameters are hard constraints and run without the curriculum.
    pub params: BTreeMap<String, f64>,
    /// Episodes at the initial strength (the seed's `warmup_episodes`; index ramps).
    #[serde(default)]
    pub warmup: usize,
    /// Episode at which the strength reaches 1 (the seed's `curriculum_episodes`; index
    /// ramps).
    #[serde(default)]
    pub episodes: usize,
    /// Initial strength (the seed's 0.1).
    #[serde(default = "default_start")]
    pub start: f64,
    /// Ramp formula.
    #[serde(default)]
    pub ramp: Ramp,
    /// The performance feedback (`ramp = "performance"` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<super::feedback::Feedback>,
}

fn default_start() -> f64 {
    0.1
}

impl Curriculum {
    /// Strength `s(e)` of episode `e` under an index ramp (`seed`, `linear`); a
    /// performance ramp's strength is its generation's ([`super::feedback`]), never asked
    /// here.
    pub fn strength(&self, e: usize) -> f64 {
        if e < self.warmup {
            return self.start;
        }
        if e >= self.episodes {
            return 1.0;
        }
        let span = match self.ramp {
            Ramp::Seed => self.episodes,
            Ramp::Linear | Ramp::Performance => self.episodes - self.warmup,
        };
        self.start + (1.0 - self.start) * (e - self.warmup) as f64 / span as f64
    }

    /// `params` with each curriculum parameter present scaled by `s(member)^exponent`, and
    /// whether any was; `Err` when a scaled parameter is not a number.
    pub fn apply(
        &self, params: &toml::Table, member: usize,
    ) -> Result<(toml::Table, bool), String> {
        self.scale(params, self.strength(member))
    }

    /// `params` with each curriculum parameter present scaled by `s^exponent`, and whether
    /// any was; `Err` when a scaled parameter is not a number.
    pub fn scale(&self, params: &toml::Table, s: f64) -> Result<(toml::Table, bool), String> {
        let mut out = params.clone();
        let mut any = false;
        for (key, &exponent) in &self.params {
            let Some(v) = out.get_mut(key) else { continue };
            let base = match v {
                toml::Value::Float(x) => *x,
                toml::Value::Integer(i) => *i as f64,
                other => {
                    return Err(format!(
                        "`ensemble.curriculum.params.{key}`: the method's `{key}` = {other} is not a number to scale"
                    ))
                }
            };
            *v = toml::Value::Float(base * s.powf(exponent));
            any = true;
        }
        Ok((out, any))
    }

    /// `Err` naming the field and the fix for an empty or inconsistent curriculum.
    pub fn validate(&self) -> Result<(), String> {
        if self.params.is_empty() || self.params.values().any(|e| !e.is_finite()) {
            return Err("`ensemble.curriculum.params` must map at least one method parameter to a finite exponent, e.g. params = { k_p = 1.0 }".into());
        }
        if !(self.start > 0.0 && self.start <= 1.0) {
            return Err(format!(
                "`ensemble.curriculum.start` = {}: give an initial strength in (0, 1]",
                self.start
            ));
        }
        if self.ramp == Ramp::Performance || self.feedback.is_some() {
            return self.validate_performance();
        }
        if self.episodes == 0 || self.warmup > self.episodes {
            return Err(format!(
                "`ensemble.curriculum`: warmup = {} and episodes = {} must satisfy 0 ≤ warmup ≤ episodes, episodes ≥ 1",
                self.warmup, self.episodes
            ));
        }
        if self.ramp == Ramp::Linear && self.warmup == self.episodes {
            return Err("`ensemble.curriculum`: ramp = \"linear\" needs episodes > warmup".into());
        }
        Ok(())
    }

    /// A performance ramp has its feedback and no episode counts; an index ramp no feedback.
    fn validate_performance(&self) -> Result<(), String> {
        match (&self.feedback, self.ramp) {
            (Some(f), Ramp::Performance) if self.warmup == 0 && self.episodes == 0 => f.validate(),
            (Some(_), Ramp::Performance) => Err("`ensemble.curriculum`: warmup and episodes belong to the index ramps; ramp = \"performance\" steps by `feedback.generation` — remove them".into()),
            (None, _) => Err("`ensemble.curriculum`: ramp = \"performance\" needs its `feedback = { generation = .. }` (members per generation)".into()),
            (Some(_), _) => Err("`ensemble.curriculum.feedback` belongs to ramp = \"performance\"; set that ramp or remove the feedback".into()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // the values compared are exact (formulas at exact points)
mod tests {
    use super::*;

    /// Sample mean and variance of 2·10⁵ draws: within 5 standard errors of 0 and 1
    /// (the standard error of the variance of normals is √(2/n)).
    #[test]
    fn normal_stream_has_unit_variance_and_is_reproducible() {
        let s = Stream::new(7, 3, Purpose::Constraint);
        let n = 200_000;
        let x: Vec<f64> = (0..n).map(|k| s.normal(k)).collect();
        let mean = x.iter().sum::<f64>() / n as f64;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let nf = n as f64;
        assert!(mean.abs() < 5.0 / nf.sqrt(), "mean {mean}");
        assert!(
            (var - 1.0).abs() < 5.0 * (2.0 / nf).sqrt(),
            "variance {var}"
        );
        let again = Stream::new(7, 3, Purpose::Constraint);
        assert_eq!(x[12345].to_bits(), again.normal(12345).to_bits());
        // Other members and purposes are other streams.
        assert_ne!(
            s.normal(0),
            Stream::new(7, 4, Purpose::Constraint).normal(0)
        );
        assert_ne!(s.normal(0), Stream::new(7, 3, Purpose::Initial).normal(0));
    }

    #[test]
    fn schedule_follows_its_formula() {
        let s = NoiseSchedule {
            sigma0: 1e-3,
            tau: 0.5,
            over: Decay::Time,
        };
        assert_eq!(s.sigma(0.0, 9), 1e-3);
        assert!((s.sigma(1.0, 9) - 1e-3 * (-2.0f64).exp()).abs() < 1e-18);
        let m = NoiseSchedule {
            over: Decay::Member,
            tau: 100.0,
            ..s
        };
        assert!((m.sigma(5.0, 300) - 1e-3 * (-3.0f64).exp()).abs() < 1e-18);
        let constant = NoiseSchedule {
            tau: f64::INFINITY,
            ..s
        };
        assert_eq!(constant.sigma(1e6, 0), 1e-3);
        assert!(NoiseSchedule { sigma0: -1.0, ..s }.validate().is_err());
        assert!(NoiseSchedule { tau: 0.0, ..s }.validate().is_err());
        assert!(NoiseSchedule { tau: f64::NAN, ..s }.validate().is_err());
    }

    fn curriculum(ramp: Ramp) -> Curriculum {
        Curriculum {
            params: BTreeMap::from([("k_p".to_string(), 1.0), ("omega_n".to_string(), 0.5)]),
            warmup: 10,
            episodes: 50,
            start: 0.1,
            ramp,
            feedback: None,
        }
    }

    /// The seed's listing: 0.1 before warmup, `0.1 + 0.9 (e − w)/E` up to E, then 1 —
    /// with its jump of `0.9 (w + 1)/E` at E; the linear ramp has equal increments.
    #[test]
    fn curriculum_follows_the_seed_listing() {
        let c = curriculum(Ramp::Seed);
        assert_eq!(c.strength(0), 0.1);
        assert_eq!(c.strength(9), 0.1);
        assert_eq!(c.strength(10), 0.1);
        assert!((c.strength(30) - (0.1 + 0.9 * 20.0 / 50.0)).abs() < 1e-15);
        assert_eq!(c.strength(50), 1.0);
        let jump = c.strength(50) - c.strength(49);
        assert!((jump - 0.9 * 11.0 / 50.0).abs() < 1e-15, "jump {jump}");
        let l = curriculum(Ramp::Linear);
        let step = 0.9 / 40.0;
        for e in 10..50 {
            assert!((l.strength(e + 1) - l.strength(e) - step).abs() < 1e-15);
        }
    }

    #[test]
    fn curriculum_scales_the_named_parameters() {
        let c = curriculum(Ramp::Seed);
        let t: toml::Table = toml::from_str("k_p = 1e6\nk_d = 10.0\nomega_n = 20").unwrap();
        let (p, any) = c.apply(&t, 0).unwrap();
        assert!(any);
        assert_eq!(p["k_p"].as_float(), Some(1e6 * 0.1));
        assert_eq!(p["k_d"].as_float(), Some(10.0));
        assert_eq!(p["omega_n"].as_float(), Some(20.0 * 0.1f64.sqrt()));
        let hard: toml::Table = toml::from_str("rho_inf = 0.9").unwrap();
        assert!(!c.apply(&hard, 0).unwrap().1);
        let text: toml::Table = toml::from_str("k_p = \"stiff\"").unwrap();
        assert!(c.apply(&text, 0).unwrap_err().contains("k_p"));
        assert!(Curriculum {
            warmup: 60,
            ..curriculum(Ramp::Seed)
        }
        .validate()
        .is_err());
    }
}
