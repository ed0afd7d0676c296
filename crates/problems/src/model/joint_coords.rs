//! A model in **joint coordinates**: q = the joint positions of the kinematic tree in
//! document order (Euler parameters for spherical and floating joints), v = q̇, and the
//! rows of [`super::rows`] (unit norms, mimics, loop closures) — the formulation of
//! Pinocchio and of most robotics codes (R. Featherstone, *Rigid Body Dynamics
//! Algorithms*, 2008, ch. 6 and 8; J. Carpentier et al., "The Pinocchio C++ library",
//! SII 2019).
//!
//! ```text
//! M(q) q̈ = τ(q, q̇) − c(q, q̇) − Φ_qᵀ λ,      M by CRBA, c by RNEA ([`super::dynamics`])
//! ```
//!
//! Euler-parameter blocks: `S p = 0` makes M singular along p; as in `quaternion-body`,
//! `4J₀ppᵀ` is added to M and `−4J₀(ṗᵀṗ)p` to the forces, which leaves the motion on
//! |p| = 1 unchanged and the unit-norm multiplier exactly zero (Nikravesh, *Computer-Aided
//! Analysis of Mechanical Systems*, 1988, §6.3). J₀ is the child body's mean principal
//! moment about its origin (1 if it has none).

use super::dynamics;
use super::import::description::{JointKind, Model};
use super::rows::{self, Row};
use super::spatial::{dot, Inertia};
use super::stops::{stops_of, Stops};
use super::tree::{forward, Frames, Tree};
use driftlab_core::{Dims, MechanicalSystem, ProblemInfo, SparsityPattern, State, Unilateral};

/// The system.
pub struct JointCoordinates {
    model: Model,
    tree: Tree,
    rows: Vec<Row>,
    row_cols: Vec<Vec<usize>>,
    mass_entries: Vec<(usize, usize)>,
    /// `(offset of p in q, J₀)` per Euler-parameter block.
    regular: Vec<(usize, f64)>,
    start: State,
    t_end: f64,
    /// What built it (file, root), for the title.
    label: String,
    /// `joint` or `body`: which coordinate choice this layout states.
    coordinates: &'static str,
    /// The joint limits as unilateral rows (`limits = "enforce"`), if enforced.
    stops: Option<Stops>,
}

impl JointCoordinates {
    /// Lay out `model` (already checked) with initial state `(q0, v0)` in q̇ form.
    pub fn new(
        model: Model, q0: Vec<f64>, v0: Vec<f64>, t_end: f64, label: String,
        coordinates: &'static str,
    ) -> Self {
        let tree = Tree::new(&model);
        let rows = rows::rows(&model, &tree);
        let row_cols = rows
            .iter()
            .map(|r| rows::row_columns(&model, &tree, r))
            .collect();
        let mass_entries = mass_entries(&model, &tree);
        let regular = model
            .joints
            .iter()
            .enumerate()
            .filter_map(|(j, joint)| {
                let o = tree.offset[j];
                match joint.kind {
                    JointKind::Spherical => Some((o, j0(&model.bodies[joint.child].inertia))),
                    JointKind::Floating => Some((o + 3, j0(&model.bodies[joint.child].inertia))),
                    _ => None,
                }
            })
            .collect();
        let m = rows.len();
        Self {
            model,
            tree,
            rows,
            row_cols,
            mass_entries,
            regular,
            start: State::mechanical(0.0, q0, v0, m),
            t_end,
            label,
            coordinates,
            stops: None,
        }
    }

    /// Enforce the joint limits as unilateral rows ([`super::stops`]) with restitution
    /// `e`; returns how many stops the model has.
    pub fn enforce_limits(&mut self, restitution: f64) -> usize {
        let rows = stops_of(&self.model, &self.tree);
        let k = rows.len();
        self.stops = Some(Stops {
            rows,
            restitution,
            n: self.tree.n,
        });
        k
    }

