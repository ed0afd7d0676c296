//! Shared numerics for methods on mechanical systems: the acceleration-level KKT solve
//! `[[M, Φ_qᵀ], [Φ_q, 0]] [a; λ] = [f; γ + b]` on one sparse [`KktSolver`] built once
//! per run (symbolic analysis once), and the adapter that lets the solver's projections
//! evaluate the problem's constraints.

use driftlab_core::prelude::*;
use driftlab_solver::{KktBackend, KktOptions, KktPattern, KktSolver, KktStats};
use serde::{Deserialize, Serialize};

/// Which KKT factorization a method uses (a parameter of every KKT-based method).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KktChoice {
    /// By size: dense LU up to [`driftlab_solver::DENSE_MAX_DIM`] unknowns `n + m`, sparse
    /// LDLᵀ above (default; the crossover is measured by the `kkt-crossover` experiment).
    #[default]
    Auto,
    /// faer sparse LDLᵀ, symbolic analysis once.
    SparseLdlt,
    /// Dense LU with partial pivoting.
    DenseLu,
    /// The Schur complement (Delassus matrix) `Φ_q M⁻¹ Φ_qᵀ` by sparse LDLᵀ, `M` inverted
    /// block by block: for block-diagonal `M` (natural coordinates, lumped masses); a
    /// coupled `M` or iteration matrix is refused at `init`.
    Schur,
}

impl KktChoice {
    /// Solver options for this choice, with the threads the run's start options allow.
    pub fn options(self, start: &StartOptions) -> KktOptions {
        KktOptions {
            par: driftlab_solver::par_of(start.threads),
            backend: match self {
                KktChoice::Auto => KktBackend::Auto,
                KktChoice::SparseLdlt => KktBackend::SparseLdlt,
                KktChoice::DenseLu => KktBackend::DenseLu,
                KktChoice::Schur => KktBackend::Schur,
            },
            ..Default::default()
        }
    }
}

/// The KKT pattern `[[M, Φ_qᵀ], [Φ_q, 0]]` of a system.
pub fn kkt_pattern(sys: &dyn MechanicalSystem) -> KktPattern {
    let d = sys.dims();
    KktPattern {
        n: d.n,
        m: d.m,
        a_lower: sys.mass_pattern().entries,
        b: sys.jacobian_pattern().entries,
    }
}

/// The extra terms of an implicit method's Newton iteration matrix beyond its mass term:
/// the constraint Hessian contraction `K_Φ = Σλ_i∇²Φ_i` and the problem's tangent
/// stiffness `K_t` and damping `C_t` ([`MechanicalSystem::tangent`]), each appended to the
/// lower-triangle (1,1) pattern after the mass entries, when the problem provides them.
pub struct IterationTerms {
    /// Number of mass entries at the front of the (1,1) values.
    pub n_mass: usize,
    hessian: Option<(usize, usize)>,
    tangent: Option<(usize, usize)>,
    k: Vec<f64>,
    c: Vec<f64>,
}

impl IterationTerms {
    /// The KKT pattern `[[M + K_Φ + K_t, Φ_qᵀ], [Φ_q, 0]]` of `sys` and where each term sits.
    pub fn layout(sys: &dyn MechanicalSystem) -> (KktPattern, Self) {
        let mut pattern = kkt_pattern(sys);
        let n_mass = pattern.a_lower.len();
        let mut span = |entries: Vec<(usize, usize)>| {
            let start = pattern.a_lower.len();
            pattern.a_lower.extend(entries);
            (start, pattern.a_lower.len() - start)
        };
        let hessian = sys.constraint_hessian().map(|c| span(c.pattern().entries));
        let tangent = sys.tangent().map(|c| span(c.pattern().entries));
        let nt = tangent.map_or(0, |(_, len)| len);
        let terms = Self {
            n_mass,
            hessian,
            tangent,
            k: vec![0.0; nt],
            c: vec![0.0; nt],
        };
        (pattern, terms)
    }

    /// Whether the problem supplies the constraint Hessian.
    pub fn has_hessian(&self) -> bool {
        self.hessian.is_some()
    }

    /// Write `ch·K_Φ(q, λ)` and `ck·K_t + cc·C_t` into their places in `vals` (the mass
    /// entries, in front, are the caller's).
    #[allow(clippy::too_many_arguments)] // the state (t, q, v, λ) and one coefficient per term
    pub fn fill(
        &mut self, sys: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64], lambda: &[f64],
        (ch, ck, cc): (f64, f64, f64), vals: &mut [f64],
    ) {
        if let (Some((start, len)), Some(hessian)) = (self.hessian, sys.constraint_hessian()) {
            let out = &mut vals[start..start + len];
            hessian.values(t, q, lambda, out);
            out.iter_mut().for_each(|x| *x *= ch);
        }
        if let (Some((start, len)), Some(tangent)) = (self.tangent, sys.tangent()) {
            tangent.values(t, q, v, &mut self.k, &mut self.c);
            for (i, x) in vals[start..start + len].iter_mut().enumerate() {
                *x = ck * self.k[i] + cc * self.c[i];
            }
        }
    }
}

