//! `run` and `report`: a spec into a result folder (Ctrl-C stops it, the folder stays
//! resumable), and the report of a folder.

use super::{input_error, RunError};
use driftlab_runner::{run_spec, Registry, RunOptions, RunnerError, Spec};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// How often a running sweep looks for a Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// Run the spec `text` (`label`: its file, or `<dict>`) into `out` (default
/// `reports/<name>`, as the command line); returns the folder. Errors: `InputError` for a
/// bad spec or folder (exit status 2 of `driftlab run`), `RunError` when results cannot be
/// written, `KeyboardInterrupt` after a Ctrl-C (the runs in progress finish and are
/// recorded; `resume=True` continues).
#[pyfunction]
#[pyo3(signature = (text, label, out=None, threads=None, size=None, resume=false, force=false, cell_seconds=None))]
#[allow(clippy::too_many_arguments)] // the Python signature: keywords with defaults
pub fn run(
    py: Python<'_>, text: String, label: String, out: Option<PathBuf>, threads: Option<usize>,
    size: Option<String>, resume: bool, force: bool, cell_seconds: Option<f64>,
) -> PyResult<String> {
    let spec = Spec::parse(&text, &label).map_err(input_error)?;
    if resume && force {
        return Err(input_error(
            "resume=True and force=True: give one (resume continues the interrupted run, force discards it), as `driftlab run` refuses --resume with --force",
        ));
    }
    if threads == Some(0) {
        return Err(input_error(
            "threads = 0: give the cells run side by side, ≥ 1 (None: all cores)",
        ));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let opts = RunOptions {
        out_dir: out,
        threads,
        size,
        progress: false,
        registry: Registry::default(),
        resume,
        force,
        cell_seconds,
        stop: Some(Arc::clone(&stop)),
        ..RunOptions::default()
    };
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(run_spec(&spec, &text, &label, &opts));
    });
    let result = wait_for(py, rx, &stop);
    let _ = worker.join();
    match result? {
        Ok(summary) => Ok(summary.out_dir.display().to_string()),
        Err(e) => Err(sweep_error(e)),
    }
}

/// The sweep's result, looking for a Ctrl-C meanwhile: on one, the stop flag is set, the
/// sweep's end awaited and `KeyboardInterrupt` raised with how to resume.
fn wait_for<T: Send>(
    py: Python<'_>, mut rx: mpsc::Receiver<Result<T, RunnerError>>, stop: &AtomicBool,
) -> PyResult<Result<T, RunnerError>> {
    loop {
        // The receiver goes with the wait (it is `Send`, not `Sync`) and comes back.
        let (got, back) = py.detach(move || (rx.recv_timeout(SIGNAL_POLL), rx));
        rx = back;
        match got {
            Ok(result) => return Ok(result),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(RunError::new_err(
                    "internal: the sweep's thread ended without a result",
                ));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if py.check_signals().is_err() {
            stop.store(true, Ordering::Relaxed);
            let finished = py.detach(move || rx.recv());
            let why = match finished {
                Ok(Err(e)) => e.to_string(),
                Ok(Ok(_)) => "it had finished".into(),
                Err(_) => "its thread ended".into(),
            };
            return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(format!(
                "{why} (from Python: driftlab.run(spec, out=…, resume=True))"
            )));
        }
    }
}

/// A runner error as the exception of its exit status: bad specs, folders and resumes are
/// input (2), writes are results (1).
fn sweep_error(e: RunnerError) -> PyErr {
    match e {
        RunnerError::Write { .. } => RunError::new_err(e.to_string()),
        e @ (RunnerError::Folder { .. } | RunnerError::Resume { .. }) => input_error(format!(
            "{e} (from Python, the flags are keywords: resume=True, force=True, out=…)"
        )),
        e => input_error(e),
    }
}

/// Build the report of every complete run under `dir`: a dict of the files written per
/// experiment, and the folders not drawn (with why) under `"unfinished"`.
#[pyfunction]
pub fn report<'py>(py: Python<'py>, dir: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let made = py.detach(|| driftlab_report::report_all(&dir));
    let made = made.map_err(|e| match e {
        driftlab_report::ReportError::Nothing { .. } => input_error(e),
        e => RunError::new_err(e.to_string()),
    })?;
    let d = PyDict::new(py);
    for (name, files) in &made.files {
        let paths: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        d.set_item(name, paths)?;
    }
    let unfinished: Vec<(String, String)> = made
        .unfinished
        .iter()
        .map(|u| (u.dir.display().to_string(), u.why.clone()))
        .collect();
    d.set_item("unfinished", unfinished)?;
    Ok(d)
}

/// The damage of the result folder `dir` (`None`: its tables are the ones its run wrote):
/// a listed file missing, a table with rows or columns its run did not write, a column
/// stored with another type than the schema's, a cell twice (`driftlab_results::folder_check`).
#[pyfunction]
pub fn check_folder(dir: PathBuf) -> Option<String> {
    driftlab_results::folder_check::check(&dir).err()
}
