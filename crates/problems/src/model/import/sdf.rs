//! SDF import (SDFormat ≥ 1.4 as Gazebo writes it, <http://sdformat.org/spec>): one
//! `<model>` of `<link>`s and `<joint>`s whose joint graph may contain loops — Cassie's
//! legs close two loops each through ball joints, and its motors drive the joints through
//! `gearbox` joints.
//!
//! Frames, as SDF 1.6 defines them: a link's `<pose>` is in the model frame, an
//! inertial's in its link's frame, a joint's `<pose>` in its child link's frame, and
//! `<axis><xyz>` in the joint frame (in the model frame with `use_parent_model_frame`, or
//! before SDF 1.5, or in the frame `expressed_in` names: `__model__`, a link, or the
//! joint). A `<pose>` is
//! `x y z roll pitch yaw` in radians, in degrees with `degrees="true"`, or
//! `x y z qx qy qz qw` with `rotation_format="quat_xyzw"`; a pose `relative_to` another
//! frame is refused. A link without `<inertial>` has SDF's default: mass 1 and unit
//! inertia at its origin (noted). Limits are read on either side alone (SDF's default
//! ±1e16 is no limit); `<initial_position>` is the joint's start; `<dynamics>` gives
//! damping, `spring_stiffness` and `spring_reference`; an `<axis><mimic>` (SDF 1.11:
//! `follower = multiplier·(leader − reference) + offset`) is a mimic row.
//!
//! Refused rather than guessed: a `<world>`, a second or nested `<model>`, `<include>`, a
//! static model, a link with `<gravity>false</gravity>` or `<kinematic>true</kinematic>`,
//! `<inertial auto="true">`, joint types other than revolute, continuous, prismatic,
//! ball, fixed and gearbox. The tree, the loop closures and the gearbox couplings are
//! `sdf_tree.rs`'s.

use super::super::spatial::{mul, mul_t, quat_matrix, Inertia, Placement, IDENTITY, V3};
use super::check::unit_axis;
use super::description::{Body, JointKind, Limits, Mimic, Model, ModelError};
use super::merge::carry;
use super::sdf_tree::{assemble, RawGearbox, RawJoint};
use super::urdf::Root;
use super::xml::{self, child, elements, Shape, Xml};
use roxmltree::Node;
use std::collections::HashMap;

const SDF: Shape = Shape {
    tag: "sdf",
    attrs: &["version"],
    once: &["model"],
    many: &["world", "light", "actor"],
};
const MODEL: Shape = Shape {
    tag: "model",
    attrs: &["name", "canonical_link", "placement_frame"],
    once: &[
        "pose",
        "static",
        "self_collide",
        "allow_auto_disable",
        "enable_wind",
    ],
    many: &[
        "link", "joint", "plugin", "frame", "gripper", "model", "include",
    ],
};
const LINK: Shape = Shape {
    tag: "link",
    attrs: &["name"],
    once: &[
        "pose",
        "inertial",
        "self_collide",
        "gravity",
        "enable_wind",
        "kinematic",
        "must_be_base_link",
        "velocity_decay",
    ],
    many: &[
        "visual",
        "collision",
        "sensor",
        "projector",
        "audio_sink",
        "audio_source",
        "battery",
        "light",
        "particle_emitter",
        "frame",
    ],
};
const INERTIAL: Shape = Shape {
    tag: "inertial",
    attrs: &["auto"],
    once: &["pose", "mass", "inertia", "fluid_added_mass"],
    many: &[],
};
const INERTIA: Shape = Shape {
    tag: "inertia",
    attrs: &[],
    once: &["ixx", "ixy", "ixz", "iyy", "iyz", "izz"],
    many: &[],
};
const POSE: Shape = leaf(
    "pose",
    &["relative_to", "frame", "degrees", "rotation_format"],
);
const JOINT: Shape = Shape {
    tag: "joint",
    attrs: &["name", "type"],
    once: &[
        "parent",
        "child",
        "pose",
        "axis",
        "axis2",
        "physics",
        "gearbox_ratio",
        "gearbox_reference_body",
        "thread_pitch",
        "screw_thread_pitch",
    ],
    many: &["sensor", "frame"],
};
const AXIS: Shape = Shape {
    tag: "axis",
    attrs: &[],
    once: &[
        "xyz",
        "initial_position",
        "use_parent_model_frame",
        "limit",
        "dynamics",
        "mimic",
    ],
    many: &[],
};
const LIMIT: Shape = Shape {
    tag: "limit",
    attrs: &[],
    once: &[
        "lower",
        "upper",
        "effort",
        "velocity",
        "stiffness",
        "dissipation",
    ],
    many: &[],
};
const DYNAMICS: Shape = Shape {
    tag: "dynamics",
    attrs: &[],
    once: &[
        "damping",
        "friction",
        "spring_reference",
        "spring_stiffness",
    ],
    many: &[],
};
const MIMIC: Shape = Shape {
    tag: "mimic",
    attrs: &["joint", "axis"],
    once: &["multiplier", "offset", "reference"],
    many: &[],
};

