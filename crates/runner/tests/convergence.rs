//! Convergence suite over the catalog (issues 2 and 3): every method × every problem with
//! an exact solution, in the forms the method accepts. The observed order of q, v and λ —
//! fitted on the error at t_end by the runner's documented asymptotic-range rule — must be
//! within ±0.15 of the order the method declares (`MethodInfo::orders`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::SystemForm;
use driftlab_runner::{run_spec, RunOptions, Spec};

/// Problems with exact solutions and the h sweep used for them.
const PROBLEMS: &[(&str, &str, SystemForm, &str)] = &[
    (
        "pendulum",
        "theta0_deg = 90.0",
        SystemForm::Mechanical,
        "log_range = { from = 1e-4, to = 1e-2, per_decade = 4 }",
    ),
    (
        "pendulum",
        "theta0_deg = 30.0\nlength = 2.0",
        SystemForm::Mechanical,
        "log_range = { from = 1e-4, to = 1e-2, per_decade = 4 }",
    ),
    (
        "seed003-dae",
        "c = 2.0",
        SystemForm::SemiExplicit,
        "log_range = { from = 1e-4, to = 1e-2, per_decade = 4 }",
    ),
];

fn spec_for(method: &str, projection: bool, problem: &str, params: &str, steps: &str) -> String {
    format!(
        "schema_version = 1\nname = \"conv\"\nt_end = 2.0\ntrace_stride = 0\n[steps]\n{steps}\n[[problems]]\nid = \"{problem}\"\nparams = {{ {} }}\n[[methods]]\nid = \"{method}\"\n{}",
        params.replace('\n', ", "),
        if projection { "projection = { tol = 1e-13 }\n" } else { "" }
    )
}

#[test]
fn every_method_meets_its_declared_orders_on_every_exact_problem() {
    let dir = std::env::temp_dir().join(format!("driftlab-conv-{}", std::process::id()));
    let mut checked = Vec::new();
    let mut failures = Vec::new();
    for entry in driftlab_methods::catalog() {
        let info = (entry.info)();
        for projection in [false, true] {
            if projection && !info.forms.contains(&SystemForm::Mechanical) {
                continue;
            }
            for (problem, params, form, steps) in PROBLEMS {
                if !info.forms.contains(form) || (projection && *form != SystemForm::Mechanical) {
                    continue;
                }
                let text = spec_for(entry.id, projection, problem, params, steps);
                let spec = Spec::parse(&text, "conv.toml").unwrap();
                let sum = run_spec(
                    &spec,
                    &text,
                    "conv.toml",
                    &RunOptions {
                        out_dir: Some(dir.clone()),
                        threads: Some(2),
                        size: None,
                        progress: false,
                    },
                )
                .unwrap();
                // A method that refuses a problem (e.g. a pendulum-only closed form on another
                // pendulum is fine; on an incompatible system it fails at init) is skipped
                // only if every cell failed at t = 0 with an "cannot run" reason.
                if sum.rows.iter().all(|r| {
                    !r.ok
                        && r.fail_reason
                            .as_deref()
                            .is_some_and(|m| m.contains("cannot run"))
                }) {
                    continue;
                }
                for o in &sum.orders {
                    let tag = format!(
                        "{}{} on {problem} [{}] {}",
                        entry.id,
                        if projection { "+projection" } else { "" },
                        params.replace('\n', ", "),
                        o.quantity
                    );
                    match (o.observed_order, o.expected_order) {
                        (Some(p), Some(want)) if (p - want).abs() <= 0.15 => {
                            checked.push(format!("{tag}: {p:.3} (declared {want})"))
                        }
                        (Some(p), Some(want)) => failures.push(format!(
                            "{tag}: observed {p:.3}, declared {want} (h {:?}–{:?}, {} pts)",
                            o.h_min, o.h_max, o.points
                        )),
                        (None, Some(want)) => {
                            failures.push(format!("{tag}: no fit ({}), declared {want}", o.note))
                        }
                        (_, None) => {}
                    }
                }
            }
        }
    }
    for c in &checked {
        eprintln!("ok   {c}");
    }
    assert!(
        failures.is_empty(),
        "orders off by more than 0.15:\n{}",
        failures.join("\n")
    );
    assert!(
        checked.len() >= 30,
        "only {} order checks ran",
        checked.len()
    );
}
