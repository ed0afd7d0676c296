//! Rows and their tables: one [`RunRecord`] per cell (`runs.parquet`, `runs.csv`) and
//! sampled traces (`traces.parquet`), built with polars.

use crate::error::RunnerError;
use driftlab_results::schema::{runs, traces};
use driftlab_results::table;
use driftlab_results::FailKind;
use ndarray::Array2;
use polars::prelude::*;
use std::path::Path;

/// One row of `runs`.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct RunRecord {
    /// Spec name (the columns are defined in [`driftlab_results::schema::runs`]).
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
    /// Runs with the cell alone behind the times (0: the sweep's times;
    /// the timing pass, `exec/timing.rs`).
    #[serde(default)]
    pub timed_alone: usize,
    /// Declared orders (q, v, λ).
    pub declared: driftlab_core::DeclaredOrders,
    /// The distribution over members when the row summarizes an ensemble.
    pub ensemble: Option<crate::store::members::EnsembleSummary>,
    /// The reference judged (`analysis/reference.rs`): the `reference` column.
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
    /// The rows of `Φ` at each sample (when `trace_states`).
    #[serde(default)]
    pub phi: Option<Vec<Vec<f64>>>,
}

fn opt(x: f64) -> Option<f64> {
    if x.is_nan() {
        None
    } else {
        Some(x)
    }
}

