"""run and report: a dict spec and its TOML file give the table the command line writes,
Ctrl-C leaves a folder that resume completes, bad specs name their key."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import polars as pl
import pytest

import driftlab

SPEC = {
    "schema_version": 1,
    "name": "py-run",
    "t_end": 0.5,
    "trace_stride": 10,
    "steps": {"h": [1e-2, 5e-3, 2.5e-3]},
    "problems": [{"id": "pendulum"}, {"id": "planar-chain", "params": {"links": 3}}],
    "methods": [
        {"id": "rattle"},
        {"id": "baumgarte", "params": {"xi": 1.0, "omega_n": 20.0}},
        {"id": "taylor", "projection": {"tol": 1e-10}},
    ],
}


def test_run_returns_the_parquet_table_and_agrees_with_the_command_line(cli, tmp_path):
    df = driftlab.run(SPEC, tmp_path / "py", threads=2)
    assert df.equals(pl.read_parquet(tmp_path / "py" / "runs.parquet"))
    assert df.height == 18 and (df["status"] == "ok").all()
    # The same spec as a file through `driftlab run`: every non-timing column equal.
    spec_file = tmp_path / "py-run.toml"
    spec_file.write_text((tmp_path / "py" / "spec.toml").read_text() if (tmp_path / "py" / "spec.toml").exists()
                         else driftlab._toml.document(SPEC, "spec"))
    subprocess.run([cli, "run", str(spec_file), "--out", str(tmp_path / "cli"), "--threads", "2"],
                   check=True, capture_output=True)
    same = subprocess.run([cli, "compare", str(tmp_path / "py"), str(tmp_path / "cli")], capture_output=True, text=True)
    assert same.returncode == 0, same.stdout + same.stderr
    # Traces and orders on demand.
    assert driftlab.traces(tmp_path / "py").height > 0
    orders = driftlab.orders(tmp_path / "py")
    row = orders.filter((pl.col("problem") == "pendulum") & (pl.col("method") == "rattle")
                        & (pl.col("quantity") == "q"))
    assert row.height == 1
    # RATTLE's declared order 2 (driftlab.methods()), observed over h = 1e-2 … 2.5e-3
    # against the pendulum's exact solution.
    assert row["expected_order"][0] == 2
    assert abs(row["observed_order"][0] - 2.0) < 0.2, row


def test_run_from_a_file_and_pandas(root, tmp_path):
    df = driftlab.run(root / "experiments" / "seed003-index1.toml", tmp_path / "seed003", size="quick")
    assert df.height > 0
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    assert len(df.to_pandas()) == df.height


def test_report_builds_the_figures_of_a_folder(tmp_path):
    driftlab.run(SPEC, tmp_path / "r" / "py-run", threads=2)
    made = driftlab.report(tmp_path / "r")
    assert made["py-run"], "files of the experiment"
    assert (tmp_path / "r" / "report.pdf").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(driftlab.InputError, match="empty"):
        driftlab.report(tmp_path / "empty")
    with pytest.raises(driftlab.InputError, match="no such folder"):
        driftlab.report(tmp_path / "missing")


@pytest.mark.parametrize(
    "spec,match",
    [
        ({**SPEC, "stepz": {}}, "stepz"),
        ({**SPEC, "methods": [{"id": "rattle", "params": {"omega": 1.0}}]}, "omega"),
        ({**SPEC, "problems": [{"id": "pendulm"}]}, "pendulm"),
        (42, "dict"),
        ("/no/such/spec.toml", "cannot read"),
    ],
)
def test_bad_specs_name_the_key(spec, match, tmp_path):
    with pytest.raises(driftlab.InputError, match=match):
        driftlab.run(spec, tmp_path / "bad")


def test_another_experiment_into_a_folder_is_refused_with_the_fix(tmp_path):
    driftlab.run(SPEC, tmp_path / "once", threads=2)
    with pytest.raises(driftlab.InputError, match="force=True"):
        driftlab.run({**SPEC, "name": "other"}, tmp_path / "once", threads=2)
    # The same experiment again replaces the complete run (docs/folders.md).
    assert driftlab.run({**SPEC, "t_end": 0.25}, tmp_path / "once", threads=2).height == 18


LONG = textwrap.dedent(
    """
    import sys, driftlab
    spec = {"schema_version": 1, "name": "long", "t_end": 20.0,
            "steps": {"h": [1e-4]},
            "problems": [{"id": "planar-chain", "params": {"links": n}} for n in (20, 21, 22, 23, 24, 25, 26, 27)],
            "methods": [{"id": "generalized-alpha"}]}
    print("started", flush=True)
    try:
        driftlab.run(spec, sys.argv[1], threads=1, resume=len(sys.argv) > 2)
    except KeyboardInterrupt as e:
        print("interrupted:", e, flush=True)
        sys.exit(130)
    print("complete", flush=True)
    """
)


def test_ctrl_c_stops_a_run_and_leaves_a_resumable_folder(tmp_path):
    script = tmp_path / "long.py"
    script.write_text(LONG)
    out = tmp_path / "long"
    p = subprocess.Popen([sys.executable, str(script), str(out)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "started"
    time.sleep(3.0)
    p.send_signal(signal.SIGINT)
    stdout, _ = p.communicate(timeout=600)
    assert p.returncode == 130, stdout
    assert "interrupted" in stdout and "resume=True" in stdout
    manifest = (out / "manifest.json").read_text()
    assert '"complete"' not in manifest
    # Resumed, it completes: every cell once.
    done = subprocess.run([sys.executable, str(script), str(out), "resume"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0 and "complete" in done.stdout, done.stdout + done.stderr
    assert pl.read_parquet(out / "runs.parquet").height == 8


def test_resume_with_force_and_an_undefined_size_and_a_damaged_folder(tmp_path):
    small = {**SPEC, "problems": [{"id": "pendulum"}], "methods": [{"id": "rattle"}]}
    with pytest.raises(driftlab.InputError, match="resume=True and force=True: give one"):
        driftlab.run(small, tmp_path / "a", resume=True, force=True)
    # A spec without [sizes] runs as written at any size, recorded as its full one.
    driftlab.run(small, tmp_path / "a", size="tiny")
    import json
    assert json.loads((tmp_path / "a" / "manifest.json").read_text())["size"] == "full"
    # A table emptied under its manifest: refused with the folder's path.
    pl.DataFrame({"x": []}).write_parquet(tmp_path / "a" / "traces.parquet")
    with pytest.raises(driftlab.InputError, match="a: damaged: `traces.parquet` holds 0 rows"):
        driftlab.traces(tmp_path / "a")
