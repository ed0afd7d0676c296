//! Independent groups of a KKT matrix, factored and solved side by side (seed 001,
//! parallelism over independent constraint groups).
//!
//! When the graph of `K` (an edge for every stored entry of `A` and `B`) falls into
//! several connected components, `K` is block diagonal after a symmetric permutation:
//!
//! ```text
//!   P K Pᵀ = diag(K₁, K₂, …, K_g),    K_b = ⎡ A_b  B_bᵀ ⎤
//!                                           ⎣ B_b  −C_b ⎦
//! ```
//!
//! and `K x = b` is `g` independent systems `K_b x_b = b_b`. Several mechanisms stepped as
//! one system (the `copies` problem parameter), a robot whose limbs' loops do not couple,
//! or an ensemble all have this form. With faer threads inside the cell (`KktOptions::par`
//! of two threads or more), the components are dealt into as many parts as threads,
//! balanced by their stored entries, and each part is a sequential [`Single`] solver of
//! its own (its own ordering, shift and refinement): the factorizations and the solves of
//! the parts run on the cell's rayon pool at the same time. Each part's refinement is
//! held to `accept` on its own rows, which implies it for the whole (the whole residual is
//! the largest part's over norms at least as large); it is stricter, so a nearly singular
//! group beside a well-scaled one may fail here where the whole solve passes. Shifts and
//! regularization thresholds are each part's own, and the counters are summed over the
//! parts (two parts: two symbolic analyses, and a factorization counted per part).

use super::{KktBackend, KktOptions, KktPattern, KktStats, Single};
use crate::error::SolverError;
use faer::Par;

/// One part: a sequential solver over some components, and where its entries live in
/// the whole pattern.
struct Part {
    solver: Single,
    /// Indices into the whole `a_vals` of this part's `A` entries, in its pattern order.
    a_of: Vec<usize>,
    /// Indices into the whole `b_vals`.
    b_of: Vec<usize>,
    /// The whole system's unknowns of this part: its velocity unknowns, then its
    /// multipliers as `n + r`.
    unknowns: Vec<usize>,
    /// This part's constraint rows in the whole system (for the `C` diagonal).
    rows: Vec<usize>,
    a_buf: Vec<f64>,
    b_buf: Vec<f64>,
    c_buf: Vec<f64>,
    x_buf: Vec<f64>,
}

/// The parts of a block-diagonal `K`, stepped side by side.
pub(crate) struct Blocks {
    parts: Vec<Part>,
}

/// Union–find root of `i` (path halving).
fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// The connected component of each of the `n + m` unknowns (labels `0 … count`), and
/// each component's stored entries.
fn components(p: &KktPattern) -> (Vec<usize>, Vec<usize>) {
    let dim = p.n + p.m;
    let mut parent: Vec<usize> = (0..dim).collect();
    let edges = p
        .a_lower
        .iter()
        .copied()
        .chain(p.b.iter().map(|&(r, c)| (p.n + r, c)));
    for (i, j) in edges {
        let (ri, rj) = (root(&mut parent, i), root(&mut parent, j));
        if ri != rj {
            parent[ri.max(rj)] = ri.min(rj);
        }
    }
    let mut label = vec![usize::MAX; dim];
    let mut of = vec![0; dim];
    let mut weight = Vec::new();
    for i in 0..dim {
        let r = root(&mut parent, i);
        if label[r] == usize::MAX {
            label[r] = weight.len();
            weight.push(0);
        }
        of[i] = label[r];
        weight[of[i]] += 1;
    }
    for &(i, _) in &p.a_lower {
        weight[of[i]] += 1;
    }
    for &(r, _) in &p.b {
        weight[of[p.n + r]] += 1;
    }
    (of, weight)
}

/// Deal the components, in the order of their first unknown, into at most `parts` runs
/// of about equal weight (component `c` goes to bin ⌊parts · W_c / W⌋, `W_c` the weight
/// before it); returns each component's bin, the bins numbered 0 … without gaps. Runs
/// keep the copies of one problem contiguous, so a part borrows its values as slices.
fn deal(weight: &[usize], parts: usize) -> Vec<usize> {
    let total = weight.iter().sum::<usize>().max(1);
    let mut before = 0;
    let mut bin: Vec<usize> = weight
        .iter()
        .map(|&w| {
            let b = (parts * before / total).min(parts - 1);
            before += w;
            b
        })
        .collect();
    // Renumber without gaps (a heavy component may skip a bin).
    let mut next = 0;
    let mut last = None;
    for b in bin.iter_mut() {
        if last != Some(*b) {
            last = Some(*b);
            next += 1;
        }
        *b = next - 1;
    }
    bin
}

