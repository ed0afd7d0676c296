//! `natural-body`: the torque-free symmetric body of `quaternion-body` in **natural
//! coordinates** — its three body axes as unit vectors in space, q = (u, v, w) ∈ ℝ⁹, with
//! six rows keeping them orthonormal (García de Jalón & Bayo, Kinematic and Dynamic
//! Simulation of Multibody Systems, 1994, ch. 3; seed 001 §3.12, beside Euler parameters).
//!
//! ```text
//! Φ = (u·u − 1, v·v − 1, w·w − 1, u·v, v·w, w·u),   γ = (−2|u̇|², −2|v̇|², −2|ẇ|², −2u̇·v̇, −2v̇·ẇ, −2ẇ·u̇)
//! M = diag(J̄₁ I₃, J̄₂ I₃, J̄₃ I₃),  J̄_k = ½ tr J − J_k   (the body's second moments)
//! H = ½ Σ J̄_k |ṙ_k|²,   L = Σ J̄_k r_k × ṙ_k   (conserved: `momentum()`)
//! ```
//!
//! `T = ½ tr(Ṙ J̄ Ṙᵀ)` with `R = [u v w]` is the kinetic energy of the mass distribution
//! about its centre, so M is constant and diagonal — the price is six constraint rows for
//! three degrees of freedom, against one row and a configuration-dependent M(p) in Euler
//! parameters. With J = diag(A, A, C): J̄₁ = J̄₂ = C/2, J̄₃ = A − C/2 (> 0 unless the body
//! is flat, C = 2A, whose normal direction carries no mass). Exact: the columns of the
//! rotation matrix of the quaternion precession, ṙ_k = ω × r_k, λ from the KKT system.

use crate::consistency::accelerations;
use crate::domain::{self, judge, part, EPS, SAFETY};
use crate::entry::{Problem, ProblemEntry};
use crate::spatial::quaternion_body::{precession, rotation_matrix, QuaternionBodyParams};
use driftlab_core::params;
use driftlab_core::{
    Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo, SparsityPattern, State,
};

/// The body in natural coordinates.
pub struct NaturalBody {
    p: QuaternionBodyParams,
    /// J̄₁, J̄₂, J̄₃.
    second: [f64; 3],
}

const ID: &str = "natural-body";
/// The rows as pairs of axes.
const PAIRS: [(usize, usize); 6] = [(0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (2, 0)];

impl NaturalBody {
    /// Build and validate (the checks of `quaternion-body`, and a body that is not flat).
    pub fn new(p: QuaternionBodyParams) -> Result<Self, ParamError> {
        p.validate(ID)?;
        let half = 0.5 * (2.0 * p.a + p.c);
        let second = [half - p.a, half - p.a, half - p.c];
        if second[2] <= 0.0 {
            return Err(params::inconsistent(
                ID,
                &[("c", p.c), ("a", p.a)],
                "give c < 2a (a flat body has no mass along its normal: M would be singular)",
            ));
        }
        Ok(Self { p, second })
    }

    /// The exact axes and their velocities at `t`.
    fn exact_qv(&self, t: f64) -> (Vec<f64>, Vec<f64>) {
        let (quat, w_body) = precession(&self.p, t);
        let r = rotation_matrix(quat);
        let w: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|j| r[i][j] * w_body[j]).sum())
            .collect();
        let mut q = Vec::with_capacity(9);
        let mut v = Vec::with_capacity(9);
        for k in 0..3 {
            let a = [r[0][k], r[1][k], r[2][k]];
            q.extend(a);
            v.extend([
                w[1] * a[2] - w[2] * a[1],
                w[2] * a[0] - w[0] * a[2],
                w[0] * a[1] - w[1] * a[0],
            ]);
        }
        (q, v)
    }
}

/// Catalog entry `natural-body`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "the torque-free symmetric body of quaternion-body in natural coordinates (three unit axes, six rows, constant diagonal M), exact precession",
        build: |t| Ok(Problem::Mechanical(Box::new(NaturalBody::new(params::parse("problem", ID, t)?)?))),
        defaults: params::defaults::<QuaternionBodyParams>,
    }
}

fn dot3(q: &[f64], a: usize, b: usize) -> f64 {
    (0..3).map(|c| q[3 * a + c] * q[3 * b + c]).sum()
}

