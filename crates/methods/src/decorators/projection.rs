//! Projection as a decorator over any method (seed 001 §3.4; seed 004 §3.2): after the
//! inner method's step, the state is brought back to the constraint manifolds.
//!
//! **Decoupled** (default; seed 001 §3.4.3 post-stabilization): position, then velocity,
//! then acceleration,
//!
//! ```text
//! q_{n+1} = argmin ½‖q − q̃‖²_W  s.t. Φ(t_{n+1}, q) = 0          (Newton, or one linearized step)
//! v_{n+1} = argmin ½‖v − ṽ‖²_W  s.t. Φ_q(q_{n+1}) v + Φ_t = 0     (one KKT solve)
//! (a, λ): [M Φ_qᵀ; Φ_q 0][a; λ] = [f; γ]                          (seed 004 §3.2.3; one solve)
//! ```
//!
//! with the metric `W = M` (mass-orthogonal, default) or `W = I` (Euclidean, seed 001
//! §3.4.2). Options: a step factor `α ∈ (0, 1]` on the Newton updates (seed 001 §3.4.4),
//! the linearized projection (one update, seed 001 §3.4.2), projection every `k` steps.
//!
//! **Coupled** (seed 001 §3.4.3 "耦合投影"): one system at the unprojected state
//! `[W Φ_qᵀ; Φ_q 0][Δv; μ] = [0; −(Φ_q ṽ + Φ_t) − Φ(q̃)/h]`, then `v = ṽ + Δv`: the
//! velocity is corrected so that the next step's motion removes the position error
//! (`Φ_{n+1} ≈ Φ + h Φ_q v = 0`); neither level is held exactly. With
//! `coupled_position_update = true` also `q = q̃ + hΔv`, as in the seed's
//! post-stabilization listing (q and v both receive the correction) — which corrects the
//! position twice, once now and once through the velocity in the next step: measured on
//! the Bertolazzi pendulum (h = 1e-3) it diverges within 0.23 s.
//!
//! **Symmetric** (`symmetric = true`; Hairer, BIT 40, 2000): the inner step is taken from
//! a state moved off the manifold by the same multiple of the normals that brings it back
//! after the step ([`crate::decorators::symmetric_projection`]); a symmetric inner method stays
//! symmetric, and the decorator's `symmetric` flag says so (standard projection: only when
//! the inner method already ends on both manifolds).
//!
//! Projection onto the exact solution manifold keeps the order of the underlying one-step
//! method (Hairer, Lubich & Wanner, Geometric Numerical Integration, 2nd ed., §IV.4;
//! Hairer & Wanner, Solving ODEs II, §VII.2), so the declared orders are the inner
//! method's.

use crate::decorators::sequential_projection::{
    project_sequentially, MetricInverse, RowOrder, Sweeps,
};
use crate::decorators::symmetric_projection::{symmetric_step, SymmetricSettings};
use crate::dynamics::{add_kkt_stats, linear_error, ConstraintsAt, KktChoice};
use driftlab_core::prelude::*;
use driftlab_solver::newton::{NewtonFailure, NewtonKernel, NewtonOptions};
use driftlab_solver::{project_position, project_velocity, KktPattern, KktSolver, SolverError};
use serde::{Deserialize, Serialize};

/// The metric of the projections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// `‖x‖²_M` (mass-orthogonal; seed 001 §3.4.2 "质量加权投影").
    #[default]
    Mass,
    /// `‖x‖²` (Euclidean; the pseudo-inverse projection `Δq = −J⁺C`).
    Euclidean,
}

/// The energy projection strategy (seed 004 §3.2.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EnergyStrategy {
    /// Constraints first, then scale v to restore H.
    #[default]
    Sequential,
    /// q and v together onto the three manifolds.
    Coupled,
}

/// Largest `2n + 2m + 1` of the dense coupled energy projection.
pub const MAX_COUPLED_DENSE: usize = 401;

