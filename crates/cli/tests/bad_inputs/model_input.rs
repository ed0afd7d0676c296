//! The model-file cases of issue 45: hostile nesting and sizes refused before any cost,
//! typos and duplicates refused with their line, vendor extensions loaded and listed, SDF
//! read as its specification says (or refused where driftlab cannot model it), mimic
//! cycles named, models with nothing to integrate refused, loops that assemble off their
//! drawn pose, and a model file changed under an interrupted run. Each function writes
//! its file into the case's folder and runs the binary there.

use super::models::{describe, loads_listing, simulate_with, toml_model, urdf, urdf_with};
use super::{driftlab, strings, Ran};
use std::path::Path;

/// `urdf()` with its base link's empty element replaced by `inside` (a link with content).
fn urdf_base(inside: &str) -> String {
    urdf_with(
        r#"<link name="base"/>"#,
        &format!("<link name=\"base\">{inside}</link>"),
    )
}

fn refused_urdf(dir: &Path, text: &str) -> Ran {
    simulate_with(dir, "arm.urdf", text.as_bytes(), &[])
}

pub fn deep_urdf(dir: &Path) -> Ran {
    let n = 50_000;
    let text = urdf_base(&format!(
        "<visual>{}{}</visual>",
        "<g>".repeat(n),
        "</g>".repeat(n)
    ));
    refused_urdf(dir, &text)
}

pub fn deep_sdf(dir: &Path) -> Ran {
    let n = 50_000;
    let text = sdf(
        &format!(
            "<plugin name=\"p\">{}{}</plugin>",
            "<g>".repeat(n),
            "</g>".repeat(n)
        ),
        "",
    );
    simulate_with(dir, "p.sdf", text.as_bytes(), &[])
}

pub fn too_many_links(dir: &Path) -> Ran {
    let mut text = String::from("<robot name=\"c\">\n<link name=\"l0\"/>\n");
    for k in 1..=1500 {
        text.push_str(&format!("<link name=\"l{k}\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>\n<joint name=\"j{k}\" type=\"revolute\"><parent link=\"l{}\"/><child link=\"l{k}\"/></joint>\n", k - 1));
    }
    text.push_str("</robot>\n");
    refused_urdf(dir, &text)
}

/// 100 000 vendor elements: loaded, the first 1 000 listed and the rest counted, in
/// bounded time.
pub fn many_vendor_elements(dir: &Path) -> Ran {
    let text = urdf_base(&"<sensor_tag/>".repeat(100_000));
    let start = std::time::Instant::now();
    let ran = loads_listing(
        dir,
        "arm.urdf",
        &text,
        &[],
        &["99000 more notes like the ones above, not listed"],
    );
    assert!(
        start.elapsed().as_secs_f64() < 60.0,
        "{:?}",
        start.elapsed()
    );
    ran
}

