#!/usr/bin/env python3
"""driftlab's joint-space rigid-body dynamics against Pinocchio (issue 28).

Reads the samples that `driftlab model-dynamics` writes (JSON: file, root, gravity,
joints [{name, kind, offset, nq}], rows, samples [{q, v = q̇, mass (row-major n×n),
acceleration = q̈, lambda}]) and recomputes, with Pinocchio reading the same URDF, the
mass matrix by the composite-rigid-body algorithm (`pin.crba`) and the free acceleration
by the articulated-body algorithm (`pin.aba`) at the same states.

References: J. Carpentier, G. Saurel, G. Buondonno, J. Mirabel, F. Lamiraux, O. Stasse,
N. Mansard, "The Pinocchio C++ library: a fast and flexible implementation of rigid body
dynamics algorithms and their analytical derivatives", IEEE/SICE International Symposium
on System Integration (SII), 2019; R. Featherstone, Rigid Body Dynamics Algorithms,
Springer, 2008 (CRBA ch. 6, ABA ch. 7).

Conventions mapped here
  * Joints are matched by name (Pinocchio: model.names[1:], model.joints[i].idx_q, idx_v,
    nq, nv). driftlab keeps fixed joints with nq = 0; Pinocchio merges them into frames
    and has no joint for them. A driftlab joint with coordinates but no Pinocchio joint of
    that name, or a Pinocchio joint that no driftlab joint maps to, fails the check.
  * Revolute and prismatic joints: q = angle / displacement, v = q̇ on both sides.
    Pinocchio's continuous (unbounded) joints have nq = 2 (cos θ, sin θ), nv = 1: they
    are filled from driftlab's angle (the shipped robots have none).
  * The floating root `root_joint` (Pinocchio's free flyer has the same name).
    driftlab: q = (x, y, z, e0, e1, e2, e3), the base frame's position in the world, then
    Euler parameters p with e0 the scalar part and the standard rotation R(p); v = q̇ (7
    numbers). Pinocchio: q = (x, y, z, qx, qy, qz, qw) = (x, y, z, e1, e2, e3, e0),
    v = (Rᵀẋ, ω) with ω = 2 G(p) ṗ the body angular velocity,
    G = [[−e1, e0, e3, −e2], [−e2, −e3, e0, e1], [−e3, e2, −e1, e0]].
    With v_pin = T q̇, T (nv × n) = [[Rᵀ, 0], [0, 2G]] on the base block and the identity
    elsewhere:
      mass:          driftlab's M must equal Tᵀ M_pin T (pin.crba fills only the upper
                     triangle: it is symmetrized first);
      acceleration:  v̇_pin = (Rᵀẍ − ω × (Rᵀẋ), 2 G p̈) on the base (d/dt(Rᵀẋ) = Rᵀẍ −
                     ω × Rᵀẋ, and Ġ ṗ = 0 identically), identity elsewhere, against
                     pin.aba(model, data, q_pin, v_pin, τ = 0).
    G p = 0, so T cannot see the part of p̈ along p. That part is fixed by the unit norm
    (pᵀp̈ = −|ṗ|² when |p| = 1 and pᵀṗ = 0), so each floating joint adds one entry to the
    compared vectors: 2 pᵀp̈ (driftlab) against −2|ṗ|² (exact). 2 [G; pᵀ] is twice an
    orthogonal matrix, so the compared vector determines q̈ completely.
    The samples must lie on |p| = 1, pᵀṗ = 0 (driftlab projects them); checked here.
  * driftlab's acceleration includes every constraint row of the model. With damping =
    false and mimic = false a tree robot's only rows are the unit norm of a floating base
    (`rows` is checked), so it is the free (ABA) acceleration; Pinocchio's ABA ignores
    URDF damping, hence damping = false on the driftlab side.
  * Gravity: the JSON's `gravity` must equal Pinocchio's model.gravity.linear exactly.

Error measure: relative = max|Δ| / max(max|ref|, 1e-300) per mass matrix and per
acceleration vector, the worst over the states; a non-finite number counts as infinite.

Usage: pinocchio_check.py --samples FILE.json --urdf FILE.urdf --robot NAME
                          [--states N] [--target 1e-10]
Prints one CSV row on stdout:
  robot,root,states,n,worst_mass_rel,worst_accel_rel,target,pass,pinocchio
and where the worst entries are on stderr. Exit 0 when both are within the target, 1 when
not, 2 when the input cannot be compared (the reason on stderr).
"""

import argparse
import json
import math
import sys

import numpy as np
import pinocchio as pin

# Ġ ṗ = 0 and the unit-norm identities need samples on the constraint manifold.
MANIFOLD_TOL = 1e-12


class Refused(Exception):
    """The samples and the model cannot be compared (exit 2)."""


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


