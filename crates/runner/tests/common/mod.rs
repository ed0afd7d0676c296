//! What the runner's tests share: run a spec's text into a fresh temporary folder.
#![allow(dead_code)] // each test binary uses what it needs

use driftlab_runner::{run_spec, RunOptions, RunSummary, Spec};
use std::path::PathBuf;

/// A fresh folder `driftlab-test-{name}-{pid}` under the temporary directory.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("driftlab-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Parse `text` (named `name.toml` in messages) and run it on `threads` threads into
/// [`fresh_dir`]`(name)`: the summary and the folder.
pub fn run_text(text: &str, name: &str, threads: usize) -> (RunSummary, PathBuf) {
    let path = format!("{name}.toml");
    let spec = Spec::parse(text, &path).expect("valid spec");
    let dir = fresh_dir(name);
    let opts = RunOptions {
        out_dir: Some(dir.clone()),
        threads: Some(threads),
        ..RunOptions::default()
    };
    let sum = run_spec(&spec, text, &path, &opts).expect("run");
    (sum, dir)
}
