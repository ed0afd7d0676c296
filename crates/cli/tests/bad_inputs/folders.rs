//! The scripted cases of issue 27: result folders that one run owns, checks that can
//! fail, memory that does not grow with the run, and resumes that lose nothing. Each
//! function sets up its case in `dir`, runs the binary as a user would, asserts what the
//! case's outcome text says beyond the exit status and message, and returns the run the
//! catalogue checks.

use super::{base, driftlab, run_spec, strings, with, Ran};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A spec whose one cell runs for many seconds (10⁷ pendulum steps).
fn long_spec() -> String {
    with("t_end = 0.1", "t_end = 1000").replace("h = [1e-2]", "h = [1e-4]")
}

/// A `driftlab run` of [`long_spec`] into `dir/out`, started in the background and
/// waited for until it holds the folder's lock and has written its manifest (`running`).
struct LiveRun(Child);

impl LiveRun {
    fn start(dir: &Path, out: &str) -> Self {
        std::fs::write(dir.join("long.toml"), long_spec()).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_driftlab"))
            .args(["run", "long.toml", "--out", out, "--threads", "1"])
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("binary starts");
        let lock = dir.join(out).join(".driftlab.lock");
        let manifest = dir.join(out).join("manifest.json");
        let start = Instant::now();
        while !(std::fs::read_to_string(&lock).is_ok_and(|t| t.contains("pid="))
            && std::fs::read_to_string(&manifest).is_ok_and(|t| t.contains("running")))
        {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the live run never locked its folder"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Self(child)
    }
}

impl Drop for LiveRun {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A run of [`long_spec`] into `dir/out` killed (SIGKILL) once it has recorded nothing
/// yet: an interrupted run, with its journal and a `running` manifest.
fn interrupted(dir: &Path) {
    drop(LiveRun::start(dir, "out"));
}

pub fn second_writer(dir: &Path) -> Ran {
    let _live = LiveRun::start(dir, "out");
    run_spec(&base(), &[], dir)
}

pub fn second_writer_forced(dir: &Path) -> Ran {
    let _live = LiveRun::start(dir, "out");
    run_spec(&base(), &["--force"], dir)
}

pub fn second_writer_resuming(dir: &Path) -> Ran {
    let _live = LiveRun::start(dir, "out");
    driftlab(
        &strings(&["run", "long.toml", "--out", "out", "--resume"], dir),
        dir,
    )
}

/// A `--resume` under another time budget than the interrupted run's.
pub fn resume_other_budget(dir: &Path) -> Ran {
    interrupted(dir);
    let args = [
        "run",
        "long.toml",
        "--out",
        "out",
        "--resume",
        "--threads",
        "1",
        "--cell-seconds",
        "0.2",
    ];
    driftlab(&strings(&args, dir), dir)
}

pub fn report_while_writing(dir: &Path) -> Ran {
    let _live = LiveRun::start(dir, "root/x");
    driftlab(&strings(&["report", "--dir", "root"], dir), dir)
}

pub fn import_while_writing(dir: &Path) -> Ran {
    let _live = LiveRun::start(dir, "out");
    let row = r#"{"problem": "pendulum", "problem_params": {}, "variant": "sim", "params": {}, "h": 1e-4, "t_end": 1000, "steps": 10000000, "ok": true, "fail_time": null, "fail_reason": null, "max_pos_residual": 0.1, "max_energy_rel_error": 0.1, "wall_seconds": 1, "step_seconds": 1}"#;
    std::fs::write(dir.join("peer.jsonl"), row).unwrap();
    driftlab(
        &strings(&["import-peer", "peer.jsonl", "--into", "out"], dir),
        dir,
    )
}

pub fn after_a_kill(dir: &Path) -> Ran {
    interrupted(dir);
    let ran = run_spec(&long_spec(), &[], dir);
    assert!(
        dir.join("out/journal.bin").exists(),
        "the refused run kept the journal"
    );
    ran
}

/// A folder whose run was killed holding the lock: the next run takes it over, naming
/// the dead owner (here a `--force`d run, which discards the interrupted one).
pub fn taken_over(dir: &Path) -> Ran {
    interrupted(dir);
    let ran = run_spec(&base(), &["--force"], dir);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("ended without releasing it; taken over"),
        "{}",
        ran.stderr
    );
    ran
}

pub fn other_experiment(dir: &Path) -> Ran {
    let first = run_spec(&with("\"bad\"", "\"first\""), &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    run_spec(&base(), &[], dir)
}

/// `--force` over another experiment's results: none of its files survive.
pub fn other_experiment_forced(dir: &Path) -> Ran {
    let traced = with("\"bad\"", "\"first\"")
        .replace("h = [1e-2]", "h = [1e-2, 5e-3, 2.5e-3]")
        .replace("t_end = 0.1", "t_end = 0.1\ntrace_stride = 1");
    let first = run_spec(&traced, &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    assert!(dir.join("out/orders.csv").exists() && dir.join("out/traces.parquet").exists());
    let ran = run_spec(
        &with("t_end = 0.1", "t_end = 0.1\ntrace_stride = 0"),
        &["--force"],
        dir,
    );
    for stale in ["orders.csv", "traces.parquet"] {
        assert!(
            !dir.join("out").join(stale).exists(),
            "{stale} of the first run survived"
        );
    }
    ran
}

/// A rerun of the same experiment from an edited spec: the previous run's orders and
/// traces, which the new spec does not write, are gone.
pub fn rerun_replaces(dir: &Path) -> Ran {
    let traced = with("h = [1e-2]", "h = [1e-2, 5e-3, 2.5e-3]")
        .replace("t_end = 0.1", "t_end = 0.1\ntrace_stride = 1");
    let first = run_spec(&traced, &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let ran = run_spec(
        &with("t_end = 0.1", "t_end = 0.1\ntrace_stride = 0"),
        &[],
        dir,
    );
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    for stale in ["orders.csv", "traces.parquet"] {
        assert!(
            !dir.join("out").join(stale).exists(),
            "{stale} of the previous run survived"
        );
    }
    ran
}

pub fn foreign_files(dir: &Path) -> Ran {
    std::fs::create_dir_all(dir.join("out")).unwrap();
    std::fs::write(dir.join("out/notes.txt"), "mine").unwrap();
    run_spec(&base(), &[], dir)
}

pub fn same_name_twice(dir: &Path) -> Ran {
    std::fs::create_dir_all(dir.join("specs")).unwrap();
    std::fs::write(dir.join("specs/a.toml"), base()).unwrap();
    std::fs::write(dir.join("specs/b.toml"), with("h = [1e-2]", "h = [2e-2]")).unwrap();
    let args = ["run-experiments", "--dir", "specs", "--out", "out"];
    let ran = driftlab(&strings(&args, dir), dir);
    assert!(!dir.join("out/bad").exists(), "nothing ran");
    ran
}

/// `run-experiments` over an output root where one experiment's folder holds an
/// interrupted run: refused before any experiment runs.
pub fn experiments_over_an_interrupted_run(dir: &Path) -> Ran {
    std::fs::create_dir_all(dir.join("specs")).unwrap();
    std::fs::write(dir.join("specs/a.toml"), with("\"bad\"", "\"a\"")).unwrap();
    std::fs::write(dir.join("specs/b.toml"), long_spec()).unwrap();
    std::fs::create_dir_all(dir.join("root")).unwrap();
    drop(LiveRun::start(dir, "root/bad"));
    let args = ["run-experiments", "--dir", "specs", "--out", "root"];
    let ran = driftlab(&strings(&args, dir), dir);
    assert!(
        !dir.join("root/a").exists(),
        "experiment a ran before the refusal"
    );
    ran
}

/// A stale `orders.csv` copied into a finished run's folder is not drawn: the manifest
/// lists the tables its run wrote.
pub fn unlisted_table(dir: &Path) -> Ran {
    let first = run_spec(&with("\"bad\"", "\"x\""), &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    std::fs::create_dir_all(dir.join("root")).unwrap();
    std::fs::rename(dir.join("out"), dir.join("root/x")).unwrap();
    let stale = "problem,problem_params,method,variant,params,quantity,observed_order,expected_order,h_min,h_max,points,r2,note\npendulum,{},ghost,ghost,{},q,2.0,2,0.001,0.01,3,1.0,\n";
    std::fs::write(dir.join("root/x/orders.csv"), stale).unwrap();
    let ran = driftlab(&strings(&["report", "--dir", "root"], dir), dir);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let md = std::fs::read_to_string(dir.join("root/index.md")).unwrap();
    assert!(!md.contains("ghost"), "the unlisted orders.csv was drawn");
    ran
}

/// One complete and one interrupted experiment: the report draws the first and names
/// the second.
pub fn report_names_the_interrupted(dir: &Path) -> Ran {
    std::fs::create_dir_all(dir.join("root")).unwrap();
    let first = run_spec(&with("\"bad\"", "\"done\""), &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    std::fs::rename(dir.join("out"), dir.join("root/done")).unwrap();
    drop(LiveRun::start(dir, "root/cut"));
    let ran = driftlab(&strings(&["report", "--dir", "root"], dir), dir);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let md = std::fs::read_to_string(dir.join("root/index.md")).unwrap();
    assert!(
        md.contains("Not in this report") && md.contains("cut"),
        "the interrupted run is not named"
    );
    ran
}

pub fn report_only_interrupted(dir: &Path) -> Ran {
    std::fs::create_dir_all(dir.join("root")).unwrap();
    drop(LiveRun::start(dir, "root/cut"));
    driftlab(&strings(&["report", "--dir", "root"], dir), dir)
}

pub fn report_empty(dir: &Path) -> Ran {
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    driftlab(&strings(&["report", "--dir", "empty"], dir), dir)
}

/// `report --dir` at an experiment's folder instead of the folder holding experiments.
pub fn report_one_level_too_deep(dir: &Path) -> Ran {
    let first = run_spec(&base(), &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    driftlab(&strings(&["report", "--dir", "out"], dir), dir)
}

pub fn compare_a_file(dir: &Path) -> Ran {
    let first = run_spec(&base(), &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    driftlab(&strings(&["compare", "out", "s.toml"], dir), dir)
}

pub fn compare_empty(dir: &Path) -> Ran {
    let first = run_spec(&base(), &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    driftlab(&strings(&["compare", "out", "empty"], dir), dir)
}

pub fn compare_interrupted(dir: &Path) -> Ran {
    std::fs::create_dir_all(dir.join("whole")).unwrap();
    let first = run_spec(&base(), &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    std::fs::rename(dir.join("out"), dir.join("whole/x")).unwrap();
    interrupted(dir);
    driftlab(&strings(&["compare", "whole/x", "out"], dir), dir)
}

pub fn compare_differs(dir: &Path) -> Ran {
    let first = run_spec(&base(), &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    std::fs::rename(dir.join("out"), dir.join("a")).unwrap();
    let second = run_spec(&with("t_end = 0.1", "t_end = 0.2"), &[], dir);
    assert_eq!(second.code, Some(0), "{}", second.stderr);
    driftlab(&strings(&["compare", "a", "out"], dir), dir)
}

/// `--resume` of a folder that lost only its manifest: the journal's header is enough;
/// the recorded cells are taken, not recomputed.
pub fn resume_without_manifest(dir: &Path) -> Ran {
    let text = with("h = [1e-2]", "h = [1e-2, 5e-3, 2.5e-3]");
    let first = run_spec(&text, &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    std::fs::remove_file(dir.join("out/manifest.json")).unwrap();
    let std_log = |d: &Path| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_driftlab"));
        cmd.args(["run", "s.toml", "--out", "out", "--resume"])
            .env("DRIFTLAB_JOURNAL_LOG", "1")
            .current_dir(d);
        cmd.output().expect("binary runs")
    };
    let out = std_log(dir);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stderr.contains("journal: start"),
        "a recorded cell was recomputed:\n{stderr}"
    );
    assert!(
        dir.join("out/manifest.json").exists(),
        "the manifest is written again"
    );
    Ran {
        code: out.status.code(),
        stderr,
        out: dir.join("out"),
    }
}

/// `simulate` of 4·10⁶ steps without `--trace`: its resident memory stays flat (it held
/// ≈ 300 B per step, 1.2 GB here, before the summary was accumulated as the run goes).
pub fn simulate_memory(dir: &Path) -> Ran {
    let mut child = Command::new(env!("CARGO_BIN_EXE_driftlab"))
        .args([
            "simulate",
            "--problem",
            "pendulum",
            "--method",
            "rattle",
            "--h",
            "1e-3",
            "--t-end",
            "4000",
        ])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("binary starts");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            let rss = text
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok());
            peak_kib = peak_kib.max(rss.unwrap_or(0));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(peak_kib > 0, "resident memory was never read");
    assert!(
        peak_kib < 200 * 1024,
        "simulate held {peak_kib} KiB for 4·10⁶ steps"
    );
    Ran {
        code: status.code(),
        stderr: String::new(),
        out: dir.join("out"),
    }
}
