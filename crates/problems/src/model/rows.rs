//! The constraint rows of a model in joint coordinates, with their exact Jacobians and
//! curvature terms:
//!
//! ```text
//! unit norm (spherical, floating)   Φ = pᵀp − 1          Φ_q = 2pᵀ                     γ = −2ṗᵀṗ
//! mimic                             Φ = q_f − m q_l − o  Φ_q = e_f − m e_l             γ = 0
//! coupling (x = aᵀq, y = bᵀq,       Φ = x − x₀ − p(y − y₀)  Φ_q = aᵀ − p′ bᵀ          γ = p″ (bᵀq̇)²
//!   p a polynomial of degree ≤ 4)
//! closure point (ball, revolute,    Φ = P_a − P_b        Φ_q = J_Pa − J_Pb             γ = −(J̇_Pa − J̇_Pb) q̇
//!   weld)
//! closure angle (revolute: 2 rows,  Φ = U·W              Φ_q = (U×W)ᵀ(J_ωa − J_ωb)     γ = −[((ω_a×U)×W + U×(ω_b×W))·(ω_a − ω_b)
//!   weld, prismatic: 3 rows)                                                               + (U×W)·(ω̇_a − ω̇_b)|_{q̈=0}]
//! closure slide (prismatic: 2)      Φ = d·U, d = P_b − P_a  Φ_q = Uᵀ(J_Pb − J_Pa) + (U×d)ᵀJ_ωa
//!                                   γ = −[(Ṗ_b − Ṗ_a)‥·U + 2(V_b − V_a)·(ω_a×U) + d·(ω̇_a×U + ω_a×(ω_a×U))]
//! ```
//!
//! with `P` a closure frame's origin and `U`, `W` axes of the two frames in world
//! coordinates; `J̇q̇` is the point's (or body's) acceleration at `q̈ = 0` from the forward
//! pass. A revolute closure keeps `z_a ⊥ x_b, y_b` (z axes aligned), a weld keeps
//! `x_a ⊥ y_b`, `y_a ⊥ z_b`, `z_a ⊥ x_b` (frames aligned, locally unique), a prismatic
//! closure the weld's angles and `d ⊥ x_a, y_a` (b's origin on a's z axis).

use super::import::description::{ClosureKind, JointKind, Model};
use super::spatial::{add, cross, dot, mul, sub, Placement, V3};
use super::tree::{Frames, Tree};

/// What one row constrains.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Row {
    /// Unit norm of the Euler parameters at this offset in q.
    Unit(usize),
    /// `q[follower] − multiplier · q[leader] − offset`.
    Mimic {
        /// Follower's coordinate.
        follower: usize,
        /// Leader's coordinate.
        leader: usize,
        /// Multiplier.
        multiplier: f64,
        /// Offset.
        offset: f64,
    },
    /// Coupling `k` of the model ([`super::import::description::Coupling`]).
    Coupling(usize),
    /// Component `axis` of `P_a − P_b` of closure `closure`.
    Point {
        /// Closure index.
        closure: usize,
        /// World axis.
        axis: usize,
    },
    /// `(P_b − P_a)·U` with `U` the axis `u` of frame a.
    Slide {
        /// Closure index.
        closure: usize,
        /// Axis of frame a.
        u: usize,
    },
    /// `U·W` with `U` the axis `u` of frame a and `W` the axis `w` of frame b.
    Angle {
        /// Closure index.
        closure: usize,
        /// Axis of frame a.
        u: usize,
        /// Axis of frame b.
        w: usize,
    },
}

impl Row {
    /// Its physical kind ([`driftlab_core::MechanicalSystem::row_kinds`]).
    pub fn kind(&self) -> &'static str {
        match self {
            Row::Unit(_) => "unit-norm",
            Row::Mimic { .. } => "mimic",
            Row::Coupling(_) => "coupling",
            Row::Point { .. } | Row::Angle { .. } | Row::Slide { .. } => "loop-closure",
        }
    }
}

/// The rows of `model`: unit norms, then mimics, then closures, each in document order.
/// (A mimic's leader was checked by [`super::import::check`].)
pub fn rows(model: &Model, tree: &Tree) -> Vec<Row> {
    let mut out = Vec::new();
    for (j, joint) in model.joints.iter().enumerate() {
        match joint.kind {
            JointKind::Spherical => out.push(Row::Unit(tree.offset[j])),
            JointKind::Floating => out.push(Row::Unit(tree.offset[j] + 3)),
            _ => {}
        }
    }
    for (j, joint) in model.joints.iter().enumerate() {
        if let Some(m) = &joint.mimic {
            if let Some(l) = model.joint(&m.leader) {
                out.push(Row::Mimic {
                    follower: tree.offset[j],
                    leader: tree.offset[l],
                    multiplier: m.multiplier,
                    offset: m.offset,
                });
            }
        }
    }
    out.extend((0..model.couplings.len()).map(Row::Coupling));
    for (c, closure) in model.closures.iter().enumerate() {
        if closure.kind == ClosureKind::Prismatic {
            out.extend((0..2).map(|u| Row::Slide { closure: c, u }));
        } else {
            out.extend((0..3).map(|axis| Row::Point { closure: c, axis }));
        }
        let angles: &[(usize, usize)] = match closure.kind {
            ClosureKind::Ball => &[],
            ClosureKind::Revolute => &[(2, 0), (2, 1)],
            ClosureKind::Weld | ClosureKind::Prismatic => &[(0, 1), (1, 2), (2, 0)],
        };
        out.extend(angles.iter().map(|&(u, w)| Row::Angle { closure: c, u, w }));
    }
    out
}

