//! [`drive()`]: the only time loop in the workspace.
//!
//! Every method, every experiment, every test steps through this loop, so that step
//! counting, time bookkeeping, non-finite checks, the step budget, timing and metric
//! sampling are identical for all methods.
//!
//! Two schedules: fixed steps `t_k = t₀ + k h` (the default), and error-controlled
//! steps ([`Adaptive`]) for methods that return a local error estimate with each step: a
//! [`StepController`] accepts or rejects each step and proposes the next `h`; a rejected
//! step, or a step whose Newton iteration failed, is retried from the restored state
//! with a smaller `h`; `h_min` and the step budget end the run as a failed row with its
//! reason. Observers see accepted steps only, and the end time and the output times of
//! `output_dt` are hit exactly (the step is clipped onto them).

use crate::control::{ControllerKind, StepController, Tolerances};
use crate::error::{MethodError, RunError, StepError};
use crate::evaluate::{Evaluate, Observation};
use crate::method::{Method, MethodInfo, MethodStats, StartOptions, StepReport, Stepper};
use crate::observe::Observer;
use crate::state::State;
use crate::system::{Dims, SystemRef};
mod rollout;
pub use rollout::Rollout;
use std::ops::RangeInclusive;
use std::time::Instant;

/// How a run takes its steps, and the limits common to every kind of step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// Fixed, error-controlled or method-controlled steps.
    pub steps: Steps,
    /// Refuse to run more steps than this (a failed run, not a hang).
    pub max_steps: usize,
    /// A run whose `‖q‖∞` exceeds `divergence_factor · (1 + ‖q₀‖∞)` has diverged: it
    /// fails with [`StepError::Diverged`] instead of producing astronomically large but
    /// finite numbers.
    pub divergence_factor: f64,
    /// Evaluate the metrics (residuals, energy, errors) after every `metrics_stride`-th
    /// step only, and after the first and the last state and whenever an observer
    /// [`wants`](Observer::wants) the step (1 = every step). The run's maxima are then
    /// maxima over the evaluated states; their cost is [`RunOutcome::observe_seconds`].
    pub metrics_stride: usize,
    /// Stop the run as failed ([`StepError::TimeBudget`]) once the wall clock passes this
    /// deadline (checked every [`DEADLINE_EVERY`] fixed steps and every error-controlled
    /// step; a step in progress is finished first). `None`: no time budget.
    pub deadline: Option<Deadline>,
    /// What the caller's observers keep over the run ([`Retained`]), counted with the
    /// state in the memory check before the run starts.
    pub retained: Retained,
    /// Threads the method's linear solvers may use inside the run
    /// ([`StartOptions::threads`]; 1 = sequential, the default).
    pub threads: usize,
}

/// The three ways a run steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Steps {
    /// `n` steps of size exactly `h`, `t_k = t₀ + k h`.
    Fixed {
        /// Step size.
        h: f64,
        /// Number of steps (saturating at `usize::MAX` for an interval no budget covers).
        n: usize,
        /// The steps the interval asks for, `t_end / h`, as a real number: what the
        /// budget check compares and reports (it cannot overflow).
        asked: f64,
    },
    /// Error-controlled steps: the loop's [`StepController`] accepts or rejects each step
    /// by the method's local error estimate and proposes the next `h`.
    Adaptive(Adaptive),
    /// The method controls its own steps ([`crate::ErrorEstimate::own_controller`], an
    /// external code such as SUNDIALS IDA): the loop offers the distance to the next
    /// output time and the method takes one internal step of at most that length.
    MethodControlled(Adaptive),
}

/// What the observers of a run keep for the whole run (a sampled trace), so that the
/// memory check before the first step counts it: `samples` metric samples and, with
/// `states`, a full state at each.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Retained {
    /// Samples kept.
    pub samples: u64,
    /// Whether each sample also keeps the state `(q, v, λ)`.
    pub states: bool,
}

