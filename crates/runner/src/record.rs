//! Rows and their tables: one [`RunRecord`] per cell (`runs.parquet`, `runs.csv`) and
//! sampled traces (`traces.parquet`), built with polars.

use crate::error::RunnerError;
use ndarray::Array2;
use polars::prelude::*;
use std::path::Path;

/// Columns of `runs.parquet` / `runs.csv`, in order, with their meaning (the README
/// prints this table).
pub const RUN_COLUMNS: &[(&str, &str)] = &[
    ("experiment", "spec name"),
    ("cell", "cell index within the experiment"),
    ("problem", "problem id"),
    ("problem_params", "problem parameters of this cell (JSON)"),
    ("method", "method id (`+projection` when decorated)"),
    ("variant", "method label with its parameters (one curve per variant in figures)"),
    ("params", "method and projection parameters (JSON)"),
    ("h", "step size (snapped so that t_end/h is an integer); error-controlled cells: the mean accepted step t_end/steps"),
    ("t_end", "end time"),
    ("threads", "faer threads inside the cell"),
    ("rtol", "relative tolerance of an error-controlled cell (null for fixed steps)"),
    ("atol", "absolute tolerance of an error-controlled cell (null for fixed steps)"),
    ("status", "`ok` or `failed`"),
    ("fail_time", "last time reached before the failure (null if ok)"),
    ("fail_reason", "typed error with its numbers (null if ok)"),
    ("steps", "steps completed (accepted steps of an error-controlled cell)"),
    ("rejected_steps", "steps rejected by the error test (0 for fixed steps)"),
    ("newton_failures", "step attempts whose Newton iteration or linear solve failed and were retried with a smaller h (0 for fixed steps)"),
    ("h_min_used", "smallest accepted step (h for fixed steps)"),
    ("h_max_used", "largest accepted step (h for fixed steps)"),
    ("max_pos_residual", "max over all steps of ‖Φ(t,q)‖∞ (index-1: ‖g‖∞)"),
    ("max_vel_residual", "max over all steps of ‖Φ_q v + Φ_t‖∞"),
    ("max_acc_residual", "max over all steps of ‖Φ_q a − γ‖∞ with the method's own a"),
    ("final_pos_residual", "‖Φ‖∞ at the last state"),
    ("final_vel_residual", "‖Φ_q v + Φ_t‖∞ at the last state"),
    ("max_energy_rel_error", "max of |H − H0| / max(|H0|, problem energy scale)"),
    ("final_energy_rel_error", "the same at the last state"),
    ("err_q", "max over all steps of ‖q − q_exact‖∞ (index-1: differential variables x); null without reference"),
    ("err_v", "max over all steps of ‖v − v_exact‖∞"),
    ("err_lambda", "max over all steps of ‖λ − λ_exact‖∞ (index-1: algebraic variables z)"),
    ("final_err_q", "‖q − q_exact‖∞ at t_end"),
    ("final_err_v", "‖v − v_exact‖∞ at t_end"),
    ("final_err_lambda", "‖λ − λ_exact‖∞ at t_end"),
    ("max_deferred_residual", "max over all steps of ‖Φ‖∞ over the lower-priority rows (prioritized problems; the residual columns then cover priority 0); null otherwise"),
    ("final_deferred_residual", "the same at the last state"),
    ("scd", "significant correct digits at t_end against the published reference (IVP Test Set measure); null without one"),
    ("newton_iterations", "Newton iterations (stage equations)"),
    ("projection_iterations", "Newton iterations of position projections"),
    ("factorizations", "numeric factorizations (KKT or Newton matrices)"),
    ("jacobian_evaluations", "evaluations of a Newton Jacobian (finite differences or analytic)"),
    ("rollbacks", "emergency rollbacks: steps retaken as substeps (`recovery`, seed 001 §3.5.4)"),
    ("resets", "emergency resets: projections onto the nearest valid configuration (`recovery`)"),
    ("relaxations", "emergency relaxations: constraint restored over several steps (`recovery`)"),
    ("symbolic_analyses", "symbolic analyses (once per sparse structure)"),
    ("solves", "linear solves (incl. refinement)"),
    ("wall_seconds", "total wall time of the cell (init + steps + metrics); the median over `repeat` runs"),
    ("step_seconds", "wall time inside the method's steps; the median over `repeat` runs"),
    ("repeat", "runs of the cell behind the times (spec key `repeat`)"),
    ("step_seconds_min", "smallest step time over the runs"),
    ("step_seconds_max", "largest step time over the runs"),
    ("declared_order_q", "the method's declared order in q (MethodInfo)"),
    ("declared_order_v", "declared order in v"),
    ("declared_order_lambda", "declared order in λ"),
];

