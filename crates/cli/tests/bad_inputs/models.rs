//! The model-file cases of issue 28: a URDF or TOML model that cannot be used is refused
//! by `simulate --problem model --set file=…` before anything runs (exit 2), the message
//! naming the file, the element (with its line, for XML) and the fix. Each function
//! writes its file into the case's folder and runs the binary there.

use super::{driftlab, strings, Ran};
use std::path::Path;

/// A valid two-link URDF, one element per line; the cases break one thing in it.
pub fn urdf() -> String {
    [
        r#"<?xml version="1.0"?>"#,
        r#"<robot name="arm">"#,
        r#"  <link name="base"/>"#,
        r#"  <link name="upper">"#,
        r#"    <inertial>"#,
        r#"      <origin xyz="0 0 0.2" rpy="0 0 0"/>"#,
        r#"      <mass value="1.5"/>"#,
        r#"      <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.001"/>"#,
        r#"    </inertial>"#,
        r#"  </link>"#,
        r#"  <link name="lower">"#,
        r#"    <inertial>"#,
        r#"      <mass value="1.0"/>"#,
        r#"      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/>"#,
        r#"    </inertial>"#,
        r#"  </link>"#,
        r#"  <joint name="shoulder" type="revolute">"#,
        r#"    <parent link="base"/>"#,
        r#"    <child link="upper"/>"#,
        r#"    <axis xyz="0 1 0"/>"#,
        r#"  </joint>"#,
        r#"  <joint name="elbow" type="revolute">"#,
        r#"    <origin xyz="0 0 0.4"/>"#,
        r#"    <parent link="upper"/>"#,
        r#"    <child link="lower"/>"#,
        r#"    <axis xyz="0 1 0"/>"#,
        r#"  </joint>"#,
        r#"</robot>"#,
    ]
    .join("\n")
}

/// `urdf()` with `from` replaced by `to` (which must occur).
fn urdf_with(from: &str, to: &str) -> String {
    let base = urdf();
    assert!(base.contains(from), "the base URDF has no `{from}`");
    base.replacen(from, to, 1)
}

/// A valid TOML model (one pendulum), broken by the TOML cases.
fn toml_model() -> String {
    "[[bodies]]\nname = \"bob\"\nmass = 1.0\ncom = [0.0, 0.0, -0.5]\ninertia = { ixx = 0.01, iyy = 0.01, izz = 0.001 }\n\n[[bodies]]\nname = \"tip\"\nmass = 0.1\ninertia = { ixx = 1e-4, iyy = 1e-4, izz = 1e-4 }\n\n[[joints]]\nname = \"pin\"\ntype = \"revolute\"\nparent = \"world\"\nchild = \"bob\"\naxis = [0.0, 1.0, 0.0]\n\n[[joints]]\nname = \"weld\"\ntype = \"fixed\"\nparent = \"bob\"\nchild = \"tip\"\n".into()
}

/// Write `text` as `name` in `dir` and simulate it.
fn simulate(dir: &Path, name: &str, text: &[u8]) -> Ran {
    std::fs::write(dir.join(name), text).expect("write model");
    let file = format!("file=\"{name}\"");
    driftlab(
        &strings(
            &[
                "simulate",
                "--problem",
                "model",
                "--method",
                "rattle",
                "--h",
                "1e-2",
                "--t-end",
                "0.1",
                "--set",
                &file,
            ],
            dir,
        ),
        dir,
    )
}

macro_rules! urdf_case {
    ($name:ident, $from:expr, $to:expr) => {
        pub fn $name(dir: &Path) -> Ran {
            simulate(dir, "arm.urdf", urdf_with($from, $to).as_bytes())
        }
    };
}

macro_rules! toml_case {
    ($name:ident, $from:expr, $to:expr) => {
        pub fn $name(dir: &Path) -> Ran {
            let base = toml_model();
            assert!(base.contains($from), "the base model has no `{}`", $from);
            simulate(
                dir,
                "pendulum.toml",
                base.replacen($from, $to, 1).as_bytes(),
            )
        }
    };
}

urdf_case!(
    cycle,
    r#"<child link="upper"/>"#,
    r#"<child link="lower"/>"#
);
urdf_case!(
    missing_parent,
    r#"<parent link="upper"/>"#,
    r#"<parent link="forearm"/>"#
);
urdf_case!(no_child, "    <child link=\"lower\"/>\n", "");
urdf_case!(
    negative_mass,
    r#"<mass value="1.0"/>"#,
    r#"<mass value="-1.0"/>"#
);
urdf_case!(massless_joint, "      <mass value=\"1.0\"/>\n      <inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.001\"/>", "      <mass value=\"0\"/>\n      <inertia ixx=\"0\" ixy=\"0\" ixz=\"0\" iyy=\"0\" iyz=\"0\" izz=\"0\"/>");
urdf_case!(
    not_positive,
    r#"ixx="0.01" ixy="0" ixz="0" iyy="0.01""#,
    r#"ixx="0.01" ixy="0.05" ixz="0" iyy="0.01""#
);
urdf_case!(
    triangle,
    r#"ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.001""#,
    r#"ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.02""#
);
urdf_case!(
    nan,
    r#"<origin xyz="0 0 0.4"/>"#,
    r#"<origin xyz="0 nan 0.4"/>"#
);
urdf_case!(
    planar,
    r#"name="elbow" type="revolute""#,
    r#"name="elbow" type="planar""#
);
urdf_case!(
    unknown_tag,
    "    <axis xyz=\"0 1 0\"/>\n  </joint>\n</robot>",
    "    <axis xyz=\"0 1 0\"/>\n    <spring k=\"3\"/>\n  </joint>\n</robot>"
);
urdf_case!(
    zero_axis,
    r#"<origin xyz="0 0 0.4"/>"#,
    "<origin xyz=\"0 0 0.4\"/>\n    <axis xyz=\"0 0 0\"/>"
);
urdf_case!(
    mimic_unknown,
    "    <axis xyz=\"0 1 0\"/>\n  </joint>\n</robot>",
    "    <axis xyz=\"0 1 0\"/>\n    <mimic joint=\"wrist\"/>\n  </joint>\n</robot>"
);
urdf_case!(xacro, r#"<robot name="arm">"#, "<robot name=\"arm\" xmlns:xacro=\"http://www.ros.org/wiki/xacro\">\n  <xacro:property name=\"l\" value=\"0.4\"/>");

toml_case!(toml_no_axis, "axis = [0.0, 1.0, 0.0]\n", "");
toml_case!(toml_loop_to_itself, "child = \"tip\"\n", "child = \"tip\"\n\n[[loops]]\nname = \"self\"\ntype = \"ball\"\nbody_a = \"bob\"\nbody_b = \"bob\"\n");
toml_case!(toml_zero_mass_inertia, "mass = 0.1\n", "mass = 0.0\n");

/// Bytes that are not XML.
pub fn not_xml(dir: &Path) -> Ran {
    simulate(dir, "arm.urdf", b"robot: arm\nlinks: [base, upper]\n")
}

/// A 100 MB file (sparse: no 100 MB is written to disk).
pub fn huge(dir: &Path) -> Ran {
    let f = std::fs::File::create(dir.join("huge.urdf")).expect("create");
    f.set_len(100 << 20).expect("set_len");
    let file = "file=\"huge.urdf\"";
    driftlab(
        &strings(
            &[
                "simulate",
                "--problem",
                "model",
                "--method",
                "rattle",
                "--h",
                "1e-2",
                "--set",
                file,
            ],
            dir,
        ),
        dir,
    )
}
