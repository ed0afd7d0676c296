//! Joint-space dynamics of the tree: the mass matrix by the composite-rigid-body
//! algorithm, the velocity-product and gravity forces by recursive Newton–Euler, and the
//! energy (R. Featherstone, *Rigid Body Dynamics Algorithms*, 2008, §6.2 Table 6.2 and
//! §5.3 Table 5.1):
//!
//! ```text
//! CRBA:  I^c_i = I_i + Σ_{children k} X_kᵀ I^c_k X_k,   M_ij = S_iᵀ (X…)ᵀ I^c_i S_j  (j ancestor of i)
//! RNEA:  a_i = X_i a_λ + S_i q̈_i + c_J + v_i × S_i q̇_i   with a_world = (0, −g),
//!        f_i = I_i a_i + v_i ×* I_i v_i,   τ_i = S_iᵀ f_i,   f_λ += X_iᵀ f_i
//! ```
//!
//! so that `M(q) q̈ + c(q, q̇) = τ` with `c = RNEA(q, q̇, 0)`.
//!
//! A joint's armature `a` and damping `d` act on its degrees of freedom as MuJoCo's do
//! (`mj_crb` adds `dof_armature` to M's diagonal; `mj_passive` applies `−d·q̇_dof`): with
//! `S̃` the joint's motion columns (unit axis for a 1-coordinate joint; the body angular
//! velocity `2G(p)/|p|²` of Euler parameters; the floating joint's linear velocity too),
//! `M += a·S̃ᵀS̃` and `τ −= d·S̃ᵀS̃ q̇`, and the kinetic energy gains `½a|S̃q̇|²`.

use super::import::description::{JointKind, Model};
use super::spatial::{
    congruence, cross_force, dot, dot6, force_to_parent, mat6_vec, motion_matrix, Placement,
};
use super::tree::{Frames, Tree};

/// `M(q)` as a dense row-major `n × n` matrix, by the composite-rigid-body algorithm.
pub fn mass_matrix(model: &Model, tree: &Tree, frames: &Frames) -> Vec<f64> {
    let n = tree.n;
    let mut composite: Vec<[[f64; 6]; 6]> =
        model.bodies.iter().map(|b| b.inertia.matrix()).collect();
    for &j in tree.order.iter().rev() {
        let joint = &model.joints[j];
        if let Some(p) = joint.parent {
            let x = motion_matrix(&frames.local[joint.child]);
            let carried = congruence(&x, &composite[joint.child]);
            for r in 0..6 {
                for c in 0..6 {
                    composite[p][r][c] += carried[r][c];
                }
            }
        }
    }
    let mut m = vec![0.0; n * n];
    for (j, joint) in model.joints.iter().enumerate() {
        let s = &frames.columns[j];
        if s.is_empty() {
            continue;
        }
        let oi = tree.offset[j];
        let mut f: Vec<[f64; 6]> = s
            .iter()
            .map(|c| mat6_vec(&composite[joint.child], c))
            .collect();
        put_block(&mut m, n, (oi, oi), &f, s);
        add_dof_metric(&mut m, n, oi, s, joint.armature);
        let mut body = joint.child;
        while let Some(up) = tree.joint_of_body[body].and_then(|k| model.joints[k].parent) {
            let local: &Placement = &frames.local[body];
            f.iter_mut().for_each(|x| *x = force_to_parent(local, x));
            body = up;
            if let Some(k) = tree.joint_of_body[up].filter(|&k| model.joints[k].kind.nq() > 0) {
                put_block(&mut m, n, (oi, tree.offset[k]), &f, &frames.columns[k]);
            }
        }
    }
    m
}

/// `M[o + a][o + b] += w · s_a·s_b`: a joint's armature (or damping) on its degrees of
/// freedom (the block is added after [`put_block`] wrote the joint's own block).
fn add_dof_metric(m: &mut [f64], n: usize, o: usize, s: &[[f64; 6]], w: f64) {
    if w == 0.0 {
        return;
    }
    for (a, sa) in s.iter().enumerate() {
        for (b, sb) in s.iter().enumerate() {
            m[(o + a) * n + o + b] += w * dot6(sa, sb);
        }
    }
}

