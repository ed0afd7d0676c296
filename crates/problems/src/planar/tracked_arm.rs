//! `tracked-arm`: seed 001 §3.6.3's layered control ("分层控制架构：高层规划满足约束的轨迹，
//! 低层跟踪轨迹，处理约束违背") on a constrained arm — a task-space planner and a joint-space
//! tracker on the two-link arm of `planar-chain` (two point masses m on rigid massless rods ℓ,
//! the first pinned at the origin, Cartesian coordinates with the rods as constraints).
//!
//! **Planner.** The end effector p₂ moves rest to rest along the straight segment A → B in
//! `segment` seconds with the minimum-jerk time law s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ (Flash &
//! Hogan 1985), then back B → A, and so on: a C² task-space plan x_d(t). Inverse kinematics
//! (elbow on the fixed side σ = +1) gives the absolute link angles φ_d (from the downward
//! vertical), φ̇_d = J⁻¹ẋ_d and φ̈_d = J⁻¹(ẍ_d − J̇φ̇_d), J = ℓ[[cos φ₁, cos φ₂], [sin φ₁, sin φ₂]].
//!
//! **Tracker.** Computed torque in joint space, with the angles read from the Cartesian
//! state, φ_i = atan2(dx_i, −dy_i) of link d_i = p_i − p_{i−1}:
//!
//! ```text
//! Q = M_φ(φ) (φ̈_d + K_d (φ̇_d − φ̇) + K_p (φ_d − φ)) + c(φ, φ̇) + g(φ)
//! M_φ = mℓ² [[2, cos(φ₁−φ₂)], [cos(φ₁−φ₂), 1]],  c = mℓ² sin(φ₁−φ₂) (φ̇₂², −φ̇₁²),
//! g = mgℓ (2 sin φ₁, sin φ₂),   f = −mg e_y (each mass) + Q₁ ∇_qφ₁ + Q₂ ∇_qφ₂
//! ```
//!
//! **Exact solution.** On the constraint manifold the generalized force of `Q_i ∇_qφ_i`
//! on the angle φ_j is `Q_j` (∂φ_i/∂φ_j = δ_ij), so the joint-space closed loop is
//! M_φ φ̈ + c + g = Q, i.e. the error e = φ_d − φ obeys ë + K_d ė + K_p e = 0; started on
//! the plan (e = ė = 0), the arm follows the plan exactly. `q(t)` is the forward
//! kinematics of φ_d(t) and λ solves Φ_q Φ_qᵀ λ = Φ_q (f − M q̈). A method's error against
//! it is its **tracking error**; its drift is the rods' violation — the two quantities the
//! issue (A59) asks per stabilization. The control does work: no energy is conserved.

use crate::domain::{judge, multiplier_sensitivity, part, EPS, SAFETY};
use crate::entry::{Problem, ProblemEntry};
use crate::planar::planar_chain::{PlanarChain, PlanarChainParams};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{
    ExactSolution, MechanicalSystem, ParamError, ProblemInfo, ReferenceDomain, State,
};
use serde::{Deserialize, Serialize};

/// Parameters of [`TrackedArm`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrackedArmParams {
    /// Mass of each point mass (kg).
    pub m: f64,
    /// Length of each rod (m).
    pub length: f64,
    /// Gravitational acceleration (m/s²).
    pub g: f64,
    /// Tracker stiffness K_p (1/s²).
    pub kp: f64,
    /// Tracker damping K_d (1/s).
    pub kd: f64,
    /// Start A of the end effector's segment (m).
    pub a: [f64; 2],
    /// End B of the segment (m).
    pub b: [f64; 2],
    /// Duration of one rest-to-rest move (s).
    pub segment: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for TrackedArmParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            length: 1.0,
            g: 9.81,
            kp: 100.0,
            kd: 20.0,
            a: [0.6, -1.2],
            b: [-0.6, -1.2],
            segment: 1.0,
            t_end: 4.0,
        }
    }
}

/// Joint-space plan at one time: angles, rates, accelerations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointPlan {
    /// φ_d.
    pub phi: [f64; 2],
    /// φ̇_d.
    pub rate: [f64; 2],
    /// φ̈_d.
    pub accel: [f64; 2],
}

/// The tracked two-link arm.
#[derive(Clone, Debug)]
pub struct TrackedArm {
    p: TrackedArmParams,
    chain: PlanarChain,
}

