//! The experiments appendix: one section per experiment (its question, the catalog's
//! equations and citations from its manifest, what reading its model files noted, its
//! runs, ensemble and optima tables, figures, and the findings read from its rows).

use crate::book::Book;
use crate::data::Results;
use crate::error::ReportError;
use crate::role::{e3, manifest, s};
use crate::sections::context::Context;

/// Appendix B: every experiment's section, after the main body.
pub(crate) fn experiments_appendix(b: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    b.heading(
        "Appendix B — every experiment: runs, catalog entries, figures",
        1,
    );
    b.paragraph(&format!(
        "The main body ends on page {}. Per experiment: its question, the catalog entries of its problems and \
         methods, and every run with its cost; the HTML report (index.html) adds every figure of the experiment.",
        c.main_pages
    ));
    for res in c.all {
        experiment_section(b, res);
    }
    Ok(())
}

/// One experiment's section: its description and findings, the catalog entries of its
/// problems and methods, the runs-and-cost table, its figures and a link to `summary.md`.
pub(crate) fn experiment_section(b: &mut Book, res: &Results) {
    b.heading(&format!("{} — runs, catalog, figures", res.name), 2);
    b.paragraph(&res.description);
    let m = manifest(&res.dir);
    catalog_entries(b, &m);
    file_notes(b, &m);
    runs_table(b, res);
    crate::scaling::table(b, res);
    ensemble_table(b, res);
    optima_table(b, res);
    experiment_figures(b, res);
    b.link_only(
        &format!("Full tables: {}/summary.md", res.name),
        &format!("{}/summary.md", res.name),
    );
}

/// The catalog metadata stored in an experiment's manifest: per problem, then per method,
/// its title, equations, citation and note.
pub(crate) fn catalog_entries(b: &mut Book, m: &serde_json::Value) {
    if let Some(cat) = m["catalog"].as_array() {
        for kind in ["problem", "method"] {
            for n in cat.iter().filter(|n| n["kind"] == kind) {
                b.heading(&format!("{kind} {}: {}", s(n, "id"), s(n, "title")), 3);
                b.pre(&s(n, "equations"));
                b.paragraph(&format!("Source: {}. {}", s(n, "citation"), s(n, "note")));
            }
        }
    }
}

/// The notes of one file shown in its experiment's section (the rest stay in the manifest).
const FILE_NOTES_SHOWN: usize = 8;

