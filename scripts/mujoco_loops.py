#!/usr/bin/env python3
"""MuJoCo's soft loop closures against the exact solution (issue 47, item 4): the problems of
experiments/optional/mujoco-loops.toml (MJCF files with `connect` loops and a tendon
equality) run by MuJoCo on the same file, as peer rows for `driftlab import-peer`.

Per [[problems]] entry of the spec and per cell step h of the spec:
  * the model: mujoco.MjModel.from_xml_path(the same MJCF file), contact off
    (mjDSBL_CONTACT), joint and tendon limits off (driftlab keeps limits as data), zero
    control (MjData's default), damping, armature and springs as the file says (driftlab
    reads them too; the damping zeroed where the problem sets `damping = false`);
    opt.timestep = h, opt.integrator ∈ {Euler, implicitfast, RK4};
  * solref of every equality ∈ {the model's own (eq_solref as compiled), MuJoCo's default
    (0.02, 1), and `driftlab tune`'s recommendation at h, (2h, 1): MuJoCo's stiffest safe
    time constant}; a
    setting equal to an earlier one (the model's own = the default) is run once, under the
    earlier name; solimp stays the model's;
  * opt.iterations ∈ {the model's, 100, 3}, run once where they coincide (MuJoCo's default
    is 100, and every model here keeps it; 3 stops the solver early, as a time budget would —
    measured: on these equality-only loops MuJoCo's Newton solver has converged by then, the
    rows agree with 100's to the last digit);
  * the start: driftlab's own (t = 0 row of `driftlab simulate --trace`), mapped by joint
    name: hinge and slide equal, ball joints the unit quaternion w-first in both (q̇ of a
    ball to MuJoCo's body-frame ω = 2(e₀ė − ė₀e − e × ė)).
Measured per run, at every step's end state (after mj_step: mj_fwdPosition and
mj_fwdVelocity recompute the constraint rows at that state; neither touches the state nor
the solver's warm start):
  * max_pos_residual, final_pos_residual: max over steps (with t = 0) and over the
    equality rows of |efc_pos| (rows with efc_type = mjCNSTR_EQUALITY): for `connect` the
    three world components of p₁ − p₂, the two anchor points (driftlab's rows; the
    planar models' removed out-of-plane row stays ≈ 0, so ‖·‖∞ is the same), for the
    tendon equality L − L₀ − c₀ (a fixed tendon: linear in q, driftlab's row); checked
    against the anchors recomputed from xpos/xmat (params.anchor_check);
  * max_vel_residual, final_vel_residual: the same of |efc_vel| = |J v| on those rows;
  * max_energy_rel_error: max |E − E₀| / max(|E₀|, scale), E = MuJoCo's kinetic +
    potential (mj_energyPos, mj_energyVel), scale = max(m_total |g| · 1 m, 1) (driftlab's
    joint-coordinate model's energy_scale);
  * err_q, final_err_q: max over MuJoCo's steps (and at t_end) of ‖q − q_ref(t)‖∞ over
    driftlab's coordinates, q_ref from `driftlab simulate` with the spec's reference method
    (the method whose label starts with "reference", at its own h = 1e-4) — every MuJoCo
    step time k·h is a multiple of 1e-4, so the reference is read at the same times, no
    interpolation (a time off the grid is refused); a ball joint's quaternion is compared
    up to sign (min over ±q_ref);
  * step_seconds: the median over --repeat runs of the wall time of the steps alone from
    the start (one mj_step call with nstep = steps: no measuring, no Python per step), with their range (step_seconds_min/max)
    and `alone` (the script runs after driftlab's run, nothing beside it); wall_seconds:
    the measured run.
The peer-row format (crates/runner/src/peer/row.rs) has columns only for max_pos_residual
and max_energy_rel_error, and the optional max_vel_residual, final_pos_residual, err_q and
final_err_q; the other measures (final_vel_residual, the anchor check) are written into the row's `params` and
into --table (CSV), which also holds the same measures for driftlab's own methods at each
h (from their traces against the same reference).
Usage: mujoco_loops.py --driftlab BIN --spec experiments/optional/mujoco-loops.toml
                       [--size quick|full] --out rows.jsonl --table mujoco_loops.csv [--repeat 5]"""
import argparse
import csv
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib

import mujoco
import numpy as np

