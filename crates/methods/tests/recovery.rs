//! The emergency recovery decorators of seed 001 §3.5.4 (`+rollback`, `+reset`,
//! `+relax`): each rescues or bounds a run that fails or drifts without it, counts its
//! interventions, and bad parameters are refused with the field named.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{
    drive, MetricsObserver, Observer, RunOutcome, RunStatus, Schedule, SummaryMetrics,
};
use driftlab_methods::{build_decorated, Decorators};
use driftlab_problems::build as problem;

fn run(
    method: &str, params: &str, recovery: Option<&str>, h: f64, t_end: f64,
) -> (RunOutcome, SummaryMetrics) {
    let p = problem("pendulum", &toml::Table::new()).unwrap();
    let params: toml::Table = params.parse().unwrap();
    let rec: Option<toml::Table> = recovery.map(|r| r.parse().unwrap());
    let with = Decorators {
        recovery: rec.as_ref(),
        ..Decorators::default()
    };
    let mut m = build_decorated(method, &params, with).unwrap();
    let mut obs = MetricsObserver::new(0);
    let out = drive(
        p.as_system(),
        m.as_mut(),
        &Schedule::fixed(h, t_end),
        &mut [&mut obs as &mut dyn Observer],
    );
    (out, obs.summary)
}

/// Baumgarte with α = ξω_n = 400 at h = 0.01 is beyond its stability boundary α < 1/h
/// (the exact region β²h/4 < α < 1/h, `baumgarte-map`): it diverges. Rollback retakes each
/// step that leaves ε_tol as 2, 4, 8 … substeps; at h/8, α h = 0.5 is inside the region,
/// so the run completes within the tolerance (measured: 196 rollbacks in 200 steps,
/// 1376 inner steps, ‖Φ‖∞ ≤ 6.4e-4).
#[test]
fn rollback_rescues_baumgarte_beyond_its_stability_boundary() {
    let gains = "xi = 1.0\nomega_n = 400.0";
    let (plain, _) = run("baumgarte", gains, None, 0.01, 2.0);
    assert!(
        matches!(plain.status, RunStatus::Failed { .. }),
        "{:?}",
        plain.status
    );
    let (out, s) = run(
        "baumgarte",
        gains,
        Some("strategy = \"rollback\"\neps0 = 1e-3"),
        0.01,
        2.0,
    );
    assert_eq!(out.status, RunStatus::Ok);
    assert!(out.stats.rollbacks > 0);
    // Scaled violation ≤ 1e-3 with ‖∇Φ‖ = 2ℓ = 2 (ℓ = 1): ‖Φ‖∞ ≤ 2e-3.
    assert!(s.max_pos_residual <= 2e-3, "‖Φ‖∞ {:e}", s.max_pos_residual);
}

/// Explicit Taylor drifts off the circle (O(h²) per step, growing); reset projects back
/// whenever the scaled violation |Φ|/‖∇Φ‖ exceeds ε₀ = 1e-6, so ‖Φ‖∞ ≤ ε₀‖∇Φ‖ = 2ε₀|q|
/// (Φ = |q|² − ℓ², ℓ = 1, |q| ≤ 1 + ε₀). Measured: 486 resets in 500 steps, ‖Φ‖∞ = 1.97e-6
/// against 0.61 for plain Taylor.
#[test]
fn reset_holds_the_violation_below_the_tolerance() {
    let (plain, sp) = run("taylor", "", None, 0.01, 5.0);
    assert_eq!(plain.status, RunStatus::Ok);
    assert!(
        sp.max_pos_residual > 1e-4,
        "taylor drifts: {:e}",
        sp.max_pos_residual
    );
    let (out, s) = run("taylor", "", Some("strategy = \"reset\""), 0.01, 5.0);
    assert_eq!(out.status, RunStatus::Ok);
    assert!(out.stats.resets > 0 && out.stats.rollbacks == 0);
    assert!(
        s.max_pos_residual <= 2e-6 * (1.0 + 1e-6),
        "‖Φ‖∞ {:e}",
        s.max_pos_residual
    );
}

/// Relax applies 1/K, 2/K, …, K/K of the projection's correction over K = 10 steps after
/// an emergency: the violation is let above ε₀ during the ramps and brought back to the
/// manifold at their ends. Measured: 50 ramps in 500 steps, ‖Φ‖∞ = 3.0e-4 (reset: 2e-6),
/// plain Taylor 0.61.
#[test]
fn relax_restores_the_constraint_gradually() {
    let (_, sp) = run("taylor", "", None, 0.01, 5.0);
    let (out, s) = run("taylor", "", Some("strategy = \"relax\""), 0.01, 5.0);
    assert_eq!(out.status, RunStatus::Ok);
    assert!(out.stats.relaxations > 0 && out.stats.resets == 0);
    assert!(s.max_pos_residual > 2e-6, "relaxed: above ε₀ during ramps");
    assert!(
        s.max_pos_residual < sp.max_pos_residual / 100.0,
        "{:e} vs {:e}",
        s.max_pos_residual,
        sp.max_pos_residual
    );
}

#[test]
fn bad_recovery_parameters_are_refused_with_the_field() {
    let p = toml::Table::new();
    for (rec, field) in [
        ("eps0 = 0.0", "eps0"),
        ("alpha = -1.0", "alpha"),
        ("max_halvings = 0", "max_halvings"),
        ("relax_steps = 0", "relax_steps"),
        ("strategy = \"restart\"", "strategy"),
    ] {
        let t: toml::Table = rec.parse().unwrap();
        let with = Decorators {
            recovery: Some(&t),
            ..Decorators::default()
        };
        let Err(e) = build_decorated("taylor", &p, with) else {
            panic!("{rec} accepted")
        };
        assert!(e.to_string().contains(field), "{rec}: {e}");
    }
    // Rollback retakes steps from a copy: a method with memory is refused, fix named.
    let t: toml::Table = "strategy = \"rollback\"".parse().unwrap();
    let with = Decorators {
        recovery: Some(&t),
        ..Decorators::default()
    };
    let Err(e) = build_decorated("generalized-alpha", &p, with) else {
        panic!("rollback over generalized-alpha accepted")
    };
    assert!(e.to_string().contains("reset"), "{e}");
}
