//! `gauss`: Gauss–Legendre collocation (s = 1, 2, 3 stages; coefficients in
//! [`crate::implicit::tableau`]) applied to the **index-1 (acceleration-level) formulation**: the
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
//! `ΔQ = −R_Q + h (A ⊗ I) ΔV`, which contracts like `h²‖∂a/∂q‖ + h‖∂a/∂v‖` — fine for
//! non-stiff problems, and each iteration costs s KKT solves. When the problem offers a
//! tangent stiffness and damping (an elastic body), their projected responses
//! `J_q = −P M⁻¹K_t`, `J_v = −P M⁻¹C_t` enter the iteration matrix (`StiffStages`), so the
//! iteration contracts at any h on the stiff part. `λ_{n+1}` and
//! `a_{n+1}` are the KKT values at `(q_{n+1}, v_{n+1})`.
//!
//! The ODE is smooth, so Gauss keeps its classical order 2s in q and v (Hairer, Nørsett &
//! Wanner, Solving ODEs I, §II.7), and λ(q, v) inherits it. The constraints are only
//! differentiated, so `Φ` and `Φ_q v` drift by the global error (O(h^{2s}) per unit time
//! and growing): wrap it in `+projection` for the projected Gauss method of seed 004
//! (Wei, Deng, Li & Wang 2016), which keeps the order (GNI §IV.4). Gauss applied to the
//! index-3 system directly (stage constraints `Φ(Q_i) = 0`) is
//! [`crate::implicit::gauss_index3`].

use crate::dynamics::{count_step, with_kkt_stats, AccelerationSolver, KktChoice};
use crate::implicit::tableau::Tableau;
use driftlab_core::prelude::*;
use driftlab_solver::newton::{NewtonFailure, NewtonKernel, NewtonOptions};
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
            kkt: KktChoice::Auto,
        }
    }
}

/// Gauss collocation on the acceleration-level formulation.
pub struct Gauss {
    p: GaussParams,
    t: Tableau,
}

/// [`Gauss`] bound to its system.
struct GaussStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: GaussParams,
    t: Tableau,
    solver: AccelerationSolver,
    stats: MethodStats,
    /// `‖J_q‖∞` at the last [`StiffStages`] evaluation and the steps since.
    stiffness: Option<(f64, usize)>,
}

impl Gauss {
    /// Gauss with `stages` = 1, 2 or 3 (orders 2, 4, 6); `ParamError` naming the field
    /// otherwise.
    pub fn new(p: GaussParams) -> Result<Self, ParamError> {
        let t = Tableau::gauss(p.stages).ok_or_else(|| ParamError::OutOfRange {
            id: ID.into(),
            field: "stages",
            value: p.stages as f64,
            fix: "give stages = 1, 2 or 3".into(),
        })?;
        driftlab_core::params::positive(ID, "tol", p.tol)?;
        Ok(Self { p, t })
    }
}

/// Declared properties (at the default s = 3).
pub fn info() -> MethodInfo {
    info_for(3)
}

fn info_for(s: usize) -> MethodInfo {
    let p = 2.0 * s as f64;
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: Gauss is symplectic for Hamiltonian ODEs (GNI Thm. VI.4.2), but here it integrates the acceleration-level ODE, whose flow is not symplectic off the constraint manifold, and its steps leave 𝓜; measured in tests/symplecticity.rs".into(),
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
        error_estimate: None,
        varying_mass: false,
    }
}

impl Method for Gauss {
    fn info(&self) -> MethodInfo {
        info_for(self.p.stages)
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let s = sys;
        let mut solver = AccelerationSolver::new(s, self.p.kkt.options(opts))?;
        solver.solve_state(s, state)?;
        Ok(Box::new(GaussStepper {
            sys,
            p: self.p,
            t: self.t.clone(),
            solver,
            stats: MethodStats::default(),
            stiffness: None,
        }))
    }
    fn restartable(&self) -> bool {
        true
    }
}