    /// The enforced stops, if any.
    pub fn stops(&self) -> Option<&Stops> {
        self.stops.as_ref()
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// A name per row of Φ: `JOINT.unit` (an Euler parameter's unit norm), `JOINT.mimic`,
    /// `CLOSURE.x|y|z` (the world component of `P_a − P_b`), `CLOSURE.angle-U-W` (frame a's
    /// axis U against frame b's W), `CLOSURE.slide-U`.
    pub fn row_names(&self) -> Vec<String> {
        const AXES: [&str; 3] = ["x", "y", "z"];
        let joint_at = |o: usize| {
            let j = (0..self.model.joints.len())
                .rfind(|&j| self.tree.offset[j] <= o && self.model.joints[j].kind.nq() > 0);
            j.map_or("?", |j| self.model.joints[j].name.as_str())
        };
        let closure = |c: usize| self.model.closures[c].name.as_str();
        self.rows
            .iter()
            .map(|r| match *r {
                Row::Unit(o) => format!("{}.unit", joint_at(o)),
                Row::Mimic { follower, .. } => format!("{}.mimic", joint_at(follower)),
                Row::Coupling(k) => format!("{}.coupling", self.model.couplings[k].name),
                Row::Point { closure: c, axis } => format!("{}.{}", closure(c), AXES[axis]),
                Row::Angle { closure: c, u, w } => {
                    format!("{}.angle-{}-{}", closure(c), AXES[u], AXES[w])
                }
                Row::Slide { closure: c, u } => format!("{}.slide-{}", closure(c), AXES[u]),
            })
            .collect()
    }

    /// Add a note to the model's (what loading it found and kept).
    pub fn note(&mut self, note: super::import::description::ModelNote) {
        self.model.notes.push(note);
    }

    /// Replace the initial state (after a projection onto the closures).
    pub fn set_start(&mut self, st: State) {
        self.start = st;
    }

    /// The forward pass at `(q, q̇)`.
    pub fn frames(&self, q: &[f64], qd: &[f64]) -> Frames {
        forward(&self.model, &self.tree, q, qd)
    }

    /// The tree's `M(q)` by CRBA, dense (row-major), without the Euler-parameter
    /// regularization: `q̇ᵀMq̇` is twice the kinetic energy.
    pub fn tree_mass(&self, q: &[f64]) -> Vec<f64> {
        let f = self.frames(q, &vec![0.0; q.len()]);
        dynamics::mass_matrix(&self.model, &self.tree, &f)
    }

    /// `M(q)` dense (row-major), with the Euler-parameter regularization.
    pub fn dense_mass(&self, q: &[f64]) -> Vec<f64> {
        let zero = vec![0.0; q.len()];
        let f = self.frames(q, &zero);
        let n = self.tree.n;
        let mut m = dynamics::mass_matrix(&self.model, &self.tree, &f);
        for &(o, j0) in &self.regular {
            for a in 0..4 {
                for b in 0..4 {
                    m[(o + a) * n + o + b] += 4.0 * j0 * q[o + a] * q[o + b];
                }
            }
        }
        m
    }

    /// Where each coordinate's joint is: `(joint name, index within the joint)`.
    pub fn coordinate_names(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.tree.n);
        for joint in &self.model.joints {
            let nq = joint.kind.nq();
            for k in 0..nq {
                out.push(if nq == 1 {
                    joint.name.clone()
                } else {
                    format!("{}[{k}]", joint.name)
                });
            }
        }
        out
    }
}

/// Mean principal moment about the body origin, the J₀ of the regularization.
fn j0(i: &Inertia) -> f64 {
    let c2 = dot(i.com, i.com);
    let tr = i.rot[0][0] + i.rot[1][1] + i.rot[2][2] + 2.0 * i.mass * c2;
    if tr > 0.0 && tr.is_finite() {
        tr / 3.0
    } else {
        1.0
    }
}

/// Lower-triangle entries of M: every pair of coordinates of a joint and its ancestors.
fn mass_entries(model: &Model, tree: &Tree) -> Vec<(usize, usize)> {
    let mut e = Vec::new();
    for (j, joint) in model.joints.iter().enumerate() {
        let (oj, nj) = (tree.offset[j], joint.kind.nq());
        if nj == 0 {
            continue;
        }
        for &k in &tree.path[joint.child] {
            let (ok, nk) = (tree.offset[k], model.joints[k].kind.nq());
            for a in oj..oj + nj {
                for b in ok..ok + nk {
                    let (r, c) = if a >= b { (a, b) } else { (b, a) };
                    e.push((r, c));
                }
            }
        }
    }
    e.sort_unstable();
    e.dedup();
    e
}

