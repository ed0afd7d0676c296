//! Convergence suite over the catalog (issues 2 and 3): every method × every problem with
//! an exact solution, in the forms the method accepts. The observed order of q, v and λ —
//! fitted on the error at t_end by the runner's documented asymptotic-range rule — must be
//! within ±0.15 of the order the method declares (`MethodInfo::orders`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::SystemForm;
use driftlab_runner::{run_spec, RunOptions, Spec};

/// Problems with exact solutions, the h sweep used for them, the horizon for methods of
/// order ≥ 3 (long enough to lift their errors above the round-off floor of the fit; the
/// rotating rod's solution grows like e^{Ωt}, so its horizon stays short), and whether the
/// problem has special structure on which a method may legitimately exceed its declared
/// order (then the check is one-sided: observed ≥ declared − 0.15). The rotating rod is a
/// linear ODE in the rotating frame (measured: midpoint + projection reaches order 3 in
/// q); on the circle rotor |v| and λ are constants that every method conserving |v|
/// reproduces to round-off; on the knife edge θ̈ = 0 is integrated exactly by every
/// method, so λ = m g sin α sin θ + m u θ̇ carries only the forward-speed error (measured:
/// taylor's λ converges with order 2.00 against its declared 1).
const PROBLEMS: &[(&str, &str, SystemForm, &str, f64, bool)] = &[
    (
        "pendulum",
        "theta0_deg = 90.0",
        SystemForm::Mechanical,
        "log_range = { from = 1e-4, to = 1e-2, per_decade = 4 }",
        20.0,
        false,
    ),
    (
        "pendulum",
        "theta0_deg = 30.0\nlength = 2.0",
        SystemForm::Mechanical,
        "log_range = { from = 1e-4, to = 1e-2, per_decade = 4 }",
        20.0,
        false,
    ),
    (
        "seed003-dae",
        "c = 2.0",
        SystemForm::SemiExplicit,
        "log_range = { from = 1e-4, to = 1e-2, per_decade = 4 }",
        20.0,
        false,
    ),
    (
        "chain-angles-implicit",
        "links = 1\ntheta0_deg = 90.0",
        SystemForm::Implicit,
        "log_range = { from = 1e-4, to = 1e-2, per_decade = 4 }",
        20.0,
        false,
    ),
    (
        "rotating-rod",
        "omega = 1.0",
        SystemForm::Mechanical,
        "log_range = { from = 1e-4, to = 1e-2, per_decade = 4 }",
        4.0,
        true,
    ),
    (
        "knife-edge",
        "spin = 1.0",
        SystemForm::Mechanical,
        "log_range = { from = 1e-4, to = 1e-2, per_decade = 4 }",
        20.0,
        true,
    ),
    (
        "circle-rotor",
        "speed = 2.0",
        SystemForm::Mechanical,
        "log_range = { from = 1e-4, to = 1e-2, per_decade = 4 }",
        20.0,
        true,
    ),
];

/// Start-up layers: the declared λ order holds after the first steps, while the error
/// maximized over the run (what the suite fits) is dominated by the first step when the
/// initial velocity is nonzero. (method prefix, problem, quantity, order of that max.)
/// - Implicit Euler on index 3 (BDF1): λ is O(1) wrong on the first step, accurate
///   to O(h) from step 2 on (Brenan, Campbell & Petzold 1996, §3.2, BDF on index-3
///   Hessenberg systems: convergence after the first k + 1 steps). Measured on the
///   circle rotor: max error exactly λ/2 = 1.00 for every h, final error O(h).
/// - Generalized-α: an O(h) λ transient decaying like ρ∞ⁿ (Arnold, Brüls & Cardona 2015,
///   Numer. Math. 129, 149–179, the start-up perturbation of a₀ and λ₀). Measured on the
///   rotating rod: max error 2.6e-2 … 2.6e-4 (order 1.00), final error order 2.
/// - BDF2 (`bdf`, the catalog default order) on index 3: the same start-up result for
///   k = 2 — λ of the first BDF step after the Radau start is O(h) wrong on the rotating
///   rod (v₀ ≠ 0 in the inertial frame). Measured: max error 1.0e-3 at h = 1e-3 and
///   1.0e-4 at h = 1e-4 (order 1.00), final error at t = 4 order 2 (3.6e-2 → 3.6e-4 for
///   h = 1e-2 → 1e-3).
const STARTUP_LAYERS: &[(&str, &str, &str, f64)] = &[
    ("implicit-euler", "circle-rotor", "lambda", 0.0),
    ("generalized-alpha", "rotating-rod", "lambda", 1.0),
    ("bdf", "rotating-rod", "lambda", 1.0),
];

