//! `driftlab simulate`: one problem, one method, one fixed step, through the runner's
//! [`drive_cell`] like every cell of a sweep. Its memory does not grow with the number of
//! steps: the summary is accumulated as the run goes ([`MetricsObserver`] without a
//! trace), and `--trace` streams every step to its CSV file, whose path is checked —
//! created, and its header written and flushed — before the run starts.

use crate::{bad, Failure};
use driftlab_core::{Dims, MetricsObserver, Observation, Observer, RunOutcome, RunStatus};
use driftlab_core::{State, SystemForm};
use driftlab_runner::spec::cell::expand;
use driftlab_runner::spec::one_cell::{OneCell, OneCellSteps};
use driftlab_runner::{drive_cell, Registry};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `simulate`: one problem, one method, one fixed step.
#[derive(clap::Args)]
pub(crate) struct SimulateArgs {
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
}

/// `simulate`: the arguments become a one-cell spec that runs through the runner's
/// [`drive_cell`]; the summary is printed, and with `--trace` every step is streamed to
/// the CSV file.
pub(crate) fn simulate(registry: &Registry, args: &SimulateArgs) -> Result<(), Failure> {
    let (problem, method, h) = (args.problem.as_str(), args.method.as_str(), args.h);
    let sides = SimulateParams::from_set(registry, problem, method, &args.set)?;
    if !(h.is_finite() && h > 0.0) {
        return Err(bad(format!("--h {h}: give a step size > 0")));
    }
    let t_end = match args.t_end {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return Err(bad(format!("--t-end {t}: give an end time > 0")));
        }
        t => t,
    };
    let projection = (args.projection || sides.projection_set).then_some(&sides.projection);
    let spec = OneCell {
        problem,
        problem_params: &sides.problem,
        method,
        method_params: &sides.method,
        projection,
        steps: OneCellSteps::Fixed(h),
        t_end,
        kept_every: None,
    }
    .spec("simulate")
    .map_err(bad)?;
    let cells = expand(&spec, "simulate", registry).map_err(bad)?;
    let [cell] = cells.as_slice() else {
        return Err(bad(format!(
            "simulate runs one cell, but the parameters expand to {}",
            cells.len()
        )));
    };
    let mut trace = match &args.trace {
        Some(path) => {
            let built = registry
                .build_problem(&cell.problem, &cell.problem_params)
                .map_err(bad)?;
            let sys = built.as_system();
            Some(TraceCsv::create(
                path,
                sys.form() == SystemForm::SemiExplicit,
                sys.dims(),
            )?)
        }
        None => None,
    };
    let mut summary = MetricsObserver::new(0);
    let out = match trace.as_mut() {
        Some(t) => drive_cell(registry, cell, &mut [&mut summary, t]),
        None => drive_cell(registry, cell, &mut [&mut summary]),
    }
    .map_err(bad)?;
    let written = trace.map(TraceCsv::finish).transpose();
    print_outcome(&out, &summary.summary, cell.h);
    written?;
    match &out.status {
        // A run refused before allocating: the same message, and the exit status of a
        // request that cannot be served as given.
        RunStatus::Failed { error, .. } if error.kind() == "memory" => Err(bad(error)),
        // A run that failed on the way: its summary above, and exit status 1.
        RunStatus::Failed { t, error } => Err(Failure(
            format!("the run failed at t = {t} ({}): {error}", error.kind()),
            1,
        )),
        RunStatus::Ok => Ok(()),
    }
}

/// The `--trace` file, written as the run goes: CSV with `t, q0…, v0…, lambda0…,
/// pos_residual, vel_residual, energy_rel_error` (index-1: `t, x0…, z0…, pos_residual`),
/// every number in round-trip `{:e}` format, one row per step.
struct TraceCsv {
    path: PathBuf,
    file: std::io::BufWriter<std::fs::File>,
    index1: bool,
    /// The time of the last row (a state observed twice is written once).
    last_t: Option<f64>,
    /// The first write error; the rows after it are not written.
    error: Option<std::io::Error>,
    row: String,
}

