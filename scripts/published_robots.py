#!/usr/bin/env python3
"""Every robot description PyPI's example-robot-data publishes, taken as published, through
driftlab and Pinocchio (issue 45).

For each URDF and SDF file under --robots (the wheel's `robots/` folder, unmodified):

* driftlab: `driftlab describe model --set file=…` with the base welded (`root = fixed`),
  or floating where the welded model has no degree of freedom (a flying base such as
  hector's quadrotor): loads, or is refused with its message.
* Pinocchio (URDF): `buildModelFromUrdf` with the same root, `mimic = False` (its default
  reading); it refuses a file when it raises, or when its free acceleration (`aba`, τ = 0)
  at the neutral configuration is not finite (a joint that moves no mass).
* Where both load: `driftlab model-dynamics` samples --states random states (damping and
  mimic rows off, as Pinocchio's ABA reads the file) and scripts/pinocchio_check.py's
  comparison recomputes M by CRBA and the free acceleration by ABA at the same states:
  the worst relative differences against --target (1e-10). Beside them, for reading a
  miss: each acceleration's backward error in Pinocchio's own equations M a + nle = 0
  (driftlab's and ABA's) and the largest condition number of M — two accelerations of an
  ill-conditioned M differ by up to about κ(M)·ε even when both solve it to round-off.

A file passes when both load and agree within the target, or when driftlab refuses it
for a reason Pinocchio also refuses it for (Pinocchio refuses it too). An SDF file passes
when driftlab loads it: this Pinocchio wheel has no SDF reader (`pinocchio.WITH_SDFORMAT`
is false), and Cassie's loops are compared by scripts/pinocchio_cassie.py instead.

Writes --out (CSV, one row per file) and prints a table and a summary; exit 0 when every
file passes, 1 when one does not, 2 on usage errors.

Usage: published_robots.py --driftlab BIN --robots DIR --out CSV [--states N]
                           [--target T] [--files A,B,…]
"""

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import pinocchio as pin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pinocchio_check  # noqa: E402  (the comparison, shared with pinocchio-check.sh)

COLUMNS = ["file", "root", "driftlab", "driftlab_message", "pinocchio", "pinocchio_message",
           "n", "worst_mass_rel", "worst_accel_rel", "backward_driftlab", "backward_pinocchio",
           "cond_mass", "verdict"]


def driftlab(bin_, args):
    """(exit code, stderr's last error line) of `driftlab ARGS`."""
    r = subprocess.run([bin_, *args], capture_output=True, text=True, timeout=600)
    lines = [l for l in r.stderr.splitlines() if l.startswith("error:")]
    return r.returncode, (lines[-1][len("error: "):] if lines else r.stderr.strip()[-300:])


def driftlab_load(bin_, path):
    """(root, loads, message): the welded base, or the floating one where the welded model
    has no degree of freedom."""
    for root in ("fixed", "floating"):
        rc, msg = driftlab(bin_, ["describe", "model", "--set", f'file="{path}"',
                                  "--set", f'root="{root}"'])
        if rc == 0:
            return root, True, ""
        if "no degree of freedom" not in msg:
            return root, False, msg
    return "floating", False, msg


def pinocchio_load(path, root):
    """(model or None, message): Pinocchio's reading, refused when it raises or when its
    free acceleration at the neutral configuration is not finite."""
    try:
        model = pinocchio_check.load_model(path, root)
    except Exception as e:  # noqa: BLE001 — any refusal of Pinocchio's is recorded
        return None, f"{type(e).__name__}: {e}".splitlines()[0]
    data = model.createData()
    q = pin.neutral(model)
    a = pin.aba(model, data, q, np.zeros(model.nv), np.zeros(model.nv))
    if not np.isfinite(a).all():
        bad = [model.names[k] for k in range(1, model.njoints)
               if not np.isfinite(a[model.joints[k].idx_v:model.joints[k].idx_v + model.joints[k].nv]).all()]
        return None, f"the free acceleration is not finite (joints {', '.join(bad[:4])}{', …' if len(bad) > 4 else ''})"
    return model, ""


def backward(doc, model):
    """How well each acceleration satisfies Pinocchio's own equations M a + nle = 0 at the
    samples' states, relative to (‖M‖∞‖a‖∞ + ‖nle‖∞) (the backward error, which does not
    grow with the condition of M as the difference of two accelerations does): the worst
    of driftlab's, the worst of Pinocchio's ABA, and the largest condition number of M."""
    data = model.createData()
    _, lay = pinocchio_check.layout(doc, model)
    worst_ours, worst_pin, worst_cond = 0.0, 0.0, 0.0
    for s in doc["samples"]:
        q, v, a = (np.array(s[k], float) for k in ("q", "v", "acceleration"))
        qp, vp, t, bias, _ = pinocchio_check.convert(q, v, lay, model)
        m = pin.crba(model, data, qp)
        m = np.triu(m) + np.triu(m, 1).T
        nle = pin.nonLinearEffects(model, data, qp, vp)
        ref = np.array(pin.aba(model, data, qp, vp, np.zeros(model.nv)))
        for acc, slot in ((t @ a + bias, 0), (ref, 1)):
            r = np.abs(m @ acc + nle).max() / (np.abs(m).sum(axis=1).max() * np.abs(acc).max() + np.abs(nle).max() + 1e-300)
            if slot == 0:
                worst_ours = max(worst_ours, r)
            else:
                worst_pin = max(worst_pin, r)
        worst_cond = max(worst_cond, np.linalg.cond(m))
    return worst_ours, worst_pin, worst_cond