pub fn misspelled_attribute(dir: &Path) -> Ran {
    refused_urdf(
        dir,
        &urdf_with(r#"<axis xyz="0 1 0"/>"#, r#"<axis xzy="0 1 0"/>"#),
    )
}

pub fn misspelled_element(dir: &Path) -> Ran {
    let text = urdf_with(
        "    <child link=\"lower\"/>\n",
        "    <child link=\"lower\"/>\n    <limt lower=\"0\" upper=\"1\"/>\n",
    );
    refused_urdf(dir, &text)
}

pub fn second_inertial(dir: &Path) -> Ran {
    let text = urdf_with("    </inertial>\n  </link>\n  <link name=\"lower\">", "    </inertial>\n    <inertial><mass value=\"2\"/></inertial>\n  </link>\n  <link name=\"lower\">");
    refused_urdf(dir, &text)
}

pub fn second_parent(dir: &Path) -> Ran {
    let text = urdf_with(
        "    <parent link=\"upper\"/>\n",
        "    <parent link=\"upper\"/>\n    <parent link=\"base\"/>\n",
    );
    refused_urdf(dir, &text)
}

pub fn vendor_attribute(dir: &Path) -> Ran {
    let text = urdf_with(
        r#"<joint name="elbow" type="revolute">"#,
        r#"<joint name="elbow" type="revolute" dont_collapse="true">"#,
    );
    loads_listing(
        dir,
        "arm.urdf",
        &text,
        &[],
        &["attribute `dont_collapse` skipped: not in the URDF specification of <joint>"],
    )
}

pub fn mimic_cycle(dir: &Path) -> Ran {
    let text = urdf_with("    <axis xyz=\"0 1 0\"/>\n  </joint>\n  <joint name=\"elbow\"", "    <axis xyz=\"0 1 0\"/>\n    <mimic joint=\"elbow\"/>\n  </joint>\n  <joint name=\"elbow\"")
        .replace("    <axis xyz=\"0 1 0\"/>\n  </joint>\n</robot>", "    <axis xyz=\"0 1 0\"/>\n    <mimic joint=\"shoulder\"/>\n  </joint>\n</robot>");
    refused_urdf(dir, &text)
}

pub fn mimic_on_fixed(dir: &Path) -> Ran {
    let text = urdf_with(
        r#"name="elbow" type="revolute""#,
        r#"name="elbow" type="fixed""#,
    )
    .replace(
        "    <axis xyz=\"0 1 0\"/>\n  </joint>\n</robot>",
        "    <mimic joint=\"shoulder\"/>\n  </joint>\n</robot>",
    );
    loads_listing(
        dir,
        "arm.urdf",
        &text,
        &[],
        &["<mimic joint=\"shoulder\"> on a fixed joint dropped"],
    )
}

pub fn all_fixed(dir: &Path) -> Ran {
    refused_urdf(dir, &urdf().replace("type=\"revolute\"", "type=\"fixed\""))
}

pub fn no_links(dir: &Path) -> Ran {
    refused_urdf(
        dir,
        "<?xml version=\"1.0\"?>\n<robot name=\"empty\">\n</robot>\n",
    )
}

/// A mass ratio of 1e15: M is numerically singular, and the message says the mass is
/// there (not missing).
pub fn mass_ratio(dir: &Path) -> Ran {
    let text = urdf_with(r#"<mass value="1.0"/>"#, r#"<mass value="1e-15"/>"#).replace(
        r#"ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001""#,
        r#"ixx="1e-18" ixy="0" ixz="0" iyy="1e-18" iyz="0" izz="1e-19""#,
    );
    refused_urdf(dir, &text)
}

pub fn long_axis(dir: &Path) -> Ran {
    let text = urdf_with(r#"<axis xyz="0 1 0"/>"#, r#"<axis xyz="0 1e300 1e300"/>"#);
    loads_listing(dir, "arm.urdf", &text, &[], &[])
}

pub fn q0_string(dir: &Path) -> Ran {
    simulate_with(
        dir,
        "arm.urdf",
        urdf().as_bytes(),
        &["q0={ shoulder = \"up\" }"],
    )
}

pub fn inertia_policy_typo(dir: &Path) -> Ran {
    simulate_with(dir, "arm.urdf", urdf().as_bytes(), &["inertia=\"wobbly\""])
}

/// A two-link SDF pendulum; `link` goes into the arm link, `model` into the model.
fn sdf(model: &str, link: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n  <model name=\"p\">\n    <link name=\"base\"/>\n    <link name=\"arm\">\n      <pose>0 0 1 0.5 0 0</pose>\n      <inertial><pose>0 0 -0.5 0 0 0</pose><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.01</izz></inertia></inertial>\n      {link}\n    </link>\n    <joint name=\"hinge\" type=\"revolute\">\n      <parent>base</parent>\n      <child>arm</child>\n      <axis><xyz>0 1 0</xyz><limit><upper>0.8</upper></limit></axis>\n    </joint>\n    {model}\n  </model>\n</sdf>\n"
    )
}

/// The model-dynamics samples (`M` and the acceleration at 3 states) of `text` as `name`.
fn samples(dir: &Path, name: &str, text: &str) -> String {
    std::fs::write(dir.join(name), text).expect("write");
    let out = dir.join(format!("{name}.json"));
    let file = format!("file=\"{name}\"");
    let args = [
        "model-dynamics",
        "--set",
        &file,
        "--states",
        "3",
        "--out",
        out.to_str().expect("utf-8"),
    ];
    let ran = driftlab(&strings(&args, dir), dir);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out).expect("samples")).expect("json");
    doc["samples"].to_string()
}

