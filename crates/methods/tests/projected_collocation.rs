//! `gauss-index2` (issue 32 W19): Gauss collocation on the index-2 form, bare and with
//! Ascher & Petzold's projection, against theory — the bare method's order reduction in
//! v, its exact energy on the pendulum, the projection's velocity constraint, and the
//! position drift that only a post-projection removes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;
use common::{slope, Case};
use driftlab_core::SummaryMetrics;
use proptest::prelude::*;

/// The horizontally released pendulum over [0, 2] with `gauss-index2` (parameters
/// `params`) at step `h`.
fn pendulum(params: &str, h: f64) -> SummaryMetrics {
    Case::new("pendulum", "gauss-index2", h, 2.0)
        .problem_params("theta0_deg = 90.0")
        .params(params)
        .ok()
}

/// Observed orders of v over `hs` for `params`.
fn order_v(params: &str, hs: &[f64]) -> f64 {
    let errs: Vec<f64> = hs.iter().map(|&h| pendulum(params, h).err_v).collect();
    slope(hs, &errs)
}

/// Without the projection, the end point of a Gauss step leaves Φ_q v = 0 and the
/// velocity converges with order s + 1 for odd s and s for even s (R(∞) = (−1)^s; Hairer &
/// Wanner II §VII.4, index-2 convergence of Runge–Kutta methods); with it, with 2s (the
/// superconvergence of projected collocation, Ascher & Petzold 1991).
#[test]
fn the_projection_restores_order_2s_in_v() {
    let hs = [0.005, 0.01, 0.02, 0.04];
    for (s, bare) in [(1, 2.0), (2, 2.0)] {
        let p = order_v(&format!("stages = {s}\nprojected = false"), &hs);
        assert!(
            (p - bare).abs() < 0.2,
            "s = {s} bare: order {p:.2}, theory {bare}"
        );
        let p = order_v(&format!("stages = {s}"), &hs);
        let want = 2.0 * s as f64;
        assert!(
            (p - want).abs() < 0.2,
            "s = {s} projected: order {p:.2}, theory {want}"
        );
    }
    // s = 3: bare s + 1 = 4, projected 6 (errors above round-off only for h ≥ 1.5e-2).
    let hs3 = [0.015, 0.025, 0.04, 0.06];
    let p = order_v("stages = 3\nprojected = false", &hs3);
    assert!((p - 4.0).abs() < 0.2, "s = 3 bare: order {p:.2}, theory 4");
    let p = order_v("stages = 3", &hs3);
    assert!(
        (p - 6.0).abs() < 0.25,
        "s = 3 projected: order {p:.2}, theory 6"
    );
}

