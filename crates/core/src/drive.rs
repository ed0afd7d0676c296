//! [`drive`]: the only time loop in the workspace.
//!
//! Every method, every experiment, every test steps through this loop, so that step
//! counting, time bookkeeping, non-finite checks, the step budget, timing and metric
//! sampling are identical for all methods.

use crate::error::StepError;
use crate::method::{Method, MethodStats};
use crate::observe::{MetricsEvaluator, Observer};
use crate::state::State;
use crate::system::SystemRef;
use std::time::Instant;

/// A fixed-step schedule: `n_steps` steps of size `h` from the initial time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// Step size.
    pub h: f64,
    /// Number of steps.
    pub n_steps: usize,
    /// Refuse to run more steps than this (a failed run, not a hang).
    pub max_steps: usize,
    /// A run whose `‖q‖∞` exceeds `divergence_factor · (1 + ‖q₀‖∞)` has diverged: it
    /// fails with [`StepError::Diverged`] instead of producing astronomically large but
    /// finite numbers.
    pub divergence_factor: f64,
}

impl Schedule {
    /// Steps of size exactly `h` up to `t_end` (the step count is `round(t_end / h)`;
    /// callers choose `h` that divides the interval — the runner snaps `h` so).
    pub fn fixed(h: f64, t_end: f64) -> Self {
        let n = (t_end / h).round().max(0.0) as usize;
        Self {
            h,
            n_steps: n,
            max_steps: 50_000_000,
            divergence_factor: 1e6,
        }
    }
    /// End time.
    pub fn t_end(&self, t0: f64) -> f64 {
        t0 + self.n_steps as f64 * self.h
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum RunStatus {
    /// Reached the end time.
    Ok,
    /// Stopped early: at time `t` (last successfully reached), for `reason`.
    Failed {
        /// Last time reached.
        t: f64,
        /// Typed reason, rendered.
        reason: String,
    },
}

/// Result of [`drive`]: status, counters and wall time per phase.
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
}

impl RunOutcome {
    /// Total wall seconds.
    pub fn wall_seconds(&self) -> f64 {
        self.init_seconds + self.step_seconds + self.observe_seconds
    }
}

/// Run `method` on `sys` from its initial state over `schedule`, feeding `observers`
/// after initialization and after every step.
///
/// Never panics on numerical failure: a step error, a non-finite state or an exhausted
/// budget ends the run with [`RunStatus::Failed`] carrying the time and the reason.
pub fn drive(
    sys: SystemRef<'_>,
    method: &mut dyn Method,
    schedule: &Schedule,
    observers: &mut [&mut dyn Observer],
) -> RunOutcome {
    let mut state = sys.initial_state();
    let t0 = state.t;
    let clock = Instant::now();
    let (nonholonomic, unilateral, prioritized) = match sys {
        SystemRef::Mechanical(s) => (
            s.nonholonomic_rows(),
            s.unilateral_rows(),
            s.priorities().is_some(),
        ),
        SystemRef::SemiExplicit(_) => (0, 0, false),
    };
    let info = method.info();
    let init = if prioritized && !info.priorities {
        Err(crate::MethodError::UnsupportedForm {
            method: info.id.clone(),
            form: "prioritized",
            hint: format!(
                "the problem's constraint groups have priorities and may conflict; `{}` would demand all \
                 rows at once — use the priority method",
                info.id
            ),
        })
    } else if unilateral > 0 && !info.unilateral {
        Err(crate::MethodError::UnsupportedForm {
            method: info.id.clone(),
            form: "unilateral",
            hint: format!(
                "the problem has {unilateral} unilateral row(s) g(q) ≥ 0 that `{}` would ignore; use moreau-jean",
                info.id
            ),
        })
    } else if nonholonomic > 0 && !info.nonholonomic {
        Err(crate::MethodError::UnsupportedForm {
            method: info.id.clone(),
            form: "nonholonomic",
            hint: format!(
                "the problem has {nonholonomic} nonholonomic row(s) A(q)v = 0 and `{}` enforces                  position-level constraints; use taylor, baumgarte or gauss, without projection",
                info.id
            ),
        })
    } else {
        method.init(sys, &mut state)
    };
    let init_seconds = clock.elapsed().as_secs_f64();
    let mut out = RunOutcome {
        status: RunStatus::Ok,
        steps: 0,
        stats: MethodStats::default(),
        final_state: state.clone(),
        init_seconds,
        step_seconds: 0.0,
        observe_seconds: 0.0,
    };
    if let Err(e) = init {
        out.status = RunStatus::Failed {
            t: t0,
            reason: e.to_string(),
        };
        out.stats = method.stats();
        return out;
    }
    if schedule.n_steps > schedule.max_steps {
        let e = StepError::StepBudget {
            t: t0,
            t_end: schedule.t_end(t0),
            budget: schedule.max_steps,
        };
        out.status = RunStatus::Failed {
            t: t0,
            reason: e.to_string(),
        };
        return out;
    }
    let mut evaluator = MetricsEvaluator::new(sys, &state);
    let clock = Instant::now();
    let m0 = evaluator.evaluate(sys, &state);
    for o in observers.iter_mut() {
        o.observe(sys, &state, &m0, 0, schedule.n_steps == 0);
    }
    out.observe_seconds += clock.elapsed().as_secs_f64();

    let bound =
        schedule.divergence_factor * (1.0 + state.q.iter().fold(0.0_f64, |m, x| m.max(x.abs())));
    let mut last_good = state.clone();
    for k in 1..=schedule.n_steps {
        let t_start = state.t;
        let clock = Instant::now();
        let res = method.step(sys, &mut state, schedule.h);
        out.step_seconds += clock.elapsed().as_secs_f64();
        if let Err(e) = res {
            out.status = RunStatus::Failed {
                t: t_start,
                reason: e.to_string(),
            };
            state = last_good;
            break;
        }
        // Time is owned here: t_k = t0 + k h, free of accumulated round-off.
        state.t = t0 + k as f64 * schedule.h;
        if let Some((field, index)) = state.first_non_finite() {
            let e = StepError::NonFinite {
                t: state.t,
                field,
                index,
            };
            out.status = RunStatus::Failed {
                t: t_start,
                reason: e.to_string(),
            };
            state = last_good;
            break;
        }
        let norm = state.q.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        if norm > bound {
            let e = StepError::Diverged {
                t: state.t,
                norm,
                bound,
            };
            out.status = RunStatus::Failed {
                t: t_start,
                reason: e.to_string(),
            };
            state = last_good;
            break;
        }
        out.steps = k;
        let clock = Instant::now();
        let m = evaluator.evaluate(sys, &state);
        let last = k == schedule.n_steps;
        for o in observers.iter_mut() {
            o.observe(sys, &state, &m, k, last);
        }
        out.observe_seconds += clock.elapsed().as_secs_f64();
        if !last {
            last_good.clone_from(&state);
        }
    }
    out.stats = method.stats();
    out.final_state = state;
    out
}
