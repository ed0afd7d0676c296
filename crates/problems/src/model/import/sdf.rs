//! SDF import (SDFormat ≥ 1.4 as Gazebo writes it, <http://sdformat.org/spec>): one
//! `<model>` of `<link>`s and `<joint>`s whose joint graph may contain loops — Cassie's
//! legs close two loops each through ball joints.
//!
//! Frames, as SDF 1.6 defines them: a link's `<pose>` is in the model frame, an
//! inertial's in its link's frame, a joint's `<pose>` in its child link's frame, and
//! `<axis><xyz>` in the joint frame (in the model frame with `use_parent_model_frame`).
//! Each body's frame here is its tree joint's frame (for the base, its link frame), so
//! that a child is placed by `placement ∘ motion(q)`: the link's inertia is re-expressed in
//! that frame.
//!
//! The tree: from the base (the one link no joint has as child), joints whose parent is
//! placed and whose child is not join the tree, repeatedly; a joint whose parent and
//! child are both placed closes a loop and becomes a closure of its kind (ball → ball,
//! revolute → revolute about its axis, prismatic → prismatic along it, fixed → weld). The
//! file's configuration is the assembled one at q = 0 (to its printed digits; the start
//! is projected onto the loops when the model loads). `<dynamics>` gives damping,
//! `spring_stiffness` and `spring_reference`.

use super::super::body_coords::z_to;
use super::super::spatial::{mul_t, Inertia, Placement, V3};
use super::check::unit_axis;
use super::description::{
    default_q0, default_v0, Body, Closure, ClosureKind, Joint, JointKind, Limits, Model, ModelError,
};
use super::merge::carry;
use super::urdf::Root;
use super::xml::{self, child, elements, only, required};
use roxmltree::{Document, Node};

/// One `<joint>` as read, before the tree is chosen.
struct RawJoint<'a, 'i> {
    node: Node<'a, 'i>,
    kind: JointKind,
    parent: Option<usize>,
    child: usize,
    /// The joint frame in the model frame.
    frame: Placement,
    /// Unit axis in the joint frame.
    axis: V3,
}

/// Read an SDF document.
pub fn read(file: &str, text: &str, root: Root) -> Result<Model, ModelError> {
    let doc = xml::parse(file, text)?;
    let sdf = doc.root_element();
    let model_node = match (sdf.tag_name().name(), child(sdf, "model")) {
        ("sdf", Some(m)) => m,
        _ => return Err(ModelError::at(
            file,
            &xml::origin(&doc, sdf),
            format!(
                "the root element is <{}> without a <model>",
                sdf.tag_name().name()
            ),
            "an SDF file has <sdf><model>…</model></sdf>; a URDF file needs the extension .urdf",
        )),
    };
    only(
        file,
        &doc,
        model_node,
        &[
            "link",
            "joint",
            "pose",
            "self_collide",
            "static",
            "plugin",
            "allow_auto_disable",
            "enable_wind",
        ],
    )?;
    let model_pose = pose_of(file, &doc, model_node)?;
    let mut model = Model {
        name: model_node.attribute("name").unwrap_or("model").to_string(),
        file: file.to_string(),
        gravity: [0.0, 0.0, -9.81],
        ..Model::default()
    };
    let mut link_frames = Vec::new();
    for link in elements(model_node).filter(|n| n.has_tag_name("link")) {
        let (body, frame) = body(file, &doc, link, &model_pose)?;
        model.bodies.push(body);
        link_frames.push(frame);
    }
    let raws: Vec<RawJoint> = elements(model_node)
        .filter(|n| n.has_tag_name("joint"))
        .map(|j| raw_joint(file, &doc, j, &model, &link_frames))
        .collect::<Result<_, _>>()?;
    assemble(file, &doc, model_node, &mut model, &link_frames, raws, root)?;
    Ok(model)
}

