//! Convergence suite over the catalog (issue 2 scope: every method × every problem with an
//! exact solution): the observed order of q, v and λ — fitted by the runner's documented
//! asymptotic-range rule — must be within ±0.15 of the order the method declares.

use driftlab_runner::{run_spec, RunOptions, Spec};

#[test]
fn observed_orders_match_declared_orders() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../experiments/pendulum-convergence.toml"
    ))
    .unwrap();
    let spec = Spec::parse(&text, "pendulum-convergence.toml").unwrap();
    let dir = std::env::temp_dir().join(format!("driftlab-conv-{}", std::process::id()));
    let sum = run_spec(
        &spec,
        &text,
        "pendulum-convergence.toml",
        &RunOptions {
            out_dir: Some(dir),
            threads: Some(2),
            size: None,
            progress: false,
        },
    )
    .unwrap();
    assert_eq!(sum.failed, 0);
    let methods: std::collections::BTreeSet<&str> =
        sum.rows.iter().map(|r| r.variant.as_str()).collect();
    assert_eq!(methods.len(), 3);
    let mut checked = 0;
    for o in &sum.orders {
        let (Some(p), Some(want)) = (o.observed_order, o.expected_order) else {
            panic!("{} {}: no fit ({})", o.variant, o.quantity, o.note);
        };
        assert!(
            (p - want).abs() <= 0.15,
            "{} {}: observed {p:.3}, declared {want}",
            o.variant,
            o.quantity
        );
        assert!(
            o.points >= 4 && o.r2.unwrap() > 0.99,
            "{} {}: fit over {} points, r² {:?}",
            o.variant,
            o.quantity,
            o.points,
            o.r2
        );
        checked += 1;
    }
    assert_eq!(checked, 9, "3 methods × (q, v, λ)");
}
