#!/usr/bin/env python3
"""Cassie (closed kinematic loops) in Pinocchio, from its SDF: driftlab's constrained dynamics checked.

Builds a `pin.Model` of the spanning tree of datasets/robots/cassie.sdf by hand (the PyPI
wheel of Pinocchio has no SDFormat support) and closes the loops with
`pin.RigidConstraintModel`s. Three modes:

--samples FILE.json  (the check) — the states `driftlab model-dynamics` writes for Cassie
    (`--set 'robot="cassie"' --set 'redundant="remove"' --set redundant_tol=… --set
    damping=false`): at each state, with Pinocchio's quantities,
      M = pin.crba (symmetrized) against driftlab's `mass`;
      q̈ from the KKT system [[M, Jᵀ], [J, 0]] [q̈; λ] = [τ − b; γ] solved densely in numpy,
        b = pin.rnea(q, v, 0) (gravity included), τ the SDF's joint springs
        −k (q − q_ref) (driftlab keeps them; --springs none drops them), J the rows of the
        closures named in `row_names` (world components of P_a − P_b, from
        pin.getFrameJacobian at LOCAL_WORLD_ALIGNED of a frame at the closure point on
        each side), γ = −(a_a − a_b) with a the points' classical accelerations at q̈ = 0
        (pin.forwardKinematics(q, v, 0), pin.getFrameClassicalAcceleration), against
        driftlab's `acceleration` (and, for the record, `lambda`);
      for the record, pin.constraintDynamics with all four CONTACT_3D closures
        (LOCAL_WORLD_ALIGNED, every row, --mu, --max-iter) against the numpy KKT.
    Prints one CSV row on stdout:
      robot,root,states,n,worst_mass_rel,worst_accel_rel,target,pass,pinocchio
    and per-state diagnostics and the worst entries on stderr. Exit 0 when both errors
    are within --target, 1 when not, 2 when the input cannot be compared (reason on
    stderr), among them kept rows so close to dependent (σ_min/σ_max of J below
    --min-sigma-ratio) that q̈ is not determined to the target.
--analyse  (the default without --samples) — the model at q = 0: closure residuals, the
    constraint Jacobian (sizes, singular values, near-redundant rows, in the closures'
    LOCAL frames and in driftlab's world-axis rows with driftlab's row scan),
    pin.constraintDynamics against numpy KKT solves. Prints a report on stdout.
--synthesize OUT.json — a samples file in driftlab's format computed here, without
    driftlab (plumbing test of --samples): states at q = 0 (or a random q of --q-scale
    projected onto the kept rows), random v projected onto them, the fields from a
    numpy KKT whose J and γ come from joint Jacobians and hand-written point
    accelerations (not the frame functions --samples uses); kept rows by --rows.

The samples file (driftlab's layout; q in driftlab's order, which is not Pinocchio's):
  {"file", "root": "fixed", "gravity": [gx, gy, gz],
   "joints": [{"name", "kind", "offset", "nq"}, …]   nq = 0 joints (the base weld) skipped
   "rows": ["loop-closure", …]                       kinds of the kept rows
   "row_names": ["left-pitch-rod-joint.x", …]        closure joint name + "." + world axis
                                                     of P_a − P_b (a: the closing joint's
                                                     SDF parent link, b: its child)
   "samples": [{"q", "v", "mass" (n·n row-major), "acceleration", "lambda"
                [, "row_names": per-state kept rows, overriding the top-level list]}]}
Joints are mapped by name. The rows' signs do not matter for q̈; λ compares with the
signs above (driftlab: M q̈ = τ − b − Φ_qᵀλ, Φ = P_a − P_b).
Error measures: mass max|ΔM| / max|M|; acceleration max|Δq̈| / max(max|q̈|, 1); the
worst over the states; a non-finite number counts as infinite.

SDF 1.6 frames (http://sdformat.org/spec?ver=1.6): a <link><pose> is in the model
frame, an <inertial><pose> in its link frame, a <joint><pose> in the joint's CHILD link
frame, and <axis><xyz> in the joint frame unless <use_parent_model_frame> is true (then in
the model frame). rpy = (r, p, y) means R = Rz(y) Ry(p) Rx(r). <axis><dynamics>
<spring_stiffness>, <spring_reference> give the joint springs.

Spanning tree (--tree, --analyse only; --samples and --synthesize use driftlab's):
  driftlab (default) — the rule of crates/problems/src/model/import/sdf.rs: sweep the joints in
      document order, repeatedly; a joint whose parent link is placed joins the tree
      (placing its child) unless its child is placed too, then it closes a loop. Joints
      only go parent → child; driftlab numbers the tree joints in the order they join,
      and its closures (and so its rows) are in the order they were found by the sweeps
      — for Cassie right-plantar-foot, left-plantar-foot (first sweep), left-pitch-rod,
      right-pitch-rod (second), NOT the document order.
  bfs — undirected breadth-first search from the base over the joints in document order;
      a joint may be traversed child → parent (its motion reversed), and a joint whose
      other link is already reached closes a loop.
For Cassie the two rules give different trees: driftlab closes the two ball joints of
each leg (pitch-rod, plantar-foot; every tree joint is revolute), bfs the plantar-foot
ball and the shin-tarsus revolute (with the pitch-rod ball inside the tree).

Each tree body's frame is its tree joint's frame (the joint <pose> in the model frame at
the drawn pose), as in driftlab, so q = 0 (quaternion identity for a ball) is the drawn
pose, revolute angles with driftlab's sign (axis as given). Pinocchio needs the joints
depth-first (each subtree a contiguous range of v), so its q order differs from the
join order (Cassie: the achilles-spring joints); the table printed maps the two.
The base link (no joint has it as child: `pelvis`) is welded to the world at its pose.

Loop closures (Pinocchio 3/4 RigidConstraintModel between the closing joint's frame on
its SDF parent link (side a, joint1) and on its child (side b, joint2); --analyse: LOCAL
frame of side a, --samples: LOCAL_WORLD_ALIGNED):
  ball     — CONTACT_3D between the joint frame on both links: 3 rows,
             R1ᵀ(p1 − p2) = 0 (Pinocchio differentiates it as R1ᵀ(p̈1 − p̈2) = 0).
  revolute — there is no native 5-row type. --revolute-closure points (default): two
             CONTACT_3D, at the joint origin and at a second point on the axis
             (--axis-offset d from it): 6 rows, rank 5 (the two along-axis rows coincide).
             --revolute-closure 6d: a CONTACT_6D weld, which is WRONG (it also locks the
             rotation about the axis): only to show the difference.
  (--samples and --synthesize handle ball closures only, as Cassie has.)

Cassie's plantar four-bars (tarsus-crank, crank-rod, foot-op; axes along world −y to
4e-6 rad at q = 0) make each plantar ball's out-of-plane row near-redundant: σ 2.3e-12
(right: its axes disagree by 7e-8 rad from the file's 5-digit angles) and 2.5e-16
(left). In world axes that row is the y row, whose norm is 2e-6 of the others. A KKT with
it is singular to working precision, and different drops give q̈ differing at 1e-3..0.5:
the two sides must keep the same rows.

Usage: pinocchio_cassie.py --samples FILE.json [--sdf PATH] [--robot NAME] [--states N]
                           [--target 1e-9] [--springs sdf|none] [--min-sigma-ratio R]
                           [--mu 1e-8] [--max-iter 10]
       pinocchio_cassie.py [--analyse] [--sdf PATH] [--json OUT] [--tree driftlab|bfs]
                           [--revolute-closure points|6d] [--axis-offset D] [--seed N]
                           [--v-scale S] [--snap-right-angles TOL]
       pinocchio_cassie.py --synthesize OUT.json [--states N] [--seed N] [--v-scale S]
                           [--q-scale S] [--rows pivoted|driftlab] [--redundant-tol T]
Runs with Pinocchio ≥ 3 (tested 4.1.0) and numpy.
"""

