#!/usr/bin/env python3
"""driftlab's MJCF reader against MuJoCo on the same file (issue 47, item 3).

Reads the samples that `driftlab model-dynamics --set robot=ID` writes (JSON: file, root,
gravity, joints [{name, kind, offset, nq}], rows, row_names, samples [{q, v = q̇, mass
(row-major n×n: the tree's M(q) by CRBA with the joints' armature, no Euler-parameter
regularization), acceleration = q̈ of the KKT system with every row (unit norms, loop
closures, joint/tendon couplings) at zero torque, joint springs and damping included,
lambda}]) and recomputes, with MuJoCo compiling the same MJCF file, at the same states:

  (a) the joint-space mass matrix, mj_fullM (armature included);
  (b) for a model without equality rows: the free acceleration qacc_smooth =
      M⁻¹(qfrc_passive − qfrc_bias), and the bias driftlab's M and q̈ imply,
      Sᵀ M q̈ (below), against qfrc_passive − qfrc_bias;
  (c) for a model with equalities: the exact (hard) constrained acceleration from
      MuJoCo's own M, qfrc_passive − qfrc_bias, the equality rows of its constraint
      Jacobian efc_J and their J̇·qvel — the KKT system [M Jᵀ; J 0][a; −λ] = [f; −J̇ v] —
      against driftlab's q̈; and the constraint force driftlab's q̈ implies,
      r = Sᵀ M q̈ − f, against the row space of efc_J (sin of its angle to the rows).
      driftlab's Φ_q itself is not in the samples: the principal angles between the row
      spaces (the issue's second target) need it (see the report's `missing`).

MuJoCo's model: mujoco.MjModel.from_xml_path(FILE); contact, actuation, friction loss,
joint/tendon limits disabled; fluid off (opt.density = opt.viscosity = 0, wind = 0);
gravity, springs and dampers as the file says; dense Jacobians; equality constraints on
(they do not change qacc_smooth, M or the forces; their efc_J rows are read). mj_forward.

Mapping (driftlab's q, v = q̇ → MuJoCo's qpos, qvel). Joints are matched in order (the
moving joints of driftlab, nq > 0, against MuJoCo's joints); names must agree, an unnamed
MuJoCo joint being driftlab's `joint{k}` (k its index in driftlab's joint list).
  * hinge / slide (driftlab revolute, continuous, prismatic): qpos = q (the reader folds
    `ref` into the joint's placement), qvel = q̇.
  * ball (driftlab spherical, 4 Euler parameters e = (e0, e1, e2, e3), e0 scalar):
    qpos = e (MuJoCo's quaternion, w first); qvel = ω = 2 G(e) ė, the child's angular
    velocity in its own frame, G = [[−e1, e0, e3, −e2], [−e2, −e3, e0, e1],
    [−e3, e2, −e1, e0]].
  * free (driftlab floating: x world, then e): qpos = (x, e); qvel = (ẋ, 2 G(e) ė), the
    world linear velocity and the body angular velocity, as MuJoCo's.
  With T (nv × n) the map qvel = T q̇ (identity on hinges/slides and the free joint's ẋ,
  2G(e) on Euler parameters) and S (n × nv) its right inverse on |e| = 1 (S = ½Gᵀ on the
  Euler-parameter blocks, T S = I):
    mass:    driftlab's M must equal Tᵀ M_mj T (zero along e, as driftlab's M is without
             regularization);
    acceleration: qacc = T q̈ (Ġ ė = 0 identically, so ω̇ = 2 G ë), plus one entry per
             Euler-parameter block that T cannot see: 2 eᵀë (driftlab) against −2|ė|²
             (the unit norm's second derivative, exact);
    forces:  a generalized force f (q̇ space) is Tᵀ f_mj, so f_mj = Sᵀ f; the unit-norm
             rows' forces (along e) vanish there (G e = 0).
  The samples must lie on |e| = 1, eᵀė = 0 (driftlab projects them); checked.

J̇·qvel of MuJoCo's equality rows (efc_J gives J, not its derivative):
  * joint:  row e₁ − p′(q₂ − q₂⁰) e₂, J̇ v = −p″(q₂ − q₂⁰) q̇₂² (no joint2: 0);
  * tendon (fixed tendons only: L = Σ cᵢ qᵢ, J constant): −p″(L₂ − L₂⁰)(J₂ v)²;
  * connect: J = J_p(body1, point) − J_p(body2, point) at the anchors' world points
    (mj_jac), J̇ v by mj_jacDot;
  * weld: the same three position rows and the relative angular velocity
    J_r(body1) − J_r(body2) (the row space of MuJoCo's quaternion rows, which are
    invertible combinations of these on the constraint manifold), J̇ v by mj_jacDot.
  The rows used for (c) are checked against efc_J (principal angle, reported as
  `rows_vs_efc_J`: a check of this script, not of driftlab).

Error measures, the worst over the states; a non-finite number counts as infinite:
  * relative = max|Δ| / max(max|ref|, 1e-300) per matrix or vector (M, the accelerations);
  * the bias, and an acceleration difference as a force (`*_backward`: max|M_mj Δqacc|,
    with the unit-norm entries relative to max|ref|), relative to the state's force scale
    F = max(max|qfrc_bias|, max|qfrc_passive|, max|M_mj qvel|·max|qvel|) — the last term
    the size of the velocity products, which cancel in a nearly force-free state (for the
    constrained acceleration also max|M_mj (qacc − qacc_smooth)|, the constraint force).
An acceleration passes when its relative error is within the target, or else when its
backward error is (`passed_by_backward` names it): e.g. dm_control's swimmer head, a free
planar body with gravity normal to its plane, at a state with a small spin ω has
accelerations ~ω²r while both codes' round-off in θ̈ (exactly 0) is ~ε m|v|²/I — the
relative error then measures MuJoCo's round-off, not the model.

Usage: mjcf_oracle.py --samples FILE.json [--samples FILE2.json …] --xml FILE.xml
                      --robot ID [--states N] [--target 1e-10] [--unsampled TEXT]
(several --samples files of one model are joined; --unsampled: the states driftlab could
not sample, which fails the row.) Prints one JSON object (one line) on stdout: robot, n,
nv, states, equality rows (driftlab's; MuJoCo's and their rank), the worst errors (mass,
accel, accel_backward, bias — or kkt_accel, kkt_accel_backward, force_angle), where they
are (`*_at`: state, index, driftlab's and MuJoCo's numbers), what MuJoCo does that the
reader is not known to model (`unsupported`), passed; the worst entries also on stderr.
Exit 0 when every measure is within the target, 1 when not, 2 when the input cannot be
compared (the reason on stderr and in the JSON's `error`).
"""

