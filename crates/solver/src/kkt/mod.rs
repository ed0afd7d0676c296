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
//!
//! **The shift only when needed.** The sparse backend first factors `K` itself, with a
//! strict regularization threshold (pivots below 1e-8 of the scale, or of the wrong
//! sign, count as regularized). When faer regularizes none, that factor is exact and the
//! refinement has nothing left to remove but round-off; measured on the planar chain
//! (experiments profile, medians), refinement steps per Baumgarte step fall from 2.0 to
//! 0.47 at 10⁵ links and RATTLE's step time by 0.59×. Otherwise the shifted matrix is
//! factored instead (both counted), and the attempts back off (see `Backoff`).
//! A solve whose relative residual stays above `accept` is an error
//! ([`SolverError::Inaccurate`]), which is how a rank-deficient `Φ_q` shows up.

mod layout;
mod pivoted;
mod schur;
mod sparse;
mod split;

use crate::error::SolverError;
use faer::sparse::{SymbolicSparseColMat, SymbolicSparseColMatRef};
use faer::Par;
use schur::Schur;
pub use schur::SCHUR_MAX_BLOCK;
use sparse::SparseLdlt;
use split::Blocks;

/// faer's parallelism for `threads` threads (0 and 1: sequential).
pub fn par_of(threads: usize) -> Par {
    match threads {
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
    /// The Schur complement (Delassus matrix) `D = B A⁻¹ Bᵀ + C` by sparse LDLᵀ, with `A`
    /// inverted block by block (`A` block-diagonal, blocks of at most
    /// [`SCHUR_MAX_BLOCK`] unknowns; seed 001 §3.2.5, §3.9). See `kkt/schur.rs`.
    Schur,
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
    /// faer's parallelism inside the factorization (sparse LDLᵀ and the Schur
    /// complement's; [`par_of`]). Sequential by default; a method builds it from the
    /// `threads` of the start options the runner fills from a cell.
    pub par: Par,
}

impl Default for KktOptions {
    fn default() -> Self {
        Self {
            backend: KktBackend::Auto,
            shift: 1e-12,
            max_refinement: 10,
            accept: 1e-13,
            par: Par::Seq,
        }
    }
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
    /// Pivots replaced by faer's dynamic regularization in simplicial factorizations
    /// (should stay 0; faer's supernodal path does not report them).
    pub dynamic_regularizations: usize,
    /// Factorizations skipped because the matrix equalled, bit for bit, the one whose
    /// factor was in hand (not counted in `factorizations`).
    pub reused_factorizations: usize,
    /// Of `factorizations`, those by the pivoted sparse LU that replaces the LDLᵀ when
    /// it meets a zero or non-finite pivot or its solve stalls (`kkt/pivoted.rs`).
    pub pivoted_factorizations: usize,
}

/// The factorization, and the triangle of `K` whose values the solver stores.
enum Backend {
    /// faer's sparse LDLᵀ; the triangle is laid out in its fill-reducing order.
    Sparse(Box<SparseLdlt>),
    /// Dense LU of the assembled `K`; the triangle is the lower one in the original order.
    Dense {
        tri: SymbolicSparseColMat<usize>,
        lu: crate::dense::SmallLu,
    },
    /// The Schur complement of `A`; the triangle is the lower one in the original order.
    Schur(Box<Schur>),
}

impl Backend {
    /// The stored triangle (its values are [`Single`]'s `exact`).
    fn triangle(&self) -> SymbolicSparseColMatRef<'_, usize> {
        match self {
            Backend::Sparse(s) => s.tri.as_ref(),
            Backend::Dense { tri, .. } => tri.as_ref(),
            Backend::Schur(s) => s.tri.as_ref(),
        }
    }

    /// `fwd[k]`: the original unknown at position `k` of the triangle (`None`: identity).
    fn ordering(&self) -> Option<&[usize]> {
        match self {
            Backend::Sparse(s) => Some(&s.fwd),
            Backend::Dense { .. } | Backend::Schur(_) => None,
        }
    }

    /// Solve in place with the factor in hand, `x` in the triangle's order (`exact`: the
    /// values of `K`, which the Schur route reads `B` from).
    fn solve_in_place(&mut self, x: &mut [f64], exact: &[f64], par: Par) {
        match self {
            Backend::Sparse(s) => s.solve_in_place(x, par),
            Backend::Dense { lu, .. } => lu.solve(x),
            Backend::Schur(s) => s.solve_in_place(x, exact, par),
        }
    }
}

