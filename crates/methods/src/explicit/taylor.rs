//! `taylor`: the unstabilized index-1 scheme of seed 002 §18.2.
//!
//! ```text
//! [ M(q_k)   Φ_q(q_k)ᵀ ] [ a_k ]   [ f(t_k, q_k, v_k) ]
//! [ Φ_q(q_k)     0     ] [ λ_k ] = [ γ(t_k, q_k, v_k) ]
//! q_{k+1} = q_k + h v_k + ½ h² a_k,     v_{k+1} = v_k + h a_k
//! ```
//!
//! Only the acceleration-level constraint `Φ_q a = γ` is imposed, so position and
//! velocity residuals are left to the truncation error and grow (seed 001 §3.3.1: the
//! constraint error obeys `ε̈ ≈ 0`, i.e. grows linearly or worse). It must drift: that
//! is what the Bertolazzi experiment shows. Global order 1 in q, v and λ (one-step Taylor
//! with local errors O(h³) in q and O(h²) in v).

use crate::dynamics::{with_kkt_stats, AccelerationSolver, KktChoice};
use driftlab_core::{
    ConstraintLevels, DeclaredOrders, MechanicalMethod, MechanicalSystem, MethodError, MethodInfo,
    MethodStats, State, StepError, StepReport,
};
use serde::{Deserialize, Serialize};

/// Parameters of [`Taylor`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TaylorParams {
    /// KKT factorization.
    pub kkt: KktChoice,
    /// Tikhonov regularization ε of the multiplier system (seed 001 §3.5.4):
    /// `(Φ_q M⁻¹ Φ_qᵀ + εI) λ = b`; 0 = off. Biases the acceleration: `Φ_q a − γ = −ελ`.
    pub tikhonov: f64,
}

/// The unstabilized Taylor scheme.
pub struct Taylor {
    p: TaylorParams,
    solver: Option<AccelerationSolver>,
    stats: MethodStats,
}

impl Taylor {
    /// The method; its KKT solver is built at `init`, for the problem's pattern.
    pub fn new(p: TaylorParams) -> Self {
        Self {
            p,
            solver: None,
            stats: MethodStats::default(),
        }
    }
}

/// Declared properties of `taylor`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: "taylor".into(),
        family: "explicit-taylor".into(),
        title: "Unstabilized second-order Taylor step on the index-1 (acceleration) form".into(),
        equations: "[M Φ_qᵀ; Φ_q 0][a_k; λ_k] = [f_k; γ_k];  q_{k+1} = q_k + h v_k + ½h² a_k;  v_{k+1} = v_k + h a_k".into(),
        citation: "seed 002 §18.2 (Numerical Integration Algorithm) and §18.4; global order 1: one-step method with \
                   local errors O(h³) in q, O(h²) in v (Hairer, Nørsett & Wanner, Solving ODEs I, §II.3)"
            .into(),
        orders: DeclaredOrders { q: Some(1.0), v: Some(1.0), lambda: Some(1.0) },
        enforces: ConstraintLevels { position: false, velocity: false, acceleration: true },
        nonholonomic: true,
        ..MethodInfo::default()
    }
}

impl MechanicalMethod for Taylor {
    fn info(&self) -> MethodInfo {
        info()
    }
    fn init(&mut self, sys: &dyn MechanicalSystem, state: &mut State) -> Result<(), MethodError> {
        let s = sys;
        self.solver = Some(AccelerationSolver::new(s, self.p.kkt)?.with_tikhonov(self.p.tikhonov));
        self.refresh(sys, state)?;
        Ok(())
    }
    fn step(
        &mut self,
        sys: &dyn MechanicalSystem,
        state: &mut State,
        h: f64,
    ) -> Result<StepReport, StepError> {
        // Checked before the state is touched (an index-1 state has no v to index).
        if self.solver.is_none() {
            return Err(driftlab_core::method::not_ready("taylor", state.t));
        }
        crate::dynamics::taylor_update(state, h);
        self.stats.steps += 1;
        self.refresh(sys, state)?;
        Ok(StepReport {
            factorizations: 1,
            ..Default::default()
        })
    }
    fn refresh(&mut self, sys: &dyn MechanicalSystem, state: &mut State) -> Result<(), StepError> {
        let (s, Some(solver)) = (sys, self.solver.as_mut()) else {
            return Err(driftlab_core::method::not_ready("taylor", state.t));
        };
        solver.solve_state(s, state)
    }
    fn restartable(&self) -> bool {
        true
    }

    fn stats(&self) -> MethodStats {
        with_kkt_stats(self.stats, self.solver.as_ref().map(|k| k.stats()))
    }
}

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::MethodEntry {
    use driftlab_core::params;
    crate::MethodEntry {
        id: "taylor",
        info,
        build: |t| Ok(Box::new(Taylor::new(params::parse("method", "taylor", t)?))),
        defaults: params::defaults::<TaylorParams>,
    }
}
