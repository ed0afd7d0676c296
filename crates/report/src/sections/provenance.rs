//! The provenance appendix: version, revision, machine and the state of every run.

use crate::book::Book;
use crate::error::ReportError;
use crate::role::{manifest, s};
use crate::sections::context::Context;

/// Provenance appendix: per experiment its spec hash, size, git revision, dirty flag,
/// machine, threads and start time; then the compiler, profile and dependency versions.
pub(crate) fn provenance_section(b: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    let (all, first) = (c.all, &c.first);
    b.heading("Appendix C — provenance", 1);
    b.paragraph("Per experiment: the spec's SHA-256, the size it ran at, the git revision and dirty flag of the source the binary was built from (embedded at build time), the machine, the threads running cells side by side, whether the sweep completed (and how often it was resumed, over how many shards), and the start time (UTC).");
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|res| {
            let m = manifest(&res.dir);
            vec![
                res.name.clone(),
                s(&m, "spec_hash").chars().take(16).collect(),
                s(&m, "size"),
                s(&m, "git_revision").chars().take(10).collect(),
                s(&m, "git_dirty"),
                s(&m, "cpu"),
                s(&m, "sweep_threads"),
                run_state(&m),
                s(&m, "started"),
            ]
        })
        .collect();
    b.table(
        &[
            "experiment",
            "spec sha256",
            "size",
            "git",
            "dirty",
            "cpu",
            "threads",
            "status",
            "started",
        ],
        &rows,
    );
    b.paragraph(&format!(
        "Build: {}; {}; dependencies: {}.",
        s(first, "rustc"),
        s(first, "build_profile"),
        first["crate_versions"]
            .as_array()
            .map(|v| v
                .iter()
                .filter_map(|x| x.as_str())
                .collect::<Vec<_>>()
                .join(", "))
            .unwrap_or_default()
    ));
    Ok(())
}

/// `complete` / `running`, with the resumes and shards when there were any (results
/// written before sweeps were journaled have no status: `—`).
pub(crate) fn run_state(m: &serde_json::Value) -> String {
    let mut out = match m["status"].as_str() {
        Some(st) if !st.is_empty() => st.to_string(),
        _ => "—".into(),
    };
    let resumes = m["resumes"].as_u64().unwrap_or(0);
    if resumes > 0 {
        out.push_str(&format!(", resumed {resumes}×"));
    }
    let shards = m["shards"].as_array().map_or(0, Vec::len);
    if shards > 0 {
        out.push_str(&format!(", {shards} shards"));
    }
    out
}
