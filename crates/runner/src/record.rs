//! Rows and their tables: one [`RunRecord`] per cell (`runs.parquet`, `runs.csv`) and
//! sampled traces (`traces.parquet`), built with polars.

use crate::error::RunnerError;
use driftlab_core::schema::{runs, traces, ColumnDef, Kind};
use driftlab_core::FailKind;
use ndarray::Array2;
use polars::prelude::*;
use std::path::Path;

/// One row of `runs`.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct RunRecord {
    /// Spec name (the columns are defined in [`driftlab_core::schema::runs`]).
    pub experiment: String,
    /// Cell index within the experiment.
    pub cell: usize,
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
    /// End time.
    pub t_end: f64,
    /// Faer threads inside the cell.
    pub threads: usize,
    /// Cells run side by side in this row's batch.
    pub sweep_threads: usize,
    /// Wall time of this row's batch.
    pub batch_seconds: f64,
    /// `status = ok`: the run reached its end time.
    pub ok: bool,
    /// Last time reached before the failure (null if ok).
    pub fail_time: Option<f64>,
    /// Stable tag of the failure ([`driftlab_core::RunError::kind`], `build` or `panic`).
    pub fail_kind: Option<FailKind>,
    /// The typed error's message with its numbers (null if ok).
    pub fail_reason: Option<String>,
    /// Steps completed (accepted steps of an error-controlled cell).
    pub steps: usize,
    /// Tolerances of an error-controlled cell.
    pub tolerances: Option<driftlab_core::Tolerances>,
    /// Counters of an error-controlled cell.
    pub adaptive: Option<driftlab_core::AdaptiveStats>,
    /// Summary metrics (NaN = undefined → null).
    pub summary: driftlab_core::SummaryMetrics,
    /// What the violation monitor saw (spec `[monitor]`).
    #[serde(default)]
    pub warnings: driftlab_core::ViolationWarnings,
    /// Method counters.
    pub stats: driftlab_core::MethodStats,
    /// The accepted steps' reports, condensed.
    pub reports: driftlab_core::StepReportSummary,
    /// The method's own named counters.
    pub counters: Vec<(String, usize)>,
    /// Total wall time of the cell (init + steps + metrics); the median over `repeat` runs.
    pub wall_seconds: f64,
    /// Wall time inside the method's steps; the median over `repeat` runs.
    pub step_seconds: f64,
    /// Wall time evaluating metrics and feeding observers.
    pub observe_seconds: f64,
    /// Steps between metric evaluations.
    pub metrics_stride: usize,
    /// Measured peak heap bytes of the cell's first run (`None` without the counting
    /// allocator, [`crate::memory`]).
    pub peak_heap_bytes: Option<u64>,
    /// Runs behind the times.
    pub repeat: usize,
    /// Smallest step time over the runs.
    pub step_seconds_min: f64,
    /// Largest step time over the runs.
    pub step_seconds_max: f64,
    /// Declared orders (q, v, λ).
    pub declared: driftlab_core::DeclaredOrders,
    /// The distribution over members when the row summarizes an ensemble.
    pub ensemble: Option<crate::ensemble::EnsembleSummary>,
    /// The reference judged ([`crate::reference`]): the `reference` column.
    #[serde(default)]
    pub reference: Option<String>,
    /// The reference's declared accuracy (`reference_accuracy`).
    #[serde(default)]
    pub reference_accuracy: Option<f64>,
}

/// Sampled trace of one cell: columns `t, pos, vel, acc, energy, err_q, err_v,
/// err_lambda` of an `(samples × 8)` array, plus optional states.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CellTrace {
    /// Cell index.
    pub cell: usize,
    /// Samples × 8.
    pub samples: Array2<f64>,
    /// `q` at each sample (when `trace_states`).
    pub q: Option<Vec<Vec<f64>>>,
    /// `v` at each sample (when `trace_states`).
    pub v: Option<Vec<Vec<f64>>>,
    /// `λ` at each sample (when `trace_states`).
    #[serde(default)]
    pub lambda: Option<Vec<Vec<f64>>>,
}

fn opt(x: f64) -> Option<f64> {
    if x.is_nan() {
        None
    } else {
        Some(x)
    }
}

