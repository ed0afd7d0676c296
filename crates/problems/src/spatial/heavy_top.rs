//! `heavy-top`: the heavy symmetric (Lagrange) top in **body coordinates** — the centre
//! of mass r and the Euler parameters p of one rigid body, held at a fixed point by a
//! spherical joint written as seed 001 §3.6.1 writes it, `r + R(p)s = 0` (beside the
//! natural-coordinate joints of `spatial-double-pendulum` and the free body of
//! `quaternion-body`):
//!
//! ```text
//! q = (r, p) ∈ ℝ⁷,   M = diag(m I₃, 4Eᵀdiag(J₀, J')E),   f = (0, 0, −mg, f_p(p, ṗ))   (f_p: quaternion-body)
//! Φ₀ = pᵀp − 1,   Φ₁..₃ = r + R(p) s,   s = (0, 0, −ℓ)    (pivot ℓ below the CoM on the axis)
//! R(p)s = (e₀² − eᵀe) s + 2e(eᵀs) + 2e₀ (e × s)      (homogeneous quadratic: exact derivatives off |p| = 1)
//! γ = (−2ṗᵀṗ, −2R(ṗ)s)
//! ```
//!
//! Exact solution: steady precession (Goldstein, Classical Mechanics, 3rd ed., §5.7). With
//! Euler angles z-x-z (precession ψ, nutation θ, spin φ) and A = A_cm + mℓ² the
//! transverse inertia about the pivot, θ stays at θ₀ and ψ̇ = Ω when the axial rate is
//! `ω₃ = (mgℓ + AΩ² cos θ₀)/(CΩ)`; then `p(t) = q(ẑ, Ωt) ⊗ q(x̂, θ₀) ⊗ q(ẑ, φ̇t)`,
//! `φ̇ = ω₃ − Ω cos θ₀`, `r = R(p)(0, 0, ℓ)`. The multipliers follow from the exact
//! acceleration (least squares on `Φ_qᵀλ = f − M q̈`, which the conformance suite then
//! checks to vanish). Conserved: H, the vertical angular momentum about the pivot L_z and
//! the axial spin Cω₃ (`momentum()` = (L_z, Cω₃)).

use crate::domain::{self, judge, part, EPS, SAFETY};
use crate::entry::{Problem, ProblemEntry};
use crate::spatial::quaternion_body::{
    g_matrix, qmul, rotation, QuaternionBody, QuaternionBodyParams,
};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{
    Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo, ReferenceDomain,
    SparsityPattern, State,
};
use serde::{Deserialize, Serialize};

/// Parameters of [`HeavyTop`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HeavyTopParams {
    /// Mass (kg).
    pub m: f64,
    /// Transverse moment of inertia about the centre of mass A_cm (kg m²).
    pub a: f64,
    /// Axial moment of inertia C (kg m²).
    pub c: f64,
    /// Distance ℓ from the pivot to the centre of mass (m).
    pub length: f64,
    /// Gravity (m/s²).
    pub g: f64,
    /// Nutation angle θ₀ of the steady precession (degrees from the vertical).
    pub theta0_deg: f64,
    /// Precession rate Ω (rad/s).
    pub precession: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for HeavyTopParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            a: 0.05,
            c: 0.1,
            length: 0.5,
            g: 9.81,
            theta0_deg: 30.0,
            precession: 2.0,
            t_end: 10.0,
        }
    }
}

const ID: &str = "heavy-top";

/// The heavy top.
pub struct HeavyTop {
    p: HeavyTopParams,
    rotor: QuaternionBody,
    /// Axial body rate ω₃ and spin rate φ̇ of the steady precession.
    rates: (f64, f64),
}

/// `R(p)s` as the homogeneous quadratic of the module doc (a rotation for |p| = 1).
fn rotate(p: &[f64], s: [f64; 3]) -> [f64; 3] {
    let (e0, e) = (p[0], [p[1], p[2], p[3]]);
    let ee = e[0] * e[0] + e[1] * e[1] + e[2] * e[2];
    let es = e[0] * s[0] + e[1] * s[1] + e[2] * s[2];
    let cross = [
        e[1] * s[2] - e[2] * s[1],
        e[2] * s[0] - e[0] * s[2],
        e[0] * s[1] - e[1] * s[0],
    ];
    std::array::from_fn(|i| (e0 * e0 - ee) * s[i] + 2.0 * e[i] * es + 2.0 * e0 * cross[i])
}

