//! `driftlab`: the command line over the runner and the report, as a library so that a
//! user's crate gets the same command line over its own problems and methods:
//!
//! ```no_run
//! use driftlab_runner::Registry;
//! # fn my_problem() -> driftlab_problems::ProblemEntry { driftlab_problems::planar::pendulum::entry() }
//! fn main() -> std::process::ExitCode {
//!     driftlab_cli::main_with(Registry::with_defaults().problem(my_problem()))
//! }
//! ```
//!
//! Exit status: 0 when the command did its work; 2 for bad input, refused before anything
//! runs (unknown id, unknown or invalid parameter, malformed spec, a step count beyond the
//! budget, a size beyond memory, a resume against another spec), with a message naming
//! the field and the fix; 1 when `simulate`'s run fails on the way (its summary is
//! printed) or results cannot be written. A sweep whose cells fail is not an error of
//! `run` (failed cells are rows in the results, with their `fail_kind`).

use clap::{Parser, Subcommand, ValueEnum};
use driftlab_core::MethodInfo;
use driftlab_runner::store::folder::Claim;
use driftlab_runner::{run_spec, Registry, RunOptions, Spec};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "driftlab",
    version,
    about = "Verify and benchmark constraint stabilization methods for constrained mechanical systems"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// Refuse a cell whose estimated memory exceeds this many bytes (suffixes K, M, G, T:
    /// e.g. 8G) as a failed row with `fail_kind = memory`; the memory available at the
    /// cell's start limits it in any case.
    #[arg(long, global = true, value_name = "BYTES")]
    memory_limit: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum What {
    Problems,
    Methods,
    /// `docs/catalog.md` (Markdown, from the registry).
    Catalog,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the problem or method catalog.
    List {
        /// `problems`, `methods`, or `catalog` (both as `docs/catalog.md`'s Markdown).
        what: What,
    },
    /// Show a problem's or method's equations, parameters with defaults, and citation.
    Describe {
        /// Catalog id.
        id: String,
        /// A problem parameter for the structure shown (`n`, `m`, nonzeros, rank at the
        /// initial state), e.g. `--set links=100`; repeatable.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Run one experiment spec.
    Run(RunArgs),
    /// Combine the folders of a sharded run (`run --shard I/N`, all N of them) into one
    /// result folder whose rows equal an unsharded run's.
    Merge {
        /// The shard folders.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Result folder.
        #[arg(long)]
        out: PathBuf,
    },
    /// Add another simulator's measured runs (one JSON object per run, e.g. from
    /// scripts/mujoco_peer.py) to an experiment folder's runs table, beside its own rows
    /// and the peer rows imported before (a run imported twice is refused).
    ImportPeer {
        /// The peer's rows.
        file: PathBuf,
        /// The experiment folder whose cells the peer ran.
        #[arg(long)]
        into: PathBuf,
        /// Replace the rows imported before of this file's simulators (the first word of
        /// each label; other simulators' rows stay), instead of adding to them. A folder
        /// whose peer rows an older driftlab imported without `peers.jsonl` has all of them
        /// replaced (their simulator is not on record).
        #[arg(long)]
        replace: bool,
    },
    /// Compare two result folders in every column except the measured ones (times,
    /// heap): exit 0 when they agree, 1 listing the differences.
    Compare {
        /// One result folder.
        a: PathBuf,
        /// The other.
        b: PathBuf,
    },
    /// One digest per result folder under DIR of every column `compare` compares, bit for
    /// bit: printed, written (`--write FILE`) or checked against a stored file (`--check
    /// FILE`: exit 1 listing the folders that differ).
    Fingerprint {
        /// A result folder, or a folder of result folders (a `run-experiments` output).
        dir: PathBuf,
        /// Compare with this stored fingerprint file.
        #[arg(long, conflicts_with = "write")]
        check: Option<PathBuf>,
        /// Write the fingerprint to this file.
        #[arg(long)]
        write: Option<PathBuf>,
    },
    /// Write a Slurm job array running SPEC in shards, and a merge job after it
    /// (OUT/slurm/submit.sh submits both).
    Slurm(SlurmArgs),
    /// Simulate one problem with one method and print (or write) the trajectory.
    Simulate(simulate::SimulateArgs),
    /// Sample a model's joint-space dynamics at random states (mass matrix, constrained
    /// acceleration at zero torque) as JSON: the data of the cross-check against
    /// Pinocchio (scripts/pinocchio-check.sh).
    ModelDynamics {
        /// A parameter of the `model` problem (`robot=…`, `file=…`, `root=…`), repeatable.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Number of states.
        #[arg(long, default_value_t = 100)]
        states: usize,
        /// Seed of the first state.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output file (JSON).
        #[arg(long)]
        out: PathBuf,
    },
    /// Compare the stabilizations on your own mechanism: check the model file (URDF or
    /// TOML), write and run a spec of six methods in every coordinate choice it allows,
    /// and rebuild the report.
    CompareMethods(compare_methods::CompareMethodsArgs),
    /// The constraint stabilization the tuning guide recommends for a model's loops at a
    /// step, in each engine's parameters (Baumgarte, MuJoCo solref, Pinocchio Kp/Kd,
    /// ODE/Bullet ERP/CFM, Box2D/Rapier), and optionally a copy of an MJCF model with it.
    Tune(tune::TuneArgs),
    /// Run every experiments/*.toml, then build the figures.
    RunExperiments {
        /// Folder with the specs.
        #[arg(long, default_value = "experiments")]
        dir: PathBuf,
        /// Output root.
        #[arg(long, default_value = "reports")]
        out: PathBuf,
        /// Named size (quick for CI, full for paper figures).
        #[arg(long)]
        size: Option<String>,
        /// Threads running cells side by side.
        #[arg(long)]
        threads: Option<usize>,
        /// Continue an interrupted run: experiments already complete are kept, an
        /// interrupted one continues from its journal, the others run.
        #[arg(long)]
        resume: bool,
        /// Discard interrupted runs and results of other experiments in the output
        /// folders (driftlab's own files only) instead of refusing them.
        #[arg(long, conflicts_with = "resume")]
        force: bool,
    },
    /// Build figures for every result folder under DIR from stored results only.
    Report {
        /// Output root holding EXPERIMENT/runs.parquet.
        #[arg(long, default_value = "reports")]
        dir: PathBuf,
    },
}

/// `run`: one spec, optionally one shard of it, optionally resumed.
#[derive(clap::Args)]
struct RunArgs {
    /// Spec file (TOML).
    spec: PathBuf,
    /// Output folder (default reports/NAME).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Threads running cells side by side (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Named size from the spec's `sizes` tables (e.g. quick); default full.
    #[arg(long)]
    size: Option<String>,
    /// Continue the interrupted sweep in the output folder: the cells its journal
    /// recorded are kept, the rest run (the spec, size and threads must be the same).
    #[arg(long)]
    resume: bool,
    /// Discard whatever run the output folder holds (an interrupted run, another
    /// experiment's results): driftlab's own files there are removed, others stay.
    /// Without it such a folder is refused; a complete run of the same experiment is
    /// always replaced.
    #[arg(long, conflicts_with = "resume")]
    force: bool,
    /// Wall-time budget per cell in seconds, replacing the spec's `cell_seconds`: a cell
    /// past it is a failed row (`fail_kind = time-budget`) with the time it reached.
    #[arg(long, value_name = "SECONDS")]
    cell_seconds: Option<f64>,
    /// Run only shard I of N (0 ≤ I < N) of the cells, balanced by estimated cost;
    /// `merge` combines the shards' folders.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
}

/// `slurm`: the job array of a sharded spec.
#[derive(clap::Args)]
struct SlurmArgs {
    /// Spec file (TOML).
    spec: PathBuf,
    /// Number of shards (array tasks).
    #[arg(long, default_value_t = 4)]
    shards: usize,
    /// Wall-time limit per task (Slurm's form).
    #[arg(long, default_value = "01:00:00")]
    time: String,
    /// CPUs per task (cells side by side in a shard).
    #[arg(long, default_value_t = 1)]
    cpus_per_task: usize,
    /// Named size of the spec.
    #[arg(long)]
    size: Option<String>,
    /// Slurm partition.
    #[arg(long)]
    partition: Option<String>,
    /// Result folder (default reports/NAME).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// `println!` that ends the program quietly when stdout is closed early
/// (`driftlab list methods | head`), instead of panicking on the broken pipe.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }};
}

pub mod catalog;
mod compare_methods;
mod simulate;
mod tune;

/// A user-facing failure: message and exit code.
struct Failure(String, u8);

fn bad(msg: impl std::fmt::Display) -> Failure {
    Failure(msg.to_string(), 2)
}

/// Parse the command line and run it over `registry`: the whole `driftlab` program.
pub fn main_with(registry: Registry) -> ExitCode {
    match run(Cli::parse(), &registry) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(msg, code)) => {
            eprintln!("error: {msg}");
            ExitCode::from(code)
        }
    }
}