/// Smallest |sin(φ₂ − φ₁)| the plan may reach (the arm's distance from a singular,
/// stretched or folded pose, where J⁻¹ blows up).
const MIN_ELBOW_SINE: f64 = 0.05;

impl TrackedArm {
    /// Build and validate: positive scalars, and a segment inside the workspace away from
    /// the singular poses (|p| < 2ℓ and > 0 along it, |sin(φ₂ − φ₁)| ≥ 0.05).
    pub fn new(p: TrackedArmParams) -> Result<Self, ParamError> {
        let id = ID;
        for (field, x) in [
            ("m", p.m),
            ("length", p.length),
            ("g", p.g),
            ("kp", p.kp),
            ("kd", p.kd),
            ("segment", p.segment),
            ("t_end", p.t_end),
        ] {
            bounded_positive(id, field, x)?;
        }
        let chain = PlanarChain::new(PlanarChainParams {
            links: 2,
            m: p.m,
            length: p.length,
            g: p.g,
            ..PlanarChainParams::default()
        })?;
        let arm = Self { p, chain };
        arm.check_reachable()?;
        Ok(arm)
    }

    /// Refuse a segment that leaves the workspace or passes a singular pose, naming the
    /// end (`a` or `b`, the segment's points between them as `b`) and `length`.
    fn check_reachable(&self) -> Result<(), ParamError> {
        for k in 0..=200 {
            let s = f64::from(k) / 200.0;
            let x = lerp(self.p.a, self.p.b, s);
            let sine = inverse_kinematics(x, self.p.length)
                .map_or(0.0, |phi| (phi[1] - phi[0]).sin().abs());
            if sine.is_nan() || sine < MIN_ELBOW_SINE {
                return Err(ParamError::OutOfRange {
                    id: ID.into(),
                    field: if k == 0 { "a" } else { "b" },
                    value: x[0].hypot(x[1]),
                    fix: format!(
                        "the segment a → b passes ({:.3}, {:.3}) at s = {s} (its distance from the base is the value shown), outside the arm's workspace or within |sin(φ₂ − φ₁)| < {MIN_ELBOW_SINE} of a stretched or folded pose; keep 0 < |p| < 2·`length` = {:e} along a → b",
                        x[0],
                        x[1],
                        2.0 * self.p.length
                    ),
                });
            }
        }
        Ok(())
    }

    /// The task-space plan at `t`: position, velocity, acceleration of the end effector.
    pub fn task_plan(&self, t: f64) -> [[f64; 2]; 3] {
        let t_seg = self.p.segment;
        let k = (t / t_seg).floor();
        let tau = (t - k * t_seg) / t_seg;
        let (from, to) = if (k as i64).rem_euclid(2) == 0 {
            (self.p.a, self.p.b)
        } else {
            (self.p.b, self.p.a)
        };
        let (s, ds, dds) = minimum_jerk(tau);
        let d = [to[0] - from[0], to[1] - from[1]];
        [
            lerp(from, to, s),
            [d[0] * ds / t_seg, d[1] * ds / t_seg],
            [d[0] * dds / (t_seg * t_seg), d[1] * dds / (t_seg * t_seg)],
        ]
    }

    /// The joint-space plan at `t` (inverse kinematics of [`Self::task_plan`]); the
    /// segment is checked reachable at construction.
    pub fn joint_plan(&self, t: f64) -> JointPlan {
        let [x, xd, xdd] = self.task_plan(t);
        let l = self.p.length;
        let phi = inverse_kinematics(x, l).unwrap_or([f64::NAN; 2]);
        let jac = [
            [l * phi[0].cos(), l * phi[1].cos()],
            [l * phi[0].sin(), l * phi[1].sin()],
        ];
        let rate = solve2(jac, xd);
        let jdot_rate = [
            -l * (phi[0].sin() * rate[0] * rate[0] + phi[1].sin() * rate[1] * rate[1]),
            l * (phi[0].cos() * rate[0] * rate[0] + phi[1].cos() * rate[1] * rate[1]),
        ];
        let accel = solve2(jac, [xdd[0] - jdot_rate[0], xdd[1] - jdot_rate[1]]);
        JointPlan { phi, rate, accel }
    }