/// What reading the experiment's model and data files skipped, kept as published or left
/// out (the manifest's `datasets` notes: an MJCF model's "contact is not simulated here",
/// an element without dynamics), once per file, so that every row of the experiment is
/// read with them.
pub(crate) fn file_notes(b: &mut Book, m: &serde_json::Value) {
    for d in m["datasets"].as_array().into_iter().flatten() {
        let notes: Vec<&str> = d["notes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| n.as_str())
            .collect();
        if notes.is_empty() {
            continue;
        }
        let more = match notes.len().saturating_sub(FILE_NOTES_SHOWN) {
            0 => String::new(),
            k => format!("; and {k} more (all in the experiment's manifest.json)"),
        };
        b.paragraph(&format!(
            "Reading {} noted, for every row that uses it: {}{more}.",
            s(d, "file"),
            notes[..notes.len().min(FILE_NOTES_SHOWN)].join("; ")
        ));
    }
}

/// The "Runs and cost" table of an experiment: one row per run with status, residual,
/// energy error, accuracy (scd or error in q), counters and wall time, and a column for
/// every dimension the spec sweeps beyond problem, method and step
/// ([`crate::dimensions::swept`]).
pub(crate) fn runs_table(b: &mut Book, res: &Results) {
    let extra = crate::dimensions::swept(res);
    let rows: Vec<Vec<String>> = res
        .runs
        .iter()
        .map(|r| {
            let mut row = vec![r.problem_key(), r.variant.clone(), r.step_label()];
            row.extend(extra.iter().map(|d| (d.value)(r)));
            row.extend([
                r.status_text(),
                e3(r.max_pos_residual),
                e3(r.max_energy_rel_error),
                if r.scd.is_some() {
                    r.scd.map_or("—".into(), |x| format!("scd {x:.2}"))
                } else {
                    e3(r.err_q)
                },
                format!("{}", r.steps),
                format!("{}", r.factorizations),
                format!("{}", r.newton_iterations),
                format!("{:.3}", r.wall_seconds),
            ]);
            row
        })
        .collect();
    let mut headers = vec!["problem", "method", "h"];
    headers.extend(extra.iter().map(|d| d.header));
    headers.extend([
        "status",
        "max‖Φ‖",
        "energy",
        "err q / scd",
        "steps",
        "factor.",
        "Newton",
        "wall [s]",
    ]);
    b.heading("Runs and cost", 3);
    b.table(&headers, &rows);
}

/// The "Ensembles" table: per ensemble row, the distribution over its members of the
/// drift (unperturbed ‖Φ‖∞, each member's max) and the relative energy error, the
/// failures, and the throughput on the threads that ran the members.
pub(crate) fn ensemble_table(b: &mut Book, res: &Results) {
    let rows: Vec<Vec<String>> = res
        .runs
        .iter()
        .filter_map(|r| Some((r, r.ensemble_stats()?)))
        .map(|(r, e)| {
            vec![
                r.problem_key(),
                r.variant.clone(),
                r.step_label(),
                r.batch_threads().map_or("—".into(), |k| k.to_string()),
                format!("{}/{}", e.failures, e.members),
                e3(e.drift[0]),
                e3(e.drift[1]),
                e3(r.max_pos_residual),
                e3(e.energy[0]),
                e3(e.energy[1]),
                e3(r.max_energy_rel_error),
                e.throughput.map_or("—".into(), |x| format!("{x:.3e}")),
            ]
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    b.heading("Ensembles: distributions over members and throughput", 3);
    b.paragraph("Per ensemble: failed members of all; each member's max drift ‖Φ‖∞ on the unperturbed constraints and max relative energy error, as median and 95th percentile (nearest rank) over the members that reached t_end and max over all members; rollout steps per second with the members side by side on the given threads (median of the spec's repeats).");
    b.table(
        &[
            "problem",
            "method",
            "h",
            "threads",
            "failed",
            "drift med",
            "drift p95",
            "drift max",
            "energy med",
            "energy p95",
            "energy max",
            "steps/s",
        ],
        &rows,
    );
}

/// The "Optima" table: per searched group and α, the grid minimum of the expected loss,
/// its parabolic refinement, and the losses there (`optima.csv`).
pub(crate) fn optima_table(b: &mut Book, res: &Results) {
    if res.optima.is_empty() {
        return;
    }
    let rows: Vec<Vec<String>> = res
        .optima
        .iter()
        .map(|o| {
            vec![
                format!("{} {}", o.problem, o.method),
                format!("{:e}", o.h),
                o.parameter.clone(),
                format!("{}", o.alpha),
                format!("{}/{}", o.feasible, o.candidates),
                o.k_grid.map_or("—".into(), |x| format!("{x:e}")),
                o.k_opt.map_or("—".into(), |x| format!("{x:.4e}")),
                o.edge.clone().unwrap_or_default(),
                e3(o.task),
                e3(o.constraint),
            ]
        })
        .collect();
    b.heading(
        "Optima: the parameter that minimizes E[L_task] + α E[L_c]",
        3,
    );
    b.paragraph("Per group of ensembles that differ only in the searched parameter (seed 001 §3.6.2): the feasible grid values (every member reached t_end), the grid minimum, the minimizer of the parabola in log k through it and its neighbours, whether the minimum sits at an edge of the feasible grid, and the expected task and constraint losses (means over the members) at the grid minimum.");
    b.table(
        &[
            "problem, method",
            "h",
            "parameter",
            "α",
            "feasible",
            "k grid",
            "k opt",
            "edge",
            "E[L_task]",
            "E[L_c]",
        ],
        &rows,
    );
}

/// Every figure of an experiment (web only: the main body shows its key figures).
pub(crate) fn experiment_figures(b: &mut Book, res: &Results) {
    let svgs = crate::glance::svgs_of(res);
    let refs: Vec<crate::book::FigureRef> = svgs
        .iter()
        .map(|p| crate::glance::figure_ref(res, p))
        .collect();
    b.set_paper(false);
    b.figures(&refs, 2);
    b.set_paper(true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_file_s_notes_reach_its_experiment_section_once_and_capped() {
        let notes: Vec<String> = (1..=10).map(|k| format!("note {k}")).collect();
        let m = serde_json::json!({"datasets": [
            {"file": "datasets/mjcf/x.xml", "notes": notes},
            {"file": "models/quiet.xml", "notes": []},
        ]});
        let mut b = Book::new("test");
        file_notes(&mut b, &m);
        let md = b.finish().md;
        assert!(md.contains(
            "Reading datasets/mjcf/x.xml noted, for every row that uses it: note 1; note 2;"
        ));
        assert!(
            md.contains("note 8; and 2 more (all in the experiment's manifest.json)."),
            "{md}"
        );
        assert!(!md.contains("note 9") && !md.contains("quiet.xml"), "{md}");
        file_notes(&mut Book::new("old"), &serde_json::json!({}));
    }
}
