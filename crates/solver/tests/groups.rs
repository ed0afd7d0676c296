//! Independent constraint groups (`kkt/split.rs`): with faer threads, a block-diagonal
//! `K` (after ordering) is factored and solved group by group, and the solution agrees
//! with the one solver of the whole matrix to round-off; errors name whole-system
//! indices.

#[path = "common/rng.rs"]
mod rng;
use driftlab_solver::{par_of, KktOptions, KktPattern, KktSolver, SolverError};
use proptest::prelude::*;

/// `groups` chains of `links` bodies each (masses on the diagonal of `A`, rows
/// `x_i − x_{i+1}` scaled by random factors), their unknowns and rows interleaved by the
/// stride `groups` so that no group is a contiguous range; `A`, `B` values and a
/// right-hand side from `seed`.
fn interleaved_chains(
    groups: usize, links: usize, seed: u64,
) -> (KktPattern, Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut rnd = rng::uniform(seed);
    let (n, m) = (groups * links, groups * (links - 1));
    let unknown = |g: usize, i: usize| i * groups + g;
    let row = |g: usize, r: usize| r * groups + g;
    let a_lower: Vec<(usize, usize)> = (0..n).map(|i| (i, i)).collect();
    let a: Vec<f64> = (0..n).map(|_| 0.5 + rnd()).collect();
    let mut b_pattern = Vec::new();
    let mut b = Vec::new();
    for g in 0..groups {
        for r in 0..links - 1 {
            let scale = 0.5 + rnd();
            b_pattern.push((row(g, r), unknown(g, r)));
            b.push(scale);
            b_pattern.push((row(g, r), unknown(g, r + 1)));
            b.push(-scale * (0.5 + rnd()));
        }
    }
    let rhs: Vec<f64> = (0..n + m).map(|_| rnd() * 2.0 - 1.0).collect();
    let pattern = KktPattern {
        n,
        m,
        a_lower,
        b: b_pattern,
    };
    (pattern, a, b, rhs)
}

fn solver(pattern: &KktPattern, threads: usize) -> KktSolver {
    let opts = KktOptions {
        par: par_of(threads),
        ..KktOptions::default()
    };
    KktSolver::new(pattern, opts).expect("solver")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Two threads split `K` (above the dense size, `n + m > 16`) into 2 parts whose solution equals the whole
    /// solve's to 1e-12 relative (both refine to the residual's rounding level).
    #[test]
    fn groups_solve_as_the_whole_matrix_does(groups in 2usize..5, links in 9usize..40, seed in any::<u64>()) {
        let (pattern, a, b, rhs) = interleaved_chains(groups, links, seed);
        let mut whole = solver(&pattern, 1);
        let mut split = solver(&pattern, 2);
        prop_assert_eq!(whole.groups(), 1);
        prop_assert_eq!(split.groups(), 2);
        whole.factorize(&a, &b, None).expect("whole factor");
        split.factorize(&a, &b, None).expect("split factor");
        let (mut x1, mut x2) = (rhs.clone(), rhs.clone());
        whole.solve(&mut x1).expect("whole solve");
        let rel = split.solve(&mut x2).expect("split solve");
        prop_assert!(rel <= 1e-13, "split residual {rel:e}");
        let scale = x1.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        for (i, (u, w)) in x1.iter().zip(&x2).enumerate() {
            prop_assert!((u - w).abs() <= 1e-12 * scale, "x[{i}]: {u} vs {w}");
        }
        // K x reproduces b through the parts' products too.
        let mut kx = vec![0.0; rhs.len()];
        split.mul(&x2, &mut kx);
        for (i, (k, r)) in kx.iter().zip(&rhs).enumerate() {
            prop_assert!((k - r).abs() <= 1e-12 * (1.0 + scale), "(Kx)[{i}] {k} vs b {r}");
        }
        prop_assert_eq!(split.stats().symbolic_analyses, 2);
        // One factorization per part, or two where a part's unshifted attempt met a
        // regularized pivot and the shifted matrix replaced it (both counted, kkt/mod.rs).
        let f = split.stats().factorizations;
        prop_assert!((2..=4).contains(&f), "factorizations {f}");
    }
}

/// One chain does not split; a non-finite right-hand side entry is reported at its index
/// in the whole system, not in its part.
#[test]
fn one_group_stays_whole_and_errors_name_whole_system_indices() {
    let (pattern, a, b, rhs) = interleaved_chains(1, 30, 7);
    assert_eq!(solver(&pattern, 2).groups(), 1);
    let (pattern, a2, b2, mut rhs2) = interleaved_chains(3, 30, 7);
    let _ = (a, b, rhs);
    let mut split = solver(&pattern, 2);
    split.factorize(&a2, &b2, None).expect("factor");
    let index = pattern.n + 3 * 10 + 2; // row 10 of group 2
    rhs2[index] = f64::NAN;
    match split.solve(&mut rhs2) {
        Err(SolverError::NonFiniteRhs { index: i, .. }) => assert_eq!(i, index),
        other => panic!("expected NonFiniteRhs at {index}, got {other:?}"),
    }
}

/// A pattern entry outside its block is refused with the entry named before any
/// splitting (not an index panic, not a silently mis-assembled part).
#[test]
fn entries_outside_their_block_are_refused_at_two_threads() {
    let (mut pattern, ..) = interleaved_chains(2, 10, 3);
    pattern.b.push((pattern.m, 0));
    match KktSolver::new(
        &pattern,
        KktOptions {
            par: par_of(2),
            ..KktOptions::default()
        },
    ) {
        Err(SolverError::Pattern(message)) => assert!(message.contains("B entry"), "{message}"),
        Err(e) => panic!("expected a pattern error, got {e}"),
        Ok(_) => panic!("expected a pattern error, the solver was built"),
    }
    let (mut pattern, ..) = interleaved_chains(2, 10, 3);
    pattern.b.push((0, pattern.n + 1));
    assert!(matches!(
        KktSolver::new(
            &pattern,
            KktOptions {
                par: par_of(2),
                ..KktOptions::default()
            }
        ),
        Err(SolverError::Pattern(_))
    ));
}
