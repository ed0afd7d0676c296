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
pub fn urdf_with(from: &str, to: &str) -> String {
    let base = urdf();
    assert!(base.contains(from), "the base URDF has no `{from}`");
    base.replacen(from, to, 1)
}

/// A valid TOML model (one pendulum), broken by the TOML cases.
pub fn toml_model() -> String {
    "[[bodies]]\nname = \"bob\"\nmass = 1.0\ncom = [0.0, 0.0, -0.5]\ninertia = { ixx = 0.01, iyy = 0.01, izz = 0.001 }\n\n[[bodies]]\nname = \"tip\"\nmass = 0.1\ninertia = { ixx = 1e-4, iyy = 1e-4, izz = 1e-4 }\n\n[[joints]]\nname = \"pin\"\ntype = \"revolute\"\nparent = \"world\"\nchild = \"bob\"\naxis = [0.0, 1.0, 0.0]\n\n[[joints]]\nname = \"weld\"\ntype = \"fixed\"\nparent = \"bob\"\nchild = \"tip\"\n".into()
}

/// Write `text` as `name` in `dir` and simulate it.
fn simulate(dir: &Path, name: &str, text: &[u8]) -> Ran {
    simulate_with(dir, name, text, &[])
}

/// Write `text` as `name` in `dir` and simulate it with the extra `--set` parameters.
pub fn simulate_with(dir: &Path, name: &str, text: &[u8], sets: &[&str]) -> Ran {
    std::fs::write(dir.join(name), text).expect("write model");
    let file = format!("file=\"{name}\"");
    let mut args = vec![
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
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    driftlab(&strings(&args, dir), dir)
}

/// Write `text` as `name` in `dir` and `describe model` it: the run and what it printed.
pub fn describe(dir: &Path, name: &str, text: &[u8], sets: &[&str]) -> (Ran, String) {
    std::fs::write(dir.join(name), text).expect("write model");
    let file = format!("file=\"{name}\"");
    let mut args = vec!["describe", "model", "--set", &file];
    for s in sets {
        args.extend(["--set", s]);
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_driftlab"))
        .args(&args)
        .current_dir(dir)
        .output()
        .expect("binary starts");
    let ran = Ran {
        code: out.status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        out: dir.join("out"),
    };
    (ran, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `describe` of `text` exits 0 and lists each of `notes` among what it skipped or kept.
pub fn loads_listing(dir: &Path, name: &str, text: &str, sets: &[&str], notes: &[&str]) -> Ran {
    let (ran, stdout) = describe(dir, name, text.as_bytes(), sets);
    assert_eq!(ran.code, Some(0), "{name} does not load: {}", ran.stderr);
    for n in notes {
        assert!(
            stdout.contains(n),
            "describe does not list `{n}`:\n{stdout}"
        );
    }
    ran
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
/// The lower link's inertia with a product of inertia that makes it indefinite.
fn indefinite() -> String {
    urdf_with(
        r#"ixx="0.01" ixy="0" ixz="0" iyy="0.01""#,
        r#"ixx="0.01" ixy="0.05" ixz="0" iyy="0.01""#,
    )
}

/// The upper link's inertia as a rod about the wrong axis (I₃ > I₁ + I₂).
fn rod() -> String {
    urdf_with(
        r#"ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.001""#,
        r#"ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.02""#,
    )
}

pub fn not_positive(dir: &Path) -> Ran {
    simulate_with(
        dir,
        "arm.urdf",
        indefinite().as_bytes(),
        &["inertia=\"refuse\""],
    )
}

pub fn triangle(dir: &Path) -> Ran {
    simulate_with(dir, "arm.urdf", rod().as_bytes(), &["inertia=\"refuse\""])
}

/// By default such an inertia loads as published and is listed; `balance` makes it
/// isotropic (listed too).
pub fn triangle_kept(dir: &Path) -> Ran {
    let note =
        "violate the triangle inequality I₁ + I₂ ≥ I₃ (2.0000e-3 < 2.0000e-2): kept as published";
    loads_listing(dir, "arm.urdf", &rod(), &[], &[note]);
    let balanced = "balanced to the isotropic inertia 7.3333e-3·1";
    loads_listing(
        dir,
        "arm.urdf",
        &rod(),
        &["inertia=\"balance\""],
        &[balanced],
    )
}

/// A vendor element inside a joint is skipped and listed, not refused.
pub fn unknown_tag(dir: &Path) -> Ran {
    let text = urdf_with(
        "    <axis xyz=\"0 1 0\"/>\n  </joint>\n</robot>",
        "    <axis xyz=\"0 1 0\"/>\n    <spring k=\"3\"/>\n  </joint>\n</robot>",
    );
    let note = "line 27, <spring> in <joint name=\"elbow\">: element <spring> skipped: not in the URDF specification of <joint>";
    loads_listing(dir, "arm.urdf", &text, &[], &[note])
}

/// A mimic of a joint the file lacks is dropped and listed (Pinocchio's reading).
pub fn mimic_unknown(dir: &Path) -> Ran {
    let text = urdf_with(
        "    <axis xyz=\"0 1 0\"/>\n  </joint>\n</robot>",
        "    <axis xyz=\"0 1 0\"/>\n    <mimic joint=\"wrist\"/>\n  </joint>\n</robot>",
    );
    let note = "<mimic joint=\"wrist\"> dropped: the file has no joint `wrist`, so `elbow` moves on its own";
    loads_listing(dir, "arm.urdf", &text, &[], &[note])
}
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
    zero_axis,
    r#"<axis xyz="0 1 0"/>"#,
    r#"<axis xyz="0 0 0"/>"#
);
urdf_case!(xacro, r#"<robot name="arm">"#, "<robot name=\"arm\" xmlns:xacro=\"http://www.ros.org/wiki/xacro\">\n  <xacro:property name=\"l\" value=\"0.4\"/>");

toml_case!(toml_no_axis, "axis = [0.0, 1.0, 0.0]\n", "");
toml_case!(toml_loop_to_itself, "child = \"tip\"\n", "child = \"tip\"\n\n[[loops]]\nname = \"self\"\ntype = \"ball\"\nbody_a = \"bob\"\nbody_b = \"bob\"\n");
pub fn toml_zero_mass_inertia(dir: &Path) -> Ran {
    let text = toml_model().replacen("mass = 0.1\n", "mass = 0.0\n", 1);
    simulate_with(
        dir,
        "pendulum.toml",
        text.as_bytes(),
        &["inertia=\"refuse\""],
    )
}

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
