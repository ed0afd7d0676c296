//! `priority`: prioritized constraints (seed 001 §3.5.3) — constraint groups solved in
//! order of priority, each lower group only in the null space left by the higher ones,
//! at acceleration level with Baumgarte feedback per row, then a symplectic Euler step.
//!
//! In the mass-scaled acceleration `y = Lᵀ a` (`M = L Lᵀ`), Gauss's principle minimizes
//! `‖y − y₀‖`, `y₀ = L⁻¹ f`. With `A_k = J_k L⁻ᵀ` and targets
//! `b_k = γ_k − 2ξω_n Φ̇_k − ω_n² Φ_k` (seed 001 §3.3.3), the task-priority recursion
//! (Siciliano & Slotine, ICAR 1991; Nakamura, Hanafusa & Yoshikawa 1987) is
//!
//! ```text
//! y ← y₀,  P ← I;   for k = 0, 1, …:  Ã = A_k P,  y ← y + Ã⁺ (b_k − A_k y),  P ← P − Ã⁺ Ã
//! a = L⁻ᵀ y,   v⁺ = v + h a,   q⁺ = q + h v⁺,   λ = (Jᵀ)⁺ (f − M a)
//! ```
//!
//! so a higher group is met exactly whenever it is consistent, and a lower one in the
//! least-squares sense inside what is left (`⁺`: SVD pseudo-inverse with the rank
//! threshold of `driftlab_solver::rank` taken relative to the level's own size, and, below
//! level 0, damped least squares `σ/(σ² + μ²)` — Nakamura & Hanafusa, J. Dyn. Sys. Meas.
//! Control 108 (1986) — so a lower task that turns singular inside the remaining null
//! space, such as an unreachable target, cannot demand unbounded accelerations). `mode = "flat"` puts every row in one group (a
//! least-squares compromise, for comparison). Without priorities and with full-rank Φ_q
//! the step is Baumgarte stabilization with symplectic Euler: orders 1/1/1 as `baumgarte`.
//! Dense linear algebra (small models; refused above [`MAX_DENSE`] coordinates).

use driftlab_core::prelude::*;
use driftlab_solver::dense::{cholesky, damped_pseudo_inverse, pseudo_inverse};
use serde::{Deserialize, Serialize};

/// Largest number of coordinates handled (dense matrices).
pub const MAX_DENSE: usize = 300;

/// How the constraint groups are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PriorityMode {
    /// Strict hierarchy by the problem's priorities.
    Hierarchical,
    /// All rows in one least-squares group.
    Flat,
}

/// Parameters of [`Priority`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PriorityParams {
    /// Damping ratio ξ of the per-row feedback.
    pub xi: f64,
    /// Natural frequency ω_n (rad/s) of the per-row feedback.
    pub omega_n: f64,
    /// Hierarchical or flat.
    pub mode: PriorityMode,
    /// Damping of the lower-level inverses, relative to the level's size ‖A_k‖_F: the
    /// damped least-squares inverse `σ/(σ² + μ²)` keeps accelerations bounded where a
    /// lower task becomes singular inside the remaining null space (an unreachable
    /// target). Level 0 is never damped.
    pub damping: f64,
}

impl Default for PriorityParams {
    fn default() -> Self {
        Self {
            xi: 1.0,
            omega_n: 10.0,
            mode: PriorityMode::Hierarchical,
            damping: 0.1,
        }
    }
}

/// The prioritized method.
pub struct Priority {
    p: PriorityParams,
}

/// [`Priority`] bound to its system.
struct PriorityStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: PriorityParams,
    stats: MethodStats,
    /// `(t, q, v, a)` of the last evaluation: the acceleration reported at the end of a
    /// step is the one the next step starts from, unless a decorator changed the state.
    last: Option<Evaluated>,
}

/// An acceleration and the exact state it was evaluated at.
struct Evaluated {
    t: f64,
    q: Vec<f64>,
    v: Vec<f64>,
    a: Vec<f64>,
}

