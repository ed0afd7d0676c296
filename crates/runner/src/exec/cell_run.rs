//! One cell's run: its problem and method built from the registry and driven through the
//! one time loop ([`drive_cell`]), its repeats combined into one row (median times), its
//! trace, and a run alone on a pool of its own (the timing pass).

use crate::error::{panic_message, RunnerError};
use crate::registry::Registry;
use crate::spec::cell::{json_of, schedule_of, Cell};
use crate::store::journal::RunItem;
use crate::store::record::{
    counters_json, nullable, unmeasured_row, write_adaptive, write_failure, write_reports,
    write_stats, write_summary, write_warnings, CellTrace, RowIdentity,
};
use driftlab_core::{
    drive, FailKind, MetricsObserver, Observer, ParamError, RunOutcome, RunStatus,
    TrajectoryRecorder,
};
use driftlab_results::schema::runs;
use ndarray::Array2;

/// The `k`-th run of `cell` as a journal item: the first run measured (peak heap) and
/// with its trace, the others for their times.
pub(crate) fn run_item(registry: &Registry, experiment: &str, cell: &Cell, k: usize) -> RunItem {
    let (record, trace) = if k == 0 {
        let (rec, trace) = run_measured(registry, experiment, cell);
        (rec, Some(trace))
    } else {
        (run_cell_once(registry, experiment, cell).0, None)
    };
    RunItem {
        cell: cell.index,
        repeat: k,
        record,
        trace,
        members: Vec::new(),
    }
}

/// The row and trace of `cell` from its runs (`items`, any order): the first run's
/// record and trace with the median times of all runs.
pub(crate) fn combine(cell: &Cell, mut items: Vec<RunItem>) -> (runs::Row, CellTrace) {
    items.sort_by_key(|i| i.repeat);
    let mut items = items.into_iter();
    let Some(first) = items.next() else {
        return (runs::Row::default(), empty_trace(cell));
    };
    let trace = first.trace.unwrap_or_else(|| empty_trace(cell));
    let repeats = items.map(|i| i.record).collect();
    (with_repeats(first.record, repeats), trace)
}

/// The first run of `cell`, with its measured peak heap.
pub(crate) fn run_measured(
    registry: &Registry, experiment: &str, cell: &Cell,
) -> (runs::Row, CellTrace) {
    let ((mut row, trace), peak) =
        crate::memory::measure_peak(|| run_cell_once(registry, experiment, cell));
    row.peak_heap_bytes = peak.map(|b| b as f64);
    (row, trace)
}

/// `rec` (the row of a cell's first run) with the median wall, step and observe times
/// of it and its `repeats`, and the range of the step times.
pub(crate) fn with_repeats(mut rec: runs::Row, repeats: Vec<runs::Row>) -> runs::Row {
    let mut walls = vec![rec.wall_seconds];
    let mut steps = vec![rec.step_seconds];
    let mut observes = vec![rec.observe_seconds];
    for r in &repeats {
        walls.push(r.wall_seconds);
        steps.push(r.step_seconds);
        observes.push(r.observe_seconds);
    }
    rec.repeat = 1 + repeats.len() as u64;
    rec.wall_seconds = median(&mut walls);
    rec.step_seconds = median(&mut steps);
    rec.observe_seconds = median(&mut observes);
    rec.step_seconds_min = steps.first().copied().and_then(nullable);
    rec.step_seconds_max = steps.last().copied().and_then(nullable);
    rec
}

/// Median of `x` (sorted in place).
pub(crate) fn median(x: &mut [f64]) -> f64 {
    x.sort_by(f64::total_cmp);
    match x.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => x[n / 2],
        n => 0.5 * (x[n / 2 - 1] + x[n / 2]),
    }
}

/// Build `cell`'s problem from `registry` and run it with the cell's method (built once,
/// at expansion) through [`drive()`], feeding `observers`: the one place where a cell
/// becomes a run (the runner's rows and the CLI's `simulate` both come from here).
pub fn drive_cell(
    registry: &Registry, cell: &Cell, observers: &mut [&mut dyn Observer],
) -> Result<RunOutcome, ParamError> {
    let problem = registry.build_problem(&cell.problem, &cell.problem_params)?;
    Ok(drive(
        problem.as_system(),
        cell.built.method(),
        &schedule_of(cell),
        observers,
    ))
}