/// `|S̃q̇|²` of a joint: the squared speed of its degrees of freedom.
fn dof_speed2(s: &[[f64; 6]], qd: &[f64]) -> f64 {
    let v: [f64; 6] = std::array::from_fn(|k| s.iter().zip(qd).map(|(c, x)| c[k] * x).sum());
    dot6(&v, &v)
}

/// `M[r + a][c + b] = M[c + b][r + a] = f_a · s_b`: the block of a joint's rows (its
/// composite forces `f`) against the columns `s` of itself or of an ancestor.
fn put_block(m: &mut [f64], n: usize, (r, c): (usize, usize), f: &[[f64; 6]], s: &[[f64; 6]]) {
    for (a, fa) in f.iter().enumerate() {
        for (b, sb) in s.iter().enumerate() {
            let x = dot6(fa, sb);
            m[(r + a) * n + c + b] = x;
            m[(c + b) * n + r + a] = x;
        }
    }
}

/// Generalized forces `τ_applied − c(q, q̇)` (gravity, velocity products, the joints'
/// springs, dampers and constant torques).
pub fn forces(model: &Model, tree: &Tree, frames: &Frames, q: &[f64], qd: &[f64]) -> Vec<f64> {
    let g = model.gravity;
    let nb = model.bodies.len();
    let mut f = vec![[0.0; 6]; nb];
    for b in 0..nb {
        let down = super::spatial::mul_t(&frames.world[b].rot, [-g[0], -g[1], -g[2]]);
        let a: [f64; 6] =
            std::array::from_fn(|k| frames.bias[b][k] + if k >= 3 { down[k - 3] } else { 0.0 });
        let inertia = &model.bodies[b].inertia;
        let h = inertia.apply(&frames.vel[b]);
        let ia = inertia.apply(&a);
        let vh = cross_force(&frames.vel[b], &h);
        f[b] = std::array::from_fn(|k| ia[k] + vh[k]);
    }
    let mut out = vec![0.0; tree.n];
    for &j in tree.order.iter().rev() {
        let joint = &model.joints[j];
        let c = joint.child;
        let o = tree.offset[j];
        for (k, s) in frames.columns[j].iter().enumerate() {
            out[o + k] = -dot6(s, &f[c]);
        }
        if joint.kind.nq() == 1 {
            out[o] += joint.torque - joint.stiffness * (q[o] - joint.rest) - joint.damping * qd[o];
        }
        let s = &frames.columns[j];
        if joint.damping != 0.0 && joint.kind.nq() > 1 {
            let nq = s.len();
            for (a, sa) in s.iter().enumerate() {
                let rate: f64 = (0..nq).map(|b| dot6(sa, &s[b]) * qd[o + b]).sum();
                out[o + a] -= joint.damping * rate;
            }
        }
        if let Some(p) = joint.parent {
            let up = force_to_parent(&frames.local[c], &f[c]);
            for k in 0..6 {
                f[p][k] += up[k];
            }
        }
    }
    out
}

/// Total energy: kinetic `½ Σ vᵢ·Iᵢvᵢ` and the armatures' `½ a|S̃q̇|²`, gravity
/// `−Σ mᵢ g·cᵢ`, springs `½k(q − rest)²` and the constant torques' potential `−τ q`.
pub fn energy(model: &Model, tree: &Tree, frames: &Frames, q: &[f64], qd: &[f64]) -> f64 {
    let mut e = 0.0;
    for (b, body) in model.bodies.iter().enumerate() {
        let v = &frames.vel[b];
        e += 0.5 * dot6(v, &body.inertia.apply(v));
        let c = frames.world[b].point(body.inertia.com);
        e -= body.inertia.mass * dot(model.gravity, c);
    }
    for (j, joint) in model.joints.iter().enumerate() {
        if joint.armature != 0.0 {
            let o = tree.offset[j];
            let s = &frames.columns[j];
            e += 0.5 * joint.armature * dof_speed2(s, &qd[o..o + s.len()]);
        }
        if joint.kind.nq() == 1 {
            let x = q[tree.offset[j]];
            e += 0.5 * joint.stiffness * (x - joint.rest).powi(2) - joint.torque * x;
        }
    }
    e
}

/// Whether every joint's forces conserve energy (no damping).
pub fn conservative(model: &Model) -> bool {
    model
        .joints
        .iter()
        .all(|j| j.damping == 0.0 || j.kind == JointKind::Fixed)
}
