//! `gauss-index3`: Gauss–Legendre collocation (s = 1, 2, 3) applied to the **index-3
//! system directly** (seed 004 eqs. (10)–(11), after Schropp): the stage positions satisfy
//! the position constraint, nothing else is differentiated,
//!
//! ```text
//! Q_i = q_n + h Σ_j a_ij V_j,   V_i = v_n + h Σ_j a_ij W_j,
//! M W_i = f(t_i, Q_i, V_i) − Φ_q(Q_i)ᵀ Λ_i,   Φ(t_i, Q_i) = 0,  i = 1…s
//! q_{n+1} = q_n + h Σ b_i V_i,   v_{n+1} = v_n + h Σ b_i W_i
//! ```
//!
//! `W` is eliminated as `W = (A⁻¹ ⊗ I)(V − 1 ⊗ v_n)/h`; the unknowns `(V_i, hΛ_i)` are found
//! by Newton with a forward-difference Jacobian and dense LU (small models; refused above
//! [`MAX_DENSE`] unknowns), position rows divided by h so the matrix stays O(1).
//! `λ_{n+1}` and `a_{n+1}` are the Lagrange extrapolations of the stage values `Λ_i`, `W_i`
//! to `τ = 1` — the method's own output, without any consistency solve.
//!
//! Gauss is not stiffly accurate: `q_{n+1}` is not a stage and does not satisfy `Φ = 0`,
//! and `|R(∞)| = 1`, so errors in the algebraic variables are not damped. The classical
//! order 2s does not carry over to index 3; this method therefore **declares no order**
//! and the `gauss-index3-orders` experiment measures what it achieves, with and without
//! projection. The index-3 convergence theory of Runge–Kutta methods (Hairer, Lubich &
//! Roche 1989, LNM 1409; Hairer & Wanner, *Solving ODEs II*, §VII.4; L. Jay, Appl. Numer.
//! Math. 17 (1995) 97–118) is, as far as we could check without the texts at hand, stated
//! for methods with `|R(∞)| < 1` or stiffly accurate ones (Radau IIA); Gauss, with
//! `R(∞) = (−1)^s`, is outside it, so there is no published order to declare. Measured
//! (pendulum 30°, h = 2.5e-3 … 2e-2, max error over [0, 2]): q/v/λ orders 2/2/1 (s = 1),
//! 2/0/−1 (s = 2), 4/2/1 (s = 3); with the mass-orthogonal projection 1/1/1, 2/2/2, 3/3/3.

use crate::dynamics::{count_step_and_factorizations, KktChoice};
use crate::fd_newton::{ModelBuffers, StepData};
use crate::implicit::tableau::Tableau;
use driftlab_core::prelude::*;
use driftlab_solver::dense::solve_dense;
use serde::{Deserialize, Serialize};

/// Largest number of unknowns `s(n + m)` of the dense Newton matrix.
pub const MAX_DENSE: usize = 300;

/// Parameters of [`GaussIndex3`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GaussIndex3Params {
    /// Stages s ∈ {1, 2, 3}.
    pub stages: usize,
    /// Newton stops when `‖Δ‖∞ ≤ tol (1 + ‖unknowns‖∞)` or at the round-off floor.
    pub tol: f64,
    /// Newton iteration cap.
    pub max_iter: usize,
}

impl Default for GaussIndex3Params {
    fn default() -> Self {
        Self {
            stages: 3,
            tol: 1e-12,
            max_iter: 30,
        }
    }
}

/// Gauss collocation on the index-3 form.
pub struct GaussIndex3 {
    p: GaussIndex3Params,
    t: Tableau,
    ainv: Vec<f64>,
}

/// [`GaussIndex3`] bound to its system.
struct GaussIndex3Stepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: GaussIndex3Params,
    t: Tableau,
    ainv: Vec<f64>,
    work: StageWork,
    newton: crate::fd_newton::FdNewton,
    stats: MethodStats,
}

/// Inverse of a small dense row-major matrix (Gauss–Jordan through `solve_dense`).
fn invert(s: usize, a: &[f64]) -> Option<Vec<f64>> {
    let mut inv = vec![0.0; s * s];
    for j in 0..s {
        let mut e = vec![0.0; s];
        e[j] = 1.0;
        solve_dense(s, a, &mut e).ok()?;
        for i in 0..s {
            inv[i * s + j] = e[i];
        }
    }
    Some(inv)
}

/// Lagrange basis at τ through the nodes `c`.
fn lagrange_at(c: &[f64], tau: f64) -> Vec<f64> {
    (0..c.len())
        .map(|i| {
            (0..c.len())
                .filter(|&j| j != i)
                .map(|j| (tau - c[j]) / (c[i] - c[j]))
                .product()
        })
        .collect()
}

