//! Claims versus measurements: every `[[claims]]` entry of every experiment
//! (`driftlab_results::claim_spec`) evaluated on that experiment's own rows — the selected
//! rows' measure, aggregated, against the claim's rule — into a verdict: holds, holds with
//! the stated condition, does not hold (with what holds instead), or no data (the
//! selection is empty at this size). The section follows the recommendations; the same
//! table goes to `tables/claims.csv` and `tables/claims.tex` (booktabs, `paper_tables`).

use crate::book::Book;
use crate::data::{Order, Results, Run};
use crate::error::ReportError;
use driftlab_results::claim_spec::{Aggregate, ClaimSpec};
use driftlab_results::schema::runs;
use driftlab_results::table;
use std::path::{Path, PathBuf};

/// One evaluated claim.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Experiment the claim is tested in.
    pub experiment: String,
    /// The claim.
    pub claim: String,
    /// Its source.
    pub source: String,
    /// The measure and its rule, e.g. `newton_iterations (ratio) ≥ 1e2`.
    pub rule: String,
    /// The measured value (`None`: no selected row).
    pub value: Option<f64>,
    /// Rows the value is taken over.
    pub rows: usize,
    /// What the value is: the aggregate, the measure and the selection(s), e.g.
    /// `max step_seconds of [alf, h=1e-2] / max of [rattle, h=1e-2]`.
    pub measured_as: String,
    /// holds / holds if … / does not hold: … / no data.
    pub verdict: String,
}

/// A run's key for `select`: problem, its parameters, variant, parameters, step and the
/// threads inside the cell (`threads=2 `, with its trailing space).
fn run_key(r: &Run) -> String {
    driftlab_results::claim_spec::select_key(
        &r.problem,
        &r.problem_params,
        &r.variant,
        &r.params,
        r.h,
        r.cell_threads(),
    )
}

fn selected<'a>(runs: &'a [Run], texts: &[String]) -> Vec<&'a Run> {
    runs.iter()
        .filter(|r| driftlab_results::claim_spec::selects(&run_key(r), texts))
        .collect()
}

/// The value of a runs measure (a column named by the spec) on one row.
fn run_value(r: &Run, measure: &str) -> Option<f64> {
    table::number(r, runs::COLUMNS, measure).filter(|x| x.is_finite())
}

fn aggregate(mut values: Vec<f64>, how: Aggregate) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some(match how {
        Aggregate::Max => values[values.len() - 1],
        Aggregate::Min => values[0],
        Aggregate::Median => values[values.len() / 2],
    })
}

/// The key of an `optima.csv` row: `problem problem_params method params h=<h:e> alpha=<α:e> `.
fn optimum_key(o: &driftlab_results::schema::optima::Row) -> String {
    format!(
        "{} {} {} {} h={:e} alpha={:e} ",
        o.problem, o.problem_params, o.method, o.params, o.h, o.alpha
    )
}

/// `k_opt` aggregated over the selected optima, or `optima_at_edge`: how many of them
/// have their optimum at an edge of the feasible grid (or none feasible).
fn measured_optima(
    res: &Results, measure: &str, how: Aggregate, texts: &[String],
) -> (Option<f64>, usize) {
    let rows: Vec<_> = res
        .optima
        .iter()
        .filter(|o| {
            let key = optimum_key(o);
            texts.iter().all(|t| key.contains(t.as_str()))
        })
        .collect();
    if measure == "optima_at_edge" {
        let edge = rows
            .iter()
            .filter(|o| o.edge.is_some() || o.k_opt.is_none())
            .count();
        return ((!rows.is_empty()).then_some(edge as f64), rows.len());
    }
    let values: Vec<f64> = rows.iter().filter_map(|o| o.k_opt).collect();
    (aggregate(values, how), rows.len())
}

/// The aggregated measure over one selection, and the rows it came from.
fn measured(
    res: &Results, measure: &str, how: Aggregate, texts: &[String],
) -> (Option<f64>, usize) {
    if let Some(quantity) = measure.strip_prefix("order_") {
        let orders: Vec<&Order> = res
            .orders
            .iter()
            .filter(|o| o.quantity == quantity)
            .filter(|o| {
                let key = o.key();
                texts.iter().all(|t| key.contains(t.as_str()))
            })
            .collect();
        let values: Vec<f64> = orders.iter().filter_map(|o| o.observed_order).collect();
        return (aggregate(values, how), orders.len());
    }
    if measure == "k_opt" || measure == "optima_at_edge" {
        return measured_optima(res, measure, how, texts);
    }
    let rows = selected(&res.runs, texts);
    if measure == "failed_rows" {
        let failed = rows.iter().filter(|r| !r.ok()).count();
        return (
            if rows.is_empty() {
                None
            } else {
                Some(failed as f64)
            },
            rows.len(),
        );
    }
    // A failed row's metrics cover the run up to its failure: they count (an energy error
    // that grew until Newton failed is the measurement the claim is about).
    let values: Vec<f64> = rows.iter().filter_map(|r| run_value(r, measure)).collect();
    (aggregate(values, how), rows.len())
}