    /// The computed-torque generalized force Q on the absolute angles at the measured
    /// `phi`, `rate` and the plan `d`.
    fn joint_force(&self, phi: [f64; 2], rate: [f64; 2], d: &JointPlan) -> [f64; 2] {
        let TrackedArmParams {
            m,
            length: l,
            g,
            kp,
            kd,
            ..
        } = self.p;
        let cmd: Vec<f64> = (0..2)
            .map(|i| d.accel[i] + kd * (d.rate[i] - rate[i]) + kp * wrap(d.phi[i] - phi[i]))
            .collect();
        let (s12, c12) = (phi[0] - phi[1]).sin_cos();
        let ml2 = m * l * l;
        [
            ml2 * (2.0 * cmd[0] + c12 * cmd[1])
                + ml2 * s12 * rate[1] * rate[1]
                + m * g * l * 2.0 * phi[0].sin(),
            ml2 * (c12 * cmd[0] + cmd[1]) - ml2 * s12 * rate[0] * rate[0]
                + m * g * l * phi[1].sin(),
        ]
    }

    /// Forward kinematics of the angles, rates and accelerations: q, v, q̈.
    fn forward(&self, d: &JointPlan) -> [[f64; 4]; 3] {
        let l = self.p.length;
        let (mut q, mut v, mut a) = ([0.0; 4], [0.0; 4], [0.0; 4]);
        let (mut base_q, mut base_v, mut base_a) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        for i in 0..2 {
            let (s, c) = d.phi[i].sin_cos();
            let (w, wd) = (d.rate[i], d.accel[i]);
            let link_q = [l * s, -l * c];
            let link_v = [l * c * w, l * s * w];
            let link_a = [l * (c * wd - s * w * w), l * (s * wd + c * w * w)];
            for k in 0..2 {
                base_q[k] += link_q[k];
                base_v[k] += link_v[k];
                base_a[k] += link_a[k];
                q[2 * i + k] = base_q[k];
                v[2 * i + k] = base_v[k];
                a[2 * i + k] = base_a[k];
            }
        }
        [q, v, a]
    }

    /// The rods' multipliers along the plan: Φ_q Φ_qᵀ λ = Φ_q (f − M q̈).
    fn plan_multipliers(&self, t: f64, q: &[f64; 4], v: &[f64; 4], a: &[f64; 4]) -> Vec<f64> {
        let mut f = [0.0; 4];
        self.forces(t, q, v, &mut f);
        let r: Vec<f64> = (0..4).map(|i| f[i] - self.p.m * a[i]).collect();
        let mut jv = [0.0; 6];
        self.chain.jacobian(t, q, &mut jv);
        // planar-chain's value order: Φ₁ at (x₁, y₁), then Φ₂ at (x₂, y₂), then at (x₁, y₁).
        let rows = [[jv[0], jv[1], 0.0, 0.0], [jv[4], jv[5], jv[2], jv[3]]];
        let dot = |x: &[f64; 4], y: &[f64]| (0..4).map(|i| x[i] * y[i]).sum::<f64>();
        let gram = [
            [dot(&rows[0], &rows[0]), dot(&rows[0], &rows[1])],
            [dot(&rows[1], &rows[0]), dot(&rows[1], &rows[1])],
        ];
        solve2(gram, [dot(&rows[0], &r), dot(&rows[1], &r)]).to_vec()
    }
}

/// The minimum-jerk time law s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ and its first two derivatives.
fn minimum_jerk(tau: f64) -> (f64, f64, f64) {
    let (t2, t3) = (tau * tau, tau * tau * tau);
    (
        t3 * (10.0 - 15.0 * tau + 6.0 * t2),
        30.0 * t2 * (1.0 - 2.0 * tau + t2),
        60.0 * tau * (1.0 - 3.0 * tau + 2.0 * t2),
    )
}

fn lerp(a: [f64; 2], b: [f64; 2], s: f64) -> [f64; 2] {
    [a[0] + s * (b[0] - a[0]), a[1] + s * (b[1] - a[1])]
}

/// Absolute link angles (from the downward vertical) that put the end effector of two
/// links of length `l` at `x`, elbow on the side σ = +1; `None` outside the workspace.
pub fn inverse_kinematics(x: [f64; 2], l: f64) -> Option<[f64; 2]> {
    let r = x[0].hypot(x[1]);
    let half = r / (2.0 * l);
    if !(r > 0.0 && half < 1.0) {
        return None;
    }
    let along = [x[0] / r, x[1] / r];
    let normal = [-along[1], along[0]];
    let off = (1.0 - half * half).sqrt();
    let u1 = [
        half * along[0] + off * normal[0],
        half * along[1] + off * normal[1],
    ];
    let u2 = [
        half * along[0] - off * normal[0],
        half * along[1] - off * normal[1],
    ];
    Some([u1[0].atan2(-u1[1]), u2[0].atan2(-u2[1])])
}

