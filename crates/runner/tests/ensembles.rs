//! Ensembles (issue 12, seed 001 §3.6): reproducible from their seed on any number of
//! threads, summary statistics that are those of the member rows, noise that acts as its
//! schedule says, perturbed initial states that are consistent, and bad input refused
//! with the field named.
#![allow(clippy::float_cmp)] // bitwise reproducibility and exact curriculum values

use driftlab_results::schema::{members, runs};
use driftlab_runner::exec::members::percentile;
use driftlab_runner::{run_spec, RunOptions, RunSummary, Spec};
use polars::prelude::*;

/// Pendula and two-link arms, a soft method under a curriculum, Baumgarte, generalized-α
/// and projection, with initial-state and constraint noise.
const SPEC: &str = r#"
schema_version = 1
name = "ensembles"
t_end = 0.2
trace_stride = 0
metrics_stride = 10

[steps]
h = [1e-3]

[ensemble]
members = 24
seed = 11
initial = { q_sigma = 0.02, v_sigma = 0.05 }
constraint_noise = { sigma0 = 1e-4, tau = 0.1 }
curriculum = { params = { k_p = 1.0, omega_n = 0.5 }, warmup = 4, episodes = 16 }

[[problems]]
id = "pendulum"

[[problems]]
id = "planar-chain"
params = { links = 2 }

[[methods]]
id = "penalty"
params = { k_p = 1e5, k_d = 50.0 }

[[methods]]
id = "baumgarte"
params = { xi = 1.0, omega_n = 20.0 }

[[methods]]
id = "generalized-alpha"

[[methods]]
id = "taylor"
projection = { tol = 1e-12 }
"#;

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("driftlab-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn run(text: &str, dir: &std::path::Path, threads: usize) -> RunSummary {
    let spec = Spec::parse(text, "ensembles.toml").expect("valid spec");
    let opts = RunOptions {
        out_dir: Some(dir.to_path_buf()),
        threads: Some(threads),
        ..RunOptions::default()
    };
    run_spec(&spec, text, "ensembles.toml", &opts).expect("run")
}

fn read(dir: &std::path::Path, file: &str, drop: &[&str]) -> DataFrame {
    let f = std::fs::File::open(dir.join(file)).expect(file);
    let df = ParquetReader::new(f).finish().expect("parquet");
    df.drop_many(drop.iter().copied())
}

fn floats(df: &DataFrame, col: &str) -> Vec<f64> {
    df.column(col)
        .expect(col)
        .as_materialized_series()
        .f64()
        .expect("f64")
        .iter()
        .map(|x| x.unwrap_or(f64::NAN))
        .collect()
}

/// Bitwise identical runs and members tables on 1 and 2 threads and when repeated,
/// except the measured columns.
#[test]
fn ensembles_are_reproducible_across_threads_and_runs() {
    let (a, b, c) = (tmp("ens-a"), tmp("ens-b"), tmp("ens-c"));
    let sums = [run(SPEC, &a, 1), run(SPEC, &b, 2), run(SPEC, &c, 2)];
    assert!(
        sums.iter().all(|s| s.failed == 0),
        "{:?}",
        sums[0]
            .rows
            .iter()
            .map(|r| &r.fail_reason)
            .collect::<Vec<_>>()
    );
    let mut measured: Vec<&str> = runs::MEASURED.iter().map(|c| c.name).collect();
    measured.push(runs::SWEEP_THREADS.name);
    let member_measured = [members::STEP_SECONDS.name];
    let r: Vec<DataFrame> = [&a, &b, &c]
        .iter()
        .map(|d| read(d, "runs.parquet", &measured))
        .collect();
    let m: Vec<DataFrame> = [&a, &b, &c]
        .iter()
        .map(|d| read(d, "members.parquet", &member_measured))
        .collect();
    assert_eq!(r[0].height(), 8);
    assert_eq!(m[0].height(), 8 * 24);
    assert!(
        r[0].equals_missing(&r[1]),
        "runs differ between 1 and 2 threads"
    );
    assert!(
        r[1].equals_missing(&r[2]),
        "runs differ between repeated runs"
    );
    assert!(
        m[0].equals_missing(&m[1]),
        "members differ between 1 and 2 threads"
    );
    assert!(
        m[1].equals_missing(&m[2]),
        "members differ between repeated runs"
    );
    // Members differ from each other (the seed perturbs each one).
    let drift = floats(&m[0], members::MAX_DRIFT.name);
    assert!(
        drift[0] != drift[1],
        "members 0 and 1 have the same drift {}",
        drift[0]
    );
}

