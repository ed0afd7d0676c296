//! `implicit-euler-pendulum`: seed 002 §19.2's closed form of implicit Euler on the
//! Cartesian pendulum, with the constraint `x² + y² = r²` enforced. Accepts only a point
//! mass on a circle about the origin under a constant force `(0, −m g)` (checked).
//!
//! With `μ = −2λ/m` the equations are `u' = μx, v' = μy − g, x' = u, y' = v`,
//! `x² + y² = r²`. Implicit Euler gives, with `c = 1 − h² μ_{k+1}`,
//!
//! ```text
//! x_{k+1} = (x_k + h u_k)/c,  y_{k+1} = (y_k + h v_k − g h²)/c,
//! u_{k+1} = (u_k + h μ_{k+1} x_k)/c,  v_{k+1} = (v_k + h μ_{k+1} y_k − g h)/c,
//! ```
//!
//! and the constraint at `t_{k+1}` becomes `X² + Y² = r² c²` with `X = x_k + h u_k`,
//! `Y = y_k + h v_k − g h²`. The root with `c > 0` (μ is the centripetal term, `c ≈ 1`) is
//! taken without cancellation:
//!
//! ```text
//! A = X² + Y² − r²,     μ_{k+1} = −A / (h² (r² + r √(r² + A)))
//! ```
//!
//! (seed 002: "solving trying to avoid cancellation error"). The seed drops the block
//! `x_k² + y_k² − r²` from A "on the solution" and prints `−2gh²(y_k − h v_k)` in one
//! line where its derivation has `(y_k + h v_k)`; here `A` is the exact `X² + Y² − r²`, so
//! the scheme agrees with the Newton version `implicit-euler` to round-off (test).
//! Declared global order 1 in q, v and λ, as implicit Euler (BDF1) on the index-3 form
//! (Lötstedt & Petzold, Math. Comp. 46 (1986); `implicit-euler`'s citation).

use driftlab_core::prelude::*;
use serde::{Deserialize, Serialize};

/// No parameters (kept for a uniform catalog).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// Mass, radius and gravity of a Cartesian pendulum, read off the system.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PendulumData {
    /// Mass.
    pub m: f64,
    /// Radius r (rod length).
    pub r: f64,
    /// Gravity g (force `(0, −m g)`).
    pub g: f64,
}

/// Check that `s` is a point mass on a circle about the origin under a constant force
/// `(0, −m g)`, and read off `(m, r, g)`.
pub fn pendulum_data(
    method: &str, s: &dyn MechanicalSystem, state: &State,
) -> Result<PendulumData, MethodError> {
    let info = s.info();
    let bad = |why: &str| MethodError::Incompatible {
        method: method.into(),
        problem: info.id.clone(),
        reason: why.into(),
    };
    let d = s.dims();
    if d.n != 2 || d.m != 1 {
        return Err(bad("needs a planar point mass (n = 2) with one constraint"));
    }
    let mp = s.mass_pattern();
    let mut mv = vec![0.0; mp.nnz()];
    s.mass(&state.q, &mut mv);
    let md = mp.to_dense(&mv, true);
    let m = md[0];
    if (md[3] - m).abs() > 1e-14 * m || md[1].abs() > 0.0 {
        return Err(bad("needs M = m I"));
    }
    let mut phi = [0.0];
    s.constraints(state.t, &state.q, &mut phi);
    let r2 = state.q[0] * state.q[0] + state.q[1] * state.q[1] - phi[0];
    for probe in [[1.0, 0.0], [0.3, -2.0], [-1.5, 0.7]] {
        s.constraints(state.t + 0.5, &probe, &mut phi);
        if (phi[0] - (probe[0] * probe[0] + probe[1] * probe[1] - r2)).abs() > 1e-12 * (1.0 + r2) {
            return Err(bad("needs Φ = x² + y² − r²"));
        }
    }
    let mut f = [0.0; 2];
    let mut f2 = [0.0; 2];
    s.forces(state.t, &state.q, &state.v, &mut f);
    s.forces(state.t + 1.0, &[0.1, 0.2], &[1.0, -1.0], &mut f2);
    if f[0] != 0.0 || (f[1] - f2[1]).abs() > 0.0 || f2[0] != 0.0 {
        return Err(bad("needs the constant force (0, −m g)"));
    }
    Ok(PendulumData {
        m,
        r: r2.sqrt(),
        g: -f[1] / m,
    })
}

