//! `snake-robot`: the three-link wheeled snake (seed 001 §3.8, applications: "蛇形机器人：各
//! 段的运动协调"): the chain of `space-robot` (four point masses m, three rods ℓ, the two
//! joints driven round a loop in shape space by rheonomic distance rows) on the ground,
//! with a passive wheel at the middle of every link that cannot slide sideways:
//!
//! ```text
//! Φ₁..₃ = |p_k − p_{k−1}|² − ℓ²,   Φ₄,₅ = |p_{k+1} − p_{k−1}|² − D_k(t)     (holonomic)
//! A_k v = n_kᵀ (v_{k−1} + v_k)/2 = 0,   n_k = J(p_k − p_{k−1}),  J = [[0, −1], [1, 0]]   (3 wheels)
//! γ_k = −ṅ_kᵀ (v_{k−1} + v_k)/2  on the wheel rows
//! φ₁ = φ̄₁ + a sin ωt,  φ₂ = φ̄₂ + a cos ωt   (defaults φ̄ = ±0.6, a = 0.3: an S-shape)
//! ```
//!
//! Eight coordinates and eight rows: the kinematic snake of Ostrowski & Burdick (1998) and
//! Shammas, Choset & Rizzi (IJRR 26, 2007) — the shape loop alone fixes the motion, q' =
//! V(t, q) with Φ_q V = −Φ_t, and the masses only set the constraint forces. The wheel
//! rows are not integrable (`frobenius::involutivity_defect`); the loop encloses area in
//! shape space and the snake advances by a fixed displacement per cycle. The rows lose rank
//! where the three wheel axles meet in one point — equal joint angles, the arc — so the
//! loop is kept off the diagonal φ₁ = φ₂ (and off φ = 0, where the distance rows lose
//! rank): |φ̄₁ − φ̄₂| > 2a, |φ̄_k| > a. No energy or momentum is conserved (the drives and
//! the wheels do work and push).

use crate::domain::{EPS, LIMIT, SAFETY};
use crate::entry::{Problem, ProblemEntry};
use crate::planar::space_robot::{SpaceRobot, SpaceRobotParams};
use driftlab_core::params;
use driftlab_core::{
    Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo, ReferenceDomain,
    ReferenceSolution, ScdComponents, SparsityPattern, State,
};
use serde::{Deserialize, Serialize};

/// Parameters of [`SnakeRobot`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SnakeRobotParams {
    /// Mass of each point (kg).
    pub m: f64,
    /// Link length (m).
    pub length: f64,
    /// Centre φ̄₁ of the first joint's loop (rad).
    pub center1: f64,
    /// Centre φ̄₂ of the second joint's loop (rad).
    pub center2: f64,
    /// Radius a of the loop in shape space (rad).
    pub amplitude: f64,
    /// Period of the shape loop (s).
    pub period: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for SnakeRobotParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            length: 1.0,
            center1: 0.6,
            center2: -0.6,
            amplitude: 0.3,
            period: 2.0,
            t_end: 10.0,
        }
    }
}

const ID: &str = "snake-robot";
/// Holonomic rows (rods and drives) of the inner chain.
const HOLONOMIC: usize = 5;

/// The wheeled snake.
pub struct SnakeRobot {
    p: SnakeRobotParams,
    chain: SpaceRobot,
    /// q(t_end) of the kinematic ODE, computed on first use.
    reference: std::sync::OnceLock<Option<Vec<f64>>>,
}

impl SnakeRobot {
    /// Build and validate (the loop off the arc and off the straight joints).
    pub fn new(p: SnakeRobotParams) -> Result<Self, ParamError> {
        let chain = SpaceRobotParams {
            m: p.m,
            length: p.length,
            amplitude: p.amplitude,
            center1: p.center1,
            center2: p.center2,
            period: p.period,
            t_end: p.t_end,
        };
        chain.validate(ID)?;
        if (p.center1 - p.center2).abs() <= 2.0 * p.amplitude {
            return Err(params::inconsistent(
                ID,
                &[
                    ("center1", p.center1),
                    ("center2", p.center2),
                    ("amplitude", p.amplitude),
                ],
                "keep the loop off the arc φ₁ = φ₂, where the wheel rows lose rank: |center1 − center2| > 2·amplitude",
            ));
        }
        let chain = SpaceRobot::new(chain)?;
        Ok(Self {
            p,
            chain,
            reference: std::sync::OnceLock::new(),
        })
    }
}

