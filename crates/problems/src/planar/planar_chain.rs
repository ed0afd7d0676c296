//! `planar-chain`: N point masses linked by rigid massless rods, the first pinned at the
//! origin (seed 001 exercise 1 for N = 2, the double pendulum). The scalable case for the
//! sparse KKT solver: `Φ_q` is banded with 4 nonzeros per row.
//!
//! ```text
//! q = (x₁, y₁, …, x_N, y_N),  p₀ = 0,   M = m I,   f = (0, −mg, …)
//! Φ_i = |p_i − p_{i−1}|² − ℓ²,            i = 1…N
//! Φ_q row i: 2(p_i − p_{i−1})ᵀ at p_i,  −2(p_i − p_{i−1})ᵀ at p_{i−1}
//! γ_i = −2 |v_i − v_{i−1}|²,   H = Σ ½ m |v_i|² + m g y_i
//! ```
//!
//! Initial state: all links at angle `θ₀` from the downward vertical (a straight chain),
//! at rest. No closed-form solution for N ≥ 2 (chaotic for a horizontal release).
//!
//! It is also the discretized inextensible rod of seed 001 §3.8.3's soft robots,
//! `|∂r/∂s| = 1` sampled at N points of spacing ℓ (`|p_i − p_{i−1}|² = ℓ²`), with the
//! mass lumped at the points and no bending stiffness.

use crate::entry::{Problem, ProblemEntry};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::ConstraintHessian;
use driftlab_core::{Dims, MechanicalSystem, ParamError, ProblemInfo, SparsityPattern, State};
use serde::{Deserialize, Serialize};

/// Parameters of [`PlanarChain`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlanarChainParams {
    /// Number of links (and masses), `N ≥ 1`.
    pub links: usize,
    /// Mass of each bob (kg).
    pub m: f64,
    /// Length of each rod (m).
    pub length: f64,
    /// Gravitational acceleration [m/s²].
    pub g: f64,
    /// Initial angle of every link from the downward vertical (degrees).
    pub theta0_deg: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for PlanarChainParams {
    fn default() -> Self {
        Self {
            links: 2,
            m: 1.0,
            length: 1.0,
            g: 9.81,
            theta0_deg: 90.0,
            t_end: 10.0,
        }
    }
}

/// The planar chain.
#[derive(Clone, Debug)]
pub struct PlanarChain {
    p: PlanarChainParams,
}

impl PlanarChain {
    /// Build and validate.
    pub fn new(p: PlanarChainParams) -> Result<Self, ParamError> {
        p.validate(ID)?;
        Ok(Self { p })
    }
}

impl PlanarChainParams {
    /// Check every parameter, naming problem `id` (this one's or a problem built on it,
    /// e.g. `planar-chain-angles`) in a refusal.
    pub fn validate(&self, id: &str) -> Result<(), ParamError> {
        super::at_least_one(id, "links", self.links, "give links ≥ 1")?;
        bounded_positive(id, "m", self.m)?;
        bounded_positive(id, "length", self.length)?;
        bounded_positive(id, "g", self.g)?;
        bounded_positive(id, "t_end", self.t_end)?;
        params::finite(id, "theta0_deg", self.theta0_deg)
    }
}

/// The catalog id `planar-chain`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "planar-chain";

/// Catalog entry `planar-chain`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "N point masses on rigid rods, first pinned (N = 2: double pendulum); scalable sparse case",
        build: |t| Ok(Problem::Mechanical(Box::new(PlanarChain::new(params::parse("problem", ID, t)?)?))),
        defaults: params::defaults::<PlanarChainParams>,
    }
}

/// `p_i − p_{i−1}` of link `i` in `x` (positions or velocities, `(x₁, y₁, …)`), with
/// `p₀ = 0` the pinned origin.
fn link_difference(x: &[f64], i: usize) -> (f64, f64) {
    let (px, py) = if i == 0 {
        (0.0, 0.0)
    } else {
        (x[2 * i - 2], x[2 * i - 1])
    };
    (x[2 * i] - px, x[2 * i + 1] - py)
}

