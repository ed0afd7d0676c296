//! The ~30-DoF humanoid in joint coordinates (issue 28's speed target): the Unitree G1 from
//! its URDF (29 joints and a free base, `datasets/robots/g1.urdf`), at one seeded pose with
//! joint rates. Measured here: the dynamics evaluation the methods pay per Newton iterate —
//! M(q) by CRBA and the bias force by RNEA (`mass` + `forces`) — and one step of
//! generalized-α and of RATTLE at h = 1e-3. `scripts/pinocchio-bench.sh` runs this bench and
//! times Pinocchio's `crba` + `nle` and `aba` on the same robot and state in the same
//! window, and prints the ratios (Pinocchio's side runs through its Python bindings).

use criterion::{criterion_group, criterion_main, Criterion};
use driftlab_core::{Method, StartOptions};
use driftlab_methods::build;
use driftlab_problems::build as problem;

/// G1 with a free base, URDF damping off, released from the pose of seed 6 (the
/// `robots-coordinates` experiment's) with every joint rate 0.5.
fn g1() -> driftlab_problems::Problem {
    let t: toml::Table = "robot = \"g1\"\nroot = \"floating\"\npose_seed = 6\ndamping = false"
        .parse()
        .expect("toml");
    problem("model", &t).expect("G1 builds")
}

fn bench_dynamics(c: &mut Criterion) {
    let p = g1();
    let Some(sys) = p.as_system().as_mechanical() else {
        panic!("the model is mechanical");
    };
    let mut st = sys.initial_state();
    st.v.iter_mut().for_each(|v| *v = 0.5);
    let n = sys.dims().n;
    let mut mass = vec![0.0; sys.mass_pattern().nnz()];
    let mut force = vec![0.0; n];
    let mut g = c.benchmark_group("g1 joint coordinates");
    g.bench_function("mass (CRBA)", |b| b.iter(|| sys.mass(&st.q, &mut mass)));
    g.bench_function("forces (RNEA)", |b| {
        b.iter(|| sys.forces(0.0, &st.q, &st.v, &mut force))
    });
    g.bench_function("mass + forces", |b| {
        b.iter(|| {
            sys.mass(&st.q, &mut mass);
            sys.forces(0.0, &st.q, &st.v, &mut force)
        })
    });
    g.finish();
}

fn bench_steps(c: &mut Criterion) {
    let p = g1();
    let sys = p.as_system();
    let mut g = c.benchmark_group("g1 joint coordinates step");
    for (label, id, params) in [
        ("generalized-alpha", "generalized-alpha", "rho_inf = 0.9"),
        ("rattle", "rattle", ""),
    ] {
        let params: toml::Table = params.parse().expect("toml");
        let m: Box<dyn Method> = build(id, &params, None).expect("method builds");
        let mut state = sys.initial_state();
        let opts = StartOptions::default();
        let mut st = sys.start(m.as_ref(), &mut state, &opts).expect("start");
        g.bench_function(label, |b| {
            b.iter(|| {
                // Restart every 1000 steps (t = 1 s) to stay in the regime measured.
                if state.t > 1.0 {
                    state = sys.initial_state();
                    st = sys.start(m.as_ref(), &mut state, &opts).expect("start");
                }
                let r = st.step(&mut state, 1e-3).expect("step");
                st.accept();
                r
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_dynamics, bench_steps);
criterion_main!(benches);
