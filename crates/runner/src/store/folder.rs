//! A result folder that one run owns: locked while it is written
//! ([`driftlab_results::folder_lock`]), never a mixture of two runs.
//!
//! Before a run writes into a folder, [`prepare`] looks at what the folder holds:
//!
//! * nothing (or only what a Slurm submission put there: `slurm/`, `shard-*`) — the run
//!   starts;
//! * a complete run of the same experiment — replaced: its files are removed first, so no
//!   table, trace, order fit or figure of the old run can be read as the new one's;
//! * an interrupted run — refused, naming `--resume` (continue it) and `--force` (discard
//!   it): a typo must not throw away a long sweep's journal;
//! * a run of another experiment, or files driftlab did not write — refused, naming
//!   `--out` and `--force`.
//!
//! `--force` removes driftlab's own files (the names in [`OWN_FILES`], `figures/`) and
//! leaves every other file alone.

use crate::error::RunnerError;
use crate::store::manifest::Manifest;
use driftlab_results::folder_lock::{FolderLock, LockError};
use std::path::{Path, PathBuf};

/// The peer rows a folder holds, one JSON object per line, as imported
/// (`driftlab import-peer`).
pub const PEERS_FILE: &str = "peers.jsonl";

/// The files a run (and its report) writes into its folder; a replaced or forced run
/// removes them first.
pub const OWN_FILES: [&str; 12] = [
    "runs.parquet",
    "runs.csv",
    "traces.parquet",
    "orders.csv",
    "optima.csv",
    "members.parquet",
    "members.csv",
    "summary.md",
    "solref_check.csv",
    crate::store::journal::FILE,
    PEERS_FILE,
    "manifest.json",
];

/// The folders inside a result folder that belong to driftlab and survive a new run:
/// a Slurm submission's scripts and logs and its shards (which the merge reads).
fn is_kept(name: &str) -> bool {
    name == "slurm" || name.starts_with("shard-") || name == driftlab_results::folder_lock::FILE
}

/// How a run treats what its folder already holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// A new run: an empty folder, or the previous complete run of the same experiment
    /// (replaced).
    Fresh,
    /// Continue the interrupted run the folder holds (`--resume`); nothing is removed.
    Resume,
    /// Remove driftlab's own files whatever run they belong to (`--force`).
    Force,
}

/// What a folder holds, as far as a new run is concerned.
#[derive(Debug)]
pub enum Holds {
    /// Nothing of another run (absent, empty, or only kept entries).
    Nothing,
    /// A driftlab run: its manifest (`None` when only the journal is left).
    Run(Option<Box<Manifest>>),
    /// Files driftlab did not write, and no run (the first few names).
    Foreign(Vec<String>),
}

/// Look at `dir`.
pub fn survey(dir: &Path) -> Result<Holds, RunnerError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Holds::Nothing);
    };
    let names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !is_kept(n))
        .collect();
    let manifest = dir.join("manifest.json");
    if manifest.exists() {
        return Ok(Holds::Run(Some(Box::new(Manifest::read(&manifest)?))));
    }
    if dir.join(crate::store::journal::FILE).exists() {
        return Ok(Holds::Run(None));
    }
    let mut foreign: Vec<String> = names
        .into_iter()
        .filter(|n| !n.starts_with('.') || !n.ends_with(".partial"))
        .collect();
    foreign.sort();
    if foreign.is_empty() {
        Ok(Holds::Nothing)
    } else {
        foreign.truncate(5);
        Ok(Holds::Foreign(foreign))
    }
}

/// Create and lock `dir` for `experiment`, then make it hold nothing of another run
/// under `claim` (see the module documentation). The lock is held until the returned
/// guard is dropped.
pub fn prepare(
    dir: &Path, experiment: &str, claim: Claim, doing: &str,
) -> Result<FolderLock, RunnerError> {
    std::fs::create_dir_all(dir).map_err(|e| write_error(dir, &e))?;
    let lock = lock(dir, doing)?;
    if let Some(dead) = &lock.taken_over_from {
        eprintln!(
            "note: `{}` was held by {dead}, which ended without releasing it; taken over",
            dir.display()
        );
    }
    if admits(dir, experiment, claim)? {
        clear(dir)?;
    }
    Ok(lock)
}

