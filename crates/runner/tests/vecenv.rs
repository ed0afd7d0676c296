//! The vectorized environment (issue 31, seed 001 §3.6): episodes that are the ensemble's
//! members bit for bit, reproducible on any number of threads, forces that do the work
//! the energy balance says, projected velocity commands that leave only second-order
//! drift, the autoreset of gymnasium's vector API, and bad actions refused by name.
#![allow(clippy::float_cmp)] // bitwise reproducibility

use driftlab_core::{drive, MechanicalSystem, RunStatus};
use driftlab_runner::exec::members::{mechanical_problem, member_setup};
use driftlab_runner::spec::cell::expand;
use driftlab_runner::vecenv::{ActionMode, VecEnv};
use driftlab_runner::{Registry, Spec};

/// A one-cell spec of `problem` and `method` with noise and a curriculum.
fn spec(problem: &str, method: &str, members: usize, t_end: f64, h: f64) -> Spec {
    let text = format!(
        r#"
schema_version = 1
name = "vecenv"
t_end = {t_end}
trace_stride = 0
[steps]
h = [{h:e}]
[ensemble]
members = {members}
seed = 7
initial = {{ q_sigma = 0.02, v_sigma = 0.05 }}
constraint_noise = {{ sigma0 = 1e-4, tau = 0.1 }}
curriculum = {{ params = {{ omega_n = 0.5 }}, warmup = 2, episodes = 6 }}
[[problems]]
{problem}
[[methods]]
{method}
"#
    );
    toml::from_str(&text).expect("spec")
}

const CHAIN: &str = "id = \"planar-chain\"\nparams = { links = 2 }";
const BAUMGARTE: &str = "id = \"baumgarte\"\nparams = { xi = 1.0, omega_n = 20.0 }";

fn env(spec: &Spec, action: ActionMode, threads: usize) -> VecEnv {
    VecEnv::from_spec(Registry::default(), spec, action, threads).expect("environment")
}

/// With zero forces, every episode of every environment ends on the state of the
/// ensemble member it is, driven whole by `drive` (chunks of 7 steps, 50 steps an episode).
#[test]
fn vecenv_episodes_are_ensemble_members() {
    let spec = spec(CHAIN, BAUMGARTE, 4, 0.05, 1e-3);
    let mut e = env(&spec, ActionMode::Force, 2);
    let (envs, d) = (e.num_envs(), e.observation_dim());
    let zeros = vec![0.0; envs * e.action_dim()];
    let mut obs = vec![0.0; envs * d];
    for _ in 0..8 {
        e.step(&zeros, 7, &mut obs).expect("step");
    }
    assert!(e
        .infos()
        .all(|i| i.truncated && i.steps == 50 && i.episode < envs));
    // The expected states: each member driven by the loop of every run.
    let registry = Registry::default();
    let sized = spec.sized(None, "vecenv").expect("sized");
    let cell = expand(&sized, "vecenv", &registry).expect("cell").remove(0);
    let ens = spec.ensemble.clone().expect("ensemble");
    let problem = mechanical_problem(&registry, &cell).expect("problem");
    let n = e.action_dim();
    for i in 0..envs {
        let setup = member_setup(&registry, &cell, &ens, &problem, i, None).expect("member");
        let sys: &dyn MechanicalSystem = &setup.system;
        let schedule = driftlab_core::Schedule::fixed(cell.h, cell.t_end);
        let out = drive(sys.into(), setup.method.as_ref(), &schedule, &mut []);
        assert_eq!(out.status, RunStatus::Ok);
        let row = &obs[i * d..(i + 1) * d];
        let want: Vec<u64> = out
            .final_state
            .q
            .iter()
            .chain(&out.final_state.v)
            .map(|x| x.to_bits())
            .collect();
        let got: Vec<u64> = row.iter().map(|x| x.to_bits()).collect();
        assert_eq!(got, want, "env {i}: q and v after its episode");
        assert_eq!(row.len(), 2 * n);
    }
    // The next call starts episode 1 of each environment: member num_envs + i.
    e.step(&zeros, 7, &mut obs).expect("step");
    for (i, info) in e.infos().enumerate() {
        assert!(info.reset && !info.truncated && info.steps == 0 && info.t == 0.0);
        assert_eq!(info.episode, envs + i);
    }
}

