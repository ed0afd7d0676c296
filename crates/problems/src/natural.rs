//! Spatial natural (fully Cartesian) coordinates (seed 001 §3.6.1; J. García de Jalón &
//! E. Bayo, *Kinematic and Dynamic Simulation of Multibody Systems*, 1994, ch. 2–3): every
//! body is described by points and unit vectors shared with its neighbours, so
//!
//! * joints are mostly *sharing*: two bodies that share a point are joined by a spherical
//!   joint, bodies sharing a point and a unit vector by a revolute joint about it;
//! * every constraint is quadratic, `Φ = a · b − c` with `a`, `b` linear combinations of
//!   the 3-vectors (free or fixed) — rigid-body distances and angles, unit norms, and the
//!   equations of joints between bodies that do not share coordinates;
//! * the mass matrix is constant.
//!
//! From the quadratic form everything a method needs follows exactly:
//! `∂Φ/∂x_i = α_i b + β_i a`, `γ = −2 ȧ·ḃ`, `∂²Φ/∂x_i∂x_j = (α_i β_j + α_j β_i) I₃`.
//! The pieces below (`rigid_rod`, `unit`, `spherical`, `revolute`, `prismatic`) emit these
//! constraints,
//! so a new mechanism is a list of nodes and pieces, not new derivative code.

use driftlab_core::ConstraintHessian;
use driftlab_core::SparsityPattern;

/// A 3-vector of the model: free (part of q) or fixed (ground).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    /// The i-th free 3-vector: coordinates `q[3i..3i+3]`.
    Free(usize),
    /// The i-th fixed 3-vector.
    Fixed(usize),
}

/// `Φ = a · b − c`, `a = Σ α_k x_k`, `b = Σ β_k x_k`.
#[derive(Clone, Debug)]
pub struct Quadratic {
    /// Terms of a.
    pub a: Vec<(Node, f64)>,
    /// Terms of b.
    pub b: Vec<(Node, f64)>,
    /// Constant.
    pub c: f64,
    /// What the row is (for diagnostics).
    pub label: String,
    /// Its physical kind: `"unit-norm"`, `"rigid-body"` or `"joint"`
    /// ([`driftlab_core::MechanicalSystem::row_kinds`]).
    pub kind: &'static str,
}

/// A model in natural coordinates.
#[derive(Clone, Debug, Default)]
pub struct NaturalModel {
    /// Initial values of the free 3-vectors.
    pub free: Vec<[f64; 3]>,
    /// Values of the fixed 3-vectors.
    pub fixed: Vec<[f64; 3]>,
    /// Constraint rows.
    pub rows: Vec<Quadratic>,
    /// Mass blocks `(i, j, μ)` with `i ≥ j` over free nodes: `M[3i+c, 3j+c] += μ`.
    pub mass: Vec<(usize, usize, f64)>,
    /// Constant applied force per free node.
    pub force: Vec<[f64; 3]>,
    /// The kind [`Self::keep_dot`] gives its rows (set by the body and joint pieces).
    pub kind: &'static str,
}

fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

