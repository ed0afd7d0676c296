//! The runner end to end: spec → cells → rows → files, failed rows kept, bad specs
//! rejected with the field named, and the seed-003 table read back from `runs.parquet`.

use driftlab_runner::{run_spec, RunOptions, Spec};
use polars::prelude::*;

fn run(text: &str, dir: &std::path::Path) -> driftlab_runner::RunSummary {
    let spec = Spec::parse(text, "test.toml").expect("valid spec");
    run_spec(
        &spec,
        text,
        "test.toml",
        &RunOptions {
            out_dir: Some(dir.to_path_buf()),
            threads: Some(2),
            size: None,
            progress: false,
            ..RunOptions::default()
        },
    )
    .expect("run")
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("driftlab-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn seed003_spec_writes_every_file_and_the_seed_table() {
    let dir = tmp("seed003");
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../experiments/seed003-index1.toml"
    ))
    .unwrap();
    let sum = run(&text, &dir);
    assert_eq!(sum.failed, 0);
    for f in [
        "runs.parquet",
        "runs.csv",
        "traces.parquet",
        "orders.csv",
        "manifest.json",
    ] {
        assert!(dir.join(f).exists(), "{f} missing");
    }
    let df = ParquetReader::new(std::fs::File::open(dir.join("runs.parquet")).unwrap())
        .finish()
        .unwrap();
    for name in driftlab_results::schema::runs::ALL.iter().map(|c| c.name) {
        assert!(df.column(name).is_ok(), "column {name} missing");
    }
    // The other two tables follow the schema too: orders.csv's header in order, and
    // every fixed column of the traces.
    let orders = std::fs::read_to_string(dir.join("orders.csv")).unwrap();
    let want: Vec<&str> = driftlab_results::schema::orders::ALL
        .iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(orders.lines().next().unwrap(), want.join(","));
    let traces = ParquetReader::new(std::fs::File::open(dir.join("traces.parquet")).unwrap())
        .finish()
        .unwrap();
    for c in driftlab_results::schema::traces::ALL {
        assert!(
            traces.column(c.name).is_ok(),
            "trace column {} missing",
            c.name
        );
    }
    // The h = 1/4, c = 1 cell: final error is exactly (1 − e^{−1})/2 − 5/18 (seed 003).
    let row = sum
        .rows
        .iter()
        .find(|r| (r.h - 0.25).abs() < 1e-15 && r.problem_params.contains("1.0"))
        .unwrap();
    let want = (1.0 - (-1.0f64).exp()) / 2.0 - 5.0 / 18.0;
    assert!(
        (row.final_err_q.unwrap_or(f64::NAN) - want).abs() < 1e-15,
        "{} vs {want}",
        row.final_err_q.unwrap_or(f64::NAN)
    );
    assert!(row.max_pos_residual.unwrap_or(f64::NAN) < 1e-15);
    // The h sweep: order 1 in x and z for both c.
    for o in &sum.orders {
        let p = o.observed_order.unwrap();
        assert!(
            (p - 1.0).abs() <= 0.15,
            "{} {}: {p}",
            o.problem_params,
            o.quantity
        );
    }
    assert_eq!(sum.orders.len(), 4);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["spec_hash"].as_str().unwrap().len(), 64);
    assert!(manifest["rustc"].as_str().unwrap().starts_with("rustc"));
}

#[test]
fn unsupported_pairs_and_failures_are_rows_not_gaps() {
    let dir = tmp("failed");
    let text = r#"
schema_version = 1
name = "failures"
t_end = 1.0
[steps]
h = [0.1]
[[problems]]
id = "seed003-dae"
[[problems]]
id = "planar-chain"
[[methods]]
id = "implicit-euler"
[[methods]]
id = "taylor"
[[methods]]
id = "implicit-euler-pendulum"
"#;
    let sum = run(text, &dir);
    assert_eq!(sum.cells, 6);
    let reason = |m: &str, p: &str| {
        let r = sum
            .rows
            .iter()
            .find(|r| r.method == m && r.problem == p)
            .unwrap();
        (
            r.ok(),
            r.fail_kind.as_deref().unwrap_or_default(),
            r.fail_reason.clone().unwrap_or_default(),
        )
    };
    let (ok, kind, why) = reason("taylor", "seed003-dae");
    assert!(!ok && kind == "unsupported-form", "{kind}: {why}");
    let (ok, kind, why) = reason("implicit-euler-pendulum", "planar-chain");
    assert!(
        !ok && kind == "incompatible" && why.contains("cannot run"),
        "{kind}: {why}"
    );
    assert!(sum.rows.iter().filter(|r| r.ok()).count() >= 3);
    let csv = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    assert_eq!(csv.lines().count(), 7, "header + 6 rows");
    assert!(csv.contains(",failed,") && csv.contains(",unsupported-form,"));
}