import argparse
import json
import math
import sys

import mujoco
import numpy as np

MANIFOLD_TOL = 1e-12
RANK_TOL = 1e-9


class Refused(Exception):
    """The samples and the model cannot be compared (exit 2)."""


def quat_g(p):
    e0, e1, e2, e3 = p
    return np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])


def load_model(path):
    m = mujoco.MjModel.from_xml_path(path)
    dis = mujoco.mjtDisableBit
    m.opt.disableflags |= (dis.mjDSBL_CONTACT | dis.mjDSBL_ACTUATION
                           | dis.mjDSBL_FRICTIONLOSS | dis.mjDSBL_LIMIT)
    m.opt.density = 0.0
    m.opt.viscosity = 0.0
    m.opt.wind[:] = 0.0
    m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    return m


def gravity_of(m):
    if m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY:
        return np.zeros(3)
    return np.array(m.opt.gravity, float)


def unsupported(m):
    """What MuJoCo does with this file that driftlab's reader is not known to model (it
    would show as a bias or acceleration difference): named so that a failure explains
    itself."""
    out = []
    if np.any(m.body_gravcomp != 0):
        out.append("MuJoCo applies body gravcomp")
    if m.ntendon and (np.any(m.tendon_stiffness != 0) or np.any(m.tendon_damping != 0)):
        out.append("MuJoCo applies tendon stiffness/damping")
    if m.ntendon and hasattr(m, "tendon_armature") and np.any(m.tendon_armature != 0):
        out.append("MuJoCo adds tendon armature to M")
    for k in range(m.njnt):
        t = int(m.jnt_type[k])
        if t in (int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)) \
                and m.jnt_stiffness[k]:
            name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, k)
            out.append(f"MuJoCo applies the stiffness of {name}")
    if hasattr(m, "dof_dampingpoly") and np.any(m.dof_dampingpoly != 0):
        out.append("MuJoCo applies polynomial damping")
    if hasattr(m, "jnt_stiffnesspoly") and np.any(m.jnt_stiffnesspoly != 0):
        out.append("MuJoCo applies polynomial stiffness")
    dis = mujoco.mjtDisableBit
    for bit, what in ((dis.mjDSBL_SPRING, "spring"), (dis.mjDSBL_DAMPER, "damper")):
        if m.opt.disableflags & int(bit):
            out.append(f'the file disables {what}s (<flag {what}="disable">): MuJoCo applies '
                       "none")
    return out


