//! `implicit-euler`: backward Euler with the constraint imposed at the new time, for both
//! forms.
//!
//! **Index 1** (seed 003 §保持约束的离散计算):
//!
//! ```text
//! (x_{n+1} − x_n)/h = f(t_{n+1}, x_{n+1}, z_{n+1}),     0 = g(t_{n+1}, x_{n+1}, z_{n+1}),
//! ```
//!
//! Newton with the dense Jacobian `[[I − h f_x, −h f_z], [g_x, g_z]]`. For the seed-003
//! example this is the recursion `x_{n+1} = (x_n + c h)/(1 + 2h)`. Order 1 in x and z
//! (Hairer & Wanner, Solving ODEs II, §VI.1).
//!
//! **Index 3** (seed 002 §19.2, the constraint `Φ(q_{n+1}) = 0` enforced, not a
//! differentiated one):
//!
//! ```text
//! q_{n+1} = q_n + h v_{n+1},    M (v_{n+1} − v_n) = h f_{n+1} − h Φ_q(q_{n+1})ᵀ λ_{n+1},    Φ(t_{n+1}, q_{n+1}) = 0
//! ```
//!
//! Unknowns `(v_{n+1}, Λ = h λ_{n+1})`; Newton on the residuals
//! `R_v = M(v − v_n) − h f + Φ_qᵀ Λ`, `R_c = Φ(q_n + h v)/h` has the symmetric KKT matrix
//! `[[M + h² (K_Φ + K_t) + h C_t, Φ_qᵀ], [Φ_q, 0]]` with `K_Φ = Σ λ_i ∇²Φ_i` and the
//! problem's symmetric tangent stiffness `K_t` and damping `C_t` (each dropped —
//! simplified Newton — when the problem does not provide it). The
//! pattern is analysed once per run on the sparse LDLᵀ solver. Global order 1 in q, v and
//! λ at fixed t > 0 for constant steps (BDF1 on index-3 Hessenberg systems: Lötstedt &
//! Petzold, Math. Comp. 46 (1986) 491–516; Brenan, Campbell & Petzold 1996, Thm. 3.2.2);
//! from a start with v₀ ≠ 0, λ₁ solves the acceleration constraint with half the
//! curvature term (an O(1) first-step layer that the max-over-run error exposes).
//! Strongly damping: the energy of a conservative system decays (seed 002 §19.3).
//!
//! `formulation = "index-2"` imposes `Φ_q(q_{n+1}) v_{n+1} + Φ_t = 0` instead, and
//! `"index-1"` imposes `Φ_q a = γ` with `a = (v_{n+1} − v_n)/h` — the index-reduced
//! formulations the ODASSL pendulum demo compares (Führer & Leimkuhler 1991). Both use the
//! same KKT Newton matrix (simplified: the O(h) derivative of the constraint row is
//! dropped) and are first order (BDF1 on index-2 / index-1 systems: Brenan, Campbell &
//! Petzold 1996, §3.1–3.2); the lower levels drift.

use crate::dynamics::{consistent_start, kkt_failure, linear_error, IterationTerms, KktChoice};
use crate::dynamics::{count_step, newton_outcome};
use crate::implicit::implicit_form::{ImplicitRk, NewtonSettings};
use driftlab_core::prelude::*;

use driftlab_core::Index1Jacobians;
use driftlab_solver::dense::solve_dense;
use driftlab_solver::newton::{NewtonKernel, NewtonOptions};
use driftlab_solver::{KktPattern, KktSolver};
use serde::{Deserialize, Serialize};

/// Parameters of [`ImplicitEuler`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImplicitEulerParams {
    /// Newton stops when `‖Δ‖∞ ≤ tol (1 + ‖unknowns‖∞)`, or (index 3) at the round-off
    /// floor: `‖Δ‖∞ < 1e-9 (1 + ‖v‖∞)` and no longer halving.
    pub tol: f64,
    /// Newton iteration cap (exceeding it fails the run).
    pub max_iter: usize,
    /// KKT factorization (index-3 form).
    pub kkt: KktChoice,
    /// Which constraint level the mechanical form imposes at `t_{n+1}` (the ODASSL
    /// pendulum demo's formulations): `index-3` `Φ(q) = 0` (default), `index-2`
    /// `Φ_q v + Φ_t = 0`, `index-1` `Φ_q a = γ` with `a = (v_{n+1} − v_n)/h`.
    pub formulation: Formulation,
}

