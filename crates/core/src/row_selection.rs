//! [`RowSelection`]: some rows of a problem's constraint function and the Jacobian pattern
//! restricted to them — what a problem that presents a subset of another's rows needs
//! (redundant rows removed; the rows one treatment of `typed` handles).

use crate::SparsityPattern;

/// Rows `rows` (ascending) of an `m_full`-row constraint function with Jacobian pattern
/// `full`, and the pattern of those rows renumbered `0 … rows.len()`.
#[derive(Clone, Debug)]
pub struct RowSelection {
    rows: Vec<usize>,
    m_full: usize,
    full_nnz: usize,
    pattern: SparsityPattern,
    /// For each kept Jacobian entry, its index in the full pattern.
    take: Vec<usize>,
}

impl RowSelection {
    /// The rows `rows` (ascending, each `< full.nrows`) of the pattern `full`.
    pub fn new(full: &SparsityPattern, rows: Vec<usize>) -> Self {
        let mut new_row = vec![None; full.nrows];
        for (k, &r) in rows.iter().enumerate() {
            new_row[r] = Some(k);
        }
        let (mut entries, mut take) = (Vec::new(), Vec::new());
        for (e, &(r, c)) in full.entries.iter().enumerate() {
            if let Some(k) = new_row[r] {
                entries.push((k, c));
                take.push(e);
            }
        }
        Self {
            pattern: SparsityPattern::new(rows.len(), full.ncols, entries),
            m_full: full.nrows,
            full_nnz: full.nnz(),
            rows,
            take,
        }
    }

    /// The selected rows of the full function, ascending.
    pub fn rows(&self) -> &[usize] {
        &self.rows
    }

    /// Rows of the full function.
    pub fn full_rows(&self) -> usize {
        self.m_full
    }

    /// The Jacobian pattern of the selected rows.
    pub fn pattern(&self) -> &SparsityPattern {
        &self.pattern
    }

    /// `out[k] = full[rows[k]]`, `full` filled by `f` (length `m_full`).
    pub fn select(&self, out: &mut [f64], f: impl FnOnce(&mut [f64])) {
        let mut full = vec![0.0; self.m_full];
        f(&mut full);
        for (o, &r) in out.iter_mut().zip(&self.rows) {
            *o = full[r];
        }
    }

    /// The selected rows' Jacobian values, the full values filled by `f`.
    pub fn select_jacobian(&self, out: &mut [f64], f: impl FnOnce(&mut [f64])) {
        let mut full = vec![0.0; self.full_nnz];
        f(&mut full);
        for (o, &e) in out.iter_mut().zip(&self.take) {
            *o = full[e];
        }
    }
}
