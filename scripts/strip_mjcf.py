#!/usr/bin/env python3
"""Strip an MJCF (MuJoCo) model to what its dynamics needs, and check it with MuJoCo (issue 47).

Keeps: <mujoco model>, <include>, <compiler>, <option> (with <flag>), <size>, <default>
classes, <worldbody> with every <body>, <frame>, <inertial>, <joint>, <freejoint> and <geom>
(geoms carry the mass under inertiafromgeom, so all their attributes stay but `rgba` and
`material`), sites that a tendon, an equality or an actuator names, <contact>, <equality>,
<tendon>, <actuator>, <keyframe>. Drops: <asset> textures, materials, skins and height fields
(and the static world geoms that show a height field), <visual>, <statistic> (centre and
extent of the view), <custom> (user data), <sensor>, <camera>, <light>, the other sites,
`rgba`/`material` attributes, comments. Refuses a mesh (asset or geom), a height-field geom
on a moving body, and any element it does not know, so that a new upstream version is looked at
before it is shipped. Numbers are kept as the source's text. Then checks that every kept
element's attributes (less the dropped ones) and text equal the source's, in the source's
order. Usage: strip_mjcf.py SOURCE OUTPUT 'HEADER COMMENT'

With --check (needs the `mujoco` Python package): compiles every SOURCE (in its own folder,
so its includes resolve there) and its OUTPUT with MuJoCo and requires the compiled models to
be identical in everything the dynamics reads — sizes, every body_/jnt_/dof_/tendon_/eq_/
actuator_ array, qpos0, qpos_spring, option, the kept geoms — and, at random states with
contact disabled, mj_fullM, the bias and passive forces, qacc and the constraint Jacobian to
the last bit. Writes COMPILED.json: per output, MuJoCo's sizes, total mass and every body's
mass, principal inertia (diagonal, in the body's inertial frame), ipos and iquat.
Usage: strip_mjcf.py --check COMPILED.json SOURCE OUTPUT [SOURCE OUTPUT ...]
"""
import hashlib
import json
import os
import sys
import xml.etree.ElementTree as ET

VISUAL_ATTRS = {"rgba", "material"}
VISUAL_TAGS = {"geom", "site", "fixed", "spatial", "tendon"}  # …that carry VISUAL_ATTRS
TOP_KEEP = {"include", "compiler", "option", "size", "default", "worldbody", "contact",
            "equality", "tendon", "actuator", "keyframe"}
TOP_DROP = {"visual", "statistic", "custom", "sensor"}
ASSET_DROP = {"texture", "material", "hfield", "skin"}
BODY_KEEP = {"body", "frame", "inertial", "joint", "freejoint", "geom", "site"}
BODY_DROP = {"camera", "light"}
DEFAULT_KEEP = {"default", "joint", "geom", "site", "equality", "tendon", "pair",
                "motor", "general", "position", "velocity", "intvelocity", "damper",
                "cylinder", "muscle", "adhesion"}
DEFAULT_DROP = {"camera", "light", "material"}


def die(msg):
    sys.exit(f"strip_mjcf: {msg}")


def referenced_sites(root):
    """Names of the sites a kept element needs: spatial tendon paths, site-based equalities
    and site transmissions of actuators."""
    names = set()
    for section in root:
        if section.tag not in ("tendon", "equality", "actuator"):
            continue  # sensors are dropped: the sites they name go with them
        for e in section.iter():
            for a in ("site", "site1", "site2", "refsite", "sidesite"):
                if e.get(a):
                    names.add(e.get(a))  # <spatial><site site=…/>, connect/weld, transmission
    return names


def drop_visual_attrs(e):
    if e.tag in VISUAL_TAGS:
        for a in VISUAL_ATTRS:
            e.attrib.pop(a, None)


def strip_body(body, keep_sites, path):
    for c in list(body):
        if c.tag in BODY_DROP:
            body.remove(c)
        elif c.tag == "site":
            if c.get("name") in keep_sites:
                drop_visual_attrs(c)
            else:
                body.remove(c)
        elif c.tag == "geom":
            kind = c.get("type")
            if kind == "mesh" or c.get("mesh"):
                die(f"{path}: geom {c.get('name')!r} is a mesh; its mass needs the mesh file: "
                    "decide (give <inertial>) before shipping this model")
            if kind == "hfield" or c.get("hfield"):
                if path != "worldbody":
                    die(f"{path}: height-field geom {c.get('name')!r} on a moving body")
                body.remove(c)  # a static terrain: its <hfield> asset is dropped
                continue
            drop_visual_attrs(c)
        elif c.tag in ("body", "frame"):
            strip_body(c, keep_sites, f"{path}/{c.tag}[{c.get('name', '')}]")
        elif c.tag not in BODY_KEEP:
            die(f"{path}: unknown element <{c.tag}>")