/// Catalog entry `snake-robot`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "three-link wheeled snake: two driven joints, three no-slip wheels, motion fixed by the shape loop",
        build: |t| Ok(Problem::Mechanical(Box::new(SnakeRobot::new(params::parse("problem", ID, t)?)?))),
        defaults: params::defaults::<SnakeRobotParams>,
    }
}

/// Link k's wheel row `[−d_y, d_x, −d_y, d_x]/2` on (v_{k}, v_{k+1}), `d = p_{k+1} − p_k`.
fn wheel_row(q: &[f64], k: usize) -> [f64; 4] {
    let (dx, dy) = (q[2 * k + 2] - q[2 * k], q[2 * k + 3] - q[2 * k + 1]);
    [-0.5 * dy, 0.5 * dx, -0.5 * dy, 0.5 * dx]
}

impl MechanicalSystem for SnakeRobot {
    driftlab_core::forward_mechanical!(chain; mass_pattern, mass, forces, energy_scale);
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!(
                "Wheeled three-link snake (m = {}, ℓ = {}), joints driven round φ̄ = ({}, {}), a = {}, T = {}",
                p.m, p.length, p.center1, p.center2, p.amplitude, p.period
            ),
            equations: "m p_i'' = −Φ_qᵀλ;  rods |p_k − p_{k−1}|² = ℓ², drives |p_{k+1} − p_{k−1}|² = D_k(t);  \
                        wheels n_kᵀ(v_{k−1} + v_k)/2 = 0, n_k = J(p_k − p_{k−1})"
                .into(),
            citation: "seed 001 §3.8 (nonholonomic constraints; snake robots); J. Ostrowski & J. Burdick, IJRR 17 (1998); \
                       E. Shammas, H. Choset & A. Rizzi, IJRR 26 (2007)"
                .into(),
            tags: vec!["planar".into(), "nonholonomic".into(), "rheonomic".into()],
            index: 3,
            t_end: p.t_end,
            reference: "q(t_end) of the kinematic ODE q' = V(t, q), Φ_q V = −Φ_t, by RK4 with step 1e-4 (round-off-limited, ≈1e-13 at the defaults; `scd` on q)".into(),
        }
    }
    fn dims(&self) -> Dims {
        Dims {
            n: 8,
            m: HOLONOMIC + 3,
        }
    }
    fn nonholonomic_rows(&self) -> usize {
        3
    }
    fn constraints(&self, t: f64, q: &[f64], out: &mut [f64]) {
        self.chain.constraints(t, q, &mut out[..HOLONOMIC]);
        out[HOLONOMIC..].fill(0.0);
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        let mut e = self.chain.jacobian_pattern().entries;
        for k in 0..3 {
            e.extend((0..4).map(|c| (HOLONOMIC + k, 2 * k + c)));
        }
        SparsityPattern::new(HOLONOMIC + 3, 8, e)
    }
    fn jacobian(&self, t: f64, q: &[f64], out: &mut [f64]) {
        let inner = 4 * HOLONOMIC;
        self.chain.jacobian(t, q, &mut out[..inner]);
        for k in 0..3 {
            out[inner + 4 * k..inner + 4 * k + 4].copy_from_slice(&wheel_row(q, k));
        }
    }
    fn phi_t(&self, t: f64, q: &[f64], out: &mut [f64]) {
        self.chain.phi_t(t, q, &mut out[..HOLONOMIC]);
        out[HOLONOMIC..].fill(0.0);
    }
    fn curvature(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        self.chain.curvature(t, q, v, &mut out[..HOLONOMIC]);
        for k in 0..3 {
            // γ = −ṅᵀ s/2 with ṅ = J ḋ, s = v_k + v_{k+1}.
            let (ddx, ddy) = (v[2 * k + 2] - v[2 * k], v[2 * k + 3] - v[2 * k + 1]);
            let (sx, sy) = (v[2 * k] + v[2 * k + 2], v[2 * k + 1] + v[2 * k + 3]);
            out[HOLONOMIC + k] = -0.5 * (-ddy * sx + ddx * sy);
        }
    }
    /// `None` beyond [`MAX_REFERENCE_STEPS`] RK4 steps (see [`Self::reference_domain`]).
    fn reference(&self) -> Option<ReferenceSolution> {
        let t = self.p.t_end;
        let q = self.kinematic_q()?;
        let v = kinematic_velocity(self, t, &q)?;
        Some(ReferenceSolution {
            t,
            state: ExactSolution {
                q,
                v,
                lambda: vec![f64::NAN; HOLONOMIC + 3],
            },
            scd: ScdComponents::Positions,
            provenance:
                "the kinematic ODE q' = V(t, q), Φ_q V = −Φ_t, by classical RK4 with step 1e-4 \
                         (computed here; round-off-limited: 1.3e-13 absolute at the defaults, estimated by a second run at 2e-4)"
                    .into(),
        })
    }
    /// The reference is q(t_end) of the kinematic ODE by classical RK4 at the step
    /// `h ≈ 1e-4`, `N = t_end/h` steps. Its error is estimated a posteriori by a second
    /// integration at `2h`: the difference bounds q_h's error whether the truncation
    /// dominates (RK4: the difference is 15 times q_h's error) or the round-off does (a
    /// random walk, `≈ ε|q|√N`; the runs' round-off is independent, so the difference is
    /// about √1.5 times q_h's). Measured: 1.3e-13 at the defaults (round-off: the step
    /// 5e-5 gives no smaller difference), 1.2e-12 with a 0.2 s loop (truncation, ratio
    /// 15.2 between 2e-4 → 1e-4 → 5e-5), 4.4e-12 with a = 1.2. `accuracy = 8 max(|q_h −
    /// q_2h|∞, ε|q|∞√N) / |q_i|` over the scored positions (relative: scd; safety 8).
    /// Outside beyond [`MAX_REFERENCE_STEPS`] steps (the reference would take minutes),
    /// where the rows turn singular along the loop, or when the absolute estimate exceeds
    /// 1e-4 of |q|∞. The reference is at the problem's own `t_end` (scd is scored only by
    /// a run that ends there), whatever the run's.
    fn reference_domain(&self, _t_end: f64) -> ReferenceDomain {
        let t = self.p.t_end;
        let steps = (t / REFERENCE_STEP).round().max(1.0);
        if steps > MAX_REFERENCE_STEPS as f64 {
            return ReferenceDomain::Outside(format!(
                "t_end = {t}: the RK4 reference would take {steps:.3e} steps of {REFERENCE_STEP:e} (limit {MAX_REFERENCE_STEPS:e}); shorten t_end"
            ));
        }
        let (Some(fine), Some(coarse)) = (
            self.kinematic_q(),
            kinematic_reference_step(self, t, 2.0 * REFERENCE_STEP),
        ) else {
            return ReferenceDomain::Outside(
                "the rows turn singular along the loop: the kinematic ODE has no solution to integrate; move the loop off the arc and the straight joints".into(),
            );
        };
        let inf = |x: &[f64]| x.iter().fold(0.0_f64, |m, y| m.max(y.abs()));
        let diff: Vec<f64> = fine.iter().zip(&coarse).map(|(a, b)| a - b).collect();
        let absolute = SAFETY * inf(&diff).max(EPS * inf(&fine) * steps.sqrt());
        if !absolute.is_finite() || absolute > LIMIT * inf(&fine) {
            return ReferenceDomain::Outside(format!(
                "the RK4 reference differs from its 2h run by {:.3e} (bound {absolute:.3e}) on |q|∞ = {:.3e}, more than {LIMIT:e} of it; lengthen period (a fast loop needs a finer step)",
                inf(&diff),
                inf(&fine)
            ));
        }
        let accuracy = fine.iter().fold(0.0_f64, |m, x| {
            m.max(if *x == 0.0 {
                absolute
            } else {
                absolute / x.abs()
            })
        });
        ReferenceDomain::Valid {
            accuracy,
            basis: format!(
                "RK4 at h = 1e-4 over {steps:.0} steps, estimated by the run at 2h: |q_h − q_2h|∞ = {:.2e}, bound 8 max(that, ε|q|√N) = {absolute:.2e} absolute, {accuracy:.1e} relative to the smallest scored |q_i|",
                inf(&diff)
            ),
        }
    }
    /// The loop's start with the velocity the eight rows fix (an 8 × 8 linear system).
    fn initial_state(&self) -> State {
        let j = self.chain.joints(0.0);
        let q = self.chain.positions([j[0][0], j[1][0]]);
        let v = kinematic_velocity(self, 0.0, &q).unwrap_or_else(|| vec![f64::NAN; 8]);
        State::mechanical(0.0, q, v, HOLONOMIC + 3)
    }
}

