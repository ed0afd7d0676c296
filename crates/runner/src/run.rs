//! Running an experiment: cells in parallel (rayon), each through the one time loop.

use crate::cell::{expand, json_of, Cell};
use crate::durable::Durable;
use crate::error::RunnerError;
use crate::folder::Claim;
use crate::journal::{Header, Journal, Recorded, RunItem};
use crate::manifest::{now_rfc3339, sha256_hex, Manifest};
use crate::orders::{fit_orders, OrderRow};
use crate::record::{runs_frame, traces_frame, write_csv, write_parquet, CellTrace, RunRecord};
use crate::registry::Registry;
use crate::spec::Spec;
use driftlab_core::{
    drive, FailKind, MetricsObserver, Observer, ParamError, RunOutcome, RunStatus, Schedule,
    TrajectoryRecorder,
};
use indicatif::{ProgressBar, ProgressStyle};
use ndarray::Array2;

use std::path::{Path, PathBuf};
use std::time::Instant;

/// How to run a spec.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Output folder (default `reports/<name>`).
    pub out_dir: Option<PathBuf>,
    /// Threads running cells side by side (default: all cores).
    pub threads: Option<usize>,
    /// Named size (`quick`, `full`).
    pub size: Option<String>,
    /// Show a progress bar.
    pub progress: bool,
    /// The problems and methods the spec may name (default: driftlab's catalogs).
    pub registry: Registry,
    /// Continue the interrupted sweep in the output folder: runs its journal recorded
    /// are taken, not recomputed; the spec, size and thread counts must be the same.
    pub resume: bool,
    /// Run only shard `(I, N)` of the cells ([`crate::shard`]).
    pub shard: Option<(usize, usize)>,
    /// Compute nothing: every run must be in the journal (a merge of shards).
    pub complete_only: bool,
    /// Discard whatever run the output folder holds (`--force`): driftlab's own files in
    /// it are removed first, other files stay ([`crate::folder`]).
    pub force: bool,
    /// Every cell's wall-time budget in seconds (`--cell-seconds`), replacing the spec's
    /// `cell_seconds`: a cell past it is a failed row `time-budget`.
    pub cell_seconds: Option<f64>,
    /// Stop starting runs once this flag is set (a Ctrl-C in the Python package): the runs
    /// in progress finish and are recorded, and `run_spec` returns
    /// [`RunnerError::Interrupted`], leaving a folder that `resume` continues.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunSummary {
    /// Experiment name.
    pub name: String,
    /// Output folder.
    pub out_dir: PathBuf,
    /// Cells run.
    pub cells: usize,
    /// Cells failed.
    pub failed: usize,
    /// Wall seconds.
    pub seconds: f64,
    /// The rows.
    pub rows: Vec<RunRecord>,
    /// Fitted orders.
    pub orders: Vec<OrderRow>,
}

