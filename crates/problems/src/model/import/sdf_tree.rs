//! The kinematic tree of an SDF model, chosen from its joint graph (which may contain
//! loops), and its gearbox couplings.
//!
//! The tree: from the base (the one link no joint has as child), joints whose parent is
//! placed and whose child is not join the tree, repeatedly; a joint whose parent and
//! child are both placed closes a loop and becomes a closure of its kind (ball → ball,
//! revolute → revolute about its axis, prismatic → prismatic along it, fixed → weld). The
//! file's configuration is the assembled one at q = 0 (to its printed digits; the start
//! is projected onto the loops when the model loads). Each body's frame is its tree
//! joint's frame (for the base, its link frame), so that a child is placed by
//! `placement ∘ motion(q)`: the link's inertia is re-expressed in that frame.
//!
//! A gearbox joint (SDF: `θ₂ = −ratio·θ₁`, θ₁ the parent's and θ₂ the child's rotation
//! relative to `gearbox_reference_body` about `<axis>` and `<axis2>`) is read where both
//! gears hang from the reference body by revolute tree joints along those axes: it is the
//! linear row `q_child = −ratio·s₁s₂·q_parent` (s = ±1, the tree joint's axis along or
//! against the gearbox axis), a mimic relation of the child's joint.

use super::super::body_coords::z_to;
use super::super::spatial::{dot, mul, Placement, V3};
use super::description::{
    default_q0, default_v0, Closure, ClosureKind, Joint, JointKind, Limits, Mimic, Model,
    ModelError, Origin,
};
use super::merge::carry;
use super::urdf::Root;
use super::xml::Xml;
use roxmltree::Node;

/// One `<joint>` as read, before the tree is chosen.
pub(super) struct RawJoint<'a, 'i> {
    /// The element.
    pub node: Node<'a, 'i>,
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: JointKind,
    /// Parent link (`None`: the world).
    pub parent: Option<usize>,
    /// Child link.
    pub child: usize,
    /// The joint frame in the model frame.
    pub frame: Placement,
    /// Unit axis in the joint frame.
    pub axis: V3,
    /// Limits (1-coordinate joints).
    pub limits: Option<Limits>,
    /// Spring stiffness.
    pub stiffness: f64,
    /// The spring's rest position.
    pub rest: f64,
    /// Viscous damping.
    pub damping: f64,
    /// `<axis><mimic>`.
    pub mimic: Option<Mimic>,
    /// `<initial_position>`.
    pub initial: Option<f64>,
}

/// One `gearbox` joint as read.
pub(super) struct RawGearbox {
    /// Where it was declared.
    pub at: Origin,
    /// Its name.
    pub name: String,
    /// The gear it drives from (θ₁).
    pub parent: Option<usize>,
    /// The gear it drives (θ₂).
    pub child: usize,
    /// The body both turn against.
    pub reference: usize,
    /// `θ₂ = −ratio·θ₁`.
    pub ratio: f64,
    /// `<axis>` and `<axis2>` in the model frame.
    pub axes: [V3; 2],
}

/// Choose the tree, turn the other joints into closures, re-express every body in its
/// tree joint's frame, and couple the gearboxes.
pub(super) fn assemble(
    x: &Xml, model_node: Node, model: &mut Model, links: &[Placement], raws: Vec<RawJoint>,
    gearboxes: &[RawGearbox], root: Root,
) -> Result<(), ModelError> {
    let nb = model.bodies.len();
    let (tree, closing, body_frame) = choose_tree(x, nb, links, &raws)?;
    let bases: Vec<usize> = (0..nb)
        .filter(|&b| !raws.iter().any(|r| r.child == b))
        .collect();
    for (b, body) in model.bodies.iter_mut().enumerate() {
        body.inertia = carry(&body.inertia, &body_frame[b].inverse().then(&links[b]));
    }
    let world_of = |p: Option<usize>| p.map_or(Placement::IDENTITY, |b| body_frame[b]);
    if root == Root::Floating && bases.len() == 1 {
        let j = Joint::floating(
            "root_joint".into(),
            bases[0],
            body_frame[bases[0]],
            x.origin(model_node),
        );
        model.joints.push(j);
    }
    for &k in &tree {
        let r = &raws[k];
        let placement = world_of(r.parent).inverse().then(&r.frame);
        model.joints.push(tree_joint(x, r, placement));
    }
    for &k in &closing {
        let r = &raws[k];
        if r.initial.is_some() || r.mimic.is_some() {
            x.note(r.node, "the start or mimic of a loop-closing joint skipped: it closes a loop and has no coordinate");
        }
        model
            .closures
            .push(closure(r_frame_pair(r, &world_of), r, x));
    }
    if root == Root::Fixed {
        // A welded base stands where the file puts it: its joints' placements already hold
        // the base's pose only relative to it, so weld it by a fixed joint from the world.
        for &b in &bases {
            let mut j =
                Joint::floating("root_joint".into(), b, body_frame[b], x.origin(model_node));
            j.kind = JointKind::Fixed;
            j.name = format!("{}:weld", model.bodies[b].name);
            j.q0.clear();
            j.v0.clear();
            model.joints.insert(0, j);
        }
    }
    for g in gearboxes {
        couple(x, model, &raws, &tree, g)?;
    }
    Ok(())
}