from driftlab_io import Refused, driftlab_start, set_args, write_rows

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DEFAULT_SOLREF = (0.02, 1.0)
INTEGRATORS = {"Euler": mujoco.mjtIntegrator.mjINT_EULER,
               "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
               "RK4": mujoco.mjtIntegrator.mjINT_RK4}
EQUALITY = int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)
# A low solver iteration count beside the model's and 100: the shipped loops all default to
# 100, so without it the iterations axis would hold one value.
LOW_ITERATIONS = 3


def mjcf_path(params):
    """The MJCF file driftlab reads for this problem."""
    if "file" in params:
        return params["file"]
    robot = params["robot"]
    if robot.startswith("mjcf-"):
        return os.path.join(ROOT, "models", robot[len("mjcf-"):] + ".xml")
    return os.path.join(ROOT, "datasets", "mjcf", robot + ".xml")


def trace(binary, params, method, h, t_end):
    """driftlab's trajectory (header, rows as an array) of `method` = (id, sets, projection)."""
    mid, msets, proj = method
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.csv")
        cmd = [binary, "simulate", "--problem", "model", "--method", mid, *set_args(params), *msets,
               "--h", repr(h), "--t-end", repr(t_end), "--trace", path]
        if proj is not None:
            cmd += ["--projection", *set_args(proj, "projection.")]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        with open(path) as f:
            header = f.readline().strip().split(",")
            data = np.array([[float(x) for x in line.split(",")] for line in f if line.strip()])
    return header, data


def read_trace(path):
    """A trace file (header, rows as an array)."""
    with open(path) as f:
        header = f.readline().strip().split(",")
        data = np.array([[float(x) for x in line.split(",")] for line in f if line.strip()])
    return header, data


def prepare(a, spec, text, problems, t_end):
    """--prepare: the converged reference of every problem, written beside the spec copy
    `a.prepare` (the reference method at its step h_ref, its accuracy the largest |q|
    difference from the same method at 2·h_ref at their common times), and the copy itself:
    each problem given `reference_trace` and `reference_accuracy`, the reference method's
    own entry left out (its row would be compared with itself)."""
    ref_spec = next(m for m in spec["methods"] if m.get("label", "").startswith("reference"))
    ref_h = ref_spec["steps"]["h"][0]
    folder = os.path.dirname(os.path.abspath(a.prepare))
    extra = []
    for k, entry in enumerate(problems):
        params = dict(sorted(entry["params"].items()))
        name = re.sub(r"[^A-Za-z0-9_-]", "-", os.path.basename(str(params.get("robot", params.get("file", "model")))))
        fine_h, fine = trace(a.driftlab, params, spec_method(ref_spec), ref_h, t_end)
        coarse_h, coarse = trace(a.driftlab, params, spec_method(ref_spec), 2 * ref_h, t_end)
        qs = [c for c in fine_h if re.fullmatch(r"q\d+", c)]
        fq = fine[:, [fine_h.index(c) for c in qs]][::2]
        cq = coarse[:, [coarse_h.index(c) for c in qs]]
        rows = min(len(fq), len(cq))
        accuracy = float(np.max(np.abs(fq[:rows] - cq[:rows])))
        accuracy = max(accuracy, 1e-15)
        path = os.path.join(folder, f"reference-{k}-{name}.csv")
        with open(path + ".partial", "w") as f:
            f.write(",".join(fine_h) + "\n")
            for row in fine:
                f.write(",".join(repr(float(x)) if math.isfinite(x) else "NaN" for x in row) + "\n")
        os.replace(path + ".partial", path)
        extra.append(f'reference_trace = {json.dumps(path)}, reference_accuracy = {accuracy:e}')
        print(f"mujoco_loops: {name}: reference {ref_spec['label']} to t = {t_end:g}, accuracy "
              f"{accuracy:.1e} (against h = {2 * ref_h:g}) → {path}", file=sys.stderr)
    out, k = [], 0
    for line in text.splitlines(keepends=True):
        m = re.match(r"^params = \{(.*)\}\s*$", line)
        if m and k < len(extra) and in_problems(out):
            line = f"params = {{{m.group(1).rstrip()}, {extra[k]} }}\n"
            k += 1
        out.append(line)
    copy = re.sub(r'(?m)^\[\[methods\]\]\nid = "[^"]*"\nlabel = "reference[^"]*"\n(?:(?!\[).*\n)*', "", "".join(out))
    if k != len(extra):
        raise Refused(f"the spec's problems are not one-line `params = {{…}}` tables ({k} of {len(extra)} found)")
    with open(a.prepare + ".partial", "w") as f:
        f.write("# prepared by scripts/mujoco_loops.py --prepare: the converged references written beside it\n" + copy)
    os.replace(a.prepare + ".partial", a.prepare)


