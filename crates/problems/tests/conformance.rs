//! Conformance suite over the whole problem catalog (issue 2): every problem's `Φ_q`,
//! `Φ_t`, `γ`, constraint Hessian and gap Jacobian (index-1: `f_x, f_z, g_x, g_z`) against
//! central finite differences at perturbed states (proptest), a consistent initial state,
//! a symmetric positive definite mass matrix, and — where an exact solution exists — that
//! it satisfies the equations of motion and conserves energy. The checks, with their
//! formulas and tolerances, are the public `driftlab_problems::conformance` module, so that
//! a user's own problem can run the same ones.

use driftlab_problems::conformance::{
    check_derivatives, check_exact_solution, check_initial_state,
};
use driftlab_problems::{build, catalog, Problem};
use proptest::prelude::*;

/// Every catalog entry at its defaults, plus variants that change the structure.
fn instances() -> Vec<(String, Problem)> {
    let mut out = Vec::new();
    for e in catalog() {
        out.push((
            e.id.to_string(),
            (e.build)(&toml::Table::new()).expect("defaults build"),
        ));
    }
    let variants: [(&str, &str); 31] = [
        // N = 1: the exact solution (pendulum) and its ω′ are checked.
        ("chain-angles-implicit", "links = 1\ntheta0_deg = 90.0"),
        ("spatial-chain", "links = 12\nspin = 0.3"),
        ("planar-chain", "links = 1"),
        ("planar-chain", "links = 7\ntheta0_deg = 30.0"),
        ("pendulum", "theta0_deg = -45.0\nlength = 2.0\nm = 3.0"),
        ("pendulum", "theta0_deg = 170.0"),
        ("seed003-dae", "c = 2.0"),
        ("model", "robot = \"ur5\"\npose_seed = 3"),
        ("model", "robot = \"panda\"\npose_seed = 4"),
        ("model", "robot = \"panda\"\npose_seed = 4\nlimits = \"enforce\"\nrestitution = 0.5"),
        ("model", "robot = \"solo12\"\nroot = \"floating\"\npose_seed = 5"),
        ("model", "robot = \"g1\"\nroot = \"floating\"\npose_seed = 6"),
        ("model", "robot = \"double-pendulum\"\npose_seed = 7"),
        ("model", "file = \"../../models/rssr-linkage.toml\""),
        ("model", "file = \"tests/data/models/closures.toml\""),
        ("model", "robot = \"ur5\"\npose_seed = 3\ncoordinates = \"body\""),
        ("model", "robot = \"ur5\"\npose_seed = 3\ncoordinates = \"natural\""),
        ("model", "robot = \"solo12\"\nroot = \"floating\"\npose_seed = 5\ncoordinates = \"body\""),
        ("model", "robot = \"solo12\"\nroot = \"floating\"\npose_seed = 5\ncoordinates = \"natural\""),
        ("model", "robot = \"double-pendulum\"\npose_seed = 7\ndamping = false\ncoordinates = \"body\""),
        ("model", "robot = \"double-pendulum\"\npose_seed = 7\ndamping = false\ncoordinates = \"natural\""),
        ("model", "file = \"../../models/rssr-linkage.toml\"\ncoordinates = \"body\""),
        ("model", "file = \"../../models/rssr-linkage.toml\"\ncoordinates = \"natural\""),
        ("model", "file = \"tests/data/models/slider.toml\""),
        ("model", "robot = \"cassie\""),
        ("model", "robot = \"cassie\"\nroot = \"floating\""),
        ("model", "file = \"tests/data/models/slider.toml\"\ncoordinates = \"body\""),
        ("model", "file = \"tests/data/models/slider.toml\"\ncoordinates = \"natural\""),
        // Independent copies stepped as one system (the `copies` parameter).
        ("spatial-chain", "links = 4\nspin = 0.3\ncopies = 2"),
        ("pendulum", "theta0_deg = 60.0\ncopies = 3"),
        ("heavy-top", "copies = 2"),
    ];
    for (id, t) in variants {
        let table: toml::Table = t.parse().expect("toml");
        out.push((
            format!("{id} [{}]", t.replace('\n', ", ")),
            build(id, &table).expect("variant builds"),
        ));
    }
    out
}

/// Panic listing every instance whose `check` failed.
fn assert_all(check: impl Fn(&str, &Problem) -> Result<(), String>) {
    let failures: Vec<String> = instances()
        .iter()
        .filter_map(|(name, p)| check(name, p).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn derivatives_match_central_differences(
        dq in proptest::collection::vec(-1.0f64..1.0, 4),
        v in proptest::collection::vec(-2.0f64..2.0, 5),
        t in 0.0f64..3.0,
    ) {
        for (name, p) in instances() {
            check_derivatives(&name, &p, &dq, &v, t).map_err(TestCaseError::fail)?;
        }
    }
}

#[test]
fn initial_states_are_consistent_and_mass_is_spd() {
    assert_all(check_initial_state);
}

/// Where an exact solution exists it must solve the DAE: `q' = v` and
/// `M v' = f − Φ_qᵀ λ` (derivatives by central differences), `Φ = 0`, energy constant.
#[test]
fn exact_solutions_satisfy_the_equations() {
    assert_all(check_exact_solution);
}
