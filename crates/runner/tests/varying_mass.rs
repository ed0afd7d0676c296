//! A mass matrix that depends on time (issue 32 B2): on the pendulum that leaks mass
//! (`leaking-pendulum`, exact solution known), the methods that evaluate M(t, q, v) at
//! every state run at their declared orders in q and λ, and the methods that evaluate
//! M(q) only are refused before their first step with the reason, as failed rows.

mod common;

const SPEC: &str = r#"
schema_version = 1
name = "varying-mass"
t_end = 2.0
trace_stride = 0

[steps]
log_range = { from = 1e-4, to = 1e-2, per_decade = 2 }

[[problems]]
id = "leaking-pendulum"

[[methods]]
id = "taylor"

[[methods]]
id = "baumgarte"
params = { xi = 1.0, omega_n = 10.0 }

[[methods]]
id = "radau"
steps = { log_range = { from = 1e-2, to = 6e-2, per_decade = 4 } }

[[methods]]
id = "generalized-alpha"
steps = { h = [1e-2] }

[[methods]]
id = "rattle"
steps = { h = [1e-2] }

[[methods]]
id = "baumgarte"
params = { xi = 1.0, omega_n = 10.0 }
projection = { tol = 1e-12 }
steps = { h = [1e-2] }
"#;

#[test]
fn time_dependent_mass_runs_at_the_declared_orders_or_is_refused() {
    let (sum, _) = common::run_text(SPEC, "varying-mass", 2);
    // Declared orders (taylor and baumgarte 1; radau 2s − 1 = 5 in q; λ for the first
    // order methods 1), ±0.15 as the convergence suite checks them.
    for (variant, quantity, want) in [
        ("taylor", "q", 1.0),
        ("taylor", "lambda", 1.0),
        ("baumgarte [omega_n=10.0, xi=1.0]", "q", 1.0),
        ("baumgarte [omega_n=10.0, xi=1.0]", "lambda", 1.0),
        ("radau", "q", 5.0),
    ] {
        let o = sum
            .orders
            .iter()
            .find(|o| o.variant == variant && o.quantity == quantity)
            .unwrap_or_else(|| panic!("no order for {variant} {quantity}"));
        let p = o.observed_order.unwrap_or(f64::NAN);
        assert!(
            (p - want).abs() <= 0.15,
            "{variant} {quantity}: observed {p}, declared {want}"
        );
    }
    for m in ["taylor", "baumgarte", "radau"] {
        let rows: Vec<_> = sum.rows.iter().filter(|r| r.method == m).collect();
        assert!(
            rows.len() >= 3 && rows.iter().all(|r| r.ok()),
            "{m}: a failed row"
        );
    }
    for refused in ["generalized-alpha", "rattle", "baumgarte+projection"] {
        let r = sum
            .rows
            .iter()
            .find(|r| r.method == refused)
            .unwrap_or_else(|| panic!("no row for {refused}"));
        assert!(!r.ok(), "{refused} ran with M(q)");
        assert_eq!(
            r.fail_kind.as_deref(),
            Some("unsupported-form"),
            "{refused}"
        );
        let reason = r.fail_reason.as_deref().unwrap_or("");
        assert!(
            reason.contains("varying-mass") && reason.contains("M(t, q, v)"),
            "{reason}"
        );
        assert_eq!(r.steps, 0, "{refused} refused before its first step");
    }
}