/// Parameters of the projection decorator.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProjectionParams {
    /// Newton stops when `‖Φ‖∞ ≤ tol · (1 + tol_alpha ‖v‖∞ + tol_beta ‖f‖∞)`.
    pub tol: f64,
    /// α of the adaptive tolerance ε_tol = ε₀ (1 + α‖v‖∞ + β‖f‖∞) of seed 001 §3.5.4
    /// (default 0: the fixed `tol`).
    pub tol_alpha: f64,
    /// β of the adaptive tolerance (default 0).
    pub tol_beta: f64,
    /// Newton iteration cap; exceeding it fails the run (a recorded row).
    pub max_iter: usize,
    /// Also project the velocity (seed 001 §3.4.3 decoupled: position, then velocity).
    pub velocity: bool,
    /// Also project the acceleration onto `{Φ_q a = γ}` in the metric of `M` (seed 004
    /// §3.2.3): the `(a, λ)` consistent with the projected `(q, v)`, from the KKT system
    /// already factored for the velocity projection (one extra solve). Without it, a
    /// method that computes λ inside its step (implicit Euler, generalized-α) reports the
    /// multiplier of the unprojected state — measured: λ then loses its order entirely
    /// after implicit Euler (every step becomes a first step with an O(1) layer) and drops
    /// to order 1 after generalized-α.
    pub acceleration: bool,
    /// Metric of the position and velocity projections.
    pub metric: Metric,
    /// One linearized position update instead of Newton to the tolerance.
    pub linearized: bool,
    /// Step factor α ∈ (0, 1] of the position updates.
    pub step_factor: f64,
    /// Project every `every` steps (1: every step).
    pub every: usize,
    /// Coupled projection (one system for Δv removing the position error over a step)
    /// instead of the decoupled sequence.
    pub coupled: bool,
    /// With `coupled`: also move q by hΔv (the seed's listing; double correction).
    pub coupled_position_update: bool,
    /// Energy projection (seed 004 §3.2.4, sequential strategy: constraints first, then
    /// energy): scale the velocity so that `H(q, s v) = H₀`, i.e. `s = √((H₀ − U)/T)` with
    /// `U = H(q, 0)`, `T = H(q, v) − U`. A tangent velocity stays tangent (scleronomic
    /// constraints), so the velocity level is kept; skipped where `T` vanishes.
    pub energy: bool,
    /// Keep the problem's conserved momenta (`MechanicalSystem::momentum`, e.g. linear
    /// and angular momentum) at their initial values: the velocity projection also
    /// imposes `A(q) v = p₀` ([`crate::decorators::momentum_projection`]; dense, small
    /// models). Needs `velocity` and the simultaneous, non-coupled, non-symmetric
    /// projection.
    pub momentum: bool,
    /// How the energy projection is done: `sequential` (velocity scaling after the
    /// constraint projections, default) or `coupled` (seed 004's coupled strategy: one
    /// Newton iteration for q and v together onto {Φ = 0, Φ_q v + Φ_t = 0, H = H₀} in the
    /// metric diag(M, M); dense, for small models). The coupled strategy also works at
    /// turning points (T ≈ 0), where velocity scaling cannot restore H.
    pub energy_strategy: EnergyStrategy,
    /// Symmetric projection (Hairer, BIT 40, 2000; [`crate::decorators::symmetric_projection`]): the
    /// state is moved off the manifold before the inner step by the same multiple of the
    /// constraint normals that brings it back after the step, so a symmetric inner method
    /// stays symmetric (the standard projection is not). Needs a restartable inner method;
    /// each iteration retakes its step. Excludes `coupled`, `linearized`, `every > 1` and
    /// a step factor.
    pub symmetric: bool,
    /// The order of the constraint rows: `simultaneous` (all at once, default) or one row
    /// at a time, `forward` or `reverse` ([`crate::decorators::sequential_projection`]; seed 001
    /// §3.11 pitfall 3). Excludes `coupled`, `linearized`, `symmetric` and a step factor.
    pub order: RowOrder,
    /// KKT factorization.
    pub kkt: KktChoice,
}

impl Default for ProjectionParams {
    fn default() -> Self {
        Self {
            tol: 1e-12,
            tol_alpha: 0.0,
            tol_beta: 0.0,
            max_iter: 20,
            velocity: true,
            acceleration: true,
            metric: Metric::Mass,
            linearized: false,
            step_factor: 1.0,
            every: 1,
            coupled: false,
            coupled_position_update: false,
            energy: false,
            momentum: false,
            energy_strategy: EnergyStrategy::Sequential,
            symmetric: false,
            order: RowOrder::Simultaneous,
            kkt: KktChoice::Auto,
        }
    }
}

impl ProjectionParams {
    /// Validate.
    pub fn validate(&self) -> Result<(), ParamError> {
        driftlab_core::params::positive("projection", "tol", self.tol)?;
        let bad = |field: &'static str, value: f64, fix: &str| {
            Err(ParamError::OutOfRange {
                id: "projection".into(),
                field,
                value,
                fix: fix.into(),
            })
        };
        if self.max_iter == 0 {
            return bad("max_iter", 0.0, "give max_iter ≥ 1");
        }
        for (field, x) in [("tol_alpha", self.tol_alpha), ("tol_beta", self.tol_beta)] {
            if !(x.is_finite() && x >= 0.0) {
                return bad(field, x, "give a finite weight ≥ 0 (0: fixed tolerance)");
            }
        }
        if !(self.step_factor > 0.0 && self.step_factor <= 1.0) {
            return bad("step_factor", self.step_factor, "give 0 < step_factor ≤ 1");
        }
        if self.every == 0 {
            return bad("every", 0.0, "give every ≥ 1 (1 = every step)");
        }
        if self.order != RowOrder::Simultaneous && (self.symmetric || !self.exact_position()) {
            return Err(ParamError::Invalid {
                kind: "method",
                id: "projection".into(),
                message: "a sequential `order` projects row by row to the tolerance at every \
                          step: drop `coupled`, `linearized`, `symmetric`, `every` and \
                          `step_factor`, or use `order = \"simultaneous\"`"
                    .into(),
            });
        }
        if self.momentum
            && (!self.velocity
                || self.energy
                || self.coupled
                || self.symmetric
                || self.order != RowOrder::Simultaneous)
        {
            return Err(ParamError::Invalid {
                kind: "method",
                id: "projection".into(),
                message: "`momentum = true` adds the momenta to the velocity projection: keep \
                          `velocity = true` and drop `coupled`, `symmetric`, `energy` (its \
                          velocity scaling would move the momenta again) and a sequential `order`"
                    .into(),
            });
        }
        if self.symmetric && !self.exact_position() {
            return Err(ParamError::Invalid {
                kind: "method",
                id: "projection".into(),
                message: "`symmetric = true` projects onto Φ = 0 exactly at every step: \
                          drop `coupled`, `linearized`, `every` and `step_factor`, or drop \
                          `symmetric`"
                    .into(),
            });
        }
        Ok(())
    }

    /// Whether the position residual is held at `tol` after every step.
    fn exact_position(&self) -> bool {
        !self.coupled
            && !self.linearized
            && self.every == 1
            && (self.step_factor - 1.0).abs() < f64::EPSILON
    }
}

