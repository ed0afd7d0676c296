//! `taylor`: the unstabilized index-1 scheme of seed 002 §18.2, and
//! `semi-implicit-euler`: the unstabilized scheme of seed 001 §3.3.1, which takes the same
//! accelerations with the semi-implicit (symplectic) Euler update.
//!
//! ```text
//! [ M(q_k)   Φ_q(q_k)ᵀ ] [ a_k ]   [ f(t_k, q_k, v_k) ]
//! [ Φ_q(q_k)     0     ] [ λ_k ] = [ γ(t_k, q_k, v_k) ]
//! taylor:               q_{k+1} = q_k + h v_k + ½ h² a_k,   v_{k+1} = v_k + h a_k
//! semi-implicit-euler:  v_{k+1} = v_k + h a_k,              q_{k+1} = q_k + h v_{k+1}
//! ```
//!
//! Only the acceleration-level constraint `Φ_q a = γ` is imposed, so position and
//! velocity residuals are left to the truncation error and grow (seed 001 §3.3.1: the
//! constraint error obeys `ε̈ ≈ 0`, i.e. grows linearly or worse). It must drift: that
//! is what the Bertolazzi experiment shows. Global order 1 in q, v and λ (one-step Taylor
//! with local errors O(h³) in q and O(h²) in v).
//!
//! The semi-implicit Euler update moves q by `h² a_k` instead of `½h² a_k`, so one step
//! leaves the position constraint off by `Φ(q_{k+1}) = h²(Φ_q a_k + ½ vᵀΦ_qq v) + O(h³) =
//! −½h² vᵀΦ_qq v + O(h³)` (with `Φ_q a = γ = −vᵀΦ_qq v` for scleronomic rows): a local
//! drift O(h²) where Taylor's is O(h³). The seed's point, "even when q̈_n satisfies the
//! acceleration constraint, q_{n+1} may violate the position constraint", holds for both;
//! its global order is 1 in q, v and λ (Hairer, Lubich & Wanner, GNI §I.1.2). It is not
//! symplectic on the constraint manifold: the steps leave it.

use crate::dynamics::{with_kkt_stats, AccelerationSolver, KktChoice};
use driftlab_core::prelude::*;
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

/// The position and velocity update from the step's acceleration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// Second-order Taylor: `q += h v + ½h² a`, `v += h a` (`taylor`).
    Taylor,
    /// Semi-implicit Euler: `v += h a`, `q += h v` (`semi-implicit-euler`).
    SemiImplicitEuler,
}

/// The unstabilized acceleration-level scheme with one of the two updates.
pub struct Taylor {
    p: TaylorParams,
    update: Update,
}

impl Taylor {
    /// The Taylor method; its KKT solver is built at `start`.
    pub fn new(p: TaylorParams) -> Self {
        Self::with_update(p, Update::Taylor)
    }
    /// The same accelerations with `update`.
    pub fn with_update(p: TaylorParams, update: Update) -> Self {
        Self { p, update }
    }
}

/// [`Taylor`] bound to its system.
struct TaylorStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    solver: AccelerationSolver,
    update: Update,
    stats: MethodStats,
}

/// Declared properties of `semi-implicit-euler`.
pub fn semi_implicit_euler_info() -> MethodInfo {
    MethodInfo {
        id: SEMI_IMPLICIT_EULER_ID.into(),
        symplectic_reason: "no: symplectic Euler is symplectic for Hamiltonian ODEs in ℝ²ⁿ (GNI Thm. VI.3.3), but the acceleration-level ODE is not Hamiltonian there and the steps leave the constraint manifold (local position drift O(h²)); measured in tests/symplecticity.rs".into(),
        family: "explicit-taylor".into(),
        title: "Unstabilized semi-implicit Euler step on the index-1 (acceleration) form".into(),
        equations: "[M Φ_qᵀ; Φ_q 0][a_k; λ_k] = [f_k; γ_k];  v_{k+1} = v_k + h a_k;  q_{k+1} = q_k + h v_{k+1}".into(),
        citation: "seed 001 §3.3.1 (显式欧拉积分: the drift even with q̈ on the acceleration constraint); global \
                   order 1: Hairer, Lubich & Wanner, Geometric Numerical Integration, §I.1.2"
            .into(),
        ..info()
    }
}

