//! Metrics sampled along a run, computed identically for every method.
//!
//! [`Metrics`] are evaluated by [`crate::drive()`] after every step (one definition for all
//! methods); observers decide what to keep: [`MetricsObserver`] keeps maxima/finals over
//! **every** step and a trace at a stride, [`TrajectoryRecorder`] keeps full states.

use crate::pattern::{ProductPattern, SparsityPattern};
use crate::state::State;
use crate::system::{MechanicalSystem, SystemRef};

/// Metrics of one state. `NaN` means "not defined for this problem/method" (no exact
/// solution, no energy, no multipliers); writers turn it into a null.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metrics {
    /// Time.
    pub t: f64,
    /// Position residual `‖Φ(t, q)‖∞` (index-1: `‖g(t, x, z)‖∞`).
    pub pos_residual: f64,
    /// Velocity residual `‖Φ_q v + Φ_t‖∞`.
    pub vel_residual: f64,
    /// Acceleration residual `‖Φ_q a − γ‖∞` with the method's own `a`.
    pub acc_residual: f64,
    /// Relative energy error `|H − H0| / max(|H0|, energy_scale)`.
    pub energy_rel_error: f64,
    /// `‖q − q_exact(t)‖∞` (index-1: differential variables).
    pub err_q: f64,
    /// `‖v − v_exact(t)‖∞`.
    pub err_v: f64,
    /// `‖λ − λ_exact(t)‖∞` (index-1: algebraic variables).
    pub err_lambda: f64,
    /// `‖Φ‖∞` over the rows of lower priority (problems with priorities only; the three
    /// residuals above then cover the priority-0 rows). NaN without priorities.
    pub deferred_residual: f64,
    /// The exact solution's own residuals at this time ([`RefResiduals`]; NaN without
    /// an exact solution).
    pub reference: RefResiduals,
}

/// A reference state's own residuals, the run-time self-check that keeps a broken
/// reference from passing as a method's error: `‖Φ(t, q_ref)‖∞`,
/// `‖Φ_q v_ref + Φ_t‖∞` and `|H(q_ref, v_ref) − H0| / max(|H0|, scale)` against the run's
/// initial energy (index-1: `‖g(t, x_ref, z_ref)‖∞` only). NaN where undefined.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RefResiduals {
    /// `‖Φ(t, q_ref)‖∞` (index-1: `‖g‖∞`).
    pub pos: f64,
    /// `‖Φ_q v_ref + Φ_t‖∞`.
    pub vel: f64,
    /// Relative energy error of the reference state.
    pub energy: f64,
}

impl Default for RefResiduals {
    fn default() -> Self {
        Self {
            pos: f64::NAN,
            vel: f64::NAN,
            energy: f64::NAN,
        }
    }
}

impl RefResiduals {
    /// The worse of two (a NaN side is ignored).
    pub fn max(self, o: Self) -> Self {
        Self {
            pos: nan_max(self.pos, o.pos),
            vel: nan_max(self.vel, o.vel),
            energy: nan_max(self.energy, o.energy),
        }
    }

    /// The largest of the three (NaN when all are undefined).
    pub fn worst(&self) -> f64 {
        nan_max(nan_max(self.pos, self.vel), self.energy)
    }
}

/// Evaluates [`Metrics`] with preallocated buffers.
pub struct MetricsEvaluator {
    /// Rows of lower priority (excluded from the residuals, reported apart).
    deferred: Vec<usize>,
    h0: f64,
    scale: f64,
    phi: Vec<f64>,
    jac: Vec<f64>,
    /// Φ_q's pattern (built once: a problem may assemble it on every call).
    pattern: ProductPattern,
    gamma: Vec<f64>,
    phit: Vec<f64>,
    jv: Vec<f64>,
    z: Vec<f64>,
}

fn inf_norm(x: &[f64]) -> f64 {
    x.iter().fold(0.0_f64, |m, v| {
        if v.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.max(v.abs())
        }
    })
}

fn inf_diff(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return f64::NAN;
    }
    a.iter().zip(b).fold(0.0_f64, |m, (x, y)| {
        if (x - y).is_nan() {
            f64::NAN
        } else {
            m.max((x - y).abs())
        }
    })
}