/// Random forces, one thread and two: the same observations bit for bit.
#[test]
fn environments_reproduce_on_any_number_of_threads() {
    let spec = spec(CHAIN, BAUMGARTE, 16, 0.05, 1e-3);
    let run = |threads| {
        let mut e = env(&spec, ActionMode::Force, threads);
        let mut obs = vec![0.0; e.num_envs() * e.observation_dim()];
        let mut all = Vec::new();
        for call in 0..12_u32 {
            let actions: Vec<f64> = (0..e.num_envs() * e.action_dim())
                .map(|k| ((k as f64 + 0.3) * f64::from(call + 1)).sin())
                .collect();
            e.step(&actions, 5, &mut obs).expect("step");
            all.extend(obs.iter().map(|x| x.to_bits()));
        }
        all
    };
    assert_eq!(run(1), run(2));
}

/// A constant force `u` on a conservative method: `H(q, v) − u·q` is conserved (the
/// force is the gradient of the potential −u·q), to RATTLE's O(h²) energy error, while
/// `H` itself changes by the work done, `u·Δq`, orders of magnitude more.
#[test]
fn a_held_force_does_the_work_of_its_potential() {
    let pend = "id = \"planar-chain\"\nparams = { links = 1 }";
    let mut spec = spec(pend, "id = \"rattle\"", 1, 1.0, 1e-3);
    let ens = spec.ensemble.as_mut().expect("ensemble");
    ens.constraint_noise = None;
    ens.curriculum = None;
    let mut e = env(&spec, ActionMode::Force, 1);
    let registry = Registry::default();
    let sized = spec.sized(None, "vecenv").expect("sized");
    let cell = expand(&sized, "vecenv", &registry).expect("cell").remove(0);
    let sys = mechanical_problem(&registry, &cell).expect("problem");
    let n = e.action_dim();
    let u: Vec<f64> = (0..n).map(|k| if k % 2 == 0 { 3.0 } else { 0.0 }).collect();
    let mut obs = vec![0.0; e.observation_dim()];
    e.observe(&mut obs).expect("observe");
    let (q0, v0) = obs.split_at(n);
    let h0 = sys.energy(0.0, q0, v0).expect("energy");
    let uq0: f64 = u.iter().zip(q0).map(|(a, b)| a * b).sum();
    for _ in 0..10 {
        e.step(&u, 50, &mut obs).expect("step");
    }
    let (q, v) = obs.split_at(n);
    let h = sys.energy(0.5, q, v).expect("energy");
    let uq: f64 = u.iter().zip(q).map(|(a, b)| a * b).sum();
    let work = uq - uq0;
    let balance = (h - h0) - work;
    assert!(
        work.abs() > 1e-2,
        "the force moved the mass: u·Δq = {work:e}"
    );
    assert!(
        balance.abs() < 1e-4 * (1.0 + h0.abs()),
        "H − H₀ = {:e} against the work u·Δq = {work:e}: balance {balance:e}",
        h - h0
    );
}

/// Velocity commands on the two-link arm, one step of h = 1e-3 each: projected onto the
/// feasible velocities, a command leaves drift of order h² (the curvature term); raw, it
/// leaves h Φ_q u.
#[test]
fn projected_velocity_commands_drift_at_second_order() {
    let mut spec = spec(CHAIN, "id = \"taylor\"", 4, 0.5, 1e-3);
    let ens = spec.ensemble.as_mut().expect("ensemble");
    ens.constraint_noise = None;
    ens.curriculum = None;
    let drift_after = |project: bool| {
        let mut e = env(&spec, ActionMode::Velocity { project }, 1);
        let mut obs = vec![0.0; e.num_envs() * e.observation_dim()];
        let actions: Vec<f64> = (0..e.num_envs() * e.action_dim())
            .map(|k| (k as f64 * 0.7).cos())
            .collect();
        e.step(&actions, 1, &mut obs).expect("step");
        e.infos().map(|i| i.drift).fold(0.0_f64, f64::max)
    };
    let (projected, raw) = (drift_after(true), drift_after(false));
    assert!(raw > 1e-4, "raw commands leave h Φ_q u: {raw:e}");
    assert!(
        projected < 1e-5,
        "projected: h² |Δv|² ≈ 1e-6, got {projected:e}"
    );
}

