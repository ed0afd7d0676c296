//! Report failures.

use std::path::Path;
use thiserror::Error;

/// A report failure.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReportError {
    /// File system.
    #[error("{path}: {message}")]
    Io {
        /// Path.
        path: String,
        /// Cause.
        message: String,
    },
    /// A stored table is missing a column or has the wrong type.
    #[error("{path}: {message}")]
    Data {
        /// Path.
        path: String,
        /// Cause.
        message: String,
    },
    /// The root holds no complete run to report.
    #[error("nothing to report in `{root}`: {}", nothing_text(unfinished))]
    Nothing {
        /// The report root.
        root: String,
        /// The folders that hold unfinished runs, with why.
        unfinished: Vec<String>,
    },
    /// Drawing or PDF conversion failed.
    #[error("figure `{figure}`: {message}")]
    Draw {
        /// Figure file stem.
        figure: String,
        /// Cause.
        message: String,
    },
}

/// The rest of [`ReportError::Nothing`]'s message.
fn nothing_text(unfinished: &[String]) -> String {
    if unfinished.is_empty() {
        "no folder in it holds a run (`NAME/runs.parquet` with its manifest); run an experiment first (`driftlab run SPEC --out ROOT/NAME`), or point --dir at the folder that holds the experiment folders".into()
    } else {
        format!("no run in it is complete — {}", unfinished.join("; "))
    }
}

impl ReportError {
    /// An I/O error at `path`.
    pub fn io(path: &Path, e: impl std::fmt::Display) -> Self {
        Self::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }
}
