//! `model`: a mechanism read from a model file — driftlab's TOML description or URDF —
//! or one of the shipped robots (`datasets/robots`, from PyPI's `example-robot-data`),
//! stated in a chosen set of coordinates.
//!
//! ```text
//! [[problems]]
//! id = "model"
//! params = { robot = "ur5" }                               # a shipped robot
//! params = { file = "my_arm.urdf", root = "floating" }     # your own file
//! params = { file = "linkage.toml", q0 = { crank = 0.4 } } # overrides by joint name
//! ```
//!
//! Coordinates (seed 001 §3.12): `joint` — the tree's joint positions, M by CRBA and the
//! bias by RNEA, loop closures as rows ([`joint_coords`]); `body` — a reference point and
//! Euler parameters per body, joints as constraints ([`body_coords`]); `natural` — a
//! point and three unit axes per body, constant M, quadratic rows ([`natural_coords`]).
//! All three start from the same state (the tree's, projected onto its loops).
//!
//! Everything a file can get wrong is refused before anything runs, naming the file, the
//! element (and line, for XML) and the fix ([`import::description::ModelError`]); beyond the
//! per-element checks ([`check`]), a joint that moves no mass is found from a failed
//! pivot of M(q₀), and a start off the loop closures is projected onto them in the mass
//! metric.
//!
//! Reading files is [`import`]; the coordinate layouts, the tree and its dynamics are the
//! other modules here.

pub mod assemble;
pub mod body_coords;
pub mod dynamics;
pub mod groups;
pub mod import;
pub mod joint_coords;
pub mod links;
pub mod mass_check;
pub mod natural_coords;
pub mod rows;
pub mod samples;
pub mod spatial;
pub mod stops;
pub mod trace_reference;
pub mod tree;

use crate::entry::{Problem, ProblemEntry};
use crate::natural;
use driftlab_core::params;
use driftlab_core::{MechanicalSystem, ParamError};
use import::description::{JointKind, Limits, Model, ModelError};
use import::{check, inertia, merge, mjcf, robots, sdf, toml_model, urdf};
use joint_coords::JointCoordinates;
use serde::{Deserialize, Serialize};

const ID: &str = "model";

/// Largest model file read (a robot's URDF is well under 1 MB).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Parameters of `model`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelParams {
    /// A shipped robot ([`import::robots::ROBOTS`]); replaced by `file` when that is given.
    pub robot: String,
    /// A model file: `.toml` (driftlab's description), `.urdf`, `.sdf` or `.xml` (MJCF, or
    /// URDF when its root is `<robot>`).
    pub file: String,
    /// `joint`, `body` or `natural`.
    pub coordinates: String,
    /// How a URDF's base is held: `fixed` (welded to the world) or `floating`.
    pub root: String,
    /// Initial joint positions by joint name, replacing the file's.
    pub q0: toml::Table,
    /// Initial joint velocities by joint name, replacing the file's.
    pub v0: toml::Table,
    /// Seed of a random start: every joint uniform within its limits (±π/2 for a
    /// revolute joint without limits, ±π continuous, ±0.1 prismatic; a random attitude for
    /// spherical joints), then projected onto the loop closures. 0: the file's start.
    pub pose_seed: u64,
    /// Keep the file's joint damping (`false`: drop it, a conservative model).
    pub damping: bool,
    /// Keep the file's mimic relations as constraint rows (`false`: the joints move
    /// independently, as Pinocchio's `buildModel` reads a URDF).
    pub mimic: bool,
    /// Gravity in world coordinates, replacing the file's (URDF has none: (0, 0, −9.81)).
    pub gravity: Option<[f64; 3]>,
    /// The joint limits: `data` (kept as data, not enforced: the bilateral model) or
    /// `enforce` (each limited revolute and prismatic joint gets two unilateral rows,
    /// [`stops`]; joint coordinates only, run by an LCP method such as `moreau-jean`).
    pub limits: String,
    /// Coefficient of restitution e ∈ [0, 1] at the stops (`limits = "enforce"`); 0: a
    /// plastic stop, 1: elastic.
    pub restitution: f64,
    /// What becomes of an inertia no rigid body has (not positive semidefinite, breaking
    /// the triangle inequality, or rotational inertia without mass): `keep` (loaded as
    /// published, listed), `balance` (principal moments set to their mean, as MuJoCo's
    /// `balanceinertia`) or `refuse` ([`import::inertia`]).
    pub inertia: String,
    /// Default end time (s).
    pub t_end: f64,
    /// A converged trajectory of this model (`driftlab simulate --trace` of a run at a fine
    /// step) to measure the error columns against ([`trace_reference`]); joint coordinates
    /// only. Empty: none (the model has no reference).
    pub reference_trace: String,
    /// The trace's own error bound (absolute, in q), measured by whoever wrote it (e.g. the
    /// same method at twice the step); required with `reference_trace`.
    pub reference_accuracy: f64,
}

