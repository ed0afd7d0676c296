//! Where every link's frame is, from a state in any of the three coordinate choices: the
//! quantity the coordinate choices are compared by (one mechanism, one motion, the same
//! link positions) and a user's way to read a result back in terms of the model file.

use super::import::description::Model;
use super::import::merge::{merge_fixed, world_point};
use super::spatial::{quat_matrix, Placement, V3};
use super::tree::{forward, Tree};
use super::{build, ModelParams};
use driftlab_core::ParamError;

/// The links of a model and how a state of its coordinates places them.
pub struct LinkOrigins {
    model: Model,
    merged: Model,
    home: Vec<(Option<usize>, Placement)>,
    coordinates: String,
}

impl LinkOrigins {
    /// For the model and coordinates of `p`.
    pub fn new(p: &ModelParams) -> Result<Self, ParamError> {
        let joint = build(p)?;
        let model = joint.model().clone();
        let m = merge_fixed(&model);
        Ok(Self {
            model,
            merged: m.model,
            home: m.home,
            coordinates: p.coordinates.clone(),
        })
    }

    /// The names of the links, in the model's order.
    pub fn names(&self) -> Vec<&str> {
        self.model.bodies.iter().map(|b| b.name.as_str()).collect()
    }

    /// World position of every link's frame origin at positions `q`.
    pub fn at(&self, q: &[f64]) -> Vec<V3> {
        match self.coordinates.as_str() {
            "joint" => {
                let f = forward(&self.model, &Tree::new(&self.model), q, &vec![0.0; q.len()]);
                f.world.iter().map(|w| w.pos).collect()
            }
            kind => {
                let world: Vec<Placement> = (0..self.merged.bodies.len())
                    .map(|b| body_placement(kind, q, b))
                    .collect();
                self.home
                    .iter()
                    .map(|h| world_point(h, &world, [0.0; 3]))
                    .collect()
            }
        }
    }
}

/// Body `b`'s placement in body (7 per body) or natural (12 per body) coordinates.
fn body_placement(kind: &str, q: &[f64], b: usize) -> Placement {
    if kind == "body" {
        let x = &q[7 * b..7 * b + 7];
        let n = x[3..].iter().map(|e| e * e).sum::<f64>().sqrt();
        let p = [x[3] / n, x[4] / n, x[5] / n, x[6] / n];
        return Placement {
            rot: quat_matrix(&p),
            pos: [x[0], x[1], x[2]],
        };
    }
    let x = &q[12 * b..12 * b + 12];
    Placement {
        rot: std::array::from_fn(|i| [x[3 + i], x[6 + i], x[9 + i]]),
        pos: [x[0], x[1], x[2]],
    }
}
