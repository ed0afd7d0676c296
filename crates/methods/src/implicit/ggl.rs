//! `ggl`: the Gear–Gupta–Leimkuhler stabilized index-2 formulation (Gear, Leimkuhler &
//! Gupta, J. Comput. Appl. Math. 12–13 (1985) 77–90), integrated by implicit Euler:
//!
//! ```text
//! q' = v − Φ_q(q)ᵀ μ,   M v' = f − Φ_q(q)ᵀ λ,   0 = Φ(t, q),   0 = Φ_q(q) v + Φ_t
//! ```
//!
//! Both the position and the velocity constraint are imposed; the extra multiplier μ is
//! zero on the exact solution and absorbs the inconsistency between them. Implicit
//! Euler: with unknowns `(q⁺, v⁺, Λ = hλ⁺, μ⁺)`,
//!
//! ```text
//! q⁺ − q_n − h v⁺ + h Φ_q(q⁺)ᵀ μ⁺ = 0,     M(v⁺ − v_n) − h f⁺ + Φ_q(q⁺)ᵀ Λ = 0,
//! Φ(t⁺, q⁺) = 0,                          Φ_q(q⁺) v⁺ + Φ_t(t⁺, q⁺) = 0,
//! ```
//!
//! solved by Newton with a dense `(2n + 2m)²` matrix (the `(Φ_q v)_q` block by central
//! differences; constraint Hessians contracted with μ and Λ where the problem provides
//! them). Dense: meant for the small models of the formulation comparison; larger systems
//! are refused with a clear message. First order (BDF1 on an index-2 system: Brenan,
//! Campbell & Petzold 1996, §3.1; Hairer & Wanner, Solving ODEs II, §VII.1 for GGL).

use crate::dynamics::newton_outcome;
use crate::dynamics::KktChoice;
use crate::dynamics::{consistent_start, count_step_and_factorizations};
use driftlab_core::prelude::*;
use driftlab_solver::dense::solve_dense;
use driftlab_solver::newton::{NewtonKernel, NewtonOptions};
use serde::{Deserialize, Serialize};

/// Largest `2n + 2m` the dense Newton matrix is built for.
pub const MAX_DENSE: usize = 400;

/// Parameters of [`Ggl`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GglParams {
    /// Newton stops when `‖Δ‖∞ ≤ tol (1 + ‖unknowns‖∞)`.
    pub tol: f64,
    /// Newton iteration cap.
    pub max_iter: usize,
}

impl Default for GglParams {
    fn default() -> Self {
        Self {
            tol: 1e-12,
            max_iter: 25,
        }
    }
}

/// GGL + implicit Euler.
pub struct Ggl {
    p: GglParams,
}

/// [`Ggl`] bound to its system.
struct GglStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: GglParams,
    stats: MethodStats,
    mu: Vec<f64>,
}

impl Ggl {
    /// GGL with Newton tolerance `tol > 0`; `ParamError` otherwise.
    pub fn new(p: GglParams) -> Result<Self, ParamError> {
        driftlab_core::params::positive(ID, "tol", p.tol)?;
        Ok(Self { p })
    }
}

/// Declared properties of `ggl`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: backward Euler on the stabilized index-2 form damps (GNI §VI.4)".into(),
        family: "stabilized-index-2".into(),
        title: "Gear–Gupta–Leimkuhler stabilized index-2 formulation, implicit Euler".into(),
        equations: "q' = v − Φ_qᵀμ, M v' = f − Φ_qᵀλ, Φ = 0, Φ_q v + Φ_t = 0;  implicit Euler, dense Newton".into(),
        citation: "Gear, Leimkuhler & Gupta, J. Comput. Appl. Math. 12–13 (1985) 77–90; order 1: Brenan, Campbell & Petzold \
                   1996 §3.1"
            .into(),
        orders: DeclaredOrders { q: Some(1.0), v: Some(1.0), lambda: Some(1.0) },
        enforces: ConstraintLevels { position: true, velocity: true, acceleration: false },
        implicit: true,
        ..MethodInfo::default()
    }
}

/// Dense row-major `rows × cols` block writer.
struct Dense<'a> {
    a: &'a mut [f64],
    dim: usize,
}

impl Dense<'_> {
    fn add(&mut self, r: usize, c: usize, v: f64) {
        self.a[r * self.dim + c] += v;
    }
}

