//! `moreau-jean`: Moreau–Jean event-capturing time stepping for **unilateral** constraints
//! `g(q) ≥ 0` (joint limits, contacts) together with the bilateral Φ (seed 001 §3.6.1;
//! J. J. Moreau 1988, M. Jean 1999; V. Acary & B. Brogliato, *Numerical Methods for
//! Nonsmooth Dynamical Systems*, 2008, §10.1), midpoint (θ = ½) variant, with Newton's
//! impact law of restitution e:
//!
//! ```text
//! q_m = q_n + ½h v_n
//! M(q_m)(v⁺ − v_n) = h f(t_m, q_m, v_n) − Φ_q(q_m)ᵀ Λ + G(q_m)ᵀ P,    Φ_q(q_m) v⁺ + Φ_t = 0
//! 0 ≤ P_i ⊥ G_i v⁺ + e G_i v_n ≥ 0     for every row with g_i(q_m) ≤ 0 (the active set)
//! q_{n+1} = q_m + ½h v⁺,  then q_{n+1} is projected onto Φ = 0 (mass-orthogonal, Newton)
//! ```
//!
//! The contact problem is an LCP in the impulses P with the Delassus matrix
//! `W = G K⁻¹_vv Gᵀ` (K the bilateral KKT matrix at q_m: one factorization per step, one
//! solve per active row), solved by projected Gauss–Seidel until
//! `max_i |min(P_i, w_i)| ≤ tol` (Acary & Brogliato §12.4). Impulses, not forces, are the
//! unknowns, so impacts need no event location; the price is first order at impacts.
//! `activation_margin = δ > 0` takes the rows with `g_i(q_m) ≤ δ` instead (a contact
//! skin), so that resting contacts do not flicker open.
//! The reported λ is the bilateral impulse over h. No order is declared: between impacts
//! the scheme is a constrained position-Verlet step, at impacts it is first order.
//!
//! **Warm start** (`warm_start = true`; seed 001 §3.11 pitfall 8, "预热启动"): PGS starts
//! from the previous step's contact forces, `P⁰_i = h F_i^{n−1}` for every row that was
//! active then (zero otherwise), instead of from zero. In persistent contact the previous
//! impulses nearly solve the new LCP, and the sweeps per step drop from O(N² log(1/tol))
//! on a stack of N (`ball-stack`) to a few (E. Catto, GDC 2005). The solution is the same
//! LCP's, to `lcp_tol`.

use crate::dynamics::{kkt_failure, kkt_start, with_kkt_stats, KktChoice};
use driftlab_core::prelude::*;
use driftlab_solver::newton::{NewtonFailure, NewtonKernel, NewtonOptions};
use driftlab_solver::KktSolver;
use serde::{Deserialize, Serialize};

/// Parameters of [`MoreauJean`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MoreauJeanParams {
    /// Complementarity tolerance of the projected Gauss–Seidel iteration.
    pub lcp_tol: f64,
    /// PGS sweep cap (exceeding it fails the run with the residual).
    pub lcp_max_iter: usize,
    /// Project positions onto Φ = 0 after each step (the velocity-level scheme drifts
    /// otherwise).
    pub project: bool,
    /// KKT factorization.
    pub kkt: KktChoice,
    /// Start PGS from the previous step's contact forces times h (off: from zero).
    pub warm_start: bool,
    /// Contact skin (m): the rows with `g_i(q_m) ≤ activation_margin` enter the LCP. With
    /// 0 (Acary & Brogliato 2008, §10.1, γ = ½) a resting contact whose gap round-off or
    /// the LCP tolerance lifts above zero leaves the set for one step and sinks `h²g`
    /// before it re-enters; a skin larger than that drift keeps it closed, at a position
    /// error of at most the skin (cf. Bullet's contact breaking threshold).
    pub activation_margin: f64,
}

impl Default for MoreauJeanParams {
    fn default() -> Self {
        Self {
            lcp_tol: 1e-13,
            lcp_max_iter: 10_000,
            project: true,
            kkt: KktChoice::Auto,
            warm_start: false,
            activation_margin: 0.0,
        }
    }
}

/// Moreau–Jean time stepping.
pub struct MoreauJean {
    p: MoreauJeanParams,
}

/// [`MoreauJean`] bound to its system.
struct MoreauJeanStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: MoreauJeanParams,
    kkt: KktSolver,
    init_stats: MethodStats,
    stats: MethodStats,
    /// Impacts resolved so far (steps with a nonzero contact impulse).
    impacts: usize,
    /// The last step's contact force per unilateral row (impulse over h; 0 if inactive).
    contact_force: Vec<f64>,
}