/// Whether a run of `experiment` may write into `dir` under `claim` (refused with the
/// reason and the fix otherwise), and whether driftlab's files there must be removed
/// first. Reads only: `run-experiments` asks it of every folder before it runs any.
pub fn admits(dir: &Path, experiment: &str, claim: Claim) -> Result<bool, RunnerError> {
    match (claim, survey(dir)?) {
        (_, Holds::Nothing) | (Claim::Resume, Holds::Run(_)) => Ok(false),
        (Claim::Force, _) => Ok(true),
        (Claim::Fresh | Claim::Resume, Holds::Foreign(names)) => Err(refuse(dir, format!(
            "the folder is not empty and holds no driftlab run ({}); choose an empty or new folder with --out, or pass --force to write beside these files",
            names.join(", ")
        ))),
        (Claim::Fresh, Holds::Run(m)) => replaceable(dir, experiment, m.as_deref()).map(|()| true),
    }
}

/// A new run of `experiment` into a folder holding the run `m`: a complete run of the
/// same experiment may be replaced; anything else is refused with the fix.
fn replaceable(dir: &Path, experiment: &str, m: Option<&Manifest>) -> Result<(), RunnerError> {
    let Some(m) = m else {
        return Err(refuse(dir, "the folder holds the journal of an interrupted run (its manifest is gone); continue it with --resume, or discard it with --force".into()));
    };
    if m.status != "complete" {
        return Err(refuse(dir, format!(
            "the folder holds an interrupted run of `{}` ({} of {} cells recorded, started {}); continue it with --resume, or discard it with --force",
            m.experiment, m.cells_done, m.cells_total, m.started
        )));
    }
    if m.experiment != experiment {
        return Err(refuse(dir, format!(
            "the folder holds the results of experiment `{}` (complete, {}), not `{experiment}`; write elsewhere with --out, or replace them with --force",
            m.experiment, m.finished
        )));
    }
    Ok(())
}

/// Remove driftlab's own files from `dir` (tables, journal, manifest, summary, figures,
/// half-written `.NAME.partial` files); other files stay.
pub fn clear(dir: &Path) -> Result<(), RunnerError> {
    let remove = |p: PathBuf| match std::fs::remove_file(&p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(write_error(&p, &e)),
        _ => Ok(()),
    };
    for name in OWN_FILES {
        remove(dir.join(name))?;
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') && name.ends_with(".partial") {
                remove(e.path())?;
            }
        }
    }
    clear_figures(&dir.join("figures"))
}

/// The report's figures of a previous run (PNG, SVG, PDF); the folder goes when empty.
fn clear_figures(figures: &Path) -> Result<(), RunnerError> {
    let Ok(entries) = std::fs::read_dir(figures) else {
        return Ok(());
    };
    for e in entries.filter_map(|e| e.ok()) {
        let p = e.path();
        let drawn = p
            .extension()
            .is_some_and(|x| x == "png" || x == "svg" || x == "pdf");
        if drawn {
            std::fs::remove_file(&p).map_err(|e| write_error(&p, &e))?;
        }
    }
    let _ = std::fs::remove_dir(figures);
    Ok(())
}

/// Lock the existing folder `dir`, naming the owner when a live process holds it.
pub fn lock(dir: &Path, doing: &str) -> Result<FolderLock, RunnerError> {
    FolderLock::acquire(dir, doing).map_err(|e| match e {
        LockError::Busy(owner) => refuse(dir, format!(
            "another driftlab process is writing this folder: {owner}; wait for it to finish, or write elsewhere with --out"
        )),
        LockError::Io(e) => write_error(&dir.join(driftlab_results::folder_lock::FILE), &e),
    })
}

fn refuse(dir: &Path, message: String) -> RunnerError {
    RunnerError::Folder {
        path: dir.display().to_string(),
        message,
    }
}

fn write_error(path: &Path, e: &std::io::Error) -> RunnerError {
    RunnerError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}
