//! Several independent copies of a mechanism stepped as **one** system, through the
//! reserved problem parameter `copies = k` (issue 30; seed 001 "并行化：独立约束组并行求解"):
//!
//! ```text
//!   q = (q⁽¹⁾, …, q⁽ᵏ⁾),   M = diag(M⁽¹⁾, …, M⁽ᵏ⁾),   Φ = (Φ⁽¹⁾, …, Φ⁽ᵏ⁾),
//!   Φ_q = diag(Φ_q⁽¹⁾, …, Φ_q⁽ᵏ⁾),   H = Σ_c H⁽ᶜ⁾,
//! ```
//!
//! every copy the same problem with the same start. The KKT matrix is then block diagonal
//! after ordering: `k` independent constraint groups. With threads inside the cell
//! ([`MechanicalSystem::use_threads`] ≥ 2, stated by the time loop) the model functions run copy by copy
//! on the cell's pool, and the KKT solver factors and solves the groups side by side
//! (`driftlab-solver`'s `kkt/split.rs`); with one thread, everything runs as for one
//! large system. The exact solution, where the problem has one, is every copy's; a
//! published reference (a Test Set end state) is not carried over. Problems with
//! nonholonomic, unilateral or prioritized rows are refused (their rows have an order
//! that a stacking would break).

use crate::entry::Problem;
use driftlab_core::{
    ConstraintHessian, Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo,
    ReferenceDomain, SparsityPattern, State, TangentMatrices,
};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The reserved parameter name.
pub const KEY: &str = "copies";

/// The most copies a spec may ask for.
pub const MAX_COPIES: i64 = 1 << 20;

/// Take `copies` out of a problem's parameter table: `None` when absent or 1.
pub fn split(id: &str, params: &mut toml::Table) -> Result<Option<usize>, ParamError> {
    let Some(value) = params.remove(KEY) else {
        return Ok(None);
    };
    let k = value.as_integer().ok_or_else(|| ParamError::Invalid {
        kind: "problem",
        id: id.to_string(),
        message: format!("`copies` = {value}: give an integer number of copies, 1 … {MAX_COPIES}"),
    })?;
    if !(1..=MAX_COPIES).contains(&k) {
        return Err(ParamError::OutOfRange {
            id: id.to_string(),
            field: "copies",
            value: k as f64,
            fix: format!("give 1 … {MAX_COPIES} copies"),
        });
    }
    Ok((k > 1).then_some(k as usize))
}

/// `problem` as `k` independent copies of itself.
pub fn apply(id: &str, problem: Problem, k: usize) -> Result<Problem, ParamError> {
    let refuse = |why: &str| ParamError::Invalid {
        kind: "problem",
        id: id.to_string(),
        message: format!(
            "`copies` stacks holonomic systems only; this problem has {why} (remove `copies`)"
        ),
    };
    let problem_form = |p: &Problem| p.as_system().form().name();
    let Problem::Mechanical(inner) = problem else {
        return Err(refuse(&format!("the {} form", problem_form(&problem))));
    };
    if inner.nonholonomic_rows() > 0 {
        return Err(refuse("nonholonomic rows"));
    }
    if inner.unilateral().is_some() {
        return Err(refuse("unilateral rows"));
    }
    if inner.prioritized().is_some() {
        return Err(refuse("prioritized rows"));
    }
    let sizes = Sizes {
        dims: inner.dims(),
        mass: inner.mass_pattern().entries.len(),
        jacobian: inner.jacobian_pattern().entries.len(),
        hessian: inner
            .constraint_hessian()
            .map_or(0, |h| h.pattern().entries.len()),
        tangent: inner.tangent().map_or(0, |t| t.pattern().entries.len()),
    };
    Ok(Problem::Mechanical(Box::new(Copies {
        inner,
        k,
        sizes,
        threads: AtomicUsize::new(1),
    })))
}

/// The inner problem's lengths, per copy.
struct Sizes {
    dims: Dims,
    mass: usize,
    jacobian: usize,
    hessian: usize,
    tangent: usize,
}

/// `k` copies of `inner` (see the module doc).
struct Copies {
    inner: Box<dyn MechanicalSystem>,
    k: usize,
    sizes: Sizes,
    /// The running cell's threads ([`MechanicalSystem::use_threads`]; 1 until stated).
    threads: AtomicUsize,
}

