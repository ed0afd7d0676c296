//! `alf`: the index-3 augmented Lagrangian formulation with mass-orthogonal projections
//! (Bayo & Ledesma, Nonlinear Dynamics 9 (1996) 113–130), integrated by the trapezoidal
//! rule as in the real-time formulation ALI3-P (Cuadrado, Cardenal, Morer & Bayo,
//! Multibody Syst. Dyn. 4 (2000) 55–73).
//!
//! The constraint forces come from a penalty α on Φ plus multipliers λ* that are updated
//! until the penalty's share vanishes, so Φ = 0 is met without a KKT system:
//!
//! ```text
//! M q̈ + Φ_qᵀ(λ* + αΦ) = f,     λ*_{i+1} = λ*_i + αΦ(q_{i+1})
//! trapezoidal rule: q̇ = (2/h) q − q̂̇_n,  q̈ = (4/h²) q − q̂̈_n,
//!   q̂̇_n = (2/h) q_n + q̇_n,  q̂̈_n = (4/h²) q_n + (4/h) q̇_n + q̈_n
//! Newton on r(q) = (h²/4)(M q̈ − f + Φ_qᵀ(λ* + αΦ)) with the matrix J = M + (h²/4) α Φ_qᵀΦ_q,
//!   λ* updated after every iteration
//! projections, iterated with their own multipliers σ until the level holds:
//!   J q̇ = W q̇* − (h²/4) Φ_qᵀ(α Φ_t + σ),    σ ← σ + α(Φ_q q̇ + Φ_t)
//!   J q̈ = W q̈* + (h²/4) Φ_qᵀ(α γ − σ),     σ ← σ + α(Φ_q q̈ − γ)
//!   with J = W + (h²/4)αΦ_qᵀΦ_q, W = M (+ (h/2)C_t + (h²/4)K_t where the problem gives them)
//! ```
//!
//! The Newton matrix adds the problem's tangent matrices of the applied forces,
//! `(h/2)C_t + (h²/4)K_t`, where it provides them (as ALI3-P's matrix has them), and leaves
//! out `∂(M q̈)/∂q` and `Σ(λ* + αΦ)_i ∇²Φ_i`, which are O(h²) against M. The iteration therefore converges linearly,
//! with the λ* update's rate: each update leaves about `1/(1 + κ)` of the multiplier
//! error, where `κ = (h²/4) α ‖Φ_qᵀΦ_q‖ / ‖M‖`. `alpha = 0`, the default, chooses α per
//! step so that κ = 1e3, which makes the method independent of the model's units; Cuadrado
//! et al. give α = 1e7 … 1e9 for SI models at h ≈ 1e-2. The penalty never needs to be
//! stiff: the multipliers carry the force. J is dense: small models only.
//!
//! Orders: the trapezoidal rule, second order in q (Cuadrado et al. 2000); the projected
//! q̇ and q̈ inherit it. The state's λ solves `Φ_qᵀλ = f − M q̈` for the projected q̈, so
//! that `M q̈ + Φ_qᵀλ = f` and `Φ_q q̈ = γ` hold together: the acceleration-level λ at the
//! step's (q, q̇), second order with them. The position loop's λ* is not reported: it is
//! only first order (measured on the pendulum: 0.152, 0.072, 0.035 at h = 1e-2, 5e-3,
//! 2.5e-3), and its last update αΦ carries the round-off of Φ times α ∝ 1/h²
//! (6.7e-5 at h = 1e-4 on the circle rotor, whose λ is constant). λ* starts the next
//! step's iteration from the reported λ.

use crate::dynamics::{consistent_start, KktChoice};
use driftlab_core::prelude::*;
use driftlab_solver::dense::DenseLu;
use driftlab_solver::newton::{NewtonFailure, NewtonKernel, NewtonOptions};
use serde::{Deserialize, Serialize};

/// Largest n the dense matrix J is built for.
pub const MAX_DENSE: usize = 400;

/// The κ that `alpha = 0` aims at.
const AUTO_KAPPA: f64 = 1e3;

/// Parameters of [`Alf`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AlfParams {
    /// Penalty factor α; 0 chooses it per step so that κ = 1e3 (see the module).
    pub alpha: f64,
    /// The iterations stop when `‖Δq‖∞ ≤ tol (1 + ‖q‖∞)` and `‖Φ‖∞ ≤ tol (1 + ‖q‖∞)`;
    /// the projections when their level's residual is below `tol` times its scale.
    pub tol: f64,
    /// Iteration cap of the position loop and of each projection.
    pub max_iter: usize,
}