impl Priority {
    /// The prioritized method with gains `ω_n > 0`, `ξ ≥ 0`; `ParamError` naming the field
    /// and the fix otherwise.
    pub fn new(p: PriorityParams) -> Result<Self, ParamError> {
        driftlab_core::params::positive(ID, "omega_n", p.omega_n)?;
        if !(p.xi.is_finite() && p.xi >= 0.0) {
            return Err(ParamError::OutOfRange {
                id: ID.into(),
                field: "xi",
                value: p.xi,
                fix: "give ξ ≥ 0".into(),
            });
        }
        Ok(Self { p })
    }
}

impl PriorityStepper<'_> {
    /// Acceleration and multipliers at `(t, q, v)`.
    fn accelerations(
        &self, s: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64],
    ) -> Result<(Vec<f64>, Vec<f64>), StepError> {
        let d = s.dims();
        let (n, m) = (d.n, d.m);
        let fail = |e: driftlab_solver::SolverError| StepError::LinearSolve {
            t,
            detail: e.to_string(),
        };
        let mp = s.mass_pattern();
        let mut mv = vec![0.0; mp.nnz()];
        s.mass(q, &mut mv);
        let mdense = mp.to_dense(&mv, true);
        let l = cholesky(n, &mdense).map_err(fail)?;
        let jp = s.jacobian_pattern();
        let mut jv = vec![0.0; jp.nnz()];
        s.jacobian(t, q, &mut jv);
        let j = jp.to_dense(&jv, false);
        let (mut f, mut gamma, mut phi, mut pt) =
            (vec![0.0; n], vec![0.0; m], vec![0.0; m], vec![0.0; m]);
        s.forces(t, q, v, &mut f);
        s.curvature(t, q, v, &mut gamma);
        s.constraints(t, q, &mut phi);
        s.phi_t(t, q, &mut pt);
        let b = feedback_targets(&j, v, (&gamma, &phi, &pt), self.p.xi, self.p.omega_n);
        let mut y = forward(&l, n, &f);
        // A = J L⁻ᵀ, row r = (L⁻¹ J_rᵀ)ᵀ.
        let a_rows: Vec<Vec<f64>> = (0..m)
            .map(|r| forward(&l, n, &j[r * n..(r + 1) * n]))
            .collect();
        let prio = match self.p.mode {
            PriorityMode::Flat => vec![0u8; m],
            PriorityMode::Hierarchical => s
                .prioritized()
                .map_or_else(|| vec![0u8; m], |p| p.priorities()),
        };
        self.task_priority(&a_rows, &b, &prio, &mut y)
            .map_err(fail)?;
        let acc = backward(&l, n, &y);
        let lambda = multipliers(&j, &mdense, &f, &acc, m).map_err(fail)?;
        Ok((acc, lambda))
    }

    /// The task-priority recursion of the module documentation on the mass-scaled
    /// acceleration `y` (rows `a_rows` of `A = J L⁻ᵀ`, targets `b`, priority `prio[r]` per
    /// row), levels in increasing order from `P = I`:
    ///
    /// ```text
    /// Ã = A_k P,   y ← y + Ã⁺ (b_k − A_k y),   P ← P − Ã⁺ Ã
    /// ```
    ///
    /// with `⁺` the pseudo-inverse at level 0 and the damped one `σ/(σ² + μ²)`,
    /// `μ = damping ‖A_k‖_F`, below.
    fn task_priority(
        &self, a_rows: &[Vec<f64>], b: &[f64], prio: &[u8], y: &mut [f64],
    ) -> Result<(), driftlab_solver::SolverError> {
        let (n, m) = (y.len(), a_rows.len());
        let mut levels: Vec<u8> = prio.to_vec();
        levels.sort_unstable();
        levels.dedup();
        let mut proj: Vec<f64> = (0..n * n)
            .map(|k| if k / n == k % n { 1.0 } else { 0.0 })
            .collect();
        let mut first = true;
        for lev in levels {
            let rows: Vec<usize> = (0..m).filter(|&r| prio[r] == lev).collect();
            let k = rows.len();
            // Ã = A_k P (k × n), residual r = b_k − A_k y.
            let mut at = vec![0.0; k * n];
            let mut res = vec![0.0; k];
            for (i, &r) in rows.iter().enumerate() {
                for c in 0..n {
                    at[i * n + c] = (0..n).map(|e| a_rows[r][e] * proj[e * n + c]).sum();
                }
                res[i] = b[r] - (0..n).map(|c| a_rows[r][c] * y[c]).sum::<f64>();
            }
            let size = rows
                .iter()
                .map(|&r| a_rows[r].iter().map(|x| x * x).sum::<f64>())
                .sum::<f64>()
                .sqrt();
            let mu = if first { 0.0 } else { self.p.damping * size };
            first = false;
            let (pinv, _) = damped_pseudo_inverse(k, n, &at, mu, size)?;
            for c in 0..n {
                y[c] += (0..k).map(|i| pinv[c * k + i] * res[i]).sum::<f64>();
            }
            // P ← P − Ã⁺ Ã with the undamped pseudo-inverse, so that P stays the orthogonal
            // projector onto the null space of the levels so far. With the damped one,
            // P − Ã⁺_μ Ã keeps the fraction μ²/(σ² + μ²) of the level's own directions, and a
            // lower level that turns singular there (σ₂ ∝ μ²) acts through them with the
            // gain σ₂/μ₂², independent of μ: measured on priority-conflict with x* = 1.5,
            // level 1 gave way by 0.145 at every damping.
            let (exact, _) = pseudo_inverse(k, n, &at)?;
            for r in 0..n {
                for c in 0..n {
                    proj[r * n + c] -= (0..k)
                        .map(|i| exact[r * k + i] * at[i * n + c])
                        .sum::<f64>();
                }
            }
        }
        Ok(())
    }
}

