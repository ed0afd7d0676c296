//! `[[optima]]` end to end (issue 32 A53, seed 001 §3.6.2): an ensemble sweep of a
//! stiffness writes `optima.csv` with one row per group and α, whose grid minimum is the
//! grid value of least mean loss recomputed from `members.parquet`; entries that cannot
//! be evaluated are refused naming the field.
#![allow(clippy::float_cmp)] // the grid minimum is one of the swept values, bit for bit

use driftlab_results::schema::{members, optima};
mod common;

use driftlab_runner::Spec;
use polars::prelude::*;

const SPEC: &str = r#"
schema_version = 1
name = "optima"
t_end = 0.5
trace_stride = 0
metrics_stride = 5

[steps]
h = [1e-3]

[ensemble]
members = 6
seed = 2
constraint_noise = { sigma0 = 1e-3, tau = inf }

[[problems]]
id = "tracked-arm"

[[methods]]
id = "penalty"
params = { k_p = [1e2, 1e3, 1e4, 1e5], k_d = 20.0 }

[[optima]]
parameter = "k_p"
task = "max_err_q"
constraint = "max_drift"
alpha = [0.0, 10.0]
"#;

fn column(df: &DataFrame, name: &str) -> Vec<Option<f64>> {
    df.column(name)
        .expect(name)
        .as_materialized_series()
        .cast(&DataType::Float64)
        .expect("f64")
        .f64()
        .expect("f64")
        .iter()
        .collect()
}

#[test]
fn optima_are_the_grid_minima_of_the_member_means() {
    let (_, dir) = common::run_text(SPEC, "optima", 2);
    let opt = CsvReadOptions::default()
        .with_has_header(true)
        .try_into_reader_with_file_path(Some(dir.join("optima.csv")))
        .expect("optima.csv")
        .finish()
        .expect("csv");
    assert_eq!(opt.height(), 2, "one group, two α");
    let f = std::fs::File::open(dir.join("members.parquet")).expect("members");
    let m = ParquetReader::new(f).finish().expect("parquet");
    let cells = column(&m, members::CELL.name);
    let task = column(&m, members::MAX_ERR_Q.name);
    let drift = column(&m, members::MAX_DRIFT.name);
    // Cells 0…3 are k_p = 1e2 … 1e5 (the sweep's order); recompute each mean loss.
    let grid = [1e2, 1e3, 1e4, 1e5];
    for (row, alpha) in [(0, 0.0), (1, 10.0)] {
        let mean = |c: usize| {
            let sel: Vec<usize> = (0..m.height())
                .filter(|&i| cells[i] == Some(c as f64))
                .collect();
            sel.iter()
                .map(|&i| task[i].unwrap_or(f64::NAN) + alpha * drift[i].unwrap_or(f64::NAN))
                .sum::<f64>()
                / sel.len() as f64
        };
        let best = (0..4)
            .min_by(|&a, &b| mean(a).total_cmp(&mean(b)))
            .expect("cells");
        assert_eq!(column(&opt, optima::K_GRID.name)[row], Some(grid[best]));
        assert_eq!(column(&opt, optima::ALPHA.name)[row], Some(alpha));
        assert!(
            task.iter().all(|t| t.is_some_and(|t| t > 0.0)),
            "tracking errors measured"
        );
    }
}

#[test]
fn unusable_optima_are_refused_naming_the_field() {
    let cases = [
        ("task = \"max_err_q\"", "task = \"err_q\"", "task"),
        ("alpha = [0.0, 10.0]", "alpha = []", "alpha"),
        ("k_p = [1e2, 1e3, 1e4, 1e5]", "k_p = 1e3", "not swept"),
        (
            "[ensemble]\nmembers = 6\nseed = 2\nconstraint_noise = { sigma0 = 1e-3, tau = inf }\n",
            "",
            "[ensemble]",
        ),
    ];
    for (from, to, needle) in cases {
        assert!(SPEC.contains(from), "{from}");
        let text = SPEC.replacen(from, to, 1);
        let err = Spec::parse(&text, "bad.toml").expect_err(to).to_string();
        assert!(err.contains(needle), "`{to}`: {err}");
    }
}
