//! The MJCF elements driftlab reads, with the attributes MuJoCo's schema defines for each
//! (`src/xml/mjcf.schema` of google-deepmind/mujoco, 2026): an attribute outside the list
//! is refused, as MuJoCo refuses it ("unrecognized attribute"), with the name it resembles
//! when it is a typo. Sections without dynamics (`visual`, `statistic`, `size`, `sensor`,
//! `custom`, `keyframe`, `contact`, cameras, lights, textures, materials) are skipped and
//! listed once; what MuJoCo simulates and driftlab does not (spatial tendons, `composite`,
//! `flexcomp`, `flex`, `plugin`, `replicate`, `attach`, mesh inertia) is refused with the fix.

use super::super::description::ModelError;
use super::super::xml::{clip, listing, resembles};
use super::tree::{El, Files};

/// Elements read that take no children: a child of one (a `<plugin>` in a `<geom>`, a typo)
/// is refused as any unknown element is.
const LEAVES: [&str; 17] = [
    "inertial",
    "joint",
    "freejoint",
    "geom",
    "site",
    "connect",
    "weld",
    "equality-joint",
    "equality-tendon",
    "fixed-joint",
    "motor",
    "general",
    "position",
    "velocity",
    "intvelocity",
    "damper",
    "cylinder",
];

const ORIENTATION: [&str; 5] = ["quat", "axisangle", "xyaxes", "zaxis", "euler"];

