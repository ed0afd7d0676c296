//! The model description every importer produces (TOML, URDF, SDF) and every coordinate
//! choice reads: bodies with their inertias, joints of a kinematic tree, loop closures,
//! gravity and the initial joint state. Importers check what their format can get wrong;
//! [`super::check`] checks what every model must satisfy.

use super::super::spatial::{Inertia, Placement, V3};

/// Where in a model file an element is, for messages: its tag and name, and the line
/// where the parser gives one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Origin {
    /// `<joint name="knee">`, `[[bodies]] "thigh"`, ….
    pub element: String,
    /// 1-based line in the file, where known.
    pub line: Option<u32>,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}, {}", self.element),
            None => write!(f, "{}", self.element),
        }
    }
}

/// A model file that cannot be used: where, what, and the fix.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelError {
    /// The file.
    pub file: String,
    /// The element at fault.
    pub at: Origin,
    /// What is wrong, with the numbers.
    pub what: String,
    /// How to fix it.
    pub fix: String,
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}; {}", self.file, self.at, self.what, self.fix)
    }
}

impl ModelError {
    /// An error at `at`.
    pub fn at(file: &str, at: &Origin, what: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            file: file.to_string(),
            at: at.clone(),
            what: what.into(),
            fix: fix.into(),
        }
    }
}

/// What a reader skipped or took as published, and where: a vendor element or attribute
/// the format's specification does not define, an inertia that no rigid body has, a mimic
/// whose leader the file lacks. Listed by `describe`, in the run's manifest and once on
/// the terminal, never dropped silently.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelNote {
    /// The element.
    pub at: Origin,
    /// What was skipped or kept, and why.
    pub what: String,
}

impl std::fmt::Display for ModelNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.what)
    }
}

/// A rigid body (URDF link): its name and inertia in its own frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// Name.
    pub name: String,
    /// Mass, centre of mass and rotational inertia about it (all zero: a massless frame).
    pub inertia: Inertia,
    /// Where it was declared.
    pub origin: Origin,
}

/// The kinds of joint, with their coordinates (q) and velocities (v = q̇ here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointKind {
    /// One angle about `axis`, within limits.
    Revolute,
    /// One angle about `axis`, unlimited.
    Continuous,
    /// One displacement along `axis`.
    Prismatic,
    /// No motion.
    Fixed,
    /// Euler parameters `(e₀, e₁, e₂, e₃)` of the child relative to the joint frame.
    Spherical,
    /// Position `(x, y, z)` in the joint frame, then Euler parameters: 7 coordinates.
    Floating,
}

impl JointKind {
    /// Number of coordinates.
    pub fn nq(self) -> usize {
        match self {
            JointKind::Revolute | JointKind::Continuous | JointKind::Prismatic => 1,
            JointKind::Fixed => 0,
            JointKind::Spherical => 4,
            JointKind::Floating => 7,
        }
    }
    /// The name used in model files.
    pub fn name(self) -> &'static str {
        match self {
            JointKind::Revolute => "revolute",
            JointKind::Continuous => "continuous",
            JointKind::Prismatic => "prismatic",
            JointKind::Fixed => "fixed",
            JointKind::Spherical => "spherical",
            JointKind::Floating => "floating",
        }
    }
    /// Whether the joint has an axis.
    pub fn has_axis(self) -> bool {
        self.nq() == 1
    }
}

/// Position and velocity limits, kept as data (the unilateral limits of the LCP methods).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Lower position limit.
    pub lower: f64,
    /// Upper position limit.
    pub upper: f64,
    /// Largest joint effort.
    pub effort: f64,
    /// Largest joint speed.
    pub velocity: f64,
}

/// `q_joint = multiplier · q_leader + offset` (URDF `<mimic>`): a constraint row in joint
/// coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct Mimic {
    /// The leading joint's name.
    pub leader: String,
    /// Multiplier.
    pub multiplier: f64,
    /// Offset.
    pub offset: f64,
}

