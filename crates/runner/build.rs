//! Records the toolchain and the resolved versions of the key dependencies for the run
//! manifest (reproducibility: which faer/polars/… produced these numbers).

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
}