impl MoreauJean {
    /// Moreau–Jean with LCP tolerance `lcp_tol > 0`; `ParamError` otherwise. Its KKT
    /// solver is built at `start`.
    pub fn new(p: MoreauJeanParams) -> Result<Self, ParamError> {
        driftlab_core::params::positive(ID, "lcp_tol", p.lcp_tol)?;
        if !(p.activation_margin >= 0.0 && p.activation_margin.is_finite()) {
            return Err(ParamError::OutOfRange {
                id: ID.into(),
                field: "activation_margin",
                value: p.activation_margin,
                fix: "give a finite contact skin ≥ 0 (m); 0 activates rows at g ≤ 0".into(),
            });
        }
        Ok(Self { p })
    }
}

/// Declared properties of `moreau-jean`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: the θ-method with impacts and restitution is not symplectic, and inelastic impacts dissipate by design".into(),
        family: "nonsmooth".into(),
        title: "Moreau–Jean event-capturing time stepping (θ = ½), unilateral rows by LCP (projected Gauss–Seidel)".into(),
        equations: "q_m = q + ½hv;  M(v⁺ − v) = hf − Φ_qᵀΛ + GᵀP, Φ_q v⁺ + Φ_t = 0;  0 ≤ P ⊥ Gv⁺ + eGv ≥ 0 (active rows);  \
                    q⁺ = q_m + ½hv⁺, projected onto Φ = 0"
            .into(),
        citation: "J. J. Moreau (1988); M. Jean, Comput. Methods Appl. Mech. Engrg. 177 (1999) 235–257; V. Acary & \
                   B. Brogliato, Numerical Methods for Nonsmooth Dynamical Systems (2008), §10.1 and §12.4 (PGS)"
            .into(),
        orders: DeclaredOrders { q: None, v: None, lambda: None },
        // Velocities satisfy Φ_q(q_m) v⁺ + Φ_t = 0 at the midpoint, not at q_{n+1}: O(h).
        enforces: ConstraintLevels { position: true, velocity: false, acceleration: false },
        unilateral: true,
        ..MethodInfo::default()
    }
}

/// Projected Gauss–Seidel on `w = W P + b`, `0 ≤ P ⊥ w ≥ 0` (dense row-major W, k × k).
/// Returns the sweeps used, or the residual when the cap is reached.
pub fn pgs(w: &[f64], b: &[f64], p: &mut [f64], tol: f64, max_iter: usize) -> Result<usize, f64> {
    let k = b.len();
    let resid = |p: &[f64]| {
        (0..k)
            .map(|i| {
                let wi = b[i] + (0..k).map(|j| w[i * k + j] * p[j]).sum::<f64>();
                p[i].min(wi).abs()
            })
            .fold(0.0_f64, f64::max)
    };
    for sweep in 0..max_iter {
        let r = resid(p);
        if r <= tol {
            return Ok(sweep);
        }
        for i in 0..k {
            let wi = b[i] + (0..k).map(|j| w[i * k + j] * p[j]).sum::<f64>();
            p[i] = (p[i] - wi / w[i * k + i]).max(0.0);
        }
    }
    Err(resid(p))
}

impl Method for MoreauJean {
    fn info(&self) -> MethodInfo {
        let mut i = info();
        i.enforces.position = self.p.project;
        i
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let s = sys;
        let (kkt, stats) = kkt_start(s, self.p.kkt.options(opts), state)?;
        Ok(Box::new(MoreauJeanStepper {
            sys,
            p: self.p,
            kkt,
            init_stats: stats,
            stats: MethodStats::default(),
            impacts: 0,
            contact_force: vec![0.0; s.unilateral().map_or(0, |u| u.rows())],
        }))
    }
}

impl Stepper for MoreauJeanStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let (s, kkt) = (self.sys, &mut self.kkt);
        let d = s.dims();
        let (n, m, k) = (d.n, d.m, s.unilateral().map_or(0, |u| u.rows()));
        let t0 = state.t;
        let tm = t0 + 0.5 * h;
        let FreeStep {
            qm,
            mut v,
            mut big_l,
        } = free_velocity(kkt, s, state, h)?;
        let mut report = StepReport {
            factorizations: 1,
            ..Default::default()
        };
        // Contacts: active rows, Delassus matrix, LCP.
        if k > 0 {
            let (sweeps, impact) = contact_impulses(
                kkt,
                s,
                &self.p,
                (t0, h, &qm),
                (&state.v, &mut self.contact_force),
                (&mut v, &mut big_l),
            )?;
            report.newton_iterations += sweeps;
            if impact {
                self.impacts += 1;
            }
        }
        let mut q: Vec<f64> = (0..n).map(|i| qm[i] + 0.5 * h * v[i]).collect();
        // Position projection onto Φ(t_{n+1}, q) = 0 (simplified Newton with K(q_m)).
        if self.p.project && m > 0 {
            report.projection_iterations +=
                project_simplified(kkt, s, t0 + h, &mut q).map_err(|e| match e {
                    Failure::Solve(e) => kkt_failure(s, tm, &qm, e),
                    Failure::Step(e) => e,
                })?;
        }
        for i in 0..n {
            state.a[i] = (v[i] - state.v[i]) / h;
        }
        for r in 0..m {
            state.lambda[r] = big_l[r] / h;
        }
        state.q = q;
        state.v = v;
        state.t = t0 + h;
        self.stats.steps += 1;
        self.stats.newton_iterations += report.newton_iterations;
        self.stats.projection_iterations += report.projection_iterations;
        Ok(report)
    }
    fn stats(&self) -> MethodStats {
        with_kkt_stats(self.stats.merged(self.init_stats), Some(self.kkt.stats()))
    }
}

