//! Invariant suite over the catalog (issue 3): a method that declares a constraint level
//! enforced keeps that residual at solver tolerance over 10⁴ steps, on the pendulum and on
//! a 3-link chain; symplectic methods keep the energy error bounded (no drift) over 10⁵
//! steps on the pendulum.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{drive, MetricsObserver, Observer, RunStatus, Schedule, SystemForm};
use driftlab_methods::{build, catalog};
use driftlab_problems::build as problem;

fn table(s: &str) -> toml::Table {
    s.parse().expect("valid toml")
}

#[test]
fn declared_constraint_levels_hold_over_ten_thousand_steps() {
    let mut checked = 0;
    for (pid, pparams, scale) in [
        ("pendulum", "theta0_deg = 120.0", 1.0),
        ("planar-chain", "links = 3\ntheta0_deg = 60.0", 3.0),
    ] {
        for entry in catalog() {
            let base = (entry.info)();
            if !base.forms.contains(&SystemForm::Mechanical) {
                continue;
            }
            for projection in [None, Some(table("tol = 1e-12"))] {
                let p = problem(pid, &table(pparams)).unwrap();
                let mut m = build(entry.id, &toml::Table::new(), projection.as_ref()).unwrap();
                let info = m.info();
                let mut obs = MetricsObserver::new(0);
                let out = drive(
                    p.as_system(),
                    m.as_mut(),
                    &Schedule::fixed(1e-3, 10.0),
                    &mut [&mut obs as &mut dyn Observer],
                );
                if let RunStatus::Failed { error, .. } = &out.status {
                    // Structure checks (pendulum-only closed forms on the chain) are not
                    // failures of the method. Methods that declare no convergence order
                    // (penalty, hybrid, gauss-index3: not convergent to the DAE, or
                    // measured only) may fail on the chaotic chain; their failures are rows
                    // in the experiments, not broken invariants.
                    if base.orders.q.is_none() {
                        continue;
                    }
                    assert_eq!(
                        error.kind(),
                        "incompatible",
                        "{} on {pid}: {error}",
                        info.id
                    );
                    continue;
                }
                let s = obs.summary;
                // Tolerances: Newton/projection tolerances are ≤ 1e-12 on ‖Φ‖∞ or on the
                // update; allow round-off growth with the size of the quantities (ℓ² ~ scale,
                // |γ| ~ |v|² ~ 10 scale).
                if info.enforces.position {
                    assert!(
                        s.max_pos_residual <= 1e-10 * scale,
                        "{} on {pid}: ‖Φ‖ = {:e}",
                        info.id,
                        s.max_pos_residual
                    );
                    checked += 1;
                }
                if info.enforces.velocity {
                    assert!(
                        s.max_vel_residual <= 1e-10 * scale,
                        "{} on {pid}: ‖Φ_q v‖ = {:e}",
                        info.id,
                        s.max_vel_residual
                    );
                    checked += 1;
                }
                if info.enforces.acceleration {
                    assert!(
                        s.max_acc_residual <= 1e-9 * scale,
                        "{} on {pid}: ‖Φ_q a − γ‖ = {:e}",
                        info.id,
                        s.max_acc_residual
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 20, "only {checked} level checks");
}

/// Symplectic methods: no energy drift over 10⁵ steps (HLW GNI §IX.8: bounded energy error
/// O(h^p) over exponentially long times). The max error over the last tenth of the run is
/// no larger than over the first tenth (up to 10 %), and both are O(h²).
#[test]
fn symplectic_methods_keep_energy_bounded_over_1e5_steps() {
    let mut checked = 0;
    for entry in catalog() {
        let info = (entry.info)();
        if !info.symplectic {
            continue;
        }
        let p = problem("pendulum", &table("theta0_deg = 150.0")).unwrap();
        let mut m = build(entry.id, &toml::Table::new(), None).unwrap();
        let mut rec = MetricsObserver::new(1);
        let h = 1e-2;
        let out = drive(
            p.as_system(),
            m.as_mut(),
            &Schedule::fixed(h, 1000.0),
            &mut [&mut rec as &mut dyn Observer],
        );
        assert_eq!(out.status, RunStatus::Ok, "{}", info.id);
        assert_eq!(out.steps, 100_000);
        let e: Vec<f64> = rec.trace.iter().map(|m| m.energy_rel_error).collect();
        let tenth = e.len() / 10;
        let first = e[..tenth].iter().copied().fold(0.0, f64::max);
        let last = e[e.len() - tenth..].iter().copied().fold(0.0, f64::max);
        assert!(
            last <= 1.1 * first,
            "{}: energy error grows from {first:e} to {last:e}",
            info.id
        );
        assert!(
            first < 10.0 * h * h,
            "{}: energy error {first:e} not O(h²)",
            info.id
        );
        checked += 1;
    }
    assert!(checked >= 1, "no symplectic method in the catalog");
}

/// Energy projection (seed 004 §3.2.4, sequential: scale v after the constraint
/// projections) holds the energy to round-off, whatever the wrapped method, while the
/// constraint levels stay at solver tolerance — except where velocity scaling cannot act:
/// a strongly dissipative method (implicit Euler loses more than 1 % of the energy here)
/// reaches turning points below the initial energy with T ≈ 0, where no scaling of v
/// restores H (that needs a position correction: the coupled strategy). For those the
/// test asserts the energy error is still cut by two orders of magnitude.
#[test]
fn energy_projection_holds_energy_to_round_off() {
    let run = |id: &str, proj: &str| {
        let p = problem("bertolazzi-pendulum", &toml::Table::new()).unwrap();
        let mut m = build(id, &toml::Table::new(), Some(&table(proj))).unwrap();
        let mut obs = MetricsObserver::new(0);
        let out = drive(
            p.as_system(),
            m.as_mut(),
            &Schedule::fixed(1e-2, 20.0),
            &mut [&mut obs as &mut dyn Observer],
        );
        (out.status, obs.summary)
    };
    let mut checked = 0;
    for entry in catalog() {
        let base = (entry.info)();
        if !base.forms.contains(&SystemForm::Mechanical) {
            continue;
        }
        let (status, with) = run(entry.id, "tol = 1e-12\nenergy = true");
        if status != RunStatus::Ok {
            // An unstable inner method (penalty at its default stiffness and this h)
            // fails on its own; that is recorded by its own experiment.
            continue;
        }
        let (_, without) = run(entry.id, "tol = 1e-12");
        assert!(
            with.max_pos_residual <= 1e-12 && with.max_vel_residual < 1e-12,
            "{}: residuals {:e} {:e}",
            base.id,
            with.max_pos_residual,
            with.max_vel_residual
        );
        if without.max_energy_rel_error > 1e-2 {
            assert!(
                with.max_energy_rel_error < 1e-2 * without.max_energy_rel_error,
                "{}: {:e} vs {:e}",
                base.id,
                with.max_energy_rel_error,
                without.max_energy_rel_error
            );
        } else {
            assert!(
                with.max_energy_rel_error < 1e-13,
                "{}: energy error {:e}",
                base.id,
                with.max_energy_rel_error
            );
        }
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} methods checked");
}

/// The coupled energy projection (seed 004: q and v together onto Φ = 0, Φ_q v + Φ_t = 0,
/// H = H₀) holds the energy at its tolerance for every method, including the dissipative
/// implicit Euler at turning points where velocity scaling cannot act.
#[test]
fn coupled_energy_projection_holds_energy_for_every_method() {
    let mut checked = 0;
    for entry in catalog() {
        let base = (entry.info)();
        if !base.forms.contains(&SystemForm::Mechanical) {
            continue;
        }
        let p = problem("bertolazzi-pendulum", &toml::Table::new()).unwrap();
        let proj = table("tol = 1e-12\nenergy = true\nenergy_strategy = \"coupled\"");
        let mut m = build(entry.id, &toml::Table::new(), Some(&proj)).unwrap();
        let mut obs = MetricsObserver::new(0);
        let out = drive(
            p.as_system(),
            m.as_mut(),
            &Schedule::fixed(1e-2, 20.0),
            &mut [&mut obs as &mut dyn Observer],
        );
        if out.status != RunStatus::Ok {
            continue; // an unstable inner method (penalty at this h) fails on its own
        }
        let s = obs.summary;
        assert!(
            s.max_energy_rel_error <= 1e-12,
            "{}: energy error {:e}",
            base.id,
            s.max_energy_rel_error
        );
        assert!(
            s.max_pos_residual <= 1e-12 && s.max_vel_residual <= 1e-12,
            "{}: residuals {:e} {:e}",
            base.id,
            s.max_pos_residual,
            s.max_vel_residual
        );
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} methods checked");
}