/// `<pose degrees="true">` is read in degrees: the same dynamics as the pose in radians.
pub fn sdf_degrees(dir: &Path) -> Ran {
    let radians = samples(dir, "r.sdf", &sdf("", ""));
    let degrees = sdf("", "").replace(
        "<pose>0 0 1 0.5 0 0</pose>",
        &format!(
            "<pose degrees=\"true\">0 0 1 {} 0 0</pose>",
            0.5_f64.to_degrees()
        ),
    );
    assert_eq!(
        samples(dir, "d.sdf", &degrees),
        radians,
        "degrees read as radians"
    );
    simulate_with(dir, "d.sdf", degrees.as_bytes(), &[])
}

pub fn sdf_expressed_in(dir: &Path) -> Ran {
    let text = sdf("", "").replace(
        "<axis><xyz>0 1 0</xyz>",
        "<axis><xyz expressed_in=\"nowhere\">0 1 0</xyz>",
    );
    simulate_with(dir, "p.sdf", text.as_bytes(), &[])
}

pub fn sdf_static(dir: &Path) -> Ran {
    simulate_with(
        dir,
        "p.sdf",
        sdf("<static>true</static>", "").as_bytes(),
        &[],
    )
}

pub fn sdf_link_gravity(dir: &Path) -> Ran {
    simulate_with(
        dir,
        "p.sdf",
        sdf("", "<gravity>false</gravity>").as_bytes(),
        &[],
    )
}

pub fn sdf_second_model(dir: &Path) -> Ran {
    let text = sdf("", "").replace(
        "</model>\n</sdf>",
        "</model>\n  <model name=\"q\"/>\n</sdf>",
    );
    simulate_with(dir, "p.sdf", text.as_bytes(), &[])
}

/// An upper limit alone is a stop: enforced, the pendulum runs under Moreau–Jean (before,
/// the limit was dropped and the model refused for having none).
pub fn sdf_upper_limit(dir: &Path) -> Ran {
    std::fs::write(dir.join("p.sdf"), sdf("", "")).expect("write");
    let args = [
        "simulate",
        "--problem",
        "model",
        "--method",
        "moreau-jean",
        "--h",
        "1e-3",
        "--t-end",
        "0.1",
        "--set",
        "file=\"p.sdf\"",
        "--set",
        "limits=\"enforce\"",
    ];
    let ran = driftlab(&strings(&args, dir), dir);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    ran
}

pub fn sdf_no_inertial(dir: &Path) -> Ran {
    let text = sdf("", "").replace("<inertial><pose>0 0 -0.5 0 0 0</pose><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.01</izz></inertia></inertial>", "");
    loads_listing(
        dir,
        "p.sdf",
        &text,
        &[],
        &["no <inertial>: SDF's default, mass 1 and unit inertia at the link origin"],
    )
}

pub fn sdf_gearbox_unhinged(dir: &Path) -> Ran {
    let gear = "<link name=\"rotor\"><inertial><mass>0.1</mass></inertial></link>\n<joint name=\"gear\" type=\"gearbox\"><parent>rotor</parent><child>arm</child><gearbox_reference_body>base</gearbox_reference_body><gearbox_ratio>0.04</gearbox_ratio><axis><xyz>1 0 0</xyz></axis><axis2><xyz>0 1 0</xyz></axis2></joint>\n<joint name=\"motor\" type=\"revolute\"><parent>arm</parent><child>rotor</child><axis><xyz>1 0 0</xyz></axis></joint>";
    simulate_with(dir, "p.sdf", sdf(gear, "").as_bytes(), &[])
}

/// `root = "floating"` on a TOML model held to the world by its own joint.
pub fn toml_floating_held(dir: &Path) -> Ran {
    simulate_with(
        dir,
        "pendulum.toml",
        toml_model().as_bytes(),
        &["root=\"floating\""],
    )
}

