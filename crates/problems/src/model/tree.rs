//! The kinematic tree of a [`Model`] in joint coordinates: the topological order, where
//! each joint's coordinates sit in q, and the forward pass that gives every body's world
//! placement, spatial velocity and velocity-product acceleration.
//!
//! Each joint contributes, in its child's coordinates (R. Featherstone, *Rigid Body
//! Dynamics Algorithms*, 2008, §4.4 and Table 4.1):
//!
//! ```text
//! placement   X_J(q)            child frame in the joint frame
//! columns     S(q)  (6 × nq)    v_child = X v_parent + S q̇
//! bias        c_J = S̊ q̇         the componentwise rate of S in child coordinates
//! ```
//!
//! | joint | q | X_J | S | c_J |
//! |---|---|---|---|---|
//! | revolute, continuous | θ | rotation θ about a | (a, 0) | 0 |
//! | prismatic | d | translation d a | (0, a) | 0 |
//! | spherical | p (Euler parameters) | R(p̂) | (2G(p)/\|p\|², 0) | (−2(pᵀṗ)/\|p\|² ω', 0) |
//! | floating | (x, p) | (R(p̂), x) | [(0, Rᵀ), (2G/\|p\|², 0)] | (−2(pᵀṗ)/\|p\|² ω', −ω' × Rᵀẋ) |
//!
//! The rotation is that of the normalized parameters p̂ = p/|p|, so that everything is an
//! exact function of q off the unit sphere too (a Newton iterate, a finite-difference
//! check): `ω' = 2G(p̂) dp̂/dt = 2G(p)ṗ/|p|²` (G is linear and `G(p)p = 0`), and its rate
//! at q̈ = 0 is `−4(pᵀṗ)G(p)ṗ/|p|⁴` (with `G(ṗ)ṗ = 0`), zero on |p| = 1.
//!
//! and the forward pass is `v_i = X_i v_λ + S_i q̇_i`, `a_i = X_i a_λ + S_i q̈_i + c_J +
//! v_i × S_i q̇_i` (RBDA eq. 5.7–5.8 with `Ṡ = S̊ + v × S`).

use super::import::description::{JointKind, Model};
use super::spatial::{
    axis_angle, cross, cross_motion, motion_to_child, mul_t, quat_g, quat_matrix, Placement, V3, V6,
};

/// Topology and coordinate layout.
#[derive(Clone, Debug)]
pub struct Tree {
    /// Joints, parents before children.
    pub order: Vec<usize>,
    /// The joint whose child each body is (`None`: welded to the world at its origin).
    pub joint_of_body: Vec<Option<usize>>,
    /// Offset of each joint's coordinates in q (document order).
    pub offset: Vec<usize>,
    /// Number of coordinates.
    pub n: usize,
    /// Per body: the moving joints from the root to it, root first.
    pub path: Vec<Vec<usize>>,
}

impl Tree {
    /// The layout of `model` (its topology already checked by [`super::import::check`]).
    pub fn new(model: &Model) -> Self {
        let nb = model.bodies.len();
        let mut joint_of_body = vec![None; nb];
        for (j, joint) in model.joints.iter().enumerate() {
            joint_of_body[joint.child] = Some(j);
        }
        let mut offset = Vec::with_capacity(model.joints.len());
        let mut n = 0;
        for joint in &model.joints {
            offset.push(n);
            n += joint.kind.nq();
        }
        let mut order = Vec::with_capacity(model.joints.len());
        let mut placed = vec![false; nb];
        for (b, j) in joint_of_body.iter().enumerate() {
            placed[b] = j.is_none();
        }
        while order.len() < model.joints.len() {
            let before = order.len();
            for (j, joint) in model.joints.iter().enumerate() {
                if !placed[joint.child] && joint.parent.is_none_or(|p| placed[p]) {
                    placed[joint.child] = true;
                    order.push(j);
                }
            }
            if order.len() == before {
                break; // a cycle: refused by the check before a tree is built
            }
        }
        let mut path = vec![Vec::new(); nb];
        for &j in &order {
            let joint = &model.joints[j];
            let mut p = joint.parent.map(|b| path[b].clone()).unwrap_or_default();
            if joint.kind.nq() > 0 {
                p.push(j);
            }
            path[joint.child] = p;
        }
        Self {
            order,
            joint_of_body,
            offset,
            n,
            path,
        }
    }
}

/// Where every body is and how it moves, at one `(q, q̇)`.
#[derive(Clone, Debug)]
pub struct Frames {
    /// World placement of each body.
    pub world: Vec<Placement>,
    /// Each body in its parent's frame (the world's for a root).
    pub local: Vec<Placement>,
    /// Spatial velocity of each body, body coordinates.
    pub vel: Vec<V6>,
    /// Velocity-product acceleration `J̇q̇` of each body (q̈ = 0, no gravity), body
    /// coordinates.
    pub bias: Vec<V6>,
    /// Per joint, its motion columns `S` (child coordinates), `nq` of them.
    pub columns: Vec<Vec<V6>>,
}

/// The child's placement in the joint frame.
pub fn joint_motion(kind: JointKind, axis: V3, q: &[f64]) -> Placement {
    match kind {
        JointKind::Revolute | JointKind::Continuous => Placement {
            rot: axis_angle(axis, q[0]),
            pos: [0.0; 3],
        },
        JointKind::Prismatic => Placement {
            rot: super::spatial::IDENTITY,
            pos: [axis[0] * q[0], axis[1] * q[0], axis[2] * q[0]],
        },
        JointKind::Fixed => Placement::IDENTITY,
        JointKind::Spherical => Placement {
            rot: unit_quat_matrix(q),
            pos: [0.0; 3],
        },
        JointKind::Floating => Placement {
            rot: unit_quat_matrix(&q[3..7]),
            pos: [q[0], q[1], q[2]],
        },
    }
}