impl Retained {
    /// Bytes kept for a system of `n` coordinates and `m` rows.
    pub fn bytes(&self, n: usize, m: usize) -> u64 {
        let metrics = std::mem::size_of::<crate::observe::Metrics>() as u64;
        // q, v and λ as three vectors: values plus their headers.
        let state = if self.states {
            8 * (2 * n as u64 + m as u64) + 3 * 24
        } else {
            0
        };
        self.samples.saturating_mul(metrics + state)
    }
}

/// A run's wall-time budget: the instant it ends, and the budget it came from (named in
/// the failure).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Deadline {
    /// When the budget started (a cell's start; an ensemble's, for all its members).
    pub since: Instant,
    /// The budget in seconds.
    pub seconds: f64,
}

impl Deadline {
    /// A budget of `seconds` from now.
    pub fn from_now(seconds: f64) -> Self {
        Self {
            since: Instant::now(),
            seconds,
        }
    }

    /// The wall seconds spent, when they exceed the budget.
    pub fn passed(&self) -> Option<f64> {
        let elapsed = self.since.elapsed().as_secs_f64();
        (elapsed > self.seconds).then_some(elapsed)
    }
}

/// Fixed steps between two looks at the clock for a [`Deadline`] (a clock read costs
/// about a tenth of a pendulum's step).
pub const DEADLINE_EVERY: usize = 64;

/// An error-controlled schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Adaptive {
    /// Tolerances of the local error test.
    pub tol: Tolerances,
    /// Step-size controller.
    pub controller: ControllerKind,
    /// End time (hit exactly).
    pub t_end: f64,
    /// Initial step size.
    pub h0: f64,
    /// Smallest admissible step (a run needing less fails with
    /// [`StepError::StepSizeUnderflow`]); at least `10 ε max(|t|, ε |t_end|)`.
    pub h_min: f64,
    /// Largest step.
    pub h_max: f64,
    /// Output interval: the times `t₀ + j · output_dt` are hit exactly.
    pub output_dt: Option<f64>,
}

/// Counters of an error-controlled run.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AdaptiveStats {
    /// Accepted steps.
    pub accepted: usize,
    /// Steps rejected by the error test.
    pub rejected: usize,
    /// Steps whose Newton (or stage) iteration or linear solve failed and were retried.
    pub newton_failures: usize,
    /// Smallest accepted step.
    pub h_min_used: f64,
    /// Largest accepted step.
    pub h_max_used: f64,
}

