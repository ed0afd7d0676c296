//! `driftlab`: the command line over the runner and the report.
//!
//! Bad input (unknown id, unknown or invalid parameter, malformed spec) prints a message
//! naming the field and the fix and exits with status 2; a run whose cells fail is not an
//! error of the command (failed cells are rows in the results).

use clap::{Parser, Subcommand, ValueEnum};
use driftlab_core::{
    drive, MethodInfo, Observer, RunStatus, Schedule, SystemRef, TrajectoryRecorder,
};
use driftlab_runner::{run_spec, RunOptions, Spec};
use std::io::Write;
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
}

#[derive(Clone, Copy, ValueEnum)]
enum What {
    Problems,
    Methods,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the problem or method catalog.
    List {
        /// `problems` or `methods`.
        what: What,
    },
    /// Show a problem's or method's equations, parameters with defaults, and citation.
    Describe {
        /// Catalog id.
        id: String,
    },
    /// Run one experiment spec.
    Run {
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
    },
    /// Simulate one problem with one method and print (or write) the trajectory.
    Simulate {
        /// Problem id.
        #[arg(long)]
        problem: String,
        /// Method id.
        #[arg(long)]
        method: String,
        /// Parameter `key=value` (TOML value); `problem.key`, `method.key`, `projection.key`
        /// address one side explicitly, a bare key goes to whichever side has it.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Wrap the method in the projection decorator.
        #[arg(long)]
        projection: bool,
        /// Step size.
        #[arg(long)]
        h: f64,
        /// End time (default: the problem's).
        #[arg(long = "t-end")]
        t_end: Option<f64>,
        /// Write every step as CSV (full precision) to FILE.
        #[arg(long)]
        trace: Option<PathBuf>,
    },
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
    },
    /// Build figures for every result folder under DIR from stored results only.
    Report {
        /// Output root holding EXPERIMENT/runs.parquet.
        #[arg(long, default_value = "reports")]
        dir: PathBuf,
    },
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

/// A user-facing failure: message and exit code.
struct Failure(String, u8);

fn bad(msg: impl std::fmt::Display) -> Failure {
    Failure(msg.to_string(), 2)
}