/// The rotation of `p/|p|`.
fn unit_quat_matrix(p: &[f64]) -> super::spatial::M3 {
    let n = p.iter().map(|x| x * x).sum::<f64>().sqrt();
    quat_matrix(&[p[0] / n, p[1] / n, p[2] / n, p[3] / n])
}

/// `|p|²`.
fn norm2(p: &[f64]) -> f64 {
    p.iter().map(|x| x * x).sum()
}

/// Column k of `2G(p)/|p|²` as an angular motion.
fn angular(g: &[[f64; 4]; 3], k: usize, n2: f64) -> V6 {
    let s = 2.0 / n2;
    [s * g[0][k], s * g[1][k], s * g[2][k], 0.0, 0.0, 0.0]
}

/// The body angular velocity `ω' = 2G(p)ṗ/|p|²`.
fn body_rate(p: &[f64], pd: &[f64]) -> V3 {
    let g = quat_g(p);
    let s = 2.0 / norm2(p);
    std::array::from_fn(|i| s * (0..4).map(|k| g[i][k] * pd[k]).sum::<f64>())
}

/// The joint's motion columns `S(q)` in child coordinates.
pub fn joint_columns(kind: JointKind, axis: V3, q: &[f64]) -> Vec<V6> {
    let [a0, a1, a2] = axis;
    match kind {
        JointKind::Revolute | JointKind::Continuous => vec![[a0, a1, a2, 0.0, 0.0, 0.0]],
        JointKind::Prismatic => vec![[0.0, 0.0, 0.0, a0, a1, a2]],
        JointKind::Fixed => Vec::new(),
        JointKind::Spherical => {
            let g = quat_g(q);
            (0..4).map(|k| angular(&g, k, norm2(q))).collect()
        }
        JointKind::Floating => {
            let r = unit_quat_matrix(&q[3..7]);
            let g = quat_g(&q[3..7]);
            let mut s: Vec<V6> = (0..3)
                .map(|k| [0.0, 0.0, 0.0, r[k][0], r[k][1], r[k][2]])
                .collect();
            s.extend((0..4).map(|k| angular(&g, k, norm2(&q[3..7]))));
            s
        }
    }
}

/// `c_J = S̊ q̇`: zero for 1-coordinate joints; the rate of `2G/|p|²` for Euler
/// parameters, and the floating joint's `−ω' × Rᵀẋ`.
pub fn joint_bias(kind: JointKind, q: &[f64], qd: &[f64]) -> V6 {
    let (p, pd) = match kind {
        JointKind::Spherical => (q, qd),
        JointKind::Floating => (&q[3..7], &qd[3..7]),
        _ => return [0.0; 6],
    };
    let w = body_rate(p, pd);
    let k = -2.0 * p.iter().zip(pd).map(|(a, b)| a * b).sum::<f64>() / norm2(p);
    let mut c = [k * w[0], k * w[1], k * w[2], 0.0, 0.0, 0.0];
    if kind == JointKind::Floating {
        let r = unit_quat_matrix(p);
        let u = mul_t(&r, [qd[0], qd[1], qd[2]]);
        let x = cross(w, u);
        c[3..].copy_from_slice(&[-x[0], -x[1], -x[2]]);
    }
    c
}

/// The forward pass at `(q, q̇)`.
pub fn forward(model: &Model, tree: &Tree, q: &[f64], qd: &[f64]) -> Frames {
    let nb = model.bodies.len();
    let mut f = Frames {
        world: vec![Placement::IDENTITY; nb],
        local: vec![Placement::IDENTITY; nb],
        vel: vec![[0.0; 6]; nb],
        bias: vec![[0.0; 6]; nb],
        columns: vec![Vec::new(); model.joints.len()],
    };
    for &j in &tree.order {
        let joint = &model.joints[j];
        let (o, nq) = (tree.offset[j], joint.kind.nq());
        let (qj, qdj) = (&q[o..o + nq], &qd[o..o + nq]);
        let local = joint
            .placement
            .then(&joint_motion(joint.kind, joint.axis, qj));
        let s = joint_columns(joint.kind, joint.axis, qj);
        let mut vj = [0.0; 6];
        for (col, &rate) in s.iter().zip(qdj) {
            for k in 0..6 {
                vj[k] += col[k] * rate;
            }
        }
        let c = joint.child;
        let (pw, pv, pa) = match joint.parent {
            Some(p) => (f.world[p], f.vel[p], f.bias[p]),
            None => (Placement::IDENTITY, [0.0; 6], [0.0; 6]),
        };
        let v_in = motion_to_child(&local, &pv);
        let vel: V6 = std::array::from_fn(|k| v_in[k] + vj[k]);
        let a_in = motion_to_child(&local, &pa);
        let cj = joint_bias(joint.kind, qj, qdj);
        let vx = cross_motion(&vel, &vj);
        f.bias[c] = std::array::from_fn(|k| a_in[k] + cj[k] + vx[k]);
        f.vel[c] = vel;
        f.world[c] = pw.then(&local);
        f.local[c] = local;
        f.columns[j] = s;
    }
    f
}