/// The drift of Φ under the internal projection is the global error of q, order 2s on
/// Andrews' trigonometric constraints; post-projection holds Φ at its tolerance.
#[test]
fn internal_projection_drifts_in_phi_at_order_2s_and_post_projection_does_not() {
    let hs = [1e-4, 5e-5, 2.5e-5];
    let drift: Vec<f64> = hs
        .iter()
        .map(|&h| {
            Case::new("andrews", "gauss-index2", h, 0.03)
                .params("stages = 2")
                .ok()
                .max_pos_residual
        })
        .collect();
    let p = slope(&hs, &drift);
    assert!(
        (p - 4.0).abs() < 0.2,
        "drift order {p:.2} ({drift:?}), theory 2s = 4"
    );
    assert!(
        drift[0] > 1e3 * 1e-13,
        "drift {:.1e} is not above round-off",
        drift[0]
    );
    let post = Case::new("andrews", "gauss-index2", 1e-4, 0.03)
        .params("stages = 2")
        .projection("tol = 1e-13\nacceleration = false")
        .ok();
    assert!(
        post.max_pos_residual <= 1e-13,
        "post-projected ‖Φ‖ {:.1e}",
        post.max_pos_residual
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// On the pendulum the energy ½m|v|² + m g y is quadratic and its derivative, −λ q·v
    /// times 2, vanishes at every stage; collocation at Gauss points then keeps it exactly
    /// (the degree-2s polynomial E(u(t)) has its derivative integrated exactly by the
    /// s-point Gauss rule; GNI §IV.2). The projection keeps no such invariant.
    #[test]
    fn unprojected_gauss_keeps_the_pendulum_energy_to_round_off(
        theta in 10.0f64..170.0, h in 0.01f64..0.08, s in 1usize..=3,
    ) {
        let sum = Case::new("pendulum", "gauss-index2", h, 2.0)
            .problem_params(&format!("theta0_deg = {theta}"))
            .params(&format!("stages = {s}\nprojected = false"))
            .ok();
        prop_assert!(sum.max_energy_rel_error < 1e-12, "energy error {:.1e}", sum.max_energy_rel_error);
        prop_assert!(sum.max_pos_residual < 1e-12, "‖Φ‖ {:.1e}", sum.max_pos_residual);
    }

    /// After every projected step Φ_q v + Φ_t = 0 holds to round-off, on the rheonomic rod
    /// (Φ_t ≠ 0) and the knife edge (a nonholonomic row).
    #[test]
    fn the_projection_holds_the_velocity_constraint(h in 0.005f64..0.05, s in 1usize..=3) {
        for problem in ["rotating-rod", "knife-edge"] {
            let run = |params: &str| {
                Case::new(problem, "gauss-index2", h, 1.0).params(params).ok().max_vel_residual
            };
            let projected = run(&format!("stages = {s}"));
            prop_assert!(projected < 1e-12, "{problem}: ‖Φ_q v + Φ_t‖ {projected:.1e}");
        }
    }
}

/// `max |y − ρΦ_hᵏρΦ_hᵏ y|` over q and v for `gauss-index2` with `params` on `problem`
/// (ρ(q, v) = (q, −v); GNI §V.1, Theorem 1.5).
fn reversal_defect(problem: &str, pparams: &str, params: &str, h: f64, k: usize) -> f64 {
    let p = driftlab_problems::build(problem, &pparams.parse().unwrap()).unwrap();
    let m = driftlab_methods::build("gauss-index2", &params.parse().unwrap(), None).unwrap();
    let sys = p.as_system();
    let mut y = sys.initial_state();
    let mut stepper = sys
        .start(m.as_ref(), &mut y, &driftlab_core::StartOptions::default())
        .unwrap();
    let y0 = y.clone();
    for leg in 0..2 {
        for _ in 0..k {
            stepper.step(&mut y, h).unwrap();
            stepper.accept();
        }
        y.v.iter_mut().for_each(|v| *v = -*v);
        if leg == 0 {
            stepper.refresh(&mut y).unwrap();
        }
    }
    let dq = y.q.iter().zip(&y0.q).map(|(a, b)| (a - b).abs());
    let dv = y.v.iter().zip(&y0.v).map(|(a, b)| (a - b).abs());
    dq.chain(dv).fold(0.0, f64::max)
}

/// The unprojected method declares itself symmetric and is reversible to the Newton
/// tolerance; the Ascher–Petzold projection at the step's end is not symmetric (GNI
/// §V.4.1), and the projected method says so: its defect is far above the bare one's.
#[test]
fn the_unprojected_method_is_reversible_and_the_projected_one_is_not() {
    for (problem, pparams, h, k) in [
        ("pendulum", "theta0_deg = 90.0", 0.05, 40),
        ("planar-chain", "links = 3\ntheta0_deg = 60.0", 0.02, 20),
    ] {
        for s in [1, 2, 3] {
            let bare_params = format!("stages = {s}\nprojected = false");
            let bare = reversal_defect(problem, pparams, &bare_params, h, k);
            let projected = reversal_defect(problem, pparams, &format!("stages = {s}"), h, k);
            let declared = |p: &str| {
                let m = driftlab_methods::build("gauss-index2", &p.parse().unwrap(), None);
                m.unwrap().info().symmetric
            };
            assert!(declared(&bare_params) && !declared(&format!("stages = {s}")));
            assert!(bare <= 1e-9, "{problem} s = {s}: bare defect {bare:e}");
            assert!(
                projected >= 100.0 * bare.max(1e-15),
                "{problem} s = {s}: projected defect {projected:e} vs bare {bare:e}"
            );
        }
    }
}