impl Stepper for GaussStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let (sy, solver) = (self.sys, &mut self.solver);
        let tb = &self.t;
        let m = state.lambda.len();
        let t0 = state.t;
        let (qs, vs) = predict_stages(tb, h, state);
        let mut stages = Stages {
            q: qs,
            v: vs,
            a: vec![vec![0.0; state.q.len()]; tb.s],
            lam: vec![0.0; m],
        };
        let mut report = StepReport::default();
        let frame = Frame { sy, tb, t0, h };
        let stiff = stiff_stages(&mut self.stiffness, solver, &frame, state, &mut report)?;
        let start = (&state.q[..], &state.v[..]);
        stages.iterate(solver, &frame, start, stiff.as_ref(), &mut report, &self.p)?;
        stages.advance(solver, &frame, state, &mut report)?;
        Ok(count_step(&mut self.stats, report))
    }
    fn refresh(&mut self, state: &mut State) -> Result<(), StepError> {
        let (sy, solver) = (self.sys, &mut self.solver);
        solver.solve_state(sy, state)
    }

    fn stats(&self) -> MethodStats {
        with_kkt_stats(self.stats, Some(self.solver.stats()))
    }
}

/// Start values of the stages from the Taylor expansion at the step's start:
/// `Q_i = q + c_i h v + ½(c_i h)² a`, `V_i = v + c_i h a`.
fn predict_stages(tb: &Tableau, h: f64, state: &State) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let stage = |i: usize, f: &dyn Fn(usize, f64) -> f64| -> Vec<f64> {
        (0..state.q.len()).map(|k| f(k, tb.c[i] * h)).collect()
    };
    let q = (0..tb.s)
        .map(|i| {
            stage(i, &|k, ch| {
                state.q[k] + ch * state.v[k] + 0.5 * ch * ch * state.a[k]
            })
        })
        .collect();
    let v = (0..tb.s)
        .map(|i| stage(i, &|k, ch| state.v[k] + ch * state.a[k]))
        .collect();
    (q, v)
}

/// What one Gauss step holds fixed: the model, the tableau, the step's start time and
/// size.
struct Frame<'a> {
    sy: &'a dyn driftlab_core::MechanicalSystem,
    tb: &'a Tableau,
    t0: f64,
    h: f64,
}

/// The stiff iteration matrix of this step ([`StiffStages`]), only where the kinematic
/// iteration would contract slowly: `h² ‖A²‖ ‖J_q‖ ≥ 0.01`, with `‖J_q‖` re-measured at
/// least every 50 steps. `stiffness` carries `(‖J_q‖∞, steps since measured)` between
/// steps.
fn stiff_stages(
    stiffness: &mut Option<(f64, usize)>, solver: &mut AccelerationSolver, fr: &Frame<'_>,
    state: &State, report: &mut StepReport,
) -> Result<Option<StiffStages>, StepError> {
    let (tb, h) = (fr.tb, fr.h);
    let a2 = tb.a2_norm();
    let skip = matches!(*stiffness, Some((norm, age)) if h * h * a2 * norm < 1e-2 && age < 50);
    if skip {
        *stiffness = stiffness.map(|(norm, age)| (norm, age + 1));
        Ok(None)
    } else {
        let st = StiffStages::at(fr.sy, solver, tb, h, fr.t0, &state.q, &state.v, report)?;
        *stiffness = st.as_ref().map(|st| (st.jq_norm(), 0));
        Ok(st)
    }
}

/// The stage values of one Gauss step being iterated, and the multiplier buffer of the
/// stage KKT solves.
struct Stages {
    q: Vec<Vec<f64>>,
    v: Vec<Vec<f64>>,
    a: Vec<Vec<f64>>,
    lam: Vec<f64>,
}

