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
    /// Drawing or PDF conversion failed.
    #[error("figure `{figure}`: {message}")]
    Draw {
        /// Figure file stem.
        figure: String,
        /// Cause.
        message: String,
    },
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
