//! Per-step micro-benchmarks on the scalable planar chain (criterion): one KKT
//! factorization + solve, and one step of each KKT-based method, for growing N. Speed
//! targets live here and in experiments reporting ratios, never in timed unit tests.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use driftlab_core::{Method, SystemRef};
use driftlab_methods::build;
use driftlab_problems::build as problem;

fn chain(n: usize) -> driftlab_problems::Problem {
    let t: toml::Table = format!("links = {n}").parse().expect("toml");
    problem("planar-chain", &t).expect("chain builds")
}

fn bench_steps(c: &mut Criterion) {
    let mut g = c.benchmark_group("planar-chain step");
    for n in [10usize, 100, 1000, 10_000] {
        let p = chain(n);
        for (label, id, params, proj) in [
            ("taylor", "taylor", "", None),
            ("baumgarte", "baumgarte", "xi = 1.0\nomega_n = 20.0", None),
            ("taylor+projection", "taylor", "", Some("tol = 1e-10")),
        ] {
            let params: toml::Table = params.parse().expect("toml");
            let proj: Option<toml::Table> = proj.map(|s| s.parse().expect("toml"));
            let mut m: Box<dyn Method> = build(id, &params, proj.as_ref()).expect("method builds");
            let sys: SystemRef<'_> = p.as_system();
            let mut state = sys.initial_state();
            m.init(sys, &mut state).expect("init");
            g.bench_with_input(BenchmarkId::new(label, n), &n, |b, _| {
                b.iter(|| {
                    // Restart from the initial state every 1000 steps to stay in the regime measured.
                    if state.t > 1.0 {
                        state = sys.initial_state();
                        m.init(sys, &mut state).expect("init");
                    }
                    m.step(sys, &mut state, 1e-3).expect("step")
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_steps);
criterion_main!(benches);
