//! Where the entries of `K` live: the compressed-column triangle that the solver stores
//! (in the fill-reducing order for the sparse backend), the slot of every input entry in
//! it, and the products with the symmetric matrix it represents.

use super::KktPattern;
use crate::error::SolverError;
use faer::sparse::{SymbolicSparseColMat, SymbolicSparseColMatRef};
use faer::Side;

/// `k ε`, with `k` the most entries in a row of the symmetric matrix whose triangle is
/// `tri`: the rounding error of a computed residual.
pub(super) fn residual_rounding(tri: SymbolicSparseColMatRef<'_, usize>) -> f64 {
    let dim = tri.ncols();
    let mut per_row = vec![0usize; dim];
    for j in 0..dim {
        for &i in tri.row_idx_of_col_raw(j) {
            per_row[i] += 1;
            if i != j {
                per_row[j] += 1;
            }
        }
    }
    per_row.into_iter().max().unwrap_or(1).max(1) as f64 * f64::EPSILON
}

/// The position in `tri`'s value array of the entry `(i, j)` of its triangle.
pub(super) fn slot_of(tri: SymbolicSparseColMatRef<'_, usize>, i: usize, j: usize) -> usize {
    let lo = tri.col_ptr()[j];
    // Rows are sorted within a column and the entry is known to exist.
    lo + tri.row_idx_of_col_raw(j).partition_point(|&r| r < i)
}

/// The compressed-column layout of the lower triangle of the KKT matrix
/// `K = [[A, Bᵀ], [B, −C]]`: the `A` entries `(i, j)` as `(row i, col j)`, the `B`
/// entries `(r, c)` as `(row n + r, col c)`, and the whole diagonal (the `C` block and
/// any `A` diagonal the pattern leaves out), rows sorted and unique within each column.
/// `SolverError::Pattern` for an `A` entry outside the lower triangle of `n × n` or a `B`
/// entry outside `m × n`.
/// Every entry of `pattern` inside its block: `A`'s in the lower triangle of `n × n`,
/// `B`'s inside `m × n`.
pub(super) fn check(pattern: &KktPattern) -> Result<(), SolverError> {
    let (n, m) = (pattern.n, pattern.m);
    if let Some(&(i, j)) = pattern.a_lower.iter().find(|&&(i, j)| i >= n || j > i) {
        return Err(SolverError::Pattern(format!(
            "A entry ({i}, {j}) is not in the lower triangle of a {n}×{n} block"
        )));
    }
    if let Some(&(r, c)) = pattern.b.iter().find(|&&(r, c)| r >= m || c >= n) {
        return Err(SolverError::Pattern(format!(
            "B entry ({r}, {c}) outside {m}×{n}"
        )));
    }
    Ok(())
}

pub(super) fn lower_triangle(
    pattern: &KktPattern,
) -> Result<SymbolicSparseColMat<usize>, SolverError> {
    let (n, m) = (pattern.n, pattern.m);
    let dim = n + m;
    check(pattern)?;
    // Refuse a pattern whose layout cannot fit before allocating it: at its peak the
    // (column, row) pairs and their grouping by column (three words per entry) and two
    // column-pointer arrays (one word per column each).
    let entries = (pattern.a_lower.len() + pattern.b.len() + dim) as u64;
    driftlab_core::memory::check(
        0.0,
        "the KKT matrix's pattern",
        8 * (3 * entries + 2 * dim as u64),
    )
    .map_err(SolverError::OutOfMemory)?;
    let mut pos: Vec<(usize, usize)> =
        Vec::with_capacity(pattern.a_lower.len() + pattern.b.len() + dim);
    for &(i, j) in &pattern.a_lower {
        pos.push((j, i));
    }
    for &(r, c) in &pattern.b {
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
    row_idx.shrink_to_fit();
    Ok(SymbolicSparseColMat::new_checked(
        dim, dim, col_ptr, None, row_idx,
    ))
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

/// The lower triangle `lower` laid out under the ordering `fwd` (`fwd[k]`: the original
/// unknown at position `k`) in the triangle `side`, and where each original slot lands
/// (`slot[s]`). faer's numeric factorization then reads the matrix directly instead of
/// permuting it on every call (7.7 % of a Baumgarte step on the 10³-link chain went to
/// that permutation, perf).
pub(super) fn permuted_triangle(
    lower: SymbolicSparseColMatRef<'_, usize>, fwd: &[usize], side: Side,
) -> (SymbolicSparseColMat<usize>, Vec<usize>) {
    let dim = fwd.len();
    let mut inv = vec![0usize; dim];
    for (k, &o) in fwd.iter().enumerate() {
        inv[o] = k;
    }
    let mut entries: Vec<(usize, (usize, usize))> = Vec::with_capacity(lower.compute_nnz());
    for j in 0..dim {
        let first = lower.col_ptr()[j];
        for (k, &i) in lower.row_idx_of_col_raw(j).iter().enumerate() {
            let (a, b) = (inv[i].min(inv[j]), inv[i].max(inv[j]));
            // (column, (row, original slot)) of the entry in the requested triangle.
            entries.push(match side {
                Side::Upper => (b, (a, first + k)),
                Side::Lower => (a, (b, first + k)),
            });
        }
    }
    drop(inv);
    let (p_col, sorted) = by_column(dim, &entries);
    drop(entries);
    let mut p_row = Vec::with_capacity(sorted.len());
    let mut slot = vec![0usize; sorted.len()];
    for (pos, &(r, s)) in sorted.iter().enumerate() {
        p_row.push(r);
        slot[s] = pos;
    }
    let tri = SymbolicSparseColMat::new_checked(dim, dim, p_col, None, p_row);
    (tri, slot)
}

/// `y = K x` for the symmetric `K` whose triangle `tri` holds the values `vals`.
pub(super) fn sym_mul(
    tri: SymbolicSparseColMatRef<'_, usize>, vals: &[f64], x: &[f64], y: &mut [f64],
) {
    let (col_ptr, row_idx) = (tri.col_ptr(), tri.row_idx());
    y.iter_mut().for_each(|v| *v = 0.0);
    for j in 0..tri.ncols() {
        for s in col_ptr[j]..col_ptr[j + 1] {
            let (i, v) = (row_idx[s], vals[s]);
            y[i] += v * x[j];
            if i != j {
                y[j] += v * x[i];
            }
        }
    }
}

/// The absolute row sums of the symmetric `K` whose triangle `tri` holds `vals`, into
/// `rows`; returns their maximum, `‖K‖∞`.
pub(super) fn sym_inf_norm(
    tri: SymbolicSparseColMatRef<'_, usize>, vals: &[f64], rows: &mut [f64],
) -> f64 {
    let (col_ptr, row_idx) = (tri.col_ptr(), tri.row_idx());
    rows.iter_mut().for_each(|x| *x = 0.0);
    for j in 0..tri.ncols() {
        for s in col_ptr[j]..col_ptr[j + 1] {
            let (i, a) = (row_idx[s], vals[s].abs());
            rows[i] += a;
            if i != j {
                rows[j] += a;
            }
        }
    }
    rows.iter().fold(0.0, |m: f64, &x| m.max(x))
}

/// Whether no two of `slots` coincide (then a factorization can write each value in
/// place and tell on the way whether the matrix changed).
pub(super) fn all_distinct(slots: &[&[usize]], len: usize) -> bool {
    let mut seen = vec![false; len];
    for &s in slots.iter().flat_map(|s| s.iter()) {
        if std::mem::replace(&mut seen[s], true) {
            return false;
        }
    }
    true
}