impl Default for AlfParams {
    fn default() -> Self {
        Self {
            alpha: 0.0,
            tol: 1e-12,
            max_iter: 50,
        }
    }
}

/// The augmented Lagrangian method.
pub struct Alf {
    p: AlfParams,
}

impl Alf {
    /// ALF with `alpha ≥ 0`, `tol > 0`; `ParamError` naming the field otherwise.
    pub fn new(p: AlfParams) -> Result<Self, ParamError> {
        driftlab_core::params::positive(ID, "tol", p.tol)?;
        if p.max_iter == 0 {
            return Err(ParamError::OutOfRange {
                id: ID.into(),
                field: "max_iter",
                value: 0.0,
                fix: "give max_iter ≥ 1".into(),
            });
        }
        if !(p.alpha >= 0.0 && p.alpha.is_finite()) {
            return Err(ParamError::OutOfRange {
                id: ID.into(),
                field: "alpha",
                value: p.alpha,
                fix: "give alpha ≥ 0 (0: chosen per step)".into(),
            });
        }
        Ok(Self { p })
    }
}

/// Declared properties of `alf`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: the trapezoidal rule is not symplectic for nonlinear systems, and the penalty-based projections are not symplectic maps".into(),
        family: "augmented-lagrangian".into(),
        title: "Index-3 augmented Lagrangian with mass-orthogonal projections, trapezoidal rule (ALI3-P)".into(),
        equations: "M q̈ + Φ_qᵀ(λ* + αΦ) = f, λ* ← λ* + αΦ per iteration;  trapezoidal rule;  [W + (h²/4)αΦ_qᵀΦ_q] q̇ = W q̇* − (h²/4)Φ_qᵀ(αΦ_t + σ), same for q̈ with γ".into(),
        citation: "Bayo & Ledesma, Nonlinear Dyn. 9 (1996) 113–130; Cuadrado, Cardenal, Morer & Bayo, Multibody Syst. Dyn. 4 \
                   (2000) 55–73 (ALI3-P, trapezoidal rule, order 2)"
            .into(),
        orders: DeclaredOrders { q: Some(2.0), v: Some(2.0), lambda: Some(2.0) },
        enforces: ConstraintLevels { position: true, velocity: true, acceleration: true },
        implicit: true,
        ..MethodInfo::default()
    }
}

/// The model's matrices at one configuration, dense.
struct Matrices {
    n: usize,
    m: usize,
    mass: Vec<f64>,
    jac: Vec<f64>,
    /// `(h/2) C_t + (h²/4) K_t` of the applied forces, when the problem provides them.
    tangent: Option<Vec<f64>>,
}

/// The model's fixed sparsity patterns, read once at the start.
struct Patterns {
    mass: SparsityPattern,
    jac: SparsityPattern,
}

impl Matrices {
    fn at(s: &dyn MechanicalSystem, pat: &Patterns, t: f64, q: &[f64], v: &[f64], h: f64) -> Self {
        let d = s.dims();
        let (n, m) = (d.n, d.m);
        let (mp, jp) = (&pat.mass, &pat.jac);
        let (mut mv, mut jv) = (vec![0.0; mp.nnz()], vec![0.0; jp.nnz()]);
        s.mass(q, &mut mv);
        s.jacobian(t, q, &mut jv);
        let mut mass = vec![0.0; n * n];
        for (&(r, c), &x) in mp.entries.iter().zip(&mv) {
            mass[r * n + c] += x;
            if r != c {
                mass[c * n + r] += x;
            }
        }
        let mut jac = vec![0.0; m * n];
        for (&(r, c), &x) in jp.entries.iter().zip(&jv) {
            jac[r * n + c] += x;
        }
        let tangent = s.tangent().map(|tm| {
            let tp = tm.pattern();
            let (mut k, mut d) = (vec![0.0; tp.nnz()], vec![0.0; tp.nnz()]);
            tm.values(t, q, v, &mut k, &mut d);
            let mut dense = vec![0.0; n * n];
            for ((&(r, c), &kx), &dx) in tp.entries.iter().zip(&k).zip(&d) {
                let x = h * h / 4.0 * kx + h / 2.0 * dx;
                dense[r * n + c] += x;
                if r != c {
                    dense[c * n + r] += x;
                }
            }
            dense
        });
        Self {
            n,
            m,
            mass,
            jac,
            tangent,
        }
    }

