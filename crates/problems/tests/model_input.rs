//! Model files read as untrusted input (issue 45): what the URDF and SDF specifications
//! define is read (SDF's degrees, quaternion poses, `expressed_in`, one-sided limits,
//! `initial_position`, its defaults for a link without `<inertial>`, gearbox joints),
//! typos and duplicates are refused with their line, vendor extensions are skipped and
//! listed, and what driftlab cannot model is refused rather than dropped. Loops start
//! off their drawn pose; the readers survive hostile input (proptest).

use driftlab_core::MechanicalSystem;
use driftlab_problems::model::import::description::{JointKind, Model, ModelError};
use driftlab_problems::model::import::{sdf, urdf};
use driftlab_problems::model::{build, ModelParams};
use proptest::prelude::*;

/// A two-link SDF pendulum, `{pose}`, `{axis}`, `{limit}` and `{extra}` to fill.
fn sdf_text(pose: &str, axis: &str, limit: &str, extra: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<sdf version="1.9">
  <model name="pendulum">
    <link name="base">
      <inertial><mass>2</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
    </link>
    <link name="arm">
      {pose}
      <inertial><pose>0 0 -0.5 0 0 0</pose><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.01</izz></inertia></inertial>
    </link>
    <joint name="hinge" type="revolute">
      <parent>base</parent>
      <child>arm</child>
      <axis>{axis}{limit}</axis>
    </joint>
    {extra}
  </model>
</sdf>
"#
    )
}

fn read_sdf(text: &str) -> Result<Model, ModelError> {
    sdf::read("p.sdf", text, urdf::Root::Fixed)
}

fn joint<'m>(m: &'m Model, name: &str) -> &'m driftlab_problems::model::import::description::Joint {
    &m.joints[m.joint(name).expect("joint")]
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
}

#[test]
fn sdf_poses_in_degrees_and_quaternions_are_the_radian_pose() {
    let axis = "<xyz>0 1 0</xyz>";
    let radians = read_sdf(&sdf_text("<pose>0 0 1 0.5 0 0</pose>", axis, "", "")).expect("radians");
    let degrees = read_sdf(&sdf_text(
        &format!(
            "<pose degrees=\"true\">0 0 1 {} 0 0</pose>",
            0.5_f64.to_degrees()
        ),
        axis,
        "",
        "",
    ))
    .expect("degrees");
    let (x, y) = (joint(&radians, "hinge"), joint(&degrees, "hinge"));
    assert!(close(&x.placement.rot.concat(), &y.placement.rot.concat()));
    // The same rotation as a quaternion about x by 0.5 rad: (sin 0.25, 0, 0, cos 0.25).
    let (s, c) = (0.25_f64.sin(), 0.25_f64.cos());
    let quat = read_sdf(&sdf_text(
        &format!("<pose rotation_format=\"quat_xyzw\">0 0 1 {s} 0 0 {c}</pose>"),
        axis,
        "",
        "",
    ))
    .expect("quaternion");
    assert!(close(
        &joint(&quat, "hinge").placement.rot.concat(),
        &x.placement.rot.concat()
    ));
    let e = read_sdf(&sdf_text(
        "<pose degrees=\"yes\">0 0 1 0 0 0</pose>",
        axis,
        "",
        "",
    ))
    .unwrap_err();
    assert!(e.to_string().contains("degrees=\"yes\""), "{e}");
}

