//! `elastic-rod`: an inextensible planar elastic rod (the Kirchhoff rod of seed 001 §3.8.3's
//! soft robots, "软体机器人：连续体约束"), clamped horizontally at one end and drooping under
//! gravity, discretized by N segments of length Δs = L/N:
//!
//! ```text
//! q = (x₁, y₁, …, x_N, y_N),  p₀ = 0 fixed,   M = m I with m = ρL/N,   f = −m g e₂ − ∇U_b
//! Φ₀ = y₁ (clamp: the first segment stays horizontal),   Φ_i = |p_i − p_{i−1}|² − Δs²  (|∂r/∂s| = 1)
//! U_b = (EI/Δs) Σ_{i=1}^{N−1} ½ φ_i²,   φ_i = atan2(e_i × e_{i+1}, e_i · e_{i+1}),  e_i = p_i − p_{i−1}
//! ∂φ_i/∂e_i = −e_i^⊥/|e_i|²,  ∂φ_i/∂e_{i+1} = e_{i+1}^⊥/|e_{i+1}|²,  e^⊥ = (−e_y, e_x)
//! H = Σ ½ m|v_i|² + m g y_i + U_b
//! ```
//!
//! The bending energy is the discrete planar elastica: the turning angle φ_i between two
//! segments over the Voronoi length Δs is the curvature κ ≈ φ_i/Δs, and Σ ½EIκ²Δs becomes
//! Σ EI φ_i²/(2Δs) (Bergou, Wardetzky, Robinson, Audoly & Grinspun, ACM Trans. Graph. 27(3),
//! 2008, for the rod's discrete curvature; Antman, Nonlinear Problems of Elasticity, 2005,
//! ch. 4, for the Kirchhoff rod). The rod starts straight and at rest, so it falls and
//! swings with large deflection (static tip sag of the linear theory ρgL⁴/(8EI) = 1.2 L
//! at the defaults). Refining N raises the highest bending frequency as N² (√(EI/ρ)·(N/L)²
//! up to a constant): the explicit step limit falls as 1/N², which the experiment
//! `elastic-rod` measures per method. The bending Hessian is the problem's tangent
//! stiffness (`TangentMatrices`), so implicit methods put it in their Newton matrix. No
//! closed form; the energy is conserved.

use crate::entry::{Problem, ProblemEntry};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{
    Dims, MechanicalSystem, ParamError, ProblemInfo, SparsityPattern, State, TangentMatrices,
};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Parameters of [`ElasticRod`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ElasticRodParams {
    /// Segments N ≥ 2.
    pub segments: usize,
    /// Length L (m).
    pub length: f64,
    /// Mass per length ρ (kg/m).
    pub rho: f64,
    /// Bending stiffness EI (N m²).
    pub ei: f64,
    /// Gravitational acceleration (m/s²).
    pub g: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for ElasticRodParams {
    fn default() -> Self {
        Self {
            segments: 8,
            length: 1.0,
            rho: 1.0,
            ei: 1.0,
            g: 9.81,
            t_end: 2.0,
        }
    }
}

const ID: &str = "elastic-rod";

/// The clamped elastic rod.
#[derive(Clone, Debug)]
pub struct ElasticRod {
    p: ElasticRodParams,
    ds: f64,
    m: f64,
    /// The lower-triangle entries of the bending stiffness (coordinates whose nodes are at
    /// most two apart) and their positions.
    tangent: SparsityPattern,
    position: HashMap<(usize, usize), usize>,
}

impl ElasticRod {
    /// Build and validate.
    pub fn new(p: ElasticRodParams) -> Result<Self, ParamError> {
        if p.segments < 2 {
            return Err(ParamError::OutOfRange {
                id: ID.into(),
                field: "segments",
                value: p.segments as f64,
                fix: "give segments ≥ 2 (one bend at least)".into(),
            });
        }
        for (field, x) in [
            ("length", p.length),
            ("rho", p.rho),
            ("ei", p.ei),
            ("g", p.g),
            ("t_end", p.t_end),
        ] {
            bounded_positive(ID, field, x)?;
        }
        let ds = p.length / p.segments as f64;
        let n = 2 * p.segments;
        let entries: Vec<(usize, usize)> = (0..n)
            .flat_map(|r| ((2 * (r / 2)).saturating_sub(4)..=r).map(move |c| (r, c)))
            .collect();
        let position = entries.iter().enumerate().map(|(k, &rc)| (rc, k)).collect();
        Ok(Self {
            p,
            ds,
            m: p.rho * ds,
            tangent: SparsityPattern::new(n, n, entries),
            position,
        })
    }

    /// `p_i − p_{i−1}` in `x` (positions or velocities), with `p₀ = 0`.
    fn segment(x: &[f64], i: usize) -> [f64; 2] {
        let prev = if i == 1 {
            [0.0, 0.0]
        } else {
            [x[2 * i - 4], x[2 * i - 3]]
        };
        [x[2 * i - 2] - prev[0], x[2 * i - 1] - prev[1]]
    }

    /// The turning angle φ_i between segments i and i + 1 (1 ≤ i ≤ N − 1).
    fn turning(q: &[f64], i: usize) -> (f64, [f64; 2], [f64; 2]) {
        let (a, b) = (Self::segment(q, i), Self::segment(q, i + 1));
        let phi = (a[0] * b[1] - a[1] * b[0]).atan2(a[0] * b[0] + a[1] * b[1]);
        (phi, a, b)
    }

    /// The bending energy U_b.
    fn bending(&self, q: &[f64]) -> f64 {
        let k = self.p.ei / self.ds;
        (1..self.p.segments)
            .map(|i| 0.5 * k * Self::turning(q, i).0.powi(2))
            .sum()
    }
}

/// Catalog entry `elastic-rod`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "inextensible planar elastic rod, clamped, drooping under gravity: N segments with bending stiffness (seed 001 §3.8.3 soft robots)",
        build: |t| Ok(Problem::Mechanical(Box::new(ElasticRod::new(params::parse("problem", ID, t)?)?))),
        defaults: params::defaults::<ElasticRodParams>,
    }
}

