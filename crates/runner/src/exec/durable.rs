//! A sweep's durable state while it runs: the [`Journal`] every finished work item goes
//! to, the items an interrupted run already recorded (taken instead of recomputed on
//! `--resume`), and the progress in `manifest.json` (cells done / total).

use crate::error::RunnerError;
use crate::spec::cell::Cell;
use crate::store::journal::{Journal, Recorded, RunItem};
use crate::store::manifest::Manifest;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often, at most, the manifest's progress is rewritten while cells finish.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// The journal, the recorded items and the progress of one sweep.
pub(crate) struct Durable {
    journal: Journal,
    recorded: Mutex<Recorded>,
    progress: Mutex<Progress>,
    /// The first journal failure; once set, no further item runs.
    error: Mutex<Option<RunnerError>>,
    failed: AtomicBool,
    /// Set from outside: start no more runs (`RunOptions::stop`, set by the caller of `run_spec`).
    stop: Option<Arc<AtomicBool>>,
    /// Log every item started and recorded on stderr ([`Durable::log`]).
    log: bool,
    /// Compute the items the journal lacks (false: a merge, where a lacking item is an
    /// error).
    compute: bool,
}

/// The manifest as it stands, and the runs recorded per cell.
struct Progress {
    manifest: Manifest,
    path: PathBuf,
    written: Instant,
    runs_of: HashMap<usize, usize>,
}

impl Durable {
    /// Continue from `recorded` (empty for a fresh run), writing items to `journal` and
    /// progress to `manifest` at `path` (written now, with `cells_done` counted from
    /// `recorded` and the cells' `repeat`s).
    pub(crate) fn new(
        journal: Journal, recorded: Recorded, mut manifest: Manifest, path: PathBuf,
        runs_per_cell: &HashMap<usize, usize>, compute: bool, stop: Option<Arc<AtomicBool>>,
    ) -> Result<Self, RunnerError> {
        let mut runs_of = HashMap::new();
        for &(cell, _) in recorded.keys() {
            *runs_of.entry(cell).or_insert(0) += 1;
        }
        manifest.cells_done = runs_of
            .iter()
            .filter(|(c, n)| runs_per_cell.get(c).is_some_and(|want| *n >= want))
            .count();
        manifest.write(&path)?;
        Ok(Self {
            journal,
            recorded: Mutex::new(recorded),
            progress: Mutex::new(Progress {
                manifest,
                path,
                written: Instant::now(),
                runs_of,
            }),
            error: Mutex::new(None),
            failed: AtomicBool::new(false),
            stop,
            log: std::env::var_os("DRIFTLAB_JOURNAL_LOG").is_some(),
            compute,
        })
    }

    /// The `k`-th run of `cell`: taken from the journal when an earlier run recorded it,
    /// else computed by `work` and made durable before returning. `None` once the
    /// journal has failed (the error is returned by [`Durable::finish`]).
    pub(crate) fn run(
        &self, cell: &Cell, k: usize, runs: usize, work: impl FnOnce() -> RunItem,
    ) -> Option<RunItem> {
        if let Some(item) = lock(&self.recorded).remove(&(cell.index, k)) {
            return Some(item);
        }
        if self.failed.load(Ordering::Relaxed) {
            return None;
        }
        if self
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            self.failed.store(true, Ordering::Relaxed);
            let path = lock(&self.progress).path.display().to_string();
            lock(&self.error).get_or_insert(RunnerError::Interrupted {
                path,
                message: String::new(),
            });
            return None;
        }
        if !self.compute {
            self.failed.store(true, Ordering::Relaxed);
            let path = lock(&self.progress).path.display().to_string();
            lock(&self.error).get_or_insert(RunnerError::Resume {
                path,
                message: format!(
                    "run {k} of cell {} ({} / {}, h = {:e}) is in no shard's journal; rerun the shard that holds it with --resume, then merge",
                    cell.index, cell.problem, cell.variant, cell.h
                ),
            });
            return None;
        }
        self.log("start", cell.index, k);
        let item = work();
        if let Err(e) = self.journal.append(&item) {
            self.failed.store(true, Ordering::Relaxed);
            lock(&self.error).get_or_insert(e);
            return None;
        }
        self.log("recorded", cell.index, k);
        self.count(cell.index, runs);
        Some(item)
    }

    /// With `DRIFTLAB_JOURNAL_LOG` set, one line on stderr per work item started and per
    /// item made durable: the kill test counts from them the items in flight at a kill.
    fn log(&self, what: &str, cell: usize, k: usize) {
        if self.log {
            eprintln!("journal: {what} cell {cell} run {k}");
        }
    }

    /// One more run of `cell` recorded; the manifest is rewritten when a cell completes
    /// and a second has passed since the last write.
    fn count(&self, cell: usize, runs: usize) {
        let mut p = lock(&self.progress);
        let n = p.runs_of.entry(cell).or_insert(0);
        *n += 1;
        if *n == runs {
            p.manifest.cells_done += 1;
            if p.written.elapsed() >= PROGRESS_EVERY {
                p.written = Instant::now();
                // Progress is advisory (the journal is the record): a failed write of it
                // does not stop the sweep.
                let _ = p.manifest.write(&p.path);
            }
        }
    }

    /// The journal failure that stopped the sweep, with the progress so far named (the
    /// manifest is written with it).
    pub(crate) fn failure(&self) -> RunnerError {
        let p = lock(&self.progress);
        let _ = p.manifest.write(&p.path);
        let done = format!(
            "the sweep stopped with {} of {} cells recorded in the journal; fix the cause and continue with --resume",
            p.manifest.cells_done, p.manifest.cells_total
        );
        match lock(&self.error).take() {
            Some(RunnerError::Write { path, message }) => RunnerError::Write {
                path,
                message: format!("{message}; {done}"),
            },
            Some(RunnerError::Interrupted { path, .. }) => RunnerError::Interrupted {
                path,
                message: done,
            },
            Some(other) => other,
            None => RunnerError::Write {
                path: p.path.display().to_string(),
                message: done,
            },
        }
    }

    /// Mark the sweep complete in the manifest: `cells` rows, `failed` of them failed,
    /// finished at `finished`, the tables in `files`.
    pub(crate) fn complete(
        &self, cells: usize, failed: usize, finished: String, files: Vec<String>,
    ) -> Result<(), RunnerError> {
        let mut p = lock(&self.progress);
        let dir = p.path.parent().unwrap_or(std::path::Path::new("."));
        p.manifest.tables = crate::store::manifest::table_notes(dir, &files)?;
        p.manifest.files = files;
        p.manifest.status = "complete".into();
        p.manifest.cells_done = p.manifest.cells_total;
        p.manifest.cells = cells;
        p.manifest.failed_cells = failed;
        p.manifest.finished = finished;
        p.manifest.write(&p.path)
    }
}

/// Lock `m`, recovering the data of a poisoned lock (a panic is caught per cell and
/// never leaves these structures half-updated).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
