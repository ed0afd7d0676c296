//! Small dense systems (index-1 Newton matrices, test oracles) via faer's LU with partial
//! pivoting; pseudo-inverses (faer SVD) and Cholesky for the prioritized method.

use crate::error::SolverError;
use faer::c64;
use faer::linalg::solvers::Solve;
use faer::Mat;
use std::ops::{Add, Div, Mul, Sub};

/// Solve `A x = b` for a dense row-major `n × n` matrix `a`, overwriting `b` with `x`.
/// Fails with [`SolverError::Factorization`] if the result is not finite (singular `A`).
pub fn solve_dense(n: usize, a: &[f64], b: &mut [f64]) -> Result<(), SolverError> {
    DenseLu::factor(n, a)?.solve(b)
}

/// Largest `n` factored by the in-place [`SmallLu`] rather than faer's blocked LU, real
/// matrices: below it faer's dispatch and allocation cost more than the `n³/3` flops.
/// Measured with the `dense LU` criterion bench (`cargo bench -p driftlab-solver`, faer
/// sequential, factor + one solve, medians): small/faer time 0.19 at n = 8, 0.49 at 24,
/// 0.84 at 40, 1.19 at 48, 1.81 at 96.
pub const SMALL_LU_MAX_DIM: usize = 40;

/// The same for complex matrices, whose small LU does not vectorize: small/faer 0.46 at
/// n = 8, 0.72 at 16, 1.03 at 24, 1.14 at 32, 2.8 at 64 (same bench).
pub const SMALL_COMPLEX_LU_MAX_DIM: usize = 16;

/// An LU factorization with partial pivoting of a dense `n × n` matrix, kept to solve
/// several right-hand sides (a simplified-Newton matrix over the iterations of a step):
/// [`SmallLu`] up to [`SMALL_LU_MAX_DIM`], faer's blocked LU above (complex:
/// [`SMALL_COMPLEX_LU_MAX_DIM`]).
pub struct DenseLu {
    n: usize,
    lu: Factor<f64>,
}

/// The two implementations behind [`DenseLu`] and [`DenseComplexLu`].
enum Factor<T: LuScalar> {
    Small(SmallLu<T>),
    Faer(faer::linalg::solvers::PartialPivLu<T>),
}

impl<T: LuScalar + faer::traits::ComplexField> Factor<T> {
    /// Factor the `n × n` matrix with entries `at(i, j)`.
    fn new(n: usize, at: impl Fn(usize, usize) -> T) -> Result<Self, SolverError> {
        if n <= T::SMALL_MAX_DIM {
            let mut lu = SmallLu::new(n);
            let a = lu.matrix_mut();
            for j in 0..n {
                for i in 0..n {
                    a[j * n + i] = at(i, j);
                }
            }
            lu.factor()?;
            Ok(Self::Small(lu))
        } else {
            Ok(Self::Faer(Mat::<T>::from_fn(n, n, at).partial_piv_lu()))
        }
    }

    /// Overwrite `x` with `A⁻¹ x`; [`SolverError::Factorization`] if the result is not
    /// finite (singular `A`).
    fn solve(&self, x: &mut [T]) -> Result<(), SolverError> {
        let n = x.len();
        match self {
            Self::Small(lu) => lu.solve(x),
            Self::Faer(lu) => {
                let mut rhs = Mat::<T>::from_fn(n, 1, |i, _| x[i]);
                lu.solve_in_place(rhs.as_mut());
                for (i, xi) in x.iter_mut().enumerate() {
                    *xi = rhs[(i, 0)];
                }
            }
        }
        match x.iter().position(|v| !v.finite()) {
            None => Ok(()),
            Some(i) => Err(SolverError::Factorization(format!(
                "dense LU of a {n}×{n} matrix gave non-finite x[{i}]: singular matrix"
            ))),
        }
    }
}

