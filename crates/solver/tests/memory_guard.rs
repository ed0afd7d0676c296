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
    let refused = |pattern: &driftlab_solver::KktPattern, limit: u64| -> String {
        driftlab_core::memory::set_limit(Some(limit));
        let r = KktSolver::new(pattern, opts);
        driftlab_core::memory::set_limit(None);
        match r {
            Err(SolverError::OutOfMemory(e)) => e.to_string(),
            Err(e) => panic!("wrong error: {e}"),
            Ok(_) => String::new(),
        }
    };
    // The pattern's layout is checked before it is built (issue 45: the address space ran
    // out there, below the state's lower bound) …
    let text = refused(&chain(100_000), 10_000);
    assert!(
        text.contains("KKT matrix's pattern") && text.contains("> the limit 9.8 KiB"),
        "{text}"
    );
    // … and the factor after the symbolic analysis, with the pattern it holds meanwhile:
    // the pattern (14.5 MiB) within the limit, the two together above it.
    let text = refused(&chain(100_000), 15 << 20);
    assert!(
        text.contains("LDLᵀ factor") && text.contains("> the limit 15.0 MiB"),
        "{text}"
    );
    assert!(
        KktSolver::new(&chain(100_000), opts).is_ok(),
        "without the limit it builds"
    );
}
