//! Records, for the run manifest, what a binary was built from: the git revision of the
//! source and whether it had uncommitted changes (so the manifest states it wherever the
//! binary runs, not the revision of the folder it is started in), the toolchain, and the
//! resolved versions of the key dependencies (which faer/polars/… produced the numbers).

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DRIFTLAB_RUSTC={}", version.trim());
    let lock = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let wanted = [
        "faer", "polars", "plotters", "rayon", "ndarray", "serde", "toml", "svg2pdf", "clap",
    ];
    let mut found = Vec::new();
    let mut name = String::new();
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = n.trim_matches('"').to_string();
        } else if let Some(v) = line.strip_prefix("version = ") {
            if wanted.contains(&name.as_str()) {
                found.push(format!("{}={}", name, v.trim_matches('"')));
            }
        }
    }
    println!("cargo:rustc-env=DRIFTLAB_DEP_VERSIONS={}", found.join(","));
    source_revision();
}

/// `DRIFTLAB_GIT_REVISION` and `DRIFTLAB_GIT_DIRTY` of the source tree this crate is
/// built from (`unknown`/`false` outside a git checkout, e.g. a crates.io package). The
/// build script reruns when the checkout's HEAD, index or refs move or any source file
/// of the workspace changes, so a dirty flag is never stale.
fn source_revision() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let git = |args: &[&str]| -> Option<String> {
        let o = Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(args)
            .output()
            .ok()?;
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let revision = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    println!("cargo:rustc-env=DRIFTLAB_GIT_REVISION={revision}");
    println!("cargo:rustc-env=DRIFTLAB_GIT_DIRTY={dirty}");
    let top = git(&["rev-parse", "--show-toplevel"]);
    let git_dir = git(&["rev-parse", "--absolute-git-dir"]);
    if let (Some(top), Some(git_dir)) = (top, git_dir) {
        for f in ["HEAD", "index", "packed-refs", "refs/heads"] {
            println!("cargo:rerun-if-changed={git_dir}/{f}");
        }
        for f in ["crates", "examples", "Cargo.toml"] {
            println!("cargo:rerun-if-changed={top}/{f}");
        }
    }
}