/// The constraint level imposed by the mechanical form of [`ImplicitEuler`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Formulation {
    /// Position constraint (index 3).
    #[default]
    #[serde(rename = "index-3")]
    Index3,
    /// Velocity constraint (index 2): positions drift.
    #[serde(rename = "index-2")]
    Index2,
    /// Acceleration constraint (index 1): positions and velocities drift.
    #[serde(rename = "index-1")]
    Index1,
}

impl Default for ImplicitEulerParams {
    fn default() -> Self {
        Self {
            tol: 1e-12,
            max_iter: 25,
            kkt: KktChoice::Auto,
            formulation: Formulation::Index3,
        }
    }
}

/// Work space of the index-3 Newton iteration.
pub(crate) struct Index3 {
    kkt: KktSolver,
    terms: IterationTerms,
    a_vals: Vec<f64>,
    jac: Vec<f64>,
    f: Vec<f64>,
    phi: Vec<f64>,
    rhs: Vec<f64>,
    mv: Vec<f64>,
    gtl: Vec<f64>,
    init_stats: MethodStats,
}

impl Index3 {
    /// Assemble the Newton system at `v⁺` (with `q⁺ = q̄ + h v⁺` already in `q`; backward
    /// Euler's q̄ = q_n, see [`Backward`]): the iteration block
    /// `∂R_v/∂v = M + h²(K_Φ + K_t) + h C_t` (lower values) in `a_vals`, `Φ_q(q⁺)` in
    /// `jac`, and the right-hand side `−R` in `rhs`, with `R_v = M(v⁺ − v̄) − h f⁺ + Φ_qᵀ Λ`
    /// (`vn` holds v̄) and the constraint rows of
    /// [`Index3::constraint_rows`].
    fn assemble(
        &mut self, s: &dyn MechanicalSystem, (mp, jp): (&SparsityPattern, &SparsityPattern),
        (t1, h): (f64, f64), (q, v, vn): (&[f64], &[f64], &[f64]), big_l: &[f64],
        formulation: Formulation,
    ) {
        let n = q.len();
        let n_mass = self.terms.n_mass;
        s.mass(q, &mut self.a_vals[..n_mass]);
        let diff: Vec<f64> = (0..n).map(|i| v[i] - vn[i]).collect();
        mp.mul_vec(&self.a_vals[..n_mass], &diff, &mut self.mv, true);
        // ∂R_v/∂v = M + h²(K_Φ + K_t) + h C_t, with q = q_n + h v.
        let lam: Vec<f64> = big_l.iter().map(|x| x / h).collect();
        self.terms
            .fill(s, t1, q, v, &lam, (h * h, h * h, h), &mut self.a_vals);
        s.forces(t1, q, v, &mut self.f);
        s.jacobian(t1, q, &mut self.jac);
        s.constraints(t1, q, &mut self.phi);
        jp.mul_transpose_vec(&self.jac, big_l, &mut self.gtl);
        for i in 0..n {
            self.rhs[i] = -(self.mv[i] - h * self.f[i] + self.gtl[i]);
        }
        self.constraint_rows(s, jp, (t1, h), (q, v, &diff), formulation);
    }