import argparse
import json
import math
import os
import sys
import xml.etree.ElementTree as ET
from collections import deque

import numpy as np
import pinocchio as pin

from pinocchio_check import q_label
from pinocchio_check import rel as rel_err

EPS = np.finfo(float).eps
# --snap-right-angles: rpy angles within this of a multiple of π/2 are replaced by it
# (diagnostic: the file's 1.5708 / 3.1416 are what makes the right plantar row near-redundant)
SNAP = 0.0
LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


class Refused(Exception):
    """The model file or the samples cannot be used (exit 2)."""


# --------------------------------------------------------------------------- SDF reading


def pose_of(elem):
    """SE3 of the <pose> child of `elem` (identity when absent)."""
    p = elem.find("pose")
    if p is None or not (p.text or "").strip():
        return pin.SE3.Identity()
    if p.get("relative_to") or (p.get("frame") or "").strip():
        raise Refused(f"pose relative to a named frame in <{elem.tag} name={elem.get('name')}>")
    x, y, z, r, pi, yw = (float(t) for t in p.text.split())
    if SNAP > 0:
        r, pi, yw = (round(a / (math.pi / 2)) * (math.pi / 2)
                     if abs(a - round(a / (math.pi / 2)) * (math.pi / 2)) < SNAP else a
                     for a in (r, pi, yw))
    return pin.SE3(pin.rpy.rpyToMatrix(r, pi, yw), np.array([x, y, z]))


def read_sdf(path):
    """Links (frame in the model frame, spatial inertia in the link frame) and joints."""
    model = ET.parse(path).getroot().find("model")
    model_pose = pose_of(model)
    links, joints = {}, []
    for ln in model.findall("link"):
        frame = model_pose * pose_of(ln)
        inertia = pin.Inertia.Zero()
        i = ln.find("inertial")
        if i is not None:
            at = pose_of(i)
            mass = float(i.findtext("mass", "1"))
            t = i.find("inertia")
            g = lambda tag, d: float(t.findtext(tag, str(d))) if t is not None else d  # noqa: E731
            ixx, iyy, izz = g("ixx", 1.0), g("iyy", 1.0), g("izz", 1.0)
            ixy, ixz, iyz = g("ixy", 0.0), g("ixz", 0.0), g("iyz", 0.0)
            I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
            # inertia tensor about the CoM in the <inertial> frame → link frame
            inertia = pin.Inertia(mass, at.translation.copy(), at.rotation @ I @ at.rotation.T)
        links[ln.get("name")] = {"frame": frame, "inertia": inertia}
    for jn in model.findall("joint"):
        kind = jn.get("type")
        if kind not in ("revolute", "ball"):
            raise Refused(f"joint {jn.get('name')}: type {kind} not handled by this script")
        parent, child = jn.findtext("parent").strip(), jn.findtext("child").strip()
        frame = links[child]["frame"] * pose_of(jn)  # joint frame in the model frame
        axis = np.array([0.0, 0.0, 1.0])
        ax = jn.find("axis")
        if ax is not None and ax.find("xyz") is not None:
            axis = np.array([float(t) for t in ax.findtext("xyz").split()])
            upm = (ax.findtext("use_parent_model_frame") or "").strip()
            if upm in ("1", "true"):
                axis = frame.rotation.T @ axis  # model frame → joint frame
        axis = axis / np.linalg.norm(axis)
        # <axis><dynamics>: the spring (driftlab: τ = −k (q − q_ref) on the tree joints)
        dyn = ax.find("dynamics") if ax is not None else None
        spring = (float(dyn.findtext("spring_stiffness", "0")),
                  float(dyn.findtext("spring_reference", "0"))) if dyn is not None else (0.0, 0.0)
        damping = float(dyn.findtext("damping", "0")) if dyn is not None else 0.0
        joints.append({"name": jn.get("name"), "kind": kind, "parent": parent,
                       "child": child, "frame": frame, "axis": axis, "spring": spring,
                       "damping": damping,
                       "use_parent_model_frame": ax is not None
                       and ax.find("use_parent_model_frame") is not None})
    return links, joints


# --------------------------------------------------------------------------- spanning tree


def tree_driftlab(links, joints):
    """driftlab's rule (sdf.rs `assemble`): repeated document-order sweeps, parent → child."""
    children = {j["child"] for j in joints}
    bases = [n for n in links if n not in children]
    placed, used = set(bases), set()
    tree, closing = [], []
    while True:
        before = len(tree) + len(closing)
        for k, j in enumerate(joints):
            if k in used or j["parent"] not in placed:
                continue
            used.add(k)
            if j["child"] in placed:
                closing.append(k)
            else:
                placed.add(j["child"])
                tree.append((k, False))
        if len(tree) + len(closing) == before:
            break
    if len(used) != len(joints):
        raise Refused("some joint is not connected to the base")
    return bases, tree, closing


def tree_bfs(links, joints):
    """Undirected BFS from the base, joints in document order; (k, reversed) per tree joint."""
    children = {j["child"] for j in joints}
    bases = [n for n in links if n not in children]
    reached, used = set(bases), set()
    queue = deque(bases)
    tree, closing = [], []
    while queue:
        link = queue.popleft()
        for k, j in enumerate(joints):
            if k in used or link not in (j["parent"], j["child"]):
                continue
            used.add(k)
            other = j["child"] if j["parent"] == link else j["parent"]
            if other in reached:
                closing.append(k)
            else:
                reached.add(other)
                queue.append(other)
                tree.append((k, j["parent"] != link))
    return bases, tree, closing


# --------------------------------------------------------------------------- Pinocchio model