/// The bilateral half of a step: K factored at the midpoint `q_m = q_n + ½h v_n` and the
/// free velocity `M(q_m) v⁺ = M v_n + h f(t_m, q_m, v_n) − Φ_qᵀΛ`, `Φ_q v⁺ = −Φ_t`.
/// K stays factored for the contact rows and the projection.
fn free_velocity(
    kkt: &mut KktSolver, s: &dyn MechanicalSystem, state: &State, h: f64,
) -> Result<FreeStep, StepError> {
    let d = s.dims();
    let (n, m) = (d.n, d.m);
    let tm = state.t + 0.5 * h;
    let qm: Vec<f64> = (0..n).map(|i| state.q[i] + 0.5 * h * state.v[i]).collect();
    let mp = s.mass_pattern();
    let jp = s.jacobian_pattern();
    let mut mass = vec![0.0; mp.nnz()];
    let mut jac = vec![0.0; jp.nnz()];
    let mut f = vec![0.0; n];
    s.mass(&qm, &mut mass);
    s.jacobian(tm, &qm, &mut jac);
    s.forces(tm, &qm, &state.v, &mut f);
    kkt.factorize(&mass, &jac, None)
        .map_err(|e| kkt_failure(s, tm, &qm, e))?;
    let mut mv = vec![0.0; n];
    mp.mul_vec(&mass, &state.v, &mut mv, true);
    let mut rhs = vec![0.0; n + m];
    for i in 0..n {
        rhs[i] = mv[i] + h * f[i];
    }
    let mut pt = vec![0.0; m];
    s.phi_t(tm, &qm, &mut pt);
    for r in 0..m {
        rhs[n + r] = -pt[r];
    }
    kkt.solve(&mut rhs)
        .map_err(|e| kkt_failure(s, tm, &qm, e))?;
    Ok(FreeStep {
        v: rhs[..n].to_vec(),
        big_l: rhs[n..].to_vec(),
        qm,
    })
}

/// The bilateral half of a step ([`free_velocity`]).
struct FreeStep {
    /// Midpoint positions `q_m`.
    qm: Vec<f64>,
    /// Free velocity `v⁺`.
    v: Vec<f64>,
    /// Bilateral impulses `Λ`.
    big_l: Vec<f64>,
}