def in_problems(lines):
    """Whether the last table header in `lines` is [[problems]]."""
    for line in reversed(lines):
        if line.startswith("["):
            return line.strip() == "[[problems]]"
    return False


def spec_method(m):
    sets = set_args(m.get("params", {}), "method.")
    return (m["id"], sets, m.get("projection"))


class Layout:
    """driftlab's coordinates ↔ MuJoCo's qpos/qvel, by joint name."""

    def __init__(self, model, joints):
        self.items = []
        for j in joints:
            if j["nq"] == 0:
                continue
            try:
                mj = model.joint(j["name"])
            except KeyError:
                raise Refused(f"MuJoCo's model has no joint `{j['name']}`")
            if j["kind"] not in ("revolute", "continuous", "prismatic", "spherical"):
                raise Refused(f"joint `{j['name']}` of kind {j['kind']} is not mapped")
            self.items.append((j["kind"], j["offset"], int(mj.qposadr[0]), int(mj.dofadr[0])))
        self.n = sum(j["nq"] for j in joints)

    def set_start(self, model, data, q, v):
        for kind, o, a, d in self.items:
            if kind == "spherical":
                e, de = q[o:o + 4], v[o:o + 4]
                data.qpos[a:a + 4] = e
                data.qvel[d:d + 3] = 2.0 * (e[0] * de[1:] - de[0] * e[1:] - np.cross(e[1:], de[1:]))
            else:
                data.qpos[a], data.qvel[d] = q[o], v[o]
        mujoco.mj_forward(model, data)

    def err(self, qpos, qref):
        """‖q − q_ref‖∞ in driftlab's coordinates (a quaternion up to sign)."""
        worst = 0.0
        for kind, o, a, _ in self.items:
            if kind == "spherical":
                e, r = qpos[a:a + 4], qref[o:o + 4]
                worst = max(worst, min(np.max(np.abs(e - r)), np.max(np.abs(e + r))))
            else:
                worst = max(worst, abs(qpos[a] - qref[o]))
        return worst


def residuals(model, data):
    mujoco.mj_fwdPosition(model, data)
    mujoco.mj_fwdVelocity(model, data)
    rows = data.efc_type[:data.nefc] == EQUALITY
    pos = float(np.max(np.abs(data.efc_pos[:data.nefc][rows]), initial=0.0))
    vel = float(np.max(np.abs(data.efc_vel[:data.nefc][rows]), initial=0.0))
    mujoco.mj_energyPos(model, data)
    mujoco.mj_energyVel(model, data)
    return pos, vel, float(data.energy[0] + data.energy[1])


def anchor_gap(model, data):
    """‖p₁ − p₂‖∞ over the connect equalities, from xpos/xmat and eq_data (the check of
    efc_pos); None without connect rows."""
    worst = None
    for i in range(model.neq):
        if model.eq_type[i] != mujoco.mjtEq.mjEQ_CONNECT or not data.eq_active[i]:
            continue
        b1, b2 = model.eq_obj1id[i], model.eq_obj2id[i]
        p1 = data.xpos[b1] + data.xmat[b1].reshape(3, 3) @ model.eq_data[i, 0:3]
        p2 = data.xpos[b2] + data.xmat[b2].reshape(3, 3) @ model.eq_data[i, 3:6]
        g = float(np.max(np.abs(p1 - p2)))
        worst = g if worst is None else max(worst, g)
    return worst


def build(path, h, integrator, solref, iterations, damping=True):
    """MuJoCo's model of the file as driftlab runs it: contact and limits off, the step,
    integrator, solref and iterations of the row; without the joints' damping when the
    problem drops it (`damping = false`, a conservative model)."""
    model = mujoco.MjModel.from_xml_path(path)
    if not damping:
        model.dof_damping[:] = 0.0
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    model.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    model.jnt_limited[:] = 0
    model.tendon_limited[:] = 0
    model.opt.timestep = h
    model.opt.integrator = INTEGRATORS[integrator]
    if solref is not None:
        model.eq_solref[:] = solref
    if iterations is not None:
        model.opt.iterations = iterations
    return model


