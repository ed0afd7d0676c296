//! The Schur-complement (Delassus) route through the KKT system, for an `A` that is
//! block-diagonal with small blocks (a lumped or natural-coordinate mass matrix; seed 001
//! §3.2.5 "舒尔补", §3.9):
//!
//! ```text
//! K = [A Bᵀ; B −C]:   D = B A⁻¹ Bᵀ + C  (m × m, symmetric positive semidefinite),
//! D y = B A⁻¹ r₁ − r₂,    x = A⁻¹ (r₁ − Bᵀ y).
//! ```
//!
//! `A`'s blocks are the connected components of its pattern, each factored densely
//! ([`crate::dense::SmallLu`]); `D`'s pattern — rows of `B` that touch a common block — is
//! laid out and analysed (AMD) once, and `D` is factored by faer's sparse LDLᵀ with every
//! pivot expected positive. A rank-deficient `B` makes `D` singular: faer's dynamic
//! regularization replaces the pivots below `1e-13 · max D_ii` (counted), and the
//! caller's iterative refinement against the exact `K` decides whether the answer is
//! accurate — the same acceptance test as the saddle-point LDLᵀ, so the two routes are
//! compared on equal terms.

use super::layout;
use super::sparse::SparseLdlt;
use super::KktPattern;
use crate::dense::SmallLu;
use crate::error::SolverError;
use faer::sparse::SymbolicSparseColMat;
use faer::Par;

/// Largest block of `A` the Schur route accepts.
pub const SCHUR_MAX_BLOCK: usize = 24;

/// One diagonal block of `A`.
struct Block {
    /// Its unknowns, ascending.
    vars: Vec<usize>,
    /// `(position i, position j, slot)` of its stored lower entries.
    entries: Vec<(usize, usize, usize)>,
    /// Rows of `B` with an entry in the block, and those entries `(position, slot)`.
    rows: Vec<(usize, Vec<(usize, usize)>)>,
    lu: SmallLu,
}

/// The Schur-complement backend.
pub(super) struct Schur {
    n: usize,
    /// The lower triangle of `K` in the original order (the caller's values live in it).
    pub(super) tri: SymbolicSparseColMat<usize>,
    blocks: Vec<Block>,
    /// `(row, col, slot)` of every `B` entry.
    b: Vec<(usize, usize, usize)>,
    /// Slots of the `C` diagonal (stored as `−C`).
    c_slot: Vec<usize>,
    /// For every block, the `D` slots of its row pairs `(i, j)` (indices into the
    /// block's `rows`, i ≥ j), in the order they are accumulated.
    d_pairs: Vec<Vec<(usize, usize, usize)>>,
    /// Stored slot of `D`'s diagonal entry of each row.
    d_diag: Vec<usize>,
    d_values: Vec<f64>,
    ldlt: SparseLdlt,
    work_y: Vec<f64>,
    work_t: Vec<f64>,
    work_tp: Vec<f64>,
}

/// Connected components of `A`'s pattern (union–find).
fn components(n: usize, a_lower: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for &(i, j) in a_lower {
        let (ri, rj) = (root(&mut parent, i), root(&mut parent, j));
        if ri != rj {
            parent[ri.max(rj)] = ri.min(rj);
        }
    }
    let mut by_root: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        let r = root(&mut parent, i);
        by_root[r].push(i);
    }
    by_root.into_iter().filter(|b| !b.is_empty()).collect()
}

/// An entry `(row, column)` of `B` and its slot in `K`'s triangle.
type Slotted = (usize, usize, usize);

