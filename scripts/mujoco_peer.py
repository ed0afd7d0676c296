"""MuJoCo as a measured peer (issue 15): the pendulum, the planar chains and the spatial
chains of driftlab's catalog as maximal-coordinate MuJoCo models — free bodies joined by
equality constraints: point masses by length-preserving tendon rows, rigid rods by ball
joints (`connect`) — at MuJoCo's default and at a stiff solver setting, measured the way
driftlab measures its own runs:

* max_pos_residual: max over steps and rows of |Φ_i| = | |p_i − p_{i−1}|² − ℓ² |
  (driftlab's planar-chain and pendulum rows, p_0 = origin); for the rods, 2ℓ·(largest
  joint gap), see RodChain;
* max_energy_rel_error: max |H − H_0| / max(|H_0|, scale), H = Σ ½m|v|² + m g y (the rods:
  MuJoCo's own kinetic and potential energy), with driftlab's energy scales (pendulum
  m g ℓ, planar chain m g ℓ N(N+1)/2, spatial chain m g ℓ N²/2);
* step_seconds: wall time of the mj_step calls alone (a separate run without metrics),
  median of `repeat` runs; wall_seconds: the whole measured run.

One JSON object per run on stdout-file `--out` (driftlab import-peer turns them into rows
of the runs schema). Also `--solref-out`: MuJoCo's measured response to an initial
violation against the Baumgarte tuning guide's conversion ζ = ξ, τ = 1/(ξ ω_n)
(crates/report/src/tuning.rs; MuJoCo documentation, "Solver parameters": a_ref = −b v − k r,
b = 2/(d_max τ), k = d(r)/(d_max² τ² ζ²)), with the impedance held at d_max and at
MuJoCo's default (d from 0.9 to 0.95).
"""

import argparse
import csv
import json
import math
import statistics
import sys
import time

import mujoco
import numpy as np

G = 9.81


def chain_xml(links, h, solref, solimp, g=G, offset=0.0):
    """Point masses m = 1 at (i, 0, 0), i = 1..links, each on a free joint, consecutive
    ones (and the first with the origin) held at distance 1 by a tendon equality; gravity
    along −y as in driftlab. `offset` shortens the target length of the first row (an
    initial violation of `offset`)."""
    bodies, tendons, eqs = [], [], []
    for i in range(1, links + 1):
        bodies.append(
            f'<body name="b{i}" pos="{i} 0 0"><freejoint/>'
            f'<geom type="sphere" size="0.01" mass="1" contype="0" conaffinity="0"/>'
            f'<site name="s{i}"/></body>'
        )
        tendons.append(f'<spatial name="t{i}"><site site="s{i - 1}"/><site site="s{i}"/></spatial>')
        c0 = -offset if i == 1 else 0.0
        eqs.append(
            f'<tendon tendon1="t{i}" polycoef="{c0} 0 0 0 0" solref="{solref[0]} {solref[1]}" '
            f'solimp="{" ".join(str(x) for x in solimp)}"/>'
        )
    return (
        f'<mujoco><option timestep="{h}" gravity="0 {-g} 0"><flag energy="enable"/></option>'
        f'<worldbody><site name="s0" pos="0 0 0"/>{"".join(bodies)}</worldbody>'
        f'<tendon>{"".join(tendons)}</tendon><equality>{"".join(eqs)}</equality></mujoco>'
    )


def spatial_xml(links, h, solref, solimp, g=G):
    """driftlab's spatial chain: N uniform slender rods (m = 1, ℓ = 1) along +x, each a
    free body (a capsule of radius 1 mm: no inertia about its axis to speak of), the first
    rod's start held at the origin and each rod's start at the previous rod's tip by
    `connect` (ball-joint) equality constraints; gravity −y."""
    bodies, eqs = [], []
    for k in range(1, links + 1):
        bodies.append(
            f'<body name="r{k}" pos="{k - 0.5} 0 0"><freejoint/>'
            f'<geom type="capsule" fromto="-0.5 0 0 0.5 0 0" size="0.001" mass="1" contype="0" conaffinity="0"/></body>'
        )
        other = "world" if k == 1 else f"r{k - 1}"
        eqs.append(
            f'<connect body1="r{k}" body2="{other}" anchor="-0.5 0 0" solref="{solref[0]} {solref[1]}" '
            f'solimp="{" ".join(str(x) for x in solimp)}"/>'
        )
    return (
        f'<mujoco><option timestep="{h}" gravity="0 {-g} 0"><flag energy="enable"/></option>'
        f'<worldbody>{"".join(bodies)}</worldbody><equality>{"".join(eqs)}</equality></mujoco>'
    )


def spin(model, data, links, omega=1.0):
    """driftlab's start: every point moving as v = Ω × r, Ω = (0, Ω, 0) (the rods turn
    rigidly about the vertical)."""
    for k in range(links):
        adr = model.jnt_dofadr[k]
        x = data.xpos[k + 1]
        data.qvel[adr : adr + 3] = [omega * x[2], 0.0, -omega * x[0]]
        data.qvel[adr + 3 : adr + 6] = [0.0, omega, 0.0]


