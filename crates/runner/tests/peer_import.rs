//! `driftlab import-peer` end to end: a peer's rows join a finished experiment's runs table
//! through the one schema, after its own rows and numbered after its last cell; a second
//! import replaces the first; a run that is not a cell, or a peer named like one of the
//! experiment's methods, is refused with the file unchanged.

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
    format!(
        r#"{{"problem": "pendulum", "problem_params": {{}}, "variant": "{variant}", "params": {{}}, "h": {h}, "t_end": 0.05, "steps": 5, "ok": true, "fail_time": null, "fail_reason": null, "max_pos_residual": {residual}, "max_energy_rel_error": 0.01, "wall_seconds": 0.002, "step_seconds": 0.001}}"#
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

    // Twice: the second import replaces the first instead of adding to it.
    for _ in 0..2 {
        assert_eq!(peer::import(&file, &dir).expect("import"), 2);
        let df = runs(&dir);
        assert_eq!(df.height(), 4, "2 own rows and 2 peer rows");
        assert_eq!(strings(&df, "method"), ["rattle", "rattle", "sim", "sim"]);
        let cells = df
            .column("cell")
            .expect("cell")
            .cast(&DataType::Int64)
            .expect("int");
        let cells: Vec<i64> = cells.i64().expect("i64").iter().flatten().collect();
        assert_eq!(cells, [0, 1, 2, 3]);
        let res = df.column("max_pos_residual").expect("residual");
        let res: Vec<f64> = res.f64().expect("f64").iter().flatten().collect();
        assert_eq!(&res[2..], [0.25, 0.5]);
    }

    // A step the experiment did not run, and a peer labelled like its method: refused,
    // each with the fix, and the table keeps the previous import.
    std::fs::write(&file, peer_row("sim a", 2e-2, 1.0)).expect("write");
    let e = peer::import(&file, &dir).unwrap_err().to_string();
    assert!(e.contains("is not a cell"), "{e}");
    std::fs::write(&file, peer_row("rattle twin", 1e-2, 1.0)).expect("write");
    let e = peer::import(&file, &dir).unwrap_err().to_string();
    assert!(e.contains("a method id of experiment"), "{e}");
    assert_eq!(runs(&dir).height(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}