def layout(doc, m):
    """One entry per driftlab joint with coordinates: (name, kind, offset, nq, MuJoCo
    joint id, qposadr, dofadr). Refuses what does not pair up."""
    moving = [(k, j) for k, j in enumerate(doc["joints"]) if j["nq"] > 0]
    if len(moving) != m.njnt:
        raise Refused(f"driftlab has {len(moving)} joints with coordinates "
                      f"({', '.join(j['name'] for _, j in moving)}), MuJoCo {m.njnt}")
    want = {mujoco.mjtJoint.mjJNT_HINGE: ("revolute", "continuous"),
            mujoco.mjtJoint.mjJNT_SLIDE: ("prismatic",),
            mujoco.mjtJoint.mjJNT_BALL: ("spherical",),
            mujoco.mjtJoint.mjJNT_FREE: ("floating",)}
    nq_of = {"revolute": 1, "continuous": 1, "prismatic": 1, "spherical": 4, "floating": 7}
    out = []
    n = sum(j["nq"] for j in doc["joints"])
    covered = np.zeros(n, dtype=int)
    for jid, (k, j) in enumerate(moving):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, jid) or ""
        expect = name if name else f"joint{k}"
        if j["name"] != expect:
            raise Refused(f"joint {jid}: MuJoCo's is {name or '(unnamed)'}, driftlab's "
                          f"(in order) {j['name']}, expected {expect}")
        t = mujoco.mjtJoint(int(m.jnt_type[jid]))
        if j["kind"] not in want[t] or j["nq"] != nq_of[j["kind"]]:
            raise Refused(f"joint {expect}: driftlab {j['kind']} with nq = {j['nq']}, MuJoCo "
                          f"{t.name}: no mapping")
        o = j["offset"]
        covered[o:o + j["nq"]] += 1
        out.append((expect, j["kind"], o, j["nq"], jid, int(m.jnt_qposadr[jid]),
                    int(m.jnt_dofadr[jid])))
    if not (covered == 1).all():
        raise Refused("driftlab's joint offsets do not cover its coordinates once each")
    return n, out


def convert(q, v, lay, m):
    """qpos, qvel, T (nv × n), S (n × nv), and the Euler-parameter blocks (offset, ė)."""
    n = len(q)
    qpos = np.array(m.qpos0, float)
    t = np.zeros((m.nv, n))
    s = np.zeros((n, m.nv))
    euler = []
    for name, kind, o, nq, jid, qa, da in lay:
        if kind in ("revolute", "continuous", "prismatic"):
            qpos[qa] = q[o]
            t[da, o] = 1.0
            s[o, da] = 1.0
            continue
        lin = 3 if kind == "floating" else 0
        if lin:
            qpos[qa:qa + 3] = q[o:o + 3]
            t[da:da + 3, o:o + 3] = np.eye(3)
            s[o:o + 3, da:da + 3] = np.eye(3)
        p, pd = q[o + lin:o + lin + 4], v[o + lin:o + lin + 4]
        if abs(p @ p - 1) > MANIFOLD_TOL or abs(p @ pd) > MANIFOLD_TOL:
            raise Refused(f"{name}: sample off |e| = 1, eᵀė = 0 (|e|² − 1 = "
                          f"{p @ p - 1:.2e}, eᵀė = {p @ pd:.2e})")
        g = quat_g(p)
        qpos[qa + lin:qa + lin + 4] = p
        t[da + lin:da + lin + 3, o + lin:o + lin + 4] = 2 * g
        s[o + lin:o + lin + 4, da + lin:da + lin + 3] = 0.5 * g.T
        euler.append((o + lin, pd))
    return qpos, t @ v, t, s, euler