impl NaturalModel {
    /// Add a free node with initial value `x`.
    pub fn free_node(&mut self, x: [f64; 3]) -> Node {
        self.free.push(x);
        self.force.push([0.0; 3]);
        Node::Free(self.free.len() - 1)
    }
    /// Add a fixed node.
    pub fn fixed_node(&mut self, x: [f64; 3]) -> Node {
        self.fixed.push(x);
        Node::Fixed(self.fixed.len() - 1)
    }
    /// Initial value of a node.
    pub fn initial(&self, n: Node) -> [f64; 3] {
        match n {
            Node::Free(i) => self.free[i],
            Node::Fixed(i) => self.fixed[i],
        }
    }
    fn value(&self, n: Node, q: &[f64]) -> [f64; 3] {
        match n {
            Node::Free(i) => [q[3 * i], q[3 * i + 1], q[3 * i + 2]],
            Node::Fixed(i) => self.fixed[i],
        }
    }
    fn combo(&self, terms: &[(Node, f64)], q: &[f64], rate: bool) -> [f64; 3] {
        let mut s = [0.0; 3];
        for &(n, w) in terms {
            if rate && matches!(n, Node::Fixed(_)) {
                continue;
            }
            let x = self.value(n, q);
            for c in 0..3 {
                s[c] += w * x[c];
            }
        }
        s
    }
    fn initial_q(&self) -> Vec<f64> {
        self.free.iter().flatten().copied().collect()
    }
    /// Add `a · b = (value in the initial configuration)`.
    pub fn keep_dot(&mut self, a: Vec<(Node, f64)>, b: Vec<(Node, f64)>, label: &str) {
        // The nodes' initial values directly (building the whole q per row made a model
        // of N rows quadratic in N).
        let initial = |terms: &[(Node, f64)]| {
            let mut s = [0.0; 3];
            for &(n, w) in terms {
                let x = self.initial(n);
                for c in 0..3 {
                    s[c] += w * x[c];
                }
            }
            s
        };
        let c = dot(&initial(&a), &initial(&b));
        let kind = if self.kind.is_empty() {
            "constraint"
        } else {
            self.kind
        };
        self.rows.push(Quadratic {
            a,
            b,
            c,
            label: label.into(),
            kind,
        });
    }
    /// Unit-norm row `|u|² = 1` for a free unit vector.
    pub fn unit(&mut self, u: Node, label: &str) {
        self.rows.push(Quadratic {
            a: vec![(u, 1.0)],
            b: vec![(u, 1.0)],
            c: 1.0,
            label: label.into(),
            kind: "unit-norm",
        });
    }
    /// A rigid body given by the segment `A → B` and unit vectors `vectors` carried by it
    /// (mutually perpendicular and perpendicular to `B − A` in the bodies built here):
    /// keeps `|B − A|`, every `(B − A)·u` and `u·u'` (the unit norms are added once per
    /// vector with [`Self::unit`]). Mass `m` of a box `ℓ × w × w` along `B − A` whose cross
    /// axes are the first two vectors: shape functions `(1 − ξ/ℓ, ξ/ℓ, η, ζ)` give the
    /// constant blocks `m/3, m/6, m/3` for the points and `m w²/12` per vector; gravity
    /// `m g` splits half to each point.
    #[allow(clippy::too_many_arguments)] // the physical data of one body
    pub fn rigid_rod(
        &mut self, a: Node, b: Node, vectors: &[Node], m: f64, width: f64, gravity: [f64; 3],
        label: &str,
    ) {
        let d = vec![(b, 1.0), (a, -1.0)];
        let outer = std::mem::replace(&mut self.kind, "rigid-body");
        self.keep_dot(d.clone(), d.clone(), &format!("{label}: |B − A|"));
        for (k, &u) in vectors.iter().enumerate() {
            self.keep_dot(d.clone(), vec![(u, 1.0)], &format!("{label}: (B − A)·u{k}"));
            for &w in &vectors[k + 1..] {
                self.keep_dot(vec![(u, 1.0)], vec![(w, 1.0)], &format!("{label}: u·u'"));
            }
        }
        self.kind = outer;
        let mut add = |i: Node, j: Node, mu: f64| {
            if let (Node::Free(i), Node::Free(j)) = (i, j) {
                let (i, j) = if i >= j { (i, j) } else { (j, i) };
                self.mass.push((i, j, mu));
            }
        };
        add(a, a, m / 3.0);
        add(b, b, m / 3.0);
        add(b, a, m / 6.0);
        for &u in vectors.iter().take(2) {
            add(u, u, m * width * width / 12.0);
        }
        for p in [a, b] {
            if let Node::Free(i) = p {
                for c in 0..3 {
                    self.force[i][c] += 0.5 * m * gravity[c];
                }
            }
        }
    }
    /// Spherical joint between two bodies that do not share the point: `P − Q = 0`
    /// (3 rows).
    pub fn spherical(&mut self, p: Node, q: Node, label: &str) {
        for c in 0..3 {
            let e = self.fixed_node(unit_axis(c));
            self.rows.push(Quadratic {
                a: vec![(p, 1.0), (q, -1.0)],
                b: vec![(e, 1.0)],
                c: 0.0,
                label: format!("{label}: spherical {c}"),
                kind: "joint",
            });
        }
    }
    /// Revolute joint between bodies with their own points and unit axes: spherical at
    /// `P = Q` (3 rows) and the axes kept parallel by `u · e_k = u' · e_k` on the two
    /// components transverse to the initial axis (2 rows): 5 rows. (Seed 001 §3.6.1 writes
    /// the axis rows as `n₁ᵀn₂ = 0, n₁ᵀb₂ = 0`; `n₁ᵀn₂ = 0` would make the axes
    /// perpendicular — the parallel axes need `n₁` orthogonal to two vectors normal to
    /// `n₂`, as here.)
    pub fn revolute(&mut self, p: Node, q: Node, u: Node, w: Node, label: &str) {
        self.spherical(p, q, label);
        let axis = self.initial(u);
        let k = (0..3).fold(0, |best, c| {
            if axis[c].abs() > axis[best].abs() {
                c
            } else {
                best
            }
        });
        for c in (0..3).filter(|&c| c != k) {
            let e = self.fixed_node(unit_axis(c));
            self.rows.push(Quadratic {
                a: vec![(u, 1.0), (w, -1.0)],
                b: vec![(e, 1.0)],
                c: 0.0,
                label: format!("{label}: revolute axis {c}"),
                kind: "joint",
            });
        }
    }
    /// Prismatic joint (5 rows) between body 1, which carries the point `p` and two unit
    /// vectors `v`, `w` spanning the plane normal to the sliding axis, and body 2, which
    /// carries the point `q`, a vector along its own axis (`axis`: a unit vector, or a
    /// segment such as `B − A`, as a linear combination of nodes) and a unit vector `v2`
    /// normal to that axis. Rows (each kept at its initial value):
    ///
    /// ```text
    /// axis · v,  axis · w          the axes stay parallel                  (2)
    /// v2 · w                       no rotation about the axis              (1)
    /// (q − p) · v,  (q − p) · w    q moves along the axis through p only   (2)
    /// ```
    ///
    /// (Seed 001 §3.6.1's prismatic rows, `(r₁ − r₂) × n` and `R₁ᵀn₁ − R₂ᵀn₂`, are six
    /// equations of rank ≤ 5 mixing frames, not the "5 constraints" it states; these five
    /// are independent.)
    #[allow(clippy::too_many_arguments)] // two bodies' points and vectors
    pub fn prismatic(
        &mut self, p: Node, v: Node, w: Node, q: Node, axis: Vec<(Node, f64)>, v2: Node,
        label: &str,
    ) {
        let outer = std::mem::replace(&mut self.kind, "joint");
        self.keep_dot(axis.clone(), vec![(v, 1.0)], &format!("{label}: axis·v"));
        self.keep_dot(axis, vec![(w, 1.0)], &format!("{label}: axis·w"));
        self.keep_dot(vec![(v2, 1.0)], vec![(w, 1.0)], &format!("{label}: v2·w"));
        let d = vec![(q, 1.0), (p, -1.0)];
        self.keep_dot(d.clone(), vec![(v, 1.0)], &format!("{label}: (q − p)·v"));
        self.keep_dot(d, vec![(w, 1.0)], &format!("{label}: (q − p)·w"));
        self.kind = outer;
    }
    /// Number of free coordinates.
    pub fn n(&self) -> usize {
        3 * self.free.len()
    }
    /// Initial positions.
    pub fn q0(&self) -> Vec<f64> {
        self.initial_q()
    }
    /// Lower pattern of M (diagonal 3×3 blocks), entries merged.
    pub fn mass_pattern(&self) -> (SparsityPattern, Vec<f64>) {
        // Blocks in order of first appearance, contributions summed in input order; the
        // index keeps this linear (a linear search per entry took minutes at 3·10⁵ rods).
        let mut blocks: Vec<(usize, usize, f64)> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for &(i, j, mu) in &self.mass {
            match index.get(&(i, j)) {
                Some(&k) => {
                    let b: &mut (usize, usize, f64) = &mut blocks[k];
                    b.2 += mu;
                }
                None => {
                    index.insert((i, j), blocks.len());
                    blocks.push((i, j, mu));
                }
            }
        }
        let mut e = Vec::new();
        let mut v = Vec::new();
        for &(i, j, mu) in &blocks {
            for c in 0..3 {
                e.push((3 * i + c, 3 * j + c));
                v.push(mu);
            }
        }
        (SparsityPattern::new(self.n(), self.n(), e), v)
    }
    fn free_terms(terms: &[(Node, f64)]) -> impl Iterator<Item = (usize, f64)> + '_ {
        terms.iter().filter_map(|&(n, w)| match n {
            Node::Free(i) => Some((i, w)),
            Node::Fixed(_) => None,
        })
    }
    /// Free nodes of row r (sorted, unique).
    fn row_nodes(&self, r: &Quadratic) -> Vec<usize> {
        let mut v: Vec<usize> = Self::free_terms(&r.a)
            .chain(Self::free_terms(&r.b))
            .map(|t| t.0)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
    /// Φ.
    pub fn constraints(&self, q: &[f64], out: &mut [f64]) {
        for (o, r) in out.iter_mut().zip(&self.rows) {
            *o = dot(&self.combo(&r.a, q, false), &self.combo(&r.b, q, false)) - r.c;
        }
    }
    /// Pattern of Φ_q.
    pub fn jacobian_pattern(&self) -> SparsityPattern {
        let mut e = Vec::new();
        for (k, r) in self.rows.iter().enumerate() {
            for i in self.row_nodes(r) {
                for c in 0..3 {
                    e.push((k, 3 * i + c));
                }
            }
        }
        SparsityPattern::new(self.rows.len(), self.n(), e)
    }
    /// Φ_q values.
    pub fn jacobian(&self, q: &[f64], out: &mut [f64]) {
        let mut k = 0;
        for r in &self.rows {
            let (a, b) = (self.combo(&r.a, q, false), self.combo(&r.b, q, false));
            for i in self.row_nodes(r) {
                let al: f64 = Self::free_terms(&r.a)
                    .filter(|t| t.0 == i)
                    .map(|t| t.1)
                    .sum();
                let be: f64 = Self::free_terms(&r.b)
                    .filter(|t| t.0 == i)
                    .map(|t| t.1)
                    .sum();
                for c in 0..3 {
                    out[k] = al * b[c] + be * a[c];
                    k += 1;
                }
            }
        }
    }
    /// γ = −2 ȧ·ḃ.
    pub fn curvature(&self, v: &[f64], out: &mut [f64]) {
        for (o, r) in out.iter_mut().zip(&self.rows) {
            *o = -2.0 * dot(&self.combo(&r.a, v, true), &self.combo(&r.b, v, true));
        }
    }
    /// Lower pattern of Σλ∇²Φ: diagonal entries of every 3×3 block coupling two free
    /// nodes of one row.
    pub fn hessian_pattern(&self) -> SparsityPattern {
        // Blocks in order of first appearance; the set keeps this linear in the rows (a
        // `Vec::contains` scan made the 3·10⁵-rod chain's set-up take minutes).
        let mut blocks: Vec<(usize, usize)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for r in &self.rows {
            for (i, _) in Self::free_terms(&r.a) {
                for (j, _) in Self::free_terms(&r.b) {
                    let b = if i >= j { (i, j) } else { (j, i) };
                    if seen.insert(b) {
                        blocks.push(b);
                    }
                }
            }
        }
        let e = blocks
            .iter()
            .flat_map(|&(i, j)| (0..3).map(move |c| (3 * i + c, 3 * j + c)))
            .collect();
        SparsityPattern::new(self.n(), self.n(), e)
    }
    /// The Hessian contraction as a plan: `(row, entry, coefficient)` triples such that
    /// `Σλ∇²Φ[entry] = Σ coefficient · λ[row]` over the plan, entries in the order of
    /// `pattern` (from [`Self::hessian_pattern`]). Built once; each evaluation is then one
    /// pass over the plan.
    pub fn hessian_plan(&self, pattern: &SparsityPattern) -> Vec<(usize, usize, f64)> {
        let index: std::collections::HashMap<(usize, usize), usize> = pattern
            .entries
            .iter()
            .enumerate()
            .map(|(k, &e)| (e, k))
            .collect();
        let mut plan = Vec::new();
        for (row, r) in self.rows.iter().enumerate() {
            for (i, al) in Self::free_terms(&r.a) {
                for (j, be) in Self::free_terms(&r.b) {
                    // ∂²(a·b)/∂x_i∂x_j = α_i β_j I (+ the transposed pair, added when the
                    // loop meets (j, i)); on the diagonal block both orders coincide.
                    let (hi, lo) = if i >= j { (i, j) } else { (j, i) };
                    let w = if i == j { 2.0 } else { 1.0 };
                    for c in 0..3 {
                        if let Some(&k) = index.get(&(3 * hi + c, 3 * lo + c)) {
                            plan.push((row, k, w * al * be));
                        }
                    }
                }
            }
        }
        plan
    }
    /// Applied forces (constant).
    pub fn forces(&self, out: &mut [f64]) {
        for (i, f) in self.force.iter().enumerate() {
            out[3 * i..3 * i + 3].copy_from_slice(f);
        }
    }
}