impl Schedule {
    /// Steps of size exactly `h` up to `t_end` (the step count is `round(t_end / h)`;
    /// callers choose `h` that divides the interval — the runner snaps `h` so).
    pub fn fixed(h: f64, t_end: f64) -> Self {
        let asked = (t_end / h).round().max(0.0);
        Self::with_steps(Steps::Fixed {
            h,
            n: asked as usize,
            asked,
        })
    }
    /// Error-controlled steps over `adaptive.t_end` (method-controlled for a method with
    /// its own controller: [`drive()`] decides by the method's [`MethodInfo`]).
    pub fn adaptive(adaptive: Adaptive) -> Self {
        Self::with_steps(Steps::Adaptive(adaptive))
    }
    fn with_steps(steps: Steps) -> Self {
        Self {
            steps,
            max_steps: 50_000_000,
            divergence_factor: 1e6,
            metrics_stride: 1,
            deadline: None,
            retained: Retained::default(),
            threads: 1,
        }
    }
    /// The error-controlled schedule, if the steps are not fixed.
    pub fn error_controlled(&self) -> Option<&Adaptive> {
        match &self.steps {
            Steps::Fixed { .. } => None,
            Steps::Adaptive(a) | Steps::MethodControlled(a) => Some(a),
        }
    }
    /// End time.
    pub fn t_end(&self, t0: f64) -> f64 {
        match &self.steps {
            Steps::Fixed { h, n, .. } => t0 + *n as f64 * h,
            Steps::Adaptive(a) | Steps::MethodControlled(a) => a.t_end,
        }
    }
    /// What the method is given at its start.
    fn start_options(&self) -> StartOptions {
        let a = self.error_controlled();
        StartOptions {
            tolerances: a.map(|a| a.tol),
            step_bounds: a.map(|a| (a.h0, a.h_max)),
            threads: self.threads,
        }
    }
    /// The steps as `method` takes them: error-controlled steps become method-controlled
    /// for a method with its own controller.
    fn for_method(&self, info: &MethodInfo) -> Steps {
        match self.steps {
            Steps::Adaptive(a)
                if info
                    .error_estimate
                    .as_ref()
                    .is_some_and(|e| e.own_controller) =>
            {
                Steps::MethodControlled(a)
            }
            steps => steps,
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum RunStatus {
    /// Reached the end time.
    Ok,
    /// Stopped early: at time `t` (last successfully reached), for `error`.
    Failed {
        /// Last time reached.
        t: f64,
        /// What went wrong, typed, with its numbers.
        error: RunError,
    },
}

/// Result of [`drive()`]: status, counters and wall time per phase.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// Ok or failed with time and reason.
    pub status: RunStatus,
    /// Steps completed.
    pub steps: usize,
    /// The method's counters.
    pub stats: MethodStats,
    /// Final state (the last one reached; garbage-free: on failure, the last good state).
    pub final_state: State,
    /// Wall seconds in `init` (consistent λ0, symbolic analysis).
    pub init_seconds: f64,
    /// Wall seconds in `step`.
    pub step_seconds: f64,
    /// Wall seconds evaluating metrics and feeding observers.
    pub observe_seconds: f64,
    /// Counters of an error-controlled run (`None` for fixed steps).
    pub adaptive: Option<AdaptiveStats>,
    /// What the accepted steps' [`StepReport`]s said, beyond the method's cumulative
    /// counters.
    pub reports: StepReportSummary,
    /// The method's own named counters at the end ([`Stepper::counters`]).
    pub counters: Vec<(&'static str, usize)>,
}

/// The per-step reports of a run's accepted steps, condensed.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepReportSummary {
    /// Most Newton iterations one accepted step took (0 without Newton): how close the
    /// run came to the method's iteration limit.
    pub newton_iterations_max: usize,
    /// Largest scaled local error estimate of an accepted step (`None`: the method gives
    /// none). At fixed steps it says how far from `≤ 1` the chosen `h` is.
    pub error_max: Option<f64>,
}

impl StepReportSummary {
    /// Fold in the report of one accepted step.
    pub fn add(&mut self, r: &StepReport) {
        self.newton_iterations_max = self.newton_iterations_max.max(r.newton_iterations);
        if let Some(e) = r.error {
            // A NaN estimate stays NaN (f64::max would drop it).
            let worst = |m: f64| {
                if m.is_nan() || e.is_nan() {
                    f64::NAN
                } else {
                    m.max(e)
                }
            };
            self.error_max = Some(self.error_max.map_or(e, worst));
        }
    }
}

impl RunOutcome {
    /// Total wall seconds.
    pub fn wall_seconds(&self) -> f64 {
        self.init_seconds + self.step_seconds + self.observe_seconds
    }
}

/// Run `method` on `sys` from its initial state over `schedule`, feeding `observers`
/// after initialization and after every (accepted) step.
///
/// Never panics on numerical failure: a step error, a non-finite state or an exhausted
/// budget ends the run with [`RunStatus::Failed`] carrying the time and the reason.
///
/// The cell's [`Schedule::threads`] reach the code under it explicitly: the method's KKT
/// solver through [`StartOptions`], the problem's model
/// functions through [`MechanicalSystem::use_threads`](crate::MechanicalSystem::use_threads).
pub fn drive(
    sys: SystemRef<'_>, method: &dyn Method, schedule: &Schedule,
    observers: &mut [&mut dyn Observer],
) -> RunOutcome {
    let info = method.info();
    let (mut run, mut stepper) = match begin(sys, method, schedule, &info) {
        Ok(started) => started,
        Err(refused) => return *refused,
    };
    let steps = schedule.for_method(&info);
    if let Steps::Fixed { h, asked, .. } = steps {
        if asked.is_nan() || asked > schedule.max_steps as f64 {
            let t0 = run.state.t;
            let e = StepError::StepsBeyondBudget {
                steps: asked,
                h,
                budget: schedule.max_steps,
            };
            run.fail(t0, e);
            return run.finish(Some(stepper.as_ref()));
        }
    }
    let done = matches!(steps, Steps::Fixed { n: 0, .. });
    run.observe(0, done, observers);
    let stepper_ref = stepper.as_mut();
    match steps {
        Steps::Fixed { h, n, .. } => {
            let t0 = run.state.t;
            run.fixed_steps(stepper_ref, h, t0, 1..=n, observers)
        }
        Steps::Adaptive(a) => {
            let order = info.error_estimate.map_or(1, |e| e.order);
            run.adaptive_steps(stepper_ref, &a, order, schedule.max_steps, observers)
        }
        Steps::MethodControlled(a) => {
            run.own_controller_steps(stepper_ref, &a, schedule.max_steps, observers)
        }
    }
    run.finish(Some(stepper.as_ref()))
}

/// What every run does before its first step: the memory check, the initial state, the
/// capability check, the method's start and the metrics evaluator. `Err`: the outcome of
/// a run that ends there (refused or failed to start).
pub(crate) fn begin<'s>(
    sys: SystemRef<'s>, method: &dyn Method, schedule: &Schedule, info: &MethodInfo,
) -> Result<(Loop<'s>, Box<dyn Stepper + 's>), Box<RunOutcome>> {
    sys.use_threads(schedule.threads);
    // Before the initial state: a system too large for memory is refused before anything
    // of its size is allocated (its final state is then empty).
    if let Err(e) = refuse_oversized(sys.dims(), schedule.retained) {
        return Err(Box::new(RunOutcome::refused(e)));
    }
    let mut state = sys.initial_state();
    let clock = Instant::now();
    let started = refuse_unsupported(sys, info, schedule)
        .and_then(|()| sys.start(method, &mut state, &schedule.start_options()));
    let evaluator = sys.evaluator(&state);
    let mut run = Loop::new(evaluator, state, clock.elapsed().as_secs_f64(), schedule);
    match started {
        Ok(stepper) => Ok((run, stepper)),
        Err(e) => {
            run.fail(run.state.t, e);
            Err(Box::new(run.finish(None)))
        }
    }
}

impl RunOutcome {
    /// The outcome of a run refused before its initial state was built.
    fn refused(e: MethodError) -> Self {
        RunOutcome {
            status: RunStatus::Failed {
                t: 0.0,
                error: e.into(),
            },
            steps: 0,
            stats: MethodStats::default(),
            final_state: State::semi_explicit(0.0, Vec::new(), Vec::new()),
            init_seconds: 0.0,
            step_seconds: 0.0,
            observe_seconds: 0.0,
            adaptive: None,
            reports: StepReportSummary::default(),
            counters: Vec::new(),
        }
    }
}

/// Refuse a system whose state and least KKT storage, with what the observers keep,
/// exceed the memory limit, before the method allocates anything of its size
/// ([`crate::memory`]).
fn refuse_oversized(Dims { n, m }: Dims, retained: Retained) -> Result<(), MethodError> {
    let kept = retained.bytes(n, m);
    let mut what = format!("the state and KKT storage of {n} coordinates and {m} constraint rows");
    if kept > 0 {
        what.push_str(&format!(
            " and the trace the run keeps ({} samples{}, {})",
            retained.samples,
            if retained.states { " with states" } else { "" },
            crate::memory::human(kept)
        ));
    }
    let estimate = crate::memory::state_lower_bound(n, m).saturating_add(kept);
    crate::memory::check(0.0, &what, estimate).map_err(MethodError::Init)
}

/// Refuse a method that lacks a capability the problem or the schedule needs.
fn refuse_unsupported(
    sys: SystemRef<'_>, info: &MethodInfo, schedule: &Schedule,
) -> Result<(), MethodError> {
    let (nonholonomic, unilateral, prioritized) = match sys.as_mechanical() {
        Some(s) => (
            s.nonholonomic_rows(),
            s.unilateral().map_or(0, |u| u.rows()),
            s.prioritized().is_some(),
        ),
        None => (0, 0, false),
    };
    let refuse = |form: &'static str, hint: String| {
        Err(MethodError::UnsupportedForm {
            method: info.id.clone(),
            form,
            hint,
        })
    };
    if prioritized && !info.priorities {
        return refuse("prioritized", format!(
            "the problem's constraint groups have priorities and may conflict; `{}` would demand all \
             rows at once — use the priority method",
            info.id
        ));
    }
    if unilateral > 0 && !info.unilateral {
        return refuse("unilateral", format!(
            "the problem has {unilateral} unilateral row(s) g(q) ≥ 0 that `{}` would ignore; use moreau-jean",
            info.id
        ));
    }
    if nonholonomic > 0 && !info.nonholonomic {
        return refuse(
            "nonholonomic",
            format!(
                "the problem has {nonholonomic} nonholonomic row(s) A(q)v = 0 and `{}` enforces \
             position-level constraints; use taylor, baumgarte or gauss, without projection",
                info.id
            ),
        );
    }
    if sys.as_mechanical().is_some_and(|s| s.mass_varies()) && !info.varying_mass {
        return refuse(
            "varying-mass",
            format!(
                "the problem's mass matrix depends on t or v (M(t, q, v)) and `{}` evaluates M(q) only; \
                 use taylor, semi-implicit-euler, baumgarte or radau, without projection or recovery",
                info.id
            ),
        );
    }
    if schedule.error_controlled().is_some() && info.error_estimate.is_none() {
        return Err(MethodError::Incompatible {
            method: info.id.clone(),
            problem: sys.info().id,
            reason: format!(
                "`{}` returns no local error estimate, so it cannot take error-controlled steps; \
                 use fixed steps (`[steps] h = [..]`), a method with an error estimate \
                 (radau, generalized-alpha, ida) or `richardson = true` on a restartable one",
                info.id
            ),
        });
    }
    Ok(())
}

