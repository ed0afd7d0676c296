//! Determinism (issue 12): every column of `runs` except the measured ones
//! (`schema::runs::MEASURED`: times and heap use) and every trace value is bitwise
//! identical across repeated runs, across the number of cells run side by side, and
//! across the number of faer threads inside a cell.

use driftlab_results::schema::runs;
use driftlab_runner::{run_spec, RunOptions, Spec};
use polars::prelude::*;

/// Chains large enough for the sparse LDLᵀ path, with every KKT-based method of the
/// chain-scaling experiment, at two step sizes, each cell with 1 and 2 faer threads.
const SPEC: &str = r#"
schema_version = 1
name = "determinism"
t_end = 0.02
trace_stride = 5
threads = [1, 2]
repeat = 2

[steps]
h = [1e-3, 5e-4]

[[problems]]
id = "planar-chain"
params = { links = [300] }

[[problems]]
id = "spatial-chain"
params = { links = [100], spin = 0.0 }

[[methods]]
id = "taylor"
projection = { tol = 1e-10 }

[[methods]]
id = "baumgarte"
params = { xi = 1.0, omega_n = 20.0 }

[[methods]]
id = "generalized-alpha"

[[methods]]
id = "rattle"
"#;

fn run(dir: &std::path::Path, sweep_threads: usize) -> (DataFrame, DataFrame) {
    let spec = Spec::parse(SPEC, "determinism.toml").expect("valid spec");
    let opts = RunOptions {
        out_dir: Some(dir.to_path_buf()),
        threads: Some(sweep_threads),
        ..RunOptions::default()
    };
    let sum = run_spec(&spec, SPEC, "determinism.toml", &opts).expect("run");
    assert_eq!(
        sum.failed,
        0,
        "every cell runs: {:?}",
        sum.rows.iter().map(|r| &r.fail_reason).collect::<Vec<_>>()
    );
    // Every cell ran twice (side by side its repeats are separate work items): the row
    // carries the count and the median step time lies within the runs' range.
    for r in &sum.rows {
        assert_eq!(r.repeat, 2, "cell {}", r.cell);
        assert!(
            r.step_seconds_min.unwrap_or(f64::NAN) <= r.step_seconds
                && r.step_seconds <= r.step_seconds_max.unwrap_or(f64::NAN),
            "cell {}: {} ≤ {} ≤ {}",
            r.cell,
            r.step_seconds_min.unwrap_or(f64::NAN),
            r.step_seconds,
            r.step_seconds_max.unwrap_or(f64::NAN)
        );
    }
    let read = |f: &str| {
        let file = std::fs::File::open(dir.join(f)).expect(f);
        ParquetReader::new(file).finish().expect("parquet")
    };
    // The measured columns, and the one knob that differs between the runs compared.
    let mut measured: Vec<&str> = runs::MEASURED.iter().map(|c| c.name).collect();
    measured.push(runs::SWEEP_THREADS.name);
    (
        read("runs.parquet").drop_many(measured),
        read("traces.parquet"),
    )
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("driftlab-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The rows with `threads = k`, without the `cell` and `threads` columns, in cell order.
fn with_threads(df: &DataFrame, k: u64) -> DataFrame {
    let mask = df
        .column(runs::THREADS.name)
        .expect("threads column")
        .as_materialized_series()
        .cast(&DataType::UInt64)
        .expect("integer")
        .u64()
        .expect("u64")
        .equal(k);
    df.filter(&mask)
        .expect("filter")
        .drop_many([runs::CELL.name, runs::THREADS.name])
}

#[test]
fn every_unmeasured_column_is_identical_across_thread_counts_and_repeats() {
    let (a, b, c) = (tmp("det-a"), tmp("det-b"), tmp("det-c"));
    let (runs_1, traces_1) = run(&a, 1);
    let (runs_2, traces_2) = run(&b, 2);
    let (runs_again, traces_again) = run(&c, 2);
    assert!(runs_1.height() == 32, "{} rows", runs_1.height());
    // Cells side by side: 1 or 2 at a time, and a repeated run.
    assert!(
        runs_1.equals_missing(&runs_2),
        "runs differ between 1 and 2 cells side by side"
    );
    assert!(
        runs_2.equals_missing(&runs_again),
        "runs differ between repeated runs"
    );
    assert!(
        traces_1.equals_missing(&traces_2),
        "traces differ between 1 and 2 cells side by side"
    );
    assert!(
        traces_2.equals_missing(&traces_again),
        "traces differ between repeated runs"
    );
    // What bounds the in-cell speedup on chains (experiments/thread-scaling.toml says it):
    // faer factors every chain's KKT matrix simplicially, never supernodally.
    let supernodal = runs_1
        .column(runs::SUPERNODAL_FACTORIZATIONS.name)
        .expect("supernodal_factorizations column")
        .as_materialized_series()
        .cast(&DataType::UInt64)
        .expect("integer");
    assert_eq!(supernodal.u64().expect("u64").max(), Some(0));
    let factorizations = runs_1
        .column(runs::FACTORIZATIONS.name)
        .expect("factorizations column")
        .as_materialized_series()
        .cast(&DataType::UInt64)
        .expect("integer");
    assert!(
        factorizations.u64().expect("u64").min() > Some(0),
        "every cell factors"
    );
    // Threads inside a cell: the rows with 1 and 2 faer threads.
    let (one, two) = (with_threads(&runs_1, 1), with_threads(&runs_1, 2));
    assert_eq!(one.height(), 16);
    assert!(
        one.equals_missing(&two),
        "runs differ between 1 and 2 faer threads in a cell:\n{one}\n{two}"
    );
    // Cells expand with threads innermost: cell 2k has 1 faer thread, cell 2k + 1 two.
    let parity = |df: &DataFrame, r: u64| {
        let cells = df
            .column("cell")
            .expect("cell column")
            .as_materialized_series()
            .cast(&DataType::UInt64)
            .expect("integer");
        let mask: BooleanChunked = cells
            .u64()
            .expect("u64")
            .iter()
            .map(|c| c.map(|c| c % 2 == r))
            .collect();
        df.filter(&mask)
            .expect("filter")
            .drop("cell")
            .expect("drop")
    };
    let (even, odd) = (parity(&traces_1, 0), parity(&traces_1, 1));
    assert!(even.height() > 0);
    assert!(
        even.equals_missing(&odd),
        "traces differ between 1 and 2 faer threads in a cell"
    );
    for d in [a, b, c] {
        let _ = std::fs::remove_dir_all(d);
    }
}
