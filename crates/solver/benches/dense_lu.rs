//! Dense LU factor + one solve, the in-place [`SmallLu`] / [`SplitComplexLu`] against
//! faer's blocked partial-pivoting LU, real and complex, for growing `n`: the crossover
//! that sets `SMALL_LU_MAX_DIM` and `SMALL_COMPLEX_LU_MAX_DIM` in `driftlab_solver::dense`
//! (Radau IIA's Newton matrices are `3n + m` square: 7 on the pendulum, 27 on Andrews,
//! 88 on the slider crank).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use driftlab_solver::dense::{SmallLu, SplitComplexLu};
use faer::linalg::solvers::Solve;
use faer::{c64, Mat};

/// A diagonally dominant `n × n` matrix (column-major real and imaginary parts) from a
/// fixed sequence.
fn matrix(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut seed = 7u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    (0..n * n)
        .map(|k| {
            let d = if k / n == k % n { n as f64 } else { 0.0 };
            (next() + d, next())
        })
        .unzip()
}

const SIZES: [usize; 9] = [8, 16, 24, 27, 32, 40, 48, 64, 96];

fn real(c: &mut Criterion) {
    let mut g = c.benchmark_group("dense LU factor+solve (f64)");
    for n in SIZES {
        let (a, _) = matrix(n);
        let b: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let mut small = SmallLu::new(n);
        g.bench_with_input(BenchmarkId::new("small-lu", n), &n, |bch, _| {
            bch.iter(|| {
                small.matrix_mut().copy_from_slice(&a);
                small.factor().expect("non-singular");
                let mut x = b.clone();
                small.solve(&mut x);
                x
            })
        });
        g.bench_with_input(BenchmarkId::new("faer", n), &n, |bch, _| {
            bch.iter(|| {
                let lu = Mat::<f64>::from_fn(n, n, |i, j| a[j * n + i]).partial_piv_lu();
                let mut x = Mat::<f64>::from_fn(n, 1, |i, _| b[i]);
                lu.solve_in_place(x.as_mut());
                x
            })
        });
    }
    g.finish();
}

fn complex(c: &mut Criterion) {
    let mut g = c.benchmark_group("dense LU factor+solve (c64)");
    for n in SIZES {
        let (re, im) = matrix(n);
        let b: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let mut small = SplitComplexLu::new(n);
        g.bench_with_input(BenchmarkId::new("split-lu", n), &n, |bch, _| {
            bch.iter(|| {
                let (r, i) = small.matrix_mut();
                r.copy_from_slice(&re);
                i.copy_from_slice(&im);
                small.factor().expect("non-singular");
                let (mut xr, mut xi) = (b.clone(), b.clone());
                small.solve(&mut xr, &mut xi);
                (xr, xi)
            })
        });
        g.bench_with_input(BenchmarkId::new("faer", n), &n, |bch, _| {
            bch.iter(|| {
                let at = |i, j| c64::new(re[j * n + i], im[j * n + i]);
                let lu = Mat::<c64>::from_fn(n, n, at).partial_piv_lu();
                let mut x = Mat::<c64>::from_fn(n, 1, |i, _| c64::new(b[i], b[i]));
                lu.solve_in_place(x.as_mut());
                x
            })
        });
    }
    g.finish();
}

fn bench_dense(c: &mut Criterion) {
    // faer's high-level LU below reads faer's process-wide parallelism; this program is
    // the bench alone, so it sets it to the sequential kernels the workspace calls.
    faer::set_global_parallelism(faer::Par::Seq);
    real(c);
    complex(c);
}

criterion_group!(benches, bench_dense);
criterion_main!(benches);
