//! Seed 001 exercise 7 claims that nonholonomic constraints break energy conservation
//! "even without external forces", because the constraint power `λᵀ A q'` is nonzero over
//! a finite step. For ideal constraints it is not so: `A(q) q' = 0` along the motion makes
//! the power of the constraint force `−Aᵀλ` exactly `−λᵀ A q' = 0` (Neimark & Fufaev,
//! Dynamics of Nonholonomic Systems, 1972, ch. III; Bloch, Nonholonomic Mechanics and
//! Control, 2003, §5.2 "energy is conserved for nonholonomic systems with ideal
//! constraints"). Measured on the knife edge on an incline (conservative, one
//! nonholonomic row): the energy error of every method that runs it is a discretization
//! error, falling with h at (at least) the method's order — the conservation holds.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{drive, MetricsObserver, Observer, RunStatus, Schedule};
use driftlab_methods::build;
use driftlab_problems::build as problem;

fn energy_error(method: &str, params: &str, h: f64) -> f64 {
    let p = problem("knife-edge", &toml::Table::new()).unwrap();
    let mut m = build(method, &params.parse().unwrap(), None).unwrap();
    let mut obs = MetricsObserver::new(0);
    let out = drive(
        p.as_system(),
        m.as_mut(),
        &Schedule::fixed(h, 10.0),
        &mut [&mut obs as &mut dyn Observer],
    );
    assert_eq!(out.status, RunStatus::Ok, "{method}");
    obs.summary.max_energy_rel_error
}

#[test]
fn ideal_nonholonomic_constraints_conserve_energy_up_to_the_discretization() {
    for (method, params, min_order) in [
        ("gauss", "stages = 2", 1.8),
        ("baumgarte", "xi = 1.0\nomega_n = 10.0", 0.9),
        ("taylor", "", 0.9),
    ] {
        let (coarse, fine) = (
            energy_error(method, params, 1e-2),
            energy_error(method, params, 1e-3),
        );
        let order = (coarse / fine).log10();
        println!("{method}: energy error {coarse:.3e} (h = 1e-2), {fine:.3e} (h = 1e-3), order {order:.2}");
        assert!(order >= min_order, "{method}: energy error order {order}");
    }
}