/// Methods whose step ends in a projection of their own: at order ≥ 5 the 90° pendulum
/// exception below treats them as the decorator's (s = 1, 2 are checked there). Measured for `gauss-index2` (Ascher–Petzold's
/// projection), s = 3, t_end = 20: the local slopes of the max v error rise monotonically
/// towards 2s = 6 as h falls — 4.89 at h = 0.12, 5.34 at 0.05, 5.58 at 0.0375, 5.80 at
/// 0.021, 5.89 at 0.012 — and the round-off floor (1e-11) arrives before they pass 5.85,
/// so the fit over the window above the floor gives 5.78. On the 30° pendulum the same
/// method's slopes are 5.96–6.00 over h = 0.012 … 0.09 and the check holds there.
const PROJECTS_INTERNALLY: &[&str] = &["gauss-index2"];

/// Extra parameter variants beyond the catalog defaults.
const VARIANTS: &[(&str, &str)] = &[
    ("gauss", "stages = 1"),
    ("gauss", "stages = 2"),
    ("gauss-index2", "stages = 1"),
    ("gauss-index2", "stages = 2"),
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
    method: &str, mparams: &str, projection: bool, problem: &str, params: &str, steps: &str,
    t_end: f64,
) -> String {
    format!(
        "schema_version = 1\nname = \"conv\"\nt_end = {t_end:?}\ntrace_stride = 0\n[steps]\n{steps}\n[[problems]]\nid = \"{problem}\"\nparams = {{ {} }}\n[[methods]]\nid = \"{method}\"\nparams = {{ {mparams} }}\n{}",
        params.replace('\n', ", "),
        if projection { "projection = { tol = 1e-13 }\n" } else { "" }
    )
}

#[test]
#[allow(clippy::too_many_lines)] // one sweep over the catalog, its per-case tolerances a data table
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
            for (problem, params, form, steps, horizon, special) in PROBLEMS {
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
                let internal = PROJECTS_INTERNALLY.contains(&id) && order >= 5.0;
                if (projection && order >= 3.0 || internal) && params.contains("90.0") {
                    continue;
                }
                // High orders: a longer horizon lifts the errors of the small steps above the
                // round-off floor of the fit (the global error grows with t).
                let t_end = if order >= 3.0 { *horizon } else { 2.0 };
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
                        ..RunOptions::default()
                    },
                )
                .unwrap();
                // A method that refuses a problem (e.g. a pendulum-only closed form on another
                // pendulum is fine; on an incompatible system it fails at init) is skipped
                // only if every cell failed at t = 0 with an "cannot run" reason.
                if sum.rows.iter().all(|r| {
                    !r.ok()
                        && r.fail_reason
                            .as_deref()
                            .is_some_and(|m| m.contains("cannot run"))
                }) {
                    continue;
                }
                for o in &sum.orders {
                    let max_err = sum
                        .rows
                        .iter()
                        .filter(|r| r.ok())
                        .map(|r| match o.quantity.as_str() {
                            "q" => r.err_q.unwrap_or(f64::NAN),
                            "v" => r.err_v.unwrap_or(f64::NAN),
                            _ => r.err_lambda.unwrap_or(f64::NAN),
                        })
                        .fold(0.0_f64, f64::max);
                    let tag = format!(
                        "{}{} on {problem} [{}] {}",
                        entry_id,
                        if projection { "+projection" } else { "" },
                        params.replace('\n', ", "),
                        o.quantity
                    );
                    let startup = STARTUP_LAYERS.iter().find(|(m, pr, q, _)| {
                        id.starts_with(m) && pr == problem && *q == o.quantity
                    });
                    match (o.observed_order, o.expected_order) {
                        // Exact up to accumulated round-off over the whole sweep: no
                        // asymptotic range exists, and none is needed.
                        (_, Some(want)) if *special && max_err < 1e-9 => checked.push(format!(
                            "{tag}: exact to round-off (max error {max_err:.1e}, declared {want})"
                        )),
                        (Some(p), Some(_)) if startup.is_some_and(|s| (p - s.3).abs() <= 0.15) => {
                            checked.push(format!(
                                "{tag}: {p:.3} = start-up layer order {} (max over the run)",
                                startup.map_or(0.0, |s| s.3)
                            ))
                        }
                        (Some(p), Some(want)) if (p - want).abs() <= 0.15 => {
                            checked.push(format!("{tag}: {p:.3} (declared {want})"))
                        }
                        (Some(p), Some(want)) if *special && p >= want - 0.15 => checked.push(
                            format!("{tag}: {p:.3} ≥ declared {want} (special structure)"),
                        ),
                        (Some(p), Some(want)) => failures.push(format!(
                            "{tag}: observed {p:.3}, declared {want} (h {:?}–{:?}, {} pts)",
                            o.h_min, o.h_max, o.points
                        )),
                        (None, Some(want)) => failures.push(format!(
                            "{tag}: no fit ({}), declared {want}, max error {max_err:e}",
                            o.note
                        )),
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