const fn leaf(tag: &'static str, attrs: &'static [&'static str]) -> Shape {
    Shape {
        tag,
        attrs,
        once: &[],
        many: &[],
    }
}

/// SDF's "no limit": a bound at or beyond ±1e16 (the specification's default).
const UNBOUNDED: f64 = 1e16;

/// Read an SDF document.
pub fn read(file: &str, text: &str, root: Root) -> Result<Model, ModelError> {
    let doc = xml::parse(file, text)?;
    let x = Xml::new(file, &doc, "SDF");
    let model_node = the_model(&x)?;
    let model_pose = pose_of(&x, model_node)?;
    let mut model = Model {
        name: model_node.attribute("name").unwrap_or("model").to_string(),
        file: file.to_string(),
        gravity: [0.0, 0.0, -9.81],
        ..Model::default()
    };
    let count = |tag: &str| elements(model_node).filter(|n| xml::is(*n, tag)).count();
    super::check::size(file, &x.origin(model_node), count("link"), count("joint"))?;
    let mut link_frames = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for link in elements(model_node).filter(|n| xml::is(*n, "link")) {
        let (body, frame) = body(&x, link, &model_pose)?;
        index
            .entry(x.required(link, "name")?)
            .or_insert(model.bodies.len());
        model.bodies.push(body);
        link_frames.push(frame);
    }
    let frames = Frames {
        links: &link_frames,
        index: &index,
        model: model_pose,
        axes_in_model: axes_in_model_frame(&x),
    };
    let (mut raws, mut gearboxes) = (Vec::new(), Vec::new());
    for j in elements(model_node).filter(|n| xml::is(*n, "joint")) {
        if j.attribute("type") == Some("gearbox") {
            gearboxes.push(gearbox(&x, j, &frames)?);
        } else {
            raws.push(raw_joint(&x, j, &frames)?);
        }
    }
    assemble(
        &x,
        model_node,
        &mut model,
        &link_frames,
        raws,
        &gearboxes,
        root,
    )?;
    model.notes = x.into_notes();
    Ok(model)
}

/// The file's one `<model>`, held to the specification: what driftlab cannot read in it
/// is refused here.
fn the_model<'a, 'i>(x: &Xml<'a, 'i>) -> Result<Node<'a, 'i>, ModelError> {
    let sdf = x.root(
        "sdf",
        "an SDF file has <sdf><model>…</model></sdf>; a URDF file needs the extension .urdf",
    )?;
    x.check(sdf, &SDF)?;
    if let Some(w) = child(sdf, "world") {
        return Err(x.err(w, "an SDF <world>", "driftlab reads one robot: give a file of <sdf><model>…</model></sdf> (the world's physics and other models are not read)"));
    }
    let model = child(sdf, "model").ok_or_else(|| {
        x.err(
            sdf,
            "<sdf> without a <model>",
            "an SDF file has <sdf><model>…</model></sdf>",
        )
    })?;
    x.check(model, &MODEL)?;
    for (tag, why) in [
        (
            "model",
            "a nested <model>: flatten it into the outer model's links and joints",
        ),
        (
            "include",
            "an <include>: paste the included model's links and joints into this file",
        ),
    ] {
        if let Some(n) = child(model, tag) {
            return Err(x.err(n, format!("<{tag}> inside <model> is not read"), why));
        }
    }
    if model.attribute("placement_frame").is_some() {
        return Err(x.err(
            model,
            "a placement_frame",
            "give the model's <pose> of its own frame instead",
        ));
    }
    if boolean(x, model, "static", false)? {
        return Err(x.err(
            model,
            "a static model: its links do not move, so there is nothing to integrate",
            "set <static>false</static> to simulate it",
        ));
    }
    Ok(model)
}

/// `<tag>true|false|1|0</tag>` of `node`, or `default`.
fn boolean(x: &Xml, node: Node, tag: &'static str, default: bool) -> Result<bool, ModelError> {
    let Some(n) = child(node, tag) else {
        return Ok(default);
    };
    x.check(n, &leaf(tag, &[]))?;
    match n.text().unwrap_or("").trim() {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        other => Err(x.err(
            n,
            format!("<{tag}>{}</{tag}> is not a boolean", xml::clip(other)),
            format!("give <{tag}>true</{tag}> or <{tag}>false</{tag}>"),
        )),
    }
}

/// A scalar child element `<tag>x</tag>`, or `default`.
fn value(x: &Xml, node: Node, tag: &'static str, default: f64) -> Result<f64, ModelError> {
    match child(node, tag) {
        None => Ok(default),
        Some(n) => {
            x.check(n, &leaf(tag, &[]))?;
            x.number(n, tag, n.text().unwrap_or(""))
        }
    }
}

/// `<pose>` of `node` (identity when absent), in any of its rotation formats; a pose
/// relative to another frame is refused.
fn pose_of(x: &Xml, node: Node) -> Result<Placement, ModelError> {
    let Some(p) = child(node, "pose") else {
        return Ok(Placement::IDENTITY);
    };
    x.check(p, &POSE)?;
    if p.attribute("relative_to").is_some_and(|f| !f.is_empty())
        || p.attribute("frame").is_some_and(|f| !f.is_empty())
    {
        return Err(x.err(
            p,
            "a pose relative to a named frame",
            "driftlab reads SDF poses in their default frames (link: model, joint: child link, inertial: link); resolve the frame first",
        ));
    }
    let text = p.text().unwrap_or("");
    let degrees = match p.attribute("degrees").unwrap_or("false") {
        "true" | "1" => true,
        "false" | "0" => false,
        other => {
            return Err(x.err(
                p,
                format!("degrees=\"{}\"", xml::clip(other)),
                "give degrees=\"true\" or \"false\"",
            ))
        }
    };
    match p.attribute("rotation_format").unwrap_or("euler_rpy") {
        "euler_rpy" => {
            let v = x.numbers(p, "pose", text, 6)?;
            let k = if degrees {
                std::f64::consts::PI / 180.0
            } else {
                1.0
            };
            Ok(Placement::from_xyz_rpy(
                [v[0], v[1], v[2]],
                [k * v[3], k * v[4], k * v[5]],
            ))
        }
        "quat_xyzw" => {
            let v = x.numbers(p, "pose", text, 7)?;
            // Scaled by its largest component first: a component of 1e200 would overflow
            // the norm, and a zero quaternion is an improper rotation.
            let largest = v[3..].iter().fold(0.0_f64, |m, c| m.max(c.abs()));
            let w: Vec<f64> = v[3..]
                .iter()
                .map(|c| c / largest.max(f64::MIN_POSITIVE))
                .collect();
            let n = w.iter().map(|c| c * c).sum::<f64>().sqrt();
            if largest == 0.0 || degrees {
                return Err(x.err(
                    p,
                    "a quat_xyzw pose with a zero quaternion, or with degrees",
                    "give x y z qx qy qz qw with a nonzero quaternion (degrees apply to euler_rpy)",
                ));
            }
            let q = [w[3] / n, w[0] / n, w[1] / n, w[2] / n];
            Ok(Placement {
                pos: [v[0], v[1], v[2]],
                rot: quat_matrix(&q),
            })
        }
        other => Err(x.err(
            p,
            format!("rotation_format=\"{}\"", xml::clip(other)),
            "give rotation_format=\"euler_rpy\" or \"quat_xyzw\"",
        )),
    }
}

/// A link: its inertia in its link frame, and the link frame in the model frame.
fn body(x: &Xml, link: Node, model_pose: &Placement) -> Result<(Body, Placement), ModelError> {
    x.check(link, &LINK)?;
    let name = x.required(link, "name")?;
    if !boolean(x, link, "gravity", true)? {
        return Err(x.err(link, "<gravity>false</gravity>: a link that gravity does not act on", "driftlab applies the model's gravity to every link: remove the element, or set gravity = [0, 0, 0] for the whole model"));
    }
    if boolean(x, link, "kinematic", false)? {
        return Err(x.err(
            link,
            "<kinematic>true</kinematic>: a link moved by a script, not by dynamics",
            "set <kinematic>false</kinematic>, or weld the link with a fixed joint",
        ));
    }
    if let Some(v) = child(link, "velocity_decay") {
        x.note(
            v,
            "<velocity_decay> not modelled: the link moves without Gazebo's velocity damping",
        );
    }
    let frame = model_pose.then(&pose_of(x, link)?);
    let inertia = match child(link, "inertial") {
        Some(i) => inertial(x, i)?,
        None => {
            x.note(
                link,
                "no <inertial>: SDF's default, mass 1 and unit inertia at the link origin",
            );
            Inertia {
                mass: 1.0,
                com: [0.0; 3],
                rot: IDENTITY,
            }
        }
    };
    let body = Body {
        name: name.to_string(),
        inertia,
        origin: x.origin(link),
    };
    Ok((body, frame))
}

/// `<inertial>`: mass (default 1) and inertia (default unit) at its pose in the link frame.
fn inertial(x: &Xml, i: Node) -> Result<Inertia, ModelError> {
    x.check(i, &INERTIAL)?;
    if matches!(i.attribute("auto"), Some("true" | "1")) {
        return Err(x.err(
            i,
            "<inertial auto=\"true\">: the inertia computed from the collision shapes",
            "give the mass and inertia explicitly",
        ));
    }
    if let Some(f) = child(i, "fluid_added_mass") {
        x.note(f, "<fluid_added_mass> not modelled");
    }
    let at = pose_of(x, i)?;
    let mass = value(x, i, "mass", 1.0)?;
    if mass < 0.0 {
        return Err(x.err(i, format!("mass {mass} < 0"), "give a positive mass"));
    }
    let t = child(i, "inertia");
    if let Some(t) = t {
        x.check(t, &INERTIA)?;
    }
    let get = |tag: &'static str, d: f64| t.map_or(Ok(d), |t| value(x, t, tag, d));
    let (ixx, iyy, izz) = (get("ixx", 1.0)?, get("iyy", 1.0)?, get("izz", 1.0)?);
    let (ixy, ixz, iyz) = (get("ixy", 0.0)?, get("ixz", 0.0)?, get("iyz", 0.0)?);
    let local = Inertia {
        mass,
        com: [0.0; 3],
        rot: [[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]],
    };
    Ok(carry(&local, &at))
}

/// The model's frames an axis may be expressed in.
pub(super) struct Frames<'f> {
    /// Each link's frame in the model frame.
    pub links: &'f [Placement],
    /// Link index by name.
    pub index: &'f HashMap<&'f str, usize>,
    /// The model frame's pose.
    pub model: Placement,
    /// `<axis><xyz>` is in the model frame unless said otherwise (SDF before 1.5).
    pub axes_in_model: bool,
}

