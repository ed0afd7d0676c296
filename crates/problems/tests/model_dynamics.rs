//! The joint-coordinate dynamics of `model` against what it must equal, by routes that
//! share no code with CRBA and RNEA:
//!
//! * kinetic energy: `½ q̇ᵀ M q̇` (CRBA) = `½ Σ vᵢ·Iᵢvᵢ` (the forward pass's body
//!   velocities), to round-off, on every shipped robot and test model;
//! * Lagrange's equations: `f(q, q̇) − f(q, 0) = −(Ṁq̇ − ½ ∂(q̇ᵀMq̇)/∂q)` and
//!   `f(q, 0) = −∂V/∂q`, the derivatives by central differences of M and H (trees
//!   without Euler parameters, whose redundant coordinates put extra terms along p);
//! * closed forms: a compound pendulum (`M = I_zz + mℓ²`, `f = −mgℓ cos θ`), a free body
//!   (Euler's equations about its centre of mass, free fall of the centre of mass).

use driftlab_core::MechanicalSystem;
use driftlab_problems::consistency::accelerations;
use driftlab_problems::model::{build, spatial, ModelParams};

fn params(text: &str) -> ModelParams {
    let table: toml::Table = text.parse().expect("toml");
    ModelParams::deserialize(toml::Value::Table(table)).expect("params")
}

use serde::Deserialize;

fn system(text: &str) -> driftlab_problems::model::joint_coords::JointCoordinates {
    build(&params(text)).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Deterministic pseudo-random numbers in (−1, 1).
fn wiggle(n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| ((i as f64 + 1.0) * 12.9898 + seed as f64 * 78.233).sin() * 0.9)
        .collect()
}

/// A state on the unit spheres: random q̇, the Euler-parameter rates made tangent.
fn tangent_rates(sys: &dyn MechanicalSystem, q: &[f64], seed: u64) -> Vec<f64> {
    let mut v = wiggle(q.len(), seed);
    // Each unit-norm row's columns are its Euler-parameter block.
    let jp = sys.jacobian_pattern();
    let mut jv = vec![0.0; jp.nnz()];
    sys.jacobian(0.0, q, &mut jv);
    for (r, kind) in sys.row_kinds().iter().enumerate() {
        if *kind != "unit-norm" {
            continue;
        }
        let cols: Vec<usize> = jp
            .entries
            .iter()
            .filter(|e| e.0 == r)
            .map(|e| e.1)
            .collect();
        let d: f64 = cols.iter().map(|&c| q[c] * v[c]).sum();
        cols.iter().for_each(|&c| v[c] -= d * q[c]);
    }
    v
}

const MODELS: [&str; 7] = [
    "robot = \"double-pendulum\"\npose_seed = 11",
    "robot = \"ur5\"\npose_seed = 12",
    "robot = \"panda\"\npose_seed = 13",
    "robot = \"solo12\"\nroot = \"floating\"\npose_seed = 14",
    "robot = \"g1\"\nroot = \"floating\"\npose_seed = 15",
    "file = \"../../models/rssr-linkage.toml\"",
    "file = \"tests/data/models/closures.toml\"",
];

#[test]
fn crba_kinetic_energy_equals_the_bodies_kinetic_energy() {
    for text in MODELS {
        let sys = system(text);
        let q = sys.initial_state().q;
        let v = tangent_rates(&sys, &q, 5);
        let n = q.len();
        let m = sys.dense_mass(&q);
        let t_crba: f64 = 0.5
            * (0..n)
                .map(|i| (0..n).map(|j| v[i] * m[i * n + j] * v[j]).sum::<f64>())
                .sum::<f64>();
        let zero = vec![0.0; n];
        let h = |v: &[f64]| sys.energy(0.0, &q, v).expect("energy");
        let t_bodies = h(&v) - h(&zero);
        let err = (t_crba - t_bodies).abs() / t_bodies.abs();
        assert!(
            err < 1e-12,
            "{text}: ½q̇ᵀMq̇ = {t_crba}, Σ½v·Iv = {t_bodies}, rel {err:e}"
        );
    }
}

