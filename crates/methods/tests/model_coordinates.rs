//! One mechanism, three coordinate choices (issue 28; seed 001 §3.12): a model file in
//! joint, body and natural coordinates, released from the same state and integrated by
//! one accurate method, puts every link at the same place. The three share the model
//! file and the start, nothing of their equations: CRBA/RNEA with loop rows, floating
//! bodies with joint rows, constant M with quadratic rows.
//!
//! Gauss–Legendre s = 3 (order 6) at h = 2e-3 over 1 s: each run's own error is
//! ≈ C h⁶ ≈ 1e-16·C, so the link positions of the three must agree to the 1e-8.
//! Measured (2026-12-05, `--nocapture`): the double pendulum 1.6e-11 m, UR5 5.3e-14 m,
//! Solo12 (floating) 4.4e-15 m, the RSSR linkage 1.4e-14 m, the slider 2.8e-13 m —
//! round-off.
//!
//! The shipped double pendulum's links are rods (∫ρρᵀdm has an eigenvalue 8e-6 against a
//! mass of 0.27): in natural coordinates M is nearly singular, and Gauss's Newton matrix
//! met a zero pivot in the sparse LDLᵀ until the KKT solver gained its pivoted sparse LU
//! fallback (`crates/solver/src/kkt/pivoted.rs`); it is now in the list.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;
use common::Case;
use driftlab_core::RunStatus;
use driftlab_problems::model::links::LinkOrigins;
use driftlab_problems::model::ModelParams;
use serde::Deserialize;

fn params(text: &str) -> ModelParams {
    let table: toml::Table = text.parse().expect("toml");
    ModelParams::deserialize(toml::Value::Table(table)).expect("params")
}

/// The link origins every 0.1 s of `model` in `coordinates`.
fn motion(model: &str, coordinates: &str) -> Vec<Vec<[f64; 3]>> {
    let text = format!("{model}\ncoordinates = \"{coordinates}\"");
    let r = Case::new("model", "gauss", 2e-3, 1.0)
        .problem_params(&text)
        .params("stages = 3")
        .sampled(0.1)
        .run();
    assert_eq!(r.status, RunStatus::Ok, "{text}");
    let links = LinkOrigins::new(&params(&text)).expect("links");
    r.states.iter().map(|s| links.at(&s.q)).collect()
}

fn largest_gap(a: &[Vec<[f64; 3]>], b: &[Vec<[f64; 3]>]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| {
            x.iter()
                .zip(y)
                .flat_map(|(p, q)| (0..3).map(move |k| (p[k] - q[k]).abs()))
        })
        .fold(0.0, f64::max)
}

#[test]
fn joint_body_and_natural_coordinates_move_the_links_alike() {
    let models = [
        "robot = \"double-pendulum\"\ndamping = false\npose_seed = 7",
        "robot = \"ur5\"\npose_seed = 3",
        "robot = \"solo12\"\nroot = \"floating\"\npose_seed = 5",
        "file = \"../../models/rssr-linkage.toml\"",
        "file = \"../problems/tests/data/models/slider.toml\"",
    ];
    let mut report = Vec::new();
    for m in models {
        let joint = motion(m, "joint");
        let body = motion(m, "body");
        let natural = motion(m, "natural");
        let (jb, jn) = (largest_gap(&joint, &body), largest_gap(&joint, &natural));
        report.push(format!(
            "{m}: joint–body {jb:.2e} m, joint–natural {jn:.2e} m"
        ));
        assert!(jb < 1e-8 && jn < 1e-8, "{}", report.join("\n"));
    }
    println!("{}", report.join("\n"));
}