/// Whether the file's SDF version puts `<axis><xyz>` in the model frame by default: before
/// 1.5 it did (sdformat's 1.4 → 1.5 conversion adds `use_parent_model_frame = true`).
fn axes_in_model_frame(x: &Xml) -> bool {
    let version = x.doc.root_element().attribute("version").unwrap_or("");
    let mut parts = version.split('.').map(|p| p.trim().parse::<u32>().ok());
    matches!((parts.next(), parts.next()), (Some(Some(1)), Some(Some(minor))) if minor < 5)
}

/// The joint types the SDF reader takes (the fix of a refused one).
const JOINT_TYPES: &str = "driftlab reads revolute, continuous, prismatic, ball, fixed and gearbox SDF joints; write a universal joint as two revolute joints through a massless link";

/// The link `<parent>`/`<child>` names (`None`: the world).
fn link_named(x: &Xml, j: Node, tag: &str, frames: &Frames) -> Result<Option<usize>, ModelError> {
    let n = child(j, tag).ok_or_else(|| {
        x.err(
            j,
            format!("<{tag}> is missing"),
            format!("give <{tag}>link name</{tag}>"),
        )
    })?;
    x.check(
        n,
        &leaf(if tag == "parent" { "parent" } else { "child" }, &[]),
    )?;
    let name = n.text().unwrap_or("").trim();
    if name == "world" {
        return Ok(None);
    }
    frames.index.get(name).copied().map(Some).ok_or_else(|| {
        x.err(
            j,
            format!(
                "<{tag}>{}</{tag}> names no <link> of this model",
                xml::clip(name)
            ),
            "add the link, or correct the name",
        )
    })
}

