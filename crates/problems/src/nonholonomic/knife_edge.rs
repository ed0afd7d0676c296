//! `knife-edge`: a knife edge (skate) on a plane inclined at angle α, the classical
//! nonholonomic example (seed 001 §3.8; Neimark & Fufaev, *Dynamics of Nonholonomic
//! Systems*, 1972, ch. I; Bloch, *Nonholonomic Mechanics and Control*, 2nd ed., §1.6).
//! The edge may not slide sideways: one **nonholonomic** row `A(q) v = 0`.
//!
//! ```text
//! q = (x, y, θ) (x down the slope),  M = diag(m, m, J),  f = (m g sin α, 0, 0)
//! A(q) = [sin θ, −cos θ, 0]    (ẋ sin θ − ẏ cos θ = 0),   γ = −θ̇ (ẋ cos θ + ẏ sin θ)
//! H = ½ m (ẋ² + ẏ²) + ½ J θ̇² − m g sin α · x   (conserved: the constraint does no work)
//! ```
//!
//! Exact solution (d'Alembert–Lagrange equations; Neimark–Fufaev) for a start at the
//! origin with θ(0) = 0, forward speed 0 and spin θ̇(0) = ω: `θ = ωt`, forward speed
//! `u = (g sin α / ω) sin ωt`, `x = (g sin α / 4ω²)(1 − cos 2ωt)`,
//! `y = (g sin α / 2ω)(t − sin 2ωt / 2ω)`, multiplier `λ = 2 m g sin α sin ωt` (from the
//! normal balance `−m u θ̇ = m g sin α sin θ − λ`). The skate drifts sideways down the
//! slope on average while oscillating — it never slides down.
//!
//! The row is not integrable: [`crate::frobenius::classify_row`] finds `ω ∧ dω ≠ 0`
//! (seed 001 §3.8.1). The *vakonomic* equations of the same system (seed 001 §3.8.2)
//! give a different motion: problem `knife-edge-vakonomic`.

use crate::domain::{self, judge, part, EPS, SAFETY};
use crate::entry::{Problem, ProblemEntry};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{
    Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo, ReferenceDomain,
    SparsityPattern, State,
};
use serde::{Deserialize, Serialize};

/// The no-sideways-slip row of a blade or wheel at heading `q[2]` (`q = (x, y, θ, …)`):
/// `A = [sin θ, −cos θ]` on (x, y), values in the pattern order `(0, 0), (0, 1)`. Shared
/// by the knife edge and the parking unicycle.
pub(crate) fn no_slip_row(q: &[f64], out: &mut [f64]) {
    let (s, c) = q[2].sin_cos();
    out[0] = s;
    out[1] = -c;
}

/// The pattern of that row on `q = (x, y, θ)`: one row, `(0, 0), (0, 1)`.
pub(crate) fn no_slip_pattern() -> SparsityPattern {
    SparsityPattern::new(1, 3, vec![(0, 0), (0, 1)])
}

/// Its curvature `γ = −(A_q v) v = −θ̇ (ẋ cos θ + ẏ sin θ)`.
pub(crate) fn no_slip_curvature(q: &[f64], v: &[f64], out: &mut [f64]) {
    let (s, c) = q[2].sin_cos();
    out[0] = -v[2] * (v[0] * c + v[1] * s);
}

/// Parameters of the knife edge (shared with the vakonomic variant).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KnifeEdgeParams {
    /// Mass (kg).
    pub m: f64,
    /// Moment of inertia about the vertical axis [kg m²].
    pub inertia: f64,
    /// Gravity [m/s²].
    pub g: f64,
    /// Inclination of the plane (degrees).
    pub alpha_deg: f64,
    /// Initial spin θ̇(0) = ω (rad/s) (nonzero for the closed form).
    pub spin: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for KnifeEdgeParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            inertia: 0.1,
            g: 9.81,
            alpha_deg: 30.0,
            spin: 1.0,
            t_end: 10.0,
        }
    }
}