impl Schur {
    /// Lay out the blocks and `D`'s pattern, and analyse `D` once. `lower` is `K`'s
    /// lower triangle in the original order.
    /// `A`'s blocks (its connected components, each with its entries' slots in `K`'s
    /// triangle and the rows of `B` that touch it) and `B`'s entries with their slots;
    /// refused when a block exceeds [`SCHUR_MAX_BLOCK`].
    fn blocks(
        pattern: &KktPattern, tri: &SymbolicSparseColMat<usize>,
    ) -> Result<(Vec<Block>, Vec<Slotted>), SolverError> {
        let n = pattern.n;
        let lower = tri.as_ref();
        let slot = |i: usize, j: usize| layout::slot_of(lower, i, j);
        let comps = components(n, &pattern.a_lower);
        if let Some(big) = comps.iter().find(|b| b.len() > SCHUR_MAX_BLOCK) {
            return Err(SolverError::Pattern(format!(
                "the Schur-complement route needs A block-diagonal with blocks of at most {SCHUR_MAX_BLOCK} unknowns; A has a coupled block of {} (use kkt = \"sparse-ldlt\")",
                big.len()
            )));
        }
        let mut place = vec![(0, 0); n];
        for (k, vars) in comps.iter().enumerate() {
            for (p, &v) in vars.iter().enumerate() {
                place[v] = (k, p);
            }
        }
        let mut blocks: Vec<Block> = comps
            .into_iter()
            .map(|vars| Block {
                lu: SmallLu::new(vars.len()),
                vars,
                entries: Vec::new(),
                rows: Vec::new(),
            })
            .collect();
        for &(i, j) in &pattern.a_lower {
            let (k, pi) = place[i];
            blocks[k].entries.push((pi, place[j].1, slot(i, j)));
        }
        // Each block's diagonal, also where A's pattern leaves it out (it is then 0 and
        // the block singular, reported at factorization).
        for (i, &(k, p)) in place.iter().enumerate() {
            blocks[k].entries.push((p, p, slot(i, i)));
        }
        let mut b = Vec::with_capacity(pattern.b.len());
        for &(r, c) in &pattern.b {
            let s = slot(n + r, c);
            b.push((r, c, s));
            let (k, p) = place[c];
            let rows = &mut blocks[k].rows;
            match rows.iter_mut().find(|(row, _)| *row == r) {
                Some((_, list)) => list.push((p, s)),
                None => rows.push((r, vec![(p, s)])),
            }
        }
        Ok((blocks, b))
    }

    /// `D`'s lower pattern: every pair of rows that share a block.
    fn d_pattern(blocks: &[Block], m: usize) -> KktPattern {
        let mut d_entries = Vec::new();
        for blk in blocks {
            for (a, (ra, _)) in blk.rows.iter().enumerate() {
                for (rb, _) in &blk.rows[..=a] {
                    d_entries.push(((*ra).max(*rb), (*ra).min(*rb)));
                }
            }
        }
        KktPattern {
            n: m,
            m: 0,
            a_lower: d_entries,
            b: Vec::new(),
        }
    }

    pub(super) fn new(
        pattern: &KktPattern, tri: SymbolicSparseColMat<usize>, par: Par,
    ) -> Result<Self, SolverError> {
        let (n, m) = (pattern.n, pattern.m);
        let slot = |i: usize, j: usize| layout::slot_of(tri.as_ref(), i, j);
        let (blocks, b) = Self::blocks(pattern, &tri)?;
        let d_pattern = Self::d_pattern(&blocks, m);
        let d_lower = layout::lower_triangle(&d_pattern)?;
        let (ldlt, moved) = SparseLdlt::new(m, d_lower.as_ref(), par)?;
        let d_slot = |i: usize, j: usize| moved[layout::slot_of(d_lower.as_ref(), i, j)];
        let d_pairs = blocks
            .iter()
            .map(|blk| {
                let mut pairs = Vec::new();
                for (a, (ra, _)) in blk.rows.iter().enumerate() {
                    for (bi, (rb, _)) in blk.rows[..=a].iter().enumerate() {
                        pairs.push((a, bi, d_slot((*ra).max(*rb), (*ra).min(*rb))));
                    }
                }
                pairs
            })
            .collect();
        let d_diag = (0..m).map(|r| d_slot(r, r)).collect();
        let nnz_d = d_lower.compute_nnz();
        let c_slot = (n..n + m).map(|d| slot(d, d)).collect();
        Ok(Self {
            n,
            tri,
            blocks,
            b,
            c_slot,
            d_pairs,
            d_diag,
            d_values: vec![0.0; nnz_d],
            ldlt,
            work_y: vec![0.0; n],
            work_t: vec![0.0; m],
            work_tp: vec![0.0; m],
        })
    }

