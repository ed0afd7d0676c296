//! Crash-safe sweeps (issue 13): a sweep killed with SIGKILL at 20 points spread over its
//! run and continued with `--resume` loses no recorded run, recomputes only the runs that
//! were in flight (at most one per worker), and ends with tables equal, every column but
//! the measured ones, to an uninterrupted run's.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_results::schema::runs;
use driftlab_runner::store::journal::Journal;
use polars::prelude::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// 24 cells of 2 runs each (48 work items) on chains large enough that one item takes
/// tens of milliseconds, traced, so that kills land inside items, between them and in
/// the final writes.
const SPEC: &str = r#"
schema_version = 1
name = "kill-test"
t_end = 1.0
trace_stride = 50
repeat = 2

[steps]
h = [2e-3, 1e-3, 5e-4]

[[problems]]
id = "planar-chain"
params = { links = [60, 120] }

[[methods]]
id = "taylor"
projection = { tol = 1e-10 }

[[methods]]
id = "rattle"

[[methods]]
id = "generalized-alpha"

[[methods]]
id = "baumgarte"
"#;

/// Workers running cells side by side.
const WORKERS: usize = 2;
/// Kills.
const KILLS: usize = 20;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("driftlab-resume-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `driftlab run SPEC --out DIR --threads 2 [--resume]`, logging journal events to
/// `log`.
fn sweep(spec: &Path, out: &Path, resume: bool, log: &Path) -> std::process::Child {
    let mut c = Command::new(env!("CARGO_BIN_EXE_driftlab"));
    c.args([
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .args(["--threads", &WORKERS.to_string()])
    .env("DRIFTLAB_JOURNAL_LOG", "1")
    .stdout(Stdio::null())
    .stderr(std::fs::File::create(log).unwrap());
    if resume {
        c.arg("--resume");
    }
    c.spawn().expect("binary starts")
}

/// The `(cell, run)` pairs a journal log says were `what` (`start` or `recorded`).
fn events(log: &Path, what: &str) -> BTreeSet<(usize, usize)> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.strip_prefix(&format!("journal: {what} cell ")))
        .filter_map(|rest| {
            let (c, k) = rest.split_once(" run ")?;
            Some((c.parse().ok()?, k.trim().parse().ok()?))
        })
        .collect()
}

/// The runs table without the measured columns (times, heap) and the whole traces.
fn tables(dir: &Path) -> (DataFrame, DataFrame) {
    let read = |f: &str| {
        let file = std::fs::File::open(dir.join(f)).expect(f);
        ParquetReader::new(file).finish().expect("parquet")
    };
    let measured: Vec<&str> = runs::MEASURED.iter().map(|c| c.name).collect();
    let runs = read("runs.parquet");
    let kept: Vec<&str> = runs
        .get_column_names()
        .into_iter()
        .map(|n| n.as_str())
        .filter(|n| !measured.contains(n))
        .collect();
    (runs.select(kept).expect("columns"), read("traces.parquet"))
}

#[test]
fn killed_sweeps_resume_to_the_uninterrupted_rows() {
    let root = tmp("kills");
    let spec = root.join("kill-test.toml");
    std::fs::write(&spec, SPEC).unwrap();
    let reference = root.join("reference");
    let clock = Instant::now();
    let status = sweep(&spec, &reference, false, &root.join("reference.log"))
        .wait()
        .unwrap();
    assert!(status.success());
    let full = clock.elapsed();
    let all = events(&root.join("reference.log"), "recorded");
    assert_eq!(all.len(), 48, "24 cells × 2 runs");
    let want = tables(&reference);
    let mut in_flight_max = 0;
    for i in 0..KILLS {
        let dir = root.join(format!("kill-{i}"));
        // Kill points spread over the whole run, with a pseudo-random offset in each
        // twentieth (a fixed LCG: the test is reproducible).
        let lcg = (i as u64)
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let jitter = (lcg >> 33) as f64 / (1u64 << 31) as f64;
        let at = full.mul_f64((i as f64 + jitter) / KILLS as f64);
        let log = root.join(format!("kill-{i}.log"));
        let mut child = sweep(&spec, &dir, false, &log);
        std::thread::sleep(at);
        let _ = child.kill(); // SIGKILL
        child.wait().unwrap();
        let (started, recorded) = (events(&log, "start"), events(&log, "recorded"));
        let kept: BTreeSet<(usize, usize)> = match Journal::read(&dir) {
            Ok((_, items)) => items.iter().map(|x| (x.cell, x.repeat)).collect(),
            Err(_) => BTreeSet::new(), // killed before the journal's header was written
        };
        assert!(
            recorded.is_subset(&kept),
            "kill {i} at {at:?}: a run reported durable is missing from the journal"
        );
        assert!(
            kept.is_subset(&started),
            "kill {i}: the journal holds a run never started"
        );
        let in_flight = started.difference(&kept).count();
        assert!(
            in_flight <= WORKERS,
            "kill {i} at {at:?}: {in_flight} runs lost, more than one per worker"
        );
        in_flight_max = in_flight_max.max(in_flight);
        // Continue: exactly the runs the journal lacks are computed.
        let log = root.join(format!("resume-{i}.log"));
        let status = sweep(&spec, &dir, true, &log).wait().unwrap();
        assert!(
            status.success(),
            "resume {i} failed: {}",
            std::fs::read_to_string(&log).unwrap()
        );
        let computed = events(&log, "start");
        let missing: BTreeSet<_> = all.difference(&kept).copied().collect();
        assert_eq!(
            computed, missing,
            "kill {i}: the resume computes exactly the missing runs"
        );
        assert_eq!(
            tables(&dir),
            want,
            "kill {i} at {at:?}: resumed tables differ"
        );
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap())
                .unwrap();
        assert_eq!(manifest["status"], "complete");
        assert_eq!(manifest["cells_done"], 24);
    }
    eprintln!("{KILLS} kills over {full:?}: at most {in_flight_max} runs in flight lost");
    assert!(clock.elapsed() < Duration::from_secs(600));
}