    /// The constraint rows `rhs[n..]` of `−R` for the formulation: `−Φ(t⁺, q⁺)/h`
    /// (index 3), `−(Φ_q v⁺ + Φ_t)` (index 2), `−h (Φ_q a − γ)` with
    /// `a = (v⁺ − v_n)/h` (index 1); `diff = v⁺ − v_n`, `Φ` and `Φ_q` already evaluated.
    fn constraint_rows(
        &mut self, s: &dyn MechanicalSystem, jp: &SparsityPattern, (t1, h): (f64, f64),
        (q, v, diff): (&[f64], &[f64], &[f64]), formulation: Formulation,
    ) {
        let (n, m) = (q.len(), self.phi.len());
        match formulation {
            Formulation::Index3 => {
                for r in 0..m {
                    self.rhs[n + r] = -self.phi[r] / h;
                }
            }
            Formulation::Index2 => {
                // Φ_q(q⁺) v⁺ + Φ_t = 0 (simplified Newton: the h (Φ_q v)_q term dropped).
                let mut gv = vec![0.0; m];
                jp.mul_vec(&self.jac, v, &mut gv, false);
                let mut pt = vec![0.0; m];
                s.phi_t(t1, q, &mut pt);
                for r in 0..m {
                    self.rhs[n + r] = -(gv[r] + pt[r]);
                }
            }
            Formulation::Index1 => {
                // h·(Φ_q a − γ) with a = (v⁺ − v_n)/h.
                let mut gd = vec![0.0; m];
                jp.mul_vec(&self.jac, diff, &mut gd, false);
                let mut gamma = vec![0.0; m];
                s.curvature(t1, q, v, &mut gamma);
                for r in 0..m {
                    self.rhs[n + r] = -(gd[r] - h * gamma[r]);
                }
            }
        }
    }
}

/// Add the Newton correction `(Δv, ΔΛ)` in `delta` to `(v, Λ)`; returns `‖Δv‖∞` and the
/// size `‖v‖∞` of the corrected velocity.
fn apply_correction(delta: &[f64], v: &mut [f64], big_l: &mut [f64]) -> (f64, f64) {
    let n = v.len();
    for i in 0..n {
        v[i] += delta[i];
    }
    for r in 0..big_l.len() {
        big_l[r] += delta[n + r];
    }
    let size = v.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
    let dv = delta[..n].iter().fold(0.0_f64, |a, x| a.max(x.abs()));
    (dv, size)
}

/// Backward Euler for index-1 and index-3 systems.
pub struct ImplicitEuler {
    p: ImplicitEulerParams,
}

impl ImplicitEuler {
    /// Implicit Euler with Newton tolerance `tol > 0`; `ParamError` otherwise. The form
    /// (index 3 or index 1) is chosen at `start` from the problem.
    pub fn new(p: ImplicitEulerParams) -> Result<Self, ParamError> {
        driftlab_core::params::positive(ID, "tol", p.tol)?;
        Ok(Self { p })
    }
}

/// [`ImplicitEuler`] bound to a mechanical system (index-3 form and its index-reduced
/// formulations).
struct ImplicitEulerStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: ImplicitEulerParams,
    stats: MethodStats,
    index3: Index3,
}

/// [`ImplicitEuler`] bound to a semi-explicit index-1 DAE.
struct ImplicitEulerIndex1Stepper<'s> {
    sys: &'s dyn SemiExplicitDae,
    p: ImplicitEulerParams,
    stats: MethodStats,
}

/// Declared properties of `implicit-euler`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: backward Euler is not symplectic even for ODEs (it damps: R(z) = 1/(1 − z); GNI §VI.4); measured in tests/symplecticity.rs".into(),
        family: "implicit-runge-kutta".into(),
        title: "Implicit (backward) Euler with the constraint imposed at t_{n+1} (index 1 and index 3)".into(),
        equations: "index 1: (x_{n+1} − x_n)/h = f_{n+1}, 0 = g_{n+1};  index 3: q_{n+1} = q_n + h v_{n+1}, \
                    M(v_{n+1} − v_n) = h(f_{n+1} − Φ_qᵀλ_{n+1}), Φ(q_{n+1}) = 0;  Newton on [M + h²K, Φ_qᵀ; Φ_q, 0]"
            .into(),
        citation: "seed 003 §保持约束的离散计算 (index 1); seed 002 §19.2 (index 3); orders: Hairer & Wanner, Solving ODEs II \
                   §VI.1 (index 1), Lötstedt & Petzold, Math. Comp. 46 (1986) (index 3, BDF1)"
            .into(),
        orders: DeclaredOrders { q: Some(1.0), v: Some(1.0), lambda: Some(1.0) },
        enforces: ConstraintLevels { position: true, velocity: false, acceleration: false },
        implicit: true,
        forms: vec![SystemForm::SemiExplicit, SystemForm::Mechanical, SystemForm::Implicit],
        ..MethodInfo::default()
    }
}

