//! `quaternion-body`: a torque-free symmetric rigid body in **Euler parameters** — the
//! attitude as a unit quaternion p = (e₀, e₁, e₂, e₃) with the unit norm as one holonomic
//! row (seed 001 §3.12: the coordinate choice; beside the natural coordinates of
//! `spatial-double-pendulum` and `spatial-chain`).
//!
//! ```text
//! ω' = 2 G(p) ṗ,   G = [−e₁  e₀  e₃ −e₂; −e₂ −e₃  e₀  e₁; −e₃  e₂ −e₁  e₀]     (body ω)
//! Φ = pᵀp − 1,     Φ_p = 2pᵀ,     γ = −2 ṗᵀṗ
//! M(p) = 4 Eᵀ diag(J₀, J') E,   E = [pᵀ; G]  (orthogonal for |p| = 1)
//! f(p, ṗ) = −2 Gᵀ (ω' × J'ω') − 4 J₀ (ṗᵀṗ) p
//! ```
//!
//! `4GᵀJ'G p̈ = 2Gᵀ(n' − ω' × J'ω')` is Euler's equation `J'ω̇' + ω' × J'ω' = n'` written
//! for p (Nikravesh, Computer-Aided Analysis of Mechanical Systems, 1988, §6.3; `Ġṗ = 0`).
//! Its mass matrix is singular along p; the term `4J₀ppᵀ` (any J₀ > 0) makes it regular
//! without changing the motion: on `|p| = 1` the p-component of p̈ is fixed by the
//! constraint, `pᵀp̈ = −ṗᵀṗ`, and the force gets the matching `−4J₀(ṗᵀṗ)p`, so the exact
//! multiplier is λ = 0.
//!
//! Exact solution (J' = diag(A, A, C), p(0) = 1, ω'(0) = (w₁, 0, w₃)): the body rate
//! precesses, `ω' = (w₁ cos νt, w₁ sin νt, w₃)` with `ν = (C − A) w₃ / A`, and the
//! attitude is a rotation about the fixed angular momentum `L = (A w₁, 0, C w₃)` at
//! `|L|/A` composed with a body rotation about e₃ at −ν:
//! `p(t) = q(L̂, |L|t/A) ⊗ q(e₃, −νt)`, `ṗ = ½ Gᵀω'` (Goldstein, Classical Mechanics,
//! 3rd ed., §5.6). H = ½ ω'ᵀ J' ω' is conserved.

use crate::domain::{judge, part, EPS, SAFETY};
use crate::entry::{Problem, ProblemEntry};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{
    Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo, ReferenceDomain,
    SparsityPattern, State,
};
use serde::{Deserialize, Serialize};

/// Parameters of [`QuaternionBody`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QuaternionBodyParams {
    /// Transverse moment of inertia A = J₁ = J₂ [kg m²].
    pub a: f64,
    /// Axial moment of inertia C = J₃ [kg m²].
    pub c: f64,
    /// Initial transverse body rate w₁ (rad/s).
    pub w1: f64,
    /// Initial axial body rate w₃ (rad/s).
    pub w3: f64,
    /// J₀ of the regularizing term 4J₀ppᵀ (any value > 0; default A).
    pub j0: Option<f64>,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for QuaternionBodyParams {
    fn default() -> Self {
        Self {
            a: 1.0,
            c: 1.5,
            w1: 1.0,
            w3: 2.0,
            j0: None,
            t_end: 10.0,
        }
    }
}

impl QuaternionBodyParams {
    /// Check every parameter, naming problem `id` (this one's or a problem built on it,
    /// e.g. `natural-body`) in a refusal; the regularizing `J₀` on success.
    pub fn validate(&self, id: &str) -> Result<f64, ParamError> {
        bounded_positive(id, "a", self.a)?;
        bounded_positive(id, "c", self.c)?;
        bounded_positive(id, "t_end", self.t_end)?;
        let j0 = self.j0.unwrap_or(self.a);
        bounded_positive(id, "j0", j0)?;
        params::finite(id, "w1", self.w1)?;
        params::finite(id, "w3", self.w3)?;
        Ok(j0)
    }
}

