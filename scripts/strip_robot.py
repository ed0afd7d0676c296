#!/usr/bin/env python3
"""Strip a URDF or SDF robot description to what dynamics needs (issue 28).

Keeps, for URDF: <robot name>, every <link name> with its <inertial>, every <joint> with
all its children. For SDF: <sdf version>, <model name> with its <pose>, every <link> with
its <pose> and <inertial>, every <joint> with all its children. Drops visual, collision,
sensors, plugins, materials, gazebo/transmission elements and comments. Numbers are kept
as the source's text. Then checks that every kept element's attributes and text equal the
source's. Usage: strip_robot.py SOURCE OUTPUT 'HEADER COMMENT'
"""
import sys
import xml.etree.ElementTree as ET

KEEP_URDF_LINK = {"inertial"}
KEEP_SDF_LINK = {"pose", "inertial"}


def strip(root):
    if root.tag == "robot":
        for child in list(root):
            if child.tag == "link":
                for c in list(child):
                    if c.tag not in KEEP_URDF_LINK:
                        child.remove(c)
            elif child.tag != "joint":
                root.remove(child)
    elif root.tag == "sdf":
        for model in root.findall("model"):
            for child in list(model):
                if child.tag == "link":
                    for c in list(child):
                        if c.tag not in KEEP_SDF_LINK:
                            child.remove(c)
                elif child.tag not in ("joint", "pose"):
                    model.remove(child)
    else:
        sys.exit(f"strip_robot: {root.tag} is neither <robot> nor <sdf>")


def same(a, b, path):
    if a.tag != b.tag or a.attrib != b.attrib or (a.text or "").strip() != (b.text or "").strip():
        sys.exit(f"strip_robot: {path}/{a.tag} differs after stripping")
    for ca, cb in zip(list(a), list(b)):
        same(ca, cb, f"{path}/{a.tag}")


def main():
    src, out, header = sys.argv[1], sys.argv[2], sys.argv[3]
    tree = ET.parse(src)
    root = tree.getroot()
    strip(root)
    ET.indent(tree, space="  ")
    body = ET.tostring(root, encoding="unicode")
    text = f'<?xml version="1.0" encoding="utf-8"?>\n<!-- {header} -->\n{body}\n'
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    # Every kept element equals the source's.
    source = ET.parse(src).getroot()
    kept = ET.fromstring(body)
    index = {}
    holders = [source] + source.findall("model")
    for h in holders:
        for e in h:
            if e.tag in ("link", "joint") and e.get("name"):
                index[(e.tag, e.get("name"))] = e
    for e in [c for h in [kept] + kept.findall("model") for c in h]:
        if e.tag == "joint":
            same(e, index[("joint", e.get("name"))], "")
        if e.tag == "link":
            for c in e:
                orig = index[("link", e.get("name"))].find(c.tag)
                same(c, orig, e.get("name"))


if __name__ == "__main__":
    main()
