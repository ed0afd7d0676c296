//! Published references matched by the recommended settings (issue 4): the IVP Test Set
//! Andrews and car-axis references in significant correct digits, and the IFToMM A01
//! allowed error over 2000 s. The bars are the report's targets (scd ≥ 5 and ≥ 6, error
//! ≤ 1e-3 m from the A01 specification) raised to what these settings measure, with a
//! margin of about half a digit; the measured values are in each comment.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{drive, MetricsObserver, Observer, RunStatus, Schedule, SummaryMetrics};
use driftlab_methods::build;
use driftlab_problems::build as problem;

fn summary(
    pid: &str, method: &str, mp: &str, projected: bool, h: f64, t_end: f64,
) -> SummaryMetrics {
    let p = problem(pid, &toml::Table::new()).unwrap();
    let proj: Option<toml::Table> = projected.then(|| "tol = 1e-13".parse().unwrap());
    let mut m = build(method, &mp.parse().unwrap(), proj.as_ref()).unwrap();
    let mut obs = MetricsObserver::new(0);
    let out = drive(
        p.as_system(),
        m.as_mut(),
        &Schedule::fixed(h, t_end),
        &mut [&mut obs as &mut dyn Observer],
    );
    assert!(
        matches!(out.status, RunStatus::Ok),
        "{pid}: {:?}",
        out.status
    );
    obs.summary
}

/// Measured 7.43 (the reference itself is good to about 9.5 digits).
#[test]
fn andrews_to_seven_digits_with_projected_gauss() {
    let s = summary("andrews", "gauss", "stages = 2", true, 1e-4, 0.03);
    eprintln!("Andrews scd {}", s.scd);
    assert!(s.scd >= 7.0, "Andrews scd {}", s.scd);
}

/// Measured 9.19 (the reference limits any score to about 9.2).
#[test]
fn car_axis_to_nine_digits_with_projected_gauss() {
    let s = summary("car-axis", "gauss", "stages = 3", true, 1e-3, 3.0);
    eprintln!("car axis scd {}", s.scd);
    assert!(s.scd >= 8.5, "car axis scd {}", s.scd);
}

/// IFToMM A01 (pendulum released horizontally, 2000 s; datasets/iftomm_udc_mbs_benchmark_specs.json):
/// the specification allows 1e-3 m; Gauss s = 2 at h = 1e-2 measured 2.07e-5 m max error
/// over the run against the exact elliptic solution, so the bar is 1e-4 m.
#[test]
fn iftomm_a01_within_the_allowed_error_over_2000_s() {
    let s = summary("pendulum-a01", "gauss", "stages = 2", false, 1e-2, 2000.0);
    eprintln!("A01 max position error {}", s.err_q);
    assert!(s.err_q <= 1e-4, "A01 max position error {} m", s.err_q);
}
