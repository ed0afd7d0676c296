//! The flexible slider crank (IVP Test Set `crank`, issue 4) against its published
//! reference at t = 0.1: which of the two published references our converged runs agree
//! with, generalized-α's order once the stiff axial mode is resolved, and what the tangent
//! stiffness in the Newton matrix buys (numbers from `experiments/slider-crank-genalpha`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{drive, Observer, RunOutcome, RunStatus, Schedule};
use driftlab_methods::build;
use driftlab_problems::build as problem;

/// Run `method` on the slider crank (problem parameters `pp`) with step `h` to t = 0.1 and
/// return the outcome with its scd against the chosen reference.
fn run(method: &str, mp: &str, projection: bool, pp: &str, h: f64) -> (RunOutcome, f64) {
    let p = problem("slider-crank", &pp.parse().unwrap()).unwrap();
    let proj: Option<toml::Table> = projection.then(|| "tol = 1e-12".parse().unwrap());
    let mut m = build(method, &mp.parse().unwrap(), proj.as_ref()).unwrap();
    let out = drive(
        p.as_system(),
        m.as_mut(),
        &Schedule::fixed(h, 0.1),
        &mut [] as &mut [&mut dyn Observer],
    );
    let r = p
        .as_system()
        .reference()
        .expect("reference for the default start");
    let st = &out.final_state;
    let scd = if (st.t - r.t).abs() < 1e-12 {
        r.scd(&st.q, &st.v, &st.lambda)
    } else {
        f64::NAN // failed before the reference time
    };
    (out, scd)
}

/// Projected Gauss (order 4) at h = 2e-6 agrees with the Test Set reference to about 8
/// digits (measured 7.83 at h = 2.2e-6 and 8.46 at 1e-6 — the ceiling there is the 1.2e-9
/// relative offset in x₃ from the index-2 Test Set start, see the problem's doc), while the
/// same state is 5.4 digits from the older MEBDFI-driver reference, whose elastic
/// coordinates are off by up to 3.6e-6 relative: that one is not the right reference.
#[test]
fn projected_gauss_reproduces_the_test_set_reference_not_the_older_one() {
    let (out, scd) = run("gauss", "stages = 2", true, "", 2e-6);
    assert!(matches!(out.status, RunStatus::Ok), "{:?}", out.status);
    assert!(scd >= 7.5, "scd against the Test Set reference {scd}");
    let p = problem(
        "slider-crank",
        &"reference = \"mebdfi-driver\"".parse().unwrap(),
    )
    .unwrap();
    let old = p.as_system().reference().unwrap();
    let st = &out.final_state;
    let scd_old = old.scd(&st.q, &st.v, &st.lambda);
    assert!(
        (5.0..6.0).contains(&scd_old),
        "scd against the MEBDFI-driver reference {scd_old}"
    );
}

/// Generalized-α is second order (Arnold & Brüls 2007, Thm. 2) — visible here only once h
/// resolves the axial mode at ω ≈ 2.5e4 rad/s (h ω ≲ 0.05): from h = 1e-6 to 5e-7 scd
/// rises by 0.595 = 1.98 · log₁₀ 2 (measured; 1.06 per halving at 4e-6 → 2e-6, where the
/// phase error of the undamped axial oscillation still dominates).
#[test]
fn generalized_alpha_is_second_order_once_the_axial_mode_is_resolved() {
    let (_, a) = run("generalized-alpha", "rho_inf = 0.9", false, "", 1e-6);
    let (_, b) = run("generalized-alpha", "rho_inf = 0.9", false, "", 5e-7);
    let order = (b - a) / 2f64.log10();
    assert!(
        (1.8..=2.2).contains(&order),
        "observed order {order} (scd {a} → {b})"
    );
}

/// With the tangent stiffness `K_t = K_q − φ₂'² M_q` in its Newton matrix, generalized-α
/// steps at h = 1e-4 (h ω_max ≈ 2.5) in about 3 iterations per step; without it the Newton
/// iteration cannot contract against the 2.5e4 rad/s axial mode and the first step fails
/// (measured: 30 iterations, residual stuck at 3e-11 > tol 1e-12; at h = 1e-3 a zero
/// pivot). The same holds for implicit Euler (with: 3.9 iterations per step).
#[test]
fn tangent_stiffness_lets_implicit_methods_step_over_the_elastic_modes() {
    for method in ["generalized-alpha", "implicit-euler"] {
        let (with, _) = run(method, "", false, "", 1e-4);
        assert!(
            matches!(with.status, RunStatus::Ok),
            "{method}: {:?}",
            with.status
        );
        let per_step = with.stats.newton_iterations as f64 / with.steps as f64;
        assert!(
            per_step <= 5.0,
            "{method}: {per_step} Newton iterations per step"
        );
        let (without, _) = run(method, "", false, "tangent_stiffness = false", 1e-4);
        assert!(
            matches!(without.status, RunStatus::Failed { .. }),
            "{method} without K_t: {:?}",
            without.status
        );
    }
}

/// Projected Gauss with the stiff stage Newton (J_q = −P M⁻¹K_t in its iteration matrix)
/// steps at h = 5e-4 (h ω_max ≈ 12); without the tangent its kinematic stage iteration
/// diverges there and says so (measured: scd 2.74 at h = 4.7e-4 in the experiment).
#[test]
fn projected_gauss_steps_over_the_elastic_modes_with_the_tangent() {
    let (with, scd) = run("gauss", "stages = 2", true, "", 5e-4);
    assert!(matches!(with.status, RunStatus::Ok), "{:?}", with.status);
    assert!(scd > 2.0, "scd {scd}");
    let (without, _) = run(
        "gauss",
        "stages = 2",
        true,
        "tangent_stiffness = false",
        5e-4,
    );
    match &without.status {
        RunStatus::Failed { error, .. } => assert_eq!(
            error.kind(),
            "stage-iteration-diverged",
            "unexpected failure: {error}"
        ),
        other => panic!("expected the stage iteration to diverge, got {other:?}"),
    }
}