/// `root = "floating"` on a TOML model whose base has no joint: a free base (n + 7).
pub fn toml_floating_free(dir: &Path) -> Ran {
    let text =
        "[[bodies]]\nname = \"block\"\nmass = 1.0\ninertia = { ixx = 0.1, iyy = 0.1, izz = 0.1 }\n";
    std::fs::write(dir.join("block.toml"), text).expect("write");
    let fixed = describe(dir, "block.toml", text.as_bytes(), &[]).0;
    assert!(
        fixed.stderr.contains("no degree of freedom"),
        "{}",
        fixed.stderr
    );
    let (ran, out) = describe(dir, "block.toml", text.as_bytes(), &["root=\"floating\""]);
    assert!(out.contains("n = 7 (q)"), "{out}");
    ran
}

/// A planar four-bar closed by a ball joint (a redundant row) starts from ten seeded
/// poses, and `compare-methods` runs it (removing the row), every row ok.
pub fn four_bar_seeded(dir: &Path) -> Ran {
    let text = std::fs::read_to_string(
        super::root().join("crates/problems/tests/data/four-bar-ball.toml"),
    )
    .expect("four-bar");
    for seed in 1..=10 {
        let (ran, _) = describe(
            dir,
            "four-bar.toml",
            text.as_bytes(),
            &[&format!("pose_seed={seed}")],
        );
        assert_eq!(ran.code, Some(0), "seed {seed}: {}", ran.stderr);
    }
    let args = [
        "compare-methods",
        "four-bar.toml",
        "--size",
        "quick",
        "--out",
        "cm",
    ];
    let ran = driftlab(&strings(&args, dir), dir);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let runs =
        std::fs::read_to_string(dir.join("cm/mechanism-four-bar/mechanism-four-bar/runs.csv"))
            .expect("runs");
    assert!(!runs.contains(",failed,"), "{runs}");
    ran
}

/// `describe` on more rows than coordinates (the four-bar closed by a revolute joint
/// about its pin axis: m = 5, n = 3, rank 2) and on none.
pub fn describe_ranks(dir: &Path) -> Ran {
    let text = std::fs::read_to_string(super::root().join("crates/problems/tests/data/four-bar-ball.toml"))
        .expect("four-bar")
        .replace(
            "type = \"ball\"",
            "type = \"revolute\"\nrpy_a = [-1.5707963267948966, 0.0, 0.0]\nrpy_b = [-1.5707963267948966, 0.0, 0.0]",
        );
    let (ran, out) = describe(dir, "four-bar.toml", text.as_bytes(), &[]);
    assert!(out.contains("rank Φ_q = 2 of 5"), "{out}");
    let (_, out) = describe(dir, "arm.urdf", urdf().as_bytes(), &[]);
    assert!(
        out.contains("rank Φ_q: no constraint rows (m = 0)"),
        "{out}"
    );
    ran
}

/// A model file edited between the kill of a sweep and its resume: refused, naming it.
pub fn model_changed_under_resume(dir: &Path) -> Ran {
    std::fs::write(dir.join("arm.urdf"), urdf()).expect("write");
    let spec = "schema_version = 1\nname = \"arm\"\nt_end = 1000\n\n[steps]\nh = [1e-4]\n\n[[problems]]\nid = \"model\"\nparams = { file = \"arm.urdf\" }\n\n[[methods]]\nid = \"rattle\"\n";
    std::fs::write(dir.join("s.toml"), spec).expect("write");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_driftlab"))
        .args(["run", "s.toml", "--out", "out", "--threads", "1"])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("binary starts");
    let manifest = dir.join("out/manifest.json");
    let start = std::time::Instant::now();
    while !std::fs::read_to_string(&manifest).is_ok_and(|t| t.contains("running")) {
        assert!(start.elapsed().as_secs() < 60, "the run never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    std::fs::write(dir.join("arm.urdf"), urdf().replace("1.5", "2.5")).expect("edit");
    driftlab(
        &strings(
            &[
                "run",
                "s.toml",
                "--out",
                "out",
                "--resume",
                "--threads",
                "1",
            ],
            dir,
        ),
        dir,
    )
}

/// A URDF saved as UTF-16 (NUL bytes between the ASCII ones).
pub fn utf16(dir: &Path) -> Ran {
    let bytes: Vec<u8> = urdf().encode_utf16().flat_map(u16::to_le_bytes).collect();
    simulate_with(dir, "arm.urdf", &bytes, &[])
}
