//! The experiment spec (TOML). Unknown keys are errors everywhere
//! (`deny_unknown_fields`), and the schema is versioned.
//!
//! ```toml
//! schema_version = 1
//! name = "bertolazzi-pendulum"
//! description = "what the experiment asks"
//! t_end = 50.0              # optional; default: the problem's own end time
//! trace_stride = 100        # keep every 100th step in traces.parquet (0: none)
//! trace_dt = 0.05           # … or sample every 0.05 time units, whatever h is
//! trace_states = true       # also store q, v and λ in the traces
//! threads = [1]             # faer threads inside a cell (cells with 1 run in parallel)
//!
//! [steps]                   # either an explicit list …
//! h = [1e-2, 1e-3]
//! # … or a log range: per_decade points per decade from `from` to `to`
//! # log_range = { from = 1e-3, to = 1e-1, per_decade = 4 }
//! # … or error-controlled steps, one cell per tolerance (methods with an error estimate):
//! # adaptive = { rtol = [1e-4, 1e-7], atol = 1e-6, h0 = 1e-6, controller = "gustafsson" }
//! # adaptive = { rtol_range = { from = 1e-10, to = 1e-4, per_decade = 1 } }
//!
//! [[problems]]
//! id = "pendulum"
//! params = { theta0_deg = [30.0, 90.0] }   # a list sweeps
//!
//! [[methods]]
//! id = "taylor"
//! projection = { tol = 1e-12 }             # wrap in the projection decorator
//!
//! [sizes.quick]             # `--size quick` overrides (CI); `full` is the default
//! t_end = 5.0
//!
//! [[annotations]]           # reference curves in parameter-map figures
//! x = "omega_n"
//! y = "xi"
//! x_exp = 1.0
//! y_exp = 1.0
//! h_exp = 1.0
//! value = 0.5
//! label = "α = ξω_n = 1/(2h)"
//! ```
//!
//! An optional `[report]` table (class, measure, target, select, note, tuning_map;
//! `driftlab_results::report_spec`) tells the combined report how to use the experiment.
//!
//! Step sizes are snapped so that `t_end / h` is an integer (`h ← t_end / round(t_end/h)`)
//! — every run ends exactly at `t_end`, and errors at `t_end` compare like with like.

pub mod cell;
pub mod one_cell;

use crate::error::RunnerError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Current schema version.
pub const SCHEMA_VERSION: u32 = 1;

