//! The `[[claims]]` tables of an experiment spec: a claim of a source (a seed section, a
//! paper) stated as a rule over the experiment's own rows, which the report evaluates —
//! so that a verdict is computed from the measurements, never typed in. The runner
//! validates the tables with the rest of the spec; the report reads them back from the
//! spec text stored in `manifest.json` (as it reads `[report]`).
//!
//! ```toml
//! [[claims]]
//! claim = "A warm start removes the over-iteration of the constraint solver"
//! source = "seed 001 §3.11 pitfall 8"
//! measure = "newton_iterations"      # one of CLAIM_MEASURES
//! select = ["PGS cold, tol 1e-13, skin", "\"balls\":20"]   # every text in the row's key
//! against = ["PGS warm, tol 1e-13, skin", "\"balls\":20"]  # optional: value = select / against
//! aggregate = "max"                  # max | min | median over the selected rows
//! at_least = 100.0                   # or at_most: the rule the claim amounts to
//! condition = "…"                    # optional: the claim holds only so (verdict says it)
//! instead = "…"                      # what holds instead when the rule fails
//! ```
//!
//! A row's key is `problem problem_params variant params h=<h>`; `select` keeps the rows
//! whose key contains every text. Measures are runs columns over the selected rows (a
//! failed row's metrics up to its failure included; `failed_rows` counts the failed
//! rows), or observed orders from
//! `orders.csv` (`order_q`, `order_v`, `order_lambda`, keyed `problem problem_params variant`).

use serde::{Deserialize, Serialize};

/// The measures a claim may use.
pub const CLAIM_MEASURES: [&str; 20] = [
    "err_q",
    "final_err_q",
    "err_v",
    "err_lambda",
    "scd",
    "max_pos_residual",
    "max_vel_residual",
    "max_acc_residual",
    "max_energy_rel_error",
    "final_deferred_residual",
    "newton_iterations",
    "projection_iterations",
    "factorizations",
    "steps",
    "step_seconds",
    "wall_seconds",
    "failed_rows",
    "order_q",
    "order_v",
    "order_lambda",
];

/// How the selected rows' values become one number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Aggregate {
    /// The largest.
    #[default]
    Max,
    /// The smallest.
    Min,
    /// The median.
    Median,
}

/// One `[[claims]]` entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    /// The claim, as its source makes it.
    pub claim: String,
    /// Where it is made: seed and section, or paper.
    pub source: String,
    /// The measure ([`CLAIM_MEASURES`]).
    pub measure: String,
    /// Texts every selected row's key contains.
    #[serde(default)]
    pub select: Vec<String>,
    /// A second selection: the value is then the ratio select / against.
    pub against: Option<Vec<String>>,
    /// How the selected values become one.
    #[serde(default)]
    pub aggregate: Aggregate,
    /// The claim holds when the value is at most this.
    pub at_most: Option<f64>,
    /// The claim holds when the value is at least this.
    pub at_least: Option<f64>,
    /// The condition under which the claim holds, when it holds only so.
    pub condition: Option<String>,
    /// What holds instead when the rule fails.
    pub instead: String,
}

impl ClaimSpec {
    /// Check the fields; the message names the claim, the field and the fix.
    pub fn validate(&self, index: usize) -> Result<(), String> {
        let at = format!("[[claims]] entry {index}");
        if self.claim.trim().is_empty() || self.source.trim().is_empty() {
            return Err(format!("{at}: give the `claim` and its `source`"));
        }
        if !CLAIM_MEASURES.contains(&self.measure.as_str()) {
            return Err(format!(
                "{at}: measure = \"{}\" is not a claim measure; give one of {}",
                self.measure,
                CLAIM_MEASURES.join(", ")
            ));
        }
        match (self.at_most, self.at_least) {
            (Some(x), None) | (None, Some(x)) if x.is_finite() => {}
            _ => {
                return Err(format!(
                    "{at}: give exactly one finite bound, `at_most` or `at_least`"
                ))
            }
        }
        if self.instead.trim().is_empty() {
            return Err(format!(
                "{at}: give `instead`, what holds when the claim does not"
            ));
        }
        Ok(())
    }

    /// The rule as text: `≤ 1e-10` or `≥ 100`.
    pub fn rule(&self) -> String {
        match (self.at_most, self.at_least) {
            (Some(x), _) => format!("≤ {x:e}"),
            (_, Some(x)) => format!("≥ {x:e}"),
            _ => String::new(),
        }
    }

    /// Whether `value` meets the rule.
    pub fn met(&self, value: f64) -> bool {
        match (self.at_most, self.at_least) {
            (Some(x), _) => value <= x,
            (_, Some(x)) => value >= x,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CLAIM_MEASURES;

    /// A claim measure is a runs column (defined once, in `schema::runs`), a count of
    /// failed rows, or an order of `orders.csv`: none is a second definition of a column.
    #[test]
    fn every_claim_measure_is_a_runs_column_or_a_count_or_an_order() {
        let columns: Vec<&str> = crate::schema::runs::ALL.iter().map(|c| c.name).collect();
        for m in CLAIM_MEASURES {
            let known = columns.contains(&m) || m == "failed_rows" || m.starts_with("order_");
            assert!(known, "claim measure `{m}` is not a runs column");
        }
    }
}