/// What one GGL step holds fixed while Newton iterates: the model, its patterns, the new
/// time `t⁺ = t_n + h` and the step's start `(q_n, v_n)`.
struct Frame<'a> {
    s: &'a dyn MechanicalSystem,
    mp: &'a SparsityPattern,
    jp: &'a SparsityPattern,
    hp: Option<&'a SparsityPattern>,
    t1: f64,
    h: f64,
    qn: &'a [f64],
    vn: &'a [f64],
}

/// The Newton unknowns `(q⁺, v⁺, Λ = hλ⁺, μ⁺)`.
struct Unknowns {
    q: Vec<f64>,
    v: Vec<f64>,
    big_l: Vec<f64>,
    mu: Vec<f64>,
}

impl Unknowns {
    /// Start values: `q⁺ = q_n + h v_n + ½h² a_n`, `v⁺ = v_n + h a_n`, `Λ = h λ_n`,
    /// `μ⁺ = 0`.
    fn predict(state: &State, h: f64, m: usize) -> Self {
        let n = state.q.len();
        let (qn, vn) = (&state.q, &state.v);
        Self {
            q: (0..n)
                .map(|i| qn[i] + h * vn[i] + 0.5 * h * h * state.a[i])
                .collect(),
            v: (0..n).map(|i| vn[i] + h * state.a[i]).collect(),
            big_l: state.lambda.iter().map(|l| h * l).collect(),
            mu: vec![0.0; m],
        }
    }

    /// Add the Newton correction `Δ = (Δq, Δv, ΔΛ, Δμ)` and return the convergence
    /// measure `‖(Δq, Δv)‖∞ / (tol (1 + ‖(q⁺, v⁺)‖∞))` (converged at ≤ 1).
    fn correct(&mut self, delta: &[f64], tol: f64) -> f64 {
        let (n, m) = (self.q.len(), self.mu.len());
        for i in 0..n {
            self.q[i] += delta[i];
            self.v[i] += delta[n + i];
        }
        for r in 0..m {
            self.big_l[r] += delta[2 * n + r];
            self.mu[r] += delta[2 * n + m + r];
        }
        let size = self
            .q
            .iter()
            .chain(&self.v)
            .fold(0.0_f64, |a, x| a.max(x.abs()));
        let step = delta[..2 * n].iter().fold(0.0_f64, |a, x| a.max(x.abs()));
        step / (tol * (1.0 + size))
    }
}

/// The model at the current iterate: `M(q⁺)`, `Φ_q(q⁺)`, `f(t⁺, q⁺, v⁺)`, `Φ(t⁺, q⁺)`,
/// `Φ_t(t⁺, q⁺)`, and room for a contracted constraint Hessian.
struct Evaluation {
    mass: Vec<f64>,
    jac: Vec<f64>,
    hv: Vec<f64>,
    f: Vec<f64>,
    phi: Vec<f64>,
    phit: Vec<f64>,
}

impl Evaluation {
    /// Zeroed buffers for the frame's model with `n` coordinates and `m` constraints.
    fn zeros(fr: &Frame<'_>, n: usize, m: usize) -> Self {
        Self {
            mass: vec![0.0; fr.mp.nnz()],
            jac: vec![0.0; fr.jp.nnz()],
            hv: vec![0.0; fr.hp.map_or(0, |p| p.nnz())],
            f: vec![0.0; n],
            phi: vec![0.0; m],
            phit: vec![0.0; m],
        }
    }

    /// Evaluate `M`, `Φ_q`, `f`, `Φ` and `Φ_t` at `(t⁺, q⁺, v⁺)`.
    fn at(&mut self, fr: &Frame<'_>, x: &Unknowns) {
        let (s, t1) = (fr.s, fr.t1);
        s.mass(&x.q, &mut self.mass);
        s.jacobian(t1, &x.q, &mut self.jac);
        s.forces(t1, &x.q, &x.v, &mut self.f);
        s.constraints(t1, &x.q, &mut self.phi);
        s.phi_t(t1, &x.q, &mut self.phit);
    }
}

