//! The shipped robots: URDF and SDF files from PyPI's `example-robot-data` 6.0.0 and the MJCF
//! models of gymnasium 1.4.0 and dm_control 1.0.52 (`datasets/mjcf`, `scripts/fetch-mjcf.sh`)
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

macro_rules! included {
    ($file:literal) => {
        ($file, include_str!(concat!("../../../../../", $file)))
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
    robot!(
        "mjcf-four-bar",
        "models/four-bar.xml",
        "a planar four-bar in MJCF, its loop closed by a connect equality (redundant = \"remove\" for its planar closure's third row)"
    ),
    robot!(
        "mjcf-slider-crank",
        "models/slider-crank.xml",
        "a planar slider-crank in MJCF, its loop closed by a connect equality (redundant = \"remove\")"
    ),
    robot!(
        "mjcf-delta",
        "models/delta.xml",
        "a three-loop delta robot in MJCF: three motorised arms, forearms on ball joints, the platform on three slides, three connect equalities"
    ),
    robot!(
        "mjcf-cassie",
        "models/cassie.xml",
        "Cassie's legs from the shipped SDF re-expressed in MJCF by scripts/sdf_to_mjcf.py: 22 hinges, four connect equalities (redundant = \"remove\", redundant_tol = 1e-5 for the near-planar plantar loop)"
    ),
    robot!(
        "gym-ant",
        "datasets/mjcf/gym-ant.xml",
        "gymnasium 1.4.0 ant: a free torso on four legs of two hinges each (MJCF)"
    ),
    robot!(
        "gym-half-cheetah",
        "datasets/mjcf/gym-half-cheetah.xml",
        "gymnasium 1.4.0 half_cheetah: a planar runner, 3 root joints and 6 hinges (MJCF)"
    ),
    robot!(
        "gym-hopper",
        "datasets/mjcf/gym-hopper.xml",
        "gymnasium 1.4.0 hopper: a planar one-legged hopper (MJCF)"
    ),
    robot!(
        "gym-humanoid",
        "datasets/mjcf/gym-humanoid.xml",
        "gymnasium 1.4.0 humanoid: a free torso and 17 hinges, two fixed tendons (MJCF)"
    ),
    robot!(
        "gym-humanoidstandup",
        "datasets/mjcf/gym-humanoidstandup.xml",
        "gymnasium 1.4.0 humanoidstandup: the humanoid lying down (MJCF)"
    ),
    robot!(
        "gym-inverted-double-pendulum",
        "datasets/mjcf/gym-inverted-double-pendulum.xml",
        "gymnasium 1.4.0 inverted_double_pendulum: a cart and two hinged poles (MJCF)"
    ),
    robot!(
        "gym-inverted-pendulum",
        "datasets/mjcf/gym-inverted-pendulum.xml",
        "gymnasium 1.4.0 inverted_pendulum: a cart and one hinged pole (MJCF)"
    ),
    robot!(
        "gym-pusher",
        "datasets/mjcf/gym-pusher.xml",
        "gymnasium 1.4.0 pusher: a 7-hinge arm and a sliding object (MJCF)"
    ),
    robot!(
        "gym-reacher",
        "datasets/mjcf/gym-reacher.xml",
        "gymnasium 1.4.0 reacher: a planar 2-hinge arm and a target (MJCF)"
    ),
    robot!(
        "gym-swimmer",
        "datasets/mjcf/gym-swimmer.xml",
        "gymnasium 1.4.0 swimmer: a planar 3-link swimmer (fluid forces not modelled) (MJCF)"
    ),
    robot!(
        "gym-walker2d",
        "datasets/mjcf/gym-walker2d.xml",
        "gymnasium 1.4.0 walker2d: a planar biped (MJCF)"
    ),
    robot!(
        "dmc-acrobot",
        "datasets/mjcf/dmc-acrobot.xml",
        "dm_control 1.0.52 acrobot: two hinged links, the elbow actuated (MJCF)"
    ),
    robot!(
        "dmc-cartpole",
        "datasets/mjcf/dmc-cartpole.xml",
        "dm_control 1.0.52 cartpole: a cart and a hinged pole (MJCF)"
    ),
    robot!(
        "dmc-cheetah",
        "datasets/mjcf/dmc-cheetah.xml",
        "dm_control 1.0.52 cheetah: a planar runner (MJCF)"
    ),
    robot!(
        "dmc-finger",
        "datasets/mjcf/dmc-finger.xml",
        "dm_control 1.0.52 finger: a 2-hinge finger and a spinning body (MJCF)"
    ),
    robot!(
        "dmc-hopper",
        "datasets/mjcf/dmc-hopper.xml",
        "dm_control 1.0.52 hopper: a planar one-legged hopper (MJCF)"
    ),
    robot!(
        "dmc-humanoid",
        "datasets/mjcf/dmc-humanoid.xml",
        "dm_control 1.0.52 humanoid: a free torso and 21 hinges (MJCF)"
    ),
    robot!(
        "dmc-humanoid-cmu",
        "datasets/mjcf/dmc-humanoid-cmu.xml",
        "dm_control 1.0.52 humanoid_CMU: the CMU mocap humanoid, 56 hinges (MJCF)"
    ),
    robot!(
        "dmc-manipulator",
        "datasets/mjcf/dmc-manipulator.xml",
        "dm_control 1.0.52 manipulator: a planar arm with a gripper whose fingers are coupled by a tendon equality (MJCF)"
    ),
    robot!(
        "dmc-pendulum",
        "datasets/mjcf/dmc-pendulum.xml",
        "dm_control 1.0.52 pendulum: one hinged pole (MJCF)"
    ),
    robot!(
        "dmc-point-mass",
        "datasets/mjcf/dmc-point-mass.xml",
        "dm_control 1.0.52 point_mass: two slides driven through fixed tendons (MJCF)"
    ),
    robot!(
        "dmc-quadruped",
        "datasets/mjcf/dmc-quadruped.xml",
        "dm_control 1.0.52 quadruped: a free torso on four legs, a ball; tendon equalities (MJCF)"
    ),
    robot!(
        "dmc-reacher",
        "datasets/mjcf/dmc-reacher.xml",
        "dm_control 1.0.52 reacher: a planar 2-hinge arm (MJCF)"
    ),
    robot!(
        "dmc-swimmer",
        "datasets/mjcf/dmc-swimmer.xml",
        "dm_control 1.0.52 swimmer: the template's head (dm_control adds the segments in Python) (MJCF)"
    ),
    robot!(
        "dmc-walker",
        "datasets/mjcf/dmc-walker.xml",
        "dm_control 1.0.52 walker: a planar biped (MJCF)"
    ),
];

/// The robot called `id`.
pub fn find(id: &str) -> Option<&'static Robot> {
    ROBOTS.iter().find(|r| r.id == id)
}

/// Files the shipped models include (MJCF `<include>`), by path relative to the repository.
pub const INCLUDED: &[(&str, &str)] = &[
    included!("datasets/mjcf/common/materials.xml"),
    included!("datasets/mjcf/common/skybox.xml"),
    included!("datasets/mjcf/common/visual.xml"),
];

/// The text of shipped file `path` (a model or a file a model includes).
pub fn find_file(path: &str) -> Option<&'static str> {
    let clean = path.replace("/./", "/");
    let clean = clean.trim_start_matches("./");
    ROBOTS
        .iter()
        .map(|r| (r.file, r.text))
        .chain(INCLUDED.iter().copied())
        .find(|(f, _)| *f == clean)
        .map(|(_, t)| t)
}