    fn mass_times(&self, x: &[f64]) -> Vec<f64> {
        let n = self.n;
        (0..n)
            .map(|i| (0..n).map(|j| self.mass[i * n + j] * x[j]).sum())
            .collect()
    }

    /// `W x` with `W = M + (h/2)C_t + (h²/4)K_t`, the matrix the projections factor
    /// besides the penalty: `x* = W⁻¹(W x*)` keeps an `x*` that already meets its level.
    fn metric_times(&self, x: &[f64]) -> Vec<f64> {
        let mut y = self.mass_times(x);
        if let Some(k) = &self.tangent {
            let n = self.n;
            for (i, yi) in y.iter_mut().enumerate() {
                *yi += (0..n).map(|j| k[i * n + j] * x[j]).sum::<f64>();
            }
        }
        y
    }

    /// `Φ_q x`.
    fn jac_times(&self, x: &[f64]) -> Vec<f64> {
        let n = self.n;
        (0..self.m)
            .map(|r| (0..n).map(|j| self.jac[r * n + j] * x[j]).sum())
            .collect()
    }

    /// `Φ_qᵀ y`.
    fn jac_t_times(&self, y: &[f64]) -> Vec<f64> {
        let n = self.n;
        (0..n)
            .map(|j| (0..self.m).map(|r| self.jac[r * n + j] * y[r]).sum())
            .collect()
    }

    /// α for κ = [`AUTO_KAPPA`] at step c = h²/4, or the given one.
    fn alpha(&self, given: f64, c: f64) -> f64 {
        if given > 0.0 {
            return given;
        }
        let inf = |x: &[f64]| x.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
        let j2 = inf(&self.jac).powi(2).max(f64::MIN_POSITIVE);
        AUTO_KAPPA * inf(&self.mass).max(f64::MIN_POSITIVE) / (c * j2)
    }

    /// Factor `J = M + (h/2)C_t + (h²/4)K_t + c α Φ_qᵀΦ_q` into `lu` (the tangent terms
    /// where the problem provides them; `c = h²/4`).
    fn factor(&self, lu: &mut DenseLu, c: f64, alpha: f64, t: f64) -> Result<(), StepError> {
        let (n, m) = (self.n, self.m);
        let jac = &self.jac;
        lu.refactor(|i, j| {
            let jtj: f64 = (0..m).map(|r| jac[r * n + i] * jac[r * n + j]).sum();
            let tangent = self.tangent.as_ref().map_or(0.0, |k| k[i * n + j]);
            self.mass[i * n + j] + tangent + c * alpha * jtj
        })
        .map_err(|e| StepError::LinearSolve {
            t,
            detail: format!("ALF matrix M + (h²/4)αΦ_qᵀΦ_q: {e}"),
        })
    }
}

/// The multipliers of the projected state: the least-squares solution of `Φ_qᵀλ = f − M q̈`
/// (exact when q̈ is the acceleration-level one), from `Φ_qΦ_qᵀ λ = Φ_q(f − M q̈)`, or the
/// minimum-norm one by the pseudo-inverse when rows are redundant.
fn consistent_multipliers(
    mats: &Matrices, f: &[f64], a: &[f64],
) -> Result<Vec<f64>, driftlab_solver::SolverError> {
    let (n, m) = (mats.n, mats.m);
    let ma = mats.mass_times(a);
    let g: Vec<f64> = (0..n).map(|i| f[i] - ma[i]).collect();
    let mut b = mats.jac_times(&g);
    let jac = &mats.jac;
    let gram: Vec<f64> = (0..m * m)
        .map(|k| {
            (0..n)
                .map(|j| jac[(k / m) * n + j] * jac[(k % m) * n + j])
                .sum()
        })
        .collect();
    if let Ok(lu) = DenseLu::factor(m, &gram) {
        if lu.solve(&mut b).is_ok() {
            return Ok(b);
        }
    }
    let jt: Vec<f64> = (0..n * m).map(|k| jac[(k % m) * n + k / m]).collect();
    let (pinv, _) = driftlab_solver::dense::pseudo_inverse(n, m, &jt)?;
    Ok((0..m)
        .map(|r| (0..n).map(|j| pinv[r * n + j] * g[j]).sum())
        .collect())
}

fn inf(x: &[f64]) -> f64 {
    x.iter().fold(
        0.0_f64,
        |a, v| if v.is_nan() { f64::NAN } else { a.max(v.abs()) },
    )
}

