//! `driftlab import-peer` end to end: a peer's rows join a finished experiment's runs table
//! through the one schema, after its own rows and numbered after its last cell; a second
//! import adds to the first, the same run twice is refused and `--replace` replaces; a
//! run that is not a cell, or a peer named like one of the experiment's methods, is
//! refused with the file unchanged.

use driftlab_runner::{peer, run_spec, RunOptions, Spec};
use polars::prelude::*;

const SPEC: &str = r#"
schema_version = 1
name = "peer-import"
t_end = 0.05
trace_stride = 0

[steps]
h = [1e-2, 5e-3]

[[problems]]
id = "pendulum"

[[methods]]
id = "rattle"
"#;

/// A peer run of the pendulum at `h` under the label `variant`.
fn peer_row(variant: &str, h: f64, residual: f64) -> String {
    let steps = (0.05 / h).round();
    format!(
        r#"{{"problem": "pendulum", "problem_params": {{}}, "variant": "{variant}", "params": {{}}, "h": {h}, "t_end": 0.05, "steps": {steps}, "ok": true, "fail_time": null, "fail_reason": null, "max_pos_residual": {residual}, "max_energy_rel_error": 0.01, "wall_seconds": 0.002, "step_seconds": 0.001}}"#
    )
}

fn runs(dir: &std::path::Path) -> DataFrame {
    let file = std::fs::File::open(dir.join("runs.parquet")).expect("runs.parquet");
    ParquetReader::new(file).finish().expect("parquet")
}

fn strings(df: &DataFrame, name: &str) -> Vec<String> {
    let c = df.column(name).expect("column");
    c.str()
        .expect("strings")
        .iter()
        .map(|s| s.unwrap_or("").to_string())
        .collect()
}

#[test]
fn peer_rows_join_the_runs_table_and_bad_peers_are_refused() {
    let dir = std::env::temp_dir().join(format!("driftlab-peer-import-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let spec = Spec::parse(SPEC, "peer.toml").expect("spec");
    let options = RunOptions {
        out_dir: Some(dir.clone()),
        threads: Some(1),
        progress: false,
        ..RunOptions::default()
    };
    run_spec(&spec, SPEC, "peer.toml", &options).expect("run");
    let file = dir.join("peer.jsonl");
    std::fs::write(
        &file,
        format!(
            "{}\n{}\n",
            peer_row("sim a", 1e-2, 0.25),
            peer_row("sim b", 5e-3, 0.5)
        ),
    )
    .expect("write");

    let cells_of = |df: &DataFrame| -> Vec<i64> {
        let c = df
            .column("cell")
            .expect("cell")
            .cast(&DataType::Int64)
            .expect("int");
        c.i64().expect("i64").iter().flatten().collect()
    };
    let imported = peer::import(&file, &dir, false).expect("import");
    assert_eq!((imported.added, imported.total), (2, 2));
    let df = runs(&dir);
    assert_eq!(df.height(), 4, "2 own rows and 2 peer rows");
    assert_eq!(strings(&df, "method"), ["rattle", "rattle", "sim", "sim"]);
    assert_eq!(cells_of(&df), [0, 1, 2, 3]);
    let res = df.column("max_pos_residual").expect("residual");
    let res: Vec<f64> = res.f64().expect("f64").iter().flatten().collect();
    assert_eq!(&res[2..], [0.25, 0.5]);

    // The same rows again: refused, nothing changes.
    let e = peer::import(&file, &dir, false).unwrap_err().to_string();
    assert!(e.contains("was imported already; give --replace"), "{e}");
    assert_eq!(runs(&dir).height(), 4);

    // Another peer's row is added beside the first one's.
    let other = dir.join("other.jsonl");
    std::fs::write(&other, peer_row("sim c", 1e-2, 0.75)).expect("write");
    let imported = peer::import(&other, &dir, false).expect("import");
    assert_eq!((imported.added, imported.total), (1, 3));
    let df = runs(&dir);
    assert_eq!(strings(&df, "variant")[2..], ["sim a", "sim b", "sim c"]);
    assert_eq!(cells_of(&df), [0, 1, 2, 3, 4]);

    // --replace: the earlier rows of simulator `sim` give way to this file's one; a
    // row of another simulator stays.
    let third = dir.join("third.jsonl");
    std::fs::write(&third, peer_row("other b", 5e-3, 0.125)).expect("write");
    assert_eq!(peer::import(&third, &dir, false).expect("import").total, 4);
    let imported = peer::import(&other, &dir, true).expect("replace");
    assert_eq!(
        (imported.added, imported.total, imported.replaced),
        (1, 2, 3)
    );
    assert_eq!(strings(&runs(&dir), "variant")[2..], ["other b", "sim c"]);

    // An empty file replaces nothing.
    std::fs::write(&other, "\n").expect("write");
    let e = peer::import(&other, &dir, true).unwrap_err().to_string();
    assert!(e.contains("no peer rows"), "{e}");
    assert_eq!(runs(&dir).height(), 4);

    // A step the experiment did not run, and a peer labelled like its method: refused,
    // each with the fix, and the table keeps the previous import.
    std::fs::write(&file, peer_row("sim a", 2e-2, 1.0)).expect("write");
    let e = peer::import(&file, &dir, false).unwrap_err().to_string();
    assert!(e.contains("is not a cell"), "{e}");
    std::fs::write(&file, peer_row("rattle twin", 1e-2, 1.0)).expect("write");
    let e = peer::import(&file, &dir, false).unwrap_err().to_string();
    assert!(e.contains("a method id of experiment"), "{e}");
    assert_eq!(runs(&dir).height(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The times of a row a claim uses are measured alone after the sweep (`driftlab_runner::exec::timing`) and are
/// not in the journal: an import writes the table again and keeps them, with their range
/// and count, for the experiment's own rows.
#[test]
fn an_import_keeps_the_times_measured_alone() {
    let text = SPEC.replace(
        "trace_stride = 0\n",
        "trace_stride = 0\ntiming_repeats = 3\n",
    ) + r#"
[[claims]]
claim = "RATTLE at 1e-2 takes less step time than at 5e-3"
source = "test"
measure = "step_seconds"
select = ["rattle", "h=1e-2"]
against = ["rattle", "h=5e-3"]
at_most = 1.0
instead = "it does not"
"#;
    let dir = std::env::temp_dir().join(format!("driftlab-peer-alone-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let spec = Spec::parse(&text, "peer.toml").expect("spec");
    let options = RunOptions {
        out_dir: Some(dir.clone()),
        threads: Some(1),
        progress: false,
        ..RunOptions::default()
    };
    run_spec(&spec, &text, "peer.toml", &options).expect("run");
    let times = |df: &DataFrame| -> Vec<Vec<f64>> {
        [
            "timed_alone",
            "step_seconds",
            "step_seconds_min",
            "step_seconds_max",
        ]
        .iter()
        .map(|c| {
            let c = df
                .column(c)
                .expect(c)
                .cast(&DataType::Float64)
                .expect("f64");
            c.f64().expect("f64").iter().take(2).flatten().collect()
        })
        .collect()
    };
    let before = times(&runs(&dir));
    assert_eq!(
        before[0],
        [3.0, 3.0],
        "both rows the claim uses timed alone"
    );
    let file = dir.join("peer.jsonl");
    std::fs::write(&file, peer_row("sim a", 1e-2, 0.25)).expect("write");
    peer::import(&file, &dir, false).expect("import");
    assert_eq!(
        times(&runs(&dir)),
        before,
        "the times alone survive the import"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
