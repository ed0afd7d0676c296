//! What every model must satisfy, whatever file it came from: unique names, a tree of
//! joints (each body the child of at most one joint, no cycles, one base), physical
//! masses, finite numbers, usable axes, limits in order, mimics that name a 1-coordinate
//! leader, closures between two different bodies, and initial states of the right length.
//! Each refusal names the element and the fix.

use super::super::spatial::V3;
use super::description::{JointKind, Model, ModelError, Origin};

/// The most links (bodies) and joints a model file may have. A model's cost in joint
/// coordinates grows as n³ (the dense mass matrix of a chain and its factorization) and
/// n² in memory: `describe` of a URDF chain took 0.34 s and 71 MB at 1 000 links, 2.2 s
/// and 218 MB at 2 000, 17 s and 750 MB at 4 000 (measured, debug build); the largest
/// robot of example-robot-data has 111 joints.
pub const MAX_LINKS: usize = 1000;

/// Refuse a model of more than [`MAX_LINKS`] links or joints, before anything is built
/// from them.
pub fn size(file: &str, at: &Origin, links: usize, joints: usize) -> Result<(), ModelError> {
    if links <= MAX_LINKS && joints <= MAX_LINKS {
        return Ok(());
    }
    Err(ModelError::at(
        file,
        at,
        format!("{links} links and {joints} joints, above the {MAX_LINKS} driftlab reads"),
        "a model's cost grows as n³ with its links (0.34 s and 71 MB at 1 000, 17 s and 750 MB at 4 000, measured): split the mechanism, or use a scalable problem of the catalog (planar-chain, spatial-chain) for long chains",
    ))
}

/// Check `model`; the first problem found is returned.
pub fn check(model: &Model) -> Result<(), ModelError> {
    let err =
        |at: &Origin, what: String, fix: &str| Err(ModelError::at(&model.file, at, what, fix));
    unique_names(model)?;
    for b in &model.bodies {
        inertia(model, &b.origin, &b.inertia)?;
    }
    if model.gravity.iter().any(|g| !g.is_finite()) {
        return err(
            &Origin {
                element: "gravity".into(),
                line: None,
            },
            format!("gravity {:?} is not finite", model.gravity),
            "give three finite numbers",
        );
    }
    for j in &model.joints {
        joint(model, j)?;
    }
    mimic_cycles(model)?;
    tree_shape(model)?;
    couplings(model)?;
    for c in &model.closures {
        if c.body_a == c.body_b {
            let name = c.body_a.map_or("world", |b| model.bodies[b].name.as_str());
            return err(
                &c.origin,
                format!("the loop closure holds body `{name}` to itself"),
                "name two different bodies in a closure",
            );
        }
        let nums = c.frame_a.pos.iter().chain(&c.frame_b.pos);
        if nums
            .chain(c.frame_a.rot.iter().flatten())
            .chain(c.frame_b.rot.iter().flatten())
            .any(|x| !x.is_finite())
        {
            return err(
                &c.origin,
                "a closure frame has a non-finite number".into(),
                "give finite xyz and rpy",
            );
        }
    }
    Ok(())
}

/// Every coupling names 1-coordinate joints of the model and holds finite numbers.
fn couplings(model: &Model) -> Result<(), ModelError> {
    for c in &model.couplings {
        let bad = |what: String, fix: &str| Err(ModelError::at(&model.file, &c.origin, what, fix));
        for (name, w) in c.a.iter().chain(&c.b) {
            match model.joint(name).map(|j| model.joints[j].kind.nq()) {
                Some(1) => {}
                _ => {
                    return bad(
                        format!(
                            "coupling `{}` names `{name}`, not a 1-coordinate joint of the model",
                            c.name
                        ),
                        "name hinge or slide joints",
                    )
                }
            }
            if !w.is_finite() {
                return bad(
                    format!("coefficient {w} of `{name}` is not finite"),
                    "give finite coefficients",
                );
            }
        }
        if c.a.is_empty() {
            return bad(
                format!("coupling `{}` has no joint", c.name),
                "name the joint (or the tendon's joints) it holds",
            );
        }
        if !(c.a0.is_finite() && c.b0.is_finite() && c.poly.iter().all(|x| x.is_finite())) {
            return bad(
                "a reference or polynomial coefficient is not finite".into(),
                "give finite numbers",
            );
        }
    }
    Ok(())
}

fn unique_names(model: &Model) -> Result<(), ModelError> {
    let mut seen = std::collections::HashMap::new();
    let items = model
        .bodies
        .iter()
        .map(|b| ("body", &b.name, &b.origin))
        .chain(model.joints.iter().map(|j| ("joint", &j.name, &j.origin)))
        .chain(
            model
                .closures
                .iter()
                .map(|c| ("closure", &c.name, &c.origin)),
        );
    for (kind, name, origin) in items {
        if name.is_empty() || name == "world" && kind == "body" {
            return Err(ModelError::at(
                &model.file,
                origin,
                format!("a {kind} is named `{name}`"),
                "give every body, joint and closure a non-empty name (`world` is reserved)",
            ));
        }
        if let Some(first) = seen.insert((kind, name.clone()), origin.clone()) {
            return Err(ModelError::at(
                &model.file,
                origin,
                format!("a second {kind} named `{name}` (the first: {first})"),
                "rename one of them",
            ));
        }
    }
    Ok(())
}