/// [`Alf`] bound to its system.
struct AlfStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: AlfParams,
    stats: MethodStats,
    lu: DenseLu,
    patterns: Patterns,
}

/// The trapezoidal rule's history of one step, `(q_n, q̇_n, q̈_n)`. The rule's
/// `q̇ = (2/h) q − q̂̇_n` is evaluated as `(2/h)(q − q_n) − q̇_n` (and `q̈` likewise): the
/// difference `q − q_n = O(h)` carries round-off `u h`, where `(2/h) q` and `q̂̇_n` cancel
/// `u |q| / h` of it — which λ, read from `q̈`, would then carry as `4u|q|/h²`.
struct Hats<'a> {
    h: f64,
    state: &'a State,
}

impl Hats<'_> {
    fn velocity(&self, q: &[f64]) -> Vec<f64> {
        let (h, s) = (self.h, self.state);
        (0..q.len())
            .map(|i| 2.0 / h * (q[i] - s.q[i]) - s.v[i])
            .collect()
    }
    fn acceleration(&self, q: &[f64]) -> Vec<f64> {
        let (h, s) = (self.h, self.state);
        (0..q.len())
            .map(|i| 4.0 / (h * h) * (q[i] - s.q[i]) - 4.0 / h * s.v[i] - s.a[i])
            .collect()
    }
}

impl AlfStepper<'_> {
    /// The position loop: Newton on r(q) with λ* updated after each iteration (from the
    /// state's λ); returns `(q, α, iterations)`.
    fn positions(
        &mut self, state: &State, hats: &Hats<'_>, t1: f64,
    ) -> Result<(Vec<f64>, f64, usize), StepError> {
        let s = self.sys;
        let (h, c) = (hats.h, hats.h * hats.h / 4.0);
        let n = state.q.len();
        let mut q: Vec<f64> = (0..n)
            .map(|i| state.q[i] + h * state.v[i] + 0.5 * h * h * state.a[i])
            .collect();
        let mut lam = state.lambda.clone();
        let (mut f, mut phi) = (vec![0.0; n], vec![0.0; lam.len()]);
        let mut alpha = 0.0;
        // The shared kernel counts and stops; each call is one update of q and λ*, and
        // reports 0 once both the update and Φ are within the tolerance.
        let mut kernel = NewtonKernel::new(NewtonOptions::residual_stop(self.p.max_iter - 1));
        let solved = kernel.solve(|_| {
            let (v, a) = (hats.velocity(&q), hats.acceleration(&q));
            let mats = Matrices::at(s, &self.patterns, t1, &q, &v, h);
            alpha = mats.alpha(self.p.alpha, c);
            s.forces(t1, &q, &v, &mut f);
            s.constraints(t1, &q, &mut phi);
            let force: Vec<f64> = (0..lam.len()).map(|r| lam[r] + alpha * phi[r]).collect();
            let (ma, jf) = (mats.mass_times(&a), mats.jac_t_times(&force));
            let mut rhs: Vec<f64> = (0..n).map(|i| -c * (ma[i] - f[i] + jf[i])).collect();
            mats.factor(&mut self.lu, c, alpha, state.t)?;
            self.lu
                .solve(&mut rhs)
                .map_err(|e| StepError::LinearSolve {
                    t: state.t,
                    detail: format!("ALF position iteration: {e}"),
                })?;
            q.iter_mut().zip(&rhs).for_each(|(x, d)| *x += d);
            s.constraints(t1, &q, &mut phi);
            lam.iter_mut().zip(&phi).for_each(|(l, p)| *l += alpha * p);
            let scale = self.p.tol * (1.0 + inf(&q));
            let worst = inf(&rhs).max(inf(&phi)) / scale;
            Ok(if worst <= 1.0 { 0.0 } else { worst })
        });
        let iterations = kernel.counters.iterations;
        match solved {
            Ok(_) => Ok((q, alpha, iterations)),
            Err(NewtonFailure::Iteration(e)) => Err(e),
            Err(_) => Err(StepError::NewtonDiverged {
                t: state.t,
                iterations,
                residual: inf(&phi),
                tol: self.p.tol,
            }),
        }
    }

    /// One projection `J x = W x* + c Φ_qᵀ(α target − σ)` iterated with σ ← σ + α(Φ_q x −
    /// target) until `‖Φ_q x − target‖∞ ≤ tol · (1 + ‖target‖∞ + ‖Φ_q x*‖∞)`; `lu` holds J.
    /// Returns the projected x and the solves it took.
    fn project(
        &self, mats: &Matrices, star: &[f64], target: &[f64], c: f64, alpha: f64, t: f64,
    ) -> Result<(Vec<f64>, usize), StepError> {
        let m_star = mats.metric_times(star);
        let scale = self.p.tol * (1.0 + inf(target) + inf(&mats.jac_times(star)));
        let mut sigma = vec![0.0; target.len()];
        let mut residual = f64::NAN;
        let mut x = Vec::new();
        // One solve per call of the shared kernel; 0 once the level holds.
        let mut kernel = NewtonKernel::new(NewtonOptions::residual_stop(self.p.max_iter - 1));
        let solved = kernel.solve(|_| {
            let y: Vec<f64> = (0..sigma.len())
                .map(|r| alpha * target[r] - sigma[r])
                .collect();
            let jy = mats.jac_t_times(&y);
            x = (0..star.len()).map(|i| m_star[i] + c * jy[i]).collect();
            self.lu.solve(&mut x).map_err(|e| StepError::LinearSolve {
                t,
                detail: format!("ALF projection: {e}"),
            })?;
            let gap: Vec<f64> = mats
                .jac_times(&x)
                .iter()
                .zip(target)
                .map(|(a, b)| a - b)
                .collect();
            residual = inf(&gap);
            if residual <= scale {
                return Ok(0.0);
            }
            sigma
                .iter_mut()
                .zip(&gap)
                .for_each(|(s, g)| *s += alpha * g);
            Ok(residual / scale)
        });
        let iterations = kernel.counters.iterations;
        match solved {
            Ok(_) => Ok((x, iterations)),
            Err(NewtonFailure::Iteration(e)) => Err(e),
            Err(_) => Err(StepError::ProjectionFailed {
                t,
                iterations,
                residual,
                tol: scale,
            }),
        }
    }
}