/// The `k`-th run of `cell` as a journal item: the first run measured (peak heap) and
/// with its trace, the others for their times.
fn run_item(registry: &Registry, experiment: &str, cell: &Cell, k: usize) -> RunItem {
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
fn combine(cell: &Cell, mut items: Vec<RunItem>) -> (RunRecord, CellTrace) {
    items.sort_by_key(|i| i.repeat);
    let mut items = items.into_iter();
    let Some(first) = items.next() else {
        return (RunRecord::default(), empty_trace(cell));
    };
    let trace = first.trace.unwrap_or_else(|| empty_trace(cell));
    let repeats = items.map(|i| i.record).collect();
    (with_repeats(first.record, repeats), trace)
}

/// The first run of `cell`, with its measured peak heap.
fn run_measured(registry: &Registry, experiment: &str, cell: &Cell) -> (RunRecord, CellTrace) {
    let ((mut rec, trace), peak) =
        crate::memory::measure_peak(|| run_cell_once(registry, experiment, cell));
    rec.peak_heap_bytes = peak;
    (rec, trace)
}

/// `first` (the record of a cell's first run) with the median wall, step and observe
/// times of it and its `repeats`, and the range of the step times.
pub(crate) fn with_repeats(mut rec: RunRecord, repeats: Vec<RunRecord>) -> RunRecord {
    let mut walls = vec![rec.wall_seconds];
    let mut steps = vec![rec.step_seconds];
    let mut observes = vec![rec.observe_seconds];
    for r in &repeats {
        walls.push(r.wall_seconds);
        steps.push(r.step_seconds);
        observes.push(r.observe_seconds);
    }
    rec.repeat = 1 + repeats.len();
    rec.wall_seconds = median(&mut walls);
    rec.step_seconds = median(&mut steps);
    rec.observe_seconds = median(&mut observes);
    rec.step_seconds_min = steps.first().copied().unwrap_or(f64::NAN);
    rec.step_seconds_max = steps.last().copied().unwrap_or(f64::NAN);
    rec
}

/// Run the one-thread `cells` side by side on the current pool, each `repeat` times, the
/// repeats as separate work items (repeat-major: every cell's first run, then every
/// cell's second, …) so that a large cell's repeats spread over the workers instead of
/// holding one of them to the end of the batch. Every item goes through `durable` (taken
/// from the journal if recorded, else run and recorded); `done` is called once per cell,
/// when its last repeat finishes. `None` when the journal failed.
fn run_side_by_side(
    registry: &Registry, experiment: &str, cells: &[&Cell], durable: &Durable,
    done: impl Fn() + Sync,
) -> Option<Vec<(RunRecord, CellTrace)>> {
    let items = longest_first(registry, cells);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let finished = std::sync::Mutex::new(Vec::with_capacity(items.len()));
    let failed = std::sync::atomic::AtomicBool::new(false);
    // Each worker takes the next run in the list: the longest runs start first and the
    // short ones fill the gaps (list scheduling, the LPT rule within 4/3 of the optimal
    // makespan; Graham 1969).
    rayon::broadcast(|_| loop {
        let j = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(&(k, i)) = items.get(j) else { break };
        if failed.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let runs = cells[i].repeat.max(1);
        match durable.run(cells[i], k, runs, || {
            run_item(registry, experiment, cells[i], k)
        }) {
            Some(item) => {
                if let Ok(mut f) = finished.lock() {
                    f.push((i, item));
                }
                if k + 1 == runs {
                    done();
                }
            }
            None => failed.store(true, std::sync::atomic::Ordering::Relaxed),
        }
    });
    let finished = finished.into_inner().ok()?;
    if failed.into_inner() || finished.len() != items.len() {
        return None;
    }
    let mut per_cell: Vec<Vec<RunItem>> = vec![Vec::new(); cells.len()];
    for (i, item) in finished {
        per_cell[i].push(item);
    }
    Some(
        per_cell
            .into_iter()
            .zip(cells)
            .map(|(items, cell)| combine(cell, items))
            .collect(),
    )
}

/// The runs `(repeat, cell)` of `cells`, longest cell first by
/// [`crate::shard::cost_estimate`] (repeats of a cell in order, ties by cell index).
fn longest_first(registry: &Registry, cells: &[&Cell]) -> Vec<(usize, usize)> {
    let costs = crate::shard::cost_estimates(cells.iter().copied(), registry);
    let mut order: Vec<usize> = (0..cells.len()).collect();
    order.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]).then(a.cmp(&b)));
    order
        .into_iter()
        .flat_map(|i| (0..cells[i].repeat.max(1)).map(move |k| (k, i)))
        .collect()
}

/// Median of `x` (sorted in place).
fn median(x: &mut [f64]) -> f64 {
    x.sort_by(f64::total_cmp);
    match x.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => x[n / 2],
        n => 0.5 * (x[n / 2 - 1] + x[n / 2]),
    }
}

/// Build `cell`'s problem and method from `registry` and run them through [`drive()`], feeding
/// `observers`: the one place where a cell becomes a run (the runner's rows and the CLI's
/// `simulate` both come from here).
pub fn drive_cell(
    registry: &Registry, cell: &Cell, observers: &mut [&mut dyn Observer],
) -> Result<RunOutcome, ParamError> {
    let problem = registry.build_problem(&cell.problem, &cell.problem_params)?;
    let mut method =
        registry.build_method(&cell.method_id, &cell.method_params, cell.decorators())?;
    Ok(drive(
        problem.as_system(),
        method.as_mut(),
        &schedule_of(cell),
        observers,
    ))
}

