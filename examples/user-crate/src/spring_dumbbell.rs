//! `spring-dumbbell`: two point masses m on a massless rigid rod of length L, each tied to
//! the origin by a zero-length spring of stiffness k, under gravity g, in natural
//! coordinates `q = (x₁, y₁, x₂, y₂)`, `d = p₂ − p₁`:
//!
//! ```text
//! m p₁'' = −k p₁ − m g e_y + d λ,   m p₂'' = −k p₂ − m g e_y − d λ
//! Φ = ½(|d|² − L²),   Φ_q = [−dᵀ, dᵀ],   γ = −|v₂ − v₁|²
//! ```
//!
//! The center c = (p₁ + p₂)/2 obeys m c'' = −k c − m g e_y (isotropic oscillator, ω² = k/m,
//! about c_eq = (0, −mg/k)); the rod obeys m d'' = −k d − 2λd, so with |d| = L it turns at
//! a constant rate Ω and λ = (mΩ² − k)/2. Exact solution from c₀ = (½, 0), c'₀ = (0, 1):
//! `c(t) = c_eq + (c₀ − c_eq) cos ωt + (c'₀/ω) sin ωt`, `d(t) = L(cos Ωt, sin Ωt)`.

use driftlab_core::params::{self, positive};
use driftlab_core::{
    Dims, ExactSolution, MechanicalSystem, ProblemInfo, ReferenceDomain, SparsityPattern, State,
};
use driftlab_problems::{Problem, ProblemEntry};
use serde::{Deserialize, Serialize};

/// Parameters of [`SpringDumbbell`] (SI units).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SpringDumbbellParams {
    /// Mass of each end m (kg).
    pub m: f64,
    /// Spring stiffness k (N/m).
    pub k: f64,
    /// Rod length L (m).
    pub length: f64,
    /// Rod spin rate Ω (rad/s).
    pub spin: f64,
    /// Gravity g (m/s²).
    pub g: f64,
}

impl Default for SpringDumbbellParams {
    fn default() -> Self {
        Self { m: 1.0, k: 4.0, length: 1.0, spin: 3.0, g: 9.81 }
    }
}

/// The spring-tethered dumbbell.
pub struct SpringDumbbell(SpringDumbbellParams);

/// Catalog line of `spring-dumbbell`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: "spring-dumbbell",
        summary: "user example: rigid dumbbell on two springs, natural coordinates, exact",
        build: |t| {
            let p: SpringDumbbellParams = params::parse("problem", "spring-dumbbell", t)?;
            for (name, x) in [("m", p.m), ("k", p.k), ("length", p.length)] {
                positive("spring-dumbbell", name, x)?;
            }
            Ok(Problem::Mechanical(Box::new(SpringDumbbell(p))))
        },
        defaults: params::defaults::<SpringDumbbellParams>,
    }
}