/// The `runs` row of a record: the schema's row type ([`runs::Row`]), which the report
/// reads back through the same accessors. Every column is named here, with no default to
/// fall back on: a column added to the schema does not compile until its value is given.
/// (A data table: one line per column, longer than a function should be.)
#[allow(clippy::too_many_lines)]
pub fn runs_row(r: &RunRecord) -> runs::Row {
    runs::Row {
        experiment: r.experiment.clone(),
        cell: r.cell as u64,
        problem: r.problem.clone(),
        problem_params: r.problem_params.clone(),
        method: r.method.clone(),
        variant: r.variant.clone(),
        params: r.params.clone(),
        h: r.h,
        t_end: r.t_end,
        threads: r.threads as u64,
        sweep_threads: r.sweep_threads as u64,
        rtol: opt(r.tolerances.map_or(f64::NAN, |t| t.rtol)),
        atol: opt(r.tolerances.map_or(f64::NAN, |t| t.atol)),
        status: if r.ok { "ok" } else { "failed" }.into(),
        fail_time: opt(r.fail_time.unwrap_or(f64::NAN)),
        fail_kind: r.fail_kind.map(|k| k.tag().to_string()),
        fail_reason: r.fail_reason.clone(),
        steps: r.steps as u64,
        rejected_steps: r.adaptive.map_or(0, |a| a.rejected) as u64,
        newton_failures: r.adaptive.map_or(0, |a| a.newton_failures) as u64,
        h_min_used: opt(r.adaptive.map_or(r.h, |a| a.h_min_used)),
        h_max_used: opt(r.adaptive.map_or(r.h, |a| a.h_max_used)),
        max_pos_residual: opt(r.summary.max_pos_residual),
        max_vel_residual: opt(r.summary.max_vel_residual),
        max_acc_residual: opt(r.summary.max_acc_residual),
        final_pos_residual: opt(r.summary.final_pos_residual),
        settle_time: opt(r.summary.settle_time),
        residual_peaks: opt(r.summary.residual_peaks),
        final_vel_residual: opt(r.summary.final_vel_residual),
        max_energy_rel_error: opt(r.summary.max_energy_rel_error),
        final_energy_rel_error: opt(r.summary.final_energy_rel_error),
        max_momentum_error: opt(r.summary.max_momentum_error),
        final_momentum_error: opt(r.summary.final_momentum_error),
        err_q: opt(r.summary.err_q),
        err_v: opt(r.summary.err_v),
        err_lambda: opt(r.summary.err_lambda),
        final_err_q: opt(r.summary.final_err_q),
        final_err_v: opt(r.summary.final_err_v),
        final_err_lambda: opt(r.summary.final_err_lambda),
        max_deferred_residual: opt(r.summary.max_deferred_residual),
        final_deferred_residual: opt(r.summary.final_deferred_residual),
        max_penetration: opt(r.summary.max_penetration),
        max_approach_velocity: opt(r.summary.max_approach_velocity),
        scd: opt(r.summary.scd),
        reference: r.reference.clone(),
        reference_accuracy: opt(r.reference_accuracy.unwrap_or(f64::NAN)),
        ref_pos_residual: opt(r.summary.reference.pos),
        ref_vel_residual: opt(r.summary.reference.vel),
        ref_energy_rel_error: opt(r.summary.reference.energy),
        warn_time: opt(r.warnings.first_time.unwrap_or(f64::NAN)),
        warn_states: r.warnings.states as u64,
        warn_ratio: opt(r.warnings.worst_ratio.unwrap_or(f64::NAN)),
        warn_row: opt(r.warnings.worst_row.map_or(f64::NAN, |i| i as f64)),
        newton_iterations: r.stats.newton_iterations as u64,
        projection_iterations: r.stats.projection_iterations as u64,
        factorizations: r.stats.factorizations as u64,
        supernodal_factorizations: r.stats.supernodal_factorizations as u64,
        jacobian_evaluations: r.stats.jacobian_evaluations as u64,
        rollbacks: r.stats.rollbacks as u64,
        resets: r.stats.resets as u64,
        relaxations: r.stats.relaxations as u64,
        symbolic_analyses: r.stats.symbolic_analyses as u64,
        solves: r.stats.solves as u64,
        refinement_steps: r.stats.refinement_steps as u64,
        newton_max_per_step: r.reports.newton_iterations_max as u64,
        error_estimate_max: opt(r.reports.error_max.unwrap_or(f64::NAN)),
        counters: counters_json(&r.counters),
        declared_order_q: opt(r.declared.q.unwrap_or(f64::NAN)),
        declared_order_v: opt(r.declared.v.unwrap_or(f64::NAN)),
        declared_order_lambda: opt(r.declared.lambda.unwrap_or(f64::NAN)),
        ensemble: r.ensemble.as_ref().map(|e| e.settings.clone()),
        members: r.ensemble.as_ref().map_or(0, |e| e.members) as u64,
        member_failures: r.ensemble.as_ref().map_or(0, |e| e.failures) as u64,
        drift_median: ensemble_stat(r, |e| e.drift_median),
        drift_p95: ensemble_stat(r, |e| e.drift_p95),
        energy_median: ensemble_stat(r, |e| e.energy_median),
        energy_p95: ensemble_stat(r, |e| e.energy_p95),
        rollout_steps_per_second: ensemble_stat(r, |e| e.rollout_steps_per_second),
        wall_seconds: r.wall_seconds,
        step_seconds: r.step_seconds,
        observe_seconds: r.observe_seconds,
        batch_seconds: r.batch_seconds,
        metrics_stride: r.metrics_stride as u64,
        repeat: r.repeat as u64,
        step_seconds_min: opt(r.step_seconds_min),
        step_seconds_max: opt(r.step_seconds_max),
        timed_alone: r.timed_alone as u64,
        peak_heap_bytes: opt(r.peak_heap_bytes.map_or(f64::NAN, |b| b as f64)),
    }
}

/// A statistic of an ensemble row (null for a single run).
fn ensemble_stat(
    r: &RunRecord, get: fn(&crate::store::members::EnsembleSummary) -> f64,
) -> Option<f64> {
    opt(r.ensemble.as_ref().map_or(f64::NAN, get))
}

/// The `counters` column: a JSON object of the method's named counters.
fn counters_json(counters: &[(String, usize)]) -> String {
    let map: serde_json::Map<String, serde_json::Value> = counters
        .iter()
        .map(|(k, v)| (k.clone(), (*v).into()))
        .collect();
    serde_json::Value::Object(map).to_string()
}

/// The `runs` table: the records' rows ([`runs_row`]) column by column through the
/// schema's accessors ([`runs::COLUMNS`]), the code the report reads them back with.
pub fn runs_frame(rows: &[RunRecord]) -> Result<DataFrame, RunnerError> {
    let rows: Vec<runs::Row> = rows.iter().map(runs_row).collect();
    table::frame(&rows, runs::COLUMNS).map_err(|e| RunnerError::Write {
        path: "runs".into(),
        message: e.to_string(),
    })
}