/// The KKT solver of `[[M, Φ_qᵀ], [Φ_q, 0]]` (symbolic analysis once) and a consistent
/// start (`state.a`, `state.λ` from one acceleration solve), with the counters spent: the
/// common `init` of methods that refactor the plain KKT matrix every step.
pub fn kkt_start(
    sys: &dyn MechanicalSystem, options: KktOptions, state: &mut driftlab_core::State,
) -> Result<(KktSolver, driftlab_core::MethodStats), driftlab_core::MethodError> {
    let kkt = KktSolver::new(&kkt_pattern(sys), options)
        .map_err(|e| driftlab_core::MethodError::Init(linear_error(state.t, e)))?;
    let stats = consistent_start(sys, options, state)?;
    Ok((kkt, stats))
}

/// A linear-solver failure at time `t`, as a step error. A right-hand side that is
/// already non-finite (the forces or γ returned NaN or ∞, or the iteration diverged
/// before the solve) is a non-finite state, not a failure of the linear solve.
pub fn linear_error(t: f64, e: driftlab_solver::SolverError) -> StepError {
    match e {
        driftlab_solver::SolverError::OutOfMemory(e) => e,
        driftlab_solver::SolverError::NonFiniteRhs { index, .. } => StepError::NonFinite {
            t,
            field: "linear-solve right-hand side (forces, γ or the iterate)",
            index,
        },
        e => StepError::LinearSolve {
            t,
            detail: e.to_string(),
        },
    }
}

/// A failed KKT factorization or solve, with the numerical rank of `Φ_q(t, q)` appended
/// when it is deficient (redundant constraints or a singular configuration, seed 001
/// §3.11), so the failed row says why and what to do.
pub fn kkt_failure(
    sys: &dyn MechanicalSystem, t: f64, q: &[f64], e: driftlab_solver::SolverError,
) -> StepError {
    if matches!(
        e,
        driftlab_solver::SolverError::OutOfMemory(_)
            | driftlab_solver::SolverError::NonFiniteRhs { .. }
    ) {
        return linear_error(t, e);
    }
    let mut detail = e.to_string();
    let jp = sys.jacobian_pattern();
    let mut jv = vec![0.0; jp.nnz()];
    sys.jacobian(t, q, &mut jv);
    let d = sys.dims();
    if d.m == 0 {
        detail.push_str(
            "; no constraint rows: M(q) itself is singular or too ill-conditioned to solve at this state              (masses or inertias spanning many decades, or a singular configuration)",
        );
    } else if d.m <= 2000 {
        if let Ok(r) = driftlab_solver::numerical_rank(d.m, d.n, &jp.entries, &jv) {
            let smax = r.singular_values.first().copied().unwrap_or(0.0);
            let smin = r.singular_values.last().copied().unwrap_or(0.0);
            detail.push_str(&format!(
                "; Φ_q: numerical rank {} of {} rows, σ_min/σ_max = {:.1e}",
                r.rank,
                d.m,
                smin / smax.max(f64::MIN_POSITIVE)
            ));
            if r.rank < d.m || smin < 1e-6 * smax {
                detail.push_str(
                    " (redundant constraints or a singular configuration, seed 001 §3.11: use regularized \
                     multipliers, tikhonov > 0, or generalized-alpha)",
                );
            }
        }
    }
    StepError::LinearSolve { t, detail }
}

/// Acceleration-level solves with preallocated buffers.
pub struct AccelerationSolver {
    kkt: KktSolver,
    mass: Vec<f64>,
    /// Φ_q's pattern, built once (a problem may assemble it on every call).
    jp: driftlab_core::SparsityPattern,
    jac: Vec<f64>,
    f: Vec<f64>,
    gamma: Vec<f64>,
    rhs: Vec<f64>,
    n: usize,
    m: usize,
    tikhonov: Option<Vec<f64>>,
}

