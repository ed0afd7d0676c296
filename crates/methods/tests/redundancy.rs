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
        Problem::SemiExplicit(_) => panic!("{id} is not mechanical"),
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
