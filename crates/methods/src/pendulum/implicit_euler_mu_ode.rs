//! `implicit-euler-mu-ode`: seed 002 §19.2's **failing** variant — implicit Euler on the
//! pendulum where the constraint is replaced by the ODE `μ' = 3 g v / r²` obtained by
//! differentiating it three times (index reduced to 0). The constraint itself is never
//! imposed, so `x² + y² = r²` is lost within few steps (the seed: "Implicit Eulero
//! implicito without stabilization do not work"); the `implicit-euler-pendulum`
//! experiment shows it.
//!
//! ```text
//! (u⁺ − u)/h = μ⁺x⁺, (v⁺ − v)/h = μ⁺y⁺ − g, (x⁺ − x)/h = u⁺, (y⁺ − y)/h = v⁺, (μ⁺ − μ)/h = 3 g v⁺ / r²
//! ```
//!
//! Eliminating the first four (with `c = 1 − h² μ⁺`, see `implicit-euler-pendulum`) leaves
//! a quadratic in `δ = μ⁺ − μ`:
//! `r²h²δ² + (3gh²y + r²(h²μ − 1))δ + 3gh(v + yμh − gh) = 0`,
//! whose root near the explicit step `δ ≈ 3hgv/r²` is taken in the cancellation-free form
//! `δ = C / q`, `q = −½(B − √(B² − 4AC))` (B < 0). A negative discriminant fails the step.
//! Declared global order 1 in q, v and λ (implicit Euler on an ODE), which holds only
//! while the drifting constraint has not destroyed the solution — the point of the seed.

use crate::pendulum::implicit_euler_pendulum::{
    consistent_mu, finish_step, pendulum_data, NoParams, PendulumData,
};
use driftlab_core::prelude::*;

/// The μ-ODE variant.
pub struct ImplicitEulerMuOde {}

impl ImplicitEulerMuOde {
    /// The method (no parameters); μ and the problem's data are read at `start`.
    pub fn new(_: NoParams) -> Self {
        Self {}
    }
}

/// [`ImplicitEulerMuOde`] bound to its system.
struct ImplicitEulerMuOdeStepper {
    data: PendulumData,
    mu: f64,
    stats: MethodStats,
}

/// Declared properties: consistent with order 1 for the ODE it integrates, but it
/// enforces no constraint level (the drift is the point).
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: backward Euler (GNI §VI.4), on an ODE that also drifts off the constraint".into(),
        family: "implicit-runge-kutta".into(),
        title: "Implicit Euler on the pendulum with the constraint replaced by μ' = 3gv/r² (seed 002's failing variant)".into(),
        equations: "r²h²δ² + (3gh²y + r²(h²μ − 1))δ + 3gh(v + yμh − gh) = 0,  μ⁺ = μ + δ,  then x⁺, y⁺, u⁺, v⁺ as implicit Euler".into(),
        citation: "seed 002 §19.1 (μ' − 3gv = 0 by differentiating the constraint three times) and §19.2".into(),
        orders: DeclaredOrders { q: Some(1.0), v: Some(1.0), lambda: Some(1.0) },
        enforces: ConstraintLevels::default(),
        implicit: true,
        ..MethodInfo::default()
    }
}

impl Method for ImplicitEulerMuOde {
    fn info(&self) -> MethodInfo {
        info()
    }
    fn start<'s>(&self, sys: Mechanical<'s>, state: &mut State, _: &StartOptions) -> Started<'s> {
        let s = sys;
        let d = pendulum_data(ID, s, state)?;
        let mu = consistent_mu(&d, state);
        Ok(Box::new(ImplicitEulerMuOdeStepper {
            data: d,
            mu,
            stats: MethodStats::default(),
        }))
    }
}

impl Stepper for ImplicitEulerMuOdeStepper {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let PendulumData { m, r, g } = self.data;
        let (y, v) = (state.q[1], state.v[1]);
        // μ from the state's λ (a decorator may have changed it): μ = −2λ/m.
        let mu = -2.0 * state.lambda[0] / m;
        let qa = r * r * h * h;
        let qb = 3.0 * g * h * h * y + r * r * (h * h * mu - 1.0);
        let qc = 3.0 * g * h * (v + y * mu * h - g * h);
        let disc = qb * qb - 4.0 * qa * qc;
        if disc.is_nan() || disc < 0.0 {
            return Err(StepError::NewtonDiverged {
                t: state.t,
                iterations: 1,
                residual: disc,
                tol: 0.0,
            });
        }
        let qq = -0.5 * (qb + qb.signum() * disc.sqrt());
        let delta = qc / qq;
        let mu1 = mu + delta;
        self.mu = mu1;
        finish_step(state, mu1, &self.data, h, &mut self.stats)
    }
    fn stats(&self) -> MethodStats {
        self.stats
    }
}

/// The catalog id `implicit-euler-mu-ode`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "implicit-euler-mu-ode";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| {
            Ok(Box::new(ImplicitEulerMuOde::new(params::parse(
                "method", ID, t,
            )?)))
        },
        defaults: params::defaults::<crate::pendulum::implicit_euler_pendulum::NoParams>,
    }
}
