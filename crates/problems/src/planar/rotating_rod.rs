//! `rotating-rod`: a bead of mass m sliding without friction on a straight rod that spins
//! about the origin at a prescribed constant rate Ω, no gravity — a **rheonomic**
//! constraint, so `Φ_t`, `Φ_qt` and `Φ_tt` all enter (seed 001 §3.2: time-dependent
//! constraints; the classical bead-on-a-rotating-wire, e.g. Goldstein, *Classical
//! Mechanics*, 3rd ed., §1.6 / §2.6).
//!
//! ```text
//! q = (x, y),  M = m I,  f = 0,   Φ(t, q) = y cos Ωt − x sin Ωt = 0
//! Φ_q = [−sin Ωt, cos Ωt],   Φ_t = −Ω (x cos Ωt + y sin Ωt)
//! γ = −2 Φ_qt v − Φ_tt = 2Ω (ẋ cos Ωt + ẏ sin Ωt) + Ω² (y cos Ωt − x sin Ωt)
//! ```
//!
//! Exact solution for a release at rest relative to the rod at radius r₀: with the radial
//! balance r̈ − Ω² r = 0, `r(t) = r₀ cosh Ωt`, `(x, y) = r (cos Ωt, sin Ωt)`; the rod
//! pushes with the transverse force `m (2ṙΩ)`, and since `Φ_q` is the unit transverse
//! vector, `λ(t) = −2 m r₀ Ω² sinh Ωt`. Energy is **not** conserved (the rod does work);
//! the Jacobi integral in the rotating frame, `E_J = ½ m (ṙ² − Ω² r²) = −½ m Ω² r₀²`, is,
//! and it is what [`MechanicalSystem::energy`] returns here.

use crate::domain::{judge, part, EPS, SAFETY};
use crate::entry::{Problem, ProblemEntry};
use crate::planar::circle;
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{ConstraintHessian, Dims};
use driftlab_core::{
    ExactSolution, MechanicalSystem, ParamError, ProblemInfo, ReferenceDomain, SparsityPattern,
    State,
};
use serde::{Deserialize, Serialize};

/// Parameters of [`RotatingRod`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RotatingRodParams {
    /// Bead mass (kg).
    pub m: f64,
    /// Spin rate Ω of the rod (rad/s).
    pub omega: f64,
    /// Release radius r₀ (m) (at rest relative to the rod).
    pub r0: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for RotatingRodParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            omega: 1.0,
            r0: 1.0,
            t_end: 2.0,
        }
    }
}

/// The bead on a spinning rod.
#[derive(Clone, Debug)]
pub struct RotatingRod {
    p: RotatingRodParams,
}

impl RotatingRod {
    /// Build and validate.
    pub fn new(p: RotatingRodParams) -> Result<Self, ParamError> {
        let id = ID;
        bounded_positive(id, "m", p.m)?;
        bounded_positive(id, "omega", p.omega)?;
        bounded_positive(id, "r0", p.r0)?;
        bounded_positive(id, "t_end", p.t_end)?;
        Ok(Self { p })
    }
}

/// The catalog id `rotating-rod`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "rotating-rod";

/// Catalog entry `rotating-rod`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "bead on a rod spinning at constant Ω (rheonomic Φ), exact r = r₀ cosh Ωt",
        build: |t| {
            Ok(Problem::Mechanical(Box::new(RotatingRod::new(
                params::parse("problem", ID, t)?,
            )?)))
        },
        defaults: params::defaults::<RotatingRodParams>,
    }
}

