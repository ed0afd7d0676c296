//! `typed`: seed 001 exercise 8 ("设计一个混合约束求解器，对不同类型的约束使用不同的处理方
//! 法") and the §3.12 advice "根据约束类型选择处理方法": every constraint row gets the
//! treatment of its kind (`MechanicalSystem::row_kinds`: `rigid-body`, `unit-norm`,
//! `joint`, …), as the seed's answer lays out:
//!
//! ```text
//! "kkt"         in the acceleration KKT with Baumgarte feedback      ("关节约束：直接法 + Baumgarte")
//!                 Φ̈_r = −2ξω_n Φ̇_r − ω_n² Φ_r
//! "projection"  in the acceleration KKT without feedback (Φ̈_r = 0), then q and v projected
//!               onto these rows' manifold after each step, mass-orthogonally ("控制约束：投影方法")
//! "penalty"     out of the KKT: the force −Φ_{q,r}ᵀ (k_p Φ_r + k_d Φ̇_r)    ("软约束：罚函数")
//! ```
//!
//! A step is a Baumgarte (Taylor) step of the system restricted to the kkt and projection
//! rows with the penalty forces added (the force-level groups), then the correction groups
//! one at a time in the order `order` gives — the seed's "for each constraint_group in
//! priority_order":
//!
//! ```text
//! "projection"  q and v projected onto the projection rows (driftlab_solver's)
//! "contact"     the unilateral rows g(q) ≥ 0 by velocity impulses, an LCP with the mass
//!               alone ("接触约束：LCP求解器"; typed_contact.rs)
//! ```
//!
//! A later group can undo an earlier one (a contact impulse moves the rods' velocities, a
//! projection moves the contacts'): the group treated last holds at the end of the step.
//! Rows of a kind the parameters do not name are "kkt". Nonholonomic and prioritized rows
//! are refused rather than ignored. The reported λ of a penalty row is its force factor
//! `k_p Φ + k_d Φ̇`. No order is declared: the Taylor step is first order, the penalty rows
//! do not converge to the DAE as h → 0 at fixed k_p, and impacts are first order.

use crate::dynamics::{kkt_pattern, linear_error, KktChoice};
use crate::explicit::baumgarte::{Baumgarte, BaumgarteParams};
use crate::explicit::typed_contact::{apply_contacts, Lcp};
use driftlab_core::prelude::*;
use driftlab_core::row_selection::RowSelection;
use driftlab_core::{Dims, ProblemInfo};
use driftlab_solver::{
    project_position, project_velocity, ConstraintsAt, KktSolver, ProjectionParams,
};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// What is done with the rows of one kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Treatment {
    /// Acceleration KKT with Baumgarte feedback.
    Kkt,
    /// Acceleration KKT without feedback, then projected onto after each step.
    Projection,
    /// A penalty force instead of a row.
    Penalty,
}

/// A group treated after the step, in the order of [`TypedParams::order`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// The projection rows: q and v projected onto them.
    Projection,
    /// The unilateral rows: velocity impulses by an LCP with the mass alone.
    Contact,
}

/// Parameters of [`Typed`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TypedParams {
    /// Treatment per kind of row, e.g. `{ unit-norm = "penalty", joint = "projection" }`;
    /// kinds not named are `"kkt"`.
    pub treatments: BTreeMap<String, Treatment>,
    /// Baumgarte damping ratio ξ of the kkt rows.
    pub xi: f64,
    /// Baumgarte natural frequency ω_n (1/s) of the kkt rows.
    pub omega_n: f64,
    /// Penalty stiffness k_p (force per unit of Φ).
    pub k_p: f64,
    /// Penalty damping k_d (force per unit of Φ̇).
    pub k_d: f64,
    /// Projection tolerance on ‖Φ‖∞ of the projection rows.
    pub projection_tol: f64,
    /// KKT factorization.
    pub kkt: KktChoice,
    /// The order of the correction groups after the step, each once, comma-separated
    /// (`"projection, contact"` or `"contact, projection"`; a list of such strings sweeps):
    /// the group last holds at the end of the step.
    pub order: String,
    /// Complementarity tolerance of the contact group's projected Gauss–Seidel.
    pub lcp_tol: f64,
    /// PGS sweep cap of the contact group.
    pub lcp_max_iter: usize,
}

