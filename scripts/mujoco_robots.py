#!/usr/bin/env python3
"""MuJoCo on the robots of experiments/robots-coordinates.toml (issue 28): the same URDF
files, the same start, step and end time, as peer rows for `driftlab import-peer`.

Per [[problems]] entry of the spec (a shipped robot read from its URDF):
  * the model: mujoco.MjSpec.from_file(URDF) (visuals discarded; the shipped files carry no
    geometry, so no contacts), a free joint named as driftlab's root joint for a floating
    base; joint damping, friction loss and armature zeroed and joint limits disabled, as
    driftlab's model keeps limits as data and the spec drops the URDF's damping;
  * the start: driftlab's own (`driftlab simulate … --trace`, row t = 0, mapped by joint
    name with `driftlab model-dynamics`'s layout); a floating joint's Euler-parameter rates
    become MuJoCo's body angular velocity ω_b = 2(e₀ė − ė₀e − e × ė) and its position rates
    the world linear velocity;
  * a check of that mapping: MuJoCo's RK4 at h = 1e-4 against driftlab's Gauss s = 3 at
    h = 1e-3 over 0.1 s, largest joint-position difference (both errors ≪ 1e-8, so a
    difference above 1e-6 is a mapping error and the row fails);
  * the run: MuJoCo's default integrator (semi-implicit Euler) at each h of the spec to its
    t_end: the relative energy error max|E − E₀| / max(|E₀|, m_total |g| · 1 m) (driftlab's
    energy scale), the unit-norm drift of a free joint's quaternion (0 on a fixed base,
    which has no constraint rows in generalized coordinates), and the time per step
    (median of --repeat timed runs without measurements).
The RSSR linkage (a driftlab TOML model with a loop) is a failed row: MuJoCo reads URDF
and MJCF, not this TOML.
Usage: mujoco_robots.py --driftlab BIN --spec experiments/robots-coordinates.toml
                        [--size quick|full] --out rows.jsonl [--repeat 3]"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib

import mujoco
import numpy as np

from driftlab_io import Refused, driftlab_start, row_summary, set_args, write_rows

TOL_START = 1e-6
ROBOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "datasets", "robots")


def driftlab_positions(binary, params, t_end):
    """driftlab's q at t_end by Gauss s = 3, h = 1e-3 (the mapping check's reference)."""
    sets = set_args(params)
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "ref.csv")
        subprocess.run([binary, "simulate", "--problem", "model", "--method", "gauss",
                        "--set", "method.stages=3", *sets, "--h", "1e-3", "--t-end", repr(t_end),
                        "--trace", trace], check=True, capture_output=True, text=True)
        with open(trace) as f:
            header = f.readline().strip().split(",")
            last = None
            for line in f:
                last = line
        row = [float(x) for x in last.strip().split(",")]
    return header, row


def mujoco_model(urdf, layout, floating, h, mimic):
    spec = mujoco.MjSpec.from_file(urdf)
    spec.compiler.discardvisual = True
    if floating:
        root = next(j["name"] for j in layout if j["kind"] == "floating")
        spec.worldbody.first_body().add_freejoint(name=root)
    model = spec.compile()
    model.dof_damping[:] = 0.0
    model.dof_frictionloss[:] = 0.0
    model.dof_armature[:] = 0.0
    model.jnt_limited[:] = 0
    if not mimic:
        # MuJoCo makes a URDF <mimic> an equality constraint; driftlab's `mimic = false`
        # leaves the follower its own joint.
        model.eq_active0[:] = 0
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    model.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    model.opt.timestep = h
    return model


def set_start(model, data, layout, q, v):
    """driftlab's (q, q̇) into MuJoCo's qpos, qvel by joint name."""
    for j in layout:
        if j["nq"] == 0:
            continue
        try:
            mj = model.joint(j["name"])
        except KeyError:
            raise Refused(f"MuJoCo's model has no joint `{j['name']}`")
        a, d, o = mj.qposadr[0], mj.dofadr[0], j["offset"]
        if j["kind"] in ("revolute", "continuous", "prismatic"):
            data.qpos[a], data.qvel[d] = q[o], v[o]
        elif j["kind"] == "floating":
            data.qpos[a:a + 7] = q[o:o + 7]
            e, de = q[o + 3:o + 7], v[o + 3:o + 7]
            w = 2.0 * (e[0] * de[1:] - de[0] * e[1:] - np.cross(e[1:], de[1:]))
            data.qvel[d:d + 3] = v[o:o + 3]
            data.qvel[d + 3:d + 6] = w
        else:
            raise Refused(f"joint `{j['name']}` of kind {j['kind']} is not mapped")
    mujoco.mj_forward(model, data)


def energy(model, data):
    mujoco.mj_energyPos(model, data)
    mujoco.mj_energyVel(model, data)
    return float(data.energy[0] + data.energy[1])


def quat_drift(model, data):
    free = [model.jnt_qposadr[i] for i in range(model.njnt) if model.jnt_type[i] == mujoco.mjtJoint.mjJNT_FREE]
    return max((abs(np.linalg.norm(data.qpos[a + 3:a + 7]) - 1.0) for a in free), default=0.0)


def mapping_check(binary, params, model, layout, q, v):
    """Largest joint-position difference at t = 0.1 between MuJoCo RK4 (h = 1e-4) and
    driftlab's Gauss s = 3 (h = 1e-3), over the 1-DoF joints."""
    header, row = driftlab_positions(binary, params, 0.1)
    m = model  # its integrator and step are set back by the caller
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    m.opt.timestep = 1e-4
    d = mujoco.MjData(m)
    set_start(m, d, layout, q, v)
    for _ in range(1000):
        mujoco.mj_step(m, d)
    gap = 0.0
    for j in layout:
        if j["kind"] in ("revolute", "continuous", "prismatic"):
            ours = row[header.index(f"q{j['offset']}")]
            gap = max(gap, abs(d.qpos[m.joint(j["name"]).qposadr[0]] - ours))
    return gap