fn print_info(i: &MethodInfo) {
    let o = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v}"));
    out!("{} — {}", i.id, i.title);
    out!("  family: {}", i.family);
    out!("  equations: {}", i.equations);
    out!(
        "  declared orders: q {}, v {}, λ {}",
        o(i.orders.q),
        o(i.orders.v),
        o(i.orders.lambda)
    );
    out!(
        "  enforces: position {}, velocity {}, acceleration {}; implicit {}, symmetric {}, symplectic {}",
        i.enforces.position, i.enforces.velocity, i.enforces.acceleration, i.implicit, i.symmetric, i.symplectic
    );
    out!(
        "  symplectic on the constraint manifold: {}",
        i.symplectic_reason
    );
    out!(
        "  forms: {}",
        i.forms
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    out!("  citation: {}", i.citation);
}

fn run(cli: Cli, registry: &Registry) -> Result<(), Failure> {
    if let Some(text) = &cli.memory_limit {
        let bytes = driftlab_core::memory::parse_bytes(text).map_err(bad)?;
        driftlab_core::memory::set_limit(Some(bytes));
    }
    match cli.cmd {
        Cmd::List {
            what: What::Problems,
        } => {
            for e in registry.problems() {
                out!("{:<22} {}", e.id, e.summary);
            }
            Ok(())
        }
        Cmd::List {
            what: What::Methods,
        } => {
            for e in registry.methods() {
                let i = (e.info)();
                out!("{:<22} {}", e.id, i.title);
            }
            out!("{:<22} decorator over any method: `projection = {{ tol, max_iter, velocity }}` in a spec, --projection in simulate", "+projection");
            Ok(())
        }
        Cmd::List {
            what: What::Catalog,
        } => {
            out!("{}", catalog::markdown(registry).trim_end());
            Ok(())
        }
        Cmd::Describe { id, set } => describe(registry, &id, &set),
        Cmd::ModelDynamics {
            set,
            states,
            seed,
            out,
        } => model_dynamics(&set, states, seed, &out),
        Cmd::Run(args) => run_one(registry, args),
        Cmd::Simulate(args) => simulate::simulate(registry, &args),
        Cmd::CompareMethods(args) => compare_methods::compare_methods(registry, &args),
        Cmd::Tune(args) => tune::tune(&args),
        Cmd::RunExperiments {
            dir,
            out,
            size,
            threads,
            resume,
            force,
        } => {
            let how = Continue { resume, force };
            run_experiments(registry, &dir, &out, size, threads, how)
        }
        Cmd::Report { dir } => report(&dir),
        Cmd::Compare { a, b } => compare(&a, &b),
        Cmd::Fingerprint { dir, check, write } => {
            fingerprint(&dir, check.as_deref(), write.as_deref())
        }
        Cmd::Merge { dirs, out } => merge(registry, &dirs, &out),
        Cmd::ImportPeer {
            file,
            into,
            replace,
        } => {
            let n = driftlab_runner::peer::import(&file, &into, replace).map_err(bad)?;
            let replaced = if n.replaced > 0 {
                format!(", {} earlier ones replaced", n.replaced)
            } else {
                String::new()
            };
            out!(
                "{} peer runs from {} → {} ({} peer runs there now{replaced})",
                n.added,
                file.display(),
                into.display(),
                n.total
            );
            Ok(())
        }
        Cmd::Slurm(args) => slurm(args),
    }
}