/// Set the consistent `μ₀` (from the hidden constraint `r²μ − g y + (u² + v²) = 0`), λ₀
/// `= −m μ₀/2` and `a₀ = (μ₀x, μ₀y − g)`; returns `μ₀`.
pub fn consistent_mu(d: &PendulumData, state: &mut State) -> f64 {
    let (x, y, u, v) = (state.q[0], state.q[1], state.v[0], state.v[1]);
    let mu = (d.g * y - (u * u + v * v)) / (d.r * d.r);
    state.lambda[0] = -d.m * mu / 2.0;
    state.a[0] = mu * x;
    state.a[1] = mu * y - d.g;
    mu
}

/// The implicit-Euler update of the pendulum for a given `μ_{k+1}` (seed 002 §19.2):
/// `c = 1 − h²μ`, `x⁺ = (x + hu)/c`, `y⁺ = (y + hv − gh²)/c`, `u⁺ = (u + hμx)/c`,
/// `v⁺ = (v + hμy − gh)/c`; sets `a = (v⁺ − v)/h`, `λ = −mμ/2` and advances `t`.
pub fn implicit_euler_update(state: &mut State, mu: f64, m: f64, g: f64, h: f64) {
    let (x, y, u, v) = (state.q[0], state.q[1], state.v[0], state.v[1]);
    let c = 1.0 - h * h * mu;
    let (x1, y1) = ((x + h * u) / c, (y + h * v - g * h * h) / c);
    let (u1, v1) = ((u + h * mu * x) / c, (v + h * mu * y - g * h) / c);
    state.a = vec![(u1 - u) / h, (v1 - v) / h];
    state.q = vec![x1, y1];
    state.v = vec![u1, v1];
    state.lambda[0] = -m * mu / 2.0;
    state.t += h;
}

/// The end of an implicit-Euler step of the pendulum `d` with `μ_{k+1} = mu` (either
/// scheme's): [`implicit_euler_update`], counted as a step in `stats`.
pub fn finish_step(
    state: &mut State, mu: f64, d: &PendulumData, h: f64, stats: &mut MethodStats,
) -> Result<StepReport, StepError> {
    implicit_euler_update(state, mu, d.m, d.g, h);
    stats.steps += 1;
    Ok(StepReport::default())
}

/// The closed-form scheme.
pub struct ImplicitEulerPendulum {}

impl ImplicitEulerPendulum {
    /// The method (no parameters); the pendulum's data are read at `start`.
    pub fn new(_: NoParams) -> Self {
        Self {}
    }
}

/// [`ImplicitEulerPendulum`] bound to its system.
struct ImplicitEulerPendulumStepper {
    data: PendulumData,
    stats: MethodStats,
}

/// Declared properties.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: backward Euler damps (GNI §VI.4)".into(),
        family: "implicit-runge-kutta".into(),
        title: "Implicit Euler on the Cartesian pendulum, seed 002's closed form (cancellation-free root)".into(),
        equations: "c = 1 − h²μ;  x⁺ = (x + hu)/c, y⁺ = (y + hv − gh²)/c, u⁺ = (u + hμx)/c, v⁺ = (v + hμy − gh)/c;  \
                    A = X² + Y² − r²,  μ = −A/(h²(r² + r√(r² + A)))"
            .into(),
        citation: "seed 002 §19.2 (integration of the DAE with the constraint enforced); orders as implicit-euler (index 3)".into(),
        orders: DeclaredOrders { q: Some(1.0), v: Some(1.0), lambda: Some(1.0) },
        enforces: ConstraintLevels { position: true, velocity: false, acceleration: false },
        implicit: true,
        ..MethodInfo::default()
    }
}

impl Method for ImplicitEulerPendulum {
    fn info(&self) -> MethodInfo {
        info()
    }
    fn start<'s>(&self, sys: Mechanical<'s>, state: &mut State, _: &StartOptions) -> Started<'s> {
        let s = sys;
        let d = pendulum_data(ID, s, state)?;
        consistent_mu(&d, state);
        Ok(Box::new(ImplicitEulerPendulumStepper {
            data: d,
            stats: MethodStats::default(),
        }))
    }
}

impl Stepper for ImplicitEulerPendulumStepper {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let PendulumData { r, g, .. } = self.data;
        let (x, y, u, v) = (state.q[0], state.q[1], state.v[0], state.v[1]);
        let big_x = x + h * u;
        let big_y = y + h * v - g * h * h;
        let a = big_x * big_x + big_y * big_y - r * r;
        let mu = -a / (h * h * (r * r + r * (r * r + a).sqrt()));
        finish_step(state, mu, &self.data, h, &mut self.stats)
    }
    fn stats(&self) -> MethodStats {
        self.stats
    }
}

/// The catalog id `implicit-euler-pendulum`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "implicit-euler-pendulum";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| {
            Ok(Box::new(ImplicitEulerPendulum::new(params::parse(
                "method", ID, t,
            )?)))
        },
        defaults: params::defaults::<NoParams>,
    }
}