/// One part of a projection step. The parameters choose the parts once
/// ([`Part::sequence`]); a step runs them in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// Coupled projection: one system for Δv removing the position error over the step
    /// (instead of the position and velocity parts).
    Coupled,
    /// Symmetric projection of position and velocity around the inner step
    /// ([`crate::decorators::symmetric_projection`]); it takes the inner step itself.
    Symmetric,
    /// Position and velocity one row at a time ([`crate::decorators::sequential_projection`]).
    Sequential,
    /// Position onto `Φ = 0` in the chosen metric: Newton to the (adaptive) tolerance, or
    /// one linearized update, with the step factor.
    Position,
    /// Velocity onto `Φ_q v + Φ_t = 0` in the chosen metric.
    Velocity,
    /// Velocity onto `{Φ_q v + Φ_t = 0, A(q) v = p₀}` (conserved momenta kept).
    Momentum,
    /// Energy by scaling the velocity, `s = √((H₀ − U)/T)` (sequential strategy).
    EnergyScaling,
    /// q and v together onto `{Φ = 0, Φ_q v + Φ_t = 0, H = H₀}` (coupled strategy).
    EnergyCoupled,
    /// `(a, λ)` consistent with the projected `(q, v)`, on the velocity projection's
    /// factorization (refactored when the metric is not the mass or q moved since).
    Acceleration,
    /// No acceleration part: the inner method recomputes what it derives from `(q, v)`.
    InnerRefresh,
}

impl Part {
    /// The parts that `p` asks for, in the order they run.
    fn sequence(p: &ProjectionParams) -> Vec<Part> {
        if p.coupled {
            return vec![Part::Coupled, Part::InnerRefresh];
        }
        let mut parts = vec![Part::Position];
        if p.symmetric {
            parts = vec![Part::Symmetric];
        } else if p.order != RowOrder::Simultaneous {
            parts = vec![Part::Sequential];
        } else if p.velocity {
            parts.push(Part::Velocity);
            if p.momentum {
                parts.push(Part::Momentum);
            }
        }
        if p.energy {
            parts.push(match p.energy_strategy {
                EnergyStrategy::Sequential => Part::EnergyScaling,
                EnergyStrategy::Coupled => Part::EnergyCoupled,
            });
        }
        parts.push(if p.acceleration && p.velocity {
            Part::Acceleration
        } else {
            Part::InnerRefresh
        });
        parts
    }
}

/// Any method followed by projections.
pub struct Projected {
    inner: Box<dyn Method>,
    p: ProjectionParams,
    /// What a projection step does, in order.
    parts: Vec<Part>,
}

impl Projected {
    /// Wrap `inner`.
    pub fn new(inner: Box<dyn Method>, p: ProjectionParams) -> Result<Self, ParamError> {
        p.validate()?;
        Ok(Self {
            inner,
            parts: Part::sequence(&p),
            p,
        })
    }
}

/// [`Projected`] bound to its system: the inner stepper and the projections' work.
struct ProjectedStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    inner: Box<dyn Stepper + 's>,
    p: ProjectionParams,
    parts: Vec<Part>,
    kkt: KktSolver,
    /// The factorization at the start of the step (symmetric projection only).
    kkt_start: Option<KktSolver>,
    /// `W⁻¹` for the row-by-row projection (sequential order only).
    row_metric: Option<MetricInverse>,
    n_mass: usize,
    /// Values of the metric block `[M entries…, I diagonal…]` (one of the two zero).
    metric_vals: Vec<f64>,
    /// Values `[M entries…, 0…]` for the acceleration level.
    mass_vals: Vec<f64>,
    iterations: usize,
    /// Steps taken (for `every`), and their number before the step in progress.
    steps: usize,
    steps_at_start: usize,
    h0: Option<f64>,
    /// The conserved momenta at the start (`momentum = true`).
    p0: Option<Vec<f64>>,
}

