//! `rattle`: SHAKE/RATTLE (Ryckaert, Ciccotti & Berendsen 1977; Andersen 1983), the
//! Störmer–Verlet method for holonomically constrained systems. Symmetric, symplectic,
//! second order; positions satisfy `Φ = 0` and velocities `Φ_q v + Φ_t = 0` at every step
//! (Hairer, Lubich & Wanner, Geometric Numerical Integration, 2nd ed., §VII.1.4; it is the
//! 2-stage Lobatto IIIA–IIIB pair, Jay 1996).
//!
//! ```text
//! v_{n+½} = v_n + ½h M⁻¹ (f(t_n, q_n, v_{n+½}) − Φ_q(q_n)ᵀ λ_n)
//! q_{n+1} = q_n + h v_{n+½},                    Φ(t_{n+1}, q_{n+1}) = 0        (SHAKE: λ_n)
//! v_{n+1} = v_{n+½} + ½h M⁻¹ (f(t_{n+1}, q_{n+1}, v_{n+½}) − Φ_q(q_{n+1})ᵀ μ_n),
//!                                              Φ_q(q_{n+1}) v_{n+1} + Φ_t = 0  (RATTLE: μ_n)
//! ```
//!
//! The position multiplier solves the nonlinear system `Φ(q̂ − ½h² M⁻¹ Φ_q(q_n)ᵀ λ) = 0`
//! (for forces of the positions only) by a simplified Newton iteration whose matrix
//! `[[M, Φ_q(q_n)ᵀ], [Φ_q(q_n), 0]]` is factored **once per step** (convergence factor
//! O(h), since Φ_q(q_{n+1}) − Φ_q(q_n) = O(h)); a velocity-dependent force adds the
//! kick's Newton iteration (one factorization, two when a kept `D` is abandoned, and n
//! force evaluations whenever `D` is computed afresh; `rattle_kick.rs`); the velocity
//! multiplier is one linear KKT solve at `q_{n+1}`. The multiplier
//! and acceleration reported at `t_{n+1}` solve the acceleration-level KKT system at
//! `(q_{n+1}, v_{n+1})` with the factorization already made for the velocity step (one
//! extra solve): λ_n and μ_n themselves approximate λ(t) only to O(h).
//!
//! Velocity-dependent forces (damping, feedback, the quadratic velocity terms of a
//! configuration-dependent `M(q)`) enter where the Lobatto IIIA–IIIB pair puts them: both
//! kicks at its velocity stage `V₁ = V₂ = v_{n+½}` (IIIB: `â = [[½, 0], [½, 0]]`), which
//! makes the first kick implicit in `v_{n+½}` (`rattle_kick.rs`: SHAKE, then, only when
//! the force changes with the velocity, a Newton iteration with `M + ½h D`,
//! `D = −sym(∂f/∂v)` in M's pattern) and keeps the second explicit. As a partitioned Runge–Kutta
//! pair it has order 2s − 2 = 2 for any partitioned system (GNI 2nd ed. §II.2.2, after
//! Jay 1996 and Sun 1993); measured at 2 with velocity feedback (`tracked-arm`) and with
//! the quadratic velocity forces of Euler parameters (`quaternion-body`) in
//! `tests/rattle_velocity_forces.rs`. Evaluating the first kick at `v_n` instead is first
//! order when `f` depends on `v`: this method did that before, measured at 1.0 on both.

use super::rattle_kick::{implicit_half_kick, DampingColumns, KickStep, KickWork};
use crate::dynamics::{count_step, kkt_failure, kkt_start, with_kkt_stats, KktChoice};
use driftlab_core::prelude::*;
use driftlab_solver::newton::{NewtonFailure, NewtonKernel, NewtonOptions};
use driftlab_solver::KktSolver;
use serde::{Deserialize, Serialize};

/// Parameters of [`Rattle`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RattleParams {
    /// The SHAKE iteration stops when `‖Φ(q_{n+1})‖∞ ≤ tol`, or at the round-off floor
    /// (below `1e-9 (1 + ‖q‖∞)` and no longer halving); the implicit kick of a
    /// velocity-dependent force when its update of `q_{n+1}` and `‖Φ‖∞` are both within
    /// `tol` (positions' units), or at its own round-off floor (`rattle_kick.rs`).
    pub tol: f64,
    /// Iteration cap of SHAKE and of each kick attempt (a step may make one attempt with
    /// a kept `D` and one with a fresh `D`); exceeding it fails the run.
    pub max_iter: usize,
    /// KKT factorization.
    pub kkt: KktChoice,
}

impl Default for RattleParams {
    fn default() -> Self {
        Self {
            tol: 1e-13,
            max_iter: 50,
            kkt: KktChoice::Auto,
        }
    }
}

/// SHAKE/RATTLE.
pub struct Rattle {
    p: RattleParams,
}