/// `<pose>` of `node` (identity when absent); a `relative_to` or non-empty `frame`
/// attribute is refused.
fn pose_of(file: &str, doc: &Document, node: Node) -> Result<Placement, ModelError> {
    let Some(p) = child(node, "pose") else {
        return Ok(Placement::IDENTITY);
    };
    if p.attribute("relative_to").is_some() || p.attribute("frame").is_some_and(|f| !f.is_empty()) {
        return Err(ModelError::at(
            file,
            &xml::origin(doc, p),
            "a pose relative to a named frame",
            "driftlab reads SDF poses in their default frames (link: model, joint: child link, inertial: link); resolve the frame first",
        ));
    }
    let v = xml::numbers(file, doc, p, "pose", p.text().unwrap_or(""), 6)?;
    Ok(Placement::from_xyz_rpy(
        [v[0], v[1], v[2]],
        [v[3], v[4], v[5]],
    ))
}

/// A scalar child element `<tag>x</tag>`, or `default`.
fn value(
    file: &str, doc: &Document, node: Node, tag: &str, default: f64,
) -> Result<f64, ModelError> {
    match child(node, tag) {
        None => Ok(default),
        Some(n) => xml::number(file, doc, n, tag, n.text().unwrap_or("")),
    }
}

/// A link: its inertia in its link frame, and the link frame in the model frame.
fn body(
    file: &str, doc: &Document, link: Node, model_pose: &Placement,
) -> Result<(Body, Placement), ModelError> {
    only(
        file,
        doc,
        link,
        &[
            "pose",
            "inertial",
            "visual",
            "collision",
            "sensor",
            "self_collide",
            "velocity_decay",
            "gravity",
            "kinematic",
            "must_be_base_link",
        ],
    )?;
    let name = required(file, doc, link, "name")?;
    let frame = model_pose.then(&pose_of(file, doc, link)?);
    let mut inertia = Inertia::default();
    if let Some(i) = child(link, "inertial") {
        only(file, doc, i, &["pose", "mass", "inertia"])?;
        let at = pose_of(file, doc, i)?;
        let mass = value(file, doc, i, "mass", 1.0)?;
        if mass < 0.0 {
            return Err(ModelError::at(
                file,
                &xml::origin(doc, i),
                format!("mass {mass} < 0"),
                "give a positive mass",
            ));
        }
        let t = child(i, "inertia");
        let get = |tag: &str, d: f64| t.map_or(Ok(d), |t| value(file, doc, t, tag, d));
        let (ixx, iyy, izz) = (get("ixx", 1.0)?, get("iyy", 1.0)?, get("izz", 1.0)?);
        let (ixy, ixz, iyz) = (get("ixy", 0.0)?, get("ixz", 0.0)?, get("iyz", 0.0)?);
        let local = Inertia {
            mass,
            com: [0.0; 3],
            rot: [[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]],
        };
        inertia = carry(&local, &at);
    }
    Ok((
        Body {
            name: name.to_string(),
            inertia,
            origin: xml::origin(doc, link),
        },
        frame,
    ))
}

/// The joint types the SDF reader takes (the fix of a refused one).
const JOINT_TYPES: &str = "driftlab reads revolute, continuous, prismatic, ball and fixed SDF joints; write a universal joint as two revolute joints through a massless link";

fn link_named(
    file: &str, doc: &Document, j: Node, tag: &str, model: &Model,
) -> Result<Option<usize>, ModelError> {
    let n = child(j, tag).ok_or_else(|| {
        ModelError::at(
            file,
            &xml::origin(doc, j),
            format!("<{tag}> is missing"),
            format!("give <{tag}>link name</{tag}>"),
        )
    })?;
    let name = n.text().unwrap_or("").trim();
    if name == "world" {
        return Ok(None);
    }
    model.body(name).map(Some).ok_or_else(|| {
        ModelError::at(
            file,
            &xml::origin(doc, j),
            format!("<{tag}>{name}</{tag}> names no <link> of this model"),
            "add the link, or correct the name",
        )
    })
}