impl ImplicitEuler {
    /// The index-3 work space, with consistent `λ` and `a` at `state`.
    pub(crate) fn init_index3(
        &self, s: &dyn MechanicalSystem, state: &mut State, opts: &StartOptions,
    ) -> Result<Index3, MethodError> {
        let d = s.dims();
        let (pattern, terms): (KktPattern, _) = IterationTerms::layout(s);
        // Consistent λ0 and a0 from the acceleration-level KKT system (for the predictor
        // and the acceleration residual of the initial state), first: its solver is freed
        // before the iteration matrix's is built (peak heap).
        let init_stats = consistent_start(s, self.p.kkt.options(opts), state)?;
        let kkt = KktSolver::new(&pattern, self.p.kkt.options(opts))
            .map_err(|e| MethodError::Init(linear_error(state.t, e)))?;
        Ok(Index3 {
            kkt,
            terms,
            a_vals: vec![0.0; pattern.a_lower.len()],
            jac: vec![0.0; pattern.b.len()],
            f: vec![0.0; d.n],
            phi: vec![0.0; d.m],
            rhs: vec![0.0; d.n + d.m],
            mv: vec![0.0; d.n],
            gtl: vec![0.0; d.n],
            init_stats,
        })
    }
}

/// The start of one backward step on the index-3 form: with the effective step `h`,
/// `q⁺ = q̄ + h v⁺` and `M(v⁺ − v̄) = h(f⁺ − Φ_qᵀλ⁺)` at `t⁺`, `Φ(t⁺, q⁺) = 0`. Backward
/// Euler has `(q̄, v̄, h) = (q_n, v_n, h_n)`; BDF-k the combination of its history
/// (`crate::implicit::bdf`). Then `a⁺ = (v⁺ − v̄)/h`.
pub(crate) struct Backward {
    pub qbar: Vec<f64>,
    pub vbar: Vec<f64>,
    pub h: f64,
    pub t1: f64,
}