/// The time schedule of `cell`: fixed or error-controlled steps, budget, metrics stride.
pub(crate) fn schedule_of(cell: &Cell) -> Schedule {
    let mut schedule = match cell.adaptive {
        Some(a) => Schedule::adaptive(a),
        None => Schedule::fixed(cell.h, cell.t_end),
    };
    schedule.max_steps = cell.max_steps;
    schedule.metrics_stride = cell.metrics_stride;
    schedule.deadline = cell.cell_seconds.map(driftlab_core::Deadline::from_now);
    schedule.retained = retained_by(cell);
    schedule.threads = cell.threads;
    schedule
}

/// What a cell's observers keep over its run: the trace every `trace_stride` steps (and
/// the first and last state), with states when the spec traces them. The accepted steps
/// of an error-controlled cell are not known before it runs: only its first and last
/// samples are counted (the fill check of the sparse KKT solver still guards its factor).
fn retained_by(cell: &Cell) -> driftlab_core::Retained {
    if cell.trace_stride == 0 {
        return driftlab_core::Retained::default();
    }
    let steps = match cell.adaptive {
        Some(_) => 0.0,
        None => (cell.t_end / cell.h).round(),
    };
    driftlab_core::Retained {
        samples: (steps / cell.trace_stride as f64) as u64 + 2,
        states: cell.trace_states,
    }
}

/// The message of a caught panic.
pub(crate) fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}

/// Run one cell once; never panics outward (a panic in a method becomes a failed row).
fn run_cell_once(registry: &Registry, experiment: &str, cell: &Cell) -> (RunRecord, CellTrace) {
    let mut rec = base_record(experiment, cell);
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
            if !crate::reference::judge(&mut rec, &cell.reference, cell.conservative) {
                null_trace_errors(&mut trace);
            }
            (rec, trace)
        }
        Ok(Err(e)) => {
            rec.fail_time = Some(0.0);
            rec.fail_kind = Some(FailKind::Build);
            rec.fail_reason = Some(e.to_string());
            (rec, empty)
        }
        Err(panic) => {
            let msg = panic_message(&panic);
            rec.fail_time = Some(0.0);
            rec.fail_kind = Some(FailKind::Panic);
            rec.fail_reason = Some(format!("internal error (panic): {msg}"));
            (rec, empty)
        }
    }
}

/// The row of `cell` before it runs: what the cell is, nothing measured yet.
fn base_record(experiment: &str, cell: &Cell) -> RunRecord {
    RunRecord {
        experiment: experiment.to_string(),
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
        ..Default::default()
    }
}

/// A trace without samples.
fn empty_trace(cell: &Cell) -> CellTrace {
    CellTrace {
        cell: cell.index,
        samples: Array2::zeros((0, driftlab_results::schema::traces::SAMPLED.len())),
        q: None,
        v: None,
        lambda: None,
        phi: None,
    }
}

/// Fill `rec` from a finished run: status and failure, counters, metrics, times.
fn record_outcome(rec: &mut RunRecord, cell: &Cell, out: &RunOutcome, metrics: &MetricsObserver) {
    rec.ok = out.status == RunStatus::Ok;
    if let RunStatus::Failed { t, error } = &out.status {
        rec.fail_time = Some(*t);
        rec.fail_kind = Some(error.fail_kind());
        rec.fail_reason = Some(error.to_string());
    }
    rec.steps = out.steps;
    rec.adaptive = out.adaptive;
    if cell.adaptive.is_some() {
        // The mean accepted step, so that error-against-h figures place the cell.
        rec.h = cell.t_end / out.steps.max(1) as f64;
    }
    rec.summary = metrics.summary;
    rec.warnings = metrics.warnings;
    rec.stats = out.stats;
    rec.reports = out.reports;
    rec.counters = out
        .counters
        .iter()
        .map(|&(k, n)| (k.to_string(), n))
        .collect();
    rec.wall_seconds = out.wall_seconds();
    rec.step_seconds = out.step_seconds;
    rec.observe_seconds = out.observe_seconds;
}