/// `∂(R(p)s)/∂p` (3 × 4, row-major by rows i, columns e₀, e₁, e₂, e₃).
fn rotate_jacobian(p: &[f64], s: [f64; 3]) -> [[f64; 4]; 3] {
    let (e0, e) = (p[0], [p[1], p[2], p[3]]);
    let es = e[0] * s[0] + e[1] * s[1] + e[2] * s[2];
    let cross = [
        e[1] * s[2] - e[2] * s[1],
        e[2] * s[0] - e[0] * s[2],
        e[0] * s[1] - e[1] * s[0],
    ];
    let mut out = [[0.0; 4]; 3];
    for i in 0..3 {
        out[i][0] = 2.0 * e0 * s[i] + 2.0 * cross[i];
        for j in 0..3 {
            let delta = f64::from(u8::from(i == j));
            // δ_j × s, component i.
            let dj_cross_s = match (j, i) {
                (0, 1) => -s[2],
                (0, 2) => s[1],
                (1, 0) => s[2],
                (1, 2) => -s[0],
                (2, 0) => -s[1],
                (2, 1) => s[0],
                _ => 0.0,
            };
            out[i][j + 1] =
                -2.0 * e[j] * s[i] + 2.0 * es * delta + 2.0 * s[j] * e[i] + 2.0 * e0 * dj_cross_s;
        }
    }
    out
}

impl HeavyTop {
    /// Build and validate (a precession rate Ω ≠ 0 for the steady solution).
    pub fn new(p: HeavyTopParams) -> Result<Self, ParamError> {
        // `a` and `c` here, not only in the rotor's constructor: a refusal names `heavy-top`.
        for (field, x) in [
            ("m", p.m),
            ("a", p.a),
            ("c", p.c),
            ("length", p.length),
            ("g", p.g),
            ("t_end", p.t_end),
        ] {
            bounded_positive(ID, field, x)?;
        }
        params::finite(ID, "theta0_deg", p.theta0_deg)?;
        params::nonzero(ID, "precession", p.precession)?;
        let rotor = QuaternionBody::new(QuaternionBodyParams {
            a: p.a,
            c: p.c,
            w1: 0.0,
            w3: 0.0,
            j0: None,
            t_end: p.t_end,
        })?;
        let (th, w) = (p.theta0_deg.to_radians(), p.precession);
        let a_pivot = p.a + p.m * p.length * p.length;
        let w3 = (p.m * p.g * p.length + a_pivot * w * w * th.cos()) / (p.c * w);
        Ok(Self {
            p,
            rotor,
            rates: (w3, w3 - w * th.cos()),
        })
    }

    /// The exact (p, ṗ, p̈) of the steady precession at `t` (products of exponentials).
    fn attitude(&self, t: f64) -> [[f64; 4]; 3] {
        let (w, spin) = (self.p.precession, self.rates.1);
        let a = rotation([0.0, 0.0, 1.0], w * t);
        let c = rotation([1.0, 0.0, 0.0], self.p.theta0_deg.to_radians());
        let b = rotation([0.0, 0.0, 1.0], spin * t);
        let (za, zb) = ([0.0, 0.0, 0.0, 0.5 * w], [0.0, 0.0, 0.0, 0.5 * spin]);
        let (da, db) = (qmul(a, za), qmul(b, zb));
        let (dda, ddb) = (qmul(da, za), qmul(db, zb));
        let term = |x: [f64; 4], y: [f64; 4]| qmul(qmul(x, c), y);
        let p = term(a, b);
        let dp = std::array::from_fn(|k| term(da, b)[k] + term(a, db)[k]);
        let ddp =
            std::array::from_fn(|k| term(dda, b)[k] + 2.0 * term(da, db)[k] + term(a, ddb)[k]);
        [p, dp, ddp]
    }

    fn pivot_offset(&self) -> [f64; 3] {
        [0.0, 0.0, -self.p.length]
    }
}

/// Catalog entry `heavy-top`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "heavy symmetric top in body coordinates (CoM + Euler parameters, spherical joint r + R(p)s = 0), exact steady precession",
        build: |t| Ok(Problem::Mechanical(Box::new(HeavyTop::new(params::parse("problem", ID, t)?)?))),
        defaults: params::defaults::<HeavyTopParams>,
    }
}

