//! Maximal against reduced coordinates (issue 14 item 5; seed 001 §3.12): the planar
//! chain in joint angles (`planar-chain-angles`, an ODE with dense M(θ)) integrated by the
//! same methods as the maximal-coordinate DAE (`planar-chain`, diagonal M, banded Φ_q).
//! The same mechanism: Gauss s = 3 on both gives the same bob positions; for N = 1 the
//! reduced pendulum converges to the exact elliptic solution at Gauss's order 2s.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;
use common::Case;
use driftlab_core::{RunStatus, State};

/// The states every 0.1 s and the max error in q.
fn trajectory(
    pid: &str, pparams: &str, method: &str, mparams: &str, h: f64, t_end: f64,
) -> (Vec<State>, f64) {
    let r = Case::new(pid, method, h, t_end)
        .problem_params(pparams)
        .params(mparams)
        .sampled(0.1)
        .run();
    assert_eq!(r.status, RunStatus::Ok, "{pid} {method}");
    (r.states, r.summary.err_q)
}

/// Bob positions of the chain from its angles.
fn bobs(theta: &[f64], l: f64) -> Vec<f64> {
    let (mut x, mut y) = (0.0, 0.0);
    let mut out = Vec::new();
    for t in theta {
        x += l * t.sin();
        y -= l * t.cos();
        out.extend([x, y]);
    }
    out
}

#[test]
fn the_chain_in_angles_moves_as_the_chain_in_maximal_coordinates() {
    let params = "links = 3\ntheta0_deg = 60.0";
    let (reduced, _) = trajectory(
        "planar-chain-angles",
        params,
        "gauss",
        "stages = 3",
        1e-3,
        2.0,
    );
    let (maximal, _) = trajectory("planar-chain", params, "gauss", "stages = 3", 1e-3, 2.0);
    assert_eq!(reduced.len(), maximal.len());
    let worst = reduced
        .iter()
        .zip(&maximal)
        .map(|(r, m)| {
            bobs(&r.q, 1.0)
                .iter()
                .zip(&m.q)
                .fold(0.0_f64, |a, (p, q)| a.max((p - q).abs()))
        })
        .fold(0.0_f64, f64::max);
    println!("max bob distance, reduced vs maximal (Gauss s = 3, h = 1e-3, 2 s): {worst:.2e}");
    assert!(worst <= 1e-8, "{worst:e}");
}

#[test]
fn the_pendulum_in_its_angle_converges_at_gauss_order() {
    let errs: Vec<f64> = [0.04, 0.02, 0.01]
        .iter()
        .map(|&h| {
            trajectory(
                "planar-chain-angles",
                "links = 1\ntheta0_deg = 90.0",
                "gauss",
                "stages = 2",
                h,
                2.0,
            )
            .1
        })
        .collect();
    let orders: Vec<f64> = errs.windows(2).map(|w| (w[0] / w[1]).log2()).collect();
    println!("errors {errs:?}, observed orders {orders:?}");
    for p in orders {
        assert!((p - 4.0).abs() <= 0.3, "order {p}");
    }
}

/// IFToMM A02's four-bar (N = 1) in its crank angle against the maximal-coordinate
/// N-four-bar run through its singular positions by generalized-α: the same motion of
/// B₀ = ℓ(cos φ, sin φ) over 5 s (both near their step's accuracy), where the maximal
/// form's rank drops at every horizontal passage and the reduced form has nothing to drop.
#[test]
fn the_four_bar_in_its_crank_angle_moves_as_the_maximal_four_bar() {
    let (reduced, _) = trajectory(
        "n-four-bar-angle",
        "n = 1",
        "gauss",
        "stages = 3",
        1e-3,
        5.0,
    );
    let (maximal, _) = trajectory(
        "n-four-bar",
        "n = 1",
        "generalized-alpha",
        "rho_inf = 1.0",
        1e-4,
        5.0,
    );
    let n = reduced.len().min(maximal.len());
    assert!(n >= 50);
    let worst = (0..n)
        .map(|k| {
            let phi = reduced[k].q[0];
            let (x, y) = (phi.cos(), phi.sin());
            (x - maximal[k].q[0]).abs().max((y - maximal[k].q[1]).abs())
        })
        .fold(0.0_f64, f64::max);
    let turns = (reduced[n - 1].q[0] - reduced[0].q[0]).abs() / std::f64::consts::TAU;
    println!("B₀ reduced vs maximal over 5 s: {worst:.2e} ({turns:.2} crank turns)");
    assert!(turns > 1.0, "the crank passes its singular positions");
    assert!(worst <= 1e-5, "{worst:e}");
}
