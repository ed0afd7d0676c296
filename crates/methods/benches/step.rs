//! Per-step micro-benchmarks on the scalable planar chain (criterion): one KKT
//! factorization + solve, and one step of each KKT-based method, for growing N. Speed
//! targets live here and in experiments reporting ratios, never in timed unit tests.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use driftlab_core::{Method, StartOptions, Stepper};

/// `m` started on `p` at `state` (a bench's set-up: a refusal is a broken bench).
fn start<'s>(
    p: &'s driftlab_problems::Problem, m: &dyn Method, state: &mut driftlab_core::State,
) -> Box<dyn Stepper + 's> {
    p.as_system()
        .start(m, state, &StartOptions::default())
        .expect("start")
}
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
            (
                "generalized-alpha",
                "generalized-alpha",
                "rho_inf = 0.9",
                None,
            ),
            ("rattle", "rattle", "", None),
            ("taylor+projection", "taylor", "", Some("tol = 1e-10")),
        ] {
            let params: toml::Table = params.parse().expect("toml");
            let proj: Option<toml::Table> = proj.map(|s| s.parse().expect("toml"));
            let m: Box<dyn Method> = build(id, &params, proj.as_ref()).expect("method builds");
            let sys = p.as_system();
            let mut state = sys.initial_state();
            let mut st = start(&p, m.as_ref(), &mut state);
            g.bench_with_input(BenchmarkId::new(label, n), &n, |b, _| {
                b.iter(|| {
                    // Restart from the initial state every 1000 steps to stay in the regime measured.
                    if state.t > 1.0 {
                        state = sys.initial_state();
                        st = start(&p, m.as_ref(), &mut state);
                    }
                    let r = st.step(&mut state, 1e-3).expect("step");
                    st.accept();
                    r
                })
            });
        }
    }
    g.finish();
}

/// One step of the main implicit methods on a small (pendulum), a medium (Andrews'
/// squeezer, IVP Test Set) and a large system (planar chain, 10⁴ links; radau is dense
/// and refuses it), each at a step size where it runs (issue 10: per-step kernels).
fn bench_kernels(c: &mut Criterion) {
    let mut g = c.benchmark_group("implicit step");
    let problems = [
        ("pendulum", "", 1e-2),
        ("andrews", "", 1e-5),
        ("planar-chain", "links = 10000", 1e-3),
    ];
    let methods = [
        ("generalized-alpha", ""),
        ("implicit-euler", ""),
        ("rattle", ""),
        ("gauss", "stages = 2"),
        ("radau", ""),
    ];
    for (pid, pp, h) in problems {
        let p = problem(pid, &pp.parse().expect("toml")).expect("problem builds");
        let sys = p.as_system();
        for (mid, mp) in methods {
            let m = build(mid, &mp.parse().expect("toml"), None).expect("method builds");
            let mut state = sys.initial_state();
            let Ok(mut st) = sys.start(m.as_ref(), &mut state, &StartOptions::default()) else {
                continue; // refused (radau on the 10⁴-link chain): nothing to time
            };
            let start = state.clone();
            g.bench_function(BenchmarkId::new(mid, pid), |b| {
                b.iter(|| {
                    if state.t > start.t + 1000.0 * h {
                        state.clone_from(&start);
                    }
                    let r = st.step(&mut state, h);
                    match r {
                        Ok(_) => st.accept(),
                        Err(_) => state.clone_from(&start),
                    }
                    r.is_ok()
                })
            });
        }
    }
    g.finish();
}

/// The floor of a step — one KKT factorization and one solve, nothing else — beside
/// Baumgarte's whole step (one factorization and solve plus the model and the update),
/// on the planar chain up to 10⁶ links, in the same run: their ratio is what a step
/// spends above the floor, and the floor's own log–log slope in N is the least slope a
/// step can have on this machine (issue 12). The factorization alternates between the
/// Jacobians at two positions, so that the solver's reuse of an unchanged matrix never
/// skips it.
fn bench_floor(c: &mut Criterion) {
    use driftlab_solver::KktSolver;
    let mut g = c.benchmark_group("kkt floor");
    g.sample_size(10);
    g.measurement_time(std::time::Duration::from_secs(4));
    for n in [1000usize, 10_000, 100_000, 1_000_000] {
        let p = chain(n);
        let Some(sys) = p.as_system().as_mechanical() else {
            continue;
        };
        // Baumgarte's steps from rest, restarting every 100; the floor is measured at the
        // state after 50 of them (a moving chain, as in chain-scaling's runs).
        let params: toml::Table = "xi = 1.0\nomega_n = 20.0".parse().expect("toml");
        let m: Box<dyn Method> = build("baumgarte", &params, None).expect("method builds");
        let mut state = sys.initial_state();
        let mut st = start(&p, m.as_ref(), &mut state);
        let start = state.clone();
        for _ in 0..50 {
            st.step(&mut state, 1e-3).expect("step");
        }
        let moving = state.clone();
        g.bench_with_input(BenchmarkId::new("baumgarte step", n), &n, |b, _| {
            b.iter(|| {
                if state.t > 0.1 {
                    state.clone_from(&start);
                }
                st.step(&mut state, 1e-3).expect("step")
            })
        });
        drop(st);
        let d = sys.dims();
        let mut kkt = KktSolver::new(
            &driftlab_methods::dynamics::kkt_pattern(sys),
            Default::default(),
        )
        .expect("layout");
        let mut mass = vec![0.0; sys.mass_pattern().nnz()];
        sys.mass(&moving.q, &mut mass);
        let jac_at = |scale: f64| {
            let q: Vec<f64> = moving.q.iter().map(|x| x * scale).collect();
            let mut jac = vec![0.0; sys.jacobian_pattern().nnz()];
            sys.jacobian(moving.t, &q, &mut jac);
            jac
        };
        let jacs = [jac_at(1.0), jac_at(1.0 + 1e-9)];
        let b: Vec<f64> = (0..d.n + d.m).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut x = b.clone();
        let mut k = 0usize;
        g.bench_with_input(BenchmarkId::new("factor+solve", n), &n, |bench, _| {
            bench.iter(|| {
                k += 1;
                kkt.factorize(&mass, &jacs[k % 2], None).expect("factor");
                x.copy_from_slice(&b);
                kkt.solve(&mut x).expect("solve")
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_steps, bench_kernels, bench_floor);
criterion_main!(benches);