/// An experiment.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Must equal [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Experiment name (output folder name).
    pub name: String,
    /// What the experiment asks and shows.
    #[serde(default)]
    pub description: String,
    /// End time; default: each problem's own.
    pub t_end: Option<f64>,
    /// Trace every `trace_stride` steps (0 = no trace).
    #[serde(default = "default_stride")]
    pub trace_stride: usize,
    /// Trace every `trace_dt` time units instead (stride `round(trace_dt / h)` per
    /// cell, so that every h gives the same sample times); overrides `trace_stride`.
    pub trace_dt: Option<f64>,
    /// Store `q`, `v` and `λ` (as the method computed it) in the traces too.
    #[serde(default)]
    pub trace_states: bool,
    /// Evaluate the metrics (residuals, energy, errors) every `metrics_stride` steps
    /// (and at the first and last state and every traced step) instead of every step:
    /// for large systems, whose metrics cost about as much as a step. The maxima are
    /// then over the evaluated states; the cost is the `observe_seconds` column.
    #[serde(default = "default_metrics_stride")]
    pub metrics_stride: usize,
    /// The violation monitor (seed 001 §3.12): the allowed |Φ_i| of every row or of each
    /// row; the runs table records when and how far a run went beyond it
    /// (`warn_time`, `warn_states`, `warn_ratio`, `warn_row`).
    pub monitor: Option<MonitorSpec>,
    /// Thread counts for faer inside a cell: a list, or `"all"` for 1, 2, … up to the
    /// machine's logical cores.
    #[serde(default = "default_threads", deserialize_with = "thread_counts")]
    pub threads: Vec<usize>,
    /// Run the whole cell set once per entry with that many cells side by side (a list,
    /// or `"all"`); each row records its count (`sweep_threads`) and its batch's wall
    /// time (`batch_seconds`). Absent: once, with the command line's `--threads`.
    #[serde(default, deserialize_with = "optional_thread_counts")]
    pub sweep_threads: Option<Vec<usize>>,
    /// Step-count budget per cell.
    #[serde(default = "default_max_steps")]
    pub max_steps: usize,
    /// Wall-time budget per cell in seconds (an ensemble's, for all its members): a cell
    /// still running past it stops as a failed row (`fail_kind = time-budget`) with the
    /// time it reached, as work–precision tools time out a method. Absent: no budget.
    /// `--cell-seconds` replaces it.
    pub cell_seconds: Option<f64>,
    /// Run every cell this many times and record the median wall and step times with
    /// their min and max (the metrics are those of the first run: the runs are
    /// deterministic). For cost comparisons on a shared, noisy machine.
    #[serde(default = "default_repeat")]
    pub repeat: usize,
    /// Runs with the cell alone on the machine behind the time of every row a verdict uses
    /// (a `[report]` class's candidates, a claim's time; the timing pass, `exec/timing.rs`), after a
    /// warm-up run for a cell under 1 s. 0: those rows keep the sweep's times.
    #[serde(default = "default_timing_repeats")]
    pub timing_repeats: usize,
    /// Step sizes.
    pub steps: Steps,
    /// Problems (parameters may sweep).
    pub problems: Vec<ProblemSpec>,
    /// Methods (parameters may sweep).
    pub methods: Vec<MethodSpec>,
    /// Named size overrides (`quick` for CI, …).
    #[serde(default)]
    pub sizes: BTreeMap<String, SizeOverride>,
    /// Reference curves for parameter-map figures (the report reads them from the
    /// manifest's spec text).
    #[serde(default)]
    pub annotations: Vec<Annotation>,
    /// How the combined report uses this experiment (driftlab_results::report_spec).
    pub report: Option<driftlab_results::report_spec::ReportSpec>,
    /// Claims of the sources, as rules over this experiment's rows, evaluated by the
    /// report (driftlab_results::claim_spec).
    #[serde(default)]
    pub claims: Vec<driftlab_results::claim_spec::ClaimSpec>,
    /// Why observed orders differ from the declared ones, shown by the report beside the
    /// rows that do not match (driftlab_results::order_note).
    #[serde(default)]
    pub order_notes: Vec<driftlab_results::order_note::OrderNote>,
    /// Run every cell as an ensemble of seeded, perturbed rollouts ([`crate::ensemble`]).
    pub ensemble: Option<crate::ensemble::EnsembleSpec>,
    /// Swept method parameters optimized against an ensemble's expected task and
    /// constraint losses ([`crate::analysis::optima`]): `optima.csv`.
    #[serde(default)]
    pub optima: Vec<crate::analysis::optima::OptimumSpec>,
}

/// A reference curve `x^x_exp · y^y_exp · h^h_exp = value` in the plane of two swept method
/// parameters (e.g. Baumgarte's α = ξω_n < 1/(2h): `x = "omega_n"`, `y = "xi"`, exponents
/// 1, 1, 1, value 0.5). With `y_exp = 0` it is a vertical line.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Annotation {
    /// Parameter on the x axis.
    pub x: String,
    /// Parameter on the y axis.
    pub y: String,
    /// Exponent of x.
    pub x_exp: f64,
    /// Exponent of y.
    pub y_exp: f64,
    /// Exponent of the step size h.
    #[serde(default)]
    pub h_exp: f64,
    /// Right-hand side.
    pub value: f64,
    /// Legend label.
    pub label: String,
}

/// Most threads a spec may ask for (beyond it a typo, not an oversubscription study).
pub const MAX_THREADS: usize = 256;

