//! `car-axis`: the IVP Test Set car axis problem (index 3, after Rentrop et al.): a car
//! axle of length L with two wheels on springs, the left end moving on a prescribed bumpy
//! road `(x_b, y_b)(t)`, small masses (`K = M ε²/2`), t ∈ [0, 3], scored in scd against
//! the current 21-digit reference at t = 3 (all 10 components).
//!
//! ```text
//! q = (x_l, y_l, x_r, y_r),   K q'' = f(t, q) − Φ_qᵀ λ
//! f = ((L₀ − L_l) x_l / L_l,  (L₀ − L_l) y_l / L_l − K g,
//!      (L₀ − L_r)(x_r − x_b)/L_r,  (L₀ − L_r)(y_r − y_b)/L_r − K g)
//! Φ₁ = x_b x_l + y_b y_l,   Φ₂ = (x_l − x_r)² + (y_l − y_r)² − L²
//! y_b = r sin ωt,  x_b = √(L² − y_b²),  L_l = |(x_l, y_l)|,  L_r = |(x_r − x_b, y_r − y_b)|
//! ```
//!
//! Φ₁ is rheonomic (through x_b, y_b), so `Φ_t`, `Φ_qt` and `Φ_tt` enter γ. Sign
//! convention: the Test Set writes `K q'' = f + Φ_qᵀ λ_TS`, so `λ = −λ_TS`; the reference
//! multipliers are negated when loaded. Source: IVP Test Set (Mazzia & Magherini), problem
//! `caraxis`; data in `datasets/ivptestset_caraxis.json`.

use crate::entry::{Problem, ProblemEntry};
use crate::testset::Dataset;
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::ConstraintHessian;
use driftlab_core::{
    Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo, ReferenceSolution,
    ScdComponents, SparsityPattern, State,
};
use serde::{Deserialize, Serialize};

pub(crate) const DATASET: &str = include_str!("../../../../datasets/ivptestset_caraxis.json");

/// Parameters of [`CarAxis`] (the model data are fixed by the Test Set).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CarAxisParams {
    /// Default end time (s); the reference is at 3 s.
    pub t_end: f64,
}

impl Default for CarAxisParams {
    fn default() -> Self {
        Self { t_end: 3.0 }
    }
}

/// The car axis.
pub struct CarAxis {
    t_end: f64,
    k: f64,
    l: f64,
    l0: f64,
    r: f64,
    w: f64,
    g: f64,
    y0: Vec<f64>,
    reference: Vec<f64>,
    provenance: String,
}

impl CarAxis {
    /// Build from the embedded dataset.
    pub fn new(p: CarAxisParams) -> Result<Self, ParamError> {
        bounded_positive(ID, "t_end", p.t_end)?;
        let ds = Dataset::parse("ivptestset_caraxis.json", DATASET)?;
        let n = |k: &str| ds.num(&["parameters", k]);
        let (eps, mass) = (n("eps")?, n("M")?);
        let y0 = ds.vec(&["y0"])?;
        let reference = ds.vec(&["reference_at_tend_current"])?;
        if y0.len() != 10 || reference.len() != 10 {
            return Err(ParamError::Invalid {
                kind: "dataset",
                id: "ivptestset_caraxis.json".into(),
                message: "y0 and the reference must have 10 components".into(),
            });
        }
        Ok(Self {
            t_end: p.t_end,
            k: mass * eps * eps / 2.0,
            l: n("L")?,
            l0: n("L0")?,
            r: n("r")?,
            w: n("w")?,
            g: n("g")?,
            y0,
            reference,
            provenance: ds.text(&["reference_current_provenance"])?,
        })
    }

    /// Road point `(x_b, y_b)` and its first and second time derivatives.
    fn road(&self, t: f64) -> [f64; 6] {
        let (s, c) = (self.w * t).sin_cos();
        let yb = self.r * s;
        let yd = self.r * self.w * c;
        let ydd = -self.w * self.w * yb;
        let xb = (self.l * self.l - yb * yb).sqrt();
        let xd = -yb * yd / xb;
        let xdd = -(yd * yd + yb * ydd) / xb - (yb * yd).powi(2) / xb.powi(3);
        [xb, yb, xd, yd, xdd, ydd]
    }
}

/// The catalog id `car-axis`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "car-axis";

/// Catalog entry `car-axis`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "IVP Test Set car axis (index 3, rheonomic, small masses): scd vs the 21-digit reference at 3 s",
        build: |t| Ok(Problem::Mechanical(Box::new(CarAxis::new(params::parse("problem", ID, t)?)?))),
        defaults: params::defaults::<CarAxisParams>,
    }
}

