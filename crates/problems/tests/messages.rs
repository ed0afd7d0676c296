//! Messages name what the user gave (issue 27): every numeric parameter of every catalog
//! problem, set alone to a value at or beyond the edge of what f64 arithmetic can carry
//! (a length whose square underflows, a mass whose products overflow, zero, a negative,
//! NaN), either builds a problem whose initial state and metrics are finite, or is
//! refused with a message that names that parameter — never another one the user did
//! not touch.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::SystemRef;
use driftlab_problems::catalog;

/// The values each numeric parameter is tried with, from its default `d`.
fn extremes(d: f64) -> Vec<f64> {
    let mut v = vec![0.0, -1.0, 1e-200, 1e200, 1e-320, f64::NAN, f64::INFINITY];
    if d != 0.0 {
        v.extend([-d, d * 1e-30, d * 1e30]);
    }
    v
}

/// Whether the built problem's start is usable: its state, Φ and energy finite.
fn finite_start(sys: SystemRef<'_>) -> Result<(), String> {
    let s = sys.initial_state();
    for (field, x) in [("q", &s.q), ("v", &s.v)] {
        if let Some(i) = x.iter().position(|x| !x.is_finite()) {
            return Err(format!("initial {field}[{i}] is not finite"));
        }
    }
    if let SystemRef::Mechanical(m) = sys {
        let mut phi = vec![0.0; m.dims().m];
        m.constraints(s.t, &s.q, &mut phi);
        if phi.iter().any(|x| !x.is_finite()) {
            return Err("Φ(q₀) is not finite".into());
        }
        if m.energy(s.t, &s.q, &s.v).is_some_and(|e| !e.is_finite()) {
            return Err("the initial energy is not finite".into());
        }
    }
    Ok(())
}

#[test]
fn a_refused_parameter_is_the_one_named() {
    let mut wrong = Vec::new();
    let mut tried = 0;
    for entry in catalog() {
        for (key, default) in (entry.defaults)() {
            let Some(d) = default
                .as_float()
                .or(default.as_integer().map(|i| i as f64))
            else {
                continue;
            };
            if default.is_integer() {
                continue; // counts: their bounds are serde's and the problem's own tests'
            }
            for x in extremes(d) {
                tried += 1;
                let mut t = toml::Table::new();
                t.insert(key.clone(), toml::Value::Float(x));
                match entry.instantiate(&t) {
                    Ok(p) => {
                        if let Err(e) = finite_start(p.as_system()) {
                            wrong.push(format!("{} {key} = {x:e}: accepted, but {e}", entry.id));
                        }
                    }
                    Err(e) => {
                        let msg = e.to_string();
                        if !msg.contains(&format!("`{key}`")) {
                            wrong.push(format!("{} {key} = {x:e}: {msg}", entry.id));
                        }
                    }
                }
            }
        }
    }
    assert!(tried > 300, "only {tried} cases");
    assert!(
        wrong.is_empty(),
        "{} of {tried} cases name another cause:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
