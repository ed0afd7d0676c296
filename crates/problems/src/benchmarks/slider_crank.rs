//! `slider-crank`: the flexible slider-crank mechanism of B. Simeon as the IVP Test Set
//! states it (problem `crank`) — a rigid crank driven at constant speed, an elastic
//! connecting rod, a sliding block — scored in significant correct digits against the
//! Test Set reference at t = 0.1.
//!
//! ```text
//! q = (φ₁, φ₂, x₃, q₁, q₂, q₃, q₄):  crank angle, rod angle, block position, and the
//!     rod's elastic coordinates (q₁, q₂ two lateral sine modes; q₃, q₄ the axial
//!     displacement of a quadratic element at the mid node and at the tip)
//! M(q) q'' = f(t, q, q') − Φ_qᵀ λ
//! Φ₁ = L₁ sin φ₁ + (L₂ + q₄) sin φ₂                 (the rod's tip on the slide line)
//! Φ₂ = x₃ − L₁ cos φ₁ − (L₂ + q₄) cos φ₂            (the block at the rod's tip)
//! Φ₃ = φ₁ − Ω t                                     (the crank's drive, rheonomic)
//! M = [[J₁ + m₂L₁², ½L₁L₂m₂ cos φ₁₂ + ρL₁(s₁₂ c₂ᵀq + c₁₂ c₁ᵀq), 0, ρL₁(−s₁₂ c₁ + c₁₂ c₂)ᵀ],
//!      [·, J₂ + qᵀM_q q + 2ρ c₁₂ᵀq, 0, ρ(c₂₁ + B_qᵀq)ᵀ], [·, ·, m₃, 0], [·, ·, ·, M_q]]
//! f_e = φ₂'² M_q q + ρ(φ₂'² c₁₂ + L₁φ₁'²(c₁₂ c₁ + s₁₂ c₂) + 2φ₂' B_q q') − K_q q − D_q q'
//! ```
//!
//! with `φ₁₂ = φ₁ − φ₂`, `c₁₂ = cos φ₁₂`, `s₁₂ = sin φ₁₂`; the rigid entries of `f` carry
//! the Coriolis and centrifugal couplings between crank, rod and elastic motion (see
//! [`SliderCrank::forces`]). The finite-element data `M_q`, `K_q`, `B_q`, `c₁`, `c₂`,
//! `c₁₂`, `c₂₁` come from two lateral modes and a quadratic axial element on a steel rod
//! (E = 2e11 Pa, ρ = 7870 kg/m³, 8 mm × 8 mm, L₂ = 0.3 m) with Ω = 150 rad/s, no gravity.
//! The elastic frequencies of the rod are ≈ 1.3e3 and 5.1e3 rad/s (bending) and 6.8e3 and
//! 2.5e4 rad/s (axial): stiff next to the crank's 150 rad/s, and undamped (purely
//! imaginary eigenvalues) unless `damping`.
//!
//! Source: B. Simeon, "Modelling a flexible slider crank mechanism by a mixed system of
//! DAEs and PDEs", Math. Modelling of Systems 2 (1996) 1–18; IVP Test Set (Mazzia &
//! Magherini, release 2.4), problem `crank` (Simeon's `RESMBS`, 1995/97), as mirrored in
//! deTestSet (`src/Ex_crank.f`). The Test Set integrates the index-2 form (velocity
//! constraints) from the published y₀, whose x₃ (printed to 9 digits) misses Φ₂ = 0 by
//! 2.0e-10, a miss the index-2 form carries unchanged to t = 0.1. This workspace integrates
//! the index-3 form and starts from x₃ = L₁ cos φ₁ + (L₂ + q₄) cos φ₂ instead, so its
//! solution differs from the Test Set's by 2.0e-10 in x₃ (1.2e-9 relative at t = 0.1) — far
//! below the reference's own accuracy (see [`SliderCrank::reference`]). The printed
//! velocities likewise miss Φ₁' = 0 by 1.2e-8 and are projected onto the velocity
//! constraint in the mass metric (`SliderCrank::project_initial_velocity`). π is 3.1415927 as coded in `RESMBS`, so that the model
//! is the one the reference was computed for.
//!
//! `start = "rigid"` is the Test Set's second initial value (elastic coordinates at rest
//! on the rigid motion), which excites the elastic modes strongly; no reference exists
//! for it, nor for the `nonlinear_stiffness` and `damping` variants.

use crate::entry::{Problem, ProblemEntry};
use crate::testset::Dataset;
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{ConstraintHessian, TangentMatrices};
use driftlab_core::{
    Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo, ReferenceSolution,
    ScdComponents, SparsityPattern, State,
};
use serde::{Deserialize, Serialize};

