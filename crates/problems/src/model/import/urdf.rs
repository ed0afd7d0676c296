//! URDF import (the ROS Unified Robot Description Format, <http://wiki.ros.org/urdf/XML>):
//! links with `<inertial>` (origin xyz/rpy, mass, inertia about the centre of mass in the
//! inertial frame), joints with origin, parent, child, axis (default `1 0 0`, as the
//! specification says), limit, dynamics (damping; Coulomb friction is not modelled and is
//! listed when given) and mimic. `<visual>`, `<collision>`, `<material>`, `<gazebo>` and
//! `<transmission>` are skipped as the specification's non-dynamic parts; every element and
//! attribute the reader walks is held to the specification (`xml.rs`, `Xml::check`):
//! typos and duplicates are refused with their line, vendor extensions skipped and listed.
//! A link named `world` without an inertial is the world frame (the ROS convention);
//! otherwise the root link is the base, welded to the world or, with `root = "floating"`,
//! attached by a floating joint (as Pinocchio's `buildModel(file, JointModelFreeFlyer())`).
//! A `<mimic>` on a fixed joint, or naming a joint the file lacks, is dropped with a note:
//! the joint moves on its own, as Pinocchio reads a URDF by default (`mimic = false`).

use super::super::spatial::{matmul, rpy, transpose, Inertia, Placement};
use super::check::unit_axis;
use super::description::{
    default_q0, default_v0, Body, Joint, JointKind, Limits, Mimic, Model, ModelError,
};
use super::xml::{self, child, elements, Shape, Xml};
use roxmltree::Node;
use std::collections::HashMap;

/// How the base is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// Welded to the world.
    Fixed,
    /// A floating joint from the world.
    Floating,
}

const ROBOT: Shape = Shape {
    tag: "robot",
    attrs: &["name", "version"],
    once: &[],
    many: &["link", "joint", "material", "gazebo", "transmission"],
};
const LINK: Shape = Shape {
    tag: "link",
    attrs: &["name"],
    once: &["inertial"],
    many: &["visual", "collision"],
};
const INERTIAL: Shape = Shape {
    tag: "inertial",
    attrs: &[],
    once: &["origin", "mass", "inertia"],
    many: &[],
};
const ORIGIN: Shape = leaf("origin", &["xyz", "rpy"]);
const MASS: Shape = leaf("mass", &["value"]);
const INERTIA: Shape = leaf("inertia", &["ixx", "ixy", "ixz", "iyy", "iyz", "izz"]);
const JOINT: Shape = Shape {
    tag: "joint",
    attrs: &["name", "type"],
    once: &[
        "origin",
        "parent",
        "child",
        "axis",
        "calibration",
        "dynamics",
        "limit",
        "mimic",
        "safety_controller",
    ],
    many: &[],
};
const PARENT: Shape = leaf("parent", &["link"]);
const CHILD: Shape = leaf("child", &["link"]);
const AXIS: Shape = leaf("axis", &["xyz"]);
const CALIBRATION: Shape = leaf("calibration", &["rising", "falling"]);
const DYNAMICS: Shape = leaf("dynamics", &["damping", "friction"]);
const LIMIT: Shape = leaf("limit", &["lower", "upper", "effort", "velocity"]);
const MIMIC: Shape = leaf("mimic", &["joint", "multiplier", "offset"]);
const SAFETY: Shape = leaf(
    "safety_controller",
    &[
        "soft_lower_limit",
        "soft_upper_limit",
        "k_position",
        "k_velocity",
    ],
);