/// `run`: one spec (or one shard of it) into its result folder.
fn run_one(registry: &Registry, args: RunArgs) -> Result<(), Failure> {
    let shard = args
        .shard
        .map(|t| driftlab_runner::distributed::shard::parse_shard(&t))
        .transpose()
        .map_err(bad)?;
    let (s, text) = Spec::load(&args.spec).map_err(bad)?;
    let opts = RunOptions {
        out_dir: args.out,
        threads: args.threads,
        size: args.size,
        progress: true,
        registry: registry.clone(),
        resume: args.resume,
        shard,
        complete_only: false,
        force: args.force,
        cell_seconds: args.cell_seconds,
        stop: None,
    };
    let sum = run_spec(&s, &text, &args.spec.display().to_string(), &opts).map_err(bad)?;
    out!(
        "{}: {} cells ({} failed) in {:.1} s → {}",
        sum.name,
        sum.cells,
        sum.failed,
        sum.seconds,
        sum.out_dir.display()
    );
    Ok(())
}

/// `compare`: exit 0 when the folders agree (measured columns aside), 1 with the
/// differences.
fn compare(a: &Path, b: &Path) -> Result<(), Failure> {
    let diff = driftlab_runner::store::compare::compare(a, b).map_err(bad)?;
    if diff.is_empty() {
        out!(
            "`{}` and `{}` agree in every column except the measured ones",
            a.display(),
            b.display()
        );
        return Ok(());
    }
    Err(Failure(
        format!("the results differ:\n  {}", diff.join("\n  ")),
        1,
    ))
}