/// The Newton right-hand side `−R`, ordered `(R1, R2, R3, R4)` as the module's implicit
/// Euler equations:
///
/// ```text
/// R1 = q⁺ − q_n − h v⁺ + h Φ_qᵀ μ⁺,   R2 = M(v⁺ − v_n) − h f⁺ + Φ_qᵀ Λ,
/// R3 = Φ(t⁺, q⁺),                     R4 = Φ_q v⁺ + Φ_t
/// ```
fn negated_residual(fr: &Frame<'_>, ev: &Evaluation, x: &Unknowns) -> Vec<f64> {
    let (n, m) = (x.q.len(), x.mu.len());
    let (jp, h) = (fr.jp, fr.h);
    let (q, v, qn, vn) = (&x.q, &x.v, fr.qn, fr.vn);
    let mut rhs = vec![0.0; 2 * n + 2 * m];
    let mut gtm = vec![0.0; n];
    jp.mul_transpose_vec(&ev.jac, &x.mu, &mut gtm);
    let mut gtl = vec![0.0; n];
    jp.mul_transpose_vec(&ev.jac, &x.big_l, &mut gtl);
    let diff: Vec<f64> = (0..n).map(|i| v[i] - vn[i]).collect();
    let mut mdv = vec![0.0; n];
    fr.mp.mul_vec(&ev.mass, &diff, &mut mdv, true);
    let mut gv = vec![0.0; m];
    jp.mul_vec(&ev.jac, v, &mut gv, false);
    for i in 0..n {
        rhs[i] = -(q[i] - qn[i] - h * v[i] + h * gtm[i]);
        rhs[n + i] = -(mdv[i] - h * ev.f[i] + gtl[i]);
    }
    for r in 0..m {
        rhs[2 * n + r] = -ev.phi[r];
        rhs[2 * n + m + r] = -(gv[r] + ev.phit[r]);
    }
    rhs
}

/// The dense Newton matrix `∂R/∂(q, v, Λ, μ)`, row-major `(2n + 2m)²`:
///
/// ```text
/// ⎡ I + h K(μ)   −h I   0      h Φ_qᵀ ⎤
/// ⎢ K(Λ)          M     Φ_qᵀ   0      ⎥      K(w) = Σ_i w_i ∇²Φ_i (when the problem
/// ⎢ Φ_q           0     0      0      ⎥      provides constraint Hessians, else 0)
/// ⎣ (Φ_q v)_q     Φ_q   0      0      ⎦
/// ```
///
/// The derivatives of `M` and `f` are left out; `(Φ_q v)_q` is taken by central
/// differences ([`add_velocity_constraint_derivative`]).
fn newton_matrix(fr: &Frame<'_>, ev: &mut Evaluation, x: &Unknowns) -> Vec<f64> {
    let (n, m) = (x.q.len(), x.mu.len());
    let (s, jp, h, t1) = (fr.s, fr.jp, fr.h, fr.t1);
    let dim = 2 * n + 2 * m;
    let mut jm = vec![0.0; dim * dim];
    let mut w = Dense { a: &mut jm, dim };
    for i in 0..n {
        w.add(i, i, 1.0);
        w.add(i, n + i, -h);
    }
    for (&(r, c), &val) in jp.entries.iter().zip(&ev.jac) {
        w.add(c, 2 * n + m + r, h * val); // ∂R1/∂μ = h Φ_qᵀ
        w.add(n + c, 2 * n + r, val); // ∂R2/∂Λ = Φ_qᵀ
        w.add(2 * n + r, c, val); // ∂R3/∂q = Φ_q
        w.add(2 * n + m + r, n + c, val); // ∂R4/∂v = Φ_q
    }
    for (&(r, c), &val) in fr.mp.entries.iter().zip(&ev.mass) {
        w.add(n + r, n + c, val);
        if r != c {
            w.add(n + c, n + r, val);
        }
    }
    if let (Some(hp), Some(hessian)) = (fr.hp, s.constraint_hessian()) {
        // ∂R1/∂q += h K(μ), ∂R2/∂q += K(Λ).
        for (coef, mult, row0) in [(h, &x.mu, 0usize), (1.0, &x.big_l, n)] {
            hessian.values(t1, &x.q, mult, &mut ev.hv);
            for (&(r, c), &val) in hp.entries.iter().zip(&ev.hv) {
                w.add(row0 + r, c, coef * val);
                if r != c {
                    w.add(row0 + c, r, coef * val);
                }
            }
        }
    }
    add_velocity_constraint_derivative(fr, x, &mut w);
    jm
}