fn mass_at(sys: &dyn MechanicalSystem, q: &[f64]) -> Vec<f64> {
    let mp = sys.mass_pattern();
    let mut mv = vec![0.0; mp.nnz()];
    sys.mass(q, &mut mv);
    mp.to_dense(&mv, true)
}

fn quad(m: &[f64], v: &[f64]) -> f64 {
    let n = v.len();
    (0..n)
        .map(|i| (0..n).map(|j| v[i] * m[i * n + j] * v[j]).sum::<f64>())
        .sum()
}

#[test]
fn rnea_forces_satisfy_lagranges_equations() {
    for text in &MODELS[..3] {
        let sys = system(&format!("{text}\ndamping = false"));
        let q = sys.initial_state().q;
        let n = q.len();
        let v = wiggle(n, 9);
        let h = 1e-6;
        let shifted = |s: f64, along: &[f64]| -> Vec<f64> {
            q.iter().zip(along).map(|(a, b)| a + s * b).collect()
        };
        // Ṁq̇ by central differences along q̇.
        let (mp, mm) = (
            mass_at(&sys, &shifted(h, &v)),
            mass_at(&sys, &shifted(-h, &v)),
        );
        let mdot_v: Vec<f64> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| (mp[i * n + j] - mm[i * n + j]) / (2.0 * h) * v[j])
                    .sum()
            })
            .collect();
        let zero = vec![0.0; n];
        let (mut f_v, mut f_0) = (vec![0.0; n], vec![0.0; n]);
        sys.forces(0.0, &q, &v, &mut f_v);
        sys.forces(0.0, &q, &zero, &mut f_0);
        let scale = f_v.iter().chain(&f_0).fold(1.0_f64, |m, x| m.max(x.abs()));
        for i in 0..n {
            let mut e = vec![0.0; n];
            e[i] = 1.0;
            let dt = (quad(&mass_at(&sys, &shifted(h, &e)), &v)
                - quad(&mass_at(&sys, &shifted(-h, &e)), &v))
                / (4.0 * h);
            let c = mdot_v[i] - dt;
            let got = f_v[i] - f_0[i];
            assert!(
                (got + c).abs() < 1e-6 * scale,
                "{text}: velocity force {i}: RNEA {got}, Lagrange {}",
                -c
            );
            let dv = (sys.energy(0.0, &shifted(h, &e), &zero).expect("H")
                - sys.energy(0.0, &shifted(-h, &e), &zero).expect("H"))
                / (2.0 * h);
            assert!(
                (f_0[i] + dv).abs() < 1e-6 * scale,
                "{text}: gravity force {i}: RNEA {}, −∂V/∂q {}",
                f_0[i],
                -dv
            );
        }
    }
}

fn write_model(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("driftlab-model-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write model");
    path.display().to_string()
}

#[test]
fn compound_pendulum_matches_its_closed_form() {
    let (m, l, izz, g) = (1.7, 0.45, 0.013, 9.81);
    let file = write_model(
        "pendulum.toml",
        &format!(
            "gravity = [0.0, -{g}, 0.0]\n[[bodies]]\nname = \"rod\"\nmass = {m}\ncom = [{l}, 0.0, 0.0]\ninertia = {{ ixx = 1e-4, iyy = {izz}, izz = {izz} }}\n[[joints]]\nname = \"pin\"\ntype = \"revolute\"\nparent = \"world\"\nchild = \"rod\"\naxis = [0.0, 0.0, 1.0]\n"
        ),
    );
    let sys = system(&format!("file = \"{file}\""));
    for theta in [-2.0, -0.3, 0.0, 0.7, 2.5] {
        let mut mv = [0.0];
        sys.mass(&[theta], &mut mv);
        let mut f = [0.0];
        sys.forces(0.0, &[theta], &[1.3], &mut f);
        let m_exact = izz + m * l * l;
        let f_exact = -m * g * l * f64::cos(theta);
        assert!(
            (mv[0] - m_exact).abs() < 1e-15 * m_exact,
            "M = {} vs {m_exact}",
            mv[0]
        );
        assert!(
            (f[0] - f_exact).abs() < 1e-14 * m * g * l,
            "f = {} vs {f_exact}",
            f[0]
        );
    }
}