impl MechanicalSystem for HeavyTop {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!(
                "Heavy symmetric top in body coordinates (m = {}, A_cm = {}, C = {}, ℓ = {}), steady precession Ω = {} at θ₀ = {}°",
                p.m, p.a, p.c, p.length, p.precession, p.theta0_deg
            ),
            equations: "m r̈ = −mg ẑ − μ;  M_p(p) p̈ = f_p − 2pλ₀ − (∂(R(p)s)/∂p)ᵀμ;  Φ = (pᵀp − 1, r + R(p)s), s = (0, 0, −ℓ)".into(),
            citation: "seed 001 §3.6.1 (spherical joint r₁ + R₁s₁ − r₂ − R₂s₂ = 0); Nikravesh, Computer-Aided Analysis of \
                       Mechanical Systems (1988), §6.3, §7; steady precession: Goldstein, Classical Mechanics, 3rd ed., §5.7"
                .into(),
            tags: vec!["spatial".into(), "rigid-body".into(), "quaternion".into(), "conservative".into(), "exact-solution".into()],
            index: 3,
            t_end: p.t_end,
            reference: format!("exact: steady precession, ω₃ = {:.12}, spin φ̇ = {:.12}", self.rates.0, self.rates.1),
        }
    }
    fn dims(&self) -> Dims {
        Dims { n: 7, m: 4 }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        let mut e: Vec<(usize, usize)> = (0..3).map(|i| (i, i)).collect();
        e.extend((0..4).flat_map(|i| (0..=i).map(move |j| (3 + i, 3 + j))));
        SparsityPattern::new(7, 7, e)
    }
    fn mass(&self, q: &[f64], out: &mut [f64]) {
        out[..3].fill(self.p.m);
        self.rotor.mass(&q[3..], &mut out[3..]);
    }
    fn forces(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        out[..3].copy_from_slice(&[0.0, 0.0, -self.p.m * self.p.g]);
        self.rotor.forces(t, &q[3..], &v[3..], &mut out[3..]);
    }
    fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        out[0] = q[3..].iter().map(|x| x * x).sum::<f64>() - 1.0;
        let rs = rotate(&q[3..], self.pivot_offset());
        for i in 0..3 {
            out[1 + i] = q[i] + rs[i];
        }
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        let mut e: Vec<(usize, usize)> = (3..7).map(|c| (0, c)).collect();
        for i in 0..3 {
            e.push((1 + i, i));
            e.extend((3..7).map(|c| (1 + i, c)));
        }
        SparsityPattern::new(4, 7, e)
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        for k in 0..4 {
            out[k] = 2.0 * q[3 + k];
        }
        let jr = rotate_jacobian(&q[3..], self.pivot_offset());
        for i in 0..3 {
            out[4 + 5 * i] = 1.0;
            out[5 + 5 * i..9 + 5 * i].copy_from_slice(&jr[i]);
        }
    }
    fn curvature(&self, _t: f64, _q: &[f64], v: &[f64], out: &mut [f64]) {
        out[0] = -2.0 * v[3..].iter().map(|x| x * x).sum::<f64>();
        let r = rotate(&v[3..], self.pivot_offset());
        for i in 0..3 {
            out[1 + i] = -2.0 * r[i];
        }
    }
    fn energy(&self, t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let kinetic = 0.5 * self.p.m * v[..3].iter().map(|x| x * x).sum::<f64>();
        let spin = self.rotor.energy(t, &q[3..], &v[3..])?;
        Some(kinetic + spin + self.p.m * self.p.g * q[2])
    }
    fn energy_scale(&self) -> f64 {
        self.p.m * self.p.g * self.p.length + 0.5 * self.p.c * self.rates.0 * self.rates.0
    }
    /// (L_z about the pivot, C ω'₃).
    fn momentum(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<Vec<f64>> {
        let g = g_matrix(&q[3..]);
        let w: [f64; 3] = g.map(|row| 2.0 * (0..4).map(|k| row[k] * v[3 + k]).sum::<f64>());
        let jw = [self.p.a * w[0], self.p.a * w[1], self.p.c * w[2]];
        let spin = rotate(&q[3..], jw);
        let orbital = self.p.m * (q[0] * v[1] - q[1] * v[0]);
        Some(vec![orbital + spin[2], self.p.c * w[2]])
    }
    fn initial_state(&self) -> State {
        let e = self.exact_state(0.0);
        State::mechanical(0.0, e.0, e.1, 4)
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        let (q, v, a) = self.exact_state(t);
        Some(ExactSolution {
            lambda: self.multipliers(t, &q, &v, &a),
            q,
            v,
        })
    }
    /// The steady precession in f64: three rotations by the rounded angles `Ωt`, `θ₀`,
    /// `φ̇t` and two Hamilton products, so p is good to `8ε(4 + φ)` with the phase
    /// `φ = (|Ω| + |φ̇|) t_end` (argument rounding plus a handful of roundings, safety 8)
    /// and `r = R(p)(0, 0, ℓ)` to `2ℓ` times that; ṗ, ṙ (rates up to `|Ω| + |φ̇|`) to
    /// `8ε(4 + φ)(|Ω| + |φ̇|)(1 + 2ℓ)`. λ is solved from `Φ_qᵀλ = f − M q̈` by least
    /// squares at the state (q, q̇, q̈) built from the same rounded rotations — a
    /// consistent state at a time off by the phase error, where λ (constant in size,
    /// turning at most at the state's rates) differs by `ε φ |λ|` — and the solve rounds
    /// every term: `8ε(4 s + φ|λ|)` with the balance's sensitivity
    /// `s = (|f| + ‖M‖|q̈| + ‖Φ_q‖|λ|)/σ_min(Φ_q)` (evaluated at t = 0 — the magnitudes of
    /// a steady precession do not change; a fast spin makes |f| and ‖M‖|q̈| ~ J₀ω₃² cancel
    /// down to mgℓ). Outside when a bound exceeds 1e-4 of its scale (`max(½, ℓ)` for q,
    /// `|v|∞` and `|λ|∞` of the motion): a lost phase, or a spin so fast (`Ω` → 0 makes
    /// `ω₃ = (mgℓ + AΩ² cos θ₀)/(CΩ)` huge) that the balance cancels beyond 1e-4.
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        let rate = self.p.precession.abs() + self.rates.1.abs();
        let phi = rate * t_end;
        let growth = SAFETY * EPS * (4.0 + phi);
        let (q, v, a) = self.exact_state(0.0);
        let lambda = self.multipliers(0.0, &q, &v, &a);
        let sens = domain::multiplier_sensitivity(self, 0.0, &q, &v, &a, &lambda);
        let inf = |x: &[f64]| x.iter().fold(0.0_f64, |m, y| m.max(y.abs()));
        let l = self.p.length;
        judge(
            &format!(
                "steady precession with phase (|Ω| + |φ̇|)·t_end = {phi:.4e} (φ̇ = {:.4e}): 8ε(4 + φ) on p, ×2ℓ on r, ×(|Ω| + |φ̇|)(1 + 2ℓ) on v, 8ε(4s + φ|λ|) on λ with the balance's sensitivity s = {sens:.3e} (safety 8)",
                self.rates.1
            ),
            &[
                part("q", growth * (1.0 + 2.0 * l), l.max(0.5)),
                part("v", growth * rate * (1.0 + 2.0 * l), inf(&v)),
                part(
                    "λ",
                    SAFETY * EPS * (4.0 * sens + phi * inf(&lambda)),
                    inf(&lambda),
                ),
            ],
            "shorten t_end, or raise precession (a slow precession needs a fast spin ω₃ ∝ 1/Ω), or change the inertias",
        )
    }
}

