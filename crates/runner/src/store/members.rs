//! An ensemble's records: each member's rollout ([`MemberRecord`]), the summary over
//! members a `runs` row carries ([`EnsembleSummary`]), and the `members` table
//! ([`driftlab_results::schema::members`]): one schema row per member ([`member_row`]),
//! written column by column through the schema's accessors.

use crate::error::RunnerError;
use driftlab_core::{FailKind, MethodStats};
use driftlab_results::schema::members;
use driftlab_results::table;
use polars::prelude::*;
use serde::{Deserialize, Serialize};

/// The distribution over members that a `runs` row of an ensemble carries.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EnsembleSummary {
    /// [`crate::ensemble::EnsembleSpec::json`].
    pub settings: String,
    /// Members.
    pub members: usize,
    /// Members that failed.
    pub failures: usize,
    /// Median over members of their max drift.
    pub drift_median: f64,
    /// 95th percentile of the same.
    pub drift_p95: f64,
    /// Median over members of their max relative energy error.
    pub energy_median: f64,
    /// 95th percentile of the same.
    pub energy_p95: f64,
    /// Σ member steps / ensemble wall time.
    pub rollout_steps_per_second: f64,
}

/// One member's rollout.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemberRecord {
    /// The ensemble's cell.
    pub cell: usize,
    /// Member index.
    pub member: usize,
    /// Curriculum strength, where it applied.
    pub strength: Option<f64>,
    /// σ at t = 0.
    pub sigma0: f64,
    /// Reached the end time.
    pub ok: bool,
    /// Last time reached before a failure.
    pub fail_time: Option<f64>,
    /// Failure tag.
    pub fail_kind: Option<FailKind>,
    /// Failure message.
    pub fail_reason: Option<String>,
    /// Steps completed.
    pub steps: usize,
    /// Max ‖Φ‖∞ of the unperturbed constraints over the evaluated states.
    pub max_drift: f64,
    /// ‖Φ‖∞ at the last state.
    pub final_drift: f64,
    /// Max ‖q − q*(t)‖∞ against the unperturbed problem's exact solution (NaN without one).
    pub max_err_q: f64,
    /// Max ‖Φ_q v + Φ_t‖∞.
    pub max_vel_residual: f64,
    /// Max relative energy error.
    pub max_energy: f64,
    /// Relative energy error at the last state.
    pub final_energy: f64,
    /// Method counters.
    pub stats: MethodStats,
    /// Wall time inside the steps.
    pub step_seconds: f64,
}

/// NaN (undefined) → null.
fn opt(x: f64) -> Option<f64> {
    (!x.is_nan()).then_some(x)
}

/// The `members` row of member `r` of `experiment`.
pub fn member_row(experiment: &str, r: &MemberRecord) -> members::Row {
    members::Row {
        experiment: experiment.to_string(),
        cell: r.cell as u64,
        member: r.member as u64,
        strength: r.strength,
        sigma0: r.sigma0,
        status: if r.ok { "ok" } else { "failed" }.to_string(),
        fail_time: r.fail_time,
        fail_kind: r.fail_kind.map(|k| k.tag().to_string()),
        fail_reason: r.fail_reason.clone(),
        steps: r.steps as u64,
        max_drift: opt(r.max_drift),
        final_drift: opt(r.final_drift),
        max_err_q: opt(r.max_err_q),
        max_vel_residual: opt(r.max_vel_residual),
        max_energy_rel_error: opt(r.max_energy),
        final_energy_rel_error: opt(r.final_energy),
        step_seconds: r.step_seconds,
    }
}

/// The `members` table of `experiment`.
pub fn members_frame(experiment: &str, rows: &[MemberRecord]) -> Result<DataFrame, RunnerError> {
    let rows: Vec<members::Row> = rows.iter().map(|r| member_row(experiment, r)).collect();
    table::frame(&rows, members::COLUMNS).map_err(|e| RunnerError::Write {
        path: "members".into(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frame has every schema column, in the schema's order.
    #[test]
    fn every_column_is_written_in_order() {
        let df = members_frame("x", &[MemberRecord::default()]).expect("frame");
        let names: Vec<&str> = df.get_column_names().iter().map(|s| s.as_str()).collect();
        let expected: Vec<&str> = members::ALL.iter().map(|c| c.name).collect();
        assert_eq!(names, expected);
    }
}