impl MetricsEvaluator {
    /// Prepare for `sys`, with the reference energy taken from `initial`.
    pub fn new(sys: SystemRef<'_>, initial: &State) -> Self {
        match sys {
            SystemRef::Mechanical(s) => {
                let d = s.dims();
                let h0 = s
                    .energy(initial.t, &initial.q, &initial.v)
                    .unwrap_or(f64::NAN);
                let pattern = s.jacobian_pattern();
                let deferred = s
                    .prioritized()
                    .map(|p| p.priorities())
                    .map(|p| (0..p.len()).filter(|&r| p[r] > 0).collect())
                    .unwrap_or_default();
                Self {
                    deferred,
                    h0,
                    scale: h0.abs().max(s.energy_scale()),
                    phi: vec![0.0; d.m],
                    jac: vec![0.0; pattern.nnz()],
                    pattern: ProductPattern::new(pattern),
                    gamma: vec![0.0; d.m],
                    phit: vec![0.0; d.m],
                    jv: vec![0.0; d.m],
                    z: Vec::new(),
                }
            }
            SystemRef::SemiExplicit(s) => {
                let (_, nz) = s.dims();
                Self {
                    deferred: Vec::new(),
                    h0: f64::NAN,
                    scale: f64::NAN,
                    phi: vec![0.0; nz],
                    jac: Vec::new(),
                    pattern: ProductPattern::new(SparsityPattern::new(0, 0, Vec::new())),
                    gamma: Vec::new(),
                    phit: Vec::new(),
                    jv: Vec::new(),
                    z: Vec::new(),
                }
            }
        }
    }

    /// The residuals of the mechanical state `(t, q, v)` of `s`: `‖Φ‖∞` and
    /// `‖Φ_q v + Φ_t‖∞` (lower-priority rows excluded), and its relative energy error;
    /// `self.jac` holds `Φ_q(t, q)` afterwards.
    fn residuals(
        &mut self, s: &dyn crate::system::MechanicalSystem, t: f64, q: &[f64], v: &[f64],
    ) -> RefResiduals {
        s.constraints(t, q, &mut self.phi);
        for &r in &self.deferred {
            self.phi[r] = 0.0;
        }
        let pos = inf_norm(&self.phi);
        s.jacobian(t, q, &mut self.jac);
        self.pattern.mul_vec(&self.jac, v, &mut self.jv);
        s.phi_t(t, q, &mut self.phit);
        for (a, b) in self.jv.iter_mut().zip(&self.phit) {
            *a += b;
        }
        for &r in &self.deferred {
            self.jv[r] = 0.0;
        }
        let energy = match s.energy(t, q, v) {
            Some(h) => (h - self.h0).abs() / self.scale,
            None => f64::NAN,
        };
        RefResiduals {
            pos,
            vel: inf_norm(&self.jv),
            energy,
        }
    }

    /// The residuals of a reference state of `sys` at `t` ([`RefResiduals`]).
    pub fn reference_residuals(
        &mut self, sys: SystemRef<'_>, t: f64, r: &crate::system::ExactSolution,
    ) -> RefResiduals {
        let dims_ok = |n: usize| r.q.len() == n;
        // A reference position that is not a number is as far off its manifold as can be
        // (NaN velocities or multipliers are ones a reference does not give: the IVP Test
        // Set's snake gives positions only).
        if !r.q.iter().all(|v| v.is_finite()) {
            return RefResiduals {
                pos: f64::INFINITY,
                ..RefResiduals::default()
            };
        }
        match sys {
            SystemRef::Mechanical(s) if dims_ok(s.dims().n) && r.v.len() == r.q.len() => {
                self.residuals(s, t, &r.q, &r.v)
            }
            SystemRef::SemiExplicit(s) if dims_ok(s.dims().0) && r.lambda.len() == s.dims().1 => {
                self.z.clone_from(&r.lambda);
                s.g(t, &r.q, &self.z, &mut self.phi);
                RefResiduals {
                    pos: inf_norm(&self.phi),
                    ..RefResiduals::default()
                }
            }
            _ => RefResiduals::default(),
        }
    }

    /// Metrics of `state`.
    pub fn evaluate(&mut self, sys: SystemRef<'_>, state: &State) -> Metrics {
        let exact = sys.exact(state.t);
        let reference = match &exact {
            Some(e) => self.reference_residuals(sys, state.t, e),
            None => RefResiduals::default(),
        };
        let (err_q, err_v, err_lambda) = match &exact {
            Some(e) => (
                inf_diff(&state.q, &e.q),
                inf_diff(&state.v, &e.v),
                inf_diff(&state.lambda, &e.lambda),
            ),
            None => (f64::NAN, f64::NAN, f64::NAN),
        };
        let errors = (err_q, err_v, err_lambda);
        match sys {
            SystemRef::Mechanical(s) => self.mechanical(s, state, errors, reference),
            SystemRef::SemiExplicit(s) => {
                self.z.clone_from(&state.lambda);
                s.g(state.t, &state.q, &self.z, &mut self.phi);
                Metrics {
                    t: state.t,
                    pos_residual: inf_norm(&self.phi),
                    vel_residual: f64::NAN,
                    acc_residual: f64::NAN,
                    energy_rel_error: f64::NAN,
                    err_q,
                    err_v: f64::NAN,
                    err_lambda,
                    deferred_residual: f64::NAN,
                    reference,
                }
            }
        }
    }

