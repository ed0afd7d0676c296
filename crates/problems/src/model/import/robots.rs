//! The shipped robots: URDF and SDF files from PyPI's `example-robot-data` 6.0.0
//! (BSD-3-Clause; each robot's own licence beside it), stripped of meshes by
//! `scripts/fetch-robots.sh`, embedded at compile time so that no run needs the network.
//! Provenance and SHA-256 of every file: `datasets/robots/README.md`. The example
//! mechanisms of `models/` (TOML) are shipped the same way.

/// A shipped robot (or example mechanism).
#[derive(Clone, Copy, Debug)]
pub struct Robot {
    /// The id a spec gives as `robot = "…"`.
    pub id: &'static str,
    /// Its file, relative to the repository's root.
    pub file: &'static str,
    /// What it is.
    pub summary: &'static str,
    /// The file's text.
    pub text: &'static str,
}

macro_rules! robot {
    ($id:literal, $file:literal, $summary:literal) => {
        Robot {
            id: $id,
            file: $file,
            summary: $summary,
            text: include_str!(concat!("../../../../../", $file)),
        }
    };
}

/// Every shipped robot.
pub const ROBOTS: &[Robot] = &[
    robot!(
        "double-pendulum",
        "datasets/robots/double-pendulum.urdf",
        "a two-link pendulum about parallel axes (sanity case)"
    ),
    robot!(
        "ur5",
        "datasets/robots/ur5.urdf",
        "Universal Robots UR5, 6 revolute joints, fixed base"
    ),
    robot!(
        "panda",
        "datasets/robots/panda.urdf",
        "Franka Emika Panda, 7 revolute joints and two mimicking finger slides"
    ),
    robot!(
        "solo12",
        "datasets/robots/solo12.urdf",
        "ODRI Solo12 quadruped, 12 revolute joints (root = \"floating\" for its free base)"
    ),
    robot!(
        "g1",
        "datasets/robots/g1.urdf",
        "Unitree G1 humanoid, 29 revolute joints (root = \"floating\" for its free base)"
    ),
    robot!(
        "cassie",
        "datasets/robots/cassie.sdf",
        "Agility Robotics Cassie from its SDF: 22 revolute joints, two loops per leg closed by ball joints (root = \"floating\" for its free base)"
    ),
    robot!(
        "rssr-linkage",
        "models/rssr-linkage.toml",
        "a spatial RSSR linkage (crank, coupler on a spherical joint, rocker) closed by a ball joint: the TOML model format's example"
    ),
];

/// The robot called `id`.
pub fn find(id: &str) -> Option<&'static Robot> {
    ROBOTS.iter().find(|r| r.id == id)
}

/// Files the shipped models include (MJCF `<include>`), by path relative to the repository.
pub const INCLUDED: &[(&str, &str)] = &[];

/// The text of shipped file `path` (a model or a file a model includes).
pub fn find_file(path: &str) -> Option<&'static str> {
    let clean = path.trim_start_matches("./");
    ROBOTS
        .iter()
        .map(|r| (r.file, r.text))
        .chain(INCLUDED.iter().copied())
        .find(|(f, _)| *f == clean)
        .map(|(_, t)| t)
}
