//! `manifest.json`: what produced a result folder.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Provenance of one experiment run, and its progress while it runs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Manifest {
    /// Experiment name.
    pub experiment: String,
    /// The spec text as run.
    pub spec_text: String,
    /// SHA-256 of the spec text.
    pub spec_hash: String,
    /// Size applied (`full`, `quick`, …).
    pub size: String,
    /// `git rev-parse HEAD` of the source the binary was built from, embedded at build
    /// time (`unknown` for a build outside a git checkout).
    pub git_revision: String,
    /// The source had uncommitted changes to tracked files when the binary was built.
    pub git_dirty: bool,
    /// The binary that ran (its path at run time).
    pub binary: String,
    /// driftlab version.
    pub driftlab_version: String,
    /// Resolved dependency versions (from Cargo.lock at build time).
    pub crate_versions: Vec<String>,
    /// `rustc --version` at build time.
    pub rustc: String,
    /// Build profile (`debug-assertions` on or off).
    pub build_profile: String,
    /// CPU model.
    pub cpu: String,
    /// Logical CPUs.
    pub logical_cpus: usize,
    /// Threads running cells side by side.
    pub sweep_threads: usize,
    /// The cells' wall-time budget in seconds (spec `cell_seconds` or `--cell-seconds`),
    /// if any.
    pub cell_seconds: Option<f64>,
    /// Every count of cells side by side the run used (the spec's `sweep_threads`, or
    /// the one `--threads`).
    #[serde(default)]
    pub sweep_thread_counts: Vec<usize>,
    /// `running` while the sweep runs (the tables are not written yet), `complete` when
    /// every cell is recorded and the tables are written.
    pub status: String,
    /// Cells over all batches.
    pub cells_total: usize,
    /// Cells whose every run is recorded in the journal (updated at most once a second
    /// while running).
    pub cells_done: usize,
    /// How many times the sweep was continued with `--resume`.
    pub resumes: usize,
    /// `I/N` when this folder holds shard I of N (`--shard`), else empty.
    pub shard: String,
    /// The shards a merged folder was combined from (`driftlab merge`).
    pub shards: Vec<ShardNote>,
    /// The machine's host name.
    pub host: String,
    /// Cells run.
    pub cells: usize,
    /// Cells failed.
    pub failed_cells: usize,
    /// Start time (UTC, RFC 3339).
    pub started: String,
    /// End time (UTC, RFC 3339).
    pub finished: String,
    /// The published datasets the experiment's problems embed, with their SHA-256.
    pub datasets: Vec<DatasetNote>,
    /// The tables this run wrote into its folder (set when it completes): a reader uses
    /// these and no other file of the folder.
    pub files: Vec<String>,
    /// Metadata of every problem and method the experiment ran, from the catalogs at run
    /// time (so the report quotes the equations and citations, never retypes them).
    pub catalog: Vec<CatalogNote>,
    /// Rows of peer simulators in the runs table after the experiment's own
    /// (`driftlab import-peer`, kept in `peers.jsonl`).
    pub peer_rows: usize,
    /// The rows and columns of every Parquet table the run wrote, as it wrote them: the
    /// report and `compare` read a folder only while its tables still match
    /// (`driftlab_results::folder_check`).
    pub tables: Vec<driftlab_results::folder_check::TableNote>,
}

/// The notes of the Parquet tables among `files` in `dir` (read from their metadata).
pub fn table_notes(
    dir: &std::path::Path, files: &[String],
) -> Result<Vec<driftlab_results::folder_check::TableNote>, crate::error::RunnerError> {
    files
        .iter()
        .filter(|f| f.ends_with(".parquet"))
        .map(|f| {
            driftlab_results::folder_check::note(dir, f).map_err(|message| {
                crate::error::RunnerError::Write {
                    path: dir.join(f).display().to_string(),
                    message,
                }
            })
        })
        .collect()
}