/// Issue 11: what a method counts reaches its row — hybrid's regime counts in `counters`,
/// the largest Newton count of a step and the largest local error estimate.
#[test]
fn method_counters_and_step_reports_reach_the_row() {
    let dir = tmp("counters");
    let text = r#"
schema_version = 1
name = "counters"
t_end = 5.0
[steps]
h = [1e-3]
[[problems]]
id = "bertolazzi-pendulum"
[[methods]]
id = "hybrid"
params = { soft_below = 1e-5, project_above = 1e-3 }
[[methods]]
id = "radau"
"#;
    let sum = run(text, &dir);
    let hybrid = sum.rows.iter().find(|r| r.method == "hybrid").unwrap();
    let count = |name: &str| {
        serde_json::from_str::<serde_json::Value>(&hybrid.counters).expect("counters JSON")[name]
            .as_u64()
            .unwrap_or(0)
    };
    let total = count("soft_steps") + count("baumgarte_steps") + count("projected_steps");
    assert_eq!(
        total,
        hybrid.steps + 1,
        "one regime choice per step and the first"
    );
    let radau = sum.rows.iter().find(|r| r.method == "radau").unwrap();
    assert!(radau.newton_max_per_step >= 1);
    assert!(radau.error_estimate_max.is_some_and(|e| e > 0.0));
    let df = CsvReadOptions::default()
        .try_into_reader_with_file_path(Some(dir.join("runs.csv")))
        .unwrap()
        .finish()
        .unwrap();
    let counters = df
        .column("counters")
        .unwrap()
        .str()
        .unwrap()
        .get(0)
        .unwrap()
        .to_string();
    let parsed: serde_json::Value = serde_json::from_str(&counters).unwrap();
    assert_eq!(parsed["soft_steps"].as_u64(), Some(count("soft_steps")));
}

#[test]
fn bad_parameters_fail_before_running_and_name_the_field() {
    let text = r#"
schema_version = 1
name = "bad"
[steps]
h = [0.1]
[[problems]]
id = "pendulum"
params = { lenght = 2.0 }
[[methods]]
id = "taylor"
"#;
    let spec = Spec::parse(text, "bad.toml").unwrap();
    let e = run_spec(
        &spec,
        text,
        "bad.toml",
        &RunOptions {
            out_dir: Some(tmp("bad")),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("lenght") && e.contains("pendulum"), "{e}");
    let text2 = text.replace("lenght = 2.0", "length = -1.0");
    let spec = Spec::parse(&text2, "bad.toml").unwrap();
    let e = run_spec(
        &spec,
        &text2,
        "bad.toml",
        &RunOptions {
            out_dir: Some(tmp("bad2")),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("length") && e.contains("> 0"), "{e}");
    let text3 = text
        .replace("params = { lenght = 2.0 }", "")
        .replace("\"taylor\"", "\"tailor\"");
    let spec = Spec::parse(&text3, "bad.toml").unwrap();
    let e = run_spec(
        &spec,
        &text3,
        "bad.toml",
        &RunOptions {
            out_dir: Some(tmp("bad3")),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("tailor") && e.contains("known: taylor, semi-implicit-euler, baumgarte"),
        "{e}"
    );
}

/// The runs table of docs/output-files.md is the schema, row for row (the table there is
/// the user's reference; the failure message gives the expected rows).
#[test]
fn docs_document_every_run_column() {
    use driftlab_results::schema::{readme_table_differs, runs};
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/output-files.md"
    ))
    .unwrap();
    let rows: Vec<String> = runs::ALL.iter().map(|c| c.readme_row()).collect();
    let header = "| column | type | unit | meaning |";
    if let Some(d) = readme_table_differs(&readme, header, &rows) {
        panic!("{d}");
    }
}

/// Thread sweeps (issue 12): `"all"` is 1 … logical cores, `sweep_threads` runs the cell
/// set once per count with the count and the batch time on every row and later batches'
/// cells numbered after the earlier ones; bad counts and strides are refused, naming the
/// key and the fix.
#[test]
fn thread_sweeps_repeat_the_cells_per_count_and_bad_counts_are_refused() {
    let text = r#"
schema_version = 1
name = "sweep"
t_end = 0.05
trace_stride = 0
threads = "all"
sweep_threads = [1, 2]
[steps]
h = [0.01]
[[problems]]
id = "pendulum"
[[methods]]
id = "baumgarte"
"#;
    let spec = Spec::parse(text, "sweep.toml").expect("valid");
    let cores = driftlab_runner::spec::logical_cores();
    assert_eq!(spec.threads, (1..=cores).collect::<Vec<_>>());
    let sum = run(text, &tmp("sweep"));
    assert_eq!(
        sum.rows.len(),
        2 * cores,
        "one row per thread count and batch"
    );
    for (i, r) in sum.rows.iter().enumerate() {
        assert_eq!(r.cell as usize, i);
        assert_eq!(r.sweep_threads as usize, if i < cores { 1 } else { 2 });
        assert!(r.batch_seconds > 0.0 && r.batch_seconds.is_finite());
    }
    for (bad, key) in [
        ("threads = \"all\"", "threads = [0]"),
        ("threads = \"all\"", "threads = [1000]"),
        ("sweep_threads = [1, 2]", "sweep_threads = []"),
        ("trace_stride = 0", "metrics_stride = 0"),
    ] {
        let e = Spec::parse(&text.replace(bad, key), "sweep.toml")
            .expect_err(key)
            .to_string();
        let name = key.split(' ').next().unwrap_or_default();
        let names_the_fix = e.contains("e.g.") || e.contains("≥ 1");
        assert!(
            e.contains(&format!("`{name}`")) && names_the_fix,
            "{key}: {e}"
        );
    }
    let e = Spec::parse(&text.replace("\"all\"", "\"most\""), "sweep.toml")
        .expect_err("a word other than all")
        .to_string();
    assert!(e.contains("most") && e.contains("\"all\""), "{e}");
}

/// The table of failure kinds in docs/bad-inputs.md is `FailKind::ALL`, row for row.
#[test]
fn docs_document_every_fail_kind() {
    use driftlab_results::{schema::readme_table_differs, FailKind};
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/bad-inputs.md"
    ))
    .unwrap();
    let rows: Vec<String> = FailKind::ALL.iter().map(|k| k.readme_row()).collect();
    if let Some(d) = readme_table_differs(&readme, "| `fail_kind` | meaning |", &rows) {
        panic!("{d}");
    }
}

