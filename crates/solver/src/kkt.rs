//! The KKT (saddle-point) matrix and its factorization.
//!
//! ```text
//!       ⎡ A   Bᵀ ⎤        A: n × n symmetric (mass matrix, or a Newton iteration matrix)
//!   K = ⎢        ⎥        B: m × n (constraint Jacobian Φ_q)
//!       ⎣ B  −C  ⎦        C: m × m diagonal, ≥ 0 (zero for exact constraints)
//! ```
//!
//! The pattern is fixed when the solver is built: the lower triangle of `K` is laid out
//! in compressed-column form once, each input entry gets its slot, and the sparse
//! symbolic analysis (AMD ordering + elimination tree) runs **once**. Every
//! [`KktSolver::factorize`] only scatters values and runs the numeric LDLᵀ.
//!
//! **Why a shift and refinement.** LDLᵀ without pivoting may meet a zero pivot on the
//! constraint block of a saddle-point matrix. With `C` replaced by `C + δI` (`δ > 0`
//! small) the matrix is quasi-definite, which has an LDLᵀ factorization for every
//! symmetric ordering (Vanderbei 1995, SIAM J. Optim. 5(1) 100–113). The shifted factor
//! is then used as a preconditioner: iterative refinement against the exact `K`
//! contracts the error by about `δ ‖(B A⁻¹ Bᵀ)⁻¹‖` per step, so two or three steps
//! reach round-off. The faer sign-aware dynamic regularization (`+` on the `A` block, `−`
//! on the constraint block) is kept as a safety net and its count reported.
//! A solve whose relative residual stays above `accept` is an error
//! ([`SolverError::Inaccurate`]), which is how a rank-deficient `Φ_q` shows up.

use crate::error::SolverError;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::{LdltParams, LdltRegularization};
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, LdltRef, SymbolicCholesky,
    SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat};
use faer::{Conj, Par, Side, Spec};

thread_local! {
    static KKT_THREADS: std::cell::Cell<usize> = const { std::cell::Cell::new(1) };
}

/// Set the number of faer threads used by KKT solvers **created afterwards on this
/// thread** (1 = sequential, the default). The runner sets it per sweep cell: cells that
/// run side by side use 1, so that rayon over cells and faer inside a cell never
/// oversubscribe the cores.
pub fn set_kkt_threads(n: usize) {
    KKT_THREADS.with(|c| c.set(n.max(1)));
}

/// Make faer's process-wide parallelism sequential. faer's dense solvers (the LU of
/// [`crate::dense::DenseLu`] above [`crate::dense::SMALL_LU_MAX_DIM`], the SVD of the
/// pseudo-inverses) read it, and its default is every core through rayon: inside a sweep
/// cell that oversubscribes the cores and puts another cell's threads into this cell's
/// timing (a 96 × 96 LU took 244 µs that way against 146 µs for the sequential small
/// LU, `cargo bench -p driftlab-solver`). The workspace's parallelism is explicit instead:
/// cells side by side in the runner's pool, faer threads inside a cell through
/// [`set_kkt_threads`]. The runner and the CLI call this once at start.
pub fn sequential_dense_kernels() {
    faer::set_global_parallelism(Par::Seq);
}

fn current_par() -> Par {
    match KKT_THREADS.with(|c| c.get()) {
        0 | 1 => Par::Seq,
        n => Par::rayon(n),
    }
}

/// Block sizes and entry positions of a KKT matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KktPattern {
    /// Size of the `A` block (velocity unknowns).
    pub n: usize,
    /// Size of the constraint block (multipliers).
    pub m: usize,
    /// Lower-triangle entries `(i, j)`, `i ≥ j`, of `A`.
    pub a_lower: Vec<(usize, usize)>,
    /// Entries `(r, c)` of `B` (`r < m`, `c < n`).
    pub b: Vec<(usize, usize)>,
}

/// Which factorization backs the solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KktBackend {
    /// Chosen by size: [`KktBackend::DenseLu`] up to [`DENSE_MAX_DIM`] unknowns `n + m`,
    /// [`KktBackend::SparseLdlt`] above. The default.
    #[default]
    Auto,
    /// faer sparse LDLᵀ (AMD ordering, symbolic analysis once).
    SparseLdlt,
    /// Dense LU with partial pivoting of the assembled `K` (allocation-free,
    /// [`crate::dense::SmallLu`]).
    DenseLu,
}

