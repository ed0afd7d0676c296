//! `ball-stack`: a column of N balls resting on the floor and on each other, the
//! persistent-contact case that seed 001's pitfall 8 ("过度迭代": the constraint solve is the
//! bottleneck because the tolerance is too strict or the start is poor; fix: warm starts
//! and adaptive tolerances) is about. Point masses m on the line x = 0, radius r:
//!
//! ```text
//! q = (x₁, y₁, …, x_N, y_N),   M = m I,   f = (0, −mg, …)
//! Φ_i = x_i = 0                                  (bilateral, i = 1 … N)
//! g₁ = y₁ − r ≥ 0,   g_{i+1} = y_{i+1} − y_i − 2r ≥ 0    (unilateral, 0 ≤ P ⊥ g ≥ 0)
//! ```
//!
//! With `drop = 0` the stack starts touching and at rest, and stays so: the exact solution
//! is q(t) = q(0), v = 0, λ = 0, held by the contact forces P_i/h = (N − i + 1) m g. The
//! Delassus matrix W = G M⁻¹ Gᵀ is (1/m) times the tridiagonal [1 −1; −1 2 −1; …], a 1-D
//! Laplacian: Gauss–Seidel's contraction per sweep is 1 − O(1/N²), so a cold start needs
//! O(N² log(1/tol)) sweeps every step, while the previous step's impulses already solve
//! the next LCP (E. Catto, "Iterative Dynamics with Temporal Coherence", GDC 2005; V.
//! Acary & B. Brogliato, *Numerical Methods for Nonsmooth Dynamical Systems*, 2008, §12.4).
//! With `drop > 0` every gap starts at `drop` and the column falls and settles (no exact
//! solution).

use crate::domain::{judge, part, EPS, SAFETY};
use crate::entry::{Problem, ProblemEntry};
use driftlab_core::params;
use driftlab_core::{
    Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo, ReferenceDomain,
    SparsityPattern, State, Unilateral,
};
use serde::{Deserialize, Serialize};

/// Parameters of [`BallStack`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BallStackParams {
    /// Number of balls N.
    pub balls: usize,
    /// Mass of each ball (kg).
    pub m: f64,
    /// Radius (m).
    pub radius: f64,
    /// Gravity (m/s²).
    pub g: f64,
    /// Initial gap below every ball (m); 0 = resting stack (exact solution).
    pub drop: f64,
    /// Coefficient of restitution e ∈ [0, 1].
    pub restitution: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for BallStackParams {
    fn default() -> Self {
        Self {
            balls: 10,
            m: 1.0,
            radius: 0.5,
            g: 9.81,
            drop: 0.0,
            restitution: 0.0,
            t_end: 1.0,
        }
    }
}

/// The stack of balls.
pub struct BallStack {
    p: BallStackParams,
}

impl BallStack {
    /// Build and validate.
    pub fn new(p: BallStackParams) -> Result<Self, ParamError> {
        let bad = |field: &'static str, value: f64, fix: &str| ParamError::OutOfRange {
            id: ID.into(),
            field,
            value,
            fix: fix.into(),
        };
        if p.balls == 0 {
            return Err(bad("balls", 0.0, "give at least one ball"));
        }
        for (field, x) in [("m", p.m), ("radius", p.radius), ("t_end", p.t_end)] {
            params::bounded_positive(ID, field, x)?;
        }
        params::finite(ID, "g", p.g)?;
        params::finite(ID, "drop", p.drop)?;
        if p.drop < 0.0 {
            return Err(bad("drop", p.drop, "give a finite drop ≥ 0"));
        }
        if !(0.0..=1.0).contains(&p.restitution) {
            return Err(bad("restitution", p.restitution, "give 0 ≤ e ≤ 1"));
        }
        Ok(Self { p })
    }

    fn start_height(&self, i: usize) -> f64 {
        let p = &self.p;
        p.radius + 2.0 * p.radius * i as f64 + p.drop * (i + 1) as f64
    }
}

/// The catalog id `ball-stack`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "ball-stack";

