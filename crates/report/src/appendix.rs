//! Appendix B. On paper: where every run is (the HTML report, each experiment's
//! `runs.csv`, `runs.parquet` and `summary.md`) and every catalog entry of the
//! experiments' problems and methods once — its titles as run, equations, source and the
//! experiments that use it — instead of each experiment's runs table re-typeset with its
//! catalog entries (RATTLE's entry was printed 31 times). On screen (index.html,
//! index.md): every experiment's full section, as [`crate::compose`] writes it.

use crate::book::Book;
use crate::error::ReportError;
use crate::sections::context::Context;

/// One catalog entry (a problem or a method id) over every experiment that uses it.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Entry {
    /// `problem` or `method`.
    pub(crate) kind: String,
    /// The catalog id.
    pub(crate) id: String,
    /// Its titles as run (they name the parameters), distinct, in report order.
    pub(crate) titles: Vec<String>,
    /// Its equations, distinct.
    pub(crate) equations: Vec<String>,
    /// Its citations, distinct.
    pub(crate) citations: Vec<String>,
    /// Its notes, distinct.
    pub(crate) notes: Vec<String>,
    /// The experiments that use it, in report order.
    pub(crate) experiments: Vec<String>,
}

fn push_new(list: &mut Vec<String>, v: String) {
    if !v.is_empty() && !list.contains(&v) {
        list.push(v);
    }
}

/// Every catalog entry of `catalogs` (experiment name, its manifest's `catalog` array)
/// once per kind and id: problems first, then methods, each sorted by id.
pub(crate) fn entries(catalogs: &[(String, serde_json::Value)]) -> Vec<Entry> {
    let text = |n: &serde_json::Value, k: &str| n[k].as_str().unwrap_or_default().to_string();
    let mut out: Vec<Entry> = Vec::new();
    for (exp, cat) in catalogs {
        for n in cat.as_array().into_iter().flatten() {
            let (kind, id) = (text(n, "kind"), text(n, "id"));
            if id.is_empty() {
                continue;
            }
            let at = match out.iter().position(|e| e.kind == kind && e.id == id) {
                Some(k) => k,
                None => {
                    out.push(Entry {
                        kind: kind.clone(),
                        id: id.clone(),
                        ..Entry::default()
                    });
                    out.len() - 1
                }
            };
            let e = &mut out[at];
            push_new(&mut e.titles, text(n, "title"));
            push_new(&mut e.equations, text(n, "equations"));
            push_new(&mut e.citations, text(n, "citation"));
            push_new(&mut e.notes, text(n, "note"));
            push_new(&mut e.experiments, exp.clone());
        }
    }
    out.sort_by(|a, b| (a.kind != "problem", &a.id).cmp(&(b.kind != "problem", &b.id)));
    out
}

/// The titles of an entry as one line: the title if it has one; else the words all of
/// them start with, up to a word that ends a clause (`,` or `:`), then each one's rest
/// ("Baumgarte stabilization, …: ξ = 1, ω_n = 20; ξ = 0.8, ω_n = 2"), or all of them.
pub(crate) fn titles_line(titles: &[String]) -> String {
    match titles {
        [] => String::new(),
        [one] => one.clone(),
        [first, rest @ ..] => {
            let words: Vec<&str> = first.split(' ').collect();
            let common = (1..words.len())
                .rev()
                .filter(|&k| words[k - 1].ends_with([',', ':']))
                .map(|k| words[..k].join(" "))
                .find(|p| rest.iter().all(|t| t.starts_with(&format!("{p} "))));
            let Some(common) = common else {
                return titles.join("; ");
            };
            let tails: Vec<&str> = titles.iter().map(|t| t[common.len()..].trim()).collect();
            format!("{common} …: {}", tails.join("; "))
        }
    }
}