fn unit_axis(c: usize) -> [f64; 3] {
    let mut e = [0.0; 3];
    e[c] = 1.0;
    e
}

/// A [`NaturalModel`] with its metadata and initial velocity, as a
/// [`driftlab_core::MechanicalSystem`]. The constant mass matrix, the patterns and the
/// Hessian plan are computed once here, not per evaluation.
pub struct NaturalSystem {
    model: NaturalModel,
    info: driftlab_core::ProblemInfo,
    v0: Vec<f64>,
    energy_scale: f64,
    mass_pattern: SparsityPattern,
    mass_values: Vec<f64>,
    jacobian_pattern: SparsityPattern,
    hessian_pattern: SparsityPattern,
    hessian_plan: Vec<(usize, usize, f64)>,
    exact: Option<ExactFn>,
    domain: Option<DomainFn>,
}

/// A closed-form solution `t ↦ (q, v, λ)` of a natural-coordinate model.
pub type ExactFn = Box<dyn Fn(f64) -> driftlab_core::ExactSolution + Send + Sync>;

/// Where an [`ExactFn`] holds: `t_end ↦` its [`driftlab_core::ReferenceDomain`].
pub type DomainFn = Box<dyn Fn(f64) -> driftlab_core::ReferenceDomain + Send + Sync>;