/// One row of `runs`.
#[derive(Clone, Debug, Default)]
pub struct RunRecord {
    /// See [`RUN_COLUMNS`] for every field.
    pub experiment: String,
    #[allow(missing_docs)]
    pub cell: usize,
    #[allow(missing_docs)]
    pub problem: String,
    #[allow(missing_docs)]
    pub problem_params: String,
    #[allow(missing_docs)]
    pub method: String,
    #[allow(missing_docs)]
    pub variant: String,
    #[allow(missing_docs)]
    pub params: String,
    #[allow(missing_docs)]
    pub h: f64,
    #[allow(missing_docs)]
    pub t_end: f64,
    #[allow(missing_docs)]
    pub threads: usize,
    #[allow(missing_docs)]
    pub ok: bool,
    #[allow(missing_docs)]
    pub fail_time: Option<f64>,
    #[allow(missing_docs)]
    pub fail_reason: Option<String>,
    #[allow(missing_docs)]
    pub steps: usize,
    /// Tolerances of an error-controlled cell.
    pub tolerances: Option<driftlab_core::Tolerances>,
    /// Counters of an error-controlled cell.
    pub adaptive: Option<driftlab_core::AdaptiveStats>,
    /// Summary metrics (NaN = undefined → null).
    pub summary: driftlab_core::SummaryMetrics,
    /// Method counters.
    pub stats: driftlab_core::MethodStats,
    #[allow(missing_docs)]
    pub wall_seconds: f64,
    #[allow(missing_docs)]
    pub step_seconds: f64,
    /// Runs behind the times.
    pub repeat: usize,
    /// Range of the step times over the runs.
    pub step_seconds_min: f64,
    #[allow(missing_docs)]
    pub step_seconds_max: f64,
    /// Declared orders (q, v, λ).
    pub declared: driftlab_core::DeclaredOrders,
}

/// Sampled trace of one cell: columns `t, pos, vel, acc, energy, err_q, err_v,
/// err_lambda` of an `(samples × 8)` array, plus optional states.
#[derive(Clone, Debug)]
pub struct CellTrace {
    /// Cell index.
    pub cell: usize,
    /// Samples × 8.
    pub samples: Array2<f64>,
    /// `q` at each sample (when `trace_states`).
    pub q: Option<Vec<Vec<f64>>>,
    /// `v` at each sample (when `trace_states`).
    pub v: Option<Vec<Vec<f64>>>,
}

/// Names of the 8 trace columns.
pub const TRACE_COLUMNS: [&str; 8] = [
    "t",
    "pos_residual",
    "vel_residual",
    "acc_residual",
    "energy_rel_error",
    "err_q",
    "err_v",
    "err_lambda",
];

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

