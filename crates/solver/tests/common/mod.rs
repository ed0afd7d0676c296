//! Patterns shared by the solver's integration tests.

use driftlab_solver::KktPattern;

/// A 1-D chain KKT pattern: `A` diagonal of size n, `B` the differences of neighbours.
pub fn chain(n: usize) -> KktPattern {
    KktPattern {
        n,
        m: n - 1,
        a_lower: (0..n).map(|i| (i, i)).collect(),
        b: (0..n - 1).flat_map(|r| [(r, r), (r, r + 1)]).collect(),
    }
}
