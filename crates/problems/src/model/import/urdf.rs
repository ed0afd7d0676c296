//! URDF import (the ROS Unified Robot Description Format, <http://wiki.ros.org/urdf/XML>):
//! links with `<inertial>` (origin xyz/rpy, mass, inertia about the centre of mass in the
//! inertial frame), joints with origin, parent, child, axis (default `1 0 0`, as the
//! specification says), limit, dynamics (damping; Coulomb friction is not modelled) and
//! mimic. `<visual>`, `<collision>`, `<material>`, `<gazebo>` and `<transmission>` are
//! skipped; any other element is refused. A link named `world` without an inertial is
//! the world frame (the ROS convention); otherwise the root link is the base, welded to
//! the world or, with `root = "floating"`, attached by a floating joint (as Pinocchio's
//! `buildModel(file, JointModelFreeFlyer())`).

use super::super::spatial::{matmul, rpy, transpose, Inertia, Placement};
use super::check::unit_axis;
use super::description::{
    default_q0, default_v0, Body, Joint, JointKind, Limits, Mimic, Model, ModelError,
};
use super::xml::{self, child, elements, only, required, scalar, vec3};
use roxmltree::{Document, Node};

/// How the base is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// Welded to the world.
    Fixed,
    /// A floating joint from the world.
    Floating,
}

/// Read a URDF document.
pub fn read(file: &str, text: &str, root: Root) -> Result<Model, ModelError> {
    let doc = xml::parse(file, text)?;
    let robot = doc.root_element();
    if robot.tag_name().name() != "robot" {
        return Err(ModelError::at(
            file,
            &xml::origin(&doc, robot),
            format!("the root element is <{}>", robot.tag_name().name()),
            "a URDF file has <robot> as its root element (an SDF file needs the extension .sdf)",
        ));
    }
    only(
        file,
        &doc,
        robot,
        &["link", "joint", "material", "gazebo", "transmission"],
    )?;
    let mut model = Model {
        name: robot.attribute("name").unwrap_or("robot").to_string(),
        file: file.to_string(),
        gravity: [0.0, 0.0, -9.81],
        ..Model::default()
    };
    let mut world_link = false;
    for link in elements(robot).filter(|n| n.has_tag_name("link")) {
        let name = required(file, &doc, link, "name")?;
        if name == "world" && child(link, "inertial").is_none() {
            world_link = true;
            continue;
        }
        model.bodies.push(body(file, &doc, link, name)?);
    }
    for j in elements(robot).filter(|n| n.has_tag_name("joint")) {
        model.joints.push(joint(file, &doc, j, &model, world_link)?);
    }
    if root == Root::Floating {
        attach_floating(file, &doc, robot, &mut model)?;
    }
    Ok(model)
}

fn body(file: &str, doc: &Document, link: Node, name: &str) -> Result<Body, ModelError> {
    only(
        file,
        doc,
        link,
        &["inertial", "visual", "collision", "contact"],
    )?;
    let mut inertia = Inertia::default();
    if let Some(i) = child(link, "inertial") {
        only(file, doc, i, &["origin", "mass", "inertia"])?;
        let frame = placement(file, doc, child(i, "origin"))?;
        let m = child(i, "mass").ok_or_else(|| missing(file, doc, i, "mass"))?;
        let mass = xml::number(file, doc, m, "value", required(file, doc, m, "value")?)?;
        if mass < 0.0 {
            return Err(ModelError::at(
                file,
                &xml::origin(doc, m),
                format!("mass {mass} < 0"),
                "give a positive mass",
            ));
        }
        let t = child(i, "inertia").ok_or_else(|| missing(file, doc, i, "inertia"))?;
        let mut v = [0.0; 6];
        for (k, a) in ["ixx", "ixy", "ixz", "iyy", "iyz", "izz"]
            .iter()
            .enumerate()
        {
            v[k] = xml::number(file, doc, t, a, required(file, doc, t, a)?)?;
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
        origin: xml::origin(doc, link),
    })
}

fn missing(file: &str, doc: &Document, node: Node, tag: &str) -> ModelError {
    ModelError::at(
        file,
        &xml::origin(doc, node),
        format!("<{tag}> is missing"),
        format!("give <{tag}> inside <{}>", node.tag_name().name()),
    )
}

