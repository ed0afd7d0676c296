//! Unilateral constraints (issue 4): the pendulum with stops under Moreau–Jean. Between
//! the stops nothing acts; at a stop the impact law ġ⁺ = −e ġ⁻ removes exactly
//! `½ (1 − e²) m ġ⁻²` of energy, and ġ⁻ is the full speed of the bob there (the stop's
//! gradient is tangent to the circle), known in closed form from the release angle:
//! `v² = 2 g ℓ (cos θ_min − cos θ₀)`. Methods that cannot enforce unilateral rows are
//! refused, not run with the stops ignored.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use common::Case;
use driftlab_core::{drive, MethodError, MetricsObserver, Observer, RunError, RunStatus, Schedule};
use driftlab_methods::build;
use driftlab_methods::unilateral::moreau_jean::pgs;
use driftlab_problems::build as problem;

fn relative_energy_after_first_impact(e: f64, h: f64) -> f64 {
    // Released at 60°, stop at −30°; the first impact happens before t = 0.6 s and the
    // next arrival at a stop after 1 s for every e here.
    let p = problem(
        "pendulum-limits",
        &format!("restitution = {e:?}").parse().unwrap(),
    )
    .unwrap();
    let mut m = build("moreau-jean", &toml::Table::new(), None).unwrap();
    let mut obs = MetricsObserver::new(0);
    let out = drive(
        p.as_system(),
        m.as_mut(),
        &Schedule::fixed(h, 0.8),
        &mut [&mut obs as &mut dyn Observer],
    );
    assert!(matches!(out.status, RunStatus::Ok), "{:?}", out.status);
    obs.summary.final_energy_rel_error
}

#[test]
fn impact_removes_the_newton_law_energy() {
    let (g, l, m) = (9.81, 1.0, 1.0);
    let v2 = 2.0 * g * l * ((-30f64).to_radians().cos() - 60f64.to_radians().cos());
    for e in [0.0, 0.5, 1.0] {
        let want = 0.5 * (1.0 - e * e) * m * v2 / (m * g * l);
        let got = relative_energy_after_first_impact(e, 1e-4);
        // First order at the impact: deviation ≈ C h with C ≈ 2 (measured, h = 1e-3 → 1e-4:
        // e = 1: 1.9e-3 → 2.0e-4; e = 0.5: 5.2e-4 → 3.3e-5; e = 0: 1.1e-4 at both, the
        // sticking position), so 1e-3 at h = 1e-4 leaves a factor 5.
        assert!(
            (got - want).abs() < 1e-3,
            "e = {e}: relative energy loss {got}, Newton's law {want}"
        );
    }
}

#[test]
fn elastic_stops_lose_energy_only_at_first_order() {
    let a = relative_energy_after_first_impact(1.0, 1e-3);
    let b = relative_energy_after_first_impact(1.0, 1e-4);
    assert!(
        b < a / 5.0,
        "energy error at the stop does not shrink with h: {a:e} → {b:e}"
    );
}

#[test]
fn methods_without_unilateral_support_are_refused() {
    let p = problem("pendulum-limits", &toml::Table::new()).unwrap();
    let mut m = build("rattle", &toml::Table::new(), None).unwrap();
    let out = drive(
        p.as_system(),
        m.as_mut(),
        &Schedule::fixed(1e-3, 1.0),
        &mut [],
    );
    match out.status {
        RunStatus::Failed { error, .. } => assert!(
            matches!(
                error,
                RunError::Setup(MethodError::UnsupportedForm {
                    form: "unilateral",
                    ..
                })
            ),
            "{error}"
        ),
        RunStatus::Ok => panic!("rattle ignored the stops"),
    }
}

/// PGS solves a 2×2 LCP with one active and one inactive row exactly.
#[test]
fn pgs_solves_a_small_lcp() {
    // w = W P + b, W = [[2, 1], [1, 2]], b = (−2, 1): solution P = (1, 0), w = (0, 2).
    let w = [2.0, 1.0, 1.0, 2.0];
    let b = [-2.0, 1.0];
    let mut p = [0.0, 0.0];
    pgs(&w, &b, &mut p, 1e-14, 100).unwrap();
    assert!((p[0] - 1.0).abs() < 1e-14 && p[1] == 0.0, "{p:?}");
}

