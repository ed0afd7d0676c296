#!/usr/bin/env python3
"""driftlab's joint-space dynamics against Pinocchio (issue 28).

Reads the samples of `driftlab model-dynamics` (JSON: q, v = q̇, M by CRBA without the
Euler-parameter regularization, q̈ of the DAE at zero torque) and recomputes, with
Pinocchio (J. Carpentier et al., "The Pinocchio C++ library", SII 2019) reading the same
URDF, the mass matrix (`crba`) and the free acceleration (`aba`; R. Featherstone, Rigid
Body Dynamics Algorithms, 2008, ch. 6–7) at the same states.

Conventions mapped here:
  * driftlab's floating joint `root_joint`: q = (x, y, z, e0, e1, e2, e3), x in the world,
    Euler parameters with e0 scalar; q̇ its rates (7 numbers). Pinocchio's free flyer:
    q = (x, y, z, qx, qy, qz, qw), v = (Rᵀẋ, ω') with ω' = 2 G(p) ṗ,
    G = [[−e1, e0, e3, −e2], [−e2, −e3, e0, e1], [−e3, e2, −e1, e0]].
  * With v_pin = T q̇ (T = [[Rᵀ, 0], [0, 2G]] on the base, identity elsewhere):
    M_driftlab = Tᵀ M_pin T, and v̇_pin = (Rᵀẍ − ω'×Rᵀẋ, 2G p̈) on the base (Ġṗ = 0).
  * Joints are matched by name; Pinocchio merges fixed joints as driftlab's tree does not
    need to (they carry no coordinate).
Usage: pinocchio_check.py SAMPLES.json URDF_PATH ROBOT → prints the CSV row
robot,root,states,n,worst_mass_rel,worst_accel_rel,target,pass,pinocchio (target 1e-10).
"""
import json
import sys

import numpy as np
import pinocchio as pin


def quat_g(p):
    e0, e1, e2, e3 = p
    return np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])


def quat_r(p):
    e0, e1, e2, e3 = p
    return np.array([
        [2 * (e0 * e0 + e1 * e1) - 1, 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)],
        [2 * (e1 * e2 + e0 * e3), 2 * (e0 * e0 + e2 * e2) - 1, 2 * (e2 * e3 - e0 * e1)],
        [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), 2 * (e0 * e0 + e3 * e3) - 1],
    ])


def layout(samples, model):
    """Per driftlab joint: (kind, offset, nq, pinocchio idx_q, idx_v)."""
    names = list(model.names)
    out = []
    for j in samples["joints"]:
        if j["nq"] == 0:
            continue
        if j["name"] not in names:
            sys.exit(f"pinocchio_check: driftlab's joint {j['name']} is not in Pinocchio's model")
        k = names.index(j["name"])
        out.append((j["kind"], j["offset"], j["nq"], model.idx_qs[k], model.idx_vs[k], model.joints[k].nq))
    if len(out) != model.njoints - 1:
        sys.exit(f"pinocchio_check: {len(out)} moving joints here, {model.njoints - 1} in Pinocchio")
    return out


def convert(s, lay, model):
    """q_pin, v_pin, T (nv × n) and the base's velocity-product term for v̇_pin."""
    q, v = np.array(s["q"]), np.array(s["v"])
    n = len(q)
    qp, vp = np.zeros(model.nq), np.zeros(model.nv)
    t = np.zeros((model.nv, n))
    bias = np.zeros(model.nv)
    for kind, o, nq, iq, iv, pnq in lay:
        if kind == "floating":
            p = q[o + 3:o + 7]
            r, g = quat_r(p), quat_g(p)
            qp[iq:iq + 3] = q[o:o + 3]
            qp[iq + 3:iq + 7] = [p[1], p[2], p[3], p[0]]
            t[iv:iv + 3, o:o + 3] = r.T
            t[iv + 3:iv + 6, o + 3:o + 7] = 2 * g
            w = 2 * g @ v[o + 3:o + 7]
            bias[iv:iv + 3] = -np.cross(w, r.T @ v[o:o + 3])
        elif pnq == 2:  # Pinocchio's unbounded revolute: (cos θ, sin θ)
            qp[iq:iq + 2] = [np.cos(q[o]), np.sin(q[o])]
            t[iv, o] = 1.0
        else:
            qp[iq] = q[o]
            t[iv, o] = 1.0
    vp = t @ v
    return qp, vp, t, bias


def main():
    samples = json.load(open(sys.argv[1]))
    path = sys.argv[2]
    if samples["root"] == "floating":
        model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    else:
        model = pin.buildModelFromUrdf(path)
    data = model.createData()
    if not np.allclose(model.gravity.linear, samples["gravity"], rtol=0, atol=0):
        sys.exit(f"pinocchio_check: gravity {model.gravity.linear} vs {samples['gravity']}")
    lay = layout(samples, model)
    worst_m, worst_a = 0.0, 0.0
    for s in samples["samples"]:
        qp, vp, t, bias = convert(s, lay, model)
        n = len(s["q"])
        mp = pin.crba(model, data, qp)
        mp = np.triu(mp) + np.triu(mp, 1).T
        ours = np.array(s["mass"]).reshape(n, n)
        ref = t.T @ mp @ t
        worst_m = max(worst_m, np.abs(ours - ref).max() / np.abs(ref).max())
        ap = pin.aba(model, data, qp, vp, np.zeros(model.nv))
        mapped = t @ np.array(s["acceleration"]) + bias
        worst_a = max(worst_a, np.abs(mapped - ap).max() / max(np.abs(ap).max(), 1e-300))
    target = 1e-10
    ok = max(worst_m, worst_a) <= target
    n = len(samples["samples"][0]["q"])
    print(f"{sys.argv[3]},{samples['root']},{len(samples['samples'])},{n},{worst_m:.3e},"
          f"{worst_a:.3e},{target:g},{str(ok).lower()},{pin.__version__}")


if __name__ == "__main__":
    main()