    /// Metrics of a mechanical system's `state`, given its errors against the exact
    /// solution `(q, v, λ)` and the reference's residuals.
    fn mechanical(
        &mut self, s: &dyn MechanicalSystem, state: &State,
        (err_q, err_v, err_lambda): (f64, f64, f64), reference: RefResiduals,
    ) -> Metrics {
        let t = state.t;
        s.constraints(t, &state.q, &mut self.phi);
        let deferred = if self.deferred.is_empty() {
            f64::NAN
        } else {
            self.deferred
                .iter()
                .fold(0.0_f64, |m, &r| m.max(self.phi[r].abs()))
        };
        for &r in &self.deferred {
            self.phi[r] = 0.0;
        }
        let pos = inf_norm(&self.phi);
        s.jacobian(t, &state.q, &mut self.jac);
        let pat = &self.pattern;
        pat.mul_vec(&self.jac, &state.v, &mut self.jv);
        s.phi_t(t, &state.q, &mut self.phit);
        for (a, b) in self.jv.iter_mut().zip(&self.phit) {
            *a += b;
        }
        for &r in &self.deferred {
            self.jv[r] = 0.0;
        }
        let vel = inf_norm(&self.jv);
        let acc = if state.a.iter().any(|x| x.is_nan()) || state.a.is_empty() {
            f64::NAN
        } else {
            s.curvature(t, &state.q, &state.v, &mut self.gamma);
            pat.mul_vec(&self.jac, &state.a, &mut self.jv);
            for (a, b) in self.jv.iter_mut().zip(&self.gamma) {
                *a -= b;
            }
            for &r in &self.deferred {
                self.jv[r] = 0.0;
            }
            inf_norm(&self.jv)
        };
        let energy = match s.energy(t, &state.q, &state.v) {
            Some(h) => (h - self.h0).abs() / self.scale,
            None => f64::NAN,
        };
        Metrics {
            t,
            pos_residual: pos,
            vel_residual: vel,
            acc_residual: acc,
            energy_rel_error: energy,
            err_q,
            err_v,
            err_lambda,
            deferred_residual: deferred,
            reference,
        }
    }
}

/// Something that watches a run. Called after initialization (step 0) and after every
/// step, with the metrics [`crate::drive()`] computed for that state.
pub trait Observer {
    /// Observe `state` after `step` steps; `last` is true for the final state of the run
    /// (successful or not).
    fn observe(
        &mut self, sys: SystemRef<'_>, state: &State, metrics: &Metrics, step: usize, last: bool,
    );

    /// Whether this observer needs the metrics of `step` even when the schedule's
    /// metrics stride skips it (a trace sampling that step). Default: no.
    fn wants(&self, step: usize) -> bool {
        let _ = step;
        false
    }
}

/// One sampled point of a trace.
pub type Sample = Metrics;

/// Maxima and final values over a run (NaN where undefined).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SummaryMetrics {
    /// max over all steps of the position residual.
    pub max_pos_residual: f64,
    /// max over all steps of `‖p − p₀‖∞` of the problem's conserved momenta.
    #[serde(default = "nan")]
    pub max_momentum_error: f64,
    /// `‖p − p₀‖∞` at the last state.
    #[serde(default = "nan")]
    pub final_momentum_error: f64,
    /// max velocity residual.
    pub max_vel_residual: f64,
    /// max acceleration residual.
    pub max_acc_residual: f64,
    /// position residual at the last state.
    pub final_pos_residual: f64,
    /// velocity residual at the last state.
    pub final_vel_residual: f64,
    /// max relative energy error.
    pub max_energy_rel_error: f64,
    /// relative energy error at the last state.
    pub final_energy_rel_error: f64,
    /// max over all steps of `‖q − q_exact‖∞`.
    pub err_q: f64,
    /// max over all steps of `‖v − v_exact‖∞`.
    pub err_v: f64,
    /// max over all steps of `‖λ − λ_exact‖∞`.
    pub err_lambda: f64,
    /// `‖q − q_exact‖∞` at the last state.
    pub final_err_q: f64,
    /// `‖v − v_exact‖∞` at the last state.
    pub final_err_v: f64,
    /// `‖λ − λ_exact‖∞` at the last state.
    pub final_err_lambda: f64,
    /// max over all steps of the lower-priority residual.
    pub max_deferred_residual: f64,
    /// Lower-priority residual at the last state.
    pub final_deferred_residual: f64,
    /// Significant correct digits against the problem's published reference, for a run
    /// that ends at the reference time ([`crate::ReferenceSolution::scd`]).
    pub scd: f64,
    /// The worst of the reference's own residuals at the compared points (the exact
    /// solution at every evaluated state, a published reference at its time).
    #[serde(default)]
    pub reference: RefResiduals,
}