impl HeavyTop {
    /// The exact (q, q̇, q̈) at `t`.
    fn exact_state(&self, t: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let [p, dp, ddp] = self.attitude(t);
        let up = [0.0, 0.0, self.p.length];
        let jr = rotate_jacobian(&p, up);
        let dot = |row: &[f64; 4], x: &[f64; 4]| (0..4).map(|k| row[k] * x[k]).sum::<f64>();
        let r = rotate(&p, up);
        let curv = rotate(&dp, up);
        let mut q: Vec<f64> = r.to_vec();
        let mut v: Vec<f64> = jr.iter().map(|row| dot(row, &dp)).collect();
        let mut a: Vec<f64> = (0..3).map(|i| dot(&jr[i], &ddp) + 2.0 * curv[i]).collect();
        q.extend(p);
        v.extend(dp);
        a.extend(ddp);
        (q, v, a)
    }

    /// λ from `Φ_qᵀλ = f − M q̈` in the least-squares sense (NaN if the solve fails).
    fn multipliers(&self, t: f64, q: &[f64], v: &[f64], a: &[f64]) -> Vec<f64> {
        let mp = self.mass_pattern();
        let mut mv = vec![0.0; mp.nnz()];
        self.mass(q, &mut mv);
        let mut ma = vec![0.0; 7];
        mp.mul_vec(&mv, a, &mut ma, true);
        let mut rhs = vec![0.0; 7];
        self.forces(t, q, v, &mut rhs);
        rhs.iter_mut().zip(&ma).for_each(|(r, m)| *r -= m);
        let jp = self.jacobian_pattern();
        let mut jv = vec![0.0; jp.nnz()];
        self.jacobian(t, q, &mut jv);
        let j = jp.to_dense(&jv, false);
        let jt: Vec<f64> = (0..28).map(|e| j[(e % 4) * 7 + e / 4]).collect();
        match driftlab_solver::dense::pseudo_inverse(7, 4, &jt) {
            Ok((pinv, _)) => (0..4)
                .map(|i| (0..7).map(|c| pinv[i * 7 + c] * rhs[c]).sum())
                .collect(),
            Err(_) => vec![f64::NAN; 4],
        }
    }
}
