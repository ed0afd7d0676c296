//! The projection decorator bound to its system: the inner method's step, then the
//! projections in order ([`Part`]), with their work buffers.

use super::coupled::coupled_energy_projection;
use super::metric::{fill_metric, projection_error, Metric};
use super::params::{EnergyStrategy, ProjectionParams};
use super::sequential::{project_sequentially, MetricInverse, RowOrder, Sweeps};
use super::symmetric::{symmetric_step, SymmetricSettings};
use crate::dynamics::{add_kkt_stats, linear_error, ConstraintsAt};
use driftlab_core::prelude::*;
use driftlab_solver::{project_position, project_velocity, KktPattern, KktSolver, SolverError};

/// One part of a projection step. The parameters choose the parts once
/// ([`Part::sequence`]); a step runs them in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part {
    /// Coupled projection: one system for Δv removing the position error over the step
    /// (instead of the position and velocity parts).
    Coupled,
    /// Symmetric projection of position and velocity around the inner step
    /// ([`super::symmetric`]); it takes the inner step itself.
    Symmetric,
    /// Position and velocity one row at a time ([`super::sequential`]).
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
    pub(super) fn sequence(p: &ProjectionParams) -> Vec<Part> {
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

/// [`Projected`] bound to its system: the inner stepper and the projections' work.
pub(super) struct ProjectedStepper<'s> {
    pub(super) sys: &'s dyn MechanicalSystem,
    pub(super) inner: Box<dyn Stepper + 's>,
    pub(super) p: ProjectionParams,
    pub(super) parts: Vec<Part>,
    pub(super) kkt: KktSolver,
    /// The factorization at the start of the step (symmetric projection only).
    pub(super) kkt_start: Option<KktSolver>,
    /// `W⁻¹` for the row-by-row projection (sequential order only).
    pub(super) row_metric: Option<MetricInverse>,
    pub(super) n_mass: usize,
    /// Values of the metric block `[M entries…, I diagonal…]` (one of the two zero).
    pub(super) metric_vals: Vec<f64>,
    /// Values `[M entries…, 0…]` for the acceleration level.
    pub(super) mass_vals: Vec<f64>,
    pub(super) iterations: usize,
    /// Steps taken (for `every`), and their number before the step in progress.
    pub(super) steps: usize,
    pub(super) steps_at_start: usize,
    pub(super) h0: Option<f64>,
    /// The conserved momenta at the start (`momentum = true`).
    pub(super) p0: Option<Vec<f64>>,
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
                    super::momentum::project_momenta(s, state, p0, self.p.metric)?;
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
pub(super) fn initial_momenta(
    s: &dyn MechanicalSystem, state: &State,
) -> Result<Vec<f64>, MethodError> {
    use super::momentum::{momentum_matrix, MAX_DENSE};
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

/// The KKT layout `[[M + I, Φ_qᵀ], [Φ_q, 0]]` (mass entries, then the diagonal, so one
/// pattern serves both metrics) and its solver.
pub(super) fn projection_kkt(
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
    pub(super) fn consistent_start(&mut self, state: &mut State) -> Result<(), MethodError> {
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
    fn inner(&self) -> Option<&dyn Stepper> {
        Some(self.inner.as_ref())
    }
    fn inner_mut(&mut self) -> Option<&mut dyn Stepper> {
        Some(self.inner.as_mut())
    }
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