/// The attributes of `tag` (inside `<default>` when `in_default`: no `name`, `class` or
/// the schema's `nodefault` attributes), or `None` for an element driftlab does not read.
#[allow(clippy::too_many_lines)] // a data table: MuJoCo's attribute lists, one arm per element
pub fn attributes(tag: &str, in_default: bool) -> Option<Vec<&'static str>> {
    let own: &[&str] = match tag {
        "mujoco" => &["model"],
        "compiler" => &[
            "autolimits",
            "boundmass",
            "boundinertia",
            "settotalmass",
            "balanceinertia",
            "strippath",
            "coordinate",
            "angle",
            "fitaabb",
            "eulerseq",
            "meshdir",
            "texturedir",
            "discardvisual",
            "usethread",
            "fusestatic",
            "inertiafromgeom",
            "inertiagrouprange",
            "saveinertial",
            "assetdir",
            "alignfree",
            "conflict",
        ],
        "option" => &[
            "timestep",
            "impratio",
            "tolerance",
            "ls_tolerance",
            "noslip_tolerance",
            "ccd_tolerance",
            "sleep_tolerance",
            "gravity",
            "wind",
            "magnetic",
            "density",
            "viscosity",
            "o_margin",
            "o_solref",
            "o_solimp",
            "o_friction",
            "integrator",
            "cone",
            "jacobian",
            "solver",
            "iterations",
            "ls_iterations",
            "noslip_iterations",
            "ccd_iterations",
            "sdf_iterations",
            "sdf_initpoints",
            "actuatorgroupdisable",
        ],
        "flag" => &[
            "constraint",
            "equality",
            "frictionloss",
            "limit",
            "contact",
            "spring",
            "damper",
            "gravity",
            "clampctrl",
            "warmstart",
            "filterparent",
            "actuation",
            "refsafe",
            "sensor",
            "midphase",
            "eulerdamp",
            "autoreset",
            "nativeccd",
            "island",
            "multiccd",
            "override",
            "energy",
            "fwdinv",
            "invdiscrete",
            "sleep",
            "diagexact",
        ],
        "default" => &["class"],
        "worldbody" | "body" => &[
            "name",
            "childclass",
            "pos",
            "quat",
            "axisangle",
            "xyaxes",
            "zaxis",
            "euler",
            "mocap",
            "gravcomp",
            "sleep",
            "simple",
            "user",
        ],
        "frame" => &[
            "name",
            "childclass",
            "pos",
            "quat",
            "axisangle",
            "xyaxes",
            "zaxis",
            "euler",
        ],
        "inertial" => &[
            "pos",
            "quat",
            "mass",
            "diaginertia",
            "axisangle",
            "xyaxes",
            "zaxis",
            "euler",
            "fullinertia",
        ],
        "joint" => &[
            "name",
            "class",
            "type",
            "group",
            "pos",
            "axis",
            "springdamper",
            "limited",
            "actuatorfrclimited",
            "solreflimit",
            "solimplimit",
            "solreffriction",
            "solimpfriction",
            "stiffness",
            "range",
            "actuatorfrcrange",
            "actuatorgravcomp",
            "margin",
            "ref",
            "springref",
            "armature",
            "damping",
            "frictionloss",
            "user",
        ],
        "freejoint" => &["name", "group", "align"],
        "geom" => &[
            "name",
            "class",
            "type",
            "contype",
            "conaffinity",
            "condim",
            "group",
            "priority",
            "size",
            "material",
            "friction",
            "mass",
            "density",
            "shellinertia",
            "solmix",
            "solref",
            "solimp",
            "margin",
            "gap",
            "surfacevel",
            "adhesion",
            "fromto",
            "pos",
            "quat",
            "axisangle",
            "xyaxes",
            "zaxis",
            "euler",
            "hfield",
            "mesh",
            "fitscale",
            "rgba",
            "fluidshape",
            "fluidcoef",
            "user",
        ],
        "site" => &[
            "name",
            "class",
            "type",
            "group",
            "pos",
            "quat",
            "axisangle",
            "xyaxes",
            "zaxis",
            "euler",
            "material",
            "size",
            "fromto",
            "rgba",
            "user",
        ],
        "connect" => &[
            "name", "class", "active", "solref", "solimp", "body1", "body2", "anchor", "site1",
            "site2",
        ],
        "weld" => &[
            "name",
            "class",
            "active",
            "solref",
            "solimp",
            "body1",
            "body2",
            "relpose",
            "anchor",
            "site1",
            "site2",
            "torquescale",
        ],
        "equality-joint" => &[
            "name", "class", "active", "solref", "solimp", "joint1", "joint2", "polycoef",
        ],
        "equality-tendon" => &[
            "name", "class", "active", "solref", "solimp", "tendon1", "tendon2", "polycoef",
        ],
        "equality" => &["name", "class", "active", "solref", "solimp"],
        "fixed" | "tendon" => &[
            "name",
            "class",
            "group",
            "limited",
            "actuatorfrclimited",
            "range",
            "actuatorfrcrange",
            "solreflimit",
            "solimplimit",
            "solreffriction",
            "solimpfriction",
            "frictionloss",
            "springlength",
            "margin",
            "stiffness",
            "damping",
            "armature",
            "user",
            "width",
            "material",
            "rgba",
        ],
        "fixed-joint" => &["joint", "coef"],
        "motor" | "general" | "position" | "velocity" | "intvelocity" | "damper" | "cylinder" => &[
            "name",
            "class",
            "group",
            "nsample",
            "interp",
            "delay",
            "ctrlrange",
            "user",
            "ctrllimited",
            "forcelimited",
            "actlimited",
            "forcerange",
            "actrange",
            "lengthrange",
            "gear",
            "damping",
            "armature",
            "cranklength",
            "joint",
            "jointinparent",
            "tendon",
            "slidersite",
            "cranksite",
            "site",
            "refsite",
            "body",
            "actdim",
            "input",
            "velrange",
            "ffrange",
            "dyntype",
            "gaintype",
            "biastype",
            "dynprm",
            "gainprm",
            "biasprm",
            "actearly",
            "inheritrange",
            "kp",
            "kv",
            "dampratio",
            "timeconst",
            "area",
            "diameter",
            "bias",
        ],
        "mesh" => &[
            "name",
            "class",
            "content_type",
            "file",
            "vertex",
            "normal",
            "texcoord",
            "face",
            "refpos",
            "refquat",
            "scale",
            "smoothnormal",
            "maxhullvert",
            "inertia",
            "builtin",
            "params",
            "material",
        ],
        _ => return None,
    };
    let nodefault = [
        "name",
        "class",
        "childclass",
        "joint",
        "jointinparent",
        "tendon",
        "slidersite",
        "cranksite",
        "site",
        "refsite",
        "body",
        "lengthrange",
        "file",
        "vertex",
        "normal",
        "texcoord",
        "face",
        "refpos",
        "refquat",
        "smoothnormal",
        "builtin",
        "params",
        "body1",
        "body2",
        "site1",
        "site2",
        "joint1",
        "joint2",
        "tendon1",
        "tendon2",
        "anchor",
        "relpose",
    ];
    Some(
        own.iter()
            .copied()
            .filter(|a| tag == "default" || !in_default || !nodefault.contains(a))
            .collect(),
    )
}

