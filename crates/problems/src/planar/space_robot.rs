//! `space-robot`: a free-floating planar chain that turns itself at zero angular momentum
//! (seed 001 §3.8.3 "空间机器人：角动量守恒 … 通过内部运动改变姿态（猫的翻正反射）").
//!
//! Four point masses m joined by three rigid rods of length ℓ, floating without gravity.
//! Two joints are driven: the relative angles φ₁ (between rods 1 and 2) and φ₂ (rods 2 and
//! 3) follow a closed loop in shape space, each through a rheonomic distance constraint
//! (the law of cosines):
//!
//! ```text
//! Φ₁..₃ = |p_k − p_{k−1}|² − ℓ²                          (rods)
//! Φ₄ = |p₂ − p₀|² − D₁(t),   Φ₅ = |p₃ − p₁|² − D₂(t),   D_k = 2ℓ²(1 + cos φ_k(t))
//! φ₁(t) = φ̄₁ + a sin ωt,    φ₂(t) = φ̄₂ + a cos ωt   (defaults φ̄₁ = φ̄₂ = π/2, a = π/4: a circle)
//! γ = −2|v_a − v_b|² per row, + D_k''(t) on the driven rows
//! ```
//!
//! All constraint forces are central (along lines between masses), so the linear momentum
//! P and the angular momentum L = Σ m (x v_y − y v_x) are conserved; the start has P = 0,
//! L = 0 (its velocity solves Φ_q v = −Φ_t with those three conditions). Still the
//! attitude of the chain changes after every shape cycle — a geometric phase: L = 0 is a
//! nonholonomic constraint on the attitude, and a loop in the two shape angles encloses
//! area (Bloch, Nonholonomic Mechanics and Control, 2003, the falling cat; Nakamura &
//! Mukherjee, IEEE Trans. Robot. Automat. 7(4), 1991, for free-floating space robots).
//! The energy is not conserved (the drives do work); `momentum()` = (P_x, P_y, L).

use crate::entry::{Problem, ProblemEntry};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{Dims, MechanicalSystem, ParamError, ProblemInfo, SparsityPattern, State};
use serde::{Deserialize, Serialize};
use std::f64::consts::{FRAC_PI_2, PI};

/// Parameters of [`SpaceRobot`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SpaceRobotParams {
    /// Mass of each point (kg).
    pub m: f64,
    /// Rod length (m).
    pub length: f64,
    /// Amplitude a of the joint motion (rad); the loop must keep every φ_k inside
    /// (0, π) or (−π, 0), away from the straight and the folded joint where the distance
    /// rows lose rank.
    pub amplitude: f64,
    /// Centre φ̄₁ of the first joint's loop (rad).
    pub center1: f64,
    /// Centre φ̄₂ of the second joint's loop (rad).
    pub center2: f64,
    /// Shape-cycle period T = 2π/ω (s).
    pub period: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for SpaceRobotParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            length: 1.0,
            amplitude: std::f64::consts::FRAC_PI_4,
            center1: FRAC_PI_2,
            center2: FRAC_PI_2,
            period: 2.0,
            t_end: 10.0,
        }
    }
}