/// Appendix A: on paper where every fitted order is (its 438-odd rows, re-typeset, took
/// more pages than the rest of the appendices), on screen the full table
/// ([`crate::orders_table::full_section`]).
pub(crate) fn orders(b: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    b.set_screen(false);
    b.heading("Appendix A — every observed order: where the fits are", 1);
    b.paragraph(&format!(
        "{}. Every fit — experiment, problem, method, quantity, observed and declared order, fitting window, points, \
         r², verdict and why — is in the HTML report (index.html beside this PDF: Appendix A, one sortable table), in \
         tables/orders.csv (and .tex) beside it, and in each experiment's orders.csv. The main body's curated table \
         (Observed orders) gives, per method, the fit with the most points and why a fit does not match.",
        crate::orders_table::counts(c.all)
    ));
    b.set_screen(true);
    b.set_paper(false);
    crate::orders_table::full_section(b, c.all);
    b.set_paper(true);
    Ok(())
}

/// Appendix B (registered in [`crate::sections::SECTIONS`] after the main body).
pub(crate) fn write(b: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    b.set_screen(false);
    b.heading(
        "Appendix B — every experiment: where its runs are; catalog entries",
        1,
    );
    let runs: usize = c.all.iter().map(|r| r.runs.len()).sum();
    b.paragraph(&format!(
        "Every run of the {} experiments ({runs} runs) — parameters, status and reason, residuals, errors, counters \
         and wall time — is in the HTML report (index.html beside this PDF: Appendix B, one sortable table per \
         experiment with every figure of it) and in each experiment's folder: <experiment>/runs.csv (every column), \
         runs.parquet, and summary.md. Below, each problem and method of the catalog that the experiments use, \
         once: its titles as run (they name the parameters), its equations, its source, and the experiments that use it. \
         The seeds are Chinese documents: a section title of one is given here in English translation, in quotes; \
         index.html and index.md give the original.",
        c.all.len()
    ));
    let catalogs: Vec<(String, serde_json::Value)> = c
        .all
        .iter()
        .map(|r| {
            (
                r.name.clone(),
                crate::role::manifest(&r.dir)["catalog"].clone(),
            )
        })
        .collect();
    let all = entries(&catalogs);
    for (kind, title) in [("problem", "Problems"), ("method", "Methods")] {
        let mine: Vec<&Entry> = all.iter().filter(|e| e.kind == kind).collect();
        if mine.is_empty() {
            continue;
        }
        b.heading(&format!("{title} of the catalog ({})", mine.len()), 2);
        for e in mine {
            entry(b, e);
        }
    }
    b.set_screen(true);
    b.set_paper(false);
    crate::sections::experiment::experiments_appendix(b, c)?;
    b.set_paper(true);
    Ok(())
}

/// One catalog entry on paper.
fn entry(b: &mut Book, e: &Entry) {
    b.heading(&format!("{} {}", e.kind, e.id), 3);
    b.paragraph(&titles_line(&e.titles));
    for eq in &e.equations {
        b.pre(eq);
    }
    b.paragraph(&format!(
        "Source: {}. {} Used in: {}.",
        e.citations.join("; "),
        e.notes
            .iter()
            .map(|n| format!("{n}."))
            .collect::<Vec<_>>()
            .join(" "),
        e.experiments.join(", ")
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_entry_once_with_its_titles_and_experiments() {
        let cat = |t: &str| {
            json!([
                {"kind": "problem", "id": "pendulum", "title": "Pendulum", "equations": "Φ = x² + y² − ℓ²", "citation": "c", "note": "n"},
                {"kind": "method", "id": "rattle", "title": "RATTLE", "equations": "e", "citation": "c", "note": "n"},
                {"kind": "method", "id": "baumgarte", "title": t, "equations": "e", "citation": "c", "note": "n"}
            ])
        };
        let catalogs = vec![
            (
                "a".to_string(),
                cat("Baumgarte stabilization, ξ = 1, ω_n = 20"),
            ),
            (
                "b".to_string(),
                cat("Baumgarte stabilization, ξ = 0.8, ω_n = 2"),
            ),
        ];
        let e = entries(&catalogs);
        let ids: Vec<&str> = e.iter().map(|x| x.id.as_str()).collect();
        assert_eq!(ids, vec!["pendulum", "baumgarte", "rattle"]);
        assert_eq!(e[2].experiments, vec!["a", "b"]);
        assert_eq!(e[2].titles.len(), 1);
        assert_eq!(
            titles_line(&e[1].titles),
            "Baumgarte stabilization, …: ξ = 1, ω_n = 20; ξ = 0.8, ω_n = 2"
        );
    }
}