/// Catalog entry `ball-stack`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary:
            "N balls stacked on the floor (persistent contacts, LCP): exact rest; PGS warm start",
        build: |t| {
            Ok(Problem::Mechanical(Box::new(BallStack::new(
                params::parse("problem", ID, t)?,
            )?)))
        },
        defaults: params::defaults::<BallStackParams>,
    }
}

impl MechanicalSystem for BallStack {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!(
                "Stack of {} balls (m = {}, r = {}, drop {}, e = {}) on the floor",
                p.balls, p.m, p.radius, p.drop, p.restitution
            ),
            equations: "m q'' = f − Φ_qᵀλ + GᵀP;  Φ_i = x_i;  g₁ = y₁ − r, g_{i+1} = y_{i+1} − y_i − 2r ≥ 0, \
                        0 ≤ P ⊥ g ≥ 0;  W = GM⁻¹Gᵀ = (1/m)·tridiag(−1, 2, −1) (first entry 1)"
                .into(),
            citation: "seed 001 §3.11 pitfall 8 (over-iteration; warm start); E. Catto, Iterative Dynamics with \
                       Temporal Coherence, GDC 2005; V. Acary & B. Brogliato, Numerical Methods for Nonsmooth \
                       Dynamical Systems (2008), §12.4"
                .into(),
            tags: vec!["planar".into(), "unilateral".into(), "index-3".into()],
            index: 3,
            t_end: p.t_end,
            reference: if p.drop == 0.0 {
                "exact: at rest, contact forces (N − i + 1)mg".into()
            } else {
                "none (falls and settles)".into()
            },
        }
    }
    fn dims(&self) -> Dims {
        Dims {
            n: 2 * self.p.balls,
            m: self.p.balls,
        }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(2 * self.p.balls)
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        out.fill(self.p.m);
    }
    fn forces(&self, _t: f64, _q: &[f64], _v: &[f64], out: &mut [f64]) {
        for (i, f) in out.iter_mut().enumerate() {
            *f = if i % 2 == 1 {
                -self.p.m * self.p.g
            } else {
                0.0
            };
        }
    }
    fn constraints(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        for (i, c) in out.iter_mut().enumerate() {
            *c = q[2 * i];
        }
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        let n = self.p.balls;
        SparsityPattern::new(n, 2 * n, (0..n).map(|i| (i, 2 * i)).collect())
    }
    fn jacobian(&self, _t: f64, _q: &[f64], out: &mut [f64]) {
        out.fill(1.0);
    }
    fn curvature(&self, _t: f64, _q: &[f64], _v: &[f64], out: &mut [f64]) {
        out.fill(0.0);
    }
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let kinetic: f64 = v.iter().map(|x| 0.5 * self.p.m * x * x).sum();
        let potential: f64 = q
            .iter()
            .skip(1)
            .step_by(2)
            .map(|y| self.p.m * self.p.g * y)
            .sum();
        Some(kinetic + potential)
    }
    fn energy_scale(&self) -> f64 {
        let n = self.p.balls as f64;
        self.p.m * self.p.g * self.p.radius * n * n
    }
    fn initial_state(&self) -> State {
        let n = self.p.balls;
        let mut q = vec![0.0; 2 * n];
        for i in 0..n {
            q[2 * i + 1] = self.start_height(i);
        }
        State::mechanical(0.0, q, vec![0.0; 2 * n], n)
    }
    fn exact(&self, _t: f64) -> Option<ExactSolution> {
        if self.p.drop != 0.0 {
            return None;
        }
        let s = self.initial_state();
        Some(ExactSolution {
            q: s.q,
            v: s.v,
            lambda: vec![0.0; self.p.balls],
        })
    }
    fn unilateral(&self) -> Option<&dyn Unilateral> {
        Some(self)
    }
    /// The resting stack (`drop = 0`) is exact as stored: q is the initial state itself,
    /// v = 0 and λ = 0 (no horizontal force). What f64 changes is the model it solves:
    /// the heights `r + 2ri` are rounded, so a gap `g_i` may be a few ulps open; a ball
    /// above an open gap `δ` falls through it, by at most `D = Σ_i |g_i|` and at a speed
    /// `√(2gD)` (with `e > 0` it bounces at no more). So q is good to `8 max(D, ε y_N)`
    /// and v to `8√(2gD)` (safety 8), with the gaps of the actual initial state (exactly
    /// zero for binary-fraction radii such as the default 0.5: then the solution is exact
    /// to the last bit). Outside for `g < 0`: gravity then lifts the balls off the floor,
    /// which the contacts cannot hold (they only push), so the stack does not rest.
    fn reference_domain(&self, _t_end: f64) -> ReferenceDomain {
        let p = &self.p;
        if p.drop != 0.0 {
            return ReferenceDomain::Absent;
        }
        if p.g < 0.0 {
            return ReferenceDomain::Outside(format!(
                "g = {} < 0 pulls the stack upwards and the contacts only push: the balls lift off, there is no rest; give g ≥ 0",
                p.g
            ));
        }
        let st = self.initial_state();
        let mut gaps = vec![0.0; p.balls];
        self.gaps(0.0, &st.q, &mut gaps);
        let open: f64 = gaps.iter().map(|g| g.abs()).sum();
        let top = st.q.last().copied().unwrap_or(0.0).abs();
        let err_q = SAFETY * open.max(EPS * top);
        let err_v = SAFETY * (2.0 * p.g * open).sqrt();
        judge(
            &format!(
                "rest at the stored heights, whose rounded gaps sum to D = {open:.3e}: q 8 max(D, ε y_N), v 8√(2gD), λ = 0 (safety 8)"
            ),
            &[
                part("q", err_q, top),
                part("v", err_v, (2.0 * p.g.abs() * p.radius).sqrt()),
            ],
            "give a radius whose multiples are exact in f64 (a binary fraction)",
        )
    }
}