/// `fingerprint`: print, write or check the digests of the result folders under `dir`.
fn fingerprint(dir: &Path, check: Option<&Path>, write: Option<&Path>) -> Result<(), Failure> {
    use driftlab_runner::store::fingerprint as fp;
    let mut entries = Vec::new();
    for (name, path) in fp::folders(dir).map_err(bad)? {
        entries.push((name, fp::digest(&path).map_err(bad)?));
    }
    if entries.is_empty() {
        return Err(Failure(
            format!(
                "`{}` holds no result folder (no runs.parquet in it or its subfolders); give the output folder of `run` or `run-experiments`",
                dir.display()
            ),
            2,
        ));
    }
    let text = fp::render(&entries);
    if let Some(path) = write {
        std::fs::write(path, &text)
            .map_err(|e| Failure(format!("cannot write `{}`: {e}", path.display()), 2))?;
    }
    let Some(path) = check else {
        out!("{}", text.trim_end());
        return Ok(());
    };
    let stored = std::fs::read_to_string(path).map_err(|e| {
        Failure(
            format!(
                "cannot read the stored fingerprint `{}`: {e}; write one with --write",
                path.display()
            ),
            2,
        )
    })?;
    let c = fp::check(&entries, &stored).map_err(|e| {
        Failure(
            format!(
                "the stored fingerprint `{}` is malformed: {e}; write it anew with --write",
                path.display()
            ),
            2,
        )
    })?;
    if c.differences.is_empty() {
        let checked = entries.len() - c.unlisted.len();
        out!(
            "{checked} result folders agree with `{}` bit for bit",
            path.display()
        );
        if !c.unlisted.is_empty() {
            out!(
                "{} not checked, the stored file does not list them: {} (add them with --write)",
                c.unlisted.len(),
                c.unlisted.join(", ")
            );
        }
        return Ok(());
    }
    let level = fp::simd_level();
    let note = if c.stored_simd == level {
        String::new()
    } else {
        format!(
            "\n(the stored file was made on {}, this machine runs {level}: faer's kernels differ, so rounding may)",
            c.stored_simd
        )
    };
    Err(Failure(
        format!(
            "{} of the {} result folders `{}` lists differ:\n  {}{note}",
            c.differences.len(),
            c.listed,
            path.display(),
            c.differences.join("\n  ")
        ),
        1,
    ))
}

