//! Seed 001 §3.4.4: "for a large violation one projection may not be accurate enough; use
//! the iterative projection q ← q − α J⁺C, where the step factor α ∈ (0, 1] improves
//! robustness". Measured on the 5-link planar chain: starts displaced by δ (every
//! coordinate moved by up to ±δ, link length 1), projected mass-orthogonally onto Φ = 0
//! with α = 1 and α = ½, 200 starts per δ, at most 200 Newton updates.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{MechanicalSystem, SystemRef};
use driftlab_problems::build;
use driftlab_problems::consistency::kkt_at;
use driftlab_solver::{project_position, ConstraintsAt, ProjectionParams};

/// A deterministic uniform number in [−1, 1) (64-bit LCG, Knuth's MMIX constants).
fn uniform(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    ((*state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

/// Over `starts` displaced starts: how many projections converge to ‖Φ‖∞ ≤ 1e-12 within
/// 200 updates, and the median updates of those that do.
fn project_displaced(
    s: &dyn MechanicalSystem, delta: f64, alpha: f64, starts: usize,
) -> (usize, f64) {
    let q0 = s.initial_state().q;
    let mut rng = 0x5eed_u64;
    let mut iterations = Vec::new();
    for _ in 0..starts {
        let mut q: Vec<f64> = q0.iter().map(|x| x + delta * uniform(&mut rng)).collect();
        let (mut kkt, mass) = kkt_at(s, &q0).unwrap();
        let params = ProjectionParams {
            tol: 1e-12,
            max_iter: 200,
            step_factor: alpha,
            linearized: false,
        };
        let mut eval = ConstraintsAt { sys: s, t: 0.0 };
        if let Ok(r) = project_position(&mut kkt, &mass, &mut q, &mut eval, &params) {
            iterations.push(r.iterations as f64);
        }
    }
    iterations.sort_by(f64::total_cmp);
    let median = iterations
        .get(iterations.len() / 2)
        .copied()
        .unwrap_or(f64::NAN);
    (iterations.len(), median)
}

/// Measured (deterministic starts): δ = 0.05: both converge from all 200, α = 1 in a
/// median 6 updates, α = ½ in 37 (linear convergence, error × ½ per update); δ = 0.3:
/// 128 against 200 starts; δ = 1: 26 against 118; δ = 2: 5 against 45. The seed's claim
/// holds: a step factor widens the basin, at the price of quadratic convergence.
#[test]
fn the_step_factor_at_a_large_violation() {
    let p = build("planar-chain", &"links = 5".parse().unwrap()).unwrap();
    let SystemRef::Mechanical(s) = p.as_system() else {
        panic!("planar-chain is mechanical")
    };
    let mut rows = Vec::new();
    for delta in [0.05, 0.3, 1.0, 2.0] {
        let (full, full_it) = project_displaced(s, delta, 1.0, 200);
        let (half, half_it) = project_displaced(s, delta, 0.5, 200);
        eprintln!("δ = {delta}: α = 1 converges {full}/200 (median {full_it} updates), α = ½ {half}/200 ({half_it})");
        rows.push((full, full_it, half, half_it));
    }
    let (full, full_it, half, half_it) = rows[0];
    assert_eq!(
        (full, half),
        (200, 200),
        "small violation: every start converges"
    );
    assert!(
        full_it <= 8.0 && half_it >= 4.0 * full_it,
        "{full_it} vs {half_it} updates"
    );
    for (delta, &(full, _, half, _)) in [0.3, 1.0, 2.0].iter().zip(&rows[1..]) {
        assert!(
            half >= full + 40,
            "δ = {delta}: α = ½ converged {half} times, α = 1 {full}"
        );
    }
    assert!(rows[2].2 >= 3 * rows[2].0, "δ = 1: {:?}", rows[2]);
}
