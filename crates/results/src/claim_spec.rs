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
//! `orders.csv` (`order_q`, `order_v`, `order_lambda`, keyed `problem problem_params variant`),
//! or searched optima from `optima.csv` (`k_opt`; `optima_at_edge` counts the rows whose
//! optimum is at an edge of the feasible grid; keyed `problem problem_params method params
//! h=<h:e> alpha=<α:e> `, e.g. `alpha=1e1`).

use serde::{Deserialize, Serialize};

/// The measures a claim may use.
pub const CLAIM_MEASURES: [&str; 30] = [
    "err_q",
    "final_err_q",
    "err_v",
    "err_lambda",
    "scd",
    "max_pos_residual",
    "max_vel_residual",
    "max_acc_residual",
    "max_energy_rel_error",
    "max_momentum_error",
    "final_pos_residual",
    "settle_time",
    "residual_peaks",
    "final_deferred_residual",
    "max_penetration",
    "max_approach_velocity",
    "newton_iterations",
    "projection_iterations",
    "factorizations",
    "steps",
    "step_seconds",
    "wall_seconds",
    "failed_rows",
    "member_failures",
    "drift_median",
    "k_opt",
    "optima_at_edge",
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
            (Some(hi), Some(lo)) if hi.is_finite() && lo.is_finite() && lo <= hi => {}
            _ => {
                return Err(format!(
                    "{at}: give a finite bound, `at_most` or `at_least`, or both (at_least ≤ at_most) for a claim that a value is something"
                ))
            }
        }
        if self.instead.trim().is_empty() {
            return Err(format!(
                "{at}: give `instead`, what holds when the claim does not"
            ));
        }
        for (field, text) in [
            ("instead", Some(&self.instead)),
            ("condition", self.condition.as_ref()),
        ] {
            if let Some(text) = text {
                quotes(text).map_err(|m| format!("{at}: `{field}`: {m}"))?;
            }
        }
        Ok(())
    }

    /// The rule as text: `≤ 1e-10`, `≥ 100`, or two-sided `in [1.85, 2.15]` (a claim that
    /// a value *is* something: an order "is 2" is 2 within a tolerance, which a lower order
    /// must fail).
    pub fn rule(&self) -> String {
        match (self.at_most, self.at_least) {
            (Some(hi), Some(lo)) => format!("in [{lo:e}, {hi:e}]"),
            (Some(x), None) => format!("≤ {x:e}"),
            (None, Some(x)) => format!("≥ {x:e}"),
            (None, None) => String::new(),
        }
    }

    /// Whether `value` meets the rule.
    pub fn met(&self, value: f64) -> bool {
        self.at_most.is_none_or(|hi| value <= hi)
            && self.at_least.is_none_or(|lo| value >= lo)
            && (self.at_most.is_some() || self.at_least.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::CLAIM_MEASURES;

    /// A claim measure is a runs column (defined once, in `schema::runs`), a count of
    /// failed rows, an order of `orders.csv`, or an optimum of `optima.csv` (its `k_opt`
    /// column, or the count of rows at an edge): none is a second definition of a column.
    #[test]
    fn every_claim_measure_is_a_runs_column_or_a_count_or_an_order() {
        let columns: Vec<&str> = crate::schema::runs::ALL.iter().map(|c| c.name).collect();
        let optima: Vec<&str> = crate::schema::optima::ALL.iter().map(|c| c.name).collect();
        for m in CLAIM_MEASURES {
            let known = columns.contains(&m)
                || m == "failed_rows"
                || m.starts_with("order_")
                || optima.contains(&m)
                || m == "optima_at_edge";
            assert!(known, "claim measure `{m}` is not a runs column");
        }
    }
}

/// A measured value quoted in a claim's `instead` or `condition` text instead of typed:
/// `{measure | text | text …}` is `measure` (a claim measure or `fail_time`) over the
/// rows whose key contains every text, aggregated by `max`; `{measure | texts // texts}`
/// is the ratio of two such selections. The report fills it in from the rows (so a
/// number in the prose is a measurement of this run, never a stale copy).
#[derive(Clone, Debug, PartialEq)]
pub struct Quote {
    /// Byte range of the `{…}` in the text.
    pub span: std::ops::Range<usize>,
    /// The measure.
    pub measure: String,
    /// Texts every selected row's key contains.
    pub select: Vec<String>,
    /// The denominator's texts, for a ratio.
    pub against: Option<Vec<String>>,
}

/// The claim measures that are times: the rows they select are timed with the cell
/// alone, repeated (`driftlab_results::verdict`), since a claim's cost ratio is a verdict.
pub const TIME_MEASURES: [&str; 2] = ["step_seconds", "wall_seconds"];

/// A run's key for `select`: problem, its parameters, variant, parameters, step and the
/// threads inside the cell (`threads=2 `, with its trailing space). One definition for the
/// report, which evaluates claims, and the runner, which times the rows they select.
pub fn select_key(
    problem: &str, problem_params: &str, variant: &str, params: &str, h: f64, threads: usize,
) -> String {
    format!("{problem} {problem_params} {variant} {params} h={h:e} threads={threads} ")
}

/// Whether a row's `key` ([`select_key`]) holds every text of `select`.
pub fn selects(key: &str, select: &[String]) -> bool {
    select.iter().all(|t| key.contains(t.as_str()))
}

/// Every selection of `claims` (their `select` and `against`, and those of the quotes in
/// their texts) whose measure is a time ([`TIME_MEASURES`]).
pub fn time_selections(claims: &[ClaimSpec]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for c in claims {
        if TIME_MEASURES.contains(&c.measure.as_str()) {
            out.push(c.select.clone());
            out.extend(c.against.clone());
        }
        let texts = [Some(&c.claim), Some(&c.instead), c.condition.as_ref()];
        for q in texts
            .into_iter()
            .flatten()
            .flat_map(|t| quotes(t).unwrap_or_default())
        {
            if TIME_MEASURES.contains(&q.measure.as_str()) {
                out.push(q.select);
                out.extend(q.against);
            }
        }
    }
    out
}

/// The measures a quote may use: the claim measures and a failed row's `fail_time`.
pub fn quotable(measure: &str) -> bool {
    measure == "fail_time" || CLAIM_MEASURES.contains(&measure)
}

/// The quotes of `text` in order; `Err` names a malformed one and the fix.
pub fn quotes(text: &str) -> Result<Vec<Quote>, String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find('{').map(|k| from + k) {
        let close = text[open..].find('}').map(|k| open + k).ok_or_else(|| {
            format!("`{{` at byte {open} is not closed; write {{measure | text …}}")
        })?;
        let inner = &text[open + 1..close];
        let (num, den) = match inner.split_once("//") {
            Some((a, b)) => (a, Some(b)),
            None => (inner, None),
        };
        let mut parts = num.split('|').map(str::trim);
        let measure = parts.next().unwrap_or_default().to_string();
        if !quotable(&measure) {
            return Err(format!(
                "{{{inner}}}: `{measure}` is not a quotable measure; give one of {}, fail_time",
                CLAIM_MEASURES.join(", ")
            ));
        }
        let texts = |it: &mut dyn Iterator<Item = &str>| -> Vec<String> {
            it.filter(|t| !t.is_empty()).map(String::from).collect()
        };
        let select = texts(&mut parts);
        let against = den.map(|d| texts(&mut d.split('|').map(str::trim)));
        if select.is_empty() || against.as_ref().is_some_and(Vec::is_empty) {
            return Err(format!(
                "{{{inner}}}: give the texts that select the rows after `|`, e.g. {{max_pos_residual | baumgarte | h=1e-3}}"
            ));
        }
        out.push(Quote {
            span: open..close + 1,
            measure,
            select,
            against,
        });
        from = close + 1;
    }
    // A `}` outside every quote is a select text that held a brace and cut its quote short.
    let mut outside = text.to_string();
    for q in out.iter().rev() {
        outside.replace_range(q.span.clone(), "");
    }
    if outside.contains('}') {
        return Err("a `}` outside a quote: a select text cannot hold braces (`{}` of empty parameters); select by a part of the key without them, e.g. `knife-edge {`".into());
    }
    Ok(out)
}

