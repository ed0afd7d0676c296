//! The rigid body in Euler parameters (issue 14 item 5): the unit-norm row is an ordinary
//! holonomic constraint, so the catalog's methods run it; the torque-free symmetric body
//! has an exact solution (regular precession). Measured: Gauss s = 2 with projection
//! converges at order 4 to it; the unstabilized Taylor step drifts off |p| = 1 and its
//! energy drifts, RATTLE holds the norm to its Newton tolerance.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{drive, MetricsObserver, Observer, RunStatus, Schedule, SummaryMetrics};
use driftlab_methods::build;
use driftlab_problems::build as problem;

fn run(method: &str, params: &str, projection: Option<&str>, h: f64) -> SummaryMetrics {
    let p = problem("quaternion-body", &toml::Table::new()).unwrap();
    let proj: Option<toml::Table> = projection.map(|s| s.parse().unwrap());
    let mut m = build(method, &params.parse().unwrap(), proj.as_ref()).unwrap();
    let mut obs = MetricsObserver::new(0);
    let out = drive(
        p.as_system(),
        m.as_mut(),
        &Schedule::fixed(h, 10.0),
        &mut [&mut obs as &mut dyn Observer],
    );
    assert_eq!(out.status, RunStatus::Ok, "{method}");
    obs.summary
}

#[test]
fn the_body_in_euler_parameters_converges_to_the_exact_precession() {
    let errs: Vec<f64> = [0.02, 0.01]
        .iter()
        .map(|&h| run("gauss", "stages = 2", Some("tol = 1e-13"), h).err_q)
        .collect();
    let order = (errs[0] / errs[1]).log2();
    println!("Gauss s = 2 + projection: errors {errs:?}, order {order:.2}");
    assert!((order - 4.0).abs() <= 0.3, "order {order}");
    let rattle = run("rattle", "", None, 0.01);
    println!(
        "RATTLE: |Φ| {:.1e}, energy {:.1e}, err_q {:.1e}",
        rattle.max_pos_residual, rattle.max_energy_rel_error, rattle.err_q
    );
    assert!(rattle.max_pos_residual <= 1e-12);
    let taylor = run("taylor", "", None, 0.01);
    println!(
        "Taylor: |Φ| {:.1e}, energy {:.1e}",
        taylor.max_pos_residual, taylor.max_energy_rel_error
    );
    assert!(taylor.max_pos_residual >= 1e3 * rattle.max_pos_residual.max(1e-16));
}

/// The same body in natural coordinates (`natural-body`: three unit axes, six rows,
/// constant M) beside Euler parameters (one row, M(p)): both converge at Gauss's order 4
/// to the exact precession, and the natural form's angular momentum (its `momentum()`)
/// stays at the solver's tolerance under RATTLE, whose order is 2 there (constant M) but
/// drops to 1 in Euler parameters.
#[test]
fn natural_coordinates_and_euler_parameters_give_the_same_body() {
    let run_on = |pid: &str, method: &str, params: &str, projection: Option<&str>, h: f64| {
        let p = problem(pid, &toml::Table::new()).unwrap();
        let proj: Option<toml::Table> = projection.map(|s| s.parse().unwrap());
        let mut m = build(method, &params.parse().unwrap(), proj.as_ref()).unwrap();
        let mut obs = MetricsObserver::new(0);
        let out = drive(
            p.as_system(),
            m.as_mut(),
            &Schedule::fixed(h, 10.0),
            &mut [&mut obs as &mut dyn Observer],
        );
        assert_eq!(out.status, RunStatus::Ok, "{pid} {method}");
        obs.summary
    };
    for pid in ["natural-body", "quaternion-body"] {
        let (a, b) = (
            run_on(pid, "gauss", "stages = 2", Some("tol = 1e-13"), 0.02),
            run_on(pid, "gauss", "stages = 2", Some("tol = 1e-13"), 0.01),
        );
        let order = (a.err_q / b.err_q).log2();
        println!(
            "{pid}: Gauss s = 2 + projection err_q {:.2e} → {:.2e}, order {order:.2}",
            a.err_q, b.err_q
        );
        assert!((order - 4.0).abs() <= 0.3, "{pid}: order {order}");
    }
    let (a, b) = (
        run_on("natural-body", "rattle", "", None, 0.02),
        run_on("natural-body", "rattle", "", None, 0.01),
    );
    let order = (a.err_q / b.err_q).log2();
    println!(
        "natural-body RATTLE: order {order:.2}, momentum error {:.1e}",
        b.max_momentum_error
    );
    assert!(
        (order - 2.0).abs() <= 0.2,
        "RATTLE order {order} with constant M"
    );
    assert!(b.max_momentum_error <= 1e-11, "{:e}", b.max_momentum_error);
}