def load_model(path, root):
    if root == "floating":
        args = (path, pin.JointModelFreeFlyer())
    elif root == "fixed":
        args = (path,)
    else:
        raise Refused(f"root {root!r}: only 'fixed' and 'floating' are compared")
    try:
        return pin.buildModelFromUrdf(*args, False)  # mimic = False: every joint its own
    except TypeError:  # a Pinocchio without the mimic argument treats none as mimic
        return pin.buildModelFromUrdf(*args)


def layout(doc, model):
    """One entry per driftlab joint with coordinates: (name, kind, offset, nq, pinocchio
    idx_q, idx_v, nq, nv). Refuses a joint without counterpart, on either side."""
    names = list(model.names)
    n = sum(j["nq"] for j in doc["joints"])
    out, used, covered = [], set(), np.zeros(n, dtype=int)
    for j in doc["joints"]:
        name, kind, o, nq = j["name"], j["kind"], j["offset"], j["nq"]
        if nq == 0:
            if name in names[1:] and model.joints[names.index(name)].nv > 0:
                raise Refused(f"driftlab's {kind} joint {name} has no coordinate, "
                              f"Pinocchio's has {model.joints[names.index(name)].nv}")
            continue
        if name not in names[1:]:
            raise Refused(f"driftlab's {kind} joint {name} (nq = {nq}) has no Pinocchio "
                          f"joint of that name (Pinocchio's: {', '.join(names[1:])})")
        k = names.index(name)
        pj = model.joints[k]
        ok = ((kind == "floating" and nq == 7 and pj.nq == 7 and pj.nv == 6)
              or (kind != "floating" and nq == 1 and pj.nv == 1 and pj.nq in (1, 2)))
        if not ok:
            raise Refused(f"joint {name}: driftlab {kind} with nq = {nq}, Pinocchio "
                          f"{pj.shortname()} with nq = {pj.nq}, nv = {pj.nv}: no mapping")
        covered[o:o + nq] += 1
        used.add(k)
        out.append((name, kind, o, nq, pj.idx_q, pj.idx_v, pj.nq, pj.nv))
    missing = [names[k] for k in range(1, model.njoints) if k not in used]
    if missing:
        raise Refused(f"Pinocchio's joints {', '.join(missing)} have no driftlab joint")
    if not (covered == 1).all():
        raise Refused("driftlab's joint offsets do not cover its coordinates once each")
    return n, out


def convert(q, v, lay, model):
    """q_pin, v_pin, T (nv × n), the base's velocity-product term of v̇_pin, and the
    floating joints' Euler-parameter slices (for the unit-norm entry)."""
    n = len(q)
    qp = pin.neutral(model)
    t = np.zeros((model.nv, n))
    bias = np.zeros(model.nv)
    euler = []
    for name, kind, o, nq, iq, iv, pnq, pnv in lay:
        if kind == "floating":
            x, xd, p, pd = q[o:o + 3], v[o:o + 3], q[o + 3:o + 7], v[o + 3:o + 7]
            if abs(p @ p - 1) > MANIFOLD_TOL or abs(p @ pd) > MANIFOLD_TOL:
                raise Refused(f"{name}: sample off |p| = 1, pᵀṗ = 0 (|p|² − 1 = "
                              f"{p @ p - 1:.2e}, pᵀṗ = {p @ pd:.2e})")
            r, g = quat_r(p), quat_g(p)
            rp = pin.Quaternion(p[0], p[1], p[2], p[3]).toRotationMatrix()
            if np.abs(r - rp).max() > 1e-13:
                raise Refused(f"{name}: R(p) disagrees with Pinocchio's quaternion")
            qp[iq:iq + 3] = x
            qp[iq + 3:iq + 7] = [p[1], p[2], p[3], p[0]]
            t[iv:iv + 3, o:o + 3] = r.T
            t[iv + 3:iv + 6, o + 3:o + 7] = 2 * g
            omega = 2 * g @ pd
            bias[iv:iv + 3] = -np.cross(omega, r.T @ xd)
            euler.append((o + 3, pd))
        elif pnq == 2:  # Pinocchio's continuous joint: (cos θ, sin θ)
            qp[iq:iq + 2] = [math.cos(q[o]), math.sin(q[o])]
            t[iv, o] = 1.0
        else:
            qp[iq] = q[o]
            t[iv, o] = 1.0
    return qp, t @ v, t, bias, euler


def rel(ours, ref, floor=1e-300):
    """max|Δ| / max(max|ref|, floor), infinite when anything is not finite; and the
    flat index of the largest |Δ|."""
    ours, ref = np.asarray(ours, float), np.asarray(ref, float)
    if not (np.isfinite(ours).all() and np.isfinite(ref).all()):
        return math.inf, int(np.argmin(np.isfinite(ours) & np.isfinite(ref)))
    d = np.abs(ours - ref)
    i = int(np.argmax(d))
    return float(d.flat[i] / max(np.abs(ref).max(), floor)), i


