//! Seed 001 §3.5.1's sources of constraint violation, separated and measured (issue 14
//! item 7), on a 3-link chain from 60° over 5 s, and §3.3.3's claim that a collision
//! needs a larger Baumgarte β than a joint limit (experiment `violation-sources`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;
use common::Case;
use driftlab_core::{RunError, RunStatus, StepError};

const CHAIN: &str = "links = 3\ntheta0_deg = 60.0";
/// The same impulse (2 N s sideways on the last mass at t = 1 s) as a blow and a push.
const BLOW: &str =
    "disturbance = { time = 1.0, duration = 1e-3, force = [0.0, 0.0, 0.0, 0.0, 2000.0, 0.0] }";
const PUSH: &str =
    "disturbance = { time = 1.0, duration = 0.2, force = [0.0, 0.0, 0.0, 0.0, 10.0, 0.0] }";

fn max_residual(extra: &str, method: &str, params: &str, projection: Option<&str>, h: f64) -> f64 {
    let problem_params = format!("{CHAIN}\n{extra}");
    let case = Case::new("planar-chain", method, h, 5.0)
        .problem_params(&problem_params)
        .params(params);
    match projection {
        Some(p) => case.projection(p).ok(),
        None => case.ok(),
    }
    .max_pos_residual
}

#[test]
fn truncation_linearization_tolerance_and_round_off_scale_as_each_source_predicts() {
    // Truncation: the unstabilized Taylor step is first order, so is its drift; so is the
    // semi-implicit Euler step's (seed 001 §3.3.1), whose local position drift is O(h²)
    // against Taylor's O(h³): the velocity drift, O(h²) per step in both, dominates.
    for method in ["taylor", "semi-implicit-euler"] {
        let (a, b) = (
            max_residual("", method, "", None, 1e-3),
            max_residual("", method, "", None, 1e-4),
        );
        let p = (a / b).log10();
        println!("truncation, {method}: {a:.3e} → {b:.3e}, order {p:.2}");
        assert!((p - 1.0).abs() <= 0.1, "{method}: truncation order {p}");
    }
    // Linearization: one linearized update per step leaves O(δ²) of the step's drift δ;
    // from a consistent (q, v, a) the Taylor step's drift is δ = O(h³) (its a satisfies
    // Φ_q a = γ), so the residual is O(h⁶).
    let lin = Some("linearized = true\ntol = 1e-30");
    let (a, b) = (
        max_residual("", "taylor", "", lin, 1e-2),
        max_residual("", "taylor", "", lin, 5e-3),
    );
    let p = (a / b).log2();
    println!("linearization: {a:.3e} → {b:.3e}, order {p:.2}");
    assert!((p - 6.0).abs() <= 0.5, "linearization order {p}");
    // Solver tolerance: Newton stopped at 1e-6 leaves up to 1e-6, whatever h.
    let tol = max_residual("", "taylor", "", Some("tol = 1e-6"), 1e-3);
    println!("solver tolerance 1e-6: {tol:.3e}");
    assert!((1e-7..=1e-6).contains(&tol), "{tol:e}");
    // Round-off is attributed by a measurement that could show otherwise (below).
    round_off_is_the_floor_that_more_iterations_cannot_lower();
}

/// Round-off bound of one chain row `|p_a − p_b|² − ℓ²` at a point of the manifold, to
/// first order in the unit round-off u (Higham, Accuracy and Stability of Numerical
/// Algorithms, 2nd ed., 2002, §3.1): evaluating the row in f64 errs by at most
/// `5u·|d|² + u·ℓ²` (two differences, two squares, a sum, the subtraction), and the
/// closest floating-point q to the manifold is itself off by `u·|p|` per coordinate, which
/// moves the row by `2|d|·2u·|p|` (two points, |∂Φ/∂p| = 2|d|). With |d| = ℓ = 1 and
/// |p| ≤ 3 on the 3-link chain: `(6 + 12)u = 18u = 2.0e-15`.
fn chain_round_off_bound() -> f64 {
    let (u, l, p_max) = (f64::EPSILON / 2.0, 1.0_f64, 3.0_f64);
    6.0 * u * l * l + 2.0 * l * 2.0 * u * p_max
}

