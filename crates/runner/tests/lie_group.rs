//! The Lie-group integrator `lie-rkmk4` (issue 32 W17) on the torque-free body in Euler
//! parameters (exact precession): order 4 in q and v, the unit norm and pᵀṗ = 0 held to
//! round-off with no projection, and a problem without the attitude structure refused
//! with the reason.

mod common;

const SPEC: &str = r#"
schema_version = 1
name = "lie-group"
t_end = 10.0
trace_stride = 0

[steps]
log_range = { from = 1e-2, to = 1e-1, per_decade = 3 }

[[problems]]
id = "quaternion-body"

[[problems]]
id = "pendulum"

[[methods]]
id = "lie-rkmk4"
"#;

#[test]
fn rkmk4_keeps_the_group_at_order_four() {
    let (sum, _) = common::run_text(SPEC, "lie-group", 2);
    for quantity in ["q", "v"] {
        let o = sum
            .orders
            .iter()
            .find(|o| o.problem == "quaternion-body" && o.quantity == quantity)
            .expect("order");
        let p = o.observed_order.unwrap_or(f64::NAN);
        assert!(
            (p - 4.0).abs() <= 0.15,
            "{quantity}: observed {p}, declared 4"
        );
    }
    // Unit norm and pᵀṗ = 0: round-off of products of unit quaternions, at most the number
    // of steps (1000 at h = 1e-2) times ε ≈ 2.2e-13.
    for r in sum.rows.iter().filter(|r| r.problem == "quaternion-body") {
        assert!(r.ok(), "{:?}", r.fail_reason);
        assert!(
            r.max_pos_residual.unwrap_or(f64::NAN) < 2.3e-13,
            "‖Φ‖ = {}",
            r.max_pos_residual.unwrap_or(f64::NAN)
        );
        assert!(
            r.max_vel_residual.unwrap_or(f64::NAN) < 2.3e-13,
            "‖Φ̇‖ = {}",
            r.max_vel_residual.unwrap_or(f64::NAN)
        );
        assert_eq!(r.newton_iterations, 0);
    }
    for r in sum.rows.iter().filter(|r| r.problem == "pendulum") {
        assert!(!r.ok());
        assert_eq!(r.fail_kind.as_deref(), Some("incompatible"));
        assert!(r.fail_reason.as_deref().unwrap_or("").contains("attitude"));
    }
}