/// The loop's working set: the state, the last accepted state, the metrics evaluator and
/// the outcome being filled.
pub(crate) struct Loop<'s> {
    state: State,
    last_good: State,
    evaluator: Box<dyn Evaluate + 's>,
    metrics_stride: usize,
    bound: f64,
    deadline: Option<Deadline>,
    /// The end time, for the time-budget failure's message.
    t_end: f64,
    out: RunOutcome,
}

impl<'s> Loop<'s> {
    fn new(
        evaluator: Box<dyn Evaluate + 's>, state: State, init_seconds: f64, schedule: &Schedule,
    ) -> Self {
        let q0 = state.q.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        let out = RunOutcome {
            status: RunStatus::Ok,
            steps: 0,
            stats: MethodStats::default(),
            // Filled in by `finish`: a copy held through the run would cost a state's
            // memory (56 bytes per link of the planar chain) for nothing.
            final_state: State::semi_explicit(0.0, Vec::new(), Vec::new()),
            init_seconds,
            step_seconds: 0.0,
            observe_seconds: 0.0,
            adaptive: schedule.error_controlled().map(|_| AdaptiveStats {
                h_min_used: f64::NAN,
                h_max_used: f64::NAN,
                ..AdaptiveStats::default()
            }),
            reports: StepReportSummary::default(),
            counters: Vec::new(),
        };
        Self {
            evaluator,
            metrics_stride: schedule.metrics_stride.max(1),
            last_good: state.clone(),
            t_end: schedule.t_end(state.t),
            state,
            bound: schedule.divergence_factor * (1.0 + q0),
            deadline: schedule.deadline,
            out,
        }
    }