def mujoco_run(path, layout_doc, q, v, h, t_end, integrator, solref, iterations, ref, repeat,
               damping=True):
    """One run's measures (a dict of row fields and extra measures)."""
    model = build(path, h, integrator, solref, iterations, damping)
    layout = Layout(model, layout_doc)
    scale = max(float(np.sum(model.body_mass)) * float(np.linalg.norm(model.opt.gravity)), 1.0)
    steps = int(round(t_end / h))
    ref_t, ref_q, ref_h = ref
    ratio = h / ref_h
    if abs(ratio - round(ratio)) > 1e-9:
        raise Refused(f"h = {h:g} is not a multiple of the reference's step {ref_h:g}")
    ratio = int(round(ratio))
    data = mujoco.MjData(model)
    layout.set_start(model, data, q, v)
    p0, v0, e0 = residuals(model, data)
    max_p, max_v, max_e, err_q = p0, v0, 0.0, 0.0
    ok, fail_time, kind, reason, k = True, None, None, None, 0
    t0 = time.perf_counter()
    for k in range(steps):
        mujoco.mj_step(model, data)
        bad = [w for w in ("BADQPOS", "BADQVEL", "BADQACC")
               if data.warning[getattr(mujoco.mjtWarning, "mjWARN_" + w)].number > 0]
        if bad:
            # MuJoCo found a non-finite or huge position, velocity or acceleration and
            # reset the state to the model's start: the run failed there.
            ok, fail_time, kind = False, k * h, "non-finite"
            reason = f"MuJoCo reported {'/'.join(bad)} (unstable simulation) at t = {k * h:.4g} and reset its state"
            break
        p, vr, e = residuals(model, data)
        e = abs(e - e0) / max(abs(e0), scale)
        eq = layout.err(data.qpos, ref_q[(k + 1) * ratio])
        if not all(math.isfinite(x) for x in (p, vr, e, eq)) or p > 1e6:
            ok, fail_time = False, k * h
            kind = "diverged" if all(math.isfinite(x) for x in (p, vr, e, eq)) else "non-finite"
            reason = f"the MuJoCo state diverged at t = {k * h:.4g} (‖Φ‖∞ = {p:.3e})"
            break
        max_p, max_v, max_e, err_q = max(max_p, p), max(max_v, vr), max(max_e, e), max(err_q, eq)
    wall = time.perf_counter() - t0
    out = {"steps": steps if ok else k, "ok": ok, "fail_time": fail_time, "fail_kind": kind,
           "fail_reason": reason, "max_pos_residual": max_p, "max_energy_rel_error": max_e,
           "wall_seconds": wall}
    extra = {"max_vel_residual": max_v, "err_q": err_q if ok else None,
             "final_pos_residual": p if ok else None, "final_vel_residual": vr if ok else None,
             "final_err_q": eq if ok else None, "anchor_check": None}
    if ok:
        gap = anchor_gap(model, data)
        if gap is not None:
            extra["anchor_check"] = abs(gap - max(
                float(np.max(np.abs(data.efc_pos[:data.nefc][data.efc_type[:data.nefc] == EQUALITY]))), 0.0))
        per = []
        for _ in range(repeat):
            d = mujoco.MjData(model)
            layout.set_start(model, d, q, v)
            # All steps in one call (`nstep`): MuJoCo's C loop, without a Python call per
            # step (measured on the four-bar: 2.67 µs per step against 3.08 µs called
            # step by step).
            ts = time.perf_counter()
            mujoco.mj_step(model, d, nstep=steps)
            per.append((time.perf_counter() - ts) / steps)
        # The script runs after driftlab's run has finished: nothing else is running.
        out.update({"step_seconds": statistics.median(per) * steps, "repeat": repeat,
                    "step_seconds_min": min(per) * steps, "step_seconds_max": max(per) * steps,
                    "alone": True})
    else:
        out["step_seconds"] = wall
    return out, extra


