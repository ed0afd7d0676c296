//! Metrics sampled along a run, computed identically for every method.
//!
//! [`Metrics`] are evaluated by [`crate::drive()`] after every step (one definition for all
//! methods); observers decide what to keep: [`MetricsObserver`] keeps maxima/finals over
//! **every** step and a trace at a stride, [`TrajectoryRecorder`] keeps full states.

pub use crate::evaluate::{Observation, Published};
use crate::state::State;

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
    /// Penetration of the unilateral rows, `max_i max(0, −g_i(q))` (NaN without them).
    pub penetration: f64,
    /// Approach velocity of the closed unilateral rows, `max over g_i ≤ 0 of max(0, −ġ_i)`
    /// with `ġ = G v` (NaN without unilateral rows).
    pub approach_velocity: f64,
    /// The exact solution's own residuals at this time ([`RefResiduals`]; NaN without
    /// an exact solution).
    pub reference: RefResiduals,
}

impl Metrics {
    /// Every metric undefined (`NaN`) at time `t`: the base a system kind that measures
    /// only some columns fills in (`Metrics { err_q, ..Metrics::undefined(t) }`).
    pub fn undefined(t: f64) -> Self {
        Self {
            t,
            pos_residual: f64::NAN,
            vel_residual: f64::NAN,
            acc_residual: f64::NAN,
            energy_rel_error: f64::NAN,
            err_q: f64::NAN,
            err_v: f64::NAN,
            err_lambda: f64::NAN,
            deferred_residual: f64::NAN,
            penetration: f64::NAN,
            approach_velocity: f64::NAN,
            reference: RefResiduals::default(),
        }
    }
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

/// Something that watches a run. Called after initialization (step 0) and after every
/// step, with what [`crate::drive()`] evaluated for that state ([`Observation`]: the
/// state, its metrics, the constraint rows, the momentum error, the published score).
/// An observer needs no system: the evaluator bound at the start computed it all.
pub trait Observer {
    /// Observe one evaluated state (`o.last` is true for the final state of the run,
    /// successful or not).
    fn observe(&mut self, o: &Observation<'_>);

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
    /// max over all steps of the unilateral rows' penetration.
    pub max_penetration: f64,
    /// max over all steps of the closed unilateral rows' approach velocity.
    pub max_approach_velocity: f64,
    /// Significant correct digits against the problem's published reference, for a run
    /// that ends at the reference time ([`crate::ReferenceSolution::scd`]).
    pub scd: f64,
    /// The worst of the reference's own residuals at the compared points (the exact
    /// solution at every evaluated state, a published reference at its time).
    #[serde(default)]
    pub reference: RefResiduals,
    /// The 2 % settling time of a start off the constraints: the time, from t₀, of the last
    /// observed state with ‖Φ‖∞ above 2 % of its start (Ogata, Modern Control Engineering,
    /// §5-3); NaN for a start within 1e-8 of the constraints, or when the last observed
    /// state is still above the band.
    #[serde(default = "nan")]
    pub settle_time: f64,
    /// Local maxima of ‖Φ‖∞ above that 2 % band among the observed states: how often the
    /// constraint error swung back (0 when it decays monotonically); NaN as `settle_time`.
    #[serde(default = "nan")]
    pub residual_peaks: f64,
}

/// How a constraint violation present at the start decays: the settling time and the
/// peaks of the time response of control engineering (Ogata, Modern Control Engineering,
/// 5th ed., 2010, §5-3), applied to `e(t) = ‖Φ(t, q)‖∞`, the error whose dynamics
/// Baumgarte's feedback shapes into `ë + 2αė + β²e = 0` (seed 001 §3.3.2).
///
/// The band is 2 % of `e(t₀)`. `settle_time` is the time of the last observed state with
/// `e` above the band (t₀ if none), measured from t₀ — NaN when the last observed state is
/// still above it (the error has not settled within the run). `residual_peaks` counts the strict
/// local maxima of `e` above the band among the observed states. A critically damped or
/// over-damped error decays monotonically and has none, and an under-damped one
/// (α < β) has one each half period, since `|e|` peaks at every swing. Both stay NaN for
/// a start within 1e-8 of the constraints: there is nothing to settle.
#[derive(Clone, Copy, Debug)]
struct Settling {
    t0: f64,
    band: f64,
    last_above: f64,
    /// The two previous values of e, for the local-maximum test.
    previous: [f64; 2],
    peaks: usize,
    /// Whether the last observed state is above the band.
    above_now: bool,
}

/// Starts whose ‖Φ‖∞ is at most this count as consistent for [`Settling`].
const SETTLING_START: f64 = 1e-8;

impl Settling {
    fn start(t: f64, e: f64) -> Option<Self> {
        (e > SETTLING_START).then_some(Self {
            t0: t,
            band: 0.02 * e,
            last_above: t,
            previous: [f64::NAN, e],
            peaks: 0,
            above_now: false,
        })
    }

