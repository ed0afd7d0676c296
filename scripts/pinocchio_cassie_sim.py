#!/usr/bin/env python3
"""Pinocchio's own Baumgarte corrector on Cassie's loop closures: peer rows for
experiments/cassie-loops.toml (issue 28), imported with `driftlab import-peer`.

The model is the one scripts/pinocchio_cassie.py builds from datasets/robots/cassie.sdf
(Pinocchio's wheel has no SDF reader; the check there agrees with driftlab's constrained
accelerations to 2.2e-12): the spanning tree by driftlab's rule, the four closures as
CONTACT_3D RigidConstraintModels at LOCAL_WORLD_ALIGNED, the SDF's joint springs
τ = −k (q − q_ref) and, as the experiment keeps them (damping = true), its joint damping
τ = −d q̇. Per cell of the experiment (ξ, ω_n, h):
  * the corrector: Kp = ω_n², Kd = 2ξω_n on every closure
    (RigidConstraintModel.setBaumgarteCorrectorParameters: the closures' acceleration
    target is −Kd ė − Kp e, e the closure's position error — driftlab's Baumgarte law
    Φ̈ + 2ξω_n Φ̇ + ω_n² Φ = 0, crates/methods/src/explicit/baumgarte.rs);
  * q̈ = pin.constraintDynamics (all 12 closure rows, Pinocchio's proximal solver,
    --mu, --max-iter; driftlab keeps 10, its two plantar out-of-plane rows being redundant);
  * driftlab's start (`driftlab simulate … --trace`, row t = 0; the layout of
    `driftlab model-dynamics`, joints mapped by name), stepped to the experiment's t_end by
    two schemes, each a row: `pinocchio taylor` — driftlab's own Baumgarte update
    q += h q̇ + ½h² q̈, q̇ += h q̈ (so a cell differs from driftlab's only in the dynamics
    library and the redundant rows), and `pinocchio euler` — the semi-implicit Euler
    q̇ += h q̈, q = integrate(q, h q̇) that Pinocchio's examples step with;
  * measured as driftlab measures: max ‖Φ‖∞ over the 10 rows driftlab keeps (world
    components of P_a − P_b) and the relative energy error max|H − H₀| / max(|H₀|,
    m_total |g| · 1 m), H = kinetic + gravity + spring energy; wall time of the steps
    (constraintDynamics and the update through Python; the measurements excluded). A run
    whose state is not finite or whose ‖Φ‖∞ exceeds 1 m is a failed row, with its time.
--check runs one cell of the taylor scheme beside driftlab's `baumgarte` (same start,
same ξ, ω_n, h) and prints the largest joint-position difference at the end: the
mapping's check (the schemes and the law agree; what remains is the rows and round-off).
Measured (Pinocchio 4.1.0): ξ = 1, ω_n = 100, h = 1e-5 over 0.02 s: 3.2e-11 rad. Over
0.5 s at ω_n = 1000, h = 1e-4 the difference is set by how the proximal solver treats the
two near-redundant rows (σ ≈ 2e-12) that driftlab removes: 3.0e-4 rad at mu = 1e-12 with
3 iterations, 1.0e-7 at the defaults (mu = 1e-8, 10), 5.4e-9 at (1e-6, 50), 4.1e-10 at
(1e-4, 200); a 1e-12 change of the start moves the end by 5e-10 (not chaos).
Usage: pinocchio_cassie_sim.py --driftlab BIN --spec experiments/cassie-loops.toml
           [--size quick|full] --out rows.jsonl [--sdf PATH] [--mu 1e-8] [--max-iter 10]
       pinocchio_cassie_sim.py --driftlab BIN --spec … --check XI,OMEGA_N,H,T_END
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
import tomllib

import numpy as np
import pinocchio as pin

from driftlab_io import Refused, driftlab_start, row_summary, set_args, write_rows
from pinocchio_cassie import LWA, cassie_model, closure_positions, layout, read_sdf, \
    world_row_names

SDF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "datasets", "robots",
                   "cassie.sdf")
DIVERGED = 1.0  # ‖Φ‖∞ in metres beyond which a run has failed


class Cassie:
    """Pinocchio's Cassie with driftlab's start, rows and energy."""

    def __init__(self, sdf, doc, q0, v0, mu, max_iter):
        model, cms, tree_rows, _, _ = cassie_model(sdf, LWA)
        if doc["root"] != "fixed":
            raise Refused(f"root {doc['root']!r}: the corrector rows are for the fixed pelvis")
        model.gravity.linear = np.array(doc["gravity"], float)
        self.model, self.cms, self.data = model, cms, model.createData()
        self.cds = pin.StdVec_RigidConstraintData()
        for cm in cms:
            self.cds.append(cm.createData())
        n, perm = layout(doc, model)
        self.q0, self.v0 = np.zeros(n), np.zeros(n)
        self.q0[perm], self.v0[perm] = q0, v0
        names = world_row_names(cms)
        missing = [r for r in doc["row_names"] if r not in names]
        if missing:
            raise Refused(f"driftlab's rows {missing} are not closure rows of this model")
        self.kept = [names.index(r) for r in doc["row_names"]]
        self.k = np.zeros(n)
        self.ref = np.zeros(n)
        self.d = np.zeros(n)
        for r in tree_rows:
            self.k[r["idx_v"]], self.ref[r["idx_v"]] = r["spring"]
            self.d[r["idx_v"]] = r["damping"]
        links, _ = read_sdf(sdf)
        mass = sum(ln["inertia"].mass for ln in links.values())
        self.scale = max(mass * float(np.linalg.norm(model.gravity.linear)), 1.0)
        self.settings = pin.ProximalSettings(1e-14, mu, max_iter)

    def set_corrector(self, xi, wn):
        for cm in self.cms:
            cm.setBaumgarteCorrectorParameters(pin.BaumgarteCorrectorParameters(wn * wn, 2.0 * xi * wn))
        pin.initConstraintDynamics(self.model, self.data, self.cms, self.cds)

    def acceleration(self, q, v):
        tau = -self.k * (q - self.ref) - self.d * v
        return pin.constraintDynamics(self.model, self.data, q, v, tau, self.cms, self.cds,
                                      self.settings)

    def residual(self, q):
        return float(np.abs(closure_positions(self.model, self.data, self.cms, q)[self.kept]).max())

    def energy(self, q, v):
        m, d = self.model, self.data
        with np.errstate(all="ignore"):  # a diverging run is caught by the caller
            springs = 0.5 * float(self.k @ (q - self.ref) ** 2)
        return pin.computeKineticEnergy(m, d, q, v) + pin.computePotentialEnergy(m, d, q) + springs


def step_taylor(sys_, q, v, h):
    a = sys_.acceleration(q, v)
    return q + h * v + 0.5 * h * h * a, v + h * a


def step_euler(sys_, q, v, h):
    v = v + h * sys_.acceleration(q, v)
    return pin.integrate(sys_.model, q, h * v), v


SCHEMES = {"taylor": step_taylor, "euler": step_euler}


def run_cell(sys_, scheme, xi, wn, h, t_end):
    """(q at the end, the measures of the peer row)."""
    sys_.set_corrector(xi, wn)
    step = SCHEMES[scheme]
    q, v = sys_.q0.copy(), sys_.v0.copy()
    h0 = sys_.energy(q, v)
    steps = int(round(t_end / h))
    max_res, max_e, stepping = sys_.residual(q), 0.0, 0.0
    t0 = time.perf_counter()
    for k in range(steps):
        ts = time.perf_counter()
        try:
            q, v = step(sys_, q, v, h)
        except Exception as e:  # noqa: BLE001 — any failure of a step is the row's failure
            return q, failed(k, h, f"Pinocchio raised at t = {k * h:.4g}: {type(e).__name__}: {e}",
                             max_res, max_e, t0, stepping, kind="external")
        stepping += time.perf_counter() - ts
        r = sys_.residual(q)
        e = abs(sys_.energy(q, v) - h0) / max(abs(h0), sys_.scale)
        if not (np.isfinite(q).all() and np.isfinite(v).all() and r <= DIVERGED and math.isfinite(e)):
            finite = np.isfinite(q).all() and np.isfinite(v).all() and math.isfinite(e)
            return q, failed(k + 1, h, f"diverged at t = {(k + 1) * h:.4g}: ‖Φ‖∞ = {r:.3e} (bound {DIVERGED:g} m)",
                             max_res, max_e, t0, stepping, kind="diverged" if finite else "non-finite")
        max_res, max_e = max(max_res, r), max(max_e, e)
    return q, {"steps": steps, "ok": True, "fail_time": None, "fail_kind": None, "fail_reason": None,
               "max_pos_residual": max_res, "max_energy_rel_error": max_e,
               "wall_seconds": time.perf_counter() - t0, "step_seconds": stepping}


def failed(k, h, reason, max_res, max_e, t0, stepping, kind="diverged"):
    return {"steps": k, "ok": False, "fail_time": k * h, "fail_kind": kind, "fail_reason": reason,
            "max_pos_residual": max_res, "max_energy_rel_error": max_e,
            "wall_seconds": time.perf_counter() - t0, "step_seconds": stepping}


def cells(spec, size):
    """(problem params, [(ξ, ω_n)], [h], t_end) of the experiment at `size`."""
    sz = spec.get("sizes", {}).get(size, {}) if size != "full" else {}
    t_end = sz.get("t_end", spec["t_end"])
    hs = sz.get("steps", {}).get("h", spec["steps"]["h"])
    (problem,) = spec["problems"]
    (baum,) = [m for m in spec["methods"] if m["id"] == "baumgarte"]
    xs, ws = baum["params"]["xi"], baum["params"]["omega_n"]
    return problem["params"], [(x, w) for x in xs for w in ws], hs, t_end


def driftlab_final_q(binary, params, xi, wn, h, t_end):
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "b.csv")
        subprocess.run([binary, "simulate", "--problem", "model", "--method", "baumgarte",
                        "--set", f"method.xi={xi!r}", "--set", f"method.omega_n={wn!r}",
                        *set_args(params), "--h", repr(h), "--t-end", repr(t_end), "--trace", trace],
                       check=True, capture_output=True, text=True)
        with open(trace) as f:
            header = f.readline().strip().split(",")
            *_, last = f
    row = [float(x) for x in last.strip().split(",")]
    return np.array([row[i] for i, c in enumerate(header) if c.startswith("q")])


def check(a, spec, params):
    xi, wn, h, t_end = (float(x) for x in a.check.split(","))
    doc, q0, v0 = driftlab_start(a.driftlab, params, h)
    sys_ = Cassie(a.sdf, doc, q0, v0, a.mu, a.max_iter)
    q, row = run_cell(sys_, "taylor", xi, wn, h, t_end)
    _, perm = layout(doc, sys_.model)
    ours = driftlab_final_q(a.driftlab, params, xi, wn, h, t_end)
    gap = float(np.abs(q[perm] - ours).max())
    print(f"ξ = {xi:g}, ω_n = {wn:g}, h = {h:g}, t_end = {t_end:g}: Pinocchio taylor vs driftlab "
          f"baumgarte, largest joint-position difference {gap:.3e} rad; Pinocchio max ‖Φ‖∞ "
          f"{row['max_pos_residual']:.3e}, energy {row['max_energy_rel_error']:.3e}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--driftlab", required=True)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--size", choices=["quick", "full"], default="full")
    ap.add_argument("--out")
    ap.add_argument("--sdf", default=SDF)
    ap.add_argument("--mu", type=float, default=1e-8, help="proximal regularization")
    ap.add_argument("--max-iter", type=int, default=10, help="proximal iterations")
    ap.add_argument("--check", metavar="XI,OMEGA_N,H,T_END")
    a = ap.parse_args()
    with open(a.spec, "rb") as f:
        spec = tomllib.load(f)
    params, gains, hs, t_end = cells(spec, a.size)
    params = dict(sorted(params.items()))
    if a.check:
        return check(a, spec, params)
    if not a.out:
        ap.error("--out is required without --check")
    rows = []
    for h in hs:
        try:
            doc, q0, v0 = driftlab_start(a.driftlab, params, h)
            sys_, setup_failure = Cassie(a.sdf, doc, q0, v0, a.mu, a.max_iter), None
        except Exception as e:  # noqa: BLE001 — a model Pinocchio cannot be given: failed rows
            detail = e.stderr.strip() if isinstance(e, subprocess.CalledProcessError) else str(e)
            sys_, setup_failure = None, f"not run in Pinocchio: {type(e).__name__}: {detail}"
        for scheme in SCHEMES:
            for xi, wn in gains:
                if setup_failure:
                    measured = {"steps": 0, "ok": False, "fail_time": 0.0, "fail_kind": "external",
                                "fail_reason": setup_failure,
                                "max_pos_residual": None, "max_energy_rel_error": None,
                                "wall_seconds": 0.0, "step_seconds": 0.0}
                else:
                    _, measured = run_cell(sys_, scheme, xi, wn, h, t_end)
                rows.append({"problem": "model", "problem_params": params,
                             "variant": f"pinocchio {scheme} [xi={xi:g}, omega_n={wn:g}]",
                             "params": {"method": {"xi": xi, "omega_n": wn}, "Kp": wn * wn,
                                        "Kd": 2.0 * xi * wn, "scheme": scheme, "mu": a.mu,
                                        "max_iter": a.max_iter, "pinocchio": pin.__version__},
                             "h": h, "t_end": t_end, **measured})
                print(f"pinocchio_cassie_sim: {scheme} ξ = {xi:g} ω_n = {wn:g} h = {h:g}: "
                      + row_summary(rows[-1]), file=sys.stderr)
    write_rows(a.out, rows)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (Refused, subprocess.CalledProcessError) as e:
        detail = e.stderr.strip() if isinstance(e, subprocess.CalledProcessError) else str(e)
        print(f"pinocchio_cassie_sim: {detail}", file=sys.stderr)
        sys.exit(2)
