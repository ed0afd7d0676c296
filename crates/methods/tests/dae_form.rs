//! The dense Jacobian of the constant-mass first-order form ([`DaeForm::jacobian`]:
//! forward differences in two blocks, exact elsewhere) against central differences of
//! `F` over every column, on problems with a configuration-dependent mass matrix and
//! velocity-dependent forces (Andrews), a flexible model (Simeon's slider crank) and the
//! pendulum, at a state with non-zero velocities, accelerations and multipliers.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::SystemRef;
use driftlab_methods::dae_form::DaeForm;
use driftlab_problems::build as problem;

/// Central differences with `δ = 1e-6 max(1, |y_j|)`: truncation `O(δ²)` ≈ 1e-12 and
/// round-off ≈ ε/δ ≈ 1e-10 relative to the entries, against the forward differences'
/// `O(√ε)` ≈ 1e-8 in `DaeForm::jacobian` — so a relative agreement of 1e-6 checks every
/// block while a wrong block (an O(1) error) fails it.
fn check(pid: &str, params: &str) {
    let p = problem(pid, &params.parse().unwrap()).unwrap();
    let SystemRef::Mechanical(sys) = p.as_system() else {
        panic!("{pid} is mechanical");
    };
    let mut form = DaeForm::new(sys);
    let dim = form.dim();
    let mut state = sys.initial_state();
    // Move off the initial state so that every block is exercised.
    for (k, v) in state.v.iter_mut().enumerate() {
        *v += 0.3 + 0.1 * k as f64;
    }
    for (k, a) in state.a.iter_mut().enumerate() {
        *a += 0.7 - 0.05 * k as f64;
    }
    for (k, l) in state.lambda.iter_mut().enumerate() {
        *l += 0.2 + 0.1 * k as f64;
    }
    let mut y = vec![0.0; dim];
    form.pack(&state, &mut y);
    let t = 0.01;
    let mut f0 = vec![0.0; dim];
    form.eval(sys, t, &y, &mut f0);
    let mut jac = vec![0.0; dim * dim];
    form.jacobian(sys, t, &y, &f0, &mut jac);
    let (mut fp, mut fm) = (vec![0.0; dim], vec![0.0; dim]);
    let scale = jac.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    let mut worst = (0.0, 0, 0);
    for j in 0..dim {
        let delta = 1e-6 * y[j].abs().max(1.0);
        let mut yp = y.clone();
        yp[j] += delta;
        form.eval(sys, t, &yp, &mut fp);
        yp[j] -= 2.0 * delta;
        form.eval(sys, t, &yp, &mut fm);
        for i in 0..dim {
            let fd = (fp[i] - fm[i]) / (2.0 * delta);
            let gap = (jac[i * dim + j] - fd).abs() / scale;
            if gap > worst.0 {
                worst = (gap, i, j);
            }
        }
    }
    assert!(
        worst.0 < 1e-6,
        "{pid}: ∂F/∂y differs from central differences by {:.2e} (relative to max |J| = \
         {scale:.2e}) at row {}, column {}",
        worst.0,
        worst.1,
        worst.2
    );
}

#[test]
fn jacobian_matches_central_differences_on_andrews() {
    check("andrews", "");
}

#[test]
fn jacobian_matches_central_differences_on_the_slider_crank() {
    check("slider-crank", "");
}

#[test]
fn jacobian_matches_central_differences_on_the_pendulum() {
    check("pendulum", "");
}