impl GaussIndex3 {
    /// Gauss with `stages` = 1, 2 or 3 on the index-3 form; `ParamError` naming the field
    /// otherwise.
    pub fn new(p: GaussIndex3Params) -> Result<Self, ParamError> {
        let t = Tableau::gauss(p.stages).ok_or_else(|| ParamError::OutOfRange {
            id: "gauss-index3".into(),
            field: "stages",
            value: p.stages as f64,
            fix: "give stages = 1, 2 or 3".into(),
        })?;
        let ainv = invert(t.s, &t.a).ok_or_else(|| ParamError::OutOfRange {
            id: "gauss-index3".into(),
            field: "stages",
            value: p.stages as f64,
            fix: "singular A".into(),
        })?;
        driftlab_core::params::positive("gauss-index3", "tol", p.tol)?;
        Ok(Self { p, t, ainv })
    }
}

/// Buffers of the stage residual, sized at the start: the residual runs `dim + 1` times
/// per Newton iteration (forward differences) and allocates nothing.
struct StageWork {
    model: ModelBuffers,
    /// Stage position `Q_i` and stage acceleration `W_i`.
    q: Vec<f64>,
    w: Vec<f64>,
    mw: Vec<f64>,
    f: Vec<f64>,
    gtl: Vec<f64>,
    phi: Vec<f64>,
}

impl StageWork {
    fn new(sys: &dyn MechanicalSystem) -> Self {
        let driftlab_core::Dims { n, m } = sys.dims();
        Self {
            model: ModelBuffers::new(sys),
            q: vec![0.0; n],
            w: vec![0.0; n],
            mw: vec![0.0; n],
            f: vec![0.0; n],
            gtl: vec![0.0; n],
            phi: vec![0.0; m],
        }
    }
}

/// The Gauss tableau and the inverse of its `A`.
struct Coefficients<'a> {
    t: &'a Tableau,
    ainv: &'a [f64],
}

impl Coefficients<'_> {
    /// `W_i = Σ_j (A⁻¹)_ij (V_j − v_n) / h` into `out`.
    fn stage_w(&self, h: f64, vn: &[f64], x: &[f64], i: usize, out: &mut [f64]) {
        let (s, n) = (self.t.s, vn.len());
        for (k, o) in out.iter_mut().enumerate() {
            *o = (0..s)
                .map(|j| self.ainv[i * s + j] * (x[j * n + k] - vn[k]))
                .sum::<f64>()
                / h;
        }
    }

    /// Residual of the stage system at unknowns `x = (V_1…V_s, hΛ_1…hΛ_s)`:
    /// `h(M W_i − f_i) + Φ_qᵀ hΛ_i` and `Φ(Q_i)/h`.
    fn residual(&self, wk: &mut StageWork, d: &StepData, x: &[f64], out: &mut [f64]) {
        let (s, n, m) = (self.t.s, d.qn.len(), wk.phi.len());
        let sy = d.sys;
        // Mass and Φ_q buffers shared by the stages, zeroed once (each call writes all).
        wk.model.mass.fill(0.0);
        wk.model.jac.fill(0.0);
        for i in 0..s {
            let ti = d.t0 + self.t.c[i] * d.h;
            for k in 0..n {
                wk.q[k] =
                    d.qn[k] + d.h * (0..s).map(|j| self.t.a(i, j) * x[j * n + k]).sum::<f64>();
            }
            let v = &x[i * n..(i + 1) * n];
            self.stage_w(d.h, d.vn, x, i, &mut wk.w);
            sy.mass(&wk.q, &mut wk.model.mass);
            wk.model
                .mass_pattern
                .mul_vec(&wk.model.mass, &wk.w, &mut wk.mw, true);
            wk.f.fill(0.0);
            sy.forces(ti, &wk.q, v, &mut wk.f);
            sy.jacobian(ti, &wk.q, &mut wk.model.jac);
            let lambda = &x[s * n + i * m..s * n + (i + 1) * m];
            wk.model
                .jac_pattern
                .mul_transpose_vec(&wk.model.jac, lambda, &mut wk.gtl);
            for k in 0..n {
                out[i * n + k] = d.h * (wk.mw[k] - wk.f[k]) + wk.gtl[k];
            }
            wk.phi.fill(0.0);
            sy.constraints(ti, &wk.q, &mut wk.phi);
            for r in 0..m {
                out[s * n + i * m + r] = wk.phi[r] / d.h;
            }
        }
    }
}

