"""simulate: the command line's numbers bit for bit, an observed order against the
declared one, failures as results, bad input as InputError."""

import csv
import math
import re
import subprocess

import numpy as np
import pytest

import driftlab


def _trace(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], np.array([[float(x) for x in r] for r in rows[1:]])
    return {name: body[:, k] for k, name in enumerate(header)}


@pytest.mark.parametrize(
    "problem,method,params,method_params,projection",
    [
        ("pendulum", "rattle", {}, {}, None),
        ("planar-chain", "baumgarte", {"links": 3}, {"xi": 1.0, "omega_n": 20.0}, None),
        ("slider-crank", "generalized-alpha", {}, {"rho_inf": 0.8}, None),
        ("pendulum", "taylor", {"theta0_deg": 60.0}, {}, {"tol": 1e-10}),
    ],
)
def test_simulate_equals_the_command_line_bit_for_bit(cli, tmp_path, problem, method, params, method_params, projection):
    h, t_end = 1e-3, 0.2
    args = [cli, "simulate", "--problem", problem, "--method", method, "--h", repr(h), "--t-end", repr(t_end),
            "--trace", str(tmp_path / "trace.csv")]
    for k, v in params.items():
        args += ["--set", f"problem.{k}={v!r}"]
    for k, v in method_params.items():
        args += ["--set", f"method.{k}={v!r}"]
    for k, v in (projection or {}).items():
        args += ["--set", f"projection.{k}={v!r}"]
    printed = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    r = driftlab.simulate(problem, method, h=h, t_end=t_end, params=params, method_params=method_params,
                          projection=projection)
    want = _trace(tmp_path / "trace.csv")
    n, m = r.q.shape[1], r.lam.shape[1]
    got = {"t": r.t, "pos_residual": r.pos_residual, "vel_residual": r.vel_residual,
           "energy_rel_error": r.energy_rel_error}
    got.update({f"q{i}": r.q[:, i] for i in range(n)})
    got.update({f"v{i}": r.v[:, i] for i in range(n)})
    got.update({f"lambda{i}": r.lam[:, i] for i in range(m)})
    assert set(got) == set(want)
    for name, column in want.items():
        np.testing.assert_array_equal(got[name].view(np.uint64), column.view(np.uint64), err_msg=name)
    printed_max = float(re.search(r"max ‖Φ‖∞ = (\S+)", printed).group(1))
    assert printed_max == r.summary["max_pos_residual"], "the summary the command line prints"
    assert r.ok and r.summary["steps"] == round(t_end / h)


def test_rattle_converges_at_its_declared_order():
    declared = next(m for m in driftlab.methods() if m["id"] == "rattle")["orders"]["q"]
    errors = [driftlab.simulate("pendulum", "rattle", h=h, t_end=1.0).summary["err_q"] for h in (4e-3, 2e-3, 1e-3)]
    observed = [math.log2(a / b) for a, b in zip(errors, errors[1:])]
    # The pendulum's exact solution (Jacobi elliptic functions): the error falls as h^p.
    for p in observed:
        assert abs(p - declared) < 0.1, f"observed order {p:.3f} vs declared {declared}"


def test_a_failing_method_is_a_result_not_an_exception():
    r = driftlab.simulate("pendulum", "penalty", h=1e-2, t_end=1.0, method_params={"k_p": 1e12, "k_d": 0.0})
    assert not r.ok
    assert r.fail_kind in {"diverged", "non-finite"}
    assert r.summary["fail_time"] < 1.0 and r.summary["fail_reason"]
    assert np.all(np.isfinite(r.q)), "the kept states are the good ones"


def test_error_controlled_runs_take_a_tolerance():
    r = driftlab.simulate("andrews", "radau", rtol=1e-6, t_end=0.003)
    assert r.ok and r.t[-1] == pytest.approx(0.003)
    assert np.all(np.diff(r.t) > 0)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"problem": "pendulm", "method": "rattle", "h": 1e-3}, "pendulm"),
        ({"problem": "pendulum", "method": "rattle", "h": -1.0}, "h = -1"),
        ({"problem": "pendulum", "method": "rattle"}, "give h"),
        ({"problem": "pendulum", "method": "rattle", "h": 1e-3, "rtol": 1e-6}, "not both"),
        ({"problem": "pendulum", "method": "rattle", "h": "0.1"}, "give a number"),
        ({"problem": "pendulum", "method": "rattle", "h": 1e-3, "params": {"thta0_deg": 3}}, "thta0_deg"),
        ({"problem": "pendulum", "method": "rattle", "h": 1e-3, "stride": 0}, "stride"),
        ({"problem": "pendulum", "method": "rattle", "h": 1e-3, "t_end": 0.0}, "t_end"),
        ({"problem": 3, "method": "rattle", "h": 1e-3}, "catalog id"),
    ],
)
def test_bad_input_raises_input_error_naming_the_argument(kwargs, match):
    with pytest.raises(driftlab.InputError, match=match):
        driftlab.simulate(**kwargs)


def test_an_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="hh"):
        driftlab.simulate("pendulum", "rattle", hh=1e-3)


def test_stride_keeps_every_kth_step_and_the_last():
    r = driftlab.simulate("pendulum", "rattle", h=1e-3, t_end=0.012, stride=5)
    np.testing.assert_allclose(r.t, [0.0, 0.005, 0.010, 0.012], rtol=1e-12)
    assert r.q.shape == (4, 2)


def test_a_run_whose_kept_states_exceed_memory_is_refused_before_it_starts():
    with pytest.raises(driftlab.InputError, match="refused before allocating"):
        driftlab.simulate("planar-chain", "rattle", h=1e-5, t_end=100.0, params={"links": 100000})


def test_numpy_scalars_cross_as_the_same_numbers():
    a = driftlab.simulate("pendulum", "baumgarte", h=1e-3, t_end=0.1, method_params={"omega_n": np.float64(7.5)})
    b = driftlab.simulate("pendulum", "baumgarte", h=1e-3, t_end=0.1, method_params={"omega_n": 7.5})
    np.testing.assert_array_equal(a.q, b.q)


def test_a_run_beyond_the_process_address_space_is_refused_not_aborted():
    # Issue 45: under `ulimit -v` (here RLIMIT_AS = 3 GB, the machine's memory free) the
    # interpreter aborted part-way; the cell is now refused before it allocates, naming
    # the limit. In a child process, so that the limit stays there.
    import subprocess
    import sys
    code = (
        "import resource, driftlab\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3_000_000_000, 3_000_000_000))\n"
        "try:\n"
        "    driftlab.simulate('planar-chain', 'baumgarte', h=1e-3, t_end=0.01, params={'links': 20_000_000})\n"
        "except driftlab.InputError as e:\n"
        "    print('refused:', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("refused: initialization failed: refused before allocating"), out.stdout
    assert "RLIMIT_AS (ulimit -v)" in out.stdout, out.stdout
