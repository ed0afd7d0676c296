//! The TOML model file: driftlab's own description, the one place where loop closures,
//! springs, constant torques and initial states are written by hand. Its reference is
//! `docs/model-file.md` (checked against this reader by `tests/model_files.rs`):
//!
//! ```toml
//! name = "four-bar"
//! gravity = [0.0, -9.81, 0.0]            # default (0, 0, −9.81)
//!
//! [[bodies]]
//! name = "crank"
//! mass = 1.0
//! com = [0.5, 0.0, 0.0]                  # centre of mass, body frame (default 0)
//! inertia = { ixx = 1e-3, iyy = 0.0837, izz = 0.0837 }   # about the com; ixy, ixz, iyz default 0
//!
//! [[joints]]
//! name = "crank-pin"
//! type = "revolute"                      # revolute continuous prismatic fixed spherical floating
//! parent = "world"                       # a body, or "world"
//! child = "crank"
//! xyz = [0.0, 0.0, 0.0]                  # joint frame in the parent (default 0)
//! rpy = [0.0, 0.0, 0.0]                  # fixed-axis roll, pitch, yaw (default 0)
//! axis = [0.0, 0.0, 1.0]                 # required for revolute, continuous, prismatic
//! q0 = 0.3                               # or a list (spherical: w x y z; floating: x y z w ex ey ez)
//! v0 = 0.0                               # or a list (spherical: ω body; floating: v then ω)
//! limits = { lower = -1.0, upper = 1.0 } # optional: effort, velocity
//! stiffness = 0.0                        # τ = −k(q − rest) − d q̇ + torque
//! rest = 0.0
//! damping = 0.0
//! torque = 0.0
//! mimic = { joint = "other", multiplier = 1.0, offset = 0.0 }   # optional
//!
//! [[loops]]
//! name = "coupler-rocker"
//! type = "ball"                          # ball (3 rows), revolute (5: z axes aligned), prismatic (5: b slides along a's z), weld (6)
//! body_a = "coupler"                     # a body, or "world"
//! xyz_a = [1.0, 0.0, 0.0]                # the frame on body a (rpy_a: its orientation)
//! body_b = "rocker"
//! xyz_b = [0.5, 0.0, 0.0]
//! ```

