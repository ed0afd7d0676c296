//! `bricard`: Bricard's overconstrained 6R mechanism (IFToMM / A Coruña benchmark A04):
//! five rods of length 1 m and mass 1 kg (square section 0.1 m) and the ground closed by six
//! revolute joints, gravity −y, released at rest. Grübler's count gives 0 degrees of
//! freedom; the special axis arrangement leaves 1 — the constraint Jacobian is rank
//! deficient **everywhere** (24 rows, rank 23), so the multipliers are not unique and
//! a plain KKT solve is singular (seed 001 §3.11 pitfall 2: redundant constraints).
//!
//! Natural coordinates ([`crate::natural`]): joint points P₀ … P₅ on six edges of a unit
//! cube, P₀ = (0,0,0), P₁ = (1,0,0), P₂ = (1,−1,0), P₃ = (1,−1,1), P₄ = (0,−1,1),
//! P₅ = (0,0,1) (P₀, P₅ fixed), and joint axes u₀ … u₅ (u₀, u₅ fixed), each perpendicular
//! to both rods it joins: u₀ = ŷ, u₁ = ẑ, u₂ = x̂, u₃ = ŷ, u₄ = ẑ, u₅ = x̂. Rod k is the
//! body (P_{k−1}, P_k, u_{k−1}, u_k): adjacent rods share a point and an axis, which is
//! the revolute joint. Rows per rod: |d|² = 1, d·u_{k−1} = 0, d·u_k = 0, u_{k−1}·u_k = 0;
//! plus |u_i|² = 1 for the four free axes: 24 rows on 24 coordinates.
//!
//! Geometry as in the benchmark's published models (the A04 specification figure, e.g.
//! the simEngine3D and OpenSim ports); the reference history of P₃ was not obtainable, so
//! energy conservation and the residuals are the checks.

use crate::entry::{Problem, ProblemEntry};
use crate::natural::{NaturalModel, NaturalSystem, Node};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::ProblemInfo;
use serde::{Deserialize, Serialize};

/// Parameters of the Bricard mechanism.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BricardParams {
    /// Rod mass (kg).
    pub m: f64,
    /// Width of the square cross-section (m).
    pub width: f64,
    /// Gravity along −y [m/s²].
    pub g: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for BricardParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            width: 0.1,
            g: 9.81,
            t_end: 10.0,
        }
    }
}

/// The natural-coordinate model of the Bricard mechanism.
pub fn model(p: &BricardParams) -> NaturalModel {
    let mut md = NaturalModel::default();
    let pts = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, -1.0, 0.0],
        [1.0, -1.0, 1.0],
        [0.0, -1.0, 1.0],
        [0.0, 0.0, 1.0],
    ];
    let axes = [
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 0.0, 0.0],
    ];
    let mut p_nodes: Vec<Node> = Vec::new();
    let mut u_nodes: Vec<Node> = Vec::new();
    for k in 0..6 {
        let fixed = k == 0 || k == 5;
        p_nodes.push(if fixed {
            md.fixed_node(pts[k])
        } else {
            md.free_node(pts[k])
        });
    }
    for k in 0..6 {
        let fixed = k == 0 || k == 5;
        u_nodes.push(if fixed {
            md.fixed_node(axes[k])
        } else {
            md.free_node(axes[k])
        });
    }
    for k in 1..5 {
        md.unit(u_nodes[k], &format!("|u{k}|"));
    }
    for k in 1..6 {
        md.rigid_rod(
            p_nodes[k - 1],
            p_nodes[k],
            &[u_nodes[k - 1], u_nodes[k]],
            p.m,
            p.width,
            [0.0, -p.g, 0.0],
            &format!("rod {k}"),
        );
    }
    md
}

/// The catalog id `bricard`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "bricard";

/// Catalog entry `bricard`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "IFToMM A04 Bricard 6R mechanism: redundant constraints, rank Φ_q = 23 of 24 rows, 1 DOF",
        build: |t| {
            let p: BricardParams = params::parse("problem", ID, t)?;
            for (f, v) in [("m", p.m), ("width", p.width), ("g", p.g), ("t_end", p.t_end)] {
                bounded_positive(ID, f, v)?;
            }
            let md = model(&p);
            let n = md.n();
            Ok(Problem::Mechanical(Box::new(NaturalSystem::new(md, info(&p), vec![0.0; n], 5.0 * p.m * p.g))))
        },
        defaults: params::defaults::<BricardParams>,
    }
}

fn info(p: &BricardParams) -> ProblemInfo {
    ProblemInfo {
        id: ID.into(),
        title: format!("Bricard mechanism (IFToMM A04): five 1 m rods of {} kg, six revolute joints, released at rest", p.m),
        equations: "natural coordinates: points P₁…P₄ and joint axes u₁…u₄ (24 coordinates); per rod |d|² = 1, d·u_a = d·u_b = 0, \
                    u_a·u_b = 0, and |u_i|² = 1: 24 rows of rank 23 (Grübler 0 DOF, actual 1); constant M; gravity −y"
            .into(),
        citation: "IFToMM / Univ. A Coruña MBS benchmark library, problem A04 (datasets/iftomm_udc_mbs_benchmark_specs.json); \
                   R. Bricard (1897); natural coordinates: García de Jalón & Bayo (1994); seed 001 §3.11 pitfall 2"
            .into(),
        tags: vec!["spatial".into(), "closed-loop".into(), "redundant".into(), "conservative".into(), "index-3".into()],
        index: 3,
        t_end: p.t_end,
        reference: "none obtainable (A04 reference file); energy is conserved".into(),
    }
}
