"""VecEnv: reproducible episodes, gymnasium's vector API, the GIL released while
stepping, projected velocity commands, autoreset, and bad input named."""

import threading
import time

import numpy as np
import pytest

import driftlab

ARM = dict(params={"links": 2}, method_params={"xi": 1.0, "omega_n": 20.0}, h=1e-3, t_end=0.05,
           initial={"q_sigma": 0.02, "v_sigma": 0.05}, constraint_noise={"sigma0": 1e-4, "tau": 0.1})


def arm(num_envs=8, **kw):
    return driftlab.VecEnv("planar-chain", "baumgarte", num_envs, **{**ARM, **kw})


def rollout(env, calls=12, seed=3):
    obs, _ = env.reset(seed=seed)
    out = [obs]
    rng = np.random.default_rng(0)
    for _ in range(calls):
        obs, *_ = env.step(rng.normal(size=(env.num_envs, env.action_dim)))
        out.append(obs)
    return np.stack(out)


def test_episodes_reproduce_from_their_seed_on_any_number_of_threads():
    a = rollout(arm(threads=1, substeps=3))
    b = rollout(arm(threads=2, substeps=3))
    np.testing.assert_array_equal(a.view(np.uint64), b.view(np.uint64))
    c = rollout(arm(threads=2, substeps=3), seed=4)
    assert not np.array_equal(a, c), "another seed, other perturbations"


def test_observations_info_and_autoreset():
    env = arm(num_envs=4, substeps=10)
    obs, info = env.reset(seed=1)
    assert obs.shape == (4, 8) and obs.dtype == np.float64 and obs.flags.c_contiguous
    zeros = np.zeros((4, 4))
    for call in range(5):
        obs, rew, term, trunc, info = env.step(zeros)
    assert trunc.all() and not term.any(), "50 steps = t_end / h: the episodes end"
    np.testing.assert_allclose(info["t"], 0.05)
    assert (info["drift"] < 1e-3).all() and np.isfinite(info["energy_error"]).all()
    obs, rew, term, trunc, info = env.step(zeros)
    assert info["reset"].all() and (info["steps"] == 0).all()
    np.testing.assert_array_equal(info["member"], [4, 5, 6, 7])


def test_gymnasium_vector_api():
    gym = pytest.importorskip("gymnasium")
    env = arm(num_envs=3)
    assert isinstance(env, gym.vector.VectorEnv)
    assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert env.single_action_space.shape == (4,)
    obs, rew, term, trunc, info = env.step(env.action_space.sample())
    assert rew.shape == (3,) and term.dtype == np.bool_ and trunc.dtype == np.bool_
    env.close()


def test_a_gymnasium_vector_wrapper_runs_over_it():
    """gymnasium's own episode statistics wrapper, over whole episodes and their autoresets."""
    gym = pytest.importorskip("gymnasium")
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    env = RecordEpisodeStatistics(arm(num_envs=3, substeps=10, reward_fn=lambda o, a, i: -i["drift"]))
    env.reset(seed=0)
    finished = []
    for _ in range(12):
        _, _, term, trunc, info = env.step(np.zeros((3, 4)))
        if "episode" in info:
            finished.extend(info["episode"]["l"][info["_episode"]])
    assert finished and all(length == 5 for length in finished), f"5 calls per episode of 50 steps: {finished}"


def test_stepping_releases_the_gil():
    env = driftlab.VecEnv("planar-chain", "generalized-alpha", 64, params={"links": 20}, h=1e-3, t_end=100.0,
                          substeps=200, threads=1)
    env.reset(seed=0)
    a = np.zeros((64, env.action_dim))
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=count)
    start = time.perf_counter()
    t.start()
    env.step(a)
    elapsed = time.perf_counter() - start
    done.set()
    t.join()
    inside = [x for x in ticks if start < x < start + elapsed]
    assert elapsed > 0.05, f"a step long enough to see ({elapsed:.3f} s)"
    assert len(inside) > 10, f"the other thread ran {len(inside)} times during a {elapsed:.3f} s step"


