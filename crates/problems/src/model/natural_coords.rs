//! A model in **natural (fully Cartesian) coordinates**: every body (fixed joints merged)
//! is its frame's origin `r` and its three axes `u, v, w` in world coordinates, twelve
//! coordinates with six rows keeping the axes orthonormal; every joint is a set of
//! quadratic rows between the bodies' points and vectors (J. García de Jalón & E. Bayo,
//! *Kinematic and Dynamic Simulation of Multibody Systems*, 1994, ch. 2–3; seed 001
//! §3.6.1, §3.12), built with the pieces of [`crate::natural`]:
//!
//! ```text
//! body point    X = r + x₁u + x₂v + x₃w         (linear in q)
//! body vector   D = d₁u + d₂v + d₃w
//! M             K ⊗ I₃ per body, K = [m  m cᵀ; m c  J̄],  J̄ = ∫ρρᵀdm = m ccᵀ + ½tr(Ī)1 − Ī   (constant)
//! gravity       m g on r, m c_k g on the k-th axis                                  (constant)
//! joint rows    points: (X_a − X_b)·e_k = 0;  axes: D_a·D_b = 0;  slides: (X_b − X_a)·D_a = 0
//! ```
//!
//! The joint rows are those of the body-coordinate constraints ([`super::body_coords`]),
//! so the three coordinate choices state one mechanism. A body whose mass lies on a
//! plane or a line (`J̄` singular) makes M singular here: refused with the body named.

use super::body_coords::joint_closure;
use super::import::description::{Closure, ClosureKind, Model};
use super::spatial::{cross, mul, Placement, V3};
use super::tree::Frames;
use crate::natural::{NaturalModel, NaturalSystem, Node, Quadratic};
use driftlab_core::ProblemInfo;

/// The four nodes of a body (`r, u, v, w`), or the world.
#[derive(Clone, Copy)]
enum Holder {
    Body([Node; 4]),
    World,
}

fn point(model: &mut NaturalModel, h: Holder, x: V3) -> Vec<(Node, f64)> {
    match h {
        Holder::Body(n) => vec![(n[0], 1.0), (n[1], x[0]), (n[2], x[1]), (n[3], x[2])],
        Holder::World => vec![(model.fixed_node(x), 1.0)],
    }
}

fn vector(model: &mut NaturalModel, h: Holder, d: V3) -> Vec<(Node, f64)> {
    match h {
        Holder::Body(n) => vec![(n[1], d[0]), (n[2], d[1]), (n[3], d[2])],
        Holder::World => vec![(model.fixed_node(d), 1.0)],
    }
}

fn column(p: &Placement, k: usize) -> V3 {
    [p.rot[0][k], p.rot[1][k], p.rot[2][k]]
}

fn row(
    model: &mut NaturalModel, a: Vec<(Node, f64)>, b: Vec<(Node, f64)>, label: String,
    kind: &'static str,
) {
    model.rows.push(Quadratic {
        a,
        b,
        c: 0.0,
        label,
        kind,
    });
}

/// One closure's rows: its points (ball, revolute, weld) or slides (prismatic), then its
/// axes.
fn closure_rows(model: &mut NaturalModel, holders: &[Holder], c: &Closure) {
    let ha = c.body_a.map_or(Holder::World, |b| holders[b]);
    let hb = c.body_b.map_or(Holder::World, |b| holders[b]);
    let xa = point(model, ha, c.frame_a.pos);
    let xb = point(model, hb, c.frame_b.pos);
    let mut gap = xa.clone();
    gap.extend(xb.iter().map(|&(n, w)| (n, -w)));
    if c.kind == ClosureKind::Prismatic {
        for k in 0..2 {
            let d = vector(model, ha, column(&c.frame_a, k));
            let slide = gap.iter().map(|&(n, w)| (n, -w)).collect();
            row(model, slide, d, format!("{}: slide {k}", c.name), "joint");
        }
    } else {
        for k in 0..3 {
            let mut e = [0.0; 3];
            e[k] = 1.0;
            let e = vec![(model.fixed_node(e), 1.0)];
            row(
                model,
                gap.clone(),
                e,
                format!("{}: point {k}", c.name),
                "joint",
            );
        }
    }
    let angles: &[(usize, usize)] = match c.kind {
        ClosureKind::Ball => &[],
        ClosureKind::Revolute => &[(2, 0), (2, 1)],
        ClosureKind::Weld | ClosureKind::Prismatic => &[(0, 1), (1, 2), (2, 0)],
    };
    for &(u, w) in angles {
        let da = vector(model, ha, column(&c.frame_a, u));
        let db = vector(model, hb, column(&c.frame_b, w));
        row(model, da, db, format!("{}: axes {u}{w}", c.name), "joint");
    }
}

