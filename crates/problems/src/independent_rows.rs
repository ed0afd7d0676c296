//! Redundant constraint rows detected and **removed** (seed 001 §3.11 pitfall 2: "约束雅可
//! 比奇异 … 检测并移除冗余约束", and pitfall 4, over-constrained systems), as the
//! alternative to keeping them and regularizing the multipliers (Tikhonov, generalized-α).
//!
//! Every problem accepts the reserved parameter `redundant`:
//!
//! * `"keep"` (default): Φ as the problem defines it;
//! * `"remove"`: the rows of Φ_q at the initial state are scanned in order and a row is
//!   kept when its component orthogonal to the rows kept before it (modified
//!   Gram–Schmidt) exceeds [`INDEPENDENCE_TOL`] of its norm; the problem then presents
//!   the kept rows only — Φ, Φ_q, Φ_t, γ and the constraint Hessian restricted to them.
//!
//! The removal is decided once, at t₀: the removed rows are implied by the kept ones
//! near the initial configuration (the mechanism's mobility is what the rank says), not
//! necessarily far from it. The residual columns of a run then cover the kept rows; the
//! test `tests/independent_rows.rs` also evaluates the removed ones along the run.

use crate::Problem;
use driftlab_core::row_selection::RowSelection;
use driftlab_core::{
    ConstraintHessian, Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo,
    SparsityPattern, State,
};

/// The reserved parameter name.
pub const KEY: &str = "redundant";

/// A row is independent when its part orthogonal to the kept rows is larger than this
/// fraction of its norm.
pub const INDEPENDENCE_TOL: f64 = 1e-9;

/// Largest `m · n` scanned densely.
pub const MAX_DENSE_ENTRIES: usize = 4_000_000;

/// Take `redundant` out of a problem's parameter table: whether rows are to be removed.
pub fn split(id: &str, params: &mut toml::Table) -> Result<bool, ParamError> {
    match params.remove(KEY) {
        None => Ok(false),
        Some(toml::Value::String(s)) if s == "keep" => Ok(false),
        Some(toml::Value::String(s)) if s == "remove" => Ok(true),
        Some(other) => Err(ParamError::Invalid {
            kind: "problem",
            id: id.to_string(),
            message: format!("`redundant` = {other}: give \"keep\" or \"remove\""),
        }),
    }
}

