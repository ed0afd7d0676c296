//! Redundant constraint rows detected and **removed** (seed 001 §3.11 pitfall 2: "约束雅可
//! 比奇异 … 检测并移除冗余约束", and pitfall 4, over-constrained systems), as the
//! alternative to keeping them and regularizing the multipliers (Tikhonov, generalized-α).
//!
//! Every problem accepts the reserved parameter `redundant`:
//!
//! * `"keep"` (default): Φ as the problem defines it;
//! * `"remove"`: the rows of Φ_q at the initial state are scanned in order and a row is
//!   kept when its component orthogonal to the rows kept before it (modified
//!   Gram–Schmidt) exceeds `redundant_tol` of the largest row norm (default
//!   [`INDEPENDENCE_TOL`]);
//!   the problem then presents the kept rows only — Φ, Φ_q, Φ_t, γ and the constraint
//!   Hessian restricted to them.
//!
//! `redundant_tol` (reserved too, with `"remove"` only) is for rows that are redundant in
//! the design but not in the printed numbers: a model file's angles rounded to 5 digits
//! (Cassie's SDF: `1.5708` for π/2) tilt a planar four-bar's joint axes by ~1e-7 rad, and
//! its ball closure's out-of-plane row then keeps a part of ~1e-8 of the largest row —
//! above the default, a singular value of 2e-12 in Φ_q, and a KKT matrix the methods
//! cannot solve. A tolerance above the file's rounding (1e-5 for 5 digits) removes it.
//!
//! The removal is decided once, at t₀: the removed rows are implied by the kept ones
//! near the initial configuration (the mechanism's mobility is what the rank says), not
//! necessarily far from it. The residual columns of a run then cover the kept rows; the
//! test `tests/independent_rows.rs` also evaluates the removed ones along the run.

use crate::entry::Problem;
use driftlab_core::row_selection::RowSelection;
use driftlab_core::{
    ConstraintHessian, Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo,
    SparsityPattern, State,
};

/// The reserved parameter name.
pub const KEY: &str = "redundant";

/// A row is independent when its part orthogonal to the kept rows is larger than this
/// fraction of the largest row norm.
pub const INDEPENDENCE_TOL: f64 = 1e-9;

/// Largest `m · n` scanned densely.
pub const MAX_DENSE_ENTRIES: usize = 4_000_000;

/// The reserved parameter of the tolerance.
pub const TOL_KEY: &str = "redundant_tol";

/// Take `redundant` (and `redundant_tol`) out of a problem's parameter table: the
/// independence tolerance when rows are to be removed, `None` to keep them.
pub fn split(id: &str, params: &mut toml::Table) -> Result<Option<f64>, ParamError> {
    let invalid = |message: String| ParamError::Invalid {
        kind: "problem",
        id: id.to_string(),
        message,
    };
    let remove = match params.remove(KEY) {
        None => false,
        Some(toml::Value::String(s)) if s == "keep" => false,
        Some(toml::Value::String(s)) if s == "remove" => true,
        Some(other) => {
            return Err(invalid(format!(
                "`redundant` = {other}: give \"keep\" or \"remove\""
            )))
        }
    };
    let tol = match params.remove(TOL_KEY) {
        None => INDEPENDENCE_TOL,
        Some(_) if !remove => {
            return Err(invalid(
                "`redundant_tol` applies to `redundant = \"remove\"`: give both, or neither".into(),
            ))
        }
        Some(v) => match v.as_float().or_else(|| v.as_integer().map(|i| i as f64)) {
            Some(t) if t > 0.0 && t <= 1e-2 => t,
            _ => {
                return Err(ParamError::OutOfRange {
                    id: id.to_string(),
                    field: TOL_KEY,
                    value: v.as_float().unwrap_or(f64::NAN),
                    fix: "give a relative tolerance in (0, 1e-2], e.g. 1e-5 for a file whose angles carry 5 digits".into(),
                })
            }
        },
    };
    Ok(remove.then_some(tol))
}

