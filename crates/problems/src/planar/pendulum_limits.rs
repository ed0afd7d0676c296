//! `pendulum-limits`: the Cartesian pendulum with **joint-angle limits** θ_min ≤ θ ≤ θ_max
//! enforced as unilateral constraints (seed 001 §3.6.1: inequality constraints and
//! complementarity), with Newton's restitution e at the stops:
//!
//! ```text
//! pendulum: m q'' = f − Φ_qᵀλ + Gᵀ P,  Φ = x² + y² − ℓ²
//! g₁ = ℓ sin(θ_max − θ) = −x cos θ_max − y sin θ_max ≥ 0
//! g₂ = ℓ sin(θ − θ_min) =  x cos θ_min + y sin θ_min ≥ 0      (q = ℓ(sin θ, −cos θ))
//! 0 ≤ P ⊥ g ≥ 0,   at impact: ġ⁺ = −e ġ⁻
//! ```
//!
//! With e = 1 no energy is lost at the stops (elastic); with e < 1 each impact removes
//! `½ (1 − e²) m ġ⁻²` (the normal velocity of the bob is ġ because |∇g| = 1 on the
//! circle). Released at rest at θ₀; between the stops it is the pendulum of
//! `pendulum`, so the first arrival at a stop is known exactly.

use crate::entry::{Problem, ProblemEntry};
use crate::planar::pendulum::{Pendulum, PendulumParams};
use driftlab_core::params::{self};
use driftlab_core::Unilateral;
use driftlab_core::{Dims, MechanicalSystem, ParamError, ProblemInfo, SparsityPattern, State};
use serde::{Deserialize, Serialize};

/// Parameters of [`PendulumLimits`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PendulumLimitsParams {
    /// Mass (kg).
    pub m: f64,
    /// Length (m).
    pub length: f64,
    /// Gravity [m/s²].
    pub g: f64,
    /// Release angle from the downward vertical (degrees), at rest.
    pub theta0_deg: f64,
    /// Lower stop (degrees).
    pub theta_min_deg: f64,
    /// Upper stop (degrees).
    pub theta_max_deg: f64,
    /// Coefficient of restitution e ∈ [0, 1].
    pub restitution: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for PendulumLimitsParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            length: 1.0,
            g: 9.81,
            theta0_deg: 60.0,
            theta_min_deg: -30.0,
            theta_max_deg: 90.0,
            restitution: 1.0,
            t_end: 10.0,
        }
    }
}

/// Pendulum with stops.
pub struct PendulumLimits {
    p: PendulumLimitsParams,
    inner: Pendulum,
}

impl PendulumLimits {
    /// Build and validate.
    pub fn new(p: PendulumLimitsParams) -> Result<Self, ParamError> {
        let id = ID;
        let bad = |field: &'static str, value: f64, fix: &str| ParamError::OutOfRange {
            id: id.into(),
            field,
            value,
            fix: fix.into(),
        };
        if !(0.0..=1.0).contains(&p.restitution) {
            return Err(bad("restitution", p.restitution, "give 0 ≤ e ≤ 1"));
        }
        for (field, x) in [
            ("theta0_deg", p.theta0_deg),
            ("theta_min_deg", p.theta_min_deg),
            ("theta_max_deg", p.theta_max_deg),
        ] {
            params::finite(id, field, x)?;
        }
        let inner = Pendulum::new(
            PendulumParams::released(p.m, p.length, p.g, p.theta0_deg, p.t_end),
            ID,
        )?;
        if !(p.theta_min_deg < p.theta0_deg && p.theta0_deg < p.theta_max_deg) {
            return Err(params::inconsistent(
                id,
                &[
                    ("theta_min_deg", p.theta_min_deg),
                    ("theta_max_deg", p.theta_max_deg),
                    ("theta0_deg", p.theta0_deg),
                ],
                "release strictly between the stops: theta_min_deg < theta0_deg < theta_max_deg",
            ));
        }
        if p.theta_max_deg - p.theta_min_deg >= 180.0 {
            return Err(params::inconsistent(
                id,
                &[
                    ("theta_min_deg", p.theta_min_deg),
                    ("theta_max_deg", p.theta_max_deg),
                ],
                "keep theta_max_deg − theta_min_deg < 180 (linear gap functions)",
            ));
        }
        Ok(Self { p, inner })
    }
}