pub(crate) const DATASET: &str = include_str!("../../../../datasets/ivptestset_crank.json");
pub(crate) const DATASET_FORTRAN: &str =
    include_str!("../../../../datasets/ivptestset_crank_soln_fortran.json");

/// Which of the Test Set's two initial values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CrankStart {
    /// "Close to smooth motion", consistent (the Test Set's default, with the reference).
    #[default]
    Smooth,
    /// On the rigid motion with the elastic coordinates at rest: strong oscillations.
    Rigid,
}

/// Which published reference at t = 0.1 the `scd` column scores against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CrankReference {
    /// `cranksoln` of the Test Set (deTestSet `R/ex_crank.R`).
    #[default]
    Testset,
    /// `SOLN` of the MEBDFI driver in `Ex_crank.f` (an older computation; it differs from
    /// the Test Set one by up to 2.6e-7 relative in the bending and 3.6e-6 in the axial
    /// coordinates; converged runs here side with the Test Set one — datasets/README.md).
    MebdfiDriver,
}

/// Parameters of [`SliderCrank`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SliderCrankParams {
    /// Default end time (s); the reference is at 0.1 s.
    pub t_end: f64,
    /// Initial value: `smooth` (consistent, with reference) or `rigid`.
    pub start: CrankStart,
    /// Add the Test Set's nonlinear (geometric) stiffness term (`IPAR(1) = 1`).
    pub nonlinear_stiffness: bool,
    /// Add the Test Set's 0.5 % modal damping (`IPAR(2) = 1`).
    pub damping: bool,
    /// Which published reference the scd column uses.
    pub reference: CrankReference,
    /// Offer the tangent stiffness of the elastic forces to implicit methods' Newton
    /// matrices ([`MechanicalSystem::tangent`]); `false` shows what they do without it.
    pub tangent_stiffness: bool,
}

impl Default for SliderCrankParams {
    fn default() -> Self {
        Self {
            t_end: 0.1,
            start: CrankStart::Smooth,
            nonlinear_stiffness: false,
            damping: false,
            reference: CrankReference::Testset,
            tangent_stiffness: true,
        }
    }
}

/// Rigid-body data of the mechanism (Test Set parameter names).
#[derive(Clone, Copy, Debug)]
struct Data {
    m1: f64,
    m2: f64,
    m3: f64,
    l1: f64,
    l2: f64,
    j1: f64,
    j2: f64,
    e: f64,
    b: f64,
    hh: f64,
    rho: f64,
    grav: f64,
    omega: f64,
    pi: f64,
}

/// Finite-element matrices and vectors of the rod (4 elastic coordinates).
#[derive(Clone, Debug, Default)]
struct Fe {
    mq: [[f64; 4]; 4],
    kq: [[f64; 4]; 4],
    bq: [[f64; 4]; 4],
    dq: [[f64; 4]; 4],
    c1: [f64; 4],
    c2: [f64; 4],
    c12: [f64; 4],
    c21: [f64; 4],
}

impl Fe {
    /// Simeon's discretization: two lateral sine modes (q₁, q₂) and one quadratic axial
    /// element (q₃ mid node, q₄ tip), with the coupling vectors of the rigid motion.
    fn new(d: &Data, damping: bool) -> Self {
        let (fm, fk, fb) = (
            d.rho * d.b * d.hh * d.l2,
            d.e * d.b * d.hh / d.l2,
            d.b * d.hh * d.l2,
        );
        let (pi, slender) = (d.pi, (d.hh / d.l2).powi(2));
        let mut fe = Fe::default();
        fe.mq[0][0] = 0.5 * fm;
        fe.mq[1][1] = 0.5 * fm;
        fe.mq[2][2] = 8.0 * fm;
        fe.mq[2][3] = fm;
        fe.mq[3][2] = fm;
        fe.mq[3][3] = 2.0 * fm;
        fe.kq[0][0] = fk * pi.powi(4) / 24.0 * slender;
        fe.kq[1][1] = fk * pi.powi(4) * 2.0 / 3.0 * slender;
        fe.kq[2][2] = fk * 16.0 / 3.0;
        fe.kq[2][3] = -fk * 8.0 / 3.0;
        fe.kq[3][2] = -fk * 8.0 / 3.0;
        fe.kq[3][3] = fk * 7.0 / 3.0;
        let b13 = fb * 16.0 / pi.powi(3);
        let b14 = fb * (8.0 / pi.powi(3) - 1.0 / pi);
        let b24 = fb * 0.5 / pi;
        fe.bq[0][2] = -b13;
        fe.bq[0][3] = b14;
        fe.bq[1][3] = b24;
        fe.bq[2][0] = b13;
        fe.bq[3][0] = -b14;
        fe.bq[3][1] = -b24;
        fe.c1 = [0.0, 0.0, fb * 2.0 / 3.0, fb / 6.0];
        fe.c2 = [fb * 2.0 / pi, 0.0, 0.0, 0.0];
        fe.c12 = [0.0, 0.0, d.l2 * fb / 3.0, d.l2 * fb / 6.0];
        fe.c21 = [d.l2 * fb / pi, -d.l2 * fb * 0.5 / pi, 0.0, 0.0];
        if damping {
            // 0.5 % modal damping, values as published (the two off-diagonal entries
            // differ in the 13th digit in the source; kept).
            fe.dq[0][0] = 5.0;
            fe.dq[1][1] = 25.0;
            fe.dq[2][2] = 0.5 * 2.308375455264791e2;
            fe.dq[2][3] = -0.5 * 2.62688487992052e2;
            fe.dq[3][2] = -0.5 * 2.626884879920526e2;
            fe.dq[3][3] = 0.5 * 4.217421837156818e2;
        }
        fe
    }
}

