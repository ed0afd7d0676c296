//! Rows and their tables: one [`runs::Row`] per cell (`runs.parquet`, `runs.csv`),
//! written by the runner and read back by the report as the same type, and sampled traces
//! (`traces.parquet`), built with polars. The `write_*` functions put the core's typed
//! results (summary metrics, counters, step control, warnings) into a row's columns.

use crate::error::RunnerError;
use driftlab_core::{
    AdaptiveStats, DeclaredOrders, MethodStats, StepReportSummary, SummaryMetrics, Tolerances,
    ViolationWarnings,
};
use driftlab_results::schema::{runs, traces};
use driftlab_results::table;
use driftlab_results::FailKind;
use ndarray::Array2;
use polars::prelude::*;
use std::path::Path;

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

/// A number as a column value: NaN (undefined) is null.
pub fn nullable(x: f64) -> Option<f64> {
    if x.is_nan() {
        None
    } else {
        Some(x)
    }
}

/// What a row is before anything is measured: the cell it belongs to and what ran there.
#[derive(Clone, Debug)]
pub struct RowIdentity<'a> {
    /// Spec name.
    pub experiment: &'a str,
    /// Cell index within the experiment.
    pub cell: usize,
    /// Problem id.
    pub problem: String,
    /// Problem parameters (JSON).
    pub problem_params: String,
    /// Method id (`+projection` when decorated).
    pub method: String,
    /// Method label with its parameters.
    pub variant: String,
    /// Method and projection parameters (JSON).
    pub params: String,
    /// Step size.
    pub h: f64,
    /// End time.
    pub t_end: f64,
    /// Threads inside the cell.
    pub threads: usize,
    /// Steps between metric evaluations.
    pub metrics_stride: usize,
    /// Tolerances of an error-controlled cell.
    pub tolerances: Option<Tolerances>,
    /// The method's declared orders.
    pub declared: DeclaredOrders,
}

/// The row of `id` before it runs: status `failed`, times 0, metrics null, until an
/// outcome or a failure fills it. Every column is named here, with no default to fall
/// back on: a column added to the schema does not compile until its value before the run
/// is given. (A data table: one line per column, longer than a function should be.)
#[allow(clippy::too_many_lines)]
pub fn unmeasured_row(id: &RowIdentity<'_>) -> runs::Row {
    runs::Row {
        experiment: id.experiment.to_string(),
        cell: id.cell as u64,
        problem: id.problem.clone(),
        problem_params: id.problem_params.clone(),
        method: id.method.clone(),
        variant: id.variant.clone(),
        params: id.params.clone(),
        h: id.h,
        t_end: id.t_end,
        threads: id.threads as u64,
        sweep_threads: 0,
        rtol: id.tolerances.map(|t| t.rtol).and_then(nullable),
        atol: id.tolerances.map(|t| t.atol).and_then(nullable),
        status: "failed".into(),
        fail_time: None,
        fail_kind: None,
        fail_reason: None,
        steps: 0,
        rejected_steps: 0,
        newton_failures: 0,
        h_min_used: nullable(id.h),
        h_max_used: nullable(id.h),
        max_pos_residual: None,
        max_vel_residual: None,
        max_acc_residual: None,
        final_pos_residual: None,
        final_vel_residual: None,
        settle_time: None,
        residual_peaks: None,
        max_energy_rel_error: None,
        final_energy_rel_error: None,
        max_momentum_error: None,
        final_momentum_error: None,
        err_q: None,
        err_v: None,
        err_lambda: None,
        final_err_q: None,
        final_err_v: None,
        final_err_lambda: None,
        max_deferred_residual: None,
        final_deferred_residual: None,
        max_penetration: None,
        max_approach_velocity: None,
        scd: None,
        reference: None,
        reference_accuracy: None,
        ref_pos_residual: None,
        ref_vel_residual: None,
        ref_energy_rel_error: None,
        warn_time: None,
        warn_states: 0,
        warn_ratio: None,
        warn_row: None,
        newton_iterations: 0,
        projection_iterations: 0,
        factorizations: 0,
        supernodal_factorizations: 0,
        jacobian_evaluations: 0,
        rollbacks: 0,
        resets: 0,
        relaxations: 0,
        symbolic_analyses: 0,
        solves: 0,
        refinement_steps: 0,
        newton_max_per_step: 0,
        error_estimate_max: None,
        counters: counters_json(std::iter::empty()),
        ensemble: None,
        members: 0,
        member_failures: 0,
        drift_median: None,
        drift_p95: None,
        energy_median: None,
        energy_p95: None,
        rollout_steps_per_second: None,
        wall_seconds: 0.0,
        step_seconds: 0.0,
        observe_seconds: 0.0,
        batch_seconds: 0.0,
        metrics_stride: id.metrics_stride as u64,
        repeat: 0,
        step_seconds_min: Some(0.0),
        step_seconds_max: Some(0.0),
        timed_alone: 0,
        peak_heap_bytes: None,
        declared_order_q: id.declared.q.and_then(nullable),
        declared_order_v: id.declared.v.and_then(nullable),
        declared_order_lambda: id.declared.lambda.and_then(nullable),
    }
}

