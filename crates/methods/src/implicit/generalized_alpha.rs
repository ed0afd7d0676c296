//! `generalized-alpha`: the generalized-α method of Chung & Hulbert (1993) applied to the
//! index-3 equations of motion as in Arnold & Brüls, Multibody Syst. Dyn. 18 (2007)
//! 185–202, with numerical dissipation set by the spectral radius at infinity `ρ∞ ∈ [0, 1]`.
//!
//! ```text
//! α_m = (2ρ∞ − 1)/(ρ∞ + 1),  α_f = ρ∞/(ρ∞ + 1),  γ = ½ + α_f − α_m,  β = ¼(γ + ½)²
//! q_{n+1} = q_n + h v_n + h²(½ − β) a_n + h² β a_{n+1}
//! v_{n+1} = v_n + h(1 − γ) a_n + h γ a_{n+1}
//! (1 − α_m) a_{n+1} + α_m a_n = (1 − α_f) v̇_{n+1} + α_f v̇_n
//! M v̇_{n+1} + Φ_q(q_{n+1})ᵀ λ_{n+1} = f_{n+1},     Φ(t_{n+1}, q_{n+1}) = 0
//! ```
//!
//! `a` is the algorithmic acceleration, `v̇` the true one. Newton on `(q_{n+1}, λ_{n+1})`
//! with `Δv = γ'Δq`, `Δv̇ = β'Δq`, `β' = (1 − α_m)/(h² β (1 − α_f))`, `γ' = γ/(hβ)` uses
//! the symmetric iteration matrix `[[β' M + K_Φ + K_t + γ'C_t, Φ_qᵀ], [Φ_q, 0]]`,
//! `K_Φ = Σλ_i∇²Φ_i`, with the problem's symmetric tangent stiffness `K_t` and damping
//! `C_t` (each when the problem provides it; otherwise the iteration is a fixed point in
//! the forces and needs `h ω_max ≲ 1`), on the sparse LDLᵀ solver with symbolic analysis
//! once. Start: `a_0 = v̇_0` from the consistent KKT solve.
//!
//! Arnold & Brüls prove global order 2 for q, v and λ at fixed t (their Thm. 2), with
//! O(h) transients in v and λ that are damped for ρ∞ < 1; for ρ∞ = 1 (no dissipation) the
//! transient is not damped. Declared orders 2/2/2 as proved.
//!
//! **Local error estimate** (error-controlled runs): Zienkiewicz & Xie's estimate for
//! Newmark's displacement update (O. C. Zienkiewicz, Y. M. Xie, "A simple error estimator
//! and adaptive time stepping procedure for dynamic analysis", Earthquake Eng. Struct.
//! Dyn. 20 (1991) 871–887: `e = (β − 1/6) h² (a_{n+1} − a_n)`), carried over to the
//! algorithmic acceleration: `a_n = q̈(t_n + Δh) + O(h²)` with `Δ = α_m − α_f` (Arnold &
//! Brüls 2007, §3), so comparing the update of `q` with its Taylor expansion gives the
//! leading local error `h³ q⃛ (1/6 − β − Δ/2)` and, with `a_{n+1} − a_n = h q⃛ + O(h²)`,
//!
//! ```text
//! e_{n+1} = (β − 1/6 + (α_m − α_f)/2) h² (a_{n+1} − a_n)        (Newmark: α_m = α_f = 0)
//! ```
//!
//! scaled by `atol + rtol max(|q_n|, |q_{n+1}|)` in the RMS norm, order 3 in `h`. The
//! velocity update has no `h²` term under `γ = ½ + α_f − α_m`, so its local error is
//! `O(h³)` too but not visible in `a_{n+1} − a_n`; it is not estimated. The carry-over
//! to generalized-α is ours (derived as above), not a published estimate for it. It
//! assumes `h_{n−1} = h_n`: after a step change `a_n` carries the old shift `Δh_{n−1}`,
//! so `a_{n+1} − a_n ≈ q⃛ ((1 − α_f) h_n − Δ h_{n−1}) / (1 − α_m)` (for ρ∞ = 0.8 and a
//! step cut to a fifth, 1.67 h q⃛ instead of h q⃛): pessimistic for one step after a
//! cut, optimistic after growth (bounded by the controller's growth limit), and the α
//! recursion itself is consistent only to `O(h_n − h_{n−1})`. A rejected step restores
//! `a_n`.

use crate::dynamics::{consistent_start, linear_error, with_kkt_stats, IterationTerms, KktChoice};
use crate::dynamics::{count_step, newton_outcome};
use driftlab_core::prelude::*;
use driftlab_solver::newton::{NewtonKernel, NewtonOptions};
use driftlab_solver::{KktPattern, KktSolver};
use serde::{Deserialize, Serialize};