/// Largest `n + m` that [`KktBackend::Auto`] factors densely. Measured (experiment
/// `kkt-crossover`, planar chain, experiments profile, this 2-core machine, median of 3):
/// Baumgarte's step — one factorization and one solve, the rest identical on both paths —
/// takes 0.56× the sparse path's time with the dense one at n + m = 3, 0.73× at 6, 0.84×
/// at 12, 1.31× at 24 and 2.2× at 48; generalized-α's two factorizations per step:
/// 0.84×, 0.83×, 0.90×, 1.17×, 2.0×. The crossover lies between 12 and 24.
pub const DENSE_MAX_DIM: usize = 16;

/// Tuning of the KKT solver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KktOptions {
    /// Backend.
    pub backend: KktBackend,
    /// Relative quasi-definite shift `δ / max|A_ii|` added to the constraint block of
    /// the *factored* matrix only (the solution is refined against the exact `K`).
    pub shift: f64,
    /// Maximum iterative-refinement steps per solve.
    pub max_refinement: usize,
    /// Largest accepted relative residual `‖Kx − b‖∞ / (‖K‖∞‖x‖∞ + ‖b‖∞)`.
    pub accept: f64,
}

impl Default for KktOptions {
    fn default() -> Self {
        Self {
            backend: KktBackend::Auto,
            shift: 1e-12,
            max_refinement: 10,
            accept: 1e-13,
        }
    }
}