impl SpaceRobotParams {
    /// Check every parameter alone, then the loop against the straight and the folded
    /// joint, naming problem `id` (this one's or a problem built on it, e.g. `snake-robot`)
    /// in a refusal.
    pub fn validate(&self, id: &str) -> Result<(), ParamError> {
        bounded_positive(id, "m", self.m)?;
        bounded_positive(id, "length", self.length)?;
        bounded_positive(id, "period", self.period)?;
        bounded_positive(id, "t_end", self.t_end)?;
        bounded_positive(id, "amplitude", self.amplitude)?;
        params::finite(id, "center1", self.center1)?;
        params::finite(id, "center2", self.center2)?;
        let a = self.amplitude;
        for (field, c) in [("center1", self.center1), ("center2", self.center2)] {
            if !(c.abs() - a > 0.0 && c.abs() + a < PI) {
                return Err(params::inconsistent(
                    id,
                    &[("amplitude", a), (field, c)],
                    format!(
                        "give 0 < amplitude < min(|{field}|, π − |{field}|) (the joint stays between straight and folded)"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The free-floating chain.
#[derive(Clone, Debug)]
pub struct SpaceRobot {
    p: SpaceRobotParams,
    omega: f64,
}

const ID: &str = "space-robot";
/// The rows as point pairs `(a, b)`: three rods, then the two driven diagonals.
const PAIRS: [(usize, usize); 5] = [(1, 0), (2, 1), (3, 2), (2, 0), (3, 1)];

impl SpaceRobot {
    /// Build and validate.
    pub fn new(p: SpaceRobotParams) -> Result<Self, ParamError> {
        p.validate(ID)?;
        Ok(Self {
            omega: 2.0 * std::f64::consts::PI / p.period,
            p,
        })
    }

    /// The joint angles and their first two derivatives at `t`.
    pub fn joints(&self, t: f64) -> [[f64; 3]; 2] {
        let (a, w) = (self.p.amplitude, self.omega);
        let (s, c) = (w * t).sin_cos();
        [
            [self.p.center1 + a * s, a * w * c, -a * w * w * s],
            [self.p.center2 + a * c, -a * w * s, -a * w * w * c],
        ]
    }

    /// `D_k(t) = 2ℓ²(1 + cos φ_k)` and its first two derivatives.
    pub fn driven(&self, t: f64) -> [[f64; 3]; 2] {
        let l2 = 2.0 * self.p.length * self.p.length;
        self.joints(t).map(|[f, fd, fdd]| {
            let (s, c) = f.sin_cos();
            [l2 * (1.0 + c), -l2 * s * fd, -l2 * (c * fd * fd + s * fdd)]
        })
    }

    /// Positions for joint angles φ₁, φ₂ with rod 1 along x, centred on the origin.
    pub fn positions(&self, phi: [f64; 2]) -> Vec<f64> {
        let l = self.p.length;
        let mut heading = 0.0_f64;
        let mut pts = vec![[0.0, 0.0]];
        for k in 0..3 {
            if k > 0 {
                heading += phi[k - 1];
            }
            let [x, y] = pts[k];
            pts.push([x + l * heading.cos(), y + l * heading.sin()]);
        }
        let cx = pts.iter().map(|p| p[0]).sum::<f64>() / 4.0;
        let cy = pts.iter().map(|p| p[1]).sum::<f64>() / 4.0;
        pts.iter().flat_map(|p| [p[0] - cx, p[1] - cy]).collect()
    }
}

impl SpaceRobot {
    /// The attitude change of rod 1 over one shape cycle at P = 0, L = 0: the geometric
    /// phase, by quadrature, independent of any integrator.
    ///
    /// With the chain's body-frame positions `r_i(φ)` (rod 1 along x, centre of mass at the
    /// origin, [`Self::positions`]) and attitude θ, the world positions are `R(θ) r_i`, and
    /// `L = Σ m (θ̇|r_i|² + r_i × ṙ_i) = 0` gives the reconstruction equation
    ///
    /// ```text
    /// θ̇ = −Σ r_i × ṙ_i / Σ |r_i|²,     Δθ = ∫₀ᵀ θ̇ dt
    /// ```
    ///
    /// (Marsden, Montgomery & Ratiu, Reduction, Symmetry, and Phases in Mechanics, Mem.
    /// AMS 436, 1990, §2). ṙ_i follows from the joint rates exactly; the integrand is smooth
    /// and T-periodic, so the trapezoid rule on `samples` points converges geometrically
    /// (Trefethen & Weideman, SIAM Rev. 56(3), 2014).
    pub fn attitude_turn_per_cycle(&self, samples: usize) -> f64 {
        let dt = self.p.period / samples as f64;
        (0..samples)
            .map(|k| self.attitude_rate(k as f64 * dt) * dt)
            .sum()
    }

    /// `θ̇(t)` of [`Self::attitude_turn_per_cycle`].
    fn attitude_rate(&self, t: f64) -> f64 {
        let [[f1, f1d, _], [f2, f2d, _]] = self.joints(t);
        let l = self.p.length;
        // Rod k's heading H_k and its rate: H = (0, φ₁, φ₁ + φ₂).
        let heading = [(0.0, 0.0), (f1, f1d), (f1 + f2, f1d + f2d)];
        let (mut p, mut pd) = ([[0.0; 2]; 4], [[0.0; 2]; 4]);
        for (k, &(h, hd)) in heading.iter().enumerate() {
            let (s, c) = h.sin_cos();
            p[k + 1] = [p[k][0] + l * c, p[k][1] + l * s];
            pd[k + 1] = [pd[k][0] - l * hd * s, pd[k][1] + l * hd * c];
        }
        let centre = |x: &[[f64; 2]; 4], i: usize| x.iter().map(|p| p[i]).sum::<f64>() / 4.0;
        let (c, cd) = (
            [centre(&p, 0), centre(&p, 1)],
            [centre(&pd, 0), centre(&pd, 1)],
        );
        let (mut cross, mut inertia) = (0.0, 0.0);
        for i in 0..4 {
            let r = [p[i][0] - c[0], p[i][1] - c[1]];
            let rd = [pd[i][0] - cd[0], pd[i][1] - cd[1]];
            cross += r[0] * rd[1] - r[1] * rd[0];
            inertia += r[0] * r[0] + r[1] * r[1];
        }
        -cross / inertia
    }
}

/// Catalog entry `space-robot`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "free-floating planar chain with two driven joints: attitude changes at zero angular momentum (seed 001 §3.8.3)",
        build: |t| Ok(Problem::Mechanical(Box::new(SpaceRobot::new(params::parse("problem", ID, t)?)?))),
        defaults: params::defaults::<SpaceRobotParams>,
    }
}

impl MechanicalSystem for SpaceRobot {
    fn info(&self) -> ProblemInfo {
        ProblemInfo {
            id: ID.into(),
            title: format!(
                "Free-floating chain of 4 masses (m = {}, ℓ = {}), joints driven round a loop (a = {:.3}, T = {})",
                self.p.m, self.p.length, self.p.amplitude, self.p.period
            ),
            equations: "m p_i'' = −Φ_qᵀλ,  Φ = (|p_k − p_{k−1}|² − ℓ², |p₂ − p₀|² − D₁(t), |p₃ − p₁|² − D₂(t)),  D_k = 2ℓ²(1 + cos φ_k(t)); P = Σ m v_i = 0, L = Σ m (x_i v_yi − y_i v_xi) = 0".into(),
            citation: "seed 001 §3.8.3 (space robots: attitude changed by internal motion at conserved angular momentum); Nakamura & Mukherjee, IEEE Trans. Robot. Automat. 7(4) 1991".into(),
            tags: vec!["planar".into(), "rheonomic".into(), "free-floating".into(), "momentum".into()],
            index: 3,
            t_end: self.p.t_end,
            reference: "the attitude turn per cycle, the geometric phase of L = 0 by quadrature (attitude_turn_per_cycle: 0.5048 rad); P and L are conserved (momentum columns)".into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims { n: 8, m: 5 }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        SparsityPattern::diagonal(8)
    }
    fn mass(&self, _q: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = self.p.m);
    }
    fn forces(&self, _t: f64, _q: &[f64], _v: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = 0.0);
    }
    fn constraints(&self, t: f64, q: &[f64], out: &mut [f64]) {
        let d = self.driven(t);
        for (r, &(a, b)) in PAIRS.iter().enumerate() {
            let (dx, dy) = (q[2 * a] - q[2 * b], q[2 * a + 1] - q[2 * b + 1]);
            let target = if r < 3 {
                self.p.length * self.p.length
            } else {
                d[r - 3][0]
            };
            out[r] = dx * dx + dy * dy - target;
        }
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        let e = PAIRS
            .iter()
            .enumerate()
            .flat_map(|(r, &(a, b))| [(r, 2 * a), (r, 2 * a + 1), (r, 2 * b), (r, 2 * b + 1)])
            .collect();
        SparsityPattern::new(5, 8, e)
    }
    fn jacobian(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        for (r, &(a, b)) in PAIRS.iter().enumerate() {
            let (dx, dy) = (q[2 * a] - q[2 * b], q[2 * a + 1] - q[2 * b + 1]);
            out[4 * r..4 * r + 4].copy_from_slice(&[2.0 * dx, 2.0 * dy, -2.0 * dx, -2.0 * dy]);
        }
    }
    fn phi_t(&self, t: f64, _q: &[f64], out: &mut [f64]) {
        let d = self.driven(t);
        out[..3].iter_mut().for_each(|x| *x = 0.0);
        out[3] = -d[0][1];
        out[4] = -d[1][1];
    }
    fn curvature(&self, t: f64, _q: &[f64], v: &[f64], out: &mut [f64]) {
        let d = self.driven(t);
        for (r, &(a, b)) in PAIRS.iter().enumerate() {
            let (du, dv) = (v[2 * a] - v[2 * b], v[2 * a + 1] - v[2 * b + 1]);
            out[r] = -2.0 * (du * du + dv * dv) + if r < 3 { 0.0 } else { d[r - 3][2] };
        }
    }
    fn energy_scale(&self) -> f64 {
        let l = self.p.length;
        self.p.m * (l * self.omega).powi(2)
    }
    fn momentum(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<Vec<f64>> {
        let m = self.p.m;
        let (mut px, mut py, mut l) = (0.0, 0.0, 0.0);
        for i in 0..4 {
            px += m * v[2 * i];
            py += m * v[2 * i + 1];
            l += m * (q[2 * i] * v[2 * i + 1] - q[2 * i + 1] * v[2 * i]);
        }
        Some(vec![px, py, l])
    }
    /// The loop's start, centred, with the velocity of zero P and L that satisfies the
    /// velocity constraints (an 8 × 8 linear system).
    fn initial_state(&self) -> State {
        let j = self.joints(0.0);
        let q = self.positions([j[0][0], j[1][0]]);
        let mut a = vec![0.0; 64];
        let mut rhs = vec![0.0; 8];
        let mut jac = vec![0.0; 20];
        self.jacobian(0.0, &q, &mut jac);
        for (k, &(r, c)) in self.jacobian_pattern().entries.iter().enumerate() {
            a[r * 8 + c] += jac[k];
        }
        let mut phit = vec![0.0; 5];
        self.phi_t(0.0, &q, &mut phit);
        for r in 0..5 {
            rhs[r] = -phit[r];
        }
        for i in 0..4 {
            a[5 * 8 + 2 * i] = 1.0;
            a[6 * 8 + 2 * i + 1] = 1.0;
            a[7 * 8 + 2 * i] = -q[2 * i + 1];
            a[7 * 8 + 2 * i + 1] = q[2 * i];
        }
        // The system is regular away from straight or folded joints (amplitude < π/2);
        // the conformance suite checks the residuals of the result.
        let v = match driftlab_solver::dense::solve_dense(8, &a, &mut rhs) {
            Ok(()) => rhs,
            Err(_) => vec![f64::NAN; 8],
        };
        State::mechanical(0.0, q, v, 5)
    }
}
