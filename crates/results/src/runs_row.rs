//! What a reader takes from a [`runs::Row`] (and an orders row, its key) beyond its columns: whether it ran to its end,
//! the columns that results written before them lack read as what they meant, the
//! ensemble's distribution, the measures by name, and the row's labels in the report's
//! tables. The report reads the row type itself through these (issue 48 item 3: no copy
//! of the row with its own fields).

use crate::schema::runs;
use crate::table;

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

impl runs::Row {
    /// `status = ok`: the run reached its end time.
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }

    /// faer threads inside the cell (results written before the column: 1).
    pub fn cell_threads(&self) -> usize {
        self.threads.max(1) as usize
    }

    /// Cells side by side in the row's batch (`None` in results written before thread
    /// sweeps, where the column reads 0).
    pub fn batch_threads(&self) -> Option<usize> {
        (self.sweep_threads > 0).then_some(self.sweep_threads as usize)
    }

    /// Wall time of the row's batch (`None` before the column: NaN).
    pub fn batch_time(&self) -> Option<f64> {
        Some(self.batch_seconds).filter(|x| !x.is_nan())
    }

    /// Runs of the cell behind its times (1 in results written before repeats).
    pub fn runs_behind_times(&self) -> u64 {
        self.repeat.max(1)
    }

    /// The distribution of an ensemble row (`None` for a single run: no members).
    pub fn ensemble_stats(&self) -> Option<EnsembleStats> {
        (self.members > 0).then_some(EnsembleStats {
            members: self.members,
            failures: self.member_failures,
            drift: [self.drift_median, self.drift_p95],
            energy: [self.energy_median, self.energy_p95],
            throughput: self.rollout_steps_per_second,
        })
    }

    /// The value of the column `name` as a number (a spec's measure), finite or not;
    /// `None` for a null or an unknown column.
    pub fn measure(&self, name: &str) -> Option<f64> {
        table::number(self, runs::COLUMNS, name)
    }

    /// The values of [`runs::MEASURES`], in that order.
    pub fn measures(&self) -> Vec<Option<f64>> {
        runs::MEASURES
            .iter()
            .map(|m| self.measure(m.name))
            .collect()
    }

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
        if self.ok() {
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

impl crate::schema::orders::Row {
    /// The key `[[order_notes]]` and the claims' order measures select on:
    /// `problem problem_params variant` ([`crate::order_note`]).
    pub fn key(&self) -> String {
        format!("{} {} {}", self.problem, self.problem_params, self.variant)
    }
}
