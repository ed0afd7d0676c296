//! The user's crate end to end: its spec runs through driftlab's runner with the user's
//! registry, every fitted order lies within ±0.15 of the declared one (the band of
//! driftlab-runner's convergence suite), the report draws the user's problem, the user's
//! binary lists and describes its own entries, and the user's problem passes the
//! conformance checks driftlab's catalog problems pass.

use driftlab_example_user::{registry, spring_dumbbell};
use driftlab_problems::conformance::{check_exact_solution, check_initial_state, check_mechanical};
use driftlab_problems::Problem;
use driftlab_runner::{run_spec, RunOptions, Spec};
use std::path::Path;

fn spec_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("dumbbell-orders.toml")
}

#[test]
fn the_users_spec_runs_fits_orders_and_reports() {
    let out = std::env::temp_dir().join(format!("driftlab-user-crate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let (spec, text) = Spec::load(&spec_path()).expect("the example spec parses");
    let opts = RunOptions {
        out_dir: Some(out.join(&spec.name)),
        size: Some("quick".into()),
        registry: registry(),
        ..RunOptions::default()
    };
    let sum = run_spec(&spec, &text, "dumbbell-orders.toml", &opts).expect("the spec runs");
    assert_eq!((sum.cells, sum.failed), (9, 0), "3 methods × 3 step sizes, none failed");
    assert_eq!(sum.orders.len(), 9, "q, v, λ for each of the 3 methods");
    for o in &sum.orders {
        let (seen, want) = (o.observed_order, o.expected_order);
        assert!(
            matches!((seen, want), (Some(p), Some(w)) if (p - w).abs() <= 0.15),
            "{} {}: observed {seen:?}, declared {want:?}",
            o.variant,
            o.quantity
        );
    }
    let files = driftlab_report::report_experiment(&out.join(&spec.name)).expect("report");
    assert!(files.iter().any(|f| f.ends_with("convergence_spring-dumbbell.pdf")), "{files:?}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_users_binary_lists_and_describes_its_own_entries() {
    let run = |args: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_my-driftlab"))
            .args(args)
            .output()
            .expect("my-driftlab runs");
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert!(run(&["list", "problems"]).contains("spring-dumbbell"));
    assert!(run(&["list", "methods"]).contains("symplectic-euler"));
    assert!(run(&["describe", "spring-dumbbell"]).contains("spin = 3"));
    let sim = run(&[
        "simulate",
        "--problem",
        "spring-dumbbell",
        "--method",
        "symplectic-euler",
        "--projection",
        "--h",
        "0.01",
        "--t-end",
        "0.5",
    ]);
    assert!(sim.contains("status: ok (50 steps"), "{sim}");
}

#[test]
fn the_users_problem_passes_driftlab_conformance() {
    let problem = (spring_dumbbell::entry().build)(&toml::Table::new()).expect("defaults build");
    let Problem::Mechanical(s) = &problem else {
        panic!("spring-dumbbell is a mechanical system");
    };
    let mut failures: Vec<String> = [
        check_initial_state("spring-dumbbell", &problem),
        check_exact_solution("spring-dumbbell", &problem),
    ]
    .into_iter()
    .filter_map(Result::err)
    .collect();
    // Perturbations (dq, v, t) in the ranges the catalog suite draws from (dq ∈ [−1, 1],
    // v ∈ [−2, 2], t ∈ [0, 3]), fixed so that the test is deterministic.
    let states: [(&[f64], &[f64], f64); 4] = [
        (&[0.0], &[0.0], 0.0),
        (&[0.3, -0.8, 0.5, 0.1], &[1.5, -0.4, 0.9, -2.0, 0.7], 0.4),
        (&[-1.0, 0.6, -0.2, 0.9], &[-1.1, 2.0, 0.3, -0.6, 1.8], 1.7),
        (&[0.75, 0.25], &[-2.0, 1.25, -0.5], 2.9),
    ];
    for (dq, v, t) in states {
        failures.extend(check_mechanical("spring-dumbbell", s.as_ref(), dq, v, t).err());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The user's problem declares where its closed form holds: valid at its defaults (the
/// exact state on its constraint to a few times the declared accuracy), outside where
/// k/m leaves f64's range or the phase keeps no digits.
#[test]
fn the_users_problem_declares_its_reference_domain() {
    use driftlab_core::ReferenceDomain;
    let build = |t: &str| match (spring_dumbbell::entry().build)(&t.parse().expect("toml")) {
        Ok(Problem::Mechanical(s)) => s,
        _ => panic!("spring-dumbbell {{{t}}} builds as a mechanical system"),
    };
    let s = build("");
    let ReferenceDomain::Valid { accuracy, basis } = s.reference_domain(2.0) else {
        panic!("spring-dumbbell at its defaults: {:?}", s.reference_domain(2.0));
    };
    assert!(accuracy < 1e-12, "accuracy {accuracy:e} ({basis})");
    let e = s.exact(1.3).expect("exact");
    let mut phi = [0.0];
    s.constraints(1.3, &e.q, &mut phi);
    assert!(phi[0].abs() <= 4.0 * accuracy, "Φ = {:e} vs accuracy {accuracy:e}", phi[0]);
    for t in ["k = 1e-300\nm = 1e300", "spin = nan"] {
        let d = build(t).reference_domain(2.0);
        assert!(matches!(d, ReferenceDomain::Outside(ref w) if w.contains("range")), "{t}: {d:?}");
    }
    let d = s.reference_domain(1e13);
    assert!(matches!(d, ReferenceDomain::Outside(ref w) if w.contains("digits")), "{d:?}");
}