def strip_default(d, keep_sites):
    for c in list(d):
        if c.tag in DEFAULT_DROP or (c.tag == "site" and not keep_sites):
            d.remove(c)
        elif c.tag == "default":
            strip_default(c, keep_sites)
        elif c.tag == "mesh":
            die("a <default><mesh> class: meshes are not shipped")
        elif c.tag in DEFAULT_KEEP:
            drop_visual_attrs(c)
            if c.tag in ("geom", "site") and not c.attrib and not len(c):
                d.remove(c)  # it only set visual attributes
        else:
            die(f"<default>: unknown element <{c.tag}>")


def strip(root):
    if root.tag != "mujoco":
        die(f"{root.tag} is not <mujoco>")
    keep_sites = referenced_sites(root)
    for c in list(root):
        if c.tag in TOP_DROP:
            root.remove(c)
        elif c.tag == "asset":
            for a in list(c):
                if a.tag in ASSET_DROP:
                    c.remove(a)
                elif a.tag == "mesh":
                    die(f"<asset><mesh name={a.get('name')!r}>: meshes are not shipped")
                else:
                    die(f"<asset>: unknown element <{a.tag}>")
            if not len(c):
                root.remove(c)
        elif c.tag == "worldbody":
            strip_body(c, keep_sites, "worldbody")
        elif c.tag == "default":
            strip_default(c, keep_sites)
        elif c.tag == "tendon":
            for t in c:
                drop_visual_attrs(t)
        elif c.tag not in TOP_KEEP:
            die(f"unknown top-level element <{c.tag}>")


def kept_attrs(e):
    if e.tag in VISUAL_TAGS:
        return {k: v for k, v in e.attrib.items() if k not in VISUAL_ATTRS}
    return dict(e.attrib)


def same(out, src, path):
    """`out` is `src` with some elements and visual attributes removed: every kept element's
    attributes and text equal the source's, children in the source's order."""
    here = f"{path}/{out.tag}" + (f"[{out.get('name')}]" if out.get("name") else "")
    if out.tag != src.tag or out.attrib != kept_attrs(src) \
            or (out.text or "").strip() != (src.text or "").strip():
        die(f"{here} differs from the source after stripping")
    it = iter(list(src))
    for oc in out:
        for sc in it:
            if sc.tag == oc.tag and sc.get("name") == oc.get("name"):
                same(oc, sc, here)
                break
        else:
            die(f"{here}/{oc.tag} not found in the source, in order")


def strip_file(src, out, header):
    tree = ET.parse(src)  # comments are not kept by the parser
    root = tree.getroot()
    strip(root)
    for e in root.iter():
        if not len(e) and e.text is not None and not e.text.strip():
            e.text = None  # an element emptied by stripping closes on itself
    ET.indent(tree, space="  ")
    body = ET.tostring(root, encoding="unicode")
    text = f'<?xml version="1.0" encoding="utf-8"?>\n<!-- {header} -->\n{body}\n'
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    same(ET.fromstring(body), ET.parse(src).getroot(), "")


# ---------------------------------------------------------------------------------------
# --check: MuJoCo on the source and on the stripped file

# body_ arrays that count geoms: they change where a static terrain geom was dropped.
GEOM_BOOKKEEPING = {"body_geomnum", "body_geomadr", "body_bvhadr", "body_bvhnum",
                    "body_contype", "body_conaffinity", "body_margin"}
VISUAL_ARRAYS = {"tendon_rgba", "tendon_matid", "geom_rgba", "geom_matid"}


def arrays(m, prefix):
    out = {}
    for name in dir(m):
        if name.startswith(prefix) and name not in VISUAL_ARRAYS:
            try:
                v = getattr(m, name)
            except Exception:  # noqa: BLE001 - properties that need a data pointer
                continue
            if hasattr(v, "shape"):
                out[name] = v
    return out