impl MechanicalSystem for JointCoordinates {
    fn info(&self) -> ProblemInfo {
        let conservative = dynamics::conservative(&self.model);
        let mut tags = vec![
            "spatial".into(),
            "model-file".into(),
            format!("{}-coordinates", self.coordinates),
        ];
        if conservative {
            tags.push("conservative".into());
        }
        if !self.model.closures.is_empty() {
            tags.push("closed-loop".into());
        }
        if self.stops.is_some() {
            tags.push("joint-limits".into());
        }
        ProblemInfo {
            id: "model".into(),
            title: format!(
                "{} in {} coordinates ({}; n = {}, m = {})",
                self.model.name,
                self.coordinates,
                self.label,
                self.tree.n,
                self.rows.len()
            ),
            equations: "M(q) q̈ = τ − c(q, q̇) − Φ_qᵀλ, M by the composite-rigid-body algorithm, c by recursive Newton–Euler; Φ = unit norms of Euler parameters, mimic relations, loop closures (points, and axes for revolute and weld closures)".into(),
            citation: "Featherstone, Rigid Body Dynamics Algorithms (2008), ch. 5–6; Carpentier et al., The Pinocchio C++ library (SII 2019); the model file".into(),
            tags,
            index: 3,
            t_end: self.t_end,
            reference: "none (the cross-checks are the other coordinate choices and Pinocchio)".into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims {
            n: self.tree.n,
            m: self.rows.len(),
        }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::new(self.tree.n, self.tree.n, self.mass_entries.clone())
    }
    fn mass(&self, q: &[f64], out: &mut [f64]) {
        let m = self.dense_mass(q);
        let n = self.tree.n;
        for (o, &(r, c)) in out.iter_mut().zip(&self.mass_entries) {
            *o = m[r * n + c];
        }
    }
    fn forces(&self, _t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        let f = self.frames(q, v);
        let tau = dynamics::forces(&self.model, &self.tree, &f, q, v);
        out.copy_from_slice(&tau);
        for &(o, j0) in &self.regular {
            let rate: f64 = v[o..o + 4].iter().map(|x| x * x).sum();
            for k in 0..4 {
                out[o + k] -= 4.0 * j0 * rate * q[o + k];
            }
        }
    }
    fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let f = self.frames(q, &vec![0.0; q.len()]);
        rows::residuals(&self.model, &self.tree, &f, q, &self.rows, out);
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        let e = self
            .row_cols
            .iter()
            .enumerate()
            .flat_map(|(r, cols)| cols.iter().map(move |&c| (r, c)))
            .collect();
        SparsityPattern::new(self.rows.len(), self.tree.n, e)
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let f = self.frames(q, &vec![0.0; q.len()]);
        let mut dense = vec![0.0; self.tree.n];
        let mut k = 0;
        for (row, cols) in self.rows.iter().zip(&self.row_cols) {
            rows::jacobian_row(&self.model, &self.tree, &f, q, row, &mut dense);
            for &c in cols {
                out[k] = dense[c];
                k += 1;
            }
        }
    }
    fn curvature(&self, _t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        let f = self.frames(q, v);
        for (o, row) in out.iter_mut().zip(&self.rows) {
            *o = rows::curvature(&self.model, &self.tree, &f, (q, v), row);
        }
    }
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let f = self.frames(q, v);
        Some(dynamics::energy(&self.model, &self.tree, &f, q, v))
    }
    fn energy_scale(&self) -> f64 {
        // A robot at rest in its zero pose can have H₀ ≈ 0: scale by m g ℓ with the
        // model's total mass, |g| and 1 m.
        (self.model.mass() * dot(self.model.gravity, self.model.gravity).sqrt()).max(1.0)
    }
    fn row_kinds(&self) -> Vec<&'static str> {
        self.rows.iter().map(Row::kind).collect()
    }
    fn unilateral(&self) -> Option<&dyn Unilateral> {
        self.stops.as_ref().map(|s| s as &dyn Unilateral)
    }
    fn initial_state(&self) -> State {
        self.start.clone()
    }
    fn actuators(&self) -> Vec<driftlab_core::Actuator> {
        let m = &self.model;
        m.actuators
            .iter()
            .filter_map(|a| {
                let j = m.joint(&a.joint)?;
                Some(driftlab_core::Actuator {
                    name: a.name.clone(),
                    column: vec![(self.tree.offset[j], a.gear)],
                    ctrlrange: a.ctrlrange,
                })
            })
            .collect()
    }
}