impl TraceCsv {
    /// Create `path` and write the header for a system of dimensions `dims` (index-1:
    /// `(nx, nz)`), flushed, so that an unwritable path is refused (exit 2) before the run.
    fn create(path: &Path, index1: bool, dims: Dims) -> Result<Self, Failure> {
        let refuse = |e: std::io::Error| {
            let fix = match e.kind() {
                std::io::ErrorKind::NotFound => "; create its folder first, or choose another path",
                _ => "; choose a writable path",
            };
            bad(format!("cannot write trace `{}`: {e}{fix}", path.display()))
        };
        let names = trace_header(index1, dims);
        let file = std::fs::File::create(path).map_err(refuse)?;
        let mut file = std::io::BufWriter::new(file);
        writeln!(file, "{}", names.join(","))
            .and_then(|()| file.flush())
            .map_err(refuse)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            index1,
            last_t: None,
            error: None,
            row: String::new(),
        })
    }

    fn write_row(&mut self, s: &State, m: &driftlab_core::Metrics) -> std::io::Result<()> {
        use std::fmt::Write as _;
        let row = &mut self.row;
        row.clear();
        let _ = write!(row, "{:e}", s.t);
        let mut push = |x: f64| {
            let _ = write!(row, ",{x:e}");
        };
        s.q.iter().for_each(|&x| push(x));
        if !self.index1 {
            s.v.iter().for_each(|&x| push(x));
        }
        s.lambda.iter().for_each(|&x| push(x));
        push(m.pos_residual);
        if !self.index1 {
            push(m.vel_residual);
            push(m.energy_rel_error);
        }
        writeln!(self.file, "{}", self.row)
    }

    /// Flush the rows; a write that failed on the way is reported (exit 1: the run's
    /// summary is printed, the trace is incomplete).
    fn finish(mut self) -> Result<(), Failure> {
        let flushed = self.file.flush();
        match self.error.take().map_or(flushed, Err) {
            Ok(()) => Ok(()),
            Err(e) => Err(Failure(
                format!("cannot write trace `{}`: {e}", self.path.display()),
                1,
            )),
        }
    }
}

impl Observer for TraceCsv {
    fn observe(&mut self, o: &Observation<'_>) {
        let (state, metrics) = (o.state, o.metrics);
        if self.error.is_some() || self.last_t == Some(metrics.t) {
            return;
        }
        self.last_t = Some(metrics.t);
        if let Err(e) = self.write_row(state, metrics) {
            self.error = Some(e);
        }
    }

    fn wants(&self, _step: usize) -> bool {
        true
    }
}

/// The trace's column names, from the system's form and dimensions alone (no state of its
/// size is allocated before the run's memory check).
fn trace_header(index1: bool, d: Dims) -> Vec<String> {
    let mut head = vec!["t".to_string()];
    let named = |head: &mut Vec<String>, p: &str, k: usize| {
        head.extend((0..k).map(|i| format!("{p}{i}")));
    };
    if index1 {
        named(&mut head, "x", d.n);
        named(&mut head, "z", d.m);
        head.push("pos_residual".into());
    } else {
        named(&mut head, "q", d.n);
        named(&mut head, "v", d.n);
        named(&mut head, "lambda", d.m);
        head.extend(["pos_residual", "vel_residual", "energy_rel_error"].map(String::from));
    }
    head
}

/// The parameter tables of a `simulate` call, from its `--set KEY=VALUE` arguments.
struct SimulateParams {
    problem: toml::Table,
    method: toml::Table,
    projection: toml::Table,
    /// A `projection.KEY` was given (which turns the decorator on).
    projection_set: bool,
}

impl SimulateParams {
    /// Sort each `--set` into the problem's, the method's or the projection's table: by
    /// its `problem.`/`method.`/`projection.` prefix, or else by which side has the key.
    fn from_set(
        registry: &Registry, problem: &str, method: &str, set: &[String],
    ) -> Result<Self, Failure> {
        let pdef = (registry.find_problem(problem).map_err(bad)?.defaults)();
        let mdef = (registry.find_method(method).map_err(bad)?.defaults)();
        let jdef = driftlab_core::params::defaults::<
            driftlab_methods::decorators::projection::ProjectionParams,
        >();
        let keys = |t: &toml::Table| t.keys().cloned().collect::<Vec<_>>().join(", ");
        let mut out = Self {
            problem: toml::Table::new(),
            method: toml::Table::new(),
            projection: toml::Table::new(),
            projection_set: false,
        };
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
                    (false, false) => return Err(bad(format!(
                        "--set {k}: neither `{problem}` (keys: {}) nor `{method}` (keys: {}) has this parameter; optional parameters without a default are set as problem.{k} or method.{k}",
                        keys(&pdef), keys(&mdef)
                    ))),
                },
            };
            let table = match side {
                "problem" => &mut out.problem,
                "method" => &mut out.method,
                "projection" => {
                    out.projection_set = true;
                    &mut out.projection
                }
                _ => return Err(bad(format!("--set {k}: unknown prefix or key; use problem.KEY, method.KEY or projection.KEY (projection keys: {})", keys(&jdef)))),
            };
            table.insert(key.into(), value);
        }
        Ok(out)
    }
}

/// The summary lines of a `simulate` run: status, residuals, errors, cost.
fn print_outcome(out: &RunOutcome, s: &driftlab_core::SummaryMetrics, h: f64) {
    match &out.status {
        RunStatus::Ok => out!(
            "status: ok ({} steps of h = {:e} to t = {})",
            out.steps,
            h,
            out.final_state.t
        ),
        RunStatus::Failed { t, error } => {
            out!("status: failed ({}) at t = {t}: {error}", error.kind())
        }
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
}