/// The `runs` table.
pub fn runs_frame(rows: &[RunRecord]) -> Result<DataFrame, RunnerError> {
    let s = |f: &dyn Fn(&RunRecord) -> String| rows.iter().map(f).collect::<Vec<String>>();
    let u =
        |f: &dyn Fn(&RunRecord) -> usize| rows.iter().map(|r| f(r) as u64).collect::<Vec<u64>>();
    let o = |f: &dyn Fn(&RunRecord) -> f64| {
        rows.iter().map(|r| opt(f(r))).collect::<Vec<Option<f64>>>()
    };
    let cols = vec![
        Column::new("experiment".into(), s(&|r| r.experiment.clone())),
        Column::new("cell".into(), u(&|r| r.cell)),
        Column::new("problem".into(), s(&|r| r.problem.clone())),
        Column::new("problem_params".into(), s(&|r| r.problem_params.clone())),
        Column::new("method".into(), s(&|r| r.method.clone())),
        Column::new("variant".into(), s(&|r| r.variant.clone())),
        Column::new("params".into(), s(&|r| r.params.clone())),
        Column::new("h".into(), rows.iter().map(|r| r.h).collect::<Vec<f64>>()),
        Column::new(
            "t_end".into(),
            rows.iter().map(|r| r.t_end).collect::<Vec<f64>>(),
        ),
        Column::new("threads".into(), u(&|r| r.threads)),
        col_f64(
            "rtol",
            rows.iter().map(|r| r.tolerances.map(|t| t.rtol)).collect(),
        ),
        col_f64(
            "atol",
            rows.iter().map(|r| r.tolerances.map(|t| t.atol)).collect(),
        ),
        Column::new(
            "status".into(),
            s(&|r| if r.ok { "ok".into() } else { "failed".into() }),
        ),
        col_f64("fail_time", rows.iter().map(|r| r.fail_time).collect()),
        Column::new(
            "fail_reason".into(),
            rows.iter()
                .map(|r| r.fail_reason.clone())
                .collect::<Vec<Option<String>>>(),
        ),
        Column::new("steps".into(), u(&|r| r.steps)),
        Column::new(
            "rejected_steps".into(),
            u(&|r| r.adaptive.map_or(0, |a| a.rejected)),
        ),
        Column::new(
            "newton_failures".into(),
            u(&|r| r.adaptive.map_or(0, |a| a.newton_failures)),
        ),
        col_f64(
            "h_min_used",
            o(&|r| r.adaptive.map_or(r.h, |a| a.h_min_used)),
        ),
        col_f64(
            "h_max_used",
            o(&|r| r.adaptive.map_or(r.h, |a| a.h_max_used)),
        ),
        col_f64("max_pos_residual", o(&|r| r.summary.max_pos_residual)),
        col_f64("max_vel_residual", o(&|r| r.summary.max_vel_residual)),
        col_f64("max_acc_residual", o(&|r| r.summary.max_acc_residual)),
        col_f64("final_pos_residual", o(&|r| r.summary.final_pos_residual)),
        col_f64("final_vel_residual", o(&|r| r.summary.final_vel_residual)),
        col_f64(
            "max_energy_rel_error",
            o(&|r| r.summary.max_energy_rel_error),
        ),
        col_f64(
            "final_energy_rel_error",
            o(&|r| r.summary.final_energy_rel_error),
        ),
        col_f64("err_q", o(&|r| r.summary.err_q)),
        col_f64("err_v", o(&|r| r.summary.err_v)),
        col_f64("err_lambda", o(&|r| r.summary.err_lambda)),
        col_f64("final_err_q", o(&|r| r.summary.final_err_q)),
        col_f64("final_err_v", o(&|r| r.summary.final_err_v)),
        col_f64("final_err_lambda", o(&|r| r.summary.final_err_lambda)),
        col_f64(
            "max_deferred_residual",
            o(&|r| r.summary.max_deferred_residual),
        ),
        col_f64(
            "final_deferred_residual",
            o(&|r| r.summary.final_deferred_residual),
        ),
        col_f64("scd", o(&|r| r.summary.scd)),
        Column::new(
            "newton_iterations".into(),
            u(&|r| r.stats.newton_iterations),
        ),
        Column::new(
            "projection_iterations".into(),
            u(&|r| r.stats.projection_iterations),
        ),
        Column::new("factorizations".into(), u(&|r| r.stats.factorizations)),
        Column::new(
            "jacobian_evaluations".into(),
            u(&|r| r.stats.jacobian_evaluations),
        ),
        Column::new("rollbacks".into(), u(&|r| r.stats.rollbacks)),
        Column::new("resets".into(), u(&|r| r.stats.resets)),
        Column::new("relaxations".into(), u(&|r| r.stats.relaxations)),
        Column::new(
            "symbolic_analyses".into(),
            u(&|r| r.stats.symbolic_analyses),
        ),
        Column::new("solves".into(), u(&|r| r.stats.solves)),
        Column::new(
            "wall_seconds".into(),
            rows.iter().map(|r| r.wall_seconds).collect::<Vec<f64>>(),
        ),
        Column::new(
            "step_seconds".into(),
            rows.iter().map(|r| r.step_seconds).collect::<Vec<f64>>(),
        ),
        Column::new("repeat".into(), u(&|r| r.repeat)),
        col_f64("step_seconds_min", o(&|r| r.step_seconds_min)),
        col_f64("step_seconds_max", o(&|r| r.step_seconds_max)),
        col_f64(
            "declared_order_q",
            rows.iter().map(|r| r.declared.q).collect(),
        ),
        col_f64(
            "declared_order_v",
            rows.iter().map(|r| r.declared.v).collect(),
        ),
        col_f64(
            "declared_order_lambda",
            rows.iter().map(|r| r.declared.lambda).collect(),
        ),
    ];
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
                let q =
                    tr.q.as_ref()
                        .and_then(|q| q.get(k))
                        .cloned()
                        .unwrap_or_default();
                let v =
                    tr.v.as_ref()
                        .and_then(|v| v.get(k))
                        .cloned()
                        .unwrap_or_default();
                qs.push(Series::new("".into(), q));
                vs.push(Series::new("".into(), v));
            }
        }
    }
    let mut cols = vec![
        Column::new("cell".into(), cell),
        Column::new("problem".into(), problem),
        Column::new("method".into(), method),
        Column::new("variant".into(), variant),
        Column::new("h".into(), h),
    ];
    for (j, name) in TRACE_COLUMNS.iter().enumerate() {
        cols.push(col_f64(name, std::mem::take(&mut data[j])));
    }
    if with_states {
        cols.push(Series::new("q".into(), qs).into());
        cols.push(Series::new("v".into(), vs).into());
    }
    DataFrame::new_infer_height(cols).map_err(|e| RunnerError::Write {
        path: "traces".into(),
        message: e.to_string(),
    })
}

fn werr(path: &Path, e: impl std::fmt::Display) -> RunnerError {
    RunnerError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Write a frame as Parquet.
pub fn write_parquet(df: &mut DataFrame, path: &Path) -> Result<(), RunnerError> {
    let f = std::fs::File::create(path).map_err(|e| werr(path, e))?;
    ParquetWriter::new(f)
        .finish(df)
        .map_err(|e| werr(path, e))?;
    Ok(())
}

/// Write a frame as CSV (header, full float precision).
pub fn write_csv(df: &mut DataFrame, path: &Path) -> Result<(), RunnerError> {
    let f = std::fs::File::create(path).map_err(|e| werr(path, e))?;
    CsvWriter::new(f)
        .include_header(true)
        .finish(df)
        .map_err(|e| werr(path, e))
}
