//! Stored results, read back from `runs.parquet`, `traces.parquet` and `orders.csv`.

use crate::error::ReportError;
use driftlab_results::schema::{optima, orders, runs, traces};
use driftlab_results::table;
use polars::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One row of `runs`.
#[derive(Clone, Debug, Default)]
pub struct Run {
    /// Cell index within the experiment.
    pub cell: u64,
    /// Problem id.
    pub problem: String,
    /// Problem parameters of this cell (JSON).
    pub problem_params: String,
    /// Method id (`+projection` when decorated).
    pub method: String,
    /// Method label with its parameters (one curve per variant in figures).
    pub variant: String,
    /// Method and projection parameters (JSON).
    pub params: String,
    /// Step size (snapped so that t_end/h is an integer); error-controlled cells: the mean accepted step t_end/steps.
    pub h: f64,
    /// Relative tolerance of an error-controlled cell (`h` is then its mean step).
    pub rtol: Option<f64>,
    /// End time.
    pub t_end: f64,
    /// `status = ok`: the run reached its end time.
    pub ok: bool,
    /// Last time reached before the failure (null if ok).
    pub fail_time: Option<f64>,
    /// Stable tag of the failure (`newton-diverged`, …; runs::FAIL_KIND).
    pub fail_kind: Option<String>,
    /// The typed error's message with its numbers (null if ok).
    pub fail_reason: Option<String>,
    /// Steps completed (accepted steps of an error-controlled cell).
    pub steps: u64,
    /// Max over all steps of ‖Φ(t,q)‖∞ (index-1: ‖g‖∞).
    pub max_pos_residual: Option<f64>,
    /// Max over all steps of ‖Φ_q v + Φ_t‖∞.
    pub max_vel_residual: Option<f64>,
    /// Max over all steps of ‖Φ_q a − γ‖∞ with the method's own a.
    pub max_acc_residual: Option<f64>,
    /// Max of |H − H0| / max(|H0|, problem energy scale).
    pub max_energy_rel_error: Option<f64>,
    /// Max over all steps of ‖q − q_exact‖∞ (index-1: differential variables x); null without reference.
    pub err_q: Option<f64>,
    /// Max over all steps of ‖v − v_exact‖∞.
    pub err_v: Option<f64>,
    /// Max over all steps of ‖λ − λ_exact‖∞ (index-1: algebraic variables z).
    pub err_lambda: Option<f64>,
    /// ‖q − q_exact‖∞ at t_end.
    pub final_err_q: Option<f64>,
    /// ‖v − v_exact‖∞ at t_end.
    pub final_err_v: Option<f64>,
    /// ‖λ − λ_exact‖∞ at t_end.
    pub final_err_lambda: Option<f64>,
    /// Significant correct digits against a published reference (None without one).
    pub scd: Option<f64>,
    /// Lower-priority residual at the last state (prioritized problems only).
    pub final_deferred_residual: Option<f64>,
    /// Numeric factorizations (KKT or Newton matrices).
    pub factorizations: u64,
    /// Newton iterations (stage equations).
    pub newton_iterations: u64,
    /// Newton iterations of position projections.
    pub projection_iterations: u64,
    /// Total wall time of the cell (init + steps + metrics); the median over `repeat` runs.
    pub wall_seconds: f64,
    /// Wall time inside the method's steps (median over `repeat` runs).
    pub step_seconds: f64,
    /// Measured peak heap bytes of the cell (`runs::PEAK_HEAP_BYTES`; `None` when not
    /// measured).
    pub peak_heap_bytes: Option<f64>,
    /// The distribution over members when the row summarizes an ensemble.
    pub ensemble: Option<EnsembleStats>,
    /// faer threads inside the cell (`runs::THREADS`).
    pub threads: usize,
    /// Cells side by side in the row's batch (`runs::SWEEP_THREADS`; `None` in results
    /// written before thread sweeps).
    pub sweep_threads: Option<usize>,
    /// Wall time of the row's batch (`runs::BATCH_SECONDS`).
    pub batch_seconds: Option<f64>,
    /// Runs of the cell behind its times (`runs::REPEAT`; 1 in results written before
    /// repeats).
    pub repeat: u64,
    /// How the reference was judged (`runs::REFERENCE`; `None` without one, or in results
    /// written before references were judged).
    pub reference: Option<String>,
    /// The method's declared order in q (MethodInfo).
    pub declared_q: Option<f64>,
    /// Declared order in v.
    pub declared_v: Option<f64>,
    /// Declared order in λ.
    pub declared_lambda: Option<f64>,
    /// The values of [`runs::MEASURES`], in that order (an experiment's accuracy measure
    /// is one of them).
    pub measures: Vec<Option<f64>>,
    /// The stored row itself, for a measure named in a spec (a claim's), looked up by
    /// its column name ([`table::number`]).
    pub row: runs::Row,
}