    fn fail(&mut self, t: f64, error: impl Into<RunError>) {
        self.out.status = RunStatus::Failed {
            t,
            error: error.into(),
        };
    }

    fn finish(mut self, stepper: Option<&dyn Stepper>) -> RunOutcome {
        if let Some(stepper) = stepper {
            self.out.stats = stepper.stats();
            self.out.counters = stepper.counters();
        }
        self.out.final_state = self.state;
        self.out
    }

    /// Metrics of the current state to every observer, on the steps the metrics stride
    /// or an observer asks for, and on the last.
    fn observe(&mut self, step: usize, last: bool, observers: &mut [&mut dyn Observer]) {
        let due = last
            || step.is_multiple_of(self.metrics_stride)
            || observers.iter().any(|o| o.wants(step));
        if !due {
            return;
        }
        let clock = Instant::now();
        let e = self.evaluator.evaluate(&self.state, last);
        let seen = Observation {
            state: &self.state,
            metrics: &e.metrics,
            rows: e.rows,
            momentum_error: e.momentum_error,
            published: e.published,
            step,
            last,
        };
        for o in observers.iter_mut() {
            o.observe(&seen);
        }
        self.out.observe_seconds += clock.elapsed().as_secs_f64();
    }

    /// Fail the run when its time budget is spent (the current state is the last reached).
    fn out_of_time(&mut self) -> bool {
        let Some(elapsed) = self.deadline.as_ref().and_then(Deadline::passed) else {
            return false;
        };
        let t = self.state.t;
        let budget = self.deadline.map_or(0.0, |d| d.seconds);
        let t_end = self.t_end;
        self.fail(
            t,
            StepError::TimeBudget {
                t,
                t_end,
                elapsed,
                budget,
            },
        );
        true
    }

