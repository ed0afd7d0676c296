//! `Rollout` (driftlab-core): the fixed-step loop taken in chunks. With nothing changed
//! between the chunks it is `drive`, bit for bit, for every kind of method (explicit,
//! projected, implicit with Newton, with memory across steps); a failure inside a chunk
//! is the run's failure, and a velocity command refreshes the method's derived state.

use driftlab_core::{drive, Rollout, RunStatus, Schedule};
use driftlab_methods::build;
use driftlab_problems::build as problem;

fn table(s: &str) -> toml::Table {
    s.parse().expect("a TOML table")
}

fn bits(x: &[f64]) -> Vec<u64> {
    x.iter().map(|v| v.to_bits()).collect()
}

/// `id` on a two-link chain, 60 steps of h = 1e-3, whole and in chunks of 1, 7 and 60.
fn chunks_agree_with_drive(id: &str, params: &str) {
    let p = problem("planar-chain", &table("links = 2")).expect("planar chain");
    let h = 1e-3;
    let schedule = Schedule::fixed(h, 60.0 * h);
    let m = build(id, &table(params), None).expect("method");
    let whole = drive(p.as_system(), m.as_ref(), &schedule, &mut []);
    assert_eq!(whole.status, RunStatus::Ok, "{id}");
    for chunk in [1, 7, 60] {
        let mut r = Rollout::start(p.as_system(), m.as_ref(), h, &schedule).expect("start");
        let mut done = 0;
        while done < 60 {
            let n = chunk.min(60 - done);
            assert_eq!(r.advance(n, &mut []), &RunStatus::Ok, "{id}");
            done += n;
        }
        assert_eq!(r.steps(), 60);
        let s = r.state();
        let w = &whole.final_state;
        assert_eq!(s.t.to_bits(), w.t.to_bits(), "{id}, chunks of {chunk}: t");
        assert_eq!(bits(&s.q), bits(&w.q), "{id}, chunks of {chunk}: q");
        assert_eq!(bits(&s.v), bits(&w.v), "{id}, chunks of {chunk}: v");
        assert_eq!(bits(&s.lambda), bits(&w.lambda), "{id}: λ");
        let out = r.finish();
        assert_eq!(out.stats, whole.stats, "{id}: the method's counters");
    }
}

#[test]
fn chunks_reproduce_drive() {
    chunks_agree_with_drive("baumgarte", "xi = 1.0\nomega_n = 20.0");
    chunks_agree_with_drive("rattle", "");
    chunks_agree_with_drive("generalized-alpha", "rho_inf = 0.9");
    chunks_agree_with_drive("radau", "");
}

/// A failure inside a chunk is the rollout's: the status names it, the state is the last
/// good one, and later chunks take no step.
#[test]
fn a_failure_ends_the_rollout_at_the_last_good_state() {
    let p = problem("pendulum", &toml::Table::new()).expect("pendulum");
    // Penalty with symplectic Euler beyond its explicit stability limit ω h ≫ 2.
    let m = build("penalty", &table("k_p = 1e12\nk_d = 0.0"), None).expect("penalty");
    let h = 1e-2;
    let mut r =
        Rollout::start(p.as_system(), m.as_ref(), h, &Schedule::fixed(h, 1.0)).expect("start");
    let status = r.advance(500, &mut []).clone();
    let RunStatus::Failed { t, .. } = status else {
        panic!("expected the penalty method to fail, got {status:?}");
    };
    let steps = r.steps();
    assert!(steps < 500);
    assert!(r.state().q.iter().all(|x| x.is_finite()));
    assert_eq!(
        r.state().t.to_bits(),
        t.to_bits(),
        "the last good state's time"
    );
    r.advance(10, &mut []);
    assert_eq!(r.steps(), steps, "no step after a failure");
}

/// A velocity command replaces v; Baumgarte's step then starts from it (the constrained
/// acceleration is recomputed), and the position after one step is q + h v_new + O(h²).
#[test]
fn a_velocity_command_is_the_next_step_velocity() {
    let p = problem("pendulum", &toml::Table::new()).expect("pendulum");
    let m = build("baumgarte", &table("xi = 1.0\nomega_n = 20.0"), None).expect("method");
    let h = 1e-4;
    let mut r =
        Rollout::start(p.as_system(), m.as_ref(), h, &Schedule::fixed(h, 1.0)).expect("start");
    r.advance(3, &mut []);
    let q = r.state().q.clone();
    let command: Vec<f64> = r.state().v.iter().map(|v| v + 0.25).collect();
    r.set_velocity(&command).expect("refresh");
    assert_eq!(bits(&r.state().v), bits(&command));
    r.advance(1, &mut []);
    for i in 0..q.len() {
        let predicted = q[i] + h * command[i];
        // One step's second-order term: h² |a| / 2 with |a| ≲ 1e2 here.
        assert!(
            (r.state().q[i] - predicted).abs() < 1e-6,
            "q[{i}] = {} vs q + h v = {predicted}",
            r.state().q[i]
        );
    }
}

/// After a velocity command, the methods that carry an acceleration into the next step
/// restart from the new state: RATTLE's `a_n` and generalized-α's `v̇_n` satisfy the
/// acceleration constraint `Φ_q a = γ(q, v)` of the new `v` (the old one would not: γ
/// changes with v). Baumgarte's acceleration satisfies its stabilized constraint instead
/// (`a_velocity_command_is_the_next_step_velocity` covers it).
#[test]
fn a_velocity_command_restarts_the_carried_acceleration() {
    for (id, params) in [("rattle", ""), ("generalized-alpha", "rho_inf = 0.9")] {
        let p = problem("planar-chain", &table("links = 3")).expect("chain");
        let m = build(id, &table(params), None).expect("method");
        let h = 1e-3;
        let mut r =
            Rollout::start(p.as_system(), m.as_ref(), h, &Schedule::fixed(h, 1.0)).expect("start");
        r.advance(5, &mut []);
        let command: Vec<f64> = r
            .state()
            .v
            .iter()
            .enumerate()
            .map(|(i, v)| v + 0.3 * (i as f64).cos())
            .collect();
        r.set_velocity(&command).expect("restart");
        let acc = r.metrics().acc_residual;
        assert!(
            acc < 1e-10,
            "{id}: ‖Φ_q a − γ‖∞ = {acc:e} after the command"
        );
        assert_eq!(r.advance(5, &mut []), &RunStatus::Ok, "{id}");
    }
}
