//! `gauss`: Gauss–Legendre collocation (s = 1, 2, 3 stages; coefficients in
//! [`crate::tableau`]) applied to the **index-1 (acceleration-level) formulation**: the
//! state-space ODE `q' = v`, `v' = a(t, q, v)` with `(a, λ)` from the KKT system
//! `[[M, Φ_qᵀ], [Φ_q, 0]] [a; λ] = [f; γ]` at every stage (one sparse KKT solve per
//! stage evaluation, symbolic analysis once per run).
//!
//! ```text
//! Q_i = q_n + h Σ_j a_ij V_j,   V_i = v_n + h Σ_j a_ij a(t_n + c_j h, Q_j, V_j)
//! q_{n+1} = q_n + h Σ b_i V_i,  v_{n+1} = v_n + h Σ b_i a(t_n + c_i h, Q_i, V_i)
//! ```
//!
//! The stage equations are solved by simplified Newton with the Jacobian of the
//! kinematic part only (`∂(q', v')/∂(q, v) ≈ [[0, I], [0, 0]]`): `ΔV = −R_V`,
//! `ΔQ = −R_Q + h (A ⊗ I) ΔV`, which contracts like `h²‖∂a/∂q‖ + h‖∂a/∂v‖` — fine for the
//! non-stiff problems here, and each iteration costs s KKT solves. `λ_{n+1}` and
//! `a_{n+1}` are the KKT values at `(q_{n+1}, v_{n+1})`.
//!
//! The ODE is smooth, so Gauss keeps its classical order 2s in q and v (Hairer, Nørsett &
//! Wanner, Solving ODEs I, §II.7), and λ(q, v) inherits it. The constraints are only
//! differentiated, so `Φ` and `Φ_q v` drift by the global error (O(h^{2s}) per unit time
//! and growing): wrap it in `+projection` for the projected Gauss method of seed 004
//! (Wei, Deng, Li & Wang 2016), which keeps the order (GNI §IV.4). Applying Gauss to the
//! index-3 system directly (stage constraints `Φ(Q_i) = 0`, Schropp) is not implemented
//! here.

use crate::dynamics::{add_kkt_stats, AccelerationSolver, KktChoice};
use crate::tableau::Tableau;
use driftlab_core::method::unsupported;
use driftlab_core::{
    ConstraintLevels, DeclaredOrders, Method, MethodError, MethodInfo, MethodStats, ParamError,
    State, StepError, StepReport, SystemForm, SystemRef,
};
use serde::{Deserialize, Serialize};

/// Parameters of [`Gauss`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GaussParams {
    /// Stages s ∈ {1, 2, 3} (order 2s).
    pub stages: usize,
    /// Stage iteration stops when `‖Δ‖∞ ≤ tol (1 + ‖stages‖∞)`.
    pub tol: f64,
    /// Iteration cap.
    pub max_iter: usize,
    /// KKT factorization.
    pub kkt: KktChoice,
}

impl Default for GaussParams {
    fn default() -> Self {
        Self {
            stages: 3,
            tol: 1e-14,
            max_iter: 60,
            kkt: KktChoice::SparseLdlt,
        }
    }
}

/// Gauss collocation on the acceleration-level formulation.
pub struct Gauss {
    p: GaussParams,
    t: Tableau,
    solver: Option<AccelerationSolver>,
    stats: MethodStats,
}

impl Gauss {
    /// A new instance.
    pub fn new(p: GaussParams) -> Result<Self, ParamError> {
        let t = Tableau::gauss(p.stages).ok_or_else(|| ParamError::OutOfRange {
            id: "gauss".into(),
            field: "stages",
            value: p.stages as f64,
            fix: "give stages = 1, 2 or 3".into(),
        })?;
        driftlab_core::params::positive("gauss", "tol", p.tol)?;
        Ok(Self {
            p,
            t,
            solver: None,
            stats: MethodStats::default(),
        })
    }
}

/// Declared properties (at the default s = 3).
pub fn info() -> MethodInfo {
    info_for(3)
}

fn info_for(s: usize) -> MethodInfo {
    let p = 2.0 * s as f64;
    MethodInfo {
        id: "gauss".into(),
        family: "implicit-runge-kutta".into(),
        title: format!("Gauss–Legendre collocation, s = {s} (order {p}), on the acceleration-level formulation"),
        equations: "Q_i = q + hΣa_ij V_j, V_i = v + hΣa_ij a(Q_j, V_j), [M Φ_qᵀ; Φ_q 0][a; λ] = [f; γ];  q⁺ = q + hΣb_i V_i, v⁺ = v + hΣb_i a_i".into(),
        citation: "Butcher (1964); Hairer, Nørsett & Wanner, Solving ODEs I, §II.7 (order 2s); projected variant: seed 004 \
                   (Wei, Deng, Li & Wang, Appl. Math. Mech. 37(8) 2016 1077–1094)"
            .into(),
        orders: DeclaredOrders { q: Some(p), v: Some(p), lambda: Some(p) },
        enforces: ConstraintLevels { position: false, velocity: false, acceleration: true },
        implicit: true,
        symmetric: true,
        symplectic: false,
        forms: vec![SystemForm::Mechanical],
        nonholonomic: true,
        unilateral: false,
        priorities: false,
    }
}