fn dot(a: &[f64; 4], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `(Aᵀ x)_i = Σ_j A[j][i] x_j`.
fn mul_t(a: &[[f64; 4]; 4], x: &[f64]) -> [f64; 4] {
    std::array::from_fn(|i| (0..4).map(|j| a[j][i] * x[j]).sum())
}

/// `(A x)_i = Σ_j A[i][j] x_j`.
fn mul(a: &[[f64; 4]; 4], x: &[f64]) -> [f64; 4] {
    std::array::from_fn(|i| (0..4).map(|j| a[i][j] * x[j]).sum())
}

/// The flexible slider crank.
pub struct SliderCrank {
    p: SliderCrankParams,
    d: Data,
    fe: Fe,
    y0: Vec<f64>,
    reference: Option<(Vec<f64>, String)>,
}

impl SliderCrank {
    /// Build from the embedded dataset.
    pub fn new(p: SliderCrankParams) -> Result<Self, ParamError> {
        bounded_positive(ID, "t_end", p.t_end)?;
        let ds = Dataset::parse("ivptestset_crank.json", DATASET)?;
        let n = |k: &str| ds.num(&["parameters", k]);
        let d = Data {
            m1: n("M1")?,
            m2: n("M2")?,
            m3: n("M3")?,
            l1: n("L1")?,
            l2: n("L2")?,
            j1: n("J1")?,
            j2: n("J2")?,
            e: n("EE")?,
            b: n("BB")?,
            hh: n("HH")?,
            rho: n("RHO")?,
            grav: n("GRAV")?,
            omega: n("OMEGA")?,
            pi: pi_as_coded(&ds)?,
        };
        let mut y0 = match p.start {
            CrankStart::Smooth => ds.vec(&["y0_option1_consistent"])?,
            CrankStart::Rigid => rigid_start(&d),
        };
        if y0.len() == 24 {
            // The printed x₃ = 0.450016933 misses Φ₂ = 0 by 2.0e-10; the index-3 form
            // needs Φ(q₀) = 0, so x₃ is put back on the constraint (see the module doc).
            y0[2] = d.l1 * y0[0].cos() + (d.l2 + y0[6]) * y0[1].cos();
        }
        let testset = ds.vec(&["reference_at_tend"])?;
        if y0.len() != 24 || testset.len() != 24 {
            return Err(ParamError::Invalid {
                kind: "dataset",
                id: "ivptestset_crank.json".into(),
                message: "y0 and the reference must have 24 components".into(),
            });
        }
        let with_reference = p.start == CrankStart::Smooth && !p.nonlinear_stiffness && !p.damping;
        let reference = if !with_reference {
            None
        } else {
            Some(match p.reference {
                CrankReference::Testset => (testset, ds.text(&["reference_provenance"])?),
                CrankReference::MebdfiDriver => {
                    let f = Dataset::parse("ivptestset_crank_soln_fortran.json", DATASET_FORTRAN)?;
                    (f.vec(&["reference_at_tend"])?, f.text(&["provenance"])?)
                }
            })
        };
        let mut crank = Self {
            fe: Fe::new(&d, p.damping),
            p,
            d,
            y0,
            reference,
        };
        crank.project_initial_velocity()?;
        Ok(crank)
    }

    /// The printed velocities (9 digits) miss `Φ_q v + Φ_t = 0` by 1.2e-8 (in Φ₁'). They
    /// are moved to the constraint by the mass-orthogonal projection
    /// `[[M, Φ_qᵀ], [Φ_q, 0]] [Δv; μ] = [0; −(Φ_q v + Φ_t)]` — the correction a constraint
    /// impulse makes, and the one an index-2 integration such as the Test Set's makes in
    /// its first step (BDF: `Δv = −h M⁻¹Φ_qᵀΔλ`). Measured: with this start, gauss s = 2 +
    /// projection at h = 5e-7 meets the Test Set reference to ≤ 2e-9 relative in q₁…q₄;
    /// changing φ₂' alone instead leaves q₁, q₂ 3e-8 away — the elastic coordinates are
    /// that sensitive to how the start is made consistent.
    fn project_initial_velocity(&mut self) -> Result<(), ParamError> {
        let q = self.y0[0..7].to_vec();
        let mut v = self.y0[7..14].to_vec();
        crate::consistency::project_initial_velocity(self, 0.0, &q, &mut v).map_err(|e| {
            ParamError::Invalid {
                kind: "problem",
                id: ID.into(),
                message: format!("making the initial velocity consistent failed: {e}"),
            }
        })?;
        self.y0[7..14].copy_from_slice(&v);
        Ok(())
    }
}

/// π as `RESMBS` codes it, `"3.1415927D0 (sic, …)"` in the dataset: the model the
/// reference was computed for uses this value, not `std::f64::consts::PI` (they differ by
/// 1.5e-8 relative).
fn pi_as_coded(ds: &Dataset) -> Result<f64, ParamError> {
    let text = ds.text(&["parameters", "PI_as_coded"])?;
    text.split_whitespace()
        .next()
        .and_then(|w| w.replace(['D', 'd'], "e").parse::<f64>().ok())
        .ok_or_else(|| ParamError::Invalid {
            kind: "dataset",
            id: "ivptestset_crank.json".into(),
            message: format!("parameters.PI_as_coded = {text:?} does not start with a number"),
        })
}

/// The Test Set's second initial value (`init2` of `Ex_crank.f`): the rigid
/// configuration at φ₁ = φ₂ = 0 with the rigid velocities, elastic coordinates at rest.
fn rigid_start(d: &Data) -> Vec<f64> {
    let mut y = vec![0.0; 24];
    y[2] = d.l1 + d.l2;
    y[7] = d.omega;
    // Φ₁' = L₁ cos φ₁ φ₁' + L₂ cos φ₂ φ₂' = 0 at φ = 0.
    y[8] = -d.l1 * d.omega / d.l2;
    y
}

/// The catalog id `slider-crank`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "slider-crank";

/// Catalog entry `slider-crank`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "Simeon's flexible slider crank (IVP Test Set `crank`): stiff elastic rod, driven crank, scd vs the reference at 0.1 s",
        build: |t| {
            Ok(Problem::Mechanical(Box::new(SliderCrank::new(params::parse(
                "problem",
                ID,
                t,
            )?)?)))
        },
        defaults: params::defaults::<SliderCrankParams>,
    }
}

