//! Small dense systems (index-1 Newton matrices, Radau's Newton matrices, test oracles)
//! by LU with partial pivoting — in place ([`SmallLu`], [`SplitComplexLu`]) up to a size, faer's blocked LU
//! above; pseudo-inverses (faer SVD) and Cholesky for the prioritized method.

mod blocked;
mod small;

pub(crate) use blocked::singular_values;
use blocked::{thin_svd, BlockedLu};
pub use small::{SmallLu, SplitComplexLu};

use crate::error::SolverError;
use faer::{c64, Mat, Par};

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

/// The same for complex matrices ([`SplitComplexLu`], split real/imaginary storage): its
/// time over faer's complex LU (same bench) was 0.39 at n = 8, 0.56 at 16, 0.72 at 27,
/// 0.86 at 32, 0.97 at 40, 1.12 at 48 and 1.37 at 64 (interleaved `c64` storage, before:
/// 1.03 at 24, so the threshold was 16).
pub const SMALL_COMPLEX_LU_MAX_DIM: usize = 40;

/// `x` finite, or [`SolverError::Factorization`] naming the first non-finite entry.
fn finite(n: usize, x: impl Iterator<Item = bool>) -> Result<(), SolverError> {
    match x.into_iter().position(|ok| !ok) {
        None => Ok(()),
        Some(i) => Err(SolverError::Factorization(format!(
            "dense LU of a {n}×{n} matrix gave non-finite x[{i}]: singular matrix"
        ))),
    }
}

/// An LU factorization with partial pivoting of a dense real `n × n` matrix, kept to
/// solve several right-hand sides (a simplified-Newton matrix over the iterations of a
/// step) and refactored in place ([`Self::refactor`]): [`SmallLu`] up to
/// [`SMALL_LU_MAX_DIM`], faer's blocked LU above.
pub struct DenseLu {
    n: usize,
    lu: RealFactor,
}

/// The two implementations behind [`DenseLu`].
enum RealFactor {
    Small(SmallLu),
    Faer(Option<BlockedLu<f64>>),
}

impl DenseLu {
    /// A workspace for `n × n` matrices (nothing factored yet).
    pub fn new(n: usize) -> Self {
        let lu = if n <= SMALL_LU_MAX_DIM {
            RealFactor::Small(SmallLu::new(n))
        } else {
            RealFactor::Faer(None)
        };
        Self { n, lu }
    }

    /// Factor the row-major matrix `a`; [`SolverError::Factorization`] if a pivot of the
    /// small path is zero or not finite.
    pub fn factor(n: usize, a: &[f64]) -> Result<Self, SolverError> {
        let mut lu = Self::new(n);
        lu.refactor(|i, j| a[i * n + j])?;
        Ok(lu)
    }

    /// Factor the matrix with entries `at(i, j)` in this workspace (no allocation on the
    /// small path).
    pub fn refactor(&mut self, at: impl Fn(usize, usize) -> f64) -> Result<(), SolverError> {
        let n = self.n;
        match &mut self.lu {
            RealFactor::Small(lu) => {
                let a = lu.matrix_mut();
                for j in 0..n {
                    for i in 0..n {
                        a[j * n + i] = at(i, j);
                    }
                }
                lu.factor()
            }
            RealFactor::Faer(lu) => {
                *lu = Some(BlockedLu::factor(Mat::from_fn(n, n, at), Par::Seq));
                Ok(())
            }
        }
    }

    /// Overwrite `b` with `A⁻¹ b`; [`SolverError::Factorization`] if the result is not
    /// finite (singular `A`) or nothing was factored.
    pub fn solve(&self, b: &mut [f64]) -> Result<(), SolverError> {
        let x = &mut b[..self.n];
        match &self.lu {
            RealFactor::Small(lu) => lu.solve(x),
            RealFactor::Faer(Some(lu)) => {
                let mut rhs = Mat::<f64>::from_fn(x.len(), 1, |i, _| x[i]);
                lu.solve_in_place(rhs.as_mut());
                x.iter_mut()
                    .enumerate()
                    .for_each(|(i, xi)| *xi = rhs[(i, 0)]);
            }
            RealFactor::Faer(None) => return Err(unfactored(self.n)),
        }
        finite(self.n, x.iter().map(|v| v.is_finite()))
    }
}

