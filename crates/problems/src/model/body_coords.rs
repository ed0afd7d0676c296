//! A model in **body coordinates**: every body (fixed joints merged) gets its own
//! reference point — its frame's origin, in world coordinates — and Euler parameters,
//! seven coordinates and one unit-norm row per body; every joint becomes a constraint
//! between its two bodies (P. E. Nikravesh, *Computer-Aided Analysis of Mechanical
//! Systems*, 1988, ch. 6–7; seed 001 §3.12):
//!
//! ```text
//! revolute, continuous   5 rows: the joint centres coincide, the axes stay parallel
//! prismatic              5 rows: the orientations stay, the child's centre stays on the axis
//! spherical              3 rows: the centres coincide
//! floating               none
//! ```
//!
//! It is built as a model of its own — each body on a floating joint from the world, each
//! joint a loop closure of the matching kind — and stepped by the joint-coordinate code
//! ([`super::joint_coords`]), whose floating joints give exactly M(p) = blockdiag of
//! `[m 1, −m R[c]×·2G; ·, 4GᵀĪG]` per body and whose closures give the joint rows with
//! their exact Φ_q and γ. Joint springs, dampers, constant torques and mimics need the
//! joint's own coordinate and are refused here (joint coordinates carry them).

use super::import::description::{
    Closure, ClosureKind, Joint, JointKind, Model, ModelError, Origin,
};
use super::spatial::{axis_angle, cross, matrix_quat, mul, norm, Placement, IDENTITY, V3};
use super::tree::Frames;

/// A rotation taking `e_z` to the unit `axis` (the closure frames put a joint's axis on z).
pub fn z_to(axis: V3) -> super::spatial::M3 {
    let k = cross([0.0, 0.0, 1.0], axis);
    let s = norm(k);
    if s < 1e-12 {
        return if axis[2] > 0.0 {
            IDENTITY
        } else {
            axis_angle([1.0, 0.0, 0.0], std::f64::consts::PI)
        };
    }
    axis_angle([k[0] / s, k[1] / s, k[2] / s], s.atan2(axis[2]))
}

/// Refuse what body (and natural) coordinates cannot state: a joint's spring, damper,
/// constant torque, armature or mimic relation, and a coupling of joint positions.
pub fn refuse_joint_forces(model: &Model, coordinates: &str) -> Result<(), ModelError> {
    if let Some(c) = model.couplings.first() {
        return Err(ModelError::at(
            &model.file,
            &c.origin,
            format!(
                "a coupling of joint positions (`{}`), in {coordinates} coordinates",
                c.name
            ),
            "a coupling acts on the joints' own coordinates: use coordinates = \"joint\"",
        ));
    }
    for j in &model.joints {
        let forced = j.stiffness != 0.0 || j.damping != 0.0 || j.torque != 0.0 || j.armature != 0.0;
        if forced || j.mimic.is_some() {
            return Err(ModelError::at(
                &model.file,
                &j.origin,
                format!("a joint with a {}, in {coordinates} coordinates", if forced { "spring, damper, torque or armature" } else { "mimic relation" }),
                "these act on the joint's own coordinate: use coordinates = \"joint\", or drop them for this comparison (damping = false, mimic = false; springs, torques and armatures from the model file)",
            ));
        }
    }
    Ok(())
}

/// The closure that holds `joint`'s child to its parent.
pub fn joint_closure(j: &Joint) -> Option<Closure> {
    let rz = Placement {
        rot: z_to(j.axis),
        pos: [0.0; 3],
    };
    let (kind, frame_a, frame_b) = match j.kind {
        JointKind::Revolute | JointKind::Continuous => {
            (ClosureKind::Revolute, j.placement.then(&rz), rz)
        }
        JointKind::Prismatic => (ClosureKind::Prismatic, j.placement.then(&rz), rz),
        JointKind::Spherical => (ClosureKind::Ball, j.placement, Placement::IDENTITY),
        JointKind::Fixed => (ClosureKind::Weld, j.placement, Placement::IDENTITY),
        JointKind::Floating => return None,
    };
    Some(Closure {
        name: j.name.clone(),
        kind,
        body_a: j.parent,
        frame_a,
        body_b: Some(j.child),
        frame_b,
        origin: Origin {
            element: format!("joint `{}` as a constraint", j.name),
            line: j.origin.line,
        },
    })
}

/// The body-coordinate model of `merged` (no fixed joints) starting where `frames` (its
/// tree's forward pass at the start) put its bodies.
pub fn body_model(merged: &Model, frames: &Frames) -> Model {
    let mut out = Model {
        name: merged.name.clone(),
        file: merged.file.clone(),
        gravity: merged.gravity,
        bodies: merged.bodies.clone(),
        ..Model::default()
    };
    for (b, body) in merged.bodies.iter().enumerate() {
        let w = frames.world[b];
        let v = frames.vel[b];
        let lin = mul(&w.rot, [v[3], v[4], v[5]]);
        let p = matrix_quat(&w.rot);
        out.joints.push(Joint {
            q0: vec![w.pos[0], w.pos[1], w.pos[2], p[0], p[1], p[2], p[3]],
            v0: vec![lin[0], lin[1], lin[2], v[0], v[1], v[2]],
            ..Joint::floating(
                format!("{}:free", body.name),
                b,
                Placement::IDENTITY,
                body.origin.clone(),
            )
        });
    }
    out.closures = merged.joints.iter().filter_map(joint_closure).collect();
    out.closures.extend(merged.closures.iter().cloned());
    out
}