const fn leaf(tag: &'static str, attrs: &'static [&'static str]) -> Shape {
    Shape {
        tag,
        attrs,
        once: &[],
        many: &[],
    }
}

/// Read a URDF document.
pub fn read(file: &str, text: &str, root: Root) -> Result<Model, ModelError> {
    let doc = xml::parse(file, text)?;
    let x = Xml::new(file, &doc, "URDF");
    let robot = x.root(
        "robot",
        "a URDF file has <robot> as its root element (an SDF file needs the extension .sdf, an MJCF file is not read)",
    )?;
    x.check(robot, &ROBOT)?;
    let name = robot.attribute("name").unwrap_or_default();
    if name.is_empty() {
        x.note(
            robot,
            "<robot> has no name (the specification requires one): called `robot`",
        );
    }
    let mut model = Model {
        name: if name.is_empty() { "robot" } else { name }.to_string(),
        file: file.to_string(),
        gravity: [0.0, 0.0, -9.81],
        ..Model::default()
    };
    let count = |tag: &str| elements(robot).filter(|n| xml::is(*n, tag)).count();
    super::check::size(file, &x.origin(robot), count("link"), count("joint"))?;
    let mut world_link = false;
    let mut index: HashMap<&str, usize> = HashMap::new();
    for link in elements(robot).filter(|n| xml::is(*n, "link")) {
        let name = x.required(link, "name")?;
        if name == "world" && child(link, "inertial").is_none() {
            x.check(link, &LINK)?;
            world_link = true;
            continue;
        }
        index.entry(name).or_insert(model.bodies.len());
        model.bodies.push(body(&x, link, name)?);
    }
    for j in elements(robot).filter(|n| xml::is(*n, "joint")) {
        model.joints.push(joint(&x, j, &index, world_link)?);
    }
    drop_dangling_mimics(&x, robot, &mut model);
    if root == Root::Floating {
        attach_floating(&x, robot, &mut model)?;
    }
    model.notes = x.into_notes();
    Ok(model)
}

fn body(x: &Xml, link: Node, name: &str) -> Result<Body, ModelError> {
    x.check(link, &LINK)?;
    let mut inertia = Inertia::default();
    if let Some(i) = child(link, "inertial") {
        x.check(i, &INERTIAL)?;
        let frame = placement(x, child(i, "origin"))?;
        let m = child(i, "mass").ok_or_else(|| missing(x, i, "mass"))?;
        x.check(m, &MASS)?;
        let mass = x.number(m, "value", x.required(m, "value")?)?;
        if mass < 0.0 {
            return Err(x.err(m, format!("mass {mass} < 0"), "give a positive mass"));
        }
        let t = child(i, "inertia").ok_or_else(|| missing(x, i, "inertia"))?;
        x.check(t, &INERTIA)?;
        let mut v = [0.0; 6];
        for (k, a) in INERTIA.attrs.iter().enumerate() {
            v[k] = x.number(t, a, x.required(t, a)?)?;
        }
        let local = [[v[0], v[1], v[2]], [v[1], v[3], v[4]], [v[2], v[4], v[5]]];
        inertia = Inertia {
            mass,
            com: frame.pos,
            rot: matmul(&matmul(&frame.rot, &local), &transpose(&frame.rot)),
        };
    }
    Ok(Body {
        name: name.to_string(),
        inertia,
        origin: x.origin(link),
    })
}

fn missing(x: &Xml, node: Node, tag: &str) -> ModelError {
    x.err(
        node,
        format!("<{tag}> is missing"),
        format!("give <{tag}> inside <{}>", node.tag_name().name()),
    )
}

/// `<origin xyz rpy>` (identity when absent).
fn placement(x: &Xml, node: Option<Node>) -> Result<Placement, ModelError> {
    match node {
        None => Ok(Placement::IDENTITY),
        Some(o) => {
            x.check(o, &ORIGIN)?;
            Ok(Placement {
                pos: x.vec3(o, "xyz", [0.0; 3])?,
                rot: rpy(x.vec3(o, "rpy", [0.0; 3])?),
            })
        }
    }
}

/// The joint types the URDF reader takes (the fix of a refused one).
const JOINT_TYPES: &str = "driftlab reads revolute, continuous, prismatic, fixed and floating joints; model a planar joint as two prismatic joints and a revolute one";

/// The body a `<parent link>`/`<child link>` names (`None`: the world link).
fn link_ref(
    x: &Xml, j: Node, tag: &str, index: &HashMap<&str, usize>, world: bool,
) -> Result<Option<usize>, ModelError> {
    let n = child(j, tag).ok_or_else(|| missing(x, j, tag))?;
    x.check(n, if tag == "parent" { &PARENT } else { &CHILD })?;
    let name = x.required(n, "link")?;
    if world && name == "world" {
        return Ok(None);
    }
    index.get(name).copied().map(Some).ok_or_else(|| {
        x.err(
            j,
            format!(
                "<{tag} link=\"{}\"> names no <link> of this file",
                xml::clip(name)
            ),
            "add the link, or correct the name",
        )
    })
}

fn joint(x: &Xml, j: Node, index: &HashMap<&str, usize>, world: bool) -> Result<Joint, ModelError> {
    x.check(j, &JOINT)?;
    let kind = x.joint_kind(j, ("floating", JointKind::Floating), JOINT_TYPES)?;
    let at = x.origin(j);
    let parent = link_ref(x, j, "parent", index, world)?;
    let child_body = link_ref(x, j, "child", index, world)?.ok_or_else(|| {
        x.err(
            j,
            "the world link is a joint's child",
            "the world can only be a parent",
        )
    })?;
    for (tag, shape) in [
        ("calibration", &CALIBRATION),
        ("safety_controller", &SAFETY),
    ] {
        if let Some(n) = child(j, tag) {
            x.check(n, shape)?;
        }
    }
    let axis = match child(j, "axis") {
        Some(a) => {
            x.check(a, &AXIS)?;
            let v = x.vec3(a, "xyz", [1.0, 0.0, 0.0])?;
            if kind.has_axis() {
                unit_axis(x.file, &at, v)?
            } else {
                [1.0, 0.0, 0.0]
            }
        }
        None => [1.0, 0.0, 0.0],
    };
    Ok(Joint {
        name: x.required(j, "name")?.to_string(),
        kind,
        parent,
        child: child_body,
        placement: placement(x, child(j, "origin"))?,
        axis,
        limits: limits(x, j, kind)?,
        stiffness: 0.0,
        rest: 0.0,
        damping: damping(x, j, kind)?,
        torque: 0.0,
        armature: 0.0,
        mimic: mimic(x, j)?,
        q0: default_q0(kind),
        v0: default_v0(kind),
        origin: at,
    })
}

/// `<limit>`: kept as data on a 1-coordinate joint (lower and upper default 0, effort and
/// velocity unbounded when absent; a continuous joint's are not enforced).
fn limits(x: &Xml, j: Node, kind: JointKind) -> Result<Option<Limits>, ModelError> {
    let Some(l) = child(j, "limit") else {
        return Ok(None);
    };
    x.check(l, &LIMIT)?;
    let read = Limits {
        lower: x.scalar(l, "lower", 0.0)?,
        upper: x.scalar(l, "upper", 0.0)?,
        effort: x.scalar(l, "effort", f64::INFINITY)?,
        velocity: x.scalar(l, "velocity", f64::INFINITY)?,
    };
    Ok(kind.has_axis().then_some(read))
}

/// `<dynamics damping friction>`: the damping of a 1-coordinate joint; a nonzero Coulomb
/// friction is listed, as it is not modelled.
fn damping(x: &Xml, j: Node, kind: JointKind) -> Result<f64, ModelError> {
    let Some(d) = child(j, "dynamics") else {
        return Ok(0.0);
    };
    x.check(d, &DYNAMICS)?;
    let friction = x.scalar(d, "friction", 0.0)?;
    if friction != 0.0 {
        x.note(
            d,
            format!("Coulomb friction {friction} not modelled (the joint moves without it)"),
        );
    }
    if kind.has_axis() {
        x.scalar(d, "damping", 0.0)
    } else {
        Ok(0.0)
    }
}

fn mimic(x: &Xml, j: Node) -> Result<Option<Mimic>, ModelError> {
    let Some(m) = child(j, "mimic") else {
        return Ok(None);
    };
    x.check(m, &MIMIC)?;
    Ok(Some(Mimic {
        leader: x.required(m, "joint")?.to_string(),
        multiplier: x.scalar(m, "multiplier", 1.0)?,
        offset: x.scalar(m, "offset", 0.0)?,
    }))
}

/// A `<mimic>` on a joint without a coordinate, or naming a joint the file does not
/// have, is dropped with a note (Pinocchio's default reading ignores every mimic).
fn drop_dangling_mimics(x: &Xml, robot: Node, model: &mut Model) {
    let names: HashMap<String, usize> = model
        .joints
        .iter()
        .enumerate()
        .map(|(k, j)| (j.name.clone(), k))
        .collect();
    let nodes: Vec<Node> = elements(robot).filter(|n| xml::is(*n, "joint")).collect();
    for (k, j) in model.joints.iter_mut().enumerate() {
        let Some(m) = &j.mimic else { continue };
        let why = if j.kind.nq() != 1 {
            format!(
                "<mimic joint=\"{}\"> on a {} joint dropped: it has no coordinate to couple",
                m.leader,
                j.kind.name()
            )
        } else if !names.contains_key(&m.leader) {
            format!("<mimic joint=\"{}\"> dropped: the file has no joint `{}`, so `{}` moves on its own", m.leader, m.leader, j.name)
        } else {
            continue;
        };
        x.note(nodes[k], why);
        j.mimic = None;
    }
}

/// Attach the base (the body no joint has as child) to the world by a floating joint.
fn attach_floating(x: &Xml, robot: Node, model: &mut Model) -> Result<(), ModelError> {
    let mut is_child = vec![false; model.bodies.len()];
    model.joints.iter().for_each(|j| is_child[j.child] = true);
    let Some(base) = is_child.iter().position(|c| !c) else {
        return Ok(()); // no base: the tree check reports the cycle
    };
    if model.joints.iter().any(|j| j.parent.is_none()) {
        return Err(x.err(
            robot,
            "root = \"floating\" for a model already attached to its `world` link",
            "leave root = \"fixed\" (the file's own joint from `world` holds the base)",
        ));
    }
    model.joints.insert(
        0,
        Joint::floating(
            "root_joint".into(),
            base,
            Placement::IDENTITY,
            x.origin(robot),
        ),
    );
    Ok(())
}