impl DenseLu {
    /// Factor the row-major matrix `a`; [`SolverError::Factorization`] if a pivot of the
    /// small path is zero or not finite.
    pub fn factor(n: usize, a: &[f64]) -> Result<Self, SolverError> {
        Ok(Self {
            n,
            lu: Factor::new(n, |i, j| a[i * n + j])?,
        })
    }

    /// Overwrite `b` with `A⁻¹ b`; [`SolverError::Factorization`] if the result is not
    /// finite (singular `A`).
    pub fn solve(&self, b: &mut [f64]) -> Result<(), SolverError> {
        self.lu.solve(&mut b[..self.n])
    }
}

/// An LU factorization with partial pivoting of a dense complex `n × n` matrix given by
/// its real and imaginary parts (row-major): the complex Newton matrix
/// `(α + iβ)/h · B − J` of Radau IIA's transformed stage system (Hairer & Wanner II §IV.8).
pub struct DenseComplexLu {
    lu: Factor<c64>,
    work: std::cell::RefCell<Vec<c64>>,
}

impl DenseComplexLu {
    /// Factor `re + i·im`.
    pub fn factor(n: usize, re: &[f64], im: &[f64]) -> Result<Self, SolverError> {
        Ok(Self {
            lu: Factor::new(n, |i, j| c64::new(re[i * n + j], im[i * n + j]))?,
            work: std::cell::RefCell::new(vec![c64::new(0.0, 0.0); n]),
        })
    }

    /// Overwrite `(b_re, b_im)` with `A⁻¹ (b_re + i b_im)`; [`SolverError::Factorization`]
    /// if the result is not finite (singular `A`).
    pub fn solve(&self, b_re: &mut [f64], b_im: &mut [f64]) -> Result<(), SolverError> {
        let mut x = self.work.borrow_mut();
        for (xi, (r, i)) in x.iter_mut().zip(b_re.iter().zip(b_im.iter())) {
            *xi = c64::new(*r, *i);
        }
        self.lu.solve(&mut x)?;
        for (xi, (r, i)) in x.iter().zip(b_re.iter_mut().zip(b_im.iter_mut())) {
            (*r, *i) = (xi.re, xi.im);
        }
        Ok(())
    }
}

/// Moore–Penrose pseudo-inverse of the dense row-major `rows × cols` matrix `a` by the
/// SVD, singular values below `max(rows, cols) · ε · σ_max` treated as zero (the rank
/// threshold of [`crate::rank`]). Returns the row-major `cols × rows` pseudo-inverse and
/// the numerical rank.
pub fn pseudo_inverse(
    rows: usize, cols: usize, a: &[f64],
) -> Result<(Vec<f64>, usize), SolverError> {
    damped_pseudo_inverse(rows, cols, a, 0.0, 0.0)
}

/// Damped least-squares inverse `Aᵀ(AAᵀ + μ²I)⁻¹ = V diag(σ/(σ² + μ²)) Uᵀ` (Nakamura &
/// Hanafusa 1986; Wampler 1986), dropping singular values below
/// `max(rows, cols) · ε · max(σ_max, scale)`: `scale` is the size of the matrix before any
/// null-space projection, so round-off left in a projected (nearly zero) matrix is not
/// inverted. `μ = 0`, `scale = 0` gives the Moore–Penrose pseudo-inverse.
pub fn damped_pseudo_inverse(
    rows: usize, cols: usize, a: &[f64], mu: f64, scale: f64,
) -> Result<(Vec<f64>, usize), SolverError> {
    let m = Mat::<f64>::from_fn(rows, cols, |i, j| a[i * cols + j]);
    let svd = m.thin_svd().map_err(|e| {
        SolverError::Factorization(format!("SVD of a {rows}×{cols} matrix failed: {e:?}"))
    })?;
    let (u, v) = (svd.U(), svd.V());
    let sv = svd.S().column_vector();
    let k = rows.min(cols);
    let smax = if k > 0 { sv[0] } else { 0.0 };
    let tol = rows.max(cols) as f64 * f64::EPSILON * smax.max(scale);
    let mut out = vec![0.0; cols * rows];
    let mut rank = 0;
    for l in 0..k {
        let s = sv[l];
        if s <= tol || s == 0.0 {
            continue;
        }
        rank += 1;
        let inv = s / (s * s + mu * mu);
        for i in 0..cols {
            let vi = v[(i, l)] * inv;
            for j in 0..rows {
                out[i * rows + j] += vi * u[(j, l)];
            }
        }
    }
    Ok((out, rank))
}