/// A resting stack of N balls (`ball-stack`, exact solution: at rest) under Moreau–Jean
/// at h = 1e-3 for 1 s. Returns (PGS sweeps per step, ‖q(1) − q₀‖∞, q(1)).
fn stack(balls: usize, method: &str) -> (f64, f64, Vec<f64>) {
    let pp = format!("balls = {balls}");
    let run = Case::new("ball-stack", "moreau-jean", 1e-3, 1.0)
        .problem_params(&pp)
        .params(method)
        .run();
    assert_eq!(run.status, RunStatus::Ok, "{balls} balls, {method}");
    let sweeps = run.stats.newton_iterations as f64 / run.stats.steps as f64;
    (sweeps, run.summary.final_err_q, run.final_state.q)
}

/// Seed 001 §3.11 pitfall 8 ("过度迭代": the constraint solve is the bottleneck because
/// the test is too strict or the start is poor; fix: "预热启动", a warm start), measured on
/// a resting stack with a 1 µm contact skin. The Delassus matrix is a 1-D Laplacian and
/// Gauss–Seidel contracts by 1 − O(1/N²) per sweep, so a cold start pays O(N² log(1/tol))
/// sweeps every step; the previous step's impulses already solve the next LCP.
/// Measured at tol 1e-13 (sweeps per step, cold / warm): N = 5: 244 / 0.65, N = 10:
/// 957 / 0.98, N = 20: 3726 / 4.1; both keep the stack at rest to 1.1e-13 and end
/// 1.1e-13 apart. At tol 1e-8 the cold sweeps halve (129 … 1862).
#[test]
fn warm_start_removes_the_over_iteration_of_a_resting_stack() {
    let mut cold_sweeps = Vec::new();
    for balls in [5, 10, 20] {
        let skin = "activation_margin = 1e-6\nlcp_tol = 1e-13";
        let (cold, cold_err, cold_q) = stack(balls, skin);
        let (warm, warm_err, warm_q) = stack(balls, &format!("{skin}\nwarm_start = true"));
        cold_sweeps.push(cold);
        assert!(warm <= 5.0, "N = {balls}: {warm} sweeps per step, warm");
        assert!(
            cold >= 100.0 * warm.max(1.0),
            "N = {balls}: cold {cold}, warm {warm}"
        );
        for err in [cold_err, warm_err] {
            assert!(err < 1e-12, "N = {balls}: the stack moved {err:e}");
        }
        let apart = cold_q
            .iter()
            .zip(&warm_q)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            apart < 1e-12,
            "N = {balls}: cold and warm end {apart:e} apart"
        );
    }
    // N = 5 → 20 multiplies the cold sweeps by 15.3 (O(N²) would be 16).
    assert!(cold_sweeps[2] > 12.0 * cold_sweeps[0], "{cold_sweeps:?}");
}

/// Without the skin (`activation_margin = 0`, Acary & Brogliato's index set g(q_m) ≤ 0) a
/// resting contact flickers open whenever round-off lifts its gap above zero: for one
/// step the ball above falls freely and ends h²g = 9.81e-6 m inside the one below, and
/// stays there (e = 0, no position correction for gaps). Measured over 1 s, N = 5, tol
/// 1e-13: the stack sinks 5.9e-5 = 6 h²g cold and 9.8e-5 = 10 h²g warm.
#[test]
fn without_a_contact_skin_a_resting_stack_sinks_in_steps_of_h2g() {
    let h2g = 1e-6 * 9.81;
    for warm in [false, true] {
        let (_, err, _) = stack(5, &format!("lcp_tol = 1e-13\nwarm_start = {warm}"));
        let steps = err / h2g;
        assert!(steps >= 0.99, "warm {warm}: sank {err:e}, less than h²g");
        assert!(
            (steps - steps.round()).abs() < 1e-6,
            "warm {warm}: {steps} h²g is not whole"
        );
    }
}

/// Panda's joint limits as stops (`model`, `limits = "enforce"`), released from a random
/// pose within them (seed 1; no damping, so that only the stops can change the energy):
/// every state, one per step.
fn panda(limits: &str, e: f64, h: f64, t_end: f64) -> common::Run {
    let pp = format!(
        "robot = \"panda\"\npose_seed = 1\ndamping = false\nlimits = \"{limits}\"\nrestitution = {e:?}"
    );
    let run = Case::new("model", "moreau-jean", h, t_end)
        .problem_params(&pp)
        .sampled(h)
        .run();
    assert_eq!(
        run.status,
        RunStatus::Ok,
        "limits {limits}, e = {e}, h = {h}"
    );
    run
}