/// The per-row Baumgarte targets `b = γ − 2ξω_n Φ̇ − ω_n² Φ` with `Φ̇ = Φ_q v + Φ_t`
/// (seed 001 §3.3.3); `j` is the dense row-major `m × n` Jacobian.
fn feedback_targets(
    j: &[f64], v: &[f64], (gamma, phi, pt): (&[f64], &[f64], &[f64]), xi: f64, w: f64,
) -> Vec<f64> {
    let (n, m) = (v.len(), phi.len());
    (0..m)
        .map(|r| {
            let phidot = (0..n).map(|c| j[r * n + c] * v[c]).sum::<f64>() + pt[r];
            gamma[r] - 2.0 * xi * w * phidot - w * w * phi[r]
        })
        .collect()
}

/// Forward substitution `L x = rhs` with the dense row-major lower-triangular `L` (n × n).
fn forward(l: &[f64], n: usize, rhs: &[f64]) -> Vec<f64> {
    let mut x = rhs.to_vec();
    for i in 0..n {
        for k in 0..i {
            x[i] -= l[i * n + k] * x[k];
        }
        x[i] /= l[i * n + i];
    }
    x
}

/// Backward substitution `Lᵀ x = rhs` with the dense row-major lower-triangular `L`.
fn backward(l: &[f64], n: usize, rhs: &[f64]) -> Vec<f64> {
    let mut x = rhs.to_vec();
    for i in (0..n).rev() {
        for k in i + 1..n {
            x[i] -= l[k * n + i] * x[k];
        }
        x[i] /= l[i * n + i];
    }
    x
}

/// The multipliers that go with the acceleration: `λ = (Jᵀ)⁺ (f − M a)`, with `j` the
/// dense `m × n` Jacobian and `mdense` the dense `n × n` mass matrix (row-major).
fn multipliers(
    j: &[f64], mdense: &[f64], f: &[f64], acc: &[f64], m: usize,
) -> Result<Vec<f64>, driftlab_solver::SolverError> {
    let n = f.len();
    let mut jt = vec![0.0; n * m];
    for r in 0..m {
        for c in 0..n {
            jt[c * m + r] = j[r * n + c];
        }
    }
    let (jtp, _) = pseudo_inverse(n, m, &jt)?;
    let resid: Vec<f64> = (0..n)
        .map(|i| f[i] - (0..n).map(|c| mdense[i * n + c] * acc[c]).sum::<f64>())
        .collect();
    Ok((0..m)
        .map(|r| (0..n).map(|i| jtp[r * n + i] * resid[i]).sum())
        .collect())
}

