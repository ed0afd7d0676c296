//! The pivoted fallback of the sparse backend: faer's sparse LU with partial pivoting of
//! the whole symmetric `K`, for the matrices a fixed-order LDLᵀ cannot factor.
//!
//! The LDLᵀ eliminates in the fill-reducing order chosen once from the pattern, without
//! pivoting. That order is safe when `A` is positive definite (a quasi-definite `K`,
//! Vanderbei, SIAM J. Optim. 5 (1995) 100–113). It is not when `A` is singular or spans
//! many decades while `K` stays regular — `A` positive definite only on the null space of
//! `B`, which is all the KKT theory asks (Nocedal & Wright, *Numerical Optimization*, 2nd
//! ed., Lemma 16.1). Maximal coordinates of real robots are that case: the natural
//! coordinates' constant `M` of a link whose inertia is nearly that of a point or a rod,
//! Euler-parameter blocks of 10⁻⁶ kg m² wrists beside a 7 kg pelvis. There a pivot of the
//! LDLᵀ comes out zero or tiny, faer reports it (`ZeroPivot`) or the factor's growth
//! makes the solve non-finite. Partial pivoting (threshold row choice in faer's
//! supernodal/simplicial LU, Demmel et al., SuperLU, SIAM J. Matrix Anal. Appl. 20 (1999))
//! factors any regular `K`.
//!
//! The matrix is stored full (both triangles) in the LDLᵀ's order; its pattern and the
//! symbolic LU (column ordering) are built once, at the first fallback.

use crate::error::SolverError;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::lu::{factorize_symbolic_lu, LuRef, NumericLu, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat, SymbolicSparseColMatRef};
use faer::{Conj, Par};

/// The full matrix `K` (pattern, values) and its LU.
pub(super) struct PivotedLu {
    /// Both triangles of `K`, compressed by columns.
    full: SymbolicSparseColMat<usize>,
    /// `from[s]`: the slot of the stored triangle whose value goes to slot `s` of `full`.
    from: Vec<usize>,
    values: Vec<f64>,
    symbolic: SymbolicLu<usize>,
    /// The numeric LU, valid when `factored` (faer's low-level API, which takes the
    /// parallelism as an argument instead of reading faer's process-wide setting).
    numeric: NumericLu<usize, f64>,
    factored: bool,
    /// The parallelism of the last factorization, for its solves.
    par: Par,
}

impl PivotedLu {
    /// The full pattern of the symmetric matrix whose triangle (either side) is `tri`,
    /// and its symbolic LU.
    pub(super) fn new(tri: SymbolicSparseColMatRef<'_, usize>) -> Result<Self, SolverError> {
        let dim = tri.ncols();
        // (row, col, triangle slot) of both halves, sorted by column then row.
        let mut entries = Vec::with_capacity(2 * tri.compute_nnz());
        for j in 0..dim {
            let lo = tri.col_ptr()[j];
            for (k, &i) in tri.row_idx_of_col_raw(j).iter().enumerate() {
                entries.push((j, i, lo + k));
                if i != j {
                    entries.push((i, j, lo + k));
                }
            }
        }
        entries.sort_unstable();
        let mut col_ptr = vec![0usize; dim + 1];
        for &(c, _, _) in &entries {
            col_ptr[c + 1] += 1;
        }
        for c in 0..dim {
            col_ptr[c + 1] += col_ptr[c];
        }
        let row_idx: Vec<usize> = entries.iter().map(|&(_, r, _)| r).collect();
        let from: Vec<usize> = entries.iter().map(|&(_, _, s)| s).collect();
        let full = SymbolicSparseColMat::new_checked(dim, dim, col_ptr, None, row_idx);
        let symbolic = factorize_symbolic_lu(full.as_ref(), Default::default())
            .map_err(|e| SolverError::Symbolic(format!("sparse LU analysis: {e:?}")))?;
        Ok(Self {
            values: vec![0.0; from.len()],
            full,
            from,
            symbolic,
            numeric: NumericLu::new(),
            factored: false,
            par: Par::Seq,
        })
    }

    /// Factor `K` with the stored triangle's values `tri_values`, on `par` (the cell's
    /// threads, [`super::KktOptions::par`]).
    pub(super) fn factorize(&mut self, tri_values: &[f64], par: Par) -> Result<(), SolverError> {
        self.factored = false;
        self.par = par;
        for (v, &s) in self.values.iter_mut().zip(&self.from) {
            *v = tri_values[s];
        }
        let mat = SparseColMatRef::new(self.full.as_ref(), &self.values);
        let scratch = self
            .symbolic
            .factorize_numeric_lu_scratch::<f64>(par, Default::default());
        let mut buffer = MemBuffer::try_new(scratch).map_err(|e| {
            SolverError::Factorization(format!("pivoted sparse LU workspace: {e:?}"))
        })?;
        self.symbolic
            .factorize_numeric_lu(
                &mut self.numeric,
                mat,
                par,
                MemStack::new(&mut buffer),
                Default::default(),
            )
            .map_err(|e| SolverError::Factorization(format!("pivoted sparse LU: {e:?}")))?;
        self.factored = true;
        Ok(())
    }

    /// Whether a factor is in hand.
    pub(super) fn is_factored(&self) -> bool {
        self.factored
    }

    /// Solve in place with the factor (`x` in the triangle's order); a no-op without one.
    pub(super) fn solve_in_place(&self, x: &mut [f64]) {
        if !self.factored {
            return;
        }
        let dim = x.len();
        let col = faer::MatMut::from_column_major_slice_mut(x, dim, 1);
        let scratch = self.symbolic.solve_in_place_scratch::<f64>(1, self.par);
        LuRef::new_unchecked(&self.symbolic, &self.numeric).solve_in_place_with_conj(
            Conj::No,
            col,
            self.par,
            MemStack::new(&mut MemBuffer::new(scratch)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::PivotedLu;
    use faer::sparse::SymbolicSparseColMat;

    /// `K = [[0, 1], [1, 0]]` (a zero `A` block, regular `K`): the LDLᵀ's first pivot is
    /// zero; the pivoted LU solves it exactly, from either triangle.
    #[test]
    fn solves_a_kkt_matrix_whose_a_block_is_zero() {
        for (rows, values) in [
            (vec![0, 1, 1], [0.0, 1.0, 0.0]),
            (vec![0, 0, 1], [0.0, 1.0, 0.0]),
        ] {
            // Lower triangle: column 0 holds rows 0, 1; upper: column 1 holds rows 0, 1.
            let col_ptr = if rows == [0, 1, 1] {
                vec![0, 2, 3]
            } else {
                vec![0, 1, 3]
            };
            let tri = SymbolicSparseColMat::new_checked(2, 2, col_ptr, None, rows);
            let mut lu = PivotedLu::new(tri.as_ref()).expect("analysis");
            lu.factorize(&values, faer::Par::Seq).expect("factor");
            let mut x = [3.0, -2.0];
            lu.solve_in_place(&mut x);
            assert!(
                (x[0] + 2.0).abs() <= 1e-15 && (x[1] - 3.0).abs() <= 1e-15,
                "{x:?}"
            );
        }
    }
}