/// The `traces` rows of one sample `row` (in [`traces::SAMPLED`] order) of a cell whose
/// runs record is `r`.
fn trace_row(r: &RunRecord, cell: usize, row: &[f64]) -> traces::Row {
    let at = |j: usize| row.get(j).copied().and_then(opt);
    traces::Row {
        cell: cell as u64,
        problem: r.problem.clone(),
        method: r.method.clone(),
        variant: r.variant.clone(),
        h: r.h,
        t: at(0),
        pos_residual: at(1),
        vel_residual: at(2),
        acc_residual: at(3),
        energy_rel_error: at(4),
        err_q: at(5),
        err_v: at(6),
        err_lambda: at(7),
    }
}

/// The `q`, `v`, `λ` list columns of the traces (with `trace_states`), one list per
/// sample in the order of the rows.
#[derive(Default)]
struct StateLists {
    q: Vec<Series>,
    v: Vec<Series>,
    lambda: Vec<Series>,
    phi: Vec<Series>,
}

impl StateLists {
    fn push(&mut self, tr: &CellTrace, k: usize) {
        let at = |list: &Option<Vec<Vec<f64>>>| {
            list.as_ref()
                .and_then(|x| x.get(k))
                .cloned()
                .unwrap_or_default()
        };
        self.q.push(Series::new("".into(), at(&tr.q)));
        self.v.push(Series::new("".into(), at(&tr.v)));
        self.lambda.push(Series::new("".into(), at(&tr.lambda)));
        self.phi.push(Series::new("".into(), at(&tr.phi)));
    }

    fn columns(self) -> [Column; 4] {
        [
            Series::new(traces::Q.name.into(), self.q).into(),
            Series::new(traces::V.name.into(), self.v).into(),
            Series::new(traces::LAMBDA.name.into(), self.lambda).into(),
            Series::new(traces::PHI.name.into(), self.phi).into(),
        ]
    }
}

/// The `traces` table (long format: one row per sample per cell): the schema's rows
/// through its accessors, and the state lists when a trace keeps states.
pub fn traces_frame(rows: &[RunRecord], traces: &[CellTrace]) -> Result<DataFrame, RunnerError> {
    let with_states = traces.iter().any(|t| t.q.is_some());
    let (mut samples, mut states) = (Vec::new(), StateLists::default());
    for tr in traces {
        let Some(r) = rows.iter().find(|r| r.cell == tr.cell) else {
            continue;
        };
        for (k, row) in tr.samples.rows().into_iter().enumerate() {
            samples.push(trace_row(r, tr.cell, &row.to_vec()));
            if with_states {
                states.push(tr, k);
            }
        }
    }
    let failed = |e: String| RunnerError::Write {
        path: "traces".into(),
        message: e,
    };
    let mut df = table::frame(&samples, traces::COLUMNS).map_err(|e| failed(e.to_string()))?;
    if with_states {
        for c in states.columns() {
            df.with_column(c).map_err(|e| failed(e.to_string()))?;
        }
    }
    Ok(df)
}

/// Write a frame as Parquet, atomically.
pub fn write_parquet(df: &mut DataFrame, path: &Path) -> Result<(), RunnerError> {
    crate::store::atomic::write_atomically(path, |f| {
        ParquetWriter::new(f)
            .finish(df)
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
}

/// Write a frame as CSV (header, full float precision), atomically.
pub fn write_csv(df: &mut DataFrame, path: &Path) -> Result<(), RunnerError> {
    crate::store::atomic::write_atomically(path, |f| {
        CsvWriter::new(f)
            .include_header(true)
            .finish(df)
            .map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record's row carries its values into the columns of the schema's types: the
    /// frame of one default record has every runs column, in the schema's order.
    #[test]
    fn the_runs_frame_has_every_schema_column_in_order() {
        let df = runs_frame(&[RunRecord::default()]).expect("frame");
        let names: Vec<&str> = df.get_column_names().iter().map(|n| n.as_str()).collect();
        let want: Vec<&str> = runs::ALL.iter().map(|d| d.name).collect();
        assert_eq!(names, want);
    }
}