impl Default for ModelParams {
    fn default() -> Self {
        Self {
            robot: "double-pendulum".into(),
            file: String::new(),
            coordinates: "joint".into(),
            root: "fixed".into(),
            q0: toml::Table::new(),
            v0: toml::Table::new(),
            pose_seed: 0,
            damping: true,
            mimic: true,
            gravity: None,
            limits: "data".into(),
            restitution: 0.0,
            inertia: "keep".into(),
            t_end: 1.0,
            reference_trace: String::new(),
            reference_accuracy: 0.0,
        }
    }
}

/// Catalog entry `model`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "your mechanism from a model file (TOML, URDF, SDF, MJCF) or a shipped robot (double pendulum, UR5, Panda, Solo12, G1, Cassie, the gymnasium and dm_control MuJoCo models), in joint coordinates (CRBA, RNEA, loop closures as rows)",
        build: |t| build_problem(&params::parse("problem", ID, t)?),
        defaults: params::defaults::<ModelParams>,
    }
}

pub(crate) fn invalid(message: String) -> ParamError {
    ParamError::Invalid {
        kind: "problem",
        id: ID.into(),
        message,
    }
}

impl From<ModelError> for ParamError {
    fn from(e: ModelError) -> Self {
        invalid(e.to_string())
    }
}

/// The problem of `p` in its coordinates.
pub fn build_problem(p: &ModelParams) -> Result<Problem, ParamError> {
    let joint = build(p)?;
    if !p.reference_trace.is_empty() {
        if p.coordinates != "joint" {
            return Err(invalid(format!("reference_trace with coordinates = \"{}\": a trace holds joint coordinates; give coordinates = \"joint\"", p.coordinates)));
        }
        let trace = trace_reference::Trace::read(&p.reference_trace, joint.dims().n)?;
        let referenced = trace_reference::TraceReferenced::new(joint, trace, p.reference_accuracy)?;
        return Ok(Problem::Mechanical(Box::new(referenced)));
    }
    Ok(Problem::Mechanical(match p.coordinates.as_str() {
        "joint" => Box::new(joint),
        "body" => Box::new(in_body_coordinates(&joint, p)?),
        _ => Box::new(in_natural_coordinates(&joint, p)?),
    }))
}