impl NaturalSystem {
    /// Wrap `model` with its metadata, consistent initial velocities `v0` and the scale of
    /// its relative energy error.
    pub fn new(
        model: NaturalModel, info: driftlab_core::ProblemInfo, v0: Vec<f64>, energy_scale: f64,
    ) -> Self {
        let (mass_pattern, mass_values) = model.mass_pattern();
        let jacobian_pattern = model.jacobian_pattern();
        let hessian_pattern = model.hessian_pattern();
        let hessian_plan = model.hessian_plan(&hessian_pattern);
        Self {
            model,
            info,
            v0,
            energy_scale,
            mass_pattern,
            mass_values,
            jacobian_pattern,
            hessian_pattern,
            hessian_plan,
            exact: None,
            domain: None,
        }
    }

    /// Attach the model's exact solution (checked by the conformance suite against the DAE
    /// and scored by the metrics like any other).
    pub fn with_exact(mut self, exact: ExactFn) -> Self {
        self.exact = Some(exact);
        self
    }

    /// Declare where the exact solution holds ([`driftlab_core::MechanicalSystem::reference_domain`];
    /// without it a model with an exact solution is undeclared).
    pub fn with_domain(mut self, domain: DomainFn) -> Self {
        self.domain = Some(domain);
        self
    }
}

