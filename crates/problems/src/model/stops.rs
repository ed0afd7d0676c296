//! Joint limits as **unilateral rows** in joint coordinates (`limits = "enforce"`; seed 001
//! §3.6.1), enforced by the catalog's LCP method (`moreau-jean`) with Newton's impact law:
//!
//! ```text
//! lower stop   g = q_i − lower ≥ 0,    G = +e_iᵀ
//! upper stop   g = upper − q_i ≥ 0,    G = −e_iᵀ
//! 0 ≤ P ⊥ g ≥ 0,   at an impact  ġ⁺ = −e ġ⁻   (e = `restitution`)
//! ```
//!
//! Every revolute and prismatic joint whose file gives `lower < upper` has its two stops.
//! A zero range (`lower = upper`, as example-robot-data's double pendulum writes it for a
//! joint meant to be free) states no stop; continuous, spherical and floating joints have
//! none. In body and natural coordinates a joint angle is a nonlinear function of two
//! bodies' coordinates; those layouts refuse `limits = "enforce"`.

use super::import::description::{JointKind, Model};
use super::tree::Tree;
use driftlab_core::Unilateral;

/// One stop: `g = sign · (q[coordinate] − bound) ≥ 0`.
#[derive(Clone, Debug, PartialEq)]
pub struct Stop {
    /// Index of the joint's coordinate in q.
    pub coordinate: usize,
    /// +1 for a lower stop, −1 for an upper one.
    pub sign: f64,
    /// The limit.
    pub bound: f64,
    /// `JOINT.lower` or `JOINT.upper`.
    pub name: String,
}

/// The stops of every limited 1-coordinate joint, lower before upper, in document order
/// (an unbounded side has none).
pub fn stops_of(model: &Model, tree: &Tree) -> Vec<Stop> {
    let mut out = Vec::new();
    for (j, joint) in model.joints.iter().enumerate() {
        let limited = matches!(joint.kind, JointKind::Revolute | JointKind::Prismatic);
        let Some(l) = joint.limits.filter(|l| limited && l.lower < l.upper) else {
            continue;
        };
        for (sign, bound, side) in [(1.0, l.lower, "lower"), (-1.0, l.upper, "upper")] {
            if !bound.is_finite() {
                continue; // a one-sided limit (SDF's default ±1e16 read as unbounded)
            }
            out.push(Stop {
                coordinate: tree.offset[j],
                sign,
                bound,
                name: format!("{}.{side}", joint.name),
            });
        }
    }
    out
}

/// The stops of a model with their restitution: the [`Unilateral`] capability of the
/// joint-coordinate layout.
#[derive(Clone, Debug, PartialEq)]
pub struct Stops {
    /// The rows.
    pub rows: Vec<Stop>,
    /// Coefficient of restitution e ∈ [0, 1].
    pub restitution: f64,
    /// Number of coordinates n.
    pub n: usize,
}

impl Stops {
    /// The first stop that `q` violates by more than `tol`, with its gap.
    pub fn violated(&self, q: &[f64], tol: f64) -> Option<(&Stop, f64)> {
        self.rows
            .iter()
            .map(|s| (s, s.sign * (q[s.coordinate] - s.bound)))
            .find(|(_, g)| *g < -tol || g.is_nan())
    }
}

impl Unilateral for Stops {
    fn rows(&self) -> usize {
        self.rows.len()
    }
    fn gaps(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        for (o, s) in out.iter_mut().zip(&self.rows) {
            *o = s.sign * (q[s.coordinate] - s.bound);
        }
    }
    fn gap_jacobian(&self, _t: f64, _q: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for (r, s) in self.rows.iter().enumerate() {
            out[r * self.n + s.coordinate] = s.sign;
        }
    }
    fn restitution(&self) -> f64 {
        self.restitution
    }
}