impl MechanicalSystem for NaturalBody {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!("Torque-free symmetric body in natural coordinates (A = {}, C = {}, ω'(0) = ({}, 0, {}))", p.a, p.c, p.w1, p.w3),
            equations: "M = diag(J̄₁I, J̄₂I, J̄₃I), J̄_k = ½trJ − J_k;  Φ = (u·u − 1, v·v − 1, w·w − 1, u·v, v·w, w·u);  no applied forces".into(),
            citation: "García de Jalón & Bayo 1994, ch. 3 (natural coordinates); seed 001 §3.12; the exact motion of quaternion-body".into(),
            tags: vec!["spatial".into(), "rigid-body".into(), "natural-coordinates".into(), "conservative".into()],
            index: 3,
            t_end: p.t_end,
            reference: "exact regular precession (that of quaternion-body)".into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims { n: 9, m: 6 }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(9)
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.second[k / 3];
        }
    }
    fn forces(&self, _t: f64, _q: &[f64], _v: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = 0.0);
    }
    fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        for (r, &(a, b)) in PAIRS.iter().enumerate() {
            out[r] = dot3(q, a, b) - if a == b { 1.0 } else { 0.0 };
        }
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        let mut e = Vec::new();
        for (r, &(a, b)) in PAIRS.iter().enumerate() {
            e.extend((0..3).map(|c| (r, 3 * a + c)));
            if a != b {
                e.extend((0..3).map(|c| (r, 3 * b + c)));
            }
        }
        SparsityPattern::new(6, 9, e)
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let mut k = 0;
        for &(a, b) in &PAIRS {
            if a == b {
                for c in 0..3 {
                    out[k] = 2.0 * q[3 * a + c];
                    k += 1;
                }
            } else {
                for c in 0..3 {
                    out[k] = q[3 * b + c];
                    k += 1;
                }
                for c in 0..3 {
                    out[k] = q[3 * a + c];
                    k += 1;
                }
            }
        }
    }
    fn curvature(&self, _t: f64, _q: &[f64], v: &[f64], out: &mut [f64]) {
        for (r, &(a, b)) in PAIRS.iter().enumerate() {
            out[r] = -2.0 * dot3(v, a, b);
        }
    }
    fn energy(&self, _t: f64, _q: &[f64], v: &[f64]) -> Option<f64> {
        Some(0.5 * (0..3).map(|k| self.second[k] * dot3(v, k, k)).sum::<f64>())
    }
    fn momentum(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<Vec<f64>> {
        let mut l = vec![0.0; 3];
        for k in 0..3 {
            let (r, d) = (&q[3 * k..3 * k + 3], &v[3 * k..3 * k + 3]);
            let j = self.second[k];
            l[0] += j * (r[1] * d[2] - r[2] * d[1]);
            l[1] += j * (r[2] * d[0] - r[0] * d[2]);
            l[2] += j * (r[0] * d[1] - r[1] * d[0]);
        }
        Some(l)
    }
    fn initial_state(&self) -> State {
        let (q, v) = self.exact_qv(0.0);
        State::mechanical(0.0, q, v, 6)
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        let (q, v) = self.exact_qv(t);
        let (_, lambda) = accelerations(self, t, &q, &v).ok()?;
        Some(ExactSolution { q, v, lambda })
    }
    /// The axes are the columns of the rotation matrix of `quaternion-body`'s precession
    /// (quadratic in p), so they are good to `8ε(4 + φ)` with its phase
    /// `φ = (|L|/A + |ν|) t_end` (argument rounding plus a handful of roundings, safety
    /// 8), their velocities `ω × r_k` to that factor of `2|ω|`, and λ, from the KKT
    /// solve `M a + Φ_qᵀλ = 0` at a state that is consistent up to rounding but off in
    /// phase, to `8ε(4 s + φ|λ|)` with the balance's sensitivity
    /// `s = (‖M‖|a| + ‖Φ_q‖|λ|)/σ_min(Φ_q)` (evaluated at t = 0: a regular precession keeps
    /// its magnitudes). Outside when a bound exceeds 1e-4 of its scale (`1/√3` — a unit
    /// axis has a component that large —, `|v|∞`, `|λ|∞`): a lost phase.
    fn reference_domain(&self, t_end: f64) -> driftlab_core::ReferenceDomain {
        let (phi, rate) = crate::spatial::quaternion_body::precession_phase(&self.p, t_end);
        let growth = SAFETY * EPS * (4.0 + phi);
        let (q, v) = self.exact_qv(0.0);
        let (a, lambda) = match accelerations(self, 0.0, &q, &v) {
            Ok(x) => x,
            Err(e) => {
                return driftlab_core::ReferenceDomain::Outside(format!(
                    "the multipliers' KKT solve fails at the start: {e}"
                ))
            }
        };
        let sens = domain::multiplier_sensitivity(self, 0.0, &q, &v, &a, &lambda);
        let inf = |x: &[f64]| x.iter().fold(0.0_f64, |m, y| m.max(y.abs()));
        judge(
            &format!(
                "regular precession in natural coordinates with phase (|L|/A + |ν|)·t_end = {phi:.4e}: 8ε(4 + φ) on the axes, ×2|ω| on their velocities, 8ε(4s + φ|λ|) on λ with the balance's sensitivity s = {sens:.3e} (safety 8)"
            ),
            &[
                part("q", growth, 1.0 / 3f64.sqrt()),
                part("v", growth * 2.0 * rate, inf(&v)),
                part(
                    "λ",
                    SAFETY * EPS * (4.0 * sens + phi * inf(&lambda)),
                    inf(&lambda),
                ),
            ],
            "shorten t_end or lower the body rates w1, w3",
        )
    }
}