def compare(doc, model, expect_states):
    data = model.createData()
    grav = np.array(doc["gravity"], dtype=float)
    if grav.shape != (3,) or not np.array_equal(grav, model.gravity.linear):
        raise Refused(f"gravity: driftlab {doc['gravity']}, Pinocchio "
                      f"{model.gravity.linear.tolist()}")
    rows = doc["rows"]
    floating = sum(j["kind"] == "floating" for j in doc["joints"])
    if rows != ["unit-norm"] * floating:
        raise Refused(f"constraint rows {rows}: the acceleration is not the free one "
                      "(give damping=false, mimic=false and a tree robot)")
    n, lay = layout(doc, model)
    samples = doc["samples"]
    if not samples or (expect_states is not None and len(samples) != expect_states):
        raise Refused(f"{len(samples)} samples, {expect_states} expected")
    worst_m, worst_a = (0.0, None), (0.0, None)
    for k, s in enumerate(samples):
        q, v = np.array(s["q"], float), np.array(s["v"], float)
        m, a = np.array(s["mass"], float), np.array(s["acceleration"], float)
        if q.shape != (n,) or v.shape != (n,) or m.shape != (n * n,) or a.shape != (n,):
            raise Refused(f"sample {k}: sizes q {q.size}, v {v.size}, mass {m.size}, "
                          f"acceleration {a.size}; n = {n}")
        qp, vp, t, bias, euler = convert(q, v, lay, model)
        mp = pin.crba(model, data, qp)
        mp = np.triu(mp) + np.triu(mp, 1).T
        ref_m = t.T @ mp @ t
        ours_m = m.reshape(n, n)
        e, i = rel(ours_m, ref_m)
        if not e <= worst_m[0] or worst_m[1] is None:  # `not <=`: NaN-proof
            worst_m = (e, (k, divmod(i, n), ours_m.flat[i], ref_m.flat[i]))
        ref_a = np.array(pin.aba(model, data, qp, vp, np.zeros(model.nv)))
        ours_a = t @ a + bias
        # The part of p̈ along p, which T does not see: 2 pᵀp̈ against −2|ṗ|².
        ours_a = np.concatenate([ours_a, [2 * q[o:o + 4] @ a[o:o + 4] for o, _ in euler]])
        ref_a = np.concatenate([ref_a, [-2 * pd @ pd for _, pd in euler]])
        e, i = rel(ours_a, ref_a)
        if not e <= worst_a[0] or worst_a[1] is None:
            worst_a = (e, (k, i, ours_a[i], ref_a[i]))
    return n, len(samples), worst_m, worst_a


def q_label(doc, i):
    """Names driftlab's coordinate i."""
    for j in doc["joints"]:
        if int(j["offset"]) <= i < int(j["offset"]) + int(j["nq"]):
            return j["name"] if j["nq"] == 1 else f"{j['name']}[{i - j['offset']}]"
    return str(i)


def v_label(model, i):
    """Names Pinocchio's velocity index i (or an appended unit-norm entry)."""
    if i >= model.nv:
        return f"unit-norm entry {i - model.nv}"
    for k in range(1, model.njoints):
        j = model.joints[k]
        if j.idx_v <= i < j.idx_v + j.nv:
            return f"{model.names[k]}[{i - j.idx_v}]"
    return str(i)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", required=True, help="JSON of driftlab model-dynamics")
    ap.add_argument("--urdf", required=True, help="the URDF driftlab's model was built from")
    ap.add_argument("--robot", required=True, help="name in the CSV row")
    ap.add_argument("--states", type=int, help="number of samples expected")
    ap.add_argument("--target", type=float, default=1e-10)
    a = ap.parse_args()
    try:
        with open(a.samples) as f:
            doc = json.load(f)
        model = load_model(a.urdf, doc["root"])
        n, states, (wm, at_m), (wa, at_a) = compare(doc, model, a.states)
    except Refused as e:
        print(f"pinocchio_check: {a.robot}: cannot compare: {e}", file=sys.stderr)
        sys.exit(2)
    except (OSError, KeyError, ValueError, RuntimeError) as e:
        print(f"pinocchio_check: {a.robot}: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(2)
    ok = wm <= a.target and wa <= a.target
    print(f"{a.robot},{doc['root']},{states},{n},{wm:.3e},{wa:.3e},{a.target:g},"
          f"{str(ok).lower()},{pin.__version__}")
    k, (r, c), ours, ref = at_m
    print(f"pinocchio_check: {a.robot}: worst M at state {k}, entry ({q_label(doc, r)}, "
          f"{q_label(doc, c)}): driftlab {ours:.17g}, Pinocchio {ref:.17g}", file=sys.stderr)
    k, i, ours, ref = at_a
    print(f"pinocchio_check: {a.robot}: worst acceleration at state {k}, "
          f"{v_label(model, i)} (Pinocchio's v̇): driftlab {ours:.17g}, Pinocchio {ref:.17g}",
          file=sys.stderr)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