/// Run one cell once; never panics outward (a panic in a method becomes a failed row).
pub(crate) fn run_cell_once(
    registry: &Registry, experiment: &str, cell: &Cell,
) -> (runs::Row, CellTrace) {
    let mut rec = base_row(experiment, cell);
    let empty = empty_trace(cell);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut metrics =
            MetricsObserver::new(cell.trace_stride).with_allowed_violation(cell.allowed.clone());
        let mut states = TrajectoryRecorder::new(cell.trace_stride.max(1));
        let out = if cell.trace_states && cell.trace_stride > 0 {
            drive_cell(registry, cell, &mut [&mut metrics, &mut states])
        } else {
            drive_cell(registry, cell, &mut [&mut metrics])
        };
        out.map(|out| (out, metrics, states))
    }));
    match result {
        Ok(Ok((out, metrics, states))) => {
            record_outcome(&mut rec, cell, &out, &metrics);
            let mut trace = cell_trace(cell, &metrics, &states);
            if !crate::analysis::reference::judge(&mut rec, &cell.reference, cell.conservative) {
                null_trace_errors(&mut trace);
            }
            (rec, trace)
        }
        Ok(Err(e)) => {
            write_failure(&mut rec, 0.0, FailKind::Build, e.to_string());
            (rec, empty)
        }
        Err(panic) => {
            let msg = panic_message(&panic);
            let reason = format!("internal error (panic): {msg}");
            write_failure(&mut rec, 0.0, FailKind::Panic, reason);
            (rec, empty)
        }
    }
}

/// The row of `cell` before it runs ([`unmeasured_row`]).
pub(crate) fn base_row(experiment: &str, cell: &Cell) -> runs::Row {
    unmeasured_row(&RowIdentity {
        experiment,
        cell: cell.index,
        problem: cell.problem.clone(),
        problem_params: json_of(&cell.problem_params),
        method: cell.method.clone(),
        variant: cell.variant.clone(),
        params: cell.params_json(),
        h: cell.h,
        t_end: cell.t_end,
        threads: cell.threads,
        metrics_stride: cell.metrics_stride,
        tolerances: cell.adaptive.map(|a| a.tol),
        declared: cell.info.orders,
    })
}

/// A trace without samples.
pub(crate) fn empty_trace(cell: &Cell) -> CellTrace {
    CellTrace {
        cell: cell.index,
        samples: Array2::zeros((0, driftlab_results::schema::traces::SAMPLED.len())),
        q: None,
        v: None,
        lambda: None,
        phi: None,
    }
}

/// Fill `row` from a finished run: status and failure, counters, metrics, times.
pub(crate) fn record_outcome(
    row: &mut runs::Row, cell: &Cell, out: &RunOutcome, metrics: &MetricsObserver,
) {
    match &out.status {
        RunStatus::Ok => row.status = "ok".into(),
        RunStatus::Failed { t, error } => {
            write_failure(row, *t, error.fail_kind(), error.to_string());
        }
    }
    row.steps = out.steps as u64;
    if cell.adaptive.is_some() {
        // The mean accepted step, so that error-against-h figures place the cell.
        row.h = cell.t_end / out.steps.max(1) as f64;
    }
    write_adaptive(row, out.adaptive);
    write_summary(row, &metrics.summary);
    write_warnings(row, &metrics.warnings);
    write_stats(row, &out.stats);
    write_reports(row, &out.reports);
    row.counters = counters_json(out.counters.iter().copied());
    row.wall_seconds = out.wall_seconds();
    row.step_seconds = out.step_seconds;
    row.observe_seconds = out.observe_seconds;
}

/// The error columns of a trace whose reference cannot be trusted, nulled like the row's.
pub(crate) fn null_trace_errors(trace: &mut CellTrace) {
    use driftlab_results::schema::traces::{ERR_LAMBDA, ERR_Q, ERR_V, SAMPLED};
    for col in [ERR_Q, ERR_V, ERR_LAMBDA] {
        if let Some(j) = SAMPLED.iter().position(|c| c.name == col.name) {
            trace.samples.column_mut(j).fill(f64::NAN);
        }
    }
}

