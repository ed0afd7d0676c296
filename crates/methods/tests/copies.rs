//! `copies = k` (issue 30 item 3): `k` independent copies of a mechanism stepped as one
//! system. Each copy's motion is the single mechanism's, to round-off, whether the cell
//! runs on one thread (one KKT solver of the whole block-diagonal matrix, model functions
//! in order) or on two (the groups factored and solved side by side, model functions copy
//! by copy on the pool).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{drive, MetricsObserver, Observer, RunStatus, Schedule, State};
use driftlab_methods::build;
use driftlab_problems::build as problem;

/// The final state of `method` (parameters `params`) on the planar chain of `links`
/// links with `copies` copies, over 50 steps of 1e-3, with `threads` inside the cell
/// (run on a pool of that many threads, as the runner does), and its symbolic analyses.
fn final_state(
    method: &str, params: &str, links: usize, copies: usize, threads: usize,
) -> (State, usize) {
    let table: toml::Table = format!("links = {links}\ncopies = {copies}")
        .parse()
        .unwrap();
    let p = problem("planar-chain", &table).unwrap();
    let m = build(method, &params.parse().unwrap(), None).unwrap();
    let mut schedule = Schedule::fixed(1e-3, 0.05);
    schedule.threads = threads;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let out = pool.install(|| {
        let mut obs = MetricsObserver::new(0);
        drive(
            p.as_system(),
            m.as_ref(),
            &schedule,
            &mut [&mut obs as &mut dyn Observer],
        )
    });
    assert!(
        matches!(out.status, RunStatus::Ok),
        "{method}: {:?}",
        out.status
    );
    (out.final_state, out.stats.symbolic_analyses)
}

/// Largest difference between `x` and `copies` repetitions of `one`, relative to `one`.
fn gap_to_repeated(x: &[f64], one: &[f64]) -> f64 {
    let scale = one.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
    x.iter()
        .zip(one.iter().cycle())
        .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()))
        / scale
}

#[test]
fn every_copy_moves_as_the_single_chain_on_one_thread_and_on_two() {
    // 12 links: n + m = 60 per copy, above the dense size, so the KKT solver is sparse
    // and splits into the two copies at two threads.
    let methods = [
        ("baumgarte", "xi = 1.0\nomega_n = 20.0"),
        ("generalized-alpha", "rho_inf = 0.9"),
        ("rattle", ""),
    ];
    for (method, params) in methods {
        let (one, analyses) = final_state(method, params, 12, 1, 1);
        for threads in [1, 2] {
            let (both, split) = final_state(method, params, 12, 2, threads);
            // One analysis per KKT solver on one thread, one per group on two.
            assert_eq!(split, analyses * threads, "{method}, {threads} thread(s)");
            assert_eq!(both.q.len(), 2 * one.q.len());
            for (name, x, y) in [
                ("q", &both.q, &one.q),
                ("v", &both.v, &one.v),
                ("lambda", &both.lambda, &one.lambda),
            ] {
                let gap = gap_to_repeated(x, y);
                // Round-off of the sparse solves (orderings differ), grown over 50 steps.
                assert!(
                    gap <= 1e-10,
                    "{method}, {threads} thread(s), {name}: {gap:e}"
                );
            }
        }
    }
}