fn nan_max(a: f64, b: f64) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, _) => b,
        (_, true) => a,
        _ => a.max(b),
    }
}

impl Default for SummaryMetrics {
    fn default() -> Self {
        let n = f64::NAN;
        Self {
            max_pos_residual: n,
            max_momentum_error: n,
            final_momentum_error: n,
            max_vel_residual: n,
            max_acc_residual: n,
            final_pos_residual: n,
            final_vel_residual: n,
            max_energy_rel_error: n,
            final_energy_rel_error: n,
            err_q: n,
            err_v: n,
            err_lambda: n,
            final_err_q: n,
            final_err_v: n,
            final_err_lambda: n,
            max_deferred_residual: n,
            final_deferred_residual: n,
            scd: n,
            reference: RefResiduals::default(),
        }
    }
}

/// The allowed violation of each position-level row (seed 001 §3.12: "考虑约束的物理意义和
/// 容许违背程度", and "添加约束违背监控和警告机制"): one value for all rows or one per row.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum AllowedViolation {
    /// The same for every row.
    All(f64),
    /// One per row of Φ (index-1: of g).
    Rows(Vec<f64>),
}

impl AllowedViolation {
    /// The allowance of row `i`.
    pub fn of(&self, i: usize) -> f64 {
        match self {
            Self::All(x) => *x,
            Self::Rows(v) => v.get(i).copied().unwrap_or(f64::INFINITY),
        }
    }
}

/// What the violation monitor saw: the states where some row exceeded its allowance.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ViolationWarnings {
    /// Time of the first state beyond an allowance.
    pub first_time: Option<f64>,
    /// Evaluated states beyond an allowance.
    pub states: usize,
    /// Largest `|Φ_i| / allowance_i` over the evaluated states.
    pub worst_ratio: Option<f64>,
    /// The row of the largest ratio.
    pub worst_row: Option<usize>,
}

/// Keeps summary metrics over every step and a trace every `stride` steps (the first
/// and the last state are always in the trace), and, with an allowance, the violation
/// warnings.
pub struct MetricsObserver {
    stride: usize,
    /// Summary over the run so far.
    pub summary: SummaryMetrics,
    /// Sampled trace.
    pub trace: Vec<Sample>,
    allowed: Option<AllowedViolation>,
    /// What the violation monitor saw (all zero without an allowance).
    pub warnings: ViolationWarnings,
    rows: Vec<f64>,
    /// The momenta at the first observed state.
    momentum0: Option<Vec<f64>>,
}

fn nan() -> f64 {
    f64::NAN
}

impl MetricsObserver {
    /// An observer tracing every `stride` steps (`stride = 0` keeps no trace).
    pub fn new(stride: usize) -> Self {
        Self {
            stride,
            summary: SummaryMetrics::default(),
            trace: Vec::new(),
            allowed: None,
            warnings: ViolationWarnings::default(),
            rows: Vec::new(),
            momentum0: None,
        }
    }

