"""The catalogs and describe: the same ids and declared properties as the command line."""

import subprocess

import pytest

import driftlab


def test_catalogs_list_what_the_command_line_lists(cli):
    listed = subprocess.run([cli, "list", "problems"], capture_output=True, text=True, check=True).stdout
    ids = {p["id"] for p in driftlab.problems()}
    assert {"pendulum", "planar-chain", "andrews", "model"} <= ids
    for i in ids:
        assert i in listed, f"{i} is not in `driftlab list problems`"
    methods = {m["id"]: m for m in driftlab.methods()}
    assert {"rattle", "baumgarte", "generalized-alpha", "radau"} <= set(methods)
    assert methods["rattle"]["orders"]["q"] == 2.0
    assert methods["baumgarte"]["defaults"]["omega_n"] > 0


def test_describe_a_problem_gives_its_sizes_and_rank():
    d = driftlab.describe("planar-chain", links=5)
    assert (d["kind"], d["n"], d["m"], d["jacobian_rank"]) == ("problem", 10, 5, 5)
    assert "citation" in d and d["equations"]


def test_describe_a_method_gives_its_declared_properties():
    d = driftlab.describe("generalized-alpha")
    assert d["kind"] == "method" and d["implicit"] is True


def test_unknown_ids_and_parameters_name_the_fix():
    with pytest.raises(driftlab.InputError, match="neither a problem nor a method"):
        driftlab.describe("no-such-thing")
    with pytest.raises(driftlab.InputError, match="lnks"):
        driftlab.describe("planar-chain", lnks=5)
    with pytest.raises(driftlab.InputError, match="None"):
        driftlab.describe("planar-chain", links=None)
    assert issubclass(driftlab.InputError, ValueError)
