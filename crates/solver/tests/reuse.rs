//! A factorization of the same matrix, bit for bit, as the factor in hand is skipped (the
//! factor it would produce is the same): RATTLE factors K(q_{n+1}) for its velocity step
//! and again for the next step's SHAKE. A changed value refactors.

use driftlab_solver::{KktBackend, KktOptions, KktSolver};

mod common;
use common::chain;

#[test]
fn an_identical_matrix_reuses_its_factor_and_a_changed_one_does_not() {
    for backend in [KktBackend::SparseLdlt, KktBackend::DenseLu] {
        let n = 6;
        let p = chain(n);
        let opts = KktOptions {
            backend,
            ..KktOptions::default()
        };
        let mut kkt = KktSolver::new(&p, opts).expect("solver");
        let mass: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        let jac: Vec<f64> = (0..n - 1).flat_map(|_| [1.0, -1.0]).collect();
        let rhs: Vec<f64> = (0..2 * n - 1).map(|i| (i as f64).sin()).collect();
        kkt.factorize(&mass, &jac, None).expect("factor");
        let mut x1 = rhs.clone();
        kkt.solve(&mut x1).expect("solve");
        kkt.factorize(&mass, &jac, None).expect("same matrix");
        let mut x2 = rhs.clone();
        kkt.solve(&mut x2).expect("solve");
        let s = kkt.stats();
        assert_eq!(
            (s.factorizations, s.reused_factorizations),
            (1, 1),
            "{backend:?}"
        );
        assert!(x1.iter().zip(&x2).all(|(a, b)| a.to_bits() == b.to_bits()));
        let mut changed = mass.clone();
        changed[3] = f64::from_bits(changed[3].to_bits() + 1);
        kkt.factorize(&changed, &jac, None).expect("changed matrix");
        assert_eq!(
            kkt.stats().factorizations,
            2,
            "{backend:?}: one ulp refactors"
        );
    }
}