impl AccelerationSolver {
    /// Tikhonov-regularized multipliers (seed 001 §3.5.4): solve
    /// `[[M, Φ_qᵀ], [Φ_q, −εI]]`, i.e. `(Φ_q M⁻¹ Φ_qᵀ + εI) λ = b`, exactly — the
    /// regularization is part of the model, not refined away, so it biases the solution:
    /// `Φ_q a − γ = −ε λ`. `ε = 0` switches it off.
    pub fn with_tikhonov(mut self, eps: f64) -> Self {
        self.tikhonov = (eps > 0.0).then(|| vec![eps; self.m]);
        self
    }

    /// Build the KKT layout and run the symbolic analysis.
    pub fn new(sys: &dyn MechanicalSystem, options: KktOptions) -> Result<Self, StepError> {
        let d = sys.dims();
        let kkt = KktSolver::new(&kkt_pattern(sys), options).map_err(|e| linear_error(0.0, e))?;
        let jp = sys.jacobian_pattern();
        Ok(Self {
            kkt,
            mass: vec![0.0; sys.mass_pattern().nnz()],
            jac: vec![0.0; jp.nnz()],
            jp,
            f: vec![0.0; d.n],
            gamma: vec![0.0; d.m],
            rhs: vec![0.0; d.n + d.m],
            n: d.n,
            m: d.m,
            tikhonov: None,
        })
    }

    /// Solve for `(a, λ)` at `(t, q, v)` with the acceleration constraint
    /// `Φ_q a = γ + bias` (`bias = None`: the exact hidden constraint):
    /// [`Self::load`] then [`Self::solve_loaded`].
    #[allow(clippy::too_many_arguments)] // inputs (t, q, v, bias) and outputs (a, λ) of one KKT solve
    pub fn solve(
        &mut self, sys: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64], bias: Option<&[f64]>,
        a: &mut [f64], lambda: &mut [f64],
    ) -> Result<(), StepError> {
        self.load(sys, t, q, v);
        self.solve_loaded(sys, t, q, bias, a, lambda)
    }

    /// Evaluate `M(t, q, v)` ([`MechanicalSystem::mass_at`]), `Φ_q(t, q)`, `f(t, q, v)`
    /// and `γ(t, q, v)` for the next [`Self::solve_loaded`]; a caller that needs `Φ_q` too
    /// reads [`Self::jacobian`] instead of evaluating it again.
    pub fn load(&mut self, sys: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64]) {
        sys.mass_at(t, q, v, &mut self.mass);
        sys.jacobian(t, q, &mut self.jac);
        sys.forces(t, q, v, &mut self.f);
        sys.curvature(t, q, v, &mut self.gamma);
    }

    /// `Φ_q` of the last [`Self::load`] and its pattern.
    pub fn jacobian(&self) -> (&driftlab_core::SparsityPattern, &[f64]) {
        (&self.jp, &self.jac)
    }

    /// Factor and solve with the values of the last [`Self::load`] at `(t, q)`.
    pub fn solve_loaded(
        &mut self, sys: &dyn MechanicalSystem, t: f64, q: &[f64], bias: Option<&[f64]>,
        a: &mut [f64], lambda: &mut [f64],
    ) -> Result<(), StepError> {
        self.kkt
            .factorize(&self.mass, &self.jac, self.tikhonov.as_deref())
            .map_err(|e| kkt_failure(sys, t, q, e))?;
        self.rhs[..self.n].copy_from_slice(&self.f);
        for r in 0..self.m {
            self.rhs[self.n + r] = self.gamma[r] + bias.map_or(0.0, |b| b[r]);
        }
        self.kkt
            .solve(&mut self.rhs)
            .map_err(|e| kkt_failure(sys, t, q, e))?;
        a.copy_from_slice(&self.rhs[..self.n]);
        lambda.copy_from_slice(&self.rhs[self.n..]);
        Ok(())
    }

    /// [`Self::solve`] at `state` with the exact hidden constraint, into `state.a` and
    /// `state.lambda`: the consistent acceleration and multipliers of `(t, q, v)`.
    pub fn solve_state(
        &mut self, sys: &dyn MechanicalSystem, state: &mut State,
    ) -> Result<(), StepError> {
        let State { t, q, v, a, lambda } = state;
        self.solve(sys, *t, q, v, None, a, lambda)
    }

    /// Solve `[[M, Φ_qᵀ], [Φ_q, 0]] [x; μ] = [r; 0]` with the factorization of the last
    /// [`Self::solve`]: `x = P M⁻¹ r`, the acceleration response to a force `r` that keeps
    /// the acceleration constraint (P the M-orthogonal projector onto ker Φ_q).
    pub fn respond(
        &mut self, sys: &dyn MechanicalSystem, t: f64, q: &[f64], r: &[f64], x: &mut [f64],
    ) -> Result<(), StepError> {
        self.rhs[..self.n].copy_from_slice(r);
        self.rhs[self.n..].iter_mut().for_each(|v| *v = 0.0);
        self.kkt
            .solve(&mut self.rhs)
            .map_err(|e| kkt_failure(sys, t, q, e))?;
        x.copy_from_slice(&self.rhs[..self.n]);
        Ok(())
    }

    /// Counters of the underlying KKT solver.
    pub fn stats(&self) -> KktStats {
        self.kkt.stats()
    }
}