#[test]
fn an_axis_expressed_in_a_frame_is_that_frame_s() {
    // The arm link turned by 90° about z: its x axis is the model's y.
    let pose = "<pose>0 0 1 0 0 1.5707963267948966</pose>";
    let in_model = read_sdf(&sdf_text(
        pose,
        "<xyz expressed_in=\"__model__\">0 1 0</xyz>",
        "",
        "",
    ))
    .expect("model frame");
    let in_joint = read_sdf(&sdf_text(pose, "<xyz>1 0 0</xyz>", "", "")).expect("joint frame");
    let in_link = read_sdf(&sdf_text(
        pose,
        "<xyz expressed_in=\"arm\">1 0 0</xyz>",
        "",
        "",
    ))
    .expect("link frame");
    let a = joint(&in_joint, "hinge").axis;
    assert!(
        close(&joint(&in_model, "hinge").axis, &a),
        "{:?} {:?}",
        joint(&in_model, "hinge").axis,
        a
    );
    assert!(close(&joint(&in_link, "hinge").axis, &a));
    let e = read_sdf(&sdf_text(
        pose,
        "<xyz expressed_in=\"nowhere\">1 0 0</xyz>",
        "",
        "",
    ))
    .unwrap_err();
    assert!(
        e.to_string().contains("names no frame of this model"),
        "{e}"
    );
}

#[test]
fn one_sided_limits_and_the_initial_position_are_read() {
    let m = read_sdf(&sdf_text(
        "",
        "<xyz>0 1 0</xyz><initial_position>0.3</initial_position>",
        "<limit><upper>0.8</upper></limit>",
        "",
    ))
    .expect("reads");
    let j = joint(&m, "hinge");
    let l = j.limits.expect("an upper limit alone is a limit");
    assert!(l.lower == f64::NEG_INFINITY && (l.upper - 0.8).abs() < 1e-15);
    assert!(j.q0.len() == 1 && (j.q0[0] - 0.3).abs() < 1e-15);
    let none = read_sdf(&sdf_text(
        "",
        "<xyz>0 1 0</xyz>",
        "<limit><lower>-1e16</lower><upper>1e16</upper></limit>",
        "",
    ))
    .expect("reads");
    assert_eq!(
        joint(&none, "hinge").limits,
        None,
        "SDF's ±1e16 is no limit"
    );
}

#[test]
fn an_sdf_link_without_inertial_has_sdf_s_defaults_and_says_so() {
    let text = sdf_text("", "<xyz>0 1 0</xyz>", "", "").replace(
        "<inertial><pose>0 0 -0.5 0 0 0</pose><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.01</izz></inertia></inertial>",
        "",
    );
    let m = read_sdf(&text).expect("reads");
    let arm = &m.bodies[m.body("arm").expect("arm")];
    assert_eq!(arm.inertia.mass.to_bits(), 1.0_f64.to_bits());
    assert!(close(
        &arm.inertia.rot.concat(),
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    ));
    assert!(
        m.notes
            .iter()
            .any(|n| n.what.contains("SDF's default, mass 1")),
        "{:?}",
        m.notes
    );
}

#[test]
fn what_driftlab_cannot_model_in_sdf_is_refused_not_dropped() {
    let axis = "<xyz>0 1 0</xyz>";
    let cases = [
        (
            sdf_text("", axis, "", "<static>true</static>"),
            "a static model",
        ),
        (
            sdf_text("<gravity>false</gravity>", axis, "", ""),
            "<gravity>false</gravity>",
        ),
        (
            sdf_text("<kinematic>true</kinematic>", axis, "", ""),
            "<kinematic>true</kinematic>",
        ),
        (
            sdf_text("", axis, "", "").replace(
                "</model>\n</sdf>",
                "</model>\n  <model name=\"two\"/>\n</sdf>",
            ),
            "a second <model>",
        ),
        (
            sdf_text("", axis, "", "<model name=\"inner\"/>"),
            "<model> inside <model>",
        ),
        (
            sdf_text(
                "<pose relative_to=\"base\">0 0 1 0 0 0</pose>",
                axis,
                "",
                "",
            ),
            "relative to a named frame",
        ),
        (
            sdf_text("", axis, "", "").replace(
                "<sdf version=\"1.9\">\n  <model",
                "<sdf version=\"1.9\">\n  <world name=\"w\"/>\n  <model",
            ),
            "an SDF <world>",
        ),
    ];
    for (text, says) in cases {
        let e = read_sdf(&text).expect_err(says).to_string();
        assert!(e.contains(says) && e.contains("line "), "{says}: {e}");
    }
}

