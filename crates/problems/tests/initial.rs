//! User-given starts (issue 14 item 3; seed 001 §3.11 pitfall 5, seed 003): refused with
//! the residual, projected mass-orthogonally onto Φ = 0 and Φ_q v + Φ_t = 0, or accepted
//! as given; index-1 starts solved for z; the consistent derivatives of seed 003.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
#![allow(clippy::float_cmp)] // seed 003's values are exact in binary (1, −1, 0)

use driftlab_core::{ParamError, SystemRef};
use driftlab_problems::initial::{index1_derivatives, index1_residual, mechanical_residuals};
use driftlab_problems::{build, Problem};

fn with(id: &str, params: &str) -> Result<Problem, ParamError> {
    build(id, &params.parse().unwrap())
}

#[test]
fn an_inconsistent_pendulum_start_is_refused_with_its_residuals() {
    // Φ = x² + y² − ℓ² = 1.21 − 1 = 0.21 at q = (1.1, 0); Φ_q v = 2(x u + y w) = 0.
    let e = with("pendulum", "initial = { q = [1.1, 0.0], v = [0.0, 0.5] }")
        .err()
        .expect("refused");
    let msg = e.to_string();
    assert!(msg.contains("‖Φ(t₀, q₀)‖∞ = 2.100e-1"), "{msg}");
    assert!(msg.contains("initial.inconsistent = \"project\""), "{msg}");
    match e {
        ParamError::OutOfRange { field, value, .. } => {
            assert_eq!(field, "initial");
            assert!((value - 0.21).abs() < 1e-14);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn projection_moves_the_start_to_the_nearest_consistent_one() {
    // Equal masses: the mass-orthogonal projection of (1.1, 0) onto the unit circle is
    // (1, 0); v = (0.3, 0.5) loses its radial part: (0, 0.5).
    let p = with(
        "pendulum",
        "initial = { q = [1.1, 0.0], v = [0.3, 0.5], inconsistent = \"project\" }",
    )
    .unwrap();
    let SystemRef::Mechanical(s) = p.as_system() else {
        panic!()
    };
    let y = s.initial_state();
    assert!(
        (y.q[0] - 1.0).abs() < 1e-15 && y.q[1].abs() < 1e-15,
        "{:?}",
        y.q
    );
    assert!(
        y.v[0].abs() < 1e-15 && (y.v[1] - 0.5).abs() < 1e-15,
        "{:?}",
        y.v
    );
    // The start differs from the problem's: no exact solution is claimed any more.
    assert!(s.exact(0.1).is_none());
}

#[test]
fn a_chain_start_off_the_constraints_is_projected_to_round_off() {
    let p = with(
        "planar-chain",
        "links = 5\ninitial = { q = [0.9, 0.1, 1.7, 0.4, 2.6, 0.2, 3.3, 0.6, 4.1, 0.5], v = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], inconsistent = \"project\" }",
    )
    .unwrap();
    let SystemRef::Mechanical(s) = p.as_system() else {
        panic!()
    };
    let (pos, vel) = mechanical_residuals(s, &s.initial_state());
    assert!(
        pos <= 1e-14 && vel <= 1e-14,
        "‖Φ‖ = {pos:e}, ‖Φ_q v‖ = {vel:e}"
    );
}

#[test]
fn a_consistent_start_is_accepted_and_keeps_the_exact_solution_only_if_it_is_the_problems() {
    let p = with(
        "pendulum",
        "theta0_deg = 90.0\ninitial = { q = [1.0, 0.0], v = [0.0, 0.0] }",
    )
    .unwrap();
    let SystemRef::Mechanical(s) = p.as_system() else {
        panic!()
    };
    assert!(
        s.exact(0.1).is_some(),
        "same start as the problem's own: exact kept"
    );
    let p = with("pendulum", "initial = { q = [0.0, -1.0], v = [0.0, 0.0] }").unwrap();
    let SystemRef::Mechanical(s) = p.as_system() else {
        panic!()
    };
    assert!(s.exact(0.1).is_none());
}

#[test]
fn accept_runs_from_the_inconsistent_start_as_given() {
    let p = with(
        "pendulum",
        "initial = { q = [1.1, 0.0], inconsistent = \"accept\" }",
    )
    .unwrap();
    let SystemRef::Mechanical(s) = p.as_system() else {
        panic!()
    };
    let (pos, _) = mechanical_residuals(s, &s.initial_state());
    assert!((pos - 0.21).abs() < 1e-14);
}

#[test]
fn bad_initial_tables_name_the_field() {
    for (params, needle) in [
        ("initial = { q = [1.0] }", "initial.q"),
        ("initial = { q = [1.0, 0.0], w = 1 }", "unknown field `w`"),
        ("initial = { x = [1.0] }", "index-1"),
        ("initial = { q = [1.0, 0.0], tol = -1.0 }", "initial.tol"),
        (
            "initial = { q = [1.0, 0.0], inconsistent = \"fix\" }",
            "refuse",
        ),
    ] {
        let msg = with("pendulum", params).err().expect("refused").to_string();
        assert!(msg.contains(needle), "{params}: {msg}");
    }
}

/// Seed 003: x' = −x + z, 0 = x + z − c, x(0) = 0. z(0) = 0.5 violates g by 0.5 and is
/// refused; projected it becomes z(0) = c = 1, and the consistent derivatives are
/// x'(0) = −0 + 1 = 1, z'(0) = −g_z⁻¹ (g_t + g_x x') = −(0 + 1) = −1.
#[test]
fn seed003_algebraic_start_is_refused_or_solved_and_its_derivatives_are_one_and_minus_one() {
    let msg = with("seed003-dae", "initial = { z = [0.5] }")
        .err()
        .expect("refused")
        .to_string();
    assert!(msg.contains("‖g(t₀, x₀, z₀)‖∞ = 5.000e-1"), "{msg}");
    let p = with(
        "seed003-dae",
        "initial = { z = [0.5], inconsistent = \"project\" }",
    )
    .unwrap();
    let SystemRef::SemiExplicit(s) = p.as_system() else {
        panic!()
    };
    let y = s.initial_state();
    assert_eq!(y.lambda, vec![1.0]);
    assert_eq!(index1_residual(s, &y), 0.0);
    let (xp, zp) = index1_derivatives(s, &y).unwrap();
    assert_eq!((xp[0], zp[0]), (1.0, -1.0));
}