impl Stages {
    /// The accelerations `a(Q_i, V_i)` of every stage (one KKT solve each).
    fn accelerate(
        &mut self, solver: &mut AccelerationSolver, fr: &Frame<'_>,
    ) -> Result<(), StepError> {
        let (tb, t0, h) = (fr.tb, fr.t0, fr.h);
        for i in 0..tb.s {
            let t = t0 + tb.c[i] * h;
            solver.solve(
                fr.sy,
                t,
                &self.q[i],
                &self.v[i],
                None,
                &mut self.a[i],
                &mut self.lam,
            )?;
        }
        Ok(())
    }

    /// Solve the stage equations `V_i = v_n + h Σ_j a_ij a(t_n + c_j h, Q_j, V_j)`,
    /// `Q_i = q_n + h Σ_j a_ij V_j` by the simplified Newton iteration of the module
    /// documentation ([`Stages::correct`] per iteration, after the stage accelerations).
    /// Stops when the correction is below `tol (1 + ‖stages‖∞)` or stagnates at the
    /// round-off floor; three growths in a row are a divergence.
    fn iterate(
        &mut self, solver: &mut AccelerationSolver, fr: &Frame<'_>, start: (&[f64], &[f64]),
        stiff: Option<&StiffStages>, report: &mut StepReport, p: &GaussParams,
    ) -> Result<(), StepError> {
        let (tb, t0, h) = (fr.tb, fr.t0, fr.h);
        // The kernel owns the loop and its counters; the stage iteration keeps its own
        // stopping rule (the kernel's η test is off): converged, or stagnating at the
        // round-off floor (crate::roundoff; a fixed-point iteration stops only when the
        // correction no longer decreases at all); three growths in a row mean the stiff
        // forces defeat it (measured on the flexible slider crank at h·ω_max ≈ 5: the
        // iterates ran on until M(q) lost definiteness and the KKT factorization failed).
        let mut kernel = NewtonKernel::new(NewtonOptions {
            tol: 0.0,
            ..NewtonOptions::full(p.max_iter)
        });
        let (mut previous, mut last, mut growing) = (f64::INFINITY, f64::NAN, 0);
        let tol = p.tol;
        let solved = kernel.solve(|k| {
            self.accelerate(solver, fr)?;
            report.factorizations += tb.s;
            let (worst, size) = self.correct(tb, h, start, stiff, t0)?;
            last = worst;
            if worst.is_nan() {
                return Ok(f64::NAN);
            }
            let stalled = k >= 3
                && crate::roundoff::stalled(
                    worst,
                    previous,
                    1.0 + size,
                    crate::roundoff::FIXED_POINT,
                );
            if worst <= tol * (1.0 + size) || stalled {
                return Ok(0.0);
            }
            growing = if worst > previous { growing + 1 } else { 0 };
            if growing >= 3 {
                return Err(StepError::StageIterationDiverged {
                    t: t0,
                    iterations: k,
                    growing,
                    correction: worst,
                });
            }
            previous = worst;
            Ok(worst / (tol * (1.0 + size)))
        });
        report.newton_iterations = kernel.counters.iterations;
        match solved {
            Ok(_) => Ok(()),
            Err(NewtonFailure::Iteration(e)) => Err(e),
            Err(_) => Err(StepError::NewtonDiverged {
                t: t0,
                iterations: report.newton_iterations,
                residual: last,
                tol,
            }),
        }
    }