/// The catalog id `pendulum-limits`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "pendulum-limits";

/// Catalog entry `pendulum-limits`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "pendulum with joint-angle stops as unilateral constraints (LCP), restitution e",
        build: |t| {
            Ok(Problem::Mechanical(Box::new(PendulumLimits::new(
                params::parse("problem", ID, t)?,
            )?)))
        },
        defaults: params::defaults::<PendulumLimitsParams>,
    }
}

impl MechanicalSystem for PendulumLimits {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!(
                "Pendulum with stops at θ = {}° and {}° (e = {}), released at {}°",
                p.theta_min_deg, p.theta_max_deg, p.restitution, p.theta0_deg
            ),
            equations: "m q'' = f − Φ_qᵀλ + GᵀP, Φ = |q|² − ℓ²;  g₁ = −x cos θ_max − y sin θ_max ≥ 0, \
                        g₂ = x cos θ_min + y sin θ_min ≥ 0;  0 ≤ P ⊥ g ≥ 0, ġ⁺ = −e ġ⁻"
                .into(),
            citation: "seed 001 §3.6.1 (unilateral constraints, complementarity); impact law and time stepping: \
                       V. Acary & B. Brogliato, Numerical Methods for Nonsmooth Dynamical Systems (2008), ch. 1, §10.1"
                .into(),
            tags: vec!["planar".into(), "unilateral".into(), "index-3".into()],
            index: 3,
            t_end: p.t_end,
            reference: "exact between the stops (pendulum); energy: constant for e = 1, loses ½(1 − e²)mġ⁻² per impact".into(),
        }
    }
    fn dims(&self) -> Dims {
        self.inner.dims()
    }
    fn mass_pattern(&self) -> SparsityPattern {
        self.inner.mass_pattern()
    }
    fn mass(&self, q: &[f64], out: &mut [f64]) {
        self.inner.mass(q, out);
    }
    fn forces(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        self.inner.forces(t, q, v, out);
    }
    fn constraints(&self, t: f64, q: &[f64], out: &mut [f64]) {
        self.inner.constraints(t, q, out);
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        self.inner.jacobian_pattern()
    }
    fn jacobian(&self, t: f64, q: &[f64], out: &mut [f64]) {
        self.inner.jacobian(t, q, out);
    }
    fn curvature(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        self.inner.curvature(t, q, v, out);
    }
    fn energy(&self, t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        self.inner.energy(t, q, v)
    }
    fn energy_scale(&self) -> f64 {
        self.inner.energy_scale()
    }
    fn initial_state(&self) -> State {
        self.inner.initial_state()
    }
    fn unilateral(&self) -> Option<&dyn Unilateral> {
        Some(self)
    }
}

impl Unilateral for PendulumLimits {
    fn rows(&self) -> usize {
        2
    }
    fn gaps(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let (smax, cmax) = self.p.theta_max_deg.to_radians().sin_cos();
        let (smin, cmin) = self.p.theta_min_deg.to_radians().sin_cos();
        out[0] = -q[0] * cmax - q[1] * smax;
        out[1] = q[0] * cmin + q[1] * smin;
    }
    fn gap_jacobian(&self, _t: f64, _q: &[f64], out: &mut [f64]) {
        let (smax, cmax) = self.p.theta_max_deg.to_radians().sin_cos();
        let (smin, cmin) = self.p.theta_min_deg.to_radians().sin_cos();
        out.copy_from_slice(&[-cmax, -smax, cmin, smin]);
    }
    fn restitution(&self) -> f64 {
        self.p.restitution
    }
}