/// The kind of the sparse factor in hand and what another factorization of the same
/// matrix needs.
#[derive(Clone, Copy, Debug)]
struct InHand {
    unshifted: bool,
    shift: f64,
    reg: (f64, f64),
}

/// A retry schedule: due now; after a failure, due again only after 2, 4, … up to 64
/// calls; a success makes it due every call again.
#[derive(Clone, Copy, Debug)]
struct Backoff {
    /// Calls to skip before the next attempt.
    wait: usize,
    /// The wait after the next failure.
    next: usize,
}

impl Default for Backoff {
    fn default() -> Self {
        Self { wait: 0, next: 2 }
    }
}

impl Backoff {
    /// Whether to attempt at this call (counts the call).
    fn due(&mut self) -> bool {
        if self.wait == 0 {
            return true;
        }
        self.wait -= 1;
        false
    }

    fn succeeded(&mut self) {
        *self = Self::default();
    }

    fn failed(&mut self) {
        self.wait = self.next - 1;
        self.next = (2 * self.next).min(64);
    }
}

/// The stored value of the entry `(n + r, n + r)` of `K`, `−C_rr` (`0.0 + …`: the value a
/// zeroed slot accumulates, −0.0 becoming +0.0).
fn c_entry(c_diag: Option<&[f64]>, r: usize) -> f64 {
    0.0 + c_diag.map_or(0.0, |c| 0.0 - c[r])
}

/// A KKT solver with a fixed pattern: build once, [`factorize`](Self::factorize) per
/// step or Newton iterate, [`solve`](Self::solve) any number of right-hand sides.
///
/// With faer threads ([`KktOptions::par`]) and a `K` that is block diagonal after
/// ordering (independent constraint groups), the groups are factored and solved side by
/// side (`kkt/split.rs`); otherwise one solver holds the whole matrix.
pub struct KktSolver {
    n: usize,
    m: usize,
    b_len: usize,
    /// The `A` entries of the pattern (for [`Self::mul_a`]) when `K` is split; one
    /// solver of the whole matrix holds them itself.
    a_lower: Vec<(usize, usize)>,
    whole: Whole,
}

/// `y = A x` for the symmetric `A` with lower entries `a_lower` of values `a_vals`.
fn sym_mul_pattern(a_lower: &[(usize, usize)], a_vals: &[f64], x: &[f64], y: &mut [f64]) {
    y.iter_mut().for_each(|v| *v = 0.0);
    for (&(i, j), &v) in a_lower.iter().zip(a_vals) {
        y[i] += v * x[j];
        if i != j {
            y[j] += v * x[i];
        }
    }
}

/// One solver for the whole `K`, or its independent groups side by side.
enum Whole {
    One(Box<Single>),
    Groups(Blocks),
}

impl KktSolver {
    /// Lay out the pattern and run the symbolic analysis (once; once per group when `K`
    /// splits).
    pub fn new(pattern: &KktPattern, opts: KktOptions) -> Result<Self, SolverError> {
        let backend = match opts.backend {
            KktBackend::Auto if pattern.n + pattern.m <= DENSE_MAX_DIM => KktBackend::DenseLu,
            KktBackend::Auto => KktBackend::SparseLdlt,
            b => b,
        };
        let (whole, a_lower) = match Blocks::try_new(pattern, opts, backend)? {
            Some(groups) => (Whole::Groups(groups), pattern.a_lower.clone()),
            None => (
                Whole::One(Box::new(Single::new(pattern, opts)?)),
                Vec::new(),
            ),
        };
        Ok(Self {
            n: pattern.n,
            m: pattern.m,
            b_len: pattern.b.len(),
            a_lower,
            whole,
        })
    }

