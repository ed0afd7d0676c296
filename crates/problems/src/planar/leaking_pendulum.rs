//! `leaking-pendulum`: the Cartesian pendulum whose bob loses mass, m(t) = m₀ e^{−t/τ} —
//! a **variable-mass** system, the case of issue 32 B2 for a mass matrix that depends on
//! time, `M(t) = m(t) I` ([`MechanicalSystem::mass_at`]).
//!
//! The mass leaves the bob at the bob's own velocity (no relative ejection speed), so it
//! carries no thrust: Meshchersky's equation `m v̇ = F + (u − v) ṁ` with `u = v` is
//! `m(t) v̇ = F` (A. Sommerfeld, *Mechanics*, 1952, §4; Irschik & Holl, Appl. Mech. Rev.
//! 57 (2004) 145–160):
//!
//! ```text
//! m(t) x'' = −2xλ,   m(t) y'' = −m(t) g − 2yλ,   Φ = x² + y² − ℓ²
//! ```
//!
//! Dividing by m(t) leaves the constant-mass pendulum's equations for `(q, v)` with the
//! multiplier `λ/m(t)`: the motion is the pendulum's exact elliptic solution, whatever the
//! leak, and `λ(t) = (m(t)/m₀) λ_pendulum(t)`. A method that takes M(q) — the mass at
//! the start, m₀ I — instead of M(t) integrates a wrong motion: its weight m(t) g acting on
//! the inertia m₀ is an effective gravity g·m(t)/m₀; `mass_varies` makes
//! `driftlab_core::drive` refuse such methods. The energy is not conserved (the leaking
//! mass carries its share away); the specific energy `½|v|² + g y` is, and
//! [`MechanicalSystem::energy`] returns it times m₀.

use crate::entry::{Problem, ProblemEntry};
use crate::planar::pendulum::{Pendulum, PendulumParams};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{ExactSolution, MechanicalSystem, ParamError, ProblemInfo, ReferenceDomain};
use serde::{Deserialize, Serialize};

/// Parameters of [`LeakingPendulum`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LeakingPendulumParams {
    /// Initial mass m₀ (kg).
    pub m0: f64,
    /// Leak time constant τ (s): m(t) = m₀ e^{−t/τ}.
    pub tau: f64,
    /// Rod length ℓ (m).
    pub length: f64,
    /// Gravitational acceleration g (m/s²).
    pub g: f64,
    /// Release angle from the downward vertical (degrees), at rest.
    pub theta0_deg: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for LeakingPendulumParams {
    fn default() -> Self {
        Self {
            m0: 1.0,
            tau: 2.0,
            length: 1.0,
            g: 9.81,
            theta0_deg: 60.0,
            t_end: 4.0,
        }
    }
}

/// The leaking pendulum: the constant-mass pendulum of mass m₀ for everything but the mass
/// and the weight.
#[derive(Clone, Debug)]
pub struct LeakingPendulum {
    p: LeakingPendulumParams,
    pendulum: Pendulum,
}

impl LeakingPendulum {
    /// Build and validate.
    pub fn new(p: LeakingPendulumParams) -> Result<Self, ParamError> {
        let id = ID;
        bounded_positive(id, "m0", p.m0)?;
        bounded_positive(id, "tau", p.tau)?;
        let pendulum = Pendulum::new(
            PendulumParams {
                m: p.m0,
                length: p.length,
                g: p.g,
                theta0_deg: p.theta0_deg,
                t_end: p.t_end,
                ..PendulumParams::default()
            },
            id,
        )?;
        Ok(Self { p, pendulum })
    }

    /// m(t) = m₀ e^{−t/τ}.
    pub fn mass_of(&self, t: f64) -> f64 {
        self.p.m0 * (-t / self.p.tau).exp()
    }
}

/// The catalog id `leaking-pendulum`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "leaking-pendulum";

/// Catalog entry `leaking-pendulum`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "pendulum whose bob leaks mass, M(t) = m₀e^{−t/τ} I (variable mass, no thrust); exact: the pendulum's motion, λ scaled by m(t)/m₀",
        build: |t| {
            Ok(Problem::Mechanical(Box::new(LeakingPendulum::new(
                params::parse("problem", ID, t)?,
            )?)))
        },
        defaults: params::defaults::<LeakingPendulumParams>,
    }
}

