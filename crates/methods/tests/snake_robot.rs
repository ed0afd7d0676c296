//! The wheeled three-link snake (`snake-robot`, seed 001 §3.8): eight rows for eight
//! coordinates, so the motion is the kinematic ODE q' = V(t, q), Φ_q V = −Φ_t. That ODE,
//! integrated here by classical RK4 with a step of 1e-4 (independent of masses, forces
//! and multipliers), is the reference the DAE methods must reproduce.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use common::Case;
use driftlab_problems::nonholonomic::snake_robot::{
    kinematic_reference, SnakeRobot, SnakeRobotParams,
};

/// The kinematic reference at `t_end` (RK4, step 1e-4).
fn reference(t_end: f64) -> Vec<f64> {
    let s = SnakeRobot::new(SnakeRobotParams::default()).unwrap();
    kinematic_reference(&s, t_end).expect("regular along the loop")
}

fn error(method: &str, params: &str, h: f64, q_ref: &[f64]) -> f64 {
    let run = Case::new("snake-robot", method, h, 2.0)
        .params(params)
        .run();
    assert_eq!(
        run.status,
        driftlab_core::RunStatus::Ok,
        "{method} h = {h}: {:?}",
        run.status
    );
    run.final_state
        .q
        .iter()
        .zip(q_ref)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

/// Measured over one shape cycle (2 s) against the kinematic reference, errors in q at
/// h = 0.02, 0.01, 0.005: Gauss s = 2 7.0e-9 → 4.4e-10 → 2.8e-11 (orders 4.00, 4.00);
/// s = 1 2.9e-4 → 7.1e-5 → 1.8e-5 (2.00, 2.00); Baumgarte (ξ = 1, ω_n = 10) 6.8e-4 →
/// 3.6e-4 → 1.8e-4 (0.93, 0.97): every declared order holds on a nonholonomic, rheonomic
/// system whose masses play no part in the motion.
#[test]
fn methods_reproduce_the_kinematic_snake_at_their_orders() {
    let q_ref = reference(2.0);
    for (method, params, order) in [
        ("gauss", "stages = 2", 4.0),
        ("gauss", "stages = 1", 2.0),
        ("baumgarte", "xi = 1.0\nomega_n = 10.0", 1.0),
    ] {
        let e: Vec<f64> = [0.01, 0.005]
            .iter()
            .map(|&h| error(method, params, h, &q_ref))
            .collect();
        let observed = (e[0] / e[1]).log2();
        assert!(
            (observed - order).abs() < 0.1,
            "{method} {params}: order {observed}, errors {e:?}"
        );
    }
}

/// The snake advances by a fixed displacement per shape cycle (the loop encloses area in
/// shape space): its centroid, at the origin at t = 0, is at (−0.2329, −0.0964) after one
/// cycle of the default loop; and its wheel rows are not integrable.
#[test]
fn the_shape_loop_moves_the_snake_and_the_wheels_are_nonholonomic() {
    let q = reference(2.0);
    let cx = q.iter().step_by(2).sum::<f64>() / 4.0;
    let cy = q.iter().skip(1).step_by(2).sum::<f64>() / 4.0;
    assert!(cx.hypot(cy) > 0.2, "centroid after one cycle ({cx}, {cy})");
    let s = SnakeRobot::new(SnakeRobotParams::default()).unwrap();
    let q0 = driftlab_core::MechanicalSystem::initial_state(&s).q;
    let defect = driftlab_problems::frobenius::involutivity_defect(&s, &[5, 6, 7], 0.0, &q0);
    assert!(defect > 0.1, "wheel rows' involutivity defect {defect}");
}
