//! `compare-methods FILE`: the whole comparison on a user's own mechanism in one command.
//! The model is read and checked first (a bad file exits 2 before anything runs); then a
//! spec is written beside the results — the robots-coordinates experiment's six
//! stabilizations on this model, in every coordinate choice the model allows — run like
//! any experiment, and the report of the output root rebuilt. The spec stays, so the run
//! can be repeated, resumed or edited with `driftlab run`.

use crate::{bad, run_one, Failure, RunArgs};
use driftlab_problems::model::{self, ModelParams};
use driftlab_runner::Registry;
use std::path::{Path, PathBuf};

/// Arguments of `compare-methods`.
#[derive(clap::Args)]
pub struct CompareMethodsArgs {
    /// The model file (.urdf or .toml).
    file: PathBuf,
    /// How a URDF's base is held: `fixed` or `floating`.
    #[arg(long, default_value = "fixed")]
    root: String,
    /// Output root: the spec and the results go to OUT/NAME, the report to OUT.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// `quick` (0.1 s, one step size: a minute on a laptop for a 30-joint robot) or
    /// `full` (1 s, two step sizes, two tolerances).
    #[arg(long, default_value = "full")]
    size: String,
    /// Cells run side by side.
    #[arg(long)]
    threads: Option<usize>,
    /// Replace results already in OUT/NAME (driftlab's own files only).
    #[arg(long)]
    force: bool,
}

/// The coordinate choices this model can be stated in: body and natural coordinates
/// need a model without joint springs, torques and mimics (damping is dropped for the
/// comparison).
fn coordinates(p: &ModelParams) -> Result<Vec<&'static str>, Failure> {
    let joint = model::build(p).map_err(bad)?;
    let mut out = vec!["joint"];
    if model::body_coords::refuse_joint_forces(joint.model(), "body").is_ok() {
        out.extend(["body", "natural"]);
    }
    Ok(out)
}

/// The spec of the comparison.
fn spec_text(name: &str, file: &str, root: &str, coords: &[&str]) -> String {
    let list = coords
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let plain = coords.join(", ");
    let quoted = toml::Value::String(file.to_string()).to_string();
    format!(
        r#"# Written by `driftlab compare-methods` for {file}: the six stabilizations of the
# robots-coordinates experiment on this model in {plain} coordinates, released from a
# seeded pose at rest with the file's joint damping dropped (so the energy error measures
# the method). The report's recommendation rule applies to it: among the runs whose
# relative energy error stays within 1e-4, the fastest is recommended. Edit and rerun
# with `driftlab run`.
schema_version = 1
name = "{name}"
description = "Your mechanism {name} in {plain} coordinates, by Baumgarte, projection, generalized-α, RATTLE, projected Gauss s = 2 and Radau IIA: drift, energy error and time per step (driftlab compare-methods)."
t_end = 1.0
trace_stride = 0

[steps]
h = [1e-3, 2.5e-4]
adaptive = {{ rtol = [1e-6, 1e-9], h0 = 1e-5 }}

[[problems]]
id = "model"
params = {{ file = {quoted}, root = "{root}", damping = false, pose_seed = 1, coordinates = [{list}] }}

[[methods]]
id = "baumgarte"
stepping = "fixed"

[[methods]]
id = "taylor"
projection = {{ tol = 1e-12 }}
stepping = "fixed"

[[methods]]
id = "generalized-alpha"
stepping = "fixed"

[[methods]]
id = "rattle"
stepping = "fixed"

[[methods]]
id = "gauss"
params = {{ stages = 2 }}
projection = {{ tol = 1e-12 }}
stepping = "fixed"

[[methods]]
id = "radau"
stepping = "adaptive"

[report]
class = "your mechanism: {name}"
measure = "max_energy_rel_error"
target = 1e-4
note = "The model is conservative here (its joint damping dropped), so the relative energy error over the run measures each method's accuracy; the drift columns (max ‖Φ‖∞ and its derivatives) stand beside it in the runs table. Target 1e-4: an energy error a simulation of a robot's own motion can carry without a visible change of its path over the run."

[sizes.quick]
t_end = 0.1
steps = {{ h = [1e-3], adaptive = {{ rtol = [1e-6] }} }}
"#
    )
}

/// The experiment's name: `mechanism-` and the file's stem, reduced to `[a-z0-9-]`.
fn name_of(file: &Path) -> String {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    let clean: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("mechanism-{}", clean.trim_matches('-'))
}

/// Run `compare-methods`.
pub fn compare_methods(registry: &Registry, args: &CompareMethodsArgs) -> Result<(), Failure> {
    if !["quick", "full"].contains(&args.size.as_str()) {
        return Err(bad(format!("--size {}: give quick or full", args.size)));
    }
    let file = std::fs::canonicalize(&args.file).map_err(|e| {
        bad(format!(
            "model file `{}`: {e}; give the path of a .urdf or .toml model",
            args.file.display()
        ))
    })?;
    let file_text = file.display().to_string();
    let p = ModelParams {
        file: file_text.clone(),
        root: args.root.clone(),
        damping: false,
        ..ModelParams::default()
    };
    let coords = coordinates(&p)?;
    let name = name_of(&file);
    let dir = args.out.join(&name);
    std::fs::create_dir_all(&args.out).map_err(|e| {
        bad(format!(
            "cannot create `{}`: {e}; choose a writable --out",
            args.out.display()
        ))
    })?;
    let spec = args.out.join(format!("{name}.toml"));
    std::fs::write(&spec, spec_text(&name, &file_text, &args.root, &coords)).map_err(|e| {
        bad(format!(
            "cannot write `{}`: {e}; choose a writable --out",
            spec.display()
        ))
    })?;
    let run = RunArgs {
        spec: spec.clone(),
        out: Some(dir),
        threads: args.threads,
        size: (args.size == "quick").then(|| "quick".into()),
        resume: false,
        force: args.force,
        cell_seconds: None,
        shard: None,
    };
    run_one(registry, run)?;
    crate::report(&args.out)?;
    out!(
        "spec {} (rerun or edit it with `driftlab run`); report in {}",
        spec.display(),
        args.out.display()
    );
    Ok(())
}