#[cfg(test)]
mod quote_tests {
    use super::*;

    #[test]
    fn quotes_parse_selections_and_ratios() {
        let q = quotes(
            "drifts to {max_energy_rel_error | standard | h=5e-2} while {steps | a | b // c} x",
        )
        .expect("quotes");
        assert_eq!(q.len(), 2);
        assert_eq!(q[0].measure, "max_energy_rel_error");
        assert_eq!(q[0].select, vec!["standard", "h=5e-2"]);
        assert_eq!(q[1].against, Some(vec!["c".to_string()]));
        assert_eq!(
            &"drifts to {max_energy_rel_error | standard | h=5e-2}"[q[0].span.clone()],
            "{max_energy_rel_error | standard | h=5e-2}"
        );
    }

    #[test]
    fn bad_quotes_name_the_fix() {
        assert!(quotes("{nope | a}")
            .unwrap_err()
            .contains("not a quotable measure"));
        assert!(quotes("{err_q}").unwrap_err().contains("give the texts"));
        assert!(quotes("{err_q | a").unwrap_err().contains("not closed"));
        assert!(quotes("{err_q | knife-edge {} | h=1e-3}")
            .unwrap_err()
            .contains("outside a quote"));
        assert_eq!(quotes("no quotes").map(|q| q.len()), Ok(0));
    }
}

#[cfg(test)]
mod rule_tests {
    use super::*;

    #[test]
    fn a_two_sided_rule_fails_a_lower_order_and_a_one_sided_one_does_not() {
        let one = ClaimSpec {
            at_most: Some(2.2),
            ..ClaimSpec::default()
        };
        let two = ClaimSpec {
            at_least: Some(1.8),
            ..one.clone()
        };
        // "v has order 2": a fitted order 1.0 passes `≤ 2.2` but not `in [1.8, 2.2]`.
        assert!(one.met(1.0) && !two.met(1.0));
        assert!(two.met(2.0) && !two.met(2.3));
        assert_eq!(two.rule(), "in [1.8e0, 2.2e0]");
        assert!(!ClaimSpec::default().met(0.0), "no bound, no verdict");
        let reversed = ClaimSpec {
            claim: "c".into(),
            source: "s".into(),
            measure: "order_v".into(),
            at_least: Some(3.0),
            at_most: Some(2.0),
            instead: "i".into(),
            ..ClaimSpec::default()
        };
        assert!(reversed
            .validate(1)
            .unwrap_err()
            .contains("at_least ≤ at_most"));
    }
}