/// Parameters of [`GeneralizedAlpha`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GeneralizedAlphaParams {
    /// Spectral radius at infinity, 0 (maximal dissipation) … 1 (none).
    pub rho_inf: f64,
    /// Newton stops when `‖Δq‖∞ ≤ tol (1 + ‖q‖∞)`.
    pub tol: f64,
    /// Newton iteration cap.
    pub max_iter: usize,
    /// KKT factorization.
    pub kkt: KktChoice,
    /// Simplified Newton: factor the iteration matrix once per step, at the predictor,
    /// and reuse it for the corrections (the quasi-Newton iteration of Negrut, Rampalli,
    /// Ottarsson & Sajdak, "On an implementation of the HHT method in the context of index
    /// 3 DAEs of multibody dynamics", J. Comput. Nonlinear Dyn. 2, 2007). It converges
    /// linearly instead of quadratically, to the same tolerance, and saves the
    /// factorizations after the first (default false: full Newton).
    pub simplified: bool,
}

impl Default for GeneralizedAlphaParams {
    fn default() -> Self {
        Self {
            rho_inf: 0.8,
            tol: 1e-12,
            max_iter: 30,
            kkt: KktChoice::Auto,
            simplified: false,
        }
    }
}

/// The generalized-α coefficients derived from ρ∞ (Chung & Hulbert 1993, eq. 25;
/// Arnold & Brüls 2007, §2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AlphaCoefficients {
    /// α_m.
    pub alpha_m: f64,
    /// α_f.
    pub alpha_f: f64,
    /// γ.
    pub gamma: f64,
    /// β.
    pub beta: f64,
}

impl AlphaCoefficients {
    /// From the spectral radius at infinity.
    pub fn from_rho_inf(rho: f64) -> Self {
        let alpha_m = (2.0 * rho - 1.0) / (rho + 1.0);
        let alpha_f = rho / (rho + 1.0);
        let gamma = 0.5 + alpha_f - alpha_m;
        Self {
            alpha_m,
            alpha_f,
            gamma,
            beta: 0.25 * (gamma + 0.5) * (gamma + 0.5),
        }
    }
}

/// Generalized-α for index-3 systems.
pub struct GeneralizedAlpha {
    p: GeneralizedAlphaParams,
    c: AlphaCoefficients,
}

/// [`GeneralizedAlpha`] bound to its system.
struct GeneralizedAlphaStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: GeneralizedAlphaParams,
    c: AlphaCoefficients,
    kkt: KktSolver,
    terms: IterationTerms,
    work: Work,
    acc: Vec<f64>,
    /// `a_n` before the last step, restored if the controller rejects it.
    acc_before: Vec<f64>,
    /// Tolerances of an error-controlled run (none at fixed steps).
    tol: Option<driftlab_core::Tolerances>,
    /// The KKT options of the start, for a restart's consistent acceleration.
    kkt_options: driftlab_solver::KktOptions,
    /// The consistent-acceleration solver of a restart, made at the first one.
    restarts: Option<crate::dynamics::AccelerationSolver>,
    init_stats: MethodStats,
    stats: MethodStats,
}

impl GeneralizedAlpha {
    /// Generalized-α with spectral radius at infinity `p.rho_inf`; `ParamError` unless
    /// `0 ≤ ρ∞ ≤ 1`.
    pub fn new(p: GeneralizedAlphaParams) -> Result<Self, ParamError> {
        if !(0.0..=1.0).contains(&p.rho_inf) {
            return Err(ParamError::OutOfRange {
                id: ID.into(),
                field: "rho_inf",
                value: p.rho_inf,
                fix: "give 0 ≤ rho_inf ≤ 1".into(),
            });
        }
        driftlab_core::params::positive(ID, "tol", p.tol)?;
        Ok(Self {
            c: AlphaCoefficients::from_rho_inf(p.rho_inf),
            p,
        })
    }
}