/// `x` solved from the 2×2 system `a x = b` (Cramer's rule).
fn solve2(a: [[f64; 2]; 2], b: [f64; 2]) -> [f64; 2] {
    let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    [
        (b[0] * a[1][1] - a[0][1] * b[1]) / det,
        (a[0][0] * b[1] - a[1][0] * b[0]) / det,
    ]
}

/// An angle difference wrapped into (−π, π].
fn wrap(x: f64) -> f64 {
    use std::f64::consts::{PI, TAU};
    let y = x.rem_euclid(TAU);
    if y > PI {
        y - TAU
    } else {
        y
    }
}

/// Link `i`'s vector `d_i = p_i − p_{i−1}` in `x` (positions or velocities).
fn link(x: &[f64], i: usize) -> [f64; 2] {
    if i == 0 {
        [x[0], x[1]]
    } else {
        [x[2] - x[0], x[3] - x[1]]
    }
}

/// The measured angles φ_i = atan2(dx, −dy), rates φ̇_i = ∇φ_i·ḋ_i and the gradients
/// ∇_{d_i}φ_i = (−dy, dx)/|d_i|² of the Cartesian state.
fn measured_angles(q: &[f64], v: &[f64]) -> ([f64; 2], [f64; 2], [[f64; 2]; 2]) {
    let (mut phi, mut rate, mut grad) = ([0.0; 2], [0.0; 2], [[0.0; 2]; 2]);
    for i in 0..2 {
        let (d, dd) = (link(q, i), link(v, i));
        let r2 = d[0] * d[0] + d[1] * d[1];
        phi[i] = d[0].atan2(-d[1]);
        grad[i] = [-d[1] / r2, d[0] / r2];
        rate[i] = grad[i][0] * dd[0] + grad[i][1] * dd[1];
    }
    (phi, rate, grad)
}

/// The catalog id `tracked-arm`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "tracked-arm";

/// Catalog entry `tracked-arm`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "two-link arm (planar-chain, Cartesian) tracking a minimum-jerk task-space plan by computed torque; exact solution = the plan",
        build: |t| {
            Ok(Problem::Mechanical(Box::new(TrackedArm::new(
                params::parse("problem", ID, t)?,
            )?)))
        },
        defaults: params::defaults::<TrackedArmParams>,
    }
}