impl Method for Gauss {
    fn info(&self) -> MethodInfo {
        info_for(self.p.stages)
    }
    fn init(&mut self, sys: SystemRef<'_>, state: &mut State) -> Result<(), MethodError> {
        let SystemRef::Mechanical(s) = sys else {
            return Err(unsupported(&info(), sys.form()));
        };
        let mut solver = AccelerationSolver::new(s, self.p.kkt)?;
        solver.solve(
            s,
            state.t,
            &state.q,
            &state.v,
            None,
            &mut state.a,
            &mut state.lambda,
        )?;
        self.solver = Some(solver);
        Ok(())
    }
    fn step(
        &mut self,
        sys: SystemRef<'_>,
        state: &mut State,
        h: f64,
    ) -> Result<StepReport, StepError> {
        let (SystemRef::Mechanical(sy), Some(solver)) = (sys, self.solver.as_mut()) else {
            return Err(StepError::LinearSolve {
                t: state.t,
                detail: "gauss: step before init".into(),
            });
        };
        let tb = &self.t;
        let (s, n, m) = (tb.s, state.q.len(), state.lambda.len());
        let t0 = state.t;
        let mut qs: Vec<Vec<f64>> = (0..s)
            .map(|i| {
                (0..n)
                    .map(|k| {
                        state.q[k]
                            + tb.c[i] * h * state.v[k]
                            + 0.5 * (tb.c[i] * h).powi(2) * state.a[k]
                    })
                    .collect()
            })
            .collect();
        let mut vs: Vec<Vec<f64>> = (0..s)
            .map(|i| {
                (0..n)
                    .map(|k| state.v[k] + tb.c[i] * h * state.a[k])
                    .collect()
            })
            .collect();
        let mut acc = vec![vec![0.0; n]; s];
        let mut lam = vec![0.0; m];
        let mut report = StepReport::default();
        let (mut previous, mut last) = (f64::INFINITY, f64::NAN);
        let mut growing = 0;
        loop {
            for i in 0..s {
                solver.solve(
                    sy,
                    t0 + tb.c[i] * h,
                    &qs[i],
                    &vs[i],
                    None,
                    &mut acc[i],
                    &mut lam,
                )?;
                report.factorizations += 1;
            }
            if report.newton_iterations >= self.p.max_iter {
                return Err(StepError::NewtonDiverged {
                    t: t0,
                    iterations: report.newton_iterations,
                    residual: last,
                    tol: self.p.tol,
                });
            }
            report.newton_iterations += 1;
            // ΔV = −R_V, ΔQ = −R_Q + h (A ⊗ I) ΔV.
            let mut dv = vec![vec![0.0; n]; s];
            let mut worst = 0.0_f64;
            let mut size = 0.0_f64;
            for i in 0..s {
                for k in 0..n {
                    let target =
                        state.v[k] + h * (0..s).map(|j| tb.a(i, j) * acc[j][k]).sum::<f64>();
                    dv[i][k] = target - vs[i][k];
                }
            }
            for i in 0..s {
                for k in 0..n {
                    let target =
                        state.q[k] + h * (0..s).map(|j| tb.a(i, j) * vs[j][k]).sum::<f64>();
                    let dq =
                        target - qs[i][k] + h * (0..s).map(|j| tb.a(i, j) * dv[j][k]).sum::<f64>();
                    qs[i][k] += dq;
                    vs[i][k] += dv[i][k];
                    worst = worst.max(dq.abs()).max(dv[i][k].abs());
                    size = size.max(qs[i][k].abs()).max(vs[i][k].abs());
                }
            }
            if worst.is_nan() {
                return Err(StepError::NewtonDiverged {
                    t: t0,
                    iterations: report.newton_iterations,
                    residual: worst,
                    tol: self.p.tol,
                });
            }
            // Converged, or stagnating at the round-off floor (crate::roundoff; a fixed-point
            // iteration: stop only when the correction no longer decreases at all).
            if worst <= self.p.tol * (1.0 + size)
                || (report.newton_iterations >= 3
                    && crate::roundoff::stalled(
                        worst,
                        previous,
                        1.0 + size,
                        crate::roundoff::FIXED_POINT,
                    ))
            {
                break;
            }
            // A contracting iteration shrinks its correction from the second iteration
            // on; three growths in a row mean the stiff forces defeat it (measured on the
            // flexible slider crank at h·ω_max ≈ 5: the iterates ran on until M(q) lost
            // definiteness and the KKT factorization failed with a zero pivot).
            growing = if worst > previous { growing + 1 } else { 0 };
            if growing >= 3 {
                return Err(StepError::StageIterationDiverged {
                    t: t0,
                    iterations: report.newton_iterations,
                    growing,
                    correction: worst,
                });
            }
            previous = worst;
            last = worst;
        }
        for i in 0..s {
            solver.solve(
                sy,
                t0 + tb.c[i] * h,
                &qs[i],
                &vs[i],
                None,
                &mut acc[i],
                &mut lam,
            )?;
            report.factorizations += 1;
        }
        for k in 0..n {
            state.q[k] += h * (0..s).map(|i| tb.b[i] * vs[i][k]).sum::<f64>();
            state.v[k] += h * (0..s).map(|i| tb.b[i] * acc[i][k]).sum::<f64>();
        }
        state.t = t0 + h;
        solver.solve(
            sy,
            state.t,
            &state.q,
            &state.v,
            None,
            &mut state.a,
            &mut state.lambda,
        )?;
        report.factorizations += 1;
        self.stats.steps += 1;
        self.stats.newton_iterations += report.newton_iterations;
        Ok(report)
    }
    fn refresh(&mut self, sys: SystemRef<'_>, state: &mut State) -> Result<(), StepError> {
        let (SystemRef::Mechanical(sy), Some(solver)) = (sys, self.solver.as_mut()) else {
            return Ok(());
        };
        solver.solve(
            sy,
            state.t,
            &state.q,
            &state.v,
            None,
            &mut state.a,
            &mut state.lambda,
        )
    }
    fn stats(&self) -> MethodStats {
        let mut s = self.stats;
        if let Some(k) = &self.solver {
            add_kkt_stats(&mut s, k.stats());
        }
        s
    }
}
