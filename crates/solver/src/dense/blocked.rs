//! faer's dense kernels called with their parallelism given, never read from faer's
//! process-wide setting: the blocked LU with partial pivoting and the SVD.
//!
//! faer's high-level types (`Mat::partial_piv_lu`, `Mat::thin_svd`,
//! `Mat::singular_values`, their `solve_in_place`) read `faer::get_global_parallelism`,
//! whose default is every core through rayon. A library user's program would inherit
//! whatever another part of it set there, and a cell in the runner's side-by-side pool
//! would take a neighbour's cores. These wrappers call faer's low-level functions
//! (`linalg::lu::partial_pivoting`, `linalg::svd`) with [`Par`] as an argument; the
//! workspace calls them with [`Par::Seq`], the parallelism every dense call had before
//! (the runner and the CLI set the global to sequential at start, issue 48 item 4).

use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::lu::partial_pivoting::{factor, solve};
use faer::linalg::svd::{self, ComputeSvdVectors, SvdError};
use faer::perm::PermRef;
use faer::traits::ComplexField;
use faer::{Mat, MatMut, MatRef, Par};

/// A dense LU with partial pivoting, `P A = L U`, stored as faer stores it in place: the
/// unit lower factor below the diagonal, `U` on and above it, the row permutation beside.
pub(crate) struct BlockedLu<T: ComplexField> {
    lu: Mat<T>,
    fwd: Vec<usize>,
    bwd: Vec<usize>,
    par: Par,
}

impl<T: ComplexField> BlockedLu<T> {
    /// Factor `a` (moved in and overwritten) with parallelism `par`.
    pub(crate) fn factor(mut a: Mat<T>, par: Par) -> Self {
        let (m, n) = a.shape();
        let (mut fwd, mut bwd) = (vec![0usize; m], vec![0usize; m]);
        let scratch = factor::lu_in_place_scratch::<usize, T>(m, n, par, Default::default());
        factor::lu_in_place(
            a.as_mut(),
            &mut fwd,
            &mut bwd,
            par,
            MemStack::new(&mut MemBuffer::new(scratch)),
            Default::default(),
        );
        Self {
            lu: a,
            fwd,
            bwd,
            par,
        }
    }

    /// Overwrite `rhs` (n × k) with `A⁻¹ rhs`.
    pub(crate) fn solve_in_place(&self, rhs: MatMut<'_, T>) {
        let n = self.lu.nrows();
        let scratch = solve::solve_in_place_scratch::<usize, T>(n, rhs.ncols(), self.par);
        // `fwd` and `bwd` are the inverse pair `lu_in_place` wrote (checked, O(n)).
        let perm = PermRef::new_checked(&self.fwd, &self.bwd, n);
        let lu: MatRef<'_, T> = self.lu.as_ref();
        solve::solve_in_place_with_conj(
            lu,
            lu,
            perm,
            faer::Conj::No,
            rhs,
            self.par,
            MemStack::new(&mut MemBuffer::new(scratch)),
        );
    }
}

/// The thin SVD `A = U Σ Vᵀ` of a real `m × n` matrix, `k = min(m, n)`.
pub(crate) struct ThinSvd {
    /// `m × k`.
    pub u: Mat<f64>,
    /// σ in nonincreasing order.
    pub s: Vec<f64>,
    /// `n × k`.
    pub v: Mat<f64>,
}

/// [`ThinSvd`] of `a`.
pub(crate) fn thin_svd(a: MatRef<'_, f64>, par: Par) -> Result<ThinSvd, SvdError> {
    let (m, n) = a.shape();
    let k = m.min(n);
    let (mut u, mut v, mut s) = (Mat::zeros(m, k), Mat::zeros(n, k), Diag::<f64>::zeros(k));
    let thin = ComputeSvdVectors::Thin;
    let scratch = svd::svd_scratch::<f64>(m, n, thin, thin, par, Default::default());
    svd::svd(
        a,
        s.as_mut(),
        Some(u.as_mut()),
        Some(v.as_mut()),
        par,
        MemStack::new(&mut MemBuffer::new(scratch)),
        Default::default(),
    )?;
    let s = s.column_vector().iter().copied().collect();
    Ok(ThinSvd { u, s, v })
}

/// The singular values of a real matrix, in nonincreasing order.
pub(crate) fn singular_values(a: MatRef<'_, f64>, par: Par) -> Result<Vec<f64>, SvdError> {
    let (m, n) = a.shape();
    let mut s = Diag::<f64>::zeros(m.min(n));
    let no = ComputeSvdVectors::No;
    let scratch = svd::svd_scratch::<f64>(m, n, no, no, par, Default::default());
    svd::svd(
        a,
        s.as_mut(),
        None,
        None,
        par,
        MemStack::new(&mut MemBuffer::new(scratch)),
        Default::default(),
    )?;
    Ok(s.column_vector().iter().copied().collect())
}