impl KnifeEdgeParams {
    /// Validate for problem `id`.
    pub fn validate(&self, id: &str) -> Result<(), ParamError> {
        bounded_positive(id, "m", self.m)?;
        bounded_positive(id, "inertia", self.inertia)?;
        bounded_positive(id, "g", self.g)?;
        bounded_positive(id, "spin", self.spin)?;
        bounded_positive(id, "t_end", self.t_end)?;
        if !(self.alpha_deg.is_finite() && self.alpha_deg.abs() < 90.0) {
            return Err(ParamError::OutOfRange {
                id: id.into(),
                field: "alpha_deg",
                value: self.alpha_deg,
                fix: "give an inclination with |α| < 90°".into(),
            });
        }
        Ok(())
    }
    /// `g sin α`, the down-slope acceleration.
    pub fn slope_g(&self) -> f64 {
        self.g * self.alpha_deg.to_radians().sin()
    }
}

/// The nonholonomic knife edge.
#[derive(Clone, Debug)]
pub struct KnifeEdge {
    p: KnifeEdgeParams,
}

impl KnifeEdge {
    /// Build and validate.
    pub fn new(p: KnifeEdgeParams) -> Result<Self, ParamError> {
        p.validate(KNIFE_EDGE_ID)?;
        Ok(Self { p })
    }
}

/// The catalog id `knife-edge`, written once: the entry, the parameter parse and the messages use it.
const KNIFE_EDGE_ID: &str = "knife-edge";

/// The catalog id `knife-edge-vakonomic`, written once: the entry, the parameter parse and the messages use it.
const KNIFE_EDGE_VAKONOMIC_ID: &str = "knife-edge-vakonomic";

/// Catalog entry `knife-edge`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: KNIFE_EDGE_ID,
        summary: "skate on an inclined plane: one nonholonomic row A(q)v = 0, exact Neimark–Fufaev solution",
        build: |t| Ok(Problem::Mechanical(Box::new(KnifeEdge::new(params::parse("problem", KNIFE_EDGE_ID, t)?)?))),
        defaults: params::defaults::<KnifeEdgeParams>,
    }
}