#[test]
fn an_sdf_gearbox_is_a_row_between_its_two_gears() {
    let text = r#"<sdf version="1.6"><model name="geared">
      <link name="base"><inertial><mass>5</mass></inertial></link>
      <link name="rotor"><inertial><mass>0.1</mass><inertia><ixx>1e-4</ixx><iyy>1e-4</iyy><izz>1e-4</izz></inertia></inertial></link>
      <link name="arm"><inertial><mass>1</mass></inertial></link>
      <joint name="motor" type="revolute"><parent>base</parent><child>rotor</child><axis><xyz>1 0 0</xyz></axis></joint>
      <joint name="output" type="revolute"><parent>base</parent><child>arm</child><axis><xyz>-1 0 0</xyz></axis></joint>
      <joint name="gear" type="gearbox"><parent>rotor</parent><child>arm</child>
        <gearbox_reference_body>base</gearbox_reference_body><gearbox_ratio>0.04</gearbox_ratio>
        <axis><xyz>1 0 0</xyz></axis><axis2><xyz>1 0 0</xyz></axis2></joint>
    </model></sdf>"#;
    let m = read_sdf(text).expect("reads");
    let mimic = joint(&m, "output")
        .mimic
        .clone()
        .expect("the gearbox is a mimic row");
    assert_eq!(mimic.leader, "motor");
    // θ₂ = −0.04 θ₁ with θ₂ = −q(output) (its axis opposes axis2): q(output) = 0.04 q(motor).
    assert!(
        (mimic.multiplier - 0.04).abs() < 1e-15,
        "{}",
        mimic.multiplier
    );
    let broken = text.replace(
        "<parent>base</parent><child>arm</child>",
        "<parent>rotor</parent><child>arm</child>",
    );
    let e = read_sdf(&broken).unwrap_err().to_string();
    assert!(e.contains("not hinged to the reference body"), "{e}");
}

/// A URDF arm, one element per line (`{link_extra}` on line 9, `{joint_extra}` on 15).
fn urdf_text(joint_extra: &str, link_extra: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="upper">
    <inertial>
      <mass value="1"/>
      <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.001"/>
    </inertial>
    {link_extra}
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/>
    <child link="upper"/>
    <axis xyz="0 1 0"/>
    {joint_extra}
  </joint>
</robot>
"#
    )
}

fn read_urdf(text: &str) -> Result<Model, ModelError> {
    urdf::read("arm.urdf", text, urdf::Root::Fixed)
}

#[test]
fn urdf_typos_and_duplicates_are_refused_with_their_line() {
    let cases = [
        (urdf_text("", "").replace("<axis xyz=", "<axis xzy="), "attribute `xzy` is not one of <axis>'s; it resembles `xyz`", 14),
        (urdf_text("<limt lower=\"0\" upper=\"1\"/>", ""), "element <limt> is not a child of <joint>; it resembles <limit>", 15),
        (urdf_text("", "<inertail/>"), "element <inertail> is not a child of <link>; it resembles <inertial>", 9),
        (urdf_text("", "<inertial><mass value=\"2\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial>"), "a second <inertial> in <link> (the first: line 5)", 9),
        (urdf_text("<parent link=\"upper\"/>", ""), "a second <parent> in <joint> (the first: line 12)", 15),
        (urdf_text("", "").replace("<mass value=", "<mass vlaue="), "attribute `vlaue` is not one of <mass>'s; it resembles `value`", 6),
    ];
    for (text, says, line) in cases {
        let e = read_urdf(&text).expect_err(says);
        assert!(e.what.contains(says), "{says}: {e}");
        assert_eq!(e.at.line, Some(line), "{e}");
    }
}