/// [`Rattle`] bound to its system.
struct RattleStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: RattleParams,
    kkt: KktSolver,
    work: Work,
    /// The forward-difference map of `−∂f/∂v` in M's pattern (`rattle_kick`), built at
    /// the first step whose force depends on the velocity.
    columns: Option<DampingColumns>,
    init_stats: MethodStats,
    stats: MethodStats,
}

impl Rattle {
    /// RATTLE with Newton tolerance `tol > 0`; `ParamError` otherwise. Its KKT solver is
    /// built at `start`.
    pub fn new(p: RattleParams) -> Result<Self, ParamError> {
        driftlab_core::params::positive(ID, "tol", p.tol)?;
        Ok(Self { p })
    }
}

/// Declared properties of `rattle`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "yes: RATTLE is symplectic on the constraint manifold 𝓜 = {Φ = 0, Φ_q M⁻¹p = 0} (Leimkuhler & Skeel, J. Comput. Phys. 112, 1994; GNI Thm. VII.1.3); measured in tests/symplecticity.rs".into(),
        family: "symplectic-partitioned-rk".into(),
        title: "SHAKE/RATTLE (constrained Störmer–Verlet, Lobatto IIIA–IIIB s = 2)".into(),
        equations: "v½ = v + ½hM⁻¹(f(q, v½) − Φ_qᵀλ);  q⁺ = q + h v½, Φ(q⁺) = 0;  v⁺ = v½ + ½hM⁻¹(f(q⁺, v½) − Φ_q⁺ᵀμ), Φ_q⁺ v⁺ + Φ_t = 0".into(),
        citation: "Ryckaert, Ciccotti & Berendsen, J. Comput. Phys. 23 (1977); Andersen, J. Comput. Phys. 52 (1983); order 2, \
                   symmetric, symplectic: Hairer, Lubich & Wanner, GNI 2nd ed. §VII.1.4 and Jay, SIAM J. Numer. Anal. 33 (1996)"
            .into(),
        orders: DeclaredOrders { q: Some(2.0), v: Some(2.0), lambda: Some(2.0) },
        enforces: ConstraintLevels { position: true, velocity: true, acceleration: true },
        implicit: true,
        symmetric: true,
        symplectic: true,
        ..MethodInfo::default()
    }
}

impl Method for Rattle {
    fn info(&self) -> MethodInfo {
        info()
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let s = sys;
        let (kkt, stats) = kkt_start(s, self.p.kkt.options(opts), state)?;
        Ok(Box::new(RattleStepper {
            sys,
            p: self.p,
            kkt,
            work: Work::new(s),
            columns: None,
            init_stats: stats,
            stats: MethodStats::default(),
        }))
    }
    /// The next step depends on the state alone, except for the kick's kept `D` (a cache
    /// that sets the speed of its iteration and moves its answer within the kick's
    /// stopping test: `tol`, or its round-off floor, `rattle_kick.rs`).
    fn restartable(&self) -> bool {
        true
    }
}

impl Stepper for RattleStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let (s, kkt, w) = (self.sys, &mut self.kkt, &mut self.work);
        let n = state.q.len();
        let (t0, t1) = (state.t, state.t + h);
        s.mass(&state.q, &mut w.mass);
        s.jacobian(t0, &state.q, &mut w.jac);
        // Start from q_n + h v_n + ½h² a_n (a_n = M⁻¹(f_n − Gₙᵀλ) with the last multiplier);
        // every SHAKE correction stays in the affine family q̂ − ½h² M⁻¹ Gₙᵀ λ.
        for i in 0..n {
            w.q[i] = state.q[i] + h * state.v[i] + 0.5 * h * h * state.a[i];
        }
        kkt.factorize(&w.mass, &w.jac, None)
            .map_err(|e| kkt_failure(s, t0, &state.q, e))?;
        let mut report = StepReport {
            factorizations: 1,
            ..Default::default()
        };
        // The predictor's half kick carries f(t_n, q_n, v_n) (through a_n).
        s.forces(t0, &state.q, &state.v, &mut w.kick.carried);
        report.newton_iterations = shake(
            kkt,
            s,
            &self.p,
            state,
            t1,
            &mut w.q,
            (&mut w.phi, &mut w.rhs),
        )?;
        let step = KickStep {
            sys: s,
            mass_pattern: &w.mp,
            state,
            h,
            mass: &w.mass,
            jac: &w.jac,
            tol: self.p.tol,
            max_iter: self.p.max_iter,
        };
        let kick = implicit_half_kick(
            &step,
            &mut self.columns,
            kkt,
            &mut w.kick,
            &mut w.q,
            (&mut w.phi, &mut w.rhs),
        )?;
        report.newton_iterations += kick.iterations;
        report.factorizations += kick.factorizations;
        velocity_half_kick(kkt, s, state, h, w)?;
        report.factorizations += 1;
        // The multiplier and acceleration consistent with (q_{n+1}, v_{n+1}).
        consistent_acceleration(
            kkt,
            s,
            state,
            (t1, &w.q),
            (&mut w.f, &mut w.phi, &mut w.rhs),
        )?;
        std::mem::swap(&mut state.q, &mut w.q);
        state.t = t1;
        Ok(count_step(&mut self.stats, report))
    }

    /// The step starts from `a_n` (the half kick carries `f_n`): after an outside change
    /// of `v` or of the forces, `a` and `λ` consistent with the state, as at the start.
    fn restart(&mut self, state: &mut State) -> Result<(), StepError> {
        let (s, kkt, w) = (self.sys, &mut self.kkt, &mut self.work);
        w.kick.forget_damping();
        s.mass(&state.q, &mut w.mass);
        s.jacobian(state.t, &state.q, &mut w.jac);
        kkt.factorize(&w.mass, &w.jac, None)
            .map_err(|e| kkt_failure(s, state.t, &state.q, e))?;
        w.q.copy_from_slice(&state.q);
        let t = state.t;
        consistent_acceleration(kkt, s, state, (t, &w.q), (&mut w.f, &mut w.phi, &mut w.rhs))
    }

    fn stats(&self) -> MethodStats {
        with_kkt_stats(self.stats.merged(self.init_stats), Some(self.kkt.stats()))
    }
}