impl Blocks {
    /// The parts of `pattern` when it splits: faer threads ≥ 2, a sparse backend, and at
    /// least two components, each with a velocity unknown. `None` otherwise.
    pub(crate) fn try_new(
        pattern: &KktPattern, opts: KktOptions, backend: KktBackend,
    ) -> Result<Option<Self>, SolverError> {
        let threads = match opts.par {
            Par::Seq => 1,
            par => par.degree(),
        };
        if threads < 2 || !matches!(backend, KktBackend::SparseLdlt | KktBackend::Schur) {
            return Ok(None);
        }
        super::layout::check(pattern)?;
        let (of, weight) = components(pattern);
        let count = weight.len();
        // Every component needs a velocity unknown and a constraint row (a part of
        // either kind alone is not a KKT system the backends take).
        let (mut has_v, mut has_row) = (vec![false; count], vec![false; count]);
        of[..pattern.n].iter().for_each(|&c| has_v[c] = true);
        of[pattern.n..].iter().for_each(|&c| has_row[c] = true);
        if count < 2 || has_v.iter().zip(&has_row).any(|(&v, &r)| !(v && r)) {
            return Ok(None);
        }
        let bin = deal(&weight, threads.min(count));
        let bins = bin.iter().max().map_or(1, |b| b + 1);
        if bins < 2 {
            return Ok(None);
        }
        let part_opts = KktOptions {
            backend,
            par: Par::Seq,
            ..opts
        };
        // Each part's symbolic analysis (AMD ordering) side by side too.
        use rayon::prelude::*;
        let parts = (0..bins)
            .into_par_iter()
            .map(|b| Part::new(pattern, &of, &bin, b, part_opts))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(Self { parts }))
    }

    /// The number of parts.
    pub(crate) fn len(&self) -> usize {
        self.parts.len()
    }

    /// Counters, summed over the parts.
    pub(crate) fn stats(&self) -> KktStats {
        self.parts.iter().fold(KktStats::default(), |s, p| {
            let q = p.solver.stats();
            KktStats {
                symbolic_analyses: s.symbolic_analyses + q.symbolic_analyses,
                factorizations: s.factorizations + q.factorizations,
                supernodal_factorizations: s.supernodal_factorizations
                    + q.supernodal_factorizations,
                solves: s.solves + q.solves,
                refinement_steps: s.refinement_steps + q.refinement_steps,
                dynamic_regularizations: s.dynamic_regularizations + q.dynamic_regularizations,
                reused_factorizations: s.reused_factorizations + q.reused_factorizations,
                pivoted_factorizations: s.pivoted_factorizations + q.pivoted_factorizations,
            }
        })
    }

    /// Every part's numeric factorization, side by side.
    pub(crate) fn factorize(
        &mut self, a_vals: &[f64], b_vals: &[f64], c_diag: Option<&[f64]>,
    ) -> Result<(), SolverError> {
        use rayon::prelude::*;
        // Every part's outcome, then the first failure by part: the same error whichever
        // thread finished first.
        let outcomes: Vec<Result<(), SolverError>> = self
            .parts
            .par_iter_mut()
            .map(|p| p.factorize(a_vals, b_vals, c_diag))
            .collect();
        outcomes.into_iter().collect()
    }

    /// Solve `K x = b` in place part by part, side by side; the largest part residual.
    pub(crate) fn solve(&mut self, rhs: &mut [f64]) -> Result<f64, SolverError> {
        use rayon::prelude::*;
        let shared: &[f64] = rhs;
        let outcomes: Vec<Result<f64, SolverError>> =
            self.parts.par_iter_mut().map(|p| p.solve(shared)).collect();
        let mut rel = 0.0_f64;
        for outcome in outcomes {
            rel = rel.max(outcome?);
        }
        for p in &self.parts {
            for (&u, &x) in p.unknowns.iter().zip(&p.x_buf) {
                rhs[u] = x;
            }
        }
        Ok(rel)
    }

    /// `y = K x` part by part.
    pub(crate) fn mul(&self, x: &[f64], y: &mut [f64]) {
        for p in &self.parts {
            let xp: Vec<f64> = p.unknowns.iter().map(|&u| x[u]).collect();
            let mut yp = vec![0.0; xp.len()];
            p.solver.mul(&xp, &mut yp);
            for (&u, &v) in p.unknowns.iter().zip(&yp) {
                y[u] = v;
            }
        }
    }
}

