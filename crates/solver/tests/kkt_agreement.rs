//! The sparse LDLᵀ KKT solve agrees with the dense LU oracle to 1e-12 relative on random
//! SPD `M` and full-row-rank `Φ_q` (issue 2, solver acceptance test).

#[path = "common/rng.rs"]
mod rng;
use driftlab_solver::{KktBackend, KktOptions, KktPattern, KktSolver, SolverError};
use proptest::prelude::*;

/// A random KKT instance: SPD `A` (diagonally dominant, random sparse lower part) and `B`
/// whose leading `m × m` block is row-diagonally dominant (hence full row rank).
#[derive(Debug, Clone)]
struct Instance {
    pattern: KktPattern,
    a: Vec<f64>,
    b: Vec<f64>,
    rhs: Vec<f64>,
}

fn instance() -> impl Strategy<Value = Instance> {
    (2usize..40, 0.0f64..1.0, any::<u64>()).prop_map(|(n, mfrac, seed)| {
        let m = ((n as f64 * 0.6 * mfrac) as usize).clamp(1, n - 1);
        let mut rnd = rng::uniform(seed);
        let mut a_lower = Vec::new();
        let mut a = Vec::new();
        let mut row_sum = vec![0.0; n];
        for i in 0..n {
            for j in 0..i {
                if rnd() < 0.2 {
                    let v = rnd() * 2.0 - 1.0;
                    a_lower.push((i, j));
                    a.push(v);
                    row_sum[i] += v.abs();
                    row_sum[j] += v.abs();
                }
            }
        }
        for i in 0..n {
            a_lower.push((i, i));
            a.push(row_sum[i] + 0.1 + 10.0 * rnd());
        }
        let mut bp = Vec::new();
        let mut b = Vec::new();
        for r in 0..m {
            let mut off = 0.0;
            for c in 0..n {
                if c != r && rnd() < 0.3 {
                    let v = rnd() * 2.0 - 1.0;
                    if c < m {
                        off += v.abs();
                    }
                    bp.push((r, c));
                    b.push(v);
                }
            }
            bp.push((r, r));
            b.push((off + 0.5 + rnd()) * if rnd() < 0.5 { -1.0 } else { 1.0 });
        }
        let rhs = (0..n + m).map(|_| rnd() * 2.0 - 1.0).collect();
        Instance {
            pattern: KktPattern {
                n,
                m,
                a_lower,
                b: bp,
            },
            a,
            b,
            rhs,
        }
    })
}

fn solve(inst: &Instance, backend: KktBackend) -> Result<Vec<f64>, SolverError> {
    let mut k = KktSolver::new(
        &inst.pattern,
        KktOptions {
            backend,
            ..Default::default()
        },
    )?;
    k.factorize(&inst.a, &inst.b, None)?;
    let mut x = inst.rhs.clone();
    k.solve(&mut x)?;
    Ok(x)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn sparse_ldlt_matches_dense_lu(inst in instance()) {
        let xs = solve(&inst, KktBackend::SparseLdlt).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let xd = solve(&inst, KktBackend::DenseLu).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let scale = xd.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        let diff = xs.iter().zip(&xd).fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
        prop_assert!(diff <= 1e-12 * scale, "relative difference {:e}", diff / scale);
    }
}

/// The instance with `A`'s off-diagonal entries dropped (still SPD: its diagonal
/// dominated the dropped entries), as the Schur route needs a block-diagonal `A`.
fn diagonal(mut inst: Instance) -> Instance {
    let keep: Vec<bool> = inst.pattern.a_lower.iter().map(|(i, j)| i == j).collect();
    let mut k = keep.iter();
    inst.a.retain(|_| *k.next().unwrap_or(&false));
    inst.pattern.a_lower.retain(|(i, j)| i == j);
    inst
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// The Schur-complement (Delassus) route agrees with the dense LU oracle as the
    /// saddle-point LDLᵀ does (seed 001 §3.2.5).
    #[test]
    fn schur_complement_matches_dense_lu(inst in instance().prop_map(diagonal)) {
        let xs = solve(&inst, KktBackend::Schur).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let xd = solve(&inst, KktBackend::DenseLu).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let scale = xd.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        let diff = xs.iter().zip(&xd).fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
        prop_assert!(diff <= 1e-12 * scale, "relative difference {:e}", diff / scale);
    }
}

#[test]
fn refactorization_reuses_the_symbolic_analysis() -> Result<(), SolverError> {
    let pattern = KktPattern {
        n: 2,
        m: 1,
        a_lower: vec![(0, 0), (1, 1)],
        b: vec![(0, 0), (0, 1)],
    };
    let sparse = KktOptions {
        backend: KktBackend::SparseLdlt,
        ..KktOptions::default()
    };
    let mut k = KktSolver::new(&pattern, sparse)?;
    for step in 0..5 {
        let x = 1.0 + step as f64;
        k.factorize(&[2.0, 2.0], &[2.0 * x, 1.0], None)?;
        let mut rhs = vec![0.0, -19.62, -3.0];
        k.solve(&mut rhs)?;
        // Check the residual of the exact system.
        let (a0, a1, l) = (rhs[0], rhs[1], rhs[2]);
        assert!((2.0 * a0 + 2.0 * x * l).abs() < 1e-12);
        assert!((2.0 * a1 + l + 19.62).abs() < 1e-12);
        assert!((2.0 * x * a0 + a1 + 3.0).abs() < 1e-12);
    }
    let s = k.stats();
    assert_eq!(
        (s.symbolic_analyses, s.factorizations, s.solves >= 5),
        (1, 5, true)
    );
    Ok(())
}