impl Run {
    /// Numeric method parameters of the run (`params.method` in the stored JSON).
    pub fn method_params(&self) -> Vec<(String, f64)> {
        serde_json::from_str::<serde_json::Value>(&self.params)
            .ok()
            .and_then(|v| v.get("method").and_then(|m| m.as_object()).cloned())
            .map(|o| {
                o.into_iter()
                    .filter_map(|(k, v)| v.as_f64().map(|x| (k, x)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The numeric method parameter `name`, if set.
    pub fn method_param(&self, name: &str) -> Option<f64> {
        self.method_params()
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    /// The step column of the report's tables: `h`, or `rtol` and the mean step of an
    /// error-controlled cell.
    pub fn step_label(&self) -> String {
        match self.rtol {
            Some(r) => format!("rtol {r:.0e} (h̄ {:.1e})", self.h),
            None => format!("{:.2e}", self.h),
        }
    }

    /// The status cell of the report's tables: `ok`, or the failure's kind, time and
    /// message.
    pub fn status_text(&self) -> String {
        if self.ok {
            return "ok".into();
        }
        format!(
            "failed ({}) at t = {:.4}: {}",
            self.fail_kind.as_deref().unwrap_or("unknown"),
            self.fail_time.unwrap_or(f64::NAN),
            self.fail_reason.as_deref().unwrap_or_default()
        )
    }

    /// Problem and its parameters, as one key.
    pub fn problem_key(&self) -> String {
        if self.problem_params == "{}" {
            self.problem.clone()
        } else {
            format!("{} {}", self.problem, self.problem_params)
        }
    }
}

/// An ensemble row's distribution over members (the runs columns `members` …
/// `rollout_steps_per_second`; the maxima are the row's own maxima).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EnsembleStats {
    /// Rollouts.
    pub members: u64,
    /// Failed rollouts.
    pub failures: u64,
    /// Median and 95th percentile of the members' max drift.
    pub drift: [Option<f64>; 2],
    /// Median and 95th percentile of the members' max relative energy error.
    pub energy: [Option<f64>; 2],
    /// Rollout steps per second.
    pub throughput: Option<f64>,
}

/// A sampled trace of one cell.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// Times.
    pub t: Vec<f64>,
    /// Position residual.
    pub pos: Vec<Option<f64>>,
    /// Velocity residual.
    pub vel: Vec<Option<f64>>,
    /// Acceleration residual.
    pub acc: Vec<Option<f64>>,
    /// Relative energy error.
    pub energy: Vec<Option<f64>>,
    /// Errors against the exact solution (q, v, λ).
    pub err: [Vec<Option<f64>>; 3],
    /// Positions (when stored).
    pub q: Vec<Vec<f64>>,
    /// Multipliers λ (when stored).
    pub lambda: Vec<Vec<f64>>,
    /// The constraint rows Φ_i (when stored).
    pub phi: Vec<Vec<f64>>,
}

/// One line of `orders.csv`.
#[derive(Clone, Debug, Default)]
pub struct Order {
    /// Problem id.
    pub problem: String,
    /// Problem parameters of this cell (JSON).
    pub problem_params: String,
    /// Catalog method id with its decorators (`taylor+projection`).
    pub method: String,
    /// Method label with its parameters (one curve per variant in figures).
    pub variant: String,
    /// `q`, `v` or `lambda`.
    pub quantity: String,
    /// Fitted slope of log(err) against log(h) (`observed_order`; none with too few points).
    pub observed: Option<f64>,
    /// The method's declared order (`expected_order`).
    pub expected: Option<f64>,
    /// Smallest h in the fit range.
    pub h_min: Option<f64>,
    /// Largest h in the fit range.
    pub h_max: Option<f64>,
    /// Points in the fit.
    pub points: u64,
    /// Coefficient of determination of the fit.
    pub r2: Option<f64>,
    /// Why there is no fit, if so.
    pub note: String,
}

impl Order {
    /// The key `[[order_notes]]` and the claims' order measures select on:
    /// `problem problem_params variant` (driftlab_results::order_note).
    pub fn key(&self) -> String {
        format!("{} {} {}", self.problem, self.problem_params, self.variant)
    }
}

/// Everything stored for one experiment.
#[derive(Clone, Debug, Default)]
pub struct Results {
    /// Experiment name (folder name).
    pub name: String,
    /// Folder.
    pub dir: PathBuf,
    /// Runs.
    pub runs: Vec<Run>,
    /// Traces by cell.
    pub traces: BTreeMap<u64, Trace>,
    /// Fitted orders.
    pub orders: Vec<Order>,
    /// Spec description (from the manifest).
    pub description: String,
    /// Reference curves for parameter maps (from the manifest's spec text).
    pub annotations: Vec<Annotation>,
    /// The experiment's `[report]` table, if it has one.
    pub report: Option<driftlab_results::report_spec::ReportSpec>,
    /// The experiment's `[[claims]]` tables.
    pub claims: Vec<driftlab_results::claim_spec::ClaimSpec>,
    /// The experiment's `[[order_notes]]` tables.
    pub order_notes: Vec<driftlab_results::order_note::OrderNote>,
    /// The searched optima (`optima.csv`, empty without one).
    pub optima: Vec<optima::Row>,
}

/// A reference curve `x^x_exp · y^y_exp · h^h_exp = value` (see the runner's spec).
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    /// Swept method parameter on the horizontal axis.
    pub x: String,
    /// Swept method parameter on the vertical axis.
    pub y: String,
    /// Exponent of `x`.
    pub x_exp: f64,
    /// Exponent of `y` (0: a vertical line).
    pub y_exp: f64,
    /// Exponent of the step size `h`.
    pub h_exp: f64,
    /// Right-hand side of `x^x_exp · y^y_exp · h^h_exp = value`.
    pub value: f64,
    /// Legend text of the curve.
    pub label: String,
}

fn annotations_of(spec_text: &str) -> Vec<Annotation> {
    let Ok(t) = spec_text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let Some(toml::Value::Array(list)) = t.get("annotations") else {
        return Vec::new();
    };
    let num = |v: &toml::Table, k: &str| {
        v.get(k)
            .and_then(|x| x.as_float().or_else(|| x.as_integer().map(|i| i as f64)))
    };
    list.iter()
        .filter_map(|a| {
            let a = a.as_table()?;
            Some(Annotation {
                x: a.get("x")?.as_str()?.to_string(),
                y: a.get("y")?.as_str()?.to_string(),
                x_exp: num(a, "x_exp")?,
                y_exp: num(a, "y_exp")?,
                h_exp: num(a, "h_exp").unwrap_or(0.0),
                value: num(a, "value")?,
                label: a
                    .get("label")
                    .and_then(|l| l.as_str())
                    .unwrap_or("")
                    .to_string(),
            })
        })
        .collect()
}

/// The names of the numeric method parameters set in any of `runs`, sorted, each once.
pub(crate) fn param_names(runs: &[&Run]) -> Vec<String> {
    let mut names: Vec<String> = runs
        .iter()
        .flat_map(|r| r.method_params().into_iter().map(|(k, _)| k))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// How many distinct values the method parameter `name` takes over `runs` (only positive
/// values counted when `positive_only`).
pub(crate) fn distinct_values(runs: &[&Run], name: &str, positive_only: bool) -> usize {
    let mut v: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.method_param(name))
        .filter(|x| !positive_only || *x > 0.0)
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v.len()
}

fn derr(path: &Path, e: impl std::fmt::Display) -> ReportError {
    ReportError::Data {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn read_parquet(path: &Path) -> Result<DataFrame, ReportError> {
    let f = std::fs::File::open(path).map_err(|e| ReportError::io(path, e))?;
    ParquetReader::new(f).finish().map_err(|e| derr(path, e))
}

/// The runs table of an experiment folder: the schema's rows ([`runs::Row`]) read through
/// the accessors the runner wrote them with, each seen as a [`Run`].
fn load_runs(dir: &Path) -> Result<Vec<Run>, ReportError> {
    let rp = dir.join("runs.parquet");
    let df = read_parquet(&rp)?;
    let rows = table::rows(&df, runs::COLUMNS).map_err(|e| derr(&rp, e))?;
    Ok(rows.iter().map(Run::of_row).collect())
}

impl Run {
    /// The report's view of a stored row. Columns that results written before them lack
    /// read as their defaults and mean: `rtol`, `fail_kind`, `reference`,
    /// `peak_heap_bytes` null; `sweep_threads` 0 → `None`; `batch_seconds` NaN → `None`;
    /// `repeat` 0 → 1; `threads` 0 → 1; no `members` → not an ensemble.
    pub(crate) fn of_row(r: &runs::Row) -> Self {
        Run {
            cell: r.cell,
            problem: r.problem.clone(),
            problem_params: r.problem_params.clone(),
            method: r.method.clone(),
            variant: r.variant.clone(),
            params: r.params.clone(),
            h: r.h,
            rtol: r.rtol,
            t_end: r.t_end,
            ok: r.status == "ok",
            fail_time: r.fail_time,
            fail_kind: r.fail_kind.clone(),
            fail_reason: r.fail_reason.clone(),
            steps: r.steps,
            max_pos_residual: r.max_pos_residual,
            max_vel_residual: r.max_vel_residual,
            max_acc_residual: r.max_acc_residual,
            max_energy_rel_error: r.max_energy_rel_error,
            err_q: r.err_q,
            err_v: r.err_v,
            err_lambda: r.err_lambda,
            final_err_q: r.final_err_q,
            final_err_v: r.final_err_v,
            final_err_lambda: r.final_err_lambda,
            scd: r.scd,
            final_deferred_residual: r.final_deferred_residual,
            factorizations: r.factorizations,
            newton_iterations: r.newton_iterations,
            projection_iterations: r.projection_iterations,
            wall_seconds: r.wall_seconds,
            step_seconds: r.step_seconds,
            peak_heap_bytes: r.peak_heap_bytes,
            ensemble: EnsembleStats::of_row(r),
            threads: r.threads.max(1) as usize,
            sweep_threads: (r.sweep_threads > 0).then_some(r.sweep_threads as usize),
            batch_seconds: Some(r.batch_seconds).filter(|x| !x.is_nan()),
            repeat: r.repeat.max(1),
            reference: r.reference.clone(),
            declared_q: r.declared_order_q,
            declared_v: r.declared_order_v,
            declared_lambda: r.declared_order_lambda,
            measures: runs::MEASURES
                .iter()
                .map(|m| table::number(r, runs::COLUMNS, m.name))
                .collect(),
            row: r.clone(),
        }
    }
}

impl EnsembleStats {
    /// The distribution of an ensemble row (`None` for a single run: no members).
    fn of_row(r: &runs::Row) -> Option<Self> {
        (r.members > 0).then_some(EnsembleStats {
            members: r.members,
            failures: r.member_failures,
            drift: [r.drift_median, r.drift_p95],
            energy: [r.energy_median, r.energy_p95],
            throughput: r.rollout_steps_per_second,
        })
    }
}

/// The list column `name` of a traces table, one list per row (a missing value NaN), or
/// `None` when the table has no such column (states not traced, or a folder older than
/// the column).
fn list_column(
    df: &DataFrame, name: &str, path: &Path,
) -> Result<Option<Vec<Vec<f64>>>, ReportError> {
    let Ok(col) = df.column(name) else {
        return Ok(None);
    };
    let l = col.list().map_err(|e| derr(path, e))?;
    let mut v = Vec::with_capacity(l.len());
    for i in 0..l.len() {
        let row = match l.get_as_series(i) {
            Some(s) => s
                .f64()
                .map_err(|e| derr(path, e))?
                .iter()
                .map(|x| x.unwrap_or(f64::NAN))
                .collect(),
            None => Vec::new(),
        };
        v.push(row);
    }
    Ok(Some(v))
}

/// The sampled traces of an experiment folder (empty without `traces.parquet`), read
/// through [`traces`].
fn load_traces(dir: &Path) -> Result<BTreeMap<u64, Trace>, ReportError> {
    let mut traces = BTreeMap::new();
    let tp = dir.join("traces.parquet");
    if crate::folders::belongs(dir, "traces.parquet") {
        let df = read_parquet(&tp)?;
        let samples = table::rows(&df, traces::COLUMNS).map_err(|e| derr(&tp, e))?;
        let qs = list_column(&df, traces::Q.name, &tp)?;
        let lambdas = list_column(&df, traces::LAMBDA.name, &tp)?;
        let phis = list_column(&df, traces::PHI.name, &tp)?;
        for (i, r) in samples.into_iter().enumerate() {
            let tr: &mut Trace = traces.entry(r.cell).or_default();
            tr.t.push(r.t.unwrap_or(f64::NAN));
            tr.pos.push(r.pos_residual);
            tr.vel.push(r.vel_residual);
            tr.acc.push(r.acc_residual);
            tr.energy.push(r.energy_rel_error);
            tr.err[0].push(r.err_q);
            tr.err[1].push(r.err_v);
            tr.err[2].push(r.err_lambda);
            for (list, into) in [
                (&qs, &mut tr.q),
                (&lambdas, &mut tr.lambda),
                (&phis, &mut tr.phi),
            ] {
                if let Some(x) = list {
                    into.push(x[i].clone());
                }
            }
        }
    }
    Ok(traces)
}

/// The rows of the CSV table `file` of an experiment folder through the schema's
/// `columns` (empty when the folder has no such file).
fn csv_rows<R: Default>(
    dir: &Path, file: &str, columns: &[(driftlab_results::schema::ColumnDef, table::Access<R>)],
) -> Result<Vec<R>, ReportError> {
    let path = dir.join(file);
    if !crate::folders::belongs(dir, file) {
        return Ok(Vec::new());
    }
    let df = CsvReadOptions::default()
        .with_has_header(true)
        .try_into_reader_with_file_path(Some(path.clone()))
        .map_err(|e| derr(&path, e))?
        .finish()
        .map_err(|e| derr(&path, e))?;
    table::rows(&df, columns).map_err(|e| derr(&path, e))
}

/// The fitted orders of an experiment folder (empty without `orders.csv`), read through
/// [`orders`].
fn load_orders(dir: &Path) -> Result<Vec<Order>, ReportError> {
    let rows = csv_rows(dir, "orders.csv", orders::COLUMNS)?;
    Ok(rows
        .into_iter()
        .map(|r| Order {
            problem: r.problem,
            problem_params: r.problem_params,
            method: r.method,
            variant: r.variant,
            quantity: r.quantity,
            observed: r.observed_order,
            expected: r.expected_order,
            h_min: r.h_min,
            h_max: r.h_max,
            points: r.points,
            r2: r.r2,
            note: r.note,
        })
        .collect())
}

/// The spec's array of tables `key` (`[[claims]]`, `[[order_notes]]`) read back from the
/// manifest's spec text; empty when absent or unreadable.
fn spec_tables<T: serde::de::DeserializeOwned>(spec: &toml::Table, key: &str) -> Vec<T> {
    spec.get(key)
        .and_then(|c| c.clone().try_into::<Vec<T>>().ok())
        .unwrap_or_default()
}

impl Results {
    /// Load an experiment folder.
    pub fn load(dir: &Path) -> Result<Self, ReportError> {
        let runs = load_runs(dir)?;
        let traces = load_traces(dir)?;
        let orders = load_orders(dir)?;
        let optima = csv_rows(dir, "optima.csv", optima::COLUMNS)?;
        let spec_text = std::fs::read_to_string(dir.join("manifest.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .and_then(|v| {
                v.get("spec_text")
                    .and_then(|t| t.as_str())
                    .map(String::from)
            })
            .unwrap_or_default();
        let annotations = annotations_of(&spec_text);
        let spec: toml::Table = spec_text.parse().unwrap_or_default();
        let description = spec
            .get("description")
            .and_then(|d| d.as_str())
            .unwrap_or_default()
            .to_string();
        // A malformed [report] table cannot come from the runner (it validated the spec);
        // a hand-edited manifest loses its report role rather than the experiment.
        let report = spec.get("report").and_then(|r| {
            r.clone()
                .try_into::<driftlab_results::report_spec::ReportSpec>()
                .ok()
        });
        // As with [report]: the runner validated the claims and order notes; a hand-edited
        // manifest loses them rather than the experiment.
        let claims = spec_tables(&spec, "claims");
        let order_notes = spec_tables(&spec, "order_notes");
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        Ok(Self {
            name,
            dir: dir.to_path_buf(),
            runs,
            traces,
            orders,
            description,
            annotations,
            report,
            claims,
            order_notes,
            optima,
        })
    }

    /// Distinct problem keys, in order of appearance.
    pub fn problem_keys(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for r in &self.runs {
            let k = r.problem_key();
            if !v.contains(&k) {
                v.push(k);
            }
        }
        v
    }

    /// The runs of problem key `key` at step `h`, grouped by method (methods in
    /// alphabetical order, runs in stored order): the cells a sweep or map figure compares.
    pub(crate) fn runs_by_method(&self, key: &str, h: f64) -> Vec<(&str, Vec<&Run>)> {
        let runs: Vec<&Run> = self
            .runs
            .iter()
            .filter(|r| r.problem_key() == key && (r.h - h).abs() <= 1e-12 * h)
            .collect();
        let mut methods: Vec<&str> = runs.iter().map(|r| r.method.as_str()).collect();
        methods.sort_unstable();
        methods.dedup();
        methods
            .into_iter()
            .map(|m| (m, runs.iter().copied().filter(|r| r.method == m).collect()))
            .collect()
    }

    /// Distinct step sizes of a problem key, ascending.
    pub fn hs(&self, key: &str) -> Vec<f64> {
        let mut hs: Vec<f64> = self
            .runs
            .iter()
            .filter(|r| r.problem_key() == key)
            .map(|r| r.h)
            .collect();
        hs.sort_by(f64::total_cmp);
        hs.dedup_by(|a, b| (*a - *b).abs() <= 1e-12 * b.abs());
        hs
    }
}