pub use driftlab_solver::ConstraintsAt;

/// The second-order Taylor update of seed 002 §18.2 with the acceleration already in
/// `state.a`: `q += h v + ½h² a`, `v += h a`, `t += h` (taylor, baumgarte and hybrid step
/// with it; they differ only in how they compute `a`).
pub fn taylor_update(state: &mut State, h: f64) {
    for i in 0..state.q.len() {
        state.q[i] += h * state.v[i] + 0.5 * h * h * state.a[i];
        state.v[i] += h * state.a[i];
    }
    state.t += h;
}

/// The semi-implicit (symplectic) Euler update `v ← v + h a`, `q ← q + h v`, `t ← t + h`
/// (Hairer, Lubich & Wanner, GNI §I.1.2; seed 001 §3.3.1).
pub fn semi_implicit_euler_update(state: &mut State, h: f64) {
    for i in 0..state.q.len() {
        state.v[i] += h * state.a[i];
        state.q[i] += h * state.v[i];
    }
    state.t += h;
}

/// A method's counters with its solver's added (none before `init`).
pub fn with_kkt_stats(
    mut stats: driftlab_core::MethodStats, kkt: Option<KktStats>,
) -> driftlab_core::MethodStats {
    if let Some(k) = kkt {
        add_kkt_stats(&mut stats, k);
    }
    stats
}

/// Add a solver's counters to a method's.
pub fn add_kkt_stats(stats: &mut driftlab_core::MethodStats, k: KktStats) {
    stats.symbolic_analyses += k.symbolic_analyses;
    stats.factorizations += k.factorizations;
    stats.supernodal_factorizations += k.supernodal_factorizations;
    stats.solves += k.solves;
    stats.refinement_steps += k.refinement_steps;
}

/// Count in `stats` a step whose Newton iteration `report` describes: the step and its
/// iterations (the factorizations, where a [`KktSolver`] does them, are the solver's:
/// [`with_kkt_stats`]). Returns `report`.
pub fn count_step(
    stats: &mut driftlab_core::MethodStats, report: driftlab_core::StepReport,
) -> driftlab_core::StepReport {
    stats.steps += 1;
    stats.newton_iterations += report.newton_iterations;
    report
}

/// [`count_step`] for a method that factors its Newton matrices itself (dense): the
/// report's factorizations are counted too. Returns `report`.
pub fn count_step_and_factorizations(
    stats: &mut driftlab_core::MethodStats, report: driftlab_core::StepReport,
) -> driftlab_core::StepReport {
    stats.factorizations += report.factorizations;
    count_step(stats, report)
}

/// Fill `state.a`, `state.λ` with the values consistent with `(q, v)` (one acceleration-
/// level KKT solve) and return the counters spent, for methods whose step needs them.
pub fn consistent_start(
    sys: &dyn MechanicalSystem, options: KktOptions, state: &mut driftlab_core::State,
) -> Result<driftlab_core::MethodStats, StepError> {
    let mut acc = AccelerationSolver::new(sys, options)?;
    acc.solve_state(sys, state)?;
    let mut stats = driftlab_core::MethodStats::default();
    add_kkt_stats(&mut stats, acc.stats());
    Ok(stats)
}

/// The report of a converged Newton-kernel solve, or the step error of a failed one: the
/// iteration's own error (a failed linear solve) passes through; divergence or the
/// iteration limit becomes [`StepError::NewtonDiverged`] with `residual()` of the last
/// iterate. Full Newton refactors once per iteration.
pub fn newton_outcome<R>(
    solved: Result<R, driftlab_solver::newton::NewtonFailure<StepError>>, iterations: usize,
    t: f64, tol: f64, residual: impl FnOnce() -> f64,
) -> Result<driftlab_core::StepReport, StepError> {
    use driftlab_solver::newton::NewtonFailure;
    match solved {
        Ok(_) => Ok(driftlab_core::StepReport {
            newton_iterations: iterations,
            factorizations: iterations,
            ..driftlab_core::StepReport::default()
        }),
        Err(NewtonFailure::Iteration(e)) => Err(e),
        Err(_) => Err(StepError::NewtonDiverged {
            t,
            iterations,
            residual: residual(),
            tol,
        }),
    }
}