    /// Dimension `n + m`.
    pub fn dim(&self) -> usize {
        self.n + self.m
    }

    /// Number of `B` entries of the pattern (the length of `b_vals` in
    /// [`Self::factorize`]).
    pub fn b_len(&self) -> usize {
        self.b_len
    }

    /// Independent groups factored side by side (1: the whole matrix at once).
    pub fn groups(&self) -> usize {
        match &self.whole {
            Whole::One(_) => 1,
            Whole::Groups(g) => g.len(),
        }
    }

    /// `y = A x` for the symmetric `A` block given by its lower values `a_vals`.
    pub fn mul_a(&self, a_vals: &[f64], x: &[f64], y: &mut [f64]) {
        let a_lower = match &self.whole {
            Whole::One(s) => &s.a_lower,
            Whole::Groups(_) => &self.a_lower,
        };
        sym_mul_pattern(a_lower, a_vals, x, y);
    }

    /// Counters so far (summed over the groups).
    pub fn stats(&self) -> KktStats {
        match &self.whole {
            Whole::One(s) => s.stats(),
            Whole::Groups(g) => g.stats(),
        }
    }

    /// Numeric factorization for new values of `A` (lower entries in pattern order), `B`
    /// (pattern order) and the diagonal `C` (`None` = zero).
    pub fn factorize(
        &mut self, a_vals: &[f64], b_vals: &[f64], c_diag: Option<&[f64]>,
    ) -> Result<(), SolverError> {
        match &mut self.whole {
            Whole::One(s) => s.factorize(a_vals, b_vals, c_diag),
            Whole::Groups(g) => g.factorize(a_vals, b_vals, c_diag),
        }
    }

    /// `y = K x` with the exact (unshifted) values of the last factorization.
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        match &self.whole {
            Whole::One(s) => s.mul(x, y),
            Whole::Groups(g) => g.mul(x, y),
        }
    }

    /// Solve `K x = b` in place (`rhs` = `[b_v; b_λ]` in, `[x_v; x_λ]` out) with
    /// iterative refinement; returns the final relative residual
    /// `‖b − Kx‖∞ / (‖K‖∞‖x‖∞ + ‖b‖∞)` (for groups, the largest group's).
    ///
    /// Refinement stops when that residual is at or below the rounding error of computing
    /// it, `k ε` with `k` the most entries in a row of `K` (Higham, *Accuracy and
    /// Stability of Numerical Algorithms*, 2nd ed., 2002, §3.1: a sum of `k` products
    /// carries a relative error up to `γ_k ≈ k ε`), or stops improving by half, or after
    /// `max_refinement` steps. Below `k ε` a further step only chases the noise of the
    /// residual: it cost one solve and one product per system (about a third of a
    /// Baumgarte step on the 10³-link chain) and changed nothing measurable.
    ///
    /// The whole refinement runs in the stored triangle's order: `b` is permuted in
    /// once and `x` out once.
    pub fn solve(&mut self, rhs: &mut [f64]) -> Result<f64, SolverError> {
        match &mut self.whole {
            Whole::One(s) => s.solve(rhs),
            Whole::Groups(g) => g.solve(rhs),
        }
    }
}