def equal(a, b):
    import numpy as np
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def names(mujoco, m, objtype, n):
    return [mujoco.mj_id2name(m, objtype, i) or "" for i in range(n)]


def check_pair(mujoco, src, out):
    import numpy as np
    a = mujoco.MjModel.from_xml_path(src)
    b = mujoco.MjModel.from_xml_path(out)
    bad = []

    def need(what, x, y):
        if not equal(x, y):
            bad.append(what)

    for s in ["nq", "nv", "nu", "na", "nbody", "njnt", "neq", "ntendon", "nwrap", "nkey",
              "nmesh"]:
        need(s, getattr(a, s), getattr(b, s))
    if bad:
        return bad, b
    same_geoms = a.ngeom == b.ngeom
    for prefix in ["body_", "jnt_", "dof_", "tendon_", "eq_", "actuator_", "wrap_", "key_"]:
        xa, xb = arrays(a, prefix), arrays(b, prefix)
        for k in sorted(set(xa) | set(xb)):
            if k in GEOM_BOOKKEEPING and not same_geoms:
                continue
            if k not in xa or k not in xb:
                bad.append(k)
            else:
                need(k, xa[k], xb[k])
    need("qpos0", a.qpos0, b.qpos0)
    need("qpos_spring", a.qpos_spring, b.qpos_spring)
    for f in dir(a.opt):
        if not f.startswith("_"):
            va = getattr(a.opt, f)
            if not callable(va):
                need(f"opt.{f}", va, getattr(b.opt, f))
    need("stat.meaninertia", a.stat.meaninertia, b.stat.meaninertia)
    need("stat.meanmass", a.stat.meanmass, b.stat.meanmass)
    for t, n in [(mujoco.mjtObj.mjOBJ_BODY, "nbody"), (mujoco.mjtObj.mjOBJ_JOINT, "njnt"),
                 (mujoco.mjtObj.mjOBJ_TENDON, "ntendon"), (mujoco.mjtObj.mjOBJ_EQUALITY, "neq"),
                 (mujoco.mjtObj.mjOBJ_ACTUATOR, "nu")]:
        if names(mujoco, a, t, getattr(a, n)) != names(mujoco, b, t, getattr(b, n)):
            bad.append(f"{n} names")
    # The geoms that were kept: all but the static height fields, in order.
    keep = [i for i in range(a.ngeom) if a.geom_type[i] != mujoco.mjtGeom.mjGEOM_HFIELD]
    if len(keep) != b.ngeom:
        bad.append("ngeom (less the height fields)")
    else:
        ga, gb = arrays(a, "geom_"), arrays(b, "geom_")
        for k in sorted(set(ga) | set(gb)):
            if k == "geom_dataid":
                continue
            if k not in ga or k not in gb:
                bad.append(k)
            elif ga[k].shape[:1] == (a.ngeom,):
                need(k, ga[k][keep], gb[k])
    # Dynamics at random states, contact off (the dropped terrain would change contacts).
    rng = np.random.default_rng(47)
    for m in (a, b):
        m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    da, db = mujoco.MjData(a), mujoco.MjData(b)
    for _ in range(5):
        q = a.qpos0 + rng.normal(0, 0.3, a.nq)
        v = rng.normal(0, 1.0, a.nv)
        u = rng.uniform(-1, 1, a.nu)
        for m, d in ((a, da), (b, db)):
            d.qpos[:] = q
            mujoco.mj_normalizeQuat(m, d.qpos)
            d.qvel[:] = v
            d.ctrl[:] = u
            d.act[:] = 0
            mujoco.mj_forward(m, d)
        ma, mb = np.zeros((a.nv, a.nv)), np.zeros((b.nv, b.nv))
        full_m(mujoco, a, da, ma)
        full_m(mujoco, b, db, mb)
        need("mj_fullM", ma, mb)
        for f in ("qfrc_bias", "qfrc_passive", "qfrc_actuator", "qacc", "ten_length",
                  "efc_type", "efc_pos"):
            need(f"data.{f}", getattr(da, f), getattr(db, f))
        need("data.nefc", da.nefc, db.nefc)
        need("efc_J", np.ravel(da.efc_J), np.ravel(db.efc_J))
    return sorted(set(bad)), b


def full_m(mujoco, m, d, dst):
    """mj_fullM across MuJoCo versions: (m, d, dst) from 4.0, (m, dst, qM) before."""
    try:
        mujoco.mj_fullM(m, d, dst)
    except TypeError:
        mujoco.mj_fullM(m, dst, d.qM)