fn raw_joint<'a, 'i>(
    file: &str, doc: &Document, j: Node<'a, 'i>, model: &Model, frames: &[Placement],
) -> Result<RawJoint<'a, 'i>, ModelError> {
    only(
        file,
        doc,
        j,
        &["parent", "child", "pose", "axis", "physics", "sensor"],
    )?;
    let kind = xml::joint_kind(file, doc, j, ("ball", JointKind::Spherical), JOINT_TYPES)?;
    let at = xml::origin(doc, j);
    let parent = link_named(file, doc, j, "parent", model)?;
    let c = link_named(file, doc, j, "child", model)?.ok_or_else(|| {
        ModelError::at(
            file,
            &at,
            "the world is a joint's child",
            "the world can only be a parent",
        )
    })?;
    let frame = frames[c].then(&pose_of(file, doc, j)?);
    let axis = match child(j, "axis") {
        Some(a) => {
            let x = child(a, "xyz").ok_or_else(|| {
                ModelError::at(
                    file,
                    &xml::origin(doc, a),
                    "<axis> without <xyz>",
                    "give <xyz>0 0 1</xyz>",
                )
            })?;
            let v = xml::numbers(file, doc, x, "xyz", x.text().unwrap_or(""), 3)?;
            let parent_frame = child(a, "use_parent_model_frame")
                .and_then(|u| u.text())
                .is_some_and(|t| t.trim() == "1" || t.trim() == "true");
            let v = if parent_frame {
                mul_t(&frame.rot, [v[0], v[1], v[2]])
            } else {
                [v[0], v[1], v[2]]
            };
            unit_axis(file, &at, v)?
        }
        None if kind.has_axis() => {
            return Err(ModelError::at(
                file,
                &at,
                format!("a {} joint without <axis>", kind.name()),
                "give <axis><xyz>0 0 1</xyz></axis>",
            ))
        }
        None => [0.0, 0.0, 1.0],
    };
    Ok(RawJoint {
        node: j,
        kind,
        parent,
        child: c,
        frame,
        axis,
    })
}

/// Choose the tree, turn the other joints into closures, and re-express every body in
/// its tree joint's frame.
fn assemble(
    file: &str, doc: &Document, model_node: Node, model: &mut Model, links: &[Placement],
    raws: Vec<RawJoint>, root: Root,
) -> Result<(), ModelError> {
    let nb = model.bodies.len();
    let has_parent: Vec<bool> = (0..nb).map(|b| raws.iter().any(|r| r.child == b)).collect();
    let bases: Vec<usize> = (0..nb).filter(|&b| !has_parent[b]).collect();
    let mut placed = vec![false; nb];
    let mut body_frame = links.to_vec();
    bases.iter().for_each(|&b| placed[b] = true);
    let mut tree: Vec<usize> = Vec::new();
    let mut closing: Vec<usize> = Vec::new();
    let mut used = vec![false; raws.len()];
    loop {
        let before = tree.len() + closing.len();
        for (k, r) in raws.iter().enumerate() {
            if used[k] || !r.parent.is_none_or(|p| placed[p]) {
                continue;
            }
            used[k] = true;
            if placed[r.child] {
                closing.push(k);
            } else {
                placed[r.child] = true;
                body_frame[r.child] = r.frame;
                tree.push(k);
            }
        }
        if tree.len() + closing.len() == before {
            break;
        }
    }
    if let Some(k) = used.iter().position(|u| !u) {
        return Err(ModelError::at(
            file,
            &xml::origin(doc, raws[k].node),
            "the joint's parent is not connected to the base",
            "connect every link to the base link by joints",
        ));
    }
    for (b, body) in model.bodies.iter_mut().enumerate() {
        body.inertia = carry(&body.inertia, &body_frame[b].inverse().then(&links[b]));
    }
    let world_of = |p: Option<usize>| p.map_or(Placement::IDENTITY, |b| body_frame[b]);
    if root == Root::Floating && bases.len() == 1 {
        model
            .joints
            .push(free_joint(doc, model_node, bases[0], body_frame[bases[0]]));
    }
    for &k in &tree {
        let r = &raws[k];
        let placement = world_of(r.parent).inverse().then(&r.frame);
        model.joints.push(tree_joint(file, doc, r, placement)?);
    }
    for &k in &closing {
        model
            .closures
            .push(closure(r_frame_pair(&raws[k], &world_of), &raws[k], doc));
    }
    if root == Root::Fixed {
        // A welded base stands where the file puts it: its joints' placements already hold
        // the base's pose only relative to it, so weld it by a fixed joint from the world.
        for &b in &bases {
            let mut j = free_joint(doc, model_node, b, body_frame[b]);
            j.kind = JointKind::Fixed;
            j.name = format!("{}:weld", model.bodies[b].name);
            j.q0.clear();
            j.v0.clear();
            model.joints.insert(0, j);
        }
    }
    Ok(())
}

