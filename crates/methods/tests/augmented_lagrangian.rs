//! Issue 32 W16: Bayo & Ledesma's augmented Lagrangian (`alf`) runs the Bricard mechanism,
//! whose 24 constraint rows have rank 23 everywhere, where every method that factors the
//! KKT matrix stops at t = 0 (`schur-singular`): its Newton matrix M + (h²/4)αΦ_qᵀΦ_q is
//! positive definite whatever the rank of Φ_q. The run keeps the position level to the
//! iteration's tolerance and the energy to the trapezoidal rule's O(h²) error.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;
use common::Case;
use driftlab_core::{RunError, RunStatus, StepError};

#[test]
fn the_augmented_lagrangian_runs_redundant_constraints_where_the_kkt_matrix_is_singular() {
    let alf = |h: f64| Case::new("bricard", "alf", h, 2.0).ok();
    let (coarse, fine) = (alf(1e-2), alf(5e-3));
    println!(
        "alf on bricard: ‖Φ‖∞ {:.1e}, ‖Φ_q v‖∞ {:.1e}, energy error {:.2e} (h = 1e-2), {:.2e} (h = 5e-3)",
        coarse.max_pos_residual,
        coarse.max_vel_residual,
        coarse.max_energy_rel_error,
        fine.max_energy_rel_error
    );
    assert!(
        coarse.max_pos_residual <= 1e-12,
        "{:e}",
        coarse.max_pos_residual
    );
    assert!(
        coarse.max_vel_residual <= 1e-10,
        "{:e}",
        coarse.max_vel_residual
    );
    // The trapezoidal rule's energy error is second order.
    let order = (coarse.max_energy_rel_error / fine.max_energy_rel_error).log2();
    assert!((order - 2.0).abs() <= 0.2, "energy error order {order}");
    let r = Case::new("bricard", "rattle", 1e-2, 2.0).run();
    let RunStatus::Failed {
        error: RunError::Step(StepError::LinearSolve { t, .. }),
        ..
    } = r.status
    else {
        panic!("RATTLE ran the Bricard mechanism: {:?}", r.status);
    };
    assert!(t <= 0.0, "RATTLE failed at t = {t}, not at the start");
}