def test_projected_velocity_commands_drift_at_second_order():
    def drift(project):
        env = driftlab.VecEnv("planar-chain", "taylor", 4, params={"links": 2}, h=1e-3, t_end=1.0,
                              action="velocity", project_actions=project)
        env.reset(seed=0)
        obs, rew, term, trunc, info = env.step(np.cos(0.7 * np.arange(16.0)).reshape(4, 4))
        return info["drift"].max()

    raw, projected = drift(False), drift(True)
    assert raw > 1e-4, f"raw commands leave h Φ_q u: {raw:.2e}"
    assert projected < 1e-5, f"projected: h²|Δv|² ≈ 1e-6, got {projected:.2e}"


def test_rewards_from_a_callable():
    env = arm(num_envs=3, reward_fn=lambda obs, a, info: -info["drift"])
    env.reset()
    _, rew, *_ , info = env.step(np.zeros((3, 4)))
    np.testing.assert_array_equal(rew, -info["drift"])


@pytest.mark.parametrize(
    "actions,match",
    [
        (np.zeros((3, 5)), r"shape \(3, 5\)"),
        (np.full((3, 4), np.nan), r"actions\[0, 0\] = NaN"),
        ([["a"] * 4] * 3, "float array"),
        ("fast", "float array"),
    ],
)
def test_bad_actions_name_the_argument_and_the_fix(actions, match):
    env = arm(num_envs=3)
    env.reset()
    with pytest.raises(driftlab.InputError, match=match):
        env.step(actions)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"num_envs": -1}, "num_envs = -1"),
        ({"num_envs": 0}, "num_envs = 0"),
        ({"substeps": 0}, "substeps = 0"),
        ({"h": 0.0}, "h = 0"),
        ({"constraint_noise": {"sigma0": 1e-3, "tau": 1.0, "decay": "x"}}, "decay"),
        ({"action": "torque"}, "torque"),
        ({"project_actions": True}, "velocity"),
        ({"reward_fn": 3}, "reward_fn"),
        ({"method_params": {"omega": 2.0}}, "omega"),
    ],
)
def test_bad_construction_names_the_argument(kwargs, match):
    args = {"num_envs": 2, **kwargs}
    n = args.pop("num_envs")
    with pytest.raises(driftlab.InputError, match=match):
        arm(num_envs=n, **args)


def test_an_unknown_keyword_and_a_bad_reward_callable():
    with pytest.raises(TypeError, match="num_env"):
        driftlab.VecEnv("pendulum", "baumgarte", num_env=3, h=1e-3)

    def broken(obs, a, info):
        raise RuntimeError("boom")

    env = arm(num_envs=2, reward_fn=broken)
    env.reset()
    with pytest.raises(driftlab.InputError, match="reward_fn raised RuntimeError: boom"):
        env.step(np.zeros((2, 4)))
    env = arm(num_envs=2, reward_fn=lambda obs, a, info: np.zeros(5))
    env.reset()
    with pytest.raises(driftlab.InputError, match=r"shape \(5,\)"):
        env.step(np.zeros((2, 4)))


def test_a_failing_method_terminates_and_names_its_failure():
    env = driftlab.VecEnv("pendulum", "penalty", 2, method_params={"k_p": 1e12, "k_d": 0.0}, h=1e-2, t_end=1.0,
                          substeps=100)
    env.reset()
    obs, rew, term, trunc, info = env.step(np.zeros((2, 2)))
    assert term.all() and not trunc.any()
    assert all(k in ("diverged", "non-finite") for k in info["fail_kind"])
    assert np.isfinite(obs).all()


def test_the_curriculum_strength_follows_the_episodes():
    """The seed's curriculum over episodes (warmup 2 at the start strength 0.1, then a ramp
    to 1 by episode 6): episode e·num_envs + i gets the ensemble member's strength."""
    env = driftlab.VecEnv("pendulum", "baumgarte", 2, method_params={"xi": 1.0, "omega_n": 20.0}, h=1e-3,
                          t_end=0.002, curriculum={"params": {"omega_n": 0.5}, "warmup": 2, "episodes": 6,
                                                   "start": 0.1})
    _, info = env.reset(seed=0)
    seen = {int(e): s for e, s in zip(info["member"], info["strength"])}
    for _ in range(9):
        *_, info = env.step(np.zeros((2, 2)))
        seen.update({int(e): s for e, s in zip(info["member"], info["strength"])})
    assert sorted(seen) == list(range(8))
    assert seen[0] == seen[1] == pytest.approx(0.1)
    assert seen[7] == pytest.approx(1.0)
    assert all(seen[e] <= seen[e + 1] + 1e-15 for e in range(7)), "the ramp rises"