/// The rows of the `m × n` dense row-major `jac` that are independent of the rows before
/// them (modified Gram–Schmidt), in order.
pub fn independent_rows(m: usize, n: usize, jac: &[f64]) -> Vec<usize> {
    let mut basis: Vec<Vec<f64>> = Vec::new();
    let mut kept = Vec::new();
    for r in 0..m {
        let mut v = jac[r * n..(r + 1) * n].to_vec();
        let norm0 = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        for b in &basis {
            let d: f64 = v.iter().zip(b).map(|(x, y)| x * y).sum();
            v.iter_mut().zip(b).for_each(|(x, y)| *x -= d * y);
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm0 > 0.0 && norm > INDEPENDENCE_TOL * norm0 {
            v.iter_mut().for_each(|x| *x /= norm);
            basis.push(v);
            kept.push(r);
        }
    }
    kept
}

/// `problem` with only the independent rows of Φ at its initial state.
pub fn apply(id: &str, problem: Problem) -> Result<Problem, ParamError> {
    let Problem::Mechanical(s) = problem else {
        return Err(ParamError::Invalid {
            kind: "problem",
            id: id.to_string(),
            message: "`redundant = \"remove\"` is for mechanical problems (an index-1 g_z is square and regular)".into(),
        });
    };
    let d = s.dims();
    if s.nonholonomic_rows() > 0 || s.prioritized().is_some() {
        return Err(ParamError::Invalid {
            kind: "problem",
            id: id.to_string(),
            message: "`redundant = \"remove\"` keeps the rows of a plain holonomic Φ; this problem has nonholonomic or prioritized rows".into(),
        });
    }
    if d.m * d.n > MAX_DENSE_ENTRIES {
        return Err(ParamError::OutOfRange {
            id: id.to_string(),
            field: KEY,
            value: (d.m * d.n) as f64,
            fix: format!("the rank scan is dense; give a model with m·n ≤ {MAX_DENSE_ENTRIES}"),
        });
    }
    let y = s.initial_state();
    let jp = s.jacobian_pattern();
    let mut vals = vec![0.0; jp.nnz()];
    s.jacobian(y.t, &y.q, &mut vals);
    let mut dense = vec![0.0; d.m * d.n];
    for (&(r, c), v) in jp.entries.iter().zip(&vals) {
        dense[r * d.n + c] += v;
    }
    let rows = independent_rows(d.m, d.n, &dense);
    Ok(Problem::Mechanical(Box::new(IndependentRows {
        sel: RowSelection::new(&jp, rows),
        inner: s,
    })))
}

/// A mechanical problem restricted to some rows of its Φ.
struct IndependentRows {
    inner: Box<dyn MechanicalSystem>,
    /// The kept rows of the inner Φ.
    sel: RowSelection,
}

impl MechanicalSystem for IndependentRows {
    driftlab_core::forward_mechanical!(inner;
        mass_pattern, mass, forces, tangent, energy, energy_scale, momentum, unilateral,
        reference);
    fn info(&self) -> ProblemInfo {
        let mut i = self.inner.info();
        i.title = format!(
            "{} — redundant rows removed ({} of {} kept)",
            i.title,
            self.sel.rows().len(),
            self.sel.full_rows()
        );
        i
    }
    fn dims(&self) -> Dims {
        Dims {
            n: self.inner.dims().n,
            m: self.sel.rows().len(),
        }
    }
    fn constraints(&self, t: f64, q: &[f64], out: &mut [f64]) {
        self.sel.select(out, |f| self.inner.constraints(t, q, f))
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        self.sel.pattern().clone()
    }
    fn jacobian(&self, t: f64, q: &[f64], out: &mut [f64]) {
        self.sel
            .select_jacobian(out, |f| self.inner.jacobian(t, q, f))
    }
    fn phi_t(&self, t: f64, q: &[f64], out: &mut [f64]) {
        self.sel.select(out, |f| self.inner.phi_t(t, q, f))
    }
    fn curvature(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        self.sel.select(out, |f| self.inner.curvature(t, q, v, f))
    }
    fn constraint_hessian(&self) -> Option<&dyn ConstraintHessian> {
        self.inner
            .constraint_hessian()
            .map(|_| self as &dyn ConstraintHessian)
    }
    fn row_kinds(&self) -> Vec<&'static str> {
        let kinds = self.inner.row_kinds();
        if kinds.is_empty() {
            return kinds;
        }
        self.sel.rows().iter().map(|&r| kinds[r]).collect()
    }
    fn initial_state(&self) -> State {
        let mut y = self.inner.initial_state();
        y.lambda = self
            .sel
            .rows()
            .iter()
            .map(|&r| y.lambda.get(r).copied().unwrap_or(f64::NAN))
            .collect();
        y
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        // The multipliers of a redundant system are not unique: only q and v carry over
        // (all of it when no row was removed).
        self.inner.exact(t).map(|mut e| {
            if self.sel.rows().len() < self.sel.full_rows() {
                e.lambda = vec![f64::NAN; self.sel.rows().len()];
            }
            e
        })
    }
    /// The inner problem's: the motion is the same (the removed rows are implied by the
    /// kept ones), so the exact q and v and a published reference hold as they did. When
    /// rows were removed, λ is not unique and [`Self::exact`] leaves it NaN (the λ error
    /// column is then null); the bound still covers q and v.
    fn reference_domain(&self, t_end: f64) -> driftlab_core::ReferenceDomain {
        self.inner.reference_domain(t_end)
    }
}

impl ConstraintHessian for IndependentRows {
    fn pattern(&self) -> SparsityPattern {
        self.inner
            .constraint_hessian()
            .map_or_else(|| SparsityPattern::new(0, 0, Vec::new()), |h| h.pattern())
    }
    fn values(&self, t: f64, q: &[f64], lambda: &[f64], out: &mut [f64]) {
        let mut full = vec![0.0; self.sel.full_rows()];
        for (&r, &l) in self.sel.rows().iter().zip(lambda) {
            full[r] = l;
        }
        if let Some(h) = self.inner.constraint_hessian() {
            h.values(t, q, &full, out);
        }
    }
}