impl MechanicalSystem for RotatingRod {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!(
                "Bead on a rod spinning at Ω = {} rad/s (m = {}, released at rest on the rod at r₀ = {} m, no gravity)",
                p.omega, p.m, p.r0
            ),
            equations: "m q'' = −Φ_qᵀλ,  Φ = y cos Ωt − x sin Ωt,  Φ_q = [−sin Ωt, cos Ωt],  \
                        Φ_t = −Ω(x cos Ωt + y sin Ωt),  γ = 2Ω(ẋ cos Ωt + ẏ sin Ωt) + Ω²Φ;  \
                        exact r = r₀ cosh Ωt,  λ = −2mr₀Ω² sinh Ωt,  E_J = ½m(ṙ² − Ω²r²)"
                .into(),
            citation: "seed 001 §3.2 (rheonomic constraints, Φ_t and Φ_tt in γ); bead on a rotating wire, \
                       H. Goldstein, Classical Mechanics, 3rd ed. (2002), §2.6"
                .into(),
            tags: vec![
                "planar".into(),
                "rheonomic".into(),
                "exact-solution".into(),
                "index-3".into(),
            ],
            index: 3,
            t_end: p.t_end,
            reference: "exact: r₀ cosh Ωt (closed form)".into(),
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
        out.iter_mut().for_each(|x| *x = 0.0);
    }
    fn constraints(&self, t: f64, q: &[f64], out: &mut [f64]) {
        let (s, c) = (self.p.omega * t).sin_cos();
        out[0] = q[1] * c - q[0] * s;
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        SparsityPattern::new(1, 2, vec![(0, 0), (0, 1)])
    }
    fn jacobian(&self, t: f64, _q: &[f64], out: &mut [f64]) {
        let (s, c) = (self.p.omega * t).sin_cos();
        out[0] = -s;
        out[1] = c;
    }
    fn phi_t(&self, t: f64, q: &[f64], out: &mut [f64]) {
        let (s, c) = (self.p.omega * t).sin_cos();
        out[0] = -self.p.omega * (q[0] * c + q[1] * s);
    }
    fn curvature(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        let w = self.p.omega;
        let (s, c) = (w * t).sin_cos();
        out[0] = 2.0 * w * (v[0] * c + v[1] * s) + w * w * (q[1] * c - q[0] * s);
    }
    /// The Jacobi integral `½ m (ṙ² − Ω² r²)` (conserved; the kinetic energy is not).
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let r2 = q[0] * q[0] + q[1] * q[1];
        let rdot2 = (q[0] * v[0] + q[1] * v[1]).powi(2) / r2;
        Some(0.5 * self.p.m * (rdot2 - self.p.omega * self.p.omega * r2))
    }
    fn energy_scale(&self) -> f64 {
        0.5 * self.p.m * (self.p.omega * self.p.r0).powi(2)
    }
    fn initial_state(&self) -> State {
        State::mechanical(
            0.0,
            vec![self.p.r0, 0.0],
            vec![0.0, self.p.r0 * self.p.omega],
            1,
        )
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        let RotatingRodParams {
            m, omega: w, r0, ..
        } = self.p;
        let (s, c) = (w * t).sin_cos();
        let (r, rdot) = (r0 * (w * t).cosh(), r0 * w * (w * t).sinh());
        Some(ExactSolution {
            q: vec![r * c, r * s],
            v: vec![rdot * c - r * w * s, rdot * s + r * w * c],
            lambda: vec![-2.0 * m * r0 * w * w * (w * t).sinh()],
        })
    }
    fn constraint_hessian(&self) -> Option<&dyn ConstraintHessian> {
        Some(self)
    }
    /// The closed form evaluated in f64: the argument `x = Ωt` is rounded (relative ε/2),
    /// which puts ≈ ε x into cosh, sinh, cos and sin relative to their size, and every
    /// function and product adds a few ε. So q is good to `8ε(1 + Ωt_end) r₀ cosh Ωt_end`,
    /// v to the same factor times `√2 r₀Ω cosh Ωt_end` (|v| = r₀Ω√(sinh² + cosh²)) and
    /// λ times `2mr₀Ω² cosh Ωt_end` (safety 8; everything grows monotonically, so the
    /// values at t_end bound the interval). The solution grows as `e^{Ωt}`: outside when
    /// `cosh Ωt_end` overflows f64 (`Ω·t_end > 710.48`) or any of these magnitudes does.
    /// (The Jacobi integral `½m(ṙ² − Ω²r²)` evaluated along it cancels: its own rounding
    /// is ≈ `ε m Ω² r²`, i.e. `2ε cosh² Ωt` relative to its value — measured 1.9e-6 at
    /// Ωt = 12 and 1e-3 at 15 on this very solution, so an energy self-check at 1e-6
    /// rejects it from Ωt ≈ 12 on without the reference being any worse.)
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        let RotatingRodParams {
            m, omega: w, r0, ..
        } = self.p;
        let x = w * t_end;
        let ch = x.cosh();
        if !ch.is_finite() {
            return ReferenceDomain::Outside(format!(
                "Ω·t_end = {w} · {t_end} = {x:.4e} > 710.48: cosh Ωt overflows f64 (r = r₀ cosh Ωt); shorten t_end or lower omega"
            ));
        }
        let growth = SAFETY * EPS * (1.0 + x);
        let (rq, rv, rl) = (
            r0 * ch,
            r0 * w * std::f64::consts::SQRT_2 * ch,
            2.0 * m * r0 * w * w * ch,
        );
        judge(
            &format!(
                "r₀ cosh Ωt (cos Ωt, sin Ωt) with Ω·t_end = {x:.4e}: 8ε(1 + Ωt_end)·(r₀, √2 r₀Ω, 2mr₀Ω²)·cosh Ωt_end (argument rounding grows with Ωt; safety 8)"
            ),
            &[
                part("q", growth * rq, rq),
                part("v", growth * rv, rv),
                part("λ", growth * rl, rl),
            ],
            "shorten t_end or lower omega, r0 or m (the motion grows as e^{Ωt})",
        )
    }
}

impl ConstraintHessian for RotatingRod {
    /// `Φ_q` does not depend on q: the contraction is zero.
    fn pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(2)
    }
    fn values(&self, _t: f64, _q: &[f64], _lambda: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = 0.0);
    }
}