impl Default for TypedParams {
    fn default() -> Self {
        Self {
            treatments: BTreeMap::new(),
            xi: 1.0,
            omega_n: 10.0,
            k_p: 1e6,
            k_d: 2e3,
            projection_tol: 1e-12,
            kkt: KktChoice::Auto,
            order: "projection, contact".into(),
            lcp_tol: 1e-12,
            lcp_max_iter: 10_000,
        }
    }
}

/// The row split of a problem: which rows each treatment takes.
#[derive(Clone, Debug)]
struct Split {
    /// kkt and projection rows (ascending), the rows the inner Baumgarte step sees.
    solved: RowSelection,
    /// For each solved row, whether it is a projection row.
    projected_flags: Vec<bool>,
    /// The projection rows.
    projected: RowSelection,
    /// The penalty rows.
    penalty: Vec<usize>,
}

/// The typed solver.
pub struct Typed {
    p: TypedParams,
    /// [`TypedParams::order`] parsed.
    order: Vec<Group>,
}

/// The correction groups of `text` (`"projection, contact"`); `ParamError` unless each
/// group is named once.
fn parse_order(text: &str) -> Result<Vec<Group>, ParamError> {
    let order: Vec<Option<Group>> = text
        .split(',')
        .map(|g| match g.trim() {
            "projection" => Some(Group::Projection),
            "contact" => Some(Group::Contact),
            _ => None,
        })
        .collect();
    let each_once = order.len() == 2
        && order.contains(&Some(Group::Projection))
        && order.contains(&Some(Group::Contact));
    if !each_once {
        return Err(ParamError::OutOfRange {
            id: ID.into(),
            field: "order",
            value: order.len() as f64,
            fix: format!("order = \"{text}\": name each correction group once, \"projection, contact\" or \"contact, projection\""),
        });
    }
    Ok(order.into_iter().flatten().collect())
}

/// [`Typed`] bound to its system.
struct TypedStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: TypedParams,
    order: Vec<Group>,
    split: Split,
    /// The inner Baumgarte stepper, bound to the view of the solved rows (penalty forces
    /// added) that it owns.
    inner: Box<dyn Stepper + 's>,
    inner_state: State,
    projector: Option<KktSolver>,
    mass: Vec<f64>,
    stats: MethodStats,
}

impl Typed {
    /// The solver with parameters `p`; `ParamError` naming the field for a negative gain or
    /// a tolerance ≤ 0.
    pub fn new(p: TypedParams) -> Result<Self, ParamError> {
        for (field, x) in [
            ("xi", p.xi),
            ("omega_n", p.omega_n),
            ("k_p", p.k_p),
            ("k_d", p.k_d),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(ParamError::OutOfRange {
                    id: ID.into(),
                    field,
                    value: x,
                    fix: "give a finite value ≥ 0".into(),
                });
            }
        }
        driftlab_core::params::positive(ID, "projection_tol", p.projection_tol)?;
        driftlab_core::params::positive(ID, "lcp_tol", p.lcp_tol)?;
        let order = parse_order(&p.order)?;
        Ok(Self { p, order })
    }
}

/// Declared properties of `typed`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: per row kind it combines Baumgarte feedback, projection and penalty forces, none of which preserves the canonical form on the constraint manifold".into(),
        family: "stabilized".into(),
        title: "Typed constraint solver: per kind of row, KKT + Baumgarte, projection, or penalty, and contacts by LCP, groups in a given order (seed 001 exercise 8)".into(),
        equations: "kkt rows: Φ̈ = −2ξω_nΦ̇ − ω_n²Φ;  projection rows: Φ̈ = 0, then (q, v) projected;  \
                    penalty rows: force −Φ_qᵀ(k_pΦ + k_dΦ̇);  Taylor step;  then in `order`: projection, \
                    contacts 0 ≤ P ⊥ G v⁺ + eGv_n ≥ 0 with v⁺ = v + M⁻¹GᵀP"
            .into(),
        citation: "seed 001 exercise 8 and §3.12 (根据约束类型选择处理方法); Baumgarte, CMAME 1 (1972); \
                   projection: seed 001 §3.4.2"
            .into(),
        orders: DeclaredOrders { q: None, v: None, lambda: None },
        enforces: ConstraintLevels::default(),
        unilateral: true,
        ..MethodInfo::default()
    }
}

