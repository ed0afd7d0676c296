//! `n-four-bar`: the IFToMM / A Coruña benchmark A02, an assembly of N four-bar linkages
//! (2N + 1 uniform rods of length ℓ and mass m), one degree of freedom, in planar natural
//! coordinates (the moving rod ends B₀ … B_N), so the mass matrix is constant. Preset
//! `four-bar` is N = 1.
//!
//! ```text
//! A_i = (iℓ, 0) fixed,  q = (B₀, …, B_N) ∈ ℝ^{2(N+1)},  B_i(0) = (iℓ, ℓ),  Ḃ_i(0) = (v₀, 0)
//! rods  Φ_i = |B_i − A_i|² − ℓ²        (i = 0…N,   T = ½ (m/3) |Ḃ_i|²)
//! links Φ_{N+1+i} = |B_{i+1} − B_i|² − ℓ²   (i = 0…N−1, T = (m/6)(|Ḃ_i|² + Ḃ_i·Ḃ_{i+1} + |Ḃ_{i+1}|²))
//! f: −mg/2 on each end point of every rod (rod centres at the midpoints)
//! H = T + Σ_rods m g y_centre
//! ```
//!
//! When the rods pass through the horizontal all points lie on y = 0 and every row of Φ_q
//! is horizontal: the rank drops from 2N + 1 to N + 1 and the mobility jumps from 1 to
//! N + 1 (the benchmark's singular positions). A method must pass through them (by
//! regularized or rank-revealing multipliers) or fail as a recorded row. The benchmark
//! specifies N = 40, g = 9.81, v₀ = 1 m/s, 20 s, high-precision allowed error 1e-3 on the
//! history of B₀; its reference file was not obtainable, so energy conservation and the
//! constraint residuals are the checks here (datasets/iftomm_udc_mbs_benchmark_specs.json).

use crate::entry::{Problem, ProblemEntry};
use crate::planar::at_least_one;
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::ConstraintHessian;
use driftlab_core::{Dims, MechanicalSystem, ParamError, ProblemInfo, SparsityPattern, State};
use serde::{Deserialize, Serialize};

/// Parameters of [`NFourBar`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NFourBarParams {
    /// Number of four-bar loops N (2N + 1 rods).
    pub n: usize,
    /// Rod length ℓ (m).
    pub length: f64,
    /// Rod mass m (kg) (uniform).
    pub m: f64,
    /// Gravity g [m/s²] along −y.
    pub g: f64,
    /// Initial horizontal speed of B₀ (m/s).
    pub v0: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for NFourBarParams {
    fn default() -> Self {
        Self {
            n: 40,
            length: 1.0,
            m: 1.0,
            g: 9.81,
            v0: 1.0,
            t_end: 20.0,
        }
    }
}

/// The N-four-bar mechanism.
#[derive(Clone, Debug)]
pub struct NFourBar {
    p: NFourBarParams,
    id: &'static str,
}

impl NFourBar {
    /// Build and validate.
    pub fn new(p: NFourBarParams, id: &'static str) -> Result<Self, ParamError> {
        at_least_one(id, "n", p.n, "give n ≥ 1 four-bar loops")?;
        bounded_positive(id, "length", p.length)?;
        bounded_positive(id, "m", p.m)?;
        bounded_positive(id, "g", p.g)?;
        bounded_positive(id, "t_end", p.t_end)?;
        params::finite(id, "v0", p.v0)?;
        Ok(Self { p, id })
    }

    fn points(&self) -> usize {
        self.p.n + 1
    }

    /// `(a, b, ground)`: rows 0…N are rods from ground pivot `A_i` to point i; rows
    /// N+1… are links from point i to i + 1.
    fn row(&self, r: usize, q: &[f64]) -> ([f64; 2], [f64; 2], Option<usize>, usize) {
        let np = self.points();
        if r < np {
            let a = [r as f64 * self.p.length, 0.0];
            ([q[2 * r], q[2 * r + 1]], a, None, r)
        } else {
            let i = r - np;
            (
                [q[2 * i + 2], q[2 * i + 3]],
                [q[2 * i], q[2 * i + 1]],
                Some(i),
                i + 1,
            )
        }
    }
}

