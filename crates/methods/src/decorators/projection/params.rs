//! The projection decorator's parameters (`projection = { … }` in a spec), their
//! validation and the title they give the decorated method.

use super::metric::Metric;
use super::sequential::RowOrder;
use crate::dynamics::KktChoice;
use driftlab_core::prelude::*;
use serde::{Deserialize, Serialize};

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
    /// imposes `A(q) v = p₀` ([`super::momentum`]; dense, small
    /// models). Needs `velocity` and the simultaneous, non-coupled, non-symmetric
    /// projection.
    pub momentum: bool,
    /// How the energy projection is done: `sequential` (velocity scaling after the
    /// constraint projections, default) or `coupled` (seed 004's coupled strategy: one
    /// Newton iteration for q and v together onto {Φ = 0, Φ_q v + Φ_t = 0, H = H₀} in the
    /// metric diag(M, M); dense, for small models). The coupled strategy also works at
    /// turning points (T ≈ 0), where velocity scaling cannot restore H.
    pub energy_strategy: EnergyStrategy,
    /// Symmetric projection (Hairer, BIT 40, 2000; [`super::symmetric`]): the
    /// state is moved off the manifold before the inner step by the same multiple of the
    /// constraint normals that brings it back after the step, so a symmetric inner method
    /// stays symmetric (the standard projection is not). Needs a restartable inner method;
    /// each iteration retakes its step. Excludes `coupled`, `linearized`, `every > 1` and
    /// a step factor.
    pub symmetric: bool,
    /// The order of the constraint rows: `simultaneous` (all at once, default) or one row
    /// at a time, `forward` or `reverse` ([`super::sequential`]; seed 001
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
    pub(super) fn exact_position(&self) -> bool {
        !self.coupled
            && !self.linearized
            && self.every == 1
            && (self.step_factor - 1.0).abs() < f64::EPSILON
    }
}

impl ProjectionParams {
    /// The options that set this projection apart from the default, for the title.
    pub(super) fn title_options(&self) -> Vec<String> {
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
    pub(super) fn equations(&self, inner: &str) -> String {
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