/// Mass ≥ 0 and every number finite (what no reading of a file can use). Whether the
/// inertia is one a rigid body has is [`super::inertia`]'s, by the `inertia` policy.
fn inertia(
    model: &Model, at: &Origin, i: &super::super::spatial::Inertia,
) -> Result<(), ModelError> {
    let bad = |what: String, fix: &str| Err(ModelError::at(&model.file, at, what, fix));
    let nums = std::iter::once(&i.mass)
        .chain(&i.com)
        .chain(i.rot.iter().flatten());
    if nums.clone().any(|x| !x.is_finite()) {
        return bad(
            format!(
                "mass {}, centre of mass {:?} or inertia {:?} is not finite",
                i.mass, i.com, i.rot
            ),
            "give finite numbers (NaN and inf are refused)",
        );
    }
    if i.mass < 0.0 {
        return bad(format!("mass {} < 0", i.mass), "give a positive mass");
    }
    Ok(())
}

fn joint(model: &Model, j: &super::description::Joint) -> Result<(), ModelError> {
    let bad = |what: String, fix: &str| Err(ModelError::at(&model.file, &j.origin, what, fix));
    let p = &j.placement;
    let scalars = [j.stiffness, j.rest, j.damping, j.torque];
    let all = p
        .pos
        .iter()
        .chain(p.rot.iter().flatten())
        .chain(&j.axis)
        .chain(&scalars);
    if all.chain(&j.q0).chain(&j.v0).any(|x| !x.is_finite()) {
        return bad(
            "a number of the joint (origin, axis, dynamics, initial state) is not finite".into(),
            "give finite numbers",
        );
    }
    if j.parent == Some(j.child) {
        return bad(
            "the joint's parent and child are the same body".into(),
            "a joint connects two different bodies",
        );
    }
    if j.kind.has_axis() && (super::super::spatial::norm(j.axis) - 1.0).abs() > 1e-12 {
        return bad(
            format!("axis {:?} is not a unit vector", j.axis),
            "give a nonzero axis (it is normalized when read)",
        );
    }
    if let Some(l) = &j.limits {
        if l.lower > l.upper {
            return bad(
                format!("limit lower {} > upper {}", l.lower, l.upper),
                "swap the limits",
            );
        }
    }
    if j.damping < 0.0 || j.stiffness < 0.0 {
        return bad(
            format!(
                "damping {} or stiffness {} is negative",
                j.damping, j.stiffness
            ),
            "give damping ≥ 0 and stiffness ≥ 0",
        );
    }
    if j.kind.nq() != 1 && (j.stiffness != 0.0 || j.torque != 0.0) {
        return bad(
            format!("a {} joint with a spring or torque", j.kind.name()),
            "springs and constant torques act on revolute, continuous and prismatic joints only (damping and armature act on every joint's degrees of freedom)",
        );
    }
    if !(j.armature.is_finite() && j.armature >= 0.0) {
        return bad(
            format!("armature {} is not a finite number ≥ 0", j.armature),
            "give armature ≥ 0 (a rotor inertia)",
        );
    }
    initial_lengths(model, j)?;
    if let Some(m) = &j.mimic {
        let leader = model.joint(&m.leader).map(|k| &model.joints[k]);
        match leader {
            Some(l) if l.kind.nq() == 1 && l.name != j.name && j.kind.nq() == 1 => {}
            _ => {
                return bad(
                    format!("mimics `{}`, which is not another revolute, continuous or prismatic joint of this model", m.leader),
                    "name a 1-coordinate joint as the leader, or remove <mimic>",
                )
            }
        }
        if !(m.multiplier.is_finite() && m.offset.is_finite()) {
            return bad(
                "mimic multiplier or offset is not finite".into(),
                "give finite numbers",
            );
        }
    }
    Ok(())
}

fn initial_lengths(model: &Model, j: &super::description::Joint) -> Result<(), ModelError> {
    let (nq, nv) = match j.kind {
        JointKind::Spherical => (4, 3),
        JointKind::Floating => (7, 6),
        k => (k.nq(), k.nq()),
    };
    if j.q0.len() != nq || j.v0.len() != nv {
        return Err(ModelError::at(
            &model.file,
            &j.origin,
            format!("initial state of {} and {} numbers; a {} joint takes {nq} and {nv}", j.q0.len(), j.v0.len(), j.kind.name()),
            "give q0 as (w, x, y, z) Euler parameters for a spherical joint, (x, y, z, w, ex, ey, ez) for a floating one, one number otherwise; v0 as the body angular velocity (3) for spherical, linear then angular (6) for floating",
        ));
    }
    let quat: &[f64] = match j.kind {
        JointKind::Spherical => &j.q0,
        JointKind::Floating => &j.q0[3..],
        _ => &[],
    };
    if !quat.is_empty() {
        let n = quat.iter().map(|x| x * x).sum::<f64>().sqrt();
        if (n - 1.0).abs() > 1e-9 {
            return Err(ModelError::at(
                &model.file,
                &j.origin,
                format!("initial Euler parameters {quat:?} have norm {n}"),
                "give a unit quaternion (w, x, y, z)",
            ));
        }
    }
    Ok(())
}

