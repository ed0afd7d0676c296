//! `rolling-disk`: the vertical rolling disk on a plane (seed 001 §3.8.1 "滚动约束：轮子的无
//! 滑动条件"; Bloch, Nonholonomic Mechanics and Control, 2003, §1.4; Neimark & Fufaev
//! 1972): a disk of radius R kept upright rolls without slipping — two nonholonomic rows.
//!
//! ```text
//! q = (x, y, θ, ψ)  (contact point, heading, rolling angle),  M = diag(m, m, I, J)
//! ẋ − R cos θ ψ̇ = 0,   ẏ − R sin θ ψ̇ = 0            (A(q) q̇ = 0, not integrable)
//! γ = (−R sin θ θ̇ ψ̇,  R cos θ θ̇ ψ̇)
//! ```
//!
//! The equations with multipliers, `m ẍ = −λ₁`, `m ÿ = −λ₂`, `I θ̈ = 0`,
//! `J ψ̈ = R cos θ λ₁ + R sin θ λ₂`, reduce to `θ̈ = 0` and `(J + mR²) ψ̈ = 0`: the disk
//! turns at a constant rate Ω and rolls at a constant rate ω, its contact point running
//! round a circle of radius Rω/Ω. First integrals: the energy
//! `H = ½m(ẋ² + ẏ²) + ½Iθ̇² + ½Jψ̇²`, `I θ̇` and `(J + mR²) ψ̇` (the `momentum()` values).
//! Exact: `θ = Ωt`, `ψ = ωt`, `x = (Rω/Ω) sin Ωt`, `y = (Rω/Ω)(1 − cos Ωt)`,
//! `λ = mRωΩ (sin θ, −cos θ)`. The tilting (falling) disk, whose integrals are
//! hypergeometric, is not this problem.

use crate::domain::{judge, part, EPS, SAFETY};
use crate::entry::{Problem, ProblemEntry};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{
    Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo, ReferenceDomain,
    SparsityPattern, State,
};
use serde::{Deserialize, Serialize};

/// Parameters of [`RollingDisk`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RollingDiskParams {
    /// Mass (kg).
    pub m: f64,
    /// Radius R (m).
    pub radius: f64,
    /// Heading rate Ω (rad/s), ≠ 0.
    pub turn_rate: f64,
    /// Rolling rate ω (rad/s).
    pub roll_rate: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for RollingDiskParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            radius: 0.5,
            turn_rate: 1.0,
            roll_rate: 4.0,
            t_end: 10.0,
        }
    }
}

/// The vertical rolling disk.
#[derive(Clone, Debug)]
pub struct RollingDisk {
    p: RollingDiskParams,
}

const ID: &str = "rolling-disk";

impl RollingDisk {
    /// Build and validate.
    pub fn new(p: RollingDiskParams) -> Result<Self, ParamError> {
        bounded_positive(ID, "m", p.m)?;
        bounded_positive(ID, "radius", p.radius)?;
        bounded_positive(ID, "t_end", p.t_end)?;
        params::nonzero(ID, "turn_rate", p.turn_rate)?;
        params::finite(ID, "roll_rate", p.roll_rate)?;
        Ok(Self { p })
    }

    /// Diametral and axial moments of inertia of a thin uniform disk: `I = mR²/4`,
    /// `J = mR²/2`.
    fn inertia(&self) -> (f64, f64) {
        let mr2 = self.p.m * self.p.radius * self.p.radius;
        (0.25 * mr2, 0.5 * mr2)
    }
}

/// Catalog entry `rolling-disk`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "vertical disk rolling without slipping on a plane: two nonholonomic rows, first integrals (energy, Iθ̇, (J + mR²)ψ̇), exact circle",
        build: |t| Ok(Problem::Mechanical(Box::new(RollingDisk::new(params::parse("problem", ID, t)?)?))),
        defaults: params::defaults::<RollingDiskParams>,
    }
}