/// Refuse an attribute of `el` that `tag`'s schema does not define (a typo named with the
/// attribute it resembles), an attribute given twice by orientation (MuJoCo's exclusive
/// orientation forms), and a value of more than 100 000 characters.
pub fn check_attributes(
    files: &Files, el: &El, tag: &str, in_default: bool,
) -> Result<(), ModelError> {
    let known = attributes(tag, in_default).unwrap_or_default();
    for (name, value) in &el.attrs {
        if value.len() > 100_000 {
            return Err(files.err(
                el,
                format!(
                    "attribute `{}` holds {} characters",
                    clip(name),
                    value.len()
                ),
                "an MJCF attribute holds a few numbers; check that this is the model file",
            ));
        }
        if known.contains(&name.as_str()) {
            continue;
        }
        let fix = match resembles(name, &known) {
            Some(like) => format!(
                "it resembles `{like}`: write `{like}` (MuJoCo refuses an unknown attribute too)"
            ),
            None => format!("<{}> takes {}", el.tag, listing(&known, "`", "`")),
        };
        return Err(files.err(
            el,
            format!(
                "attribute `{}` is not one of <{}>'s in MuJoCo's schema",
                clip(name),
                el.tag
            ),
            fix,
        ));
    }
    if LEAVES.contains(&tag) {
        check_children(files, el, &[], &[])?;
    }
    let given: Vec<&str> = ORIENTATION
        .iter()
        .copied()
        .filter(|a| el.attr(a).is_some())
        .collect();
    if given.len() > 1 {
        return Err(files.err(
            el,
            format!("two orientations given: `{}` and `{}`", given[0], given[1]),
            "give one of quat, axisangle, xyaxes, zaxis, euler (MuJoCo refuses both)",
        ));
    }
    Ok(())
}

/// Refuse a child of `el` outside `allowed`: one MuJoCo simulates and driftlab does not,
/// with the fix, and anything else as a typo or unknown element.
pub fn check_children(
    files: &Files, el: &El, allowed: &[&str], skipped: &[&str],
) -> Result<(), ModelError> {
    for c in &el.children {
        let tag = c.tag.as_str();
        if allowed.contains(&tag) || skipped.contains(&tag) {
            continue;
        }
        if let Some(fix) = unsupported(tag) {
            return Err(files.err(c, format!("<{}> is not read by driftlab", clip(tag)), fix));
        }
        let mut known: Vec<&str> = allowed.to_vec();
        known.extend_from_slice(skipped);
        let fix = match resembles(tag, &known) {
            Some(like) => format!("it resembles <{like}>: write <{like}>"),
            None => format!("<{}> takes {}", el.tag, listing(&known, "<", ">")),
        };
        return Err(files.err(
            c,
            format!(
                "element <{}> is not a child of <{}> in MuJoCo's schema",
                clip(tag),
                el.tag
            ),
            fix,
        ));
    }
    Ok(())
}

/// The fix for an MJCF element MuJoCo simulates and driftlab does not.
pub fn unsupported(tag: &str) -> Option<&'static str> {
    Some(match tag {
        "composite" | "flexcomp" => "driftlab reads rigid bodies: expand the composite into bodies and joints (MuJoCo's compiled model, saved with mj_saveLastXML, has them)",
        "flex" | "deformable" | "flexvert" | "flexstrain" => "deformable bodies are not read: remove them for a rigid-body study",
        "plugin" | "extension" => "engine plugins are not read: remove them (their forces are not rigid-body dynamics)",
        "replicate" => "expand <replicate> (MuJoCo's compiled model, saved with mj_saveLastXML, has the copies)",
        "attach" => "attach the sub-model in MuJoCo and save the result with mj_saveLastXML",
        "spatial" => "spatial tendons (through sites and wrapping geoms) are not read; fixed tendons (linear in joint positions) are",
        _ => return None,
    })
}