impl MechanicalSystem for KnifeEdge {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: KNIFE_EDGE_ID.into(),
            title: format!(
                "Knife edge on a plane inclined at {}° (m = {}, J = {}, θ̇₀ = {} rad/s): nonholonomic",
                p.alpha_deg, p.m, p.inertia, p.spin
            ),
            equations: "M q'' = f − A(q)ᵀλ, A = [sin θ, −cos θ, 0], A q' = 0;  γ = −θ̇(ẋ cos θ + ẏ sin θ);  exact θ = ωt, \
                        x = (g sin α/4ω²)(1 − cos 2ωt), y = (g sin α/2ω)(t − sin 2ωt/2ω), λ = 2mg sin α sin ωt"
                .into(),
            citation: "seed 001 §3.8; Ju. I. Neimark & N. A. Fufaev, Dynamics of Nonholonomic Systems (AMS 1972), ch. I; \
                       A. M. Bloch, Nonholonomic Mechanics and Control, 2nd ed. (2015), §1.6"
                .into(),
            tags: vec!["planar".into(), "nonholonomic".into(), "conservative".into(), "exact-solution".into(), "index-2".into()],
            index: 2,
            t_end: p.t_end,
            reference: "exact (closed form)".into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims { n: 3, m: 1 }
    }
    fn nonholonomic_rows(&self) -> usize {
        1
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(3)
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        out.copy_from_slice(&[self.p.m, self.p.m, self.p.inertia]);
    }
    /// No position-level constraint: the row is nonholonomic.
    fn constraints(&self, _t: f64, _q: &[f64], out: &mut [f64]) {
        out[0] = 0.0;
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        no_slip_pattern()
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        no_slip_row(q, out);
    }
    fn curvature(&self, _t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        no_slip_curvature(q, v, out);
    }
    fn forces(&self, _t: f64, _q: &[f64], _v: &[f64], out: &mut [f64]) {
        out.copy_from_slice(&[self.p.m * self.p.slope_g(), 0.0, 0.0]);
    }
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let p = &self.p;
        Some(
            0.5 * p.m * (v[0] * v[0] + v[1] * v[1]) + 0.5 * p.inertia * v[2] * v[2]
                - p.m * p.slope_g() * q[0],
        )
    }
    fn energy_scale(&self) -> f64 {
        0.5 * self.p.inertia * self.p.spin * self.p.spin
    }
    fn initial_state(&self) -> State {
        State::mechanical(0.0, vec![0.0; 3], vec![0.0, 0.0, self.p.spin], 1)
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        let p = &self.p;
        let (gs, w) = (p.slope_g(), p.spin);
        let s = (w * t).sin();
        let (s2, c2) = (2.0 * w * t).sin_cos();
        Some(ExactSolution {
            q: vec![
                gs / (4.0 * w * w) * (1.0 - c2),
                gs / (2.0 * w) * (t - s2 / (2.0 * w)),
                w * t,
            ],
            v: vec![gs / (2.0 * w) * s2, gs / w * s * s, w],
            lambda: vec![2.0 * p.m * gs * s],
        })
    }
    /// The closed form in f64, with `X = |g sin α|/(4ω²)` and the phase `φ = ω t_end`:
    /// `x = 2X sin² ωt` is computed as `X(1 − cos 2ωt)` and `y` as
    /// `(g sin α/2ω)(t − sin 2ωt/2ω)`, both differences that cancel, so their error is
    /// absolute, `≈ ε X (2 + 4φ)` (the rounded argument adds `ε 2ωt`), and `θ = ωt` is good
    /// to `ε φ`: q to `8ε(4X(1 + φ) + φ)`. The velocities and λ have no cancellation:
    /// `16ε(1 + 2φ)` and `8ε(2 + φ)` relative to their scales (safety 8). The scales are
    /// the motion's own over `[0, t_end]` (θ = φ, `max x = 2X sin² min(φ, π/2)`,
    /// `y(t_end)`; `ω`, `|g sin α|/2ω`, `|g sin α|/ω`; `2m|g sin α|`). Outside when a bound
    /// exceeds 1e-4 of its scale: a slow spin (`ω t_end ≲ 6e-6`: the cancelling terms
    /// are `1/(ωt)²` times the motion) or a lost phase (`ω t_end ≳ 5e10`).
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        let p = &self.p;
        let (gs, w) = (p.slope_g().abs(), p.spin);
        let phi = w * t_end;
        let x4 = gs / (4.0 * w * w);
        let half = std::f64::consts::FRAC_PI_2;
        let scale_q = phi
            .max(2.0 * x4 * phi.min(half).sin().powi(2))
            .max(gs / (2.0 * w) * t_end * domain::one_minus_sinc(2.0 * phi));
        let scale_v = w
            .max(gs / (2.0 * w) * (2.0 * phi).min(half).sin())
            .max(gs / w * phi.min(half).sin().powi(2));
        let scale_l = 2.0 * p.m * gs * phi.min(half).sin();
        judge(
            &format!(
                "Neimark–Fufaev closed form with ω·t_end = {phi:.4e}, X = g sin α/4ω² = {x4:.3e}: q 8ε(4X(1 + ωt_end) + ωt_end) (cancelling differences), v 16ε(1 + 2ωt_end)·|v|, λ 8ε(2 + ωt_end)·|λ| (safety 8)"
            ),
            &[
                part("q", SAFETY * EPS * (4.0 * x4 * (1.0 + phi) + phi), scale_q),
                part("v", 2.0 * SAFETY * EPS * (1.0 + 2.0 * phi) * scale_v, scale_v),
                part("λ", SAFETY * EPS * (2.0 + phi) * scale_l, scale_l),
            ],
            "raise spin (a slow spin makes x and y differences of 1/ω²-sized terms) or, for a lost phase, shorten t_end",
        )
    }
}

/// The **vakonomic** equations of the same knife edge (seed 001 §3.8.2: the constraint
/// is put into the Lagrangian, `L̃ = T − V + μ (ẋ sin θ − ẏ cos θ)`, and the Euler–
/// Lagrange equations taken with μ(t) as a new unknown). With the forward speed
/// `u = ẋ cos θ + ẏ sin θ` and `ω = θ̇` they reduce to the ODE
///
/// ```text
/// x' = u cos θ,  y' = u sin θ,  θ' = ω,
/// u' = g sin α cos θ − μ ω / m,   ω' = μ u / J,   μ' = m g sin α sin θ + m u ω
/// ```
///
/// (nonholonomic motion: the same with μ ≡ 0 and ω constant). Stated as a semi-explicit
/// system with no algebraic variables; from the knife edge's initial state with μ(0) = 0
/// the two motions separate at once (μ' ≠ 0).
pub struct KnifeEdgeVakonomic {
    p: KnifeEdgeParams,
}