impl MechanicalSystem for RollingDisk {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!("Vertical rolling disk (m = {}, R = {}, Ω = {}, ω = {})", p.m, p.radius, p.turn_rate, p.roll_rate),
            equations: "M = diag(m, m, mR²/4, mR²/2),  ẋ − R cos θ ψ̇ = 0,  ẏ − R sin θ ψ̇ = 0;  θ̈ = 0, (J + mR²)ψ̈ = 0".into(),
            citation: "Bloch, Nonholonomic Mechanics and Control, 2003, §1.4 (the vertical rolling disk); seed 001 §3.8.1".into(),
            tags: vec!["nonholonomic".into(), "conservative".into(), "first-integrals".into()],
            index: 2,
            t_end: p.t_end,
            reference: "exact (uniform turning and rolling; the contact point on a circle of radius Rω/Ω)".into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims { n: 4, m: 2 }
    }
    fn nonholonomic_rows(&self) -> usize {
        2
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(4)
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        let (i, j) = self.inertia();
        out.copy_from_slice(&[self.p.m, self.p.m, i, j]);
    }
    fn forces(&self, _t: f64, _q: &[f64], _v: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = 0.0);
    }
    fn constraints(&self, _t: f64, _q: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = 0.0);
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        SparsityPattern::new(2, 4, vec![(0, 0), (0, 3), (1, 1), (1, 3)])
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let (s, c) = q[2].sin_cos();
        let r = self.p.radius;
        out.copy_from_slice(&[1.0, -r * c, 1.0, -r * s]);
    }
    fn curvature(&self, _t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        let (s, c) = q[2].sin_cos();
        let w = self.p.radius * v[2] * v[3];
        out[0] = -s * w;
        out[1] = c * w;
    }
    fn energy(&self, _t: f64, _q: &[f64], v: &[f64]) -> Option<f64> {
        let (i, j) = self.inertia();
        Some(0.5 * (self.p.m * (v[0] * v[0] + v[1] * v[1]) + i * v[2] * v[2] + j * v[3] * v[3]))
    }
    /// The two first integrals besides the energy: `I θ̇` and `(J + mR²) ψ̇`.
    fn momentum(&self, _t: f64, _q: &[f64], v: &[f64]) -> Option<Vec<f64>> {
        let (i, j) = self.inertia();
        let mr2 = self.p.m * self.p.radius * self.p.radius;
        Some(vec![i * v[2], (j + mr2) * v[3]])
    }
    fn initial_state(&self) -> State {
        let e = self.exact_at(0.0);
        State::mechanical(0.0, e.q, e.v, 2)
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        Some(self.exact_at(t))
    }
    /// The closed form in f64, with `ρ = Rω/Ω`, the phases `φ = |Ω| t_end` and
    /// `|ω| t_end`: the rounded arguments put ≈ ε φ into the trigonometric values, and
    /// `y = ρ(1 − cos Ωt)` cancels, so q is good to `8ε(|ρ|(3 + 2φ) + φ + |ω|t_end)`
    /// (absolute: x, y; θ, ψ good to ε times their phase) and v, λ to `8ε(2 + φ)` of their
    /// scales `max(|Rω|, |Ω|, |ω|)` and `m|RωΩ|` (safety 8). The q scale is the motion's
    /// own over `[0, t_end]`: `max(φ, |ω|t_end, |ρ| sin min(φ, π/2), 2|ρ| sin² (min(φ, π)/2))`.
    /// Outside when a bound exceeds 1e-4 of its scale: a heading rate so slow that the
    /// circle's radius ρ dwarfs the arc travelled (`|Ω| t_end ≲ 5e-11`), or a lost phase
    /// (`|Ω| t_end` or `|ω| t_end ≳ 5e10`).
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        let p = &self.p;
        let (om, w, r) = (p.turn_rate.abs(), p.roll_rate.abs(), p.radius);
        let (phi, psi) = (om * t_end, w * t_end);
        let rho = r * w / om;
        let scale_q = phi
            .max(psi)
            .max(rho * phi.min(std::f64::consts::FRAC_PI_2).sin())
            .max(2.0 * rho * (0.5 * phi.min(std::f64::consts::PI)).sin().powi(2));
        let scale_v = (r * w).max(om).max(w);
        let scale_l = p.m * r * w * om;
        let growth = SAFETY * EPS * (2.0 + phi);
        judge(
            &format!(
                "uniform turning and rolling with Ω·t_end = {phi:.4e}, ρ = Rω/Ω = {rho:.3e}: q 8ε(|ρ|(3 + 2|Ω|t_end) + |Ω|t_end + |ω|t_end) (y = ρ(1 − cos Ωt) cancels), v and λ 8ε(2 + |Ω|t_end) of their scales (safety 8)"
            ),
            &[
                part("q", SAFETY * EPS * (rho * (3.0 + 2.0 * phi) + phi + psi), scale_q),
                part("v", growth * scale_v, scale_v),
                part("λ", growth * scale_l, scale_l),
            ],
            "raise turn_rate or t_end (the circle's radius Rω/Ω must not dwarf the arc travelled), or shorten t_end for a lost phase",
        )
    }
}

impl RollingDisk {
    fn exact_at(&self, t: f64) -> ExactSolution {
        let p = &self.p;
        let (om, w, r) = (p.turn_rate, p.roll_rate, p.radius);
        let th = om * t;
        let (s, c) = th.sin_cos();
        let rho = r * w / om;
        ExactSolution {
            q: vec![rho * s, rho * (1.0 - c), th, w * t],
            v: vec![r * w * c, r * w * s, om, w],
            lambda: vec![p.m * r * w * om * s, -p.m * r * w * om * c],
        }
    }
}