impl ProjectedStepper<'_> {
    fn fill_metric(&mut self, s: &dyn MechanicalSystem, q: &[f64]) {
        fill_metric(
            self.p.metric,
            self.n_mass,
            &mut self.mass_vals,
            &mut self.metric_vals,
            s,
            q,
        );
    }

    /// `(a, λ)` consistent with `(q, v)` on a KKT factored with `M` at `q`.
    fn accelerations(
        kkt: &mut KktSolver, s: &dyn MechanicalSystem, state: &mut State,
    ) -> Result<(), SolverError> {
        let (n, m) = (state.q.len(), state.lambda.len());
        let mut rhs = vec![0.0; n + m];
        s.forces(state.t, &state.q, &state.v, &mut rhs[..n]);
        s.curvature(state.t, &state.q, &state.v, &mut rhs[n..]);
        kkt.solve(&mut rhs)?;
        state.a.copy_from_slice(&rhs[..n]);
        state.lambda.copy_from_slice(&rhs[n..]);
        Ok(())
    }

    /// Run one part of a projection step on `state` (after the inner step), adding its
    /// iterations and factorizations to `report`.
    fn run_part(
        &mut self, part: Part, s: &dyn MechanicalSystem, state: &mut State, h: f64,
        report: &mut StepReport,
    ) -> Result<(), StepError> {
        let t = state.t;
        match part {
            Part::Coupled => report.factorizations += self.coupled_step(s, state, h)?,
            // Taken with the inner step in `step`.
            Part::Symmetric => {}
            // The row metric exists exactly when the order asks for this part.
            Part::Sequential => {
                if let Some(w) = self.row_metric.as_mut() {
                    let how = Sweeps {
                        order: self.p.order,
                        tol: adaptive_tolerance(&self.p, s, state),
                        max_sweeps: self.p.max_iter,
                        velocity: self.p.velocity,
                    };
                    let sweeps = project_sequentially(s, state, w, &how)?;
                    self.iterations += sweeps;
                    report.projection_iterations += sweeps;
                }
            }
            Part::Position => self.position_part(s, state, report)?,
            Part::Velocity => {
                fill_metric(
                    self.p.metric,
                    self.n_mass,
                    &mut self.mass_vals,
                    &mut self.metric_vals,
                    s,
                    &state.q,
                );
                let kkt = &mut self.kkt;
                let mut eval = ConstraintsAt { sys: s, t };
                project_velocity(kkt, &self.metric_vals, &state.q, &mut state.v, &mut eval)
                    .map_err(|e| projection_error(t, e))?;
                report.factorizations += 1;
            }
            Part::Momentum => {
                if let Some(p0) = &self.p0 {
                    crate::decorators::momentum_projection::project_momenta(
                        s,
                        state,
                        p0,
                        self.p.metric,
                    )?;
                    report.factorizations += 2;
                }
            }
            Part::EnergyScaling => {
                if let Some(h0) = self.h0 {
                    scale_to_energy(s, state, h0);
                }
            }
            Part::EnergyCoupled => {
                if let Some(h0) = self.h0 {
                    let it = coupled_energy_projection(s, state, h0, self.p.tol, self.p.max_iter)?;
                    self.iterations += it;
                    report.projection_iterations += it;
                    report.factorizations += it;
                }
            }
            Part::Acceleration => self.acceleration_part(s, state, report)?,
            Part::InnerRefresh => self.inner.refresh(state)?,
        }
        Ok(())
    }

    /// [`Part::Position`]: `project_position` with this decorator's tolerance rule,
    /// iteration cap, step factor and linearization.
    fn position_part(
        &mut self, s: &dyn MechanicalSystem, state: &mut State, report: &mut StepReport,
    ) -> Result<(), StepError> {
        let t = state.t;
        let kkt = &mut self.kkt;
        let tol = adaptive_tolerance(&self.p, s, state);
        let mut eval = ConstraintsAt { sys: s, t };
        let pos = project_position(
            kkt,
            &self.metric_vals,
            &mut state.q,
            &mut eval,
            &driftlab_solver::ProjectionParams {
                tol,
                max_iter: self.p.max_iter,
                step_factor: self.p.step_factor,
                linearized: self.p.linearized,
            },
        )
        .map_err(|e| projection_error(t, e))?;
        self.iterations += pos.iterations;
        report.projection_iterations += pos.iterations;
        report.factorizations += pos.iterations;
        Ok(())
    }

    /// [`Part::Acceleration`]: the velocity projection's factorization is at the right q
    /// with the mass metric unless the metric is Euclidean or the coupled energy part
    /// moved q; then `[[M, Φ_qᵀ], [Φ_q, 0]]` is refactored first.
    fn acceleration_part(
        &mut self, s: &dyn MechanicalSystem, state: &mut State, report: &mut StepReport,
    ) -> Result<(), StepError> {
        let t = state.t;
        let kkt = &mut self.kkt;
        // The coupled energy part moved q; the symmetric part factored at the previous
        // iterate of q.
        let moved = self.parts.contains(&Part::EnergyCoupled)
            || matches!(self.parts[0], Part::Symmetric | Part::Sequential);
        if self.p.metric != Metric::Mass || moved {
            let mut jac = vec![0.0; s.jacobian_pattern().nnz()];
            s.jacobian(t, &state.q, &mut jac);
            kkt.factorize(&self.mass_vals, &jac, None)
                .map_err(|e| linear_error(t, e))?;
            report.factorizations += 1;
        }
        Self::accelerations(kkt, s, state).map_err(|e| projection_error(t, e))
    }

    /// [`Part::Symmetric`]: the inner step inside the symmetric projection, with the
    /// factorization at the start of the step.
    fn symmetric_part(
        &mut self, s: &dyn MechanicalSystem, state: &mut State, h: f64,
    ) -> Result<StepReport, StepError> {
        let (Some(start), end) = (self.kkt_start.as_mut(), &mut self.kkt) else {
            return self.inner.step(state, h);
        };
        let settings = SymmetricSettings {
            metric: self.p.metric,
            n_mass: self.n_mass,
            tol: adaptive_tolerance(&self.p, s, state),
            max_iter: self.p.max_iter,
            velocity: self.p.velocity,
        };
        let (report, iterations) =
            symmetric_step(self.inner.as_mut(), s, state, h, (start, end), &settings)?;
        self.iterations += iterations;
        Ok(StepReport {
            projection_iterations: report.projection_iterations + iterations,
            ..report
        })
    }

    fn coupled_step(
        &mut self, s: &dyn MechanicalSystem, state: &mut State, h: f64,
    ) -> Result<usize, StepError> {
        let t = state.t;
        let kkt = &mut self.kkt;
        let (n, m) = (state.q.len(), state.lambda.len());
        let jp = s.jacobian_pattern();
        let mut jac = vec![0.0; jp.nnz()];
        s.jacobian(t, &state.q, &mut jac);
        kkt.factorize(&self.metric_vals, &jac, None)
            .map_err(|e| linear_error(t, e))?;
        let mut rhs = vec![0.0; n + m];
        let (mut phi, mut phit, mut jv) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
        s.constraints(t, &state.q, &mut phi);
        s.phi_t(t, &state.q, &mut phit);
        jp.mul_vec(&jac, &state.v, &mut jv, false);
        for r in 0..m {
            rhs[n + r] = -(jv[r] + phit[r]) - phi[r] / h;
        }
        kkt.solve(&mut rhs).map_err(|e| linear_error(t, e))?;
        let move_q = self.p.coupled_position_update;
        for i in 0..n {
            state.v[i] += rhs[i];
            if move_q {
                state.q[i] += h * rhs[i];
            }
        }
        Ok(1)
    }
}

