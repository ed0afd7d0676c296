//! The sparse LDLᵀ backend: the AMD ordering, the matrix laid out in it, faer's symbolic
//! analysis once, and per factorization only the numeric LDLᵀ.
//!
//! A chain's KKT matrix factors simplicially (its elimination tree is a path). For that
//! case the backend calls faer's simplicial factorization and triangular solves directly:
//! faer's general entry point reserves scratch for a permuted copy of `A` (16 bytes per
//! stored entry) even when, as here, the matrix already comes in the factor's order, and
//! that reservation was the largest single allocation of a 10⁵-link chain (23.5 MB of
//! 163 MB, heaptrack). The supernodal case keeps the general entry point.

use super::layout::permuted_triangle;
use super::pivoted::PivotedLu;
use crate::error::SolverError;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::{LdltParams, LdltRegularization};
use faer::sparse::linalg::cholesky::simplicial::{
    factorize_simplicial_numeric_ldlt, factorize_simplicial_numeric_ldlt_scratch, SimplicialLdltRef,
};
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, LdltRef, SymbolicCholesky,
    SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat, SymbolicSparseColMatRef};
use faer::{Conj, Par, Side, Spec};

/// faer's sparse LDLᵀ of a KKT matrix in its fill-reducing order.
pub(super) struct SparseLdlt {
    /// `fwd[k]`: the original unknown at position `k` of the ordering.
    pub(super) fwd: Vec<usize>,
    /// The matrix's pattern in that order (the triangle faer's factorization reads).
    pub(super) tri: SymbolicSparseColMat<usize>,
    symbolic: Box<SymbolicCholesky<usize>>,
    l_values: Vec<f64>,
    buffer: MemBuffer,
    /// Expected pivot signs in the ordering: `+` on the `A` block, `−` on the constraints.
    signs: Vec<i8>,
    /// The pivoted LU of the same matrix (built at the first fallback) and whether its
    /// factor, not the LDLᵀ's, is the one in hand.
    pivoted: Option<Box<PivotedLu>>,
    use_pivoted: bool,
}

/// What one numeric factorization reports.
pub(super) struct Factored {
    pub(super) supernodal: bool,
    pub(super) dynamic_regularizations: usize,
}

impl SparseLdlt {
    /// Order, lay out and analyse the lower triangle `lower` of a KKT matrix with an
    /// `n × n` `A` block, with parallelism `par`. Also returns where each entry of `lower`
    /// lands in [`Self::tri`]. Refuses (before allocating it) a factor that cannot fit.
    pub(super) fn new(
        n: usize, lower: SymbolicSparseColMatRef<'_, usize>, par: Par,
    ) -> Result<(Self, Vec<usize>), SolverError> {
        let dim = lower.ncols();
        let amd = symbolic_of(lower, Side::Lower, SymmetricOrdering::Amd)?;
        let fwd: Vec<usize> = match amd.perm() {
            Some(p) => p.arrays().0.to_vec(),
            None => (0..dim).collect(),
        };
        drop(amd);
        // faer's simplicial LDLᵀ reads the upper triangle and the supernodal the lower:
        // lay out the upper one, and the lower one if the analysis chooses supernodal.
        let (mut tri, mut slot) = permuted_triangle(lower, &fwd, Side::Upper);
        let mut symbolic = symbolic_of(tri.as_ref(), Side::Upper, SymmetricOrdering::Identity)?;
        if matches!(symbolic.raw(), SymbolicCholeskyRaw::Supernodal(_)) {
            (tri, slot) = permuted_triangle(lower, &fwd, Side::Lower);
            symbolic = symbolic_of(tri.as_ref(), Side::Lower, SymmetricOrdering::Identity)?;
        }
        let req = match symbolic.raw() {
            SymbolicCholeskyRaw::Simplicial(_) => {
                factorize_simplicial_numeric_ldlt_scratch::<usize, f64>(dim)
            }
            SymbolicCholeskyRaw::Supernodal(_) => StackReq::any_of(&[
                symbolic
                    .factorize_numeric_ldlt_scratch::<f64>(par, Spec::<LdltParams, f64>::default()),
                symbolic.solve_in_place_scratch::<f64>(1, par),
            ]),
        };
        // The fill is known now: refuse a factor that cannot fit before allocating it.
        // What is held meanwhile counts too: the lower triangle, its permuted copy and the
        // map between them (three words per stored entry, two per column).
        let held = 8 * (3 * lower.compute_nnz() as u64 + 2 * dim as u64);
        let factor_bytes = 8 * symbolic.len_val() as u64 + req.size_bytes() as u64 + held;
        driftlab_core::memory::check(
            0.0,
            "the sparse LDLᵀ factor and its workspace",
            factor_bytes,
        )
        .map_err(SolverError::OutOfMemory)?;
        let signs = fwd
            .iter()
            .map(|&o| if o < n { 1i8 } else { -1i8 })
            .collect();
        let backend = Self {
            l_values: vec![0.0; symbolic.len_val()],
            buffer: MemBuffer::new(req),
            symbolic: Box::new(symbolic),
            signs,
            fwd,
            tri,
            pivoted: None,
            use_pivoted: false,
        };
        Ok((backend, slot))
    }