/// A joint's parent, child and frame (in the model frame).
fn ends(
    x: &Xml, j: Node, frames: &Frames,
) -> Result<(Option<usize>, usize, Placement), ModelError> {
    let parent = link_named(x, j, "parent", frames)?;
    let c = link_named(x, j, "child", frames)?.ok_or_else(|| {
        x.err(
            j,
            "the world is a joint's child",
            "the world can only be a parent",
        )
    })?;
    let frame = frames.links[c].then(&pose_of(x, j)?);
    Ok((parent, c, frame))
}

fn raw_joint<'a, 'i>(
    x: &Xml<'a, 'i>, j: Node<'a, 'i>, frames: &Frames,
) -> Result<RawJoint<'a, 'i>, ModelError> {
    x.check(j, &JOINT)?;
    let kind = x.joint_kind(j, ("ball", JointKind::Spherical), JOINT_TYPES)?;
    if let Some(a2) = child(j, "axis2") {
        x.note(
            a2,
            format!(
                "<axis2> of a {} joint skipped: it serves two-axis and gearbox joints",
                kind.name()
            ),
        );
    }
    let (parent, c, frame) = ends(x, j, frames)?;
    let mut raw = RawJoint {
        node: j,
        name: x.required(j, "name")?.to_string(),
        kind,
        parent,
        child: c,
        frame,
        axis: [0.0, 0.0, 1.0],
        limits: None,
        stiffness: 0.0,
        rest: 0.0,
        damping: 0.0,
        mimic: None,
        initial: None,
    };
    match child(j, "axis") {
        Some(a) => read_axis(x, a, frames, &mut raw)?,
        None if kind.has_axis() => {
            return Err(x.err(
                j,
                format!("a {} joint without <axis>", kind.name()),
                "give <axis><xyz>0 0 1</xyz></axis>",
            ))
        }
        None => {}
    }
    Ok(raw)
}