impl MechanicalSystem for LeakingPendulum {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!(
                "Pendulum leaking mass, m(t) = {} e^(−t/{}) kg, ℓ = {}, released at rest at θ₀ = {}°",
                p.m0, p.tau, p.length, p.theta0_deg
            ),
            equations: "m(t) q'' = −m(t) g e₂ − Φ_qᵀλ,  m(t) = m₀e^{−t/τ},  Φ = x² + y² − ℓ²;  \
                        exact: the pendulum's q(t), λ(t) = (m(t)/m₀) λ_pendulum(t);  ½|v|² + gy conserved"
                .into(),
            citation: "variable mass without thrust (Meshchersky, u = v): A. Sommerfeld, Mechanics (1952) §4; \
                       H. Irschik, H. J. Holl, Appl. Mech. Rev. 57 (2004) 145–160; issue 32 B2 (M(t, q, v))"
                .into(),
            tags: vec![
                "planar".into(),
                "variable-mass".into(),
                "exact-solution".into(),
                "index-3".into(),
            ],
            index: 3,
            t_end: p.t_end,
            reference: "exact: the constant-mass pendulum's elliptic solution, λ scaled by m(t)/m₀".into(),
        }
    }
    driftlab_core::forward_mechanical!(pendulum;
        dims, mass_pattern, constraints, jacobian_pattern, jacobian, curvature,
        constraint_hessian, row_kinds, energy_scale, initial_state
    );
    /// M at the start, m₀ I (see [`Self::mass_at`]).
    fn mass(&self, q: &[f64], out: &mut [f64]) {
        self.pendulum.mass(q, out);
    }
    fn mass_at(&self, t: f64, _q: &[f64], _v: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = self.mass_of(t));
    }
    fn mass_varies(&self) -> bool {
        true
    }
    fn forces(&self, t: f64, _q: &[f64], _v: &[f64], out: &mut [f64]) {
        out[0] = 0.0;
        out[1] = -self.mass_of(t) * self.p.g;
    }
    /// m₀ (½|v|² + g y): the conserved specific energy, in the units of the start's energy.
    fn energy(&self, t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        self.pendulum.energy(t, q, v)
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        let mut e = self.pendulum.exact(t)?;
        let scale = self.mass_of(t) / self.p.m0;
        e.lambda.iter_mut().for_each(|l| *l *= scale);
        Some(e)
    }
    /// The pendulum's domain: q and v are its solution; λ is its λ times m(t)/m₀ ≤ 1,
    /// rounded once more.
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        self.pendulum.reference_domain(t_end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact solution satisfies m(t) a = f(t) − Φ_qᵀλ with a the second difference of
    /// the exact q (h = 1e-4: truncation h² q'''' ≈ 1e-7), and M(t) is m₀e^{−t/τ}.
    #[test]
    fn exact_solution_satisfies_the_variable_mass_dae() {
        let p = LeakingPendulum::new(LeakingPendulumParams::default()).expect("default");
        assert!(p.mass_varies());
        let h = 1e-4;
        for &t in &[0.3, 1.1, 2.7, 3.9] {
            let (em, e0, ep) = (
                p.exact(t - h).expect("exact"),
                p.exact(t).expect("exact"),
                p.exact(t + h).expect("exact"),
            );
            let mut mass = [0.0; 2];
            p.mass_at(t, &e0.q, &e0.v, &mut mass);
            assert!((mass[0] - (-t / 2.0_f64).exp()).abs() < 1e-15);
            let mut f = [0.0; 2];
            p.forces(t, &e0.q, &e0.v, &mut f);
            for k in 0..2 {
                let a = (ep.q[k] - 2.0 * e0.q[k] + em.q[k]) / (h * h);
                let r = mass[k] * a - (f[k] - 2.0 * e0.q[k] * e0.lambda[0]);
                assert!(r.abs() < 1e-6, "t = {t}, row {k}: residual {r}");
            }
        }
    }

    /// With M(q) = m₀ I in place of M(t), the same balance fails by the factor m(t)/m₀:
    /// the problem needs the time-dependent mass.
    #[test]
    fn the_starting_mass_does_not_satisfy_it() {
        let p = LeakingPendulum::new(LeakingPendulumParams::default()).expect("default");
        let (t, h) = (2.0, 1e-4);
        let (em, e0, ep) = (
            p.exact(t - h).expect("exact"),
            p.exact(t).expect("exact"),
            p.exact(t + h).expect("exact"),
        );
        let mut m0 = [0.0; 2];
        p.mass(&e0.q, &mut m0);
        let mut f = [0.0; 2];
        p.forces(t, &e0.q, &e0.v, &mut f);
        let a = (ep.q[1] - 2.0 * e0.q[1] + em.q[1]) / (h * h);
        let r = m0[1] * a - (f[1] - 2.0 * e0.q[1] * e0.lambda[0]);
        assert!(r.abs() > 1.0, "residual {r} with the starting mass");
    }
}
