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
//! method comparisons (refused above [`MAX_DENSE`] unknowns). Forces are taken at
//! positions only (velocity-dependent forces would need the stage velocities). The
//! reported `(a, λ)` at `t_{n+1}` are the KKT values at `(q_{n+1}, v_{n+1})`.

use crate::dynamics::{
    count_step_and_factorizations, with_kkt_stats, AccelerationSolver, KktChoice,
};
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
    stats: MethodStats,
}

impl Lobatto {
    /// Lobatto IIIA–IIIB with `stages` = 2 or 3; `ParamError` naming the field otherwise.
    pub fn new(p: LobattoParams) -> Result<Self, ParamError> {
        let bad = || ParamError::OutOfRange {
            id: "lobatto".into(),
            field: "stages",
            value: p.stages as f64,
            fix: "give stages = 2 or 3".into(),
        };
        let a = Tableau::lobatto_iiia(p.stages).ok_or_else(bad)?;
        let b = Tableau::lobatto_iiib(p.stages).ok_or_else(bad)?;
        driftlab_core::params::positive("lobatto", "tol", p.tol)?;
        Ok(Self { p, a, b })
    }
}

impl LobattoStepper<'_> {
    /// Residual of the stage system at unknowns `x = (V_1…V_s, Λ_1…Λ_s, v_{n+1})`.
    #[allow(clippy::too_many_arguments)] // step data (t, h, q_n, v_n), unknowns, output
    fn residual(
        &self, s: &dyn MechanicalSystem, t0: f64, h: f64, qn: &[f64], vn: &[f64], x: &[f64],
        out: &mut [f64],
    ) {
        let st = self.a.s;
        let d = s.dims();
        let (n, m) = (d.n, d.m);
        let vv = |i: usize| &x[i * n..(i + 1) * n];
        let lam = |i: usize| &x[st * n + i * m..st * n + (i + 1) * m];
        let v1 = &x[st * (n + m)..];
        let q: Vec<Vec<f64>> = (0..st)
            .map(|i| {
                (0..n)
                    .map(|k| qn[k] + h * (0..st).map(|j| self.a.a(i, j) * vv(j)[k]).sum::<f64>())
                    .collect()
            })
            .collect();
        // Forces minus constraint forces at each stage.
        let jp = s.jacobian_pattern();
        let mut jac = vec![0.0; jp.nnz()];
        let mut g = vec![vec![0.0; n]; st];
        for i in 0..st {
            let ti = t0 + self.a.c[i] * h;
            let mut f = vec![0.0; n];
            s.forces(ti, &q[i], vv(i), &mut f);
            s.jacobian(ti, &q[i], &mut jac);
            // The unknowns hold Λ̃ = hΛ (scaling: the Newton matrix stays O(1) as h → 0).
            let li: Vec<f64> = lam(i).iter().map(|l| l / h).collect();
            let mut gtl = vec![0.0; n];
            jp.mul_transpose_vec(&jac, &li, &mut gtl);
            for k in 0..n {
                g[i][k] = f[k] - gtl[k];
            }
        }
        let mp = s.mass_pattern();
        let mut mass = vec![0.0; mp.nnz()];
        s.mass(qn, &mut mass);
        let mut row = 0;
        for i in 0..st {
            let diff: Vec<f64> = (0..n).map(|k| vv(i)[k] - vn[k]).collect();
            let mut md = vec![0.0; n];
            mp.mul_vec(&mass, &diff, &mut md, true);
            for k in 0..n {
                out[row + k] = md[k] - h * (0..st).map(|j| self.b.a(i, j) * g[j][k]).sum::<f64>();
            }
            row += n;
        }
        let mut phi = vec![0.0; m];
        for i in 1..st {
            s.constraints(t0 + self.a.c[i] * h, &q[i], &mut phi);
            for r in 0..m {
                out[row + r] = phi[r] / h; // scaled like the unknowns (∂/∂V = O(1))
            }
            row += m;
        }
        let t1 = t0 + h;
        let qs = &q[st - 1];
        s.jacobian(t1, qs, &mut jac);
        let mut gv = vec![0.0; m];
        jp.mul_vec(&jac, v1, &mut gv, false);
        let mut pt = vec![0.0; m];
        s.phi_t(t1, qs, &mut pt);
        for r in 0..m {
            out[row + r] = gv[r] + pt[r];
        }
        row += m;
        let diff: Vec<f64> = (0..n).map(|k| v1[k] - vn[k]).collect();
        let mut md = vec![0.0; n];
        mp.mul_vec(&mass, &diff, &mut md, true);
        for k in 0..n {
            out[row + k] = md[k] - h * (0..st).map(|i| self.a.b[i] * g[i][k]).sum::<f64>();
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
        id: "lobatto".into(),
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
                method: "lobatto".into(),
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
        for i in 0..st {
            for k in 0..n {
                x[i * n + k] = vn[k] + self.a.c[i] * h * state.a[k];
            }
            for r in 0..m {
                x[st * n + i * m + r] = h * state.lambda[r];
            }
        }
        for k in 0..n {
            x[st * (n + m) + k] = vn[k] + h * state.a[k];
        }
        let report = crate::fd_newton::solve(&mut x, self.p.tol, self.p.max_iter, t0, |x, out| {
            self.residual(s, t0, h, &qn, &vn, x, out)
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

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::MethodEntry {
    use driftlab_core::params;
    crate::MethodEntry {
        id: "lobatto",
        info,
        build: |t| {
            Ok(Box::new(Lobatto::new(params::parse(
                "method", "lobatto", t,
            )?)?))
        },
        defaults: params::defaults::<LobattoParams>,
    }
}
