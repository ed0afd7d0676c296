"""The issue's speed targets (issue 31), measured in one process, ratios in one run.

Run with ``pytest --benchmark tests/test_benchmarks.py -s`` (``scripts/python-setup.sh
--bench``); skipped otherwise. The machine is shared and noisy: each target alternates its
two sides several times and takes the median ratio. The measured numbers are written to
``$DRIFTLAB_BENCH_OUT`` (default ``target/python-bench.json``).

* ``VecEnv`` of 1024 pendula (Baumgarte, h = 1e-3), 100 substeps per call, 2 threads:
  at least 80 % of the rollout steps per second of the Rust ensemble doing the same work
  (the same members, episodes of 2 s, metrics every 100 steps, members side by side on
  2 threads: ``driftlab.run`` of an ``[ensemble]`` spec, its ``rollout_steps_per_second``).
* ``VecEnv.step`` with 1 substep, 1024 envs: at most 2× the same calls timed inside Rust
  (``rust_seconds_per_call``): the cost of the Python boundary.
* Not a target, the cost docs/python.md states: a step of RATTLE on the pendulum written as
  Python callables (test_problem.pendulum) against the catalog's pendulum.
"""

import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
import pytest

import driftlab

pytestmark = pytest.mark.benchmark

ENVS, H, T_END = 1024, 1e-3, 2.0
BAUMGARTE = {"xi": 1.0, "omega_n": 20.0}
RESULTS: dict = {}


def _save():
    out = Path(os.environ.get("DRIFTLAB_BENCH_OUT", Path(__file__).resolve().parents[3] / "target" / "python-bench.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(RESULTS, indent=2))
    print(json.dumps(RESULTS, indent=2))


def _ensemble_steps_per_second(tmp_path, k):
    spec = {
        "schema_version": 1, "name": f"bench-ensemble-{k}", "t_end": T_END, "trace_stride": 0,
        "metrics_stride": 100, "repeat": 1, "steps": {"h": [H]},
        "ensemble": {"members": ENVS, "seed": 1},
        "problems": [{"id": "pendulum"}], "methods": [{"id": "baumgarte", "params": BAUMGARTE}],
    }
    df = driftlab.run(spec, tmp_path / f"ensemble-{k}", threads=2)
    return float(df["rollout_steps_per_second"][0])


def _vecenv_steps_per_second(env):
    """Two whole episodes (20 calls of 100 substeps each, and the autoreset call)."""
    env.reset(seed=1)
    a = np.zeros((ENVS, env.action_dim))
    calls = 2 * (env.episode_steps // env.substeps) + 1
    start = time.perf_counter()
    for _ in range(calls):
        env.step(a)
    return 2 * env.episode_steps * ENVS / (time.perf_counter() - start)


def _alternate(pairs, measure_a, measure_b):
    """`pairs` measurements of A then B, alternated: both lists and the ratio A/B per pair."""
    a, b = [], []
    for k in range(pairs):
        a.append(measure_a(k))
        b.append(measure_b(k))
    return a, b, [x / y for x, y in zip(a, b)]


def _record(name, a_name, a, b_name, b, ratios, target):
    RESULTS[name] = {
        f"{a_name}_median": statistics.median(a),
        f"{b_name}_median": statistics.median(b),
        "ratio_per_pair": ratios,
        "ratio_median": statistics.median(ratios),
        "target": target,
    }
    _save()
    return statistics.median(ratios)


def test_vecenv_throughput_against_the_rust_ensemble(tmp_path):
    env = driftlab.VecEnv("pendulum", "baumgarte", ENVS, h=H, t_end=T_END, method_params=BAUMGARTE,
                          substeps=100, threads=2)
    py, rust, ratios = _alternate(5, lambda k: _vecenv_steps_per_second(env),
                                  lambda k: _ensemble_steps_per_second(tmp_path, k))
    ratio = _record("vecenv_100_substeps", "vecenv_steps_per_second", py, "rust_ensemble_steps_per_second", rust,
                    ratios, ">= 0.8")
    assert ratio >= 0.8


def test_one_substep_step_against_rust():
    env = driftlab.VecEnv("pendulum", "baumgarte", ENVS, h=H, t_end=1e3, method_params=BAUMGARTE,
                          substeps=1, threads=2)
    env.reset(seed=1)
    a = np.zeros((ENVS, env.action_dim))
    calls = 400

    def python_side(_):
        start = time.perf_counter()
        for _ in range(calls):
            env.step(a)
        return (time.perf_counter() - start) / calls

    py, rust, ratios = _alternate(7, python_side, lambda _: env.rust_seconds_per_call(calls))
    ratio = _record("step_1_substep", "python_seconds_per_call", py, "rust_seconds_per_call", rust, ratios, "<= 2")
    assert ratio <= 2.0


def test_the_cost_of_a_step_through_python_callables():
    """Recorded, not a target: callables cost what their calls cost (docs/python.md)."""
    from test_problem import pendulum

    problem, steps = pendulum(), 200

    def seconds_per_step(which):
        start = time.perf_counter()
        driftlab.simulate(which, "rattle", h=1e-3, t_end=steps * 1e-3)
        return (time.perf_counter() - start) / steps

    py, rust, ratios = _alternate(7, lambda _: seconds_per_step(problem), lambda _: seconds_per_step("pendulum"))
    ratio = _record("callables_step", "python_callables_seconds_per_step", py, "catalog_seconds_per_step", rust,
                    ratios, "none (recorded)")
    assert ratio > 1.0, "a call into Python per model function costs more than none"