fn build_with(
    id: &'static str, base: NFourBarParams, t: &toml::Table,
) -> Result<Problem, ParamError> {
    let mut table = toml::Table::try_from(base).unwrap_or_default();
    table.extend(t.clone());
    Ok(Problem::Mechanical(Box::new(NFourBar::new(
        params::parse("problem", id, &table)?,
        id,
    )?)))
}

/// Catalog entry `n-four-bar` (IFToMM A02).
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: "n-four-bar",
        summary: "IFToMM A02: N four-bar loops (2N+1 rods), 1 DOF, singular when horizontal (rank drops to N+1)",
        build: |t| build_with("n-four-bar", NFourBarParams::default(), t),
        defaults: params::defaults::<NFourBarParams>,
    }
}

/// Catalog entry `four-bar` (N = 1).
pub fn four_bar_entry() -> ProblemEntry {
    ProblemEntry {
        id: "four-bar",
        summary:
            "one four-bar linkage (A02 with N = 1): passes through its singular horizontal position",
        build: |t| {
            build_with(
                "four-bar",
                NFourBarParams {
                    n: 1,
                    ..NFourBarParams::default()
                },
                t,
            )
        },
        defaults: || {
            toml::Table::try_from(NFourBarParams {
                n: 1,
                ..NFourBarParams::default()
            })
            .unwrap_or_default()
        },
    }
}