/// The q columns a row can depend on, ascending.
pub fn row_columns(model: &Model, tree: &Tree, row: &Row) -> Vec<usize> {
    let mut cols = match *row {
        Row::Unit(o) => (o..o + 4).collect(),
        Row::Mimic {
            follower, leader, ..
        } => vec![follower, leader],
        Row::Coupling(k) => coupling_terms(model, tree, k)
            .into_iter()
            .map(|(o, _, _)| o)
            .collect(),
        Row::Point { closure, .. } | Row::Angle { closure, .. } | Row::Slide { closure, .. } => {
            let c = &model.closures[closure];
            let mut v = Vec::new();
            for body in [c.body_a, c.body_b].into_iter().flatten() {
                for &j in &tree.path[body] {
                    let o = tree.offset[j];
                    v.extend(o..o + model.joints[j].kind.nq());
                }
            }
            v
        }
    };
    cols.sort_unstable();
    cols.dedup();
    cols
}

/// A closure frame at one state: where it is, how it moves, and its velocity columns.
struct Attach {
    place: Placement,
    vel: V3,
    omega: V3,
    acc: V3,
    alpha: V3,
    /// `(q index, point velocity, angular velocity)` per unit q̇, world coordinates.
    cols: Vec<(usize, V3, V3)>,
}

fn attach(
    model: &Model, tree: &Tree, f: &Frames, body: Option<usize>, frame: &Placement,
) -> Attach {
    let Some(b) = body else {
        return Attach {
            place: *frame,
            vel: [0.0; 3],
            omega: [0.0; 3],
            acc: [0.0; 3],
            alpha: [0.0; 3],
            cols: Vec::new(),
        };
    };
    let world = f.world[b];
    let place = world.then(frame);
    let r = frame.pos;
    let (w, u) = split(&f.vel[b]);
    let (al, ac) = split(&f.bias[b]);
    let vel = mul(&world.rot, add(u, cross(w, r)));
    let acc_body = add(
        add(ac, cross(w, u)),
        add(cross(al, r), cross(w, cross(w, r))),
    );
    let mut cols = Vec::new();
    for &j in &tree.path[b] {
        let child = &f.world[model.joints[j].child];
        let lever = sub(place.pos, child.pos);
        for (k, s) in f.columns[j].iter().enumerate() {
            let (sw, sv) = split(s);
            let ang = mul(&child.rot, sw);
            let lin = add(mul(&child.rot, sv), cross(ang, lever));
            cols.push((tree.offset[j] + k, lin, ang));
        }
    }
    Attach {
        place,
        vel,
        omega: mul(&world.rot, w),
        acc: mul(&world.rot, acc_body),
        alpha: mul(&world.rot, al),
        cols,
    }
}

fn split(x: &[f64; 6]) -> (V3, V3) {
    ([x[0], x[1], x[2]], [x[3], x[4], x[5]])
}

fn axis_of(p: &Placement, k: usize) -> V3 {
    [p.rot[0][k], p.rot[1][k], p.rot[2][k]]
}

/// Both ends of closure `c`.
fn ends(model: &Model, tree: &Tree, f: &Frames, c: usize) -> (Attach, Attach) {
    let cl = &model.closures[c];
    (
        attach(model, tree, f, cl.body_a, &cl.frame_a),
        attach(model, tree, f, cl.body_b, &cl.frame_b),
    )
}

/// The q offsets of coupling `k`'s joints with their coefficients in `x` and `y`.
/// (Its joints were checked to be 1-coordinate joints of the model when it was read.)
fn coupling_terms(model: &Model, tree: &Tree, k: usize) -> Vec<(usize, f64, f64)> {
    let c = &model.couplings[k];
    let at = |name: &str| model.joint(name).map(|j| tree.offset[j]);
    let mut out: Vec<(usize, f64, f64)> = Vec::new();
    for (name, w) in &c.a {
        out.extend(at(name).map(|o| (o, *w, 0.0)));
    }
    for (name, w) in &c.b {
        out.extend(at(name).map(|o| (o, 0.0, *w)));
    }
    out
}

/// `(Φ, p′, p″, bᵀq̇)` of coupling `k` at `(q, q̇)`.
fn coupling_state(
    model: &Model, tree: &Tree, k: usize, q: &[f64], qd: &[f64],
) -> (f64, f64, f64, f64) {
    let terms = coupling_terms(model, tree, k);
    let x: f64 = terms.iter().map(|(o, a, _)| a * q[*o]).sum();
    let y: f64 = terms.iter().map(|(o, _, b)| b * q[*o]).sum();
    let yd: f64 = terms.iter().map(|(o, _, b)| b * qd[*o]).sum();
    let (phi, dp, ddp) = model.couplings[k].value(x, y);
    (phi, dp, ddp, yd)
}

