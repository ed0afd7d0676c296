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
//! after the step ([`symmetric`]); a symmetric inner method stays
//! symmetric, and the decorator's `symmetric` flag says so (standard projection: only when
//! the inner method already ends on both manifolds).
//!
//! Projection onto the exact solution manifold keeps the order of the underlying one-step
//! method (Hairer, Lubich & Wanner, Geometric Numerical Integration, 2nd ed., §IV.4;
//! Hairer & Wanner, Solving ODEs II, §VII.2), so the declared orders are the inner
//! method's.

mod coupled;
pub mod metric;
pub mod momentum;
pub mod params;
pub mod sequential;
mod stepper;
pub mod symmetric;

pub use coupled::coupled_energy_projection;
pub use metric::Metric;
pub use params::{EnergyStrategy, ProjectionParams, MAX_COUPLED_DENSE};

use crate::dynamics::linear_error;
use driftlab_core::prelude::*;
use driftlab_solver::KktSolver;
use sequential::{MetricInverse, RowOrder};
use stepper::{initial_momenta, projection_kkt, Part, ProjectedStepper};

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