impl MechanicalSystem for SliderCrank {
    fn info(&self) -> ProblemInfo {
        ProblemInfo {
            id: ID.into(),
            title: "Flexible slider crank (Simeon; IVP Test Set crank): driven crank, elastic rod, sliding block".into(),
            equations: "q = (φ₁, φ₂, x₃, q₁…q₄);  M(q) q'' = f(t, q, q') − Φ_qᵀλ;  Φ₁ = L₁ sin φ₁ + (L₂ + q₄) sin φ₂,  \
                        Φ₂ = x₃ − L₁ cos φ₁ − (L₂ + q₄) cos φ₂,  Φ₃ = φ₁ − Ωt;  elastic rod: two lateral sine modes and \
                        a quadratic axial element, f_e = φ₂'² M_q q + ρ(φ₂'² c₁₂ + L₁φ₁'²(cos φ₁₂ c₁ + sin φ₁₂ c₂) + 2φ₂' B_q q') − K_q q"
                .into(),
            citation: "B. Simeon, Modelling a flexible slider crank mechanism by a mixed system of DAEs and PDEs, Math. \
                       Modelling of Systems 2 (1996) 1–18; IVP Test Set for IVP solvers (F. Mazzia, C. Magherini), \
                       problem crank; data in datasets/ivptestset_crank.json"
                .into(),
            tags: vec![
                "planar".into(),
                "rheonomic".into(),
                "stiff".into(),
                "flexible".into(),
                "index-3".into(),
                "published-reference".into(),
            ],
            index: 3,
            t_end: self.p.t_end,
            reference: "IVP Test Set reference at t = 0.1 (MEBDFI, atol = rtol = 1e-14); an older published reference \
                        differs from it by up to 3.6e-6 relative in the elastic coordinates; converged runs here meet the Test Set one \
                        to ≤ 4e-9 and saturate scd near 8.5 (datasets/README.md)"
                .into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims { n: 7, m: 3 }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        // Rows 0, 1 couple to everything; x₃ only to itself; the elastic block is M_q.
        let mut e = vec![(0, 0), (1, 0), (1, 1), (2, 2)];
        for i in 3..7 {
            e.push((i, 0));
            e.push((i, 1));
        }
        e.extend([(3, 3), (4, 4), (5, 5), (6, 5), (6, 6)]);
        SparsityPattern::new(7, 7, e)
    }
    fn mass(&self, q: &[f64], out: &mut [f64]) {
        let (d, fe) = (&self.d, &self.fe);
        let qe = &q[3..7];
        let (s12, c12) = (q[0] - q[1]).sin_cos();
        let qtmq: f64 = dot(&mul(&fe.mq, qe), qe);
        let qtbq = mul_t(&fe.bq, qe);
        out[0] = d.j1 + d.m2 * d.l1 * d.l1;
        out[1] = 0.5 * d.l1 * d.l2 * d.m2 * c12
            + d.rho * d.l1 * (s12 * dot(&fe.c2, qe) + c12 * dot(&fe.c1, qe));
        out[2] = d.j2 + qtmq + 2.0 * d.rho * dot(&fe.c12, qe);
        out[3] = d.m3;
        for i in 0..4 {
            out[4 + 2 * i] = d.rho * d.l1 * (-s12 * fe.c1[i] + c12 * fe.c2[i]);
            out[5 + 2 * i] = d.rho * fe.c21[i] + d.rho * qtbq[i];
        }
        out[12..17].copy_from_slice(&[
            fe.mq[0][0],
            fe.mq[1][1],
            fe.mq[2][2],
            fe.mq[3][2],
            fe.mq[3][3],
        ]);
    }
    /// The Test Set's force vector: crank/rod couplings (gravity terms vanish with
    /// g = 0 but are kept), the elastic superposition terms, and on the elastic
    /// coordinates centrifugal stiffening/softening, gyroscopic `2ρφ₂'B_q q'`, stiffness
    /// and (optionally) damping and the nonlinear stiffness term.
    fn forces(&self, _t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        let (d, fe) = (&self.d, &self.fe);
        let (qe, qd) = (&q[3..7], &v[3..7]);
        let (s12, c12) = (q[0] - q[1]).sin_cos();
        let cp1 = q[0].cos();
        let (sp2, cp2) = q[1].sin_cos();
        let (v1, v2) = (v[0], v[1]);
        let (c1q, c1qd) = (dot(&fe.c1, qe), dot(&fe.c1, qd));
        let (c2q, c2qd) = (dot(&fe.c2, qe), dot(&fe.c2, qd));
        let c12qd = dot(&fe.c12, qd);
        let mqq = mul_t(&fe.mq, qe);
        let kqq = mul_t(&fe.kq, qe);
        let dqqd = mul_t(&fe.dq, qd);
        let bqqd = mul(&fe.bq, qd);
        let qdtmqq = dot(&mqq, qd);
        let qdtbqqd = dot(&bqqd, qd);
        let rho = d.rho;
        out[0] = -0.5 * d.l1 * d.grav * (d.m1 + 2.0 * d.m2) * cp1
            - 0.5 * d.l1 * d.l2 * d.m2 * v2 * v2 * s12
            + rho * d.l1 * v2 * v2 * (-s12 * c1q + c12 * c2q)
            - 2.0 * rho * d.l1 * v2 * (c12 * c1qd + s12 * c2qd);
        out[1] = -0.5 * d.l2 * d.grav * d.m2 * cp2
            + 0.5 * d.l1 * d.l2 * d.m2 * v1 * v1 * s12
            + rho * d.l1 * v1 * v1 * (s12 * c1q - c12 * c2q)
            - 2.0 * rho * v2 * c12qd
            - 2.0 * v2 * qdtmqq
            - rho * qdtbqqd
            - rho * d.grav * (cp2 * c1q - sp2 * c2q);
        out[2] = 0.0;
        for i in 0..4 {
            out[3 + i] = v2 * v2 * mqq[i]
                + rho
                    * (v2 * v2 * fe.c12[i]
                        + d.l1 * v1 * v1 * (c12 * fe.c1[i] + s12 * fe.c2[i])
                        + 2.0 * v2 * bqqd[i])
                - rho * d.grav * (sp2 * fe.c1[i] + cp2 * fe.c2[i])
                - kqq[i]
                - dqqd[i];
        }
        if self.p.nonlinear_stiffness {
            let g = self.nonlinear_gradient(qe);
            for i in 0..4 {
                out[3 + i] -= g[i];
            }
        }
    }
    fn constraints(&self, t: f64, q: &[f64], out: &mut [f64]) {
        let d = &self.d;
        let r = d.l2 + q[6];
        out[0] = d.l1 * q[0].sin() + r * q[1].sin();
        out[1] = q[2] - d.l1 * q[0].cos() - r * q[1].cos();
        out[2] = q[0] - d.omega * t;
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        SparsityPattern::new(
            3,
            7,
            vec![
                (0, 0),
                (0, 1),
                (0, 6),
                (1, 0),
                (1, 1),
                (1, 2),
                (1, 6),
                (2, 0),
            ],
        )
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let d = &self.d;
        let r = d.l2 + q[6];
        let (sp1, cp1) = q[0].sin_cos();
        let (sp2, cp2) = q[1].sin_cos();
        out.copy_from_slice(&[
            d.l1 * cp1,
            r * cp2,
            sp2,
            d.l1 * sp1,
            r * sp2,
            1.0,
            -cp2,
            1.0,
        ]);
    }
    fn phi_t(&self, _t: f64, _q: &[f64], out: &mut [f64]) {
        out.copy_from_slice(&[0.0, 0.0, -self.d.omega]);
    }
    fn curvature(&self, _t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        let d = &self.d;
        let r = d.l2 + q[6];
        let (sp1, cp1) = q[0].sin_cos();
        let (sp2, cp2) = q[1].sin_cos();
        let (v1, v2, v4) = (v[0], v[1], v[6]);
        out[0] = d.l1 * sp1 * v1 * v1 + r * sp2 * v2 * v2 - 2.0 * v2 * cp2 * v4;
        out[1] = -d.l1 * cp1 * v1 * v1 - r * cp2 * v2 * v2 - 2.0 * v2 * sp2 * v4;
        out[2] = 0.0;
    }
    fn initial_state(&self) -> State {
        State::mechanical(0.0, self.y0[0..7].to_vec(), self.y0[7..14].to_vec(), 3)
    }
    /// The published state at t = 0.1 (positions, velocities, multipliers; the Test Set
    /// sign convention `M w − f + Φ_qᵀλ = 0` is this workspace's). Scored on the seven
    /// positions as the Test Set driver does. The two published references differ by up
    /// to 3.6e-6 relative in the elastic coordinates; converged projected-Gauss runs meet
    /// the Test Set one to ≤ 4e-9 (x₃: the 1.2e-9 start offset), so scd saturates near 8.5
    /// (`tests/slider_crank.rs` in driftlab-methods, datasets/README.md).
    fn reference(&self) -> Option<ReferenceSolution> {
        let (r, provenance) = self.reference.as_ref()?;
        Some(ReferenceSolution {
            t: 0.1,
            state: ExactSolution {
                q: r[0..7].to_vec(),
                v: r[7..14].to_vec(),
                lambda: r[21..24].to_vec(),
            },
            scd: ScdComponents::Positions,
            provenance: format!("IVP Test Set crank: {provenance}"),
        })
    }
    /// The Test Set reference (`reference = "testset"`) is met by converged runs here to
    /// ≤ 4e-9 relative in every scored position (x₃: the documented 1.2e-9 start offset;
    /// [`ProblemInfo::reference`], `datasets/README.md`): `accuracy = 4e-9`, scd saturates
    /// near 8.5. The older MEBDFI-driver reference differs from it by up to 3.6e-6
    /// relative (q₃, q₄) and converged runs side with the Test Set one: `accuracy =
    /// 4e-6`. Both are for the Test Set's smooth start with linear stiffness and no
    /// damping: `start = "rigid"`, `nonlinear_stiffness` or `damping` are outside (no
    /// published reference; `reference()` gives none). `t_end` is free (scd is scored
    /// only by a run that ends at 0.1); `tangent_stiffness` changes no motion.
    fn reference_domain(&self, _t_end: f64) -> driftlab_core::ReferenceDomain {
        use driftlab_core::ReferenceDomain;
        let p = &self.p;
        let changed = [
            (p.start != CrankStart::Smooth, "start = \"rigid\""),
            (p.nonlinear_stiffness, "nonlinear_stiffness = true"),
            (p.damping, "damping = true"),
        ];
        if let Some((_, what)) = changed.iter().find(|(c, _)| *c) {
            return ReferenceDomain::Outside(format!(
                "{what}: the published references at t = 0.1 are for the Test Set's smooth start with linear stiffness and no damping; use the defaults for an scd score"
            ));
        }
        match p.reference {
            CrankReference::Testset => ReferenceDomain::Valid {
                accuracy: 4e-9,
                basis: "IVP Test Set crank reference at t = 0.1 (MEBDFI, atol = rtol = 1e-14): converged runs meet it to ≤ 4e-9 \
                        relative in every position (datasets/README.md); scd scores positions only"
                    .into(),
            },
            CrankReference::MebdfiDriver => ReferenceDomain::Valid {
                accuracy: 4e-6,
                basis: "the MEBDFI driver's older reference at t = 0.1: off the Test Set one (which converged runs meet to 4e-9) \
                        by up to 3.6e-6 relative in q₃, q₄ (datasets/README.md)"
                    .into(),
            },
        }
    }
    fn constraint_hessian(&self) -> Option<&dyn ConstraintHessian> {
        Some(self)
    }
    fn tangent(&self) -> Option<&dyn TangentMatrices> {
        // Offered only when the spec asks for it (`tangent_stiffness`), so that the
        // fixed-point iteration without it can be measured too.
        self.p
            .tangent_stiffness
            .then_some(self as &dyn TangentMatrices)
    }
}

impl ConstraintHessian for SliderCrank {
    fn pattern(&self) -> SparsityPattern {
        SparsityPattern::new(7, 7, vec![(0, 0), (1, 1), (6, 1)])
    }
    fn values(&self, _t: f64, q: &[f64], lambda: &[f64], out: &mut [f64]) {
        let d = &self.d;
        let r = d.l2 + q[6];
        let (sp1, cp1) = q[0].sin_cos();
        let (sp2, cp2) = q[1].sin_cos();
        let (l1, l2) = (lambda[0], lambda[1]);
        out[0] = d.l1 * (-l1 * sp1 + l2 * cp1);
        out[1] = r * (-l1 * sp2 + l2 * cp2);
        out[2] = l1 * cp2 + l2 * sp2;
    }
}

impl TangentMatrices for SliderCrank {
    fn pattern(&self) -> SparsityPattern {
        let mut e = Vec::new();
        for i in 3..7 {
            for j in 3..=i {
                e.push((i, j));
            }
        }
        SparsityPattern::new(7, 7, e)
    }
    /// `K_t = K_q − φ₂'² M_q (+ ∇²V_nl)` and `C_t = sym(D_q)` on the elastic block: the
    /// exact derivative of the elastic forces in q and the symmetric part in q' (the
    /// gyroscopic `2ρφ₂'B_q` is skew and the rigid couplings are left out).
    fn values(&self, _t: f64, q: &[f64], v: &[f64], k: &mut [f64], c: &mut [f64]) {
        let fe = &self.fe;
        let hess = self
            .p
            .nonlinear_stiffness
            .then(|| self.nonlinear_hessian(&q[3..7]));
        let w2 = v[1] * v[1];
        let mut idx = 0;
        for i in 0..4 {
            for j in 0..=i {
                k[idx] = fe.kq[i][j] - w2 * fe.mq[i][j] + hess.map_or(0.0, |h| h[i][j]);
                c[idx] = 0.5 * (fe.dq[i][j] + fe.dq[j][i]);
                idx += 1;
            }
        }
    }
}

impl SliderCrank {
    /// Coefficients of the nonlinear stiffness term: `k = ½ E b h π² / L₂²`,
    /// `c = 80 / (9π²)`.
    fn nonlinear_coefficients(&self) -> (f64, f64) {
        let d = &self.d;
        (
            0.5 * d.e * d.b * d.hh / (d.l2 * d.l2) * d.pi * d.pi,
            80.0 / (d.pi * d.pi * 9.0),
        )
    }