/// Sequential energy projection (seed 004 §3.2.4): `v ← s v` with `H(q, s v) = H₀`, i.e.
/// `s = √((H₀ − U)/T)`, `U = H(q, 0)`, `T = H(q, v) − U`; skipped where `T` vanishes or
/// `H₀ < U` (no real scaling exists).
fn scale_to_energy(s: &dyn MechanicalSystem, state: &mut State, h0: f64) {
    let t = state.t;
    let u = s
        .energy(t, &state.q, &vec![0.0; state.v.len()])
        .unwrap_or(h0);
    let kin = s.energy(t, &state.q, &state.v).unwrap_or(h0) - u;
    if kin > 1e-14 * h0.abs().max(s.energy_scale()) && h0 - u >= 0.0 {
        let scale = ((h0 - u) / kin).sqrt();
        state.v.iter_mut().for_each(|x| *x *= scale);
    }
}

/// `tol · (1 + α‖v‖∞ + β‖f(t, q, v)‖∞)` (seed 001 §3.5.4 "自适应容差").
fn adaptive_tolerance(p: &ProjectionParams, s: &dyn MechanicalSystem, state: &State) -> f64 {
    let inf = |x: &[f64]| x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    if p.tol_alpha <= 0.0 && p.tol_beta <= 0.0 {
        return p.tol;
    }
    let f_norm = if p.tol_beta > 0.0 {
        let mut f = vec![0.0; state.v.len()];
        s.forces(state.t, &state.q, &state.v, &mut f);
        inf(&f)
    } else {
        0.0
    };
    p.tol * (1.0 + p.tol_alpha * inf(&state.v) + p.tol_beta * f_norm)
}

/// The momenta `p₀` a `momentum = true` projection keeps, read at the start: refused
/// with the reason when the problem defines none, they are not linear in v, or the model
/// is too large for the dense projection.
fn initial_momenta(s: &dyn MechanicalSystem, state: &State) -> Result<Vec<f64>, MethodError> {
    use crate::decorators::momentum_projection::{momentum_matrix, MAX_DENSE};
    let refuse = |reason: String| MethodError::Incompatible {
        method: "projection".into(),
        problem: s.info().id,
        reason: format!("momentum = true: {reason}"),
    };
    if state.q.len() > MAX_DENSE {
        return Err(refuse(format!(
            "the dense momentum projection is limited to n ≤ {MAX_DENSE}; drop `momentum`"
        )));
    }
    momentum_matrix(s, state.t, &state.q).map_err(refuse)?;
    s.momentum(state.t, &state.q, &state.v)
        .ok_or_else(|| refuse("the problem defines no momenta".into()))
}

/// Values of the block `[M entries…, diagonal…]` for the mass metric (`[M, 0]`) and the
/// Euclidean one (`[0, I]`); `mass_vals` always gets `[M, 0]`.
pub(crate) fn fill_metric(
    metric: Metric, n_mass: usize, mass_vals: &mut [f64], metric_vals: &mut [f64],
    s: &dyn MechanicalSystem, q: &[f64],
) {
    s.mass(q, &mut mass_vals[..n_mass]);
    mass_vals[n_mass..].iter_mut().for_each(|x| *x = 0.0);
    match metric {
        Metric::Mass => metric_vals.copy_from_slice(mass_vals),
        Metric::Euclidean => {
            metric_vals[..n_mass].iter_mut().for_each(|x| *x = 0.0);
            metric_vals[n_mass..].iter_mut().for_each(|x| *x = 1.0);
        }
    }
}

/// Seed 004's coupled energy projection: `(q, v)` nearest to `(q̃, ṽ)` in the metric
/// diag(M, M) with `Φ(q) = 0`, `Φ_q v + Φ_t = 0` and `H(q, v) = H₀`. Newton on the KKT
/// system
///
/// ```text
/// [ M    0    Φ_qᵀ  J₂ᵀ  ∇_qH ] [Δq]   [ −M(q − q̃) ]
/// [ 0    M    0     Φ_qᵀ ∇_vH ] [Δv]   [ −M(v − ṽ) ]
/// [ Φ_q  0    0     0    0    ] [μ₁] = [ −Φ        ]      J₂ = (Φ_q v)_q
/// [ J₂   Φ_q  0     0    0    ] [μ₂]   [ −(Φ_q v + Φ_t) ]
/// [ ∇_qH ∇_vH 0     0    0    ] [η ]   [ −(H − H₀) ]
/// ```
///
/// (curvature of the constraints dropped from the Hessian; J₂, ∇H by central differences;
/// dense, up to [`MAX_COUPLED_DENSE`] unknowns). Returns the iterations.
pub fn coupled_energy_projection(
    s: &dyn MechanicalSystem, state: &mut State, h0: f64, tol: f64, max_iter: usize,
) -> Result<usize, StepError> {
    let t = state.t;
    let mut sys = CoupledSystem::new(s, state, h0);
    if sys.dim > MAX_COUPLED_DENSE {
        return Err(StepError::LinearSolve { t, detail: format!("coupled energy projection: {} unknowns exceed the dense limit {MAX_COUPLED_DENSE}; use energy_strategy = \"sequential\"", sys.dim) });
    }
    // Stops on its residual (the kernel's η test off), as the position projection.
    let mut kernel = NewtonKernel::new(NewtonOptions::residual_stop(max_iter));
    let mut res = f64::NAN;
    let solved = kernel.solve(|k| {
        let updates = k - 1;
        let e;
        (res, e) = sys.residual(&state.q, &state.v);
        if res <= tol {
            return Ok(0.0);
        }
        if updates >= max_iter || res.is_nan() {
            return Err(StepError::ProjectionFailed {
                t,
                iterations: updates,
                residual: res,
                tol,
            });
        }
        let a = sys.matrix(&state.q, &state.v);
        let mut rhs = sys.rhs(&state.q, &state.v, e);
        driftlab_solver::dense::solve_dense(sys.dim, &a, &mut rhs)
            .map_err(|er| linear_error(t, er))?;
        let n = state.q.len();
        for i in 0..n {
            state.q[i] += rhs[i];
            state.v[i] += rhs[n + i];
        }
        Ok(res / tol)
    });
    let iterations = kernel.counters.iterations - 1;
    match solved {
        Ok(_) => Ok(iterations),
        Err(NewtonFailure::Iteration(e)) => Err(e),
        Err(_) => Err(StepError::ProjectionFailed {
            t,
            iterations,
            residual: res,
            tol,
        }),
    }
}

