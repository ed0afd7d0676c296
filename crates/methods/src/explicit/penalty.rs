//! `penalty`: soft constraints by penalty forces, no multipliers (seed 001 §3.5.2):
//!
//! ```text
//! M a = f − Φ_qᵀ (k_p Φ + k_d Φ̇),     Φ̇ = Φ_q v + Φ_t
//! v_{n+1} = v_n + h a(t_n, q_n, v_n),   q_{n+1} = q_n + h v_{n+1}      (symplectic Euler)
//! ```
//!
//! The constraint force is a stiff spring along `Φ_qᵀ`; `k_p Φ + k_d Φ̇` plays the role of
//! λ and is reported as such. For the pendulum (`Φ = |q|² − ℓ²`) the radial stiffness is
//! `k_eff = 4 k_p ℓ²`, frequency `ω = √(k_eff/m)`. Symplectic Euler on an undamped
//! oscillator is stable iff `ω h < 2`, i.e. `k_eff < 4m/h²` (Hairer, Lubich & Wanner, GNI
//! §I.1 / linear stability of Störmer–Verlet); seed 001 exercise 4 states the looser
//! `k < (2π/h)² m` (ω h < 2π, "resolve the oscillation"). The `penalty-stiffness`
//! experiment measures where runs actually blow up.
//!
//! It does not converge to the DAE as h → 0 at fixed `k_p` (the penalized ODE differs
//! by O(1/k_p)), so it declares no convergence order.

use crate::dynamics::{linear_error, with_kkt_stats, KktChoice};
use driftlab_core::prelude::*;
use driftlab_solver::{KktPattern, KktSolver};
use serde::{Deserialize, Serialize};

/// Parameters of [`Penalty`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PenaltyParams {
    /// Stiffness k_p [force per unit of Φ].
    pub k_p: f64,
    /// Damping k_d [force per unit of Φ̇].
    pub k_d: f64,
}

impl Default for PenaltyParams {
    fn default() -> Self {
        Self {
            k_p: 1e4,
            k_d: 10.0,
        }
    }
}

/// Penalty forces with symplectic Euler.
pub struct Penalty {
    p: PenaltyParams,
}

/// [`Penalty`] bound to its system.
struct PenaltyStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: PenaltyParams,
    mass_solver: KktSolver,
    stats: MethodStats,
}

impl Penalty {
    /// The penalty method with stiffness `k_p > 0` and damping `k_d ≥ 0`; `ParamError`
    /// naming the field and the fix otherwise.
    pub fn new(p: PenaltyParams) -> Result<Self, ParamError> {
        driftlab_core::params::positive(ID, "k_p", p.k_p)?;
        if !(p.k_d.is_finite() && p.k_d >= 0.0) {
            return Err(ParamError::OutOfRange {
                id: ID.into(),
                field: "k_d",
                value: p.k_d,
                fix: "give k_d ≥ 0".into(),
            });
        }
        Ok(Self { p })
    }
}

impl PenaltyStepper<'_> {
    /// `a = M⁻¹(f − Φ_qᵀ(k_p Φ + k_d Φ̇))`, and the penalty multiplier.
    fn accel(
        &mut self, s: &dyn driftlab_core::MechanicalSystem, state: &mut State,
    ) -> Result<(), StepError> {
        let ms = &mut self.mass_solver;
        let d = s.dims();
        let t = state.t;
        let (mut phi, mut phit, mut jv) = (vec![0.0; d.m], vec![0.0; d.m], vec![0.0; d.m]);
        let jp = s.jacobian_pattern();
        let mut jac = vec![0.0; jp.nnz()];
        s.constraints(t, &state.q, &mut phi);
        s.phi_t(t, &state.q, &mut phit);
        s.jacobian(t, &state.q, &mut jac);
        jp.mul_vec(&jac, &state.v, &mut jv, false);
        for r in 0..d.m {
            state.lambda[r] = self.p.k_p * phi[r] + self.p.k_d * (jv[r] + phit[r]);
        }
        let mut f = vec![0.0; d.n];
        s.forces(t, &state.q, &state.v, &mut f);
        let mut gtl = vec![0.0; d.n];
        jp.mul_transpose_vec(&jac, &state.lambda, &mut gtl);
        for i in 0..d.n {
            f[i] -= gtl[i];
        }
        let mut mass = vec![0.0; s.mass_pattern().nnz()];
        s.mass(&state.q, &mut mass);
        ms.factorize(&mass, &[], None)
            .map_err(|e| linear_error(t, e))?;
        ms.solve(&mut f).map_err(|e| linear_error(t, e))?;
        state.a.copy_from_slice(&f);
        Ok(())
    }
}

/// Declared properties of `penalty`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no on the constraint manifold: symplectic Euler is symplectic for the penalized Hamiltonian H + ½k_p‖Φ‖² in ℝ²ⁿ when k_d = 0 (Hairer, Lubich & Wanner, GNI Thm. VI.3.3), but its steps leave {Φ = 0}; k_d > 0 dissipates".into(),
        family: "penalty".into(),
        title: "Penalty (soft) constraints, F = −Φ_qᵀ(k_p Φ + k_d Φ̇), symplectic Euler".into(),
        equations: "M a = f − Φ_qᵀ(k_p Φ + k_d Φ̇);  v⁺ = v + h a;  q⁺ = q + h v⁺".into(),
        citation: "seed 001 §3.5.2 (罚函数方法) and exercise 4 (k < (2π/h)² m); symplectic Euler stability ωh < 2: Hairer, \
                   Lubich & Wanner, GNI 2nd ed. §I.1"
            .into(),
        orders: DeclaredOrders { q: None, v: None, lambda: None },
        enforces: ConstraintLevels::default(),
        ..MethodInfo::default()
    }
}

impl Method for Penalty {
    fn info(&self) -> MethodInfo {
        let mut i = info();
        i.title = format!(
            "Penalty constraints, k_p = {:e}, k_d = {:e}, symplectic Euler",
            self.p.k_p, self.p.k_d
        );
        i
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let s = sys;
        let pattern = KktPattern {
            n: s.dims().n,
            m: 0,
            a_lower: s.mass_pattern().entries,
            b: Vec::new(),
        };
        let mass_solver = KktSolver::new(&pattern, KktChoice::Auto.options(opts))
            .map_err(|e| MethodError::Init(linear_error(state.t, e)))?;
        let mut stepper = PenaltyStepper {
            sys,
            p: self.p,
            mass_solver,
            stats: MethodStats::default(),
        };
        stepper.accel(s, state)?;
        Ok(Box::new(stepper))
    }
}

impl Stepper for PenaltyStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let s = self.sys;
        crate::dynamics::semi_implicit_euler_update(state, h);
        self.stats.steps += 1;
        self.accel(s, state)?;
        Ok(StepReport {
            factorizations: 1,
            ..Default::default()
        })
    }
    fn refresh(&mut self, state: &mut State) -> Result<(), StepError> {
        self.accel(self.sys, state)
    }
    fn stats(&self) -> MethodStats {
        with_kkt_stats(self.stats, Some(self.mass_solver.stats()))
    }
}

/// The catalog id `penalty`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "penalty";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(Penalty::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<PenaltyParams>,
    }
}
