//! Seed 001 exercise 5 measured (issue 14 item 8): Baumgarte gains adapted from the
//! violation history on a 3-link chain from 60°, h = 1e-3, 20 s, from ξ = 1, ω_n = 2.
//! The rule as the seed gives it (β raised on a growing violation, α on an oscillating
//! one, α ≤ β, no bound) drives the gains out of the stability region of the explicit
//! update (β²h/4 < α < 1/h) and the run diverges within a second; clamped into that
//! region, it holds the residual two orders of magnitude below the fixed gains'.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{drive, MetricsObserver, Observer, RunStatus, Schedule};
use driftlab_methods::build;
use driftlab_problems::build as problem;

fn run(extra: &str) -> (RunStatus, f64) {
    let p = problem(
        "planar-chain",
        &"links = 3\ntheta0_deg = 60.0".parse().unwrap(),
    )
    .unwrap();
    let params = format!("xi = 1.0\nomega_n = 2.0\n{extra}");
    let mut m = build("baumgarte", &params.parse().unwrap(), None).unwrap();
    let mut obs = MetricsObserver::new(0);
    let out = drive(
        p.as_system(),
        m.as_mut(),
        &Schedule::fixed(1e-3, 20.0),
        &mut [&mut obs as &mut dyn Observer],
    );
    (out.status, obs.summary.max_pos_residual)
}

#[test]
fn the_seeds_history_rule_diverges_and_the_clamped_one_cuts_the_drift() {
    let (fixed_status, fixed) = run("");
    assert_eq!(fixed_status, RunStatus::Ok);
    let (seed_status, _) =
        run("history = { window = 20, gamma = 1.0, delta = 0.1, stable_region = false }");
    match seed_status {
        RunStatus::Failed { t, error } => {
            assert!(t < 1.0, "diverged only at t = {t}");
            assert_eq!(error.kind(), "diverged", "{error}");
        }
        RunStatus::Ok => panic!("the unbounded rule was expected to diverge"),
    }
    let (clamped_status, clamped) =
        run("history = { window = 20, gamma = 1.0, delta = 0.1, stable_region = true }");
    assert_eq!(clamped_status, RunStatus::Ok);
    println!("max ‖Φ‖: fixed {fixed:.3e}, history clamped {clamped:.3e}");
    assert!(
        clamped * 100.0 <= fixed,
        "fixed {fixed:e}, clamped {clamped:e}"
    );
}