def joint_gap(data, links):
    """Largest distance between a rod's start and the previous rod's tip (or the origin)."""
    start = data.xpos[1 : links + 1] - 0.5 * data.xmat[1 : links + 1].reshape(-1, 3, 3)[:, :, 0]
    tip = data.xpos[1 : links + 1] + 0.5 * data.xmat[1 : links + 1].reshape(-1, 3, 3)[:, :, 0]
    prev = np.vstack([np.zeros((1, 3)), tip[:-1]])
    return float(np.max(np.linalg.norm(start - prev, axis=1)))


def positions_velocities(model, data, links):
    p = data.xpos[1 : links + 1, :2].copy()
    v = np.array([data.qvel[model.jnt_dofadr[j] : model.jnt_dofadr[j] + 2] for j in range(links)])
    return p, v


def residual(p):
    prev = np.vstack([np.zeros((1, 2)), p[:-1]])
    d = p - prev
    return float(np.max(np.abs(np.sum(d * d, axis=1) - 1.0)))


def energy(p, v):
    return float(0.5 * np.sum(v * v) + G * np.sum(p[:, 1]))


class PointChain:
    """The pendulum and the planar chain: point masses on tendon rows."""

    def __init__(self, links, h, solref, solimp):
        self.links = links
        self.model = mujoco.MjModel.from_xml_string(chain_xml(links, h, solref, solimp))
        self.scale = G * links * (links + 1) / 2.0  # driftlab's energy scale

    def start(self, data):
        mujoco.mj_forward(self.model, data)

    def measure(self, data):
        p, v = positions_velocities(self.model, data, self.links)
        return residual(p), energy(p, v)


class RodChain:
    """The spatial chain: rigid rods on ball joints. Its residual is 2ℓ·(largest joint
    gap): the |Φ_k| = ||d|² − ℓ²| ≈ 2ℓ|δ| of the natural-coordinate chain whose rod is
    stretched by the gap δ (driftlab's rows), so that both columns measure the same drift."""

    def __init__(self, links, h, solref, solimp):
        self.links = links
        self.model = mujoco.MjModel.from_xml_string(spatial_xml(links, h, solref, solimp))
        self.scale = G * links * links / 2.0  # driftlab's energy scale

    def start(self, data):
        mujoco.mj_forward(self.model, data)
        spin(self.model, data, self.links)
        mujoco.mj_forward(self.model, data)

    def measure(self, data):
        mujoco.mj_energyPos(self.model, data)
        mujoco.mj_energyVel(self.model, data)
        return 2.0 * joint_gap(data, self.links), float(data.energy[0] + data.energy[1])


def timed_steps(system, steps, repeat):
    """Median wall time per mj_step over `repeat` runs from the initial state."""
    per_step = []
    for _ in range(repeat):
        data = mujoco.MjData(system.model)
        system.start(data)
        t0 = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(system.model, data)
        per_step.append((time.perf_counter() - t0) / steps)
    return statistics.median(per_step)


def measured_run(problem, links, h, t_end, setting, solref, solimp, repeat):
    """One row of the runs schema (the columns driftlab import-peer reads)."""
    kind = RodChain if problem == "spatial-chain" else PointChain
    system = kind(links, h, solref, solimp)
    model = system.model
    steps = int(round(t_end / h))
    scale = system.scale
    data = mujoco.MjData(model)
    system.start(data)
    r0, h0 = system.measure(data)
    max_res, max_energy, ok, fail_time, reason, kind = r0, 0.0, True, None, None, None
    t0 = time.perf_counter()
    stepping = 0.0
    for k in range(steps):
        ts = time.perf_counter()
        mujoco.mj_step(model, data)
        stepping += time.perf_counter() - ts
        if data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0:
            # MuJoCo found a non-finite or huge acceleration and reset the state to the
            # model's start: the run failed there.
            ok, fail_time, kind = False, k * h, "non-finite"
            reason = f"MuJoCo reported an unstable simulation (bad acceleration) at t = {k * h:.4g} and reset its state"
            break
        r, hk = system.measure(data)
        e = abs(hk - h0) / max(abs(h0), scale)
        if not (math.isfinite(r) and math.isfinite(e)) or r > 1e6:
            ok, fail_time = False, k * h
            kind = "diverged" if math.isfinite(r) and math.isfinite(e) else "non-finite"
            reason = f"the MuJoCo state diverged at t = {k * h:.4g} (‖Φ‖∞ = {r:.3e})"
            break
        max_res, max_energy = max(max_res, r), max(max_energy, e)
    wall = time.perf_counter() - t0
    # A run that reached t_end is timed again without metrics (median of `repeat`); a
    # failed one keeps the time of its steps up to the failure.
    step_seconds = timed_steps(system, steps, repeat) * steps if ok else stepping
    params = {} if problem == "pendulum" else {"links": links}
    return {
        "problem": problem,
        "problem_params": params,
        "variant": f"mujoco {setting} [solref=({solref[0]:g}, {solref[1]:g})]",
        "params": {"solref": list(solref), "solimp": list(solimp), "integrator": "Euler",
                   "mujoco": mujoco.__version__},
        "h": h,
        "t_end": t_end,
        "steps": steps if ok else k,
        "ok": ok,
        "fail_time": fail_time,
        "fail_kind": kind,
        "fail_reason": reason,
        "max_pos_residual": max_res,
        "max_energy_rel_error": max_energy,
        "wall_seconds": wall,
        "step_seconds": step_seconds,
    }