/// A solve before any factorization.
fn unfactored(n: usize) -> SolverError {
    SolverError::Factorization(format!(
        "dense LU of a {n}×{n} matrix used before it was factored"
    ))
}

/// An LU factorization with partial pivoting of a dense complex `n × n` matrix given by
/// its real and imaginary parts: the complex Newton matrix `(α + iβ)/h · B − J` of Radau
/// IIA's transformed stage system (Hairer & Wanner II §IV.8). [`SplitComplexLu`] up to
/// [`SMALL_COMPLEX_LU_MAX_DIM`], faer's blocked LU above; refactored in place.
pub struct DenseComplexLu {
    n: usize,
    lu: ComplexFactor,
}

/// The two implementations behind [`DenseComplexLu`] (faer's with its right-hand side).
enum ComplexFactor {
    Small(SplitComplexLu),
    Faer(Option<BlockedLu<c64>>, Mat<c64>),
}

impl DenseComplexLu {
    /// A workspace for `n × n` matrices (nothing factored yet).
    pub fn new(n: usize) -> Self {
        let lu = if n <= SMALL_COMPLEX_LU_MAX_DIM {
            ComplexFactor::Small(SplitComplexLu::new(n))
        } else {
            ComplexFactor::Faer(None, Mat::zeros(n, 1))
        };
        Self { n, lu }
    }

    /// Factor the row-major `re + i·im`.
    pub fn factor(n: usize, re: &[f64], im: &[f64]) -> Result<Self, SolverError> {
        let mut lu = Self::new(n);
        lu.refactor(|i, j| (re[i * n + j], im[i * n + j]))?;
        Ok(lu)
    }

    /// Factor the matrix with entries `at(i, j) = (re, im)` in this workspace (no
    /// allocation on the small path).
    pub fn refactor(&mut self, at: impl Fn(usize, usize) -> (f64, f64)) -> Result<(), SolverError> {
        let n = self.n;
        match &mut self.lu {
            ComplexFactor::Small(lu) => {
                let (re, im) = lu.matrix_mut();
                for j in 0..n {
                    for i in 0..n {
                        (re[j * n + i], im[j * n + i]) = at(i, j);
                    }
                }
                lu.factor()
            }
            ComplexFactor::Faer(lu, _) => {
                let at = |i, j| {
                    let (re, im) = at(i, j);
                    c64::new(re, im)
                };
                *lu = Some(BlockedLu::factor(Mat::from_fn(n, n, at), Par::Seq));
                Ok(())
            }
        }
    }

    /// Overwrite `(b_re, b_im)` with `A⁻¹ (b_re + i b_im)`; [`SolverError::Factorization`]
    /// if the result is not finite (singular `A`) or nothing was factored.
    pub fn solve(&mut self, b_re: &mut [f64], b_im: &mut [f64]) -> Result<(), SolverError> {
        let (br, bi) = (&mut b_re[..self.n], &mut b_im[..self.n]);
        match &mut self.lu {
            ComplexFactor::Small(lu) => lu.solve(br, bi),
            ComplexFactor::Faer(Some(lu), x) => {
                for (i, (r, im)) in br.iter().zip(bi.iter()).enumerate() {
                    x[(i, 0)] = c64::new(*r, *im);
                }
                lu.solve_in_place(x.as_mut());
                for (i, (r, im)) in br.iter_mut().zip(bi.iter_mut()).enumerate() {
                    (*r, *im) = (x[(i, 0)].re, x[(i, 0)].im);
                }
            }
            ComplexFactor::Faer(None, _) => return Err(unfactored(self.n)),
        }
        let ok = br
            .iter()
            .zip(bi.iter())
            .map(|(r, i)| r.is_finite() && i.is_finite());
        finite(self.n, ok)
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
    let svd = thin_svd(m.as_ref(), Par::Seq).map_err(|e| {
        SolverError::Factorization(format!("SVD of a {rows}×{cols} matrix failed: {e:?}"))
    })?;
    let (u, sv, v) = (&svd.u, &svd.s, &svd.v);
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
        let mut lu = DenseComplexLu::factor(2, &[1.0, 0.0, 0.0, 2.0], &[1.0, 0.0, 1.0, 0.0])?;
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
