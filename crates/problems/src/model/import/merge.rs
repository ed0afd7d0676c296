//! Fixed joints merged away: every body welded to its parent by a chain of fixed joints
//! becomes part of that parent (its inertia carried over by the parallel-axis theorem),
//! and a body welded to the world disappears into it — as Pinocchio does when it reads a
//! URDF; a base without a parent joint is welded to the world. The moving joints, in their order, keep their coordinates, so a state of the
//! tree is a state of the merged tree. Body and natural coordinates start from this: a
//! massless tool frame would otherwise be a body of zero mass.

use super::super::spatial::{add, dot, matmul, scale, sub, transpose, Inertia, Placement, M3};
use super::description::{JointKind, Model};

/// The merged model and, per original body, where it went: the new body (`None`: the
/// world) and its frame in that body's frame.
pub struct Merged {
    /// The model without fixed joints.
    pub model: Model,
    /// Per original body: `(new body, placement in it)`.
    pub home: Vec<(Option<usize>, Placement)>,
}

/// Merge `model`'s fixed joints (its topology already checked).
pub fn merge_fixed(model: &Model) -> Merged {
    let tree = super::super::tree::Tree::new(model);
    let nb = model.bodies.len();
    // Where each original body goes, in tree order (parents first).
    let mut home: Vec<(Option<usize>, Placement)> = vec![(None, Placement::IDENTITY); nb];
    let mut kept: Vec<usize> = Vec::new();
    let mut new_index = vec![usize::MAX; nb];
    // A base (no parent joint) is welded to the world at its origin: it goes into the
    // world, as every body fixed to it.
    for &j in &tree.order {
        let joint = &model.joints[j];
        let c = joint.child;
        if joint.kind == JointKind::Fixed {
            let (to, at) = match joint.parent {
                Some(p) => (home[p].0, home[p].1.then(&joint.placement)),
                None => (None, joint.placement),
            };
            home[c] = (to, at);
        } else {
            new_index[c] = kept.len();
            kept.push(c);
            home[c] = (Some(new_index[c]), Placement::IDENTITY);
        }
    }
    let mut merged = Model {
        name: model.name.clone(),
        file: model.file.clone(),
        gravity: model.gravity,
        couplings: model.couplings.clone(),
        actuators: model.actuators.clone(),
        engine: model.engine.clone(),
        ..Model::default()
    };
    for &b in &kept {
        let mut body = model.bodies[b].clone();
        body.inertia = Inertia::default();
        merged.bodies.push(body);
    }
    for (b, body) in model.bodies.iter().enumerate() {
        if let (Some(to), at) = home[b] {
            let carried = carry(&body.inertia, &at);
            merged.bodies[to].inertia = sum(&merged.bodies[to].inertia, &carried);
        }
    }
    for joint in model.joints.iter().filter(|j| j.kind != JointKind::Fixed) {
        let mut j = joint.clone();
        let (parent, at) = match joint.parent {
            Some(p) => home[p],
            None => (None, Placement::IDENTITY),
        };
        j.parent = parent;
        j.placement = at.then(&joint.placement);
        j.child = new_index[joint.child];
        merged.joints.push(j);
    }
    for closure in &model.closures {
        let mut c = closure.clone();
        let moved = |body: Option<usize>, frame: &Placement| match body {
            Some(b) => (home[b].0, home[b].1.then(frame)),
            None => (None, *frame),
        };
        (c.body_a, c.frame_a) = moved(closure.body_a, &closure.frame_a);
        (c.body_b, c.frame_b) = moved(closure.body_b, &closure.frame_b);
        merged.closures.push(c);
    }
    Merged {
        model: merged,
        home,
    }
}

/// An inertia given in a child frame, expressed in the parent frame.
pub fn carry(i: &Inertia, at: &Placement) -> Inertia {
    Inertia {
        mass: i.mass,
        com: at.point(i.com),
        rot: matmul(&matmul(&at.rot, &i.rot), &transpose(&at.rot)),
    }
}

/// `|d|²1 − ddᵀ`, the parallel-axis term per unit mass.
fn shift(d: [f64; 3]) -> M3 {
    let n = dot(d, d);
    std::array::from_fn(|i| std::array::from_fn(|k| if i == k { n } else { 0.0 } - d[i] * d[k]))
}

/// Two inertias in one frame as one body (parallel-axis theorem about the joint centre
/// of mass).
pub fn sum(a: &Inertia, b: &Inertia) -> Inertia {
    let m = a.mass + b.mass;
    if m == 0.0 {
        return Inertia {
            mass: 0.0,
            com: [0.0; 3],
            rot: std::array::from_fn(|i| std::array::from_fn(|k| a.rot[i][k] + b.rot[i][k])),
        };
    }
    let com = scale(1.0 / m, add(scale(a.mass, a.com), scale(b.mass, b.com)));
    let (sa, sb) = (shift(sub(a.com, com)), shift(sub(b.com, com)));
    Inertia {
        mass: m,
        com,
        rot: std::array::from_fn(|i| {
            std::array::from_fn(|k| {
                a.rot[i][k] + a.mass * sa[i][k] + b.rot[i][k] + b.mass * sb[i][k]
            })
        }),
    }
}

/// A point of an original body in world coordinates, from the merged bodies' placements.
pub fn world_point(
    home: &(Option<usize>, Placement), world: &[Placement], x: [f64; 3],
) -> [f64; 3] {
    let local = home.1.point(x);
    match home.0 {
        Some(b) => world[b].point(local),
        None => local,
    }
}
