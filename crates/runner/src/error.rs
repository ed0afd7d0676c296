//! Runner failures: bad specs (with the field and the fix) and I/O.

use thiserror::Error;

/// A runner failure. Spec errors are found before any cell runs.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RunnerError {
    /// The spec file could not be read.
    #[error("cannot read spec `{path}`: {source}")]
    Read {
        /// Path.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The spec is invalid.
    #[error("invalid spec `{path}`: {message}")]
    Spec {
        /// Path or name.
        path: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A sweep cannot be resumed (no manifest, another spec, another size or shard).
    #[error("cannot resume `{path}`: {message}")]
    Resume {
        /// Result folder or file.
        path: String,
        /// What differs and what to do.
        message: String,
    },
    /// The output folder is held by another process or holds what a run must not mix
    /// with (an interrupted run, another experiment, foreign files).
    #[error("result folder `{path}`: {message}")]
    Folder {
        /// The folder.
        path: String,
        /// What it holds and what to do.
        message: String,
    },
    /// The caller asked the sweep to stop (`RunOptions::stop`); the folder's
    /// journal holds every finished run.
    #[error("the sweep was interrupted (`{path}`): {message}")]
    Interrupted {
        /// The manifest of the interrupted folder.
        path: String,
        /// How far it got and how to continue.
        message: String,
    },
    /// A peer simulator's rows cannot be imported (malformed, unlike driftlab's rows, not
    /// a cell of the experiment, imported already).
    #[error("peer rows `{path}`: {message}")]
    Peer {
        /// The peer's file or the experiment folder.
        path: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// Writing results failed.
    #[error("cannot write `{path}`: {message}")]
    Write {
        /// Path.
        path: String,
        /// Cause.
        message: String,
    },
}

/// The message of a caught panic.
pub fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}