/// The KKT system of [`coupled_energy_projection`] around the unprojected `(q̃, ṽ)`.
struct CoupledSystem<'a> {
    s: &'a dyn MechanicalSystem,
    t: f64,
    h0: f64,
    scale: f64,
    dim: usize,
    qs: Vec<f64>,
    vs: Vec<f64>,
    mass: Vec<f64>,
    jac: Vec<f64>,
    phi: Vec<f64>,
    phit: Vec<f64>,
    gv: Vec<f64>,
}

impl<'a> CoupledSystem<'a> {
    fn new(s: &'a dyn MechanicalSystem, state: &State, h0: f64) -> Self {
        let d = s.dims();
        let m = d.m;
        Self {
            s,
            t: state.t,
            h0,
            scale: h0.abs().max(s.energy_scale()),
            dim: 2 * d.n + 2 * m + 1,
            qs: state.q.clone(),
            vs: state.v.clone(),
            mass: vec![0.0; s.mass_pattern().nnz()],
            jac: vec![0.0; s.jacobian_pattern().nnz()],
            phi: vec![0.0; m],
            phit: vec![0.0; m],
            gv: vec![0.0; m],
        }
    }

    fn energy(&self, q: &[f64], v: &[f64]) -> f64 {
        self.s.energy(self.t, q, v).unwrap_or(self.h0)
    }

    /// `max(‖Φ‖∞, ‖Φ_q v + Φ_t‖∞, |H − H₀|/scale)` and `H − H₀`; fills M, Φ_q, Φ, Φ_t, Φ_q v.
    fn residual(&mut self, q: &[f64], v: &[f64]) -> (f64, f64) {
        let (s, t) = (self.s, self.t);
        s.mass(q, &mut self.mass);
        s.jacobian(t, q, &mut self.jac);
        s.constraints(t, q, &mut self.phi);
        s.phi_t(t, q, &mut self.phit);
        s.jacobian_pattern()
            .mul_vec(&self.jac, v, &mut self.gv, false);
        let e = self.energy(q, v) - self.h0;
        let level = self.phi.iter().zip(&self.gv).zip(&self.phit);
        let res = level
            .fold(0.0_f64, |a, ((p, g), pt)| {
                a.max(p.abs()).max((g + pt).abs())
            })
            .max(e.abs() / self.scale);
        (res, e)
    }

    /// The dense row-major KKT matrix at `(q, v)` (after [`Self::residual`]).
    fn matrix(&self, q: &[f64], v: &[f64]) -> Vec<f64> {
        let (s, t, dim) = (self.s, self.t, self.dim);
        let (n, m) = (q.len(), self.phi.len());
        let (mp, jp) = (s.mass_pattern(), s.jacobian_pattern());
        let mut a = vec![0.0; dim * dim];
        let mut put = |r: usize, c: usize, x: f64| {
            a[r * dim + c] += x;
            if r != c {
                a[c * dim + r] += x;
            }
        };
        for (&(i, j), &x) in mp.entries.iter().zip(&self.mass) {
            put(i, j, x);
            put(n + i, n + j, x);
        }
        let (r1, r2, r3) = (2 * n, 2 * n + m, 2 * n + 2 * m);
        for (&(r, c), &x) in jp.entries.iter().zip(&self.jac) {
            put(r1 + r, c, x);
            put(r2 + r, n + c, x);
        }
        // J₂ = (Φ_q v)_q and ∇_q H by central differences, ∇_v H likewise.
        let (mut jj, mut gp, mut gm) = (vec![0.0; jp.nnz()], vec![0.0; m], vec![0.0; m]);
        for c in 0..n {
            let eps = 1e-7 * (1.0 + q[c].abs());
            let (mut qp, mut qm) = (q.to_vec(), q.to_vec());
            qp[c] += eps;
            qm[c] -= eps;
            s.jacobian(t, &qp, &mut jj);
            jp.mul_vec(&jj, v, &mut gp, false);
            s.jacobian(t, &qm, &mut jj);
            jp.mul_vec(&jj, v, &mut gm, false);
            for r in 0..m {
                put(r2 + r, c, (gp[r] - gm[r]) / (2.0 * eps));
            }
            put(
                r3,
                c,
                (self.energy(&qp, v) - self.energy(&qm, v)) / (2.0 * eps),
            );
            let ev = 1e-7 * (1.0 + v[c].abs());
            let (mut vp, mut vm) = (v.to_vec(), v.to_vec());
            vp[c] += ev;
            vm[c] -= ev;
            put(
                r3,
                n + c,
                (self.energy(q, &vp) - self.energy(q, &vm)) / (2.0 * ev),
            );
        }
        a
    }

