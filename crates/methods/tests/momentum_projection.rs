//! Issue 32 W20: the projection with `momentum = true` adds the conserved momenta
//! `A(q) v = p₀` to its velocity step (`decorators::projection::momentum`). On the
//! torque-free body in natural coordinates Baumgarte's own step drifts L by O(h); with the
//! rows L stays at round-off, and since T = ½Lᵀ I(q)⁻¹ L the energy error falls to the
//! attitude's. A problem without momenta is refused, naming the option.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;
use common::Case;
use driftlab_core::{RunError, RunStatus};

const BAUMGARTE: &str = "xi = 1.0\nomega_n = 20.0";

#[test]
fn the_momentum_rows_keep_angular_momentum_to_round_off() {
    let run = |projection: &str| {
        Case::new("natural-body", "baumgarte", 1e-2, 10.0)
            .params(BAUMGARTE)
            .projection(projection)
            .ok()
    };
    let standard = run("tol = 1e-12");
    let kept = run("tol = 1e-12\nmomentum = true");
    println!(
        "L error {:.1e} → {:.1e}; energy error {:.1e} → {:.1e}",
        standard.max_momentum_error,
        kept.max_momentum_error,
        standard.max_energy_rel_error,
        kept.max_energy_rel_error
    );
    assert!(
        standard.max_momentum_error >= 1e-2,
        "{:e}",
        standard.max_momentum_error
    );
    // Round-off: |L| ≈ 1, a handful of dense solves of size 9.
    assert!(
        kept.max_momentum_error <= 1e-13,
        "{:e}",
        kept.max_momentum_error
    );
    assert!(kept.max_pos_residual <= 1e-11 && kept.max_vel_residual <= 1e-12);
    assert!(
        kept.max_energy_rel_error <= 1e-4 * standard.max_energy_rel_error,
        "{:e} vs {:e}",
        kept.max_energy_rel_error,
        standard.max_energy_rel_error
    );
}

#[test]
fn a_problem_without_momenta_is_refused_naming_the_option() {
    let r = Case::new("pendulum", "taylor", 1e-2, 1.0)
        .projection("momentum = true")
        .run();
    let RunStatus::Failed {
        error: RunError::Setup(e),
        ..
    } = r.status
    else {
        panic!("ran: {:?}", r.status);
    };
    let text = e.to_string();
    assert!(
        text.contains("momentum = true") && text.contains("no conserved momenta"),
        "{text}"
    );
}
