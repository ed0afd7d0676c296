//! Numerical rank of Φ_q on the redundant and singular mechanisms of the catalog (issue 4):
//! Bricard's 24 rows have rank 23 everywhere (Grübler 0 DOF, actual 1); the N-four-bar's
//! 2N + 1 rows have full rank upright and rank N + 1 when the rods are horizontal; the
//! spatial double pendulum has full rank.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::MechanicalSystem;
use driftlab_problems::{build, Problem};
use driftlab_solver::numerical_rank;

fn mech(id: &str, params: &str) -> Box<dyn MechanicalSystem> {
    match build(id, &params.parse().unwrap()).unwrap() {
        Problem::Mechanical(s) => s,
        _ => panic!("{id} is not mechanical"),
    }
}

fn rank_at(s: &dyn MechanicalSystem, q: &[f64]) -> (usize, usize) {
    let jp = s.jacobian_pattern();
    let mut jv = vec![0.0; jp.nnz()];
    s.jacobian(0.0, q, &mut jv);
    let d = s.dims();
    let r = numerical_rank(d.m, d.n, &jp.entries, &jv).unwrap();
    (r.rank, d.m)
}

#[test]
fn bricard_has_one_redundant_row() {
    let s = mech("bricard", "");
    let q0 = s.initial_state().q;
    assert_eq!(rank_at(s.as_ref(), &q0), (23, 24));
    let d = s.dims();
    // Mobility = n − rank = 24 − 23 = 1, although rows = coordinates (Grübler: 0).
    assert_eq!(d.n, 24);
}

#[test]
fn n_four_bar_loses_rank_when_horizontal() {
    let n = 3;
    let s = mech("n-four-bar", &format!("n = {n}"));
    let q0 = s.initial_state().q;
    assert_eq!(rank_at(s.as_ref(), &q0), (2 * n + 1, 2 * n + 1));
    // All rods turned to the horizontal: B_i = A_i + (ℓ, 0).
    let flat: Vec<f64> = (0..=n).flat_map(|i| [(i + 1) as f64, 0.0]).collect();
    let mut phi = vec![0.0; 2 * n + 1];
    s.constraints(0.0, &flat, &mut phi);
    assert!(
        phi.iter().all(|x| x.abs() < 1e-15),
        "horizontal position is assembled"
    );
    assert_eq!(rank_at(s.as_ref(), &flat), (n + 1, 2 * n + 1));
}

#[test]
fn spatial_double_pendulum_has_full_rank_and_four_dof() {
    let s = mech("spatial-double-pendulum", "");
    let q0 = s.initial_state().q;
    let (r, m) = rank_at(s.as_ref(), &q0);
    assert_eq!((r, m), (11, 11));
    assert_eq!(s.dims().n - r, 4);
}

