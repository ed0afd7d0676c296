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

/// Extra parameter variants beyond the catalog defaults.
const VARIANTS: &[(&str, &str)] = &[
    ("gauss", "stages = 1"),
    ("gauss", "stages = 2"),
    ("implicit-euler", "formulation = \"index-2\""),
    ("implicit-euler", "formulation = \"index-1\""),
];

/// Step sizes by declared order: the error must stay above the round-off floor of the fit
/// (1e-11) over most of the sweep, so high orders need larger h (pendulum period ≈ 2.4 s).
fn steps_for(order: f64, default: &str) -> String {
    if order >= 5.0 {
        "log_range = { from = 1e-2, to = 1e-1, per_decade = 6 }".into()
    } else if order >= 3.0 {
        "log_range = { from = 2e-3, to = 4e-2, per_decade = 5 }".into()
    } else {
        default.into()
    }
}

fn spec_for(
    method: &str,
    mparams: &str,
    projection: bool,
    problem: &str,
    params: &str,
    steps: &str,
    t_end: f64,
) -> String {
    format!(
        "schema_version = 1\nname = \"conv\"\nt_end = {t_end:?}\ntrace_stride = 0\n[steps]\n{steps}\n[[problems]]\nid = \"{problem}\"\nparams = {{ {} }}\n[[methods]]\nid = \"{method}\"\nparams = {{ {mparams} }}\n{}",
        params.replace('\n', ", "),
        if projection { "projection = { tol = 1e-13 }\n" } else { "" }
    )
}

#[test]
fn every_method_meets_its_declared_orders_on_every_exact_problem() {
    let dir = std::env::temp_dir().join(format!("driftlab-conv-{}", std::process::id()));
    let mut checked = Vec::new();
    let mut failures = Vec::new();
    let mut cases: Vec<(&str, &str)> = driftlab_methods::catalog()
        .iter()
        .map(|e| (e.id, ""))
        .collect();
    cases.extend_from_slice(VARIANTS);
    for (id, mparams) in cases {
        let table: toml::Table = mparams.parse().unwrap();
        let info = driftlab_methods::build(id, &table, None).unwrap().info();
        let entry_id = if mparams.is_empty() {
            id.to_string()
        } else {
            format!("{id} [{mparams}]")
        };
        let order = info.orders.q.unwrap_or(1.0);
        for projection in [false, true] {
            if projection && !info.forms.contains(&SystemForm::Mechanical) {
                continue;
            }
            for (problem, params, form, steps) in PROBLEMS {
                if !info.forms.contains(form) || (projection && *form != SystemForm::Mechanical) {
                    continue;
                }
                // Measured exception: projected methods of order ≥ 4 on the horizontally
                // released pendulum. Projection removes the normal error component, which is
                // the leading one at large h; the remaining tangential (phase) components
                // partly cancel in the max over time, so the local slopes wander between 3.2
                // and 5.8 (s = 2) across every h range whose errors stay above the round-off
                // floor (reproduce: gauss stages = 2 ± projection, t_end = 20, h = 1e-3…4e-2).
                // No asymptotic window exists to fit there; the same methods are checked on
                // the 30° pendulum, where it does.
                if projection && order >= 3.0 && params.contains("90.0") {
                    continue;
                }
                // High orders: a longer horizon lifts the errors of the small steps above the
                // round-off floor of the fit (the global error grows with t).
                let t_end = if order >= 3.0 { 20.0 } else { 2.0 };
                let text = spec_for(
                    id,
                    mparams,
                    projection,
                    problem,
                    params,
                    &steps_for(order, steps),
                    t_end,
                );
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
                        entry_id,
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