/// The exact attitude quaternion and body angular velocity at `t` of the torque-free
/// symmetric body of `p` started at p = 1 (module doc; shared with `natural-body`).
pub fn precession(p: &QuaternionBodyParams, t: f64) -> ([f64; 4], [f64; 3]) {
    let nu = (p.c - p.a) * p.w3 / p.a;
    let l = [p.a * p.w1, 0.0, p.c * p.w3];
    let norm = (l[0] * l[0] + l[2] * l[2]).sqrt();
    let axis = if norm > 0.0 {
        [l[0] / norm, 0.0, l[2] / norm]
    } else {
        [0.0, 0.0, 1.0]
    };
    let q = qmul(
        rotation(axis, norm * t / p.a),
        rotation([0.0, 0.0, 1.0], -nu * t),
    );
    let (s, c) = (nu * t).sin_cos();
    (q, [p.w1 * c, p.w1 * s, p.w3])
}

/// The rotation matrix (body → space, row-major) of the unit quaternion `q`.
pub fn rotation_matrix(q: [f64; 4]) -> [[f64; 3]; 3] {
    let [e0, e1, e2, e3] = q;
    [
        [
            1.0 - 2.0 * (e2 * e2 + e3 * e3),
            2.0 * (e1 * e2 - e0 * e3),
            2.0 * (e1 * e3 + e0 * e2),
        ],
        [
            2.0 * (e1 * e2 + e0 * e3),
            1.0 - 2.0 * (e1 * e1 + e3 * e3),
            2.0 * (e2 * e3 - e0 * e1),
        ],
        [
            2.0 * (e1 * e3 - e0 * e2),
            2.0 * (e2 * e3 + e0 * e1),
            1.0 - 2.0 * (e1 * e1 + e2 * e2),
        ],
    ]
}

/// The body.
#[derive(Clone, Debug)]
pub struct QuaternionBody {
    p: QuaternionBodyParams,
    j0: f64,
}

const ID: &str = "quaternion-body";

/// `G(p)` (3 × 4, row-major).
pub fn g_matrix(p: &[f64]) -> [[f64; 4]; 3] {
    let (e0, e1, e2, e3) = (p[0], p[1], p[2], p[3]);
    [[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]]
}

/// Hamilton product `a ⊗ b`.
pub fn qmul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

/// The rotation by `angle` about the unit `axis`.
pub fn rotation(axis: [f64; 3], angle: f64) -> [f64; 4] {
    let (s, c) = (0.5 * angle).sin_cos();
    [c, s * axis[0], s * axis[1], s * axis[2]]
}

impl QuaternionBody {
    /// Build and validate.
    pub fn new(p: QuaternionBodyParams) -> Result<Self, ParamError> {
        let j0 = p.validate(ID)?;
        Ok(Self { p, j0 })
    }

    fn inertia(&self) -> [f64; 3] {
        [self.p.a, self.p.a, self.p.c]
    }

    /// Body angular velocity `ω' = 2Gṗ`.
    fn omega(&self, q: &[f64], v: &[f64]) -> [f64; 3] {
        let g = g_matrix(q);
        g.map(|row| 2.0 * (0..4).map(|k| row[k] * v[k]).sum::<f64>())
    }
}

/// Catalog entry `quaternion-body`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "torque-free symmetric rigid body in Euler parameters (unit quaternion, the norm as a holonomic row), exact precession",
        build: |t| Ok(Problem::Mechanical(Box::new(QuaternionBody::new(params::parse("problem", ID, t)?)?))),
        defaults: params::defaults::<QuaternionBodyParams>,
    }
}