def compared(bin_, path, root, model, states):
    """(n, worst M, worst acceleration, backward errors and condition) of driftlab's
    samples against Pinocchio."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "samples.json")
        rc, msg = driftlab(bin_, ["model-dynamics", "--set", f'file="{path}"', "--set", f'root="{root}"',
                                  "--set", "damping=false", "--set", "mimic=false",
                                  "--states", str(states), "--seed", "1", "--out", out])
        if rc != 0:
            raise pinocchio_check.Refused(f"driftlab model-dynamics: {msg}")
        with open(out) as f:
            doc = json.load(f)
    n, _, (wm, _), (wa, _) = pinocchio_check.compare(doc, model, states)
    return n, wm, wa, backward(doc, model)


def one(bin_, path, rel, states, target):
    row = dict.fromkeys(COLUMNS, "")
    row["file"] = rel
    root, loads, msg = driftlab_load(bin_, path)
    row.update(root=root, driftlab="loads" if loads else "refused", driftlab_message=msg)
    if path.endswith(".sdf"):
        row.update(pinocchio="no SDF reader", verdict="pass" if loads else "FAIL")
        return row
    model, pmsg = pinocchio_load(path, root)
    row.update(pinocchio="loads" if model is not None else "refuses", pinocchio_message=pmsg)
    if not loads:
        row["verdict"] = "both refuse" if model is None else "FAIL: only driftlab refuses"
        return row
    if model is None:
        row["verdict"] = "FAIL: only Pinocchio refuses"
        return row
    try:
        n, wm, wa, (bo, bp, cond) = compared(bin_, path, root, model, states)
    except (pinocchio_check.Refused, RuntimeError, ValueError) as e:
        row.update(verdict=f"FAIL: not comparable: {e}")
        return row
    ok = wm <= target and wa <= target
    row.update(n=n, worst_mass_rel=f"{wm:.3e}", worst_accel_rel=f"{wa:.3e}", backward_driftlab=f"{bo:.1e}",
               backward_pinocchio=f"{bp:.1e}", cond_mass=f"{cond:.1e}",
               verdict="pass" if ok else "FAIL: above target")
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--driftlab", required=True)
    ap.add_argument("--robots", required=True, help="the wheel's robots/ folder")
    ap.add_argument("--out", required=True, help="CSV to write")
    ap.add_argument("--states", type=int, default=10)
    ap.add_argument("--target", type=float, default=1e-10)
    ap.add_argument("--files", help="comma-separated paths under --robots (default: all)")
    a = ap.parse_args()
    found = sorted(os.path.relpath(os.path.join(d, f), a.robots)
                   for d, _, fs in os.walk(a.robots) for f in fs if f.endswith((".urdf", ".sdf")))
    files = a.files.split(",") if a.files else found
    missing = [f for f in files if f not in found]
    if not found or missing:
        print(f"published_robots: {missing or 'no URDF or SDF'} under {a.robots}", file=sys.stderr)
        return 2
    rows = []
    for rel in files:
        row = one(a.driftlab, os.path.join(a.robots, rel), rel, a.states, a.target)
        rows.append(row)
        worst = (f"M {row['worst_mass_rel']}, a {row['worst_accel_rel']} (backward {row['backward_driftlab']} vs "
                 f"{row['backward_pinocchio']}, κ(M) ≤ {row['cond_mass']})") if row["n"] != "" else row["driftlab_message"][:90]
        print(f"{rel:<62} {row['root']:<8} {row['driftlab']:<8} {row['pinocchio']:<14} {row['verdict']:<12} {worst}")
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    urdf = [r for r in rows if r["file"].endswith(".urdf")]
    sdf = [r for r in rows if r["file"].endswith(".sdf")]
    fails = [r for r in rows if r["verdict"].startswith("FAIL")]
    agree = sum(r["verdict"] == "pass" and r["n"] != "" for r in urdf)
    print(f"published_robots: URDF: driftlab loads {sum(r['driftlab'] == 'loads' for r in urdf)} of {len(urdf)}, "
          f"Pinocchio {pin.__version__} {sum(r['pinocchio'] == 'loads' for r in urdf)}; M and free acceleration "
          f"within {a.target:g} on {agree}; both refuse {sum(r['verdict'] == 'both refuse' for r in urdf)}. "
          f"SDF: driftlab loads {sum(r['driftlab'] == 'loads' for r in sdf)} of {len(sdf)}. "
          f"{len(fails)} fail. ({a.out})")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
