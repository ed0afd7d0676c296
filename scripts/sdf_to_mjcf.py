#!/usr/bin/env python3
"""Re-express an SDF robot (one <model> of links and joints, loops allowed) in MJCF (issue 47).

Written for Cassie's legs (datasets/robots/cassie.sdf -> models/cassie.xml), and reads
the SDF the way driftlab's SDF reader does (crates/problems/src/model/import/sdf.rs and
sdf_tree.rs), so that the two files of one robot give the same dynamics:

* frames (SDF 1.6): a link's <pose> is in the model frame, an inertial's in its link's
  frame, a joint's <pose> in its child link's frame; <axis><xyz> is in the joint frame,
  or in the model frame with <use_parent_model_frame> (the default before SDF 1.5), or in
  the frame `expressed_in` names (__model__, a link, the joint itself). A pose is
  `x y z roll pitch yaw` (R = Rz(yaw) Ry(pitch) Rx(roll)), in degrees with
  degrees="true", or `x y z qx qy qz qw` with rotation_format="quat_xyzw"; a pose
  relative_to another frame is refused. A link without <inertial> gets SDF's default
  (mass 1, unit inertia at the link origin);
* the tree, as driftlab chooses it: from the base (the links no joint has as child),
  passes over the joints in file order, each joint whose parent is placed joins the tree
  if its child is not placed yet, and closes a loop if it is;
* MJCF: each link is a <body> at its link frame (pos/quat relative to its tree parent's
  link frame, so MuJoCo's body frame is the SDF link frame), its tree joint a <joint>
  with `pos` the joint pose's origin and `axis` the SDF axis, both in the link frame
  (`hinge` for revolute and continuous, `slide` for prismatic, `ball`, none for fixed);
  `range` the SDF limits in radians under <compiler angle="radian"> (SDF's +-1e16 is no
  limit), `damping`, `stiffness` and `springref` from <dynamics>; the inertial as
  <inertial pos mass fullinertia> in the link frame (an inertial pose's rotation is
  applied to the tensor, since MuJoCo refuses fullinertia with an orientation); a
  loop-closing ball joint as <connect body1=parent body2=child anchor> with the anchor
  the joint's origin in the parent link's frame (MuJoCo and driftlab compute the child's
  point at qpos0, where the SDF's assembled pose makes them coincide), a loop-closing
  fixed joint as <weld>; the base welded to the world (root "fixed", driftlab's default
  for SDF) or on a <freejoint> (--root floating).

Refused rather than guessed (none occurs in Cassie): gearbox and screw joints, mimics, a
revolute or prismatic joint that closes a loop (MJCF has no hinge equality), a one-sided
limit, <initial_position> other than 0, Coulomb friction. Numbers the conversion does not
change (masses, inertia components without an inertial rotation, limits, dynamics) are
copied as the source's text; computed ones are written with Python's shortest round-trip
repr.

Usage: sdf_to_mjcf.py SOURCE.sdf OUTPUT.xml [--root fixed|floating] [--license FILE]
                      [--check]
--license FILE: a licence text to copy into the header comment (the permission notice of
Cassie's files asks for it in all copies). --check (needs the `mujoco` Python package):
compile OUTPUT with MuJoCo and compare, body by body, the mass, centre of mass and
rotational inertia (link frame) with the SDF's, the body frames and joint axes at qpos0
with the SDF's link and joint frames, and print the worst differences.
"""
import hashlib
import math
import sys
import xml.etree.ElementTree as ET

UNBOUNDED = 1e16


def fail(msg):
    sys.exit(f"sdf_to_mjcf: {msg}")


# ---------------------------------------------------------------------------------------
# Rotations (3x3 as nested lists, row-major) and poses (R, p).


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def transpose(a):
    return [[a[j][i] for j in range(3)] for i in range(3)]


def mul(a, v):
    return [sum(a[i][k] * v[k] for k in range(3)) for i in range(3)]


IDENTITY = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def rpy(r, p, y):
    """R = Rz(y) Ry(p) Rx(r), as driftlab's `spatial::rpy`."""
    sr, cr = math.sin(r), math.cos(r)
    sp, cp = math.sin(p), math.cos(p)
    sy, cy = math.sin(y), math.cos(y)
    return [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]


def quat_matrix(w, x, y, z):
    return [
        [2 * (w * w + x * x) - 1, 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 2 * (w * w + y * y) - 1, 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 2 * (w * w + z * z) - 1],
    ]