fn col_f64(name: &str, v: Vec<Option<f64>>) -> Column {
    Column::new(name.into(), v)
}

/// A value of one runs cell, of the column's [`Kind`].
enum Value {
    Text(String),
    OptText(Option<String>),
    Count(usize),
    Real(f64),
    /// NaN = undefined → null.
    OptReal(f64),
}

/// Computes one column's value from a record.
type Writer = fn(&RunRecord) -> Value;

/// How each column of [`runs::ALL`] is computed from a record, in table order (a test
/// checks the order and the types against the schema).
const WRITERS: &[(ColumnDef, Writer)] = &[
    (runs::EXPERIMENT, |r| Value::Text(r.experiment.clone())),
    (runs::CELL, |r| Value::Count(r.cell)),
    (runs::PROBLEM, |r| Value::Text(r.problem.clone())),
    (runs::PROBLEM_PARAMS, |r| {
        Value::Text(r.problem_params.clone())
    }),
    (runs::METHOD, |r| Value::Text(r.method.clone())),
    (runs::VARIANT, |r| Value::Text(r.variant.clone())),
    (runs::PARAMS, |r| Value::Text(r.params.clone())),
    (runs::H, |r| Value::Real(r.h)),
    (runs::T_END, |r| Value::Real(r.t_end)),
    (runs::THREADS, |r| Value::Count(r.threads)),
    (runs::SWEEP_THREADS, |r| Value::Count(r.sweep_threads)),
    (runs::RTOL, |r| {
        Value::OptReal(r.tolerances.map_or(f64::NAN, |t| t.rtol))
    }),
    (runs::ATOL, |r| {
        Value::OptReal(r.tolerances.map_or(f64::NAN, |t| t.atol))
    }),
    (runs::STATUS, |r| {
        Value::Text(if r.ok { "ok" } else { "failed" }.into())
    }),
    (runs::FAIL_TIME, |r| {
        Value::OptReal(r.fail_time.unwrap_or(f64::NAN))
    }),
    (runs::FAIL_KIND, |r| {
        Value::OptText(r.fail_kind.map(|k| k.tag().to_string()))
    }),
    (runs::FAIL_REASON, |r| Value::OptText(r.fail_reason.clone())),
    (runs::STEPS, |r| Value::Count(r.steps)),
    (runs::REJECTED_STEPS, |r| {
        Value::Count(r.adaptive.map_or(0, |a| a.rejected))
    }),
    (runs::NEWTON_FAILURES, |r| {
        Value::Count(r.adaptive.map_or(0, |a| a.newton_failures))
    }),
    (runs::H_MIN_USED, |r| {
        Value::OptReal(r.adaptive.map_or(r.h, |a| a.h_min_used))
    }),
    (runs::H_MAX_USED, |r| {
        Value::OptReal(r.adaptive.map_or(r.h, |a| a.h_max_used))
    }),
    (runs::MAX_POS_RESIDUAL, |r| {
        Value::OptReal(r.summary.max_pos_residual)
    }),
    (runs::MAX_VEL_RESIDUAL, |r| {
        Value::OptReal(r.summary.max_vel_residual)
    }),
    (runs::MAX_ACC_RESIDUAL, |r| {
        Value::OptReal(r.summary.max_acc_residual)
    }),
    (runs::FINAL_POS_RESIDUAL, |r| {
        Value::OptReal(r.summary.final_pos_residual)
    }),
    (runs::FINAL_VEL_RESIDUAL, |r| {
        Value::OptReal(r.summary.final_vel_residual)
    }),
    (runs::MAX_ENERGY_REL_ERROR, |r| {
        Value::OptReal(r.summary.max_energy_rel_error)
    }),
    (runs::FINAL_ENERGY_REL_ERROR, |r| {
        Value::OptReal(r.summary.final_energy_rel_error)
    }),
    (runs::MAX_MOMENTUM_ERROR, |r| {
        Value::OptReal(r.summary.max_momentum_error)
    }),
    (runs::FINAL_MOMENTUM_ERROR, |r| {
        Value::OptReal(r.summary.final_momentum_error)
    }),
    (runs::ERR_Q, |r| Value::OptReal(r.summary.err_q)),
    (runs::ERR_V, |r| Value::OptReal(r.summary.err_v)),
    (runs::ERR_LAMBDA, |r| Value::OptReal(r.summary.err_lambda)),
    (runs::FINAL_ERR_Q, |r| Value::OptReal(r.summary.final_err_q)),
    (runs::FINAL_ERR_V, |r| Value::OptReal(r.summary.final_err_v)),
    (runs::FINAL_ERR_LAMBDA, |r| {
        Value::OptReal(r.summary.final_err_lambda)
    }),
    (runs::MAX_DEFERRED_RESIDUAL, |r| {
        Value::OptReal(r.summary.max_deferred_residual)
    }),
    (runs::FINAL_DEFERRED_RESIDUAL, |r| {
        Value::OptReal(r.summary.final_deferred_residual)
    }),
    (runs::SCD, |r| Value::OptReal(r.summary.scd)),
    (runs::REFERENCE, |r| Value::OptText(r.reference.clone())),
    (runs::REFERENCE_ACCURACY, |r| {
        Value::OptReal(r.reference_accuracy.unwrap_or(f64::NAN))
    }),
    (runs::REF_POS_RESIDUAL, |r| {
        Value::OptReal(r.summary.reference.pos)
    }),
    (runs::REF_VEL_RESIDUAL, |r| {
        Value::OptReal(r.summary.reference.vel)
    }),
    (runs::REF_ENERGY_REL_ERROR, |r| {
        Value::OptReal(r.summary.reference.energy)
    }),
    (runs::WARN_TIME, |r| {
        Value::OptReal(r.warnings.first_time.unwrap_or(f64::NAN))
    }),
    (runs::WARN_STATES, |r| Value::Count(r.warnings.states)),
    (runs::WARN_RATIO, |r| {
        Value::OptReal(r.warnings.worst_ratio.unwrap_or(f64::NAN))
    }),
    (runs::WARN_ROW, |r| {
        Value::OptReal(r.warnings.worst_row.map_or(f64::NAN, |i| i as f64))
    }),
    (runs::NEWTON_ITERATIONS, |r| {
        Value::Count(r.stats.newton_iterations)
    }),
    (runs::PROJECTION_ITERATIONS, |r| {
        Value::Count(r.stats.projection_iterations)
    }),
    (runs::FACTORIZATIONS, |r| {
        Value::Count(r.stats.factorizations)
    }),
    (runs::SUPERNODAL_FACTORIZATIONS, |r| {
        Value::Count(r.stats.supernodal_factorizations)
    }),
    (runs::JACOBIAN_EVALUATIONS, |r| {
        Value::Count(r.stats.jacobian_evaluations)
    }),
    (runs::ROLLBACKS, |r| Value::Count(r.stats.rollbacks)),
    (runs::RESETS, |r| Value::Count(r.stats.resets)),
    (runs::RELAXATIONS, |r| Value::Count(r.stats.relaxations)),
    (runs::SYMBOLIC_ANALYSES, |r| {
        Value::Count(r.stats.symbolic_analyses)
    }),
    (runs::SOLVES, |r| Value::Count(r.stats.solves)),
    (runs::REFINEMENT_STEPS, |r| {
        Value::Count(r.stats.refinement_steps)
    }),
    (runs::NEWTON_MAX_PER_STEP, |r| {
        Value::Count(r.reports.newton_iterations_max)
    }),
    (runs::ERROR_ESTIMATE_MAX, |r| {
        Value::OptReal(r.reports.error_max.unwrap_or(f64::NAN))
    }),
    (runs::COUNTERS, |r| Value::Text(counters_json(&r.counters))),
    (runs::ENSEMBLE, |r| {
        Value::OptText(r.ensemble.as_ref().map(|e| e.settings.clone()))
    }),
    (runs::MEMBERS, |r| {
        Value::Count(r.ensemble.as_ref().map_or(0, |e| e.members))
    }),
    (runs::MEMBER_FAILURES, |r| {
        Value::Count(r.ensemble.as_ref().map_or(0, |e| e.failures))
    }),
    (runs::DRIFT_MEDIAN, |r| ensemble_stat(r, |e| e.drift_median)),
    (runs::DRIFT_P95, |r| ensemble_stat(r, |e| e.drift_p95)),
    (runs::ENERGY_MEDIAN, |r| {
        ensemble_stat(r, |e| e.energy_median)
    }),
    (runs::ENERGY_P95, |r| ensemble_stat(r, |e| e.energy_p95)),
    (runs::ROLLOUT_STEPS_PER_SECOND, |r| {
        ensemble_stat(r, |e| e.rollout_steps_per_second)
    }),
    (runs::WALL_SECONDS, |r| Value::Real(r.wall_seconds)),
    (runs::STEP_SECONDS, |r| Value::Real(r.step_seconds)),
    (runs::OBSERVE_SECONDS, |r| Value::Real(r.observe_seconds)),
    (runs::BATCH_SECONDS, |r| Value::Real(r.batch_seconds)),
    (runs::METRICS_STRIDE, |r| Value::Count(r.metrics_stride)),
    (runs::REPEAT, |r| Value::Count(r.repeat)),
    (runs::STEP_SECONDS_MIN, |r| {
        Value::OptReal(r.step_seconds_min)
    }),
    (runs::STEP_SECONDS_MAX, |r| {
        Value::OptReal(r.step_seconds_max)
    }),
    (runs::PEAK_HEAP_BYTES, |r| {
        Value::OptReal(r.peak_heap_bytes.map_or(f64::NAN, |b| b as f64))
    }),
    (runs::DECLARED_ORDER_Q, |r| {
        Value::OptReal(r.declared.q.unwrap_or(f64::NAN))
    }),
    (runs::DECLARED_ORDER_V, |r| {
        Value::OptReal(r.declared.v.unwrap_or(f64::NAN))
    }),
    (runs::DECLARED_ORDER_LAMBDA, |r| {
        Value::OptReal(r.declared.lambda.unwrap_or(f64::NAN))
    }),
];

