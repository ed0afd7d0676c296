//! Files written whole or not at all: a temporary file beside the target, synced and
//! renamed over it, and the directory synced after (the journal, the manifest and the
//! tables all go through [`write_atomically`]).

use crate::error::RunnerError;
use std::fs::File;
use std::path::Path;

/// `fsync` a folder so that a file created or renamed in it survives a crash (best
/// effort: some file systems refuse to open folders for syncing).
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Write `path` atomically: `fill` writes a temporary file beside it, which is synced and
/// renamed over `path`, so a reader sees the old file or the new one, never half of one.
pub fn write_atomically(
    path: &Path, fill: impl FnOnce(&mut File) -> Result<(), String>,
) -> Result<(), RunnerError> {
    let err = |message: String| RunnerError::Write {
        path: path.display().to_string(),
        message,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.partial"));
    let mut file = File::create(&tmp).map_err(|e| err(e.to_string()))?;
    let written = fill(&mut file).and_then(|()| file.sync_all().map_err(|e| e.to_string()));
    drop(file);
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path).map_err(|e| e.to_string())) {
        let _ = std::fs::remove_file(&tmp);
        return Err(err(e));
    }
    if let Some(dir) = path.parent() {
        sync_dir(dir);
    }
    Ok(())
}
