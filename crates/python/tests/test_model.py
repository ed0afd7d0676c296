"""Model: a shipped robot and a model file from Python, with file errors named."""

import numpy as np
import pytest

import driftlab


def test_a_shipped_robot_in_two_coordinate_choices():
    # Natural coordinates carry no joint damping: both without it (a conservative model).
    joint = driftlab.Model(robot="double-pendulum", damping=False)
    natural = driftlab.Model(robot="double-pendulum", coordinates="natural", damping=False)
    dj, dn = joint.describe(), natural.describe()
    assert dj["n"] == 2 and dj["m"] == 0
    assert dn["m"] > 0 and dn["jacobian_rank"] == dn["m"]
    a = driftlab.simulate(joint, "rattle", h=1e-3, t_end=0.05)
    b = driftlab.simulate(natural, "rattle", h=1e-3, t_end=0.05)
    assert a.ok and b.ok
    # The same mechanism: the energy drifts alike at this h in both coordinate choices.
    assert a.summary["max_energy_rel_error"] < 1e-4 and b.summary["max_energy_rel_error"] < 1e-4


def test_a_toml_model_file(root):
    m = driftlab.Model(root / "models" / "rssr-linkage.toml")
    d = m.describe()
    assert d["m"] > 0
    r = driftlab.simulate(m, "generalized-alpha", h=1e-3, t_end=0.02)
    assert r.ok and np.max(r.pos_residual) < 1e-8


def test_model_errors_name_the_file_and_the_fix(tmp_path):
    with pytest.raises(driftlab.InputError, match="file or robot"):
        driftlab.Model()
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'/><joint name='j' type='revolute'><parent link='a'/></joint></robot>")
    with pytest.raises(driftlab.InputError, match="bad.urdf"):
        driftlab.Model(bad).describe()


def test_a_model_of_a_missing_file_is_refused_at_once(tmp_path):
    with pytest.raises(driftlab.InputError, match="nope.urdf'?: no such file"):
        driftlab.Model(tmp_path / "nope.urdf")
    with pytest.raises(driftlab.InputError, match="it is a folder"):
        driftlab.Model(tmp_path)


def test_tune_gives_every_engine_the_critically_damped_law_at_the_step(root):
    # At h = 2e-3: ξ = 1, ω_n = 1/(2h) = 250 /s (driftlab_report::tuning::recommended), so
    # MuJoCo's solref = (1/(ξω_n), ξ) = (4e-3, 1), Pinocchio's Kp = ω_n² = 62500, Kd = 2ξω_n
    # = 500, ODE's ERP = hω_n/(hω_n + 2ξ) = 0.2 and CFM·m = 1/(hω_n² + 2ξω_n) = 1.6e-3 s.
    t = driftlab.tune(driftlab.Model(root / "models" / "four-bar.xml"), 2e-3)
    assert t["xi"] == 1.0 and t["omega_n"] == pytest.approx(250.0, rel=1e-15)
    assert t["mujoco"]["solref"] == pytest.approx([4e-3, 1.0], rel=1e-15)
    assert (t["pinocchio"]["kp"], t["pinocchio"]["kd"]) == pytest.approx((62500.0, 500.0), rel=1e-15)
    assert (t["ode"]["erp"], t["ode"]["cfm_times_mass"]) == pytest.approx((0.2, 1.6e-3), rel=1e-14)
    assert t["rapier"]["frequency_hz"] == pytest.approx(250.0 / (2 * np.pi), rel=1e-15)
    (loop,) = t["groups"]  # the connect equality: a ball closure, 3 rows
    assert loop["kind"] == "ball" and loop["rows"] == len(loop["effective_masses"]) == 3
    for m, cfm in zip(loop["effective_masses"], loop["ode_cfm"]):
        if m is not None:
            assert m > 0 and cfm == pytest.approx(1.6e-3 / m, rel=1e-14)
    same = driftlab.tune("robot:mjcf-four-bar", 2e-3)
    assert same["groups"] == t["groups"]
    with pytest.raises(driftlab.InputError, match="no loop closure or coupling"):
        driftlab.tune("robot:gym-ant", 2e-3)
    for h in (0.0, float("nan"), 1e308):  # 1e308 had given solref τ = ∞
        with pytest.raises(driftlab.InputError, match="give the step in seconds"):
            driftlab.tune("robot:mjcf-four-bar", h)
    with pytest.raises(driftlab.InputError, match="h = 'abc'; give the step"):
        driftlab.tune("robot:mjcf-four-bar", "abc")
