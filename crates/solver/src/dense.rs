//! Small dense systems (index-1 Newton matrices, test oracles) via faer's LU with partial
//! pivoting; pseudo-inverses (faer SVD) and Cholesky for the prioritized method.

use crate::error::SolverError;
use faer::linalg::solvers::Solve;
use faer::Mat;

/// Solve `A x = b` for a dense row-major `n × n` matrix `a`, overwriting `b` with `x`.
/// Fails with [`SolverError::Factorization`] if the result is not finite (singular `A`).
pub fn solve_dense(n: usize, a: &[f64], b: &mut [f64]) -> Result<(), SolverError> {
    DenseLu::factor(n, a).solve(b)
}

/// An LU factorization with partial pivoting of a dense `n × n` matrix, kept to solve
/// several right-hand sides (a simplified-Newton matrix over the iterations of a step).
pub struct DenseLu {
    n: usize,
    lu: faer::linalg::solvers::PartialPivLu<f64>,
}

impl DenseLu {
    /// Factor the row-major matrix `a`.
    pub fn factor(n: usize, a: &[f64]) -> Self {
        let m = Mat::<f64>::from_fn(n, n, |i, j| a[i * n + j]);
        Self {
            n,
            lu: m.partial_piv_lu(),
        }
    }

    /// Overwrite `b` with `A⁻¹ b`; [`SolverError::Factorization`] if the result is not
    /// finite (singular `A`).
    pub fn solve(&self, b: &mut [f64]) -> Result<(), SolverError> {
        let n = self.n;
        let mut rhs = Mat::<f64>::from_fn(n, 1, |i, _| b[i]);
        self.lu.solve_in_place(rhs.as_mut());
        for i in 0..n {
            let x = rhs[(i, 0)];
            if !x.is_finite() {
                return Err(SolverError::Factorization(format!(
                    "dense LU of a {n}×{n} matrix gave non-finite x[{i}]: singular matrix"
                )));
            }
            b[i] = x;
        }
        Ok(())
    }
}

/// An LU factorization with partial pivoting of a dense complex `n × n` matrix given by
/// its real and imaginary parts (row-major): the complex Newton matrix
/// `(α + iβ)/h · B − J` of Radau IIA's transformed stage system (Hairer & Wanner II §IV.8).
pub struct DenseComplexLu {
    n: usize,
    lu: faer::linalg::solvers::PartialPivLu<faer::c64>,
}

impl DenseComplexLu {
    /// Factor `re + i·im`.
    pub fn factor(n: usize, re: &[f64], im: &[f64]) -> Self {
        let m =
            Mat::<faer::c64>::from_fn(n, n, |i, j| faer::c64::new(re[i * n + j], im[i * n + j]));
        Self {
            n,
            lu: m.partial_piv_lu(),
        }
    }

    /// Overwrite `(b_re, b_im)` with `A⁻¹ (b_re + i b_im)`; [`SolverError::Factorization`]
    /// if the result is not finite (singular `A`).
    pub fn solve(&self, b_re: &mut [f64], b_im: &mut [f64]) -> Result<(), SolverError> {
        let n = self.n;
        let mut rhs = Mat::<faer::c64>::from_fn(n, 1, |i, _| faer::c64::new(b_re[i], b_im[i]));
        self.lu.solve_in_place(rhs.as_mut());
        for i in 0..n {
            let x = rhs[(i, 0)];
            if !(x.re.is_finite() && x.im.is_finite()) {
                return Err(SolverError::Factorization(format!(
                    "complex dense LU of a {n}×{n} matrix gave non-finite x[{i}]: singular matrix"
                )));
            }
            b_re[i] = x.re;
            b_im[i] = x.im;
        }
        Ok(())
    }
}

/// Moore–Penrose pseudo-inverse of the dense row-major `rows × cols` matrix `a` by the
/// SVD, singular values below `max(rows, cols) · ε · σ_max` treated as zero (the rank
/// threshold of [`crate::rank`]). Returns the row-major `cols × rows` pseudo-inverse and
/// the numerical rank.
pub fn pseudo_inverse(
    rows: usize,
    cols: usize,
    a: &[f64],
) -> Result<(Vec<f64>, usize), SolverError> {
    damped_pseudo_inverse(rows, cols, a, 0.0, 0.0)
}