/// A chosen tree: its joints, the loop-closing ones, and each body's frame.
type Chosen = (Vec<usize>, Vec<usize>, Vec<Placement>);

/// The tree joints and the closing ones (indices into `raws`), and each body's frame.
fn choose_tree(
    x: &Xml, nb: usize, links: &[Placement], raws: &[RawJoint],
) -> Result<Chosen, ModelError> {
    let mut placed: Vec<bool> = (0..nb)
        .map(|b| !raws.iter().any(|r| r.child == b))
        .collect();
    let mut body_frame = links.to_vec();
    let (mut tree, mut closing) = (Vec::new(), Vec::new());
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
        return Err(x.err(
            raws[k].node,
            "the joint's parent is not connected to the base",
            "connect every link to the base link by joints",
        ));
    }
    Ok((tree, closing, body_frame))
}

fn tree_joint(x: &Xml, r: &RawJoint, placement: Placement) -> Joint {
    let mut q0 = default_q0(r.kind);
    if let Some(q) = r.initial {
        q0 = vec![q];
    }
    Joint {
        name: r.name.clone(),
        kind: r.kind,
        parent: r.parent,
        child: r.child,
        placement,
        axis: r.axis,
        limits: r.limits,
        stiffness: r.stiffness,
        rest: r.rest,
        damping: r.damping,
        torque: 0.0,
        armature: 0.0,
        mimic: r.mimic.clone(),
        q0,
        v0: default_v0(r.kind),
        origin: x.origin(r.node),
    }
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

fn closure((frame_a, frame_b): (Placement, Placement), r: &RawJoint, x: &Xml) -> Closure {
    let kind = match r.kind {
        JointKind::Revolute | JointKind::Continuous => ClosureKind::Revolute,
        JointKind::Prismatic => ClosureKind::Prismatic,
        JointKind::Fixed => ClosureKind::Weld,
        _ => ClosureKind::Ball,
    };
    Closure {
        name: r.name.clone(),
        kind,
        body_a: r.parent,
        frame_a,
        body_b: Some(r.child),
        frame_b,
        origin: x.origin(r.node),
    }
}

/// The gearbox `g` as a mimic row of its child's tree joint.
fn couple(
    x: &Xml, model: &mut Model, raws: &[RawJoint], tree: &[usize], g: &RawGearbox,
) -> Result<(), ModelError> {
    let err = |what: String| {
        ModelError::at(
            x.file,
            &g.at,
            what,
            "driftlab reads a gearbox whose two gears each turn against gearbox_reference_body on a revolute joint along the gearbox's <axis> and <axis2>",
        )
    };
    let gear = |body: Option<usize>, axis: V3, which: &str| -> Result<(usize, f64), ModelError> {
        let r = tree
            .iter()
            .map(|&k| &raws[k])
            .find(|r| Some(r.child) == body && r.parent == Some(g.reference))
            .filter(|r| matches!(r.kind, JointKind::Revolute | JointKind::Continuous))
            .ok_or_else(|| {
                err(format!(
                    "its {which} gear is not hinged to the reference body by a revolute joint"
                ))
            })?;
        let along = dot(mul(&r.frame.rot, r.axis), axis);
        if (along.abs() - 1.0).abs() > 1e-6 {
            return Err(err(format!(
                "joint `{}` turns about an axis at cos = {along:.6} to the gearbox's",
                r.name
            )));
        }
        let k = model
            .joint(&r.name)
            .ok_or_else(|| err(format!("joint `{}` is not in the tree", r.name)))?;
        Ok((k, along.signum()))
    };
    let (leader, s1) = gear(g.parent, g.axes[0], "first")?;
    let (follower, s2) = gear(Some(g.child), g.axes[1], "second")?;
    if model.joints[follower].mimic.is_some() {
        return Err(err(format!(
            "joint `{}` is already coupled",
            model.joints[follower].name
        )));
    }
    model.joints[follower].mimic = Some(Mimic {
        leader: model.joints[leader].name.clone(),
        multiplier: -g.ratio * s1 * s2,
        offset: 0.0,
    });
    x.note_at(
        &g.at,
        format!(
            "gearbox `{}` read as the row q({}) = {:e}·q({})",
            g.name,
            model.joints[follower].name,
            -g.ratio * s1 * s2,
            model.joints[leader].name
        ),
    );
    Ok(())
}