def compiled(mujoco, m, path):
    bodies = []
    for i in range(m.nbody):
        bodies.append({
            "name": mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, i) or "",
            "mass": float(m.body_mass[i]),
            "inertia": [float(x) for x in m.body_inertia[i]],
            "ipos": [float(x) for x in m.body_ipos[i]],
            "iquat": [float(x) for x in m.body_iquat[i]],
        })
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    return {
        "sha256": sha,
        "nq": m.nq, "nv": m.nv, "nbody": m.nbody, "njnt": m.njnt, "neq": m.neq,
        "ntendon": m.ntendon, "nu": m.nu, "na": m.na,
        "total_mass": float(sum(m.body_mass)),
        "timestep": float(m.opt.timestep),
        "gravity": [float(x) for x in m.opt.gravity],
        "integrator": mujoco.mjtIntegrator(m.opt.integrator).name,
        "bodies": bodies,
    }


def check(json_path, pairs):
    import tempfile
    import mujoco
    # MuJoCo logs its warnings (settotalmass is deprecated) to MUJOCO_LOG.TXT in the working
    # folder: compile from a temporary one, removed after.
    json_path = os.path.abspath(json_path)
    pairs = [(os.path.abspath(s), os.path.abspath(o)) for s, o in pairs]
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        try:
            check_all(mujoco, json_path, pairs)
        finally:
            os.chdir(here)


def check_all(mujoco, json_path, pairs):
    result = {
        "about": "MuJoCo's compiled model of every shipped MJCF file (issue 47): body masses "
                 "and principal inertias (diagonal, about the body's centre of mass, in the frame "
                 "body_iquat rotates to; ipos/iquat in the body frame, quaternion w first), "
                 "written by scripts/strip_mjcf.py --check",
        "mujoco": mujoco.__version__,
        "models": {},
    }
    failed = 0
    for src, out in pairs:
        bad, m = check_pair(mujoco, src, out)
        name = os.path.basename(out)
        if bad:
            failed += 1
            print(f"strip_mjcf: {name}: MuJoCo compiles it differently from its source: "
                  + ", ".join(bad), file=sys.stderr)
        else:
            print(f"strip_mjcf: {name}: identical to the source under MuJoCo {mujoco.__version__}"
                  f" (nq {m.nq}, nv {m.nv}, nbody {m.nbody}, neq {m.neq}, ntendon {m.ntendon},"
                  f" nu {m.nu})")
        result["models"][name] = compiled(mujoco, mujoco.MjModel.from_xml_path(out), out)
    if failed:
        die(f"{failed} stripped file(s) differ from their source under MuJoCo")
    # One line per model's sizes and one per body: diffable, and every float in Python's
    # shortest round-trip form.
    lines = ["{", f' "about": {json.dumps(result["about"], ensure_ascii=False)},',
             f' "mujoco": {json.dumps(result["mujoco"])},', ' "models": {']
    models = list(result["models"].items())
    for k, (name, mod) in enumerate(models):
        head = {key: v for key, v in mod.items() if key != "bodies"}
        lines.append(f"  {json.dumps(name)}: {{")
        lines.extend(f"   {json.dumps(key)}: {json.dumps(v)}," for key, v in head.items())
        lines.append('   "bodies": [')
        bodies = mod["bodies"]
        lines.extend(f"    {json.dumps(b)}" + ("," if i + 1 < len(bodies) else "")
                     for i, b in enumerate(bodies))
        lines.append("   ]")
        lines.append("  }" + ("," if k + 1 < len(models) else ""))
    lines += [" }", "}"]
    text = "\n".join(lines) + "\n"
    if json.loads(text) != result:
        die("COMPILED.json does not read back as written")
    with open(json_path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "--check" and len(sys.argv) % 2 == 1:
        rest = sys.argv[3:]
        check(sys.argv[2], list(zip(rest[0::2], rest[1::2])))
    elif len(sys.argv) == 4:
        strip_file(*sys.argv[1:])
    else:
        die("usage: strip_mjcf.py SOURCE OUTPUT 'HEADER' | "
            "strip_mjcf.py --check COMPILED.json SOURCE OUTPUT [SOURCE OUTPUT ...]")


if __name__ == "__main__":
    main()