/// Lower Cholesky factor `L` (row-major, `M = L Lᵀ`) of a dense SPD matrix.
pub fn cholesky(n: usize, a: &[f64]) -> Result<Vec<f64>, SolverError> {
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= l[j * n + k] * l[j * n + k];
        }
        if d.is_nan() || d <= 0.0 {
            return Err(SolverError::Factorization(format!(
                "Cholesky of a {n}×{n} matrix: pivot {j} is {d:e} (not positive definite)"
            )));
        }
        let dj = d.sqrt();
        l[j * n + j] = dj;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = s / dj;
        }
    }
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_pivoting_system() -> Result<(), SolverError> {
        // Needs a row swap: the (0,0) entry is zero.
        let a = [0.0, 1.0, 2.0, 1.0];
        let mut b = [1.0, 4.0];
        solve_dense(2, &a, &mut b)?;
        assert!((b[0] - 1.5).abs() < 1e-15 && (b[1] - 1.0).abs() < 1e-15);
        Ok(())
    }

    /// (1 + i) x = 2 + 2i on the diagonal, and a coupling that needs the imaginary part.
    #[test]
    fn complex_lu_solves_a_complex_system() -> Result<(), SolverError> {
        // A = [[1+i, 0], [i, 2]], x = [1, 1-i]: b = [1+i, i + 2 - 2i] = [1+i, 2-i].
        let lu = DenseComplexLu::factor(2, &[1.0, 0.0, 0.0, 2.0], &[1.0, 0.0, 1.0, 0.0])?;
        let (mut re, mut im) = ([1.0, 2.0], [1.0, -1.0]);
        lu.solve(&mut re, &mut im)?;
        assert!((re[0] - 1.0).abs() < 1e-15 && im[0].abs() < 1e-15);
        assert!(
            (re[1] - 1.0).abs() < 1e-15 && (im[1] + 1.0).abs() < 1e-15,
            "{re:?} {im:?}"
        );
        Ok(())
    }

    /// Both paths of [`DenseLu`] and [`DenseComplexLu`] (the in-place LU up to
    /// [`SMALL_LU_MAX_DIM`] / [`SMALL_COMPLEX_LU_MAX_DIM`], faer's above) solve a nonsymmetric system that needs row
    /// exchanges to a residual of a few ε · ‖A‖ ‖x‖.
    #[test]
    fn small_and_blocked_paths_solve_to_round_off() -> Result<(), SolverError> {
        for n in [
            3,
            SMALL_COMPLEX_LU_MAX_DIM + 1,
            SMALL_LU_MAX_DIM,
            SMALL_LU_MAX_DIM + 1,
            90,
        ] {
            // Entries in [−1, 1) from a fixed linear congruential sequence; the diagonal
            // is shifted down the rows so that partial pivoting must exchange rows.
            let mut seed = 12345u64;
            let mut next = || {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            };
            let re: Vec<f64> = (0..n * n)
                .map(|k| {
                    next()
                        + if k % n == (k / n + 1) % n {
                            n as f64
                        } else {
                            0.0
                        }
                })
                .collect();
            let im: Vec<f64> = (0..n * n).map(|_| next()).collect();
            let x: Vec<f64> = (0..n).map(|i| 1.0 + i as f64 / n as f64).collect();
            let mul = |a: &[f64], v: &[f64]| -> Vec<f64> {
                (0..n)
                    .map(|i| (0..n).map(|j| a[i * n + j] * v[j]).sum())
                    .collect()
            };
            let mut b = mul(&re, &x);
            DenseLu::factor(n, &re)?.solve(&mut b)?;
            let gap = b
                .iter()
                .zip(&x)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(gap < 1e-13, "real n = {n}: max |x − x*| = {gap:e}");
            // (re + i im) x with x real: b = re x + i im x.
            let (mut br, mut bi) = (mul(&re, &x), mul(&im, &x));
            DenseComplexLu::factor(n, &re, &im)?.solve(&mut br, &mut bi)?;
            let gap = br
                .iter()
                .zip(&x)
                .map(|(a, b)| (a - b).abs())
                .chain(bi.iter().map(|v| v.abs()))
                .fold(0.0, f64::max);
            assert!(gap < 1e-13, "complex n = {n}: max |x − x*| = {gap:e}");
        }
        Ok(())
    }

    /// The pseudo-inverse of a rank-1 matrix [[1, 2], [2, 4]] is A / 25.
    #[test]
    fn pseudo_inverse_of_rank_one() -> Result<(), SolverError> {
        let (p, r) = pseudo_inverse(2, 2, &[1.0, 2.0, 2.0, 4.0])?;
        assert_eq!(r, 1);
        for (x, want) in p.iter().zip([1.0, 2.0, 2.0, 4.0]) {
            assert!((x - want / 25.0).abs() < 1e-15, "{p:?}");
        }
        Ok(())
    }

    #[test]
    fn cholesky_reproduces_the_matrix() -> Result<(), SolverError> {
        let a = [4.0, 2.0, 2.0, 3.0];
        let l = cholesky(2, &a)?;
        let back = [
            l[0] * l[0],
            l[0] * l[2],
            l[2] * l[0],
            l[2] * l[2] + l[3] * l[3],
        ];
        assert!(back.iter().zip(a).all(|(x, y)| (x - y).abs() < 1e-15));
        Ok(())
    }
}

