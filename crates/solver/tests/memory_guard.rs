//! The KKT solver's memory check (issue 12): after the symbolic analysis, a factor and
//! workspace larger than the limit are refused before they are allocated. (Its own test
//! binary: the limit is process-wide.)

use driftlab_solver::{KktBackend, KktOptions, KktSolver, SolverError};

mod common;
use common::chain;

#[test]
fn a_factor_over_the_limit_is_refused_with_its_estimate() {
    let opts = KktOptions {
        backend: KktBackend::SparseLdlt,
        ..KktOptions::default()
    };
    driftlab_core::memory::set_limit(Some(10_000));
    let refused = KktSolver::new(&chain(100_000), opts);
    driftlab_core::memory::set_limit(None);
    match refused {
        Err(SolverError::OutOfMemory(e)) => {
            let text = e.to_string();
            assert!(
                text.contains("LDLᵀ factor") && text.contains("> the limit 9.8 KiB"),
                "{text}"
            );
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a 2·10⁵-unknown factor fit in 10 kB"),
    }
    assert!(
        KktSolver::new(&chain(100_000), opts).is_ok(),
        "without the limit it builds"
    );
}
