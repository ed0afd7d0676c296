//! `lobatto`: the Lobatto IIIA–IIIB partitioned Runge–Kutta pair for holonomically
//! constrained systems (Jay, SIAM J. Numer. Anal. 33 (1996) 368–387; Hairer, Lubich &
//! Wanner, GNI §VII.1.4), s = 2 or 3 stages: symplectic, symmetric, order 2s − 2; s = 2 is
//! RATTLE (test `lobatto_s2_is_rattle`).
//!
//! ```text
//! Q_i = q_n + h Σ_j a_ij V_j                                     (IIIA, Q_1 = q_n, Q_s = q_{n+1})
//! M(V_i − v_n) = h Σ_j â_ij (f(Q_j) − Φ_q(Q_j)ᵀ Λ_j)              (IIIB, â_is = 0)
//! Φ(t_n + c_i h, Q_i) = 0,  i = 2…s
//! M(v_{n+1} − v_n) = h Σ_i b_i (f(Q_i) − Φ_q(Q_i)ᵀ Λ_i),   Φ_q(q_{n+1}) v_{n+1} + Φ_t = 0
//! ```
//!
//! Unknowns `(V_1…V_s, hΛ_1…hΛ_s, v_{n+1})` (position rows divided by h, so the Newton
//! matrix is O(1) as h → 0): since `â_is = 0`, `Λ_s` enters only the update
//! of `v_{n+1}` and is fixed by the velocity constraint. The system is solved by Newton
//! with a forward-difference Jacobian and dense LU — written for the small models of the
//! method comparisons (refused above [`MAX_DENSE`] unknowns). Forces are taken at the
//! stages, `f(t_i, Q_i, V_i)`, so velocity-dependent forces enter as the pair prescribes
//! (for s = 2 as in `rattle`: test `rattle_equals_lobatto_s2_under_velocity_feedback`);
//! `M` is `M(q_n)` for the whole step, exact for a constant mass matrix only. The
//! reported `(a, λ)` at `t_{n+1}` are the KKT values at `(q_{n+1}, v_{n+1})`.

use crate::dynamics::{
    count_step_and_factorizations, with_kkt_stats, AccelerationSolver, KktChoice,
};
use crate::fd_newton::{ModelBuffers, StepData};
use crate::implicit::tableau::Tableau;
use driftlab_core::prelude::*;
use serde::{Deserialize, Serialize};

/// Largest number of unknowns `s(n + m) + n` of the dense Newton matrix.
pub const MAX_DENSE: usize = 300;

/// Parameters of [`Lobatto`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LobattoParams {
    /// Stages s ∈ {2, 3} (order 2s − 2).
    pub stages: usize,
    /// Newton stops when `‖Δ‖∞ ≤ tol (1 + ‖unknowns‖∞)`.
    pub tol: f64,
    /// Newton iteration cap.
    pub max_iter: usize,
}

impl Default for LobattoParams {
    fn default() -> Self {
        Self {
            stages: 3,
            tol: 1e-12,
            max_iter: 30,
        }
    }
}

/// Lobatto IIIA–IIIB.
pub struct Lobatto {
    p: LobattoParams,
    a: Tableau,
    b: Tableau,
}

/// [`Lobatto`] bound to its system.
struct LobattoStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: LobattoParams,
    a: Tableau,
    b: Tableau,
    solver: AccelerationSolver,
    work: StageWork,
    newton: crate::fd_newton::FdNewton,
    stats: MethodStats,
}

impl Lobatto {
    /// Lobatto IIIA–IIIB with `stages` = 2 or 3; `ParamError` naming the field otherwise.
    pub fn new(p: LobattoParams) -> Result<Self, ParamError> {
        let bad = || ParamError::OutOfRange {
            id: ID.into(),
            field: "stages",
            value: p.stages as f64,
            fix: "give stages = 2 or 3".into(),
        };
        let a = Tableau::lobatto_iiia(p.stages).ok_or_else(bad)?;
        let b = Tableau::lobatto_iiib(p.stages).ok_or_else(bad)?;
        driftlab_core::params::positive(ID, "tol", p.tol)?;
        Ok(Self { p, a, b })
    }
}

/// Buffers of the stage residual, sized at the start: the residual runs `dim + 1` times
/// per Newton iteration (forward differences) and allocates nothing.
struct StageWork {
    model: ModelBuffers,
    /// Stage positions `Q_i` and stage forces minus constraint forces `g_i`.
    q: Vec<Vec<f64>>,
    g: Vec<Vec<f64>>,
    f: Vec<f64>,
    /// `Λ_i` (the unknowns hold `hΛ_i`).
    lambda: Vec<f64>,
    gtl: Vec<f64>,
    diff: Vec<f64>,
    md: Vec<f64>,
    phi: Vec<f64>,
    gv: Vec<f64>,
    pt: Vec<f64>,
}

