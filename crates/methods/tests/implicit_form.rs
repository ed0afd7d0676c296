//! Fully implicit systems F(t, y, y′) = 0 (issue 32 D4): implicit Euler, BDF-k and Radau
//! IIA on `chain-angles-implicit` — their orders against the exact pendulum, and the same
//! numbers as the mass-matrix form of the same chain (`planar-chain-angles`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;
use common::{slope, Case};
use driftlab_core::SummaryMetrics;

const PENDULUM: &str = "links = 1\ntheta0_deg = 90.0";

fn implicit(method: &str, params: &str, h: f64) -> SummaryMetrics {
    Case::new("chain-angles-implicit", method, h, 2.0)
        .problem_params(PENDULUM)
        .params(params)
        .ok()
}

/// BDF-k on F(t, y, (1/h)Σα_j y_{n+1−j}) = 0 has order k, k = 1 … 4 (Brenan, Campbell &
/// Petzold 1996, §3.1); implicit Euler (Radau IIA s = 1) order 1 and Radau IIA s = 3
/// order 5 on an implicit ODE (HW II §VI.1, §IV.5).
#[test]
fn bdf_and_radau_keep_their_orders_on_the_implicit_form() {
    let hs = [2.5e-3, 5e-3, 1e-2, 2e-2];
    for k in 1..=4 {
        let errs: Vec<f64> = hs
            .iter()
            .map(|&h| implicit("bdf", &format!("order = {k}"), h).err_q)
            .collect();
        let p = slope(&hs, &errs);
        assert!(
            (p - k as f64).abs() < 0.15,
            "BDF{k}: order {p:.3} ({errs:?})"
        );
    }
    let errs: Vec<f64> = hs
        .iter()
        .map(|&h| implicit("implicit-euler", "", h).err_q)
        .collect();
    let p = slope(&hs, &errs);
    assert!(
        (p - 1.0).abs() < 0.15,
        "implicit Euler: order {p:.3} ({errs:?})"
    );
    let hs = [2e-2, 3e-2, 4.5e-2, 7e-2];
    let errs: Vec<f64> = hs.iter().map(|&h| implicit("radau", "", h).err_q).collect();
    let p = slope(&hs, &errs);
    assert!(
        (p - 5.0).abs() < 0.15,
        "Radau s = 3: order {p:.3} ({errs:?})"
    );
}

/// Both forms discretize the same ODE with the same formulas, so their errors agree: the
/// implicit form's y = (θ, ω), hence its err_q is the mass-matrix form's max(err_q, err_v)
/// (to the Newton tolerances and the start steps: 1e-3 relative, at steps where the
/// errors, 1e-6 … 1e-3, stand far above the Newton tolerances summed over the run).
#[test]
fn the_implicit_form_gives_the_mass_matrix_forms_solution() {
    for (method, params, h) in [
        ("bdf", "order = 3", 1e-2),
        ("radau", "", 5e-2),
        ("implicit-euler", "", 1e-2),
    ] {
        let imp = implicit(method, params, h);
        let mech = Case::new("planar-chain-angles", method, h, 2.0)
            .problem_params(PENDULUM)
            .params(params)
            .ok();
        let want = mech.err_q.max(mech.err_v);
        let rel = (imp.err_q - want).abs() / want;
        assert!(
            rel < 1e-3,
            "{method}: implicit {:.6e}, mass-matrix {want:.6e}",
            imp.err_q
        );
        // The residual column is ‖F(t, y, y′)‖∞ of the stored pair: Newton-small.
        assert!(
            imp.max_pos_residual < 1e-8,
            "{method}: ‖F‖ {:.1e}",
            imp.max_pos_residual
        );
    }
}

/// A method without the form is a failed row naming it, not a panic or a missing row.
#[test]
fn methods_without_the_form_refuse_it() {
    let r = Case::new("chain-angles-implicit", "rattle", 1e-2, 1.0)
        .problem_params(PENDULUM)
        .run();
    let driftlab_core::RunStatus::Failed { error, .. } = r.status else {
        panic!("rattle ran a fully implicit system");
    };
    let message = error.to_string();
    assert!(message.contains("fully implicit"), "{message}");
}

/// After `refresh` (the state changed from outside) BDF starts again from the new state
/// alone: stepping from a state after refresh gives what a fresh start from that state
/// gives, bit for bit, not a step that mixes in the old history.
#[test]
fn bdf_refresh_forgets_the_history() {
    let p = driftlab_problems::build("chain-angles-implicit", &PENDULUM.parse().unwrap()).unwrap();
    let m = driftlab_methods::build("bdf", &"order = 3".parse().unwrap(), None).unwrap();
    let sys = p.as_system();
    let opts = driftlab_core::StartOptions::default();
    let (h, mut y) = (1e-2, sys.initial_state());
    let mut used = sys.start(m.as_ref(), &mut y, &opts).unwrap();
    for _ in 0..10 {
        used.step(&mut y, h).unwrap();
        used.accept();
    }
    used.refresh(&mut y).unwrap();
    let mut fresh_state = y.clone();
    let mut fresh = sys.start(m.as_ref(), &mut fresh_state, &opts).unwrap();
    for _ in 0..5 {
        used.step(&mut y, h).unwrap();
        used.accept();
        fresh.step(&mut fresh_state, h).unwrap();
        fresh.accept();
    }
    assert_eq!(y.q, fresh_state.q);
    assert_eq!(y.v, fresh_state.v);
}