impl MechanicalSystem for ElasticRod {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!("Inextensible elastic rod, N = {} segments (L = {}, ρ = {}, EI = {}), clamped, under gravity", p.segments, p.length, p.rho, p.ei),
            equations: "m p_i'' = −mg e₂ − ∇_i U_b − Φ_qᵀλ,  Φ = (y₁, |p_i − p_{i−1}|² − Δs²),  U_b = (EI/Δs) Σ ½φ_i², \
                        φ_i = ∠(p_i − p_{i−1}, p_{i+1} − p_i),  H = Σ ½m|v_i|² + mg y_i + U_b"
                .into(),
            citation: "seed 001 §3.8.3 (soft robots: continuum constraints |∂r/∂s| = 1); discrete elastica: Bergou et al., ACM \
                       Trans. Graph. 27(3) 2008; Antman, Nonlinear Problems of Elasticity (2005) ch. 4"
                .into(),
            tags: vec!["planar".into(), "conservative".into(), "scalable".into(), "stiff".into(), "index-3".into()],
            index: 3,
            t_end: p.t_end,
            reference: "none (no closed form); energy is conserved".into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims {
            n: 2 * self.p.segments,
            m: self.p.segments + 1,
        }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(2 * self.p.segments)
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = self.m);
    }
    fn forces(&self, _t: f64, q: &[f64], _v: &[f64], out: &mut [f64]) {
        for i in 0..self.p.segments {
            out[2 * i] = 0.0;
            out[2 * i + 1] = -self.m * self.p.g;
        }
        let k = self.p.ei / self.ds;
        let perp = |e: [f64; 2]| {
            let l2 = e[0] * e[0] + e[1] * e[1];
            [-e[1] / l2, e[0] / l2]
        };
        for i in 1..self.p.segments {
            let (phi, a, b) = Self::turning(q, i);
            // ∂U/∂e_i = −kφ e_i^⊥/|e_i|², ∂U/∂e_{i+1} = kφ e_{i+1}^⊥/|e_{i+1}|²; e_j = p_j − p_{j−1}.
            let (ga, gb) = (perp(a).map(|x| -k * phi * x), perp(b).map(|x| k * phi * x));
            for c in 0..2 {
                // Node i − 1 (absent for i = 1: the origin), node i, node i + 1.
                if i >= 2 {
                    out[2 * (i - 2) + c] += ga[c];
                }
                out[2 * (i - 1) + c] -= ga[c] - gb[c];
                out[2 * i + c] -= gb[c];
            }
        }
    }
    fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        out[0] = q[1];
        for i in 1..=self.p.segments {
            let e = Self::segment(q, i);
            out[i] = e[0] * e[0] + e[1] * e[1] - self.ds * self.ds;
        }
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        let mut e = vec![(0, 1)];
        for i in 1..=self.p.segments {
            e.push((i, 2 * i - 2));
            e.push((i, 2 * i - 1));
            if i > 1 {
                e.push((i, 2 * i - 4));
                e.push((i, 2 * i - 3));
            }
        }
        SparsityPattern::new(self.p.segments + 1, 2 * self.p.segments, e)
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        out[0] = 1.0;
        let mut k = 1;
        for i in 1..=self.p.segments {
            let e = Self::segment(q, i);
            out[k] = 2.0 * e[0];
            out[k + 1] = 2.0 * e[1];
            k += 2;
            if i > 1 {
                out[k] = -2.0 * e[0];
                out[k + 1] = -2.0 * e[1];
                k += 2;
            }
        }
    }
    fn curvature(&self, _t: f64, _q: &[f64], v: &[f64], out: &mut [f64]) {
        out[0] = 0.0;
        for i in 1..=self.p.segments {
            let w = Self::segment(v, i);
            out[i] = -2.0 * (w[0] * w[0] + w[1] * w[1]);
        }
    }
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let (m, g) = (self.m, self.p.g);
        let kinetic_and_gravity: f64 = (0..self.p.segments)
            .map(|i| 0.5 * m * (v[2 * i].powi(2) + v[2 * i + 1].powi(2)) + m * g * q[2 * i + 1])
            .sum();
        Some(kinetic_and_gravity + self.bending(q))
    }
    fn energy_scale(&self) -> f64 {
        // The potential energy the rod can release: its weight over its length.
        self.p.rho * self.p.length * self.p.g * self.p.length
    }
    fn tangent(&self) -> Option<&dyn TangentMatrices> {
        Some(self)
    }
    fn initial_state(&self) -> State {
        let n = self.p.segments;
        let q = (1..=n).flat_map(|i| [i as f64 * self.ds, 0.0]).collect();
        State::mechanical(0.0, q, vec![0.0; 2 * n], n + 1)
    }
}