/// Scalars [`SmallLu`] factors: `f64` and `c64`.
pub trait LuScalar:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// Largest `n` [`DenseLu`] / [`DenseComplexLu`] factor in place rather than with faer.
    const SMALL_MAX_DIM: usize;
    /// Size used to choose the pivot: `|x|`, or `|re| + |im|` for a complex number (as
    /// LAPACK's `CABS1`, which avoids a square root).
    fn pivot_size(self) -> f64;
    /// Both parts finite.
    fn finite(self) -> bool;
}

impl LuScalar for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const SMALL_MAX_DIM: usize = SMALL_LU_MAX_DIM;
    fn pivot_size(self) -> f64 {
        self.abs()
    }
    fn finite(self) -> bool {
        self.is_finite()
    }
}

impl LuScalar for c64 {
    const ZERO: Self = c64 { re: 0.0, im: 0.0 };
    const ONE: Self = c64 { re: 1.0, im: 0.0 };
    const SMALL_MAX_DIM: usize = SMALL_COMPLEX_LU_MAX_DIM;
    fn pivot_size(self) -> f64 {
        self.re.abs() + self.im.abs()
    }
    fn finite(self) -> bool {
        self.re.is_finite() && self.im.is_finite()
    }
}

/// An in-place LU factorization with partial pivoting of a small dense `n × n` matrix
/// (column-major), for systems small enough that a blocked or sparse factorization's
/// bookkeeping costs more than the `n³/3` flops (Golub & Van Loan, *Matrix
/// Computations*, 4th ed., Alg. 3.4.1): the KKT matrices of [`crate::kkt`] up to
/// [`crate::kkt::DENSE_MAX_DIM`] and the dense Newton matrices of [`DenseLu`] and
/// [`DenseComplexLu`]. Allocation-free after construction.
pub struct SmallLu<T: LuScalar = f64> {
    n: usize,
    a: Vec<T>,
    piv: Vec<usize>,
}

