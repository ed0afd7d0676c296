//! The report's "Failures by kind" table: every failed row grouped by its `fail_kind`
//! (the closed set `driftlab_results::FailKind`, read as data, never parsed from messages),
//! with the experiments it occurs in and one example reason.

use crate::book::Book;
use crate::data::Results;
use driftlab_results::FailKind;
use std::collections::BTreeMap;

/// Failed rows of one kind.
#[derive(Default)]
struct Group<'a> {
    rows: usize,
    /// Failed rows per experiment, in report order.
    experiments: Vec<(&'a str, usize)>,
    /// The first failed row's reason.
    example: &'a str,
}

/// The failed rows of `all`, grouped by kind tag (a row without one: `unknown`).
fn groups(all: &[Results]) -> BTreeMap<&str, Group<'_>> {
    let mut out: BTreeMap<&str, Group> = BTreeMap::new();
    for res in all {
        for r in res.runs.iter().filter(|r| !r.ok()) {
            let g = out
                .entry(r.fail_kind.as_deref().unwrap_or("unknown"))
                .or_default();
            g.rows += 1;
            if g.example.is_empty() {
                g.example = r.fail_reason.as_deref().unwrap_or_default();
            }
            match g.experiments.last_mut() {
                Some((name, n)) if *name == res.name => *n += 1,
                _ => g.experiments.push((&res.name, 1)),
            }
        }
    }
    out
}

/// Write the section: a sentence with the totals and the table, most frequent kind first.
pub fn write(b: &mut Book, all: &[Results]) {
    let total: usize = all.iter().map(|r| r.runs.len()).sum();
    let mut groups: Vec<(&str, Group)> = groups(all).into_iter().collect();
    groups.sort_by(|a, b| b.1.rows.cmp(&a.1.rows).then(a.0.cmp(b.0)));
    let refused: usize = groups
        .iter()
        .filter(|(k, _)| FailKind::tag_is_refusal(k))
        .map(|(_, g)| g.rows)
        .sum();
    let failed: usize = groups.iter().map(|(_, g)| g.rows).sum::<usize>() - refused;
    b.heading("Failures by kind", 1);
    b.paragraph(&format!(
        "{failed} of {total} rows failed, and {refused} were refused: the method declined the problem before \
         stepping (its form or a property it lacks, as RATTLE declines unilateral rows; kinds `unsupported-form` and \
         `incompatible` below), which is a statement of scope, not a failure. Each failed row keeps its typed reason as data: one \
         tag of a closed set (`fail_kind`, docs/bad-inputs.md in the repository), \
         so the failures group without parsing messages; its table of kinds says \
         what each means. A failure is a measurement — the limit of a method on a problem at \
         a step size — not a fault of the run."
    ));
    let rows: Vec<Vec<String>> = groups
        .iter()
        .map(|(kind, g)| {
            let known = if FailKind::from_tag(kind).is_some() {
                ""
            } else {
                " (not a known kind)"
            };
            let mut where_: Vec<String> = g
                .experiments
                .iter()
                .take(3)
                .map(|(n, k)| format!("{n} ({k})"))
                .collect();
            if g.experiments.len() > 3 {
                where_.push(format!("{} more", g.experiments.len() - 3));
            }
            // The table wraps its cells: the whole message, never cut.
            let example = g.example.to_string();
            vec![
                format!("{kind}{known}"),
                g.rows.to_string(),
                where_.join(", "),
                example,
            ]
        })
        .collect();
    b.table(
        &["fail_kind", "rows", "experiments (rows)", "example"],
        &rows,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Run;

    fn failed(kind: &str, reason: &str) -> Run {
        Run {
            status: "failed".into(),
            fail_kind: Some(kind.into()),
            fail_reason: Some(reason.into()),
            ..Run::default()
        }
    }

    #[test]
    fn failures_group_by_kind_per_experiment() {
        let a = Results {
            name: "a".into(),
            runs: vec![
                failed("linear-solve", "rank 23 of 24"),
                Run {
                    status: "ok".into(),
                    ..Run::default()
                },
                failed("diverged", "‖q‖ = 4e6"),
                failed("linear-solve", "second"),
            ],
            ..Results::default()
        };
        let b = Results {
            name: "b".into(),
            runs: vec![failed("linear-solve", "third")],
            ..Results::default()
        };
        let all = [a, b];
        let g = groups(&all);
        assert_eq!(g.len(), 2);
        let ls = &g["linear-solve"];
        assert_eq!(ls.rows, 3);
        assert_eq!(ls.experiments, vec![("a", 2), ("b", 1)]);
        assert_eq!(ls.example, "rank 23 of 24");
        assert_eq!(g["diverged"].rows, 1);
    }
}