/// Seed 001 pitfall 2 — redundant rows detected **and removed** (issue 14 item 8):
/// Bricard with `redundant = "remove"` keeps 23 independent rows of full rank; the
/// unregularized methods that fail on the 24 rows (RATTLE, Taylor + projection; see the
/// `bricard` experiment) then run, every one of the 24 original rows stays at round-off
/// along the run (the removed row is implied by the kept ones), and the motion agrees
/// with generalized-α on the full 24 rows (which tolerates the rank deficiency).
#[test]
fn bricard_with_its_redundant_row_removed_runs_where_the_full_system_fails() {
    use driftlab_core::{drive, MetricsObserver, Observer, RunStatus, Schedule, State};
    let full = mech("bricard", "");
    let reduced = mech("bricard", "redundant = \"remove\"");
    assert_eq!(reduced.dims().m, 23);
    let q0 = reduced.initial_state().q;
    assert_eq!(rank_at(reduced.as_ref(), &q0), (23, 23));
    let run = |sys: &dyn MechanicalSystem, id: &str, params: &str, proj: Option<&str>| {
        let mut m = driftlab_methods::build(
            id,
            &params.parse().unwrap(),
            proj.map(|p| p.parse().unwrap()).as_ref(),
        )
        .unwrap();
        let mut obs = MetricsObserver::new(0);
        let mut states = driftlab_core::TrajectoryRecorder::new(50);
        let out = drive(
            driftlab_core::SystemRef::Mechanical(sys),
            m.as_mut(),
            &Schedule::fixed(2e-3, 2.0),
            &mut [&mut obs as &mut dyn Observer, &mut states],
        );
        let traj: Vec<State> = states.points.into_iter().map(|(s, _)| s).collect();
        (out.status, obs.summary, traj)
    };
    // The full system: RATTLE fails at once (rank 23 of 24).
    let (status, _, _) = run(full.as_ref(), "rattle", "", None);
    assert!(matches!(status, RunStatus::Failed { .. }), "{status:?}");
    let full_rows = |y: &State| {
        let mut phi = vec![0.0; 24];
        full.constraints(y.t, &y.q, &mut phi);
        phi.iter().fold(0.0_f64, |m, x| m.max(x.abs()))
    };
    let (ref_status, _, reference) = run(full.as_ref(), "generalized-alpha", "rho_inf = 1.0", None);
    assert_eq!(ref_status, RunStatus::Ok);
    for (id, proj) in [("rattle", None), ("taylor", Some("tol = 1e-12"))] {
        let (status, summary, traj) = run(reduced.as_ref(), id, "", proj);
        assert_eq!(status, RunStatus::Ok, "{id} on the reduced Bricard");
        let worst = traj.iter().map(full_rows).fold(0.0_f64, f64::max);
        println!(
            "{id}: max over 24 rows {worst:.2e}, energy {:.2e}",
            summary.max_energy_rel_error
        );
        assert!(worst <= 1e-10, "{id}: a removed row drifted to {worst:e}");
        let dq = traj
            .iter()
            .zip(&reference)
            .map(|(a, b)| {
                a.q.iter()
                    .zip(&b.q)
                    .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs()))
            })
            .fold(0.0_f64, f64::max);
        println!("{id}: max |q − q_generalized-α| = {dq:.2e}");
        assert!(dq <= 1e-2, "{id} departs from generalized-α by {dq:e}");
    }
}

/// Cassie's SDF (issue 28): each plantar four-bar is planar and closed by a ball joint, so
/// its out-of-plane row (world y at the drawn pose) is redundant in the design. The left
/// one is redundant to round-off; the right one survives at σ ≈ 2.3e-12 because the file's
/// 5-digit angles tilt the crank axis by 7.4e-8 rad (measured by
/// `scripts/pinocchio_cassie.py --analyse`). `redundant_tol = 1e-5` drops both: 10 rows of
/// full rank, which RATTLE integrates (before: its Newton stalled at 2e-9); the dropped
/// rows stay at the size of the file's rounding times the motion.
#[test]
fn cassie_drops_its_two_plantar_out_of_plane_rows_above_the_files_rounding() {
    use driftlab_core::{drive, MetricsObserver, Observer, RunStatus, Schedule, State};
    let full = mech("model", "robot = \"cassie\"");
    let q0 = full.initial_state().q;
    assert_eq!(rank_at(full.as_ref(), &q0), (11, 12));
    let reduced = mech(
        "model",
        "robot = \"cassie\"\nredundant = \"remove\"\nredundant_tol = 1e-5",
    );
    assert_eq!(rank_at(reduced.as_ref(), &q0), (10, 10));
    let mut method = driftlab_methods::build("rattle", &toml::Table::new(), None).unwrap();
    let mut obs = MetricsObserver::new(0);
    let mut states = driftlab_core::TrajectoryRecorder::new(20);
    let out = drive(
        driftlab_core::SystemRef::Mechanical(reduced.as_ref()),
        method.as_mut(),
        &Schedule::fixed(1e-3, 0.5),
        &mut [&mut obs as &mut dyn Observer, &mut states],
    );
    assert_eq!(out.status, RunStatus::Ok);
    assert!(
        obs.summary.max_pos_residual <= 1e-12,
        "{:e}",
        obs.summary.max_pos_residual
    );
    let all_rows = |y: &State| {
        let mut phi = vec![0.0; 12];
        full.constraints(y.t, &y.q, &mut phi);
        phi.iter().fold(0.0_f64, |m, x| m.max(x.abs()))
    };
    let worst = states
        .points
        .iter()
        .map(|(s, _)| all_rows(s))
        .fold(0.0_f64, f64::max);
    println!("Cassie, RATTLE h = 1e-3 to 0.5 s: max over the 12 rows {worst:.2e}");
    // 7.4e-8 rad of tilt times the crank's motion (≤ 1 rad, 0.18 m lever): ≤ 1e-7 m.
    assert!(worst <= 1e-7, "a dropped row drifted to {worst:e}");
}