/// The solver of one whole `K` (see [`KktSolver`]).
///
/// It stores `K` once — the values of one triangle, in the sparse backend's fill-reducing
/// order — beside the factor; the positions `(i, j)` of the input entries are turned into
/// slots of that triangle when the solver is built and not kept, except `A`'s, which
/// [`KktSolver::mul_a`] needs.
pub(crate) struct Single {
    n: usize,
    m: usize,
    /// The `A` entries of the pattern (for [`KktSolver::mul_a`] and the scale of `A`).
    a_lower: Vec<(usize, usize)>,
    opts: KktOptions,
    par: Par,
    /// Where the input entries of `A`, of `B` and the diagonal of `C` live in the
    /// triangle.
    a_slot: Vec<usize>,
    b_slot: Vec<usize>,
    c_slot: Vec<usize>,
    /// No two input entries share a slot: values are written in place (see `assemble`).
    distinct: bool,
    /// The exact (unshifted) values of the triangle. The sparse factorization reads them
    /// with the shift subtracted on the `C` diagonal, which is written back afterwards.
    exact: Vec<f64>,
    norm_k: f64,
    /// When the sparse factorization next tries `K` unshifted.
    exact_attempt: Backoff,
    /// When the sparse backend next tries an LDLᵀ at all (after the pivoted LU had to
    /// replace it).
    ldlt_attempt: Backoff,
    /// The sparse factor in hand: whether it is of `K` unshifted, and the shift and
    /// the regularization of the last factorization, for [`Self::other_factor`].
    in_hand: Option<InHand>,
    /// The `C` diagonal while a shifted factorization runs.
    c_saved: Vec<f64>,
    /// Refinement stops once the relative residual is at most this: the rounding error
    /// of the residual itself (see [`Single::solve`]).
    target: f64,
    factorized: bool,
    backend: Backend,
    stats: KktStats,
    work_b: Vec<f64>,
    work_x: Vec<f64>,
    work_r: Vec<f64>,
}

impl Single {
    /// Lay out the pattern and run the symbolic analysis (once).
    pub fn new(pattern: &KktPattern, opts: KktOptions) -> Result<Self, SolverError> {
        let (n, m) = (pattern.n, pattern.m);
        let dim = n + m;
        let lower = layout::lower_triangle(pattern)?;
        let target = layout::residual_rounding(lower.as_ref());
        let par = opts.par;
        let mut stats = KktStats::default();
        let backend = match opts.backend {
            KktBackend::Auto if dim <= DENSE_MAX_DIM => KktBackend::DenseLu,
            KktBackend::Auto => KktBackend::SparseLdlt,
            b => b,
        };
        let (backend, moved) = match backend {
            KktBackend::SparseLdlt => {
                let (sparse, moved) = SparseLdlt::new(n, lower.as_ref(), par)?;
                stats.symbolic_analyses += 1;
                (Backend::Sparse(Box::new(sparse)), Some(moved))
            }
            KktBackend::Schur => (
                Backend::Schur(Box::new(Schur::new(pattern, lower.clone(), par)?)),
                None,
            ),
            KktBackend::DenseLu | KktBackend::Auto => (
                Backend::Dense {
                    tri: lower.clone(),
                    lu: crate::dense::SmallLu::new(dim),
                },
                None,
            ),
        };
        // Slots of the input entries in the lower triangle, then in the stored one.
        let at = |i: usize, j: usize| {
            let s = layout::slot_of(lower.as_ref(), i, j);
            moved.as_ref().map_or(s, |p| p[s])
        };
        let a_slot: Vec<usize> = pattern.a_lower.iter().map(|&(i, j)| at(i, j)).collect();
        let b_slot: Vec<usize> = pattern.b.iter().map(|&(r, c)| at(n + r, c)).collect();
        let c_slot: Vec<usize> = (n..dim).map(|d| at(d, d)).collect();
        let nnz = lower.compute_nnz();
        drop(moved);
        drop(lower);
        let distinct = layout::all_distinct(&[&a_slot, &b_slot, &c_slot], nnz);
        Ok(Self {
            n,
            m,
            a_lower: pattern.a_lower.clone(),
            opts,
            par,
            a_slot,
            b_slot,
            c_slot,
            distinct,
            exact: vec![0.0; nnz],
            norm_k: 0.0,
            exact_attempt: Backoff::default(),
            ldlt_attempt: Backoff::default(),
            in_hand: None,
            c_saved: vec![0.0; m],
            target,
            factorized: false,
            backend,
            stats,
            work_b: vec![0.0; dim],
            work_x: vec![0.0; dim],
            work_r: vec![0.0; dim],
        })
    }

    /// Counters so far.
    pub fn stats(&self) -> KktStats {
        self.stats
    }