    /// One call of the method's step, timed.
    fn attempt(&mut self, stepper: &mut dyn Stepper, h: f64) -> Result<StepReport, StepError> {
        let clock = Instant::now();
        let res = stepper.step(&mut self.state, h);
        self.out.step_seconds += clock.elapsed().as_secs_f64();
        res
    }

    /// A non-finite or diverged state after a step that ended at `t`.
    fn state_error(&self, t: f64) -> Option<StepError> {
        if let Some((field, index)) = self.state.first_non_finite() {
            return Some(StepError::NonFinite { t, field, index });
        }
        let norm = self.state.q.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        (norm > self.bound).then_some(StepError::Diverged {
            t,
            norm,
            bound: self.bound,
        })
    }

    /// Fixed steps `ks` (numbered from the run's start): time is owned here,
    /// `t_k = t₀ + k h`, free of accumulated round-off.
    pub(crate) fn fixed_steps(
        &mut self, stepper: &mut dyn Stepper, h: f64, t0: f64, ks: RangeInclusive<usize>,
        observers: &mut [&mut dyn Observer],
    ) {
        // Timed as a whole, less the observers' time: two clock reads per step cost about
        // a tenth of a small system's step (perf, ensembles of pendula).
        let clock = Instant::now();
        let observed = self.out.observe_seconds;
        self.fixed_loop(stepper, h, t0, ks, observers);
        let observing = self.out.observe_seconds - observed;
        self.out.step_seconds += (clock.elapsed().as_secs_f64() - observing).max(0.0);
    }

