//! In-place LU factorizations with partial pivoting of small dense matrices, real and
//! complex, for systems small enough that a blocked or sparse factorization's
//! bookkeeping costs more than the `n³/3` flops (Golub & Van Loan, *Matrix
//! Computations*, 4th ed., Alg. 3.4.1, the column-oriented `kji` form). Both are
//! allocation-free after construction: a simplified-Newton loop refactors the same
//! workspace.
//!
//! The complex one keeps the real and imaginary parts in separate arrays, as RADAU5's
//! `DECC`/`SOLC` do (Hairer & Wanner, `decsol.f`): the update `x − l·a` of one column is
//! then four real multiply–adds over contiguous slices, which vectorize, where an array
//! of complex numbers interleaves them. Its arithmetic is `num_complex`'s, operation for
//! operation (products `(ac − bd, ad + bc)`, quotients through `|b|²`), so it rounds
//! exactly as an LU over `Complex<f64>` in the same order.

use crate::error::SolverError;

/// A zero or non-finite pivot as an error naming the matrix and the column.
fn singular(n: usize, k: usize, best: f64) -> SolverError {
    SolverError::Factorization(format!(
        "dense LU of a {n}×{n} matrix: pivot {best:e} in column {k} (singular)"
    ))
}

/// An in-place LU factorization with partial pivoting of a small dense real `n × n`
/// matrix (column-major): the KKT matrices of [`crate::kkt`] up to
/// [`crate::kkt::DENSE_MAX_DIM`] and the dense Newton matrices of
/// [`super::DenseLu`].
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
                return Err(singular(n, k, best));
            }
            self.piv[k] = p;
            if p != k {
                for j in 0..n {
                    a.swap(j * n + k, j * n + p);
                }
            }
            let inv = 1.0 / a[col + k];
            for x in &mut a[col + k + 1..col + n] {
                *x *= inv;
            }
            let (left, right) = a.split_at_mut((k + 1) * n);
            let lk = &left[col + k + 1..col + n];
            for cj in right.chunks_exact_mut(n) {
                let akj = cj[k];
                for (x, l) in cj[k + 1..].iter_mut().zip(lk) {
                    *x -= l * akj;
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
            for (x, l) in b[j + 1..n].iter_mut().zip(&a[j * n + j + 1..(j + 1) * n]) {
                *x -= l * bj;
            }
        }
        for j in (0..n).rev() {
            b[j] /= a[j * n + j];
            let bj = b[j];
            for (x, u) in b[..j].iter_mut().zip(&a[j * n..j * n + j]) {
                *x -= u * bj;
            }
        }
    }
}

/// An in-place LU factorization with partial pivoting of a small dense complex `n × n`
/// matrix stored as two real column-major arrays (see the module documentation); the
/// pivot is the entry of largest `|re| + |im|` (LAPACK's `CABS1`, no square root).
pub struct SplitComplexLu {
    n: usize,
    re: Vec<f64>,
    im: Vec<f64>,
    piv: Vec<usize>,
}

/// `x − l·a` on split slices: `x`, `l` columns, `a` one complex number.
#[inline]
fn sub_scaled(xr: &mut [f64], xi: &mut [f64], lr: &[f64], li: &[f64], (ar, ai): (f64, f64)) {
    for ((xr, xi), (lr, li)) in xr.iter_mut().zip(xi.iter_mut()).zip(lr.iter().zip(li)) {
        let (pr, pi) = (lr * ar - li * ai, lr * ai + li * ar);
        *xr -= pr;
        *xi -= pi;
    }
}

/// `x / d` as `num_complex` divides: `((x_r d_r + x_i d_i) / |d|², (x_i d_r − x_r d_i) / |d|²)`.
#[inline]
fn divide((xr, xi): (f64, f64), (dr, di): (f64, f64)) -> (f64, f64) {
    let norm = dr * dr + di * di;
    ((xr * dr + xi * di) / norm, (xi * dr - xr * di) / norm)
}