impl StageWork {
    fn new(sys: &dyn MechanicalSystem, stages: usize) -> Self {
        let driftlab_core::Dims { n, m } = sys.dims();
        Self {
            model: ModelBuffers::new(sys),
            q: vec![vec![0.0; n]; stages],
            g: vec![vec![0.0; n]; stages],
            f: vec![0.0; n],
            lambda: vec![0.0; m],
            gtl: vec![0.0; n],
            diff: vec![0.0; n],
            md: vec![0.0; n],
            phi: vec![0.0; m],
            gv: vec![0.0; m],
            pt: vec![0.0; m],
        }
    }
}

/// The IIIA and IIIB tableaux.
struct Tableaux<'a> {
    a: &'a Tableau,
    b: &'a Tableau,
}

impl Tableaux<'_> {
    /// Residual of the stage system at unknowns `x = (V_1…V_s, Λ_1…Λ_s, v_{n+1})`.
    fn residual(&self, w: &mut StageWork, d: &StepData, x: &[f64], out: &mut [f64]) {
        let (st, n, m) = (self.a.s, d.qn.len(), w.phi.len());
        let vv = |i: usize| &x[i * n..(i + 1) * n];
        let v1 = &x[st * (n + m)..];
        self.stage_forces(w, d, x);
        w.model.mass.fill(0.0);
        d.sys.mass(d.qn, &mut w.model.mass);
        let mut row = 0;
        for i in 0..st {
            for k in 0..n {
                w.diff[k] = vv(i)[k] - d.vn[k];
            }
            w.model
                .mass_pattern
                .mul_vec(&w.model.mass, &w.diff, &mut w.md, true);
            for k in 0..n {
                out[row + k] =
                    w.md[k] - d.h * (0..st).map(|j| self.b.a(i, j) * w.g[j][k]).sum::<f64>();
            }
            row += n;
        }
        w.phi.fill(0.0);
        for i in 1..st {
            d.sys
                .constraints(d.t0 + self.a.c[i] * d.h, &w.q[i], &mut w.phi);
            for r in 0..m {
                out[row + r] = w.phi[r] / d.h; // scaled like the unknowns (∂/∂V = O(1))
            }
            row += m;
        }
        self.end_velocity_rows(w, d, v1, &mut out[row..]);
    }

    /// `Q_i = q_n + h Σ_j a_ij V_j` and `g_i = f(t_i, Q_i, V_i) − Φ_q(Q_i)ᵀ Λ_i`.
    fn stage_forces(&self, w: &mut StageWork, d: &StepData, x: &[f64]) {
        let (st, n, m) = (self.a.s, d.qn.len(), w.phi.len());
        let vv = |i: usize| &x[i * n..(i + 1) * n];
        for i in 0..st {
            for k in 0..n {
                w.q[i][k] = d.qn[k] + d.h * (0..st).map(|j| self.a.a(i, j) * vv(j)[k]).sum::<f64>();
            }
        }
        // One buffer for every stage's Φ_q, zeroed once per residual (each call writes
        // all values).
        w.model.jac.fill(0.0);
        for i in 0..st {
            let ti = d.t0 + self.a.c[i] * d.h;
            w.f.fill(0.0);
            d.sys.forces(ti, &w.q[i], vv(i), &mut w.f);
            d.sys.jacobian(ti, &w.q[i], &mut w.model.jac);
            // The unknowns hold Λ̃ = hΛ (scaling: the Newton matrix stays O(1) as h → 0).
            for (l, x) in w
                .lambda
                .iter_mut()
                .zip(&x[st * n + i * m..st * n + (i + 1) * m])
            {
                *l = x / d.h;
            }
            w.model
                .jac_pattern
                .mul_transpose_vec(&w.model.jac, &w.lambda, &mut w.gtl);
            for k in 0..n {
                w.g[i][k] = w.f[k] - w.gtl[k];
            }
        }
    }

    /// `Φ_q(q_{n+1}) v_{n+1} + Φ_t = 0` and `M(v_{n+1} − v_n) = h Σ b_i g_i` into `out`.
    fn end_velocity_rows(&self, w: &mut StageWork, d: &StepData, v1: &[f64], out: &mut [f64]) {
        let (st, n, m) = (self.a.s, d.qn.len(), w.phi.len());
        let t1 = d.t0 + d.h;
        let qs = &w.q[st - 1];
        d.sys.jacobian(t1, qs, &mut w.model.jac);
        w.model
            .jac_pattern
            .mul_vec(&w.model.jac, v1, &mut w.gv, false);
        w.pt.fill(0.0);
        d.sys.phi_t(t1, qs, &mut w.pt);
        for r in 0..m {
            out[r] = w.gv[r] + w.pt[r];
        }
        for k in 0..n {
            w.diff[k] = v1[k] - d.vn[k];
        }
        w.model
            .mass_pattern
            .mul_vec(&w.model.mass, &w.diff, &mut w.md, true);
        for k in 0..n {
            out[m + k] = w.md[k] - d.h * (0..st).map(|i| self.a.b[i] * w.g[i][k]).sum::<f64>();
        }
    }
}

