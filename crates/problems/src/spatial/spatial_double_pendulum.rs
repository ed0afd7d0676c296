//! `spatial-double-pendulum`: two rods in space, the first on a **spherical** joint at the
//! fixed origin, the second hinged to its tip by a **revolute** joint (seed 001 §3.6.1),
//! in natural coordinates with the joint pieces of [`crate::natural`] (the revolute joint
//! written as its 5 equations between bodies with their own coordinates, not by sharing):
//!
//! ```text
//! body 1: O (fixed), P₁, axis u₁:   |P₁ − O|² = ℓ², (P₁ − O)·u₁ = 0, |u₁|² = 1
//! body 2: Q, P₂, axis w:            |P₂ − Q|² = ℓ², (P₂ − Q)·w = 0,  |w|² = 1
//! revolute at P₁:  Q − P₁ = 0 (3 rows),  (u₁ − w) transverse = 0 (2 rows)
//! ```
//!
//! 15 coordinates, 11 rows, 4 degrees of freedom (3 + 1). Each body is a thin plate
//! ℓ × w in the plane of its rod and its axis (mass m/3, m/6, m/3 on the rod ends, m w²/12
//! on the axis vector), gravity −y. Initial state: rod 1 along +x, rod 2 hanging along −y,
//! axes along z, the whole mechanism spinning rigidly about the vertical at Ω (so the
//! velocities are consistent by construction); the motion is then fully three-dimensional.

use crate::entry::{Problem, ProblemEntry};
use crate::natural::{NaturalModel, NaturalSystem};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::ProblemInfo;
use serde::{Deserialize, Serialize};

/// Parameters of the spatial double pendulum.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SpatialDoublePendulumParams {
    /// Mass of each body (kg).
    pub m: f64,
    /// Rod length ℓ (m).
    pub length: f64,
    /// Plate width (along the joint axis) (m).
    pub width: f64,
    /// Gravity along −y [m/s²].
    pub g: f64,
    /// Initial spin about the vertical axis (rad/s).
    pub spin: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for SpatialDoublePendulumParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            length: 1.0,
            width: 0.2,
            g: 9.81,
            spin: 2.0,
            t_end: 10.0,
        }
    }
}

/// The catalog id `spatial-double-pendulum`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "spatial-double-pendulum";

/// Catalog entry `spatial-double-pendulum`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "two bodies in space: spherical joint to ground, revolute joint between them (natural coordinates)",
        build: |t| {
            let p: SpatialDoublePendulumParams = params::parse("problem", ID, t)?;
            for (f, v) in [("m", p.m), ("length", p.length), ("width", p.width), ("g", p.g), ("t_end", p.t_end)] {
                bounded_positive(ID, f, v)?;
            }
            params::finite(ID, "spin", p.spin)?;
            let l = p.length;
            let mut md = NaturalModel::default();
            let o = md.fixed_node([0.0; 3]);
            let p1 = md.free_node([l, 0.0, 0.0]);
            let u1 = md.free_node([0.0, 0.0, 1.0]);
            let q = md.free_node([l, 0.0, 0.0]);
            let w = md.free_node([0.0, 0.0, 1.0]);
            let p2 = md.free_node([l, -l, 0.0]);
            let gravity = [0.0, -p.g, 0.0];
            md.unit(u1, "|u₁|");
            md.rigid_rod(o, p1, &[u1], p.m, p.width, gravity, "body 1");
            md.unit(w, "|w|");
            md.rigid_rod(q, p2, &[w], p.m, p.width, gravity, "body 2");
            md.revolute(p1, q, u1, w, "revolute");
            // Rigid spin about ŷ: v = Ω × r = (Ω z, 0, −Ω x) for points and vectors alike.
            let v0 = md
                .q0()
                .chunks(3)
                .flat_map(|r| [p.spin * r[2], 0.0, -p.spin * r[0]])
                .collect();
            Ok(Problem::Mechanical(Box::new(NaturalSystem::new(md, info(&p), v0, p.m * p.g * p.length))))
        },
        defaults: params::defaults::<SpatialDoublePendulumParams>,
    }
}

fn info(p: &SpatialDoublePendulumParams) -> ProblemInfo {
    ProblemInfo {
        id: ID.into(),
        title: format!("Spatial double pendulum (spherical + revolute), m = {}, ℓ = {}, spin {} rad/s", p.m, p.length, p.spin),
        equations: "natural coordinates (P₁, u₁, Q, w, P₂): rigid-body rows |d|², d·u, |u|² per body; revolute joint \
                    Q − P₁ = 0 and (u₁ − w)·e_k = 0 on the two transverse axes: 11 rows, 4 DOF; constant M; gravity −y"
            .into(),
        citation: "seed 001 §3.6.1 (spatial joints in natural coordinates); J. García de Jalón & E. Bayo, Kinematic and \
                   Dynamic Simulation of Multibody Systems (1994), ch. 3"
            .into(),
        tags: vec!["spatial".into(), "conservative".into(), "index-3".into()],
        index: 3,
        t_end: p.t_end,
        reference: "none (chaotic); energy is conserved".into(),
    }
}