/// A joint of the kinematic tree: the child body placed in the parent's frame by
/// `placement ∘ motion(q)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: JointKind,
    /// Parent body (`None`: the world).
    pub parent: Option<usize>,
    /// Child body.
    pub child: usize,
    /// The joint frame in the parent's frame.
    pub placement: Placement,
    /// Unit axis in the joint frame (revolute, continuous, prismatic).
    pub axis: V3,
    /// Limits, if given.
    pub limits: Option<Limits>,
    /// Linear spring `τ = −k (q − rest)` (1-coordinate joints).
    pub stiffness: f64,
    /// The spring's rest position.
    pub rest: f64,
    /// Viscous damping `τ = −d q̇` (1-coordinate joints).
    pub damping: f64,
    /// Constant joint torque or force (1-coordinate joints).
    pub torque: f64,
    /// Rotor inertia added to the joint's own velocity coordinates (MuJoCo's `armature`:
    /// `a` on the diagonal of the joint-space mass matrix per degree of freedom; for a
    /// spherical or floating joint `a·S̃ᵀS̃`, [`super::super::dynamics`]). 0 elsewhere.
    pub armature: f64,
    /// Mimic relation, if any.
    pub mimic: Option<Mimic>,
    /// Initial coordinates (`nq` values; Euler parameters as `(e₀, e₁, e₂, e₃)`).
    pub q0: Vec<f64>,
    /// Initial velocity: `q̇` for 1-coordinate joints; the body angular velocity (3) for
    /// spherical, linear velocity in the joint frame then body angular velocity (6) for
    /// floating.
    pub v0: Vec<f64>,
    /// Where it was declared.
    pub origin: Origin,
}

impl Joint {
    /// A floating joint `name` of body `child` from the world, its frame at `placement`:
    /// no limits, spring, damping, torque or mimic, and the default start (at the joint
    /// frame, at rest; [`default_q0`], [`default_v0`]).
    pub fn floating(name: String, child: usize, placement: Placement, origin: Origin) -> Self {
        Self {
            name,
            kind: JointKind::Floating,
            parent: None,
            child,
            placement,
            axis: [1.0, 0.0, 0.0],
            limits: None,
            stiffness: 0.0,
            rest: 0.0,
            damping: 0.0,
            torque: 0.0,
            armature: 0.0,
            mimic: None,
            q0: default_q0(JointKind::Floating),
            v0: default_v0(JointKind::Floating),
            origin,
        }
    }
}

/// What a loop closure holds together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClosureKind {
    /// The two points coincide (3 rows).
    Ball,
    /// The points coincide and the frames' z axes stay aligned (5 rows).
    Revolute,
    /// The frames coincide (6 rows).
    Weld,
    /// The frames keep their orientation and b's origin stays on a's z axis (5 rows).
    Prismatic,
}

impl ClosureKind {
    /// Rows it adds.
    pub fn rows(self) -> usize {
        match self {
            ClosureKind::Ball => 3,
            ClosureKind::Revolute => 5,
            ClosureKind::Weld => 6,
            ClosureKind::Prismatic => 5,
        }
    }
    /// The name used in model files.
    pub fn name(self) -> &'static str {
        match self {
            ClosureKind::Ball => "ball",
            ClosureKind::Revolute => "revolute",
            ClosureKind::Weld => "weld",
            ClosureKind::Prismatic => "prismatic",
        }
    }
}

/// A loop closure: a frame on body `a` held to a frame on body `b`.
#[derive(Clone, Debug, PartialEq)]
pub struct Closure {
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: ClosureKind,
    /// First body (`None`: the world).
    pub body_a: Option<usize>,
    /// The frame on the first body.
    pub frame_a: Placement,
    /// Second body (`None`: the world).
    pub body_b: Option<usize>,
    /// The frame on the second body.
    pub frame_b: Placement,
    /// Where it was declared.
    pub origin: Origin,
}

/// A scalar coupling of joint positions (MJCF `<equality><joint>` and `<tendon>` on
/// fixed tendons): with `x = Σ aᵢ qᵢ` and `y = Σ bⱼ qⱼ`,
/// `Φ = x − x₀ − Σₖ cₖ (y − y₀)ᵏ` (k = 0…4), or `Φ = x − x₀ − c₀` when `b` is empty
/// (MuJoCo's `mj_instantiateEquality`, `engine_core_constraint.c`: x₀, y₀ the values at
/// `qpos0`).
#[derive(Clone, Debug, PartialEq)]
pub struct Coupling {
    /// Name (the equality's, or `equality N`).
    pub name: String,
    /// `x`: joint name and coefficient.
    pub a: Vec<(String, f64)>,
    /// `y`: joint name and coefficient (empty: x is held at `x₀ + c₀`).
    pub b: Vec<(String, f64)>,
    /// `x₀`.
    pub a0: f64,
    /// `y₀`.
    pub b0: f64,
    /// `c₀ … c₄`.
    pub poly: [f64; 5],
    /// Where it was declared.
    pub origin: Origin,
}