/// Declared properties (default s = 3).
pub fn info() -> MethodInfo {
    info_for(3)
}

fn info_for(s: usize) -> MethodInfo {
    let p = 2.0 * s as f64 - 2.0;
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "yes: the Lobatto IIIA–IIIB pair is symplectic on the constraint manifold (Jay, SIAM J. Numer. Anal. 33, 1996; GNI §VII.1.4); measured in tests/symplecticity.rs".into(),
        family: "symplectic-partitioned-rk".into(),
        title: format!("Lobatto IIIA–IIIB, s = {s} (order {p}), for constrained mechanical systems"),
        equations: "Q_i = q + hΣa_ij V_j;  M(V_i − v) = hΣâ_ij(f_j − Φ_q(Q_j)ᵀΛ_j);  Φ(Q_i) = 0;  M(v⁺ − v) = hΣb_i(f_i − Φ_qᵀΛ_i), Φ_q(q⁺)v⁺ = 0".into(),
        citation: "L. Jay, SIAM J. Numer. Anal. 33 (1996) 368–387 (symplectic, order 2s − 2); Hairer, Lubich & Wanner, GNI §VII.1.4".into(),
        orders: DeclaredOrders { q: Some(p), v: Some(p), lambda: Some(p) },
        enforces: ConstraintLevels { position: true, velocity: true, acceleration: true },
        implicit: true,
        symmetric: true,
        symplectic: true,
        forms: vec![SystemForm::Mechanical],
        nonholonomic: false,
        unilateral: false,
        priorities: false,
        error_estimate: None,
        varying_mass: false,
    }
}

impl Method for Lobatto {
    fn info(&self) -> MethodInfo {
        info_for(self.p.stages)
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let s = sys;
        let d = s.dims();
        let dim = self.a.s * (d.n + d.m) + d.n;
        if dim > MAX_DENSE {
            return Err(MethodError::Incompatible {
                method: ID.into(),
                problem: s.info().id,
                reason: format!("the dense Newton matrix would be {dim}×{dim} (limit {MAX_DENSE}); use a smaller model or rattle"),
            });
        }
        let mut solver = AccelerationSolver::new(s, KktChoice::Auto.options(opts))?;
        solver.solve_state(s, state)?;
        Ok(Box::new(LobattoStepper {
            sys,
            p: self.p,
            a: self.a.clone(),
            b: self.b.clone(),
            solver,
            work: StageWork::new(s, self.a.s),
            newton: crate::fd_newton::FdNewton::new(dim),
            stats: MethodStats::default(),
        }))
    }
    fn restartable(&self) -> bool {
        true
    }
}

impl Stepper for LobattoStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let s = self.sys;
        let d = s.dims();
        let (n, m, st) = (d.n, d.m, self.a.s);
        let dim = st * (n + m) + n;
        let t0 = state.t;
        let (qn, vn) = (state.q.clone(), state.v.clone());
        let mut x = vec![0.0; dim];
        crate::fd_newton::stage_guess(&mut x, state, &self.a.c, h);
        for k in 0..n {
            x[st * (n + m) + k] = vn[k] + h * state.a[k];
        }
        let tableaux = Tableaux {
            a: &self.a,
            b: &self.b,
        };
        let data = StepData {
            sys: s,
            t0,
            h,
            qn: &qn,
            vn: &vn,
        };
        let work = &mut self.work;
        let (tol, max_iter) = (self.p.tol, self.p.max_iter);
        let report = self.newton.solve(&mut x, tol, max_iter, t0, |x, out| {
            tableaux.residual(work, &data, x, out)
        })?;
        // q_{n+1} = Q_s (IIIA is stiffly accurate), v_{n+1} from the unknowns.
        for k in 0..n {
            state.q[k] = qn[k]
                + h * (0..st)
                    .map(|j| self.a.a(st - 1, j) * x[j * n + k])
                    .sum::<f64>();
            state.v[k] = x[st * (n + m) + k];
        }
        state.t = t0 + h;
        self.solver.solve_state(s, state)?;
        Ok(count_step_and_factorizations(&mut self.stats, report))
    }

    fn stats(&self) -> MethodStats {
        with_kkt_stats(self.stats, Some(self.solver.stats()))
    }
}

/// The catalog id `lobatto`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "lobatto";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(Lobatto::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<LobattoParams>,
    }
}
