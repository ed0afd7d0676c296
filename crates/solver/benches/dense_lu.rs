//! Dense LU factor + one solve, the in-place [`SmallLu`] against faer's blocked
//! partial-pivoting LU, real and complex, for growing `n`: the crossover that sets
//! `SMALL_LU_MAX_DIM` and `SMALL_COMPLEX_LU_MAX_DIM` in `driftlab_solver::dense` (Radau IIA's Newton matrices are
//! `3n + m` square: 7 on the pendulum, 27 on Andrews, 88 on the slider crank).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use driftlab_solver::dense::{LuScalar, SmallLu};
use faer::linalg::solvers::Solve;
use faer::{c64, Mat};

/// A diagonally dominant `n × n` matrix (column-major entries) from a fixed sequence.
fn matrix<T: LuScalar>(n: usize, entry: impl Fn(f64, f64) -> T) -> Vec<T> {
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
            entry(next() + d, next())
        })
        .collect()
}

fn run<T: LuScalar + faer::traits::ComplexField>(
    c: &mut Criterion, name: &str, entry: impl Fn(f64, f64) -> T + Copy,
) {
    let mut g = c.benchmark_group(format!("dense LU factor+solve ({name})"));
    for n in [8usize, 16, 24, 32, 40, 48, 64, 96] {
        let a = matrix(n, entry);
        let b: Vec<T> = (0..n).map(|i| entry(i as f64, 0.5)).collect();
        let mut small = SmallLu::<T>::new(n);
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
                let m = Mat::<T>::from_fn(n, n, |i, j| a[j * n + i]);
                let lu = m.partial_piv_lu();
                let mut x = Mat::<T>::from_fn(n, 1, |i, _| b[i]);
                lu.solve_in_place(x.as_mut());
                x
            })
        });
    }
    g.finish();
}

fn bench_dense(c: &mut Criterion) {
    driftlab_solver::sequential_dense_kernels();
    run(c, "f64", |re, _| re);
    run(c, "c64", c64::new);
}

criterion_group!(benches, bench_dense);
criterion_main!(benches);