/// `<axis>`: its direction in the joint frame, start, limits, dynamics and mimic (these
/// last four on 1-coordinate joints only).
fn read_axis(x: &Xml, a: Node, frames: &Frames, raw: &mut RawJoint) -> Result<(), ModelError> {
    x.check(a, &AXIS)?;
    raw.axis = axis_direction(x, a, frames, &raw.frame, &raw.name)?;
    let one = raw.kind.has_axis();
    if let Some(i) = child(a, "initial_position") {
        raw.initial = Some(value(x, a, "initial_position", 0.0)?);
        if !one {
            x.note(
                i,
                format!("<initial_position> of a {} joint skipped", raw.kind.name()),
            );
            raw.initial = None;
        }
    }
    if let Some(l) = child(a, "limit") {
        raw.limits = limits(x, l)?.filter(|_| one);
    }
    if let Some(d) = child(a, "dynamics") {
        x.check(d, &DYNAMICS)?;
        let friction = value(x, d, "friction", 0.0)?;
        if friction != 0.0 {
            x.note(
                d,
                format!("Coulomb friction {friction} not modelled (the joint moves without it)"),
            );
        }
        if one {
            raw.damping = value(x, d, "damping", 0.0)?;
            raw.stiffness = value(x, d, "spring_stiffness", 0.0)?;
            raw.rest = value(x, d, "spring_reference", 0.0)?;
        }
    }
    if let Some(m) = child(a, "mimic") {
        raw.mimic = Some(mimic(x, m)?);
    }
    Ok(())
}

/// `<xyz>` of `<axis>` as a unit vector in the joint frame `frame` (model frame): in the
/// joint frame by default, in the model frame with `use_parent_model_frame`, or in the
/// frame `expressed_in` names.
fn axis_direction(
    x: &Xml, a: Node, frames: &Frames, frame: &Placement, joint: &str,
) -> Result<V3, ModelError> {
    let n =
        child(a, "xyz").ok_or_else(|| x.err(a, "<axis> without <xyz>", "give <xyz>0 0 1</xyz>"))?;
    x.check(n, &leaf("xyz", &["expressed_in"]))?;
    let v = x.numbers(n, "xyz", n.text().unwrap_or(""), 3)?;
    let v = [v[0], v[1], v[2]];
    let parent_frame = boolean(x, a, "use_parent_model_frame", frames.axes_in_model)?;
    let in_model = match (n.attribute("expressed_in"), parent_frame) {
        (None, false) => None,
        (None, true) => Some(frames.model.rot),
        (Some(_), true) => {
            return Err(x.err(
                n,
                "both expressed_in and use_parent_model_frame",
                "give one of the two",
            ))
        }
        (Some(f), false) if f == joint || f.is_empty() => None,
        (Some("__model__"), false) => Some(frames.model.rot),
        (Some(f), false) => match frames.index.get(f) {
            Some(&b) => Some(frames.links[b].rot),
            None => {
                return Err(x.err(
                    n,
                    format!(
                        "expressed_in=\"{}\" names no frame of this model",
                        xml::clip(f)
                    ),
                    "name __model__, a link, or the joint itself",
                ))
            }
        },
    };
    let v = match in_model {
        None => v,
        Some(r) => mul_t(&frame.rot, mul(&r, v)),
    };
    unit_axis(x.file, &x.origin(n), v)
}