/// The contact impulses of one step (called when the problem has unilateral rows). The
/// rows with `g_i(q_m) ≤ 0` are active; with `K` the bilateral KKT matrix already factored
/// at `q_m`, `[x_a; y_a] = K⁻¹ [G_aᵀ; 0]` per active row, the Delassus matrix
/// `W_ab = G_a x_b` and `b_a = G_a v_free + e G_a v_n`, the LCP `0 ≤ P ⊥ W P + b ≥ 0` is
/// solved by [`pgs`] and the impulses added: `v += Σ P_a x_a`, `Λ += Σ P_a y_a`.
/// PGS starts from `h · force` (the previous step's forces) when warm-starting, and
/// `force` is overwritten with this step's `P/h` per row. Returns the PGS sweeps and
/// whether any impulse is positive (an impact); no active row: `(0, false)`.
fn contact_impulses(
    kkt: &mut KktSolver, s: &dyn MechanicalSystem, p: &MoreauJeanParams,
    (t0, h, qm): (f64, f64, &[f64]), (vn, force): (&[f64], &mut [f64]),
    (v, big_l): (&mut [f64], &mut [f64]),
) -> Result<(usize, bool), StepError> {
    let Some(unilateral) = s.unilateral() else {
        return Ok((0, false));
    };
    let tm = t0 + 0.5 * h;
    let (n, m, k) = (v.len(), big_l.len(), unilateral.rows());
    let mut g = vec![0.0; k];
    let mut gq = vec![0.0; k * n];
    unilateral.gaps(tm, qm, &mut g);
    unilateral.gap_jacobian(tm, qm, &mut gq);
    let dotg = |i: usize, x: &[f64]| (0..n).map(|c| gq[i * n + c] * x[c]).sum::<f64>();
    let active: Vec<usize> = (0..k).filter(|&i| g[i] <= p.activation_margin).collect();
    let warm: Vec<f64> = active.iter().map(|&i| h * force[i]).collect();
    force.fill(0.0);
    if active.is_empty() {
        return Ok((0, false));
    }
    let e = unilateral.restitution();
    let na = active.len();
    let mut cols: Vec<Vec<f64>> = Vec::with_capacity(na);
    for &i in &active {
        let mut c = vec![0.0; n + m];
        c[..n].copy_from_slice(&gq[i * n..(i + 1) * n]);
        kkt.solve(&mut c).map_err(|er| kkt_failure(s, tm, qm, er))?;
        cols.push(c);
    }
    let mut w = vec![0.0; na * na];
    let mut b = vec![0.0; na];
    for (a, &i) in active.iter().enumerate() {
        b[a] = dotg(i, v) + e * dotg(i, vn);
        for (c, col) in cols.iter().enumerate() {
            w[a * na + c] = dotg(i, &col[..n]);
        }
    }
    let mut imp = if p.warm_start { warm } else { vec![0.0; na] };
    let sweeps = pgs(&w, &b, &mut imp, p.lcp_tol, p.lcp_max_iter).map_err(|res| {
        StepError::NewtonDiverged {
            t: t0,
            iterations: p.lcp_max_iter,
            residual: res,
            tol: p.lcp_tol,
        }
    })?;
    let impact = imp.iter().any(|&x| x > 0.0);
    for (a, &i) in active.iter().enumerate() {
        force[i] = imp[a] / h;
    }
    for (a, col) in cols.iter().enumerate() {
        for i in 0..n {
            v[i] += imp[a] * col[i];
        }
        for r in 0..m {
            big_l[r] += imp[a] * col[n + r];
        }
    }
    Ok((sweeps, impact))
}

/// Why the simplified projection stopped.
enum Failure {
    /// A KKT solve failed (reported with the rank of Φ_q by the caller).
    Solve(driftlab_solver::SolverError),
    /// No convergence.
    Step(StepError),
}

/// Tolerance and iteration limit of Moreau–Jean's position projection.
const PROJECTION_TOL: f64 = 1e-13;
const PROJECTION_MAX_ITER: usize = 50;

/// Simplified Newton onto `Φ(t, q) = 0` with the KKT matrix already factored at the
/// midpoint: `[M Φ_qᵀ; Φ_q 0][δq; μ] = [0; −Φ(q)]`, on the Newton kernel with its η test
/// off (the projection stops on `‖Φ‖∞ ≤ 1e-13`). Returns the updates made.
fn project_simplified(
    kkt: &mut KktSolver, s: &dyn MechanicalSystem, t: f64, q: &mut [f64],
) -> Result<usize, Failure> {
    let (n, m) = (q.len(), kkt.dim() - q.len());
    let mut phi = vec![0.0; m];
    let mut kernel = NewtonKernel::new(NewtonOptions {
        tol: 0.0,
        ..NewtonOptions::full(PROJECTION_MAX_ITER + 1)
    });
    let mut res = f64::NAN;
    let solved = kernel.solve(|k| {
        let updates = k - 1;
        s.constraints(t, q, &mut phi);
        res = phi.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
        if res <= PROJECTION_TOL {
            return Ok(0.0);
        }
        if updates >= PROJECTION_MAX_ITER || res.is_nan() {
            return Err(Failure::Step(StepError::ProjectionFailed {
                t,
                iterations: updates,
                residual: res,
                tol: PROJECTION_TOL,
            }));
        }
        let mut r = vec![0.0; n + m];
        for j in 0..m {
            r[n + j] = -phi[j];
        }
        kkt.solve(&mut r).map_err(Failure::Solve)?;
        for i in 0..n {
            q[i] += r[i];
        }
        Ok(res / PROJECTION_TOL)
    });
    let updates = kernel.counters.iterations - 1;
    match solved {
        Ok(_) => Ok(updates),
        Err(NewtonFailure::Iteration(e)) => Err(e),
        Err(_) => Err(Failure::Step(StepError::ProjectionFailed {
            t,
            iterations: updates,
            residual: res,
            tol: PROJECTION_TOL,
        })),
    }
}

/// The catalog id `moreau-jean`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "moreau-jean";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(MoreauJean::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<MoreauJeanParams>,
    }
}
