//! An experiment's `[report]` role (its class, measure and target) resolved against its
//! rows, and the small readers every section shares: a measure's column, a folder's
//! manifest, a manifest field as text.

use crate::data::{Results, Run};
use driftlab_results::report_spec::ReportSpec;
use driftlab_results::schema::runs;
use std::path::Path;

/// The position of the runs column `name` in [`runs::MEASURES`] (each [`Run`] carries
/// their values in that order); `None` for a name the spec check would have refused.
pub fn measure_of(name: &str) -> Option<usize> {
    runs::MEASURES.iter().position(|m| m.name == name)
}

pub(crate) fn e3(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.2e}"))
}

/// An experiment's `[report]` role resolved against its rows.
pub struct Role<'a> {
    pub(crate) spec: &'a ReportSpec,
    /// Position of the measure in [`Run::measures`].
    measure: usize,
    pub(crate) runs: Vec<&'a Run>,
}

impl<'a> Role<'a> {
    pub(crate) fn of(res: &'a Results) -> Option<Self> {
        let spec = res.report.as_ref()?;
        let measure = measure_of(&spec.measure)?;
        let runs = res
            .runs
            .iter()
            .filter(|r| {
                spec.select
                    .as_deref()
                    .is_none_or(|t| r.problem_params.contains(t))
            })
            .collect();
        Some(Self {
            spec,
            measure,
            runs,
        })
    }
    /// Whether the measure counts correct digits (printed as digits, not in exponent
    /// form).
    pub(crate) fn in_digits(&self) -> bool {
        driftlab_results::schema::runs::find(&self.spec.measure).is_some_and(|c| c.unit == "digits")
    }
    pub(crate) fn value(&self, r: &Run) -> Option<f64> {
        r.measures()
            .get(self.measure)
            .copied()
            .flatten()
            .filter(|x| x.is_finite())
    }
    /// Whether a successful run meets the target (failed runs never do: `None`).
    pub(crate) fn meets(&self, r: &Run) -> Option<bool> {
        if !r.ok() {
            return None;
        }
        let (t, v) = (self.spec.target?, self.value(r)?);
        Some(if self.spec.higher_is_better {
            v >= t
        } else {
            v <= t
        })
    }
    /// `true` when `a` is more accurate than `b`.
    pub(crate) fn better(&self, a: f64, b: f64) -> bool {
        if self.spec.higher_is_better {
            a > b
        } else {
            a < b
        }
    }
    pub(crate) fn target_text(&self) -> String {
        match self.spec.target {
            Some(t) => format!(
                "{} {} {}",
                self.spec.measure,
                if self.spec.higher_is_better {
                    "≥"
                } else {
                    "≤"
                },
                target_number(t)
            ),
            None => format!("{} (no target)", self.spec.measure),
        }
    }
}

/// A target as written in a spec: a whole number of digits (scd) plainly, `9`, not
/// `9e0`; other values in exponent form (`1e-3`, `5e-2`).
pub(crate) fn target_number(t: f64) -> String {
    if t.fract() == 0.0 && (1.0..1000.0).contains(&t.abs()) {
        format!("{t}")
    } else {
        format!("{t:.0e}")
    }
}

pub(crate) fn manifest(dir: &Path) -> serde_json::Value {
    std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null)
}

pub(crate) fn s(v: &serde_json::Value, k: &str) -> String {
    match &v[k] {
        serde_json::Value::String(x) => x.clone(),
        serde_json::Value::Null => "—".into(),
        other => other.to_string(),
    }
}
