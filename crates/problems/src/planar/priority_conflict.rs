//! `priority-conflict`: a planar two-link chain (point masses m on rods of length ℓ, first
//! pinned at the origin, gravity) with two constraint groups that **conflict** (seed 001
//! §3.5.3): the rod lengths (priority 0) and "tip at height y* = −depth·ℓ" (priority 1),
//! with depth > 2 so that the tip cannot reach it.
//!
//! ```text
//! Φ₀ = |p₁|² − ℓ²,  Φ₁ = |p₂ − p₁|² − ℓ²     (priority 0)
//! Φ₂ = y₂ − y*                              (priority 1, unreachable for depth > 2)
//! ```
//!
//! A prioritized method keeps Φ₀, Φ₁ at their tolerance while Φ₂ gives way: the best it
//! can do is the straight hanging chain, residual |Φ₂| = (depth − 2)ℓ. A flat least-squares
//! compromise stretches the rods instead. Classical methods, which demand every row, are
//! refused (the DAE has no solution). Released at rest with both links horizontal.
//!
//! With `posture_x = x*` a third level joins, the seed's "auxiliary" priority: the tip's
//! horizontal position, `Φ₃ = x₂ − x*` (priority 2). Level 1 then fixes the tip height,
//! level 2 its abscissa as far as the rods allow: for depth·ℓ < 2ℓ and
//! x*² + depth²ℓ² ≤ 4ℓ² all four rows hold; beyond that reach the tip ends at
//! x₂ = √(4ℓ² − depth²ℓ²), the stretched arm, and |Φ₃| = x* − √(4 − depth²)ℓ.

use crate::entry::{Problem, ProblemEntry};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::Prioritized;
use driftlab_core::{Dims, MechanicalSystem, ProblemInfo, SparsityPattern, State};
use serde::{Deserialize, Serialize};

/// Parameters of [`PriorityConflict`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PriorityConflictParams {
    /// Mass of each point (kg).
    pub m: f64,
    /// Rod length ℓ (m).
    pub length: f64,
    /// Gravity [m/s²].
    pub g: f64,
    /// Target depth of the tip in rod lengths (> 2: unreachable).
    pub depth: f64,
    /// Target abscissa of the tip at priority 2 (none: two levels).
    pub posture_x: Option<f64>,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for PriorityConflictParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            length: 1.0,
            g: 9.81,
            depth: 2.5,
            posture_x: None,
            t_end: 10.0,
        }
    }
}

/// The conflicting two-link chain.
pub struct PriorityConflict {
    p: PriorityConflictParams,
}

/// The catalog id `priority-conflict`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "priority-conflict";

/// Catalog entry `priority-conflict`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "two-link chain whose tip target is unreachable: rod lengths (priority 0) vs tip height (priority 1)",
        build: |t| {
            let p: PriorityConflictParams = params::parse("problem", ID, t)?;
            for (f, v) in [("m", p.m), ("length", p.length), ("g", p.g), ("depth", p.depth), ("t_end", p.t_end)] {
                bounded_positive(ID, f, v)?;
            }
            if let Some(x) = p.posture_x {
                params::finite(ID, "posture_x", x)?;
            }
            Ok(Problem::Mechanical(Box::new(PriorityConflict { p })))
        },
        defaults: params::defaults::<PriorityConflictParams>,
    }
}

impl MechanicalSystem for PriorityConflict {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!("Two-link chain, tip target at depth {}ℓ (reach 2ℓ): conflicting priorities", p.depth),
            equations: "Φ₀ = |p₁|² − ℓ², Φ₁ = |p₂ − p₁|² − ℓ² (priority 0);  Φ₂ = y₂ + depth·ℓ (priority 1);  \
                        best reachable |Φ₂| = (depth − 2)ℓ;  optional Φ₃ = x₂ − x* (priority 2)"
                .into(),
            citation: "seed 001 §3.5.3 (constraint priorities, null-space resolution)".into(),
            tags: vec!["planar".into(), "prioritized".into(), "conflicting".into()],
            index: 3,
            t_end: p.t_end,
            reference: match p.posture_x {
                None => format!("low-priority residual ≥ {} m (unreachable target)", (p.depth - 2.0) * p.length),
                Some(x) => format!(
                    "level 1 best |Φ₂| = {} m; level 2 best |Φ₃| = {} m",
                    ((p.depth - 2.0) * p.length).max(0.0),
                    (x.abs() - (4.0 - p.depth.min(2.0).powi(2)).sqrt() * p.length).max(0.0)
                ),
            },
        }
    }
    fn dims(&self) -> Dims {
        Dims {
            n: 4,
            m: 3 + usize::from(self.p.posture_x.is_some()),
        }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(4)
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = self.p.m);
    }
    fn forces(&self, _t: f64, _q: &[f64], _v: &[f64], out: &mut [f64]) {
        out.copy_from_slice(&[0.0, -self.p.m * self.p.g, 0.0, -self.p.m * self.p.g]);
    }
    fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let l2 = self.p.length * self.p.length;
        out[0] = q[0] * q[0] + q[1] * q[1] - l2;
        out[1] = (q[2] - q[0]).powi(2) + (q[3] - q[1]).powi(2) - l2;
        out[2] = q[3] + self.p.depth * self.p.length;
        if let Some(x) = self.p.posture_x {
            out[3] = q[2] - x;
        }
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        let mut entries = vec![(0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (1, 3), (2, 3)];
        if self.p.posture_x.is_some() {
            entries.push((3, 2));
        }
        SparsityPattern::new(self.dims().m, 4, entries)
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let (dx, dy) = (q[2] - q[0], q[3] - q[1]);
        out[..7].copy_from_slice(&[
            2.0 * q[0],
            2.0 * q[1],
            -2.0 * dx,
            -2.0 * dy,
            2.0 * dx,
            2.0 * dy,
            1.0,
        ]);
        if let Some(last) = out.get_mut(7) {
            *last = 1.0;
        }
    }
    fn curvature(&self, _t: f64, _q: &[f64], v: &[f64], out: &mut [f64]) {
        out[0] = -2.0 * (v[0] * v[0] + v[1] * v[1]);
        out[1] = -2.0 * ((v[2] - v[0]).powi(2) + (v[3] - v[1]).powi(2));
        out[2..].fill(0.0);
    }
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let p = &self.p;
        Some(0.5 * p.m * v.iter().map(|x| x * x).sum::<f64>() + p.m * p.g * (q[1] + q[3]))
    }
    fn energy_scale(&self) -> f64 {
        3.0 * self.p.m * self.p.g * self.p.length
    }
    fn initial_state(&self) -> State {
        let l = self.p.length;
        State::mechanical(0.0, vec![l, 0.0, 2.0 * l, 0.0], vec![0.0; 4], self.dims().m)
    }
    fn prioritized(&self) -> Option<&dyn Prioritized> {
        Some(self)
    }
}

impl Prioritized for PriorityConflict {
    fn priorities(&self) -> Vec<u8> {
        let mut levels = vec![0, 0, 1];
        if self.p.posture_x.is_some() {
            levels.push(2);
        }
        levels
    }
}
