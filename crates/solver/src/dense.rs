//! Small dense systems (index-1 Newton matrices, test oracles) via faer's LU with partial
//! pivoting.

use crate::error::SolverError;
use faer::linalg::solvers::Solve;
use faer::Mat;

/// Solve `A x = b` for a dense row-major `n × n` matrix `a`, overwriting `b` with `x`.
/// Fails with [`SolverError::Factorization`] if the result is not finite (singular `A`).
pub fn solve_dense(n: usize, a: &[f64], b: &mut [f64]) -> Result<(), SolverError> {
    let m = Mat::<f64>::from_fn(n, n, |i, j| a[i * n + j]);
    let lu = m.partial_piv_lu();
    let mut rhs = Mat::<f64>::from_fn(n, 1, |i, _| b[i]);
    lu.solve_in_place(rhs.as_mut());
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
}