/// The tree in joint coordinates, its start projected onto its constraints: the state
/// every coordinate choice starts from.
pub fn build(p: &ModelParams) -> Result<JointCoordinates, ParamError> {
    if !["joint", "body", "natural"].contains(&p.coordinates.as_str()) {
        return Err(invalid(format!(
            "coordinates = \"{}\": give \"joint\" (the tree's joint positions), \"body\" (a reference point and Euler parameters per body) or \"natural\" (a point and three unit axes per body)",
            p.coordinates
        )));
    }
    params::positive(ID, "t_end", p.t_end)?;
    let enforce = limits_enforced(p)?;
    let policy = inertia::Policy::parse(&p.inertia).ok_or_else(|| {
        invalid(format!(
            "inertia = \"{}\": give \"keep\" (an inertia no rigid body has loads as published, listed), \"balance\" (its principal moments set to their mean) or \"refuse\"",
            p.inertia
        ))
    })?;
    let loaded = load(p)?;
    let mut model = loaded.clone();
    apply_overrides(p, &mut model)?;
    inertia::apply(&mut model, policy)?;
    check::check(&model)?;
    something_to_integrate(&model, p)?;
    let unseeded = if p.pose_seed == 0 {
        None
    } else {
        let mut m = loaded;
        apply_overrides_seeded(p, &mut m, 0)?;
        Some(start_of(&m))
    };
    let (q0, v0) = start_of(&model);
    let mut sys = JointCoordinates::new(model, q0, v0, p.t_end, label_of(p), "joint");
    let names = sys.coordinate_names();
    if let Some(note) =
        mass_check::regular_mass(&sys, &names, &sys.model().file, Some(sys.model()))?
    {
        sys.note(note);
    }
    project_onto_closures(&mut sys, unseeded, p.pose_seed)?;
    if enforce {
        enforce_limits(&mut sys, p.restitution)?;
    }
    Ok(sys)
}

/// Refuse a model with nothing to move: no body, or no coordinate (every joint fixed and
/// the base welded), before anything runs (its residuals would be NaN over no rows).
fn something_to_integrate(model: &Model, p: &ModelParams) -> Result<(), ParamError> {
    if model.bodies.is_empty() {
        return Err(invalid(format!(
            "{}: the model has no body (no <link> with dynamics, no [[bodies]]): nothing to integrate; give a model file with links and joints",
            model.file
        )));
    }
    if model.tree_dof() == 0 {
        let fix = if p.root == "fixed" {
            "give root = \"floating\" to let the base move, or a joint that moves"
        } else {
            "give a joint that moves"
        };
        return Err(invalid(format!(
            "{}: the model's {} bodies have no degree of freedom (every joint fixed, the base welded to the world): nothing to integrate; {fix}",
            model.file,
            model.bodies.len()
        )));
    }
    Ok(())
}

/// Whether `limits` asks for the stops, with `restitution` checked.
fn limits_enforced(p: &ModelParams) -> Result<bool, ParamError> {
    let enforce = match p.limits.as_str() {
        "data" => false,
        "enforce" => true,
        other => {
            return Err(invalid(format!(
                "limits = \"{other}\": give \"data\" (kept as data, not enforced) or \"enforce\" (unilateral stops, run by an LCP method such as moreau-jean)"
            )))
        }
    };
    if !(0.0..=1.0).contains(&p.restitution) {
        return Err(ParamError::OutOfRange {
            id: ID.into(),
            field: "restitution",
            value: p.restitution,
            fix: "give a coefficient of restitution in [0, 1]".into(),
        });
    }
    if !enforce && p.restitution != 0.0 {
        return Err(params::inconsistent(
            ID,
            &[("restitution", p.restitution)],
            "restitution applies to the stops of limits = \"enforce\": give both, or neither",
        ));
    }
    if enforce && p.coordinates != "joint" {
        return Err(invalid(format!(
            "limits = \"enforce\" with coordinates = \"{}\": a joint's angle is a coordinate only in joint coordinates; give coordinates = \"joint\", or limits = \"data\"",
            p.coordinates
        )));
    }
    Ok(enforce)
}

/// Add the stops to `sys`, refusing a model without any and a start outside them.
fn enforce_limits(sys: &mut JointCoordinates, restitution: f64) -> Result<(), ParamError> {
    if sys.enforce_limits(restitution) == 0 {
        return Err(invalid(format!(
            "limits = \"enforce\": {} has no revolute or prismatic joint with lower < upper; give limits in the file, or limits = \"data\"",
            sys.model().file
        )));
    }
    let q = sys.initial_state().q;
    if let Some((stop, gap)) = sys.stops().and_then(|s| s.violated(&q, 1e-12)) {
        return Err(invalid(format!(
            "{}: the start is outside the stop {} (gap {gap:.3e}, limit {}); give q0 within the joint's limits",
            sys.model().file,
            stop.name,
            stop.bound
        )));
    }
    Ok(())
}