/// Declared properties of `generalized-alpha`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: ρ∞ < 1 dissipates; at ρ∞ = 1 (trapezoidal Newmark) the scheme preserves at best a non-canonical form (Kane, Marsden, Ortiz & West, Int. J. Numer. Meth. Eng. 49, 2000); measured in tests/symplecticity.rs".into(),
        family: "generalized-alpha".into(),
        title: "Generalized-α (Chung & Hulbert) on the index-3 form, spectral radius ρ∞".into(),
        equations: "q⁺ = q + hv + h²(½−β)a + h²βa⁺;  v⁺ = v + h(1−γ)a + hγa⁺;  (1−α_m)a⁺ + α_m a = (1−α_f)v̇⁺ + α_f v̇;  \
                    M v̇⁺ + Φ_qᵀλ⁺ = f⁺, Φ(q⁺) = 0"
            .into(),
        citation: "Chung & Hulbert, J. Appl. Mech. 60 (1993) 371–375; Arnold & Brüls, Multibody Syst. Dyn. 18 (2007) 185–202 \
                   (index-3 form, global order 2 in q, v, λ)"
            .into(),
        orders: DeclaredOrders { q: Some(2.0), v: Some(2.0), lambda: Some(2.0) },
        enforces: ConstraintLevels { position: true, velocity: false, acceleration: false },
        implicit: true,
        error_estimate: Some(driftlab_core::ErrorEstimate {
            order: 3,
            rule: "Zienkiewicz & Xie (1991) eq. 21 on the algorithmic acceleration: \
                   e = (β − 1/6 + (α_m − α_f)/2) h² (a_{n+1} − a_n), positions only, RMS of \
                   e_i / (atol + rtol max(|q_n,i|, |q_{n+1},i|))"
                .into(),
            own_controller: false,
        }),
        ..MethodInfo::default()
    }
}

/// The scaled RMS norm of the local error estimate of the module documentation.
fn local_error(
    c: &AlphaCoefficients, tol: driftlab_core::Tolerances, h: f64,
    (a_before, a_after): (&[f64], &[f64]), (q_before, q_after): (&[f64], &[f64]),
) -> f64 {
    let coef = (c.beta - 1.0 / 6.0 + 0.5 * (c.alpha_m - c.alpha_f)) * h * h;
    let n = q_after.len().max(1);
    let sum: f64 = (0..q_after.len())
        .map(|i| {
            let e = coef * (a_after[i] - a_before[i]);
            let sc = tol.atol + tol.rtol * q_before[i].abs().max(q_after[i].abs());
            // atol = 0 and a coordinate at 0: no error there is 0, any other is too big.
            match (sc > 0.0, e == 0.0) {
                (true, _) => (e / sc).powi(2),
                (false, true) => 0.0,
                (false, false) => f64::INFINITY,
            }
        })
        .sum();
    (sum / n as f64).sqrt()
}

/// The α relation solved for the algorithmic acceleration of one coordinate:
/// `a_{n+1} = (α_f v̇_n − α_m a_n + (1 − α_f) v̇_{n+1}) / (1 − α_m)`.
fn algorithmic_acceleration(c: &AlphaCoefficients, vd_n: f64, a_n: f64, vd_1: f64) -> f64 {
    (c.alpha_f * vd_n - c.alpha_m * a_n + (1.0 - c.alpha_f) * vd_1) / (1.0 - c.alpha_m)
}

/// The Newton unknowns of one step and what moves with them: `q⁺`, `v⁺`, `v̇⁺`, `λ⁺`.
struct Iterate {
    q: Vec<f64>,
    v: Vec<f64>,
    vd: Vec<f64>,
    lam: Vec<f64>,
}

impl Iterate {
    /// The predictor `v̇⁺ = v̇_n`, `λ⁺ = λ_n`, `a⁺` from the α relation, and the Newmark
    /// updates `q⁺ = q_n + h v_n + h²((½ − β) a_n + β a⁺)`, `v⁺ = v_n + h((1 − γ) a_n + γ a⁺)`;
    /// returns the iterate and `a⁺`.
    fn predict(
        c: &AlphaCoefficients, h: f64, (qn, vn, vdn, an): (&[f64], &[f64], &[f64], &[f64]),
        lambda: &[f64],
    ) -> (Self, Vec<f64>) {
        let n = qn.len();
        let (beta, gamma) = (c.beta, c.gamma);
        let vd = vdn.to_vec();
        let lam = lambda.to_vec();
        let a1: Vec<f64> = (0..n)
            .map(|i| algorithmic_acceleration(c, vdn[i], an[i], vd[i]))
            .collect();
        let q: Vec<f64> = (0..n)
            .map(|i| qn[i] + h * vn[i] + h * h * ((0.5 - beta) * an[i] + beta * a1[i]))
            .collect();
        let v: Vec<f64> = (0..n)
            .map(|i| vn[i] + h * ((1.0 - gamma) * an[i] + gamma * a1[i]))
            .collect();
        (Self { q, v, vd, lam }, a1)
    }