/// Catalog entry `knife-edge-vakonomic`.
pub fn vakonomic_entry() -> ProblemEntry {
    ProblemEntry {
        id: KNIFE_EDGE_VAKONOMIC_ID,
        summary: "vakonomic equations of the knife edge (seed 001 §3.8.2): a different motion from the nonholonomic one",
        build: |t| {
            let p: KnifeEdgeParams = params::parse("problem", KNIFE_EDGE_VAKONOMIC_ID, t)?;
            p.validate(KNIFE_EDGE_VAKONOMIC_ID)?;
            Ok(Problem::SemiExplicit(Box::new(KnifeEdgeVakonomic { p })))
        },
        defaults: params::defaults::<KnifeEdgeParams>,
    }
}

impl driftlab_core::SemiExplicitDae for KnifeEdgeVakonomic {
    fn info(&self) -> ProblemInfo {
        ProblemInfo {
            id: KNIFE_EDGE_VAKONOMIC_ID.into(),
            title: format!("Knife edge on a {}° incline, vakonomic equations", self.p.alpha_deg),
            equations: "x' = u cos θ, y' = u sin θ, θ' = ω, u' = g sin α cos θ − μω/m, ω' = μu/J, μ' = mg sin α sin θ + muω".into(),
            citation: "seed 001 §3.8.2 (vakonomic vs nonholonomic); V. V. Kozlov (1983); A. M. Bloch, Nonholonomic \
                       Mechanics and Control, 2nd ed., §5.2"
                .into(),
            tags: vec!["planar".into(), "vakonomic".into(), "ode".into()],
            index: 0,
            t_end: self.p.t_end,
            reference: "none (compare with knife-edge)".into(),
        }
    }
    fn dims(&self) -> (usize, usize) {
        (6, 0)
    }
    fn f(&self, _t: f64, x: &[f64], _z: &[f64], out: &mut [f64]) {
        let p = &self.p;
        let (s, c) = x[2].sin_cos();
        let (u, w, mu) = (x[3], x[4], x[5]);
        out[0] = u * c;
        out[1] = u * s;
        out[2] = w;
        out[3] = p.slope_g() * c - mu * w / p.m;
        out[4] = mu * u / p.inertia;
        out[5] = p.m * p.slope_g() * s + p.m * u * w;
    }
    fn g(&self, _t: f64, _x: &[f64], _z: &[f64], _out: &mut [f64]) {}
    fn jacobians(&self, _t: f64, x: &[f64], _z: &[f64], out: &mut driftlab_core::Index1Jacobians) {
        let p = &self.p;
        let (s, c) = x[2].sin_cos();
        let (u, w, mu) = (x[3], x[4], x[5]);
        let gs = p.slope_g();
        let fx = &mut out.fx;
        fx.iter_mut().for_each(|v| *v = 0.0);
        let mut set = |i: usize, j: usize, v: f64| fx[i * 6 + j] = v;
        set(0, 2, -u * s);
        set(0, 3, c);
        set(1, 2, u * c);
        set(1, 3, s);
        set(2, 4, 1.0);
        set(3, 2, -gs * s);
        set(3, 4, -mu / p.m);
        set(3, 5, -w / p.m);
        set(4, 3, mu / p.inertia);
        set(4, 5, u / p.inertia);
        set(5, 2, p.m * gs * c);
        set(5, 3, p.m * w);
        set(5, 4, p.m * u);
    }
    fn initial_state(&self) -> State {
        State {
            t: 0.0,
            q: vec![0.0, 0.0, 0.0, 0.0, self.p.spin, 0.0],
            v: Vec::new(),
            lambda: Vec::new(),
            a: Vec::new(),
        }
    }
}