    /// `exact` ← the values of `K`; returns whether any changed bit for bit. With
    /// distinct slots every value is written in place and compared on the way (no copy
    /// of the previous matrix is kept); otherwise the entries sharing a slot are summed
    /// and the matrix counts as changed.
    fn assemble(&mut self, a_vals: &[f64], b_vals: &[f64], c_diag: Option<&[f64]>) -> bool {
        if !self.distinct {
            self.exact.iter_mut().for_each(|x| *x = 0.0);
            for (&s, &v) in self
                .a_slot
                .iter()
                .zip(a_vals)
                .chain(self.b_slot.iter().zip(b_vals))
            {
                self.exact[s] += v;
            }
            for (r, &s) in self.c_slot.iter().enumerate() {
                self.exact[s] = c_entry(c_diag, r);
            }
            return true;
        }
        let mut changed = false;
        let mut put = |s: usize, v: f64| {
            // `0.0 + v`: the value a zeroed slot accumulates (−0.0 becomes +0.0).
            let v = 0.0 + v;
            changed |= self.exact[s].to_bits() != v.to_bits();
            self.exact[s] = v;
        };
        for (&s, &v) in self
            .a_slot
            .iter()
            .zip(a_vals)
            .chain(self.b_slot.iter().zip(b_vals))
        {
            put(s, v);
        }
        for (r, &s) in self.c_slot.iter().enumerate() {
            put(s, c_entry(c_diag, r));
        }
        changed
    }

    /// Numeric factorization for new values of `A` (lower entries in pattern order), `B`
    /// (pattern order) and the diagonal `C` (`None` = zero).
    pub fn factorize(
        &mut self, a_vals: &[f64], b_vals: &[f64], c_diag: Option<&[f64]>,
    ) -> Result<(), SolverError> {
        let had_factor = self.factorized;
        self.factorized = false;
        let in_hand = self.in_hand.take();
        let changed = self.assemble(a_vals, b_vals, c_diag);
        // The same matrix, bit for bit, as the factor in hand (RATTLE's velocity step and
        // the next step's SHAKE both factor K(q_{n+1})): keep the factor, which a new
        // factorization would reproduce exactly.
        if had_factor && !changed {
            self.in_hand = in_hand;
            self.factorized = true;
            self.stats.reused_factorizations += 1;
            return Ok(());
        }
        // max |A_ii| (a diagonal the pattern leaves out is zero).
        let scale = self
            .a_lower
            .iter()
            .zip(&self.a_slot)
            .filter(|((i, j), _)| i == j)
            .map(|(_, &s)| self.exact[s].abs())
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
        self.norm_k = layout::sym_inf_norm(self.backend.triangle(), &self.exact, &mut self.work_r);
        let shift = self.opts.shift * schur_scale;
        let reg = (
            1e-8 * scale.min(schur_scale),
            1e-14 * scale.min(schur_scale),
        );
        match &mut self.backend {
            Backend::Sparse(_) => self.factorize_sparse(shift, reg, scale.min(schur_scale))?,
            Backend::Dense { tri, lu } => {
                let dim = self.n + self.m;
                let (col_ptr, row_idx) = (tri.col_ptr(), tri.row_idx());
                let k = lu.matrix_mut();
                k.iter_mut().for_each(|x| *x = 0.0);
                for j in 0..dim {
                    for s in col_ptr[j]..col_ptr[j + 1] {
                        let i = row_idx[s];
                        k[j * dim + i] = self.exact[s];
                        k[i * dim + j] = self.exact[s];
                    }
                }
                lu.factor()?;
            }
            Backend::Schur(schur) => {
                self.stats.dynamic_regularizations += schur.factorize(&self.exact, self.par)?;
            }
        }
        self.stats.factorizations += 1;
        self.factorized = true;
        Ok(())
    }