/// The rows of the `m × n` dense row-major `jac` that are independent of the rows before
/// them (modified Gram–Schmidt: the part orthogonal to them above `tol` of the largest
/// row norm), in order. Relative to the largest row, not the row itself: a row that is
/// redundant in the design and small in the numbers (Cassie's plantar out-of-plane row,
/// norm 2e-6 against 0.04–0.86 for the others) would otherwise pass as independent.
pub fn independent_rows(m: usize, n: usize, jac: &[f64], tol: f64) -> Vec<usize> {
    let row_norm = |r: usize| {
        jac[r * n..(r + 1) * n]
            .iter()
            .map(|x| x * x)
            .sum::<f64>()
            .sqrt()
    };
    let largest = (0..m).map(row_norm).fold(0.0_f64, f64::max);
    let mut basis: Vec<Vec<f64>> = Vec::new();
    let mut kept = Vec::new();
    for r in 0..m {
        let mut v = jac[r * n..(r + 1) * n].to_vec();
        let norm0 = row_norm(r);
        for b in &basis {
            let d: f64 = v.iter().zip(b).map(|(x, y)| x * y).sum();
            v.iter_mut().zip(b).for_each(|(x, y)| *x -= d * y);
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm0 > 0.0 && norm > tol * norm0.max(largest) {
            v.iter_mut().for_each(|x| *x /= norm);
            basis.push(v);
            kept.push(r);
        }
    }
    kept
}

/// `problem` with only the independent rows of Φ at its initial state.
pub fn apply(id: &str, problem: Problem, tol: f64) -> Result<Problem, ParamError> {
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
    let rows = independent_at_start(s.as_ref(), tol);
    Ok(Problem::Mechanical(restrict(s, rows)))
}

/// The rows of `s`'s Φ_q at its initial state that [`independent_rows`] keeps at `tol`.
pub fn independent_at_start(s: &dyn MechanicalSystem, tol: f64) -> Vec<usize> {
    independent_at_state(s, &s.initial_state(), tol)
}

/// The rows of `s`'s Φ_q at `(y.t, y.q)` that [`independent_rows`] keeps at `tol`.
pub fn independent_at_state(s: &dyn MechanicalSystem, y: &State, tol: f64) -> Vec<usize> {
    let d = s.dims();
    let jp = s.jacobian_pattern();
    let mut vals = vec![0.0; jp.nnz()];
    s.jacobian(y.t, &y.q, &mut vals);
    let mut dense = vec![0.0; d.m * d.n];
    for (&(r, c), v) in jp.entries.iter().zip(&vals) {
        dense[r * d.n + c] += v;
    }
    independent_rows(d.m, d.n, &dense, tol)
}

/// `inner` restricted to the rows `rows` of its Φ (ascending).
pub fn restrict(inner: Box<dyn MechanicalSystem>, rows: Vec<usize>) -> Box<dyn MechanicalSystem> {
    let jp = inner.jacobian_pattern();
    Box::new(IndependentRows {
        sel: RowSelection::new(&jp, rows),
        inner,
    })
}

/// A view of `inner` restricted to the rows `rows` of its Φ (ascending), borrowed: what
/// a start projection of a model with redundant closures works on.
pub fn view<'a>(inner: &'a dyn MechanicalSystem, rows: Vec<usize>) -> impl MechanicalSystem + 'a {
    let jp = inner.jacobian_pattern();
    IndependentRows {
        sel: RowSelection::new(&jp, rows),
        inner,
    }
}

/// A mechanical problem restricted to some rows of its Φ (owned or borrowed).
struct IndependentRows<S> {
    inner: S,
    /// The kept rows of the inner Φ.
    sel: RowSelection,
}

impl<S> MechanicalSystem for IndependentRows<S>
where
    S: std::ops::Deref + Send + Sync,
    S::Target: MechanicalSystem,
{
    driftlab_core::forward_mechanical!(inner;
        mass_pattern, mass, forces, tangent, energy, energy_scale, momentum, unilateral,
        reference, actuators, threads);
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

impl<S> ConstraintHessian for IndependentRows<S>
where
    S: std::ops::Deref + Send + Sync,
    S::Target: MechanicalSystem,
{
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
