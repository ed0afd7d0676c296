//! `velocity-projection`: seed 001 §3.4.1's velocity-level projection step — the
//! unconstrained velocity update projected onto the velocity constraint at the current
//! configuration, then the position update with the projected velocity (the step of
//! impulse-based physics engines; symplectic Euler with a velocity-level constraint):
//!
//! ```text
//! v* = v_n + h M⁻¹ f(t_n, q_n, v_n)                                (unconstrained)
//! v_{n+1} = argmin ½‖v − v*‖²_M  s.t.  Φ_q(q_n) v + Φ_t(t_n, q_n) = 0
//!   ⇔ [M Φ_qᵀ; Φ_q 0] [v_{n+1}; μ] = [M v_n + h f; −Φ_t]          (one KKT solve, no M⁻¹)
//! q_{n+1} = q_n + h v_{n+1},     λ_n = μ / h,     a_n = (v_{n+1} − v_n)/h
//! ```
//!
//! The velocity constraint holds at q_n, not at q_{n+1}: the position drifts by O(h²) per
//! step (seed 001 §3.4.1 leaves the position to the projection of §3.4.2: run it with
//! `projection = { … }`). Symplectic Euler is first order (Hairer, Lubich & Wanner, GNI
//! §VI.3 for the unconstrained scheme); the velocity-level projection keeps that order.

use crate::dynamics::{add_kkt_stats, kkt_pattern, linear_error, KktChoice};
use driftlab_core::prelude::*;
use driftlab_solver::KktSolver;
use serde::{Deserialize, Serialize};

/// Parameters of [`VelocityProjection`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VelocityProjectionParams {
    /// KKT factorization.
    pub kkt: KktChoice,
}

/// The velocity-level projection step.
pub struct VelocityProjection {
    p: VelocityProjectionParams,
}

impl VelocityProjection {
    /// The method; its KKT solver is built at `start`, for the problem's pattern.
    pub fn new(p: VelocityProjectionParams) -> Self {
        Self { p }
    }
}

/// [`VelocityProjection`] bound to its system.
struct VelocityProjectionStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    kkt: KktSolver,
    mass: Vec<f64>,
    jac: Vec<f64>,
    rhs: Vec<f64>,
    stats: MethodStats,
}

/// Declared properties of `velocity-projection`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: symplectic Euler with the velocity projected at q_n: the position drifts off {Φ = 0} and the projection is not a symplectic map".into(),
        family: "explicit-symplectic".into(),
        title: "Velocity-level projection: unconstrained velocity update projected onto Φ_q v + Φ_t = 0, then q += h v".into(),
        equations: "[M Φ_qᵀ; Φ_q 0](q_n) [v_{n+1}; μ] = [M v_n + h f_n; −Φ_t];  q_{n+1} = q_n + h v_{n+1};  λ_n = μ/h".into(),
        citation: "seed 001 §3.4.1 (速度级投影); symplectic Euler, first order: Hairer, Lubich & Wanner, GNI §VI.3".into(),
        orders: DeclaredOrders { q: Some(1.0), v: Some(1.0), lambda: None },
        enforces: ConstraintLevels::default(),
        nonholonomic: true,
        ..MethodInfo::default()
    }
}

impl Method for VelocityProjection {
    fn info(&self) -> MethodInfo {
        info()
    }
    fn restartable(&self) -> bool {
        true
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, _state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let pattern = kkt_pattern(sys);
        let kkt = KktSolver::new(&pattern, self.p.kkt.options(opts))
            .map_err(|e| MethodError::Init(linear_error(0.0, e)))?;
        Ok(Box::new(VelocityProjectionStepper {
            sys,
            mass: vec![0.0; pattern.a_lower.len()],
            jac: vec![0.0; pattern.b.len()],
            rhs: vec![0.0; pattern.n + pattern.m],
            kkt,
            stats: MethodStats::default(),
        }))
    }
}

impl Stepper for VelocityProjectionStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let sys = self.sys;
        let t = state.t;
        let kkt = &mut self.kkt;
        let n = state.q.len();
        sys.mass(&state.q, &mut self.mass);
        sys.jacobian(t, &state.q, &mut self.jac);
        kkt.factorize(&self.mass, &self.jac, None)
            .map_err(|e| linear_error(t, e))?;
        let mut f = vec![0.0; n];
        sys.forces(t, &state.q, &state.v, &mut f);
        kkt.mul_a(&self.mass, &state.v, &mut self.rhs[..n]);
        self.rhs[..n]
            .iter_mut()
            .zip(&f)
            .for_each(|(r, fi)| *r += h * fi);
        sys.phi_t(t, &state.q, &mut self.rhs[n..]);
        self.rhs[n..].iter_mut().for_each(|r| *r = -*r);
        kkt.solve(&mut self.rhs).map_err(|e| linear_error(t, e))?;
        for i in 0..n {
            let v1 = self.rhs[i];
            state.a[i] = (v1 - state.v[i]) / h;
            state.v[i] = v1;
            state.q[i] += h * v1;
        }
        for (l, mu) in state.lambda.iter_mut().zip(&self.rhs[n..]) {
            *l = mu / h;
        }
        state.t = t + h;
        self.stats.steps += 1;
        Ok(StepReport {
            factorizations: 1,
            ..StepReport::default()
        })
    }
    fn stats(&self) -> MethodStats {
        let mut s = self.stats;
        add_kkt_stats(&mut s, self.kkt.stats());
        s
    }
}

/// The catalog id `velocity-projection`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "velocity-projection";

/// This method's catalog line.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| {
            Ok(Box::new(VelocityProjection::new(params::parse(
                "method", ID, t,
            )?)))
        },
        defaults: params::defaults::<VelocityProjectionParams>,
    }
}