    /// Whether faer factors this matrix supernodally.
    pub(super) fn is_supernodal(&self) -> bool {
        matches!(self.symbolic.raw(), SymbolicCholeskyRaw::Supernodal(_))
    }

    /// Factor the matrix with values `values` (in [`Self::tri`]'s layout), with faer's
    /// sign-aware dynamic regularization `delta`, `eps`.
    pub(super) fn factorize(
        &mut self, values: &[f64], (delta, eps): (f64, f64), par: Par,
    ) -> Result<Factored, SolverError> {
        self.use_pivoted = false;
        let mat = SparseColMatRef::new(self.tri.as_ref(), values);
        let reg = LdltRegularization {
            dynamic_regularization_signs: Some(&self.signs),
            dynamic_regularization_delta: delta,
            dynamic_regularization_epsilon: eps,
        };
        let stack = MemStack::new(&mut self.buffer);
        let failed = |e| SolverError::Factorization(format!("{e:?}"));
        let dynamic_regularizations = match self.symbolic.raw() {
            SymbolicCholeskyRaw::Simplicial(simplicial) => {
                factorize_simplicial_numeric_ldlt(&mut self.l_values, mat, reg, simplicial, stack)
                    .map_err(failed)?
                    .dynamic_regularization_count
            }
            SymbolicCholeskyRaw::Supernodal(_) => {
                self.symbolic
                    .factorize_numeric_ldlt(
                        &mut self.l_values,
                        mat,
                        Side::Lower,
                        reg,
                        par,
                        stack,
                        Spec::<LdltParams, f64>::default(),
                    )
                    .map_err(failed)?;
                0
            }
        };
        if self.l_values.iter().any(|x| !x.is_finite()) {
            return Err(SolverError::Factorization("non-finite LDLᵀ factor".into()));
        }
        Ok(Factored {
            supernodal: self.is_supernodal(),
            dynamic_regularizations,
        })
    }

    /// Factor the matrix with values `values` by the pivoted sparse LU (see
    /// `kkt/pivoted.rs`), which then replaces the LDLᵀ factor in hand.
    pub(super) fn factorize_pivoted(
        &mut self, values: &[f64], par: Par,
    ) -> Result<(), SolverError> {
        self.use_pivoted = false;
        let lu = match &mut self.pivoted {
            Some(lu) => lu,
            slot => slot.insert(Box::new(PivotedLu::new(self.tri.as_ref())?)),
        };
        lu.factorize(values, par)?;
        self.use_pivoted = lu.is_factored();
        Ok(())
    }

    /// Whether the factor in hand is the pivoted LU.
    pub(super) fn pivoted_in_hand(&self) -> bool {
        self.use_pivoted
    }

    /// Solve with the factor in place, `x` in the ordering's positions.
    pub(super) fn solve_in_place(&mut self, x: &mut [f64], par: Par) {
        if self.use_pivoted {
            if let Some(lu) = &self.pivoted {
                lu.solve_in_place(x);
            }
            return;
        }
        let dim = x.len();
        let col = faer::MatMut::from_column_major_slice_mut(x, dim, 1);
        match self.symbolic.raw() {
            SymbolicCholeskyRaw::Simplicial(simplicial) => {
                SimplicialLdltRef::new(simplicial, &self.l_values).solve_in_place_with_conj(
                    Conj::No,
                    col,
                    par,
                    MemStack::new(&mut self.buffer),
                )
            }
            SymbolicCholeskyRaw::Supernodal(_) => LdltRef::new(&self.symbolic, &self.l_values)
                .solve_in_place_with_conj(Conj::No, col, par, MemStack::new(&mut self.buffer)),
        }
    }
}

/// faer's symbolic Cholesky analysis of the triangle `side` of `m` under `ordering`.
fn symbolic_of(
    m: SymbolicSparseColMatRef<'_, usize>, side: Side, ordering: SymmetricOrdering<'_, usize>,
) -> Result<SymbolicCholesky<usize>, SolverError> {
    factorize_symbolic_cholesky(m, side, ordering, CholeskySymbolicParams::default())
        .map_err(|e| SolverError::Symbolic(format!("{e:?}")))
}