#[test]
fn a_resume_against_a_changed_spec_is_refused_with_the_difference() {
    let root = tmp("changed");
    let spec = root.join("s.toml");
    let small = SPEC
        .replace("links = [60, 120]", "links = [4]")
        .replace("repeat = 2", "repeat = 1");
    std::fs::write(&spec, &small).unwrap();
    let out = root.join("out");
    assert!(sweep(&spec, &out, false, &root.join("a.log"))
        .wait()
        .unwrap()
        .success());
    std::fs::write(
        &spec,
        small.replace("h = [2e-3, 1e-3, 5e-4]", "h = [2e-3, 1e-3]"),
    )
    .unwrap();
    let log = root.join("b.log");
    let status = sweep(&spec, &out, true, &log).wait().unwrap();
    assert_eq!(status.code(), Some(2));
    let msg = std::fs::read_to_string(&log).unwrap();
    assert!(
        msg.contains("the spec changed since the interrupted run (steps.h: [0.002, 0.001, 0.0005] → [0.002, 0.001])"),
        "{msg}"
    );
    // The finished tables are untouched.
    assert!(out.join("runs.parquet").exists());
}

/// `driftlab ARGS` in `dir`; the exit code and stderr.
fn cli(args: &[&str], dir: &Path) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_driftlab"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("binary runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Four shards run separately (one of them killed and resumed) and merged equal the
/// unsharded run; a merge with a shard missing or unfinished is refused, naming it.
#[test]
fn four_shards_merged_equal_the_unsharded_run() {
    let root = tmp("shards");
    std::fs::write(root.join("s.toml"), SPEC).unwrap();
    let run = |args: &[&str]| {
        let mut a = vec!["run", "s.toml", "--threads", "2"];
        a.extend_from_slice(args);
        let (code, err) = cli(&a, &root);
        assert_eq!(code, Some(0), "{err}");
    };
    run(&["--out", "whole"]);
    // Shard 2 is killed early and resumed, as a requeued array task would be.
    let mut child = Command::new(env!("CARGO_BIN_EXE_driftlab"))
        .args([
            "run",
            "s.toml",
            "--threads",
            "2",
            "--shard",
            "2/4",
            "--out",
            "shard-2",
        ])
        .current_dir(&root)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(150));
    let _ = child.kill();
    child.wait().unwrap();
    let d = |i: usize| format!("shard-{i}");
    for i in [0, 1, 3] {
        run(&["--shard", &format!("{i}/4"), "--out", &d(i)]);
    }
    let (code, err) = cli(&["merge", &d(0), &d(1), &d(3), "--out", "m"], &root);
    assert_eq!(code, Some(2));
    assert!(err.contains("shards 2/4 are missing"), "{err}");
    let (code, err) = cli(&["merge", &d(0), &d(1), &d(2), &d(3), "--out", "m"], &root);
    assert_eq!(code, Some(2), "{err}");
    // Killed after its manifest was written: "did not finish (k of n cells recorded)";
    // before: its manifest is missing. Either way the shard is named.
    assert!(err.contains("`shard-2"), "{err}");
    run(&["--shard", "2/4", "--out", &d(2), "--resume"]);
    let (code, err) = cli(
        &["merge", &d(0), &d(1), &d(2), &d(3), "--out", "merged"],
        &root,
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(tables(&root.join("merged")), tables(&root.join("whole")));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("merged/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(m["shards"].as_array().map(Vec::len), Some(4));
    assert_eq!(m["status"], "complete");
    // Every cell in exactly one shard, every shard with work (the balance itself is the
    // property test of `shard::assign` against Graham's bound).
    let cells: Vec<u64> = m["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["cells"].as_u64().unwrap())
        .collect();
    assert_eq!(cells.iter().sum::<u64>(), 24, "{cells:?}");
    assert!(cells.iter().all(|&c| c > 0), "{cells:?}");
}
