//! Fixed sparsity patterns: a matrix is described once by the positions of its stored
//! entries; values are then delivered per evaluation in the same order.

/// The positions of the stored entries of a sparse matrix, in a fixed order.
///
/// Values are exchanged as a slice `vals` with `vals[k]` the entry at `entries[k]`.
/// Repeated positions are allowed and are summed. For symmetric matrices (the mass
/// matrix) only the **lower triangle** (`row >= col`) is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparsityPattern {
    /// Number of rows.
    pub nrows: usize,
    /// Number of columns.
    pub ncols: usize,
    /// `(row, col)` of each stored entry.
    pub entries: Vec<(usize, usize)>,
}

impl SparsityPattern {
    /// A pattern from its entries.
    pub fn new(nrows: usize, ncols: usize, entries: Vec<(usize, usize)>) -> Self {
        Self {
            nrows,
            ncols,
            entries,
        }
    }

    /// The diagonal pattern of an `n × n` matrix.
    pub fn diagonal(n: usize) -> Self {
        Self::new(n, n, (0..n).map(|i| (i, i)).collect())
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.entries.len()
    }

    /// Dense row-major copy of `vals` laid out by this pattern (duplicates summed).
    /// If `symmetric_lower`, the strict lower entries are mirrored to the upper triangle.
    pub fn to_dense(&self, vals: &[f64], symmetric_lower: bool) -> Vec<f64> {
        let mut d = vec![0.0; self.nrows * self.ncols];
        for (&(i, j), &v) in self.entries.iter().zip(vals) {
            d[i * self.ncols + j] += v;
            if symmetric_lower && i != j {
                d[j * self.ncols + i] += v;
            }
        }
        d
    }

    /// `y = A x` (or, when `symmetric_lower`, `y = (L + Lᵀ − diag) x`).
    pub fn mul_vec(&self, vals: &[f64], x: &[f64], y: &mut [f64], symmetric_lower: bool) {
        y.iter_mut().for_each(|yi| *yi = 0.0);
        for (&(i, j), &v) in self.entries.iter().zip(vals) {
            y[i] += v * x[j];
            if symmetric_lower && i != j {
                y[j] += v * x[i];
            }
        }
    }

    /// `y = Aᵀ x`.
    pub fn mul_transpose_vec(&self, vals: &[f64], x: &[f64], y: &mut [f64]) {
        y.iter_mut().for_each(|yi| *yi = 0.0);
        for (&(i, j), &v) in self.entries.iter().zip(vals) {
            y[j] += v * x[i];
        }
    }
}

/// A pattern's entries kept for products only, in 32-bit indices when they fit: half the
/// memory of `(usize, usize)` pairs (32 bytes per link of the planar chain's Φ_q, which
/// the metrics hold beside the method's own copy).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ProductPattern {
    /// Every index fits in `u32`.
    Compact(Vec<(u32, u32)>),
    /// Some index does not.
    Full(SparsityPattern),
}

impl ProductPattern {
    /// The entries of `p`, compact when its dimensions allow.
    pub(crate) fn new(p: SparsityPattern) -> Self {
        let fits = u32::try_from(p.nrows.max(p.ncols)).is_ok();
        if !fits {
            return Self::Full(p);
        }
        // Every entry lies inside the dimensions, so the casts are exact.
        Self::Compact(
            p.entries
                .iter()
                .map(|&(i, j)| (i as u32, j as u32))
                .collect(),
        )
    }

    /// `y = A x` (A given by its values `vals` in entry order).
    pub fn mul_vec(&self, vals: &[f64], x: &[f64], y: &mut [f64]) {
        match self {
            Self::Full(p) => p.mul_vec(vals, x, y, false),
            Self::Compact(entries) => {
                y.iter_mut().for_each(|yi| *yi = 0.0);
                for (&(i, j), &v) in entries.iter().zip(vals) {
                    y[i as usize] += v * x[j as usize];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_lower_product_mirrors_off_diagonal() {
        let p = SparsityPattern::new(2, 2, vec![(0, 0), (1, 0), (1, 1)]);
        let vals = [2.0, 1.0, 3.0];
        let mut y = [0.0; 2];
        p.mul_vec(&vals, &[1.0, 1.0], &mut y, true);
        assert!(y.iter().zip([3.0, 4.0]).all(|(a, b)| (a - b).abs() < 1e-15));
        let d = p.to_dense(&vals, true);
        assert!(d
            .iter()
            .zip([2.0, 1.0, 1.0, 3.0])
            .all(|(a, b)| (a - b).abs() < 1e-15));
    }
}