def rel(ours, ref, scale=None, floor=1e-300):
    """max|Δ| / max(scale or max|ref|, floor), infinite when anything is not finite; and
    the flat index of the largest |Δ|."""
    ours, ref = np.asarray(ours, float), np.asarray(ref, float)
    if not (np.isfinite(ours).all() and np.isfinite(ref).all()):
        return math.inf, int(np.argmin(np.isfinite(ours) & np.isfinite(ref)))
    d = np.abs(ours - ref)
    if d.size == 0:
        return 0.0, 0
    i = int(np.argmax(d))
    sc = np.abs(ref).max() if scale is None else scale
    return float(d.flat[i] / max(sc, floor)), i


def backward(ours, ref, mfull, scale):
    """The acceleration difference as a force, max|M Δqacc| / scale (the force scale of
    the state), and the unit-norm entries' difference relative to max|ref|: how far the
    forces would have to move to explain the difference."""
    nv = mfull.shape[0]
    dq = np.asarray(ours[:nv], float) - np.asarray(ref[:nv], float)
    if not (np.isfinite(dq).all() and np.isfinite(ours).all()):
        return math.inf
    e = float(np.abs(mfull @ dq).max(initial=0.0) / max(scale, 1e-300))
    if len(ref) > nv:
        e = max(e, rel(ours[nv:], ref[nv:], np.abs(ref).max())[0])
    return e


def orth(a, tol=RANK_TOL):
    """Orthonormal basis (columns) of the column space of a."""
    if a.size == 0:
        return np.zeros((a.shape[0], 0))
    u, sv, _ = np.linalg.svd(a, full_matrices=False)
    r = int((sv > tol * max(sv.max(), 1e-300)).sum()) if sv.size else 0
    return u[:, :r]


def largest_angle(a, b, tol=RANK_TOL):
    """sin of the largest principal angle between the column spaces of a and b, each taken
    to its rank at `tol` (1 when their dimensions differ)."""
    qa, qb = orth(a, tol), orth(b, tol)
    if qa.shape[1] != qb.shape[1]:
        return 1.0
    if qa.shape[1] == 0:
        return 0.0
    return float(np.linalg.norm(qa - qb @ (qb.T @ qa), 2))


def efc_equality_rows(m, d):
    """MuJoCo's equality rows of efc_J (dense, rows × nv) and their equality ids."""
    nefc = d.nefc
    if nefc == 0:
        return np.zeros((0, m.nv)), np.zeros(0, int)
    if mujoco.mj_isSparse(m):
        j = np.zeros((nefc, m.nv))
        for r in range(nefc):
            a, k = d.efc_J_rowadr[r], d.efc_J_rownnz[r]
            j[r, d.efc_J_colind[a:a + k]] = d.efc_J[a:a + k]
    else:
        j = np.array(d.efc_J[:nefc * m.nv]).reshape(nefc, m.nv)
    keep = np.array(d.efc_type[:nefc]) == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)
    return j[keep], np.array(d.efc_id[:nefc])[keep]


def tendon_jacobian(m, d):
    """ten_J dense (ntendon × nv): MuJoCo 3 stores it dense, MuJoCo 4 in compressed rows
    (the sparsity ten_J_rowadr, ten_J_rownnz, ten_J_colind in the model, or the data)."""
    raw = np.array(d.ten_J, float).ravel()
    src = m if hasattr(m, "ten_J_rownnz") else d if hasattr(d, "ten_J_rownnz") else None
    if src is None:
        return raw.reshape(m.ntendon, m.nv)
    j = np.zeros((m.ntendon, m.nv))
    for t in range(m.ntendon):
        a, k = int(src.ten_J_rowadr[t]), int(src.ten_J_rownnz[t])
        j[t, np.array(src.ten_J_colind[a:a + k], int)] = raw[a:a + k]
    return j


def poly_d(c, x):
    """p′(x), p″(x) of p = c0 + c1 x + … + c4 x⁴."""
    d1 = c[1] + 2 * c[2] * x + 3 * c[3] * x ** 2 + 4 * c[4] * x ** 3
    d2 = 2 * c[2] + 6 * c[3] * x + 12 * c[4] * x ** 2
    return d1, d2


def body_point(m, d, objtype, oid, local):
    """Body id and world point of an equality's object (a body with a local point, or a
    site)."""
    if objtype == int(mujoco.mjtObj.mjOBJ_SITE):
        return int(m.site_bodyid[oid]), np.array(d.site_xpos[oid])
    return int(oid), d.xpos[oid] + d.xmat[oid].reshape(3, 3) @ local