/// RATTLE's second half kick, from `q_{n+1}` in `w.q` (with `state` still at `t_n`): `v_{n+½}`,
/// then `[M⁺ G⁺ᵀ; G⁺ 0][v_{n+1}; ½h μ] = [M⁺ v_{n+½} + ½h f(t_{n+1}, q_{n+1}, v_{n+½}); −Φ_t]`
/// with a fresh factorization at `q_{n+1}`; writes `v_{n+1}` into `state.v`.
fn velocity_half_kick(
    kkt: &mut KktSolver, s: &dyn MechanicalSystem, state: &mut State, h: f64, w: &mut Work,
) -> Result<(), StepError> {
    let (n, t0, t1) = (state.q.len(), state.t, state.t + h);
    for i in 0..n {
        w.v_half[i] = (w.q[i] - state.q[i]) / h;
    }
    s.mass(&w.q, &mut w.mass);
    s.jacobian(t1, &w.q, &mut w.jac);
    s.forces(t1, &w.q, &w.v_half, &mut w.f);
    w.mp.mul_vec(&w.mass, &w.v_half, &mut w.mv, true);
    for i in 0..n {
        w.rhs[i] = w.mv[i] + 0.5 * h * w.f[i];
    }
    s.phi_t(t1, &w.q, &mut w.phi);
    for (r, p) in w.rhs[n..].iter_mut().zip(&w.phi) {
        *r = -p;
    }
    kkt.factorize(&w.mass, &w.jac, None)
        .map_err(|e| kkt_failure(s, t0, &state.q, e))?;
    kkt.solve(&mut w.rhs)
        .map_err(|e| kkt_failure(s, t0, &state.q, e))?;
    state.v.copy_from_slice(&w.rhs[..n]);
    Ok(())
}

/// Work space of a step, allocated once at `start` with the patterns of `M` and `Φ_q`.
struct Work {
    mp: driftlab_core::SparsityPattern,
    mass: Vec<f64>,
    jac: Vec<f64>,
    f: Vec<f64>,
    q: Vec<f64>,
    v_half: Vec<f64>,
    kick: KickWork,
    mv: Vec<f64>,
    phi: Vec<f64>,
    rhs: Vec<f64>,
}

impl Work {
    fn new(s: &dyn MechanicalSystem) -> Self {
        let d = s.dims();
        let mp = s.mass_pattern();
        let nnz = mp.nnz();
        Self {
            mass: vec![0.0; nnz],
            mp,
            jac: vec![0.0; s.jacobian_pattern().nnz()],
            f: vec![0.0; d.n],
            q: vec![0.0; d.n],
            v_half: vec![0.0; d.n],
            kick: KickWork::new(d.n, nnz),
            mv: vec![0.0; d.n],
            phi: vec![0.0; d.m],
            rhs: vec![0.0; d.n + d.m],
        }
    }
}

