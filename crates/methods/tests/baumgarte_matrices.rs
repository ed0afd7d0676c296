//! Seed 001 §3.3.4's general error feedback with full gain matrices,
//! `Φ̈ = −K_d Φ̇ − K_p Φ` (`baumgarte`, `gain_matrices`), on the two-link planar chain
//! started off its rods (Φ(0) = (0.0506, −0.0494), accepted as given). The method imposes
//! the rows' acceleration exactly, so Φ(t) must follow the linear ODE up to the Taylor
//! step's O(h); and the off-diagonal entries decide stability: critically damped
//! diagonals (2α = 4, β² = 4) with the coupling K_p = [[4, 8], [8, 4]] (eigenvalues 12 and
//! −4) make one mode grow as e^{(−2 + √8)t} = e^{0.828t}. This is the seed's "coupling
//! problem" and why it recommends diagonal gains.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use common::Case;
use driftlab_core::{RunStatus, SystemRef};

const START: &str =
    "links = 2\ninitial = { q = [1.025, 0.0, 2.0, 0.0], v = [0.0, 0.0, 0.0, 0.0], inconsistent = \"accept\" }";

/// Φ at the recorded states (every 0.1 s) of a Baumgarte run with these gain matrices.
fn violations(k_p: &str, k_d: &str, h: f64, t_end: f64) -> Vec<[f64; 2]> {
    let params = format!("gain_matrices = {{ k_p = {k_p}, k_d = {k_d} }}");
    let run = Case::new("planar-chain", "baumgarte", h, t_end)
        .problem_params(START)
        .params(&params)
        .sampled(0.1)
        .run();
    assert_eq!(run.status, RunStatus::Ok, "{params}");
    let p = driftlab_problems::build("planar-chain", &START.parse().unwrap()).unwrap();
    let SystemRef::Mechanical(s) = p.as_system() else {
        panic!("planar-chain is mechanical")
    };
    run.states
        .iter()
        .map(|st| {
            let mut phi = [0.0; 2];
            s.constraints(st.t, &st.q, &mut phi);
            phi
        })
        .collect()
}

/// The linear error ODE `e'' = −K_d e' − K_p e`, e(0) = Φ(0), e'(0) = 0, by classical RK4
/// with step 1e-4, sampled every 0.1 s.
fn linear_ode(
    k_p: [[f64; 2]; 2], k_d: [[f64; 2]; 2], e0: [f64; 2], samples: usize,
) -> Vec<[f64; 2]> {
    let rhs = |y: [f64; 4]| {
        let (e, d) = ([y[0], y[1]], [y[2], y[3]]);
        let acc =
            |r: usize| -(k_d[r][0] * d[0] + k_d[r][1] * d[1] + k_p[r][0] * e[0] + k_p[r][1] * e[1]);
        [d[0], d[1], acc(0), acc(1)]
    };
    let add =
        |y: [f64; 4], k: [f64; 4], s: f64| std::array::from_fn::<f64, 4, _>(|i| y[i] + s * k[i]);
    let h = 1e-4;
    let mut y = [e0[0], e0[1], 0.0, 0.0];
    let mut out = vec![e0];
    for _ in 1..samples {
        for _ in 0..1000 {
            let k1 = rhs(y);
            let k2 = rhs(add(y, k1, h / 2.0));
            let k3 = rhs(add(y, k2, h / 2.0));
            let k4 = rhs(add(y, k3, h));
            y = std::array::from_fn(|i| {
                y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
            });
        }
        out.push([y[0], y[1]]);
    }
    out
}

fn max_deviation(a: &[[f64; 2]], b: &[[f64; 2]]) -> f64 {
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| [(x[0] - y[0]).abs(), (x[1] - y[1]).abs()])
        .fold(0.0, f64::max)
}

/// Measured: max |Φ − e| over [0, 2] = 7.64e-3 at h = 1e-3 and 7.60e-4 at h = 1e-4
/// (order 1.00), against |Φ(0)| = 0.051: the gap is the Taylor step's own drift.
#[test]
fn coupled_gains_give_the_coupled_error_dynamics_at_first_order() {
    let (k_p, k_d) = ([[4.0, 2.0], [1.0, 4.0]], [[4.0, 1.0], [0.0, 4.0]]);
    let mut deviations = Vec::new();
    for h in [1e-3, 1e-4] {
        let run = violations(
            "[[4.0, 2.0], [1.0, 4.0]]",
            "[[4.0, 1.0], [0.0, 4.0]]",
            h,
            2.0,
        );
        let ode = linear_ode(k_p, k_d, run[0], run.len());
        deviations.push(max_deviation(&run, &ode));
    }
    let order = (deviations[0] / deviations[1]).log10();
    assert!(
        (order - 1.0).abs() < 0.1,
        "order {order}, deviations {deviations:?}"
    );
    assert!(
        deviations[1] < 1e-3,
        "h = 1e-4: max |Φ − e| = {:e}",
        deviations[1]
    );
}

/// Measured at h = 1e-4: the coupled gains take max|Φ| from 0.0506 to 0.512 in 3 s (the
/// linear ODE: 0.512, max deviation 7.8e-4); the same diagonals without the coupling
/// decay to (1 + 2t)e^{−2t} ≈ 0.017 of the start.
#[test]
fn a_coupling_with_critically_damped_diagonals_is_unstable() {
    let norm = |e: &[f64; 2]| e[0].abs().max(e[1].abs());
    let (k_p, k_d) = ([[4.0, 8.0], [8.0, 4.0]], [[4.0, 0.0], [0.0, 4.0]]);
    let run = violations(
        "[[4.0, 8.0], [8.0, 4.0]]",
        "[[4.0, 0.0], [0.0, 4.0]]",
        1e-4,
        3.0,
    );
    let ode = linear_ode(k_p, k_d, run[0], run.len());
    let (start, end) = (norm(&run[0]), norm(run.last().unwrap()));
    assert!(end > 8.0 * start, "coupled: |Φ| {start:e} → {end:e}");
    assert!(
        max_deviation(&run, &ode) < 1e-3,
        "coupled: off the linear ODE"
    );
    let diagonal = violations(
        "[[4.0, 0.0], [0.0, 4.0]]",
        "[[4.0, 0.0], [0.0, 4.0]]",
        1e-4,
        3.0,
    );
    let end = norm(diagonal.last().unwrap());
    assert!(end < 0.05 * start, "diagonal: |Φ| {start:e} → {end:e}");
}