impl Stepper for AlfStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let s = self.sys;
        let t1 = state.t + h;
        let start = state.clone();
        let hats = Hats { h, state: &start };
        let (q, alpha, iterations) = self.positions(state, &hats, t1)?;
        let c = h * h / 4.0;
        let mats = Matrices::at(s, &self.patterns, t1, &q, &hats.velocity(&q), h);
        mats.factor(&mut self.lu, c, alpha, state.t)?;
        let m = state.lambda.len();
        let mut phit = vec![0.0; m];
        s.phi_t(t1, &q, &mut phit);
        phit.iter_mut().for_each(|x| *x = -*x);
        let (v, kv) = self.project(&mats, &hats.velocity(&q), &phit, c, alpha, state.t)?;
        let mut gamma = vec![0.0; m];
        s.curvature(t1, &q, &v, &mut gamma);
        let (a, ka) = self.project(&mats, &hats.acceleration(&q), &gamma, c, alpha, state.t)?;
        let mut f = vec![0.0; q.len()];
        s.forces(t1, &q, &v, &mut f);
        let lambda = consistent_multipliers(&mats, &f, &a).map_err(|e| StepError::LinearSolve {
            t: state.t,
            detail: format!("ALF multipliers from Φ_qᵀλ = f − M q̈: {e}"),
        })?;
        *state = State {
            t: t1,
            q,
            v,
            lambda,
            a,
        };
        self.stats.steps += 1;
        self.stats.newton_iterations += iterations;
        self.stats.factorizations += iterations + 1;
        self.stats.projection_iterations += kv + ka;
        Ok(StepReport {
            newton_iterations: iterations,
            factorizations: iterations + 1,
            ..StepReport::default()
        })
    }
    fn stats(&self) -> MethodStats {
        self.stats
    }
}

impl Method for Alf {
    fn info(&self) -> MethodInfo {
        info()
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let n = sys.dims().n;
        if n > MAX_DENSE {
            return Err(MethodError::Incompatible {
                method: ID.into(),
                problem: sys.info().id,
                reason: format!("the dense ALF matrix would be {n}×{n} (limit {MAX_DENSE}); use a smaller model"),
            });
        }
        let st = consistent_start(sys, KktChoice::Auto.options(opts), state)?;
        Ok(Box::new(AlfStepper {
            sys,
            p: self.p,
            stats: MethodStats::default().merged(st),
            lu: DenseLu::new(n),
            patterns: Patterns {
                mass: sys.mass_pattern(),
                jac: sys.jacobian_pattern(),
            },
        }))
    }
}

/// The catalog id `alf`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "alf";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(Alf::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<AlfParams>,
    }
}