/// `∇θ(e) = e^⊥/|e|²` of the direction angle θ = atan2(e_y, e_x), and its Hessian
/// `[[2e_x e_y, e_y² − e_x²], [e_y² − e_x², −2e_x e_y]] / |e|⁴`.
fn angle_derivatives(e: [f64; 2]) -> ([f64; 2], [[f64; 2]; 2]) {
    let r2 = e[0] * e[0] + e[1] * e[1];
    let r4 = r2 * r2;
    let off = (e[1] * e[1] - e[0] * e[0]) / r4;
    let diag = 2.0 * e[0] * e[1] / r4;
    ([-e[1] / r2, e[0] / r2], [[diag, off], [off, -diag]])
}

impl TangentMatrices for ElasticRod {
    /// Coordinates of nodes at most two apart (the reach of one turning angle).
    fn pattern(&self) -> SparsityPattern {
        self.tangent.clone()
    }
    /// `K_t = ∇²U_b = (EI/Δs) Σ_i (∇φ_i ∇φ_iᵀ + φ_i ∇²φ_i)` with `∇_a φ = −∇θ(a)`,
    /// `∇_b φ = ∇θ(b)`, `∇²_aa φ = −∇²θ(a)`, `∇²_bb φ = ∇²θ(b)` (a = e_i, b = e_{i+1}), mapped
    /// to nodes i − 1, i, i + 1 by `a = p_i − p_{i−1}`, `b = p_{i+1} − p_i`; gravity adds
    /// nothing, and there is no damping (`C_t = 0`).
    fn values(&self, _t: f64, q: &[f64], _v: &[f64], k: &mut [f64], c: &mut [f64]) {
        k.iter_mut().chain(c.iter_mut()).for_each(|x| *x = 0.0);
        let stiffness = self.p.ei / self.ds;
        for i in 1..self.p.segments {
            let (phi, a, b) = Self::turning(q, i);
            let ((ga, ha), (gb, hb)) = (angle_derivatives(a), angle_derivatives(b));
            // ∇φ and ∇²φ in (a, b); then to the 6 node coordinates (i − 1, i, i + 1).
            let grad = [-ga[0], -ga[1], gb[0], gb[1]];
            let hess = |r: usize, s: usize| match (r / 2, s / 2) {
                (0, 0) => -ha[r][s],
                (1, 1) => hb[r - 2][s - 2],
                _ => 0.0,
            };
            // d(a, b)/d(node coordinates): a = p_i − p_{i−1}, b = p_{i+1} − p_i.
            let map = |r: usize, node: usize| -> f64 {
                match (r / 2, node) {
                    (0, 0) | (1, 1) => -1.0,
                    (0, 1) | (1, 2) => 1.0,
                    _ => 0.0,
                }
            };
            for (na, nb) in (0..3).flat_map(|x| (0..3).map(move |y| (x, y))) {
                // Node i − 1 + na; node 0 (the fixed origin) has no coordinates.
                let (ga_node, gb_node) = (i - 1 + na, i - 1 + nb);
                if ga_node == 0 || gb_node == 0 || gb_node > ga_node {
                    continue;
                }
                for (ca, cb) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                    let (row, col) = (2 * (ga_node - 1) + ca, 2 * (gb_node - 1) + cb);
                    if col > row {
                        continue;
                    }
                    let mut value = 0.0;
                    for r in 0..4 {
                        for s in 0..4 {
                            let jr = if r % 2 == ca { map(r, na) } else { 0.0 };
                            let js = if s % 2 == cb { map(s, nb) } else { 0.0 };
                            value += jr * (grad[r] * grad[s] + phi * hess(r, s)) * js;
                        }
                    }
                    if let Some(&at) = self.position.get(&(row, col)) {
                        k[at] += stiffness * value;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 5-segment rod at a bent configuration off the constraint manifold.
    fn bent_rod() -> Result<(ElasticRod, Vec<f64>), ParamError> {
        let rod = ElasticRod::new(ElasticRodParams {
            segments: 5,
            ..ElasticRodParams::default()
        })?;
        let q = (0..10)
            .map(|k| 0.2 * (k / 2 + 1) as f64 + 0.07 * ((3 * k) as f64).sin())
            .collect();
        Ok((rod, q))
    }

    /// The applied forces are −∇(gravity + bending energy), against central differences
    /// of `energy` at v = 0 on a bent, off-manifold configuration.
    #[test]
    fn forces_are_the_negative_energy_gradient() -> Result<(), ParamError> {
        let (rod, q) = bent_rod()?;
        let n = q.len();
        let mut f = vec![0.0; n];
        rod.forces(0.0, &q, &[0.0; 10], &mut f);
        let energy = |x: &[f64]| rod.energy(0.0, x, &[0.0; 10]).unwrap_or(f64::NAN);
        for k in 0..n {
            let (mut a, mut b) = (q.clone(), q.clone());
            a[k] += 1e-6;
            b[k] -= 1e-6;
            let fd = -(energy(&a) - energy(&b)) / 2e-6;
            assert!(
                (f[k] - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
                "component {k}: {} vs {fd}",
                f[k]
            );
        }
        Ok(())
    }

    /// `K_t` is −∂f/∂q, against central differences of the forces.
    #[test]
    fn the_tangent_stiffness_is_the_force_jacobian() -> Result<(), ParamError> {
        let (rod, q) = bent_rod()?;
        let n = q.len();
        let pattern = rod.tangent.clone();
        let (mut k, mut c) = (vec![0.0; pattern.nnz()], vec![0.0; pattern.nnz()]);
        rod.values(0.0, &q, &[0.0; 10], &mut k, &mut c);
        let force = |x: &[f64]| {
            let mut f = vec![0.0; n];
            rod.forces(0.0, x, &[0.0; 10], &mut f);
            f
        };
        let mut dense = vec![0.0; n * n];
        for (&(r, col), &x) in pattern.entries.iter().zip(&k) {
            dense[r * n + col] = x;
            dense[col * n + r] = x;
        }
        for col in 0..n {
            let (mut a, mut b) = (q.clone(), q.clone());
            a[col] += 1e-6;
            b[col] -= 1e-6;
            let (fa, fb) = (force(&a), force(&b));
            for r in 0..n {
                let fd = -(fa[r] - fb[r]) / 2e-6;
                let got = dense[r * n + col];
                assert!(
                    (got - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
                    "K[{r}][{col}] = {got} vs {fd}"
                );
            }
        }
        Ok(())
    }
}