/// Declared properties of `taylor`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: TAYLOR_ID.into(),
        symplectic_reason: "no: an explicit Taylor update of the acceleration-level ODE, which leaves the constraint manifold; measured in tests/symplecticity.rs".into(),
        family: "explicit-taylor".into(),
        title: "Unstabilized second-order Taylor step on the index-1 (acceleration) form".into(),
        equations: "[M Φ_qᵀ; Φ_q 0][a_k; λ_k] = [f_k; γ_k];  q_{k+1} = q_k + h v_k + ½h² a_k;  v_{k+1} = v_k + h a_k".into(),
        citation: "seed 002 §18.2 (Numerical Integration Algorithm) and §18.4; global order 1: one-step method with \
                   local errors O(h³) in q, O(h²) in v (Hairer, Nørsett & Wanner, Solving ODEs I, §II.3)"
            .into(),
        orders: DeclaredOrders { q: Some(1.0), v: Some(1.0), lambda: Some(1.0) },
        enforces: ConstraintLevels { position: false, velocity: false, acceleration: true },
        nonholonomic: true,
        varying_mass: true,
        ..MethodInfo::default()
    }
}

impl Method for Taylor {
    fn info(&self) -> MethodInfo {
        match self.update {
            Update::Taylor => info(),
            Update::SemiImplicitEuler => semi_implicit_euler_info(),
        }
    }
    fn restartable(&self) -> bool {
        true
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let solver = AccelerationSolver::new(sys, self.p.kkt.options(opts))?;
        let mut stepper = TaylorStepper {
            sys,
            solver: solver.with_tikhonov(self.p.tikhonov),
            update: self.update,
            stats: MethodStats::default(),
        };
        stepper.refresh(state)?;
        Ok(Box::new(stepper))
    }
}

impl Stepper for TaylorStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        match self.update {
            Update::Taylor => crate::dynamics::taylor_update(state, h),
            Update::SemiImplicitEuler => crate::dynamics::semi_implicit_euler_update(state, h),
        }
        self.stats.steps += 1;
        self.refresh(state)?;
        Ok(StepReport {
            factorizations: 1,
            ..Default::default()
        })
    }
    fn refresh(&mut self, state: &mut State) -> Result<(), StepError> {
        self.solver.solve_state(self.sys, state)
    }
    fn stats(&self) -> MethodStats {
        with_kkt_stats(self.stats, Some(self.solver.stats()))
    }
}

/// The catalog id `taylor`, written once: the entry, the parameter parse and the messages use it.
const TAYLOR_ID: &str = "taylor";

/// The catalog id `semi-implicit-euler`, written once: the entry, the parameter parse and the messages use it.
const SEMI_IMPLICIT_EULER_ID: &str = "semi-implicit-euler";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: TAYLOR_ID,
        info,
        build: |t| {
            Ok(Box::new(Taylor::new(params::parse(
                "method", TAYLOR_ID, t,
            )?)))
        },
        defaults: params::defaults::<TaylorParams>,
    }
}

/// The catalog line of `semi-implicit-euler` (the parameters of `taylor`).
pub fn semi_implicit_euler_entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: SEMI_IMPLICIT_EULER_ID,
        info: semi_implicit_euler_info,
        build: |t| {
            let p = params::parse("method", SEMI_IMPLICIT_EULER_ID, t)?;
            Ok(Box::new(Taylor::with_update(p, Update::SemiImplicitEuler)))
        },
        defaults: params::defaults::<TaylorParams>,
    }
}