impl MechanicalSystem for TrackedArm {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!(
                "Two-link arm (m = {}, ℓ = {}) tracking a minimum-jerk line A → B → A … ({} s a move) by computed torque, K_p = {}, K_d = {}",
                p.m, p.length, p.segment, p.kp, p.kd
            ),
            equations: "m p_i'' = −mg e₂ + Q₁∇φ₁ + Q₂∇φ₂ − Φ_qᵀλ,  Φ_i = |p_i − p_{i−1}|² − ℓ²,  \
                        Q = M_φ(φ̈_d + K_d ė + K_p e) + c + g (computed torque);  \
                        exact: p = FK(IK(x_d(t))), ë + K_d ė + K_p e = 0 with e(0) = 0"
                .into(),
            citation: "seed 001 §3.6.3 (分层控制架构: planner + tracker); minimum-jerk plan: T. Flash, N. Hogan, \
                       J. Neurosci. 5 (1985) 1688–1703; computed torque: B. Siciliano et al., Robotics: Modelling, \
                       Planning and Control (Springer 2009) §8.5.2"
                .into(),
            tags: vec![
                "planar".into(),
                "controlled".into(),
                "exact-solution".into(),
                "index-3".into(),
            ],
            index: 3,
            t_end: p.t_end,
            reference: "exact: the plan (forward kinematics of the inverse kinematics of x_d(t))".into(),
        }
    }
    driftlab_core::forward_mechanical!(chain;
        dims, mass_pattern, mass, constraints, jacobian_pattern, jacobian, curvature,
        row_kinds, constraint_hessian
    );
    fn forces(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        self.chain.forces(t, q, v, out);
        let (phi, rate, grad) = measured_angles(q, v);
        let force = self.joint_force(phi, rate, &self.joint_plan(t));
        // Q₁ acts on d₁ = p₁; Q₂ on d₂ = p₂ − p₁ (+ at p₂, − at p₁).
        for k in 0..2 {
            out[k] += force[0] * grad[0][k] - force[1] * grad[1][k];
            out[2 + k] += force[1] * grad[1][k];
        }
    }
    fn initial_state(&self) -> State {
        let [q, v, _] = self.forward(&self.joint_plan(0.0));
        State::mechanical(0.0, q.to_vec(), v.to_vec(), 2)
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        let [q, v, a] = self.forward(&self.joint_plan(t));
        let lambda = self.plan_multipliers(t, &q, &v, &a);
        Some(ExactSolution {
            q: q.to_vec(),
            v: v.to_vec(),
            lambda,
        })
    }
    /// The plan in f64: the phase t/segment rounds by ε t/segment, the inverse kinematics
    /// and J⁻¹ amplify a few ε by 1/|sin(φ₂ − φ₁)| ≤ 1/0.05, and λ by the balance's
    /// sensitivity (safety 8).
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        let growth = SAFETY * EPS * (1.0 + t_end / self.p.segment) / MIN_ELBOW_SINE;
        let (mut q_max, mut v_max, mut l_sens) = (0.0_f64, 0.0_f64, 0.0_f64);
        let period = 2.0 * self.p.segment;
        for k in 0..=400 {
            let t = period * f64::from(k) / 400.0;
            let [q, v, a] = self.forward(&self.joint_plan(t));
            let lambda = self.plan_multipliers(t, &q, &v, &a);
            q_max = q.iter().fold(q_max, |m, x| m.max(x.abs()));
            v_max = v.iter().fold(v_max, |m, x| m.max(x.abs()));
            l_sens = l_sens.max(multiplier_sensitivity(self, t, &q, &v, &a, &lambda));
        }
        judge(
            "the minimum-jerk plan through the inverse kinematics: 8ε(1 + t_end/segment)/0.05 times |q|, |v|; λ times the balance's sensitivity",
            &[
                part("q", growth * q_max, q_max),
                part("v", growth * (q_max + v_max), v_max.max(q_max)),
                part("λ", growth * l_sens, l_sens.max(1.0)),
            ],
            "shorten t_end or lengthen segment",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm() -> TrackedArm {
        TrackedArm::new(TrackedArmParams::default()).expect("default arm")
    }

    /// The plan's derivatives are those of its positions (central differences, h = 1e-5:
    /// truncation ~h² x''' ≈ 1e-8 on this plan).
    #[test]
    fn plan_derivatives_match_finite_differences() {
        let arm = arm();
        let h = 1e-5;
        for &t in &[0.13, 0.5, 0.87, 1.3, 2.71] {
            let (m, p, c) = (
                arm.joint_plan(t - h),
                arm.joint_plan(t + h),
                arm.joint_plan(t),
            );
            for i in 0..2 {
                let rate = (p.phi[i] - m.phi[i]) / (2.0 * h);
                let accel = (p.rate[i] - m.rate[i]) / (2.0 * h);
                assert!(
                    (rate - c.rate[i]).abs() < 1e-7,
                    "t = {t}: φ̇ {rate} vs {}",
                    c.rate[i]
                );
                assert!(
                    (accel - c.accel[i]).abs() < 1e-6,
                    "t = {t}: φ̈ {accel} vs {}",
                    c.accel[i]
                );
            }
            let [q, v, a] = arm.forward(&c);
            let [qm, vm, _] = arm.forward(&m);
            let [qp, vp, _] = arm.forward(&p);
            for k in 0..4 {
                assert!(((qp[k] - qm[k]) / (2.0 * h) - v[k]).abs() < 1e-7);
                assert!(((vp[k] - vm[k]) / (2.0 * h) - a[k]).abs() < 1e-6);
            }
            // The end effector is where the task-space plan puts it.
            let x = arm.task_plan(t)[0];
            assert!((q[2] - x[0]).abs() < 1e-14 && (q[3] - x[1]).abs() < 1e-14);
        }
    }

    /// The exact solution satisfies the DAE: Φ = 0, Φ_q v = 0, and M q̈ = f − Φ_qᵀλ with
    /// the controlled forces evaluated on it (residual at round-off), for unit and other
    /// masses and lengths.
    #[test]
    fn exact_solution_satisfies_the_closed_loop_dae() {
        for p in [
            TrackedArmParams::default(),
            TrackedArmParams {
                m: 2.5,
                length: 0.8,
                a: [0.5, -0.9],
                b: [-0.4, -1.0],
                ..TrackedArmParams::default()
            },
        ] {
            let arm = TrackedArm::new(p).expect("arm");
            for &t in &[0.0, 0.4, 1.0, 1.7, 3.3] {
                let e = arm.exact(t).expect("exact");
                let a = arm.forward(&arm.joint_plan(t))[2];
                let mut phi = [0.0; 2];
                arm.constraints(t, &e.q, &mut phi);
                assert!(phi.iter().all(|x| x.abs() < 1e-14), "Φ = {phi:?}");
                let mut f = [0.0; 4];
                arm.forces(t, &e.q, &e.v, &mut f);
                let mut jv = [0.0; 6];
                arm.jacobian(t, &e.q, &mut jv);
                let jt_lambda = [
                    jv[0] * e.lambda[0] + jv[4] * e.lambda[1],
                    jv[1] * e.lambda[0] + jv[5] * e.lambda[1],
                    jv[2] * e.lambda[1],
                    jv[3] * e.lambda[1],
                ];
                for k in 0..4 {
                    let r = p.m * a[k] - (f[k] - jt_lambda[k]);
                    assert!(
                        r.abs() < 1e-11,
                        "m = {}, t = {t}, row {k}: residual {r}",
                        p.m
                    );
                }
            }
        }
    }

    /// Off the plan, the tracker pulls back: the generalized force on the angles is
    /// M_φ K_p e for a pure angle offset at rest with the plan at rest (t = 0), which the
    /// Cartesian force reproduces through ∂q/∂φ (finite differences of the kinematics).
    #[test]
    fn tracker_force_is_the_computed_torque() {
        let arm = arm();
        let mut d = arm.joint_plan(0.0);
        let plan = d;
        d.phi[0] += 0.01;
        d.rate = [0.0; 2];
        d.accel = [0.0; 2];
        let q = arm.forward(&d)[0];
        let mut f = [0.0; 4];
        arm.forces(0.0, &q, &[0.0; 4], &mut f);
        // Generalized force on φ_j: (∂q/∂φ_j)ᵀ f, minus gravity's (which computed torque
        // cancels): expect M_φ K_p (φ_d − φ).
        let dq = |j: usize| {
            let (mut p, mut m) = (d, d);
            p.phi[j] += 1e-6;
            m.phi[j] -= 1e-6;
            let (qp, qm) = (arm.forward(&p)[0], arm.forward(&m)[0]);
            (0..4).map(|k| (qp[k] - qm[k]) / 2e-6).collect::<Vec<f64>>()
        };
        let TrackedArmParams {
            m,
            length: l,
            g,
            kp,
            ..
        } = arm.p;
        let c12 = (d.phi[0] - d.phi[1]).cos();
        let e = [plan.phi[0] - d.phi[0], plan.phi[1] - d.phi[1]];
        let want = [
            m * l * l * kp * (2.0 * e[0] + c12 * e[1]),
            m * l * l * kp * (c12 * e[0] + e[1]),
        ];
        let gravity = [0.0, -m * g, 0.0, -m * g];
        for j in 0..2 {
            let dqj = dq(j);
            let got: f64 = (0..4).map(|k| dqj[k] * (f[k] - gravity[k])).sum::<f64>()
                - m * g * l * [2.0 * d.phi[0].sin(), d.phi[1].sin()][j];
            assert!((got - want[j]).abs() < 1e-6, "φ_{j}: {got} vs {}", want[j]);
        }
    }

    #[test]
    fn unreachable_segments_are_refused_naming_the_fix() {
        for b in [[0.0, -2.5], [0.0, 0.0]] {
            let err = TrackedArm::new(TrackedArmParams {
                b,
                ..TrackedArmParams::default()
            })
            .expect_err("unreachable")
            .to_string();
            assert!(err.contains("workspace"), "{err}");
        }
    }

    #[test]
    fn reference_is_valid_on_the_default_span() {
        assert!(matches!(
            arm().reference_domain(4.0),
            ReferenceDomain::Valid { .. }
        ));
    }
}
