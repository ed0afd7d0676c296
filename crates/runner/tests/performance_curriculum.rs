//! The performance-driven curriculum (seed 001 §3.6.3, issue 32 A57) run end to end: the
//! members of a generation share one strength, each generation's strength is the one the
//! feedback computes from the successes recorded before it, a failing generation lowers
//! it, the runs are the same on 1 and 2 threads, and an entry's own curriculum replaces
//! the ensemble's for that entry only.
#![allow(clippy::float_cmp)] // strengths are replayed bit for bit

use driftlab_results::schema::members;
use driftlab_runner::ensemble::feedback::{Feedback, Generations};
mod common;

use driftlab_runner::Spec;
use polars::prelude::*;

/// Penalty on the pendulum at h = 1e-2, where strengths above about 0.75 of k_p = 1e4
/// diverge (experiment performance-curriculum): under the episode ramp, and under the
/// performance feedback in generations of 8; projection has no strength to scale.
const SPEC: &str = r#"
schema_version = 1
name = "performance"
t_end = 2.0
trace_stride = 0
metrics_stride = 10

[steps]
h = [1e-2]

[ensemble]
members = 96
seed = 5
initial = { q_sigma = 0.02, v_sigma = 0.05 }
curriculum = { params = { k_p = 1.0 }, warmup = 8, episodes = 64 }

[[problems]]
id = "pendulum"

[[methods]]
id = "penalty"
params = { k_p = 1e4, k_d = 20.0 }
label = "episode"

[[methods]]
id = "penalty"
params = { k_p = 1e4, k_d = 20.0 }
label = "performance"
curriculum = { params = { k_p = 1.0 }, start = 0.1, ramp = "performance", feedback = { generation = 8, gain = 10.0, midpoint = 0.9, smoothing = 0.5 } }

[[methods]]
id = "taylor"
projection = { tol = 1e-12 }
"#;

const FEEDBACK: Feedback = Feedback {
    generation: 8,
    gain: 10.0,
    midpoint: 0.9,
    smoothing: 0.5,
};

fn members_table(text: &str, threads: usize) -> DataFrame {
    let (_, dir) = common::run_text(text, &format!("performance-{threads}"), threads);
    let f = std::fs::File::open(dir.join("members.parquet")).expect("members");
    let df = ParquetReader::new(f).finish().expect("parquet");
    df.drop(members::STEP_SECONDS.name).expect("step_seconds")
}

/// `(strength, ok)` of every member of cell `cell`, in member order.
fn cell_members(df: &DataFrame, cell: u64) -> Vec<(Option<f64>, bool)> {
    let cells = df.column(members::CELL.name).expect("cell");
    let mask = cells
        .as_materialized_series()
        .u64()
        .expect("u64")
        .equal(cell);
    let rows = df.filter(&mask).expect("filter");
    let order = rows.column(members::MEMBER.name).expect("member");
    let order: Vec<Option<u64>> = order
        .as_materialized_series()
        .u64()
        .expect("u64")
        .iter()
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "members in order");
    let strength = rows.column(members::STRENGTH.name).expect("strength");
    let status = rows.column(members::STATUS.name).expect("status");
    let strength = strength.as_materialized_series().f64().expect("f64");
    let status = status.as_materialized_series().str().expect("str");
    strength
        .iter()
        .zip(status.iter())
        .map(|(s, st)| (s, st == Some("ok")))
        .collect()
}

#[test]
fn generations_follow_the_feedback_and_back_off_after_failures() {
    let one = members_table(SPEC, 1);
    let two = members_table(SPEC, 2);
    assert!(
        one.equals_missing(&two),
        "members differ between 1 and 2 threads"
    );

    // Cell 1 is the performance entry: replay its feedback from its own successes.
    let perf = cell_members(&one, 1);
    assert_eq!(perf.len(), 96);
    let mut replay = Generations::new(FEEDBACK, 0.1);
    let mut strengths = Vec::new();
    for generation in perf.chunks(FEEDBACK.generation) {
        let s = replay.strength();
        for (member, _) in generation {
            assert_eq!(*member, Some(s), "a generation shares its strength");
        }
        let succeeded = generation.iter().filter(|(_, ok)| *ok).count();
        strengths.push((s, succeeded));
        replay.record(succeeded, generation.len());
    }
    // The setup reaches the unstable strengths, and the feedback backs off after them.
    let failing: Vec<usize> = (0..strengths.len() - 1)
        .filter(|&g| strengths[g].1 < FEEDBACK.generation)
        .collect();
    assert!(!failing.is_empty(), "no generation failed: {strengths:?}");
    for g in failing {
        assert!(
            strengths[g + 1].0 < strengths[g].0,
            "generation {g} failed at s = {} but the next ran at {}",
            strengths[g].0,
            strengths[g + 1].0
        );
    }

    // Cell 0 keeps the ensemble's episode ramp; cell 2 (projection) has no strength.
    let episode = cell_members(&one, 0);
    assert_eq!(episode[0].0, Some(0.1));
    assert_eq!(episode[95].0, Some(1.0));
    assert!(cell_members(&one, 2).iter().all(|(s, _)| s.is_none()));
}

/// An entry's curriculum needs an ensemble, a parameter of the entry, and a valid
/// feedback; a performance ramp refuses episode counts.
#[test]
fn bad_entry_curricula_are_refused_naming_the_field() {
    let entry = "curriculum = { params = { k_p = 1.0 }, start = 0.1, ramp = \"performance\", feedback = { generation = 8, gain = 10.0, midpoint = 0.9, smoothing = 0.5 } }";
    assert!(SPEC.contains(entry));
    let cases = [
        ("generation = 8", "generation = 0", "feedback.generation"),
        ("midpoint = 0.9", "midpoint = 1.5", "feedback.midpoint"),
        (
            "{ k_p = 1.0 }, start",
            "{ omega_n = 1.0 }, start",
            "names no parameter of this entry",
        ),
        (
            "start = 0.1, ramp",
            "warmup = 4, start = 0.1, ramp",
            "remove them",
        ),
        (
            ", feedback = { generation = 8, gain = 10.0, midpoint = 0.9, smoothing = 0.5 }",
            "",
            "needs its `feedback",
        ),
    ];
    for (from, to, needle) in cases {
        let text = SPEC.replacen(entry, &entry.replacen(from, to, 1), 1);
        assert_ne!(text, SPEC, "{from}");
        let err = Spec::parse(&text, "bad.toml").expect_err(to).to_string();
        assert!(err.contains(needle), "`{to}`: {err}");
    }
    let no_ensemble = SPEC.replace(
        "[ensemble]\nmembers = 96\nseed = 5\ninitial = { q_sigma = 0.02, v_sigma = 0.05 }\ncurriculum = { params = { k_p = 1.0 }, warmup = 8, episodes = 64 }\n",
        "",
    );
    assert_ne!(no_ensemble, SPEC);
    let err = Spec::parse(&no_ensemble, "bad.toml")
        .expect_err("no ensemble")
        .to_string();
    assert!(err.contains("add an `[ensemble]` table"), "{err}");
}