#[test]
fn urdf_vendor_extensions_are_skipped_and_listed() {
    let text = urdf_text("<dont_collapse/>", "<self_filter radius=\"0.1\"/>").replace(
        "<joint name=\"shoulder\" type=\"revolute\">",
        "<joint name=\"shoulder\" type=\"revolute\" dont_collapse=\"true\">",
    );
    let m = read_urdf(&text).expect("loads");
    let notes: Vec<String> = m.notes.iter().map(ToString::to_string).collect();
    for want in [
        "line 9, <self_filter> in <link name=\"upper\">: element <self_filter> skipped: not in the URDF specification of <link>",
        "attribute `dont_collapse` skipped: not in the URDF specification of <joint>",
        "element <dont_collapse> skipped",
    ] {
        assert!(notes.iter().any(|n| n.contains(want)), "{want}: {notes:#?}");
    }
}

#[test]
fn mimic_cycles_are_named_and_dangling_mimics_dropped() {
    let two = r#"<robot name="r"><link name="b"/>
      <link name="l1"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <link name="l2"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <joint name="a" type="revolute"><parent link="b"/><child link="l1"/><mimic joint="c"/></joint>
      <joint name="c" type="revolute"><parent link="l1"/><child link="l2"/><mimic joint="a"/></joint>
    </robot>"#;
    let m = read_urdf(two).expect("reads");
    let e = driftlab_problems::model::import::check::check(&m)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the mimic relations form a cycle: a follows c follows a")
            || e.contains("c follows a follows c"),
        "{e}"
    );
    let fixed = two
        .replace("name=\"a\" type=\"revolute\"", "name=\"a\" type=\"fixed\"")
        .replace("<mimic joint=\"a\"/>", "<mimic joint=\"ghost\"/>");
    let m = read_urdf(&fixed).expect("reads");
    assert!(m.joints.iter().all(|j| j.mimic.is_none()));
    assert_eq!(m.notes.len(), 2, "{:?}", m.notes);
}

#[test]
fn nesting_size_and_nothing_to_integrate_are_refused_before_cost() {
    let deep = urdf_text(
        "",
        &format!(
            "<visual>{}{}</visual>",
            "<g>".repeat(50_000),
            "</g>".repeat(50_000)
        ),
    );
    let e = read_urdf(&deep).unwrap_err();
    assert!(e.what.contains("deeper than 1000 levels"), "{e}");
    let mut chain = String::from("<robot name=\"c\"><link name=\"l0\"/>");
    for k in 1..=1001 {
        chain.push_str(&format!("<link name=\"l{k}\"/><joint name=\"j{k}\" type=\"fixed\"><parent link=\"l{}\"/><child link=\"l{k}\"/></joint>", k - 1));
    }
    chain.push_str("</robot>");
    let e = read_urdf(&chain).unwrap_err();
    assert!(
        e.what
            .contains("1002 links and 1001 joints, above the 1000 driftlab reads"),
        "{e}"
    );
    let dir = std::env::temp_dir().join(format!("driftlab-model-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let fixed = dir.join("fixed.urdf");
    std::fs::write(
        &fixed,
        urdf_text("", "").replace("type=\"revolute\"", "type=\"fixed\""),
    )
    .expect("write");
    let p = |root: &str| ModelParams {
        file: fixed.display().to_string(),
        root: root.into(),
        ..ModelParams::default()
    };
    let e = build(&p("fixed")).err().expect("refused").to_string();
    assert!(
        e.contains("no degree of freedom") && e.contains("root = \"floating\""),
        "{e}"
    );
    assert_eq!(build(&p("floating")).expect("a free body").dims().n, 7);
}

/// A planar four-bar in the x–z plane closed by a ball joint: its out-of-plane row is
/// implied by the others (rank 2 of 3).
fn four_bar() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/four-bar-ball.toml"
    ))
    .expect("tests/data/four-bar-ball.toml")
}