/// The summary metrics' columns of `row` (NaN = undefined → null).
pub fn write_summary(row: &mut runs::Row, s: &SummaryMetrics) {
    row.max_pos_residual = nullable(s.max_pos_residual);
    row.max_vel_residual = nullable(s.max_vel_residual);
    row.max_acc_residual = nullable(s.max_acc_residual);
    row.final_pos_residual = nullable(s.final_pos_residual);
    row.settle_time = nullable(s.settle_time);
    row.residual_peaks = nullable(s.residual_peaks);
    row.final_vel_residual = nullable(s.final_vel_residual);
    row.max_energy_rel_error = nullable(s.max_energy_rel_error);
    row.final_energy_rel_error = nullable(s.final_energy_rel_error);
    row.max_momentum_error = nullable(s.max_momentum_error);
    row.final_momentum_error = nullable(s.final_momentum_error);
    row.err_q = nullable(s.err_q);
    row.err_v = nullable(s.err_v);
    row.err_lambda = nullable(s.err_lambda);
    row.final_err_q = nullable(s.final_err_q);
    row.final_err_v = nullable(s.final_err_v);
    row.final_err_lambda = nullable(s.final_err_lambda);
    row.max_deferred_residual = nullable(s.max_deferred_residual);
    row.final_deferred_residual = nullable(s.final_deferred_residual);
    row.max_penetration = nullable(s.max_penetration);
    row.max_approach_velocity = nullable(s.max_approach_velocity);
    row.scd = nullable(s.scd);
    row.ref_pos_residual = nullable(s.reference.pos);
    row.ref_vel_residual = nullable(s.reference.vel);
    row.ref_energy_rel_error = nullable(s.reference.energy);
}

/// The method counters' columns of `row`.
pub fn write_stats(row: &mut runs::Row, s: &MethodStats) {
    row.newton_iterations = s.newton_iterations as u64;
    row.projection_iterations = s.projection_iterations as u64;
    row.factorizations = s.factorizations as u64;
    row.supernodal_factorizations = s.supernodal_factorizations as u64;
    row.jacobian_evaluations = s.jacobian_evaluations as u64;
    row.rollbacks = s.rollbacks as u64;
    row.resets = s.resets as u64;
    row.relaxations = s.relaxations as u64;
    row.symbolic_analyses = s.symbolic_analyses as u64;
    row.solves = s.solves as u64;
    row.refinement_steps = s.refinement_steps as u64;
}

/// The step control's columns of `row`: an error-controlled run's counters and step
/// range, or (`None`) no rejections and the row's own `h` as both ends of the range.
pub fn write_adaptive(row: &mut runs::Row, a: Option<AdaptiveStats>) {
    row.rejected_steps = a.map_or(0, |a| a.rejected) as u64;
    row.newton_failures = a.map_or(0, |a| a.newton_failures) as u64;
    row.h_min_used = nullable(a.map_or(row.h, |a| a.h_min_used));
    row.h_max_used = nullable(a.map_or(row.h, |a| a.h_max_used));
}

/// The violation monitor's columns of `row` (spec `[monitor]`).
pub fn write_warnings(row: &mut runs::Row, w: &ViolationWarnings) {
    row.warn_time = w.first_time.and_then(nullable);
    row.warn_states = w.states as u64;
    row.warn_ratio = w.worst_ratio.and_then(nullable);
    row.warn_row = w.worst_row.map(|i| i as f64);
}

/// The condensed step reports' columns of `row`.
pub fn write_reports(row: &mut runs::Row, r: &StepReportSummary) {
    row.newton_max_per_step = r.newton_iterations_max as u64;
    row.error_estimate_max = r.error_max.and_then(nullable);
}

/// A failure at `t` of kind `kind`, with its message.
pub fn write_failure(row: &mut runs::Row, t: f64, kind: FailKind, reason: String) {
    row.status = "failed".into();
    row.fail_time = nullable(t);
    row.fail_kind = Some(kind.tag().to_string());
    row.fail_reason = Some(reason);
}

/// The `counters` column: a JSON object of the method's named counters.
pub fn counters_json<'a>(counters: impl IntoIterator<Item = (&'a str, usize)>) -> String {
    let map: serde_json::Map<String, serde_json::Value> = counters
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into()))
        .collect();
    serde_json::Value::Object(map).to_string()
}

/// An ensemble row's columns: its settings and the distribution over its members.
pub fn write_ensemble(row: &mut runs::Row, e: &crate::store::members::EnsembleSummary) {
    row.ensemble = Some(e.settings.clone());
    row.members = e.members as u64;
    row.member_failures = e.failures as u64;
    row.drift_median = nullable(e.drift_median);
    row.drift_p95 = nullable(e.drift_p95);
    row.energy_median = nullable(e.energy_median);
    row.energy_p95 = nullable(e.energy_p95);
    row.rollout_steps_per_second = nullable(e.rollout_steps_per_second);
}

/// The `runs` table: the rows column by column through the schema's accessors
/// ([`runs::COLUMNS`]), the code the report reads them back with.
pub fn runs_frame(rows: &[runs::Row]) -> Result<DataFrame, RunnerError> {
    table::frame(rows, runs::COLUMNS).map_err(|e| RunnerError::Write {
        path: "runs".into(),
        message: e.to_string(),
    })
}

/// The `traces` rows of one sample `row` (in [`traces::SAMPLED`] order) of a cell whose
/// runs record is `r`.
fn trace_row(r: &runs::Row, cell: usize, row: &[f64]) -> traces::Row {
    let at = |j: usize| row.get(j).copied().and_then(nullable);
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
pub fn traces_frame(rows: &[runs::Row], traces: &[CellTrace]) -> Result<DataFrame, RunnerError> {
    let with_states = traces.iter().any(|t| t.q.is_some());
    let (mut samples, mut states) = (Vec::new(), StateLists::default());
    for tr in traces {
        let Some(r) = rows.iter().find(|r| r.cell == tr.cell as u64) else {
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
        let df = runs_frame(&[runs::Row::default()]).expect("frame");
        let names: Vec<&str> = df.get_column_names().iter().map(|n| n.as_str()).collect();
        let want: Vec<&str> = runs::ALL.iter().map(|d| d.name).collect();
        assert_eq!(names, want);
    }
}