/// A statistic of an ensemble row (null for a single run).
fn ensemble_stat(r: &RunRecord, get: fn(&crate::ensemble::EnsembleSummary) -> f64) -> Value {
    Value::OptReal(r.ensemble.as_ref().map_or(f64::NAN, get))
}

/// The `counters` column: a JSON object of the method's named counters.
fn counters_json(counters: &[(String, usize)]) -> String {
    let map: serde_json::Map<String, serde_json::Value> = counters
        .iter()
        .map(|(k, v)| (k.clone(), (*v).into()))
        .collect();
    serde_json::Value::Object(map).to_string()
}

/// One column of the runs table from its writer, typed by the schema.
fn runs_column(def: ColumnDef, get: Writer, rows: &[RunRecord]) -> Column {
    let name = def.name.into();
    let values = rows.iter().map(get);
    match def.kind {
        Kind::Text => Column::new(
            name,
            values
                .map(|v| match v {
                    Value::Text(s) => s,
                    _ => String::new(),
                })
                .collect::<Vec<String>>(),
        ),
        Kind::OptText => Column::new(
            name,
            values
                .map(|v| match v {
                    Value::OptText(s) => s,
                    _ => None,
                })
                .collect::<Vec<Option<String>>>(),
        ),
        Kind::Count => Column::new(
            name,
            values
                .map(|v| match v {
                    Value::Count(n) => n as u64,
                    _ => 0,
                })
                .collect::<Vec<u64>>(),
        ),
        Kind::Real => Column::new(
            name,
            values
                .map(|v| match v {
                    Value::Real(x) => x,
                    _ => f64::NAN,
                })
                .collect::<Vec<f64>>(),
        ),
        Kind::OptReal | Kind::RealList => Column::new(
            name,
            values
                .map(|v| match v {
                    Value::OptReal(x) => opt(x),
                    _ => None,
                })
                .collect::<Vec<Option<f64>>>(),
        ),
    }
}