def solref_response(xi, wn, h, solimp, offset=1e-4, t_end=None):
    """The length error r(t)/r0 of the pendulum's row after an initial violation `offset`
    (zero gravity, at rest) in MuJoCo with the guide's solref for (ξ, ω); sampled at
    t = 1/ω, 2/ω, 4/ω. The report computes what the guide predicts (the linear error ODE
    r'' + 2ξω r' + ω² r = 0) and compares (driftlab-report: solref_check.rs)."""
    tau, zeta = 1.0 / (xi * wn), xi
    model = mujoco.MjModel.from_xml_string(chain_xml(1, h, (tau, zeta), solimp, g=0.0, offset=offset))
    data = mujoco.MjData(model)
    rows = []
    samples = [1.0 / wn, 2.0 / wn, 4.0 / wn]
    k = 0
    for ts in samples:
        while k * h < ts - 1e-12:
            mujoco.mj_step(model, data)
            k += 1
        r = (np.linalg.norm(data.xpos[1, :2]) - (1.0 - offset)) / offset
        rows.append({"xi": xi, "omega_n": wn, "tau": tau, "zeta": zeta, "h": h,
                     "solimp": " ".join(f"{x:g}" for x in solimp), "t": ts,
                     "measured": float(r)})
    return rows


def experiment_cells(path):
    """The distinct (problem, links, h, t_end) of the experiment's own runs table, which
    this script runs beside (driftlab import-peer refuses a run that is not a cell)."""
    cells = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            params = json.loads(r["problem_params"] or "{}")
            cell = (r["problem"], int(params.get("links", 1)), float(r["h"]), float(r["t_end"]))
            if cell not in cells:
                cells.append(cell)
    if not cells:
        sys.exit(f"mujoco-peer: {path} holds no runs; run experiments/optional/mujoco-peer.toml first")
    return cells


def guarded_run(problem, links, h, t_end, setting, solref, solimp, repeat):
    """measured_run, with an error MuJoCo raises (a model it refuses, a step that throws)
    turned into a failed row that says so, so that one cell cannot lose the others."""
    try:
        return measured_run(problem, links, h, t_end, setting, solref, solimp, repeat)
    except Exception as e:  # noqa: BLE001 — any MuJoCo error is this cell's failure
        return {
            "problem": problem,
            "problem_params": {} if problem == "pendulum" else {"links": links},
            "variant": f"mujoco {setting} [solref=({solref[0]:g}, {solref[1]:g})]",
            "params": {"solref": list(solref), "solimp": list(solimp), "integrator": "Euler",
                       "mujoco": mujoco.__version__},
            "h": h, "t_end": t_end, "steps": 0, "ok": False, "fail_time": 0.0,
            "fail_kind": "external", "fail_reason": f"MuJoCo raised {type(e).__name__}: {e}",
            "max_pos_residual": None, "max_energy_rel_error": None,
            "wall_seconds": 0.0, "step_seconds": 0.0,
        }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="full", choices=["full", "quick"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--solref-out", required=True)
    a = ap.parse_args()
    quick = a.size == "quick"
    cases = experiment_cells("runs.csv")
    h = cases[0][2]
    default = ((0.02, 1.0), (0.9, 0.95, 0.001, 0.5, 2))
    stiff = ((2 * h, 1.0), (0.99, 0.999, 0.001, 0.5, 2))
    with open(a.out, "w") as f:
        for problem, links, h, t_end in cases:
            for name, (solref, solimp) in [("default", default), ("stiff", stiff)]:
                row = guarded_run(problem, links, h, t_end, name, solref, solimp, 1 if quick else 3)
                f.write(json.dumps(row) + "\n")
                print(f"mujoco {problem} N={links} {name}: ‖Φ‖∞ {row['max_pos_residual']:.3e}, "
                      f"energy {row['max_energy_rel_error']:.3e}, {row['step_seconds'] / max(row['steps'], 1):.3e} s/step",
                      file=sys.stderr)
    rows = []
    for xi, wn in [(1.0, 10.0), (0.5, 20.0), (1.0, 50.0)]:
        rows += solref_response(xi, wn, h, (0.95, 0.95, 0.001, 0.5, 2))
        rows += solref_response(xi, wn, h, default[1])
    # The columns driftlab-report reads (solref_check::COLUMNS).
    cols = ["xi", "omega_n", "tau", "zeta", "h", "solimp", "t", "measured"]
    with open(a.solref_out, "w") as f:
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join(str(r[c]) for c in cols) + "\n")


if __name__ == "__main__":
    main()