/// `∂R4/∂q = (Φ_q v⁺)_q` by central differences, column `c` from
/// `(Φ_q(q⁺ + e e_c) − Φ_q(q⁺ − e e_c)) v⁺ / 2e` with `e = 1e-7 (1 + |q_c|)`, added to
/// rows `2n + m …` of `w`.
fn add_velocity_constraint_derivative(fr: &Frame<'_>, x: &Unknowns, w: &mut Dense<'_>) {
    let (n, m) = (x.q.len(), x.mu.len());
    let (s, jp, t1) = (fr.s, fr.jp, fr.t1);
    let (q, v) = (&x.q, &x.v);
    for c in 0..n {
        let e = 1e-7 * (1.0 + q[c].abs());
        let mut jj = vec![0.0; jp.nnz()];
        let (mut gp, mut gm) = (vec![0.0; m], vec![0.0; m]);
        let mut qq = q.clone();
        qq[c] += e;
        s.jacobian(t1, &qq, &mut jj);
        jp.mul_vec(&jj, v, &mut gp, false);
        qq[c] -= 2.0 * e;
        s.jacobian(t1, &qq, &mut jj);
        jp.mul_vec(&jj, v, &mut gm, false);
        for r in 0..m {
            w.add(2 * n + m + r, c, (gp[r] - gm[r]) / (2.0 * e));
        }
    }
}

impl GglStepper<'_> {
    /// One implicit Euler step of the GGL formulation: Newton on `(q⁺, v⁺, Λ, μ⁺)` with
    /// the dense matrix of [`newton_matrix`], then `a = (v⁺ − v_n)/h`, `λ = Λ/h`.
    fn newton(
        &mut self, s: &dyn MechanicalSystem, state: &mut State, h: f64,
    ) -> Result<StepReport, StepError> {
        let d = s.dims();
        let (n, m) = (d.n, d.m);
        let dim = 2 * n + 2 * m;
        let t1 = state.t + h;
        let (qn, vn) = (state.q.clone(), state.v.clone());
        let mut x = Unknowns::predict(state, h, m);
        let mp = s.mass_pattern();
        let jp = s.jacobian_pattern();
        let hp = s.constraint_hessian().map(|c| c.pattern());
        let fr = Frame {
            s,
            mp: &mp,
            jp: &jp,
            hp: hp.as_ref(),
            t1,
            h,
            qn: &qn,
            vn: &vn,
        };
        let mut ev = Evaluation::zeros(&fr, n, m);
        let mut kernel = NewtonKernel::new(NewtonOptions::full(self.p.max_iter));
        let solved = kernel.solve(|_| {
            ev.at(&fr, &x);
            let mut rhs = negated_residual(&fr, &ev, &x);
            // Jacobian, unknowns ordered (q, v, Λ, μ).
            let jm = newton_matrix(&fr, &mut ev, &x);
            solve_dense(dim, &jm, &mut rhs).map_err(|e| StepError::LinearSolve {
                t: state.t,
                detail: e.to_string(),
            })?;
            Ok(x.correct(&rhs, self.p.tol))
        });
        let iterations = kernel.counters.iterations;
        let Unknowns { q, v, big_l, mu } = x;
        let mut phi = ev.phi;
        let report = newton_outcome(solved, iterations, state.t, self.p.tol, || {
            s.constraints(t1, &q, &mut phi);
            let res = phi.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
            res
        })?;
        for i in 0..n {
            state.a[i] = (v[i] - vn[i]) / h;
        }
        state.q = q;
        state.v = v;
        for r in 0..m {
            state.lambda[r] = big_l[r] / h;
        }
        self.mu = mu;
        state.t = t1;
        Ok(count_step_and_factorizations(&mut self.stats, report))
    }
}

impl Method for Ggl {
    fn info(&self) -> MethodInfo {
        info()
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let s = sys;
        let d = s.dims();
        if 2 * (d.n + d.m) > MAX_DENSE {
            return Err(MethodError::Incompatible {
                method: ID.into(),
                problem: s.info().id,
                reason: format!("the dense GGL Newton matrix would be {0}×{0} (limit {MAX_DENSE}); use a smaller model", 2 * (d.n + d.m)),
            });
        }
        let st = consistent_start(s, KktChoice::Auto.options(opts), state)?;
        Ok(Box::new(GglStepper {
            sys,
            p: self.p,
            stats: MethodStats::default().merged(st),
            mu: Vec::new(),
        }))
    }
}

impl Stepper for GglStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let sys = self.sys;
        self.newton(sys, state, h)
    }
    fn stats(&self) -> MethodStats {
        self.stats
    }
}

/// The catalog id `ggl`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "ggl";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(Ggl::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<GglParams>,
    }
}
