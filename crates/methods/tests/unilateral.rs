//! Unilateral constraints (issue 4): the pendulum with stops under Moreau–Jean. Between
//! the stops nothing acts; at a stop the impact law ġ⁺ = −e ġ⁻ removes exactly
//! `½ (1 − e²) m ġ⁻²` of energy, and ġ⁻ is the full speed of the bob there (the stop's
//! gradient is tangent to the circle), known in closed form from the release angle:
//! `v² = 2 g ℓ (cos θ_min − cos θ₀)`. Methods that cannot enforce unilateral rows are
//! refused, not run with the stops ignored.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{drive, MethodError, MetricsObserver, Observer, RunError, RunStatus, Schedule};
use driftlab_methods::build;
use driftlab_methods::moreau_jean::pgs;
use driftlab_problems::build as problem;

fn relative_energy_after_first_impact(e: f64, h: f64) -> f64 {
    // Released at 60°, stop at −30°; the first impact happens before t = 0.6 s and the
    // next arrival at a stop after 1 s for every e here.
    let p = problem(
        "pendulum-limits",
        &format!("restitution = {e:?}").parse().unwrap(),
    )
    .unwrap();
    let mut m = build("moreau-jean", &toml::Table::new(), None).unwrap();
    let mut obs = MetricsObserver::new(0);
    let out = drive(
        p.as_system(),
        m.as_mut(),
        &Schedule::fixed(h, 0.8),
        &mut [&mut obs as &mut dyn Observer],
    );
    assert!(matches!(out.status, RunStatus::Ok), "{:?}", out.status);
    obs.summary.final_energy_rel_error
}

#[test]
fn impact_removes_the_newton_law_energy() {
    let (g, l, m) = (9.81, 1.0, 1.0);
    let v2 = 2.0 * g * l * ((-30f64).to_radians().cos() - 60f64.to_radians().cos());
    for e in [0.0, 0.5, 1.0] {
        let want = 0.5 * (1.0 - e * e) * m * v2 / (m * g * l);
        let got = relative_energy_after_first_impact(e, 1e-4);
        // First order at the impact: deviation ≈ C h with C ≈ 2 (measured, h = 1e-3 → 1e-4:
        // e = 1: 1.9e-3 → 2.0e-4; e = 0.5: 5.2e-4 → 3.3e-5; e = 0: 1.1e-4 at both, the
        // sticking position), so 1e-3 at h = 1e-4 leaves a factor 5.
        assert!(
            (got - want).abs() < 1e-3,
            "e = {e}: relative energy loss {got}, Newton's law {want}"
        );
    }
}

#[test]
fn elastic_stops_lose_energy_only_at_first_order() {
    let a = relative_energy_after_first_impact(1.0, 1e-3);
    let b = relative_energy_after_first_impact(1.0, 1e-4);
    assert!(
        b < a / 5.0,
        "energy error at the stop does not shrink with h: {a:e} → {b:e}"
    );
}

#[test]
fn methods_without_unilateral_support_are_refused() {
    let p = problem("pendulum-limits", &toml::Table::new()).unwrap();
    let mut m = build("rattle", &toml::Table::new(), None).unwrap();
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
                    form: "unilateral",
                    ..
                })
            ),
            "{error}"
        ),
        RunStatus::Ok => panic!("rattle ignored the stops"),
    }
}

/// PGS solves a 2×2 LCP with one active and one inactive row exactly.
#[test]
fn pgs_solves_a_small_lcp() {
    // w = W P + b, W = [[2, 1], [1, 2]], b = (−2, 1): solution P = (1, 0), w = (0, 2).
    let w = [2.0, 1.0, 1.0, 2.0];
    let b = [-2.0, 1.0];
    let mut p = [0.0, 0.0];
    pgs(&w, &b, &mut p, 1e-14, 100).unwrap();
    assert!((p[0] - 1.0).abs() < 1e-14 && p[1] == 0.0, "{p:?}");
}