    /// The sparse backend's numeric factorization (see [`Self::factorize`]): `K` itself
    /// first (simplicial: faer reports the pivots it regularized, the supernodal path
    /// does not): when every pivot comes out with its expected sign and above 1e-8 of the
    /// scale, that factor is exact and a solve needs no refinement against the shift.
    /// Otherwise faer has regularized a pivot, and the shifted factorization replaces the
    /// attempt, whose cost is counted; after a failed attempt the next one waits 2, 4, …
    /// up to 64 factorizations (a matrix that fails every time — generalized-α's
    /// iteration matrix on the chains, measured — then pays about 1/64 more). When the
    /// shifted LDLᵀ fails too (a zero or non-finite pivot: `A` singular or spanning many
    /// decades, `kkt/pivoted.rs`), the pivoted sparse LU factors `K`; after such a
    /// failure the LDLᵀ is skipped on the same back-off schedule.
    fn factorize_sparse(
        &mut self, shift: f64, reg: (f64, f64), min_scale: f64,
    ) -> Result<(), SolverError> {
        let Backend::Sparse(sparse) = &mut self.backend else {
            return Err(SolverError::Factorization("not the sparse backend".into()));
        };
        if !self.ldlt_attempt.due() {
            return self.factorize_pivoted();
        }
        let strict = (reg.0, 1e-8 * min_scale);
        let attempt = !sparse.is_supernodal() && self.exact_attempt.due();
        let first = attempt.then(|| sparse.factorize(&self.exact, strict, self.par));
        let done = match first {
            Some(Ok(f)) if f.dynamic_regularizations == 0 => {
                self.exact_attempt.succeeded();
                self.in_hand = Some(InHand {
                    unshifted: true,
                    shift,
                    reg,
                });
                f
            }
            first => {
                if let Some(Ok(_)) = &first {
                    self.stats.factorizations += 1;
                }
                if attempt {
                    self.exact_attempt.failed();
                }
                match self.factorize_shifted(shift, reg) {
                    Ok(f) => {
                        self.in_hand = Some(InHand {
                            unshifted: false,
                            shift,
                            reg,
                        });
                        f
                    }
                    Err(_) => {
                        // The failed attempt's cost is counted like the first's.
                        self.stats.factorizations += 1;
                        self.ldlt_attempt.failed();
                        return self.factorize_pivoted();
                    }
                }
            }
        };
        self.ldlt_attempt.succeeded();
        self.stats.supernodal_factorizations += usize::from(done.supernodal);
        Ok(())
    }

    /// `K` by the pivoted sparse LU (the sparse backend's fallback, `kkt/pivoted.rs`).
    fn factorize_pivoted(&mut self) -> Result<(), SolverError> {
        let Backend::Sparse(sparse) = &mut self.backend else {
            return Err(SolverError::Factorization("not the sparse backend".into()));
        };
        self.in_hand = None;
        sparse.factorize_pivoted(&self.exact, self.par)?;
        self.stats.pivoted_factorizations += 1;
        Ok(())
    }

    /// After a solve that stalled with the LDLᵀ factor(s): the pivoted LU of the same
    /// matrix replaces them, once per factorization. False when it is already in hand,
    /// the backend is not sparse, or the LU fails.
    fn pivoted_factor(&mut self) -> bool {
        match &self.backend {
            Backend::Sparse(s) if !s.pivoted_in_hand() => {}
            _ => return false,
        }
        self.stats.factorizations += 1;
        self.ldlt_attempt.failed();
        self.factorized = self.factorize_pivoted().is_ok();
        self.factorized
    }

    /// Replace the sparse factor in hand by the other kind, once per factorization: an
    /// unshifted factor by the shifted one; a shifted factor by `K` unshifted with
    /// faer's regularization of the pivots that need it. False when there is none to
    /// try (dense backend, supernodal, already tried) or it fails.
    fn other_factor(&mut self) -> bool {
        let Some(h) = self.in_hand.take() else {
            return false;
        };
        let Backend::Sparse(sparse) = &mut self.backend else {
            return false;
        };
        if sparse.is_supernodal() {
            return false;
        }
        self.stats.factorizations += 1;
        self.factorized = false;
        if h.unshifted {
            self.exact_attempt.failed();
            self.factorized = self.factorize_shifted(h.shift, h.reg).is_ok();
        } else {
            // `K` unshifted with faer's sign-aware regularization of the pivots that
            // need it (the shift on those pivots only).
            let exact = sparse.factorize(&self.exact, h.reg, self.par);
            if let Ok(f) = &exact {
                self.stats.dynamic_regularizations += f.dynamic_regularizations;
            }
            self.factorized = exact.is_ok();
        }
        self.factorized
    }