impl MechanicalSystem for PlanarChain {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!("Planar chain of N = {} point masses (m = {}, ℓ = {}), first pinned at the origin", p.links, p.m, p.length),
            equations: "m p_i'' = −mg e₂ − Σ_j (Φ_q)_{j,i}ᵀ λ_j,  Φ_i = |p_i − p_{i−1}|² − ℓ² (p₀ = 0),  \
                        γ_i = −2|v_i − v_{i−1}|²,  H = Σ ½m|v_i|² + mg y_i"
                .into(),
            citation: "seed 001 §3.2.5 (sparse chain Jacobian) and exercise 1 (double pendulum constraints and Jacobian)".into(),
            tags: vec!["planar".into(), "conservative".into(), "scalable".into(), "index-3".into()],
            index: 3,
            t_end: p.t_end,
            reference: "none (no closed form for N ≥ 2); energy is conserved".into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims {
            n: 2 * self.p.links,
            m: self.p.links,
        }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(2 * self.p.links)
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = self.p.m);
    }
    fn forces(&self, _t: f64, _q: &[f64], _v: &[f64], out: &mut [f64]) {
        for i in 0..self.p.links {
            out[2 * i] = 0.0;
            out[2 * i + 1] = -self.p.m * self.p.g;
        }
    }
    fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let l2 = self.p.length * self.p.length;
        for i in 0..self.p.links {
            let (dx, dy) = link_difference(q, i);
            out[i] = dx * dx + dy * dy - l2;
        }
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        let mut e = Vec::with_capacity(4 * self.p.links);
        for i in 0..self.p.links {
            e.push((i, 2 * i));
            e.push((i, 2 * i + 1));
            if i > 0 {
                e.push((i, 2 * i - 2));
                e.push((i, 2 * i - 1));
            }
        }
        SparsityPattern::new(self.p.links, 2 * self.p.links, e)
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let mut k = 0;
        for i in 0..self.p.links {
            let (dx, dy) = link_difference(q, i);
            out[k] = 2.0 * dx;
            out[k + 1] = 2.0 * dy;
            k += 2;
            if i > 0 {
                out[k] = -2.0 * dx;
                out[k + 1] = -2.0 * dy;
                k += 2;
            }
        }
    }
    fn curvature(&self, _t: f64, _q: &[f64], v: &[f64], out: &mut [f64]) {
        for i in 0..self.p.links {
            let (du, dv) = link_difference(v, i);
            out[i] = -2.0 * (du * du + dv * dv);
        }
    }
    fn row_kinds(&self) -> Vec<&'static str> {
        vec!["rigid-body"; self.p.links]
    }
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let mut h = 0.0;
        for i in 0..self.p.links {
            h += 0.5 * self.p.m * (v[2 * i] * v[2 * i] + v[2 * i + 1] * v[2 * i + 1])
                + self.p.m * self.p.g * q[2 * i + 1];
        }
        Some(h)
    }
    fn energy_scale(&self) -> f64 {
        let n = self.p.links as f64;
        self.p.m * self.p.g * self.p.length * n * (n + 1.0) / 2.0
    }
    fn initial_state(&self) -> State {
        let th = self.p.theta0_deg.to_radians();
        let (s, c) = th.sin_cos();
        let n = self.p.links;
        let mut q = Vec::with_capacity(2 * n);
        for i in 1..=n {
            q.push(i as f64 * self.p.length * s);
            q.push(-(i as f64) * self.p.length * c);
        }
        State::mechanical(0.0, q, vec![0.0; 2 * n], n)
    }
    fn constraint_hessian(&self) -> Option<&dyn ConstraintHessian> {
        Some(self)
    }
}

impl ConstraintHessian for PlanarChain {
    /// `Σ λ_i ∇²Φ_i`: `2(λ_j + λ_{j+1})` on the diagonal of node j, `−2λ_j` coupling
    /// node j with node j − 1 (same coordinate).
    fn pattern(&self) -> SparsityPattern {
        let n = self.p.links;
        let mut e: Vec<(usize, usize)> = (0..2 * n).map(|i| (i, i)).collect();
        for j in 1..n {
            e.push((2 * j, 2 * j - 2));
            e.push((2 * j + 1, 2 * j - 1));
        }
        SparsityPattern::new(2 * n, 2 * n, e)
    }
    fn values(&self, _t: f64, _q: &[f64], lambda: &[f64], out: &mut [f64]) {
        let n = self.p.links;
        for j in 0..n {
            let d = 2.0 * (lambda[j] + if j + 1 < n { lambda[j + 1] } else { 0.0 });
            out[2 * j] = d;
            out[2 * j + 1] = d;
        }
        for j in 1..n {
            out[2 * n + 2 * (j - 1)] = -2.0 * lambda[j];
            out[2 * n + 2 * (j - 1) + 1] = -2.0 * lambda[j];
        }
    }
}