/// Damped least-squares inverse `Aᵀ(AAᵀ + μ²I)⁻¹ = V diag(σ/(σ² + μ²)) Uᵀ` (Nakamura &
/// Hanafusa 1986; Wampler 1986), dropping singular values below
/// `max(rows, cols) · ε · max(σ_max, scale)`: `scale` is the size of the matrix before any
/// null-space projection, so round-off left in a projected (nearly zero) matrix is not
/// inverted. `μ = 0`, `scale = 0` gives the Moore–Penrose pseudo-inverse.
pub fn damped_pseudo_inverse(
    rows: usize,
    cols: usize,
    a: &[f64],
    mu: f64,
    scale: f64,
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
        let lu = DenseComplexLu::factor(2, &[1.0, 0.0, 0.0, 2.0], &[1.0, 0.0, 1.0, 0.0]);
        let (mut re, mut im) = ([1.0, 2.0], [1.0, -1.0]);
        lu.solve(&mut re, &mut im)?;
        assert!((re[0] - 1.0).abs() < 1e-15 && im[0].abs() < 1e-15);
        assert!(
            (re[1] - 1.0).abs() < 1e-15 && (im[1] + 1.0).abs() < 1e-15,
            "{re:?} {im:?}"
        );
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

/// An in-place LU factorization with partial pivoting of a small dense `n × n` matrix
/// (column-major), for KKT systems small enough that a sparse factorization's bookkeeping
/// costs more than the `n³/3` flops (Golub & Van Loan, *Matrix Computations*, 4th ed.,
/// Alg. 3.4.1). Allocation-free after construction.
pub struct SmallLu {
    n: usize,
    a: Vec<f64>,
    piv: Vec<usize>,
}

impl SmallLu {
    /// Workspace for `n × n` matrices.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            a: vec![0.0; n * n],
            piv: vec![0; n],
        }
    }

    /// The matrix to factor, column-major (entry `(i, j)` at `j·n + i`); fill it, then
    /// call [`Self::factor`].
    pub fn matrix_mut(&mut self) -> &mut [f64] {
        &mut self.a
    }

    /// Factor the matrix in place: `P A = L U`. Fails on a zero or non-finite pivot.
    pub fn factor(&mut self) -> Result<(), SolverError> {
        let n = self.n;
        let a = &mut self.a;
        for k in 0..n {
            let col = k * n;
            let (mut p, mut best) = (k, a[col + k].abs());
            for i in k + 1..n {
                if a[col + i].abs() > best {
                    (p, best) = (i, a[col + i].abs());
                }
            }
            if !(best.is_finite() && best > 0.0) {
                return Err(SolverError::Factorization(format!(
                    "dense LU of a {n}×{n} KKT matrix: pivot {best:e} in column {k} (singular)"
                )));
            }
            self.piv[k] = p;
            if p != k {
                for j in 0..n {
                    a.swap(j * n + k, j * n + p);
                }
            }
            let inv = 1.0 / a[col + k];
            for i in k + 1..n {
                a[col + i] *= inv;
            }
            for j in k + 1..n {
                let akj = a[j * n + k];
                if akj != 0.0 {
                    for i in k + 1..n {
                        a[j * n + i] -= a[col + i] * akj;
                    }
                }
            }
        }
        Ok(())
    }

    /// Overwrite `b` with `A⁻¹ b` (after [`Self::factor`]).
    pub fn solve(&self, b: &mut [f64]) {
        let (n, a) = (self.n, &self.a);
        for k in 0..n {
            b.swap(k, self.piv[k]);
        }
        for j in 0..n {
            let bj = b[j];
            for i in j + 1..n {
                b[i] -= a[j * n + i] * bj;
            }
        }
        for j in (0..n).rev() {
            b[j] /= a[j * n + j];
            let bj = b[j];
            for i in 0..j {
                b[i] -= a[j * n + i] * bj;
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
