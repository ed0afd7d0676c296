"""MuJoCo as a measured peer (issue 15): the pendulum and the planar chains of driftlab's
catalog as maximal-coordinate MuJoCo models — free bodies (point masses) joined by
length-preserving tendon equality constraints — at MuJoCo's default and at a stiff solver
setting, measured the way driftlab measures its own runs:

* max_pos_residual: max over steps and rows of |Φ_i| = | |p_i − p_{i−1}|² − ℓ² |
  (driftlab's planar-chain and pendulum rows, p_0 = origin);
* max_energy_rel_error: max |H − H_0| / max(|H_0|, scale), H = Σ ½m|v|² + m g y, with
  driftlab's energy scales (pendulum m g ℓ, chain m g ℓ N(N+1)/2);
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


def timed_steps(model, steps, repeat):
    """Median wall time per mj_step over `repeat` runs from the initial state."""
    per_step = []
    for _ in range(repeat):
        data = mujoco.MjData(model)
        t0 = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(model, data)
        per_step.append((time.perf_counter() - t0) / steps)
    return statistics.median(per_step)


def measured_run(problem, links, h, t_end, setting, solref, solimp, repeat):
    """One row of the runs schema (the columns driftlab import-peer reads)."""
    model = mujoco.MjModel.from_xml_string(chain_xml(links, h, solref, solimp))
    steps = int(round(t_end / h))
    scale = G * links * (links + 1) / 2.0
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    p, v = positions_velocities(model, data, links)
    h0 = energy(p, v)
    max_res, max_energy, ok, fail_time, reason = residual(p), 0.0, True, None, None
    t0 = time.perf_counter()
    for k in range(steps):
        mujoco.mj_step(model, data)
        p, v = positions_velocities(model, data, links)
        r, e = residual(p), abs(energy(p, v) - h0) / max(abs(h0), scale)
        if not (math.isfinite(r) and math.isfinite(e)) or r > 1e6:
            ok, fail_time = False, k * h
            reason = f"the MuJoCo state diverged at t = {k * h:.4g} (‖Φ‖∞ = {r:.3e})"
            break
        max_res, max_energy = max(max_res, r), max(max_energy, e)
    wall = time.perf_counter() - t0
    step_seconds = timed_steps(model, steps, repeat) if ok else float("nan")
    params = {"links": links} if problem == "planar-chain" else {}
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
        "fail_reason": reason,
        "max_pos_residual": max_res,
        "max_energy_rel_error": max_energy,
        "wall_seconds": wall,
        "step_seconds": step_seconds * (steps if ok else k),
    }


def solref_response(xi, wn, h, solimp, offset=1e-4, t_end=None):
    """The length error of the pendulum's row after an initial violation `offset`
    (zero gravity, at rest) against r(t)/r0 of the linear error ODE r'' + 2ξω r' + ω² r = 0
    that the guide's conversion predicts; sampled at t = 1/ω, 2/ω, 4/ω."""
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
        if xi < 1.0:
            wd = wn * math.sqrt(1 - xi * xi)
            pred = math.exp(-xi * wn * ts) * (math.cos(wd * ts) + xi / math.sqrt(1 - xi * xi) * math.sin(wd * ts))
        else:
            pred = (1 + wn * ts) * math.exp(-wn * ts)
        rows.append({"xi": xi, "omega_n": wn, "tau": tau, "zeta": zeta, "h": h,
                     "solimp": " ".join(f"{x:g}" for x in solimp), "t": ts,
                     "predicted": pred, "measured": float(r)})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="full", choices=["full", "quick"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--solref-out", required=True)
    a = ap.parse_args()
    quick = a.size == "quick"
    h = 1e-3
    default = ((0.02, 1.0), (0.9, 0.95, 0.001, 0.5, 2))
    stiff = ((2 * h, 1.0), (0.99, 0.999, 0.001, 0.5, 2))
    # The cells of experiments/optional/mujoco-peer.toml (driftlab import-peer refuses a
    # run that is not one of them).
    t_end = 0.2 if quick else 2.0
    cases = [("pendulum", 1, t_end)]
    for n in ([10, 100] if quick else [10, 100, 1000]):
        cases.append(("planar-chain", n, t_end))
    with open(a.out, "w") as f:
        for problem, links, t_end in cases:
            for name, (solref, solimp) in [("default", default), ("stiff", stiff)]:
                row = measured_run(problem, links, h, t_end, name, solref, solimp, 1 if quick else 3)
                f.write(json.dumps(row) + "\n")
                print(f"mujoco {problem} N={links} {name}: ‖Φ‖∞ {row['max_pos_residual']:.3e}, "
                      f"energy {row['max_energy_rel_error']:.3e}, {row['step_seconds'] / max(row['steps'], 1):.3e} s/step",
                      file=sys.stderr)
    rows = []
    for xi, wn in [(1.0, 10.0), (0.5, 20.0), (1.0, 50.0)]:
        rows += solref_response(xi, wn, h, (0.95, 0.95, 0.001, 0.5, 2))
        rows += solref_response(xi, wn, h, default[1])
    cols = ["xi", "omega_n", "tau", "zeta", "h", "solimp", "t", "predicted", "measured"]
    with open(a.solref_out, "w") as f:
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join(str(r[c]) for c in cols) + "\n")


if __name__ == "__main__":
    main()