/// `<origin xyz rpy>` (identity when absent).
fn placement(file: &str, doc: &Document, node: Option<Node>) -> Result<Placement, ModelError> {
    match node {
        None => Ok(Placement::IDENTITY),
        Some(o) => Ok(Placement {
            pos: vec3(file, doc, o, "xyz", [0.0; 3])?,
            rot: rpy(vec3(file, doc, o, "rpy", [0.0; 3])?),
        }),
    }
}

/// The joint types the URDF reader takes (the fix of a refused one).
const JOINT_TYPES: &str = "driftlab reads revolute, continuous, prismatic, fixed and floating joints; model a planar joint as two prismatic joints and a revolute one";

/// The body a `<parent link>`/`<child link>` names (`None`: the world link).
fn link_ref(
    file: &str, doc: &Document, j: Node, tag: &str, model: &Model, world: bool,
) -> Result<Option<usize>, ModelError> {
    let n = child(j, tag).ok_or_else(|| missing(file, doc, j, tag))?;
    let name = required(file, doc, n, "link")?;
    if world && name == "world" {
        return Ok(None);
    }
    model.body(name).map(Some).ok_or_else(|| {
        ModelError::at(
            file,
            &xml::origin(doc, j),
            format!("<{tag} link=\"{name}\"> names no <link> of this file"),
            "add the link, or correct the name",
        )
    })
}

fn joint(
    file: &str, doc: &Document, j: Node, model: &Model, world: bool,
) -> Result<Joint, ModelError> {
    only(
        file,
        doc,
        j,
        &[
            "origin",
            "parent",
            "child",
            "axis",
            "limit",
            "dynamics",
            "mimic",
            "calibration",
            "safety_controller",
        ],
    )?;
    let kind = xml::joint_kind(file, doc, j, ("floating", JointKind::Floating), JOINT_TYPES)?;
    let at = xml::origin(doc, j);
    let parent = link_ref(file, doc, j, "parent", model, world)?;
    let child_body = link_ref(file, doc, j, "child", model, world)?.ok_or_else(|| {
        ModelError::at(
            file,
            &at,
            "the world link is a joint's child",
            "the world can only be a parent",
        )
    })?;
    let axis = match child(j, "axis") {
        Some(a) if kind.has_axis() => {
            unit_axis(file, &at, vec3(file, doc, a, "xyz", [1.0, 0.0, 0.0])?)?
        }
        _ => [1.0, 0.0, 0.0],
    };
    let limits = match child(j, "limit") {
        Some(l) if kind.has_axis() => Some(Limits {
            lower: scalar(file, doc, l, "lower", 0.0)?,
            upper: scalar(file, doc, l, "upper", 0.0)?,
            effort: scalar(file, doc, l, "effort", f64::INFINITY)?,
            velocity: scalar(file, doc, l, "velocity", f64::INFINITY)?,
        }),
        _ => None,
    };
    let damping = match child(j, "dynamics") {
        Some(d) if kind.has_axis() => scalar(file, doc, d, "damping", 0.0)?,
        _ => 0.0,
    };
    let mimic = match child(j, "mimic") {
        Some(m) => Some(Mimic {
            leader: required(file, doc, m, "joint")?.to_string(),
            multiplier: scalar(file, doc, m, "multiplier", 1.0)?,
            offset: scalar(file, doc, m, "offset", 0.0)?,
        }),
        None => None,
    };
    Ok(Joint {
        name: required(file, doc, j, "name")?.to_string(),
        kind,
        parent,
        child: child_body,
        placement: placement(file, doc, child(j, "origin"))?,
        axis,
        limits,
        stiffness: 0.0,
        rest: 0.0,
        damping,
        torque: 0.0,
        mimic,
        q0: default_q0(kind),
        v0: default_v0(kind),
        origin: at,
    })
}

/// Attach the base (the body no joint has as child) to the world by a floating joint.
fn attach_floating(
    file: &str, doc: &Document, robot: Node, model: &mut Model,
) -> Result<(), ModelError> {
    let children: Vec<usize> = model.joints.iter().map(|j| j.child).collect();
    let bases: Vec<usize> = (0..model.bodies.len())
        .filter(|b| !children.contains(b))
        .collect();
    let Some(&base) = bases.first() else {
        return Ok(()); // no base: the tree check reports the cycle
    };
    if model.joints.iter().any(|j| j.parent.is_none()) {
        return Err(ModelError::at(
            file,
            &xml::origin(doc, robot),
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
            xml::origin(doc, robot),
        ),
    );
    Ok(())
}