    /// The sparse factorization of `K` with `shift` subtracted on the `C` diagonal (the
    /// quasi-definite matrix, see the module doc); `exact` holds `K` again afterwards.
    fn factorize_shifted(
        &mut self, shift: f64, reg: (f64, f64),
    ) -> Result<sparse::Factored, SolverError> {
        let Backend::Sparse(sparse) = &mut self.backend else {
            return Err(SolverError::Factorization(
                "a shifted factorization needs the sparse backend".into(),
            ));
        };
        for (saved, &s) in self.c_saved.iter_mut().zip(&self.c_slot) {
            *saved = self.exact[s];
            self.exact[s] -= shift;
        }
        let done = sparse.factorize(&self.exact, reg, self.par);
        // The C diagonal as it was, bit for bit.
        for (&saved, &s) in self.c_saved.iter().zip(&self.c_slot) {
            self.exact[s] = saved;
        }
        let done = done?;
        self.stats.dynamic_regularizations += done.dynamic_regularizations;
        Ok(done)
    }

    /// `y = K x` with the exact (unshifted) values of the last factorization.
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        let tri = self.backend.triangle();
        match self.backend.ordering() {
            None => layout::sym_mul(tri, &self.exact, x, y),
            Some(fwd) => {
                let xp: Vec<f64> = fwd.iter().map(|&o| x[o]).collect();
                let mut yp = vec![0.0; xp.len()];
                layout::sym_mul(tri, &self.exact, &xp, &mut yp);
                for (&o, &v) in fwd.iter().zip(&yp) {
                    y[o] = v;
                }
            }
        }
    }

    /// [`KktSolver::solve`] on the whole matrix (its doc gives the stopping rule).
    pub fn solve(&mut self, rhs: &mut [f64]) -> Result<f64, SolverError> {
        if !self.factorized {
            return Err(SolverError::NotFactorized);
        }
        if let Some((index, &value)) = rhs.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(SolverError::NonFiniteRhs { index, value });
        }
        let mut b = std::mem::take(&mut self.work_b);
        let mut x = std::mem::take(&mut self.work_x);
        let mut r = std::mem::take(&mut self.work_r);
        match self.backend.ordering() {
            Some(fwd) => b.iter_mut().zip(fwd).for_each(|(y, &o)| *y = rhs[o]),
            None => b.copy_from_slice(rhs),
        }
        x.copy_from_slice(&b);
        let mut outcome = self.refine(&b, &mut x, &mut r);
        // A non-finite x fails too: the norms skip NaN (f64::max), so its residual can
        // read small.
        let accept = self.opts.accept;
        let failed =
            |rel: f64, x: &[f64]| rel.is_nan() || rel > accept || x.iter().any(|v| !v.is_finite());
        if failed(outcome.0, &x) && self.other_factor() {
            // The refinement stalled above `accept` with the factor in hand: the other
            // kind replaces it for this and later solves with this matrix (measured: the
            // falling spatial chain at 10⁵ links, h = 1e-3, stalls at 1.2e-12 with the
            // shifted factor at t = 0.017 and reaches `accept` with the other).
            x.copy_from_slice(&b);
            outcome = self.refine(&b, &mut x, &mut r);
        }
        // The pivoted LU only for a non-finite x (a zero or overflowing pivot of the
        // LDLᵀ): an inaccurate finite x is the sign of a singular K (redundant rows, the
        // Bricard mechanism), which the LU would "solve" into garbage that diverges later
        // instead of failing here with the residual and the rank.
        let finite = |x: &[f64]| x.iter().all(|v| v.is_finite());
        if !finite(&x) && self.pivoted_factor() {
            x.copy_from_slice(&b);
            outcome = self.refine(&b, &mut x, &mut r);
        }
        match self.backend.ordering() {
            Some(fwd) => fwd.iter().zip(&x).for_each(|(&o, &y)| rhs[o] = y),
            None => rhs.copy_from_slice(&x),
        }
        self.work_b = b;
        self.work_x = x;
        self.work_r = r;
        let (rel, refinements) = outcome;
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

    /// `x` ← the refined solution of `K x = b` (both in the triangle's order; `x` holds
    /// `b` on entry), `r` the residual scratch; returns the relative residual and the
    /// refinement steps taken (see [`Self::solve`]).
    fn refine(&mut self, b: &[f64], x: &mut [f64], r: &mut [f64]) -> (f64, usize) {
        let norm_b = b.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        self.backend.solve_in_place(x, &self.exact, self.par);
        self.stats.solves += 1;
        let mut rel = f64::INFINITY;
        let mut refinements = 0;
        loop {
            layout::sym_mul(self.backend.triangle(), &self.exact, x, r);
            for (ri, bi) in r.iter_mut().zip(b) {
                *ri = bi - *ri;
            }
            let norm_x = x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
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
            self.backend.solve_in_place(r, &self.exact, self.par);
            self.stats.solves += 1;
            for (xi, d) in x.iter_mut().zip(r.iter()) {
                *xi += d;
            }
            refinements += 1;
        }
        self.stats.refinement_steps += refinements;
        (rel, refinements)
    }
}