/// The `runs` table, column by column from `WRITERS` (the schema paired with each
/// column's computation).
pub fn runs_frame(rows: &[RunRecord]) -> Result<DataFrame, RunnerError> {
    let cols = WRITERS
        .iter()
        .map(|&(def, get)| runs_column(def, get, rows))
        .collect();
    DataFrame::new_infer_height(cols).map_err(|e| RunnerError::Write {
        path: "runs".into(),
        message: e.to_string(),
    })
}

/// The `traces` table (long format: one row per sample per cell).
pub fn traces_frame(rows: &[RunRecord], traces: &[CellTrace]) -> Result<DataFrame, RunnerError> {
    let mut cell = Vec::new();
    let mut problem = Vec::new();
    let mut method = Vec::new();
    let mut variant = Vec::new();
    let mut h = Vec::new();
    let mut data: Vec<Vec<Option<f64>>> = vec![Vec::new(); 8];
    let with_states = traces.iter().any(|t| t.q.is_some());
    let mut qs: Vec<Series> = Vec::new();
    let mut vs: Vec<Series> = Vec::new();
    let mut lambdas: Vec<Series> = Vec::new();
    let at = |list: &Option<Vec<Vec<f64>>>, k: usize| {
        list.as_ref()
            .and_then(|x| x.get(k))
            .cloned()
            .unwrap_or_default()
    };
    for tr in traces {
        let Some(r) = rows.iter().find(|r| r.cell == tr.cell) else {
            continue;
        };
        for (k, row) in tr.samples.rows().into_iter().enumerate() {
            cell.push(tr.cell as u64);
            problem.push(r.problem.clone());
            method.push(r.method.clone());
            variant.push(r.variant.clone());
            h.push(r.h);
            for (j, x) in row.iter().enumerate() {
                data[j].push(opt(*x));
            }
            if with_states {
                qs.push(Series::new("".into(), at(&tr.q, k)));
                vs.push(Series::new("".into(), at(&tr.v, k)));
                lambdas.push(Series::new("".into(), at(&tr.lambda, k)));
            }
        }
    }
    let mut cols = vec![
        Column::new(traces::CELL.name.into(), cell),
        Column::new(traces::PROBLEM.name.into(), problem),
        Column::new(traces::METHOD.name.into(), method),
        Column::new(traces::VARIANT.name.into(), variant),
        Column::new(traces::H.name.into(), h),
    ];
    for (j, def) in traces::SAMPLED.iter().enumerate() {
        cols.push(col_f64(def.name, std::mem::take(&mut data[j])));
    }
    if with_states {
        cols.push(Series::new(traces::Q.name.into(), qs).into());
        cols.push(Series::new(traces::V.name.into(), vs).into());
        cols.push(Series::new(traces::LAMBDA.name.into(), lambdas).into());
    }
    DataFrame::new_infer_height(cols).map_err(|e| RunnerError::Write {
        path: "traces".into(),
        message: e.to_string(),
    })
}

