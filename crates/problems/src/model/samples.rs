//! The joint-space dynamics of a model at random states, as data another code can
//! recompute: the cross-check against Pinocchio (`scripts/pinocchio-check.sh`) reads
//! these samples, evaluates `crba` and `aba` (or `constraintDynamics` for a model with
//! loops) at the same states, and compares.
//!
//! Per state: `q`, `q̇` (this crate's conventions: Euler parameters `(e₀, e₁, e₂, e₃)`,
//! a floating joint's position in its parent frame and `q̇` = the coordinates' rates),
//! the tree's mass matrix `M(q)` by CRBA *without* the Euler-parameter regularization
//! (so that `q̇ᵀMq̇` is the kinetic energy), and the acceleration `q̈` of the DAE with
//! every row of the model (unit norms, mimics, loop closures) from its KKT system with
//! zero joint torques.

use super::description::JointKind;
use super::{build, random_pose, start_of, ModelParams};
use crate::consistency::accelerations;
use driftlab_core::{MechanicalSystem, ParamError};
use serde::Serialize;

/// One joint of the layout.
#[derive(Serialize)]
pub struct JointLayout {
    /// Its name in the model file.
    pub name: String,
    /// `revolute`, `prismatic`, … .
    pub kind: &'static str,
    /// Offset of its coordinates in q.
    pub offset: usize,
    /// Number of coordinates.
    pub nq: usize,
}

/// One sampled state.
#[derive(Serialize)]
pub struct Sample {
    /// Positions.
    pub q: Vec<f64>,
    /// Velocities (`q̇`).
    pub v: Vec<f64>,
    /// `M(q)`, row-major, n × n.
    pub mass: Vec<f64>,
    /// `q̈` of the constrained system at zero torques.
    pub acceleration: Vec<f64>,
    /// The multipliers.
    pub lambda: Vec<f64>,
}

/// The samples and what they are.
#[derive(Serialize)]
pub struct Samples {
    /// The model file (or `robots/<file>` for a shipped robot).
    pub file: String,
    /// `fixed` or `floating`.
    pub root: String,
    /// Gravity.
    pub gravity: [f64; 3],
    /// The joints, document order.
    pub joints: Vec<JointLayout>,
    /// The constraint rows' kinds.
    pub rows: Vec<&'static str>,
    /// The states.
    pub samples: Vec<Sample>,
}

/// `states` random states of `p`'s model (poses as `pose_seed` draws them, seeds
/// `seed, seed + 1, …`; joint rates uniform in (−1, 1), body rates for Euler parameters),
/// projected onto the model's rows.
pub fn sample(p: &ModelParams, states: usize, seed: u64) -> Result<Samples, ParamError> {
    let base = build(p)?;
    let model = base.model().clone();
    let mut out = Samples {
        file: model.file.clone(),
        root: p.root.clone(),
        gravity: model.gravity,
        joints: Vec::new(),
        rows: base.row_kinds(),
        samples: Vec::with_capacity(states),
    };
    let mut offset = 0;
    for j in &model.joints {
        out.joints.push(JointLayout {
            name: j.name.clone(),
            kind: j.kind.name(),
            offset,
            nq: j.kind.nq(),
        });
        offset += j.kind.nq();
    }
    for k in 0..states {
        let s = seed.wrapping_add(k as u64).max(1);
        let mut m = model.clone();
        random_pose(&mut m, s);
        let mut rate = s.wrapping_mul(0x2545_f491_4f6c_dd1d);
        for j in &mut m.joints {
            if j.kind != JointKind::Fixed {
                j.v0.iter_mut()
                    .for_each(|x| *x = 2.0 * super::uniform(&mut rate) - 1.0);
            }
        }
        let (q0, v0) = start_of(&m);
        let mut sys =
            super::joint_coords::JointCoordinates::new(m, q0, v0, p.t_end, String::new(), "joint");
        super::project_onto_closures(&mut sys)?;
        let st = sys.initial_state();
        let (a, lambda) = accelerations(&sys, 0.0, &st.q, &st.v)
            .map_err(|e| super::invalid(format!("sample {k}: the KKT solve failed: {e}")))?;
        out.samples.push(Sample {
            mass: sys.tree_mass(&st.q),
            q: st.q,
            v: st.v,
            acceleration: a,
            lambda,
        });
    }
    Ok(out)
}