    /// Factor every block of `A` and `D = B A⁻¹ Bᵀ + C` from the values of `K`'s
    /// triangle; returns the pivots of `D` faer regularized.
    pub(super) fn factorize(&mut self, exact: &[f64], par: Par) -> Result<usize, SolverError> {
        self.d_values.iter_mut().for_each(|x| *x = 0.0);
        let mut column = Vec::new();
        let mut w: Vec<Vec<f64>> = Vec::new();
        for (k, blk) in self.blocks.iter_mut().enumerate() {
            let size = blk.vars.len();
            let mat = blk.lu.matrix_mut();
            mat.iter_mut().for_each(|x| *x = 0.0);
            for &(i, j, s) in &blk.entries {
                mat[j * size + i] = exact[s];
                mat[i * size + j] = exact[s];
            }
            blk.lu.factor().map_err(|e| {
                SolverError::Factorization(format!(
                    "block {k} of A (unknowns {:?}) is singular: {e}",
                    blk.vars
                ))
            })?;
            // W = A_k⁻¹ B_kᵀ, one column per row of B touching the block.
            w.resize(blk.rows.len(), Vec::new());
            for (col, (_, list)) in w.iter_mut().zip(&blk.rows) {
                column.clear();
                column.resize(size, 0.0);
                for &(p, s) in list {
                    column[p] = exact[s];
                }
                blk.lu.solve(&mut column);
                col.clone_from(&column);
            }
            for &(a, bi, slot) in &self.d_pairs[k] {
                let dot: f64 = blk.rows[a]
                    .1
                    .iter()
                    .map(|&(p, s)| exact[s] * w[bi][p])
                    .sum();
                self.d_values[slot] += dot;
            }
        }
        for (r, &s) in self.c_slot.iter().enumerate() {
            self.d_values[self.d_diag[r]] -= exact[s];
        }
        let scale = self
            .d_diag
            .iter()
            .map(|&s| self.d_values[s].abs())
            .fold(0.0_f64, f64::max)
            .max(f64::MIN_POSITIVE);
        let f = self
            .ldlt
            .factorize(&self.d_values, (1e-8 * scale, 1e-13 * scale), par)?;
        Ok(f.dynamic_regularizations)
    }

    /// `y ← A⁻¹ y`, block by block.
    fn apply_a_inverse(&self, y: &mut [f64]) {
        let mut local = Vec::new();
        for blk in &self.blocks {
            local.clear();
            local.extend(blk.vars.iter().map(|&v| y[v]));
            blk.lu.solve(&mut local);
            for (&v, &x) in blk.vars.iter().zip(&local) {
                y[v] = x;
            }
        }
    }