/// Bad actions are refused before any step, naming the entry and the fix.
#[test]
fn bad_actions_are_refused_by_name() {
    let spec = spec(CHAIN, BAUMGARTE, 3, 0.05, 1e-3);
    let mut e = env(&spec, ActionMode::Force, 1);
    let mut obs = vec![0.0; e.num_envs() * e.observation_dim()];
    let mut a = vec![0.0; e.num_envs() * e.action_dim()];
    a[5] = f64::NAN;
    let err = e.step(&a, 1, &mut obs).expect_err("NaN");
    assert!(
        err.contains("actions[1, 1] = NaN") && err.contains("finite"),
        "{err}"
    );
    let err = e.step(&a[..4], 1, &mut obs).expect_err("length");
    assert!(err.contains("shape (3, 4)"), "{err}");
    assert!(e.infos().all(|i| i.steps == 0), "no environment stepped");
    let err = e.step(&[0.0; 12], 0, &mut obs).expect_err("substeps");
    assert!(err.contains("substeps = 0"), "{err}");
}

/// A performance-driven curriculum (the ensemble's or the method entry's own) is refused:
/// its strengths come from generations of rollouts, which a policy drives here.
#[test]
fn performance_curricula_are_refused_by_name() {
    let perf = "curriculum = { params = { omega_n = 0.5 }, ramp = \"performance\", feedback = { generation = 2 } }";
    let entry = format!("{BAUMGARTE}\n{perf}");
    let err = VecEnv::from_spec(
        Registry::default(),
        &spec(CHAIN, &entry, 3, 0.05, 1e-3),
        ActionMode::Force,
        1,
    )
    .err()
    .expect("refused");
    assert!(
        err.contains("ramp") && err.contains("\"performance\""),
        "{err}"
    );
}

/// A method that fails ends its episode as terminated, with the failure's kind; the next
/// call begins the next episode.
#[test]
fn a_failing_method_terminates_its_episode() {
    let pend = "id = \"pendulum\"";
    let penalty = "id = \"penalty\"\nparams = { k_p = 1e12, k_d = 0.0 }";
    let mut spec = spec(pend, penalty, 2, 1.0, 1e-2);
    spec.ensemble.as_mut().expect("ensemble").curriculum = None;
    let mut e = env(&spec, ActionMode::Force, 1);
    let mut obs = vec![0.0; e.num_envs() * e.observation_dim()];
    let zeros = vec![0.0; e.num_envs() * e.action_dim()];
    e.step(&zeros, 100, &mut obs).expect("step");
    for info in e.infos() {
        assert!(info.terminated && !info.truncated, "{info:?}");
        assert!(info.fail_kind.is_some() && info.fail_reason.is_some());
        assert!(info.steps < 100);
    }
    assert!(
        obs.iter().all(|x| x.is_finite()),
        "the last good state is observed"
    );
    e.step(&zeros, 1, &mut obs).expect("step");
    assert!(e.infos().all(|i| i.reset && !i.terminated));
}

/// A force set at a call acts from that call's first step: the environment's step equals
/// a rollout started with the force already held (Baumgarte and RATTLE carry their last
/// acceleration over, so the environment restarts them when the force changes). Without
/// the restart the first step uses the old force's acceleration: q₀ then differs by
/// 8e-9 (measured with the restart removed), against the 1e-13 asserted.
#[test]
fn a_changed_force_acts_from_the_next_step() {
    for method in [BAUMGARTE, "id = \"rattle\""] {
        let mut spec = spec("id = \"pendulum\"", method, 1, 1.0, 1e-3);
        spec.ensemble.as_mut().expect("ensemble").curriculum = None;
        let mut e = env(&spec, ActionMode::Force, 1);
        let u = [3.0, -1.0];
        let mut obs = vec![0.0; e.observation_dim()];
        e.step(&u, 1, &mut obs).expect("step");
        // The same member with the force held from its start.
        let registry = Registry::default();
        let sized = spec.sized(None, "vecenv").expect("sized");
        let cell = expand(&sized, "vecenv", &registry).expect("cell").remove(0);
        let ens = spec.ensemble.clone().expect("ensemble");
        let problem = mechanical_problem(&registry, &cell).expect("problem");
        let setup = member_setup(&registry, &cell, &ens, &problem, 0, None).expect("member");
        let sys = driftlab_runner::vecenv::Actuated::new(setup.system);
        sys.set_force(&u);
        let sys: &dyn MechanicalSystem = &sys;
        let schedule = driftlab_core::Schedule::fixed(cell.h, cell.t_end);
        let mut r =
            driftlab_core::Rollout::start(sys.into(), setup.method.as_ref(), cell.h, &schedule)
                .expect("start");
        r.advance(1, &mut []);
        let want: Vec<f64> = r.state().q.iter().chain(&r.state().v).copied().collect();
        for (k, (a, b)) in obs.iter().zip(&want).enumerate() {
            assert!(
                (a - b).abs() <= 1e-13 * (1.0 + b.abs()),
                "{method}: [{k}] {a:e} vs {b:e}"
            );
        }
    }
}