#[cfg(test)]
mod tests {
    use super::{Backoff, KktBackend, KktOptions, KktPattern, Single};

    /// The replacement a stalled solve falls back to: an unshifted factor gives way to
    /// the shifted one and a shifted one to `K` unshifted with faer's regularization,
    /// each once per factorization, counted, and either solves the chain to round-off.
    #[test]
    fn the_other_factor_replaces_the_one_in_hand_once_and_still_solves() {
        let n = 60;
        let pattern = KktPattern {
            n,
            m: n - 1,
            a_lower: (0..n).map(|i| (i, i)).collect(),
            b: (0..n - 1).flat_map(|r| [(r, r), (r, r + 1)]).collect(),
        };
        let opts = KktOptions {
            backend: KktBackend::SparseLdlt,
            ..KktOptions::default()
        };
        let mut kkt = Single::new(&pattern, opts).expect("solver");
        let mass: Vec<f64> = (0..n).map(|i| 1.0 + (i % 3) as f64).collect();
        let jac: Vec<f64> = (0..n - 1).flat_map(|_| [1.0, -1.0]).collect();
        let b: Vec<f64> = (0..2 * n - 1).map(|i| (i as f64).cos()).collect();
        // Round 1: the unshifted factor is in hand. Round 2 (a changed matrix): the
        // replacement's failed attempt makes the back-off skip this call, so the shifted
        // factor is in hand.
        let mass2: Vec<f64> = mass.iter().map(|m| m * 1.5).collect();
        for (masses, unshifted) in [(&mass, true), (&mass2, false)] {
            kkt.factorize(masses, &jac, None).expect("factor");
            let in_hand = kkt.in_hand.expect("a sparse factor in hand");
            assert_eq!(in_hand.unshifted, unshifted);
            let count = kkt.stats().factorizations;
            assert!(kkt.other_factor(), "the other kind factors");
            assert_eq!(kkt.stats().factorizations, count + 1);
            assert!(!kkt.other_factor(), "once per factorization");
            let mut x = b.clone();
            let rel = kkt.solve(&mut x).expect("solve");
            assert!(rel <= 1e-15, "relative residual {rel:e}");
        }
    }

    #[test]
    fn backoff_attempts_at_calls_1_3_7_15_31_63_then_every_64th() {
        let mut b = Backoff::default();
        let mut attempts = Vec::new();
        for call in 1..=300 {
            if b.due() {
                attempts.push(call);
                b.failed();
            }
        }
        assert_eq!(attempts, vec![1, 3, 7, 15, 31, 63, 127, 191, 255]);
        b.succeeded();
        assert!(b.due() && b.due(), "after a success every call attempts");
    }
}