/// `K = [m, m cᵀ; m c, J̄]` of a body about its frame's origin.
fn mass_moments(i: &super::spatial::Inertia) -> [[f64; 4]; 4] {
    let tr = i.rot[0][0] + i.rot[1][1] + i.rot[2][2];
    let mut k = [[0.0; 4]; 4];
    k[0][0] = i.mass;
    for a in 0..3 {
        k[0][a + 1] = i.mass * i.com[a];
        k[a + 1][0] = k[0][a + 1];
        for b in 0..3 {
            let iso = if a == b { 0.5 * tr } else { 0.0 };
            k[a + 1][b + 1] = i.mass * i.com[a] * i.com[b] + iso - i.rot[a][b];
        }
    }
    k
}

/// One body's nodes at its start, its mass blocks, gravity and rigid-body rows; returns
/// the nodes and their start velocities.
fn add_body(
    model: &mut NaturalModel, merged: &Model, frames: &Frames, b: usize,
) -> ([Node; 4], Vec<f64>) {
    let w = frames.world[b];
    let v = frames.vel[b];
    let omega = mul(&w.rot, [v[0], v[1], v[2]]);
    let mut nodes = [Node::Fixed(0); 4];
    let mut rates = Vec::with_capacity(12);
    nodes[0] = model.free_node(w.pos);
    rates.extend(mul(&w.rot, [v[3], v[4], v[5]]));
    for k in 0..3 {
        let axis = column(&w, k);
        nodes[k + 1] = model.free_node(axis);
        rates.extend(cross(omega, axis));
    }
    let body = &merged.bodies[b];
    let k = mass_moments(&body.inertia);
    let index = |n: Node| match n {
        Node::Free(i) => i,
        Node::Fixed(_) => unreachable!("body nodes are free"),
    };
    for a in 0..4 {
        for c in 0..=a {
            if k[a][c] != 0.0 {
                model.mass.push((index(nodes[a]), index(nodes[c]), k[a][c]));
            }
        }
    }
    for a in 0..4 {
        let s = k[0][a];
        let f = &mut model.force[index(nodes[a])];
        for c in 0..3 {
            f[c] += s * merged.gravity[c];
        }
    }
    let name = &body.name;
    for (p, q) in [(1, 1), (2, 2), (3, 3), (1, 2), (2, 3), (3, 1)] {
        let kind = if p == q { "unit-norm" } else { "rigid-body" };
        let c = if p == q { 1.0 } else { 0.0 };
        model.rows.push(Quadratic {
            a: vec![(nodes[p], 1.0)],
            b: vec![(nodes[q], 1.0)],
            c,
            label: format!("{name}: axes {p}{q}"),
            kind,
        });
    }
    (nodes, rates)
}

/// The natural-coordinate system of `merged` (no fixed joints), starting where `frames`
/// put its bodies.
pub fn natural_system(
    merged: &Model, frames: &Frames, info: ProblemInfo, energy_scale: f64,
) -> NaturalSystem {
    let mut model = NaturalModel::default();
    let mut holders = Vec::with_capacity(merged.bodies.len());
    let mut v0 = Vec::new();
    for b in 0..merged.bodies.len() {
        let (nodes, rates) = add_body(&mut model, merged, frames, b);
        holders.push(Holder::Body(nodes));
        v0.extend(rates);
    }
    let closures: Vec<Closure> = merged
        .joints
        .iter()
        .filter_map(joint_closure)
        .chain(merged.closures.iter().cloned())
        .collect();
    for c in &closures {
        closure_rows(&mut model, &holders, c);
    }
    NaturalSystem::new(model, info, v0, energy_scale)
}

/// The names of the coordinates, `body.r[0]` … `body.w[2]`, in the order of q.
pub fn coordinate_names(merged: &Model) -> Vec<String> {
    let mut out = Vec::new();
    for b in &merged.bodies {
        for node in ["r", "u", "v", "w"] {
            out.extend((0..3).map(|c| format!("{}.{node}[{c}]", b.name)));
        }
    }
    out
}