impl SplitComplexLu {
    /// Workspace for `n × n` matrices.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            re: vec![0.0; n * n],
            im: vec![0.0; n * n],
            piv: vec![0; n],
        }
    }

    /// The real and imaginary parts to factor, column-major (entry `(i, j)` at
    /// `j·n + i`); fill them, then call [`Self::factor`].
    pub fn matrix_mut(&mut self) -> (&mut [f64], &mut [f64]) {
        (&mut self.re, &mut self.im)
    }

    /// Factor the matrix in place: `P A = L U`. Fails on a zero or non-finite pivot.
    pub fn factor(&mut self) -> Result<(), SolverError> {
        let n = self.n;
        for k in 0..n {
            let col = k * n;
            let size = |i: usize| self.re[col + i].abs() + self.im[col + i].abs();
            let (mut p, mut best) = (k, size(k));
            for i in k + 1..n {
                if size(i) > best {
                    (p, best) = (i, size(i));
                }
            }
            if !(best.is_finite() && best > 0.0) {
                return Err(singular(n, k, best));
            }
            self.piv[k] = p;
            if p != k {
                for j in 0..n {
                    self.re.swap(j * n + k, j * n + p);
                    self.im.swap(j * n + k, j * n + p);
                }
            }
            self.eliminate(k);
        }
        Ok(())
    }

    /// Column `k` below the pivot divided by it, and the rank-1 update of the columns
    /// to its right.
    fn eliminate(&mut self, k: usize) {
        let (n, col) = (self.n, k * self.n);
        let (ir, ii) = divide((1.0, 0.0), (self.re[col + k], self.im[col + k]));
        for i in col + k + 1..col + n {
            let (xr, xi) = (self.re[i], self.im[i]);
            (self.re[i], self.im[i]) = (xr * ir - xi * ii, xr * ii + xi * ir);
        }
        let (left_r, right_r) = self.re.split_at_mut((k + 1) * n);
        let (left_i, right_i) = self.im.split_at_mut((k + 1) * n);
        let (lr, li) = (&left_r[col + k + 1..col + n], &left_i[col + k + 1..col + n]);
        for (cr, ci) in right_r.chunks_exact_mut(n).zip(right_i.chunks_exact_mut(n)) {
            let akj = (cr[k], ci[k]);
            sub_scaled(&mut cr[k + 1..], &mut ci[k + 1..], lr, li, akj);
        }
    }

    /// Overwrite `(b_re, b_im)` with `A⁻¹ b` (after [`Self::factor`]).
    pub fn solve(&self, br: &mut [f64], bi: &mut [f64]) {
        let (n, re, im) = (self.n, &self.re, &self.im);
        for k in 0..n {
            br.swap(k, self.piv[k]);
            bi.swap(k, self.piv[k]);
        }
        for j in 0..n {
            let (lr, li) = (
                &re[j * n + j + 1..(j + 1) * n],
                &im[j * n + j + 1..(j + 1) * n],
            );
            let bj = (br[j], bi[j]);
            sub_scaled(&mut br[j + 1..n], &mut bi[j + 1..n], lr, li, bj);
        }
        for j in (0..n).rev() {
            (br[j], bi[j]) = divide((br[j], bi[j]), (re[j * n + j], im[j * n + j]));
            let (ur, ui) = (&re[j * n..j * n + j], &im[j * n..j * n + j]);
            let bj = (br[j], bi[j]);
            sub_scaled(&mut br[..j], &mut bi[..j], ur, ui, bj);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{SmallLu, SplitComplexLu};

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

    /// The split LU rounds as an LU over `Complex<f64>` with the same operations: on a
    /// matrix that needs row exchanges, its solution equals bit for bit the one of a
    /// straightforward `kji` LU written with `faer::c64` arithmetic; a singular matrix
    /// is an error.
    #[test]
    fn split_complex_lu_rounds_as_complex_arithmetic() {
        use faer::c64;
        let n = 5;
        let entry = |i: usize, j: usize| {
            let s = ((i * 7 + j * 3) % 11) as f64 - 5.0;
            c64::new(
                s / 3.0 + if j == (i + 1) % n { 9.0 } else { 0.0 },
                (i as f64 - j as f64) / 7.0,
            )
        };
        let mut lu = SplitComplexLu::new(n);
        let (re, im) = lu.matrix_mut();
        for j in 0..n {
            for i in 0..n {
                (re[j * n + i], im[j * n + i]) = (entry(i, j).re, entry(i, j).im);
            }
        }
        lu.factor().expect("non-singular");
        let (mut br, mut bi): (Vec<f64>, Vec<f64>) =
            (0..n).map(|i| (i as f64 + 1.0, 0.5 - i as f64)).unzip();
        let mut want: Vec<c64> = br.iter().zip(&bi).map(|(r, i)| c64::new(*r, *i)).collect();
        lu.solve(&mut br, &mut bi);
        // The reference: the same algorithm over c64.
        let mut a: Vec<c64> = (0..n * n).map(|k| entry(k % n, k / n)).collect();
        let mut piv = vec![0; n];
        for k in 0..n {
            let size = |z: c64| z.re.abs() + z.im.abs();
            let p = (k..n).fold(k, |p, i| {
                if size(a[k * n + i]) > size(a[k * n + p]) {
                    i
                } else {
                    p
                }
            });
            piv[k] = p;
            for j in 0..n {
                a.swap(j * n + k, j * n + p);
            }
            let inv = c64::new(1.0, 0.0) / a[k * n + k];
            for i in k + 1..n {
                a[k * n + i] *= inv;
            }
            for j in k + 1..n {
                let akj = a[j * n + k];
                for i in k + 1..n {
                    a[j * n + i] = a[j * n + i] - a[k * n + i] * akj;
                }
            }
        }
        for k in 0..n {
            want.swap(k, piv[k]);
        }
        for j in 0..n {
            for i in j + 1..n {
                want[i] = want[i] - a[j * n + i] * want[j];
            }
        }
        for j in (0..n).rev() {
            want[j] /= a[j * n + j];
            for i in 0..j {
                want[i] = want[i] - a[j * n + i] * want[j];
            }
        }
        for i in 0..n {
            assert_eq!(
                (br[i].to_bits(), bi[i].to_bits()),
                (want[i].re.to_bits(), want[i].im.to_bits()),
                "x[{i}]"
            );
        }
        let mut lu = SplitComplexLu::new(2);
        lu.matrix_mut().0.copy_from_slice(&[1.0, 2.0, 2.0, 4.0]);
        assert!(lu.factor().is_err());
    }
}