fn main() -> ExitCode {
    driftlab_methods::sequential_dense_kernels();
    match run(Cli::parse()) {
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
        "  forms: {}",
        i.forms
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    out!("  citation: {}", i.citation);
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.cmd {
        Cmd::List {
            what: What::Problems,
        } => {
            for e in driftlab_problems::catalog() {
                out!("{:<22} {}", e.id, e.summary);
            }
            Ok(())
        }
        Cmd::List {
            what: What::Methods,
        } => {
            for e in driftlab_methods::catalog() {
                let i = (e.info)();
                out!("{:<22} {}", e.id, i.title);
            }
            out!("{:<22} decorator over any method: `projection = {{ tol, max_iter, velocity }}` in a spec, --projection in simulate", "+projection");
            Ok(())
        }
        Cmd::Describe { id } => describe(&id),
        Cmd::Run {
            spec,
            out,
            threads,
            size,
        } => {
            let (s, text) = Spec::load(&spec).map_err(bad)?;
            let sum = run_spec(
                &s,
                &text,
                &spec.display().to_string(),
                &RunOptions {
                    out_dir: out,
                    threads,
                    size,
                    progress: true,
                },
            )
            .map_err(bad)?;
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
        Cmd::Simulate {
            problem,
            method,
            set,
            projection,
            h,
            t_end,
            trace,
        } => simulate(
            &problem,
            &method,
            &set,
            projection,
            h,
            t_end,
            trace.as_deref(),
        ),
        Cmd::RunExperiments {
            dir,
            out,
            size,
            threads,
        } => run_experiments(&dir, &out, size, threads),
        Cmd::Report { dir } => report(&dir),
    }
}

fn describe(id: &str) -> Result<(), Failure> {
    if let Ok(e) = driftlab_problems::find(id) {
        let p = (e.build)(&toml::Table::new()).map_err(bad)?;
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
        return Ok(());
    }
    if id == "projection" || id == "+projection" {
        out!("projection — decorator: mass-orthogonal projection of q onto Φ = 0 (Newton), then of v onto Φ_q v + Φ_t = 0");
        out!("  citation: seed 001 §3.4.2–3.4.3; order of the wrapped method kept (Hairer, Lubich & Wanner, GNI §IV.4)");
        out!("  parameters (defaults):");
        for (k, v) in
            driftlab_core::params::defaults::<driftlab_methods::projection::ProjectionParams>()
        {
            out!("    {k} = {v}");
        }
        return Ok(());
    }
    let e = driftlab_methods::find(id).map_err(|_| {
        let mut known: Vec<&str> = driftlab_problems::catalog().iter().map(|e| e.id).collect();
        known.extend(driftlab_methods::catalog().iter().map(|e| e.id));
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

fn simulate(
    problem: &str,
    method: &str,
    set: &[String],
    projection: bool,
    h: f64,
    t_end: Option<f64>,
    trace: Option<&Path>,
) -> Result<(), Failure> {
    let pentry = driftlab_problems::find(problem).map_err(bad)?;
    let mentry = driftlab_methods::find(method).map_err(bad)?;
    let (mut pt, mut mt, mut jt) = (toml::Table::new(), toml::Table::new(), toml::Table::new());
    let (pdef, mdef) = ((pentry.defaults)(), (mentry.defaults)());
    let jdef = driftlab_core::params::defaults::<driftlab_methods::projection::ProjectionParams>();
    let mut use_projection = projection;
    for kv in set {
        let (k, v) = kv.split_once('=').ok_or_else(|| {
            bad(format!(
                "--set `{kv}`: write key=value, e.g. --set theta0_deg=45"
            ))
        })?;
        let value: toml::Value = format!("x = {v}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|t| t.get("x").cloned())
            .unwrap_or_else(|| toml::Value::String(v.to_string()));
        let (side, key) = match k.split_once('.') {
            Some((s, key)) => (s, key),
            None => match (pdef.contains_key(k), mdef.contains_key(k)) {
                (true, false) => ("problem", k),
                (false, true) => ("method", k),
                (true, true) => return Err(bad(format!("--set {k}: both the problem and the method have `{k}`; write problem.{k} or method.{k}"))),
                (false, false) => {
                    return Err(bad(format!(
                        "--set {k}: neither `{problem}` (keys: {}) nor `{method}` (keys: {}) has this parameter; optional parameters without a default are set as problem.{k} or method.{k}",
                        pdef.keys().cloned().collect::<Vec<_>>().join(", "),
                        mdef.keys().cloned().collect::<Vec<_>>().join(", ")
                    )))
                }
            },
        };
        match side {
            "problem" => pt.insert(key.into(), value),
            "method" => mt.insert(key.into(), value),
            "projection" => {
                use_projection = true;
                jt.insert(key.into(), value)
            }
            _ => return Err(bad(format!("--set {k}: unknown prefix or key; use problem.KEY, method.KEY or projection.KEY (projection keys: {})", jdef.keys().cloned().collect::<Vec<_>>().join(", ")))),
        };
    }
    if !(h.is_finite() && h > 0.0) {
        return Err(bad(format!("--h {h}: give a step size > 0")));
    }
    let p = (pentry.build)(&pt).map_err(bad)?;
    let mut m = driftlab_methods::build(method, &mt, use_projection.then_some(&jt)).map_err(bad)?;
    let sys = p.as_system();
    let t_end = t_end.unwrap_or_else(|| sys.info().t_end);
    if !(t_end.is_finite() && t_end > 0.0) {
        return Err(bad(format!("--t-end {t_end}: give an end time > 0")));
    }
    let schedule = Schedule::fixed(t_end / (t_end / h).round().max(1.0), t_end);
    let mut rec = TrajectoryRecorder::new(1);
    let mut summary = driftlab_core::MetricsObserver::new(0);
    let out = drive(
        sys,
        m.as_mut(),
        &schedule,
        &mut [&mut rec as &mut dyn Observer, &mut summary],
    );
    if let Some(path) = trace {
        write_trace(path, sys, &rec)
            .map_err(|e| Failure(format!("cannot write trace `{}`: {e}", path.display()), 1))?;
    }
    let s = &summary.summary;
    match &out.status {
        RunStatus::Ok => out!(
            "status: ok ({} steps of h = {:e} to t = {})",
            out.steps,
            schedule.h,
            out.final_state.t
        ),
        RunStatus::Failed { t, reason } => out!("status: failed at t = {t}: {reason}"),
    }
    out!(
        "max ‖Φ‖∞ = {:e}   max ‖Φ_q v + Φ_t‖∞ = {:e}   max ‖Φ_q a − γ‖∞ = {:e}",
        s.max_pos_residual,
        s.max_vel_residual,
        s.max_acc_residual
    );
    out!("max relative energy error = {:e}", s.max_energy_rel_error);
    out!(
        "max error: q {:e}   v {:e}   λ {:e}",
        s.err_q,
        s.err_v,
        s.err_lambda
    );
    out!(
        "cost: {} factorizations ({} symbolic), {} Newton iterations, {} projection iterations, {:.3} s",
        out.stats.factorizations, out.stats.symbolic_analyses, out.stats.newton_iterations, out.stats.projection_iterations, out.wall_seconds()
    );
    Ok(())
}

/// CSV with `t, q0…, v0…, lambda0…, pos_residual, vel_residual, energy_rel_error`
/// (index-1: `t, x0…, z0…, pos_residual`), every number in round-trip `{:e}` format.
fn write_trace(path: &Path, sys: SystemRef<'_>, rec: &TrajectoryRecorder) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    let Some((s0, _)) = rec.points.first() else {
        return Ok(());
    };
    let mut head = vec!["t".to_string()];
    let index1 = matches!(sys, SystemRef::SemiExplicit(_));
    let (qn, ln) = if index1 { ("x", "z") } else { ("q", "lambda") };
    head.extend((0..s0.q.len()).map(|i| format!("{qn}{i}")));
    if !index1 {
        head.extend((0..s0.v.len()).map(|i| format!("v{i}")));
    }
    head.extend((0..s0.lambda.len()).map(|i| format!("{ln}{i}")));
    head.push("pos_residual".into());
    if !index1 {
        head.push("vel_residual".into());
        head.push("energy_rel_error".into());
    }
    writeln!(f, "{}", head.join(","))?;
    for (s, m) in &rec.points {
        let mut row = vec![format!("{:e}", s.t)];
        row.extend(s.q.iter().map(|x| format!("{x:e}")));
        if !index1 {
            row.extend(s.v.iter().map(|x| format!("{x:e}")));
        }
        row.extend(s.lambda.iter().map(|x| format!("{x:e}")));
        row.push(format!("{:e}", m.pos_residual));
        if !index1 {
            row.push(format!("{:e}", m.vel_residual));
            row.push(format!("{:e}", m.energy_rel_error));
        }
        writeln!(f, "{}", row.join(","))?;
    }
    f.flush()
}

fn run_experiments(
    dir: &Path,
    out: &Path,
    size: Option<String>,
    threads: Option<usize>,
) -> Result<(), Failure> {
    let mut specs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| bad(format!("cannot read experiments folder `{}`: {e}; run from the repository root or pass --dir", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    specs.sort();
    if specs.is_empty() {
        return Err(bad(format!("no *.toml specs in `{}`", dir.display())));
    }
    // Validate every spec before running any, so a typo does not cost a long run.
    let mut loaded = Vec::new();
    for p in &specs {
        let (s, text) = Spec::load(p).map_err(bad)?;
        loaded.push((p.clone(), s, text));
    }
    let clock = std::time::Instant::now();
    for (i, (p, s, text)) in loaded.iter().enumerate() {
        eprintln!("[{}/{}] {} ({})", i + 1, loaded.len(), s.name, p.display());
        let opts = RunOptions {
            out_dir: Some(out.join(&s.name)),
            threads,
            size: size.clone(),
            progress: true,
        };
        let sum = run_spec(s, text, &p.display().to_string(), &opts)
            .map_err(|e| Failure(e.to_string(), 1))?;
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

fn report(dir: &Path) -> Result<(), Failure> {
    let made = driftlab_report::report_all(dir).map_err(|e| Failure(e.to_string(), 1))?;
    for (name, files) in &made {
        out!("{name}: {} files", files.len());
    }
    Ok(())
}