/// `f(c, out_c)` for every copy `c`, `out` cut into chunks of `len`: side by side on the
/// current pool when the cell has `threads` ≥ 2, in order otherwise.
fn each_copy<F>(threads: usize, out: &mut [f64], len: usize, f: F)
where
    F: Fn(usize, &mut [f64]) + Sync,
{
    if len == 0 {
        return;
    }
    if threads >= 2 {
        out.par_chunks_mut(len)
            .enumerate()
            .for_each(|(c, o)| f(c, o));
    } else {
        out.chunks_mut(len).enumerate().for_each(|(c, o)| f(c, o));
    }
}

/// `x` cut into `k` chunks of `len` (empty chunks when `len` is 0).
fn pieces(x: &mut [f64], len: usize, k: usize) -> Vec<&mut [f64]> {
    if len == 0 {
        (0..k).map(|_| &mut [][..]).collect()
    } else {
        x.chunks_mut(len).collect()
    }
}

/// As [`each_copy`] for `k` copies of two outputs, cut into chunks of `len_a` and `len_b`.
fn each_copy2<F>(
    threads: usize, k: usize, (a, len_a): (&mut [f64], usize), (b, len_b): (&mut [f64], usize),
    f: F,
) where
    F: Fn(usize, &mut [f64], &mut [f64]) + Sync,
{
    let pairs = pieces(a, len_a, k).into_iter().zip(pieces(b, len_b, k));
    if threads >= 2 {
        let pairs: Vec<_> = pairs.collect();
        pairs
            .into_par_iter()
            .enumerate()
            .for_each(|(c, (x, y))| f(c, x, y));
    } else {
        pairs.enumerate().for_each(|(c, (x, y))| f(c, x, y));
    }
}

impl Copies {
    /// The running cell's threads.
    fn threads(&self) -> usize {
        self.threads.load(Ordering::Relaxed)
    }

    /// Copy `c`'s coordinates in `x` (a vector of `n` per copy).
    fn of<'a>(&self, x: &'a [f64], c: usize) -> &'a [f64] {
        let n = self.sizes.dims.n;
        &x[c * n..(c + 1) * n]
    }

    /// Copy `c`'s multipliers in `lambda` (`m` per copy).
    fn rows_of<'a>(&self, lambda: &'a [f64], c: usize) -> &'a [f64] {
        let m = self.sizes.dims.m;
        &lambda[c * m..(c + 1) * m]
    }

    /// `pattern` of one copy repeated down the diagonal, each copy `r × c` (from the
    /// inner problem's dimensions, not the pattern's declared size).
    fn diagonal(&self, pattern: SparsityPattern, (r, c): (usize, usize)) -> SparsityPattern {
        let entries = (0..self.k)
            .flat_map(|b| {
                pattern
                    .entries
                    .iter()
                    .map(move |&(i, j)| (b * r + i, b * c + j))
            })
            .collect();
        SparsityPattern::new(self.k * r, self.k * c, entries)
    }

    /// An `n × n` pattern of one copy (none: empty) repeated down the diagonal.
    fn square_diagonal(&self, one: Option<SparsityPattern>) -> SparsityPattern {
        let n = self.sizes.dims.n;
        let one = one.unwrap_or_else(|| SparsityPattern::new(n, n, Vec::new()));
        self.diagonal(one, (n, n))
    }

    /// `f(copy)` concatenated over the copies, when every copy has it.
    fn stacked(&self, f: impl Fn(usize) -> Option<Vec<f64>>) -> Option<Vec<f64>> {
        let mut all = Vec::new();
        for c in 0..self.k {
            all.extend(f(c)?);
        }
        Some(all)
    }
}

