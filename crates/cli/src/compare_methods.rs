//! `compare-methods FILE`: the whole comparison on a user's own mechanism in one command.
//! The model is read and checked first (a bad file exits 2 before anything is written);
//! then everything goes into one folder of its own, `OUT/mechanism-STEM` — the spec
//! (`mechanism-STEM.toml`: the robots-coordinates experiment's six stabilizations on this
//! model, in every coordinate choice the model allows), the results
//! (`mechanism-STEM/`), and their report (`report.pdf`, `index.md`, `index.html`,
//! `tables/`). The spec stays, so the run can be repeated or edited with `driftlab run`.
//!
//! The folder is the command's own: `compare-methods.json` in it names the model file
//! (canonical path and SHA-256) and every entry the command wrote. A folder of that name
//! that is not the command's, or that belongs to another model with the same file stem,
//! is left alone and the next free name (`mechanism-STEM-2`, …) is taken; an entry the
//! command did not write inside its own folder stops it before anything is written. So
//! nothing the user wrote is overwritten, and two models never share a folder.

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
    /// Output root: the spec, the results and their report go to OUT/mechanism-STEM.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// `quick` (0.1 s, one step size: a minute on a laptop for a 30-joint robot) or
    /// `full` (1 s, two step sizes, two tolerances).
    #[arg(long, default_value = "full")]
    size: String,
    /// Cells run side by side.
    #[arg(long)]
    threads: Option<usize>,
    /// Replace an interrupted run's results in the folder (driftlab's own files only).
    #[arg(long, conflicts_with = "resume")]
    force: bool,
    /// Continue the interrupted run in the folder (the spec must be unchanged).
    #[arg(long)]
    resume: bool,
}

/// The coordinate choices a model is compared in: those it builds in, and why the others
/// were left out (each reason printed, and kept in the spec as a comment).
struct Coordinates {
    kept: Vec<&'static str>,
    left_out: Vec<String>,
}

/// The coordinate choices this model can be stated in: body and natural coordinates
/// need a model without joint springs, torques and mimics (damping is dropped for the
/// comparison), and a mass and full inertia on every body (a point mass is fine in joint
/// coordinates only); each is built once here so that the spec lists none that fails.
fn coordinates(p: &ModelParams) -> Result<Coordinates, Failure> {
    // Built from the spec's start (`pose_seed = 1`), where its runs begin.
    let p = &ModelParams {
        pose_seed: 1,
        ..p.clone()
    };
    let joint = model::build(p).map_err(bad)?;
    let mut c = Coordinates {
        kept: vec!["joint"],
        left_out: Vec::new(),
    };
    if let Err(e) = model::body_coords::refuse_joint_forces(joint.model(), "body") {
        c.left_out
            .push(format!("body and natural coordinates: {e}"));
    } else {
        for choice in ["body", "natural"] {
            let with = ModelParams {
                coordinates: choice.into(),
                ..p.clone()
            };
            match model::build_problem(&with) {
                Ok(_) => c.kept.push(choice),
                Err(e) => c.left_out.push(format!("{choice} coordinates: {e}")),
            }
        }
    }
    for why in &c.left_out {
        eprintln!("note: left out: {why}");
    }
    Ok(c)
}

/// Whether the model's rows are redundant at the spec's start (`pose_seed = 1`): the
/// tolerance to remove them at, the default (exactly redundant: a planar loop closed by a
/// ball joint) or 1e-5 (redundant to a file's printed digits, as Cassie's plantar rods).
fn redundant_tol(p: &ModelParams) -> Result<Option<f64>, Failure> {
    use driftlab_core::MechanicalSystem;
    use driftlab_problems::independent_rows::{independent_at_start, INDEPENDENCE_TOL};
    let sys = model::build(&ModelParams {
        pose_seed: 1,
        ..p.clone()
    })
    .map_err(bad)?;
    let m = sys.dims().m;
    Ok([INDEPENDENCE_TOL, 1e-5]
        .into_iter()
        .find(|&tol| independent_at_start(&sys, tol).len() < m))
}

/// The problem entry's parameters beyond the model's own: the removal of redundant rows.
fn redundant_params(tol: Option<f64>) -> String {
    match tol {
        None => String::new(),
        Some(t) if t == driftlab_problems::independent_rows::INDEPENDENCE_TOL => {
            ", redundant = \"remove\"".into()
        }
        Some(t) => format!(", redundant = \"remove\", redundant_tol = {t:e}"),
    }
}

