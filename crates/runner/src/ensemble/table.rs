//! The `members` table ([`driftlab_core::schema::members`]), column by column from the
//! schema paired with each column's computation.

use super::MemberRecord;
use crate::error::RunnerError;
use driftlab_core::schema::{members, ColumnDef};
use polars::prelude::*;

/// One column's values from the member rows.
enum Values {
    Text(Vec<String>),
    OptText(Vec<Option<String>>),
    Count(Vec<u64>),
    Real(Vec<f64>),
    OptReal(Vec<Option<f64>>),
}

/// NaN (undefined) → null.
fn opt(x: f64) -> Option<f64> {
    (!x.is_nan()).then_some(x)
}

/// The values of column `def` for `rows` of `experiment`.
fn values(def: ColumnDef, experiment: &str, rows: &[MemberRecord]) -> Values {
    let real =
        |f: fn(&MemberRecord) -> f64| Values::OptReal(rows.iter().map(|r| opt(f(r))).collect());
    let text =
        |f: fn(&MemberRecord) -> Option<String>| Values::OptText(rows.iter().map(f).collect());
    let count =
        |f: fn(&MemberRecord) -> usize| Values::Count(rows.iter().map(|r| f(r) as u64).collect());
    match def.name {
        "experiment" => Values::Text(vec![experiment.to_string(); rows.len()]),
        "cell" => count(|r| r.cell),
        "member" => count(|r| r.member),
        "strength" => Values::OptReal(rows.iter().map(|r| r.strength).collect()),
        "sigma0" => Values::Real(rows.iter().map(|r| r.sigma0).collect()),
        "status" => Values::Text(
            rows.iter()
                .map(|r| if r.ok { "ok" } else { "failed" }.to_string())
                .collect(),
        ),
        "fail_time" => Values::OptReal(rows.iter().map(|r| r.fail_time).collect()),
        "fail_kind" => text(|r| r.fail_kind.map(|k| k.tag().to_string())),
        "fail_reason" => text(|r| r.fail_reason.clone()),
        "steps" => count(|r| r.steps),
        "max_drift" => real(|r| r.max_drift),
        "final_drift" => real(|r| r.final_drift),
        "max_vel_residual" => real(|r| r.max_vel_residual),
        "max_energy_rel_error" => real(|r| r.max_energy),
        "final_energy_rel_error" => real(|r| r.final_energy),
        "step_seconds" => Values::Real(rows.iter().map(|r| r.step_seconds).collect()),
        other => unreachable!(
            "members column `{other}` has no writer (test `every_column_has_a_writer`)"
        ),
    }
}

/// The `members` table of `experiment`.
pub fn members_frame(experiment: &str, rows: &[MemberRecord]) -> Result<DataFrame, RunnerError> {
    let cols = members::ALL
        .iter()
        .map(|&def| {
            let name = def.name.into();
            match values(def, experiment, rows) {
                Values::Text(v) => Column::new(name, v),
                Values::OptText(v) => Column::new(name, v),
                Values::Count(v) => Column::new(name, v),
                Values::Real(v) => Column::new(name, v),
                Values::OptReal(v) => Column::new(name, v),
            }
        })
        .collect();
    DataFrame::new_infer_height(cols).map_err(|e| RunnerError::Write {
        path: "members".into(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use driftlab_core::schema::Kind;

    /// Every schema column has a writer of its declared type.
    #[test]
    fn every_column_has_a_writer() {
        let rows = [MemberRecord::default()];
        for &def in members::ALL {
            let ok = matches!(
                (values(def, "x", &rows), def.kind),
                (Values::Text(_), Kind::Text)
                    | (Values::OptText(_), Kind::OptText)
                    | (Values::Count(_), Kind::Count)
                    | (Values::Real(_), Kind::Real)
                    | (Values::OptReal(_), Kind::OptReal)
            );
            assert!(ok, "{} is not written as {:?}", def.name, def.kind);
        }
        let df = members_frame("x", &rows).unwrap();
        let names: Vec<&str> = df.get_column_names().iter().map(|s| s.as_str()).collect();
        let expected: Vec<&str> = members::ALL.iter().map(|c| c.name).collect();
        assert_eq!(names, expected);
    }
}