/// The gaps of Panda's stops at `q` and, per stop, the coordinate it limits (from the
/// problem's own rows).
fn gaps(q: &[f64]) -> (Vec<f64>, Vec<usize>) {
    static PANDA: std::sync::OnceLock<driftlab_problems::Problem> = std::sync::OnceLock::new();
    let p = PANDA.get_or_init(|| {
        let params = "robot = \"panda\"\npose_seed = 1\nlimits = \"enforce\"";
        problem("model", &params.parse().unwrap()).unwrap()
    });
    let driftlab_problems::Problem::Mechanical(s) = p else {
        panic!("model is mechanical")
    };
    let u = s.unilateral().unwrap();
    let (k, n) = (u.rows(), q.len());
    let (mut g, mut gq) = (vec![0.0; k], vec![0.0; k * n]);
    u.gaps(0.0, q, &mut g);
    u.gap_jacobian(0.0, q, &mut gq);
    let coordinate = (0..k)
        .map(|r| (0..n).find(|&c| gq[r * n + c] != 0.0).unwrap())
        .collect();
    (g, coordinate)
}

fn smallest_gap(q: &[f64]) -> f64 {
    gaps(q).0.into_iter().fold(f64::INFINITY, f64::min)
}

/// Nothing acts before a stop is reached: the run with stops is the free run, bit for bit,
/// up to the first step whose midpoint `q_n + ½h v_n` has a gap ≤ 0 (Moreau–Jean's index
/// set, activation margin 0), and differs from there on.
#[test]
fn panda_stops_leave_the_free_motion_alone_until_the_first_contact() {
    let h = 1e-3;
    let free = panda("data", 0.0, h, 1.0);
    let stopped = panda("enforce", 0.0, h, 1.0);
    let contact = (0..free.states.len() - 1)
        .find(|&k| {
            let s = &free.states[k];
            let qm: Vec<f64> = s.q.iter().zip(&s.v).map(|(q, v)| q + 0.5 * h * v).collect();
            smallest_gap(&qm) <= 0.0
        })
        .expect("the free Panda reaches a stop within 1 s");
    assert!(
        contact > 10,
        "contact at step {contact}: the test needs a free phase"
    );
    for k in 0..=contact {
        assert_eq!(
            free.states[k].q, stopped.states[k].q,
            "step {k} before the contact"
        );
        assert_eq!(
            free.states[k].v, stopped.states[k].v,
            "step {k} before the contact"
        );
    }
    assert_ne!(free.states[contact + 1].v, stopped.states[contact + 1].v);
}

/// Elastic stops (e = 1) keep the energy up to the first-order error at each impact
/// (measured over 2 s, relative: h = 1e-3: 5.7e-2, 1e-4: 8.5e-3, 1e-5: 6.5e-4), plastic ones
/// (e = 0) remove it (0.26 at h = 1e-4): the restitution reaches the LCP.
#[test]
fn panda_elastic_stops_lose_energy_at_first_order_and_plastic_ones_dissipate() {
    let coarse = panda("enforce", 1.0, 1e-3, 2.0)
        .summary
        .max_energy_rel_error;
    let fine = panda("enforce", 1.0, 1e-4, 2.0)
        .summary
        .max_energy_rel_error;
    let plastic = panda("enforce", 0.0, 1e-4, 2.0)
        .summary
        .max_energy_rel_error;
    assert!(fine < coarse / 5.0, "elastic: {coarse:e} → {fine:e}");
    assert!(
        plastic > 10.0 * fine,
        "plastic {plastic:e}, elastic {fine:e}"
    );
}

/// Penetration is one step's approach: a stop becomes active when the midpoint's gap is
/// ≤ 0, so `g(q_m) > −h|ġ_n|` (the previous midpoint had g > 0), and after the impulse
/// `ġ⁺ ≥ e|ġ⁻| ≥ 0` keeps it from going deeper. Hence per stop `min g ≥ −h max|q̇_i|`
/// (measured: at most 0.68 of the bound at h = 1e-4 and 1e-3, e = 0 and 1).
#[test]
fn panda_stops_are_penetrated_by_at_most_one_step() {
    for (e, h) in [(0.0, 1e-4), (1.0, 1e-4), (0.0, 1e-3)] {
        let run = panda("enforce", e, h, 2.0);
        let coordinate = gaps(&run.states[0].q).1;
        let all: Vec<Vec<f64>> = run.states.iter().map(|s| gaps(&s.q).0).collect();
        for (r, &c) in coordinate.iter().enumerate() {
            let vmax = run.states.iter().map(|s| s.v[c].abs()).fold(0.0, f64::max);
            let lowest = all.iter().map(|g| g[r]).fold(f64::INFINITY, f64::min);
            assert!(
                lowest >= -h * vmax,
                "e = {e}, h = {h}, stop {r}: gap {lowest:e} below −h·max|q̇| = {:e}",
                -h * vmax
            );
        }
    }
}