    /// Gradient of the nonlinear stiffness potential
    /// `V = k(½q₁²q₄ + 2q₂²q₄ − c q₁q₂(2q₄ − 4q₃))`.
    fn nonlinear_gradient(&self, q: &[f64]) -> [f64; 4] {
        let (k, c) = self.nonlinear_coefficients();
        let s = -4.0 * q[2] + 2.0 * q[3];
        [
            k * (q[0] * q[3] - c * q[1] * s),
            k * (4.0 * q[1] * q[3] - c * q[0] * s),
            k * 4.0 * c * q[0] * q[1],
            k * (0.5 * q[0] * q[0] + 2.0 * q[1] * q[1] - 2.0 * c * q[0] * q[1]),
        ]
    }

    /// Hessian of the same potential.
    fn nonlinear_hessian(&self, q: &[f64]) -> [[f64; 4]; 4] {
        let (k, c) = self.nonlinear_coefficients();
        let s = -4.0 * q[2] + 2.0 * q[3];
        let h01 = -c * s;
        let h02 = 4.0 * c * q[1];
        let h03 = q[0] - 2.0 * c * q[1];
        let h12 = 4.0 * c * q[0];
        let h13 = 4.0 * q[1] - 2.0 * c * q[0];
        let m = [
            [q[3], h01, h02, h03],
            [h01, 4.0 * q[3], h12, h13],
            [h02, h12, 0.0, 0.0],
            [h03, h13, 0.0, 0.0],
        ];
        m.map(|row| row.map(|x| k * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crank(nonlinear: bool) -> SliderCrank {
        let p = SliderCrankParams {
            nonlinear_stiffness: nonlinear,
            damping: true,
            ..Default::default()
        };
        SliderCrank::new(p).expect("embedded dataset parses")
    }

    /// The tangent stiffness is the exact derivative of the elastic forces in the
    /// elastic coordinates: compared with central differences at a deflected state.
    #[test]
    fn tangent_stiffness_matches_finite_differences() {
        for nonlinear in [false, true] {
            let s = crank(nonlinear);
            let q = [0.3, -0.1, 0.42, 2e-4, -5e-5, 1e-5, 2e-5];
            let v = [150.0, -60.0, -8.0, 0.3, -0.01, 0.002, 0.001];
            let tm = s.tangent().expect("tangent");
            let pat = tm.pattern();
            let (mut k, mut c) = (vec![0.0; pat.nnz()], vec![0.0; pat.nnz()]);
            tm.values(0.0, &q, &v, &mut k, &mut c);
            for (idx, &(i, j)) in pat.entries.iter().enumerate() {
                let e = 1e-7;
                let (mut qp, mut qm) = (q, q);
                qp[j] += e;
                qm[j] -= e;
                let (mut fp, mut fm) = ([0.0; 7], [0.0; 7]);
                s.forces(0.0, &qp, &v, &mut fp);
                s.forces(0.0, &qm, &v, &mut fm);
                let fd = -(fp[i] - fm[i]) / (2.0 * e);
                let scale = k[idx].abs().max(1.0);
                assert!(
                    (fd - k[idx]).abs() <= 1e-6 * scale,
                    "K_t({i},{j}) = {} vs finite differences {fd} (nonlinear = {nonlinear})",
                    k[idx]
                );
            }
        }
    }

    /// The elastic frequencies quoted in the module doc: the generalized eigenvalues of
    /// (K_q, M_q) — diagonal for the two bending modes, a 2×2 pencil for the axial pair.
    #[test]
    fn elastic_frequencies() {
        let s = crank(false);
        let (k, m) = (&s.fe.kq, &s.fe.mq);
        let bending = [0, 1].map(|i| (k[i][i] / m[i][i]).sqrt());
        // det(K − ω²M) = 0 on the axial block: a ω⁴ + b ω² + c = 0.
        let a = m[2][2] * m[3][3] - m[2][3] * m[3][2];
        let b = -(k[2][2] * m[3][3] + k[3][3] * m[2][2] - k[2][3] * m[3][2] - k[3][2] * m[2][3]);
        let c = k[2][2] * k[3][3] - k[2][3] * k[3][2];
        let disc = (b * b - 4.0 * a * c).sqrt();
        let axial = [(-b - disc) / (2.0 * a), (-b + disc) / (2.0 * a)].map(f64::sqrt);
        assert!((1.2e3..1.4e3).contains(&bending[0]), "bending {bending:?}");
        assert!((5.0e3..5.2e3).contains(&bending[1]), "bending {bending:?}");
        assert!((6.7e3..6.9e3).contains(&axial[0]), "axial {axial:?}");
        assert!((2.4e4..2.6e4).contains(&axial[1]), "axial {axial:?}");
    }

    #[test]
    fn initial_value_differs_from_the_published_one_only_beyond_its_printed_digits() {
        let s = crank(false);
        let st = s.initial_state();
        // x₃ = 0.450016933 as printed; the consistent value is 0.4500169327969.
        let dx = (st.q[2] - 0.450016933).abs();
        assert!(dx > 1e-10 && dx < 3e-10, "x₃ moved by {dx:e}");
        let ds = Dataset::parse("ivptestset_crank.json", DATASET).expect("dataset");
        let y0 = ds.vec(&["y0_option1_consistent"]).expect("y0");
        for i in (0..7).filter(|&i| i != 2) {
            // Bit-identical: the published value itself.
            assert_eq!(
                st.q[i].to_bits(),
                y0[i].to_bits(),
                "position {i} must be the published value"
            );
        }
        // Velocities move by the mass-orthogonal projection only: by less than half a unit
        // in the last printed digit of φ₂' = −74.9957670 (5e-8), which is what the 1.2e-8
        // residual in Φ₁' = L₁φ₁' + (L₂ + q₄)φ₂' amounts to.
        for i in 0..7 {
            let dv = (st.v[i] - y0[7 + i]).abs();
            assert!(dv < 5e-8, "velocity {i} moved by {dv:e}");
        }
    }
}