#[test]
fn seeded_starts_assemble_on_a_redundantly_closed_four_bar_and_on_every_shipped_loop() {
    let dir = std::env::temp_dir().join(format!("driftlab-four-bar-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("four-bar.toml");
    std::fs::write(&file, four_bar()).expect("write");
    let shipped = [(String::new(), "cassie"), (String::new(), "rssr-linkage")];
    for (source, robot) in std::iter::once((file.display().to_string(), "")).chain(shipped) {
        for seed in 1..=10 {
            let p = ModelParams {
                file: source.clone(),
                robot: if robot.is_empty() {
                    "double-pendulum".into()
                } else {
                    robot.into()
                },
                pose_seed: seed,
                ..ModelParams::default()
            };
            let sys = build(&p).unwrap_or_else(|e| panic!("{robot} seed {seed}: {e}"));
            let st = sys.initial_state();
            let (pos, vel) = driftlab_problems::initial::mechanical_residuals(&sys, &st);
            // Every row to round-off, or (Cassie's plantar rods, 5-digit angles) the rows
            // implied by the others to the printed digits, noted.
            let loose = sys
                .model()
                .notes
                .iter()
                .any(|n| n.what.contains("implied by the others"));
            let bound = if loose { 1e-4 } else { 1e-10 };
            assert!(
                pos.max(vel) <= bound,
                "{robot} seed {seed}: ‖Φ‖ {pos:e}, ‖Φ_q v‖ {vel:e}"
            );
            assert!(
                robot == "cassie" || !loose,
                "the four-bar's redundancy is exact"
            );
        }
    }
}

#[test]
fn a_toml_model_floats_its_base_on_request() {
    let dir = std::env::temp_dir().join(format!("driftlab-toml-float-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("four-bar.toml");
    std::fs::write(&file, four_bar()).expect("write");
    let p = ModelParams {
        file: file.display().to_string(),
        root: "floating".into(),
        ..ModelParams::default()
    };
    let e = build(&p)
        .err()
        .expect("its joints hold it to the world")
        .to_string();
    assert!(
        e.contains("root = \"floating\" for a model whose joint holds it to the world"),
        "{e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random nesting, attributes, text and bytes spliced into a valid URDF and SDF: the
    /// readers return a model or an error with a line, never a panic or an overflow.
    #[test]
    fn readers_survive_hostile_input(
        depth in 0usize..3000,
        at in 0usize..4000,
        junk in "[<>/=\"' a-z0-9&;!?\\-\\[\\]\n]{0,200}",
        name in "[a-z_:]{1,12}",
        value in "[-+.eE0-9naif ]{0,12}",
    ) {
        for base in [urdf_text("", ""), sdf_text("", "<xyz>0 1 0</xyz>", "", "")] {
            let nested = format!("<{name}>{}{}</{name}>", "<x>".repeat(depth), "</x>".repeat(depth));
            let attr = format!("<mass {name}=\"{value}\"/>");
            let cut = base.char_indices().map(|(k, _)| k).rfind(|&k| k <= at.min(base.len())).unwrap_or(0);
            for text in [
                base.replacen("</link>", &format!("{nested}</link>"), 1),
                base.replacen("</link>", &format!("{attr}</link>"), 1),
                format!("{}{junk}{}", &base[..cut], &base[cut..]),
            ] {
                let read = if text.contains("<sdf") { read_sdf(&text) } else { read_urdf(&text) };
                if let Err(e) = read {
                    prop_assert!(e.at.line.is_some() || !e.at.element.is_empty(), "no place: {e}");
                }
            }
        }
    }
}

#[test]
fn joint_kinds_of_the_spec_are_read() {
    let m = read_urdf(&urdf_text("", "").replace("type=\"revolute\"", "type=\"continuous\""))
        .expect("reads");
    assert_eq!(joint(&m, "shoulder").kind, JointKind::Continuous);
}

#[test]
fn encodings_a_bom_loads_utf16_and_stray_bytes_are_refused() {
    let dir = std::env::temp_dir().join(format!("driftlab-encodings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let text = urdf_text("", "");
    let cases: [(&str, Vec<u8>, Option<&str>); 3] = [
        (
            "bom.urdf",
            [b"\xef\xbb\xbf".as_slice(), text.as_bytes()].concat(),
            None,
        ),
        (
            "utf16.urdf",
            text.encode_utf16().flat_map(u16::to_le_bytes).collect(),
            Some("is not UTF-8 text (a NUL byte at 1: UTF-16 or a binary file)"),
        ),
        (
            "stray.urdf",
            text.replacen("arm", "a\u{fffd}m", 1)
                .into_bytes()
                .into_iter()
                .map(|b| if b == 0xef { 0xff } else { b })
                .collect(),
            Some("is not UTF-8 text"),
        ),
    ];
    for (name, bytes, refused) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write");
        let p = ModelParams {
            file: path.display().to_string(),
            ..ModelParams::default()
        };
        match (build(&p), refused) {
            (Ok(_), None) => {}
            (Err(e), Some(says)) => assert!(e.to_string().contains(says), "{name}: {e}"),
            (r, _) => panic!("{name}: {:?}", r.err().map(|e| e.to_string())),
        }
    }
}

#[test]
fn frames_versions_namespaces_and_huge_quaternions_are_read_as_specified() {
    // The model frame turned by 90° about z, the arm by a further 90°: the axis given in
    // `__model__` is turned by the model's pose only, the axis in the joint frame by both.
    let turn = "<pose>0 0 0 0 0 1.5707963267948966</pose>";
    let pose = "<pose>0 0 1 0 0 1.5707963267948966</pose>";
    let model_axis = read_sdf(&sdf_text(
        pose,
        "<xyz expressed_in=\"__model__\">1 0 0</xyz>",
        "",
        turn,
    ))
    .expect("model frame");
    // In the model frame the arm is turned by 90°: the model's x is the arm's −y, and
    // the joint's axis is stored in the joint (arm) frame. The model's own turn must not
    // enter: `__model__` is relative to the model, not the world.
    let a = joint(&model_axis, "hinge").axis;
    assert!(close(&a, &[0.0, -1.0, 0.0]), "{a:?}");
    let same_in_joint = read_sdf(&sdf_text(pose, "<xyz>0 -1 0</xyz>", "", turn)).expect("joint");
    assert!(close(&joint(&same_in_joint, "hinge").axis, &a));
    // Before SDF 1.5 `<xyz>` is in the model frame (sdformat's 1.4 → 1.5 conversion).
    let v14 = read_sdf(
        &sdf_text(pose, "<xyz>1 0 0</xyz>", "", turn).replace("version=\"1.9\"", "version=\"1.4\""),
    )
    .expect("1.4");
    assert!(close(
        &joint(&v14, "hinge").axis,
        &joint(&model_axis, "hinge").axis
    ));
    // A quaternion of components near the largest float is the unit one it scales to.
    let (s, c) = (0.25_f64.sin(), 0.25_f64.cos());
    let small = read_sdf(&sdf_text(
        &format!("<pose rotation_format=\"quat_xyzw\">0 0 1 {s} 0 0 {c}</pose>"),
        "<xyz>0 1 0</xyz>",
        "",
        "",
    ))
    .expect("unit");
    let huge = read_sdf(&sdf_text(
        &format!(
            "<pose rotation_format=\"quat_xyzw\">0 0 1 {:e} 0 0 {:e}</pose>",
            s * 1e300,
            c * 1e300
        ),
        "<xyz>0 1 0</xyz>",
        "",
        "",
    ))
    .expect("huge");
    assert!(close(
        &joint(&small, "hinge").placement.rot.concat(),
        &joint(&huge, "hinge").placement.rot.concat()
    ));
    // A vendor's namespaced <drake:joint> is not a joint, nor a second <link> a duplicate.
    let vendor = sdf_text(
        "",
        "<xyz>0 1 0</xyz>",
        "",
        "<drake:joint xmlns:drake=\"http://drake.mit.edu\" name=\"x\" type=\"screw\"/>",
    );
    let m = read_sdf(&vendor).expect("vendor element skipped");
    let names: Vec<&str> = m.joints.iter().map(|j| j.name.as_str()).collect();
    assert!(!names.contains(&"x"), "{names:?}");
    let notes: Vec<String> = m.notes.iter().map(ToString::to_string).collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("element <{http://drake.mit.edu}joint> skipped")),
        "{notes:#?}"
    );
}
