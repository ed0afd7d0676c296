//! `symplectic-euler`: the symplectic (semi-implicit) Euler step on the index-1 form,
//!
//! ```text
//! [M Φ_qᵀ; Φ_q 0][a_k; λ_k] = [f(t_k, q_k, v_k); γ(t_k, q_k, v_k)]
//! v_{k+1} = v_k + h a_k,     q_{k+1} = q_k + h v_{k+1}
//! ```
//!
//! Global order 1 in q, v, λ (Hairer, Lubich & Wanner, *Geometric Numerical Integration*,
//! 2006, §I.1.2). Only Φ_q a = γ is imposed, so Φ drifts; driftlab's projection decorator
//! (`projection = {}` in a spec) holds Φ = 0 and Φ_q v = 0 — not this file's business.

use driftlab_core::params;
use driftlab_core::prelude::*;
use driftlab_methods::dynamics::{add_kkt_stats, AccelerationSolver, KktChoice};
use driftlab_methods::MethodEntry;
use serde::{Deserialize, Serialize};

/// Symplectic Euler with the acceleration-level KKT solve of driftlab's method kit: the
/// configuration (it has no parameters).
#[derive(Default)]
pub struct SymplecticEuler;

/// [`SymplecticEuler`] bound to its system: the acceleration solver it owns for the run.
struct SymplecticEulerStepper<'s> {
    sys: Mechanical<'s>,
    solver: AccelerationSolver,
    stats: MethodStats,
}

/// Declared properties of `symplectic-euler`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: "symplectic-euler".into(),
        family: "user-example".into(),
        title: "Symplectic Euler on the index-1 form (a user's own method)".into(),
        equations: "[M Φ_qᵀ; Φ_q 0][a_k; λ_k] = [f_k; γ_k];  v_{k+1} = v_k + h a_k;  q_{k+1} = q_k + h v_{k+1}".into(),
        citation: "Hairer, Lubich & Wanner, Geometric Numerical Integration (2006), §I.1.2; global order 1".into(),
        orders: DeclaredOrders { q: Some(1.0), v: Some(1.0), lambda: Some(1.0) },
        enforces: ConstraintLevels { acceleration: true, ..ConstraintLevels::default() },
        // Symplectic as an ODE step, but Φ drifts: not symplectic on the constraint manifold
        // (RATTLE is), so it does not claim the property, and says why.
        symplectic: false,
        symplectic_reason: "no: symplectic for Hamiltonian ODEs, but the steps leave the constraint manifold".into(),
        nonholonomic: true,
        ..MethodInfo::default()
    }
}

/// Parameters of `symplectic-euler`: none (a key in a spec is an error naming it).
#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SymplecticEulerParams {}

/// Catalog line of `symplectic-euler`.
pub fn entry() -> MethodEntry {
    MethodEntry {
        id: "symplectic-euler",
        info,
        build: |t| {
            params::parse::<SymplecticEulerParams>("method", "symplectic-euler", t)?;
            Ok(Box::new(SymplecticEuler))
        },
        defaults: params::defaults::<SymplecticEulerParams>,
    }
}

impl Method for SymplecticEuler {
    fn info(&self) -> MethodInfo {
        info()
    }
    fn start<'s>(
        &self,
        sys: Mechanical<'s>,
        state: &mut State,
        opts: &StartOptions,
    ) -> Started<'s> {
        let solver = AccelerationSolver::new(sys, KktChoice::default().options(opts))?;
        let mut stepper = SymplecticEulerStepper { sys, solver, stats: MethodStats::default() };
        stepper.refresh(state)?;
        Ok(Box::new(stepper))
    }
    fn restartable(&self) -> bool {
        true
    }
}

impl Stepper for SymplecticEulerStepper<'_> {
    fn step(&mut self, s: &mut State, h: f64) -> Result<StepReport, StepError> {
        for i in 0..s.q.len() {
            s.v[i] += h * s.a[i];
            s.q[i] += h * s.v[i];
        }
        s.t += h;
        self.stats.steps += 1;
        self.refresh(s)?;
        Ok(StepReport { factorizations: 1, ..StepReport::default() })
    }
    fn refresh(&mut self, s: &mut State) -> Result<(), StepError> {
        self.solver.solve_state(self.sys, s)
    }
    fn stats(&self) -> MethodStats {
        let mut s = self.stats;
        add_kkt_stats(&mut s, self.solver.stats());
        s
    }
}