/// Whether `a` and `b` hold the same numbers bit for bit.
fn bitwise_equal(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Counters of a KKT solver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KktStats {
    /// Symbolic analyses (1 for a sparse solver).
    pub symbolic_analyses: usize,
    /// Numeric factorizations.
    pub factorizations: usize,
    /// Of those, sparse ones that ran supernodal (faer parallelizes those; its
    /// simplicial factorization and solves are sequential).
    pub supernodal_factorizations: usize,
    /// Solves (right-hand sides).
    pub solves: usize,
    /// Iterative-refinement steps.
    pub refinement_steps: usize,
    /// Pivots replaced by faer's dynamic regularization (should stay 0).
    pub dynamic_regularizations: usize,
    /// Factorizations skipped because the matrix equalled, bit for bit, the one whose
    /// factor was in hand (not counted in `factorizations`).
    pub reused_factorizations: usize,
}

enum Backend {
    Sparse {
        symbolic: Box<SymbolicCholesky<usize>>,
        l_values: Vec<f64>,
        buffer: MemBuffer,
        signs: Vec<i8>,
        permuted: Box<Permuted>,
    },
    Dense {
        lu: crate::dense::SmallLu,
    },
}

/// A KKT solver with a fixed pattern: build once, [`factorize`](Self::factorize) per
/// step or Newton iterate, [`solve`](Self::solve) any number of right-hand sides.
pub struct KktSolver {
    n: usize,
    m: usize,
    pattern: KktPattern,
    opts: KktOptions,
    par: Par,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    a_slot: Vec<usize>,
    b_slot: Vec<usize>,
    diag_slot: Vec<usize>,
    exact: Vec<f64>,
    /// The values of the factor in hand while the next matrix is assembled.
    previous: Vec<f64>,
    norm_k: f64,
    /// Refinement stops once the relative residual is at most this: the rounding error
    /// of the residual itself (see [`KktSolver::solve`]).
    target: f64,
    factorized: bool,
    backend: Backend,
    stats: KktStats,
    work_b: Vec<f64>,
    work_r: Vec<f64>,
}

/// `k ε`, with `k` the most entries in a row of the symmetric matrix whose lower
/// triangle is `(col_ptr, row_idx)`: the rounding error of a computed residual.
fn residual_rounding(dim: usize, col_ptr: &[usize], row_idx: &[usize]) -> f64 {
    let mut per_row = vec![0usize; dim];
    for j in 0..dim {
        for &i in &row_idx[col_ptr[j]..col_ptr[j + 1]] {
            per_row[i] += 1;
            if i != j {
                per_row[j] += 1;
            }
        }
    }
    per_row.into_iter().max().unwrap_or(1).max(1) as f64 * f64::EPSILON
}

fn slot_of(col_ptr: &[usize], row_idx: &[usize], i: usize, j: usize) -> usize {
    let (lo, hi) = (col_ptr[j], col_ptr[j + 1]);
    // Rows are sorted within a column and the entry is known to exist.
    lo + row_idx[lo..hi].partition_point(|&r| r < i)
}

/// The compressed-column layout `(col_ptr, row_idx)` of the lower triangle of the KKT
/// matrix `K = [[A, Bᵀ], [B, −C]]`: the `A` entries `(i, j)` as `(row i, col j)`, the `B`
/// entries `(r, c)` as `(row n + r, col c)`, and the whole diagonal (the `C` block and
/// any `A` diagonal the pattern leaves out), rows sorted and unique within each column.
/// `SolverError::Pattern` for an `A` entry outside the lower triangle of `n × n` or a `B`
/// entry outside `m × n`.
fn lower_triangle_layout(pattern: &KktPattern) -> Result<(Vec<usize>, Vec<usize>), SolverError> {
    let (n, m) = (pattern.n, pattern.m);
    let dim = n + m;
    let mut pos: Vec<(usize, usize)> =
        Vec::with_capacity(pattern.a_lower.len() + pattern.b.len() + dim);
    for &(i, j) in &pattern.a_lower {
        if i >= n || j > i {
            return Err(SolverError::Pattern(format!(
                "A entry ({i}, {j}) is not in the lower triangle of a {n}×{n} block"
            )));
        }
        pos.push((j, i));
    }
    for &(r, c) in &pattern.b {
        if r >= m || c >= n {
            return Err(SolverError::Pattern(format!(
                "B entry ({r}, {c}) outside {m}×{n}"
            )));
        }
        pos.push((c, n + r));
    }
    for d in 0..dim {
        pos.push((d, d));
    }
    // (col, row) sorted and unique → compressed columns of the lower triangle.
    let (with_dups, rows) = by_column(dim, &pos);
    drop(pos);
    let mut col_ptr = vec![0usize; dim + 1];
    let mut row_idx = Vec::with_capacity(rows.len());
    for c in 0..dim {
        let column = &rows[with_dups[c]..with_dups[c + 1]];
        for (k, &r) in column.iter().enumerate() {
            if k == 0 || column[k - 1] != r {
                row_idx.push(r);
            }
        }
        col_ptr[c + 1] = row_idx.len();
    }
    Ok((col_ptr, row_idx))
}

/// Items `(column, value)` grouped by column in compressed form — `(col_ptr, values)`,
/// the values of column `c` in `values[col_ptr[c]..col_ptr[c + 1]]`, sorted — by one
/// counting pass and a sort within each (short) column: linear in the entries, where a
/// sort of all of them cost `n log n` (a quarter of the set-up of a 10⁵-link chain, perf).
fn by_column<T: Ord + Copy + Default>(dim: usize, items: &[(usize, T)]) -> (Vec<usize>, Vec<T>) {
    let mut col_ptr = vec![0usize; dim + 1];
    for &(c, _) in items {
        col_ptr[c + 1] += 1;
    }
    for c in 0..dim {
        col_ptr[c + 1] += col_ptr[c];
    }
    let mut next = col_ptr.clone();
    let mut values = vec![T::default(); items.len()];
    for &(c, v) in items {
        values[next[c]] = v;
        next[c] += 1;
    }
    for c in 0..dim {
        values[col_ptr[c]..col_ptr[c + 1]].sort_unstable();
    }
    (col_ptr, values)
}

/// The KKT matrix in its fill-reducing order, laid out once: faer's numeric
/// factorization then runs on it directly instead of permuting the matrix on every call
/// (7.7 % of a Baumgarte step on the 10³-link chain went to that permutation, perf).
struct Permuted {
    /// `fwd[k]`: the original unknown at position `k` of the ordering.
    fwd: Vec<usize>,
    /// The permuted pattern (one triangle, the side faer's factorization reads).
    sym: SymbolicSparseColMat<usize>,
    /// Which triangle `sym` holds.
    side: Side,
    /// `slot[s]`: where the original lower-triangle entry `s` lands in `sym`.
    slot: Vec<usize>,
    /// Values in `sym`'s layout (shifted, as factored).
    values: Vec<f64>,
    /// A right-hand side in the permuted order.
    rhs: Vec<f64>,
}

impl Permuted {
    /// Lay out the lower triangle `(col_ptr, row_idx)` under the ordering `fwd`, in the
    /// triangle `side`.
    fn new(fwd: Vec<usize>, col_ptr: &[usize], row_idx: &[usize], side: Side) -> Self {
        let dim = fwd.len();
        let mut inv = vec![0usize; dim];
        for (k, &o) in fwd.iter().enumerate() {
            inv[o] = k;
        }
        let mut entries: Vec<(usize, (usize, usize))> = Vec::with_capacity(row_idx.len());
        for j in 0..dim {
            for (s, &i) in row_idx
                .iter()
                .enumerate()
                .take(col_ptr[j + 1])
                .skip(col_ptr[j])
            {
                let (a, b) = (inv[i].min(inv[j]), inv[i].max(inv[j]));
                // (column, (row, original slot)) of the entry in the requested triangle.
                entries.push(match side {
                    Side::Upper => (b, (a, s)),
                    Side::Lower => (a, (b, s)),
                });
            }
        }
        let (p_col, sorted) = by_column(dim, &entries);
        drop(entries);
        let mut p_row = Vec::with_capacity(sorted.len());
        let mut slot = vec![0usize; sorted.len()];
        for (pos, &(r, s)) in sorted.iter().enumerate() {
            p_row.push(r);
            slot[s] = pos;
        }
        let nnz = p_row.len();
        Self {
            fwd,
            sym: SymbolicSparseColMat::<usize>::new_checked(dim, dim, p_col, None, p_row),
            side,
            slot,
            values: vec![0.0; nnz],
            rhs: vec![0.0; dim],
        }
    }
}

/// The sparse LDLᵀ backend for the lower-triangle layout `(col_ptr, row_idx)` of a KKT
/// matrix with an `n × n` `A` block: the AMD ordering, the matrix laid out in it
/// ([`Permuted`]), the symbolic analysis of that layout (elimination tree, identity
/// ordering), the factor's value storage, the scratch for a numeric factorization or a
/// one-column solve with parallelism `par`, and the expected pivot signs in the ordering
/// (`+` on the `A` block, `−` on the constraint block).
fn sparse_backend(
    n: usize,
    col_ptr: &[usize],
    row_idx: &[usize],
    par: Par,
) -> Result<Backend, SolverError> {
    let dim = col_ptr.len() - 1;
    let sym = SymbolicSparseColMat::<usize>::new_checked(
        dim,
        dim,
        col_ptr.to_vec(),
        None,
        row_idx.to_vec(),
    );
    let symbolic_of = |m: faer::sparse::SymbolicSparseColMatRef<'_, usize>, side, ordering| {
        factorize_symbolic_cholesky(m, side, ordering, CholeskySymbolicParams::default())
            .map_err(|e| SolverError::Symbolic(format!("{e:?}")))
    };
    let amd = symbolic_of(sym.as_ref(), Side::Lower, SymmetricOrdering::Amd)?;
    let fwd: Vec<usize> = match amd.perm() {
        Some(p) => p.arrays().0.to_vec(),
        None => (0..dim).collect(),
    };
    drop(amd);
    // faer's simplicial LDLᵀ reads the upper triangle and the supernodal the lower: lay
    // out the upper one, and the lower one if the analysis chooses supernodal.
    let mut permuted = Permuted::new(fwd, col_ptr, row_idx, Side::Upper);
    let mut symbolic = symbolic_of(
        permuted.sym.as_ref(),
        Side::Upper,
        SymmetricOrdering::Identity,
    )?;
    if matches!(symbolic.raw(), SymbolicCholeskyRaw::Supernodal(_)) {
        permuted = Permuted::new(permuted.fwd, col_ptr, row_idx, Side::Lower);
        symbolic = symbolic_of(
            permuted.sym.as_ref(),
            Side::Lower,
            SymmetricOrdering::Identity,
        )?;
    }
    let req = StackReq::any_of(&[
        symbolic.factorize_numeric_ldlt_scratch::<f64>(par, Spec::<LdltParams, f64>::default()),
        symbolic.solve_in_place_scratch::<f64>(1, par),
    ]);
    // The fill is known now: refuse a factor that cannot fit before allocating it.
    let factor_bytes = 8 * symbolic.len_val() as u64 + req.size_bytes() as u64;
    driftlab_core::memory::check(
        0.0,
        "the sparse LDLᵀ factor and its workspace",
        factor_bytes,
    )
    .map_err(SolverError::OutOfMemory)?;
    let l_values = vec![0.0; symbolic.len_val()];
    let signs = permuted
        .fwd
        .iter()
        .map(|&o| if o < n { 1i8 } else { -1i8 })
        .collect();
    Ok(Backend::Sparse {
        symbolic: Box::new(symbolic),
        l_values,
        buffer: MemBuffer::new(req),
        signs,
        permuted: Box::new(permuted),
    })
}