impl MechanicalSystem for NFourBar {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: self.id.into(),
            title: format!(
                "N-four-bar mechanism (IFToMM A02), N = {}: {} rods of {} m and {} kg, v₀ = {} m/s",
                p.n,
                2 * p.n + 1,
                p.length,
                p.m,
                p.v0
            ),
            equations: "natural coordinates B_i: Φ_rod = |B_i − A_i|² − ℓ², Φ_link = |B_{i+1} − B_i|² − ℓ²; constant M \
                        (m/3 per rod end, m/6 coupling along links); gravity −mg/2 per rod end; \
                        H = ½q'ᵀMq' + Σ m g y_centre; rank Φ_q = N + 1 when horizontal"
                .into(),
            citation: "IFToMM / Univ. A Coruña MBS benchmark library, problem A02 (datasets/iftomm_udc_mbs_benchmark_specs.json); \
                       natural coordinates: J. García de Jalón & E. Bayo, Kinematic and Dynamic Simulation of Multibody \
                       Systems (1994), ch. 2–3; seed 001 §3.11 pitfall 4 (singular configurations)"
                .into(),
            tags: vec![
                "planar".into(),
                "closed-loop".into(),
                "singular".into(),
                "conservative".into(),
                "scalable".into(),
                "index-3".into(),
            ],
            index: 3,
            t_end: p.t_end,
            reference: "none obtainable (A02 reference file); energy is conserved".into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims {
            n: 2 * self.points(),
            m: 2 * self.p.n + 1,
        }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        let np = self.points();
        let mut e: Vec<(usize, usize)> = (0..2 * np).map(|i| (i, i)).collect();
        for i in 0..self.p.n {
            e.push((2 * i + 2, 2 * i));
            e.push((2 * i + 3, 2 * i + 1));
        }
        SparsityPattern::new(2 * np, 2 * np, e)
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        let (np, m) = (self.points(), self.p.m);
        for i in 0..np {
            // rod end m/3, plus m/3 from each link touching the point.
            let links = (i > 0) as usize + (i < self.p.n) as usize;
            let d = m / 3.0 * (1 + links) as f64;
            out[2 * i] = d;
            out[2 * i + 1] = d;
        }
        for x in &mut out[2 * np..] {
            *x = m / 6.0;
        }
    }
    fn forces(&self, _t: f64, _q: &[f64], _v: &[f64], out: &mut [f64]) {
        let (np, w) = (self.points(), self.p.m * self.p.g / 2.0);
        for i in 0..np {
            let links = (i > 0) as usize + (i < self.p.n) as usize;
            out[2 * i] = 0.0;
            out[2 * i + 1] = -w * (1 + links) as f64;
        }
    }
    fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let l2 = self.p.length * self.p.length;
        for (r, o) in out.iter_mut().enumerate() {
            let (b, a, _, _) = self.row(r, q);
            *o = (b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2) - l2;
        }
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        let np = self.points();
        let mut e = Vec::new();
        for r in 0..2 * self.p.n + 1 {
            if r < np {
                e.extend([(r, 2 * r), (r, 2 * r + 1)]);
            } else {
                let i = r - np;
                e.extend([(r, 2 * i + 2), (r, 2 * i + 3), (r, 2 * i), (r, 2 * i + 1)]);
            }
        }
        SparsityPattern::new(2 * self.p.n + 1, 2 * np, e)
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let mut k = 0;
        for r in 0..2 * self.p.n + 1 {
            let (b, a, from, _) = self.row(r, q);
            let (dx, dy) = (2.0 * (b[0] - a[0]), 2.0 * (b[1] - a[1]));
            out[k] = dx;
            out[k + 1] = dy;
            k += 2;
            if from.is_some() {
                out[k] = -dx;
                out[k + 1] = -dy;
                k += 2;
            }
        }
    }
    fn curvature(&self, _t: f64, _q: &[f64], v: &[f64], out: &mut [f64]) {
        for (r, o) in out.iter_mut().enumerate() {
            let (vb, va, _, _) = self.row(r, v);
            let va = if r < self.points() { [0.0, 0.0] } else { va };
            *o = -2.0 * ((vb[0] - va[0]).powi(2) + (vb[1] - va[1]).powi(2));
        }
    }
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let mp = self.mass_pattern();
        let mut mv = vec![0.0; mp.nnz()];
        self.mass(q, &mut mv);
        let mut w = vec![0.0; v.len()];
        mp.mul_vec(&mv, v, &mut w, true);
        let kin = 0.5 * v.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>();
        let mut f = vec![0.0; v.len()];
        self.forces(0.0, q, v, &mut f);
        // Gravity is constant: V = −f · q.
        let pot = -f.iter().zip(q).map(|(a, b)| a * b).sum::<f64>();
        Some(kin + pot)
    }
    fn energy_scale(&self) -> f64 {
        self.p.m * self.p.g * self.p.length * (2 * self.p.n + 1) as f64
    }
    fn initial_state(&self) -> State {
        let np = self.points();
        let l = self.p.length;
        let q = (0..np).flat_map(|i| [i as f64 * l, l]).collect();
        let v = (0..np).flat_map(|_| [self.p.v0, 0.0]).collect();
        State::mechanical(0.0, q, v, 2 * self.p.n + 1)
    }
    fn constraint_hessian(&self) -> Option<&dyn ConstraintHessian> {
        Some(self)
    }
}

impl ConstraintHessian for NFourBar {
    /// `Σ λ_r ∇²Φ_r`: 2λ on the diagonal of every point a row touches, −2λ coupling the
    /// two points of a link (same coordinate).
    fn pattern(&self) -> SparsityPattern {
        self.mass_pattern()
    }
    fn values(&self, _t: f64, _q: &[f64], lambda: &[f64], out: &mut [f64]) {
        let np = self.points();
        out.iter_mut().for_each(|x| *x = 0.0);
        for i in 0..np {
            out[2 * i] += 2.0 * lambda[i];
            out[2 * i + 1] += 2.0 * lambda[i];
        }
        for i in 0..self.p.n {
            let l = lambda[np + i];
            for c in 0..2 {
                out[2 * i + c] += 2.0 * l;
                out[2 * i + 2 + c] += 2.0 * l;
                out[2 * np + 2 * i + c] = -2.0 * l;
            }
        }
    }
}