impl MechanicalSystem for SpringDumbbell {
    fn info(&self) -> ProblemInfo {
        ProblemInfo {
            id: "spring-dumbbell".into(),
            title: format!(
                "Rigid dumbbell (L = {} m) on two springs (k = {} N/m)",
                self.0.length, self.0.k
            ),
            equations:
                "m p₁'' = −k p₁ − mg e_y + dλ, m p₂'' = −k p₂ − mg e_y − dλ, Φ = ½(|p₂ − p₁|² − L²)"
                    .into(),
            citation: "examples/user-crate: closed form by separating center and rod direction"
                .into(),
            tags: vec!["planar".into(), "conservative".into(), "exact-solution".into()],
            index: 3,
            t_end: 2.0,
            reference: "exact: isotropic oscillator × uniform rotation".into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims { n: 4, m: 1 }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(4)
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        out.fill(self.0.m);
    }
    fn forces(&self, _t: f64, q: &[f64], _v: &[f64], out: &mut [f64]) {
        for i in 0..4 {
            out[i] = -self.0.k * q[i] - (i % 2) as f64 * self.0.m * self.0.g;
        }
    }
    fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let (dx, dy) = (q[2] - q[0], q[3] - q[1]);
        out[0] = 0.5 * (dx * dx + dy * dy - self.0.length * self.0.length);
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        SparsityPattern::new(1, 4, (0..4).map(|j| (0, j)).collect())
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let (dx, dy) = (q[2] - q[0], q[3] - q[1]);
        out.copy_from_slice(&[-dx, -dy, dx, dy]);
    }
    fn curvature(&self, _t: f64, _q: &[f64], v: &[f64], out: &mut [f64]) {
        out[0] = -((v[2] - v[0]).powi(2) + (v[3] - v[1]).powi(2));
    }
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let (p, sq) = (&self.0, |x: &[f64]| x.iter().map(|x| x * x).sum::<f64>());
        Some(0.5 * p.m * sq(v) + 0.5 * p.k * sq(q) + p.m * p.g * (q[1] + q[3]))
    }
    fn initial_state(&self) -> State {
        let ExactSolution { q, v, .. } = self.solution(0.0);
        State::mechanical(0.0, q, v, 1)
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        Some(self.solution(t))
    }
    /// Where the closed form holds, as every problem with an exact solution declares it
    /// (outside, the runner leaves the error columns null with the reason; inside, the
    /// order fit ignores errors below ten times `accuracy`). In f64, `cos ωt` and
    /// `sin Ωt` carry the rounding of their arguments, `ε ωt`, so with the centre's
    /// amplitude `C = |c₀ − c_eq| + |c'₀|/ω`: q is good to
    /// `8ε((C + |c_eq|)(1 + ωt_end) + L(1 + |Ω|t_end))`, v to
    /// `8ε(Cω(1 + ωt_end) + L|Ω|(1 + |Ω|t_end))` and λ = (mΩ² − k)/2 to `8ε(mΩ² + k)/2`
    /// (first order in ε, safety factor 8). Outside when these are not finite numbers
    /// (k/m under- or overflows, a NaN spin or g) or the phase keeps fewer than four
    /// digits (`8ε(1 + max(ω, |Ω|) t_end) > 1e-4`).
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        let p = &self.0;
        let w = (p.k / p.m).sqrt();
        let ceq = p.m * p.g / p.k;
        let amp = (0.25 + ceq * ceq).sqrt() + 1.0 / w;
        let (pw, ps) = (1.0 + w * t_end, 1.0 + p.spin.abs() * t_end);
        let eps = 8.0 * f64::EPSILON;
        let err_q = eps * ((amp + ceq.abs()) * pw + p.length * ps);
        let err_v = eps * (amp * w * pw + p.length * p.spin.abs() * ps);
        let err_l = eps * 0.5 * (p.m * p.spin * p.spin + p.k);
        if !(w > 0.0 && [err_q, err_v, err_l].iter().all(|x| x.is_finite())) {
            return ReferenceDomain::Outside(format!(
                "ω = √(k/m) = {w:e}, c_eq = {ceq:e}, spin = {}: the closed form leaves f64's range; give k/m, mg/k and mΩ² between 1e-300 and 1e300",
                p.spin
            ));
        }
        if eps * pw.max(ps) > 1e-4 {
            return ReferenceDomain::Outside(format!(
                "phases ω·t_end = {:e}, |Ω|·t_end = {:e}: cos ωt and sin Ωt keep fewer than four digits; shorten t_end",
                w * t_end,
                p.spin.abs() * t_end
            ));
        }
        ReferenceDomain::Valid {
            accuracy: err_q.max(err_v).max(err_l),
            basis: format!(
                "closed form in f64 (8ε times amplitude × (1 + phase), safety 8): q ±{err_q:.1e}, v ±{err_v:.1e}, λ ±{err_l:.1e}"
            ),
        }
    }
}

impl SpringDumbbell {
    /// The closed-form state at `t` (module doc).
    fn solution(&self, t: f64) -> ExactSolution {
        let p = &self.0;
        let w = (p.k / p.m).sqrt();
        let (c0, cdot0, ceq) = ([0.5, 0.0], [0.0, 1.0], [0.0, -p.m * p.g / p.k]);
        let ((s, c), (rs, rc)) = ((w * t).sin_cos(), (p.spin * t).sin_cos());
        let d = [p.length * rc, p.length * rs];
        let dd = [-p.length * p.spin * rs, p.length * p.spin * rc];
        let (mut q, mut v) = (vec![0.0; 4], vec![0.0; 4]);
        for i in 0..2 {
            let ci = ceq[i] + (c0[i] - ceq[i]) * c + cdot0[i] / w * s;
            let vi = -(c0[i] - ceq[i]) * w * s + cdot0[i] * c;
            (q[i], q[2 + i], v[i], v[2 + i]) =
                (ci - d[i] / 2.0, ci + d[i] / 2.0, vi - dd[i] / 2.0, vi + dd[i] / 2.0);
        }
        ExactSolution { q, v, lambda: vec![0.5 * (p.m * p.spin * p.spin - p.k)] }
    }
}