    /// The steps of [`Self::fixed_steps`]; the last of `ks` is observed as the last.
    fn fixed_loop(
        &mut self, stepper: &mut dyn Stepper, h: f64, t0: f64, ks: RangeInclusive<usize>,
        observers: &mut [&mut dyn Observer],
    ) {
        let end = *ks.end();
        for k in ks {
            let t_start = self.state.t;
            let res = stepper.step(&mut self.state, h);
            self.state.t = t0 + k as f64 * h;
            let res = res.and_then(|r| self.state_error(self.state.t).map_or(Ok(r), Err));
            match res {
                Ok(report) => {
                    stepper.accept();
                    self.out.reports.add(&report)
                }
                Err(e) => {
                    self.fail(t_start, e);
                    self.state.clone_from(&self.last_good);
                    return;
                }
            }
            self.out.steps = k;
            let last = k == end;
            if !last && k.is_multiple_of(DEADLINE_EVERY) && self.out_of_time() {
                self.observe(k, true, observers);
                return;
            }
            self.observe(k, last, observers);
            if !last {
                self.last_good.clone_from(&self.state);
            }
        }
    }

    /// Error-controlled steps (see the module documentation).
    fn adaptive_steps(
        &mut self, stepper: &mut dyn Stepper, a: &Adaptive, order: u8, max_steps: usize,
        observers: &mut [&mut dyn Observer],
    ) {
        let mut ctl = StepController::new(a.controller, order);
        let t0 = self.state.t;
        let mut h = a.h0.min(a.h_max);
        let (mut attempts, mut reason) = (0usize, String::from("none"));
        while self.state.t < a.t_end {
            let t = self.state.t;
            let target = next_output(t0, t, a);
            let landing = t + 1.0001 * h >= target;
            if landing {
                h = target - t;
            }
            // Round-off floor 10ε|t|; near t = 0 at least 10ε²|t_end|, else h could halve
            // towards 0 until the step budget (50 million attempts) runs out.
            let scale = t.abs().max(f64::EPSILON * a.t_end.abs());
            let h_min = a.h_min.max(10.0 * f64::EPSILON * scale);
            if h < h_min || attempts >= max_steps {
                let e = if h < h_min {
                    StepError::StepSizeUnderflow {
                        t,
                        h,
                        h_min,
                        reason,
                    }
                } else {
                    StepError::StepBudget {
                        t,
                        t_end: a.t_end,
                        budget: max_steps,
                    }
                };
                self.fail(t, e);
                return;
            }
            if self.out_of_time() {
                return;
            }
            attempts += 1;
            match self.adaptive_attempt(stepper, &mut ctl, h, landing.then_some(target)) {
                Attempt::Accepted(h_next) => {
                    let last = self.state.t >= a.t_end;
                    self.out.steps += 1;
                    self.observe(self.out.steps, last, observers);
                    self.last_good.clone_from(&self.state);
                    h = h_next.min(a.h_max);
                }
                Attempt::Rejected(err, h_next) => {
                    reason = format!("scaled local error {err:.3e} > 1");
                    h = h_next;
                }
                Attempt::Retry(e, h_next) => {
                    reason = e.to_string();
                    h = h_next;
                }
                Attempt::Failed => return,
            }
        }
    }