/// The velocity the rows fix at `(t, q)`: `Φ_q V = −Φ_t` (8 × 8); `None` where singular.
pub fn kinematic_velocity(s: &SnakeRobot, t: f64, q: &[f64]) -> Option<Vec<f64>> {
    let mut jac = vec![0.0; 4 * (HOLONOMIC + 3)];
    s.jacobian(t, q, &mut jac);
    let a = s.jacobian_pattern().to_dense(&jac, false);
    let mut rhs = vec![0.0; 8];
    s.phi_t(t, q, &mut rhs);
    rhs.iter_mut().for_each(|x| *x = -*x);
    driftlab_solver::dense::solve_dense(8, &a, &mut rhs)
        .ok()
        .map(|()| rhs)
}

/// The step of [`kinematic_reference`].
pub const REFERENCE_STEP: f64 = 1e-4;

/// The most RK4 steps [`SnakeRobot`]'s reference takes (`t_end` ≤ 200 s; about 7 s in the
/// dev profile, and the domain's estimate half as much again).
pub const MAX_REFERENCE_STEPS: usize = 2_000_000;

impl SnakeRobot {
    /// The cached [`kinematic_reference`] at the problem's `t_end`; `None` beyond
    /// [`MAX_REFERENCE_STEPS`] or where the rows turn singular.
    fn kinematic_q(&self) -> Option<Vec<f64>> {
        let t = self.p.t_end;
        if (t / REFERENCE_STEP).round() > MAX_REFERENCE_STEPS as f64 {
            return None;
        }
        self.reference
            .get_or_init(|| kinematic_reference(self, t))
            .clone()
    }
}