def z_to(axis):
    """A rotation whose z column is `axis` (any completion; used for closure frames)."""
    z = axis / np.linalg.norm(axis)
    h = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(h, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def build(links, joints, rule, revolute_closure, axis_offset, reference=pin.ReferenceFrame.LOCAL):
    bases, tree, closing = (tree_driftlab if rule == "driftlab" else tree_bfs)(links, joints)
    if len(bases) != 1:
        raise Refused(f"expected one base link, found {bases}")
    base = bases[0]
    model = pin.Model()
    model.name = "cassie"
    model.gravity.linear = np.array([0.0, 0.0, -9.81])
    joint_of = {base: 0}  # link → Pinocchio joint carrying it
    jframe = {0: pin.SE3.Identity()}  # Pinocchio joint frame in the world at q = 0
    local_axis = {}
    # the welded base: its inertia is irrelevant (it does not move); a body frame for it
    model.addBodyFrame(base, 0, links[base]["frame"], 0)
    # Pinocchio's algorithms (crba, the nv-subtree ranges) need every joint's subtree to
    # occupy a contiguous range of v: add the tree joints depth-first (pre-order, children
    # in the order the rule found them). driftlab numbers them in the order they joined
    # the tree (`driftlab_index`), which for Cassie is NOT depth-first (the achilles
    # joints join last): compare by joint name.
    ends = [(joints[k]["child"], joints[k]["parent"]) if rev else
            (joints[k]["parent"], joints[k]["child"]) for k, rev in tree]
    order = []

    def visit(link):
        for i, (tp, tc) in enumerate(ends):
            if tp == link:
                order.append(i)
                visit(tc)

    visit(base)
    rows = []
    for ti in order:
        k, rev = tree[ti]
        j = joints[k]
        tp, tc = ends[ti]
        parent_id = joint_of[tp]
        placement = jframe[parent_id].inverse() * j["frame"]
        if j["kind"] == "revolute":
            a = -j["axis"] if rev else j["axis"]  # reversed: same angle, seen from the child
            if np.allclose(a, [0, 0, 1], atol=0, rtol=0):
                jm = pin.JointModelRZ()
            elif np.allclose(a, [1, 0, 0], atol=0, rtol=0):
                jm = pin.JointModelRX()
            elif np.allclose(a, [0, 1, 0], atol=0, rtol=0):
                jm = pin.JointModelRY()
            else:
                jm = pin.JointModelRevoluteUnaligned(a)
        else:
            jm, a = pin.JointModelSpherical(), None
        jid = model.addJoint(parent_id, jm, placement, j["name"])
        joint_of[tc], jframe[jid], local_axis[jid] = jid, j["frame"], a
        body = j["frame"].inverse() * links[tc]["frame"]  # link frame in the joint frame
        model.appendBodyToJoint(jid, links[tc]["inertia"], body)
        fid = model.addJointFrame(jid, 0)
        model.addBodyFrame(tc, jid, body, fid)
        rows.append({"name": j["name"], "kind": j["kind"], "tree_parent": tp,
                     "tree_child": tc, "reversed": bool(rev), "id": jid,
                     "joined_index": ti, "idx_q": model.joints[jid].idx_q,
                     "idx_v": model.joints[jid].idx_v, "nv": model.joints[jid].nv,
                     "spring": j["spring"], "damping": j["damping"]})
    # closures: the closing joint's frame (z along its axis) on its SDF parent and child
    cms = pin.StdVec_RigidConstraintModel()
    closures = []
    for k in closing:
        j = joints[k]
        c = pin.SE3(j["frame"].rotation @ z_to(j["axis"]), j["frame"].translation.copy())
        a, b = joint_of[j["parent"]], joint_of[j["child"]]
        P1, P2 = jframe[a].inverse() * c, jframe[b].inverse() * c
        first = len(cms)
        if j["kind"] == "ball" or revolute_closure == "points":
            cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, model, a, P1, b, P2,
                                          reference)
            cm.name = j["name"]
            cms.append(cm)
            if j["kind"] == "revolute":
                off = pin.SE3(np.eye(3), np.array([0.0, 0.0, axis_offset]))
                cm2 = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, model, a, P1 * off,
                                               b, P2 * off, reference)
                cm2.name = j["name"] + "@axis"
                cms.append(cm2)
        else:  # "6d": a weld — wrong for a revolute joint, kept for comparison
            cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_6D, model, a, P1, b, P2,
                                          reference)
            cm.name = j["name"]
            cms.append(cm)
        closures.append({"name": j["name"], "kind": j["kind"], "parent": j["parent"],
                         "child": j["child"], "models": list(range(first, len(cms))),
                         "point_in_parent_link": (links[j["parent"]]["frame"].inverse()
                                                  * c).translation.tolist(),
                         "point_in_child_link": (links[j["child"]]["frame"].inverse()
                                                 * c).translation.tolist()})
    return model, cms, rows, closures, local_axis, base


# --------------------------------------------------------------------------- kinematics


def closure_rows(model, data, cms, q, v, world=False):
    """J (rows R1ᵀ(J_p1 − J_p2), Pinocchio's LOCAL CONTACT_3D rows; 6D: the LOCAL twist
    difference) and γ with J q̈ = γ (γ = −(drift of the same rows at q̈ = 0)), computed
    from joint Jacobians and classical point accelerations, independently of
    getConstraintsJacobian. world: rows in world axes (R1 = I), driftlab's P_a − P_b."""
    pin.forwardKinematics(model, data, q, v, np.zeros(model.nv))
    pin.computeJointJacobians(model, data, q)
    Js, gs = [], []
    for cm in cms:
        M1 = data.oMi[cm.joint1_id] * cm.joint1_placement
        M2 = data.oMi[cm.joint2_id] * cm.joint2_placement

        def point(jid, M):
            """world-aligned point Jacobian and classical acceleration of M's origin."""
            if jid == 0:
                return np.zeros((6, model.nv)), np.zeros(3), np.zeros(3), np.zeros(3)
            Jj = pin.getJointJacobian(model, data, jid, pin.ReferenceFrame.WORLD)
            r = M.translation
            Jp = Jj[:3] + np.cross(Jj[3:].T, r).T  # v_p = v_o + ω × r (v_o: world origin)
            ov = data.oMi[jid].act(data.v[jid])  # spatial velocity / acceleration, world
            oa = data.oMi[jid].act(data.a[jid])
            vp = ov.linear + np.cross(ov.angular, r)
            ap = oa.linear + np.cross(oa.angular, r) + np.cross(ov.angular, vp)
            return np.vstack([Jp, Jj[3:]]), ap, ov.angular, oa.angular

        J1, a1, w1, dw1 = point(cm.joint1_id, M1)
        J2, a2, w2, dw2 = point(cm.joint2_id, M2)
        R1 = np.eye(3) if world else M1.rotation
        if cm.type == pin.ContactType.CONTACT_3D:
            Js.append(R1.T @ (J1[:3] - J2[:3]))
            gs.append(-R1.T @ (a1 - a2))
        else:  # 6D: rows of the world relative twist, rotated into frame 1
            # (valid where the velocity rows hold; the 6d option is diagnostic only)
            Js.append(np.vstack([R1.T @ (J1[:3] - J2[:3]), R1.T @ (J1[3:] - J2[3:])]))
            gs.append(-np.concatenate([R1.T @ (a1 - a2), R1.T @ (dw1 - dw2)]))
    return np.vstack(Js), np.concatenate(gs)


def pivoted_qr(A):
    """Householder QR with column pivoting of A (Businger–Golub): (perm, |R_kk|)."""
    A = A.astype(float).copy()
    n, m = A.shape
    perm = np.arange(m)
    diag = []
    for k in range(min(n, m)):
        norms = np.linalg.norm(A[k:, k:], axis=0)
        p = k + int(np.argmax(norms))
        A[:, [k, p]], perm[[k, p]] = A[:, [p, k]], perm[[p, k]]
        x = A[k:, k].copy()
        alpha = -math.copysign(np.linalg.norm(x), x[0] if x[0] != 0 else 1.0)
        u = x.copy()
        u[0] -= alpha
        nu = np.linalg.norm(u)
        if nu > 0:
            u /= nu
            A[k:, k:] -= 2.0 * np.outer(u, u @ A[k:, k:])
        diag.append(abs(alpha))
    return perm, np.array(diag)


def kkt_solve(M, J, f, g, rows=None, lstsq=False):
    """[[M, Jᵀ], [J, 0]] [a; λ] = [f; γ] on the selected rows."""
    if rows is not None:
        J, g = J[rows], g[rows]
    n, m = M.shape[0], J.shape[0]
    K = np.block([[M, J.T], [J, np.zeros((m, m))]])
    rhs = np.concatenate([f, g])
    x = np.linalg.lstsq(K, rhs, rcond=None)[0] if lstsq else np.linalg.solve(K, rhs)
    return x[:n], x[n:]