impl Part {
    /// The part of `pattern` made of the components dealt to bin `b`.
    fn new(
        pattern: &KktPattern, of: &[usize], bin: &[usize], b: usize, opts: KktOptions,
    ) -> Result<Self, SolverError> {
        let n = pattern.n;
        let mine = |u: usize| bin[of[u]] == b;
        let velocities: Vec<usize> = (0..n).filter(|&u| mine(u)).collect();
        let rows: Vec<usize> = (0..pattern.m).filter(|&r| mine(n + r)).collect();
        let mut local = vec![usize::MAX; n + pattern.m];
        for (k, &u) in velocities.iter().enumerate() {
            local[u] = k;
        }
        for (k, &r) in rows.iter().enumerate() {
            local[n + r] = k;
        }
        let a_of: Vec<usize> = (0..pattern.a_lower.len())
            .filter(|&k| mine(pattern.a_lower[k].0))
            .collect();
        let b_of: Vec<usize> = (0..pattern.b.len())
            .filter(|&k| mine(n + pattern.b[k].0))
            .collect();
        let sub = KktPattern {
            n: velocities.len(),
            m: rows.len(),
            a_lower: a_of
                .iter()
                .map(|&k| (local[pattern.a_lower[k].0], local[pattern.a_lower[k].1]))
                .collect(),
            b: b_of
                .iter()
                .map(|&k| (local[n + pattern.b[k].0], local[pattern.b[k].1]))
                .collect(),
        };
        let unknowns: Vec<usize> = velocities
            .iter()
            .copied()
            .chain(rows.iter().map(|&r| n + r))
            .collect();
        Ok(Self {
            solver: Single::new(&sub, opts)?,
            a_buf: vec![0.0; a_of.len()],
            b_buf: vec![0.0; b_of.len()],
            c_buf: vec![0.0; rows.len()],
            x_buf: vec![0.0; unknowns.len()],
            a_of,
            b_of,
            unknowns,
            rows,
        })
    }

    fn factorize(
        &mut self, a_vals: &[f64], b_vals: &[f64], c_diag: Option<&[f64]>,
    ) -> Result<(), SolverError> {
        let a = pick(&mut self.a_buf, a_vals, &self.a_of);
        let b = pick(&mut self.b_buf, b_vals, &self.b_of);
        let c = c_diag.map(|c| pick(&mut self.c_buf, c, &self.rows));
        self.solver.factorize(a, b, c)
    }

    /// Solve this part's rows of `K x = rhs` into `x_buf`; errors name whole-system
    /// indices.
    fn solve(&mut self, rhs: &[f64]) -> Result<f64, SolverError> {
        gather(&mut self.x_buf, rhs, &self.unknowns);
        let global = |i: usize| self.unknowns.get(i).copied().unwrap_or(i);
        self.solver.solve(&mut self.x_buf).map_err(|e| match e {
            SolverError::NonFiniteRhs { index, value } => SolverError::NonFiniteRhs {
                index: global(index),
                value,
            },
            SolverError::NonFiniteSolution { index, value } => SolverError::NonFiniteSolution {
                index: global(index),
                value,
            },
            e => e,
        })
    }
}

/// `from[index]`: a slice of `from` when `index` is a run of consecutive indices (the
/// copies of one problem stack their entries so), else gathered into `buf`.
fn pick<'a>(buf: &'a mut [f64], from: &'a [f64], index: &[usize]) -> &'a [f64] {
    match (index.first(), index.last()) {
        (Some(&first), Some(&last)) if last - first + 1 == index.len() => &from[first..=last],
        (None, _) | (_, None) => &from[..0],
        _ => {
            gather(buf, from, index);
            buf
        }
    }
}

/// `out[k] = from[index[k]]`.
fn gather(out: &mut [f64], from: &[f64], index: &[usize]) {
    for (o, &i) in out.iter_mut().zip(index) {
        *o = from[i];
    }
}