    /// The right-hand side `[−M(q − q̃); −M(v − ṽ); −Φ; −(Φ_q v + Φ_t); −(H − H₀)]`.
    fn rhs(&self, q: &[f64], v: &[f64], e: f64) -> Vec<f64> {
        let (n, m) = (q.len(), self.phi.len());
        let mp = self.s.mass_pattern();
        let dq: Vec<f64> = (0..n).map(|i| q[i] - self.qs[i]).collect();
        let dv: Vec<f64> = (0..n).map(|i| v[i] - self.vs[i]).collect();
        let (mut mdq, mut mdv) = (vec![0.0; n], vec![0.0; n]);
        mp.mul_vec(&self.mass, &dq, &mut mdq, true);
        mp.mul_vec(&self.mass, &dv, &mut mdv, true);
        let mut rhs = vec![0.0; self.dim];
        for i in 0..n {
            rhs[i] = -mdq[i];
            rhs[n + i] = -mdv[i];
        }
        for r in 0..m {
            rhs[2 * n + r] = -self.phi[r];
            rhs[2 * n + m + r] = -(self.gv[r] + self.phit[r]);
        }
        rhs[2 * n + 2 * m] = -e;
        rhs
    }
}

pub(crate) fn projection_error(t: f64, e: SolverError) -> StepError {
    match e {
        SolverError::ProjectionDiverged {
            iterations,
            residual,
            tol,
        } => StepError::ProjectionFailed {
            t,
            iterations,
            residual,
            tol,
        },
        other => linear_error(t, other),
    }
}

impl ProjectionParams {
    /// The options that set this projection apart from the default, for the title.
    fn title_options(&self) -> Vec<String> {
        let p = self;
        let mut opts = Vec::new();
        if p.coupled {
            opts.push(if p.coupled_position_update {
                "coupled, q and v corrected".to_string()
            } else {
                "coupled".to_string()
            });
        }
        if p.metric == Metric::Euclidean {
            opts.push("euclidean".into());
        }
        if p.linearized {
            opts.push("linearized".into());
        }
        if (p.step_factor - 1.0).abs() > f64::EPSILON {
            opts.push(format!("α = {}", p.step_factor));
        }
        if p.every > 1 {
            opts.push(format!("every {} steps", p.every));
        }
        if p.energy {
            opts.push("energy".into());
        }
        if p.momentum {
            opts.push("momentum".into());
        }
        if p.symmetric {
            opts.push("symmetric".into());
        }
        if p.order != RowOrder::Simultaneous {
            opts.push(format!("row by row, {:?}", p.order).to_lowercase());
        }
        opts
    }

    /// The projection's equations, appended to the inner method's `inner`.
    fn equations(&self, inner: &str) -> String {
        let p = self;
        let metric = if p.metric == Metric::Mass { "M" } else { "I" };
        let mut e = if p.coupled {
            format!(
                "{inner};  then [W Φ_qᵀ; Φ_q 0][Δv; μ] = [0; −(Φ_q ṽ + Φ_t) − Φ(q̃)/h], v = ṽ + Δv{} (W = {metric})",
                if p.coupled_position_update { ", q = q̃ + hΔv" } else { "" }
            )
        } else {
            format!(
                "{inner};  then q ← argmin ½‖q − q̃‖²_{metric} s.t. Φ = 0{}{}",
                if p.velocity {
                    format!(";  v ← argmin ½‖v − ṽ‖²_{metric} s.t. Φ_q v + Φ_t = 0")
                } else {
                    String::new()
                },
                if p.velocity && p.acceleration {
                    ";  (a, λ) from [M Φ_qᵀ; Φ_q 0][a; λ] = [f; γ]"
                } else {
                    ""
                }
            )
        };
        if p.momentum {
            e.push_str(";  v ← argmin ½‖v − ṽ‖²_W s.t. Φ_q v + Φ_t = 0, A(q) v = p₀ (momenta)");
        }
        if p.energy {
            e.push_str(";  v ← s v with H(q, s v) = H₀ (energy)");
        }
        e
    }
}