def rel(a, ref):
    return float(np.max(np.abs(a - ref)) / max(np.max(np.abs(ref)), 1e-300))


def angle(u, w):
    return float(math.atan2(np.linalg.norm(np.cross(u, w)), abs(float(u @ w))))


# --------------------------------------------------------------------------- driftlab's rows


def world_row_names(cms):
    """driftlab's names of the world-axis rows of P_a − P_b, closure by closure."""
    return [f"{cm.name}.{x}" for cm in cms for x in "xyz"]


def driftlab_rows(J, tol, scale="own"):
    """driftlab's row scan (crates/problems/src/independent_rows.rs, `independent_rows`):
    the rows in order, each orthogonalized against the kept ones (modified Gram–Schmidt),
    kept when its orthogonal part exceeds tol × its own norm (scale "own": driftlab's
    rule) or tol × the largest row norm of J (scale "max"). (kept rows, orthogonal part
    over that scale per row)."""
    basis, kept, parts = [], [], []
    big = max(float(np.linalg.norm(r)) for r in J)
    for r in range(J.shape[0]):
        v = np.array(J[r], dtype=float)
        n0 = float(np.linalg.norm(v))
        for b in basis:
            v -= (v @ b) * b
        nv = float(np.linalg.norm(v))
        ref = n0 if scale == "own" else big
        parts.append(nv / ref if ref > 0 else 0.0)
        if n0 > 0 and nv > tol * ref:
            basis.append(v / nv)
            kept.append(r)
    return kept, parts


def sigma_ratio(J):
    s = np.linalg.svd(J, compute_uv=False)
    return float(s[-1] / s[0]) if s.size and s[0] > 0 else 0.0


def closure_positions(model, data, cms, q):
    """Φ = P_a − P_b of every closure, world components (driftlab's rows)."""
    pin.forwardKinematics(model, data, q)
    return np.concatenate([(data.oMi[cm.joint1_id] * cm.joint1_placement).translation
                           - (data.oMi[cm.joint2_id] * cm.joint2_placement).translation
                           for cm in cms])


def spring_torques(model, tree_rows, q):
    """τ = −k (q − q_ref) of the SDF's joint springs, Pinocchio's order."""
    tau = np.zeros(model.nv)
    for r in tree_rows:
        k, ref = r["spring"]
        if k != 0.0:
            tau[r["idx_v"]] = -k * (q[model.joints[r["id"]].idx_q] - ref)
    return tau


def cassie_model(sdf, reference):
    """The driftlab-rule model, its (ball-only) closures, and two OP_FRAMEs per closure at
    its point, on side a (joint1) and side b (joint2)."""
    links, joints = read_sdf(sdf)
    model, cms, tree_rows, closures, _, base = build(links, joints, "driftlab", "points", 0.1,
                                                     reference)
    other = [f"{c['name']} ({c['kind']})" for c in closures if c["kind"] != "ball"]
    if other:
        raise Refused(f"closures {', '.join(other)}: only ball closures are compared")
    if any(model.joints[r["id"]].nq != 1 or model.joints[r["id"]].nv != 1 for r in tree_rows):
        raise Refused("a tree joint with nq ≠ 1: only revolute tree joints are compared")
    frames = []
    for cm in cms:
        fa = model.addFrame(pin.Frame(cm.name + "@a", cm.joint1_id, cm.joint1_placement,
                                      pin.FrameType.OP_FRAME))
        fb = model.addFrame(pin.Frame(cm.name + "@b", cm.joint2_id, cm.joint2_placement,
                                      pin.FrameType.OP_FRAME))
        frames.append((fa, fb))
    return model, cms, tree_rows, frames, base


def frame_rows(model, data, frames, q, v):
    """World rows of P_a − P_b by Pinocchio's frame functions: Φ, J = J_a − J_b (linear
    rows of getFrameJacobian at LOCAL_WORLD_ALIGNED) and γ = −(a_a − a_b), a the frames'
    classical accelerations at q̈ = 0 (so J q̈ = γ is Φ̈ = 0)."""
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    phi, Js = [], []
    for fa, fb in frames:
        phi.append(data.oMf[fa].translation - data.oMf[fb].translation)
        Js.append(pin.getFrameJacobian(model, data, fa, LWA)[:3]
                  - pin.getFrameJacobian(model, data, fb, LWA)[:3])
    pin.forwardKinematics(model, data, q, v, np.zeros(model.nv))
    pin.updateFramePlacements(model, data)
    g = [-(pin.getFrameClassicalAcceleration(model, data, fa, LWA).linear
           - pin.getFrameClassicalAcceleration(model, data, fb, LWA).linear) for fa, fb in frames]
    return np.concatenate(phi), np.vstack(Js), np.concatenate(g)


def layout(doc, model):
    """perm with perm[i] = Pinocchio's idx_v (= idx_q) of driftlab's coordinate i; joints
    by name, each side's joints with coordinates mapped once."""
    names = list(model.names)
    n = sum(int(j["nq"]) for j in doc["joints"])
    if n != model.nv:
        raise Refused(f"driftlab has {n} coordinates, Pinocchio's model {model.nv}")
    perm = np.full(n, -1)
    used = set()
    for j in doc["joints"]:
        name, kind, o, nq = j["name"], j["kind"], int(j["offset"]), int(j["nq"])
        if nq == 0:
            if name in names[1:]:
                raise Refused(f"driftlab's {kind} joint {name} has no coordinate, Pinocchio's "
                              f"has {model.joints[names.index(name)].nv}")
            continue
        if name not in names[1:]:
            raise Refused(f"driftlab's {kind} joint {name} (nq = {nq}) is not a tree joint of "
                          f"this model (Pinocchio's: {', '.join(names[1:])})")
        k = names.index(name)
        pj = model.joints[k]
        if kind not in ("revolute", "continuous") or nq != 1 or pj.nq != 1 or pj.nv != 1:
            raise Refused(f"joint {name}: driftlab {kind} with nq = {nq}, Pinocchio "
                          f"{pj.shortname()} with nq = {pj.nq}: no mapping")
        if not 0 <= o < n or perm[o] != -1 or k in used:
            raise Refused(f"joint {name}: offset {o} out of range or mapped twice")
        perm[o] = pj.idx_v
        used.add(k)
    if (perm < 0).any() or sorted(perm) != list(range(n)):
        raise Refused("driftlab's joint offsets do not cover its coordinates once each")
    return n, perm


