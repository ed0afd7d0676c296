//! `pendulum`: the planar pendulum in Cartesian coordinates (seed 002 §18.3, eq. 18.1),
//! with its exact solution through Jacobi elliptic functions. Preset
//! `bertolazzi-pendulum` (seed 002 Example 19.1).
//!
//! ```text
//! m x'' = −2 x λ,   m y'' = −m g − 2 y λ,   Φ = x² + y² − ℓ² = 0
//! Φ_q = [2x, 2y],   γ = −2 (ẋ² + ẏ²),   H = ½ m (ẋ² + ẏ²) + m g y
//! ```
//!
//! Exact solution for a release from rest at angle `θ₀` from the downward vertical
//! (`|θ₀| < π`): with `k = sin(θ₀/2)`, `ω = √(g/ℓ)`,
//! `θ(t) = 2 arcsin(k sn(K(k) − ω t, k))`, `θ'(t) = −2 k ω cn(K(k) − ω t, k)`,
//! `x = ℓ sin θ`, `y = −ℓ cos θ`; the multiplier follows from the radial balance
//! `λ = (m |v|² + q·f) / (2ℓ²) = m (|v|² − g y) / (2ℓ²)`. The period is `4K(k)/ω`.
//!
//! Evaluated in f64 near the upright release (`k → 1`) the formula loses what the
//! cancellation in `k′ = √(1 − k²)` and the `arcsin` near ±1 lose: measured against
//! 40-digit values (mpmath `ellipfun`) the angle was off by 9e-5 at θ₀ = 179.9999° and by
//! π beyond 179.99999°, where `k` rounds to 1. So `k′ = cos(θ₀/2)` is computed from the
//! complement angle (`sin((180° − |θ₀|)/2)`, exact in its argument), the elliptic
//! functions take it ([`crate::elliptic::sn_cn_dn_c`]), and the angle is
//! `θ/2 = atan2(k sn, dn)` (`sin(θ/2) = k sn`, `cos(θ/2) = dn`): then the error is
//! ≈ ε/k′ at the tops of the swing and grows with the number of periods (measured:
//! 6.6e-11 at 179.9999° and 5.1e-9 at 179.999999° at the first top, 2.7e-10 after 21
//! periods), which [`Pendulum::reference_domain`] bounds.

use crate::elliptic::{complete_k_c, sn_cn_dn_c};
use crate::entry::{Problem, ProblemEntry};
use crate::planar::circle;
use driftlab_core::params::{self, bounded_positive, finite};
use driftlab_core::{
    ConstraintHessian, Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo,
    SparsityPattern, State,
};
use serde::{Deserialize, Serialize};

/// Parameters of [`Pendulum`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PendulumParams {
    /// Mass `m` (kg).
    pub m: f64,
    /// Rod length `ℓ` (m).
    pub length: f64,
    /// Gravitational acceleration `g` [m/s²] (gravity is `−g e₂`).
    pub g: f64,
    /// Release angle from the downward vertical (degrees), at rest; `|θ₀| < 180`.
    pub theta0_deg: f64,
    /// Default end time (s).
    pub t_end: f64,
    /// Initial constraint violation `Φ(q₀) = z₀` (m²) (0: consistent). The bob starts at
    /// radius `√(ℓ² + z₀)` on the same ray; used to test stabilization error dynamics.
    pub phi0: f64,
    /// Initial velocity-level violation `Φ̇(q₀, v₀) = ż₀` [m²/s] (0: consistent): a radial
    /// initial velocity `v₀ = ż₀ q₀ / (2|q₀|²)`.
    pub phidot0: f64,
}

impl Default for PendulumParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            length: 1.0,
            g: 9.81,
            theta0_deg: 90.0,
            t_end: 10.0,
            phi0: 0.0,
            phidot0: 0.0,
        }
    }
}

impl PendulumParams {
    /// Seed 002 Example 19.1 (after Bertolazzi): m = 2, ℓ = 2.5, g = 9.81, released at
    /// rest 20° from the upright position, `q₀ = 2.5 (sin 20°, cos 20°)`, 50 s.
    pub fn bertolazzi() -> Self {
        Self {
            m: 2.0,
            length: 2.5,
            g: 9.81,
            theta0_deg: 160.0,
            t_end: 50.0,
            phi0: 0.0,
            phidot0: 0.0,
        }
    }
}

impl PendulumParams {
    /// A consistent release at rest (`phi0 = phidot0 = 0`) of mass `m` on a rod of
    /// `length` under gravity `g`, at `theta0_deg` from the downward vertical, for
    /// `t_end` (the pendulum another problem shares: the stops', the one-link chain's).
    pub fn released(m: f64, length: f64, g: f64, theta0_deg: f64, t_end: f64) -> Self {
        Self {
            m,
            length,
            g,
            theta0_deg,
            t_end,
            phi0: 0.0,
            phidot0: 0.0,
        }
    }