impl Index3 {
    /// One backward step from `from` (Newton on `(v⁺, Λ = hλ⁺)` with the sparse KKT
    /// matrix); the predictor is `v_n + h a_n` and `λ_n` from `state`, which the step
    /// overwrites with `(t⁺, q⁺, v⁺, a⁺, λ⁺)`.
    pub(crate) fn backward_step(
        &mut self, s: &dyn MechanicalSystem, p: &ImplicitEulerParams, from: &Backward,
        state: &mut State,
    ) -> Result<StepReport, StepError> {
        let w = self;
        let m = state.lambda.len();
        let Backward { qbar, vbar, h, t1 } = from;
        let (h, t1, n) = (*h, *t1, qbar.len());
        // Predictor: explicit Euler velocity, previous multiplier.
        let mut v: Vec<f64> = (0..n).map(|i| state.v[i] + h * state.a[i]).collect();
        let mut big_l: Vec<f64> = state.lambda.iter().map(|l| h * l).collect();
        let mut q = vec![0.0; n];
        let jp = s.jacobian_pattern();
        let mp = s.mass_pattern();
        let mut previous_dv = f64::INFINITY;
        let mut kernel = NewtonKernel::new(NewtonOptions::full(p.max_iter));
        let solved = kernel.solve(|_| {
            for i in 0..n {
                q[i] = qbar[i] + h * v[i];
            }
            w.assemble(
                s,
                (&mp, &jp),
                (t1, h),
                (&q, &v, vbar),
                &big_l,
                p.formulation,
            );
            w.kkt
                .factorize(&w.a_vals, &w.jac, None)
                .map_err(|e| kkt_failure(s, state.t, &q, e))?;
            w.kkt
                .solve(&mut w.rhs)
                .map_err(|e| kkt_failure(s, state.t, &q, e))?;
            let (dv, size) = apply_correction(&w.rhs, &mut v, &mut big_l);
            // At the round-off floor of a badly scaled KKT system (Andrews: M entries
            // 1e-7 … 1e-5 next to Φ_q entries 1e-2) the correction is already below 1e-9
            // relative and no longer halves (`crate::roundoff`): converged.
            if crate::roundoff::stalled(dv, previous_dv, 1.0 + size, crate::roundoff::NEWTON) {
                return Ok(0.0);
            }
            previous_dv = dv;
            Ok(dv / (p.tol * (1.0 + size)))
        });
        let iterations = kernel.counters.iterations;
        let report = newton_outcome(solved, iterations, state.t, p.tol, || {
            for i in 0..n {
                q[i] = qbar[i] + h * v[i];
            }
            s.constraints(t1, &q, &mut w.phi);
            let res = w.phi.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
            res
        })?;
        for i in 0..n {
            state.q[i] = qbar[i] + h * v[i];
            state.a[i] = (v[i] - vbar[i]) / h;
        }
        state.v = v;
        for r in 0..m {
            state.lambda[r] = big_l[r] / h;
        }
        state.t = t1;
        Ok(report)
    }

    /// The solver's counters and the start's, added to `stats`.
    pub(crate) fn add_stats(&self, mut stats: MethodStats) -> MethodStats {
        crate::dynamics::add_kkt_stats(&mut stats, self.kkt.stats());
        stats.merged(self.init_stats)
    }
}

impl Stepper for ImplicitEulerStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let from = Backward {
            qbar: state.q.clone(),
            vbar: state.v.clone(),
            h,
            t1: state.t + h,
        };
        let report = self.index3.backward_step(self.sys, &self.p, &from, state)?;
        Ok(count_step(&mut self.stats, report))
    }

    fn stats(&self) -> MethodStats {
        self.index3.add_stats(self.stats)
    }
}

impl Stepper for ImplicitEulerIndex1Stepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let s = self.sys;
        let (nx, nz) = s.dims();
        let n = nx + nz;
        let t1 = state.t + h;
        let xn = state.q.clone();
        let (mut x, mut z) = (state.q.clone(), state.lambda.clone());
        let mut jacs = Index1Jacobians::zeros(nx, nz);
        let (mut f, mut g) = (vec![0.0; nx], vec![0.0; nz]);
        let mut jac = vec![0.0; n * n];
        let mut rhs = vec![0.0; n];
        let mut kernel = NewtonKernel::new(NewtonOptions::full(self.p.max_iter));
        let solved = kernel.solve(|_| {
            s.f(t1, &x, &z, &mut f);
            s.g(t1, &x, &z, &mut g);
            s.jacobians(t1, &x, &z, &mut jacs);
            index1_newton_system(h, (&x, &xn), (&f, &g), &jacs, &mut jac, &mut rhs);
            solve_dense(n, &jac, &mut rhs).map_err(|e| StepError::LinearSolve {
                t: state.t,
                detail: e.to_string(),
            })?;
            for (xi, d) in x.iter_mut().chain(z.iter_mut()).zip(&rhs) {
                *xi += d;
            }
            let size = x.iter().chain(&z).fold(0.0_f64, |m, v| m.max(v.abs()));
            let step = rhs.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            Ok(step / (self.p.tol * (1.0 + size)))
        });
        let iterations = kernel.counters.iterations;
        let report = newton_outcome(solved, iterations, state.t, self.p.tol, || {
            s.f(t1, &x, &z, &mut f);
            s.g(t1, &x, &z, &mut g);
            (0..nx)
                .map(|i| (x[i] - xn[i] - h * f[i]).abs())
                .chain(g.iter().map(|v| v.abs()))
                .fold(0.0, f64::max)
        })?;
        state.q = x;
        state.lambda = z;
        state.t = t1;
        self.stats.steps += 1;
        self.stats.newton_iterations += report.newton_iterations;
        self.stats.factorizations += report.factorizations;
        self.stats.solves += report.factorizations;
        Ok(report)
    }

    fn stats(&self) -> MethodStats {
        self.stats
    }
}

