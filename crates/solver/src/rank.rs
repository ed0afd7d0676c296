//! Numerical rank of a constraint Jacobian (seed 001 §3.11 pitfalls 2 and 4: redundant
//! constraints and singular configurations), by the singular values of the dense matrix
//! (faer SVD). The rank counts singular values above `max(m, n) · ε · σ_max` — the
//! threshold of Golub & Van Loan, *Matrix Computations*, 4th ed., §5.4.1, also NumPy's
//! `matrix_rank` default.

use crate::error::SolverError;
use faer::Mat;

/// Rank and singular values of a matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct RankReport {
    /// Numerical rank.
    pub rank: usize,
    /// Number of rows.
    pub rows: usize,
    /// Singular values, largest first.
    pub singular_values: Vec<f64>,
    /// The threshold used.
    pub threshold: f64,
}

/// Numerical rank of the `rows × cols` sparse matrix given by `(row, col)` entries and
/// values (duplicates add).
pub fn numerical_rank(
    rows: usize, cols: usize, entries: &[(usize, usize)], values: &[f64],
) -> Result<RankReport, SolverError> {
    let mut a = Mat::<f64>::zeros(rows, cols);
    for (&(i, j), &v) in entries.iter().zip(values) {
        a[(i, j)] += v;
    }
    let s = crate::dense::singular_values(a.as_ref(), faer::Par::Seq).map_err(|e| {
        SolverError::Factorization(format!("SVD of the {rows}×{cols} Jacobian failed: {e:?}"))
    })?;
    let smax = s.first().copied().unwrap_or(0.0);
    let threshold = rows.max(cols) as f64 * f64::EPSILON * smax;
    Ok(RankReport {
        rank: s.iter().filter(|&&x| x > threshold).count(),
        rows,
        singular_values: s,
        threshold,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicated_row_loses_one_rank() -> Result<(), SolverError> {
        // Rows (1, 2), (2, 4), (0, 1): rank 2 of 3.
        let e = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 1)];
        let v = [1.0, 2.0, 2.0, 4.0, 1.0];
        let r = numerical_rank(3, 2, &e, &v)?;
        assert_eq!(r.rank, 2);
        assert!(r.singular_values[1] > 0.1);
        Ok(())
    }
}