impl KktSolver {
    /// Lay out the pattern and run the symbolic analysis (once).
    pub fn new(pattern: &KktPattern, opts: KktOptions) -> Result<Self, SolverError> {
        let (n, m) = (pattern.n, pattern.m);
        let dim = n + m;
        let (col_ptr, row_idx) = lower_triangle_layout(pattern)?;
        let a_slot = pattern
            .a_lower
            .iter()
            .map(|&(i, j)| slot_of(&col_ptr, &row_idx, i, j))
            .collect();
        let b_slot = pattern
            .b
            .iter()
            .map(|&(r, c)| slot_of(&col_ptr, &row_idx, n + r, c))
            .collect();
        let diag_slot = (0..dim)
            .map(|d| slot_of(&col_ptr, &row_idx, d, d))
            .collect();
        let nnz = row_idx.len();
        let target = residual_rounding(dim, &col_ptr, &row_idx);
        let par = current_par();
        let mut stats = KktStats::default();
        let backend = match opts.backend {
            KktBackend::Auto if dim <= DENSE_MAX_DIM => KktBackend::DenseLu,
            KktBackend::Auto => KktBackend::SparseLdlt,
            b => b,
        };
        let backend = match backend {
            KktBackend::SparseLdlt => {
                let sparse = sparse_backend(n, &col_ptr, &row_idx, par)?;
                stats.symbolic_analyses += 1;
                sparse
            }
            KktBackend::DenseLu | KktBackend::Auto => Backend::Dense {
                lu: crate::dense::SmallLu::new(dim),
            },
        };
        Ok(Self {
            n,
            m,
            pattern: pattern.clone(),
            opts,
            par,
            col_ptr,
            row_idx,
            a_slot,
            b_slot,
            diag_slot,
            exact: vec![0.0; nnz],
            previous: vec![0.0; nnz],
            norm_k: 0.0,
            target,
            factorized: false,
            backend,
            stats,
            work_b: vec![0.0; dim],
            work_r: vec![0.0; dim],
        })
    }

