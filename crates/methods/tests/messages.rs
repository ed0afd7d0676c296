//! Messages name what the user gave (issue 27), for methods: every numeric parameter of
//! every catalog method, set alone to a value at or beyond the edge of what f64 can carry
//! (zero, negative, 1e-200, 1e200, subnormal, NaN, ∞), either builds or is refused with a
//! message that names that parameter — never another one the user did not touch.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_methods::catalog;

#[test]
fn a_refused_method_parameter_is_the_one_named() {
    let values = [
        0.0,
        -1.0,
        1e-200,
        1e200,
        1e-320,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let (mut tried, mut wrong) = (0, Vec::new());
    for entry in catalog() {
        for (key, default) in (entry.defaults)() {
            if !default.is_float() {
                continue;
            }
            for x in values {
                tried += 1;
                let mut t = toml::Table::new();
                t.insert(key.clone(), toml::Value::Float(x));
                if let Err(e) = (entry.build)(&t) {
                    let msg = e.to_string();
                    if !msg.contains(&format!("`{key}`")) {
                        wrong.push(format!("{} {key} = {x:e}: {msg}", entry.id));
                    }
                }
            }
        }
    }
    assert!(tried > 100, "only {tried} cases");
    assert!(
        wrong.is_empty(),
        "{} of {tried} cases name another cause:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
