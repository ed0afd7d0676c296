//! The pendulum's exact solution knows its limits (issue 27): evaluated in f64 it stays
//! within its declared accuracy ([`Pendulum::exact_accuracy`]) against 40-digit values
//! (`tests/data/pendulum_mpmath.txt`, written by `pendulum_mpmath.py` with mpmath) from a
//! small swing to a release 10⁻⁸° below the upright, over 21 periods; and a release closer
//! to the upright than its domain allows is declared outside it, so that no run is
//! compared with it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{MechanicalSystem, ReferenceDomain};
use driftlab_problems::planar::pendulum::{Pendulum, PendulumParams};

fn pendulum(theta0_deg: f64) -> Pendulum {
    let p = PendulumParams {
        theta0_deg,
        ..PendulumParams::default()
    };
    Pendulum::new(p, "pendulum").unwrap()
}

/// The angle of the exact solution at `t`, from its Cartesian position.
fn angle(p: &Pendulum, t: f64) -> f64 {
    let e = p.exact(t).unwrap();
    e.q[0].atan2(-e.q[1])
}

#[test]
fn the_exact_solution_stays_within_its_declared_accuracy_up_to_the_upright() {
    let text = include_str!("data/pendulum_mpmath.txt");
    let mut worst: f64 = f64::INFINITY;
    for line in text.lines() {
        let f: Vec<f64> = line
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        let (theta0, t, want) = (f[0], f[1], f[2]);
        let p = pendulum(theta0);
        let tau = std::f64::consts::TAU;
        let d = angle(&p, t) - want;
        let err = d.abs().min((d + tau).abs()).min((d - tau).abs());
        let bound = p.exact_accuracy(t);
        assert!(
            err <= bound,
            "θ₀ = {theta0}°, t = {t}: error {err:.3e} above the declared {bound:.3e}"
        );
        if err > 0.0 {
            worst = worst.min(bound / err);
        }
        // Inside the domain exactly while the bound stays below 1e-4 ℓ (ℓ = 1).
        let valid = matches!(p.reference_domain(t), ReferenceDomain::Valid { .. });
        assert_eq!(
            valid,
            bound <= 1e-4,
            "θ₀ = {theta0}°, t = {t}, bound {bound:.3e}"
        );
    }
    assert!(worst >= 1.0, "smallest margin {worst}");
}

#[test]
fn a_release_at_the_upright_is_outside_the_domain_with_the_numbers() {
    // 1e-10° below the upright: k′ = 8.7e-13, the bound 1e-3 m.
    for theta0 in [179.999_999_999_9, -179.999_999_999_9, 180.0 - 2.9e-14] {
        match pendulum(theta0).reference_domain(10.0) {
            ReferenceDomain::Outside(why) => {
                assert!(why.contains("k′ = cos(θ₀/2) = "), "{why}");
            }
            other => panic!("θ₀ = {theta0}°: {other:?}"),
        }
    }
    // A valid release over a long enough run leaves the domain too: the phase error
    // grows with ωt.
    assert!(matches!(
        pendulum(90.0).reference_domain(1e14),
        ReferenceDomain::Outside(_)
    ));
}

#[test]
fn an_off_manifold_start_has_no_exact_solution_to_judge() {
    let p = PendulumParams {
        phi0: 0.1,
        ..PendulumParams::default()
    };
    let p = Pendulum::new(p, "pendulum").unwrap();
    assert!(p.exact(1.0).is_none());
    assert_eq!(p.reference_domain(10.0), ReferenceDomain::Absent);
}