def timed(model, layout, q, v, steps, repeat):
    runs = []
    for _ in range(repeat):
        d = mujoco.MjData(model)
        set_start(model, d, layout, q, v)
        t0 = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(model, d)
        runs.append((time.perf_counter() - t0) / steps)
    return statistics.median(runs)


def run_robot(binary, params, h, t_end, repeat):
    """One peer row (the columns import-peer reads)."""
    floating = params.get("root") == "floating"
    doc, q, v = driftlab_start(binary, params, h)
    layout, q, v = doc["joints"], np.array(q), np.array(v)
    robot = params["robot"]
    urdf = os.path.join(ROBOTS, f"{robot}.urdf")
    model = mujoco_model(urdf, layout, floating, h, params.get("mimic", True))
    gap = mapping_check(binary, params, model, layout, q, v)
    if not gap <= TOL_START:
        raise Refused(f"the start does not map: joint positions differ by {gap:.3e} from driftlab's at t = 0.1 (> {TOL_START:g})")
    model.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    model.opt.timestep = h
    data = mujoco.MjData(model)
    set_start(model, data, layout, q, v)
    e0 = energy(model, data)
    scale = max(abs(e0), float(np.sum(model.body_mass)) * float(np.linalg.norm(model.opt.gravity)), 1.0)
    steps = int(round(t_end / h))
    worst_e, worst_q, ok, reason, fail_time, kind = 0.0, quat_drift(model, data), True, None, None, None
    t0 = time.perf_counter()
    for k in range(steps):
        mujoco.mj_step(model, data)
        if data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0:
            ok, fail_time, kind = False, k * h, "non-finite"
            reason = f"MuJoCo reported a bad acceleration at t = {k * h:.4g} and reset its state"
            break
        e = abs(energy(model, data) - e0) / scale
        if not math.isfinite(e):
            ok, fail_time, kind, reason = False, k * h, "non-finite", f"non-finite energy at t = {k * h:.4g}"
            break
        worst_e, worst_q = max(worst_e, e), max(worst_q, quat_drift(model, data))
    wall = time.perf_counter() - t0
    per_step = timed(model, layout, q, v, steps, repeat) if ok else wall / max(k, 1)
    return {
        "steps": steps if ok else k, "ok": ok, "fail_time": fail_time, "fail_kind": kind, "fail_reason": reason,
        "max_pos_residual": worst_q, "max_energy_rel_error": worst_e, "wall_seconds": wall,
        "step_seconds": per_step * steps, "start_check": gap,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--driftlab", required=True)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--size", choices=["quick", "full"], default="full")
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    with open(a.spec, "rb") as f:
        spec = tomllib.load(f)
    size = spec.get("sizes", {}).get(a.size, {}) if a.size != "full" else {}
    t_end = size.get("t_end", spec["t_end"])
    hs = size.get("steps", {}).get("h", spec["steps"]["h"])
    rows = []
    for entry in spec["problems"]:
        params = {k: v for k, v in entry["params"].items() if k != "coordinates"}
        params["coordinates"] = "joint"
        for h in hs:
            row = {"problem": "model", "problem_params": dict(sorted(params.items())),
                   "variant": "mujoco Euler", "h": h, "t_end": t_end,
                   "params": {"integrator": "Euler", "mujoco": mujoco.__version__,
                              "limits": "off", "damping": "off"}}
            try:
                if "robot" not in params or not os.path.exists(os.path.join(ROBOTS, f"{params['robot']}.urdf")):
                    raise Refused("MuJoCo reads URDF and MJCF; this model is a driftlab TOML model")
                row.update(run_robot(a.driftlab, params, h, t_end, a.repeat))
                row["params"]["start_check"] = row.pop("start_check")
            except Exception as e:  # noqa: BLE001 — any failure of a robot is its failed row
                if isinstance(e, subprocess.CalledProcessError):
                    detail = e.stderr.strip()
                elif isinstance(e, Refused):
                    detail = str(e)
                else:
                    detail = f"the peer script failed on this robot: {type(e).__name__}: {e}"
                kind = "unsupported-form" if isinstance(e, Refused) else "external"
                row.update({"steps": 0, "ok": False, "fail_time": 0.0, "fail_kind": kind, "fail_reason": detail,
                            "max_pos_residual": None, "max_energy_rel_error": None,
                            "wall_seconds": 0.0, "step_seconds": 0.0})
            rows.append(row)
            name = params.get("robot", params.get("file", "?"))
            check = f", start check {row['params']['start_check']:.1e}" if row["ok"] else ""
            print(f"mujoco_robots: {name} h = {h:g}: " + row_summary(row, check), file=sys.stderr)
    write_rows(a.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
