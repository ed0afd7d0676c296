//! The `members` table ([`driftlab_results::schema::members`]): one schema row per member
//! ([`member_row`]), written column by column through the schema's accessors.

use super::MemberRecord;
use crate::error::RunnerError;
use driftlab_results::schema::members;
use driftlab_results::table;
use polars::prelude::*;

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