    fn observe(&mut self, t: f64, e: f64) {
        self.above_now = e > self.band || e.is_nan();
        if self.above_now {
            self.last_above = t;
        }
        let [before, middle] = self.previous;
        if middle > before && middle > e && middle > self.band {
            self.peaks += 1;
        }
        self.previous = [middle, e];
    }

    fn write(&self, s: &mut SummaryMetrics) {
        s.settle_time = if self.above_now {
            f64::NAN
        } else {
            self.last_above - self.t0
        };
        s.residual_peaks = self.peaks as f64;
    }
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
            max_penetration: n,
            max_approach_velocity: n,
            scd: n,
            reference: RefResiduals::default(),
            settle_time: n,
            residual_peaks: n,
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
    /// The decay of the start's violation (`None` before the first state and for a
    /// consistent start).
    settling: Option<Settling>,
    started: bool,
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
            settling: None,
            started: false,
        }
    }

    /// Also watch every position-level row against its allowed violation.
    pub fn with_allowed_violation(mut self, allowed: Option<AllowedViolation>) -> Self {
        self.allowed = allowed;
        self
    }

    /// Follow the decay of the start's violation.
    fn settle(&mut self, t: f64, e: f64) {
        if !self.started {
            self.started = true;
            self.settling = Settling::start(t, e);
        } else if let Some(s) = &mut self.settling {
            s.observe(t, e);
        }
        if let Some(s) = &self.settling {
            s.write(&mut self.summary);
        }
    }

    /// Compare the rows of `Φ(t, q)` (index-1: `g`) at time `t` with their allowances.
    fn monitor(&mut self, t: f64, rows: &[f64]) {
        let Some(allowed) = &self.allowed else {
            return;
        };
        let w = &mut self.warnings;
        let mut beyond = false;
        for (i, phi) in rows.iter().enumerate() {
            let ratio = phi.abs() / allowed.of(i);
            beyond |= ratio > 1.0 || ratio.is_nan();
            if w.worst_ratio.is_none_or(|r| ratio > r || ratio.is_nan()) {
                w.worst_ratio = Some(ratio);
                w.worst_row = Some(i);
            }
        }
        if beyond {
            w.states += 1;
            w.first_time.get_or_insert(t);
        }
    }
}

impl Observer for MetricsObserver {
    fn observe(&mut self, o: &Observation<'_>) {
        let (m, step, last) = (o.metrics, o.step, o.last);
        if let Some(p) = o.published {
            self.summary.scd = p.scd;
            self.summary.reference = self.summary.reference.max(p.residuals);
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
        s.max_penetration = nan_max(s.max_penetration, m.penetration);
        s.max_approach_velocity = nan_max(s.max_approach_velocity, m.approach_velocity);
        self.monitor(o.state.t, o.rows);
        self.settle(m.t, m.pos_residual);
        let dp = o.momentum_error;
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
    /// The rows of `Φ(t, q)` (index-1: `g`) at each recorded state, in the order of
    /// `points`: the per-row violation seed 001 §3.12 asks to visualize.
    pub rows: Vec<Vec<f64>>,
}

impl TrajectoryRecorder {
    /// A recorder keeping every `stride`-th state (at least 1).
    pub fn new(stride: usize) -> Self {
        Self {
            stride: stride.max(1),
            points: Vec::new(),
            rows: Vec::new(),
        }
    }
}

impl Observer for TrajectoryRecorder {
    fn observe(&mut self, o: &Observation<'_>) {
        if (o.step.is_multiple_of(self.stride) || o.last)
            && self.points.last().map(|p| p.1.t) != Some(o.metrics.t)
        {
            self.points.push((o.state.clone(), *o.metrics));
            self.rows.push(o.rows.to_vec());
        }
    }

    fn wants(&self, step: usize) -> bool {
        step.is_multiple_of(self.stride)
    }
}