/// `reset()` without a seed goes on to the next episodes; with the seed it replays them.
#[test]
fn reset_without_a_seed_goes_on() {
    let spec = spec(CHAIN, BAUMGARTE, 3, 0.05, 1e-3);
    let mut e = env(&spec, ActionMode::Force, 1);
    let mut first = vec![0.0; 3 * e.observation_dim()];
    e.reset(Some(7), &mut first).expect("reset");
    let mut next = first.clone();
    e.reset(None, &mut next).expect("reset");
    assert!(e.infos().enumerate().all(|(i, info)| info.episode == 3 + i));
    assert_ne!(first, next, "other episodes, other perturbations");
    let mut again = first.clone();
    e.reset(Some(7), &mut again).expect("reset");
    assert_eq!(first, again);
    assert!(
        e.reset(None, &mut again[..2]).is_err(),
        "a short buffer is refused"
    );
}

/// The first `reset()` without a seed starts episode 0: the episode `new` began to check
/// that the environments can start is not skipped (issue 45).
#[test]
fn the_first_reset_starts_episode_zero() {
    let spec = spec(CHAIN, BAUMGARTE, 3, 0.05, 1e-3);
    let mut e = env(&spec, ActionMode::Force, 1);
    let mut obs = vec![0.0; 3 * e.observation_dim()];
    e.reset(None, &mut obs).expect("reset");
    let episodes: Vec<usize> = e.infos().map(|i| i.episode).collect();
    assert_eq!(
        episodes,
        [0, 1, 2],
        "members 0, 1, 2: episode 0 of each environment"
    );
    let mut seeded = obs.clone();
    let mut fresh = env(&spec, ActionMode::Force, 1);
    fresh.reset(Some(7), &mut seeded).expect("reset");
    assert_eq!(
        obs, seeded,
        "the same as a reset with the construction's seed"
    );
    e.reset(None, &mut obs).expect("reset");
    assert!(
        e.infos().enumerate().all(|(i, info)| info.episode == 3 + i),
        "then the next ones"
    );
}

/// An MJCF model's motors as the action space (issue 47): dm_control's cart-pole has one,
/// `gear = 10` on the slider with `ctrlrange = [-1, 1]`; a control of 0.5 is the force 5 on
/// the slider, bit for bit, and a control of 3 is clipped to 1 (the force 10).
#[test]
fn mjcf_motors_are_the_action_space() {
    let cartpole = "id = \"model\"\nparams = { robot = \"dmc-cartpole\" }";
    let cart = spec(cartpole, BAUMGARTE, 2, 0.02, 1e-3);
    let mut by_motor = env(&cart, ActionMode::Actuators, 1);
    let mut by_force = env(&cart, ActionMode::Force, 1);
    assert_eq!(by_motor.action_dim(), 1);
    assert_eq!(by_motor.actuators()[0].ctrlrange, Some([-1.0, 1.0]));
    let d = by_motor.observation_dim();
    let (mut a, mut b) = (vec![0.0; 2 * d], vec![0.0; 2 * d]);
    for (u, f) in [(0.5, 5.0), (3.0, 10.0), (-0.25, -2.5)] {
        by_motor.step(&[u, u], 5, &mut a).expect("motor step");
        by_force
            .step(&[f, 0.0, f, 0.0], 5, &mut b)
            .expect("force step");
        assert_eq!(a, b, "control {u} against force {f}");
    }
    assert!(a[0] != 0.0, "the cart moved: {a:?}");
    let tree = "id = \"planar-chain\"\nparams = { links = 2 }";
    let err = VecEnv::from_spec(
        Registry::default(),
        &spec(tree, BAUMGARTE, 2, 0.02, 1e-3),
        ActionMode::Actuators,
        1,
    )
    .err()
    .expect("a problem without actuators is refused");
    assert!(err.contains("has no actuators"), "{err}");
}