fn label_of(p: &ModelParams) -> String {
    let source = if p.file.is_empty() {
        format!("robot {}", p.robot)
    } else {
        p.file.clone()
    };
    if p.root == "floating" {
        format!("{source}, floating base")
    } else {
        source
    }
}

/// The merged tree (fixed joints folded in) and its forward pass at `joint`'s start.
fn merged_start(
    joint: &JointCoordinates, coordinates: &str,
) -> Result<(Model, tree::Frames), ParamError> {
    body_coords::refuse_joint_forces(joint.model(), coordinates)?;
    let merged = merge::merge_fixed(joint.model()).model;
    let st = joint.initial_state();
    let frames = tree::forward(&merged, &tree::Tree::new(&merged), &st.q, &st.v);
    Ok((merged, frames))
}

/// `joint`'s mechanism and start in body coordinates.
pub fn in_body_coordinates(
    joint: &JointCoordinates, p: &ModelParams,
) -> Result<JointCoordinates, ParamError> {
    let (merged, frames) = merged_start(joint, "body")?;
    let model = body_coords::body_model(&merged, &frames);
    check::check(&model)?;
    let (q0, v0) = start_of(&model);
    let mut sys = JointCoordinates::new(model, q0, v0, p.t_end, label_of(p), "body");
    if let Some(note) =
        mass_check::regular_mass(&sys, &sys.coordinate_names(), &sys.model().file, None)?
    {
        sys.note(note);
    }
    project_onto_closures(&mut sys, None, 0)?;
    Ok(sys)
}

/// `joint`'s mechanism and start in natural coordinates.
pub fn in_natural_coordinates(
    joint: &JointCoordinates, p: &ModelParams,
) -> Result<natural::NaturalSystem, ParamError> {
    let (merged, frames) = merged_start(joint, "natural")?;
    let mut info = joint.info();
    let scale = joint.energy_scale();
    let sys = natural_coords::natural_system(&merged, &frames, info.clone(), scale);
    let n = sys.dims();
    info.title = format!(
        "{} in natural coordinates ({}; n = {}, m = {})",
        merged.name,
        label_of(p),
        n.n,
        n.m
    );
    info.equations = "M q̈ = f − Φ_qᵀλ with M constant (K ⊗ I₃ per body, K = [m, m cᵀ; m c, ∫ρρᵀdm]) and f constant (gravity); Φ quadratic: each body's axes orthonormal, joints and loop closures as point, axis and slide rows".into();
    info.tags = vec![
        "spatial".into(),
        "model-file".into(),
        "natural-coordinates".into(),
    ];
    let sys = natural_coords::natural_system(&merged, &frames, info, scale);
    mass_check::regular_mass(
        &sys,
        &natural_coords::coordinate_names(&merged),
        &merged.file,
        None,
    )?;
    Ok(sys)
}

/// Read the file (or the shipped robot) into a [`Model`].
pub fn load(p: &ModelParams) -> Result<Model, ParamError> {
    let root = match p.root.as_str() {
        "fixed" => urdf::Root::Fixed,
        "floating" => urdf::Root::Floating,
        other => {
            return Err(invalid(format!(
                "root = \"{other}\": give \"fixed\" or \"floating\""
            )))
        }
    };
    let (name, text) = source(p)?;
    let ext = name.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    Ok(match ext.as_str() {
        "xml" if root_tag(&text) == Some("mujoco") => {
            let shipped = p.file.is_empty();
            let loader = move |path: &str| include_text(path, shipped);
            let model = mjcf::read(&name, &text, &loader)?;
            if root == urdf::Root::Floating {
                return Err(invalid(format!("{name}: root = \"floating\" for an MJCF model; an MJCF model says how its base moves (a free joint): leave root = \"fixed\"")));
            }
            model
        }
        "urdf" | "xml" => urdf::read(&name, &text, root)?,
        "toml" => {
            let mut model = toml_model::read(&name, &text)?;
            if root == urdf::Root::Floating {
                float_base(&mut model)?;
            }
            model
        }
        "sdf" => sdf::read(&name, &text, root)?,
        _ => {
            return Err(invalid(format!(
                "{name}: unknown model format `.{ext}`; give a .urdf, .sdf, .xml (MJCF or URDF) or .toml file"
            )))
        }
    })
}