impl<T: LuScalar> SmallLu<T> {
    /// Workspace for `n × n` matrices.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            a: vec![T::ZERO; n * n],
            piv: vec![0; n],
        }
    }

    /// The matrix to factor, column-major (entry `(i, j)` at `j·n + i`); fill it, then
    /// call [`Self::factor`].
    pub fn matrix_mut(&mut self) -> &mut [T] {
        &mut self.a
    }

    /// Factor the matrix in place: `P A = L U`. Fails on a zero or non-finite pivot.
    pub fn factor(&mut self) -> Result<(), SolverError> {
        let n = self.n;
        let a = &mut self.a;
        for k in 0..n {
            let col = k * n;
            let (mut p, mut best) = (k, a[col + k].pivot_size());
            for i in k + 1..n {
                if a[col + i].pivot_size() > best {
                    (p, best) = (i, a[col + i].pivot_size());
                }
            }
            if !(best.is_finite() && best > 0.0) {
                return Err(SolverError::Factorization(format!(
                    "dense LU of a {n}×{n} matrix: pivot {best:e} in column {k} (singular)"
                )));
            }
            self.piv[k] = p;
            if p != k {
                for j in 0..n {
                    a.swap(j * n + k, j * n + p);
                }
            }
            let inv = T::ONE / a[col + k];
            for i in k + 1..n {
                a[col + i] = a[col + i] * inv;
            }
            let (left, right) = a.split_at_mut((k + 1) * n);
            let lk = &left[col + k + 1..col + n];
            for cj in right.chunks_exact_mut(n) {
                let akj = cj[k];
                for (x, l) in cj[k + 1..].iter_mut().zip(lk) {
                    *x = *x - *l * akj;
                }
            }
        }
        Ok(())
    }

    /// Overwrite `b` with `A⁻¹ b` (after [`Self::factor`]).
    pub fn solve(&self, b: &mut [T]) {
        let (n, a) = (self.n, &self.a);
        for k in 0..n {
            b.swap(k, self.piv[k]);
        }
        for j in 0..n {
            let bj = b[j];
            for (x, l) in b[j + 1..n].iter_mut().zip(&a[j * n + j + 1..(j + 1) * n]) {
                *x = *x - *l * bj;
            }
        }
        for j in (0..n).rev() {
            b[j] = b[j] / a[j * n + j];
            let bj = b[j];
            for (x, u) in b[..j].iter_mut().zip(&a[j * n..j * n + j]) {
                *x = *x - *u * bj;
            }
        }
    }
}

#[cfg(test)]
mod small_lu_tests {
    use super::SmallLu;

    /// A saddle-point matrix that needs pivoting (zero (3,3) block): the solution of
    /// `K x = K·[1, 2, 3]` is `[1, 2, 3]` to round-off.
    #[test]
    fn solves_a_saddle_point_system_with_pivoting() {
        // K = [[2, 0, 1], [0, 3, 1], [1, 1, 0]] (column-major, symmetric).
        let k = [2.0, 0.0, 1.0, 0.0, 3.0, 1.0, 1.0, 1.0, 0.0];
        let mut lu = SmallLu::new(3);
        lu.matrix_mut().copy_from_slice(&k);
        lu.factor().expect("non-singular");
        let x = [1.0, 2.0, 3.0];
        let mut b: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|j| k[j * 3 + i] * x[j]).sum())
            .collect();
        lu.solve(&mut b);
        for (bi, xi) in b.iter().zip(x) {
            assert!((bi - xi).abs() < 1e-14, "{b:?}");
        }
        // A singular matrix is an error, not garbage.
        let mut lu = SmallLu::new(2);
        lu.matrix_mut().copy_from_slice(&[1.0, 2.0, 2.0, 4.0]);
        assert!(lu.factor().is_err());
    }
}
