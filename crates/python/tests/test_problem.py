"""A problem from Python callables: the catalog's pendulum written in Python moves as the
catalog's, the conformance checks find a wrong Jacobian, and a callable that raises or
returns the wrong shape is named."""

import numpy as np
import pytest

import driftlab

G = 9.81


def pendulum(**overrides):
    """The catalog's pendulum (driftlab.describe("pendulum")["equations"]) from θ₀ = 90°."""
    f = dict(
        n=2, m=1,
        mass=lambda q: np.eye(2),
        forces=lambda t, q, v: np.array([0.0, -G]),
        constraints=lambda t, q: np.array([q[0] ** 2 + q[1] ** 2 - 1.0]),
        jacobian=lambda t, q: np.array([[2 * q[0], 2 * q[1]]]),
        gamma=lambda t, q, v: np.array([-2 * (v[0] ** 2 + v[1] ** 2)]),
        energy=lambda t, q, v: 0.5 * (v[0] ** 2 + v[1] ** 2) + G * q[1],
        q0=[1.0, 0.0], v0=[0.0, 0.0], t_end=1.0, energy_scale=G, name="py-pendulum",
    )
    f.update(overrides)
    return driftlab.Problem(**f)


def test_the_python_pendulum_moves_as_the_catalogs():
    mine = driftlab.simulate(pendulum(), "rattle", h=1e-3, t_end=0.5)
    theirs = driftlab.simulate("pendulum", "rattle", h=1e-3, t_end=0.5)
    assert mine.ok and mine.q.shape == theirs.q.shape
    # The same equations in the same order of operations up to rounding: 1e-12 after 500 steps.
    np.testing.assert_allclose(mine.q, theirs.q, atol=1e-12)
    np.testing.assert_allclose(mine.lam, theirs.lam, rtol=1e-9, atol=1e-12)
    assert mine.summary["max_energy_rel_error"] == pytest.approx(theirs.summary["max_energy_rel_error"], rel=1e-6)


def test_conformance_passes_and_finds_a_wrong_jacobian():
    pendulum().check()
    wrong = pendulum(jacobian=lambda t, q: np.array([[2 * q[0], q[1]]]))
    with pytest.raises(driftlab.InputError, match="Φ_q|jacobian|Jacobian"):
        wrong.check()


def test_a_callable_that_raises_or_returns_the_wrong_shape_is_named():
    def broken(t, q, v):
        raise ZeroDivisionError("no")

    with pytest.raises(driftlab.InputError, match="forces raised ZeroDivisionError: no"):
        driftlab.simulate(pendulum(forces=broken), "rattle", h=1e-3, t_end=0.01)
    with pytest.raises(driftlab.InputError, match=r"jacobian returned shape \(2,\); return shape \(1, 2\)|returned shape"):
        driftlab.simulate(pendulum(jacobian=lambda t, q: np.zeros(3)), "rattle", h=1e-3, t_end=0.01)
    with pytest.raises(driftlab.InputError, match="m = -1"):
        pendulum(m=-1)
    with pytest.raises(driftlab.InputError, match="mass = 3"):
        pendulum(mass=3)
    with pytest.raises(driftlab.InputError, match="fixed steps"):
        driftlab.simulate(pendulum(), "radau", rtol=1e-6)


def test_a_keyboard_interrupt_inside_a_callable_is_raised_as_itself():
    def interrupted(t, q, v):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        driftlab.simulate(pendulum(forces=interrupted), "rattle", h=1e-3, t_end=0.01)


def test_a_problem_is_checked_when_made_as_the_catalogs_are():
    # Issue 45: these ran with ok = True before.
    with pytest.raises(driftlab.InputError, match="the start is inconsistent: ‖Φ\\(0, q0\\)‖∞ = 4"):
        pendulum(q0=[2.0, 1.0])
    with pytest.raises(driftlab.InputError, match="not positive definite"):
        pendulum(mass=lambda q: -np.eye(2))
    with pytest.raises(driftlab.InputError, match=r"not symmetric: M\[1, 0\] = 5e-1, M\[0, 1\] = 0e0"):
        pendulum(mass=lambda q: np.array([[1.0, 0.0], [0.5, 1.0]]))
    with pytest.raises(driftlab.InputError, match=r"forces\(0, q0, v0\)\[1\] = NaN"):
        pendulum(forces=lambda t, q, v: np.array([0.0, np.nan]))


def test_check_calls_the_forces_at_perturbed_states():
    # Finite at the start, NaN elsewhere: made, then found by check().
    p = pendulum(forces=lambda t, q, v: np.array([0.0, -G if t == 0.0 else np.nan]))
    with pytest.raises(driftlab.InputError, match="forces\\(0.3, q, v\\)\\[1\\] = NaN at a perturbed state"):
        p.check()


def test_nan_forces_in_a_run_are_a_non_finite_row():
    p = pendulum(forces=lambda t, q, v: np.array([0.0, -G if t < 0.005 else np.nan]))
    r = driftlab.simulate(p, "rattle", h=1e-3, t_end=0.02)
    assert not r.ok and r.fail_kind == "non-finite", r.summary