/// The tag of the document's first element (`mujoco`, `robot`, …), read without parsing
/// the whole file: past the XML declaration, comments and processing instructions.
pub fn root_tag(text: &str) -> Option<&str> {
    let mut rest = text;
    loop {
        let k = rest.find('<')?;
        rest = &rest[k + 1..];
        if let Some(r) = rest.strip_prefix("!--") {
            rest = &r[r.find("-->")? + 3..];
        } else if rest.starts_with('?') || rest.starts_with('!') {
            rest = &rest[rest.find('>')? + 1..];
        } else {
            let end = rest.find(|c: char| c.is_whitespace() || c == '>' || c == '/')?;
            return Some(&rest[..end]);
        }
    }
}

/// The text of a file an MJCF model includes: a shipped model's from the embedded files,
/// a user's from disk (with the same checks as the model file).
fn include_text(path: &str, shipped: bool) -> Result<String, String> {
    if shipped {
        return robots::find_file(path)
            .map(str::to_string)
            .ok_or_else(|| format!("{path} is not among the shipped files"));
    }
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{} bytes, above the {MAX_FILE_BYTES} a model file may have",
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}

/// `root = "floating"` for a TOML model: its base (the body no joint has as child) gets a
/// floating joint from the world, as a URDF's does; a model whose joints already hold it
/// to the world is refused.
fn float_base(model: &mut Model) -> Result<(), ParamError> {
    if let Some(j) = model.joints.iter().find(|j| j.parent.is_none()) {
        return Err(ModelError::at(
            &model.file,
            &j.origin,
            "root = \"floating\" for a model whose joint holds it to the world",
            "leave root = \"fixed\", or give the base's joint type = \"floating\" in the file",
        )
        .into());
    }
    let mut is_child = vec![false; model.bodies.len()];
    model.joints.iter().for_each(|j| is_child[j.child] = true);
    if let Some(base) = is_child.iter().position(|c| !c) {
        let at = model.bodies[base].origin.clone();
        let joint = import::description::Joint::floating(
            "root_joint".into(),
            base,
            spatial::Placement::IDENTITY,
            at,
        );
        model.joints.insert(0, joint);
    }
    Ok(())
}

/// The model's file name and text: the shipped robot's (embedded at build time) or the
/// user's file, read once (the run manifest records its SHA-256, `datasets_read`).
pub fn source(p: &ModelParams) -> Result<(String, String), ParamError> {
    if p.file.is_empty() {
        let r = robots::find(&p.robot).ok_or_else(|| {
            invalid(format!(
                "robot = \"{}\" is not shipped; the robots are {}; or give file = \"path/to/model.urdf\"",
                p.robot,
                robots::ROBOTS.iter().map(|r| r.id).collect::<Vec<_>>().join(", ")
            ))
        })?;
        Ok((r.file.to_string(), r.text.to_string()))
    } else {
        Ok((p.file.clone(), read_file(&p.file)?))
    }
}