impl MechanicalSystem for Copies {
    fn info(&self) -> ProblemInfo {
        let mut info = self.inner.info();
        info.title = format!("{} (× {} independent copies)", info.title, self.k);
        info.tags.push("copies".into());
        info
    }
    fn dims(&self) -> Dims {
        Dims {
            n: self.k * self.sizes.dims.n,
            m: self.k * self.sizes.dims.m,
        }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        self.diagonal(
            self.inner.mass_pattern(),
            (self.sizes.dims.n, self.sizes.dims.n),
        )
    }
    fn mass(&self, q: &[f64], out: &mut [f64]) {
        each_copy(self.threads(), out, self.sizes.mass, |c, o| {
            self.inner.mass(self.of(q, c), o)
        });
    }
    fn mass_at(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        each_copy(self.threads(), out, self.sizes.mass, |c, o| {
            self.inner.mass_at(t, self.of(q, c), self.of(v, c), o)
        });
    }
    fn mass_varies(&self) -> bool {
        self.inner.mass_varies()
    }
    fn forces(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        each_copy(self.threads(), out, self.sizes.dims.n, |c, o| {
            self.inner.forces(t, self.of(q, c), self.of(v, c), o)
        });
    }
    fn constraints(&self, t: f64, q: &[f64], out: &mut [f64]) {
        each_copy(self.threads(), out, self.sizes.dims.m, |c, o| {
            self.inner.constraints(t, self.of(q, c), o)
        });
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        self.diagonal(
            self.inner.jacobian_pattern(),
            (self.sizes.dims.m, self.sizes.dims.n),
        )
    }
    fn jacobian(&self, t: f64, q: &[f64], out: &mut [f64]) {
        each_copy(self.threads(), out, self.sizes.jacobian, |c, o| {
            self.inner.jacobian(t, self.of(q, c), o)
        });
    }
    fn constraints_and_jacobian(&self, t: f64, q: &[f64], phi: &mut [f64], jac: &mut [f64]) {
        let (m, nj) = (self.sizes.dims.m, self.sizes.jacobian);
        each_copy2(self.threads(), self.k, (phi, m), (jac, nj), |c, p, j| {
            self.inner.constraints_and_jacobian(t, self.of(q, c), p, j)
        });
    }
    fn phi_t(&self, t: f64, q: &[f64], out: &mut [f64]) {
        each_copy(self.threads(), out, self.sizes.dims.m, |c, o| {
            self.inner.phi_t(t, self.of(q, c), o)
        });
    }
    fn curvature(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        each_copy(self.threads(), out, self.sizes.dims.m, |c, o| {
            self.inner.curvature(t, self.of(q, c), self.of(v, c), o)
        });
    }
    fn constraint_hessian(&self) -> Option<&dyn ConstraintHessian> {
        self.inner
            .constraint_hessian()
            .map(|_| self as &dyn ConstraintHessian)
    }
    fn tangent(&self) -> Option<&dyn TangentMatrices> {
        self.inner.tangent().map(|_| self as &dyn TangentMatrices)
    }
    fn energy(&self, t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        (0..self.k)
            .map(|c| self.inner.energy(t, self.of(q, c), self.of(v, c)))
            .sum()
    }
    fn row_kinds(&self) -> Vec<&'static str> {
        self.inner.row_kinds().repeat(self.k)
    }
    fn momentum(&self, t: f64, q: &[f64], v: &[f64]) -> Option<Vec<f64>> {
        self.stacked(|c| self.inner.momentum(t, self.of(q, c), self.of(v, c)))
    }
    fn energy_scale(&self) -> f64 {
        self.k as f64 * self.inner.energy_scale()
    }
    fn initial_state(&self) -> State {
        let one = self.inner.initial_state();
        State {
            t: one.t,
            q: one.q.repeat(self.k),
            v: one.v.repeat(self.k),
            lambda: one.lambda.repeat(self.k),
            a: one.a.repeat(self.k),
        }
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        let one = self.inner.exact(t)?;
        Some(ExactSolution {
            q: one.q.repeat(self.k),
            v: one.v.repeat(self.k),
            lambda: one.lambda.repeat(self.k),
        })
    }
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        match self.inner.reference() {
            None => self.inner.reference_domain(t_end),
            Some(_) => driftlab_core::system::undeclared_domain(self.exact(0.0).is_some(), false),
        }
    }
    /// Kept here, not passed on: the copies are what runs side by side; each inner call
    /// stays on one thread.
    fn use_threads(&self, threads: usize) {
        self.threads.store(threads.max(1), Ordering::Relaxed);
    }
}

impl ConstraintHessian for Copies {
    fn pattern(&self) -> SparsityPattern {
        self.square_diagonal(self.inner.constraint_hessian().map(|h| h.pattern()))
    }
    fn values(&self, t: f64, q: &[f64], lambda: &[f64], out: &mut [f64]) {
        // The trait objects are not `Sync`: each copy asks the inner problem again.
        each_copy(self.threads(), out, self.sizes.hessian, |c, o| {
            if let Some(h) = self.inner.constraint_hessian() {
                h.values(t, self.of(q, c), self.rows_of(lambda, c), o)
            }
        });
    }
}