impl Method for ImplicitEuler {
    fn info(&self) -> MethodInfo {
        let mut i = info();
        match self.p.formulation {
            Formulation::Index3 => {}
            Formulation::Index2 => {
                i.title = "Implicit Euler, index-2 formulation (velocity constraint Φ_q v + Φ_t = 0 at t_{n+1})".into();
                i.enforces = ConstraintLevels {
                    position: false,
                    velocity: true,
                    acceleration: false,
                };
            }
            Formulation::Index1 => {
                i.title = "Implicit Euler, index-1 formulation (acceleration constraint Φ_q a = γ at t_{n+1})".into();
                i.enforces = ConstraintLevels {
                    position: false,
                    velocity: false,
                    acceleration: true,
                };
            }
        }
        i
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let index3 = self.init_index3(sys, state, opts)?;
        Ok(Box::new(ImplicitEulerStepper {
            sys,
            p: self.p,
            stats: MethodStats::default(),
            index3,
        }))
    }
    fn start_index1<'s>(
        &self, sys: &'s dyn SemiExplicitDae, _state: &mut State, _: &StartOptions,
    ) -> Result<Box<dyn Stepper + 's>, MethodError> {
        Ok(Box::new(ImplicitEulerIndex1Stepper {
            sys,
            p: self.p,
            stats: MethodStats::default(),
        }))
    }
    /// The fully implicit form: Radau IIA with one stage, `F(t_{n+1}, y_n + h y′, y′) = 0`
    /// ([`crate::implicit::implicit_form`]).
    fn start_implicit<'s>(
        &self, sys: &'s dyn ImplicitDae, _state: &mut State, _: &StartOptions,
    ) -> Result<Box<dyn Stepper + 's>, MethodError> {
        let settings = NewtonSettings {
            tol: self.p.tol,
            max_iter: self.p.max_iter,
        };
        Ok(Box::new(ImplicitRk::new(ID, sys, 1, settings)?))
    }
    fn restartable(&self) -> bool {
        true
    }
}

/// The implicit-Euler Newton system of a semi-explicit index-1 DAE at `(x, z)`:
/// `[[I − h f_x, −h f_z], [g_x, g_z]] Δ = −[x − x_n − h f; g]` (row-major `jac`).
fn index1_newton_system(
    h: f64, (x, xn): (&[f64], &[f64]), (f, g): (&[f64], &[f64]), jacs: &Index1Jacobians,
    jac: &mut [f64], rhs: &mut [f64],
) {
    let (nx, nz) = (x.len(), g.len());
    let n = nx + nz;
    let Index1Jacobians { fx, fz, gx, gz } = jacs;
    for i in 0..nx {
        rhs[i] = -(x[i] - xn[i] - h * f[i]);
        for j in 0..nx {
            jac[i * n + j] = f64::from(u8::from(i == j)) - h * fx[i * nx + j];
        }
        for j in 0..nz {
            jac[i * n + nx + j] = -h * fz[i * nz + j];
        }
    }
    for i in 0..nz {
        rhs[nx + i] = -g[i];
        for j in 0..nx {
            jac[(nx + i) * n + j] = gx[i * nx + j];
        }
        for j in 0..nz {
            jac[(nx + i) * n + nx + j] = gz[i * nz + j];
        }
    }
}

/// The catalog id `implicit-euler`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "implicit-euler";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| {
            Ok(Box::new(ImplicitEuler::new(params::parse(
                "method", ID, t,
            )?)?))
        },
        defaults: params::defaults::<ImplicitEulerParams>,
    }
}