    /// Solve `K x = b` in place (`x = [r₁; r₂]` in, `[x; y]` out, original order).
    pub(super) fn solve_in_place(&mut self, x: &mut [f64], exact: &[f64], par: Par) {
        let n = self.n;
        let mut y = std::mem::take(&mut self.work_y);
        let mut t = std::mem::take(&mut self.work_t);
        y.copy_from_slice(&x[..n]);
        self.apply_a_inverse(&mut y);
        // t = B A⁻¹ r₁ − r₂, in D's stored order.
        t.iter_mut().zip(&x[n..]).for_each(|(t, r)| *t = -r);
        for &(r, c, s) in &self.b {
            t[r] += exact[s] * y[c];
        }
        let mut tp = std::mem::take(&mut self.work_tp);
        tp.iter_mut()
            .zip(&self.ldlt.fwd)
            .for_each(|(p, &o)| *p = t[o]);
        self.ldlt.solve_in_place(&mut tp, par);
        for (&o, &v) in self.ldlt.fwd.iter().zip(&tp) {
            x[n + o] = v;
        }
        self.work_tp = tp;
        // x = A⁻¹ (r₁ − Bᵀ y).
        for &(r, c, s) in &self.b {
            x[c] -= exact[s] * x[n + r];
        }
        self.apply_a_inverse(&mut x[..n]);
        self.work_y = y;
        self.work_t = t;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::super::{KktBackend, KktOptions, KktPattern, KktSolver};
    use crate::SolverError;

    fn solver(pattern: &KktPattern, backend: KktBackend) -> KktSolver {
        KktSolver::new(
            pattern,
            KktOptions {
                backend,
                ..KktOptions::default()
            },
        )
        .unwrap()
    }

    /// A chain of `n` unknowns with 2×2 mass blocks and rows `x_{i+1} − x_i`.
    fn chain(n: usize) -> (KktPattern, Vec<f64>, Vec<f64>) {
        let mut a_lower = Vec::new();
        let mut a = Vec::new();
        for k in 0..n / 2 {
            a_lower.extend([(2 * k, 2 * k), (2 * k + 1, 2 * k), (2 * k + 1, 2 * k + 1)]);
            a.extend([2.0 + k as f64, 0.5, 3.0]);
        }
        let b: Vec<(usize, usize)> = (0..n - 1).flat_map(|r| [(r, r), (r, r + 1)]).collect();
        let bv: Vec<f64> = (0..n - 1)
            .flat_map(|r| [1.0, -1.0 - 0.1 * r as f64])
            .collect();
        (
            KktPattern {
                n,
                m: n - 1,
                a_lower,
                b,
            },
            a,
            bv,
        )
    }

    #[test]
    fn schur_and_saddle_point_ldlt_agree_on_a_block_diagonal_chain() {
        let n = 40;
        let (pattern, a, b) = chain(n);
        let rhs: Vec<f64> = (0..2 * n - 1).map(|i| (0.3 * i as f64).sin()).collect();
        let mut x = Vec::new();
        for backend in [KktBackend::Schur, KktBackend::SparseLdlt] {
            let mut k = solver(&pattern, backend);
            k.factorize(&a, &b, None).unwrap();
            let mut y = rhs.clone();
            let rel = k.solve(&mut y).unwrap();
            assert!(rel <= 1e-15, "{backend:?}: relative residual {rel:e}");
            x.push(y);
        }
        let diff = x[0]
            .iter()
            .zip(&x[1])
            .fold(0.0_f64, |m, (p, q)| m.max((p - q).abs()));
        assert!(diff <= 1e-12, "Schur vs LDLᵀ differ by {diff:e}");
    }

    /// A repeated row makes D singular: faer regularizes one pivot, and a consistent
    /// right-hand side is still solved to round-off after refinement.
    #[test]
    fn a_redundant_row_is_regularized_and_a_consistent_system_still_solves() {
        let n = 6;
        let (mut pattern, a, mut b) = chain(n);
        pattern.m += 1;
        pattern.b.extend([(n - 1, 0), (n - 1, 1)]);
        b.extend([1.0, -1.0]);
        let mut k = solver(&pattern, KktBackend::Schur);
        k.factorize(&a, &b, None).unwrap();
        assert_eq!(k.stats().dynamic_regularizations, 1);
        // b₂ consistent: rows 0 and m − 1 are equal, so are their right-hand sides.
        let mut rhs: Vec<f64> = (0..n + pattern.m).map(|i| 0.1 * i as f64).collect();
        rhs[n + pattern.m - 1] = rhs[n];
        let mut y = rhs.clone();
        let rel = k.solve(&mut y).unwrap();
        assert!(rel <= 1e-14, "relative residual {rel:e}");
    }

    #[test]
    fn a_coupled_a_is_refused_with_the_block_size() {
        let n = 30;
        let pattern = KktPattern {
            n,
            m: 1,
            a_lower: (0..n)
                .flat_map(|i| [(i, i), (i, i.saturating_sub(1))])
                .collect(),
            b: vec![(0, 0)],
        };
        let e = KktSolver::new(
            &pattern,
            KktOptions {
                backend: KktBackend::Schur,
                ..KktOptions::default()
            },
        )
        .err()
        .expect("refused");
        assert!(
            matches!(e, SolverError::Pattern(ref m) if m.contains("coupled block of 30")),
            "{e}"
        );
    }
}
