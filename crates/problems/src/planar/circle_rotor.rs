//! `circle-rotor`: a free point mass constrained to a circle of radius R, no gravity,
//! launched tangentially at speed v₀ — uniform circular motion with a constant multiplier.
//! The simplest closed-form check of the velocity-dependent curvature term γ and of a
//! constant λ (any drift in λ is the method's).
//!
//! ```text
//! m q'' = −Φ_qᵀ λ,   Φ = x² + y² − R²,   Φ_q = [2x, 2y],   γ = −2|v|²
//! exact: ω = v₀/R,  q = R (cos ωt, sin ωt),  v = v₀ (−sin ωt, cos ωt),  λ = m ω² / 2
//! ```
//!
//! (From m a = −m ω² q = −2 q λ.) Energy `H = ½ m |v|²` is conserved.

use crate::domain::{judge, part, EPS, SAFETY};
use crate::entry::{Problem, ProblemEntry};
use crate::planar::circle;
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{
    ConstraintHessian, Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo,
    ReferenceDomain, SparsityPattern, State,
};
use serde::{Deserialize, Serialize};

/// Parameters of [`CircleRotor`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CircleRotorParams {
    /// Mass (kg).
    pub m: f64,
    /// Circle radius R (m).
    pub radius: f64,
    /// Initial (and constant) speed v₀ (m/s).
    pub speed: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for CircleRotorParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            radius: 1.0,
            speed: 2.0,
            t_end: 5.0,
        }
    }
}

/// A mass on a circle without gravity.
#[derive(Clone, Debug)]
pub struct CircleRotor {
    p: CircleRotorParams,
}

impl CircleRotor {
    /// Build and validate.
    pub fn new(p: CircleRotorParams) -> Result<Self, ParamError> {
        let id = ID;
        bounded_positive(id, "m", p.m)?;
        bounded_positive(id, "radius", p.radius)?;
        bounded_positive(id, "speed", p.speed)?;
        bounded_positive(id, "t_end", p.t_end)?;
        Ok(Self { p })
    }
}

/// The catalog id `circle-rotor`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "circle-rotor";

/// Catalog entry `circle-rotor`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "free mass on a circle, no gravity: uniform rotation, constant λ = mω²/2",
        build: |t| {
            Ok(Problem::Mechanical(Box::new(CircleRotor::new(
                params::parse("problem", ID, t)?,
            )?)))
        },
        defaults: params::defaults::<CircleRotorParams>,
    }
}

impl MechanicalSystem for CircleRotor {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!(
                "Mass m = {} on a circle of radius {} m at speed {} m/s, no gravity",
                p.m, p.radius, p.speed
            ),
            equations: "m q'' = −2qλ,  Φ = x² + y² − R²,  γ = −2|v|²;  exact q = R(cos ωt, sin ωt), ω = v₀/R, \
                        λ = mω²/2,  H = ½m|v|²"
                .into(),
            citation: "uniform circular motion (closed form); the constrained form as in seed 002 §18.3 with g = 0".into(),
            tags: vec![
                "planar".into(),
                "conservative".into(),
                "exact-solution".into(),
                "index-3".into(),
            ],
            index: 3,
            t_end: p.t_end,
            reference: "exact: uniform circular motion".into(),
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
    fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        out[0] = circle::phi(q, self.p.radius);
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
    fn energy(&self, _t: f64, _q: &[f64], v: &[f64]) -> Option<f64> {
        Some(0.5 * self.p.m * (v[0] * v[0] + v[1] * v[1]))
    }
    fn energy_scale(&self) -> f64 {
        0.5 * self.p.m * self.p.speed * self.p.speed
    }
    fn initial_state(&self) -> State {
        State::mechanical(0.0, vec![self.p.radius, 0.0], vec![0.0, self.p.speed], 1)
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        let CircleRotorParams {
            m, radius, speed, ..
        } = self.p;
        let w = speed / radius;
        let (s, c) = (w * t).sin_cos();
        Some(ExactSolution {
            q: vec![radius * c, radius * s],
            v: vec![-speed * s, speed * c],
            lambda: vec![0.5 * m * w * w],
        })
    }
    /// `R (cos ωt, sin ωt)`, `v₀ (−sin ωt, cos ωt)`, `λ = mω²/2` in f64: the rounded phase
    /// `ωt` (relative ε) puts ≈ ε ωt into the trigonometric values, so q is good to
    /// `8ε(1 + ωt_end) R`, v to `8ε(1 + ωt_end) v₀` and the constant λ to `8ε mω²/2`
    /// (safety 8). Outside when the phase carries no digits: `8ε(1 + ωt_end) > 1e-4`,
    /// i.e. `ω·t_end ≳ 5.6e10` rad. (The products are bounded: every parameter lies in
    /// [1e-60, 1e60], so `mω²/2 ≤ 1e300`.)
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        let CircleRotorParams {
            m, radius, speed, ..
        } = self.p;
        let w = speed / radius;
        let growth = SAFETY * EPS * (1.0 + w * t_end);
        let lambda = 0.5 * m * w * w;
        judge(
            &format!(
                "uniform circular motion with phase ω·t_end = {:.4e}: 8ε(1 + ωt_end)·(R, v₀), 8ε·mω²/2 (argument rounding grows with ωt; safety 8)",
                w * t_end
            ),
            &[
                part("q", growth * radius, radius),
                part("v", growth * speed, speed),
                part("λ", SAFETY * EPS * lambda, lambda),
            ],
            "shorten t_end or lower speed/radius",
        )
    }
}

impl ConstraintHessian for CircleRotor {
    fn pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(2)
    }
    fn values(&self, _t: f64, _q: &[f64], lambda: &[f64], out: &mut [f64]) {
        circle::hessian(lambda, out);
    }
}