    /// IFToMM / A Coruña MBS benchmark A01 (datasets/iftomm_udc_mbs_benchmark_specs.json):
    /// 1 kg on a massless 1 m link, g = 9.81 in −y, released at rest horizontally with
    /// x(P1) = +1 m, simulated for 2000 s; high-precision allowed error 1e-3 m on the
    /// (x, y) history. The exact elliptic solution stands in for the unobtained
    /// reference file.
    pub fn iftomm_a01() -> Self {
        Self {
            t_end: 2000.0,
            ..Self::default()
        }
    }
}

/// The planar Cartesian pendulum.
#[derive(Clone, Debug)]
pub struct Pendulum {
    p: PendulumParams,
    id: &'static str,
    k: f64,
    /// `k′ = cos(θ₀/2)`, from the complement angle ([`complement_modulus`]).
    kc: f64,
    kk: f64,
    omega: f64,
}

/// `k′ = cos(θ₀/2)` accurate to a relative ε even where `k = sin(θ₀/2)` rounds to 1:
/// for `|θ₀| ≥ 90°` as `sin((180° − |θ₀|)/2)`, whose argument `180 − |θ₀|` is exact
/// (Sterbenz) where `cos(θ₀/2)` would take a rounded argument near π/2.
fn complement_modulus(theta0_deg: f64) -> f64 {
    let a = theta0_deg.abs();
    if a >= 90.0 {
        ((180.0 - a) / 2.0).to_radians().sin()
    } else {
        (a / 2.0).to_radians().cos()
    }
}

/// The largest error of the exact solution a run may be compared with, in units of ℓ
/// (beyond it the "errors" would be the reference's): the A01 benchmark's own tolerance
/// is 1e-3 m on a 1 m pendulum, ten times coarser.
const DOMAIN_ACCURACY: f64 = 1e-4;

impl Pendulum {
    /// Build and validate.
    pub fn new(p: PendulumParams, id: &'static str) -> Result<Self, ParamError> {
        bounded_positive(id, "m", p.m)?;
        bounded_positive(id, "length", p.length)?;
        bounded_positive(id, "g", p.g)?;
        bounded_positive(id, "t_end", p.t_end)?;
        if p.theta0_deg.is_nan() || p.theta0_deg.abs() >= 180.0 {
            return Err(ParamError::OutOfRange {
                id: id.into(),
                field: "theta0_deg",
                value: p.theta0_deg,
                fix: "give a release angle with |θ₀| < 180° (the upright release never moves)"
                    .into(),
            });
        }
        finite(id, "phi0", p.phi0)?;
        finite(id, "phidot0", p.phidot0)?;
        if p.phi0 <= -p.length * p.length {
            return Err(params::inconsistent(
                id,
                &[("phi0", p.phi0), ("length", p.length)],
                "give phi0 > −length² (the bob starts at radius √(length² + phi0))",
            ));
        }
        let k = (p.theta0_deg.to_radians() / 2.0).sin();
        let kc = complement_modulus(p.theta0_deg);
        Ok(Self {
            p,
            id,
            k,
            kc,
            kk: complete_k_c(kc),
            omega: (p.g / p.length).sqrt(),
        })
    }

    /// The period `4 K(k) / ω`.
    pub fn period(&self) -> f64 {
        4.0 * self.kk / self.omega
    }

    fn exact_angle(&self, t: f64) -> (f64, f64) {
        let s = self.k.signum();
        let k = self.k.abs();
        let (sn, cn, dn) = sn_cn_dn_c(self.kk - self.omega * t, k, self.kc);
        (s * 2.0 * (k * sn).atan2(dn), -s * 2.0 * k * self.omega * cn)
    }

    /// The exact solution's error bound over `[0, t_end]`, in metres:
    /// `ε ℓ (4/k′ · (1 + ω t_end/(4K)) + 4 (K + ω t_end))`. The first term is the
    /// conditioning near the tops of the swing (errors ≈ ε/k′ there), growing with the
    /// number of periods `ωt/(4K)`; the second the rounding of the phase `u = K − ωt` and of
    /// its reduction modulo `4K`. Against 40-digit values (mpmath `ellipfun`) at θ₀ = 90°
    /// … 179.99999999° and t up to 21 periods, every measured error lay 3.2 to 90 times
    /// below it.
    pub fn exact_accuracy(&self, t_end: f64) -> f64 {
        let periods = self.omega * t_end / (4.0 * self.kk);
        let tops = 4.0 / self.kc * (1.0 + periods);
        let phase = 4.0 * (self.kk + self.omega * t_end);
        f64::EPSILON * self.p.length * (tops + phase)
    }
}