/// The rows of each treatment, from the problem's row kinds.
fn split_rows(sys: &dyn MechanicalSystem, p: &TypedParams) -> Result<Split, MethodError> {
    let incompatible = |reason: String| MethodError::Incompatible {
        method: ID.into(),
        problem: sys.info().id,
        reason,
    };
    if sys.nonholonomic_rows() > 0 || sys.prioritized().is_some() {
        return Err(incompatible(
            "typed treats holonomic and unilateral rows only: nonholonomic and prioritized rows belong to their own methods".into(),
        ));
    }
    let kinds = sys.row_kinds();
    if kinds.is_empty() {
        return Err(incompatible(
            "the problem names no row kinds (`MechanicalSystem::row_kinds`), so there is nothing to treat by type".into(),
        ));
    }
    if let Some(k) = p.treatments.keys().find(|k| !kinds.contains(&k.as_str())) {
        let mut known: Vec<&str> = kinds.clone();
        known.sort_unstable();
        known.dedup();
        return Err(incompatible(format!(
            "`treatments` names the kind `{k}`; this problem's kinds are {known:?}"
        )));
    }
    let of = |r: usize| {
        p.treatments
            .get(kinds[r])
            .copied()
            .unwrap_or(Treatment::Kkt)
    };
    let m = kinds.len();
    let solved: Vec<usize> = (0..m).filter(|&r| of(r) != Treatment::Penalty).collect();
    if solved.is_empty() {
        return Err(incompatible(
            "every row is a penalty row: keep at least one kind in the KKT".into(),
        ));
    }
    let full = sys.jacobian_pattern();
    Ok(Split {
        projected_flags: solved
            .iter()
            .map(|&r| of(r) == Treatment::Projection)
            .collect(),
        projected: RowSelection::new(
            &full,
            (0..m).filter(|&r| of(r) == Treatment::Projection).collect(),
        ),
        penalty: (0..m).filter(|&r| of(r) == Treatment::Penalty).collect(),
        solved: RowSelection::new(&full, solved),
    })
}

/// The problem as one treatment sees it: the rows of `rows`, and (for the step) the
/// penalty forces of `penalty` added to the applied forces. The rows are owned by the
/// view of the solved rows (the inner stepper keeps it for the run), borrowed by the
/// projection's view (built for each step).
struct Treated<'a> {
    inner: &'a dyn MechanicalSystem,
    rows: Cow<'a, RowSelection>,
    penalty: Cow<'a, [usize]>,
    gains: (f64, f64),
}

impl MechanicalSystem for Treated<'_> {
    driftlab_core::forward_mechanical!(inner; mass_pattern, mass, energy, energy_scale, momentum);
    fn info(&self) -> ProblemInfo {
        self.inner.info()
    }
    fn dims(&self) -> Dims {
        Dims {
            n: self.inner.dims().n,
            m: self.rows.rows().len(),
        }
    }
    fn forces(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        self.inner.forces(t, q, v, out);
        if self.penalty.is_empty() {
            return;
        }
        let (jp, jac, factor) = penalty_factors(self.inner, t, q, v, &self.penalty, self.gains);
        for (&(r, c), j) in jp.entries.iter().zip(&jac) {
            out[c] -= j * factor[r];
        }
    }
    fn constraints(&self, t: f64, q: &[f64], out: &mut [f64]) {
        self.rows.select(out, |f| self.inner.constraints(t, q, f));
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        self.rows.pattern().clone()
    }
    fn jacobian(&self, t: f64, q: &[f64], out: &mut [f64]) {
        self.rows
            .select_jacobian(out, |f| self.inner.jacobian(t, q, f));
    }
    fn phi_t(&self, t: f64, q: &[f64], out: &mut [f64]) {
        self.rows.select(out, |f| self.inner.phi_t(t, q, f));
    }
    fn curvature(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        self.rows.select(out, |f| self.inner.curvature(t, q, v, f));
    }
    fn initial_state(&self) -> State {
        let mut y = self.inner.initial_state();
        y.lambda = vec![f64::NAN; self.rows.rows().len()];
        y
    }
}