/// Every body is the child of at most one joint, at most one body has none (the base,
/// welded to the world), and every joint is reachable from the world (no cycle).
fn tree_shape(model: &Model) -> Result<(), ModelError> {
    let nb = model.bodies.len();
    let mut parent_joint: Vec<Option<usize>> = vec![None; nb];
    for (k, j) in model.joints.iter().enumerate() {
        if let Some(first) = parent_joint[j.child] {
            return Err(ModelError::at(
                &model.file,
                &j.origin,
                format!(
                    "body `{}` is the child of joint `{}` and of joint `{}`: the joints form a loop",
                    model.bodies[j.child].name, model.joints[first].name, j.name
                ),
                "a kinematic tree gives each body one parent joint; declare the loop's last joint as a loop closure ([[loops]] in a TOML model, a joint whose child already has a parent in SDF)",
            ));
        }
        parent_joint[j.child] = Some(k);
    }
    let bases: Vec<usize> = (0..nb).filter(|&b| parent_joint[b].is_none()).collect();
    if bases.len() > 1 {
        let names: Vec<&str> = bases
            .iter()
            .map(|&b| model.bodies[b].name.as_str())
            .collect();
        return Err(ModelError::at(
            &model.file,
            &model.bodies[bases[1]].origin,
            format!("bodies {names:?} have no parent joint; only one (the base) may be welded to the world"),
            "connect every body but the base to the tree with a joint",
        ));
    }
    let tree = super::super::tree::Tree::new(model);
    if tree.order.len() < model.joints.len() {
        let cut: Vec<&str> = model
            .joints
            .iter()
            .enumerate()
            .filter(|(k, _)| !tree.order.contains(k))
            .map(|(_, j)| j.name.as_str())
            .collect();
        let at = &model.joints[model
            .joints
            .iter()
            .position(|j| cut.contains(&j.name.as_str()))
            .unwrap_or(0)]
        .origin;
        return Err(ModelError::at(
            &model.file,
            at,
            format!("joints {cut:?} form a cycle that no path from the world reaches"),
            "a kinematic tree has no cycles: declare one joint of the cycle a loop closure",
        ));
    }
    Ok(())
}

/// `axis` normalized, or an error naming `at` when it is zero or not finite.
pub fn unit_axis(file: &str, at: &Origin, axis: V3) -> Result<V3, ModelError> {
    if axis.iter().any(|x| !x.is_finite()) {
        return Err(ModelError::at(
            file,
            at,
            format!("axis {axis:?} is not finite"),
            "give a finite axis such as xyz=\"0 0 1\"",
        ));
    }
    // Scaled by its largest component first, so that a long axis (1e300) does not
    // overflow its norm.
    let largest = axis.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        return Err(ModelError::at(
            file,
            at,
            format!("axis {axis:?} is zero: it has no direction"),
            "give a nonzero axis such as xyz=\"0 0 1\"",
        ));
    }
    let a = axis.map(|x| x / largest);
    let n = super::super::spatial::norm(a);
    Ok(a.map(|x| x / n))
}

/// Refuse mimic relations that form a cycle (`a` follows `b`, which follows `a`): the
/// joints would lock each other, or leave a row that repeats another. Each joint's leader
/// is looked up once by name, and each chain walked once (linear in the joints).
fn mimic_cycles(model: &Model) -> Result<(), ModelError> {
    let by_name: std::collections::HashMap<&str, usize> = model
        .joints
        .iter()
        .enumerate()
        .map(|(k, j)| (j.name.as_str(), k))
        .collect();
    let leader: Vec<Option<usize>> = model
        .joints
        .iter()
        .map(|j| {
            j.mimic
                .as_ref()
                .and_then(|m| by_name.get(m.leader.as_str()).copied())
        })
        .collect();
    // 0: not seen; 1: on the walk in progress; 2: known to reach no cycle.
    let mut state = vec![0u8; model.joints.len()];
    for start in 0..model.joints.len() {
        let mut path = Vec::new();
        let mut k = Some(start);
        while let Some(j) = k.filter(|&j| state[j] != 2) {
            if state[j] == 1 {
                let at = path.iter().position(|&p| p == j).unwrap_or(0);
                let names: Vec<&str> = path[at..]
                    .iter()
                    .chain(std::iter::once(&j))
                    .map(|&p| model.joints[p].name.as_str())
                    .collect();
                return Err(ModelError::at(
                    &model.file,
                    &model.joints[j].origin,
                    format!(
                        "the mimic relations form a cycle: {}",
                        names.join(" follows ")
                    ),
                    "a joint cannot follow itself through others: remove one <mimic> of the cycle",
                ));
            }
            state[j] = 1;
            path.push(j);
            k = leader[j];
        }
        path.iter().for_each(|&p| state[p] = 2);
    }
    Ok(())
}