/// The catalog id `pendulum`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "pendulum";

/// Catalog entry `pendulum`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "planar pendulum in Cartesian coordinates, exact elliptic-function solution",
        build: |t| {
            Ok(Problem::Mechanical(Box::new(Pendulum::new(
                params::parse("problem", ID, t)?,
                ID,
            )?)))
        },
        defaults: params::defaults::<PendulumParams>,
    }
}

/// Build a preset of `pendulum`: `base` overridden by the keys of `t`.
fn build_preset(
    id: &'static str, base: PendulumParams, t: &toml::Table,
) -> Result<Problem, ParamError> {
    let mut table = toml::Table::try_from(base).unwrap_or_default();
    table.extend(t.clone());
    let p = params::parse("problem", id, &table)?;
    Ok(Problem::Mechanical(Box::new(Pendulum::new(p, id)?)))
}

/// Catalog entry `bertolazzi-pendulum` (a preset of `pendulum`; its parameters may still
/// be overridden).
pub fn bertolazzi_entry() -> ProblemEntry {
    ProblemEntry {
        id: "bertolazzi-pendulum",
        summary: "seed 002 Example 19.1: m = 2, ℓ = 2.5, released 20° from upright, 50 s",
        build: |t| build_preset("bertolazzi-pendulum", PendulumParams::bertolazzi(), t),
        defaults: || toml::Table::try_from(PendulumParams::bertolazzi()).unwrap_or_default(),
    }
}

/// Catalog entry `pendulum-a01` (IFToMM benchmark A01, a preset of `pendulum`).
pub fn a01_entry() -> ProblemEntry {
    ProblemEntry {
        id: "pendulum-a01",
        summary: "IFToMM/A Coruña benchmark A01: 1 kg, 1 m, g = 9.81, horizontal release, 2000 s",
        build: |t| build_preset("pendulum-a01", PendulumParams::iftomm_a01(), t),
        defaults: || toml::Table::try_from(PendulumParams::iftomm_a01()).unwrap_or_default(),
    }
}

impl MechanicalSystem for Pendulum {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: self.id.into(),
            title: format!(
                "Planar pendulum (Cartesian): m = {}, ℓ = {}, g = {}, released at rest at θ₀ = {}° from the downward vertical",
                p.m, p.length, p.g, p.theta0_deg
            ),
            equations: "m x'' = −2xλ,  m y'' = −mg − 2yλ,  Φ = x² + y² − ℓ² = 0;  Φ_q = [2x, 2y],  γ = −2(ẋ² + ẏ²),  \
                        H = ½m(ẋ² + ẏ²) + mgy"
                .into(),
            citation: "seed 002 §18.3 eq. (18.1) and Example 19.1 (after E. Bertolazzi's lecture notes); exact solution \
                       θ(t) = 2 arcsin(k sn(K(k) − ωt, k)), k = sin(θ₀/2), ω = √(g/ℓ) (e.g. Lawden, Elliptic Functions and \
                       Applications, 1989, §5.2); sn/cn/dn and K by the AGM (Abramowitz & Stegun §16.4, §17.6)"
                .into(),
            tags: vec!["planar".into(), "conservative".into(), "exact-solution".into(), "index-3".into()],
            index: 3,
            t_end: p.t_end,
            reference: format!("exact (Jacobi elliptic functions), period {:.15} s", self.period()),
        }
    }
    fn dims(&self) -> Dims {
        circle::DIMS
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(2)
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        circle::mass(self.p.m, out);
    }
    fn forces(&self, _t: f64, _q: &[f64], _v: &[f64], out: &mut [f64]) {
        out[0] = 0.0;
        out[1] = -self.p.m * self.p.g;
    }
    fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        out[0] = circle::phi(q, self.p.length);
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        circle::jacobian_pattern()
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        circle::jacobian(q, out);
    }
    fn curvature(&self, _t: f64, _q: &[f64], v: &[f64], out: &mut [f64]) {
        out[0] = circle::curvature(v);
    }
    fn constraint_hessian(&self) -> Option<&dyn ConstraintHessian> {
        Some(self)
    }
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        Some(0.5 * self.p.m * (v[0] * v[0] + v[1] * v[1]) + self.p.m * self.p.g * q[1])
    }
    fn energy_scale(&self) -> f64 {
        self.p.m * self.p.g * self.p.length
    }
    fn initial_state(&self) -> State {
        let th = self.p.theta0_deg.to_radians();
        let r = (self.p.length * self.p.length + self.p.phi0).sqrt();
        let q = vec![r * th.sin(), -r * th.cos()];
        let s = self.p.phidot0 / (2.0 * r * r);
        let v = vec![s * q[0], s * q[1]];
        State::mechanical(0.0, q, v, 1)
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        if self.p.phi0 != 0.0 || self.p.phidot0 != 0.0 {
            return None; // the exact solution is for consistent initial data
        }
        let (th, dth) = self.exact_angle(t);
        let l = self.p.length;
        let q = vec![l * th.sin(), -l * th.cos()];
        let v = vec![l * th.cos() * dth, l * th.sin() * dth];
        let v2 = v[0] * v[0] + v[1] * v[1];
        let lambda = self.p.m * (v2 - self.p.g * q[1]) / (2.0 * l * l);
        Some(ExactSolution {
            q,
            v,
            lambda: vec![lambda],
        })
    }
    /// Valid while [`Pendulum::exact_accuracy`] stays below `1e-4 ℓ`; a release so close
    /// to the upright that it does not (`k′ = cos(θ₀/2)` below about 1e-11, θ₀ within
    /// about 1e-9° of 180°, or a very long run) is outside. An off-manifold start has no
    /// exact solution.
    fn reference_domain(&self, t_end: f64) -> driftlab_core::ReferenceDomain {
        use driftlab_core::ReferenceDomain;
        if self.p.phi0 != 0.0 || self.p.phidot0 != 0.0 {
            return ReferenceDomain::Absent;
        }
        let accuracy = self.exact_accuracy(t_end);
        let limit = DOMAIN_ACCURACY * self.p.length;
        if accuracy.is_nan() || accuracy > limit {
            return ReferenceDomain::Outside(format!(
                "k′ = cos(θ₀/2) = {:.3e} (θ₀ = {}°), t_end = {t_end}: the elliptic-function solution is good to ε(4/k′·(1 + ωt_end/4K) + 4(K + ωt_end))ℓ = {accuracy:.2e} m, beyond {limit:.0e} m; release further from the upright or run a shorter interval, or compare by energy and residuals only",
                self.kc, self.p.theta0_deg
            ));
        }
        ReferenceDomain::Valid {
            accuracy,
            basis: format!(
                "Jacobi elliptic functions with k′ = {:.3e}, good to ε(4/k′·(1 + ωt_end/4K) + 4(K + ωt_end))ℓ = {accuracy:.2e} m",
                self.kc
            ),
        }
    }
}