/// SHAKE: the simplified Newton iteration for the position multiplier. With the KKT
/// matrix `[[M, Gₙᵀ], [Gₙ, 0]]` factored at `q_n` (`Gₙ = Φ_q(q_n)`), each correction solves
///
/// ```text
/// [M Gₙᵀ; Gₙ 0][δq; μ] = [0; −Φ(t_{n+1}, q)],   q ← q + δq
/// ```
///
/// so `q` stays in the affine family `q̂ − ½h² M⁻¹ Gₙᵀ λ`. Stops once `‖Φ‖∞ ≤ tol` or at
/// the round-off floor (`crate::roundoff`); returns the corrections made (the first
/// kernel call only evaluates the predictor's residual). `phi` and `rhs` are work
/// space of lengths `m` and `n + m`.
fn shake(
    kkt: &mut KktSolver, s: &dyn MechanicalSystem, p: &RattleParams, state: &State, t1: f64,
    q: &mut [f64], (phi, rhs): (&mut [f64], &mut [f64]),
) -> Result<usize, StepError> {
    let (n, m, t0) = (q.len(), phi.len(), state.t);
    let mut previous = f64::INFINITY;
    let qscale = 1.0 + q.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
    // SHAKE stops on its residual, not on a correction: the kernel's η test is off
    // (tol 0) and an iteration reports 0 once ‖Φ‖ ≤ tol, or once the residual is at
    // the round-off floor of Φ for large coordinates (a 1000-link chain reaches
    // |q| = 1000: Φ = |d|² − ℓ² carries ≈ 1e-13 of cancellation): below
    // 1e-9 (1 + ‖q‖∞) and no longer halving (`crate::roundoff`). A residual that grows
    // (θ ≥ 0.99) ends the iteration at once: the frozen matrix at q_n no longer
    // contracts (past the step's stability limit, e.g. the spinning spatial chain at
    // h ω_max > 2), and iterating on would only overflow Φ to ∞ and report that.
    let mut kernel = NewtonKernel::new(NewtonOptions {
        tol: 0.0,
        max_iter: p.max_iter + 1,
        floor: 0.0,
        predict: false,
        carry_eta: false,
        stop_on_growth: true,
    });
    let tol = p.tol;
    let mut res = f64::NAN;
    let solved = kernel.solve(|k| {
        if k > 1 {
            // Correction along M⁻¹ Φ_q(q_n)ᵀ: [M Gₙᵀ; Gₙ 0][δq; μ] = [0; −Φ(q)].
            rhs[..n].iter_mut().for_each(|x| *x = 0.0);
            for r in 0..m {
                rhs[n + r] = -phi[r];
            }
            kkt.solve(rhs)
                .map_err(|e| kkt_failure(s, t0, &state.q, e))?;
            for i in 0..n {
                q[i] += rhs[i];
            }
        }
        s.constraints(t1, q, phi);
        res = phi.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
        if res.is_nan() {
            return Ok(f64::NAN);
        }
        if res <= tol || crate::roundoff::stalled(res, previous, qscale, crate::roundoff::NEWTON) {
            return Ok(0.0);
        }
        previous = res;
        Ok(res)
    });
    // The first call only evaluates the residual of the predictor.
    let iterations = kernel.counters.iterations.saturating_sub(1);
    match solved {
        Ok(_) => Ok(iterations),
        Err(NewtonFailure::Iteration(e)) => Err(e),
        Err(_) => Err(StepError::NewtonDiverged {
            t: t0,
            iterations,
            residual: res,
            tol: p.tol,
        }),
    }
}

/// The multiplier and acceleration consistent with `(q_{n+1}, v_{n+1})`, with the KKT
/// matrix already factored at `q_{n+1}` for the velocity step (one extra solve):
///
/// ```text
/// [M⁺ G⁺ᵀ; G⁺ 0][a_{n+1}; λ_{n+1}] = [f(t_{n+1}, q_{n+1}, v_{n+1}); γ(t_{n+1}, q_{n+1}, v_{n+1})]
/// ```
///
/// RATTLE's own λ_n and μ_n are only O(h) approximations of λ(t); this one is O(h²) like
/// q and v. Reads `state.v` (already `v_{n+1}`) and writes `state.a`, `state.lambda`;
/// `state.q` is still `q_n` (named in a failure). `f`, `gamma`, `rhs` are work space.
fn consistent_acceleration(
    kkt: &mut KktSolver, s: &dyn MechanicalSystem, state: &mut State, (t1, q): (f64, &[f64]),
    (f, gamma, rhs): (&mut [f64], &mut [f64], &mut [f64]),
) -> Result<(), StepError> {
    let n = q.len();
    s.forces(t1, q, &state.v, f);
    rhs[..n].copy_from_slice(f);
    s.curvature(t1, q, &state.v, gamma);
    rhs[n..].copy_from_slice(gamma);
    kkt.solve(rhs)
        .map_err(|e| kkt_failure(s, state.t, &state.q, e))?;
    state.a.copy_from_slice(&rhs[..n]);
    state.lambda.copy_from_slice(&rhs[n..]);
    Ok(())
}

/// The catalog id `rattle`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "rattle";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(Rattle::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<RattleParams>,
    }
}