    /// Update the state from the converged stages: the stage accelerations at the final
    /// stage values, `q_{n+1} = q_n + h Σ b_i V_i`, `v_{n+1} = v_n + h Σ b_i a_i`,
    /// `t_{n+1} = t_n + h`, and `(a_{n+1}, λ_{n+1})` from the KKT system at
    /// `(q_{n+1}, v_{n+1})`.
    fn advance(
        &mut self, solver: &mut AccelerationSolver, fr: &Frame<'_>, state: &mut State,
        report: &mut StepReport,
    ) -> Result<(), StepError> {
        let (tb, sy, t0, h) = (fr.tb, fr.sy, fr.t0, fr.h);
        let (s, n) = (tb.s, state.q.len());
        self.accelerate(solver, fr)?;
        report.factorizations += s;
        for k in 0..n {
            state.q[k] += h * (0..s).map(|i| tb.b[i] * self.v[i][k]).sum::<f64>();
            state.v[k] += h * (0..s).map(|i| tb.b[i] * self.a[i][k]).sum::<f64>();
        }
        state.t = t0 + h;
        solver.solve_state(sy, state)?;
        report.factorizations += 1;
        Ok(())
    }

    /// One correction: `ΔV = −R_V` (or the stiff solve), `ΔQ = −R_Q + h (A ⊗ I) ΔV`;
    /// returns the largest correction and the largest stage value.
    fn correct(
        &mut self, tb: &Tableau, h: f64, (q0, v0): (&[f64], &[f64]), stiff: Option<&StiffStages>,
        t0: f64,
    ) -> Result<(f64, f64), StepError> {
        let (s, n) = (tb.s, q0.len());
        let mut dv = vec![vec![0.0; n]; s];
        let mut nrq = vec![vec![0.0; n]; s];
        for i in 0..s {
            for k in 0..n {
                let target = v0[k] + h * (0..s).map(|j| tb.a(i, j) * self.a[j][k]).sum::<f64>();
                dv[i][k] = target - self.v[i][k];
                let target = q0[k] + h * (0..s).map(|j| tb.a(i, j) * self.v[j][k]).sum::<f64>();
                nrq[i][k] = target - self.q[i][k];
            }
        }
        if let Some(st) = stiff {
            st.correct(tb, h, &nrq, &mut dv)
                .map_err(|e| crate::dynamics::linear_error(t0, e))?;
        }
        let (mut worst, mut size) = (0.0_f64, 0.0_f64);
        for i in 0..s {
            for k in 0..n {
                let dq = nrq[i][k] + h * (0..s).map(|j| tb.a(i, j) * dv[j][k]).sum::<f64>();
                self.q[i][k] += dq;
                self.v[i][k] += dv[i][k];
                worst = worst.max(dq.abs()).max(dv[i][k].abs());
                size = size.max(self.q[i][k].abs()).max(self.v[i][k].abs());
            }
        }
        Ok((worst, size))
    }
}

/// The stiff part of the stage Newton matrix, when the problem offers a tangent stiffness
/// `K_t` and damping `C_t` ([`driftlab_core::MechanicalSystem::tangent`]) and the stage
/// system is small (`s n ≤ 1200`): with `J_q = −P M⁻¹ K_t`, `J_v = −P M⁻¹ C_t` at the step
/// start (P keeps the acceleration constraint), the simplified Newton step solves
///
/// ```text
/// (I − h (A ⊗ J_v) − h² (A² ⊗ J_q)) ΔV = −R_V − h (A ⊗ J_q) R_Q,   ΔQ = −R_Q + h (A ⊗ I) ΔV
/// ```
///
/// instead of `ΔV = −R_V` (Hairer & Wanner, Solving ODEs II, §IV.8, simplified Newton for
/// implicit Runge–Kutta methods, written for the second-order form). It contracts for any
/// h on the stiff linear part, where the kinematic iteration needs `h² ‖M⁻¹K‖ < 1`
/// (measured on the flexible slider crank: without it the iteration diverges at
/// h ≥ 2.2e-4).
struct StiffStages {
    n: usize,
    s: usize,
    jq: Vec<f64>,
    lu: driftlab_solver::dense::DenseLu,
}