#[test]
fn free_body_obeys_eulers_equations_and_falls_freely() {
    let (ixx, iyy, izz) = (0.02, 0.035, 0.05);
    let file = write_model(
        "free.toml",
        &format!(
            "gravity = [0.4, -0.2, -9.81]\n[[bodies]]\nname = \"brick\"\nmass = 2.0\ncom = [0.1, -0.05, 0.2]\ninertia = {{ ixx = {ixx}, iyy = {iyy}, izz = {izz} }}\n[[joints]]\nname = \"free\"\ntype = \"floating\"\nparent = \"world\"\nchild = \"brick\"\nq0 = [0.3, 0.1, -0.2, 0.8, 0.2, -0.4, 0.4]\nv0 = [0.5, -0.3, 0.2, 1.1, -0.7, 2.3]\n"
        ),
    );
    let sys = system(&format!("file = \"{file}\""));
    let st = sys.initial_state();
    let (a, lambda) = accelerations(&sys, 0.0, &st.q, &st.v).expect("KKT");
    assert!(
        lambda[0].abs() < 1e-12,
        "unit-norm multiplier {}",
        lambda[0]
    );
    let (p, pd, pdd) = (&st.q[3..7], &st.v[3..7], &a[3..7]);
    let g = spatial::quat_g(p);
    let w: [f64; 3] = std::array::from_fn(|i| 2.0 * (0..4).map(|k| g[i][k] * pd[k]).sum::<f64>());
    let wdot: [f64; 3] =
        std::array::from_fn(|i| 2.0 * (0..4).map(|k| g[i][k] * pdd[k]).sum::<f64>());
    // Euler about the centre of mass (body axes; the com's offset does not enter).
    let j = [ixx, iyy, izz];
    let jw = [j[0] * w[0], j[1] * w[1], j[2] * w[2]];
    let gyro = spatial::cross(w, jw);
    for i in 0..3 {
        let expect = -gyro[i] / j[i];
        assert!(
            (wdot[i] - expect).abs() < 1e-12 * (1.0 + expect.abs()),
            "ω̇'[{i}] = {} vs Euler {expect}",
            wdot[i]
        );
    }
    // The centre of mass falls with g: c̈ = ẍ + R(ω̇×c + ω×(ω×c)).
    let r = spatial::quat_matrix(p);
    let c = [0.1, -0.05, 0.2];
    let rel = spatial::add(
        spatial::cross(wdot, c),
        spatial::cross(w, spatial::cross(w, c)),
    );
    let acc = spatial::add([a[0], a[1], a[2]], spatial::mul(&r, rel));
    for (k, want) in [0.4, -0.2, -9.81].iter().enumerate() {
        assert!(
            (acc[k] - want).abs() < 1e-12 * 9.81,
            "c̈[{k}] = {} vs g {want}",
            acc[k]
        );
    }
}

#[test]
fn closed_loops_start_assembled_after_projection() {
    for text in &MODELS[5..] {
        let sys = system(text);
        let st = sys.initial_state();
        let mut phi = vec![0.0; sys.dims().m];
        sys.constraints(0.0, &st.q, &mut phi);
        let worst = phi.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        assert!(worst < 1e-12, "{text}: ‖Φ(q0)‖∞ = {worst:e}");
        assert!(
            st.v.iter().any(|x| x.abs() > 0.1),
            "{text}: the projected start lost its motion: {:?}",
            st.v
        );
    }
}