/// The full Jacobian (pattern and values) and, per full row, the penalty factor
/// `k_p Φ_r + k_d Φ̇_r` (zero for rows not in `penalty`).
fn penalty_factors(
    s: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64], penalty: &[usize],
    (k_p, k_d): (f64, f64),
) -> (SparsityPattern, Vec<f64>, Vec<f64>) {
    let m = s.dims().m;
    let jp = s.jacobian_pattern();
    let mut jac = vec![0.0; jp.nnz()];
    s.jacobian(t, q, &mut jac);
    let (mut phi, mut phidot) = (vec![0.0; m], vec![0.0; m]);
    s.constraints(t, q, &mut phi);
    s.phi_t(t, q, &mut phidot);
    for (&(r, c), j) in jp.entries.iter().zip(&jac) {
        phidot[r] += j * v[c];
    }
    let mut factor = vec![0.0; m];
    for &r in penalty {
        factor[r] = k_p * phi[r] + k_d * phidot[r];
    }
    (jp, jac, factor)
}

impl Typed {
    /// The inner Baumgarte step's gains: (ξω_n, ω_n) on kkt rows, zero on projection rows.
    fn inner_params(&self, split: &Split) -> BaumgarteParams {
        let (a, b) = (self.p.xi * self.p.omega_n, self.p.omega_n);
        let per = |x: f64| {
            split
                .projected_flags
                .iter()
                .map(|&pr| if pr { 0.0 } else { x })
                .collect()
        };
        BaumgarteParams {
            alpha: Some(a),
            beta: Some(b),
            alpha_diag: Some(per(a)),
            beta_diag: Some(per(b)),
            kkt: self.p.kkt,
            ..BaumgarteParams::default()
        }
    }
}

impl TypedStepper<'_> {
    /// `state`'s a and λ from the inner state: the solved rows' multipliers, and the
    /// penalty rows' force factors.
    fn write_back(&self, sys: &dyn MechanicalSystem, split: &Split, state: &mut State) {
        let y = &self.inner_state;
        state.t = y.t;
        state.q.clone_from(&y.q);
        state.v.clone_from(&y.v);
        state.a.clone_from(&y.a);
        for (&r, l) in split.solved.rows().iter().zip(&y.lambda) {
            state.lambda[r] = *l;
        }
        if !split.penalty.is_empty() {
            let gains = (self.p.k_p, self.p.k_d);
            let (_, _, factor) = penalty_factors(sys, y.t, &y.q, &y.v, &split.penalty, gains);
            for &r in &split.penalty {
                state.lambda[r] = factor[r];
            }
        }
    }
}

/// Project `y`'s q and v onto the rows of `rows` (mass-orthogonal); the updates made.
fn project_rows(
    kkt: &mut KktSolver, mass: &mut [f64], sys: &Treated<'_>, y: &mut State, tol: f64,
) -> Result<usize, StepError> {
    let t = y.t;
    sys.mass(&y.q, mass);
    let mut eval = ConstraintsAt { sys, t };
    let params = ProjectionParams {
        tol,
        max_iter: 50,
        ..ProjectionParams::default()
    };
    let pos = project_position(kkt, mass, &mut y.q, &mut eval, &params)
        .map_err(|e| linear_error(t, e))?;
    sys.mass(&y.q, mass);
    project_velocity(kkt, mass, &y.q, &mut y.v, &mut eval).map_err(|e| linear_error(t, e))?;
    Ok(pos.iterations)
}