/// The spec of the comparison.
fn spec_text(
    name: &str, file: &str, root: &str, coords: &Coordinates, redundant: Option<f64>,
) -> String {
    let list = coords
        .kept
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let plain = coords.kept.join(", ");
    let left_out: String = coords
        .left_out
        .iter()
        .map(|why| format!("\n# Left out: {}", why.replace('\n', " ")))
        .collect();
    let quoted = toml::Value::String(file.to_string()).to_string();
    let extra = redundant_params(redundant);
    let why = if redundant.is_some() {
        "\n# Its loop closures have rows implied by the others at the start (a planar loop closed\n# by a ball or revolute joint): they are removed (`redundant`), as the KKT matrix of\n# every method would be singular with them."
    } else {
        ""
    };
    format!(
        r#"# Written by `driftlab compare-methods` for {file}: the six stabilizations of the
# robots-coordinates experiment on this model in {plain} coordinates, released from a
# seeded pose at rest with the file's joint damping dropped (so the energy error measures
# the method). The report's recommendation rule applies to it: among the runs whose
# relative energy error stays within 1e-4, the fastest is recommended. Edit and rerun
# with `driftlab run`.{why}{left_out}
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
params = {{ file = {quoted}, root = "{root}", damping = false, pose_seed = 1, coordinates = [{list}]{extra} }}

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
note = "The model is conservative here (its joint damping dropped), so the relative energy error over the run measures each method's accuracy; the drift columns (max ‖Φ‖∞ and its derivatives) stand beside it in the runs table."
target_why = "An energy error of 1e-4 relative is one a simulation of a robot's own motion can carry without a visible change of its path over the run; a method that misses it changes the motion a user would act on."

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
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let clean = clean.trim_matches('-');
    format!(
        "mechanism-{}",
        if clean.is_empty() { "model" } else { clean }
    )
}

/// The marker of a folder the command owns.
const MARKER: &str = "compare-methods.json";

/// What `compare-methods.json` records: the model and every entry the command wrote.
#[derive(serde::Serialize, serde::Deserialize, Default)]
struct Marker {
    /// The model file's canonical path.
    model: String,
    /// Its SHA-256 when the folder was written.
    model_sha256: String,
    /// SHA-256 of the spec as the command wrote it (an edited spec is the user's).
    #[serde(default)]
    spec_sha256: String,
    /// The folder's entries the command wrote (top level).
    entries: Vec<String>,
}

/// The folder for `file` under `out`: the one whose marker names this model, else the
/// first free `base`, `base-2`, … (a name taken by another model or by files the command
/// did not write is skipped, never touched).
fn own_folder(out: &Path, base: &str, file: &str) -> Result<(String, Option<Marker>), Failure> {
    for k in 1..=1000 {
        let name = if k == 1 {
            base.to_string()
        } else {
            format!("{base}-{k}")
        };
        let dir = out.join(&name);
        if !dir.exists() {
            return Ok((name, None));
        }
        let marker = std::fs::read_to_string(dir.join(MARKER))
            .ok()
            .and_then(|t| serde_json::from_str::<Marker>(&t).ok());
        if let Some(m) = marker.filter(|m| m.model == file) {
            return Ok((name, Some(m)));
        }
    }
    Err(bad(format!(
        "`{}` holds 1000 folders named {base}…: choose another --out",
        out.display()
    )))
}

/// Refuse an entry of the folder that the command did not write (a user's file).
fn only_own_entries(dir: &Path, marker: &Marker) -> Result<(), Failure> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| bad(format!("cannot read `{}`: {e}", dir.display())))?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        // A file of its own that a killed run left half-written (`.NAME.partial`, the
        // atomic writes' temporary): the rerun writes it again.
        let own_partial = name
            .strip_prefix('.')
            .and_then(|n| n.strip_suffix(".partial"))
            .is_some_and(|n| marker.entries.iter().any(|m| m == n));
        if own_partial {
            continue;
        }
        if name != MARKER && !name.starts_with(".driftlab") && !marker.entries.contains(&name) {
            return Err(bad(format!(
                "`{}` holds `{name}`, which compare-methods did not write; move it out of the folder (compare-methods writes only its own files there)",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// What the command writes at the top of its folder `name`: the spec, the results folder
/// and the report's files. Recorded in the marker before anything is written, so that a
/// run killed part-way leaves a folder that `--resume` recognizes as the command's own.
fn planned_entries(name: &str) -> Vec<String> {
    let mut entries: Vec<String> = [
        format!("{name}.toml"),
        name.to_string(),
        "report.pdf".into(),
        "index.md".into(),
        "index.html".into(),
        "tables".into(),
    ]
    .into();
    entries.sort();
    entries
}

/// Record the folder's entries: the planned ones and any other the command wrote (foreign
/// ones were refused before).
fn write_marker(dir: &Path, name: &str, file: &str, sha: &str, spec: &str) -> Result<(), Failure> {
    let mut entries = planned_entries(name);
    let written = std::fs::read_dir(dir)
        .map_err(|e| bad(format!("cannot read `{}`: {e}", dir.display())))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != MARKER && !n.starts_with(".driftlab"));
    for n in written {
        if !entries.contains(&n) {
            entries.push(n);
        }
    }
    entries.sort();
    let marker = Marker {
        model: file.to_string(),
        model_sha256: sha.to_string(),
        spec_sha256: driftlab_runner::store::manifest::sha256_hex(spec),
        entries,
    };
    let text = serde_json::to_string_pretty(&marker)
        .map_err(|e| Failure(format!("cannot encode {MARKER}: {e}"), 1))?;
    std::fs::write(dir.join(MARKER), text).map_err(|e| {
        Failure(
            format!("cannot write `{}`: {e}", dir.join(MARKER).display()),
            1,
        )
    })
}

/// The checked model of `args`: its canonical path, its parameters, the coordinate
/// choices it allows and its text's SHA-256 (exit 2 before anything is written).
fn checked_model(
    args: &CompareMethodsArgs,
) -> Result<(String, ModelParams, Coordinates, String), Failure> {
    if !["quick", "full"].contains(&args.size.as_str()) {
        return Err(bad(format!("--size {}: give quick or full", args.size)));
    }
    let file = std::fs::canonicalize(&args.file).map_err(|e| {
        bad(format!(
            "model file `{}`: {e}; give the path of a .urdf, .sdf or .toml model",
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
    let (_, model_text) = model::source(&p).map_err(bad)?;
    Ok((
        file_text,
        p,
        coords,
        driftlab_runner::store::manifest::sha256_hex(&model_text),
    ))
}

/// Refuse what would make the command write over the user's work or resume another run,
/// before anything is written: an edited spec, or `--resume` against a spec the command
/// would now write differently (`--resume` with nothing to resume starts afresh, as
/// `run --resume` does).
fn check_spec(
    root: &Path, name: &str, text: &str, marker: Option<&Marker>, resume: bool,
) -> Result<(), Failure> {
    let spec = root.join(format!("{name}.toml"));
    let on_disk = std::fs::read_to_string(&spec).ok();
    if let (Some(m), Some(t)) = (marker, &on_disk) {
        if driftlab_runner::store::manifest::sha256_hex(t) != m.spec_sha256 {
            return Err(bad(format!(
                "`{}` was edited since compare-methods wrote it; run your edit with `driftlab run {} --out {}`, or move the spec out to let compare-methods write its own",
                spec.display(),
                spec.display(),
                root.join(name).display()
            )));
        }
    }
    if resume && on_disk.as_deref().is_some_and(|t| t != text) {
        return Err(bad(format!(
            "--resume: `{}` is not the spec this command writes now (the model's coordinate choices or --root changed); rerun without --resume",
            spec.display()
        )));
    }
    Ok(())
}

/// The command's own folder under `--out` for the model, checked, and the spec text it
/// will write there; nothing is created yet.
fn plan(
    args: &CompareMethodsArgs, file_text: &str, p: &ModelParams, coords: &Coordinates,
) -> Result<(PathBuf, String, String, Option<Marker>), Failure> {
    let (name, marker) = own_folder(&args.out, &name_of(Path::new(file_text)), file_text)?;
    let root = args.out.join(&name);
    if let Some(m) = &marker {
        only_own_entries(&root, m)?;
    }
    let text = spec_text(&name, file_text, &args.root, coords, redundant_tol(p)?);
    check_spec(&root, &name, &text, marker.as_ref(), args.resume)?;
    Ok((root, name, text, marker))
}

/// Run `compare-methods`.
pub fn compare_methods(registry: &Registry, args: &CompareMethodsArgs) -> Result<(), Failure> {
    let (file_text, p, coords, sha) = checked_model(args)?;
    let (root, name, text, _) = plan(args, &file_text, &p, &coords)?;
    std::fs::create_dir_all(&root).map_err(|e| {
        bad(format!(
            "cannot create `{}`: {e}; choose a writable --out",
            root.display()
        ))
    })?;
    let marker = || write_marker(&root, &name, &file_text, &sha, &text);
    marker()?;
    let spec = root.join(format!("{name}.toml"));
    // Atomically: a kill mid-write must not leave a cut spec that the next run reads as
    // the user's edit.
    driftlab_runner::store::atomic::write_atomically(&spec, |f| {
        std::io::Write::write_all(f, text.as_bytes()).map_err(|e| e.to_string())
    })
    .map_err(|e| bad(format!("{e}; choose a writable --out")))?;
    let run = RunArgs {
        spec: spec.clone(),
        out: Some(root.join(&name)),
        threads: args.threads,
        size: (args.size == "quick").then(|| "quick".into()),
        resume: args.resume,
        force: args.force,
        cell_seconds: None,
        shard: None,
    };
    let result = run_one(registry, run).map_err(|Failure(m, c)| {
        Failure(
            m.replace("rerun with --force", "rerun compare-methods with --force"),
            c,
        )
    });
    marker()?;
    result?;
    crate::report(&root)?;
    marker()?;
    out!(
        "spec {} (rerun or edit it with `driftlab run`); results and report in {}",
        spec.display(),
        root.display()
    );
    Ok(())
}