/// `trace_states = true` stores q, v and λ at every sample (issue 14 item 9): the traced λ
/// of RATTLE on the pendulum agrees with the exact multiplier of the elliptic solution to
/// within the run's own `err_lambda` (the max over all steps), and at sample times.
#[test]
fn traces_store_the_multiplier_from_a_spec() {
    let dir = tmp("trace-lambda");
    let sum = run(
        r#"
schema_version = 1
name = "trace-lambda"
description = "λ(t) in the traces"
t_end = 1.0
trace_dt = 0.1
trace_states = true
[steps]
h = [1e-3]
[[problems]]
id = "pendulum"
params = { theta0_deg = 60.0 }
[[methods]]
id = "rattle"
"#,
        &dir,
    );
    assert_eq!(sum.failed, 0);
    let err_lambda = sum.rows[0].err_lambda.unwrap_or(f64::NAN);
    assert!(err_lambda < 1e-4, "RATTLE λ error {err_lambda:e}");
    let traces = ParquetReader::new(std::fs::File::open(dir.join("traces.parquet")).unwrap())
        .finish()
        .unwrap();
    let t = traces.column("t").unwrap().f64().unwrap().clone();
    let lambda = traces.column("lambda").unwrap().list().unwrap().clone();
    let p = driftlab_problems::build("pendulum", &"theta0_deg = 60.0".parse().unwrap()).unwrap();
    let driftlab_core::SystemRef::Mechanical(sys) = p.as_system() else {
        panic!("pendulum is mechanical");
    };
    assert_eq!(t.len(), 11);
    for k in 0..t.len() {
        let tk = t.get(k).unwrap();
        let series = lambda.get_as_series(k).unwrap();
        let got = series.f64().unwrap().get(0).unwrap();
        let exact = sys.exact(tk).unwrap().lambda[0];
        assert!(
            (got - exact).abs() <= err_lambda * (1.0 + 1e-12),
            "t = {tk}: λ {got} vs exact {exact} (err_lambda {err_lambda:e})"
        );
    }
    // The per-row violation (`phi`, seed 001 §3.12's debug view) is Φ at the stored q,
    // signed, and its largest |Φ_i| is the sample's position residual.
    let (q, phi) = (
        traces.column("q").unwrap().list().unwrap().clone(),
        traces.column("phi").unwrap().list().unwrap().clone(),
    );
    let pos = traces
        .column("pos_residual")
        .unwrap()
        .f64()
        .unwrap()
        .clone();
    let mut out = [0.0];
    for k in 0..t.len() {
        let qk: Vec<f64> = q
            .get_as_series(k)
            .unwrap()
            .f64()
            .unwrap()
            .into_no_null_iter()
            .collect();
        let row = phi.get_as_series(k).unwrap().f64().unwrap().get(0).unwrap();
        sys.constraints(t.get(k).unwrap(), &qk, &mut out);
        assert_eq!(
            row.to_bits(),
            out[0].to_bits(),
            "sample {k}: Φ {row:e} vs {:e}",
            out[0]
        );
        assert_eq!(
            row.abs().to_bits(),
            pos.get(k).unwrap().to_bits(),
            "sample {k}"
        );
    }
}