/// The projection's residual is round-off when (a) it sits below the bound of the row's
/// own f64 evaluation, at every h, and (b) asking Newton for less than it leaves the
/// residual where it is after 50 iterations — which a residual limited by the stopping
/// tolerance, the step or the linearization would not survive: (a) fails for the
/// projection to 1e-14 at h = 1e-2 (its 8.2e-15 is the tolerance, not round-off), and (b)
/// fails for any floor above round-off, which Newton's quadratic contraction removes.
fn round_off_is_the_floor_that_more_iterations_cannot_lower() {
    let bound = chain_round_off_bound();
    let floor = |tol: &str, h: f64| {
        let p = format!("tol = {tol}\nmax_iter = 50");
        Case::new("planar-chain", "taylor", h, 5.0)
            .problem_params(CHAIN)
            .projection(&p)
            .run()
    };
    for h in [1e-2, 1e-3, 1e-4] {
        let r = floor("1e-15", h);
        let res = r.summary.max_pos_residual;
        println!("round-off, tol 1e-15, h = {h}: {res:.3e} (bound {bound:.2e})");
        assert_eq!(r.status, RunStatus::Ok, "h = {h}");
        assert!(
            res <= bound,
            "h = {h}: {res:e} above the round-off bound {bound:e}"
        );
    }
    let tolerance_limited = floor("1e-14", 1e-2).summary.max_pos_residual;
    println!("tolerance-limited, tol 1e-14, h = 1e-2: {tolerance_limited:.3e}");
    assert!(tolerance_limited > bound, "{tolerance_limited:e}");
    // Below the floor: Newton iterates 50 times and the residual stays at a few u.
    let r = floor("5e-16", 1e-3);
    let RunStatus::Failed {
        error:
            RunError::Step(StepError::ProjectionFailed {
                iterations,
                residual,
                ..
            }),
        ..
    } = r.status
    else {
        panic!("a tolerance of 5e-16 was reached: the floor is lower than round-off");
    };
    println!("below the floor: {iterations} iterations leave {residual:.3e}");
    assert_eq!(iterations, 50);
    assert!(residual <= bound, "{residual:e}");
    let stuck = r.summary.max_pos_residual;
    assert!(stuck <= bound, "{stuck:e}");
}

/// §3.3.3: "高频约束（如碰撞）需要更大的 β 值，而低频约束（如关节限制）可以使用较小的值".
/// The same impulse as a 1 ms blow and as a 0.2 s push, Baumgarte ξ = 1, h = 1e-2: for
/// every β the blow leaves the larger violation, and holding ‖Φ‖∞ ≤ 5e-3 takes β = 80
/// against the blow but β = 20 against the push — the claim holds, at this step.
#[test]
fn a_blow_needs_a_larger_baumgarte_beta_than_a_push_of_the_same_impulse() {
    let mut need = [None, None];
    for omega in [5.0, 20.0, 80.0] {
        let params = format!("xi = 1.0\nomega_n = {omega}");
        let blow = max_residual(BLOW, "baumgarte", &params, None, 1e-2);
        let push = max_residual(PUSH, "baumgarte", &params, None, 1e-2);
        println!("β = {omega}: blow {blow:.3e}, push {push:.3e}");
        assert!(
            blow >= 2.0 * push,
            "β = {omega}: blow {blow:e}, push {push:e}"
        );
        for (k, r) in [blow, push].into_iter().enumerate() {
            if r <= 5e-3 && need[k].is_none() {
                need[k] = Some(omega);
            }
        }
    }
    assert_eq!(need, [Some(80.0), Some(20.0)]);
}
