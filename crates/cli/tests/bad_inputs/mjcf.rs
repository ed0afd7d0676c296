//! The MJCF cases of issue 47: an MJCF model that cannot be used is refused by
//! `simulate --problem model --set file=….xml` before anything runs (exit 2), naming the
//! file, the element and its line, and the fix. Each function writes the shipped MJCF
//! four-bar (`models/four-bar.xml`) with one thing broken into the case's folder.

use super::models::simulate_with;
use super::Ran;
use std::path::Path;

fn four_bar() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/four-bar.xml");
    std::fs::read_to_string(root).expect("models/four-bar.xml")
}

/// The four-bar with `from` replaced by `to` (which must occur), simulated.
fn broken(dir: &Path, from: &str, to: &str) -> Ran {
    let base = four_bar();
    assert!(base.contains(from), "the four-bar has no `{from}`");
    simulate_with(
        dir,
        "four-bar.xml",
        base.replacen(from, to, 1).as_bytes(),
        &[],
    )
}

pub fn typo_attribute(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<joint name="rocker"/>"#,
        r#"<joint name="rocker" axsi="0 0 1"/>"#,
    )
}
pub fn typo_element(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<joint name="rocker"/>"#,
        r#"<jiont name="rocker"/>"#,
    )
}
pub fn missing_include(dir: &Path) -> Ran {
    broken(
        dir,
        "<compiler",
        "<include file=\"parts/arm.xml\"/>\n  <compiler",
    )
}
pub fn include_cycle(dir: &Path) -> Ran {
    std::fs::write(
        dir.join("a.xml"),
        "<mujoco>\n  <include file=\"four-bar.xml\"/>\n</mujoco>\n",
    )
    .expect("write");
    broken(dir, "<compiler", "<include file=\"a.xml\"/>\n  <compiler")
}
pub fn unknown_class(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<joint name="rocker"/>"#,
        r#"<joint name="rocker" class="stiff"/>"#,
    )
}
pub fn mesh_inertia(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<geom fromto="0 0 0 0.2 0 0.5"/>"#,
        r#"<geom type="mesh" mesh="rocker"/>"#,
    )
}
pub fn no_inertial(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<compiler angle="degree"/>"#,
        r#"<compiler angle="degree" inertiafromgeom="false"/>"#,
    )
}
pub fn unknown_body(dir: &Path) -> Ran {
    broken(dir, r#"body2="rocker""#, r#"body2="rockr""#)
}
pub fn zero_quat(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<body name="rocker" pos="1.2 0 0">"#,
        r#"<body name="rocker" pos="1.2 0 0" quat="0 0 0 0">"#,
    )
}
pub fn two_orientations(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<body name="rocker" pos="1.2 0 0">"#,
        r#"<body name="rocker" pos="1.2 0 0" quat="1 0 0 0" euler="0 0 90">"#,
    )
}
pub fn radian_range(dir: &Path) -> Ran {
    let t = four_bar()
        .replacen(
            r#"<compiler angle="degree"/>"#,
            r#"<compiler angle="radian"/>"#,
            1,
        )
        .replacen(
            r#"<joint name="rocker"/>"#,
            r#"<joint name="rocker" range="-90 90"/>"#,
            1,
        );
    simulate_with(dir, "four-bar.xml", t.as_bytes(), &[])
}
pub fn spatial_tendon(dir: &Path) -> Ran {
    broken(
        dir,
        "<equality>",
        "<tendon>\n    <spatial name=\"cable\"/>\n  </tendon>\n  <equality>",
    )
}
pub fn composite(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<joint name="rocker"/>"#,
        r#"<joint name="rocker"/><composite type="rope" count="5"/>"#,
    )
}
pub fn deformable(dir: &Path) -> Ran {
    broken(dir, "<equality>", "<deformable/>\n  <equality>")
}
pub fn plugin(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<joint name="rocker"/>"#,
        r#"<joint name="rocker"/><plugin plugin="mujoco.elasticity.cable"/>"#,
    )
}
pub fn replicate(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<joint name="rocker"/>"#,
        r#"<joint name="rocker"/><replicate count="3"/>"#,
    )
}
pub fn unknown_joint(dir: &Path) -> Ran {
    broken(
        dir,
        "</equality>",
        "  <joint joint1=\"crank\" joint2=\"elbw\"/>\n  </equality>",
    )
}
pub fn global_coordinates(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<compiler angle="degree"/>"#,
        r#"<compiler angle="degree" coordinate="global"/>"#,
    )
}
pub fn nested_free_joint(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<joint name="coupler"/>"#,
        r#"<freejoint name="coupler"/>"#,
    )
}
pub fn fromto_with_pos(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<geom fromto="0 0 0 0.2 0 0.5"/>"#,
        r#"<geom fromto="0 0 0 0.2 0 0.5" pos="0 0 1"/>"#,
    )
}
pub fn zero_size(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<geom fromto="0 0 0 0.2 0 0.5"/>"#,
        r#"<geom type="sphere" size="0"/>"#,
    )
}
pub fn weld_to_itself(dir: &Path) -> Ran {
    broken(
        dir,
        "</equality>",
        "  <weld body1=\"crank\" body2=\"crank\"/>\n  </equality>",
    )
}
pub fn nan_pos(dir: &Path) -> Ran {
    broken(dir, r#"pos="1.2 0 0""#, r#"pos="1.2 nan 0""#)
}
pub fn zero_axis(dir: &Path) -> Ran {
    broken(
        dir,
        r#"<joint name="rocker"/>"#,
        r#"<joint name="rocker" axis="0 0 0"/>"#,
    )
}
pub fn floating_root(dir: &Path) -> Ran {
    simulate_with(
        dir,
        "four-bar.xml",
        four_bar().as_bytes(),
        &["root=\"floating\""],
    )
}

/// `tune --write-mjcf` onto a file that exists: refused, the file untouched.
pub fn tune_onto_existing(dir: &Path) -> Ran {
    let target = dir.join("tuned.xml");
    std::fs::write(&target, "mine").expect("write");
    let ran = super::driftlab(
        &super::strings(
            &[
                "tune",
                "robot:mjcf-four-bar",
                "--h",
                "1e-3",
                "--write-mjcf",
                "{dir}/tuned.xml",
            ],
            dir,
        ),
        dir,
    );
    assert_eq!(
        std::fs::read_to_string(&target).expect("read"),
        "mine",
        "tune overwrote a file it did not write"
    );
    ran
}