def check_samples(a):
    """--samples: (n, states, worst M, worst q̈); diagnostics on stderr."""
    tag = f"pinocchio_cassie: {a.robot}"

    def say(msg):
        print(f"{tag}: {msg}", file=sys.stderr)

    with open(a.samples) as f:
        doc = json.load(f)
    for key in ("file", "root", "gravity", "joints", "rows", "row_names", "samples"):
        if key not in doc:
            raise Refused(f"no `{key}` in {a.samples}")
    if doc["root"] != "fixed":
        raise Refused(f"root {doc['root']!r}: only 'fixed' (the pelvis welded) is compared")
    if os.path.basename(str(doc["file"])) != os.path.basename(a.sdf):
        raise Refused(f"the samples are of {doc['file']}, the model is read from {a.sdf}")
    grav = np.array(doc["gravity"], dtype=float)
    if grav.shape != (3,) or not np.isfinite(grav).all():
        raise Refused(f"gravity {doc['gravity']}")
    model, cms, tree_rows, frames, base = cassie_model(a.sdf, LWA)
    model.gravity.linear = grav
    data = model.createData()
    cds = pin.StdVec_RigidConstraintData()
    for cm in cms:
        cds.append(cm.createData())
    n, perm = layout(doc, model)
    all_rows = world_row_names(cms)

    def select(names, where):
        if not isinstance(names, list) or not names:
            raise Refused(f"{where}: no kept rows")
        bad = [x for x in names if x not in all_rows]
        if bad:
            raise Refused(f"{where}: rows {bad} are not closure rows of this model "
                          f"(closure joint name + '.' + x|y|z: {', '.join(all_rows)})")
        if len(set(names)) != len(names):
            raise Refused(f"{where}: a row is named twice")
        return [all_rows.index(x) for x in names]

    top = select(doc["row_names"], "row_names")
    if doc["rows"] != ["loop-closure"] * len(doc["row_names"]):
        raise Refused(f"row kinds {doc['rows']}: expected {len(doc['row_names'])} "
                      "loop-closure rows (fixed root, mimic none)")
    samples = doc["samples"]
    if not samples or (a.states is not None and len(samples) != a.states):
        raise Refused(f"{len(samples)} samples, {a.states} expected")
    dropped = [x for x in all_rows if x not in doc["row_names"]]
    say(f"{n} coordinates, {len(cms)} closures ({', '.join(cm.name for cm in cms)}), "
        f"{len(top)} of {len(all_rows)} rows kept, dropped: {', '.join(dropped) or 'none'}; "
        f"springs {a.springs}; gravity {grav.tolist()}; Pinocchio {pin.__version__}")
    ps_label = f"constraintDynamics (all {len(all_rows)} rows, mu {a.mu:g}, {a.max_iter} it.)"
    worst_m, worst_a = (0.0, None), (0.0, None)
    worst_l, worst_cd, min_ratio = 0.0, 0.0, math.inf
    for k, s in enumerate(samples):
        q, v = np.array(s["q"], float), np.array(s["v"], float)
        m, acc = np.array(s["mass"], float), np.array(s["acceleration"], float)
        if q.shape != (n,) or v.shape != (n,) or m.shape != (n * n,) or acc.shape != (n,):
            raise Refused(f"sample {k}: sizes q {q.size}, v {v.size}, mass {m.size}, "
                          f"acceleration {acc.size}; n = {n}")
        sel = select(s["row_names"], f"sample {k} row_names") if "row_names" in s else top
        qp, vp = np.zeros(n), np.zeros(n)
        qp[perm], vp[perm] = q, v
        mp = pin.crba(model, data, qp)
        mp = np.triu(mp) + np.triu(mp, 1).T
        b = np.array(pin.rnea(model, data, qp, vp, np.zeros(n)))
        tau = spring_torques(model, tree_rows, qp) if a.springs == "sdf" else np.zeros(n)
        phi, J, g = frame_rows(model, data, frames, qp, vp)
        Jk, gk = J[sel], g[sel]
        ratio = sigma_ratio(Jk)
        min_ratio = min(min_ratio, ratio)
        if not ratio >= a.min_sigma_ratio:
            raise Refused(
                f"sample {k}: the kept rows are numerically dependent (σ_min/σ_max of their "
                f"Jacobian {ratio:.2e} < --min-sigma-ratio {a.min_sigma_ratio:g}): q̈ is not "
                f"determined to the target; kept {', '.join(all_rows[i] for i in sel)}. "
                "Cassie's near-redundant rows are the plantar closures' world-y rows "
                "(σ 2e-12 and 3e-16 at q = 0)")
        mk = len(sel)
        K = np.block([[mp, Jk.T], [Jk, np.zeros((mk, mk))]])
        x = np.linalg.solve(K, np.concatenate([tau - b, gk]))
        ap, lam = x[:n], x[n:]
        # (1) mass, (2) acceleration, in driftlab's order
        ref_m, ours_m = mp[np.ix_(perm, perm)], m.reshape(n, n)
        em, im = rel_err(ours_m, ref_m, 1e-300)
        if not em <= worst_m[0] or worst_m[1] is None:  # `not <=`: NaN-proof
            worst_m = (em, (k, divmod(im, n), ours_m.flat[im], ref_m.flat[im]))
        ref_a = ap[perm]
        ea, ia = rel_err(acc, ref_a, 1.0)
        if not ea <= worst_a[0] or worst_a[1] is None:
            worst_a = (ea, (k, ia, acc[ia], ref_a[ia]))
        # for the record: λ (same rows, same signs), Pinocchio's own constrained dynamics
        lam_txt = "λ absent"
        if "lambda" in s and len(s["lambda"]) == mk:
            el, _ = rel_err(np.array(s["lambda"], float), lam, 1e-300)
            worst_l = max(worst_l, el) if not math.isnan(el) else math.inf
            lam_txt = f"λ {el:.1e}"
        elif "lambda" in s:
            lam_txt = f"λ has {len(s['lambda'])} entries for {mk} rows"
        ps = pin.ProximalSettings(1e-14, a.mu, a.max_iter)
        pin.initConstraintDynamics(model, data, cms, cds)
        acd = np.array(pin.constraintDynamics(model, data, qp, vp, tau, cms, cds, ps))
        ecd, _ = rel_err(acd, ap, 1.0)
        worst_cd = max(worst_cd, ecd) if not math.isnan(ecd) else math.inf
        if k == 0:  # Pinocchio's LWA CONTACT_3D rows against the frame rows (up to sign)
            Jc = pin.getConstraintsJacobian(model, data, cms, cds)
            d = min(np.abs(Jc - J).max(), np.abs(Jc + J).max())
            sign = "+" if np.abs(Jc - J).max() <= np.abs(Jc + J).max() else "−"
            say(f"state 0: getConstraintsJacobian (LOCAL_WORLD_ALIGNED) = {sign}(frame rows) "
                f"to {d:.1e}")
        if a.verbose or k == 0:
            say(f"state {k}: M {em:.1e} at ({q_label(doc, divmod(im, n)[0])}, "
                f"{q_label(doc, divmod(im, n)[1])}); q̈ {ea:.1e} at {q_label(doc, ia)} (driftlab "
                f"{acc[ia]:.10g}, Pinocchio {ref_a[ia]:.10g}, max|q̈| {np.abs(ref_a).max():.3e}); "
                f"{lam_txt}; {mk} rows, σ_min/σ_max {ratio:.1e}; |Φ|∞ kept {np.abs(phi[sel]).max():.1e} "
                f"all {np.abs(phi).max():.1e}; |J v|∞ kept {np.abs(Jk @ vp).max():.1e} all "
                f"{np.abs(J @ vp).max():.1e}; {ps_label} − KKT {ecd:.1e}")
    say(f"for the record: worst λ {worst_l:.1e}; worst {ps_label} − numpy KKT {worst_cd:.1e}; "
        f"smallest σ_min/σ_max of the kept rows {min_ratio:.1e}")
    return n, len(samples), worst_m, worst_a, doc


# --------------------------------------------------------------------------- synthetic samples