impl MechanicalSystem for CarAxis {
    fn info(&self) -> ProblemInfo {
        ProblemInfo {
            id: ID.into(),
            title: "Car axis (IVP Test Set): axle on two springs, left wheel on a bumpy road".into(),
            equations: "K q'' = f(t, q) − Φ_qᵀλ, K = Mε²/2;  Φ₁ = x_b x_l + y_b y_l,  Φ₂ = |p_l − p_r|² − L²;  \
                        y_b = r sin ωt, x_b = √(L² − y_b²); springs (L₀ − L_i)/L_i along each wheel arm, gravity −Kg"
                .into(),
            citation: "IVP Test Set for IVP solvers (F. Mazzia, C. Magherini, Univ. Bari), problem caraxis, after \
                       P. Rentrop, M. Roche, G. Steinebach (1989); data in datasets/ivptestset_caraxis.json"
                .into(),
            tags: vec!["planar".into(), "rheonomic".into(), "stiff".into(), "index-3".into(), "published-reference".into()],
            index: 3,
            t_end: self.t_end,
            reference: "IVP Test Set current reference at t = 3 (21 digits; agrees with an independent \
                        re-integration to ≈4e-15 in λ, 2e-13 in positions, 5e-12 in velocities)"
                .into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims { n: 4, m: 2 }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(4)
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = self.k);
    }
    fn forces(&self, t: f64, q: &[f64], _v: &[f64], out: &mut [f64]) {
        let [xb, yb, ..] = self.road(t);
        let ll = q[0].hypot(q[1]);
        let lr = (q[2] - xb).hypot(q[3] - yb);
        out[0] = (self.l0 - ll) * q[0] / ll;
        out[1] = (self.l0 - ll) * q[1] / ll - self.k * self.g;
        out[2] = (self.l0 - lr) * (q[2] - xb) / lr;
        out[3] = (self.l0 - lr) * (q[3] - yb) / lr - self.k * self.g;
    }
    fn constraints(&self, t: f64, q: &[f64], out: &mut [f64]) {
        let [xb, yb, ..] = self.road(t);
        out[0] = xb * q[0] + yb * q[1];
        out[1] = (q[0] - q[2]).powi(2) + (q[1] - q[3]).powi(2) - self.l * self.l;
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        SparsityPattern::new(2, 4, vec![(0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (1, 3)])
    }
    fn jacobian(&self, t: f64, q: &[f64], out: &mut [f64]) {
        let [xb, yb, ..] = self.road(t);
        let (dx, dy) = (q[0] - q[2], q[1] - q[3]);
        out.copy_from_slice(&[xb, yb, 2.0 * dx, 2.0 * dy, -2.0 * dx, -2.0 * dy]);
    }
    fn phi_t(&self, t: f64, q: &[f64], out: &mut [f64]) {
        let [_, _, xd, yd, ..] = self.road(t);
        out[0] = xd * q[0] + yd * q[1];
        out[1] = 0.0;
    }
    fn curvature(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        let [_, _, xd, yd, xdd, ydd] = self.road(t);
        out[0] = -2.0 * (xd * v[0] + yd * v[1]) - (xdd * q[0] + ydd * q[1]);
        out[1] = -2.0 * ((v[0] - v[2]).powi(2) + (v[1] - v[3]).powi(2));
    }
    fn initial_state(&self) -> State {
        State::mechanical(0.0, self.y0[0..4].to_vec(), self.y0[4..8].to_vec(), 2)
    }
    fn reference(&self) -> Option<ReferenceSolution> {
        let r = &self.reference;
        Some(ReferenceSolution {
            t: 3.0,
            state: ExactSolution {
                q: r[0..4].to_vec(),
                v: r[4..8].to_vec(),
                lambda: vec![-r[8], -r[9]],
            },
            scd: ScdComponents::All,
            provenance: format!("IVP Test Set caraxis: {}", self.provenance),
        })
    }
    /// The current 21-digit reference at t = 3 agrees with an independent index-1
    /// re-integration to ≈4e-15 in λ, ≤ 2e-13 in positions and ≤ 5e-12 in velocities
    /// (absolute; [`ProblemInfo::reference`], `datasets/ivptestset_caraxis.json`); scd
    /// scores all 10 components relative to their size, so `accuracy` is the largest of
    /// these over `|ref_i|` — 6.7e-10, set by the small velocity ẏ_l ≈ 7.4e-3 (whose check
    /// the dataset calls inconclusive; the old reference differs there by 9e-12). The
    /// model data and the start are the Test Set's, not parameters (a different start,
    /// `initial`, drops the reference); `t_end` is, and scd is scored only by a run that
    /// ends at 3 — valid at every `t_end`.
    fn reference_domain(&self, _t_end: f64) -> driftlab_core::ReferenceDomain {
        let r = &self.reference;
        let bound = |k: usize| match k {
            0..4 => 2e-13,
            4..8 => 5e-12,
            _ => 4e-15,
        };
        let accuracy = (0..10).fold(0.0_f64, |m, k| {
            m.max(if r[k] == 0.0 {
                bound(k)
            } else {
                bound(k) / r[k].abs()
            })
        });
        driftlab_core::ReferenceDomain::Valid {
            accuracy,
            basis: format!(
                "IVP Test Set caraxis reference at t = 3 (21 digits), checked by an independent re-integration to 2e-13 (q), \
                 5e-12 (v), 4e-15 (λ) absolute: {accuracy:.1e} relative over the 10 components scd scores"
            ),
        }
    }
    fn constraint_hessian(&self) -> Option<&dyn ConstraintHessian> {
        Some(self)
    }
}

impl ConstraintHessian for CarAxis {
    fn pattern(&self) -> SparsityPattern {
        SparsityPattern::new(4, 4, vec![(0, 0), (1, 1), (2, 2), (3, 3), (2, 0), (3, 1)])
    }
    fn values(&self, _t: f64, _q: &[f64], lambda: &[f64], out: &mut [f64]) {
        let c = 2.0 * lambda[1];
        out.copy_from_slice(&[c, c, c, c, -c, -c]);
    }
}