/// q(t_end) of the kinematic ODE from the initial state, by classical RK4 with the step
/// [`REFERENCE_STEP`] (rounded to a whole number of steps); `None` if the rows turn
/// singular.
pub fn kinematic_reference(s: &SnakeRobot, t_end: f64) -> Option<Vec<f64>> {
    kinematic_reference_step(s, t_end, REFERENCE_STEP)
}

/// [`kinematic_reference`] with the step `step` (rounded to a whole number of steps).
pub fn kinematic_reference_step(s: &SnakeRobot, t_end: f64, step: f64) -> Option<Vec<f64>> {
    let steps = (t_end / step).round().max(1.0) as usize;
    let h = t_end / steps as f64;
    let mut q = s.initial_state().q;
    for i in 0..steps {
        let t = i as f64 * h;
        let shifted =
            |k: &[f64], c: f64| -> Vec<f64> { q.iter().zip(k).map(|(x, d)| x + c * d).collect() };
        let k1 = kinematic_velocity(s, t, &q)?;
        let k2 = kinematic_velocity(s, t + h / 2.0, &shifted(&k1, h / 2.0))?;
        let k3 = kinematic_velocity(s, t + h / 2.0, &shifted(&k2, h / 2.0))?;
        let k4 = kinematic_velocity(s, t + h, &shifted(&k3, h))?;
        for j in 0..q.len() {
            q[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
        }
    }
    Some(q)
}