impl Method for Typed {
    fn info(&self) -> MethodInfo {
        info()
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let split = split_rows(sys, &self.p)?;
        let inner =
            Baumgarte::new(self.inner_params(&split)).map_err(|e| MethodError::Incompatible {
                method: ID.into(),
                problem: sys.info().id,
                reason: e.to_string(),
            })?;
        let gains = (self.p.k_p, self.p.k_d);
        let solved = Treated {
            inner: sys,
            rows: Cow::Owned(split.solved.clone()),
            penalty: Cow::Owned(split.penalty.clone()),
            gains,
        };
        let mut y = State::mechanical(
            state.t,
            state.q.clone(),
            state.v.clone(),
            split.solved.rows().len(),
        );
        let solved: Box<dyn MechanicalSystem + 's> = Box::new(solved);
        let inner = inner.start_on(solved, &mut y, opts)?;
        let mut mass = Vec::new();
        let mut projector = None;
        if !split.projected.rows().is_empty() {
            let projected = Treated {
                inner: sys,
                rows: Cow::Borrowed(&split.projected),
                penalty: Cow::Borrowed(&[]),
                gains,
            };
            let pattern = kkt_pattern(&projected);
            mass = vec![0.0; pattern.a_lower.len()];
            projector = Some(
                KktSolver::new(&pattern, self.p.kkt.options(opts))
                    .map_err(|e| MethodError::Init(linear_error(state.t, e)))?,
            );
        }
        let stepper = TypedStepper {
            sys,
            p: self.p.clone(),
            order: self.order.clone(),
            split,
            inner,
            inner_state: y,
            projector,
            mass,
            stats: MethodStats::default(),
        };
        stepper.write_back(sys, &stepper.split, state);
        Ok(Box::new(stepper))
    }
}

impl Stepper for TypedStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let sys = self.sys;
        let result = step_treated(
            &mut *self.inner,
            (&mut self.projector, &mut self.mass),
            sys,
            &self.split,
            (&mut self.inner_state, state),
            h,
            (&self.p, &self.order),
        );
        if let Ok(report) = &result {
            self.stats.steps += 1;
            self.stats.projection_iterations += report.projection_iterations;
            self.write_back(sys, &self.split, state);
        }
        result
    }
    fn stats(&self) -> MethodStats {
        let inner = self.inner.stats();
        MethodStats {
            steps: self.stats.steps,
            projection_iterations: self.stats.projection_iterations,
            ..inner
        }
    }
}

/// One step: the inner Baumgarte step on the solved rows (penalty forces added), then
/// the correction groups in `p.order` (projection, contacts), then the accelerations at the
/// corrected state.
fn step_treated(
    inner: &mut dyn Stepper, (projector, mass): (&mut Option<KktSolver>, &mut Vec<f64>),
    sys: &dyn MechanicalSystem, split: &Split, (y, state): (&mut State, &State), h: f64,
    (p, order): (&TypedParams, &[Group]),
) -> Result<StepReport, StepError> {
    y.t = state.t;
    y.q.clone_from(&state.q);
    y.v.clone_from(&state.v);
    let gains = (p.k_p, p.k_d);
    let mut report = inner.step(y, h)?;
    let mut corrected = false;
    for group in order {
        match group {
            Group::Projection => {
                let Some(kkt) = projector.as_mut() else {
                    continue;
                };
                let projected = Treated {
                    inner: sys,
                    rows: Cow::Borrowed(&split.projected),
                    penalty: Cow::Borrowed(&[]),
                    gains,
                };
                report.projection_iterations +=
                    project_rows(kkt, mass, &projected, y, p.projection_tol)?;
                corrected = true;
            }
            Group::Contact => {
                let lcp = Lcp {
                    tol: p.lcp_tol,
                    max_iter: p.lcp_max_iter,
                };
                corrected |= apply_contacts(sys, y, &state.v, lcp)? > 0;
            }
        }
    }
    if corrected {
        inner.refresh(y)?;
    }
    Ok(report)
}

/// The catalog id `typed`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "typed";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(Typed::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<TypedParams>,
    }
}