impl Manifest {
    /// The fields that describe this build and machine (git state, versions, rustc,
    /// profile, CPU); the run's own fields are left empty for the caller.
    pub fn of_this_build() -> Self {
        Self {
            git_revision: env!("DRIFTLAB_GIT_REVISION").into(),
            git_dirty: env!("DRIFTLAB_GIT_DIRTY") == "true",
            binary: std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "unknown".into()),
            driftlab_version: env!("CARGO_PKG_VERSION").into(),
            crate_versions: env!("DRIFTLAB_DEP_VERSIONS")
                .split(',')
                .map(String::from)
                .collect(),
            rustc: env!("DRIFTLAB_RUSTC").into(),
            build_profile: if cfg!(debug_assertions) {
                "dev (debug assertions on)".into()
            } else {
                "optimized, no debug assertions".into()
            },
            cpu: cpu_model(),
            host: std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|h| h.trim().to_string())
                .unwrap_or_else(|_| "unknown".into()),
            logical_cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            ..Self::default()
        }
    }

    /// Write as pretty JSON to `path`, atomically (a reader never sees half of it).
    pub fn write(&self, path: &std::path::Path) -> Result<(), crate::error::RunnerError> {
        let json =
            serde_json::to_string_pretty(self).map_err(|e| crate::error::RunnerError::Write {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
        crate::store::atomic::write_atomically(path, |f| {
            std::io::Write::write_all(f, json.as_bytes()).map_err(|e| e.to_string())
        })
    }

    /// Read the manifest at `path`.
    pub fn read(path: &std::path::Path) -> Result<Self, crate::error::RunnerError> {
        let err = |message: String| crate::error::RunnerError::Resume {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        serde_json::from_str(&text).map_err(|e| err(format!("not a driftlab manifest: {e}")))
    }
}

/// A dataset an experiment's problems read: the Test Set data and the shipped robots
/// (embedded in the binary at build time) and a user's model file (read by the run).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct DatasetNote {
    /// The file: under `datasets/` for the Test Set data, repository-relative for a
    /// shipped robot (`datasets/robots/g1.urdf`), as the spec gives it for a user's model.
    pub file: String,
    /// SHA-256 of its text.
    pub sha256: String,
    /// The problems that use it.
    pub problems: Vec<String>,
    /// What reading it skipped or kept as published (a model file's vendor elements,
    /// unphysical inertias, dropped mimics: `driftlab_problems::provenance::input_notes`).
    pub notes: Vec<String>,
}

/// The datasets the problems `(id, params)` read, each once with the problems using it.
pub fn dataset_notes<'a>(
    problems: impl IntoIterator<Item = (&'a str, &'a toml::Table)>,
) -> Vec<DatasetNote> {
    let mut out: Vec<DatasetNote> = Vec::new();
    for (id, params) in problems {
        for (file, text) in driftlab_problems::provenance::datasets_read(id, params) {
            match out.iter_mut().find(|d| d.file == file) {
                Some(d) if !d.problems.iter().any(|p| p == id) => d.problems.push(id.into()),
                Some(_) => {}
                None => out.push(DatasetNote {
                    sha256: sha256_hex(&text),
                    notes: driftlab_problems::provenance::input_notes(id, params),
                    file,
                    problems: vec![id.into()],
                }),
            }
        }
    }
    out
}

/// Say once on the terminal what reading the data files skipped or kept as published
/// (every note stays in the manifest): per file, the count and the first three.
pub fn print_notes(datasets: &[DatasetNote], progress: bool) {
    if !progress {
        return;
    }
    for d in datasets.iter().filter(|d| !d.notes.is_empty()) {
        eprintln!(
            "note: {}: {} element(s) skipped or kept as published (all in manifest.json, `driftlab describe model --set file=…` lists them):",
            d.file,
            d.notes.len()
        );
        for n in d.notes.iter().take(3) {
            eprintln!("  {n}");
        }
        if d.notes.len() > 3 {
            eprintln!("  … and {} more", d.notes.len() - 3);
        }
    }
}

