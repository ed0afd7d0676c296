//! The Schur-complement (Delassus) multiplier solve against the saddle-point LDLᵀ
//! (issue 14 item 4; seed 001 §3.2.5, which calls the Schur route "更稳定", more stable).
//! With `D = Φ_q M⁻¹ Φ_qᵀ`, `κ(D) = κ(Φ_q M^{-1/2})²`: the Schur route squares the
//! condition of the constraint Jacobian, which the saddle-point factorization never forms
//! (Benzi, Golub & Liesen, "Numerical solution of saddle point problems", Acta Numerica
//! 14, 2005): at a rank-deficient Φ_q it has no reason to be more stable. Measured: where
//! one route fails the other fails too (the Schur route earlier), and where both run they
//! agree to round-off.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{drive, MetricsObserver, Observer, RunStatus, Schedule, SummaryMetrics};
use driftlab_methods::build;
use driftlab_problems::build as problem;

fn table(s: &str) -> toml::Table {
    s.parse().expect("valid toml")
}

/// Baumgarte on `pid` to `t_end`: the metrics, or the failure time and message.
fn run(
    pid: &str, pparams: &str, kkt: &str, tikhonov: f64, t_end: f64,
) -> Result<SummaryMetrics, (f64, String)> {
    let p = problem(pid, &table(pparams)).unwrap();
    let params = format!("xi = 1.0\nomega_n = 10.0\ntikhonov = {tikhonov:e}\nkkt = \"{kkt}\"");
    let mut m = build("baumgarte", &table(&params), None).unwrap();
    let mut obs = MetricsObserver::new(0);
    let out = drive(
        p.as_system(),
        m.as_mut(),
        &Schedule::fixed(2e-3, t_end),
        &mut [&mut obs as &mut dyn Observer],
    );
    match out.status {
        RunStatus::Ok => Ok(obs.summary),
        RunStatus::Failed { t, error } => Err((t, error.to_string())),
    }
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
}

#[test]
fn bricard_fails_on_both_routes_without_regularization_and_both_agree_with_it() {
    for kkt in ["sparse-ldlt", "schur"] {
        let (t, msg) = run("bricard", "", kkt, 0.0, 1.0).expect_err("rank 23 of 24 fails");
        println!("{kkt}: fails at t = {t}: {msg}");
        assert!(t < 0.1, "{kkt} failed only at t = {t}");
        assert!(msg.contains("KKT solve inaccurate"), "{kkt}: {msg}");
    }
    let s = run("bricard", "", "sparse-ldlt", 1e-8, 1.0).unwrap();
    let d = run("bricard", "", "schur", 1e-8, 1.0).unwrap();
    for (name, a, b) in [
        ("‖Φ‖", s.max_pos_residual, d.max_pos_residual),
        ("‖Φ_q v‖", s.max_vel_residual, d.max_vel_residual),
        ("energy", s.max_energy_rel_error, d.max_energy_rel_error),
    ] {
        assert!(rel(a, b) <= 1e-8, "{name}: LDLᵀ {a:e} vs Schur {b:e}");
    }
}

/// IFToMM A02 with N = 1 passes its dead points (Φ_q loses rank there) every half
/// period; over 10 s both routes run and give the same trajectory.
#[test]
fn the_four_bar_through_its_singular_positions_gives_the_same_run_on_both_routes() {
    let s = run("n-four-bar", "n = 1", "sparse-ldlt", 0.0, 10.0).unwrap();
    let d = run("n-four-bar", "n = 1", "schur", 0.0, 10.0).unwrap();
    println!("LDLᵀ {s:?}\nSchur {d:?}");
    assert!(rel(s.max_pos_residual, d.max_pos_residual) <= 1e-8);
    assert!(rel(s.max_energy_rel_error, d.max_energy_rel_error) <= 1e-8);
    assert!(rel(s.max_acc_residual, d.max_acc_residual) <= 1e-6);
}
