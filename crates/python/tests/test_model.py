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