impl MechanicalSystem for QuaternionBody {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!("Torque-free symmetric body in Euler parameters (A = {}, C = {}, ω'(0) = ({}, 0, {}))", p.a, p.c, p.w1, p.w3),
            equations: "M(p) p̈ = f − 2pλ,  M = 4Eᵀdiag(J₀, J')E,  E = [pᵀ; G],  f = −2Gᵀ(ω' × J'ω') − 4J₀(ṗᵀṗ)p,  ω' = 2Gṗ,  Φ = pᵀp − 1".into(),
            citation: "Nikravesh, Computer-Aided Analysis of Mechanical Systems, 1988, §6.3 (Euler parameters); Goldstein, Classical Mechanics, §5.6 (torque-free symmetric top); seed 001 §3.12".into(),
            tags: vec!["spatial".into(), "rigid-body".into(), "quaternion".into(), "conservative".into()],
            index: 3,
            t_end: p.t_end,
            reference: "exact: regular precession, p(t) = q(L̂, |L|t/A) ⊗ q(e₃, −νt); λ = 0".into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims { n: 4, m: 1 }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::new(
            4,
            4,
            (0..4).flat_map(|i| (0..=i).map(move |j| (i, j))).collect(),
        )
    }
    fn mass(&self, q: &[f64], out: &mut [f64]) {
        let g = g_matrix(q);
        let j = self.inertia();
        let mut k = 0;
        for r in 0..4 {
            for c in 0..=r {
                let body: f64 = (0..3).map(|i| j[i] * g[i][r] * g[i][c]).sum();
                out[k] = 4.0 * (self.j0 * q[r] * q[c] + body);
                k += 1;
            }
        }
    }
    fn forces(&self, _t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        let w = self.omega(q, v);
        let j = self.inertia();
        let jw = [j[0] * w[0], j[1] * w[1], j[2] * w[2]];
        let gyro = [
            w[1] * jw[2] - w[2] * jw[1],
            w[2] * jw[0] - w[0] * jw[2],
            w[0] * jw[1] - w[1] * jw[0],
        ];
        let g = g_matrix(q);
        let vv: f64 = v.iter().map(|x| x * x).sum();
        for (k, o) in out.iter_mut().enumerate() {
            let gt: f64 = (0..3).map(|i| g[i][k] * gyro[i]).sum();
            *o = -2.0 * gt - 4.0 * self.j0 * vv * q[k];
        }
    }
    fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        out[0] = q.iter().map(|x| x * x).sum::<f64>() - 1.0;
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        SparsityPattern::new(1, 4, (0..4).map(|c| (0, c)).collect())
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        for (o, x) in out.iter_mut().zip(q) {
            *o = 2.0 * x;
        }
    }
    fn curvature(&self, _t: f64, _q: &[f64], v: &[f64], out: &mut [f64]) {
        out[0] = -2.0 * v.iter().map(|x| x * x).sum::<f64>();
    }
    fn attitude(&self) -> Option<&dyn driftlab_core::Attitude> {
        Some(self)
    }
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let w = self.omega(q, v);
        let j = self.inertia();
        Some(0.5 * (0..3).map(|i| j[i] * w[i] * w[i]).sum::<f64>())
    }
    fn initial_state(&self) -> State {
        let e = self
            .exact(0.0)
            .map_or_else(|| (vec![1.0, 0.0, 0.0, 0.0], vec![0.0; 4]), |e| (e.q, e.v));
        State::mechanical(0.0, e.0, e.1, 1)
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        let (q, w) = precession(&self.p, t);
        let g = g_matrix(&q);
        let v = (0..4)
            .map(|k| 0.5 * (0..3).map(|i| g[i][k] * w[i]).sum::<f64>())
            .collect();
        Some(ExactSolution {
            q: q.to_vec(),
            v,
            lambda: vec![0.0],
        })
    }
    /// The precession in f64: two rotations by the rounded angles `|L|t/A` and `νt` and
    /// one Hamilton product, so p is good to `8ε(4 + φ)` with the phase
    /// `φ = (|L|/A + |ν|) t_end` (argument rounding, plus a handful of roundings in the
    /// products, safety 8), `ṗ = ½Gᵀω'` to the same factor of `|ω'|`, and λ = 0 exactly.
    /// Outside when the phase carries no digits: `8ε(4 + φ)` above 1e-4 of p's scale ½ (a
    /// unit quaternion has a component ≥ ½) or of ṗ's `|ω'|/4`, i.e. `φ ≳ 1.4e10` rad.
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        let (phi, rate) = precession_phase(&self.p, t_end);
        let growth = SAFETY * EPS * (4.0 + phi);
        judge(
            &format!(
                "regular precession with phase (|L|/A + |ν|)·t_end = {phi:.4e}: 8ε(4 + φ) on p, 8ε(4 + φ)|ω'| on ṗ, λ = 0 (safety 8)"
            ),
            &[
                part("q", growth, 0.5),
                part("v", growth * rate, 0.25 * rate),
            ],
            "shorten t_end or lower the body rates w1, w3",
        )
    }
}

/// The phase `(|L|/A + |ν|) t_end` of [`precession`] and the body rate `|ω'|`.
pub(crate) fn precession_phase(p: &QuaternionBodyParams, t_end: f64) -> (f64, f64) {
    let nu = (p.c - p.a) * p.w3 / p.a;
    let l = (p.a * p.w1).hypot(p.c * p.w3);
    ((l / p.a + nu.abs()) * t_end, p.w1.hypot(p.w3))
}

impl driftlab_core::Attitude for QuaternionBody {
    fn principal_inertia(&self) -> [f64; 3] {
        let j = self.inertia();
        [j[0], j[1], j[2]]
    }
    /// Torque-free.
    fn body_torque(&self, _t: f64, _p: &[f64], _w: &[f64; 3]) -> [f64; 3] {
        [0.0; 3]
    }
}