/// A quoted value as the prose prints it: orders with two decimals, counts and values
/// from 0.01 to 10⁴ with three significant digits, others as `5.7e-10`; `n/a` when no
/// row matched.
fn quoted(measure: &str, value: Option<f64>) -> String {
    let Some(x) = value.filter(|x| x.is_finite()) else {
        return "n/a".into();
    };
    if measure.starts_with("order_") {
        return format!("{x:.2}");
    }
    let a = x.abs();
    if x == 0.0 {
        "0".into()
    } else if (1e-2..1e4).contains(&a) {
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        let t = format!("{x:.decimals$}");
        if t.contains('.') {
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            t
        }
    } else {
        format!("{x:.1e}")
    }
}

/// `text` with every quote (`driftlab_results::claim_spec::quotes`) replaced by its value
/// on `res`'s rows; a text that does not parse (the runner refuses such specs) is kept.
pub fn fill(res: &Results, text: &str) -> String {
    let Ok(quotes) = driftlab_results::claim_spec::quotes(text) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for q in quotes {
        out.push_str(&text[at..q.span.start]);
        let (num, _) = measured(res, &q.measure, Aggregate::Max, &q.select);
        let value = match &q.against {
            None => num,
            Some(den) => match (num, measured(res, &q.measure, Aggregate::Max, den).0) {
                (Some(a), Some(b)) if b != 0.0 => Some(a / b),
                _ => None,
            },
        };
        out.push_str(&quoted(&q.measure, value));
        at = q.span.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Evaluate one claim on its experiment.
pub fn evaluate(res: &Results, spec: &ClaimSpec) -> Verdict {
    let (mut value, mut rows) = measured(res, &spec.measure, spec.aggregate, &spec.select);
    let mut rule = format!("{} {}", spec.measure, spec.rule());
    let how = format!("{:?}", spec.aggregate).to_lowercase();
    let shown = |texts: &[String]| format!("[{}]", texts.join(", "));
    let mut measured_as = format!("{how} {} of {}", spec.measure, shown(&spec.select));
    if let Some(against) = &spec.against {
        let (base, n) = measured(res, &spec.measure, spec.aggregate, against);
        value = match (value, base) {
            (Some(a), Some(b)) if b != 0.0 => Some(a / b),
            _ => None,
        };
        rows += n;
        measured_as = format!("{measured_as} / {how} of {}", shown(against));
        rule = format!(
            "{} (ratio of the two selections) {}",
            spec.measure,
            spec.rule()
        );
    }
    let verdict = match value {
        None => "no data at this size".to_string(),
        Some(v) if spec.met(v) => match &spec.condition {
            Some(c) => format!("holds if {}", fill(res, c)),
            None => "holds".to_string(),
        },
        Some(_) => format!("does not hold: {}", fill(res, &spec.instead)),
    };
    Verdict {
        experiment: res.name.clone(),
        claim: spec.claim.clone(),
        source: spec.source.clone(),
        rule,
        value,
        rows,
        measured_as,
        verdict,
    }
}

/// Every claim of every experiment, in experiment order.
pub fn all_verdicts(all: &[Results]) -> Vec<Verdict> {
    all.iter()
        .flat_map(|res| res.claims.iter().map(move |c| evaluate(res, c)))
        .collect()
}

fn value_text(v: &Verdict) -> String {
    v.value.map_or("—".into(), |x| format!("{x:.3e}"))
}

/// The report section.
pub fn section(b: &mut Book, verdicts: &[Verdict]) {
    b.heading("Claims versus measurements", 2);
    b.paragraph(
        "Every checkable claim of the seeds and of the papers the experiments reproduce, as a rule over the rows of the \
         experiment that tests it (the spec's [[claims]] table); the value is measured in this run of the experiment and the \
         verdict follows from the rule. A claim that does not hold says what holds instead.",
    );
    let holds = verdicts
        .iter()
        .filter(|v| v.verdict.starts_with("holds"))
        .count();
    let fails = verdicts
        .iter()
        .filter(|v| v.verdict.starts_with("does not"))
        .count();
    b.paragraph(&format!(
        "{} claims: {holds} hold (some with a stated condition), {fails} do not hold, {} without data at this size.",
        verdicts.len(),
        verdicts.len() - holds - fails
    ));
    let rows: Vec<Vec<String>> = verdicts
        .iter()
        .map(|v| {
            vec![
                v.claim.clone(),
                v.source.clone(),
                format!("{}: {}", v.experiment, v.rule),
                format!("{} = {}", value_text(v), v.measured_as),
                v.verdict.clone(),
            ]
        })
        .collect();
    b.table_wrapped(
        &["claim", "source", "experiment: rule", "measured", "verdict"],
        &rows,
        &[0.22, 0.12, 0.17, 0.19, 0.30],
    );
}

/// `tables/claims.csv` and `tables/claims.tex` under `root`.
pub fn write_tables(root: &Path, verdicts: &[Verdict]) -> Result<Vec<PathBuf>, ReportError> {
    let rows: Vec<Vec<String>> = verdicts
        .iter()
        .map(|v| {
            vec![
                v.experiment.clone(),
                v.claim.clone(),
                v.source.clone(),
                v.rule.clone(),
                v.value.map_or(String::new(), |x| format!("{x:e}")),
                v.measured_as.clone(),
                v.rows.to_string(),
                v.verdict.clone(),
            ]
        })
        .collect();
    crate::paper_tables::write(
        root,
        "claims",
        &[
            "experiment",
            "claim",
            "source",
            "rule",
            "value",
            "measured as",
            "rows",
            "verdict",
        ],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(variant: &str, ok: bool, sweeps: u64, err: f64) -> Run {
        runs::Row {
            problem: "ball-stack".into(),
            problem_params: "{\"balls\":20}".into(),
            variant: variant.into(),
            status: if ok { "ok" } else { "failed" }.into(),
            newton_iterations: sweeps,
            err_q: Some(err),
            h: 1e-3,
            ..runs::Row::default()
        }
    }

    fn results() -> Results {
        Results {
            name: "pgs".into(),
            runs: vec![
                run("cold", true, 3726, 1e-13),
                run("warm", true, 4, 1e-15),
                run("stiff", false, 0, f64::NAN),
            ],
            orders: vec![Order {
                problem: "pendulum".into(),
                variant: "gauss [stages=3]".into(),
                quantity: "q".into(),
                observed_order: Some(5.98),
                ..Order::default()
            }],
            ..Results::default()
        }
    }

    fn claim(measure: &str, select: &[&str]) -> ClaimSpec {
        ClaimSpec {
            claim: "c".into(),
            source: "s".into(),
            measure: measure.into(),
            select: select.iter().map(|s| (*s).to_string()).collect(),
            instead: "something else".into(),
            ..ClaimSpec::default()
        }
    }

    #[test]
    fn a_ratio_of_two_selections_decides_the_verdict() {
        let mut c = claim("newton_iterations", &["cold"]);
        c.against = Some(vec!["warm".into()]);
        c.at_least = Some(100.0);
        let v = evaluate(&results(), &c);
        assert_eq!(v.value, Some(3726.0 / 4.0));
        assert_eq!(v.verdict, "holds");
        assert_eq!(
            v.measured_as, "max newton_iterations of [cold] / max of [warm]",
            "the measured value names both selections and the measure"
        );
        c.at_least = Some(1000.0);
        assert_eq!(
            evaluate(&results(), &c).verdict,
            "does not hold: something else"
        );
    }

    #[test]
    fn failed_rows_orders_conditions_and_empty_selections() {
        let mut c = claim("failed_rows", &["\"balls\":20"]);
        c.at_most = Some(0.0);
        let v = evaluate(&results(), &c);
        assert_eq!((v.value, v.rows), (Some(1.0), 3));
        assert!(v.verdict.starts_with("does not hold"));
        let mut o = claim("order_q", &["stages=3"]);
        o.at_least = Some(5.85);
        o.condition = Some("the errors stay above round-off".into());
        assert_eq!(
            evaluate(&results(), &o).verdict,
            "holds if the errors stay above round-off"
        );
        // A claim that an order *is* 6: two-sided, so a lower order fails it as a higher one.
        o.at_most = Some(6.15);
        o.condition = None;
        let two_sided = evaluate(&results(), &o);
        assert!(
            two_sided.rule.contains("in [5.85e0, 6.15e0]"),
            "{}",
            two_sided.rule
        );
        let mut none = claim("err_q", &["no such variant"]);
        none.at_most = Some(1.0);
        assert_eq!(evaluate(&results(), &none).verdict, "no data at this size");
        // A failed row without a value (NaN) does not count; the max is over the rest.
        let mut e = claim("err_q", &[]);
        e.at_most = Some(1e-12);
        assert_eq!(evaluate(&results(), &e).value, Some(1e-13));
    }

    #[test]
    fn quotes_in_the_prose_are_filled_from_the_rows() {
        let res = results();
        assert_eq!(
            fill(&res, "cold needs {newton_iterations | cold} sweeps, {newton_iterations | cold // warm}× warm"),
            "cold needs 3726 sweeps, 932× warm"
        );
        assert_eq!(
            fill(&res, "order {order_q | gauss [stages=3]}"),
            "order 5.98"
        );
        assert_eq!(
            fill(&res, "error {err_q | warm}, none {err_q | nobody}"),
            "error 1.0e-15, none n/a"
        );
        assert_eq!(quoted("err_q", Some(0.14)), "0.14");
        assert_eq!(quoted("err_q", Some(259.4)), "259");
    }
}
