//! The sparse backend factors `K` itself first and keeps that factor when faer
//! regularizes no pivot; a matrix with a zero pivot (a repeated constraint row) falls
//! back to the shifted, quasi-definite factorization, and both attempts are counted.

use driftlab_solver::{KktBackend, KktOptions, KktPattern, KktSolver};

mod common;
use common::chain;

fn sparse() -> KktOptions {
    KktOptions {
        backend: KktBackend::SparseLdlt,
        ..KktOptions::default()
    }
}

#[test]
fn a_well_posed_chain_keeps_the_unshifted_factor_and_solves_to_round_off() {
    let n = 200;
    let mut kkt = KktSolver::new(&chain(n), sparse()).expect("solver");
    let mass: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64).collect();
    let jac: Vec<f64> = (0..n - 1).flat_map(|_| [1.0, -1.0]).collect();
    kkt.factorize(&mass, &jac, None).expect("factor");
    assert_eq!(
        kkt.stats().factorizations,
        1,
        "one factorization, no fallback"
    );
    let b: Vec<f64> = (0..2 * n - 1).map(|i| (i as f64 * 0.37).sin()).collect();
    let mut x = b.clone();
    let rel = kkt.solve(&mut x).expect("solve");
    // The exact factor: the relative residual at the rounding level of the product
    // (at most 3 entries per row here: 3ε) after at most one refinement step.
    assert!(rel <= 3.0 * f64::EPSILON, "relative residual {rel:e}");
    assert!(kkt.stats().refinement_steps <= 1, "{:?}", kkt.stats());
    let mut kx = vec![0.0; b.len()];
    kkt.mul(&x, &mut kx);
    let err = kx
        .iter()
        .zip(&b)
        .fold(0.0_f64, |m, (a, c)| m.max((a - c).abs()));
    assert!(err <= 1e-12, "‖Kx − b‖∞ = {err:e}");
}

#[test]
fn a_zero_pivot_falls_back_to_the_shifted_factorization_and_backs_off() {
    // Two identical constraint rows: the Schur complement B M⁻¹ Bᵀ is singular, so the
    // unshifted LDLᵀ meets a zero pivot however it is ordered.
    let n = 20;
    let pattern = KktPattern {
        n,
        m: 2,
        a_lower: (0..n).map(|i| (i, i)).collect(),
        b: vec![(0, 0), (0, 1), (1, 0), (1, 1)],
    };
    let mut kkt = KktSolver::new(&pattern, sparse()).expect("solver");
    let mass = vec![2.0; n];
    let jac = vec![1.0, -1.0, 1.0, -1.0];
    kkt.factorize(&mass, &jac, None).expect("shifted factor");
    assert_eq!(
        kkt.stats().factorizations,
        2,
        "the failed attempt and the shifted factorization"
    );
    // The next call waits (back-off of 2): only the shifted factorization runs.
    let mass2 = vec![3.0; n];
    kkt.factorize(&mass2, &jac, None).expect("shifted factor");
    assert_eq!(kkt.stats().factorizations, 3, "{:?}", kkt.stats());
}