/// The `runs` row's median, p95, max, failures and step sum are those of its members.
#[test]
fn summaries_are_the_statistics_of_the_member_rows() {
    let dir = tmp("ens-stats");
    let sum = run(SPEC, &dir, 2);
    let all = read(&dir, "members.parquet", &[]);
    let cells = all
        .column(members::CELL.name)
        .expect("cell")
        .as_materialized_series()
        .cast(&DataType::UInt64)
        .expect("u64");
    for row in &sum.rows {
        assert!(row.ensemble.is_some(), "an ensemble row");
        let mask = cells.u64().expect("u64").equal(row.cell);
        let mine = all.filter(&mask).expect("filter");
        assert_eq!(mine.height(), 24);
        assert_eq!(row.members, 24);
        // Median and p95 over the members that reached t_end, the max over all.
        let all_drift = floats(&mine, members::MAX_DRIFT.name);
        let ok: Vec<bool> = mine
            .column(members::STATUS.name)
            .expect("status")
            .as_materialized_series()
            .str()
            .expect("str")
            .iter()
            .map(|s| s == Some("ok"))
            .collect();
        let of_ok = |v: Vec<f64>| -> Vec<f64> {
            v.into_iter()
                .zip(&ok)
                .filter(|(_, &k)| k)
                .map(|(x, _)| x)
                .collect()
        };
        let drift = of_ok(all_drift.clone());
        let energy = of_ok(floats(&mine, members::MAX_ENERGY_REL_ERROR.name));
        assert_eq!(
            row.drift_median.unwrap_or(f64::NAN).to_bits(),
            percentile(&drift, 0.5).to_bits()
        );
        assert_eq!(
            row.drift_p95.unwrap_or(f64::NAN).to_bits(),
            percentile(&drift, 0.95).to_bits()
        );
        assert_eq!(
            row.energy_median.unwrap_or(f64::NAN).to_bits(),
            percentile(&energy, 0.5).to_bits()
        );
        assert_eq!(
            row.energy_p95.unwrap_or(f64::NAN).to_bits(),
            percentile(&energy, 0.95).to_bits()
        );
        let max = all_drift.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(
            row.max_pos_residual.unwrap_or(f64::NAN).to_bits(),
            max.to_bits()
        );
        assert_eq!(
            (row.member_failures as usize),
            ok.iter().filter(|&&k| !k).count()
        );
        let steps: u64 = mine
            .column(members::STEPS.name)
            .expect("steps")
            .as_materialized_series()
            .cast(&DataType::UInt64)
            .expect("u64")
            .u64()
            .expect("u64")
            .sum()
            .unwrap_or(0);
        assert_eq!(row.steps, steps);
        assert_eq!(steps, 24 * 200);
        assert!(row.rollout_steps_per_second.unwrap_or(f64::NAN) > 0.0);
        // Curriculum: the soft methods' members carry their strength, the hard ones none.
        let strength = floats(&mine, members::STRENGTH.name);
        let soft = row.method == "penalty" || row.method == "baumgarte";
        assert_eq!(strength.iter().all(|s| !s.is_nan()), soft, "{}", row.method);
        if soft {
            assert_eq!(strength[0], 0.1);
            assert_eq!(strength[23], 1.0);
        }
    }
}

/// With constraint noise, a method that enforces `Φ + σε = 0` exactly (projection,
/// generalized-α) leaves the unperturbed drift at the noise: |Φ| = σ(t_k)|ε| ≤ 6σ₀ and
/// not zero; without any noise every member is the unperturbed run, and a perturbed
/// initial state is consistent to the projection's tolerance.
#[test]
fn noise_moves_the_target_and_initial_states_are_consistent() {
    let one = |noise: &str, initial: &str| {
        SPEC.replace("members = 24", "members = 6")
            .replace("constraint_noise = { sigma0 = 1e-4, tau = 0.1 }", noise)
            .replace("initial = { q_sigma = 0.02, v_sigma = 0.05 }", initial)
            .replace(
                "curriculum = { params = { k_p = 1.0, omega_n = 0.5 }, warmup = 4, episodes = 16 }",
                "",
            )
    };
    let dir = tmp("ens-noise");
    let noisy = run(
        &one("constraint_noise = { sigma0 = 1e-4, tau = 0.1 }", ""),
        &dir,
        2,
    );
    let hard: Vec<_> = noisy
        .rows
        .iter()
        .filter(|r| r.method == "taylor+projection")
        .collect();
    assert_eq!(hard.len(), 2);
    for r in hard {
        assert!(r.ensemble.is_some(), "an ensemble row");
        let e = r;
        assert!(
            r.max_pos_residual.unwrap_or(f64::NAN) <= 6e-4,
            "{}",
            r.max_pos_residual.unwrap_or(f64::NAN)
        );
        assert!(
            e.drift_median.unwrap_or(f64::NAN) > 1e-6,
            "noise acts: median drift {}",
            e.drift_median.unwrap_or(f64::NAN)
        );
    }
    let dir = tmp("ens-clean");
    let clean = run(&one("", ""), &dir, 2);
    let m = read(&dir, "members.parquet", &[]);
    let finals = floats(&m, members::FINAL_DRIFT.name);
    for chunk in finals.chunks(6) {
        assert!(
            chunk.iter().all(|x| x.to_bits() == chunk[0].to_bits()),
            "identical members: {chunk:?}"
        );
    }
    assert!(clean.rows.iter().all(|r| r.ok()));
    let dir = tmp("ens-initial");
    let perturbed = run(
        &one("", "initial = { q_sigma = 0.05, v_sigma = 0.1 }"),
        &dir,
        2,
    );
    for r in perturbed
        .rows
        .iter()
        .filter(|r| r.method == "taylor+projection")
    {
        assert!(
            r.max_pos_residual.unwrap_or(f64::NAN) <= 1e-12,
            "projected start and steps: {}",
            r.max_pos_residual.unwrap_or(f64::NAN)
        );
        assert!(r.ensemble.is_some(), "an ensemble row");
        let e = r;
        assert!(e.energy_p95.unwrap_or(f64::NAN) > 0.0);
    }
    // The members start from different states: their final drifts differ (gen-α).
    let m = read(&dir, "members.parquet", &[]);
    let energy = floats(&m, members::MAX_ENERGY_REL_ERROR.name);
    assert!(energy[0] != energy[1]);
}