impl driftlab_core::MechanicalSystem for NaturalSystem {
    fn info(&self) -> driftlab_core::ProblemInfo {
        self.info.clone()
    }
    fn dims(&self) -> driftlab_core::Dims {
        driftlab_core::Dims {
            n: self.model.n(),
            m: self.model.rows.len(),
        }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        self.mass_pattern.clone()
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        out.copy_from_slice(&self.mass_values);
    }
    fn forces(&self, _t: f64, _q: &[f64], _v: &[f64], out: &mut [f64]) {
        self.model.forces(out);
    }
    fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        self.model.constraints(q, out);
    }
    fn row_kinds(&self) -> Vec<&'static str> {
        self.model.rows.iter().map(|r| r.kind).collect()
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        self.jacobian_pattern.clone()
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        self.model.jacobian(q, out);
    }
    fn curvature(&self, _t: f64, _q: &[f64], v: &[f64], out: &mut [f64]) {
        self.model.curvature(v, out);
    }
    /// `½ vᵀ M v − f · q` (constant forces).
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let mut w = vec![0.0; v.len()];
        self.mass_pattern
            .mul_vec(&self.mass_values, v, &mut w, true);
        let kin = 0.5 * v.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>();
        let mut f = vec![0.0; q.len()];
        self.model.forces(&mut f);
        Some(kin - f.iter().zip(q).map(|(a, b)| a * b).sum::<f64>())
    }
    fn energy_scale(&self) -> f64 {
        self.energy_scale
    }
    fn exact(&self, t: f64) -> Option<driftlab_core::ExactSolution> {
        self.exact.as_ref().map(|f| f(t))
    }
    /// The domain given by [`NaturalSystem::with_domain`]; undeclared (or absent, without
    /// an exact solution) otherwise.
    fn reference_domain(&self, t_end: f64) -> driftlab_core::ReferenceDomain {
        match &self.domain {
            Some(f) if self.exact.is_some() => f(t_end),
            _ => driftlab_core::system::undeclared_domain(self.exact.is_some(), false),
        }
    }
    fn initial_state(&self) -> driftlab_core::State {
        driftlab_core::State::mechanical(
            0.0,
            self.model.q0(),
            self.v0.clone(),
            self.model.rows.len(),
        )
    }
    fn constraint_hessian(&self) -> Option<&dyn ConstraintHessian> {
        Some(self)
    }
}

impl ConstraintHessian for NaturalSystem {
    fn pattern(&self) -> SparsityPattern {
        self.hessian_pattern.clone()
    }
    fn values(&self, _t: f64, _q: &[f64], lambda: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = 0.0);
        for &(row, k, c) in &self.hessian_plan {
            out[k] += c * lambda[row];
        }
    }
}