impl Unilateral for BallStack {
    fn rows(&self) -> usize {
        self.p.balls
    }
    fn gaps(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        let r = self.p.radius;
        out[0] = q[1] - r;
        for i in 1..self.p.balls {
            out[i] = q[2 * i + 1] - q[2 * i - 1] - 2.0 * r;
        }
    }
    fn gap_jacobian(&self, _t: f64, _q: &[f64], out: &mut [f64]) {
        let n = 2 * self.p.balls;
        out.fill(0.0);
        out[1] = 1.0;
        for i in 1..self.p.balls {
            out[i * n + 2 * i + 1] = 1.0;
            out[i * n + 2 * i - 1] = -1.0;
        }
    }
    fn restitution(&self) -> f64 {
        self.p.restitution
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The resting stack's gaps are exactly zero (the heights are binary fractions), and
    /// G is the gradient of g (a finite difference along a random direction).
    #[test]
    fn resting_gaps_are_zero_and_the_gap_jacobian_is_their_gradient() -> Result<(), ParamError> {
        let s = BallStack::new(BallStackParams::default())?;
        let st = s.initial_state();
        let k = s.rows();
        let mut g = vec![0.0; k];
        s.gaps(0.0, &st.q, &mut g);
        assert!(g.iter().all(|&x| x == 0.0), "{g:?}");
        let n = st.q.len();
        let dir: Vec<f64> = (0..n).map(|i| ((i * 7 + 3) % 5) as f64 - 2.0).collect();
        let mut gq = vec![0.0; k * n];
        s.gap_jacobian(0.0, &st.q, &mut gq);
        let eps = 1e-6;
        let moved: Vec<f64> = st.q.iter().zip(&dir).map(|(q, d)| q + eps * d).collect();
        let mut g2 = vec![0.0; k];
        s.gaps(0.0, &moved, &mut g2);
        for i in 0..k {
            let fd = (g2[i] - g[i]) / eps;
            let an: f64 = (0..n).map(|c| gq[i * n + c] * dir[c]).sum();
            assert!((fd - an).abs() < 1e-8, "row {i}: fd {fd} vs G·d {an}");
        }
        Ok(())
    }
}