/// `[monitor]` (issue 14 item 8; seed 001 §3.12): the warn columns equal what the trace of
/// every step shows — the first time, the number of states and the largest ratio of the
/// residual beyond the allowed violation — for the drifting Taylor step, and stay empty
/// for the projected one.
#[test]
fn the_violation_monitor_records_what_the_trace_shows() {
    let dir = tmp("monitor");
    let sum = run(
        r#"
schema_version = 1
name = "monitor"
t_end = 10.0
trace_stride = 1
[steps]
h = [1e-2]
[[problems]]
id = "bertolazzi-pendulum"
[[methods]]
id = "taylor"
[[methods]]
id = "taylor"
projection = { tol = 1e-12 }
[monitor]
allowed = 1e-3
"#,
        &dir,
    );
    assert_eq!(sum.failed, 0);
    let traces = ParquetReader::new(std::fs::File::open(dir.join("traces.parquet")).unwrap())
        .finish()
        .unwrap();
    let cells = traces.column("cell").unwrap().u64().unwrap().clone();
    let t = traces.column("t").unwrap().f64().unwrap().clone();
    let pos = traces
        .column("pos_residual")
        .unwrap()
        .f64()
        .unwrap()
        .clone();
    for row in &sum.rows {
        let samples: Vec<(f64, f64)> = (0..t.len())
            .filter(|&k| cells.get(k) == Some(row.cell))
            .map(|k| (t.get(k).unwrap(), pos.get(k).unwrap()))
            .collect();
        let beyond: Vec<&(f64, f64)> = samples.iter().filter(|(_, r)| *r > 1e-3).collect();
        assert_eq!(row.warn_states as usize, beyond.len(), "{}", row.variant);
        assert_eq!(
            row.warn_time,
            beyond.first().map(|(t, _)| *t),
            "{}",
            row.variant
        );
        let worst = samples.iter().fold(0.0_f64, |m, (_, r)| m.max(*r)) / 1e-3;
        let ratio = row.warn_ratio.unwrap();
        assert!(
            (ratio - worst).abs() <= 1e-12 * worst,
            "{}: {ratio} vs {worst}",
            row.variant
        );
        assert_eq!(row.warn_row, Some(0.0));
        if row.method.contains("projection") {
            assert_eq!(row.warn_states, 0);
            assert!(ratio <= 1e-8, "projected: {ratio:e}");
        } else {
            assert!(
                row.warn_states > 100,
                "Taylor drifts beyond 1e-3: {} states",
                row.warn_states
            );
        }
    }
}

/// A stop flag set before the sweep starts (a Ctrl-C in the Python package): no run
/// starts, the error says how to continue, and `resume` then completes the sweep with the
/// rows of an uninterrupted one.
#[test]
fn a_stopped_sweep_is_resumable() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let text = r#"
schema_version = 1
name = "stop"
t_end = 0.05
[steps]
h = [1e-2, 5e-3]
[[problems]]
id = "pendulum"
[[methods]]
id = "rattle"
[[methods]]
id = "baumgarte"
"#;
    let spec = Spec::parse(text, "stop.toml").expect("spec");
    let (stopped, whole) = (tmp("stop-stopped"), tmp("stop-whole"));
    let opts = |dir: &std::path::Path, stop: bool, resume: bool| RunOptions {
        out_dir: Some(dir.to_path_buf()),
        threads: Some(2),
        resume,
        stop: Some(Arc::new(AtomicBool::new(stop))),
        ..RunOptions::default()
    };
    let err =
        run_spec(&spec, text, "stop.toml", &opts(&stopped, true, false)).expect_err("stopped");
    let msg = err.to_string();
    assert!(
        matches!(err, driftlab_runner::RunnerError::Interrupted { .. }),
        "{msg}"
    );
    assert!(
        msg.contains("0 of 4 cells") && msg.contains("--resume"),
        "{msg}"
    );
    let resumed = run_spec(&spec, text, "stop.toml", &opts(&stopped, false, true)).expect("resume");
    let reference = run(text, &whole);
    assert_eq!(resumed.rows.len(), reference.rows.len());
    for (a, b) in resumed.rows.iter().zip(&reference.rows) {
        assert_eq!(
            a.max_pos_residual.unwrap_or(f64::NAN).to_bits(),
            b.max_pos_residual.unwrap_or(f64::NAN).to_bits()
        );
        assert_eq!(a.steps, b.steps);
    }
}