def test_reset_without_a_seed_goes_on_and_rewards_are_zero_on_a_reset():
    env = arm(num_envs=2, reward_fn=lambda obs, a, info: np.ones(2), substeps=50)
    first, _ = env.reset(seed=5)
    nxt, info = env.reset()
    np.testing.assert_array_equal(info["member"], [2, 3])
    assert not np.array_equal(first, nxt)
    again, _ = env.reset(seed=5)
    np.testing.assert_array_equal(first, again)
    _, rew, _, trunc, _ = env.step(np.zeros((2, 4)))
    assert trunc.all() and (rew == 1.0).all()
    _, rew, _, _, info = env.step(np.zeros((2, 4)))
    assert info["reset"].all() and (rew == 0.0).all(), "no reward for a step not taken"


def test_parameters_from_numpy_and_tuples_stay_single_values():
    a = rollout(arm(method_params={"xi": np.float64(1.0), "omega_n": np.float64(20.0)}, threads=1))
    b = rollout(arm(threads=1))
    np.testing.assert_array_equal(a, b)
    model = driftlab.Model(robot="double-pendulum", damping=False, gravity=(0.0, 0.0, -9.81))
    env = driftlab.VecEnv(model, "rattle", 2, h=1e-3, t_end=0.01)
    assert env.action_dim == 2


def test_one_environment_from_two_threads_takes_turns():
    env = arm(num_envs=64, substeps=20, t_end=100.0)
    env.reset(seed=0)
    errors = []

    def work():
        try:
            for _ in range(20):
                env.step(np.zeros((64, 4)))
                env.infos = env._env.infos()
                repr(env)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a deadlock"
    assert not errors


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda env: env.reset(seed=2**64), "2⁶⁴"),
        (lambda env: env.reset(seed=-1), "seed = -1"),
        (lambda env: env.step(np.zeros((3, 4)) + 1j), "complex"),
    ],
)
def test_bad_seeds_and_complex_actions(call, match):
    env = arm(num_envs=3)
    with pytest.raises(driftlab.InputError, match=match):
        call(env)


def test_the_first_reset_starts_episode_zero_and_close_frees_the_environments():
    env = arm(num_envs=3)
    _, info = env.reset()
    np.testing.assert_array_equal(info["member"], [0, 1, 2])
    seeded = arm(num_envs=3)
    a, _ = seeded.reset(seed=0)
    b, _ = arm(num_envs=3).reset()
    np.testing.assert_array_equal(a, b)
    env.close()
    env.close()
    assert env.closed
    with pytest.raises(driftlab.InputError, match="this VecEnv is closed"):
        env.step(np.zeros((3, 4)))


def test_an_mjcf_model_s_motors_are_the_action_space():
    """dm_control's cart-pole from its MJCF: one motor (gear 10 on the slider, control in
    [-1, 1]); a control of 0.5 is the force 5, bit for bit, and 3 is clipped to 1."""
    cart = driftlab.Model(robot="dmc-cartpole")
    kw = dict(method_params={"xi": 1.0, "omega_n": 20.0}, h=1e-3, t_end=0.02)
    motor = driftlab.VecEnv(cart, "baumgarte", 2, action="actuators", substeps=5, **kw)
    force = driftlab.VecEnv(cart, "baumgarte", 2, substeps=5, **kw)
    assert motor.action_dim == 1 and force.action_dim == 2
    assert motor.actuators == [("slide", -1.0, 1.0)]
    motor.reset(seed=0)
    force.reset(seed=0)
    for u, f in [(0.5, 5.0), (3.0, 10.0)]:
        a, *_ = motor.step(np.full((2, 1), u))
        b, *_ = force.step(np.array([[f, 0.0], [f, 0.0]]))
        np.testing.assert_array_equal(a, b)
    assert a[0, 0] != 0.0
    gym = pytest.importorskip("gymnasium")
    assert isinstance(motor.single_action_space, gym.spaces.Box)
    np.testing.assert_array_equal(motor.single_action_space.low, [-1.0])
    with pytest.raises(driftlab.InputError, match="has no actuators"):
        driftlab.VecEnv("planar-chain", "baumgarte", 2, action="actuators", params={"links": 2}, **kw)
