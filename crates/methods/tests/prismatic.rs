//! The prismatic joint piece (issue 4: revolute, spherical and prismatic joints as reusable
//! natural-coordinate pieces) under every method of the catalog: the block on the inclined
//! rail translates with constant acceleration g sin α and constant multipliers, a motion
//! quadratic in t that every method of order ≥ 2 reproduces to round-off — so any error
//! above round-off would be the joint's equations or a method's handling of them, not
//! discretization.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{drive, MetricsObserver, Observer, RunStatus, Schedule, SystemForm};
use driftlab_methods::catalog;
use driftlab_problems::build as problem;

#[test]
fn every_second_order_method_slides_the_block_exactly() {
    let p = problem("prismatic-slider", &toml::Table::new()).unwrap();
    let mut checked = Vec::new();
    for e in catalog() {
        let info = (e.info)();
        if !info.forms.contains(&SystemForm::Mechanical) {
            continue;
        }
        let mut m = (e.build)(&toml::Table::new()).unwrap();
        let mut obs = MetricsObserver::new(0);
        let out = drive(
            p.as_system(),
            m.as_mut(),
            &Schedule::fixed(1e-2, 2.0),
            &mut [&mut obs as &mut dyn Observer],
        );
        let RunStatus::Ok = out.status else {
            // Methods for other structures (pendulum-only schemes, priorities, unilateral
            // rows) are refused as rows; that is not this test's subject.
            continue;
        };
        let err = obs.summary.err_q;
        match info.orders.q {
            Some(order) if order >= 2.0 => {
                assert!(err < 1e-9, "{}: max position error {err:e}", e.id);
                checked.push(e.id);
            }
            _ if e.id == "implicit-euler" => {
                // q_{n+1} = q_n + h v_{n+1} with v exact: the error is ½ a h t along the
                // rail, whose largest component is ½ g sin α h t cos α = 0.04248 at t = 2.
                let (s, c) = 30f64.to_radians().sin_cos();
                let want = 0.5 * 9.81 * s * 1e-2 * 2.0 * c;
                assert!(
                    (err - want).abs() < 1e-10,
                    "implicit-euler: {err} vs {want}"
                );
                checked.push(e.id);
            }
            _ => {}
        }
    }
    eprintln!("checked: {checked:?}");
    for id in [
        "generalized-alpha",
        "rattle",
        "gauss",
        "lobatto",
        "implicit-euler",
    ] {
        assert!(checked.contains(&id), "{id} was not checked: {checked:?}");
    }
}