#[test]
fn redundant_constraints_are_reported_not_hidden() -> Result<(), SolverError> {
    // Two identical rows of Φ_q: K is singular; the solve must fail with its residual.
    let pattern = KktPattern {
        n: 2,
        m: 2,
        a_lower: vec![(0, 0), (1, 1)],
        b: vec![(0, 0), (0, 1), (1, 0), (1, 1)],
    };
    // The sparse path factors the shifted matrix; its refined solve fails with the residual.
    let sparse = KktOptions {
        backend: KktBackend::SparseLdlt,
        ..KktOptions::default()
    };
    let mut k = KktSolver::new(&pattern, sparse)?;
    k.factorize(&[1.0, 1.0], &[1.0, 2.0, 1.0, 2.0], None)?;
    let mut rhs = vec![1.0, 0.0, 1.0, 0.5];
    match k.solve(&mut rhs) {
        Err(SolverError::Inaccurate {
            residual, accept, ..
        }) => assert!(residual > accept),
        other => panic!("expected an Inaccurate error, got {other:?}"),
    }
    // The dense path (the default at this size) factors the exact matrix: a zero pivot.
    let mut k = KktSolver::new(&pattern, KktOptions::default())?;
    match k.factorize(&[1.0, 1.0], &[1.0, 2.0, 1.0, 2.0], None) {
        Err(SolverError::Factorization(msg)) => assert!(msg.contains("singular"), "{msg}"),
        other => panic!("expected a singular factorization, got {other:?}"),
    }
    Ok(())
}

/// `Auto` factors densely up to `DENSE_MAX_DIM` unknowns (no symbolic analysis) and
/// sparsely above, and both paths agree on a chain-like system to round-off.
#[test]
fn auto_chooses_by_size_and_both_paths_agree() -> Result<(), SolverError> {
    for links in [2usize, 20] {
        // Planar chain pattern: n = 2·links positions, m = links rods, M = I.
        let (n, m) = (2 * links, links);
        let pattern = KktPattern {
            n,
            m,
            a_lower: (0..n).map(|i| (i, i)).collect(),
            b: (0..m)
                .flat_map(|r| {
                    let cols = if r == 0 {
                        vec![0, 1]
                    } else {
                        vec![2 * r - 2, 2 * r - 1, 2 * r, 2 * r + 1]
                    };
                    cols.into_iter().map(move |c| (r, c))
                })
                .collect(),
        };
        let b_vals: Vec<f64> = (0..pattern.b.len()).map(|k| 1.0 + 0.1 * k as f64).collect();
        let a_vals = vec![1.0; n];
        let rhs: Vec<f64> = (0..n + m).map(|i| (i as f64).sin()).collect();
        let mut xs = Vec::new();
        for backend in [
            KktBackend::Auto,
            KktBackend::SparseLdlt,
            KktBackend::DenseLu,
        ] {
            let opts = KktOptions {
                backend,
                ..KktOptions::default()
            };
            let mut k = KktSolver::new(&pattern, opts)?;
            k.factorize(&a_vals, &b_vals, None)?;
            let mut x = rhs.clone();
            k.solve(&mut x)?;
            if backend == KktBackend::Auto {
                let dense = n + m <= driftlab_solver::DENSE_MAX_DIM;
                assert_eq!(
                    k.stats().symbolic_analyses,
                    usize::from(!dense),
                    "n + m = {}",
                    n + m
                );
            }
            xs.push(x);
        }
        for x in &xs[1..] {
            let diff = x
                .iter()
                .zip(&xs[0])
                .fold(0.0_f64, |d, (a, b)| d.max((a - b).abs()));
            assert!(
                diff < 1e-10,
                "paths differ by {diff:e} at n + m = {}",
                n + m
            );
        }
    }
    Ok(())
}

#[test]
fn non_finite_solutions_are_named_not_reported_as_zero_residual() -> Result<(), SolverError> {
    // The residual norms skip NaN (f64::max), so a non-finite solution once read
    // "relative residual 0 after 0 refinement steps"; it must name the component instead.
    // K = [[1e-300, 0, 0], [0, 1, 1], [0, 1, 0]] is regular, but x₀ = b₀ / 1e-300
    // overflows.
    let pattern = KktPattern {
        n: 2,
        m: 1,
        a_lower: vec![(0, 0), (1, 1)],
        b: vec![(0, 1)],
    };
    let mut k = KktSolver::new(&pattern, KktOptions::default())?;
    k.factorize(&[1e-300, 1.0], &[1.0], None)?;
    let mut rhs = vec![1e10, 0.0, 0.0];
    match k.solve(&mut rhs) {
        Err(SolverError::NonFiniteSolution { index, value }) => {
            assert_eq!(index, 0);
            assert!(!value.is_finite());
        }
        other => panic!("expected a NonFiniteSolution error, got {other:?}"),
    }
    // A right-hand side that is already non-finite is the caller's divergence, named as
    // such (component and value), not blamed on the matrix.
    k.factorize(&[1.0, 1.0], &[1.0], None)?;
    let mut rhs = vec![1.0, f64::NAN, 0.0];
    match k.solve(&mut rhs) {
        Err(SolverError::NonFiniteRhs { index, value }) => {
            assert_eq!(index, 1);
            assert!(value.is_nan());
        }
        other => panic!("expected a NonFiniteRhs error, got {other:?}"),
    }
    Ok(())
}