def equality_rows(m, d, qvel):
    """The equality rows this script uses (J, J̇·qvel), active equalities in order."""
    rows, gam = [], []
    for e in range(m.neq):
        if not d.eq_active[e]:
            continue
        t, o1, o2 = mujoco.mjtEq(int(m.eq_type[e])), int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        data = np.array(m.eq_data[e])
        if t == mujoco.mjtEq.mjEQ_JOINT:
            j = np.zeros(m.nv)
            j[m.jnt_dofadr[o1]] = 1.0
            g = 0.0
            if o2 >= 0:
                da = m.jnt_dofadr[o2]
                x = d.qpos[m.jnt_qposadr[o2]] - m.qpos0[m.jnt_qposadr[o2]]
                d1, d2 = poly_d(data[:5], x)
                j[da] -= d1
                g = -d2 * qvel[da] ** 2
            rows.append(j)
            gam.append(g)
        elif t == mujoco.mjtEq.mjEQ_TENDON:
            ten = [tid for tid in (o1, o2) if tid >= 0]
            for tid in ten:
                adr, num = m.tendon_adr[tid], m.tendon_num[tid]
                if any(m.wrap_type[adr + i] != mujoco.mjtWrap.mjWRAP_JOINT for i in range(num)):
                    raise Refused(f"equality {e}: tendon {tid} is spatial (J̇ not computed here)")
            ten_j = tendon_jacobian(m, d)
            j = ten_j[o1].copy()
            g = 0.0
            if o2 >= 0:
                x = d.ten_length[o2] - m.tendon_length0[o2]
                d1, d2 = poly_d(data[:5], x)
                j -= d1 * ten_j[o2]
                g = -d2 * (ten_j[o2] @ qvel) ** 2
            rows.append(j)
            gam.append(g)
        elif t in (mujoco.mjtEq.mjEQ_CONNECT, mujoco.mjtEq.mjEQ_WELD):
            objtype = int(m.eq_objtype[e])
            if t == mujoco.mjtEq.mjEQ_CONNECT:
                b1, p1 = body_point(m, d, objtype, o1, data[0:3])
                b2, _ = body_point(m, d, objtype, o2, data[3:6])
                p = p1
            else:
                b2, p2 = body_point(m, d, objtype, o2, data[0:3])
                b1, _ = body_point(m, d, objtype, o1, data[3:6])
                p = p2
            jp = [np.zeros((3, m.nv)) for _ in range(4)]
            jr = [np.zeros((3, m.nv)) for _ in range(4)]
            mujoco.mj_jac(m, d, jp[0], jr[0], p, b1)
            mujoco.mj_jac(m, d, jp[1], jr[1], p, b2)
            mujoco.mj_jacDot(m, d, jp[2], jr[2], p, b1)
            mujoco.mj_jacDot(m, d, jp[3], jr[3], p, b2)
            rows.extend(jp[0] - jp[1])
            gam.extend((jp[2] - jp[3]) @ qvel)
            if t == mujoco.mjtEq.mjEQ_WELD:
                rows.extend(jr[0] - jr[1])
                gam.extend((jr[2] - jr[3]) @ qvel)
        else:
            raise Refused(f"equality {e}: type {t.name} not compared")
    return np.array(rows).reshape(-1, m.nv), np.array(gam, float)