/// `merge`: shard folders into one result folder.
fn merge(registry: &Registry, dirs: &[PathBuf], out: &Path) -> Result<(), Failure> {
    let sum = driftlab_runner::distributed::shard::merge(dirs, out, registry).map_err(bad)?;
    out!(
        "{}: {} cells ({} failed) from {} shards → {}",
        sum.name,
        sum.cells,
        sum.failed,
        dirs.len(),
        sum.out_dir.display()
    );
    Ok(())
}

/// `slurm`: validate the spec (every size it will run), then write the job array.
fn slurm(args: SlurmArgs) -> Result<(), Failure> {
    let spec = args.spec.as_path();
    let mut job = driftlab_runner::distributed::slurm::SlurmJob {
        spec: args.spec.clone(),
        out: PathBuf::new(),
        shards: args.shards,
        time: args.time,
        cpus_per_task: args.cpus_per_task,
        size: args.size,
        partition: args.partition,
        binary: PathBuf::new(),
    };
    let out = args.out;
    let (s, _) = Spec::load(spec).map_err(bad)?;
    s.sized(job.size.as_deref(), &spec.display().to_string())
        .map_err(bad)?;
    let absolute = |p: PathBuf| -> Result<PathBuf, Failure> {
        std::path::absolute(&p).map_err(|e| bad(format!("`{}`: {e}", p.display())))
    };
    job.out = absolute(out.unwrap_or_else(|| PathBuf::from("reports").join(&s.name)))?;
    job.spec = absolute(job.spec)?;
    job.binary = std::env::current_exe()
        .map_err(|e| Failure(format!("cannot locate this binary: {e}"), 1))?;
    let files = job.write().map_err(bad)?;
    for f in &files {
        out!("{}", f.display());
    }
    out!(
        "submit with: {}",
        job.out.join("slurm").join("submit.sh").display()
    );
    Ok(())
}

/// `model-dynamics`: the samples of [`driftlab_problems::model::samples`] as JSON.
fn model_dynamics(set: &[String], states: usize, seed: u64, out: &Path) -> Result<(), Failure> {
    use driftlab_problems::model::{samples, ModelParams};
    let mut table = set_table(set)?;
    let tol = driftlab_problems::independent_rows::split("model", &mut table).map_err(bad)?;
    let p: ModelParams = driftlab_core::params::parse("problem", "model", &table).map_err(bad)?;
    let s = samples::sample(&p, states, seed, tol).map_err(bad)?;
    let text =
        serde_json::to_string(&s).map_err(|e| bad(format!("cannot encode the samples: {e}")))?;
    std::fs::write(out, text).map_err(|e| {
        bad(format!(
            "cannot write `{}`: {e}; choose a writable path",
            out.display()
        ))
    })?;
    out!(
        "{} states of {} ({} coordinates) written to {}",
        s.samples.len(),
        s.file,
        s.joints.iter().map(|j| j.nq).sum::<usize>(),
        out.display()
    );
    Ok(())
}

fn describe(registry: &Registry, id: &str, set: &[String]) -> Result<(), Failure> {
    if let Ok(e) = registry.find_problem(id) {
        let p = e.instantiate(&set_table(set)?).map_err(bad)?;
        let i = p.as_system().info();
        out!("{} — {}", i.id, i.title);
        out!("  equations: {}", i.equations);
        out!(
            "  index: {}   default t_end: {}   tags: {}",
            i.index,
            i.t_end,
            i.tags.join(", ")
        );
        out!("  reference: {}", i.reference);
        out!("  citation: {}", i.citation);
        out!("  parameters (defaults):");
        for (k, v) in (e.defaults)() {
            out!("    {k} = {v}");
        }
        print_structure(&p);
        print_notes(&driftlab_problems::provenance::input_notes(
            id,
            &set_table(set)?,
        ));
        return Ok(());
    }
    if !set.is_empty() {
        return Err(bad(format!(
            "--set is for problems (their structure at t₀); `{id}` is not a problem"
        )));
    }
    if id == "projection" || id == "+projection" {
        out!("projection — decorator: mass-orthogonal projection of q onto Φ = 0 (Newton), then of v onto Φ_q v + Φ_t = 0");
        out!("  citation: seed 001 §3.4.2–3.4.3; order of the wrapped method kept (Hairer, Lubich & Wanner, GNI §IV.4)");
        out!("  parameters (defaults):");
        for (k, v) in driftlab_core::params::defaults::<
            driftlab_methods::decorators::projection::ProjectionParams,
        >() {
            out!("    {k} = {v}");
        }
        return Ok(());
    }
    let e = registry.find_method(id).map_err(|_| {
        let mut known: Vec<&str> = registry.problems().iter().map(|e| e.id).collect();
        known.extend(registry.methods().iter().map(|e| e.id));
        known.push("projection");
        bad(format!(
            "unknown id `{id}`; known problems and methods: {}",
            known.join(", ")
        ))
    })?;
    print_info(&(e.info)());
    out!("  parameters (defaults):");
    for (k, v) in (e.defaults)() {
        out!("    {k} = {v}");
    }
    Ok(())
}