/// Write a frame as Parquet, atomically.
pub fn write_parquet(df: &mut DataFrame, path: &Path) -> Result<(), RunnerError> {
    crate::journal::write_atomically(path, |f| {
        ParquetWriter::new(f)
            .finish(df)
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
}

/// Write a frame as CSV (header, full float precision), atomically.
pub fn write_csv(df: &mut DataFrame, path: &Path) -> Result<(), RunnerError> {
    crate::journal::write_atomically(path, |f| {
        CsvWriter::new(f)
            .include_header(true)
            .finish(df)
            .map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every runs column of the schema is written, in the schema's order, with a value of
    /// the column's type.
    #[test]
    fn writers_follow_the_schema() {
        let names: Vec<&str> = WRITERS.iter().map(|(d, _)| d.name).collect();
        let want: Vec<&str> = runs::ALL.iter().map(|d| d.name).collect();
        assert_eq!(names, want);
        let r = RunRecord::default();
        for (def, get) in WRITERS {
            let ok = matches!(
                (def.kind, get(&r)),
                (Kind::Text, Value::Text(_))
                    | (Kind::OptText, Value::OptText(_))
                    | (Kind::Count, Value::Count(_))
                    | (Kind::Real, Value::Real(_))
                    | (Kind::OptReal, Value::OptReal(_))
            );
            assert!(ok, "column {} writes a value of another type", def.name);
        }
    }
}
