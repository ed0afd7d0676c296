//! `n-four-bar-angle`: IFToMM A02's N-four-bar (`n-four-bar`) in its one reduced
//! coordinate, the crank angle φ (seed 001 §3.12, maximal vs reduced coordinates).
//!
//! On the benchmark's branch the assembly stays a row of parallelograms: every moving
//! point is `B_i = A_i + ℓ(cos φ, sin φ)`, the cranks turn together and the couplers
//! translate. With uniform rods (crank: rotation about A_i, `½(mℓ²/3)φ'²`; coupler:
//! translation, `½mℓ²φ'²`) and gravity on the rod centres:
//!
//! ```text
//! M_r φ'' = −K cos φ,   M_r = mℓ² ((N + 1)/3 + N),   K = mgℓ ((N + 1)/2 + N)
//! H = ½ M_r φ'² + K sin φ,   φ(0) = π/2,  φ'(0) = −v₀/ℓ
//! ```
//!
//! — a pendulum in φ + π/2. The singular positions of the maximal form (all rods
//! horizontal, φ = 0 or π, where rank Φ_q drops from 2N + 1 to N + 1 and other branches
//! meet) are ordinary points here: the reduced coordinate has chosen the branch. That
//! choice is the price: a coordinate that covers one branch cannot follow another.

use crate::benchmarks::n_four_bar::{NFourBar, NFourBarParams};
use crate::entry::{Problem, ProblemEntry};
use driftlab_core::params;
use driftlab_core::{Dims, MechanicalSystem, ParamError, ProblemInfo, SparsityPattern, State};

/// The N-four-bar in its crank angle.
pub struct NFourBarAngle {
    p: NFourBarParams,
}

const ID: &str = "n-four-bar-angle";

impl NFourBarAngle {
    /// Build and validate (the checks of `n-four-bar`).
    pub fn new(p: NFourBarParams) -> Result<Self, ParamError> {
        NFourBar::new(p, "n-four-bar-angle")?;
        Ok(Self { p })
    }

    /// `(M_r, K)`.
    fn coefficients(&self) -> (f64, f64) {
        let (n, m, l) = (self.p.n as f64, self.p.m, self.p.length);
        (
            m * l * l * ((n + 1.0) / 3.0 + n),
            m * self.p.g * l * ((n + 1.0) / 2.0 + n),
        )
    }
}

/// Catalog entry `n-four-bar-angle`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "IFToMM A02's N-four-bar in its crank angle (one reduced coordinate, an ODE; the singular positions are ordinary points)",
        build: |t| Ok(Problem::Mechanical(Box::new(NFourBarAngle::new(params::parse("problem", ID, t)?)?))),
        defaults: params::defaults::<NFourBarParams>,
    }
}

impl MechanicalSystem for NFourBarAngle {
    fn info(&self) -> ProblemInfo {
        ProblemInfo {
            id: ID.into(),
            title: format!("N-four-bar (N = {}) in the crank angle", self.p.n),
            equations: "M_r φ'' = −K cos φ,  M_r = mℓ²((N + 1)/3 + N),  K = mgℓ((N + 1)/2 + N); no constraints".into(),
            citation: "IFToMM / A Coruña benchmark A02 on its parallelogram branch; seed 001 §3.12".into(),
            tags: vec!["planar".into(), "conservative".into(), "reduced-coordinates".into(), "ode".into()],
            index: 0,
            t_end: self.p.t_end,
            reference: "none; energy conserved; B₀ = ℓ(cos φ, sin φ) comparable with n-four-bar".into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims { n: 1, m: 0 }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(1)
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        out[0] = self.coefficients().0;
    }
    fn forces(&self, _t: f64, q: &[f64], _v: &[f64], out: &mut [f64]) {
        out[0] = -self.coefficients().1 * q[0].cos();
    }
    fn constraints(&self, _t: f64, _q: &[f64], _out: &mut [f64]) {}
    fn jacobian_pattern(&self) -> SparsityPattern {
        SparsityPattern::new(0, 1, Vec::new())
    }
    fn jacobian(&self, _t: f64, _q: &[f64], _out: &mut [f64]) {}
    fn curvature(&self, _t: f64, _q: &[f64], _v: &[f64], _out: &mut [f64]) {}
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let (mr, k) = self.coefficients();
        Some(0.5 * mr * v[0] * v[0] + k * q[0].sin())
    }
    fn energy_scale(&self) -> f64 {
        self.coefficients().1
    }
    fn initial_state(&self) -> State {
        State::mechanical(
            0.0,
            vec![std::f64::consts::FRAC_PI_2],
            vec![-self.p.v0 / self.p.length],
            0,
        )
    }
}