    /// Apply the Newton correction `(Δq, Δλ)` with `Δv = γ′Δq`, `Δv̇ = β′Δq`; returns the
    /// convergence measure `‖Δq‖∞ / (tol (1 + ‖q⁺‖∞))` (converged at ≤ 1).
    fn correct(&mut self, delta: &[f64], (bp, gp): (f64, f64), tol: f64) -> f64 {
        let n = self.q.len();
        for i in 0..n {
            let dq = delta[i];
            self.q[i] += dq;
            self.v[i] += gp * dq;
            self.vd[i] += bp * dq;
        }
        for r in 0..self.lam.len() {
            self.lam[r] += delta[n + r];
        }
        let size = self.q.iter().fold(0.0_f64, |x, y| x.max(y.abs()));
        let dq = delta[..n].iter().fold(0.0_f64, |x, y| x.max(y.abs()));
        dq / (tol * (1.0 + size))
    }
}

/// Work space of a step's Newton iteration, allocated once at `start` with the patterns
/// of `M` and `Φ_q` (a problem may assemble those on every call).
struct Work {
    mp: driftlab_core::SparsityPattern,
    jp: driftlab_core::SparsityPattern,
    a_vals: Vec<f64>,
    jac: Vec<f64>,
    f: Vec<f64>,
    mvd: Vec<f64>,
    gtl: Vec<f64>,
    phi: Vec<f64>,
    rhs: Vec<f64>,
}

impl Work {
    fn new(s: &dyn MechanicalSystem, kkt: &KktPattern) -> Self {
        let d = s.dims();
        let (mp, jp) = (s.mass_pattern(), s.jacobian_pattern());
        Self {
            a_vals: vec![0.0; kkt.a_lower.len()],
            jac: vec![0.0; jp.nnz()],
            mp,
            jp,
            f: vec![0.0; d.n],
            mvd: vec![0.0; d.n],
            gtl: vec![0.0; d.n],
            phi: vec![0.0; d.m],
            rhs: vec![0.0; d.n + d.m],
        }
    }

    /// Assemble the Newton system at the iterate: the right-hand side
    /// `−[M v̇⁺ + Φ_qᵀ λ⁺ − f⁺; Φ(t⁺, q⁺)]` in `rhs`, `Φ_q` in `jac` and the lower values
    /// of the iteration block `S_t = β′M + K_Φ + K_t + γ′C_t` (Arnold & Brüls 2007, §3)
    /// in `a_vals`.
    fn assemble(
        &mut self, s: &dyn driftlab_core::MechanicalSystem, terms: &mut IterationTerms, t1: f64,
        x: &Iterate, (bp, gp): (f64, f64),
    ) {
        let (n, m) = (x.q.len(), x.lam.len());
        let n_mass = terms.n_mass;
        s.mass(&x.q, &mut self.a_vals[..n_mass]);
        self.mp
            .mul_vec(&self.a_vals[..n_mass], &x.vd, &mut self.mvd, true);
        s.forces(t1, &x.q, &x.v, &mut self.f);
        s.jacobian(t1, &x.q, &mut self.jac);
        s.constraints(t1, &x.q, &mut self.phi);
        self.jp.mul_transpose_vec(&self.jac, &x.lam, &mut self.gtl);
        for i in 0..n {
            self.rhs[i] = -(self.mvd[i] + self.gtl[i] - self.f[i]);
        }
        for r in 0..m {
            self.rhs[n + r] = -self.phi[r];
        }
        // S_t = β′M + K_Φ + K_t + γ′C_t (Arnold & Brüls 2007, §3).
        for v in &mut self.a_vals[..n_mass] {
            *v *= bp;
        }
        terms.fill(s, t1, &x.q, &x.v, &x.lam, (1.0, 1.0, gp), &mut self.a_vals);
    }
}

impl Method for GeneralizedAlpha {
    fn info(&self) -> MethodInfo {
        let mut i = info();
        i.title = format!("{} = {}", i.title, self.p.rho_inf);
        i
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let s = sys;
        // Peak heap of a 10⁶-link chain: the consistent start's KKT solver (factor and
        // ordering transient) is freed before the iteration matrix's is built, and the
        // step's work arrays come after that symbolic analysis and its transient.
        let init_stats = consistent_start(s, self.p.kkt.options(opts), state)?;
        let (pattern, terms) = IterationTerms::layout(s);
        let kkt = KktSolver::new(&pattern, self.p.kkt.options(opts))
            .map_err(|e| MethodError::Init(linear_error(state.t, e)))?;
        let work = Work::new(s, &pattern);
        drop(pattern);
        Ok(Box::new(GeneralizedAlphaStepper {
            sys,
            p: self.p,
            c: self.c,
            kkt,
            terms,
            work,
            // Algorithmic acceleration starts at the true one (Arnold & Brüls 2007, a_0 = v̇_0).
            acc: state.a.clone(),
            acc_before: Vec::new(),
            tol: opts.tolerances,
            kkt_options: self.p.kkt.options(opts),
            restarts: None,
            init_stats,
            stats: MethodStats::default(),
        }))
    }
}