/// The machine's logical cores (1 if unknown).
pub fn logical_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A thread-count list as written, or `"all"`: `[1, 2, …, logical cores]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum ThreadCounts {
    List(Vec<usize>),
    Word(String),
}

impl ThreadCounts {
    fn resolve<E: serde::de::Error>(self) -> Result<Vec<usize>, E> {
        match self {
            ThreadCounts::List(l) => Ok(l),
            ThreadCounts::Word(w) if w == "all" => Ok((1..=logical_cores()).collect()),
            ThreadCounts::Word(w) => Err(E::custom(format!(
                "thread counts: `{w}` is neither a list of counts nor \"all\" (e.g. [1, 2] or \"all\")"
            ))),
        }
    }
}

fn thread_counts<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<usize>, D::Error> {
    ThreadCounts::deserialize(d)?.resolve()
}

fn optional_thread_counts<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<usize>>, D::Error> {
    ThreadCounts::deserialize(d)?.resolve().map(Some)
}

/// `[monitor]`: `allowed = x` for every row, or `allowed_rows = [..]`, one per row of Φ
/// (index-1: of g).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MonitorSpec {
    /// The allowed |Φ_i| of every row.
    pub allowed: Option<f64>,
    /// The allowed |Φ_i| of each row.
    pub allowed_rows: Option<Vec<f64>>,
}

impl MonitorSpec {
    /// The allowances for a problem with `m` constraint rows, or what is wrong with them.
    pub fn allowance(&self, m: usize) -> Result<driftlab_core::AllowedViolation, String> {
        let ok = |x: &f64| x.is_finite() && *x > 0.0;
        match (self.allowed, &self.allowed_rows) {
            (Some(x), None) if ok(&x) => Ok(driftlab_core::AllowedViolation::All(x)),
            (None, Some(v)) if v.len() == m && v.iter().all(ok) => {
                Ok(driftlab_core::AllowedViolation::Rows(v.clone()))
            }
            (None, Some(v)) if v.len() != m => Err(format!(
                "[monitor] allowed_rows has {} values; the problem has {m} constraint rows",
                v.len()
            )),
            (Some(_), Some(_)) | (None, None) => Err(
                "[monitor]: give either `allowed` (every row) or `allowed_rows` (one per row)"
                    .into(),
            ),
            _ => Err("[monitor]: allowed violations must be finite and > 0".into()),
        }
    }
}

fn default_metrics_stride() -> usize {
    1
}

fn default_stride() -> usize {
    10
}
fn default_threads() -> Vec<usize> {
    vec![1]
}
fn default_repeat() -> usize {
    1
}
/// Five runs alone, after a warm-up: the least a referee would accept behind a median and
/// its range (issue 46).
fn default_timing_repeats() -> usize {
    5
}
fn default_max_steps() -> usize {
    20_000_000
}

/// Step sizes: a list, a log range, or error-controlled steps.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Steps {
    /// Explicit list.
    pub h: Option<Vec<f64>>,
    /// Logarithmic range.
    pub log_range: Option<LogRange>,
    /// Error-controlled steps (one cell per tolerance).
    pub adaptive: Option<AdaptiveSteps>,
}

/// `[steps] adaptive = { … }`: error-controlled steps through `driftlab_core::drive`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveSteps {
    /// Relative tolerances (one cell each).
    pub rtol: Option<Vec<f64>>,
    /// … or a logarithmic range of them.
    pub rtol_range: Option<LogRange>,
    /// Absolute tolerance (default: equal to each rtol, the IVP Test Set convention).
    pub atol: Option<f64>,
    /// Initial step (default 1e-6, RADAU5's).
    #[serde(default = "default_h0")]
    pub h0: f64,
    /// Largest step (default: the whole interval).
    pub h_max: Option<f64>,
    /// Smallest step before the run fails with a step-size underflow (default 0: only
    /// the round-off bound 10 ε |t|).
    #[serde(default)]
    pub h_min: f64,
    /// Step-size controller: `i`, `pi` or `gustafsson` (default).
    #[serde(default)]
    pub controller: driftlab_core::ControllerKind,
}

fn default_h0() -> f64 {
    1e-6
}

impl AdaptiveSteps {
    /// The relative tolerances, loosest first; an error names the field and the fix.
    pub fn rtols(&self) -> Result<Vec<f64>, String> {
        let mut r = match (&self.rtol, &self.rtol_range) {
            (Some(r), None) => r.clone(),
            (None, Some(range)) => range.values("rtol_range")?,
            _ => return Err("[steps] adaptive needs exactly one of `rtol = [..]` or `rtol_range = { from, to, per_decade }`".into()),
        };
        if r.is_empty() || r.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
            return Err(format!(
                "[steps] adaptive: every rtol must be finite and > 0 (got {r:?})"
            ));
        }
        if let Some(x) = first_repeat(&r) {
            return Err(format!(
                "[steps] adaptive: `rtol` lists {x:e} twice; each tolerance is one cell, so give it once"
            ));
        }
        if let Some(a) = self.atol {
            if !(a.is_finite() && a >= 0.0) {
                return Err(format!(
                    "[steps] adaptive: `atol` = {a} must be finite and ≥ 0"
                ));
            }
        }
        if !(self.h0.is_finite() && self.h0 > 0.0) {
            return Err(format!(
                "[steps] adaptive: `h0` = {} must be finite and > 0",
                self.h0
            ));
        }
        if !(self.h_min.is_finite() && self.h_min >= 0.0) {
            return Err(format!(
                "[steps] adaptive: `h_min` = {} must be finite and ≥ 0",
                self.h_min
            ));
        }
        if let Some(hm) = self.h_max {
            if !(hm.is_finite() && hm > self.h_min) {
                return Err(format!(
                    "[steps] adaptive: `h_max` = {hm} must be finite and > h_min"
                ));
            }
        }
        r.sort_by(|a, b| b.total_cmp(a));
        Ok(r)
    }
}

/// `per_decade` points per decade from `from` to `to` (both included).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogRange {
    /// Smallest h.
    pub from: f64,
    /// Largest h.
    pub to: f64,
    /// Points per decade.
    pub per_decade: usize,
}

/// A problem entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProblemSpec {
    /// Catalog id.
    pub id: String,
    /// Parameters; list values sweep.
    #[serde(default)]
    pub params: toml::Table,
}

/// A method entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MethodSpec {
    /// Catalog id.
    pub id: String,
    /// Parameters; list values sweep.
    #[serde(default)]
    pub params: toml::Table,
    /// Wrap in the projection decorator with these parameters.
    pub projection: Option<toml::Table>,
    /// Wrap in Richardson step control (step doubling), so that a restartable method
    /// without an error estimate of its own can run `[steps] adaptive`.
    #[serde(default)]
    pub richardson: bool,
    /// Wrap in emergency recovery (seed 001 §3.5.4) with these parameters:
    /// `{ strategy = "rollback" | "reset" | "relax", eps0, alpha, beta, … }`.
    pub recovery: Option<toml::Table>,
    /// Display label (default: id, `+projection`, and the swept/given parameters).
    pub label: Option<String>,
    /// Which of the `[steps]` entries this method runs when the spec gives both fixed
    /// steps and `adaptive`: `"fixed"` or `"adaptive"` (default: the only one given;
    /// with both, `"fixed"`).
    pub stepping: Option<Stepping>,
    /// This entry's own fixed step sizes (`{ h = [..] }` or `{ log_range = {..} }`),
    /// replacing `[steps]`' for it in every size: an order study chooses per method a range
    /// whose errors stay above the round-off floor (a sixth-order method's errors reach
    /// 1e-13 at steps where a first-order method's are still 1e-3).
    pub steps: Option<Steps>,
    /// This entry's own constraint-strength curriculum, replacing `ensemble.curriculum`
    /// for its cells: two curricula side by side on one method (give each entry a label).
    pub curriculum: Option<crate::ensemble::noise::Curriculum>,
}

impl MethodSpec {
    /// The decorators this entry asks for.
    pub fn decorators(&self) -> driftlab_methods::Decorators<'_> {
        driftlab_methods::Decorators {
            projection: self.projection.as_ref(),
            recovery: self.recovery.as_ref(),
            richardson: self.richardson,
        }
    }
}

/// Fixed or error-controlled steps for one method entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stepping {
    /// The `h` list or `log_range`.
    Fixed,
    /// The `adaptive` tolerances.
    Adaptive,
}

/// Overrides for a named size.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeOverride {
    /// End time.
    pub t_end: Option<f64>,
    /// Step sizes.
    pub steps: Option<Steps>,
    /// Trace stride.
    pub trace_stride: Option<usize>,
    /// Trace interval in time.
    pub trace_dt: Option<f64>,
    /// Metrics stride.
    pub metrics_stride: Option<usize>,
    /// Problems (replace the spec's list in this size, e.g. smaller systems for CI).
    pub problems: Option<Vec<ProblemSpec>>,
    /// Ensemble members (replaces `ensemble.members`).
    pub members: Option<usize>,
}

impl Spec {
    /// Parse and validate spec text; `path` names it in errors.
    pub fn parse(text: &str, path: &str) -> Result<Self, RunnerError> {
        let spec: Spec = toml::from_str(text).map_err(|e| RunnerError::Spec {
            path: path.into(),
            message: e.to_string().trim().to_string(),
        })?;
        spec.validate(path)?;
        Ok(spec)
    }

    /// Read, parse and validate a spec file.
    pub fn load(path: &std::path::Path) -> Result<(Self, String), RunnerError> {
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| RunnerError::Read {
            path: p.clone(),
            source,
        })?;
        Ok((Self::parse(&text, &p)?, text))
    }

    /// The name of the size a run at `size` runs: `full`, or one of the spec's `[sizes]`;
    /// a spec without sizes runs as written at every size, which is its full one (so a
    /// manifest never records a size the spec does not define).
    pub fn size_name(&self, size: Option<&str>) -> String {
        match size {
            Some(name) if self.sizes.contains_key(name) => name.to_string(),
            _ => "full".into(),
        }
    }

    /// Apply a named size (`None` or `full` keeps the spec as written).
    pub fn sized(&self, size: Option<&str>, path: &str) -> Result<Self, RunnerError> {
        let mut s = self.clone();
        match size {
            None | Some("full") => {}
            Some(name) if !self.sizes.is_empty() && !self.sizes.contains_key(name) => {
                let mut known: Vec<&str> = self.sizes.keys().map(String::as_str).collect();
                known.push("full");
                return Err(RunnerError::Spec {
                    path: path.into(),
                    message: format!(
                        "--size `{name}`: this spec defines the sizes {}; use one of them",
                        known.join(", ")
                    ),
                });
            }
            Some(name) => {
                // A spec without sizes runs as written at every size.
                if let Some(o) = self.sizes.get(name) {
                    if let Some(t) = o.t_end {
                        s.t_end = Some(t);
                    }
                    if let Some(st) = &o.steps {
                        s.steps = st.clone();
                    }
                    if let Some(ts) = o.trace_stride {
                        s.trace_stride = ts;
                    }
                    if let Some(dt) = o.trace_dt {
                        s.trace_dt = Some(dt);
                    }
                    if let Some(k) = o.metrics_stride {
                        s.metrics_stride = k;
                    }
                    if let Some(p) = &o.problems {
                        s.problems = p.clone();
                    }
                    if let (Some(k), Some(e)) = (o.members, s.ensemble.as_mut()) {
                        e.members = k;
                    }
                }
            }
        }
        s.validate(path)?;
        Ok(s)
    }

    fn validate(&self, path: &str) -> Result<(), RunnerError> {
        self.check().map_err(|m| RunnerError::Spec {
            path: path.into(),
            message: m,
        })
    }

    /// Every check of the spec, in order: its scalars, its thread lists, its steps and
    /// sweeps, then its report, claims, order notes and ensemble.
    fn check(&self) -> Result<(), String> {
        self.check_scalars()?;
        self.check_threads()?;
        self.steps.values()?;
        self.validate_sweeps()?;
        if let Some(r) = &self.report {
            r.validate()?;
        }
        for (i, c) in self.claims.iter().enumerate() {
            c.validate(i + 1)?;
        }
        for (i, n) in self.order_notes.iter().enumerate() {
            n.validate(i + 1)?;
        }
        if let Some(e) = &self.ensemble {
            self.validate_ensemble(e)?;
        }
        self.validate_method_curricula()?;
        self.validate_optima()
    }

    /// `[[optima]]` entries: valid, in an ensemble, searching a parameter some method
    /// entry sweeps (a list of values).
    fn validate_optima(&self) -> Result<(), String> {
        for (i, o) in self.optima.iter().enumerate() {
            o.validate(i + 1)?;
            let at = format!("[[optima]] entry {}", i + 1);
            if self.ensemble.is_none() {
                return Err(format!("{at}: the losses are expectations over an ensemble's members; add an `[ensemble]` table"));
            }
            let swept = self.methods.iter().any(|m| {
                m.params
                    .get(&o.parameter)
                    .is_some_and(|v| v.as_array().is_some_and(|a| a.len() >= 3))
            });
            if !swept {
                return Err(format!(
                    "{at}: parameter = \"{}\" is not swept over at least 3 values by any [[methods]] entry; give it as a list, e.g. {} = [1e3, 1e4, 1e5]",
                    o.parameter, o.parameter
                ));
            }
        }
        Ok(())
    }

    /// A `[[methods]]` entry's own curriculum: inside an ensemble, valid, and scaling a
    /// parameter the entry gives.
    fn validate_method_curricula(&self) -> Result<(), String> {
        for (i, m) in self.methods.iter().enumerate() {
            let Some(c) = &m.curriculum else { continue };
            let at = format!("[[methods]] entry {} (`{}`): `curriculum`", i + 1, m.id);
            if self.ensemble.is_none() {
                return Err(format!(
                    "{at} applies to ensemble members: add an `[ensemble]` table or remove it"
                ));
            }
            c.validate().map_err(|e| format!("{at}: {e}"))?;
            if !c.params.keys().any(|k| m.params.contains_key(k)) {
                return Err(format!(
                    "{at}.params = {:?} names no parameter of this entry's params; give the stiffness it scales (e.g. penalty `k_p`)",
                    c.params.keys().collect::<Vec<_>>()
                ));
            }
        }
        Ok(())
    }

    /// The top-level numbers and names: schema version, name, budgets, end time, entries,
    /// sampling, repeats and metric stride.
    fn check_scalars(&self) -> Result<(), String> {
        if self.schema_version != SCHEMA_VERSION {
            return Err(format!("schema_version = {} is not supported; this driftlab reads schema_version = {SCHEMA_VERSION}", self.schema_version));
        }
        if self.name.is_empty()
            || self.name.contains(['/', '\\', '\0'])
            || self.name == "."
            || self.name == ".."
        {
            return Err(format!(
                "`name` = {:?} must be a folder name inside the output root: non-empty, without slashes, not `.` or `..`",
                self.name
            ));
        }
        if let Some(secs) = self.cell_seconds {
            if !(secs.is_finite() && secs > 0.0) {
                return Err(format!(
                    "`cell_seconds` = {secs}: give a wall-time budget per cell > 0 s, or leave it out for none"
                ));
            }
        }
        if self.max_steps == 0 {
            return Err("`max_steps` = 0: give the most steps a cell may take, ≥ 1".into());
        }
        if let Some(t) = self.t_end {
            if !(t.is_finite() && t > 0.0) {
                return Err(format!("`t_end` = {t}: give a finite end time > 0"));
            }
        }
        if self.problems.is_empty() || self.methods.is_empty() {
            return Err("give at least one [[problems]] and one [[methods]] entry".into());
        }
        if let Some(dt) = self.trace_dt {
            if !(dt.is_finite() && dt > 0.0) {
                return Err(format!("`trace_dt` = {dt}: give a sampling interval > 0"));
            }
        }
        if self.timing_repeats > 100 {
            return Err(format!(
                "`timing_repeats` = {} must be at most 100 (runs alone behind a verdict's time; 0 keeps the sweep's times)",
                self.timing_repeats
            ));
        }
        if self.repeat == 0 || self.repeat > 1000 {
            return Err(format!(
                "`repeat` = {} must be between 1 and 1000 (runs per cell; the median time is recorded)",
                self.repeat
            ));
        }
        if self.metrics_stride == 0 {
            return Err(
                "`metrics_stride` = 0: give the number of steps between metric evaluations, ≥ 1 (1 = every step)"
                    .into(),
            );
        }
        Ok(())
    }

    /// `threads` and `sweep_threads`: each count once, between 1 and [`MAX_THREADS`].
    fn check_threads(&self) -> Result<(), String> {
        for (key, list) in [
            ("threads", Some(&self.threads)),
            ("sweep_threads", self.sweep_threads.as_ref()),
        ] {
            let Some(list) = list else { continue };
            if let Some(k) = first_repeat(list) {
                return Err(format!(
                    "`{key}` = {list:?} lists {k} twice: every count runs the whole cell set once, so a repeated count would count the same cells twice; give each count once"
                ));
            }
            if list.is_empty() || list.iter().any(|&k| k == 0 || k > MAX_THREADS) {
                return Err(format!(
                    "`{key}` = {list:?} must list thread counts between 1 and {MAX_THREADS} \
                     (this machine has {} logical cores), e.g. {key} = [1, 2] or {key} = \"all\"",
                    logical_cores()
                ));
            }
        }
        Ok(())
    }

    /// A swept parameter that lists one value twice would make the same cells twice:
    /// refused, naming the entry, the parameter and the value.
    fn validate_sweeps(&self) -> Result<(), String> {
        let tables = self
            .problems
            .iter()
            .map(|p| ("problems", &p.id, &p.params))
            .chain(self.methods.iter().map(|m| ("methods", &m.id, &m.params)));
        let mut entry = [0usize; 2];
        for (kind, id, params) in tables {
            let k = &mut entry[usize::from(kind == "methods")];
            *k += 1;
            for (key, value) in params {
                let toml::Value::Array(list) = value else {
                    continue;
                };
                if let Some(v) = first_repeat(list) {
                    return Err(format!(
                        "[[{kind}]] entry {k} (`{id}`): `{key}` lists {v} twice; a sweep runs each value once, so the same cells would count twice — give each value once"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The `[ensemble]` table's own checks, and a curriculum that scales a parameter
    /// some method of the spec is given.
    fn validate_ensemble(&self, e: &crate::ensemble::EnsembleSpec) -> Result<(), String> {
        e.validate()?;
        if self.steps.adaptive.is_some() {
            return Err("`[ensemble]` runs fixed steps (the noise is held per step h): give `[steps] h = [..]`, not `adaptive`".into());
        }
        let Some(c) = &e.curriculum else {
            return Ok(());
        };
        let scaled = self
            .methods
            .iter()
            .any(|m| c.params.keys().any(|k| m.params.contains_key(k)));
        if scaled {
            return Ok(());
        }
        Err(format!(
            "`ensemble.curriculum.params` = {:?} names no parameter given to any [[methods]] entry; \
             give the soft methods' stiffness in their params (e.g. penalty `k_p`, baumgarte `omega_n`) \
             — the curriculum scales the given value",
            c.params.keys().collect::<Vec<_>>()
        ))
    }
}

impl LogRange {
    /// The points of the range, smallest first; `field` names it in errors.
    pub fn values(&self, field: &str) -> Result<Vec<f64>, String> {
        let r = self;
        if !(r.from > 0.0 && r.to >= r.from && r.to.is_finite() && r.per_decade > 0) {
            return Err(format!("[steps] {field} needs 0 < from ≤ to < ∞ and per_decade ≥ 1 (got from = {}, to = {}, per_decade = {})", r.from, r.to, r.per_decade));
        }
        let decades = (r.to / r.from).log10();
        let points = (decades * r.per_decade as f64).round() + 1.0;
        if points.is_nan() || points > MAX_RANGE_POINTS as f64 {
            return Err(format!(
                "[steps] {field} from {:e} to {:e} at per_decade = {} gives {points:e} points, more than {MAX_RANGE_POINTS}; narrow the range or lower per_decade",
                r.from, r.to, r.per_decade
            ));
        }
        let n = points as usize - 1;
        Ok((0..=n)
            .map(|i| r.from * 10f64.powf(i as f64 / r.per_decade as f64))
            .collect())
    }
}

impl Steps {
    /// The fixed step sizes, largest first (empty for error-controlled steps).
    pub fn values(&self) -> Result<Vec<f64>, String> {
        if let Some(a) = &self.adaptive {
            a.rtols()?;
        }
        let mut hs = match (&self.h, &self.log_range, &self.adaptive) {
            (Some(h), None, _) => h.clone(),
            (None, Some(r), _) => r.values("log_range")?,
            (None, None, Some(_)) => return Ok(Vec::new()),
            _ => return Err(
                "[steps] needs one of `h = [..]` or `log_range = { from, to, per_decade }`, and/or `adaptive = { rtol = [..], … }` (methods choose with `stepping`)"
                    .into(),
            ),
        };
        if hs.is_empty() || hs.iter().any(|h| !(h.is_finite() && *h > 0.0)) {
            return Err("[steps] step sizes must be finite and > 0".into());
        }
        if let Some(h) = first_repeat(&hs) {
            return Err(format!(
                "[steps] `h` lists {h:e} twice; each step size is one cell, so give it once"
            ));
        }
        hs.sort_by(|a, b| b.total_cmp(a));
        Ok(hs)
    }
}

/// The first value `list` holds twice, if any.
pub fn first_repeat<T: PartialEq>(list: &[T]) -> Option<&T> {
    list.iter()
        .enumerate()
        .find(|(i, x)| list[..*i].contains(x))
        .map(|(_, x)| x)
}

/// Most points a `log_range` may give (beyond it a typo, not a study).
pub const MAX_RANGE_POINTS: usize = 10_000;

/// Most cells a spec may expand to (beyond it a typo; split a larger study into specs).
pub const MAX_CELLS: usize = 1_000_000;

/// How many tables [`sweep`] makes of `table` (a real number: a product of list lengths
/// that cannot overflow).
pub fn sweep_len(table: &toml::Table) -> f64 {
    table
        .values()
        .map(|v| match v {
            toml::Value::Array(a) => a.len() as f64,
            _ => 1.0,
        })
        .product()
}

/// Cartesian expansion of a parameter table whose array values sweep.
pub fn sweep(table: &toml::Table) -> Vec<toml::Table> {
    let mut out = vec![toml::Table::new()];
    for (k, v) in table {
        let choices: Vec<toml::Value> = match v {
            toml::Value::Array(a) => a.clone(),
            other => vec![other.clone()],
        };
        out = out
            .into_iter()
            .flat_map(|t| {
                choices.iter().map(move |c| {
                    let mut t2 = t.clone();
                    t2.insert(k.clone(), c.clone());
                    t2
                })
            })
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "schema_version = 1\nname = \"x\"\n[steps]\nh = [0.1]\n[[problems]]\nid = \"pendulum\"\n[[methods]]\nid = \"taylor\"\n";

    #[test]
    fn report_table_is_validated_naming_the_field() {
        let ok = format!("{MINIMAL}[report]\nclass = \"c\"\nmeasure = \"scd\"\ntarget = 6.0\ntarget_why = \"w\"\nhigher_is_better = true\n");
        assert!(Spec::parse(&ok, "s.toml").is_ok());
        let bad = format!("{MINIMAL}[report]\nmeasure = \"wall_seconds\"\n");
        let e = Spec::parse(&bad, "s.toml").unwrap_err().to_string();
        assert!(e.contains("measure") && e.contains("err_q"), "{e}");
        let bad = format!("{MINIMAL}[report]\nclass = \"c\"\nmeasure = \"err_q\"\n");
        let e = Spec::parse(&bad, "s.toml").unwrap_err().to_string();
        assert!(e.contains("target"), "{e}");
    }

    #[test]
    fn unknown_keys_are_rejected_with_their_name() {
        let bad = MINIMAL.replace("name = \"x\"", "name = \"x\"\nt_ende = 3.0");
        let e = Spec::parse(&bad, "s.toml").unwrap_err().to_string();
        assert!(e.contains("t_ende"), "{e}");
        let bad = MINIMAL.replace("id = \"taylor\"", "id = \"taylor\"\nparam = {}");
        assert!(Spec::parse(&bad, "s.toml")
            .unwrap_err()
            .to_string()
            .contains("param"));
    }

    #[test]
    fn adaptive_steps_are_validated_naming_the_field() {
        let with = |steps: &str| MINIMAL.replace("h = [0.1]", steps);
        let ok = with("adaptive = { rtol = [1e-4, 1e-7], atol = 1e-6, controller = \"pi\" }");
        let spec = Spec::parse(&ok, "s").unwrap();
        let a = spec.steps.adaptive.as_ref().unwrap();
        assert_eq!(a.rtols().unwrap(), vec![1e-4, 1e-7]);
        assert_eq!(a.controller, driftlab_core::ControllerKind::Pi);
        assert_eq!(a.h0.to_bits(), 1e-6f64.to_bits());
        for (bad, field) in [
            ("adaptive = { rtol = [0.0] }", "rtol"),
            ("adaptive = { rtol = [nan] }", "rtol"),
            ("adaptive = { rtol = [1e-4], atol = -1.0 }", "atol"),
            ("adaptive = { rtol = [1e-4], h0 = 0.0 }", "h0"),
            ("adaptive = { rtol = [1e-4], h0 = -1.0 }", "h0"),
            ("adaptive = { }", "rtol"),
            (
                "adaptive = { rtol = [1e-4], controller = \"p\" }",
                "controller",
            ),
            ("adaptive = { rtol = [1e-4], rtoll = 1 }", "rtoll"),
            (
                "h = [0.1]\nlog_range = { from = 0.1, to = 1.0, per_decade = 1 }",
                "one of",
            ),
        ] {
            let e = Spec::parse(&with(bad), "s").unwrap_err().to_string();
            assert!(e.contains(field), "{bad}: {e}");
        }
    }

    #[test]
    fn repeat_is_validated() {
        let with =
            |r: &str| MINIMAL.replace("name = \"x\"", &format!("name = \"x\"\nrepeat = {r}"));
        assert_eq!(Spec::parse(&with("5"), "s").unwrap().repeat, 5);
        assert_eq!(Spec::parse(MINIMAL, "s").unwrap().repeat, 1);
        for bad in ["0", "1001"] {
            let e = Spec::parse(&with(bad), "s").unwrap_err().to_string();
            assert!(e.contains("`repeat`"), "{e}");
        }
        let e = Spec::parse(&with("-1"), "s").unwrap_err().to_string();
        assert!(e.contains("repeat"), "{e}");
    }

    #[test]
    fn schema_version_is_checked() {
        let e = Spec::parse(
            &MINIMAL.replace("schema_version = 1", "schema_version = 7"),
            "s",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("schema_version = 7"), "{e}");
    }

    #[test]
    fn log_range_and_sweeps_expand() {
        let st = Steps {
            h: None,
            adaptive: None,
            log_range: Some(LogRange {
                from: 1e-3,
                to: 1e-1,
                per_decade: 2,
            }),
        };
        let hs = st.values().unwrap();
        assert_eq!(hs.len(), 5);
        assert!((hs[0] - 0.1).abs() < 1e-15 && (hs[4] - 1e-3).abs() < 1e-15);
        let t: toml::Table = "a = [1, 2]\nb = 3\nc = [4.0, 5.0, 6.0]".parse().unwrap();
        assert_eq!(sweep(&t).len(), 6);
    }
}