/// Declared properties of `priority`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: Baumgarte feedback and damped least squares per priority level, then symplectic Euler off the constraint manifold".into(),
        family: "stabilization".into(),
        title: "Prioritized constraints: task-priority least squares at acceleration level, Baumgarte feedback, symplectic Euler".into(),
        equations: "y = Lᵀa, y₀ = L⁻¹f;  per level k: Ã = A_kP, y += Ã⁺(b_k − A_k y), P −= Ã⁺Ã;  b = γ − 2ξω_nΦ̇ − ω_n²Φ;  \
                    v⁺ = v + ha, q⁺ = q + hv⁺"
            .into(),
        citation: "seed 001 §3.5.3; B. Siciliano & J.-J. Slotine, ICAR 1991 (task priority); Y. Nakamura, H. Hanafusa & \
                   T. Yoshikawa, Int. J. Robot. Res. 6 (1987); without priorities: Baumgarte (1972), orders 1/1/1"
            .into(),
        orders: DeclaredOrders { q: Some(1.0), v: Some(1.0), lambda: Some(1.0) },
        // The feedback targets Φ̈ = −2ξω_nΦ̇ − ω_n²Φ, not the hidden constraint Φ_q a = γ.
        enforces: ConstraintLevels { position: false, velocity: false, acceleration: false },
        nonholonomic: true,
        priorities: true,
        ..MethodInfo::default()
    }
}

impl Method for Priority {
    fn info(&self) -> MethodInfo {
        info()
    }
    fn start<'s>(&self, sys: Mechanical<'s>, state: &mut State, _: &StartOptions) -> Started<'s> {
        let s = sys;
        if s.dims().n > MAX_DENSE {
            return Err(MethodError::UnsupportedForm {
                method: ID.into(),
                form: "large",
                hint: format!(
                    "{} coordinates exceed the dense limit {MAX_DENSE}",
                    s.dims().n
                ),
            });
        }
        let stepper = PriorityStepper {
            sys,
            p: self.p,
            stats: MethodStats::default(),
            last: None,
        };
        let (a, l) = stepper
            .accelerations(s, state.t, &state.q, &state.v)
            .map_err(MethodError::Init)?;
        state.a = a;
        state.lambda = l;
        Ok(Box::new(stepper))
    }
}

impl Stepper for PriorityStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let s = self.sys;
        let mut evaluations = 1;
        let a = match self.last.take() {
            // Bitwise the same state: reuse (an exact-equality check, not a tolerance).
            Some(e) if e.t.to_bits() == state.t.to_bits() && e.q == state.q && e.v == state.v => {
                e.a
            }
            _ => {
                evaluations += 1;
                self.accelerations(s, state.t, &state.q, &state.v)?.0
            }
        };
        for i in 0..state.q.len() {
            state.v[i] += h * a[i];
            state.q[i] += h * state.v[i];
        }
        state.t += h;
        let (a1, l1) = self.accelerations(s, state.t, &state.q, &state.v)?;
        self.last = Some(Evaluated {
            t: state.t,
            q: state.q.clone(),
            v: state.v.clone(),
            a: a1.clone(),
        });
        state.a = a1;
        state.lambda = l1;
        self.stats.steps += 1;
        self.stats.factorizations += evaluations;
        Ok(StepReport {
            factorizations: evaluations,
            ..Default::default()
        })
    }
    fn stats(&self) -> MethodStats {
        self.stats
    }
}

/// The catalog id `priority`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "priority";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(Priority::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<PriorityParams>,
    }
}