    /// `‖p − p₀‖∞` of the conserved momenta, where the problem defines them.
    fn momentum_error(&mut self, sys: SystemRef<'_>, state: &State) -> f64 {
        let SystemRef::Mechanical(s) = sys else {
            return f64::NAN;
        };
        let Some(p) = s.momentum(state.t, &state.q, &state.v) else {
            return f64::NAN;
        };
        let p0 = self.momentum0.get_or_insert_with(|| p.clone());
        p.iter()
            .zip(p0.iter())
            .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()))
    }

    /// The residuals of a published reference state (its position and velocity rows;
    /// its energy against the run's initial energy is not checked: the energy of a driven
    /// or stiff Test Set problem is not conserved).
    fn published_residuals(
        &mut self, sys: SystemRef<'_>, t: f64, r: &crate::system::ExactSolution,
    ) -> RefResiduals {
        let mut e = MetricsEvaluator::new(sys, &sys.initial_state());
        RefResiduals {
            energy: f64::NAN,
            ..e.reference_residuals(sys, t, r)
        }
    }

    /// Also watch every position-level row against its allowed violation.
    pub fn with_allowed_violation(mut self, allowed: Option<AllowedViolation>) -> Self {
        self.allowed = allowed;
        self
    }

    /// Compare the rows of `Φ(t, q)` (index-1: `g`) at `state` with their allowances.
    fn monitor(&mut self, sys: SystemRef<'_>, state: &State) {
        let Some(allowed) = &self.allowed else {
            return;
        };
        match sys {
            SystemRef::Mechanical(s) => {
                self.rows.resize(s.dims().m, 0.0);
                s.constraints(state.t, &state.q, &mut self.rows);
            }
            SystemRef::SemiExplicit(s) => {
                self.rows.resize(s.dims().1, 0.0);
                s.g(state.t, &state.q, &state.lambda, &mut self.rows);
            }
        }
        let w = &mut self.warnings;
        let mut beyond = false;
        for (i, phi) in self.rows.iter().enumerate() {
            let ratio = phi.abs() / allowed.of(i);
            beyond |= ratio > 1.0 || ratio.is_nan();
            if w.worst_ratio.is_none_or(|r| ratio > r || ratio.is_nan()) {
                w.worst_ratio = Some(ratio);
                w.worst_row = Some(i);
            }
        }
        if beyond {
            w.states += 1;
            w.first_time.get_or_insert(state.t);
        }
    }
}

impl Observer for MetricsObserver {
    fn observe(&mut self, sys: SystemRef<'_>, state: &State, m: &Metrics, step: usize, last: bool) {
        if last {
            if let Some(r) = sys.reference() {
                if (state.t - r.t).abs() <= 1e-9 * r.t.abs().max(1.0) {
                    self.summary.scd = r.scd(&state.q, &state.v, &state.lambda);
                    let own = self.published_residuals(sys, r.t, &r.state);
                    self.summary.reference = self.summary.reference.max(own);
                }
            }
        }
        let s = &mut self.summary;
        s.reference = s.reference.max(m.reference);
        s.max_pos_residual = nan_max(s.max_pos_residual, m.pos_residual);
        s.max_vel_residual = nan_max(s.max_vel_residual, m.vel_residual);
        s.max_acc_residual = nan_max(s.max_acc_residual, m.acc_residual);
        s.max_energy_rel_error = nan_max(s.max_energy_rel_error, m.energy_rel_error);
        s.err_q = nan_max(s.err_q, m.err_q);
        s.err_v = nan_max(s.err_v, m.err_v);
        s.err_lambda = nan_max(s.err_lambda, m.err_lambda);
        s.final_pos_residual = m.pos_residual;
        s.final_vel_residual = m.vel_residual;
        s.final_energy_rel_error = m.energy_rel_error;
        s.final_err_q = m.err_q;
        s.final_err_v = m.err_v;
        s.final_err_lambda = m.err_lambda;
        s.max_deferred_residual = nan_max(s.max_deferred_residual, m.deferred_residual);
        s.final_deferred_residual = m.deferred_residual;
        self.monitor(sys, state);
        let dp = self.momentum_error(sys, state);
        let s = &mut self.summary;
        s.max_momentum_error = nan_max(s.max_momentum_error, dp);
        s.final_momentum_error = dp;
        if self.stride > 0
            && (step.is_multiple_of(self.stride) || last)
            && self.trace.last().map(|p| p.t) != Some(m.t)
        {
            self.trace.push(*m);
        }
    }

    fn wants(&self, step: usize) -> bool {
        self.stride > 0 && step.is_multiple_of(self.stride)
    }
}

/// Records full states (and their metrics) every `stride` steps.
pub struct TrajectoryRecorder {
    stride: usize,
    /// Recorded `(state, metrics)` pairs.
    pub points: Vec<(State, Metrics)>,
}

impl TrajectoryRecorder {
    /// A recorder keeping every `stride`-th state (at least 1).
    pub fn new(stride: usize) -> Self {
        Self {
            stride: stride.max(1),
            points: Vec::new(),
        }
    }
}

impl Observer for TrajectoryRecorder {
    fn observe(
        &mut self, _sys: SystemRef<'_>, state: &State, m: &Metrics, step: usize, last: bool,
    ) {
        if (step.is_multiple_of(self.stride) || last)
            && self.points.last().map(|p| p.1.t) != Some(m.t)
        {
            self.points.push((state.clone(), *m));
        }
    }

    fn wants(&self, step: usize) -> bool {
        step.is_multiple_of(self.stride)
    }
}