impl Stepper for GeneralizedAlphaStepper<'_> {
    fn reject(&mut self) {
        self.acc.clone_from(&self.acc_before);
    }
    /// After an outside change of `v` or of the forces: the consistent `v̇` and `λ`, and the
    /// algorithmic acceleration started again at `a = v̇`, as at the start.
    fn restart(&mut self, state: &mut State) -> Result<(), StepError> {
        let s = self.sys;
        let solver = match &mut self.restarts {
            Some(solver) => solver,
            None => self
                .restarts
                .insert(crate::dynamics::AccelerationSolver::new(
                    s,
                    self.kkt_options,
                )?),
        };
        solver.solve_state(s, state)?;
        self.acc.clone_from(&state.a);
        Ok(())
    }
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let (s, kkt, terms, w) = (self.sys, &mut self.kkt, &mut self.terms, &mut self.work);
        let c = self.c;
        let d = s.dims();
        let n = d.n;
        let t1 = state.t + h;
        // `a_n`, restored by `reject` whether this step fails or is rejected.
        self.acc_before.clone_from(&self.acc);
        // The step reads the old state in place (it is replaced only at the end).
        let (qn, vn, vdn, an) = (&state.q, &state.v, &state.a, &self.acc);
        let bp = (1.0 - c.alpha_m) / (h * h * c.beta * (1.0 - c.alpha_f));
        let gp = c.gamma / (h * c.beta);
        let (mut x, mut a1) = Iterate::predict(&c, h, (qn, vn, vdn, an), &state.lambda);
        let simplified = self.p.simplified;
        let mut kernel = NewtonKernel::new(NewtonOptions {
            // A frozen matrix only contracts linearly: stop when it does not.
            stop_on_growth: simplified,
            ..NewtonOptions::full(self.p.max_iter)
        });
        let solved = kernel.solve(|k| {
            w.assemble(s, terms, t1, &x, (bp, gp));
            if !simplified || k == 1 {
                kkt.factorize(&w.a_vals, &w.jac, None)
                    .map_err(|e| linear_error(state.t, e))?;
            }
            kkt.solve(&mut w.rhs)
                .map_err(|e| linear_error(state.t, e))?;
            Ok(x.correct(&w.rhs, (bp, gp), self.p.tol))
        });
        let iterations = kernel.counters.iterations;
        let Iterate { q, v, vd, lam } = x;
        let mut report = newton_outcome(solved, iterations, state.t, self.p.tol, || {
            s.constraints(t1, &q, &mut w.phi);
            let res = w.phi.iter().fold(0.0_f64, |x, y| x.max(y.abs()));
            res
        })?;
        for i in 0..n {
            a1[i] = algorithmic_acceleration(&c, vdn[i], an[i], vd[i]);
        }
        report.error = self
            .tol
            .map(|tol| local_error(&self.c, tol, h, (an, &a1), (qn, &q)));
        self.acc = a1;
        state.q = q;
        state.v = v;
        state.a = vd;
        state.lambda = lam;
        state.t = t1;
        Ok(count_step(&mut self.stats, report))
    }
    fn stats(&self) -> MethodStats {
        with_kkt_stats(self.stats.merged(self.init_stats), Some(self.kkt.stats()))
    }
}

/// The catalog id `generalized-alpha`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "generalized-alpha";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| {
            Ok(Box::new(GeneralizedAlpha::new(params::parse(
                "method", ID, t,
            )?)?))
        },
        defaults: params::defaults::<GeneralizedAlphaParams>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coefficients_from_rho_inf() {
        // ρ∞ = 1: the trapezoidal/average-acceleration limit α_m = α_f = ½, γ = ½, β = ¼.
        let c = AlphaCoefficients::from_rho_inf(1.0);
        assert!((c.alpha_m - 0.5).abs() < 1e-15 && (c.alpha_f - 0.5).abs() < 1e-15);
        assert!((c.gamma - 0.5).abs() < 1e-15 && (c.beta - 0.25).abs() < 1e-15);
        // Second-order condition γ = ½ + α_f − α_m holds for every ρ∞.
        for r in [0.0, 0.3, 0.8, 0.9] {
            let c = AlphaCoefficients::from_rho_inf(r);
            assert!((c.gamma - 0.5 - c.alpha_f + c.alpha_m).abs() < 1e-15);
        }
    }
}