/// Declared properties: no orders (measured by the `gauss-index3-orders` experiment).
pub fn info() -> MethodInfo {
    MethodInfo {
        id: "gauss-index3".into(),
        symplectic_reason: "no: only the stage positions satisfy Φ(Q_i) = 0, the end point leaves the hidden constraint Φ_q v = 0; on 𝓜 symplecticity needs the partitioned Lobatto IIIA–IIIB pair (Jay, SIAM J. Numer. Anal. 33, 1996); measured in tests/symplecticity.rs".into(),
        family: "implicit-runge-kutta".into(),
        title: "Gauss–Legendre collocation applied to the index-3 system directly (stage constraints Φ(Q_i) = 0)".into(),
        equations: "Q_i = q + hΣa_ij V_j, V_i = v + hΣa_ij W_j, M W_i = f_i − Φ_q(Q_i)ᵀΛ_i, Φ(Q_i) = 0;  q⁺ = q + hΣb_i V_i, v⁺ = v + hΣb_i W_i".into(),
        citation: "seed 004 eqs. (10)–(11) (Wei, Deng, Li & Wang 2016, after Schropp); Gauss coefficients: Hairer, Nørsett & Wanner I §II.7".into(),
        orders: DeclaredOrders { q: None, v: None, lambda: None },
        enforces: ConstraintLevels::default(),
        implicit: true,
        symmetric: true,
        ..MethodInfo::default()
    }
}

impl Method for GaussIndex3 {
    fn info(&self) -> MethodInfo {
        let mut i = info();
        i.title = format!("{}, s = {}", i.title, self.p.stages);
        i
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let s = sys;
        let d = s.dims();
        if self.t.s * (d.n + d.m) > MAX_DENSE {
            return Err(MethodError::Incompatible {
                method: "gauss-index3".into(),
                problem: s.info().id,
                reason: format!("the dense Newton matrix would exceed {MAX_DENSE} unknowns; use gauss (acceleration-level) instead"),
            });
        }
        let st = crate::dynamics::consistent_start(s, KktChoice::Auto.options(opts), state)?;
        Ok(Box::new(GaussIndex3Stepper {
            sys,
            p: self.p,
            t: self.t.clone(),
            ainv: self.ainv.clone(),
            work: StageWork::new(s),
            newton: crate::fd_newton::FdNewton::new(self.t.s * (d.n + d.m)),
            stats: MethodStats::default().merged(st),
        }))
    }
    fn restartable(&self) -> bool {
        true
    }
}

impl Stepper for GaussIndex3Stepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let sy = self.sys;
        let d = sy.dims();
        let (n, m, s) = (d.n, d.m, self.t.s);
        let dim = s * (n + m);
        let t0 = state.t;
        let (qn, vn) = (state.q.clone(), state.v.clone());
        let mut x = vec![0.0; dim];
        crate::fd_newton::stage_guess(&mut x, state, &self.t.c, h);
        let coefficients = Coefficients {
            t: &self.t,
            ainv: &self.ainv,
        };
        let data = StepData {
            sys: sy,
            t0,
            h,
            qn: &qn,
            vn: &vn,
        };
        let work = &mut self.work;
        let (tol, max_iter) = (self.p.tol, self.p.max_iter);
        let report = self.newton.solve(&mut x, tol, max_iter, t0, |x, out| {
            coefficients.residual(work, &data, x, out)
        })?;
        let ws: Vec<Vec<f64>> = (0..s)
            .map(|i| {
                let mut w = vec![0.0; n];
                coefficients.stage_w(h, &vn, &x, i, &mut w);
                w
            })
            .collect();
        let ell = lagrange_at(&self.t.c, 1.0);
        for k in 0..n {
            state.q[k] = qn[k] + h * (0..s).map(|i| self.t.b[i] * x[i * n + k]).sum::<f64>();
            state.v[k] = vn[k] + h * (0..s).map(|i| self.t.b[i] * ws[i][k]).sum::<f64>();
            state.a[k] = (0..s).map(|i| ell[i] * ws[i][k]).sum::<f64>();
        }
        for r in 0..m {
            state.lambda[r] = (0..s).map(|i| ell[i] * x[s * n + i * m + r]).sum::<f64>() / h;
        }
        state.t = t0 + h;
        Ok(count_step_and_factorizations(&mut self.stats, report))
    }

    fn stats(&self) -> MethodStats {
        self.stats
    }
}

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::MethodEntry {
    use driftlab_core::params;
    crate::MethodEntry {
        id: "gauss-index3",
        info,
        build: |t| {
            Ok(Box::new(GaussIndex3::new(params::parse(
                "method",
                "gauss-index3",
                t,
            )?)?))
        },
        defaults: params::defaults::<GaussIndex3Params>,
    }
}
