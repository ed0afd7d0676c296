//! Running an experiment: cells in parallel (rayon), each through the one time loop.

use crate::analysis::orders::{fit_orders, OrderRow};
use crate::error::RunnerError;
use crate::exec::cell_run::{combine, empty_trace, pool, run_alone, run_ensemble_item, run_item};
use crate::exec::durable::Durable;
use crate::registry::Registry;
use crate::spec::cell::{expand, Cell};
use crate::spec::Spec;
use crate::store::folder::Claim;
use crate::store::journal::{Header, Journal, Recorded, RunItem};
use crate::store::manifest::{now_rfc3339, sha256_hex, Manifest};
use crate::store::record::{runs_frame, traces_frame, write_csv, write_parquet, CellTrace};
use driftlab_results::schema::runs;
use indicatif::{ProgressBar, ProgressStyle};

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
    /// Run only shard `(I, N)` of the cells (`driftlab run --shard I/N`).
    pub shard: Option<(usize, usize)>,
    /// Compute nothing: every run must be in the journal (a merge of shards).
    pub complete_only: bool,
    /// Discard whatever run the output folder holds (`--force`): driftlab's own files in
    /// it are removed first, other files stay ([`crate::store::folder`]).
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
    pub rows: Vec<runs::Row>,
    /// Fitted orders.
    pub orders: Vec<OrderRow>,
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
) -> Option<Vec<(runs::Row, CellTrace)>> {
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
/// [`crate::exec::cost::cost_estimate`] (repeats of a cell in order, ties by cell index).
fn longest_first(registry: &Registry, cells: &[&Cell]) -> Vec<(usize, usize)> {
    let costs = crate::exec::cost::cost_estimates(cells.iter().copied(), registry);
    let mut order: Vec<usize> = (0..cells.len()).collect();
    order.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]).then(a.cmp(&b)));
    order
        .into_iter()
        .flat_map(|i| (0..cells[i].repeat.max(1)).map(move |k| (k, i)))
        .collect()
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
/// ([`crate::store::folder`]): a previous complete run of the same experiment is replaced, an
/// interrupted one is continued only with `opts.resume` and discarded only with
/// `opts.force`. Every finished run of a cell is recorded in the folder's journal as it
/// finishes ([`crate::store::journal`]); with `opts.resume` the runs an interrupted sweep
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
    let _lock = crate::store::folder::prepare(&out_dir, &spec.name, claim, &doing)?;
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
    let clock = Instant::now();
    let earlier = match opts.resume {
        true => resumable(out_dir, text)?,
        false => None,
    };
    let sweeps = sweep_counts(spec, opts, earlier.as_ref());
    let batches = batch_cells(cells, &sweeps);
    let batches = match opts.shard {
        Some(shard) => crate::exec::cost::keep_shard(batches, shard, &opts.registry),
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
    let failed = rows.iter().filter(|r| !r.ok()).count();
    // Orders from the first batch (a thread sweep repeats every cell).
    let first: Vec<runs::Row> = rows
        .iter()
        .filter(|r| r.sweep_threads == sweeps[0] as u64)
        .cloned()
        .collect();
    let orders = fit_orders(&first);
    let mut files = write_tables(spec, out_dir, &rows, &traces, &orders)?;
    if spec.ensemble.is_some() {
        let mut df = crate::store::members::members_frame(&spec.name, &members)?;
        write_parquet(&mut df, &out_dir.join("members.parquet"))?;
        write_csv(&mut df, &out_dir.join("members.csv"))?;
        files.extend(["members.parquet".to_string(), "members.csv".to_string()]);
    }
    if !spec.optima.is_empty() {
        let optima = crate::analysis::optima::find(&spec.optima, &first, &members);
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
    shards: Vec<crate::store::manifest::ShardNote>,
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
        let what = crate::store::manifest::spec_difference(&spec_text, text)
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
    let datasets = crate::store::manifest::dataset_notes(
        cells
            .iter()
            .map(|c| (c.problem.as_str(), &c.problem_params)),
    );
    crate::store::manifest::print_notes(&datasets, opts.progress);
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
    rows: Vec<runs::Row>,
    traces: Vec<CellTrace>,
    members: Vec<crate::store::members::MemberRecord>,
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
            row.sweep_threads = *k as u64;
            row.batch_seconds = done.side_by_side;
        }
        all.rows.extend(done.rows);
        all.traces.extend(done.traces);
        all.members.extend(done.members);
    }
    Ok(all)
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

/// Time the rows a verdict of `spec` uses with their cells alone ([`crate::exec::timing`]); a
/// shard sees part of the cells, so its rows keep the sweep's times.
fn time_verdict_rows(
    spec: &Spec, batches: &[(usize, Vec<Cell>)], rows: &mut [runs::Row], opts: &RunOptions,
) {
    if opts.shard.is_some() || spec.timing_repeats == 0 {
        return;
    }
    let which = crate::exec::timing::rows_to_time(spec, rows);
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
    let run = crate::exec::timing::run_once(&opts.registry, &spec.name);
    let timed = crate::exec::timing::time_alone(rows, &which, spec.timing_repeats, cell_of, run);
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
    spec: &Spec, out_dir: &Path, rows: &[runs::Row], traces: &[CellTrace], orders: &[OrderRow],
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
fn catalog_notes(registry: &Registry, cells: &[Cell]) -> Vec<crate::store::manifest::CatalogNote> {
    let mut out: Vec<crate::store::manifest::CatalogNote> = Vec::new();
    for c in cells {
        if !out.iter().any(|n| n.kind == "problem" && n.id == c.problem) {
            if let Ok(p) = registry.build_problem(&c.problem, &c.problem_params) {
                let i = p.as_system().info();
                out.push(crate::store::manifest::CatalogNote {
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
            out.push(crate::store::manifest::CatalogNote {
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