fn read_file(path: &str) -> Result<String, ParamError> {
    let meta = std::fs::metadata(path).map_err(|e| {
        invalid(format!(
            "file = \"{path}\": {e}; give the path of a .urdf or .toml model"
        ))
    })?;
    if !meta.is_file() {
        return Err(invalid(format!(
            "file = \"{path}\" is not a file; give the path of a .urdf or .toml model"
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(invalid(format!(
            "file = \"{path}\" is {} bytes, above the {} bytes a model file may have; strip meshes and generated content, or check that this is the model",
            meta.len(),
            MAX_FILE_BYTES
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| invalid(format!("file = \"{path}\": {e}")))?;
    if let Some(k) = bytes.iter().position(|&b| b == 0) {
        return Err(invalid(format!(
            "file = \"{path}\" is not UTF-8 text (a NUL byte at {k}: UTF-16 or a binary file); save the model as UTF-8 text"
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        invalid(format!(
            "file = \"{path}\" is not UTF-8 text (byte {}); give a text model file",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The parameters that replace the file's: gravity, damping, start by name, a random pose.
pub(crate) fn apply_overrides(p: &ModelParams, model: &mut Model) -> Result<(), ParamError> {
    apply_overrides_seeded(p, model, p.pose_seed)
}

/// [`apply_overrides`] with the random pose of `seed` (0: the file's).
fn apply_overrides_seeded(p: &ModelParams, model: &mut Model, seed: u64) -> Result<(), ParamError> {
    if let Some(g) = p.gravity {
        for (k, x) in g.iter().enumerate() {
            params::finite(ID, ["gravity[0]", "gravity[1]", "gravity[2]"][k], *x)?;
        }
        model.gravity = g;
    }
    if !p.damping {
        model.joints.iter_mut().for_each(|j| j.damping = 0.0);
    }
    if !p.mimic {
        model.joints.iter_mut().for_each(|j| j.mimic = None);
    }
    if seed != 0 {
        random_pose(model, seed);
    }
    for (field, table) in [("q0", &p.q0), ("v0", &p.v0)] {
        for (name, value) in table {
            let j = model.joint(name).ok_or_else(|| {
                invalid(format!(
                    "{field}.{name}: no joint `{name}` in {}; the joints are {}",
                    model.file,
                    model
                        .joints
                        .iter()
                        .map(|j| j.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            let values = override_values(field, name, value)?;
            let joint = &mut model.joints[j];
            if field == "q0" {
                joint.q0 = values
            } else {
                joint.v0 = values
            }
        }
    }
    Ok(())
}

/// The numbers of a `q0.JOINT` or `v0.JOINT` parameter: a number or a list of numbers,
/// each finite; anything else is refused naming the parameter (not the file's line).
fn override_values(field: &str, name: &str, value: &toml::Value) -> Result<Vec<f64>, ParamError> {
    let number = |x: &toml::Value| x.as_float().or(x.as_integer().map(|i| i as f64));
    let values: Option<Vec<f64>> = match value {
        toml::Value::Array(a) => a.iter().map(number).collect(),
        v => number(v).map(|x| vec![x]),
    };
    match values {
        Some(v) if !v.is_empty() && v.iter().all(|x| x.is_finite()) => Ok(v),
        _ => Err(invalid(format!(
            "{field}.{name} = {value}: give a finite number, or a list of finite numbers for a spherical or floating joint"
        ))),
    }
}

/// SplitMix64 (Steele, Lea & Flood, OOPSLA 2014), uniform in [0, 1).
pub(crate) fn uniform(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

pub(crate) fn random_pose(model: &mut Model, seed: u64) {
    let mut s = seed;
    for j in 0..model.joints.len() {
        let joint = &model.joints[j];
        let (lo, hi) = sampling_range(joint.kind, joint.limits);
        let joint = &mut model.joints[j];
        match joint.kind {
            JointKind::Spherical | JointKind::Floating => {
                let p: Vec<f64> = (0..4).map(|_| 2.0 * uniform(&mut s) - 1.0).collect();
                let n = p
                    .iter()
                    .map(|x| x * x)
                    .sum::<f64>()
                    .sqrt()
                    .max(f64::MIN_POSITIVE);
                let at = joint.q0.len() - 4;
                for k in 0..4 {
                    joint.q0[at + k] = p[k] / n;
                }
            }
            JointKind::Fixed => {}
            _ => joint.q0[0] = lo + (hi - lo) * uniform(&mut s),
        }
    }
    for j in 0..model.joints.len() {
        if let Some(m) = model.joints[j].mimic.clone() {
            if let Some(l) = model.joint(&m.leader) {
                model.joints[j].q0[0] = m.multiplier * model.joints[l].q0[0] + m.offset;
            }
        }
    }
}

/// Where a random pose draws a 1-coordinate joint: within its limits, else ±π/2 for a
/// revolute joint, ±π continuous, ±0.1 prismatic; with a one-sided limit (SDF's unbounded
/// default on the other side), that range moved inside the bound.
fn sampling_range(kind: JointKind, limits: Option<Limits>) -> (f64, f64) {
    use std::f64::consts::{FRAC_PI_2, PI};
    let (dlo, dhi) = match kind {
        JointKind::Revolute => (-FRAC_PI_2, FRAC_PI_2),
        JointKind::Continuous => (-PI, PI),
        JointKind::Prismatic => (-0.1, 0.1),
        _ => return (0.0, 0.0),
    };
    let Some(l) = limits.filter(|_| kind != JointKind::Continuous) else {
        return (dlo, dhi);
    };
    match (l.lower.is_finite(), l.upper.is_finite()) {
        (true, true) if l.upper > l.lower => (l.lower, l.upper),
        (true, true) => (dlo, dhi),
        (true, false) => {
            let lo = l.lower.max(dlo);
            (lo, lo + (dhi - dlo))
        }
        (false, true) => {
            let hi = l.upper.min(dhi);
            (hi - (dhi - dlo), hi)
        }
        (false, false) => (dlo, dhi),
    }
}

/// `(q₀, q̇₀)` from the joints' starts: quaternion rates `ṗ = ½ Gᵀ ω'` from body rates.
pub(crate) fn start_of(model: &Model) -> (Vec<f64>, Vec<f64>) {
    let (mut q, mut v) = (Vec::new(), Vec::new());
    for j in &model.joints {
        q.extend(&j.q0);
        let quat_rates = |p: &[f64], w: &[f64]| -> Vec<f64> {
            let g = spatial::quat_g(p);
            (0..4)
                .map(|k| 0.5 * (0..3).map(|i| g[i][k] * w[i]).sum::<f64>())
                .collect()
        };
        match j.kind {
            JointKind::Spherical => v.extend(quat_rates(&j.q0, &j.v0)),
            JointKind::Floating => {
                v.extend(&j.v0[..3]);
                v.extend(quat_rates(&j.q0[3..], &j.v0[3..]));
            }
            _ => v.extend(&j.v0),
        }
    }
    (q, v)
}

/// A start off the closures (or the unit norms, or the mimics) is projected onto them in
/// the mass metric ([`assemble`]: redundant rows and far seeded poses included); one that
/// cannot be is refused. `unseeded`: the file's start `(q, v)` when `seed` drew the pose.
pub(crate) fn project_onto_closures(
    sys: &mut JointCoordinates, unseeded: Option<(Vec<f64>, Vec<f64>)>, seed: u64,
) -> Result<(), ParamError> {
    let st = sys.initial_state();
    let (pos, vel) = crate::initial::mechanical_residuals(sys, &st);
    let scale = 1.0 + st.q.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    if pos <= 1e-12 * scale && vel <= 1e-12 * scale {
        return Ok(());
    }
    let file = sys.model().file.clone();
    let refused = |why: String| {
        invalid(format!(
            "{file}: the start is off its constraints (‖Φ‖∞ = {pos:.3e}, ‖Φ_q v‖∞ = {vel:.3e}) and the projection onto them failed ({why}); give q0 nearer to an assembled pose"
        ))
    };
    let projected = match (assemble::project(sys, &st, &st), unseeded) {
        (Ok(done), _) => done,
        (Err(why), None) => return Err(refused(why)),
        (Err(why), Some((q, v))) => {
            let mut from = st.clone();
            (from.q, from.v) = (q, v);
            let from = assemble::project(sys, &from, &from)
                .map_err(|e| refused(format!("{why}; the file's own pose: {e}")))?;
            let (reached, fraction) = assemble::toward(sys, &from, &st);
            if fraction < 1.0 {
                sys.note(assemble::partway_note(fraction, seed));
            }
            reached
        }
    };
    if let Some((rows, residual)) = projected.loose {
        sys.note(assemble::loose_note(rows, residual));
    }
    let projected = projected.state;
    sys.set_start(projected);
    Ok(())
}