impl StiffStages {
    #[allow(clippy::too_many_arguments)] // the step's context
    fn at(
        sy: &dyn driftlab_core::MechanicalSystem, solver: &mut AccelerationSolver, tb: &Tableau,
        h: f64, t: f64, q: &[f64], v: &[f64], report: &mut StepReport,
    ) -> Result<Option<Self>, StepError> {
        let Some(tangent) = sy.tangent() else {
            return Ok(None);
        };
        let pattern = tangent.pattern();
        let (n, s) = (q.len(), tb.s);
        if s * n > 1200 {
            return Ok(None);
        }
        let (mut kv, mut cv) = (vec![0.0; pattern.nnz()], vec![0.0; pattern.nnz()]);
        tangent.values(t, q, v, &mut kv, &mut cv);
        let kd = pattern.to_dense(&kv, true);
        let cd = pattern.to_dense(&cv, true);
        let (mut a, mut lam) = (vec![0.0; n], vec![0.0; sy.dims().m]);
        solver.solve(sy, t, q, v, None, &mut a, &mut lam)?;
        report.factorizations += 1;
        let (mut jq, mut jv) = (vec![0.0; n * n], vec![0.0; n * n]);
        let (mut r, mut x) = (vec![0.0; n], vec![0.0; n]);
        for (dense, out) in [(&kd, &mut jq), (&cd, &mut jv)] {
            for col in 0..n {
                if (0..n).all(|row| dense[row * n + col] == 0.0) {
                    continue;
                }
                for row in 0..n {
                    r[row] = -dense[row * n + col];
                }
                solver.respond(sy, t, q, &r, &mut x)?;
                for row in 0..n {
                    out[row * n + col] = x[row];
                }
            }
        }
        // A² for the h² term.
        let a2 = |i: usize, k: usize| (0..s).map(|j| tb.a(i, j) * tb.a(j, k)).sum::<f64>();
        let dim = s * n;
        let mut matrix = vec![0.0; dim * dim];
        for i in 0..s {
            for k in 0..s {
                let (cv_, cq) = (h * tb.a(i, k), h * h * a2(i, k));
                for row in 0..n {
                    for col in 0..n {
                        let mut x = -cv_ * jv[row * n + col] - cq * jq[row * n + col];
                        if i == k && row == col {
                            x += 1.0;
                        }
                        matrix[(i * n + row) * dim + k * n + col] = x;
                    }
                }
            }
        }
        Ok(Some(Self {
            n,
            s,
            jq,
            lu: driftlab_solver::dense::DenseLu::factor(dim, &matrix).map_err(|e| {
                StepError::LinearSolve {
                    t,
                    detail: format!("Gauss stiff Newton matrix: {e}"),
                }
            })?,
        }))
    }

    /// `‖J_q‖∞` (max row sum).
    fn jq_norm(&self) -> f64 {
        let n = self.n;
        (0..n)
            .map(|r| (0..n).map(|c| self.jq[r * n + c].abs()).sum::<f64>())
            .fold(0.0, f64::max)
    }

    /// Replace `dv = −R_V` by the stiff Newton correction, given `nrq = −R_Q`.
    fn correct(
        &self, tb: &Tableau, h: f64, nrq: &[Vec<f64>], dv: &mut [Vec<f64>],
    ) -> Result<(), driftlab_solver::SolverError> {
        let (n, s) = (self.n, self.s);
        let mut rhs = vec![0.0; s * n];
        for i in 0..s {
            for row in 0..n {
                let coupling: f64 = (0..s)
                    .map(|j| {
                        tb.a(i, j)
                            * (0..n)
                                .map(|col| self.jq[row * n + col] * nrq[j][col])
                                .sum::<f64>()
                    })
                    .sum();
                rhs[i * n + row] = dv[i][row] + h * coupling;
            }
        }
        self.lu.solve(&mut rhs)?;
        for i in 0..s {
            dv[i].copy_from_slice(&rhs[i * n..(i + 1) * n]);
        }
        Ok(())
    }
}

/// The catalog id `gauss`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "gauss";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(Gauss::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<GaussParams>,
    }
}