/// The error columns of a trace whose reference cannot be trusted, nulled like the row's.
fn null_trace_errors(trace: &mut CellTrace) {
    use driftlab_results::schema::traces::{ERR_LAMBDA, ERR_Q, ERR_V, SAMPLED};
    for col in [ERR_Q, ERR_V, ERR_LAMBDA] {
        if let Some(j) = SAMPLED.iter().position(|c| c.name == col.name) {
            trace.samples.column_mut(j).fill(f64::NAN);
        }
    }
}

/// The cell's sampled metrics (columns of [`driftlab_results::schema::traces::SAMPLED`]) and,
/// when the spec asks for them, the states at the same times.
fn cell_trace(cell: &Cell, metrics: &MetricsObserver, states: &TrajectoryRecorder) -> CellTrace {
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

/// `orders.csv`: the rows column by column through the schema's accessors
/// ([`driftlab_results::schema::orders::COLUMNS`], the report's reader too).
fn write_orders(rows: &[OrderRow], path: &Path) -> Result<(), RunnerError> {
    let columns = driftlab_results::schema::orders::COLUMNS;
    let mut df = driftlab_results::table::frame(rows, columns).map_err(|e| RunnerError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    write_csv(&mut df, path)
}

/// `optima.csv` ([`driftlab_results::schema::optima::COLUMNS`]).
fn write_optima(
    rows: &[driftlab_results::schema::optima::Row], path: &Path,
) -> Result<(), RunnerError> {
    let columns = driftlab_results::schema::optima::COLUMNS;
    let mut df = driftlab_results::table::frame(rows, columns).map_err(|e| RunnerError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    write_csv(&mut df, path)
}

/// Run `spec` (read from `path`, with `text` its source) and write the result folder.
///
/// The folder is locked for the run and must hold nothing of another run
/// ([`crate::folder`]): a previous complete run of the same experiment is replaced, an
/// interrupted one is continued only with `opts.resume` and discarded only with
/// `opts.force`. Every finished run of a cell is recorded in the folder's journal as it
/// finishes ([`crate::journal`]); with `opts.resume` the runs an interrupted sweep
/// recorded are taken from it instead of recomputed (the spec, size and thread counts
/// must match).
pub fn run_spec(
    spec: &Spec, text: &str, path: &str, opts: &RunOptions,
) -> Result<RunSummary, RunnerError> {
    let (spec, cells) = validated(spec, path, opts)?;
    let out_dir = opts
        .out_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(&spec.name));
    let claim = match (opts.resume, opts.force) {
        (true, _) => Claim::Resume,
        (false, true) => Claim::Force,
        (false, false) => Claim::Fresh,
    };
    let doing = format!("driftlab run {path}, since {}", now_rfc3339());
    let _lock = crate::folder::prepare(&out_dir, &spec.name, claim, &doing)?;
    run_in_folder(&spec, &cells, text, opts, &out_dir)
}

/// The spec at its size and its cells, with the command line's thread count checked:
/// everything that can refuse the run before its folder is touched.
pub(crate) fn validated(
    spec: &Spec, path: &str, opts: &RunOptions,
) -> Result<(Spec, Vec<Cell>), RunnerError> {
    let mut spec = spec.sized(opts.size.as_deref(), path)?;
    if let Some(secs) = opts.cell_seconds {
        if !(secs.is_finite() && secs > 0.0) {
            return Err(RunnerError::Spec {
                path: path.into(),
                message: format!("--cell-seconds {secs}: give a wall-time budget per cell > 0 s"),
            });
        }
        spec.cell_seconds = Some(secs);
    }
    if let Some(k) = opts
        .threads
        .filter(|&k| k == 0 || k > crate::spec::MAX_THREADS)
    {
        return Err(RunnerError::Spec {
            path: path.into(),
            message: format!(
                "--threads {k}: give the cells to run side by side, 1 … {}",
                crate::spec::MAX_THREADS
            ),
        });
    }
    let cells = expand(&spec, path, &opts.registry)?;
    Ok((spec, cells))
}

/// Run `cells` of `spec` into `out_dir`, which the caller has locked and prepared.
pub(crate) fn run_in_folder(
    spec: &Spec, cells: &[Cell], text: &str, opts: &RunOptions, out_dir: &Path,
) -> Result<RunSummary, RunnerError> {
    driftlab_methods::sequential_dense_kernels();
    let clock = Instant::now();
    let earlier = match opts.resume {
        true => resumable(out_dir, text)?,
        false => None,
    };
    let sweeps = sweep_counts(spec, opts, earlier.as_ref());
    let batches = batch_cells(cells, &sweeps);
    let batches = match opts.shard {
        Some(shard) => crate::shard::keep_shard(batches, shard, &opts.registry),
        None => batches,
    };
    let durable = start_durable(spec, text, opts, out_dir, cells, &batches, earlier)?;
    let Batch {
        mut rows,
        traces,
        members,
        ..
    } = run_batches(&spec.name, &batches, opts, &durable)?;
    time_verdict_rows(spec, &batches, &mut rows, opts);
    let failed = rows.iter().filter(|r| !r.ok).count();
    // Orders from the first batch (a thread sweep repeats every cell).
    let first: Vec<RunRecord> = rows
        .iter()
        .filter(|r| r.sweep_threads == sweeps[0])
        .cloned()
        .collect();
    let orders = fit_orders(&first);
    let mut files = write_tables(spec, out_dir, &rows, &traces, &orders)?;
    if spec.ensemble.is_some() {
        let mut df = crate::ensemble::members_frame(&spec.name, &members)?;
        write_parquet(&mut df, &out_dir.join("members.parquet"))?;
        write_csv(&mut df, &out_dir.join("members.csv"))?;
        files.extend(["members.parquet".to_string(), "members.csv".to_string()]);
    }
    if !spec.optima.is_empty() {
        let optima = crate::optima::find(&spec.optima, &first, &members);
        write_optima(&optima, &out_dir.join("optima.csv"))?;
        files.push("optima.csv".into());
    }
    durable.complete(rows.len(), failed, now_rfc3339(), files)?;
    Ok(RunSummary {
        name: spec.name.clone(),
        out_dir: out_dir.to_path_buf(),
        cells: rows.len(),
        failed,
        seconds: clock.elapsed().as_secs_f64(),
        rows,
        orders,
    })
}

/// What an interrupted run left for a resume to continue from: its manifest's progress,
/// or its journal's header when the manifest is lost.
pub(crate) struct Earlier {
    started: String,
    resumes: usize,
    shards: Vec<crate::manifest::ShardNote>,
    sweep_thread_counts: Vec<usize>,
}

/// The interrupted run in `out_dir` (`None` when the folder holds no run: a sweep
/// killed before it wrote anything, or the first attempt of a cluster task, starts
/// afresh), if `text` is the spec it ran; otherwise the differences are named. A folder
/// whose manifest is lost resumes from its journal's header.
fn resumable(out_dir: &Path, text: &str) -> Result<Option<Earlier>, RunnerError> {
    let path = out_dir.join("manifest.json");
    let (earlier, spec_hash, spec_text) = if path.exists() {
        let m = Manifest::read(&path)?;
        let earlier = Earlier {
            started: m.started,
            resumes: m.resumes,
            shards: m.shards,
            sweep_thread_counts: m.sweep_thread_counts,
        };
        (earlier, m.spec_hash, m.spec_text)
    } else if let Some(h) = Journal::header(out_dir) {
        let earlier = Earlier {
            started: h.started,
            resumes: 0,
            shards: Vec::new(),
            sweep_thread_counts: h.sweep_thread_counts,
        };
        (earlier, h.spec_hash, h.spec_text)
    } else {
        return Ok(None);
    };
    if spec_hash != sha256_hex(text) {
        let what = crate::manifest::spec_difference(&spec_text, text)
            .unwrap_or_else(|| "comments or layout only, but the hash covers the text".into());
        return Err(RunnerError::Resume {
            path: out_dir.display().to_string(),
            message: format!(
                "the spec changed since the interrupted run ({what}); resume with the spec as it was, or rerun with --force to discard it"
            ),
        });
    }
    Ok(Some(earlier))
}

/// The counts of cells side by side, one batch each: the spec's `sweep_threads`, else
/// `--threads`, else (resuming) the interrupted run's, else all cores.
fn sweep_counts(spec: &Spec, opts: &RunOptions, earlier: Option<&Earlier>) -> Vec<usize> {
    if let Some(list) = &spec.sweep_threads {
        return list.clone();
    }
    match (opts.threads, earlier) {
        (Some(k), _) => vec![k],
        (None, Some(m)) if !m.sweep_thread_counts.is_empty() => m.sweep_thread_counts.clone(),
        _ => vec![crate::spec::logical_cores()],
    }
}

/// Every cell once per entry of `sweeps`, numbered after the previous batch's (cell
/// `b·len + i`), so that traces join their rows and journal items name one run.
fn batch_cells(cells: &[Cell], sweeps: &[usize]) -> Vec<(usize, Vec<Cell>)> {
    sweeps
        .iter()
        .enumerate()
        .map(|(b, &k)| {
            let batch = cells
                .iter()
                .map(|c| Cell {
                    index: b * cells.len() + c.index,
                    ..c.clone()
                })
                .collect();
            (k, batch)
        })
        .collect()
}

/// Open the journal (new, or continued with its recorded runs) and write the manifest
/// with the sweep `running`.
fn start_durable(
    spec: &Spec, text: &str, opts: &RunOptions, out_dir: &Path, cells: &[Cell],
    batches: &[(usize, Vec<Cell>)], earlier: Option<Earlier>,
) -> Result<Durable, RunnerError> {
    let sweeps: Vec<usize> = batches.iter().map(|(k, _)| *k).collect();
    let all = batches.iter().flat_map(|(_, b)| b);
    let runs_per_cell = all
        .map(|c| {
            (
                c.index,
                if c.ensemble.is_some() {
                    1
                } else {
                    c.repeat.max(1)
                },
            )
        })
        .collect();
    let datasets = crate::manifest::dataset_notes(
        cells
            .iter()
            .map(|c| (c.problem.as_str(), &c.problem_params)),
    );
    crate::manifest::print_notes(&datasets, opts.progress);
    let header = Header {
        datasets: datasets
            .iter()
            .map(|d| (d.file.clone(), d.sha256.clone()))
            .collect(),
        spec_hash: sha256_hex(text),
        size: spec.size_name(opts.size.as_deref()),
        sweep_thread_counts: sweeps.clone(),
        cells_total: cells.len() * sweeps.len(),
        shard: opts.shard,
        binary: Header::this_binary(),
        experiment: spec.name.clone(),
        cell_seconds: spec.cell_seconds,
        spec_text: text.to_string(),
        started: earlier
            .as_ref()
            .map_or_else(now_rfc3339, |e| e.started.clone()),
    };
    let (journal, recorded) = match earlier {
        Some(_) => Journal::resume(out_dir, &header)?,
        None => (Journal::create(out_dir, &header)?, Recorded::new()),
    };
    let manifest = Manifest {
        experiment: spec.name.clone(),
        cell_seconds: spec.cell_seconds,
        spec_text: text.to_string(),
        spec_hash: header.spec_hash.clone(),
        size: header.size.clone(),
        sweep_threads: sweeps.iter().copied().max().unwrap_or(1),
        sweep_thread_counts: sweeps,
        status: "running".into(),
        cells_total: batches.iter().map(|(_, b)| b.len()).sum(),
        resumes: earlier.as_ref().map_or(0, |m| m.resumes + 1),
        shard: opts
            .shard
            .map_or_else(String::new, |(i, n)| format!("{i}/{n}")),
        shards: earlier.as_ref().map_or_else(Vec::new, |m| m.shards.clone()),
        started: header.started.clone(),
        catalog: catalog_notes(&opts.registry, cells),
        datasets,
        ..Manifest::of_this_build()
    };
    Durable::new(
        journal,
        recorded,
        manifest,
        out_dir.join("manifest.json"),
        &runs_per_cell,
        !opts.complete_only,
        opts.stop.clone(),
    )
}

/// The rows of a run of cells: summaries, traces, ensemble members, and the wall time
/// of the side-by-side part.
#[derive(Default)]
struct Batch {
    rows: Vec<RunRecord>,
    traces: Vec<CellTrace>,
    members: Vec<crate::ensemble::MemberRecord>,
    side_by_side: f64,
}

/// Run each batch's cells, that many side by side: each batch's rows carry the count and
/// the batch's wall time.
fn run_batches(
    experiment: &str, batches: &[(usize, Vec<Cell>)], opts: &RunOptions, durable: &Durable,
) -> Result<Batch, RunnerError> {
    let mut all = Batch::default();
    for (k, batch) in batches {
        let mut done = run_cells(experiment, batch, *k, opts, durable)?;
        for row in &mut done.rows {
            row.sweep_threads = *k;
            row.batch_seconds = done.side_by_side;
        }
        all.rows.extend(done.rows);
        all.traces.extend(done.traces);
        all.members.extend(done.members);
    }
    Ok(all)
}

/// A rayon pool of `threads` threads.
fn pool(threads: usize) -> Result<rayon::ThreadPool, RunnerError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| RunnerError::Write {
            path: "thread pool".into(),
            message: e.to_string(),
        })
}