/// Bad `[ensemble]` input: refused before anything runs, naming the field and the fix.
#[test]
fn bad_ensembles_are_refused_naming_the_field() {
    let cases = [
        ("members = 24", "members = 0", "ensemble.members"),
        (
            "sigma0 = 1e-4",
            "sigma0 = -1e-4",
            "ensemble.constraint_noise.sigma0",
        ),
        ("tau = 0.1", "tau = 0.0", "ensemble.constraint_noise.tau"),
        ("tau = 0.1", "tau = -2.0", "ensemble.constraint_noise.tau"),
        (
            "q_sigma = 0.02",
            "q_sigma = -0.02",
            "ensemble.initial.q_sigma",
        ),
        ("seed = 11", "seed = 11\nwind = 3.0", "unknown field `wind`"),
        (
            "v_sigma = 0.05",
            "v_sigma = 0.05, lambda_sigma = 1.0",
            "unknown field `lambda_sigma`",
        ),
        ("warmup = 4", "warmup = 40", "warmup"),
        (
            "{ k_p = 1.0, omega_n = 0.5 }",
            "{ stiffness = 1.0 }",
            "ensemble.curriculum.params",
        ),
        ("h = [1e-3]", "adaptive = { rtol = [1e-6] }", "[ensemble]"),
    ];
    for (from, to, needle) in cases {
        assert!(SPEC.contains(from), "{from}");
        let text = SPEC.replacen(from, to, 1);
        let err = Spec::parse(&text, "bad.toml").expect_err(to).to_string();
        assert!(err.contains(needle), "`{to}`: {err}");
    }
}

/// The members table of docs/output-files.md is the schema's, row for row.
#[test]
fn docs_document_every_member_column() {
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/output-files.md"
    ))
    .expect("docs/output-files.md");
    let rows: Vec<String> = members::ALL.iter().map(|c| c.readme_row()).collect();
    let header = "| column | type | unit | meaning |";
    // The members table is the second table with this header (after the runs table).
    let after_runs = readme
        .split(header)
        .skip(1)
        .collect::<Vec<_>>()
        .join(header);
    if let Some(d) = driftlab_results::schema::readme_table_differs(&after_runs, header, &rows) {
        panic!("{d}");
    }
}

/// A member that fails is a counted failure, not a sample of the distribution: penalty
/// far past its explicit stability limit (ωh ≈ 2√k_p h = 63) diverges in every member; the
/// row is failed with the members' most frequent failure, and median and p95 are null.
#[test]
fn failed_members_are_counted_not_sampled() {
    let text = SPEC
        .replace("members = 24", "members = 5")
        .replace("h = [1e-3]", "h = [1e-2]")
        .replace(
            "curriculum = { params = { k_p = 1.0, omega_n = 0.5 }, warmup = 4, episodes = 16 }",
            "",
        )
        .replace(
            "params = { k_p = 1e5, k_d = 50.0 }",
            "params = { k_p = 1e7, k_d = 0.0 }",
        );
    let dir = tmp("ens-failed");
    let sum = run(&text, &dir, 2);
    let penalty: Vec<_> = sum.rows.iter().filter(|r| r.method == "penalty").collect();
    assert_eq!(penalty.len(), 2);
    for r in penalty {
        assert!(r.ensemble.is_some(), "an ensemble row");
        let e = r;
        assert!(!r.ok());
        assert_eq!((e.member_failures as usize), 5);
        assert_eq!(
            r.fail_kind.as_deref(),
            Some("diverged"),
            "{:?}",
            r.fail_reason
        );
        assert!(r
            .fail_reason
            .as_deref()
            .unwrap_or("")
            .starts_with("5 of 5 members failed"));
        assert!(
            e.drift_median.unwrap_or(f64::NAN).is_nan()
                && e.energy_p95.unwrap_or(f64::NAN).is_nan()
        );
    }
}