impl Method for Projected {
    fn info(&self) -> MethodInfo {
        let mut i = self.inner.info();
        // Its metric (projection) or restart (recovery) evaluates M(q) only.
        i.varying_mass = false;
        let inner_on_manifolds = i.enforces.position && (i.enforces.velocity || !self.p.velocity);
        i.nonholonomic = false; // position projection has no Φ to act on for A(q)v = 0 rows
        let p = &self.p;
        let opts = p.title_options();
        i.id = format!("{}+projection", i.id);
        i.title = format!(
            "{} + projection{}",
            i.title,
            if opts.is_empty() {
                String::new()
            } else {
                format!(" ({})", opts.join(", "))
            }
        );
        i.equations = p.equations(&i.equations);
        i.citation = format!("{}; projection: seed 001 §3.4.2–3.4.4, seed 004 §3.2; order kept: Hairer, Lubich & Wanner, GNI §IV.4", i.citation);
        let exact = p.exact_position();
        i.enforces.position |= exact;
        i.enforces.velocity |= exact && p.velocity;
        i.enforces.acceleration |= exact && p.velocity && p.acceleration;
        // Hairer (2000): the symmetric projection keeps a symmetric inner method symmetric;
        // the standard projection does not, unless the inner method already ends on both
        // manifolds (RATTLE: the projection then changes nothing beyond its tolerance);
        // the energy scaling never does.
        i.symmetric &= (p.symmetric || inner_on_manifolds) && !p.energy;
        // Likewise symplecticity: the projection onto 𝓜 is not a symplectic map (measured
        // on Gauss + projection in tests/symplecticity.rs); after a method that already
        // ends on 𝓜 it changes nothing beyond its tolerance.
        let keeps = i.symplectic && inner_on_manifolds && !p.energy;
        i.symplectic_reason = if keeps {
            format!(
                "{}; the projection changes nothing beyond its tolerance (the method ends on 𝓜)",
                i.symplectic_reason
            )
        } else if i.symplectic {
            "no: the projection (or the energy scaling) is not a symplectic map, and the method does not already end on 𝓜; measured in tests/symplecticity.rs".into()
        } else {
            format!("{}; projecting onto 𝓜 does not make it symplectic (the projection is not a symplectic map)", i.symplectic_reason)
        };
        i.symplectic = keeps;
        i.forms = vec![SystemForm::Mechanical];
        i
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let (pattern, kkt) = projection_kkt(sys, &self.p, state.t, opts)?;
        let mut kkt_start = None;
        if self.p.symmetric {
            if !self.inner.restartable() {
                return Err(MethodError::Incompatible {
                    method: "projection".into(),
                    problem: sys.info().id,
                    reason: format!(
                        "symmetric projection retakes the inner step; `{}` keeps memory across steps (not restartable)",
                        self.inner.info().id
                    ),
                });
            }
            kkt_start = Some(
                KktSolver::new(&pattern, self.p.kkt.options(opts))
                    .map_err(|e| MethodError::Init(linear_error(state.t, e)))?,
            );
        }
        let mut row_metric = None;
        if self.p.order != RowOrder::Simultaneous {
            row_metric = Some(
                MetricInverse::new(sys, self.p.metric, opts)
                    .map_err(|e| MethodError::Init(linear_error(state.t, e)))?,
            );
        }
        let inner = self.inner.start(sys, state, opts)?;
        let mut stepper = ProjectedStepper {
            sys,
            inner,
            p: self.p,
            parts: self.parts.clone(),
            n_mass: sys.mass_pattern().entries.len(),
            metric_vals: vec![0.0; pattern.a_lower.len()],
            mass_vals: vec![0.0; pattern.a_lower.len()],
            kkt,
            kkt_start,
            row_metric,
            iterations: 0,
            steps: 0,
            steps_at_start: 0,
            h0: sys.energy(state.t, &state.q, &state.v),
            p0: None,
        };
        if self.p.momentum {
            stepper.p0 = Some(initial_momenta(sys, state)?);
        }
        if self.p.energy && stepper.h0.is_none() {
            return Err(MethodError::Incompatible {
                method: "projection".into(),
                problem: sys.info().id,
                reason: "energy projection needs a problem that defines its energy".into(),
            });
        }
        if self.p.acceleration && self.p.velocity && !self.p.coupled {
            stepper.consistent_start(state)?;
        }
        Ok(Box::new(stepper))
    }
    /// Restartable when projecting every step (the step counter of `every > 1` is memory).
    fn restartable(&self) -> bool {
        self.p.every == 1 && self.inner.restartable()
    }
}

/// The KKT layout `[[M + I, Φ_qᵀ], [Φ_q, 0]]` (mass entries, then the diagonal, so one
/// pattern serves both metrics) and its solver.
fn projection_kkt(
    s: &dyn MechanicalSystem, p: &ProjectionParams, t: f64, opts: &StartOptions,
) -> Result<(KktPattern, KktSolver), MethodError> {
    let d = s.dims();
    let mut a_lower = s.mass_pattern().entries;
    a_lower.extend((0..d.n).map(|i| (i, i)));
    let pattern = KktPattern {
        n: d.n,
        m: d.m,
        a_lower,
        b: s.jacobian_pattern().entries,
    };
    let kkt = KktSolver::new(&pattern, p.kkt.options(opts))
        .map_err(|e| MethodError::Init(linear_error(t, e)))?;
    Ok((pattern, kkt))
}

impl ProjectedStepper<'_> {
    /// Start with the `(a, λ)` consistent with the initial state as well, so that the
    /// declared acceleration level holds from t₀ on, whatever the inner method set.
    fn consistent_start(&mut self, state: &mut State) -> Result<(), MethodError> {
        let (s, t) = (self.sys, state.t);
        self.fill_metric(s, &state.q);
        let mut jac = vec![0.0; s.jacobian_pattern().nnz()];
        s.jacobian(t, &state.q, &mut jac);
        self.kkt
            .factorize(&self.mass_vals, &jac, None)
            .map_err(|e| MethodError::Init(linear_error(t, e)))?;
        Self::accelerations(&mut self.kkt, s, state)
            .map_err(|e| MethodError::Init(linear_error(t, e)))
    }
}

impl Stepper for ProjectedStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let sys = self.sys;
        self.steps_at_start = self.steps;
        let mut report = if self.parts[0] == Part::Symmetric {
            self.symmetric_part(sys, state, h)?
        } else {
            self.inner.step(state, h)?
        };
        self.steps += 1;
        if !self.steps.is_multiple_of(self.p.every) {
            return Ok(report);
        }
        self.fill_metric(sys, &state.q);
        for i in 0..self.parts.len() {
            self.run_part(self.parts[i], sys, state, h, &mut report)?;
        }
        Ok(report)
    }
    forward_stepper!(accept, refresh, restart, counters);
    fn reject(&mut self) {
        // A rejected step does not count towards `every`.
        self.steps = self.steps_at_start;
        self.inner.reject();
    }
    fn stats(&self) -> MethodStats {
        let mut s = self.inner.stats();
        for k in std::iter::once(&self.kkt).chain(&self.kkt_start) {
            add_kkt_stats(&mut s, k.stats());
        }
        s.projection_iterations += self.iterations;
        s
    }
}
