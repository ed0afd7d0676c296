//! Prioritized constraints (issue 4, seed 001 §3.5.3) on the conflicting two-link chain:
//! the tip target 2.5ℓ below the pivot is unreachable (reach 2ℓ). The hierarchical method
//! keeps the rod lengths while the tip row gives way to its best value, |Φ₂| = 0.5ℓ (the
//! straight hanging chain); classical methods are refused.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{drive, MethodError, MetricsObserver, Observer, RunError, RunStatus, Schedule};
use driftlab_methods::build;
use driftlab_problems::build as problem;

#[test]
fn high_priority_holds_while_the_low_one_gives_way() {
    let p = problem("priority-conflict", &toml::Table::new()).unwrap();
    for (h, rod_bound) in [(1e-3, 2e-2), (1e-4, 2e-3)] {
        let mut m = build("priority", &toml::Table::new(), None).unwrap();
        let mut obs = MetricsObserver::new(0);
        let out = drive(
            p.as_system(),
            m.as_mut(),
            &Schedule::fixed(h, 10.0),
            &mut [&mut obs as &mut dyn Observer],
        );
        assert!(
            matches!(out.status, RunStatus::Ok),
            "h = {h}: {:?}",
            out.status
        );
        let s = obs.summary;
        // Rod lengths: Baumgarte-type feedback, first order in h (measured max 1.29e-2 at
        // h = 1e-3, 1.34e-3 at 1e-4; 9e-5 and 1.2e-5 at t = 10).
        assert!(
            s.max_pos_residual < rod_bound,
            "h = {h}: rod residual {:e}",
            s.max_pos_residual
        );
        assert!(
            s.final_pos_residual < 1e-3,
            "h = {h}: final rod residual {:e}",
            s.final_pos_residual
        );
        // Tip row: settles at the closest reachable height (hanging chain), |Φ₂| = 0.5.
        assert!(
            (s.final_deferred_residual - 0.5).abs() < 2e-3,
            "h = {h}: tip residual {}",
            s.final_deferred_residual
        );
    }
}

#[test]
fn classical_methods_are_refused_on_conflicting_groups() {
    let p = problem("priority-conflict", &toml::Table::new()).unwrap();
    let mut m = build("baumgarte", &toml::Table::new(), None).unwrap();
    let out = drive(
        p.as_system(),
        m.as_mut(),
        &Schedule::fixed(1e-3, 1.0),
        &mut [],
    );
    match out.status {
        RunStatus::Failed { error, .. } => assert!(
            matches!(
                error,
                RunError::Setup(MethodError::UnsupportedForm {
                    form: "prioritized",
                    ..
                })
            ),
            "{error}"
        ),
        RunStatus::Ok => panic!("baumgarte ran an unsolvable DAE"),
    }
}