impl Coupling {
    /// `(Φ, dΦ/dy-polynomial slope p′(d), p″(d))` at `x`, `y`.
    pub fn value(&self, x: f64, y: f64) -> (f64, f64, f64) {
        if self.b.is_empty() {
            return (x - self.a0 - self.poly[0], 0.0, 0.0);
        }
        let d = y - self.b0;
        let c = &self.poly;
        let p = c[0] + d * (c[1] + d * (c[2] + d * (c[3] + d * c[4])));
        let dp = c[1] + d * (2.0 * c[2] + d * (3.0 * c[3] + d * 4.0 * c[4]));
        let ddp = 2.0 * c[2] + d * (6.0 * c[3] + d * 12.0 * c[4]);
        (x - self.a0 - p, dp, ddp)
    }
}

/// An actuator read from the file (MJCF `<motor>`, `<general>`): a force `gear · u` on a
/// 1-coordinate joint, `u` clipped to `ctrlrange` when limited. Passive runs apply zero
/// control; an environment's action is `u`.
#[derive(Clone, Debug, PartialEq)]
pub struct Actuator {
    /// Name (the actuator's, or `actuator N`).
    pub name: String,
    /// The joint it drives.
    pub joint: String,
    /// Gear ratio (force or torque per unit of control).
    pub gear: f64,
    /// Control range, when limited.
    pub ctrlrange: Option<[f64; 2]>,
    /// Where it was declared.
    pub origin: Origin,
}

/// What a MuJoCo model file says about how MuJoCo runs it (kept for the MuJoCo rows and
/// the audit; driftlab's own methods take their step and tolerance from the spec).
#[derive(Clone, Debug, PartialEq)]
pub struct EngineOptions {
    /// `<option timestep>` (s).
    pub timestep: f64,
    /// `<option integrator>`: `Euler`, `RK4`, `implicit` or `implicitfast`.
    pub integrator: String,
    /// `<option iterations>`.
    pub iterations: u32,
    /// Every equality as MuJoCo softens it: name, `solref`, `solimp`, active.
    pub equalities: Vec<SoftEquality>,
    /// Geoms that would collide in MuJoCo (contype or conaffinity nonzero): contact is not
    /// simulated here, and the rows say so.
    pub contact_geoms: usize,
}

/// One MJCF equality's softness.
#[derive(Clone, Debug, PartialEq)]
pub struct SoftEquality {
    /// The equality's name (or `equality N`).
    pub name: String,
    /// `connect`, `weld`, `joint` or `tendon`.
    pub kind: String,
    /// `solref` (time constant, damping ratio; or negative stiffness, damping).
    pub solref: [f64; 2],
    /// `solimp` (dmin, dmax, width, midpoint, power).
    pub solimp: [f64; 5],
    /// `active`.
    pub active: bool,
}

/// A whole model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model {
    /// Its name.
    pub name: String,
    /// The file it came from.
    pub file: String,
    /// Bodies.
    pub bodies: Vec<Body>,
    /// Joints, in document order (the order of the coordinates).
    pub joints: Vec<Joint>,
    /// Loop closures.
    pub closures: Vec<Closure>,
    /// Scalar couplings of joint positions ([`Coupling`]).
    pub couplings: Vec<Coupling>,
    /// Actuators ([`Actuator`]).
    pub actuators: Vec<Actuator>,
    /// How MuJoCo runs this model (MJCF only).
    pub engine: Option<EngineOptions>,
    /// Gravity in world coordinates.
    pub gravity: V3,
    /// What the reader skipped or took as published ([`ModelNote`]).
    pub notes: Vec<ModelNote>,
}

impl Model {
    /// Index of the body called `name`.
    pub fn body(&self, name: &str) -> Option<usize> {
        self.bodies.iter().position(|b| b.name == name)
    }
    /// Index of the joint called `name`.
    pub fn joint(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| j.name == name)
    }
    /// Total mass.
    pub fn mass(&self) -> f64 {
        self.bodies.iter().map(|b| b.inertia.mass).sum()
    }
    /// Degrees of freedom of the tree (velocity coordinates, quaternion rates counted as
    /// three).
    pub fn tree_dof(&self) -> usize {
        self.joints
            .iter()
            .map(|j| match j.kind {
                JointKind::Spherical => 3,
                JointKind::Floating => 6,
                k => k.nq(),
            })
            .sum()
    }
}

/// The default initial coordinates of a joint: zero, identity rotation.
pub fn default_q0(kind: JointKind) -> Vec<f64> {
    match kind {
        JointKind::Spherical => vec![1.0, 0.0, 0.0, 0.0],
        JointKind::Floating => vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
        k => vec![0.0; k.nq()],
    }
}

/// The default initial velocity of a joint: at rest.
pub fn default_v0(kind: JointKind) -> Vec<f64> {
    match kind {
        JointKind::Spherical => vec![0.0; 3],
        JointKind::Floating => vec![0.0; 6],
        k => vec![0.0; k.nq()],
    }
}