/// `Φ` of every row.
pub fn residuals(model: &Model, tree: &Tree, f: &Frames, q: &[f64], rows: &[Row], out: &mut [f64]) {
    for (r, row) in rows.iter().enumerate() {
        out[r] = match *row {
            Row::Unit(o) => q[o..o + 4].iter().map(|x| x * x).sum::<f64>() - 1.0,
            Row::Mimic {
                follower,
                leader,
                multiplier,
                offset,
            } => q[follower] - multiplier * q[leader] - offset,
            Row::Coupling(k) => coupling_state(model, tree, k, q, q).0,
            Row::Point { closure, axis } => {
                let (a, b) = ends(model, tree, f, closure);
                a.place.pos[axis] - b.place.pos[axis]
            }
            Row::Angle { closure, u, w } => {
                let (a, b) = ends(model, tree, f, closure);
                dot(axis_of(&a.place, u), axis_of(&b.place, w))
            }
            Row::Slide { closure, u } => {
                let (a, b) = ends(model, tree, f, closure);
                dot(sub(b.place.pos, a.place.pos), axis_of(&a.place, u))
            }
        };
    }
}

/// One dense row of `Φ_q` into `out` (length n, zeroed here).
pub fn jacobian_row(model: &Model, tree: &Tree, f: &Frames, q: &[f64], row: &Row, out: &mut [f64]) {
    out.iter_mut().for_each(|x| *x = 0.0);
    match *row {
        Row::Unit(o) => (0..4).for_each(|k| out[o + k] = 2.0 * q[o + k]),
        Row::Mimic {
            follower,
            leader,
            multiplier,
            ..
        } => {
            out[follower] += 1.0;
            out[leader] -= multiplier;
        }
        Row::Coupling(k) => {
            let (_, dp, _, _) = coupling_state(model, tree, k, q, q);
            for (o, a, b) in coupling_terms(model, tree, k) {
                out[o] += a - dp * b;
            }
        }
        Row::Point { closure, axis } => {
            let (a, b) = ends(model, tree, f, closure);
            a.cols.iter().for_each(|(i, lin, _)| out[*i] += lin[axis]);
            b.cols.iter().for_each(|(i, lin, _)| out[*i] -= lin[axis]);
        }
        Row::Angle { closure, u, w } => {
            let (a, b) = ends(model, tree, f, closure);
            let n = cross(axis_of(&a.place, u), axis_of(&b.place, w));
            a.cols
                .iter()
                .for_each(|(i, _, ang)| out[*i] += dot(n, *ang));
            b.cols
                .iter()
                .for_each(|(i, _, ang)| out[*i] -= dot(n, *ang));
        }
        Row::Slide { closure, u } => {
            let (a, b) = ends(model, tree, f, closure);
            let uu = axis_of(&a.place, u);
            let ud = cross(uu, sub(b.place.pos, a.place.pos));
            a.cols
                .iter()
                .for_each(|(i, lin, ang)| out[*i] += dot(ud, *ang) - dot(uu, *lin));
            b.cols
                .iter()
                .for_each(|(i, lin, _)| out[*i] += dot(uu, *lin));
        }
    }
}

/// `γ` of one row.
pub fn curvature(
    model: &Model, tree: &Tree, f: &Frames, (q, qd): (&[f64], &[f64]), row: &Row,
) -> f64 {
    match *row {
        Row::Unit(o) => -2.0 * qd[o..o + 4].iter().map(|x| x * x).sum::<f64>(),
        Row::Mimic { .. } => 0.0,
        Row::Coupling(k) => {
            let (_, _, ddp, yd) = coupling_state(model, tree, k, q, qd);
            ddp * yd * yd
        }
        Row::Point { closure, axis } => {
            let (a, b) = ends(model, tree, f, closure);
            -(a.acc[axis] - b.acc[axis])
        }
        Row::Angle { closure, u, w } => {
            let (a, b) = ends(model, tree, f, closure);
            let (uu, ww) = (axis_of(&a.place, u), axis_of(&b.place, w));
            let rate = add(cross(cross(a.omega, uu), ww), cross(uu, cross(b.omega, ww)));
            let rel = sub(a.omega, b.omega);
            -(dot(rate, rel) + dot(cross(uu, ww), sub(a.alpha, b.alpha)))
        }
        Row::Slide { closure, u } => {
            let (a, b) = ends(model, tree, f, closure);
            let uu = axis_of(&a.place, u);
            let d = sub(b.place.pos, a.place.pos);
            let turn = cross(a.omega, uu);
            let second = add(cross(a.alpha, uu), cross(a.omega, turn));
            -(dot(sub(b.acc, a.acc), uu) + 2.0 * dot(sub(b.vel, a.vel), turn) + dot(d, second))
        }
    }
}

/// The world placement of body `b`'s frame `frame`.
pub fn frame_in_world(f: &Frames, body: Option<usize>, frame: &Placement) -> Placement {
    match body {
        Some(b) => f.world[b].then(frame),
        None => *frame,
    }
}
