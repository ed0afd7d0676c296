//! Reversibility (issue 14 item 2): a method that declares itself symmetric, applied to a
//! ρ-reversible system (ρ(q, v) = (q, −v); the pendulum and the planar chain under
//! gravity), satisfies ρ Φ_h ρ Φ_h = id — k steps forward, velocities reversed, k steps
//! forward again and velocities reversed give back the start up to the Newton and
//! projection tolerances (Hairer, Lubich & Wanner, GNI 2nd ed., §V.1, Theorem 1.5 with
//! §V.4.1 for projections). The standard projection after a symmetric method is not
//! symmetric (GNI §V.4.1; Hairer, BIT 40, 2000): its defect is of the size of the local
//! error, far above the tolerance at a large step. Every catalog method that declares
//! itself symmetric is run bare, with the standard projection and with the symmetric one,
//! and each declaration is checked against the measured defect.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{Method, StartOptions, State, SystemForm, SystemRef};
use driftlab_methods::{build, catalog};
use driftlab_problems::build as problem;

fn table(s: &str) -> toml::Table {
    s.parse().expect("valid toml")
}

/// `max |y − ρΦ_hᵏρΦ_hᵏ y|` over q and v, or the error of the step that failed.
fn reversal_defect(
    sys: SystemRef<'_>, m: &dyn Method, start: &State, h: f64, k: usize,
) -> Result<f64, String> {
    let mut y = start.clone();
    let mut m = sys
        .start(m, &mut y, &StartOptions::default())
        .map_err(|e| format!("init: {e}"))?;
    let y0 = y.clone();
    for leg in 0..2 {
        for _ in 0..k {
            m.step(&mut y, h).map_err(|e| e.to_string())?;
            m.accept();
        }
        y.v.iter_mut().for_each(|v| *v = -*v);
        if leg == 0 {
            // ρ maps a consistent state to a consistent one; the method's derived
            // quantities follow the new velocity.
            m.refresh(&mut y).map_err(|e| e.to_string())?;
        }
    }
    let dq = y.q.iter().zip(&y0.q).map(|(a, b)| (a - b).abs());
    let dv = y.v.iter().zip(&y0.v).map(|(a, b)| (a - b).abs());
    Ok(dq.chain(dv).fold(0.0, f64::max))
}

/// The reversal defects of one method on one problem: bare, with the standard projection,
/// with the symmetric projection (each with the symmetric flag it declares).
struct Defects {
    id: String,
    bare: (bool, f64),
    standard: (bool, f64),
    symmetric: Result<(bool, f64), String>,
}

fn defects(pid: &str, pparams: &str, id: &str, h: f64, k: usize) -> Result<Defects, String> {
    let run = |projection: Option<&str>| -> Result<(bool, f64), String> {
        let p = problem(pid, &table(pparams)).map_err(|e| e.to_string())?;
        let proj = projection.map(table);
        let mut m = build(id, &toml::Table::new(), proj.as_ref()).map_err(|e| e.to_string())?;
        let start = p.as_system().initial_state();
        let d = reversal_defect(p.as_system(), m.as_mut(), &start, h, k)?;
        Ok((m.info().symmetric, d))
    };
    Ok(Defects {
        id: id.to_string(),
        bare: run(None)?,
        standard: run(Some("tol = 1e-13"))?,
        symmetric: run(Some("tol = 1e-13\nsymmetric = true")),
    })
}

/// Checks one method's three defects; returns how many declarations were checked.
fn check(pid: &str, d: &Defects) -> usize {
    let id = &d.id;
    let (declared, bare) = d.bare;
    assert!(declared, "{id} is in the symmetric list");
    assert!(
        bare <= 1e-9,
        "{id} on {pid} declares itself symmetric: defect {bare:e}"
    );
    let (standard_symmetric, standard) = d.standard;
    if standard_symmetric {
        // The inner method already ends on both manifolds (RATTLE, Lobatto IIIA–IIIB).
        assert!(
            standard <= 10.0 * bare + 1e-13,
            "{id}+projection on {pid}: {standard:e}"
        );
    } else {
        assert!(
            standard >= 100.0 * bare.max(1e-15),
            "{id}+projection on {pid} declares itself not symmetric: defect {standard:e} vs {bare:e} bare"
        );
    }
    match &d.symmetric {
        Ok((flag, sym)) => {
            assert!(
                flag,
                "{id} + symmetric projection must declare itself symmetric"
            );
            assert!(
                *sym <= 10.0 * bare + 1e-13,
                "{id} + symmetric projection on {pid}: {sym:e}"
            );
        }
        // Refused at init: the inner method keeps memory (crank-nicolson-pendulum keeps μ).
        Err(e) if e.starts_with("init:") && e.contains("not restartable") => {}
        // Gauss on the index-3 form with s odd has R(∞) = −1: the stage constraints undo
        // the start perturbation's normal part (q̂ ⊥-part = R(∞)·c), so g(y_{n+1}) no longer
        // depends on c at leading order (d g/d c ≈ Φ_q(R(∞)N + N) = 0) and the iteration
        // cannot converge — a measured failure, recorded as such.
        Err(e) if id == "gauss-index3" && e.contains("projection did not converge") => {}
        Err(e) => panic!("{id} + symmetric projection on {pid}: {e}"),
    }
    3
}

#[test]
fn declared_symmetric_methods_are_reversible_and_the_projection_flag_follows_the_variant() {
    let mut checked = 0;
    for (pid, pparams, h, k) in [
        ("pendulum", "theta0_deg = 90.0", 0.05, 40),
        ("planar-chain", "links = 3\ntheta0_deg = 60.0", 0.02, 20),
    ] {
        for entry in catalog() {
            let base = (entry.info)();
            if !base.symmetric || !base.forms.contains(&SystemForm::Mechanical) {
                continue;
            }
            match defects(pid, pparams, entry.id, h, k) {
                Ok(d) => {
                    println!(
                        "{pid:12} {:26} bare {:.2e}  standard {:.2e}  symmetric {:?}",
                        d.id, d.bare.1, d.standard.1, d.symmetric
                    );
                    checked += check(pid, &d);
                }
                // Closed forms for the pendulum only (crank-nicolson-pendulum) refuse the
                // chain; every symmetric method runs on the pendulum.
                Err(e) => assert_ne!(pid, "pendulum", "{}: {e}", entry.id),
            }
        }
    }
    assert!(checked >= 24, "checked {checked}");
}