def compare(doc, m, expect_states):
    d = mujoco.MjData(m)
    grav = np.array(doc["gravity"], dtype=float)
    gm = gravity_of(m)
    if grav.shape != (3,) or not np.array_equal(grav, gm):
        raise Refused(f"gravity: driftlab {doc['gravity']}, MuJoCo {gm.tolist()}")
    n, lay = layout(doc, m)
    euler_rows = sum(1 for j in doc["joints"] if j["kind"] in ("floating", "spherical"))
    kinds = doc["rows"]
    other = [k for k in kinds if k != "unit-norm"]
    if kinds.count("unit-norm") != euler_rows:
        raise Refused(f"{kinds.count('unit-norm')} unit-norm rows, {euler_rows} joints "
                      "with Euler parameters")
    samples = doc["samples"]
    if not samples or (expect_states is not None and len(samples) != expect_states):
        raise Refused(f"{len(samples)} samples, {expect_states} expected")
    # A model sampled with `redundant_tol` (driftlab kept the rows independent at that
    # tolerance) is compared at the same rank tolerance: MuJoCo keeps the near-redundant
    # rows, whose directions below it are not determined.
    rank_tol = float(doc.get("redundant_tol") or RANK_TOL)
    res = {"n": n, "nv": int(m.nv), "rank_tol": rank_tol, "states": len(samples), "dl_rows": len(other),
           "dl_row_kinds": sorted(set(other)), "mj_rows": None, "mj_rank": None, "mass": None,
           "accel": None, "accel_backward": None, "bias": None, "kkt_accel": None,
           "kkt_accel_backward": None, "force_angle": None,
           "rows_vs_efc_J": None, "row_angle": None, "forces": None,
           "unsupported": unsupported(m)}
    worst = {}

    def keep(key, e, where):
        if key not in worst or not e <= worst[key][0]:  # NaN-proof
            worst[key] = (e, where)

    constrained = bool(other)
    for k, smp in enumerate(samples):
        q, v = np.array(smp["q"], float), np.array(smp["v"], float)
        mm, a = np.array(smp["mass"], float), np.array(smp["acceleration"], float)
        if q.shape != (n,) or v.shape != (n,) or mm.shape != (n * n,) or a.shape != (n,):
            raise Refused(f"sample {k}: sizes q {q.size}, v {v.size}, mass {mm.size}, "
                          f"acceleration {a.size}; n = {n}")
        mm = mm.reshape(n, n)
        qpos, qvel, t, s, euler = convert(q, v, lay, m)
        d.qpos[:] = qpos
        d.qvel[:] = qvel
        d.ctrl[:] = 0.0
        d.qfrc_applied[:] = 0.0
        d.xfrc_applied[:] = 0.0
        mujoco.mj_forward(m, d)
        mfull = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, mfull)
        ref_m = t.T @ mfull @ t
        e, i = rel(mm, ref_m)
        keep("mass", e, (k, divmod(i, n), mm.flat[i], ref_m.flat[i]))
        f_mj = np.array(d.qfrc_passive) - np.array(d.qfrc_bias)
        # The size of the forces at this state, including the velocity products that
        # cancel in a nearly force-free motion: max|M qvel|·max|qvel|.
        scale_f = max(np.abs(d.qfrc_bias).max(initial=0.0),
                      np.abs(d.qfrc_passive).max(initial=0.0),
                      np.abs(mfull @ qvel).max(initial=0.0) * np.abs(qvel).max(initial=0.0))
        ours_a = t @ a
        ours_a = np.concatenate([ours_a, [2 * q[o:o + 4] @ a[o:o + 4] for o, _ in euler]])
        exact_tail = [-2 * pd @ pd for _, pd in euler]
        # The generalized force driftlab's M and q̈ imply, in MuJoCo's dofs.
        implied = s.T @ (mm @ a)
        j_efc, _ = efc_equality_rows(m, d)
        if "forces" in smp:
            # driftlab's own generalized forces (gravity, velocity products, springs,
            # dampers) in MuJoCo's dofs against qfrc_passive − qfrc_bias.
            f_dl = s.T @ np.array(smp["forces"], float)
            e, i = rel(-f_dl, -f_mj, scale_f)
            keep("forces", e, (k, i, f_dl[i], f_mj[i]))
        if "jacobian" in smp and other:
            # driftlab's Φ_q (rows other than unit norms, which vanish on MuJoCo's dofs)
            # mapped to MuJoCo's dofs, against efc_J's equality rows: sin of the largest
            # principal angle between the two row spaces.
            rows = np.array(smp["jacobian"], float).reshape(len(kinds), n)
            ours_rows = rows[[r for r, kind in enumerate(kinds) if kind != "unit-norm"]] @ s
            keep("row_angle", largest_angle(ours_rows.T, j_efc.T, rank_tol), (k,))
        if res["mj_rows"] is None:
            res["mj_rows"] = int(j_efc.shape[0])
            res["mj_rank"] = int(orth(j_efc.T, rank_tol).shape[1])
        if not constrained:
            if j_efc.shape[0]:
                raise Refused(f"MuJoCo has {j_efc.shape[0]} equality rows, driftlab none")
            ref_a = np.concatenate([d.qacc_smooth, exact_tail])
            e, i = rel(ours_a, ref_a)
            keep("accel", e, (k, i, ours_a[i], ref_a[i]))
            keep("accel_backward", backward(ours_a, ref_a, mfull, scale_f), (k,))
            e, i = rel(-implied, -f_mj, scale_f)
            keep("bias", e, (k, i, -implied[i], -f_mj[i]))
        else:
            jm, gam = equality_rows(m, d, qvel)
            keep("rows_vs_efc_J", largest_angle(jm.T, j_efc.T, rank_tol), (k,))
            minv = np.linalg.inv(mfull)
            afree = minv @ f_mj
            if jm.shape[0]:
                lam = np.linalg.lstsq(jm @ minv @ jm.T, -gam - jm @ afree, rcond=None)[0]
                acc = afree + minv @ jm.T @ lam
            else:
                acc = afree
            ref_a = np.concatenate([acc, exact_tail])
            e, i = rel(ours_a, ref_a)
            keep("kkt_accel", e, (k, i, ours_a[i], ref_a[i]))
            keep("kkt_accel_backward", backward(ours_a, ref_a, mfull, max(
                scale_f, np.abs(mfull @ (acc - afree)).max(initial=0.0))), (k,))
            r = implied - f_mj
            nr = np.linalg.norm(r)
            if nr > 1e-9 * max(scale_f, 1.0) and jm.shape[0]:
                qj = orth(j_efc.T)
                ang = float(np.linalg.norm(r - qj @ (qj.T @ r)) / nr)
            else:
                ang = 0.0
            keep("force_angle", ang, (k, float(nr)))
    for key, (e, where) in worst.items():
        res[key] = e
        res[key + "_at"] = where
    return res, lay