def driftlab_measures(header, data, ref, layout_doc, h):
    """The same measures of one of driftlab's own traces."""
    ref_t, ref_q, ref_h = ref
    ratio = int(round(h / ref_h))
    n = sum(j["nq"] for j in layout_doc)
    qi = [header.index(f"q{i}") for i in range(n)]
    quats = [j["offset"] for j in layout_doc if j["kind"] == "spherical"]
    errs = []
    for k in range(data.shape[0]):
        qq, r = data[k, qi], ref_q[k * ratio]
        d = np.abs(qq - r)
        for o in quats:
            d[o:o + 4] = min(np.max(d[o:o + 4]), np.max(np.abs(qq[o:o + 4] + r[o:o + 4])))
        errs.append(float(np.max(d)))
    col = lambda c: data[:, header.index(c)]
    return {"max_pos_residual": float(np.max(col("pos_residual"))), "final_pos_residual": float(col("pos_residual")[-1]),
            "max_vel_residual": float(np.max(col("vel_residual"))), "final_vel_residual": float(col("vel_residual")[-1]),
            "max_energy_rel_error": float(np.max(col("energy_rel_error"))), "err_q": max(errs), "final_err_q": errs[-1]}



def tune_solref(driftlab, params, h):
    """The solref `driftlab tune` recommends for this model at step h (its translator run
    as a user would: `driftlab tune robot:ID --h H`), as (timeconst, dampratio)."""
    target = f"robot:{params['robot']}" if "robot" in params else params["file"]
    out = subprocess.run([driftlab, "tune", target, "--h", repr(h)], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r'solref = "([^ "]+) ([^"]+)"', out)
    if m is None:
        raise Refused(f"driftlab tune printed no solref: {out[:200]}")
    return (float(m.group(1)), float(m.group(2)))

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--driftlab", required=True)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--size", choices=["quick", "full"], default="full")
    ap.add_argument("--out", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--prepare", help="write the converged references and a spec copy using them, then stop")
    a = ap.parse_args()
    with open(a.spec, "rb") as f:
        spec = tomllib.load(f)
    with open(a.spec) as f:
        text = f.read()
    size = spec.get("sizes", {}).get(a.size, {}) if a.size != "full" else {}
    t_end = size.get("t_end", spec["t_end"])
    hs = size.get("steps", {}).get("h", spec["steps"]["h"])
    problems = size.get("problems", spec["problems"])
    if a.prepare:
        # To the full size's end time, so that every size's runs are inside its domain.
        prepare(a, spec, text, problems, max(t_end, spec["t_end"]))
        return
    ref_spec = next((m for m in spec["methods"] if m.get("label", "").startswith("reference")), None)
    own = [m for m in spec["methods"] if not m.get("label", "").startswith("reference")]
    rows, table = [], []
    for entry in problems:
        params = dict(sorted(entry["params"].items()))
        name = params.get("robot", params.get("file", "?"))
        path = mjcf_path(params)
        doc, q, v = driftlab_start(a.driftlab, params, hs[0])
        q, v = np.array(q), np.array(v)
        if "reference_trace" in params:
            rh, rdata = read_trace(params["reference_trace"])
            ref_label = f"the converged trace {os.path.basename(params['reference_trace'])}"
        else:
            rh, rdata = trace(a.driftlab, params, spec_method(ref_spec), ref_spec["steps"]["h"][0], t_end)
            ref_label = ref_spec["label"]
        ref_h = float(rdata[1, 0] - rdata[0, 0])
        ref_h = float(f"{ref_h:.12g}")
        n = sum(j["nq"] for j in doc["joints"])
        ref = (rdata[:, 0], rdata[:, [rh.index(f"q{i}") for i in range(n)]], ref_h)
        print(f"mujoco_loops: {name}: reference {ref_label} to t = {t_end:g}, "
              f"max ‖Φ‖∞ {np.max(rdata[:, rh.index('pos_residual')]):.1e}", file=sys.stderr)
        for h in hs:
            for m in own:
                label = m.get("label") or m["id"] + ("+projection" if m.get("projection") else "")
                try:
                    hd, dd = trace(a.driftlab, params, spec_method(m), h, t_end)
                    meas = driftlab_measures(hd, dd, ref, doc["joints"], h)
                    meas["ok"] = True
                except subprocess.CalledProcessError as e:
                    meas = {"ok": False, "note": e.stderr.strip().splitlines()[-1] if e.stderr.strip() else "failed"}
                table.append({"problem": name, "source": "driftlab", "variant": label, "h": h, **meas})
            base = build(path, h, "Euler", None, None)
            own_solref = tuple(float(x) for x in base.eq_solref[0])
            if any(tuple(float(x) for x in r) != own_solref for r in base.eq_solref):
                own_solref = None  # mixed: keep each equality's own
            settings, seen = [], []
            for sname, sr in [("model", own_solref), ("default", DEFAULT_SOLREF),
                              ("tune", tune_solref(a.driftlab, params, h))]:
                if sr is not None and sr in seen:
                    continue
                seen.append(sr)
                settings.append((sname, sr))
            # The model's own count, 100 (the issue's), and a low count (MuJoCo's solver
            # stopped early, as a time budget would): the models here all default to 100.
            iters = sorted({int(base.opt.iterations), 100, LOW_ITERATIONS}, reverse=True)
            for integ in INTEGRATORS:
                for sname, sr in settings:
                    for it in iters:
                        srtext = "own" if sr is None else f"({sr[0]:g}, {sr[1]:g})"
                        if sname == "tune":
                            srtext = f"driftlab tune's ({sr[0]:g}, {sr[1]:g})"
                        elif sname == "model":
                            srtext = f"model's {srtext}"
                        variant = f"mujoco {integ} [solref={srtext}, iterations={it}]"
                        row = {"problem": "model", "problem_params": params, "variant": variant,
                               "h": h, "t_end": t_end,
                               "params": {"integrator": integ, "timestep": h, "solref_setting": sname,
                                          "solref": None if sr is None else list(sr),
                                          "solimp": [list(map(float, r)) for r in base.eq_solimp],
                                          "iterations": it, "contact": "off", "limits": "off", "control": 0.0,
                                          "mujoco": mujoco.__version__,
                                          "reference": f"driftlab {ref_label}"}}
                        try:
                            meas, extra = mujoco_run(path, doc["joints"], q, v, h, t_end, integ,
                                                     None if sname == "model" else sr, it, ref, a.repeat,
                                                     params.get("damping", True))
                        except Exception as e:  # noqa: BLE001 — a run MuJoCo refuses is its failed row
                            meas = {"steps": 0, "ok": False, "fail_time": 0.0,
                                    "fail_kind": "unsupported-form" if isinstance(e, Refused) else "external",
                                    "fail_reason": f"{type(e).__name__}: {e}", "max_pos_residual": None,
                                    "max_energy_rel_error": None, "wall_seconds": 0.0, "step_seconds": 0.0}
                            extra = {}
                        row.update(meas)
                        # The measures the peer-row format carries go in as fields (null
                        # where not taken); the others stay in params and the CSV.
                        for k in ("max_vel_residual", "final_pos_residual", "err_q", "final_err_q"):
                            row[k] = extra.get(k)
                        row["params"].update({k: x for k, x in extra.items()
                                              if k in ("final_vel_residual", "anchor_check")})
                        rows.append(row)
                        table.append({"problem": name, "source": "mujoco", "variant": variant, "h": h,
                                      "ok": meas["ok"], "max_pos_residual": meas["max_pos_residual"],
                                      "max_energy_rel_error": meas["max_energy_rel_error"],
                                      "us_per_step": 1e6 * meas["step_seconds"] / max(meas["steps"], 1),
                                      **{k: x for k, x in extra.items() if k != "anchor_check"},
                                      "note": meas.get("fail_reason") or ""})
                        r = table[-1]
                        print(f"mujoco_loops: {name} h={h:g} {variant}: "
                              + (f"‖Φ‖∞ {r['max_pos_residual']:.2e}, err_q {r['err_q']:.2e}, "
                                 f"energy {r['max_energy_rel_error']:.2e}, {r['us_per_step']:.1f} µs/step"
                                 if r["ok"] else f"failed: {r['note']}"), file=sys.stderr)
    write_rows(a.out, rows)
    cols = ["problem", "source", "variant", "h", "ok", "max_pos_residual", "final_pos_residual",
            "max_vel_residual", "final_vel_residual", "max_energy_rel_error", "err_q", "final_err_q",
            "us_per_step", "note"]
    with open(a.table, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in table:
            w.writerow(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