impl TangentMatrices for Copies {
    fn pattern(&self) -> SparsityPattern {
        self.square_diagonal(self.inner.tangent().map(|h| h.pattern()))
    }
    fn values(&self, t: f64, q: &[f64], v: &[f64], k: &mut [f64], c: &mut [f64]) {
        let len = self.sizes.tangent;
        each_copy2(self.threads(), self.k, (k, len), (c, len), |b, kb, cb| {
            if let Some(tm) = self.inner.tangent() {
                tm.values(t, self.of(q, b), self.of(v, b), kb, cb)
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::build;
    use crate::entry::Problem;
    use driftlab_core::MechanicalSystem;
    use std::collections::BTreeSet;
    use std::sync::{Arc, Mutex};

    /// A problem that records on which pool thread its `forces` ran (and takes 1 ms, so
    /// that an idle thread steals work when there is any to steal).
    struct Recording {
        inner: Box<dyn MechanicalSystem>,
        seen: Arc<Mutex<BTreeSet<Option<usize>>>>,
    }

    impl MechanicalSystem for Recording {
        driftlab_core::forward_mechanical!(inner;
            info, dims, mass_pattern, mass, constraints, jacobian_pattern, jacobian,
            curvature, initial_state);
        fn forces(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
            std::thread::sleep(std::time::Duration::from_millis(1));
            if let Ok(mut seen) = self.seen.lock() {
                seen.insert(rayon::current_thread_index());
            }
            self.inner.forces(t, q, v, out);
        }
    }

    /// The threads `forces` of 8 copies ran on, called 10 times on a pool of 2 after
    /// `use_threads(threads)` (none: never stated).
    fn threads_seen(threads: Option<usize>) -> usize {
        let Ok(Problem::Mechanical(pendulum)) = build("pendulum", &toml::Table::new()) else {
            panic!("pendulum builds as a mechanical system");
        };
        let seen = Arc::new(Mutex::new(BTreeSet::new()));
        let recording = Recording {
            inner: pendulum,
            seen: Arc::clone(&seen),
        };
        let Ok(Problem::Mechanical(copies)) =
            super::apply("pendulum", Problem::Mechanical(Box::new(recording)), 8)
        else {
            panic!("8 copies of the pendulum");
        };
        if let Some(k) = threads {
            copies.use_threads(k);
        }
        let start = copies.initial_state();
        let mut f = vec![0.0; start.q.len()];
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("pool");
        pool.install(|| (0..10).for_each(|_| copies.forces(0.0, &start.q, &start.v, &mut f)));
        let n = seen.lock().map(|s| s.len()).unwrap_or(0);
        n
    }

    /// One channel for threads (issue 48 item 4): the copies fan out on the cell's pool
    /// exactly when the time loop stated ≥ 2 threads, and stay on one thread otherwise,
    /// whatever the pool they are called on.
    #[test]
    fn the_copies_fan_out_only_when_told_two_threads() {
        assert_eq!(threads_seen(None), 1, "never told: one thread");
        assert_eq!(threads_seen(Some(1)), 1, "told 1: one thread");
        assert_eq!(
            threads_seen(Some(2)),
            2,
            "told 2: both of the pool's threads"
        );
    }

    fn refusal(id: &str, params: &str) -> String {
        let table: toml::Table = params.parse().expect("toml");
        match build(id, &table) {
            Ok(_) => panic!("{id} [{params}] built"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn bad_copies_are_refused_naming_the_field_and_the_fix() {
        for (id, params, words) in [
            ("pendulum", "copies = 0", &["copies", "1 …"][..]),
            ("pendulum", "copies = 2.5", &["`copies`", "integer"][..]),
            (
                "knife-edge",
                "copies = 2",
                &["`copies`", "nonholonomic", "remove `copies`"][..],
            ),
            (
                "pendulum-limits",
                "copies = 2",
                &["`copies`", "unilateral"][..],
            ),
            ("seed003-dae", "copies = 2", &["`copies`", "index-1"][..]),
        ] {
            let message = refusal(id, params);
            for w in words {
                assert!(message.contains(w), "{id} [{params}]: {message}");
            }
        }
    }

    #[test]
    fn one_copy_is_the_problem_itself_and_k_copies_stack_its_sizes() {
        let one = build("planar-chain", &"links = 5".parse().expect("toml")).expect("one");
        let same = build(
            "planar-chain",
            &"links = 5\ncopies = 1".parse().expect("toml"),
        )
        .expect("copies = 1");
        let three = build(
            "planar-chain",
            &"links = 5\ncopies = 3".parse().expect("toml"),
        )
        .expect("copies = 3");
        let (s1, s3) = match (&one, &three) {
            (crate::entry::Problem::Mechanical(a), crate::entry::Problem::Mechanical(b)) => (a, b),
            _ => panic!("mechanical"),
        };
        let d = s1.dims();
        assert_eq!(s3.dims().n, 3 * d.n);
        assert_eq!(s3.dims().m, 3 * d.m);
        let start = s3.initial_state();
        let e1 = s1.energy(0.0, &s1.initial_state().q, &s1.initial_state().v);
        let e3 = s3.energy(0.0, &start.q, &start.v);
        assert_eq!(e3, e1.map(|e| 3.0 * e));
        assert!(matches!(same, crate::entry::Problem::Mechanical(s) if s.dims() == d));
    }
}