impl ConstraintHessian for Pendulum {
    fn pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(2)
    }
    fn values(&self, _t: f64, _q: &[f64], lambda: &[f64], out: &mut [f64]) {
        circle::hessian(lambda, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SUNDIALS `cvPendulum_dns.c` gravity: with ℓ = 1 and a horizontal release at rest,
    /// the period is exactly 2 s (shared/datasets/README.md).
    const G_PERIOD_2: f64 = 13.750_371_636_040_745_654_980_191_559_621_114_395_801_712;

    #[test]
    fn period_is_exactly_two_seconds() -> Result<(), ParamError> {
        let p = Pendulum::new(
            PendulumParams {
                g: G_PERIOD_2,
                ..Default::default()
            },
            "pendulum",
        )?;
        assert!((p.period() - 2.0).abs() < 1e-14, "period {}", p.period());
        for k in 0..=50 {
            let e = p.exact(2.0 * k as f64).ok_or_else(|| ParamError::Invalid {
                kind: "problem",
                id: "x".into(),
                message: "no exact".into(),
            })?;
            let d = [
                (e.q[0] - 1.0).abs(),
                e.q[1].abs(),
                e.v[0].abs(),
                e.v[1].abs(),
            ];
            assert!(
                d.iter().all(|x| *x < 1e-12 * (1.0 + k as f64)),
                "t = {}: {:?}",
                2 * k,
                d
            );
        }
        // Half a period later the bob is at the other side, at rest.
        let e = p.exact(1.0).ok_or_else(|| ParamError::Invalid {
            kind: "problem",
            id: "x".into(),
            message: "no exact".into(),
        })?;
        assert!((e.q[0] + 1.0).abs() < 1e-13 && e.q[1].abs() < 1e-13 && e.v[0].abs() < 1e-12);
        Ok(())
    }

    #[test]
    fn bertolazzi_preset_starts_where_the_seed_says() -> Result<(), ParamError> {
        let p = Pendulum::new(PendulumParams::bertolazzi(), "bertolazzi-pendulum")?;
        let s = p.initial_state();
        let a = 20f64.to_radians();
        assert!((s.q[0] - 2.5 * a.sin()).abs() < 1e-15 && (s.q[1] - 2.5 * a.cos()).abs() < 1e-15);
        Ok(())
    }
}