    /// Steps of a method that controls its own step size: each call takes one internal
    /// step of at most the distance to the next output time (which it hits exactly); its
    /// own rejections and retries are added to the counters.
    fn own_controller_steps(
        &mut self, stepper: &mut dyn Stepper, a: &Adaptive, max_steps: usize,
        observers: &mut [&mut dyn Observer],
    ) {
        let t0 = self.state.t;
        while self.state.t < a.t_end {
            let t = self.state.t;
            if self.out.steps >= max_steps {
                let e = StepError::StepBudget {
                    t,
                    t_end: a.t_end,
                    budget: max_steps,
                };
                return self.fail(t, e);
            }
            if self.out_of_time() {
                return;
            }
            let target = next_output(t0, t, a);
            let h = target - t;
            let report = match self.attempt(stepper, h) {
                Ok(r) => r,
                Err(e) => {
                    self.state.clone_from(&self.last_good);
                    return self.fail(t, e);
                }
            };
            let taken = report.taken.unwrap_or(h).min(h);
            self.state.t = if taken >= h * (1.0 - 1e-12) {
                target
            } else {
                t + taken
            };
            if let Some(e) = self.state_error(self.state.t) {
                self.state.clone_from(&self.last_good);
                return self.fail(t, e);
            }
            stepper.accept();
            self.out.reports.add(&report);
            self.tally(|s| {
                s.accepted += 1;
                s.rejected += report.rejected;
                s.newton_failures += report.retried;
                s.h_min_used = s.h_min_used.min(taken);
                s.h_max_used = s.h_max_used.max(taken);
            });
            self.out.steps += 1;
            let last = self.state.t >= a.t_end;
            self.observe(self.out.steps, last, observers);
            self.last_good.clone_from(&self.state);
        }
    }

    /// Try one step of size `h` from the current state, landing exactly on `target`
    /// when given; a rejected or failed step restores the state of its start.
    fn adaptive_attempt(
        &mut self, stepper: &mut dyn Stepper, ctl: &mut StepController, h: f64, target: Option<f64>,
    ) -> Attempt {
        let t = self.state.t;
        let res = self.attempt(stepper, h);
        self.state.t = target.unwrap_or(t + h);
        let res = res.and_then(|r| self.state_error(self.state.t).map_or(Ok(r), Err));
        let report = match res {
            Ok(r) => r,
            Err(e) => {
                self.state.clone_from(&self.last_good);
                stepper.reject();
                return match e.retry() {
                    Some(factor) => {
                        self.tally(|s| s.newton_failures += 1);
                        let h_next = ctl.after_failure(h, factor);
                        Attempt::Retry(e, h_next)
                    }
                    None => {
                        self.fail(t, e);
                        Attempt::Failed
                    }
                };
            }
        };
        // A NaN estimate goes to the controller, which rejects it as infinitely large.
        let Some(err) = report.error else {
            self.state.clone_from(&self.last_good);
            self.fail(t, StepError::MissingEstimate { t, h });
            return Attempt::Failed;
        };
        if let Some(k) = report.error_order {
            ctl.use_order(k);
        }
        let d = ctl.decide(h, err, report.newton_iterations, report.newton_limit);
        if !d.accept {
            self.tally(|s| s.rejected += 1);
            self.state.clone_from(&self.last_good);
            stepper.reject();
            return Attempt::Rejected(err, d.h_next);
        }
        stepper.accept();
        self.out.reports.add(&report);
        self.tally(|s| {
            s.accepted += 1;
            s.h_min_used = s.h_min_used.min(h);
            s.h_max_used = s.h_max_used.max(h);
        });
        Attempt::Accepted(d.h_next)
    }

    /// Update the counters of an error-controlled run (a fixed-step run has none).
    fn tally(&mut self, update: impl FnOnce(&mut AdaptiveStats)) {
        if let Some(stats) = self.out.adaptive.as_mut() {
            update(stats);
        }
    }
}

/// The outcome of one attempted error-controlled step, with the step to try next.
enum Attempt {
    Accepted(f64),
    /// Rejected by the error test (scaled error, next h).
    Rejected(f64, f64),
    /// A retryable failure (the error, next h).
    Retry(StepError, f64),
    /// The run has failed (status set).
    Failed,
}

/// The next time to hit exactly after `t`: the next output time or the end.
fn next_output(t0: f64, t: f64, a: &Adaptive) -> f64 {
    match a.output_dt {
        Some(dt) => {
            let j = ((t - t0) / dt * (1.0 + 1e-12)).floor() + 1.0;
            (t0 + j * dt).min(a.t_end)
        }
        None => a.t_end,
    }
}
