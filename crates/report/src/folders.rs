//! Which result folders under the report's root hold a finished run (drawn) and which
//! do not (named in the report, never drawn): a run still being written, a sweep that
//! was interrupted, or a folder whose tables are not the ones its run wrote
//! ([`driftlab_results::folder_check`]: a dropped or retyped column, rows lost or
//! duplicated, a listed file missing). A folder's tables are read only if its manifest lists them among the
//! files its run wrote, so a file another run left behind cannot be drawn as this one's.

use crate::error::ReportError;
use driftlab_results::folder_lock::{FolderLock, LockError};
use std::path::{Path, PathBuf};

/// A folder under the root that holds a run the report does not draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Unfinished {
    /// The folder.
    pub dir: PathBuf,
    /// Why it is not drawn, with its progress and what to do.
    pub why: String,
}

/// The folders of a report root.
#[derive(Debug, Default)]
pub struct Survey {
    /// Folders with a complete run, locked for the report while it draws them.
    pub complete: Vec<(PathBuf, FolderLock)>,
    /// Folders with a run that is not complete.
    pub unfinished: Vec<Unfinished>,
}

/// Sort the folders under `root` into complete and unfinished runs.
pub fn survey(root: &Path) -> Result<Survey, ReportError> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .map_err(|e| ReportError::io(root, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut out = Survey::default();
    for dir in dirs {
        let has_run = ["runs.parquet", "manifest.json", "journal.bin"]
            .iter()
            .any(|f| dir.join(f).exists());
        if !has_run {
            continue;
        }
        let lock = match FolderLock::acquire(&dir, "driftlab report") {
            Ok(lock) => lock,
            Err(LockError::Busy(owner)) => {
                out.unfinished.push(Unfinished {
                    why: format!("still being written by {owner}; report again when it finishes"),
                    dir,
                });
                continue;
            }
            Err(LockError::Io(e)) => return Err(ReportError::io(&dir, e)),
        };
        let why = unfinished_why(&dir).or_else(|| {
            driftlab_results::folder_check::check(&dir).err().map(|d| {
                format!("damaged: {d}; its tables are not the ones its run wrote: run its spec into the folder again (`driftlab run SPEC --out DIR --force`)")
            })
        });
        match why {
            Some(why) => out.unfinished.push(Unfinished { dir, why }),
            None => out.complete.push((dir, lock)),
        }
    }
    Ok(out)
}

/// Why the run in `dir` is not complete (`None` when it is; a folder written before
/// manifests recorded their status counts as complete when it has its runs table).
fn unfinished_why(dir: &Path) -> Option<String> {
    let resume = "continue it with `driftlab run SPEC --out DIR --resume`";
    let Some(m) = manifest(dir) else {
        if dir.join("runs.parquet").exists() && !dir.join("journal.bin").exists() {
            return None;
        }
        return Some(format!(
            "interrupted: a journal without its manifest; {resume}"
        ));
    };
    let status = m["status"].as_str().unwrap_or_default();
    if status == "complete" || (status.is_empty() && dir.join("runs.parquet").exists()) {
        return None;
    }
    Some(format!(
        "interrupted: {} of {} cells recorded (started {}); {resume}",
        m["cells_done"].as_u64().unwrap_or(0),
        m["cells_total"].as_u64().unwrap_or(0),
        m["started"].as_str().unwrap_or("?")
    ))
}

fn manifest(dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Whether the table `file` of the folder `dir` belongs to the run its manifest
/// describes: listed among the files the run wrote (a manifest written before runs
/// listed their files: the file exists).
pub fn belongs(dir: &Path, file: &str) -> bool {
    let listed = manifest(dir).and_then(|m| {
        let files = m["files"].as_array()?.clone();
        (!files.is_empty()).then(|| files.iter().any(|f| f.as_str() == Some(file)))
    });
    listed.unwrap_or(true) && dir.join(file).exists()
}