    /// Dimension `n + m`.
    pub fn dim(&self) -> usize {
        self.n + self.m
    }

    /// The pattern the solver was built for.
    pub fn pattern(&self) -> &KktPattern {
        &self.pattern
    }

    /// `y = A x` for the symmetric `A` block given by its lower values `a_vals`.
    pub fn mul_a(&self, a_vals: &[f64], x: &[f64], y: &mut [f64]) {
        y.iter_mut().for_each(|v| *v = 0.0);
        for (&(i, j), &v) in self.pattern.a_lower.iter().zip(a_vals) {
            y[i] += v * x[j];
            if i != j {
                y[j] += v * x[i];
            }
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> KktStats {
        self.stats
    }

    /// `exact` ← the values of `K` (the previous ones kept in `previous`).
    fn assemble_exact(&mut self, a_vals: &[f64], b_vals: &[f64], c_diag: Option<&[f64]>) {
        std::mem::swap(&mut self.exact, &mut self.previous);
        self.exact.iter_mut().for_each(|x| *x = 0.0);
        for (&s, &v) in self.a_slot.iter().zip(a_vals) {
            self.exact[s] += v;
        }
        for (&s, &v) in self.b_slot.iter().zip(b_vals) {
            self.exact[s] += v;
        }
        if let Some(c) = c_diag {
            for (r, &v) in c.iter().enumerate() {
                self.exact[self.diag_slot[self.n + r]] -= v;
            }
        }
    }

    /// Numeric factorization for new values of `A` (lower entries in pattern order), `B`
    /// (pattern order) and the diagonal `C` (`None` = zero).
    pub fn factorize(
        &mut self,
        a_vals: &[f64],
        b_vals: &[f64],
        c_diag: Option<&[f64]>,
    ) -> Result<(), SolverError> {
        let had_factor = self.factorized;
        self.factorized = false;
        self.assemble_exact(a_vals, b_vals, c_diag);
        // The same matrix, bit for bit, as the factor in hand (RATTLE's velocity step and
        // the next step's SHAKE both factor K(q_{n+1})): keep the factor, which a new
        // factorization would reproduce exactly.
        if had_factor && bitwise_equal(&self.exact, &self.previous) {
            self.factorized = true;
            self.stats.reused_factorizations += 1;
            return Ok(());
        }
        let scale = (0..self.n)
            .map(|d| self.exact[self.diag_slot[d]].abs())
            .fold(0.0_f64, f64::max)
            .max(f64::MIN_POSITIVE);
        // The shift must be small against the Schur complement B A⁻¹ Bᵀ ~ ‖B‖²/‖A‖, not
        // against A (an iteration matrix β'M with β' ~ 1/h² would otherwise drown it).
        let b_max = b_vals.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        let schur_scale = if b_max > 0.0 {
            b_max * b_max / scale
        } else {
            scale
        };
        self.norm_k = self.sym_inf_norm();
        let shift = self.opts.shift * schur_scale;
        let dim = self.dim();
        match &mut self.backend {
            Backend::Sparse {
                symbolic,
                l_values,
                buffer,
                signs,
                permuted,
            } => {
                let p = permuted.as_mut();
                for (&slot, &v) in p.slot.iter().zip(&self.exact) {
                    p.values[slot] = v;
                }
                for r in 0..self.m {
                    p.values[p.slot[self.diag_slot[self.n + r]]] -= shift;
                }
                let mat = SparseColMatRef::new(p.sym.as_ref(), &p.values);
                let reg = LdltRegularization {
                    dynamic_regularization_signs: Some(signs),
                    dynamic_regularization_delta: 1e-8 * scale.min(schur_scale),
                    dynamic_regularization_epsilon: 1e-14 * scale.min(schur_scale),
                };
                let stack = MemStack::new(buffer);
                let info = symbolic
                    .factorize_numeric_ldlt(
                        l_values,
                        mat,
                        p.side,
                        reg,
                        self.par,
                        stack,
                        Spec::<LdltParams, f64>::default(),
                    )
                    .map(|_| ())
                    .map_err(|e| SolverError::Factorization(format!("{e:?}")));
                info?;
                if l_values.iter().any(|x| !x.is_finite()) {
                    return Err(SolverError::Factorization("non-finite LDLᵀ factor".into()));
                }
                if matches!(symbolic.raw(), SymbolicCholeskyRaw::Supernodal(_)) {
                    self.stats.supernodal_factorizations += 1;
                }
            }
            Backend::Dense { lu } => {
                let k = lu.matrix_mut();
                k.iter_mut().for_each(|x| *x = 0.0);
                for j in 0..dim {
                    for s in self.col_ptr[j]..self.col_ptr[j + 1] {
                        let i = self.row_idx[s];
                        k[j * dim + i] = self.exact[s];
                        k[i * dim + j] = self.exact[s];
                    }
                }
                lu.factor()?;
            }
        }
        self.stats.factorizations += 1;
        self.factorized = true;
        Ok(())
    }

    /// `‖K‖∞` of the exact values (the row sums go through the refinement scratch,
    /// which [`Self::solve`] overwrites anyway: no allocation per factorization).
    fn sym_inf_norm(&mut self) -> f64 {
        let mut rows = std::mem::take(&mut self.work_r);
        rows.iter_mut().for_each(|x| *x = 0.0);
        for j in 0..self.dim() {
            for s in self.col_ptr[j]..self.col_ptr[j + 1] {
                let i = self.row_idx[s];
                rows[i] += self.exact[s].abs();
                if i != j {
                    rows[j] += self.exact[s].abs();
                }
            }
        }
        let norm = rows.iter().fold(0.0, |m: f64, &x| m.max(x));
        self.work_r = rows;
        norm
    }

    /// `y = K x` with the exact (unshifted) values of the last factorization.
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        y.iter_mut().for_each(|v| *v = 0.0);
        for j in 0..self.dim() {
            for s in self.col_ptr[j]..self.col_ptr[j + 1] {
                let i = self.row_idx[s];
                let v = self.exact[s];
                y[i] += v * x[j];
                if i != j {
                    y[j] += v * x[i];
                }
            }
        }
    }

    fn raw_solve(&mut self, rhs: &mut [f64]) {
        let dim = self.dim();
        let par = self.par;
        match &mut self.backend {
            Backend::Sparse {
                symbolic,
                l_values,
                buffer,
                permuted,
                ..
            } => {
                let p = permuted.as_mut();
                for (y, &o) in p.rhs.iter_mut().zip(&p.fwd) {
                    *y = rhs[o];
                }
                let ldlt = LdltRef::<usize, f64>::new(symbolic, l_values);
                let col = faer::MatMut::from_column_major_slice_mut(&mut p.rhs, dim, 1);
                ldlt.solve_in_place_with_conj(Conj::No, col, par, MemStack::new(buffer));
                for (&y, &o) in p.rhs.iter().zip(&p.fwd) {
                    rhs[o] = y;
                }
            }
            Backend::Dense { lu } => lu.solve(rhs),
        }
        self.stats.solves += 1;
    }

    /// Solve `K x = b` in place (`rhs` = `[b_v; b_λ]` in, `[x_v; x_λ]` out) with
    /// iterative refinement; returns the final relative residual
    /// `‖b − Kx‖∞ / (‖K‖∞‖x‖∞ + ‖b‖∞)`.
    ///
    /// Refinement stops when that residual is at or below the rounding error of computing
    /// it, `k ε` with `k` the most entries in a row of `K` (Higham, *Accuracy and
    /// Stability of Numerical Algorithms*, 2nd ed., 2002, §3.1: a sum of `k` products
    /// carries a relative error up to `γ_k ≈ k ε`), or stops improving by half, or after
    /// `max_refinement` steps. Below `k ε` a further step only chases the noise of the
    /// residual: it cost one solve and one product per system (about a third of a
    /// Baumgarte step on the 10³-link chain) and changed nothing measurable.
    pub fn solve(&mut self, rhs: &mut [f64]) -> Result<f64, SolverError> {
        if !self.factorized {
            return Err(SolverError::NotFactorized);
        }
        let mut b = std::mem::take(&mut self.work_b);
        let mut r = std::mem::take(&mut self.work_r);
        b.copy_from_slice(rhs);
        let norm_b = b.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        self.raw_solve(rhs);
        let mut rel = f64::INFINITY;
        let mut refinements = 0;
        loop {
            self.mul(rhs, &mut r);
            for (ri, bi) in r.iter_mut().zip(&b) {
                *ri = bi - *ri;
            }
            let norm_x = rhs.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            let norm_r = r.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            let denom = self.norm_k * norm_x + norm_b;
            let new_rel = if denom > 0.0 { norm_r / denom } else { 0.0 };
            let stalled = new_rel.is_nan() || new_rel > 0.5 * rel;
            rel = if new_rel.is_nan() {
                f64::INFINITY
            } else {
                new_rel.min(rel)
            };
            if rel <= self.target || stalled || refinements >= self.opts.max_refinement {
                break;
            }
            self.raw_solve(&mut r);
            for (x, d) in rhs.iter_mut().zip(&r) {
                *x += d;
            }
            refinements += 1;
        }
        self.stats.refinement_steps += refinements;
        self.work_b = b;
        self.work_r = r;
        // A NaN or ∞ in x is a singular matrix, not an inaccurate solve: the norms above
        // skip NaN (f64::max), so the residual would read 0 and mislead.
        if let Some((index, &value)) = rhs.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(SolverError::NonFiniteSolution { index, value });
        }
        if rel.is_nan() || rel > self.opts.accept {
            return Err(SolverError::Inaccurate {
                residual: rel,
                refinements,
                accept: self.opts.accept,
            });
        }
        Ok(rel)
    }
}