/// The progress bar of a run of `cells`.
fn progress_bar(experiment: &str, cells: usize, opts: &RunOptions) -> ProgressBar {
    let bar = if opts.progress {
        ProgressBar::new(cells as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix:>28} [{bar:30}] {pos}/{len} cells {elapsed_precise} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(experiment.to_string());
    bar
}

/// Run `cells` on `sweep_threads` threads, sorted by cell index: cells with one faer
/// thread side by side; cells asking for more one at a time, each owning its pool (no
/// oversubscription, honest thread-count studies); ensembles one at a time, their
/// members side by side on `sweep_threads` threads (an honest throughput). Also returns
/// the wall time of the side-by-side part (the one `sweep_threads` speeds up). Every run
/// goes through `durable`.
fn run_cells(
    experiment: &str, cells: &[Cell], sweep_threads: usize, opts: &RunOptions, durable: &Durable,
) -> Result<Batch, RunnerError> {
    let bar = progress_bar(experiment, cells.len(), opts);
    let (ensembles, single): (Vec<&Cell>, Vec<&Cell>) =
        cells.iter().partition(|c| c.ensemble.is_some());
    let (serial, multi): (Vec<&Cell>, Vec<&Cell>) = single.iter().partition(|c| c.threads == 1);
    let registry = &opts.registry;
    let side_by_side = Instant::now();
    let results = pool(sweep_threads)?
        .install(|| run_side_by_side(registry, experiment, &serial, durable, || bar.inc(1)));
    let mut results = results.ok_or_else(|| durable.failure())?;
    let side_by_side = side_by_side.elapsed().as_secs_f64();
    for c in multi {
        let runs = c.repeat.max(1);
        let row = run_alone(experiment, c, c.threads, |c| {
            let items: Option<Vec<RunItem>> = (0..runs)
                .map(|k| durable.run(c, k, runs, || run_item(registry, experiment, c, k)))
                .collect();
            Some(combine(c, items?))
        });
        results.push(row.ok_or_else(|| durable.failure())?);
        bar.inc(1);
    }
    let mut members = Vec::new();
    for c in ensembles {
        let item = run_alone(experiment, c, sweep_threads, |c| {
            let item = durable.run(c, 0, 1, || run_ensemble_item(registry, experiment, c))?;
            members.extend(item.members);
            Some((item.record, empty_trace(c)))
        });
        results.push(item.ok_or_else(|| durable.failure())?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    results.sort_by_key(|(r, _)| r.cell);
    let (rows, traces) = results.into_iter().unzip();
    Ok(Batch {
        rows,
        traces,
        members,
        side_by_side,
    })
}

/// An ensemble cell run whole (all its repeats) as one journal item, its members inside.
fn run_ensemble_item(registry: &Registry, experiment: &str, cell: &Cell) -> RunItem {
    let base = base_record(experiment, cell);
    let (record, members) = match cell.ensemble.as_ref() {
        Some(e) => crate::ensemble::run_ensemble(registry, base, cell, e),
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
fn run_alone(
    experiment: &str, cell: &Cell, threads: usize,
    run: impl FnOnce(&Cell) -> Option<(RunRecord, CellTrace)> + Send,
) -> Option<(RunRecord, CellTrace)> {
    match pool(threads) {
        Ok(p) => p.install(|| run(cell)),
        Err(e) => {
            let mut rec = base_record(experiment, cell);
            rec.fail_time = Some(0.0);
            rec.fail_kind = Some(FailKind::ThreadPool);
            rec.fail_reason = Some(format!(
                "cannot start a pool of {threads} threads for this cell: {e}"
            ));
            Some((rec, empty_trace(cell)))
        }
    }
}

/// One run of `cell` with nothing else running, on a pool of its own threads (the
/// timing pass, [`crate::timing`]).
pub(crate) fn run_alone_once(registry: &Registry, experiment: &str, cell: &Cell) -> RunRecord {
    run_alone(experiment, cell, cell.threads.max(1), |c| {
        Some(run_cell_once(registry, experiment, c))
    })
    .map_or_else(|| base_record(experiment, cell), |(r, _)| r)
}

/// Time the rows a verdict of `spec` uses with their cells alone ([`crate::timing`]); a
/// shard sees part of the cells, so its rows keep the sweep's times.
fn time_verdict_rows(
    spec: &Spec, batches: &[(usize, Vec<Cell>)], rows: &mut [RunRecord], opts: &RunOptions,
) {
    if opts.shard.is_some() || spec.timing_repeats == 0 {
        return;
    }
    let which = crate::timing::rows_to_time(spec, rows);
    if which.is_empty() {
        return;
    }
    let clock = Instant::now();
    let cell_of = |index: usize| {
        batches
            .iter()
            .flat_map(|(_, b)| b)
            .find(|c| c.index == index)
            .cloned()
    };
    let run = crate::timing::run_once(&opts.registry, &spec.name);
    let timed = crate::timing::time_alone(rows, &which, spec.timing_repeats, cell_of, run);
    if opts.progress {
        eprintln!(
            "{:>28} {} rows a verdict uses timed alone, {} runs each ({:.1} s)",
            spec.name,
            timed.rows,
            spec.timing_repeats,
            clock.elapsed().as_secs_f64()
        );
    }
    for (cell, why) in &timed.irreproducible {
        eprintln!(
            "warning: {} cell {cell} keeps its sweep times: {why}",
            spec.name
        );
    }
}

/// `runs.parquet` and `runs.csv`, `traces.parquet` when the spec traces, `orders.csv`
/// when an h sweep gave orders: the names of the files written.
fn write_tables(
    spec: &Spec, out_dir: &Path, rows: &[RunRecord], traces: &[CellTrace], orders: &[OrderRow],
) -> Result<Vec<String>, RunnerError> {
    let mut runs = runs_frame(rows)?;
    write_parquet(&mut runs, &out_dir.join("runs.parquet"))?;
    write_csv(&mut runs, &out_dir.join("runs.csv"))?;
    let mut files = vec!["runs.parquet".to_string(), "runs.csv".to_string()];
    if spec.trace_stride > 0 || spec.trace_dt.is_some() {
        let mut tr = traces_frame(rows, traces)?;
        write_parquet(&mut tr, &out_dir.join("traces.parquet"))?;
        files.push("traces.parquet".into());
    }
    if !orders.is_empty() {
        write_orders(orders, &out_dir.join("orders.csv"))?;
        files.push("orders.csv".into());
    }
    Ok(files)
}

/// Catalog metadata of the problems and methods of `cells` (each id once, the first
/// instance's parameters).
fn catalog_notes(registry: &Registry, cells: &[Cell]) -> Vec<crate::manifest::CatalogNote> {
    let mut out: Vec<crate::manifest::CatalogNote> = Vec::new();
    for c in cells {
        if !out.iter().any(|n| n.kind == "problem" && n.id == c.problem) {
            if let Ok(p) = registry.build_problem(&c.problem, &c.problem_params) {
                let i = p.as_system().info();
                out.push(crate::manifest::CatalogNote {
                    kind: "problem".into(),
                    id: c.problem.clone(),
                    title: i.title,
                    equations: i.equations,
                    citation: i.citation,
                    note: i.reference,
                });
            }
        }
        if !out.iter().any(|n| n.kind == "method" && n.id == c.method) {
            let i = &c.info;
            let o = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v}"));
            out.push(crate::manifest::CatalogNote {
                kind: "method".into(),
                id: c.method.clone(),
                title: i.title.clone(),
                equations: i.equations.clone(),
                citation: i.citation.clone(),
                note: format!(
                    "declared orders q/v/λ: {}/{}/{}",
                    o(i.orders.q),
                    o(i.orders.v),
                    o(i.orders.lambda)
                ),
            });
        }
    }
    out
}
