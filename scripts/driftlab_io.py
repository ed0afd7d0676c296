"""What the peer scripts (mujoco_robots.py, pinocchio_cassie_sim.py) ask of driftlab's
command line: `--set` arguments from a spec's parameters, and a model's layout and start.
Standard library only, so that every venv can import it."""
import json
import os
import subprocess
import tempfile


class Refused(Exception):
    """A model a peer cannot be given: its row fails with this reason."""


def toml_value(v):
    """A Python value as an inline TOML value for `--set key=value`."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise Refused(f"parameter value {v!r} has no TOML form")


def set_args(params, prefix="problem.", leave_out=()):
    """`--set KEY=VALUE` arguments of driftlab's CLI for `params`."""
    out = []
    for k, v in params.items():
        if k not in leave_out:
            out += ["--set", f"{prefix}{k}={toml_value(v)}"]
    return out


def driftlab_start(binary, params, h):
    """The model's layout (`driftlab model-dynamics` JSON at one state: `joints` with name,
    kind, offset, nq; `row_names`; `gravity`) and its start (q, q̇), the row t = 0 of a
    one-step trace (driftlab's order)."""
    sets = set_args(params)
    with tempfile.TemporaryDirectory() as tmp:
        layout_json = os.path.join(tmp, "layout.json")
        model_sets = set_args(params, "", ("coordinates", "v0", "q0"))
        subprocess.run([binary, "model-dynamics", *model_sets, "--states", "1", "--out", layout_json],
                       check=True, capture_output=True, text=True)
        with open(layout_json) as f:
            doc = json.load(f)
        trace = os.path.join(tmp, "start.csv")
        subprocess.run([binary, "simulate", "--problem", "model", "--method", "rattle", *sets,
                        "--h", repr(h), "--t-end", repr(h), "--trace", trace],
                       check=True, capture_output=True, text=True)
        with open(trace) as f:
            header = f.readline().strip().split(",")
            row = [float(x) for x in f.readline().strip().split(",")]
    n = sum(j["nq"] for j in doc["joints"])
    q = [row[header.index(f"q{i}")] for i in range(n)]
    v = [row[header.index(f"v{i}")] for i in range(n)]
    return doc, q, v


def row_summary(row, extra=""):
    """One line about a peer row: its residual, energy and time per step, or its failure."""
    if not row["ok"]:
        return f"failed: {row['fail_reason']}"
    res = row.get("max_pos_residual")
    res = f"‖Φ‖∞ {res:.2e}, " if res is not None else ""
    return (f"{res}energy {row['max_energy_rel_error']:.2e}, "
            f"{1e6 * row['step_seconds'] / max(row['steps'], 1):.1f} µs/step{extra}")


def write_rows(path, rows):
    """The peer rows, one JSON object per line (what `driftlab import-peer` reads)."""
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