use super::super::spatial::{rpy, Inertia, Placement, V3};
use super::check::unit_axis;
use super::description::{
    default_q0, default_v0, Body, Closure, ClosureKind, Joint, JointKind, Limits, Mimic, Model,
    ModelError, Origin,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: Option<String>,
    gravity: Option<V3>,
    #[serde(default)]
    bodies: Vec<BodyEntry>,
    #[serde(default)]
    joints: Vec<JointEntry>,
    #[serde(default)]
    loops: Vec<LoopEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BodyEntry {
    name: String,
    mass: f64,
    #[serde(default)]
    com: V3,
    inertia: InertiaEntry,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InertiaEntry {
    ixx: f64,
    iyy: f64,
    izz: f64,
    #[serde(default)]
    ixy: f64,
    #[serde(default)]
    ixz: f64,
    #[serde(default)]
    iyz: f64,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Values {
    One(f64),
    Many(Vec<f64>),
}

impl Values {
    fn list(self) -> Vec<f64> {
        match self {
            Values::One(x) => vec![x],
            Values::Many(v) => v,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsEntry {
    lower: f64,
    upper: f64,
    effort: Option<f64>,
    velocity: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MimicEntry {
    joint: String,
    #[serde(default = "one")]
    multiplier: f64,
    #[serde(default)]
    offset: f64,
}

fn one() -> f64 {
    1.0
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JointEntry {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    parent: String,
    child: String,
    #[serde(default)]
    xyz: V3,
    #[serde(default)]
    rpy: V3,
    axis: Option<V3>,
    q0: Option<Values>,
    v0: Option<Values>,
    limits: Option<LimitsEntry>,
    #[serde(default)]
    stiffness: f64,
    #[serde(default)]
    rest: f64,
    #[serde(default)]
    damping: f64,
    #[serde(default)]
    torque: f64,
    mimic: Option<MimicEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoopEntry {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    body_a: String,
    #[serde(default)]
    xyz_a: V3,
    #[serde(default)]
    rpy_a: V3,
    body_b: String,
    #[serde(default)]
    xyz_b: V3,
    #[serde(default)]
    rpy_b: V3,
}

/// Read a TOML model.
pub fn read(file: &str, text: &str) -> Result<Model, ModelError> {
    let parsed: File = toml::from_str(text).map_err(|e| {
        ModelError::at(
            file,
            &Origin::default(),
            format!(
                "not a driftlab model: {}",
                e.to_string().trim().replace('\n', " ")
            ),
            "see docs/model-file.md for the fields of [[bodies]], [[joints]] and [[loops]]",
        )
    })?;
    super::check::size(
        file,
        &Origin {
            element: "the model".into(),
            line: None,
        },
        parsed.bodies.len(),
        parsed.joints.len() + parsed.loops.len(),
    )?;
    let mut model = Model {
        name: parsed.name.unwrap_or_else(|| "model".into()),
        file: file.to_string(),
        gravity: parsed.gravity.unwrap_or([0.0, 0.0, -9.81]),
        ..Model::default()
    };
    for b in parsed.bodies {
        model.bodies.push(body(b));
    }
    for (k, j) in parsed.joints.into_iter().enumerate() {
        let joint = joint(file, &model, k, j)?;
        model.joints.push(joint);
    }
    for (k, l) in parsed.loops.into_iter().enumerate() {
        let closure = closure(file, &model, k, l)?;
        model.closures.push(closure);
    }
    Ok(model)
}

fn body(b: BodyEntry) -> Body {
    let i = &b.inertia;
    Body {
        origin: Origin {
            element: format!("[[bodies]] \"{}\"", b.name),
            line: None,
        },
        inertia: Inertia {
            mass: b.mass,
            com: b.com,
            rot: [
                [i.ixx, i.ixy, i.ixz],
                [i.ixy, i.iyy, i.iyz],
                [i.ixz, i.iyz, i.izz],
            ],
        },
        name: b.name,
    }
}

fn body_ref(
    file: &str, model: &Model, at: &Origin, field: &str, name: &str,
) -> Result<Option<usize>, ModelError> {
    if name == "world" {
        return Ok(None);
    }
    model.body(name).map(Some).ok_or_else(|| {
        ModelError::at(
            file,
            at,
            format!("{field} = \"{name}\" names no body"),
            "name a [[bodies]] entry, or \"world\"",
        )
    })
}

fn joint_kind(file: &str, at: &Origin, kind: &str) -> Result<JointKind, ModelError> {
    Ok(match kind {
        "revolute" => JointKind::Revolute,
        "continuous" => JointKind::Continuous,
        "prismatic" => JointKind::Prismatic,
        "fixed" => JointKind::Fixed,
        "spherical" => JointKind::Spherical,
        "floating" => JointKind::Floating,
        other => {
            return Err(ModelError::at(
                file,
                at,
                format!("type = \"{other}\" is not a joint type"),
                "give revolute, continuous, prismatic, fixed, spherical or floating",
            ))
        }
    })
}

fn joint(file: &str, model: &Model, k: usize, j: JointEntry) -> Result<Joint, ModelError> {
    let at = Origin {
        element: format!("[[joints]] #{} \"{}\"", k + 1, j.name),
        line: None,
    };
    let kind = joint_kind(file, &at, &j.kind)?;
    let parent = body_ref(file, model, &at, "parent", &j.parent)?;
    let child = body_ref(file, model, &at, "child", &j.child)?.ok_or_else(|| {
        ModelError::at(
            file,
            &at,
            "child = \"world\"",
            "the world can only be a parent",
        )
    })?;
    let axis = match (kind.has_axis(), j.axis) {
        (true, Some(a)) => unit_axis(file, &at, a)?,
        (true, None) => {
            return Err(ModelError::at(
                file,
                &at,
                format!("a {} joint without `axis`", kind.name()),
                "give axis = [x, y, z]",
            ))
        }
        (false, _) => [1.0, 0.0, 0.0],
    };
    Ok(Joint {
        name: j.name,
        kind,
        parent,
        child,
        placement: Placement {
            rot: rpy(j.rpy),
            pos: j.xyz,
        },
        axis,
        limits: j.limits.map(|l| Limits {
            lower: l.lower,
            upper: l.upper,
            effort: l.effort.unwrap_or(f64::INFINITY),
            velocity: l.velocity.unwrap_or(f64::INFINITY),
        }),
        stiffness: j.stiffness,
        rest: j.rest,
        damping: j.damping,
        torque: j.torque,
        armature: 0.0,
        mimic: j.mimic.map(|m| Mimic {
            leader: m.joint,
            multiplier: m.multiplier,
            offset: m.offset,
        }),
        q0: j.q0.map(Values::list).unwrap_or_else(|| default_q0(kind)),
        v0: j.v0.map(Values::list).unwrap_or_else(|| default_v0(kind)),
        origin: at,
    })
}

fn closure(file: &str, model: &Model, k: usize, l: LoopEntry) -> Result<Closure, ModelError> {
    let at = Origin {
        element: format!("[[loops]] #{} \"{}\"", k + 1, l.name),
        line: None,
    };
    let kind = match l.kind.as_str() {
        "ball" => ClosureKind::Ball,
        "revolute" => ClosureKind::Revolute,
        "weld" => ClosureKind::Weld,
        "prismatic" => ClosureKind::Prismatic,
        other => {
            return Err(ModelError::at(
                file,
                &at,
                format!("type = \"{other}\" is not a loop closure"),
                "give ball, revolute, prismatic or weld",
            ))
        }
    };
    Ok(Closure {
        kind,
        body_a: body_ref(file, model, &at, "body_a", &l.body_a)?,
        frame_a: Placement::from_xyz_rpy(l.xyz_a, l.rpy_a),
        body_b: body_ref(file, model, &at, "body_b", &l.body_b)?,
        frame_b: Placement::from_xyz_rpy(l.xyz_b, l.rpy_b),
        name: l.name,
        origin: at,
    })
}