/// One shard of a merged run, as its own manifest recorded it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ShardNote {
    /// `I/N`.
    pub shard: String,
    /// The shard's folder.
    pub dir: String,
    /// The machine it ran on.
    pub host: String,
    /// Cells it ran.
    pub cells: usize,
    /// Of those, failed.
    pub failed_cells: usize,
    /// Start time (UTC).
    pub started: String,
    /// End time (UTC).
    pub finished: String,
    /// Source revision of its binary.
    pub git_revision: String,
}

/// What the catalog says of one problem or method of an experiment.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CatalogNote {
    /// `problem` or `method`.
    pub kind: String,
    /// Catalog id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Equations.
    pub equations: String,
    /// Citation.
    pub citation: String,
    /// Reference solution (problems) or declared orders (methods).
    pub note: String,
}

/// SHA-256 hex digest.
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Where two spec texts differ, as `key.path: recorded → now` (up to three places), or
/// `None` when their TOML values are equal (comments and layout aside).
pub fn spec_difference(recorded: &str, now: &str) -> Option<String> {
    let parse = |t: &str| t.parse::<toml::Table>().map(toml::Value::Table);
    let (Ok(a), Ok(b)) = (parse(recorded), parse(now)) else {
        return (recorded != now).then(|| "the spec text (one side is not valid TOML)".into());
    };
    let mut found = Vec::new();
    differences("", &a, &b, &mut found);
    (!found.is_empty()).then(|| found.join("; "))
}

/// Push into `out` (up to three) the paths below `path` where `a` and `b` differ.
fn differences(path: &str, a: &toml::Value, b: &toml::Value, out: &mut Vec<String>) {
    use toml::Value;
    if out.len() >= 3 || a == b {
        return;
    }
    let at = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match (a, b) {
        (Value::Table(x), Value::Table(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => differences(&at(k), u, v, out),
                    (Some(u), None) => out.push(format!("{}: {u} → (removed)", at(k))),
                    (None, Some(v)) => out.push(format!("{}: (absent) → {v}", at(k))),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                differences(&format!("{path}[{i}]"), u, v, out);
            }
        }
        _ => out.push(format!("{path}: {a} → {b}")),
    }
}

/// CPU model from `/proc/cpuinfo` (Linux), else `unknown`.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Current UTC time as RFC 3339 (civil-from-days, Howard Hinnant's algorithm).
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn spec_difference_names_the_key() {
        let a = "name = \"x\"\n[steps]\nh = [1e-3]\n[[methods]]\nid = \"taylor\"\n";
        let b = "name = \"x\"  # same\n[steps]\nh = [2e-3]\n[[methods]]\nid = \"rattle\"\n";
        assert_eq!(super::spec_difference(a, a), None);
        assert_eq!(
            super::spec_difference(a, b).as_deref(),
            Some("methods[0].id: \"taylor\" → \"rattle\"; steps.h[0]: 0.001 → 0.002")
        );
    }

    #[test]
    fn datasets_are_listed_once_with_their_problems() {
        let none = toml::Table::new();
        let g1: toml::Table = "robot = \"g1\"\nroot = \"floating\"".parse().unwrap();
        let d = super::dataset_notes(
            [
                "andrews",
                "pendulum",
                "andrews",
                "slider-crank",
                "model",
                "model",
            ]
            .into_iter()
            .zip([&none, &none, &none, &none, &g1, &g1]),
        );
        let files: Vec<&str> = d.iter().map(|x| x.file.as_str()).collect();
        assert_eq!(
            files,
            [
                "ivptestset_andrews.json",
                "ivptestset_crank.json",
                "ivptestset_crank_soln_fortran.json",
                "datasets/robots/g1.urdf"
            ]
        );
        assert_eq!(d[0].problems, ["andrews"]);
        assert_eq!(d[3].problems, ["model"]);
        assert_eq!(d[3].sha256.len(), 64);
        assert_eq!(d[0].sha256.len(), 64);
    }

    #[test]
    fn hash_is_sha256() {
        assert_eq!(
            super::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(super::now_rfc3339().len(), 20);
    }
}