fn free_joint(doc: &Document, model_node: Node, base: usize, at: Placement) -> Joint {
    Joint::floating("root_joint".into(), base, at, xml::origin(doc, model_node))
}

fn tree_joint(
    file: &str, doc: &Document, r: &RawJoint, placement: Placement,
) -> Result<Joint, ModelError> {
    let axis_node = child(r.node, "axis");
    let dynamics = axis_node.and_then(|a| child(a, "dynamics"));
    let limit = axis_node.and_then(|a| child(a, "limit"));
    let get = |n: Option<Node>, tag: &str, d: f64| n.map_or(Ok(d), |n| value(file, doc, n, tag, d));
    let limits = match limit {
        Some(l) if r.kind.has_axis() && child(l, "lower").is_some() => Some(Limits {
            lower: get(Some(l), "lower", 0.0)?,
            upper: get(Some(l), "upper", 0.0)?,
            effort: get(Some(l), "effort", f64::INFINITY)?,
            velocity: get(Some(l), "velocity", f64::INFINITY)?,
        }),
        _ => None,
    };
    let one = r.kind.has_axis();
    Ok(Joint {
        name: required(file, doc, r.node, "name")?.to_string(),
        kind: r.kind,
        parent: r.parent,
        child: r.child,
        placement,
        axis: r.axis,
        limits,
        stiffness: if one {
            get(dynamics, "spring_stiffness", 0.0)?
        } else {
            0.0
        },
        rest: if one {
            get(dynamics, "spring_reference", 0.0)?
        } else {
            0.0
        },
        damping: if one {
            get(dynamics, "damping", 0.0)?
        } else {
            0.0
        },
        torque: 0.0,
        mimic: None,
        q0: default_q0(r.kind),
        v0: default_v0(r.kind),
        origin: xml::origin(doc, r.node),
    })
}

/// The closing joint's frame on its parent's and on its child's body, z along its axis.
fn r_frame_pair(
    r: &RawJoint, world_of: &dyn Fn(Option<usize>) -> Placement,
) -> (Placement, Placement) {
    let along = r.frame.then(&Placement {
        rot: z_to(r.axis),
        pos: [0.0; 3],
    });
    (
        world_of(r.parent).inverse().then(&along),
        world_of(Some(r.child)).inverse().then(&along),
    )
}

fn closure((frame_a, frame_b): (Placement, Placement), r: &RawJoint, doc: &Document) -> Closure {
    let kind = match r.kind {
        JointKind::Revolute | JointKind::Continuous => ClosureKind::Revolute,
        JointKind::Prismatic => ClosureKind::Prismatic,
        JointKind::Fixed => ClosureKind::Weld,
        _ => ClosureKind::Ball,
    };
    Closure {
        name: r.node.attribute("name").unwrap_or("").to_string(),
        kind,
        body_a: r.parent,
        frame_a,
        body_b: Some(r.child),
        frame_b,
        origin: xml::origin(doc, r.node),
    }
}