def synthesize(a):
    """--synthesize: a samples file like driftlab's, from numpy KKT solves here."""
    model, cms, tree_rows, _, base = cassie_model(a.sdf, pin.ReferenceFrame.LOCAL)
    model.gravity.linear = np.array([0.0, 0.0, -9.81])
    data = model.createData()
    n = model.nv
    perm = np.empty(n, dtype=int)  # driftlab's coordinate → Pinocchio's
    for r in tree_rows:
        perm[r["joined_index"]] = r["idx_v"]
    names = world_row_names(cms)
    z = np.zeros(n)
    J0, _ = closure_rows(model, data, cms, z, z, world=True)
    if a.rows == "pivoted":
        p, d = pivoted_qr(J0.T)
        keep = sorted(int(i) for i in p[: int(np.sum(d > a.redundant_tol * d[0]))])
    else:
        keep, _ = driftlab_rows(J0, a.redundant_tol)
    print(f"pinocchio_cassie: synthesize: rows by {a.rows} at q = 0, tol {a.redundant_tol:g}: "
          f"{len(keep)} kept, dropped {[names[i] for i in range(len(names)) if i not in keep]}",
          file=sys.stderr)
    rng = np.random.default_rng(a.seed)
    samples = []
    for k in range(a.states):
        qp = np.zeros(n)
        if a.q_scale > 0:  # a random q, Gauss–Newton onto the kept rows
            qp = rng.uniform(-a.q_scale, a.q_scale, n)
            for _ in range(100):
                phi = closure_positions(model, data, cms, qp)[keep]
                if np.abs(phi).max() < 1e-14:
                    break
                J, _ = closure_rows(model, data, cms, qp, z, world=True)
                qp = qp - np.linalg.lstsq(J[keep], phi, rcond=None)[0]
            else:
                raise Refused(f"state {k}: the projection onto the closures did not converge")
        J, _ = closure_rows(model, data, cms, qp, z, world=True)
        w = rng.uniform(-a.v_scale, a.v_scale, n)
        Jk = J[keep]
        vp = w - np.linalg.pinv(Jk) @ (Jk @ w)
        J, g = closure_rows(model, data, cms, qp, vp, world=True)
        mp = pin.crba(model, data, qp)
        mp = np.triu(mp) + np.triu(mp, 1).T
        b = np.array(pin.rnea(model, data, qp, vp, z))
        tau = spring_torques(model, tree_rows, qp)
        ap, lam = kkt_solve(mp, J, tau - b, g, rows=keep)
        phi = closure_positions(model, data, cms, qp)
        print(f"pinocchio_cassie: synthesize: state {k}: |q|∞ {np.abs(qp).max():.3f}, |Φ|∞ kept "
              f"{np.abs(phi[keep]).max():.1e} all {np.abs(phi).max():.1e}, |v|∞ "
              f"{np.abs(vp).max():.3f}, |q̈|∞ {np.abs(ap).max():.4e}", file=sys.stderr)
        samples.append({"q": qp[perm].tolist(), "v": vp[perm].tolist(),
                        "mass": mp[np.ix_(perm, perm)].ravel().tolist(),
                        "acceleration": ap[perm].tolist(), "lambda": lam.tolist()})
    by_index = sorted(tree_rows, key=lambda r: r["joined_index"])
    doc = {"file": "robots/" + os.path.basename(a.sdf), "root": "fixed",
           "gravity": model.gravity.linear.tolist(),
           "joints": [{"name": f"{base}:weld", "kind": "fixed", "offset": 0, "nq": 0}]
           + [{"name": r["name"], "kind": r["kind"], "offset": r["joined_index"], "nq": 1}
              for r in by_index],
           "rows": ["loop-closure"] * len(keep), "row_names": [names[i] for i in keep],
           "samples": samples,
           "synthetic": {"by": "pinocchio_cassie.py --synthesize", "rows": a.rows,
                         "redundant_tol": a.redundant_tol, "seed": a.seed,
                         "q_scale": a.q_scale, "v_scale": a.v_scale}}
    with open(a.synthesize, "w") as fh:
        json.dump(doc, fh)
    print(f"pinocchio_cassie: synthesize: {a.states} states written to {a.synthesize}",
          file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- main


def analyse(args):
    """--analyse: the report at q = 0 on stdout."""
    out = {"pinocchio": pin.__version__, "sdf": args.sdf, "tree_rule": args.tree,
           "snap_right_angles": args.snap_right_angles}

    links, joints = read_sdf(args.sdf)
    out["use_parent_model_frame_anywhere"] = any(j["use_parent_model_frame"] for j in joints)
    model, cms, rows, closures, local_axis, base = build(
        links, joints, args.tree, args.revolute_closure, args.axis_offset)
    data = model.createData()
    cds = pin.StdVec_RigidConstraintData()
    for cm in cms:
        cds.append(cm.createData())
    n = model.nv
    print(f"Pinocchio {pin.__version__}; {args.sdf}: {len(links)} links, {len(joints)} joints; "
          f"use_parent_model_frame: {out['use_parent_model_frame_anywhere']}")
    print(f"tree rule {args.tree}: base {base} welded; {len(rows)} tree joints, nq = {model.nq}, "
          f"nv = {n}; Pinocchio id (depth-first), then #k = the order the joint joined the "
          f"tree{' (= driftlab coordinate index)' if args.tree == 'driftlab' else ''}")
    for r in rows:
        print(f"  {r['id']:2d} (#{r['joined_index']:2d}) {r['name']:28s} {r['kind']:8s} parent {r['tree_parent']:18s}"
              f"{' (traversed child→parent)' if r['reversed'] else ''}")
    out["tree"] = rows
    print("closures (joints closing a loop):")
    for c in closures:
        print(f"  {c['name']:28s} {c['kind']:8s} {c['parent']} ↔ {c['child']}; "
              f"{len(c['models'])} RigidConstraintModel(s); point in {c['parent']} "
              f"{np.round(c['point_in_parent_link'], 6).tolist()}")
    out["closures"] = closures

    # ---- 1. residuals at the drawn pose
    q0 = pin.neutral(model)
    pin.forwardKinematics(model, data, q0)
    print("\n1. closure residuals at q = 0 (the drawn pose)")
    res = []
    for c in closures:
        cm = cms[c["models"][0]]
        M1 = data.oMi[cm.joint1_id] * cm.joint1_placement
        M2 = data.oMi[cm.joint2_id] * cm.joint2_placement
        e = {"name": c["name"], "position_error_m": float(np.linalg.norm(M1.translation
                                                                          - M2.translation)),
             "rotation_error_rad": float(np.linalg.norm(pin.log3(M1.rotation.T @ M2.rotation)))}
        if c["kind"] == "revolute":
            e["axis_misalignment_rad"] = angle(M1.rotation[:, 2], M2.rotation[:, 2])
        res.append(e)
        print(f"  {c['name']:28s} |Δp| = {e['position_error_m']:.3e} m, relative rotation "
              f"{e['rotation_error_rad']:.3e} rad"
              + (f", axis misalignment {e['axis_misalignment_rad']:.3e} rad"
                 if "axis_misalignment_rad" in e else ""))
    out["residuals"] = res

    # ---- 2. constraint Jacobian
    pin.computeJointJacobians(model, data, q0)
    for cm, cd in zip(cms, cds):
        cm.calc(model, data, cd)
    Jpin = pin.getConstraintsJacobian(model, data, cms, cds)
    J, _ = closure_rows(model, data, cms, q0, np.zeros(n))
    m = J.shape[0]
    s = np.linalg.svd(J, compute_uv=False)
    U, _, _ = np.linalg.svd(J)
    t_mach, t_8 = max(m, n) * EPS * s[0], 1e-8 * s[0]
    r_mach, r_8 = int(np.sum(s > t_mach)), int(np.sum(s > t_8))
    row_names = []
    for ci, cm in enumerate(cms):
        row_names += [f"{cm.name}.{a}" for a in ("xyz" if cm.type == pin.ContactType.CONTACT_3D else
                                                  ["x", "y", "z", "rx", "ry", "rz"])]
    print(f"\n2. constraint Jacobian {m} × {n}; |getConstraintsJacobian − own| = "
          f"{np.max(np.abs(Jpin - J)):.2e}")
    print("  singular values: " + ", ".join(f"{x:.6e}" for x in s))
    print(f"  rank at max(m,n)·eps·σmax = {t_mach:.2e}: {r_mach};  at 1e-8·σmax = {t_8:.2e}: {r_8}")
    perm, rdiag = pivoted_qr(J.T)
    print("  column-pivoted QR of Jᵀ, |R_kk| in pivot order:")
    for k in range(len(rdiag)):
        print(f"    {row_names[perm[k]]:36s} {rdiag[k]:.3e}")
    small = []
    for k in range(len(s)):
        if s[k] < 1e-6 * s[0]:
            u = U[:, k]
            top = np.argsort(-np.abs(u))[:3]
            small.append({"sigma": float(s[k]), "rows": [(row_names[i], float(u[i])) for i in top]})
            print(f"  σ = {s[k]:.3e}: left singular vector on "
                  + ", ".join(f"{row_names[i]} ({u[i]:+.3f})" for i in top))
    # loops: the tree joints between the two sides of each closure, their world axes
    loops = []
    for c in closures:
        cm = cms[c["models"][0]]

        def chain(j):
            out_ = []
            while j != 0:
                out_.append(j)
                j = model.parents[j]
            return out_

        a1, a2 = chain(cm.joint1_id), chain(cm.joint2_id)
        loop = sorted(set(a1) ^ set(a2))
        axes = {}
        for jid in loop:
            if local_axis[jid] is not None:
                axes[model.names[jid]] = data.oMi[jid].rotation @ local_axis[jid]
        names = list(axes)
        worst = max((angle(axes[x], axes[y]) for x in names for y in names), default=0.0)
        # angle between the loop's revolute axes and the closure's null direction
        loops.append({"closure": c["name"], "joints": [model.names[j] for j in loop],
                      "revolute_axes_world": {k: v.tolist() for k, v in axes.items()},
                      "max_pairwise_axis_angle_rad": worst})
        print(f"  loop of {c['name']}: {', '.join(model.names[j] for j in loop)}; "
              f"max angle between its revolute axes {worst:.3e} rad")
        if len(names) <= 4:
            for x in names:
                for y in names:
                    if x < y:
                        print(f"      ∠({x}, {y}) = {angle(axes[x], axes[y]):.3e} rad")
    out["jacobian"] = {"rows": m, "cols": n, "singular_values": s.tolist(),
                       "threshold_mach": t_mach, "rank_mach": r_mach,
                       "threshold_1e-8": t_8, "rank_1e-8": r_8,
                       "pin_vs_own_max_abs": float(np.max(np.abs(Jpin - J))),
                       "qr_pivot_rows": [row_names[i] for i in perm],
                       "qr_abs_rkk": rdiag.tolist(), "small_singular": small, "loops": loops}

    # ---- 2b. driftlab's rows: world components of P_a − P_b, closures in driftlab's order
    if args.tree == "driftlab" and all(c["kind"] == "ball" for c in closures):
        Jw, _ = closure_rows(model, data, cms, q0, np.zeros(n), world=True)
        wn = world_row_names(cms)
        _, own = driftlab_rows(Jw, 0.0)
        _, big = driftlab_rows(Jw, 0.0, "max")
        print("\n2b. driftlab's rows (world x, y, z of P_a − P_b per closure, closures in the "
              "order driftlab's sweeps find them); orthogonal part of each row against all "
              "rows before it (MGS), over its own norm and over the largest row norm:")
        for i, name in enumerate(wn):
            print(f"    {name:30s} |row| {np.linalg.norm(Jw[i]):.3e}  part/own {own[i]:.3e}  "
                  f"part/max {big[i]:.3e}")
        scans = []
        for scale in ("own", "max"):
            for tol in (1e-9, 1e-7, 1e-5, 1e-4):
                kept, _ = driftlab_rows(Jw, tol, scale)
                r = sigma_ratio(Jw[kept])
                scans.append({"scale": scale, "tol": tol, "kept": len(kept),
                              "dropped": [wn[i] for i in range(len(wn)) if i not in kept],
                              "sigma_ratio": r})
                print(f"  scan tol {tol:.0e} × {'its own norm (driftlab)' if scale == 'own' else 'the largest row norm'}: "
                      f"{len(kept)} kept, dropped {scans[-1]['dropped'] or 'none'}; "
                      f"σ_min/σ_max of the kept {r:.1e}")
        pw, dw = pivoted_qr(Jw.T)
        rk = int(np.sum(dw > 1e-8 * dw[0]))
        print(f"  column-pivoted QR of Jᵀ (world rows): rank {rk} at 1e-8·|R_00|, dropped "
              f"{[wn[i] for i in pw[rk:]]} (|R_kk| {', '.join(f'{x:.1e}' for x in dw[rk:])})")
        out["world_rows"] = {"names": wn, "row_norms": np.linalg.norm(Jw, axis=1).tolist(),
                             "part_over_own": own, "part_over_max": big, "scans": scans,
                             "pivoted_dropped": [wn[i] for i in pw[rk:]]}

    # ---- 3./4. dynamics
    rng = np.random.default_rng(args.seed)
    keep_mach = np.sort(perm[: int(np.sum(rdiag > max(m, n) * EPS * rdiag[0]))])
    keep_8 = np.sort(perm[: int(np.sum(rdiag > 1e-8 * rdiag[0]))])
    # random admissible v: a uniform draw projected onto the null space of the rows the
    # 1e-8 QR keeps (the rows every representation enforces); reported: its violation of
    # all rows
    w = rng.uniform(-args.v_scale, args.v_scale, n)
    Jk = J[keep_8]
    v1 = w - np.linalg.pinv(Jk) @ (Jk @ w)
    states = {"v=0": np.zeros(n), f"v random (seed {args.seed})": v1}
    print(f"\n3./4. dynamics at q = 0, tau = 0, gravity {model.gravity.linear.tolist()}; "
          f"random v: |v|∞ = {np.max(np.abs(v1)):.3f}, |J_kept v|∞ = "
          f"{np.max(np.abs(Jk @ v1)):.1e}, |J_all v|∞ = {np.max(np.abs(J @ v1)):.1e}")
    out["dynamics"] = []
    mus = [1e-8, 1e-10, 1e-12]
    budgets = [(1e-14, 10), (1e-14, 1000), (0.0, 100000)]
    for label, v in states.items():
        q = q0
        Mq = pin.crba(model, data, q)
        Mq = np.triu(Mq) + np.triu(Mq, 1).T
        b = pin.rnea(model, data, q, v, np.zeros(n))
        f = -b
        J, g = closure_rows(model, data, cms, q, v)
        refs = {
            "(a) all rows, KKT lstsq": kkt_solve(Mq, J, f, g, lstsq=True)[0],
            "(b) QR rows, tol mach": kkt_solve(Mq, J, f, g, rows=keep_mach)[0],
            "(b) QR rows, tol 1e-8": kkt_solve(Mq, J, f, g, rows=keep_8)[0],
        }
        base_ref = refs["(b) QR rows, tol 1e-8"]
        rec = {"state": label, "v": v.tolist(), "references": {}, "pinocchio": []}
        print(f"\n  state {label}:  |γ|∞ = {np.max(np.abs(g)):.3e}; "
              f"rows kept (mach) {len(keep_mach)}, (1e-8) {len(keep_8)}")
        for k, a in refs.items():
            rec["references"][k] = {"ddq": a.tolist(), "rel_to_b8": rel(a, base_ref),
                                    "viol_all_rows": float(np.max(np.abs(J @ a - g)))}
            print(f"    {k:26s} |q̈|∞ = {np.max(np.abs(a)):.6e}, rel. to (b,1e-8) "
                  f"{rel(a, base_ref):.2e}, |J q̈ − γ|∞ (all rows) {np.max(np.abs(J @ a - g)):.2e}")
        ddq_by_mu = {}
        for acc, it in budgets:
            for mu in mus:
                ps = pin.ProximalSettings(acc, mu, it)
                pin.initConstraintDynamics(model, data, cms, cds)
                a = pin.constraintDynamics(model, data, q, v, np.zeros(n), cms, cds, ps)
                a = np.array(a)
                e = {"mu": mu, "accuracy": acc, "max_iter": it, "iter": int(ps.iter),
                     "absolute_residual": float(ps.absolute_residual),
                     "relative_residual": float(ps.relative_residual),
                     "ddq": a.tolist(),
                     "rel_to": {k: rel(a, r) for k, r in refs.items()},
                     "viol_all_rows": float(np.max(np.abs(J @ a - g)))}
                rec["pinocchio"].append(e)
                ddq_by_mu.setdefault((acc, it), []).append(a)
                print(f"    pin mu={mu:.0e} acc={acc:.0e} max_iter={it:6d}: iter {ps.iter:6d}, "
                      f"abs res {ps.absolute_residual:.1e}, rel res {ps.relative_residual:.1e}; "
                      + "; ".join(f"rel to {k[:3]} {'mach' if 'mach' in k else ('1e-8' if '1e-8' in k else 'all')} {x:.1e}"
                                  for k, x in e["rel_to"].items())
                      + f"; |Jq̈−γ|∞ {e['viol_all_rows']:.1e}")
        spread = {f"acc={acc:.0e},max_iter={it}": max(rel(x, y) for x in L for y in L)
                  for (acc, it), L in ddq_by_mu.items()}
        rec["spread_over_mu"] = spread
        print("    spread of Pinocchio's q̈ over mu ∈ {1e-8, 1e-10, 1e-12} (max rel. difference): "
              + ", ".join(f"{k}: {x:.1e}" for k, x in spread.items()))
        out["dynamics"].append(rec)

    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
        print(f"\nnumbers written to {args.json}")
    return 0


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Exit status with --samples: 0 within the target, 1 not, 2 cannot compare.")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--samples", metavar="FILE.json",
                      help="check driftlab's samples (JSON of driftlab model-dynamics)")
    mode.add_argument("--analyse", action="store_true",
                      help="the report at q = 0 (the default without --samples)")
    mode.add_argument("--synthesize", metavar="OUT.json",
                      help="write a synthetic samples file (plumbing test of --samples)")
    ap.add_argument("--sdf", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "datasets", "robots", "cassie.sdf"))
    c = ap.add_argument_group("--samples")
    c.add_argument("--robot", default="cassie", help="name in the CSV row")
    c.add_argument("--states", type=int,
                   help="number of samples expected (--synthesize: written, default 3)")
    c.add_argument("--target", type=float, default=1e-9)
    c.add_argument("--verbose", action="store_true", help="one diagnostic line per state (default: the first)")
    c.add_argument("--springs", choices=["sdf", "none"], default="sdf",
                   help="joint springs −k (q − q_ref) of the SDF as driftlab applies them "
                        "(default), or none")
    c.add_argument("--min-sigma-ratio", type=float, default=1e-8,
                   help="refuse (exit 2) kept rows whose Jacobian has σ_min/σ_max below this")
    c.add_argument("--mu", type=float, default=1e-8,
                   help="proximal parameter of the pin.constraintDynamics record")
    c.add_argument("--max-iter", type=int, default=10,
                   help="iterations of the pin.constraintDynamics record")
    an = ap.add_argument_group("--analyse")
    an.add_argument("--json", default=None, help="write the measured numbers here")
    an.add_argument("--tree", choices=["driftlab", "bfs"], default="driftlab")
    an.add_argument("--revolute-closure", choices=["points", "6d"], default="points")
    an.add_argument("--axis-offset", type=float, default=0.1,
                    help="distance of the second point on a revolute closure's axis [m]")
    an.add_argument("--snap-right-angles", type=float, default=0.0, metavar="TOL",
                    help="diagnostic: replace rpy angles within TOL of k·π/2 by k·π/2 "
                         "(e.g. 1e-4; changes the model)")
    sy = ap.add_argument_group("--analyse and --synthesize")
    sy.add_argument("--seed", type=int, default=1)
    sy.add_argument("--v-scale", type=float, default=0.5,
                    help="the random v has max |v_i| = this [rad/s] before projection")
    sy.add_argument("--q-scale", type=float, default=0.0,
                    help="--synthesize: random q uniform in ±this [rad], projected onto the "
                         "kept rows (0: q = 0)")
    sy.add_argument("--rows", choices=["pivoted", "driftlab"], default="pivoted",
                    help="--synthesize: kept rows at q = 0 by a column-pivoted QR of Jᵀ, or "
                         "by driftlab's scan (orthogonal part over the row's own norm)")
    sy.add_argument("--redundant-tol", type=float, default=1e-5,
                    help="--synthesize: the row selection's relative tolerance")
    a = ap.parse_args()
    global SNAP
    if a.snap_right_angles and (a.samples or a.synthesize):
        ap.error("--snap-right-angles changes the model: --analyse only")
    SNAP = a.snap_right_angles
    name = "pinocchio_cassie" + (f": {a.robot}" if a.samples else "")
    try:
        if a.synthesize:
            if a.states is None:
                a.states = 3
            return synthesize(a)
        if not a.samples:
            return analyse(a)
        n, states, (wm, at_m), (wa, at_a), doc = check_samples(a)
    except Refused as e:
        print(f"{name}: cannot compare: {e}", file=sys.stderr)
        return 2
    except (OSError, KeyError, ValueError, TypeError, RuntimeError, np.linalg.LinAlgError) as e:
        print(f"{name}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    ok = wm <= a.target and wa <= a.target
    print(f"{a.robot},{doc['root']},{states},{n},{wm:.3e},{wa:.3e},{a.target:g},"
          f"{str(ok).lower()},{pin.__version__}")
    k, (r, c_), ours, ref = at_m
    print(f"{name}: worst M at state {k}, entry ({q_label(doc, r)}, {q_label(doc, c_)}): "
          f"driftlab {ours:.17g}, Pinocchio {ref:.17g}", file=sys.stderr)
    k, i, ours, ref = at_a
    print(f"{name}: worst constrained acceleration at state {k}, {q_label(doc, i)}: "
          f"driftlab {ours:.17g}, Pinocchio {ref:.17g}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