def matrix_quat(r):
    """Unit quaternion (w, x, y, z), w >= 0, of rotation matrix r."""
    tr = r[0][0] + r[1][1] + r[2][2]
    if tr >= max(r[0][0], r[1][1], r[2][2]):
        s = 2.0 * math.sqrt(1.0 + tr)
        q = [0.25 * s, (r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s]
    elif r[0][0] >= r[1][1] and r[0][0] >= r[2][2]:
        s = 2.0 * math.sqrt(1.0 + r[0][0] - r[1][1] - r[2][2])
        q = [(r[2][1] - r[1][2]) / s, 0.25 * s, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s]
    elif r[1][1] >= r[2][2]:
        s = 2.0 * math.sqrt(1.0 + r[1][1] - r[0][0] - r[2][2])
        q = [(r[0][2] - r[2][0]) / s, (r[0][1] + r[1][0]) / s, 0.25 * s, (r[1][2] + r[2][1]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + r[2][2] - r[0][0] - r[1][1])
        q = [(r[1][0] - r[0][1]) / s, (r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, 0.25 * s]
    n = math.sqrt(sum(c * c for c in q))
    q = [c / n for c in q]
    return [-c for c in q] if q[0] < 0 else q


class Pose:
    def __init__(self, rot=None, pos=None):
        self.rot = rot if rot is not None else [row[:] for row in IDENTITY]
        self.pos = pos if pos is not None else [0.0, 0.0, 0.0]

    def then(self, other):
        """self o other: `other` given in self's frame."""
        p = mul(self.rot, other.pos)
        return Pose(matmul(self.rot, other.rot), [self.pos[i] + p[i] for i in range(3)])

    def inverse(self):
        rt = transpose(self.rot)
        p = mul(rt, self.pos)
        return Pose(rt, [-c for c in p])


# ---------------------------------------------------------------------------------------
# Reading the SDF.


def child(node, tag):
    return node.find(tag)


def text_of(node, tag, default=None):
    n = node.find(tag)
    if n is None or n.text is None:
        return default
    return n.text.strip()


def numbers(s, count, what):
    v = [float(x) for x in s.split()]
    if len(v) != count:
        fail(f"{what}: {count} numbers expected, got {s!r}")
    return v


def pose_of(node, what):
    p = node.find("pose")
    if p is None:
        return Pose()
    if p.get("relative_to") or p.get("frame"):
        fail(f"{what}: a pose relative to a named frame is not read; resolve the frame first")
    degrees = p.get("degrees", "false") in ("true", "1")
    fmt = p.get("rotation_format", "euler_rpy")
    if fmt == "euler_rpy":
        v = numbers(p.text or "", 6, f"{what} <pose>")
        k = math.pi / 180.0 if degrees else 1.0
        return Pose(rpy(k * v[3], k * v[4], k * v[5]), v[:3])
    if fmt == "quat_xyzw":
        v = numbers(p.text or "", 7, f"{what} <pose>")
        largest = max(abs(c) for c in v[3:])
        if largest == 0 or degrees:
            fail(f"{what}: a quat_xyzw pose with a zero quaternion, or with degrees")
        w = [c / largest for c in v[3:]]
        n = math.sqrt(sum(c * c for c in w))
        return Pose(quat_matrix(w[3] / n, w[0] / n, w[1] / n, w[2] / n), v[:3])
    fail(f"{what}: rotation_format={fmt!r}")


def is_zero_rotation(node):
    """Whether the element's <pose> has no rotation (its rotation components all zero)."""
    p = node.find("pose")
    if p is None:
        return True
    v = [float(x) for x in (p.text or "").split()]
    if p.get("rotation_format", "euler_rpy") == "quat_xyzw":
        return v[3:6] == [0.0, 0.0, 0.0]
    return v[3:] == [0.0, 0.0, 0.0]


class Link:
    def __init__(self, node, model_pose):
        self.node = node
        self.name = node.get("name")
        self.frame = model_pose.then(pose_of(node, f"link {self.name}"))
        inertial = node.find("inertial")
        self.default_inertia = inertial is None
        if inertial is None:
            self.mass_text, self.com = "1", [0.0, 0.0, 0.0]
            self.inertia = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
            self.inertia_text = ["1", "1", "1", "0", "0", "0"]
            return
        if inertial.get("auto") in ("true", "1"):
            fail(f"link {self.name}: <inertial auto=\"true\"> is not read; give the inertia")
        at = pose_of(inertial, f"inertial of {self.name}")
        self.mass_text = text_of(inertial, "mass", "1")
        t = inertial.find("inertia")
        get = (lambda tag, d: d) if t is None else (lambda tag, d: text_of(t, tag, d))
        texts = [get("ixx", "1"), get("iyy", "1"), get("izz", "1"),
                 get("ixy", "0"), get("ixz", "0"), get("iyz", "0")]
        ixx, iyy, izz, ixy, ixz, iyz = (float(x) for x in texts)
        local = [[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]
        self.com = at.pos
        if is_zero_rotation(inertial):
            self.inertia = local
            self.inertia_text = texts
        else:
            self.inertia = matmul(matmul(at.rot, local), transpose(at.rot))
            i = self.inertia
            self.inertia_text = [fmt(x) for x in (i[0][0], i[1][1], i[2][2], i[0][1], i[0][2], i[1][2])]

    @property
    def mass(self):
        return float(self.mass_text)


class Joint:
    def __init__(self, node, links, index, model_pose, axes_in_model):
        self.node = node
        self.name = node.get("name")
        self.type = node.get("type")
        if self.type not in ("revolute", "continuous", "prismatic", "ball", "fixed"):
            fail(f"joint {self.name}: type {self.type!r} is not converted (revolute, continuous, "
                 "prismatic, ball, fixed)")
        if node.find("axis2") is not None and self.type != "ball":
            fail(f"joint {self.name}: <axis2> is not converted")
        pname, cname = text_of(node, "parent"), text_of(node, "child")
        if cname == "world" or cname not in index:
            fail(f"joint {self.name}: child {cname!r} is not a link")
        if pname != "world" and pname not in index:
            fail(f"joint {self.name}: parent {pname!r} is not a link")
        self.parent = None if pname == "world" else pname
        self.child = cname
        self.pose = pose_of(node, f"joint {self.name}")
        # The joint frame in the model frame (SDF 1.6: the joint pose is in the child link's).
        self.frame = links[index[cname]].frame.then(self.pose)
        self.axis_link = [0.0, 0.0, 1.0]  # in the child link's frame
        self.lower = self.upper = None
        self.limit_text = None
        self.damping = self.stiffness = self.springref = None
        a = node.find("axis")
        if a is None:
            if self.type in ("revolute", "continuous", "prismatic"):
                fail(f"joint {self.name}: a {self.type} joint without <axis>")
            return
        x = a.find("xyz")
        if x is None:
            fail(f"joint {self.name}: <axis> without <xyz>")
        v = numbers(x.text or "", 3, f"joint {self.name} <xyz>")
        upmf = text_of(a, "use_parent_model_frame")
        in_model = axes_in_model if upmf is None else upmf in ("true", "1")
        named = x.get("expressed_in")
        if named and in_model:
            fail(f"joint {self.name}: both expressed_in and use_parent_model_frame")
        if named in (None, "", self.name) and not in_model:
            in_world = mul(self.frame.rot, v)  # in the joint frame
        elif in_model or named == "__model__":
            in_world = mul(model_pose.rot, v)
        elif named in index:
            in_world = mul(links[index[named]].frame.rot, v)
        else:
            fail(f"joint {self.name}: expressed_in={named!r} names no frame of this model")
        n = math.sqrt(sum(x * x for x in in_world))
        if n < 1e-12:
            fail(f"joint {self.name}: a zero axis")
        axis = mul(transpose(links[index[cname]].frame.rot), [x / n for x in in_world])
        # Exact in the common case (no joint rotation, axis in the joint frame): keep the
        # source's direction instead of a product with round-off.
        if named in (None, "", self.name) and not in_model and is_zero_rotation(node):
            axis = [x / math.sqrt(sum(y * y for y in v)) for x in v]
        self.axis_link = axis
        if self.type in ("revolute", "continuous", "prismatic"):
            self.read_scalar_axis(a)

    def read_scalar_axis(self, a):
        init = text_of(a, "initial_position")
        if init is not None and float(init) != 0.0:
            fail(f"joint {self.name}: <initial_position> {init} is not converted (MJCF's `ref` "
                 "moves the reference, not the start); give the start in the run's q0")
        if a.find("mimic") is not None:
            fail(f"joint {self.name}: <mimic> is not converted (an MJCF <joint> equality)")
        lim = a.find("limit")
        if lim is not None and self.type != "continuous":
            lo, hi = text_of(lim, "lower"), text_of(lim, "upper")
            lo_inf = lo is None or abs(float(lo)) >= UNBOUNDED
            hi_inf = hi is None or abs(float(hi)) >= UNBOUNDED
            if lo_inf != hi_inf:
                fail(f"joint {self.name}: a one-sided limit is not converted")
            if not lo_inf:
                self.limit_text = (lo, hi)
        d = a.find("dynamics")
        if d is not None:
            friction = text_of(d, "friction")
            if friction is not None and float(friction) != 0.0:
                fail(f"joint {self.name}: Coulomb friction is not converted")
            self.damping = text_of(d, "damping")
            self.stiffness = text_of(d, "spring_stiffness")
            self.springref = text_of(d, "spring_reference")


def read_sdf(path):
    root = ET.parse(path).getroot()
    if root.tag != "sdf":
        fail(f"{path}: the root is <{root.tag}>, not <sdf>")
    if root.find("world") is not None:
        fail(f"{path}: an SDF <world> is not converted; give <sdf><model>")
    models = root.findall("model")
    if len(models) != 1:
        fail(f"{path}: one <model> expected, {len(models)} found")
    model = models[0]
    for tag in ("model", "include"):
        if model.find(tag) is not None:
            fail(f"{path}: a nested <{tag}> is not converted")
    if text_of(model, "static") in ("true", "1"):
        fail(f"{path}: a static model")
    version = root.get("version", "")
    parts = version.split(".")
    axes_in_model = len(parts) >= 2 and parts[0] == "1" and parts[1].isdigit() and int(parts[1]) < 5
    model_pose = pose_of(model, "model")
    links = [Link(n, model_pose) for n in model.findall("link")]
    index = {}
    for k, l in enumerate(links):
        index.setdefault(l.name, k)
    joints = []
    for n in model.findall("joint"):
        if n.get("type") in ("gearbox", "screw", "universal", "revolute2"):
            fail(f"joint {n.get('name')}: type {n.get('type')!r} is not converted")
        joints.append(Joint(n, links, index, model_pose, axes_in_model))
    return model.get("name", "model"), links, index, joints


def choose_tree(links, index, joints):
    """driftlab's `sdf_tree::choose_tree`: tree joints, closing joints, in its order."""
    placed = [not any(j.child == l.name for j in joints) for l in links]
    used = [False] * len(joints)
    tree, closing = [], []
    while True:
        before = len(tree) + len(closing)
        for k, j in enumerate(joints):
            if used[k] or not (j.parent is None or placed[index[j.parent]]):
                continue
            used[k] = True
            if placed[index[j.child]]:
                closing.append(j)
            else:
                placed[index[j.child]] = True
                tree.append(j)
        if len(tree) + len(closing) == before:
            break
    if not all(used):
        k = used.index(False)
        fail(f"joint {joints[k].name}: its parent is not connected to the base")
    return tree, closing


# ---------------------------------------------------------------------------------------
# Writing MJCF.


def fmt(x):
    if x == 0.0:
        return "0"
    r = repr(float(x))
    return r[:-2] if r.endswith(".0") else r


def fmt_vec(v):
    return " ".join(fmt(c) for c in v)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def source_comment(path):
    """The source file's own leading comment (its provenance), if any."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.find("<!--")
    if start < 0 or start > text.find("<sdf"):
        return None
    return text[start + 4:text.find("-->", start)].strip()


def convert(src, out, root_kind, license_path):
    name, links, index, joints = read_sdf(src)
    tree, closing = choose_tree(links, index, joints)
    for j in closing:
        if j.type in ("revolute", "continuous", "prismatic"):
            fail(f"joint {j.name}: a {j.type} joint closes a loop; MJCF has no hinge or slide "
                 "equality (give the file a tree in which it is a tree joint)")
    tree_joint = {j.child: j for j in tree}
    children = {}
    for j in tree:
        children.setdefault(j.parent, []).append(j.child)
    bases = [l.name for l in links if l.name not in tree_joint]

    lines = []
    ind = "  "

    def body(lname, parent_frame, depth):
        l = links[index[lname]]
        rel = parent_frame.inverse().then(l.frame)
        q = matrix_quat(rel.rot)
        attrs = f'name="{lname}" pos="{fmt_vec(rel.pos)}"'
        if q != [1.0, 0.0, 0.0, 0.0]:
            attrs += f' quat="{fmt_vec(q)}"'
        pad = ind * depth
        lines.append(f"{pad}<body {attrs}>")
        j = tree_joint.get(lname)
        if j is None:
            if root_kind == "floating":
                lines.append(f'{pad}{ind}<freejoint name="root_joint"/>')
        elif j.type != "fixed":
            kind = {"revolute": "hinge", "continuous": "hinge", "prismatic": "slide", "ball": "ball"}[j.type]
            a = [f'name="{j.name}"', f'type="{kind}"']
            if j.pose.pos != [0.0, 0.0, 0.0]:
                a.append(f'pos="{fmt_vec(j.pose.pos)}"')
            if kind != "ball":
                a.append(f'axis="{fmt_vec(j.axis_link)}"')
            if j.limit_text:
                a.append(f'range="{j.limit_text[0]} {j.limit_text[1]}"')
            for attr, val in (("damping", j.damping), ("stiffness", j.stiffness),
                              ("springref", j.springref)):
                if val is not None and float(val) != 0.0:
                    a.append(f'{attr}="{val}"')
            lines.append(f"{pad}{ind}<joint {' '.join(a)}/>")
        lines.append(
            f'{pad}{ind}<inertial pos="{fmt_vec(l.com)}" mass="{l.mass_text}" '
            f'fullinertia="{" ".join(l.inertia_text)}"/>'
        )
        for c in children.get(lname, []):
            body(c, l.frame, depth + 1)
        lines.append(f"{pad}</body>")

    for b in bases:
        body(b, Pose(), 2)
    for c in children.get(None, []):
        body(c, Pose(), 2)

    eq = []
    for j in closing:
        # body1: the joint's parent (the world cannot be body1 of a connect: swap then).
        b1, b2 = (j.parent, j.child) if j.parent is not None else (j.child, None)
        frame1 = links[index[b1]].frame
        local = frame1.inverse().then(j.frame)
        b2attr = f' body2="{b2}"' if b2 is not None else ""
        if j.type == "ball":
            eq.append(f'    <connect name="{j.name}" body1="{b1}"{b2attr} anchor="{fmt_vec(local.pos)}"/>')
        elif j.type == "fixed":
            eq.append(f'    <weld name="{j.name}" body1="{b1}"{b2attr} anchor="{fmt_vec(local.pos)}"/>')

    digest = sha256(src)
    provenance = source_comment(src)
    lic = ""
    if license_path:
        with open(license_path, encoding="utf-8") as f:
            lic = f.read().rstrip()
    header = [
        f"{name} re-expressed in MJCF from {src} (SHA-256 {digest})",
        f"by scripts/sdf_to_mjcf.py (driftlab, issue 47), made by: sdf_to_mjcf.py {src} {out}"
        + (f", license option {license_path}" if license_path else "")
        + (", root option floating" if root_kind == "floating" else "") + ".",
    ]
    if provenance:
        header.append(f"The SDF's own note: {provenance}")
    header += [
        "",
        "Each SDF link is a body at its link frame; each tree joint (the tree driftlab's SDF reader",
        "chooses: file order from the base) a joint with its pos and axis in the link frame, range in",
        "radians, damping, stiffness and springref from <dynamics>; each inertial an <inertial> in",
        "the link frame; each loop-closing ball joint a connect equality whose anchor is the joint's",
        "origin in body1 (the SDF parent), coinciding with body2's point at qpos0 (the SDF's",
        "assembled pose). "
        + ("The base is welded to the world (driftlab's root = \"fixed\")." if root_kind == "fixed"
           else "The base is on a free joint (driftlab's root = \"floating\")."),
        f"{len(links)} bodies, {sum(1 for j in tree if j.type != 'fixed')} joints in the tree, "
        f"{len(closing)} loop closures ({', '.join(j.name for j in closing)}).",
        "No geometry: the SDF's visuals and collisions were stripped before it was shipped.",
    ]
    outside = [j.name for j in tree if j.limit_text
               and not float(j.limit_text[0]) <= 0.0 <= float(j.limit_text[1])]
    if outside:
        header += [
            "qpos0 (the SDF's q = 0, its assembled pose) is outside the range of "
            + ", ".join(outside) + ":",
            "MuJoCo's limit constraints act there from the start (driftlab keeps limits as data).",
        ]
    if lic:
        header += ["", f"Licence of the source ({license_path}), as the notice asks, in all copies:"]
        header += [line.rstrip() for line in lic.splitlines()]
    header_text = "\n".join(("     " + h) if h else "" for h in header).rstrip()
    if "--" in header_text:
        fail("the header comment would contain \"--\", which an XML comment may not")
    text = [f"<!-- {header_text.lstrip()} -->", f'<mujoco model="{name}">',
            '  <compiler angle="radian" autolimits="true" inertiafromgeom="false"/>',
            '  <option gravity="0 0 -9.81"/>', "  <worldbody>"]
    text += lines
    text.append("  </worldbody>")
    if eq:
        text += ["  <equality>"] + eq + ["  </equality>"]
    text.append("</mujoco>")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")
    return links, index, joints, tree


def check(src, out, links, index, joints, tree):
    """Compile OUTPUT with MuJoCo and compare with the SDF's links and joints at qpos0."""
    import mujoco
    import numpy as np

    m = mujoco.MjModel.from_xml_path(out)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    print(f"{out}: MuJoCo {mujoco.__version__}: nq {m.nq}, nv {m.nv}, neq {m.neq}, nbody {m.nbody}")
    worst = {"mass": 0.0, "com": 0.0, "inertia": 0.0, "frame": 0.0, "axis": 0.0, "anchor": 0.0}
    total_sdf = total_mj = 0.0
    for l in links:
        b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, l.name)
        if b < 0:
            fail(f"check: body {l.name} missing in the compiled model")
        total_sdf += l.mass
        total_mj += m.body_mass[b]
        worst["mass"] = max(worst["mass"], abs(m.body_mass[b] - l.mass) / l.mass)
        worst["com"] = max(worst["com"], float(np.abs(m.body_ipos[b] - np.array(l.com)).max()))
        r = np.zeros(9)
        mujoco.mju_quat2Mat(r, m.body_iquat[b])
        r = r.reshape(3, 3)
        i_mj = r @ np.diag(m.body_inertia[b]) @ r.T
        i_sdf = np.array(l.inertia)
        worst["inertia"] = max(worst["inertia"], float(np.abs(i_mj - i_sdf).max() / np.abs(i_sdf).max()))
        worst["frame"] = max(worst["frame"],
                             float(np.abs(d.xpos[b] - np.array(l.frame.pos)).max()),
                             float(np.abs(d.xmat[b].reshape(3, 3) - np.array(l.frame.rot)).max()))
    for j in tree:
        if j.type in ("fixed", "ball"):
            continue
        k = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j.name)
        a_sdf = np.array(links[index[j.child]].frame.rot) @ np.array(j.axis_link)
        worst["axis"] = max(worst["axis"], float(np.abs(d.xaxis[k] - a_sdf).max()))
        worst["anchor"] = max(worst["anchor"], float(np.abs(d.xanchor[k] - np.array(j.frame.pos)).max()))
    print(f"  total mass: SDF {total_sdf!r}, MuJoCo {total_mj!r}")
    print("  worst over bodies: " + ", ".join(
        f"{k} {v:.3e}" for k, v in worst.items()
    ) + " (mass and inertia relative; com, frame (position and matrix), axis, anchor absolute)")
    eq = d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    if eq.any():
        print(f"  equality residual at qpos0 (MuJoCo efc_pos, {int(eq.sum())} rows): "
              f"{np.abs(d.efc_pos[eq]).max():.3e}")
    limited = d.efc_type == mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT
    if limited.any():
        names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, int(k)) for k in d.efc_id[limited]]
        print(f"  qpos0 outside the range of: {', '.join(names)} (as in the SDF, whose q = 0 pose is "
              "the assembled one)")
    return worst


def main():
    args = sys.argv[1:]
    root_kind, license_path, do_check = "fixed", None, False
    rest = []
    while args:
        a = args.pop(0)
        if a == "--root":
            root_kind = args.pop(0)
            if root_kind not in ("fixed", "floating"):
                fail("--root fixed|floating")
        elif a == "--license":
            license_path = args.pop(0)
        elif a == "--check":
            do_check = True
        else:
            rest.append(a)
    if len(rest) != 2:
        fail("usage: sdf_to_mjcf.py SOURCE.sdf OUTPUT.xml [--root fixed|floating] [--license FILE] [--check]")
    src, out = rest
    links, index, joints, tree = convert(src, out, root_kind, license_path)
    print(f"wrote {out} from {src}")
    if do_check:
        check(src, out, links, index, joints, tree)


if __name__ == "__main__":
    main()