/// The cell's sampled metrics (columns of [`driftlab_results::schema::traces::SAMPLED`]) and,
/// when the spec asks for them, the states at the same times.
pub(crate) fn cell_trace(
    cell: &Cell, metrics: &MetricsObserver, states: &TrajectoryRecorder,
) -> CellTrace {
    let mut samples = Array2::<f64>::zeros((
        metrics.trace.len(),
        driftlab_results::schema::traces::SAMPLED.len(),
    ));
    for (i, m) in metrics.trace.iter().enumerate() {
        let row = [
            m.t,
            m.pos_residual,
            m.vel_residual,
            m.acc_residual,
            m.energy_rel_error,
            m.err_q,
            m.err_v,
            m.err_lambda,
        ];
        for (j, x) in row.iter().enumerate() {
            samples[(i, j)] = *x;
        }
    }
    let (q, v, lambda, phi) = if cell.trace_states && !states.points.is_empty() {
        // Align states with metric samples by time.
        let index: Vec<Option<usize>> = metrics
            .trace
            .iter()
            .map(|m| {
                states
                    .points
                    .iter()
                    .position(|(s, _)| s.t.to_bits() == m.t.to_bits())
            })
            .collect();
        let pick = |f: &dyn Fn(usize) -> Vec<f64>| {
            index
                .iter()
                .map(|k| k.map(f).unwrap_or_default())
                .collect::<Vec<_>>()
        };
        let point = |k: usize| &states.points[k].0;
        (
            Some(pick(&|k| point(k).q.clone())),
            Some(pick(&|k| point(k).v.clone())),
            Some(pick(&|k| point(k).lambda.clone())),
            Some(pick(&|k| states.rows.get(k).cloned().unwrap_or_default())),
        )
    } else {
        (None, None, None, None)
    };
    CellTrace {
        cell: cell.index,
        samples,
        q,
        v,
        lambda,
        phi,
    }
}

/// An ensemble cell run whole (all its repeats) as one journal item, its members inside.
pub(crate) fn run_ensemble_item(registry: &Registry, experiment: &str, cell: &Cell) -> RunItem {
    let base = base_row(experiment, cell);
    let (record, members) = match cell.ensemble.as_ref() {
        Some(e) => crate::exec::members::run_ensemble(registry, base, cell, e),
        None => (base, Vec::new()),
    };
    RunItem {
        cell: cell.index,
        repeat: 0,
        record,
        trace: None,
        members,
    }
}

/// Run `cell` with `run` on a pool of its own of `threads` threads; a pool that cannot
/// start fails this cell's row, not the rows already computed. `None` when `run` could
/// not record its result.
pub(crate) fn run_alone(
    experiment: &str, cell: &Cell, threads: usize,
    run: impl FnOnce(&Cell) -> Option<(runs::Row, CellTrace)> + Send,
) -> Option<(runs::Row, CellTrace)> {
    match pool(threads) {
        Ok(p) => p.install(|| run(cell)),
        Err(e) => {
            let mut rec = base_row(experiment, cell);
            let reason = format!("cannot start a pool of {threads} threads for this cell: {e}");
            write_failure(&mut rec, 0.0, FailKind::ThreadPool, reason);
            Some((rec, empty_trace(cell)))
        }
    }
}

/// One run of `cell` with nothing else running, on a pool of its own threads (the
/// timing pass, `exec/timing.rs`).
pub(crate) fn run_alone_once(registry: &Registry, experiment: &str, cell: &Cell) -> runs::Row {
    run_alone(experiment, cell, cell.threads.max(1), |c| {
        Some(run_cell_once(registry, experiment, c))
    })
    .map_or_else(|| base_row(experiment, cell), |(r, _)| r)
}

/// A rayon pool of `threads` threads.
pub(crate) fn pool(threads: usize) -> Result<rayon::ThreadPool, RunnerError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| RunnerError::Write {
            path: "thread pool".into(),
            message: e.to_string(),
        })
}
