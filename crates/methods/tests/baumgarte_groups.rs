//! Baumgarte gains grouped by the physical kind of the constraint rows (issue 14 item 8;
//! seed 001 §3.3.4 "基于约束的物理特性分组处理"): the natural-coordinate problems name each
//! row's kind (unit norms, rigid-body distances and dots, joints); `groups` gives each kind
//! its gains — the same as the per-row `alpha_diag`/`beta_diag` expanded by kind. In
//! natural coordinates the joint rows are linear in q (P − Q = 0, (u − u')·e_k = 0), so
//! the Taylor update keeps them exactly and their gains change nothing (bitwise); the
//! quadratic rows (unit norms, rigid-body distances) are the ones that drift.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{drive, MetricsObserver, Observer, RunStatus, Schedule};
use driftlab_methods::build;
use driftlab_problems::{build as problem, Problem};

fn run(params: &str) -> Result<driftlab_core::SummaryMetrics, String> {
    let p = problem("spatial-double-pendulum", &toml::Table::new()).unwrap();
    let mut m = build("baumgarte", &params.parse().unwrap(), None).map_err(|e| e.to_string())?;
    let mut obs = MetricsObserver::new(0);
    let out = drive(
        p.as_system(),
        m.as_mut(),
        &Schedule::fixed(1e-3, 2.0),
        &mut [&mut obs as &mut dyn Observer],
    );
    match out.status {
        RunStatus::Ok => Ok(obs.summary),
        RunStatus::Failed { error, .. } => Err(error.to_string()),
    }
}

#[test]
fn gains_by_row_kind_equal_the_per_row_gains_they_expand_to() {
    let Problem::Mechanical(s) = problem("spatial-double-pendulum", &toml::Table::new()).unwrap()
    else {
        panic!()
    };
    let kinds = s.row_kinds();
    let count = |k: &str| kinds.iter().filter(|x| **x == k).count();
    // Two unit axes, two bodies of two rows each, one revolute joint of five rows.
    assert_eq!(
        (count("unit-norm"), count("rigid-body"), count("joint")),
        (2, 4, 5)
    );
    let grouped =
        run("xi = 1.0\nomega_n = 20.0\ngroups = { unit-norm = { xi = 1.0, omega_n = 80.0 } }")
            .unwrap();
    let per_row = |scalar: f64, unit: f64| -> String {
        let v: Vec<String> = kinds
            .iter()
            .map(|k| format!("{:?}", if *k == "unit-norm" { unit } else { scalar }))
            .collect();
        format!("[{}]", v.join(", "))
    };
    let expanded = run(&format!(
        "alpha_diag = {}\nbeta_diag = {}",
        per_row(20.0, 80.0),
        per_row(20.0, 80.0)
    ))
    .unwrap();
    // Bit for bit (compared as text: the undefined metrics are NaN).
    assert_eq!(
        format!("{grouped:?}"),
        format!("{expanded:?}"),
        "groups and their per-row expansion"
    );
    let uniform = run("xi = 1.0\nomega_n = 20.0").unwrap();
    println!(
        "max ‖Φ‖: uniform β = 20 {:.3e}, unit norms at β = 80 {:.3e}",
        uniform.max_pos_residual, grouped.max_pos_residual
    );
    assert_ne!(format!("{uniform:?}"), format!("{grouped:?}"));
    let joints =
        run("xi = 1.0\nomega_n = 20.0\ngroups = { joint = { xi = 1.0, omega_n = 80.0 } }").unwrap();
    assert_eq!(
        format!("{uniform:?}"),
        format!("{joints:?}"),
        "linear joint rows never drift"
    );
    let typo = run("groups = { joints = { xi = 1.0, omega_n = 80.0 } }").unwrap_err();
    assert!(
        typo.contains("`joints`") && typo.contains("joint, rigid-body, unit-norm"),
        "{typo}"
    );
}