/// `--set key=value …` as a parameter table (values in TOML syntax, else strings).
fn set_table(set: &[String]) -> Result<toml::Table, Failure> {
    let mut t = toml::Table::new();
    for kv in set {
        let (k, v) = kv.split_once('=').ok_or_else(|| {
            bad(format!(
                "--set `{kv}`: write key=value, e.g. --set links=100"
            ))
        })?;
        let value = format!("x = {v}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|t| t.get("x").cloned())
            .unwrap_or_else(|| toml::Value::String(v.to_string()));
        t.insert(k.trim().to_string(), value);
    }
    Ok(t)
}

/// The structure at the initial state: sizes, nonzeros and the rank of the Jacobian.
fn print_structure(problem: &driftlab_problems::Problem) {
    let index1 = matches!(problem, driftlab_problems::Problem::SemiExplicit(_));
    match driftlab_problems::inspect::structure(problem) {
        Ok(s) => {
            let (nn, mm, jac) = if index1 {
                ("x", "z", "g_z")
            } else {
                ("q", "Φ", "Φ_q")
            };
            out!("  structure at t₀:");
            out!(
                "    n = {} ({nn}), m = {} ({mm}; {} nonholonomic), unilateral rows: {}",
                s.n,
                s.m,
                s.nonholonomic,
                s.unilateral
            );
            out!(
                "    nonzeros: M (lower) {}, {jac} {}",
                s.mass_nonzeros,
                s.jacobian_nonzeros
            );
            match (&s.rank, s.condition()) {
                (None, _) if s.m == 0 => out!("    rank {jac}: no constraint rows (m = 0)"),
                (Some(r), Some(c)) => out!(
                    "    rank {jac} = {} of {} (σ_max = {:.3e}, σ_min = {:.3e}, threshold {:.1e}; condition {:.3e}){}",
                    r.rank,
                    r.rows,
                    r.singular_values.first().copied().unwrap_or(0.0),
                    r.singular_values.last().copied().unwrap_or(0.0),
                    r.threshold,
                    c,
                    if r.rank < r.rows { " — redundant or singular rows" } else { "" }
                ),
                _ => out!(
                    "    rank {jac}: not computed (m·n = {} > {} for a dense SVD)",
                    s.m.saturating_mul(s.n),
                    driftlab_problems::inspect::MAX_DENSE_RANK_ENTRIES
                ),
            }
        }
        Err(e) => out!("  structure at t₀: {e}"),
    }
}

/// What reading the problem's input (a model file) skipped or kept as published.
fn print_notes(notes: &[String]) {
    if notes.is_empty() {
        return;
    }
    out!(
        "  read with {} note(s) (skipped, or kept as published):",
        notes.len()
    );
    for n in notes {
        out!("    {n}");
    }
}

/// How `run-experiments` treats folders that hold earlier runs.
#[derive(Clone, Copy)]
struct Continue {
    /// Keep complete experiments, continue interrupted ones.
    resume: bool,
    /// Discard interrupted runs and other experiments' results.
    force: bool,
}

impl Continue {
    fn claim(self) -> Claim {
        match (self.resume, self.force) {
            (true, _) => Claim::Resume,
            (false, true) => Claim::Force,
            (false, false) => Claim::Fresh,
        }
    }
}

fn run_experiments(
    registry: &Registry, dir: &Path, out: &Path, size: Option<String>, threads: Option<usize>,
    how: Continue,
) -> Result<(), Failure> {
    let loaded = load_experiments(dir, out, how)?;
    let clock = std::time::Instant::now();
    for (i, (p, s, text)) in loaded.iter().enumerate() {
        eprintln!("[{}/{}] {} ({})", i + 1, loaded.len(), s.name, p.display());
        let folder = out.join(&s.name);
        if how.resume && complete_already(&folder, text, &s.size_name(size.as_deref()))? {
            continue;
        }
        let opts = RunOptions {
            out_dir: Some(folder),
            threads,
            size: size.clone(),
            progress: true,
            registry: registry.clone(),
            resume: how.resume,
            shard: None,
            complete_only: false,
            force: how.force,
            cell_seconds: None,
            stop: None,
        };
        let sum = run_spec(s, text, &p.display().to_string(), &opts).map_err(bad)?;
        eprintln!(
            "      {} cells, {} failed, {:.1} s → {}",
            sum.cells,
            sum.failed,
            sum.seconds,
            sum.out_dir.display()
        );
    }
    eprintln!(
        "experiments done in {:.1} s; building figures",
        clock.elapsed().as_secs_f64()
    );
    report(out)
}

/// Every `*.toml` spec in `dir`, loaded and validated, and every output folder under
/// `out` checked, before any runs: a typo, two specs of one name or a folder holding
/// an interrupted run must not cost a long run, or the results of an earlier one.
fn load_experiments(
    dir: &Path, out: &Path, how: Continue,
) -> Result<Vec<(PathBuf, Spec, String)>, Failure> {
    let mut specs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| bad(format!("cannot read experiments folder `{}`: {e}; run from the repository root or pass --dir", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    specs.sort();
    if specs.is_empty() {
        return Err(bad(format!("no *.toml specs in `{}`", dir.display())));
    }
    let mut loaded: Vec<(PathBuf, Spec, String)> = Vec::new();
    for p in &specs {
        let (s, text) = Spec::load(p).map_err(bad)?;
        if let Some((other, _, _)) = loaded.iter().find(|(_, o, _)| o.name == s.name) {
            return Err(bad(format!(
                "`{}` and `{}` both have `name` = {:?}, so both would write `{}`; give each spec its own name",
                other.display(),
                p.display(),
                s.name,
                out.join(&s.name).display()
            )));
        }
        driftlab_runner::store::folder::admits(&out.join(&s.name), &s.name, how.claim())
            .map_err(bad)?;
        loaded.push((p.clone(), s, text));
    }
    Ok(loaded)
}

/// `run-experiments --resume`: whether `folder` holds this spec's run at this size,
/// complete (then it is kept as it is).
fn complete_already(folder: &Path, text: &str, size: &str) -> Result<bool, Failure> {
    let manifest = folder.join("manifest.json");
    if !manifest.exists() {
        return Ok(false);
    }
    let m = driftlab_runner::store::manifest::Manifest::read(&manifest).map_err(bad)?;
    let same = m.spec_hash == driftlab_runner::store::manifest::sha256_hex(text) && m.size == size;
    if same && m.status == "complete" {
        eprintln!(
            "      complete already ({} cells) → {}",
            m.cells,
            folder.display()
        );
    }
    Ok(same && m.status == "complete")
}

fn report(dir: &Path) -> Result<(), Failure> {
    let made = driftlab_report::report_all(dir).map_err(|e| match e {
        // Pointing `report` at a folder without a finished run is a request that cannot
        // be served as given.
        driftlab_report::ReportError::Nothing { .. } => bad(e),
        e => Failure(e.to_string(), 1),
    })?;
    for (name, files) in &made.files {
        out!("{name}: {} files", files.len());
    }
    for u in &made.unfinished {
        eprintln!("not in the report: {}: {}", u.dir.display(), u.why);
    }
    let damaged = made
        .unfinished
        .iter()
        .filter(|u| u.why.starts_with("damaged"))
        .count();
    if damaged > 0 {
        return Err(Failure(
            format!("{damaged} result folder(s) damaged (named above): the report was written without them"),
            1,
        ));
    }
    Ok(())
}
