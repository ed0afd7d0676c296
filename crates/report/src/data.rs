//! Stored results, read back from `runs.parquet`, `traces.parquet` and `orders.csv`.

use crate::error::ReportError;
use driftlab_results::schema::{optima, orders, runs, traces};
use driftlab_results::table;
use polars::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One row of `runs`: the schema's row type itself, written and read by the same code
/// (`driftlab_results::table`); what the report takes from it beyond its columns is in
/// `driftlab_results::runs_row`.
pub type Run = runs::Row;

pub use driftlab_results::runs_row::EnsembleStats;

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

/// One line of `orders.csv`: the schema's row type itself, as the runner wrote it.
pub type Order = orders::Row;

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
    Ok(rows)
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
    csv_rows(dir, "orders.csv", orders::COLUMNS)
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