def read_samples(paths):
    """The samples of one or more model-dynamics files of the same model, joined."""
    doc = None
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        if doc is None:
            doc = d
            continue
        for k in ("file", "gravity", "joints", "rows"):
            if d[k] != doc[k]:
                raise Refused(f"{p}: `{k}` differs from {paths[0]}'s")
        doc["samples"] += d["samples"]
    return doc


def label(lay, i, n_nv, m):
    """Names MuJoCo's dof i (or an appended unit-norm entry)."""
    if i >= n_nv:
        return f"unit-norm entry {i - n_nv}"
    for name, kind, o, nq, jid, qa, da in lay:
        nv = {"floating": 6, "spherical": 3}.get(kind, 1)
        if da <= i < da + nv:
            return name if nv == 1 else f"{name}[{i - da}]"
    return str(i)


def q_label(doc, i):
    for j in doc["joints"]:
        if int(j["offset"]) <= i < int(j["offset"]) + int(j["nq"]):
            return j["name"] if j["nq"] == 1 else f"{j['name']}[{i - j['offset']}]"
    return str(i)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", required=True, action="append",
                    help="JSON of driftlab model-dynamics (repeatable: the files' samples "
                         "are joined; their layouts must agree)")
    ap.add_argument("--xml", required=True, help="the MJCF file driftlab's model was read from")
    ap.add_argument("--robot", required=True, help="the model's id (in the output)")
    ap.add_argument("--states", type=int, help="number of samples expected")
    ap.add_argument("--target", type=float, default=1e-10)
    ap.add_argument("--unsampled", default="",
                    help="states driftlab could not sample (what and why): the row is "
                         "compared on the others and fails")
    a = ap.parse_args()
    out = {"robot": a.robot, "target": a.target, "mujoco": mujoco.__version__}
    try:
        doc = read_samples(a.samples)
        m = load_model(a.xml)
        res, lay = compare(doc, m, a.states)
    except Refused as e:
        out.update(error=f"cannot compare: {e}", passed=False)
        print(json.dumps(out))
        print(f"mjcf_oracle: {a.robot}: cannot compare: {e}", file=sys.stderr)
        sys.exit(2)
    except (OSError, KeyError, ValueError, RuntimeError, np.linalg.LinAlgError) as e:
        out.update(error=f"{type(e).__name__}: {e}", passed=False)
        print(json.dumps(out))
        print(f"mjcf_oracle: {a.robot}: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(2)
    out.update(res)
    if a.unsampled:
        out["unsampled"] = a.unsampled
    measures = ["mass", "accel", "bias"] if res["accel"] is not None else ["mass", "kkt_accel"]
    measures += [k for k in ("forces",) if res[k] is not None]
    if res["row_angle"] is not None and not res["row_angle"] <= 1e-9:
        problems_rows = [f"row spaces of Φ_q and efc_J: sin of the largest principal angle "
                         f"{res['row_angle']:.3e} above 1e-9"]
    else:
        problems_rows = []
    problems = list(problems_rows)
    for k in measures:
        x = res[k]
        if x is not None and x <= a.target:
            continue
        # An acceleration that misses the target relative to itself passes when the
        # difference, as a force, is within the target of the state's force scale: the
        # reference is then small against the terms that cancel in it (a nearly
        # force-free state), and either code's round-off decides the relative error.
        b = res.get(k + "_backward")
        if x is not None and b is not None and b <= a.target:
            out.setdefault("passed_by_backward", []).append(k)
            continue
        problems.append(f"{k} {'not measured' if x is None else format(x, '.3e')} above "
                        f"{a.target:g}" + ("" if b is None else f" (as a force: {b:.3e})"))
    # MuJoCo keeps redundant rows (a planar loop's out-of-plane row); driftlab's may have
    # been removed (`redundant = "remove"`): the ranks must agree.
    if res["dl_rows"] != (res["mj_rank"] or 0):
        problems.append(f"equality rows: driftlab {res['dl_rows']}, MuJoCo {res['mj_rows']} "
                        f"of rank {res['mj_rank']}")
    if res["rows_vs_efc_J"] is not None and not res["rows_vs_efc_J"] <= 1e-9:
        problems.append(f"this script's equality rows differ from efc_J (sin angle "
                        f"{res['rows_vs_efc_J']:.2e}): the comparison is not sound")
    if a.unsampled:
        problems.append(f"driftlab model-dynamics could not sample: {a.unsampled}")
    ok = not problems
    if problems:
        out["error"] = "; ".join(problems)
    if res["dl_rows"] and res["row_angle"] is None:
        out["missing"] = ("driftlab's Φ_q is not in the samples (an older driftlab): the "
                          "principal angles of the equality row spaces are not measured, "
                          "only the constrained acceleration and the constraint force's "
                          "angle to MuJoCo's rows")
    out["passed"] = ok
    # JSON-friendly `_at`.
    for k in list(out):
        if k.endswith("_at"):
            out[k] = json.loads(json.dumps(out[k], default=float))
    print(json.dumps(out))
    nv = res["nv"]
    if "mass_at" in res:
        k, (r, c), ours, ref = res["mass_at"]
        print(f"mjcf_oracle: {a.robot}: worst M {res['mass']:.3e} at state {k}, entry "
              f"({q_label(doc, r)}, {q_label(doc, c)}): driftlab {ours:.17g}, MuJoCo "
              f"{ref:.17g}", file=sys.stderr)
    for key, what in (("accel", "free acceleration (MuJoCo's qacc)"),
                      ("bias", "bias − passive (MuJoCo's dofs)"),
                      ("kkt_accel", "constrained acceleration (MuJoCo's qacc)")):
        if key + "_at" in res:
            k, i, ours, ref = res[key + "_at"]
            print(f"mjcf_oracle: {a.robot}: worst {what} {res[key]:.3e} at state {k}, "
                  f"{label(lay, i, nv, m)}: driftlab {ours:.17g}, MuJoCo {ref:.17g}",
                  file=sys.stderr)
    if res["row_angle"] is not None:
        print(f"mjcf_oracle: {a.robot}: row spaces of driftlab's Φ_q and MuJoCo's efc_J: "
              f"sin of the largest principal angle ≤ {res['row_angle']:.3e}", file=sys.stderr)
    if res["forces"] is not None:
        print(f"mjcf_oracle: {a.robot}: generalized forces vs qfrc_passive − qfrc_bias: "
              f"{res['forces']:.3e}", file=sys.stderr)
    if res["force_angle"] is not None:
        print(f"mjcf_oracle: {a.robot}: constraint force implied by driftlab's q̈ vs "
              f"MuJoCo's equality rows: sin angle ≤ {res['force_angle']:.3e}",
              file=sys.stderr)
    if res["unsupported"]:
        print(f"mjcf_oracle: {a.robot}: not modelled by driftlab's reader as far as known: "
              f"{'; '.join(res['unsupported'])}", file=sys.stderr)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