/// `<limit>`: either side alone, a bound at SDF's default (±1e16) or beyond is none;
/// negative effort or velocity (SDF's default −1) is unbounded.
fn limits(x: &Xml, l: Node) -> Result<Option<Limits>, ModelError> {
    x.check(l, &LIMIT)?;
    if child(l, "stiffness").is_some() || child(l, "dissipation").is_some() {
        x.note(l, "the limit's stiffness and dissipation not modelled (driftlab's limits are data, or hard stops when enforced)");
    }
    let bound = |v: f64, inf: f64| if v.abs() >= UNBOUNDED { inf } else { v };
    let lower = bound(value(x, l, "lower", -UNBOUNDED)?, f64::NEG_INFINITY);
    let upper = bound(value(x, l, "upper", UNBOUNDED)?, f64::INFINITY);
    let rate = |v: f64| if v < 0.0 { f64::INFINITY } else { v };
    if lower.is_infinite() && upper.is_infinite() {
        return Ok(None);
    }
    Ok(Some(Limits {
        lower,
        upper,
        effort: rate(value(x, l, "effort", -1.0)?),
        velocity: rate(value(x, l, "velocity", -1.0)?),
    }))
}

/// `<mimic joint axis>` (SDF 1.11): `follower = multiplier·(leader − reference) + offset`.
fn mimic(x: &Xml, m: Node) -> Result<Mimic, ModelError> {
    x.check(m, &MIMIC)?;
    if m.attribute("axis").is_some_and(|a| a != "axis") {
        return Err(x.err(
            m,
            "a mimic of a leader's second axis",
            "driftlab's joints have one axis: give axis=\"axis\"",
        ));
    }
    let multiplier = value(x, m, "multiplier", 1.0)?;
    let offset = value(x, m, "offset", 0.0)?;
    let reference = value(x, m, "reference", 0.0)?;
    Ok(Mimic {
        leader: x.required(m, "joint")?.to_string(),
        multiplier,
        offset: offset - multiplier * reference,
    })
}

/// A `gearbox` joint: its ends, reference body, ratio and both axes in the model frame.
fn gearbox(x: &Xml, j: Node, frames: &Frames) -> Result<RawGearbox, ModelError> {
    x.check(j, &JOINT)?;
    let (parent, c, frame) = ends(x, j, frames)?;
    let reference = child(j, "gearbox_reference_body").ok_or_else(|| {
        x.err(
            j,
            "a gearbox joint without <gearbox_reference_body>",
            "name the body both gears turn against",
        )
    })?;
    x.check(reference, &leaf("gearbox_reference_body", &[]))?;
    let reference_name = reference.text().unwrap_or("").trim();
    let reference = frames.index.get(reference_name).copied().ok_or_else(|| {
        x.err(
            j,
            format!(
                "<gearbox_reference_body>{}</gearbox_reference_body> names no <link>",
                xml::clip(reference_name)
            ),
            "name a link of this model",
        )
    })?;
    let ratio = value(x, j, "gearbox_ratio", 1.0)?;
    let name = x.required(j, "name")?.to_string();
    let mut axes = [[0.0; 3]; 2];
    for (k, tag) in ["axis", "axis2"].iter().enumerate() {
        let a = child(j, tag).ok_or_else(|| {
            x.err(
                j,
                format!("a gearbox joint without <{tag}>"),
                format!("give <{tag}><xyz>…</xyz></{tag}>"),
            )
        })?;
        x.check(a, &Shape { tag, ..AXIS })?;
        axes[k] = mul(&frame.rot, axis_direction(x, a, frames, &frame, &name)?);
    }
    Ok(RawGearbox {
        at: x.origin(j),
        name,
        parent,
        child: c,
        reference,
        ratio,
        axes,
    })
}
