//! What goes into `report.pdf` / `index.md`, in order: title and provenance, the
//! recommendation page (per problem class: the setting that meets the class's accuracy
//! target on every instance at the least step time, its ties, the best setting of another
//! method; [`crate::verdicts`]), the published-reference
//! comparisons, the orders table over the whole catalog, the Baumgarte tuning guide, one
//! section per experiment (question, equations and citations from the catalog metadata
//! stored in its manifest, runs table, figures), and the provenance appendix. Every number
//! comes from the stored runs. Which experiments are problem classes, their accuracy
//! measures, targets and reference notes come from each experiment's `[report]` table
//! (`driftlab_results::report_spec`), stored with its spec in `manifest.json`: this module
//! knows no experiment by name.

use crate::book::Book;
use crate::data::{Results, Run};
use crate::error::ReportError;
use crate::sections::{Context, SECTIONS};
use driftlab_results::report_spec::ReportSpec;
use driftlab_results::schema::runs;
use std::path::{Path, PathBuf};

/// The position of the runs column `name` in [`runs::MEASURES`] (each [`Run`] carries
/// their values in that order); `None` for a name the spec check would have refused.
pub fn measure_of(name: &str) -> Option<usize> {
    runs::MEASURES.iter().position(|m| m.name == name)
}

fn e3(x: Option<f64>) -> String {
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
        r.measures
            .get(self.measure)
            .copied()
            .flatten()
            .filter(|x| x.is_finite())
    }
    /// Whether a successful run meets the target (failed runs never do: `None`).
    fn meets(&self, r: &Run) -> Option<bool> {
        if !r.ok {
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
    fn better(&self, a: f64, b: f64) -> bool {
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
fn target_number(t: f64) -> String {
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

fn s(v: &serde_json::Value, k: &str) -> String {
    match &v[k] {
        serde_json::Value::String(x) => x.clone(),
        serde_json::Value::Null => "—".into(),
        other => other.to_string(),
    }
}

/// Build `report.pdf`, `index.md` and `index.html` under `root` from the loaded experiments: the
/// sections in report order, then both files.
pub fn write_report(
    root: &Path, all: &[Results], unfinished: &[crate::folders::Unfinished],
) -> Result<ReportFiles, ReportError> {
    let mut c = Context::new(root, all, unfinished);
    let foot = footer(all, &c.first);
    let mut b = Book::new(&foot);
    for section in SECTIONS {
        (section.write)(&mut b, &mut c)?;
    }
    write_book(root, b, &foot)
}

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

/// The folders whose runs are not in the report, each with why (a run still being
/// written, an interrupted sweep) and what to do.
pub(crate) fn unfinished_note(b: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    let unfinished = c.unfinished;
    if unfinished.is_empty() {
        return Ok(());
    }
    let rows: Vec<Vec<String>> = unfinished
        .iter()
        .map(|u| {
            let name = u.dir.file_name().map_or_else(
                || u.dir.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            vec![name, u.why.clone()]
        })
        .collect();
    b.paragraph(&format!(
        "Not in this report: {} experiment folder(s) whose run is not complete; none of their rows, orders or figures \
         appear below.",
        rows.len()
    ));
    b.table(&["experiment", "state"], &rows);
    Ok(())
}

/// The page footer: driftlab version, git revision (dirty if any experiment ran from a
/// dirty tree), build profile, machine and finish time, from the first experiment's manifest.
fn footer(all: &[Results], first: &serde_json::Value) -> String {
    let dirty = all
        .iter()
        .any(|r| manifest(&r.dir)["git_dirty"].as_bool().unwrap_or(false));
    let rev = s(first, "git_revision");
    format!(
        "driftlab {} · git {}{} · {} · {} ({} CPUs) · {}",
        s(first, "driftlab_version"),
        rev.chars().take(10).collect::<String>(),
        if dirty { " (dirty)" } else { "" },
        s(first, "build_profile"),
        s(first, "cpu"),
        s(first, "logical_cpus"),
        s(first, "finished")
    )
}

/// Title page: what the report is generated from, the size of the runs, and the reading guide.
pub(crate) fn title_section(b: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    let (all, first) = (c.all, &c.first);
    b.heading("driftlab — constraint stabilization methods compared", 1);
    b.paragraph(&format!(
        "Generated by `driftlab report` from the stored results of {} experiments (runs.parquet, orders.csv, manifest.json); \
         nothing in this document is typed by hand except the prose that explains the rules. Size of the runs: {}. Timings \
         are wall times of single cells on the machine in the footer and are comparable within this report only.",
        all.len(),
        s(first, "size")
    ));
    let cells: usize = all.iter().map(|r| r.runs.len()).sum();
    let failed: usize = all
        .iter()
        .map(|r| r.runs.iter().filter(|x| !x.ok).count())
        .sum();
    b.paragraph(&format!(
        "In numbers: {cells} runs, {failed} of them failed (each a row with its reason and kind; \
         the failures section counts them by kind); {}.",
        crate::orders_table::counts(all)
    ));
    b.paragraph(
        "Reading guide: the main body answers “which method, which parameters, at what cost” per problem class, then checks \
         every claim of the sources against the measurements, gives the observed orders, the published references, a \
         Baumgarte tuning guide, the failures by kind, and each experiment's key figures. Appendix A says where every fitted \
         order is (index.html, tables/orders.csv), appendix B where every run is (index.html, each experiment's runs.csv) \
         and prints each catalog entry once, appendix C the provenance. The HTML report (index.html) has the same \
         sections with both appendices whole, sortable tables, and every figure.",
    );
    Ok(())
}

/// Recommendations: per problem class (experiments whose `[report]` names a class), the
/// setting that meets the class's target on every instance at the least step time, with
/// its ties and the best setting of another method ([`crate::verdicts`]).
pub(crate) fn recommendations_section(
    b: &mut Book, c: &mut Context<'_>,
) -> Result<(), ReportError> {
    let roles = &c.roles;
    b.heading("Recommendations per problem class", 2);
    b.paragraph(RULE);
    if !roles.iter().any(|(_, r)| r.spec.class.is_some()) {
        b.paragraph(
            "No experiment in this folder declares a problem class ([report] class in its spec).",
        );
        return Ok(());
    }
    // On screen, one sortable table first (on paper the sentences below carry it, and
    // tables/recommendations.* has it for a paper).
    b.set_paper(false);
    b.table(&crate::verdicts::HEADERS, &recommendation_rows(roles));
    b.set_paper(true);
    for (res, role) in roles.iter().filter(|(_, r)| r.spec.class.is_some()) {
        b.heading(role.spec.class.as_deref().unwrap_or_default(), 3);
        b.paragraph(&recommendation(res, role));
    }
    Ok(())
}

/// The recommendation rule, as the report states it.
const RULE: &str = "Rule: a setting (a method with its parameters, its coordinate choice, and its step or tolerance) is \
    recommended for a problem class when its runs succeed and meet the class's target on every instance of the class, at \
    the least step time summed over the instances. Step time is the one cost of this report (recommendations, claims and \
    figures): the method's steps with the loop's checks, without the set-up and the benchmark's own metric evaluation. \
    Every time a recommendation rests on is measured with the cell alone on the machine, five times (after a warm-up run \
    for a cell under a second), and printed as the median with the range of the runs; settings whose ranges overlap are \
    a tie, and neither is called faster. Beside it stands the best setting of another method with its time ratio. Where \
    no setting meets the target on every instance, the best setting of each instance is given instead. Failed runs never \
    qualify (the experiment sections list them with their reasons).";

/// How to put a user's own mechanism through the same comparison, and which of this
/// folder's experiments are such comparisons (their recommendations are in the section
/// before).
pub(crate) fn your_mechanism_section(b: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    let roles = &c.roles;
    b.heading("Your own mechanism", 2);
    b.paragraph(
        "One command compares the stabilizations on a mechanism of your own: driftlab compare-methods FILE.urdf \
         (or an SDF or driftlab TOML model, docs/model-file.md; --root floating for a free base, --size quick for a first look). \
         It checks the file (a bad one is refused with the element, line and fix before anything runs), writes a spec \
         of Baumgarte, projection, generalized-α, RATTLE, projected Gauss s = 2 and Radau IIA in every coordinate \
         choice the model allows (joint, body, natural) into a folder of its own, runs it, and writes its report there, \
         where the rule of the previous section recommends the fastest run whose relative energy error stays within 1e-4; \
         report a folder of several comparisons with driftlab report --dir.",
    );
    let mine: Vec<String> = roles
        .iter()
        .filter_map(|(res, role)| {
            let class = role.spec.class.as_deref()?;
            class
                .starts_with("your mechanism")
                .then(|| format!("{} ({})", res.name, recommendation(res, role)))
        })
        .collect();
    b.paragraph(&if mine.is_empty() {
        "No such comparison is in this folder yet.".to_string()
    } else {
        format!("In this folder: {}", mine.join(" "))
    });
    Ok(())
}

/// The recommendation of one problem class as sentences ([`crate::verdicts`]).
fn recommendation(res: &Results, role: &Role) -> String {
    crate::verdicts::ClassView::of(res, role).map_or_else(
        || format!("Experiment {} declares no target.", res.name),
        |v| v.sentences(res),
    )
}

/// Against references and targets: for every experiment with a `[report]` target or
/// note, the reference note and a table of its runs' measure values against the target.
pub(crate) fn references_section(b: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    let roles = &c.roles;
    b.heading("Against references and targets", 2);
    b.paragraph(
        "Each experiment that declares an accuracy measure in its spec ([report]): the reference it is measured against \
         and that reference's own accuracy (the spec's note, with its source), then every run of the selection — or, for \
         more than 12 runs, the most accurate run of each method variant — with its value and whether it meets the target.",
    );
    // A role without a target or a note (the tuning map) has nothing to compare against.
    for (res, role) in roles
        .iter()
        .filter(|(_, r)| r.spec.target.is_some() || r.spec.note.is_some())
    {
        b.heading(&format!("{} — {}", res.name, role.spec.measure), 3);
        if let Some(n) = &role.spec.note {
            b.paragraph(n);
        }
        let rows: Vec<Vec<String>> = shown_runs(role)
            .iter()
            .map(|r| reference_row(role, r))
            .collect();
        b.table(
            &[
                "problem",
                "method",
                "h",
                &role.spec.measure,
                "wall [s]",
                &role.target_text(),
            ],
            &rows,
        );
    }
    Ok(())
}

/// The runs listed in a references table: all of the role's runs, or for more than 12 the
/// most accurate successful run of each method variant.
fn shown_runs<'a>(role: &Role<'a>) -> Vec<&'a Run> {
    if role.runs.len() <= 12 {
        return role.runs.clone();
    }
    let mut best: Vec<&Run> = Vec::new();
    for r in role.runs.iter().copied().filter(|r| r.ok) {
        let Some(v) = role.value(r) else { continue };
        match best.iter_mut().find(|x| x.variant == r.variant) {
            Some(slot) => {
                if role.value(slot).is_none_or(|bv| role.better(v, bv)) {
                    *slot = r;
                }
            }
            None => best.push(r),
        }
    }
    best
}

/// One row of a references table: problem, variant, step, measure value (or `failed`),
/// wall time and whether the run meets the target.
fn reference_row(role: &Role, r: &Run) -> Vec<String> {
    vec![
        r.problem_key(),
        r.variant.clone(),
        r.step_label(),
        if r.ok {
            role.value(r).map_or("—".into(), |v| format!("{v:.6e}"))
        } else {
            "failed".into()
        },
        format!("{:.3}", r.wall_seconds),
        match role.meets(r) {
            Some(true) => "meets target".into(),
            Some(false) => "misses target".into(),
            None => "—".into(),
        },
    ]
}

/// The recommendation per problem class as table rows ([`crate::verdicts::HEADERS`]).
fn recommendation_rows(roles: &[(&Results, Role)]) -> Vec<Vec<String>> {
    roles
        .iter()
        .filter(|(_, r)| r.spec.class.is_some())
        .filter_map(|(res, role)| Some(crate::verdicts::ClassView::of(res, role)?.row(res)))
        .collect()
}

/// The machine-readable tables of the recommendations, orders and claims:
/// `tables/{recommendations,orders,claims}.{csv,tex}` under the root (files, no pages).
pub(crate) fn write_paper_tables(_: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    let (root, all, roles, verdicts) = (c.root, c.all, &c.roles, &c.verdicts);
    crate::paper_tables::write(
        root,
        "recommendations",
        &crate::verdicts::HEADERS,
        &recommendation_rows(roles),
    )?;
    crate::paper_tables::write(
        root,
        "orders",
        &crate::orders_table::HEADERS,
        &crate::orders_table::rows(all),
    )?;
    crate::claims::write_tables(root, verdicts)?;
    Ok(())
}

/// One experiment's section: its description and findings, the catalog entries of its
/// problems and methods, the runs-and-cost table, its figures and a link to `summary.md`.
fn experiment_section(b: &mut Book, res: &Results) {
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
fn catalog_entries(b: &mut Book, m: &serde_json::Value) {
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
fn file_notes(b: &mut Book, m: &serde_json::Value) {
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
fn runs_table(b: &mut Book, res: &Results) {
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
fn ensemble_table(b: &mut Book, res: &Results) {
    let rows: Vec<Vec<String>> = res
        .runs
        .iter()
        .filter_map(|r| Some((r, r.ensemble?)))
        .map(|(r, e)| {
            vec![
                r.problem_key(),
                r.variant.clone(),
                r.step_label(),
                r.sweep_threads.map_or("—".into(), |k| k.to_string()),
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
fn optima_table(b: &mut Book, res: &Results) {
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
fn experiment_figures(b: &mut Book, res: &Results) {
    let svgs = crate::glance::svgs_of(res);
    let refs: Vec<crate::book::FigureRef> = svgs
        .iter()
        .map(|p| crate::glance::figure_ref(res, p))
        .collect();
    b.set_paper(false);
    b.figures(&refs, 2);
    b.set_paper(true);
}

/// Provenance appendix: per experiment its spec hash, size, git revision, dirty flag,
/// machine, threads and start time; then the compiler, profile and dependency versions.
pub(crate) fn provenance_section(b: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    let (all, first) = (c.all, &c.first);
    b.heading("Appendix C — provenance", 1);
    b.paragraph("Per experiment: the spec's SHA-256, the size it ran at, the git revision and dirty flag of the source the binary was built from (embedded at build time), the machine, the threads running cells side by side, whether the sweep completed (and how often it was resumed, over how many shards), and the start time (UTC).");
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|res| {
            let m = manifest(&res.dir);
            vec![
                res.name.clone(),
                s(&m, "spec_hash").chars().take(16).collect(),
                s(&m, "size"),
                s(&m, "git_revision").chars().take(10).collect(),
                s(&m, "git_dirty"),
                s(&m, "cpu"),
                s(&m, "sweep_threads"),
                run_state(&m),
                s(&m, "started"),
            ]
        })
        .collect();
    b.table(
        &[
            "experiment",
            "spec sha256",
            "size",
            "git",
            "dirty",
            "cpu",
            "threads",
            "status",
            "started",
        ],
        &rows,
    );
    b.paragraph(&format!(
        "Build: {}; {}; dependencies: {}.",
        s(first, "rustc"),
        s(first, "build_profile"),
        first["crate_versions"]
            .as_array()
            .map(|v| v
                .iter()
                .filter_map(|x| x.as_str())
                .collect::<Vec<_>>()
                .join(", "))
            .unwrap_or_default()
    ));
    Ok(())
}

/// `complete` / `running`, with the resumes and shards when there were any (results
/// written before sweeps were journaled have no status: `—`).
fn run_state(m: &serde_json::Value) -> String {
    let mut out = match m["status"].as_str() {
        Some(st) if !st.is_empty() => st.to_string(),
        _ => "—".into(),
    };
    let resumes = m["resumes"].as_u64().unwrap_or(0);
    if resumes > 0 {
        out.push_str(&format!(", resumed {resumes}×"));
    }
    let shards = m["shards"].as_array().map_or(0, Vec::len);
    if shards > 0 {
        out.push_str(&format!(", {shards} shards"));
    }
    out
}

/// The three files of the combined report.
pub struct ReportFiles {
    /// `report.pdf`.
    pub pdf: PathBuf,
    /// `index.md`.
    pub md: PathBuf,
    /// `index.html`.
    pub html: PathBuf,
}

/// Lay out the book and write `report.pdf`, `index.md` (a contents list with page
/// numbers, then the same content as Markdown with PNG figures) and `index.html`.
fn write_book(root: &Path, b: Book, footer: &str) -> Result<ReportFiles, ReportError> {
    let toc: Vec<(usize, String, usize)> = b.toc.clone();
    let laid = b.finish();
    let pdf = root.join("report.pdf");
    crate::pdf::pages_to_pdf(&laid.pages, &pdf)?;
    let mut index = String::from("# driftlab report\n\nThe same content as `report.pdf` and `index.html`, with PNG figures.\n\n## Contents\n\n");
    for (level, title, page) in &toc {
        let at = if *page > 0 {
            format!(" (p. {page})")
        } else {
            " (web only)".into()
        };
        index.push_str(&format!(
            "{}- {title}{at}\n",
            "  ".repeat(level.saturating_sub(1))
        ));
    }
    index.push_str(&laid.md);
    let md = root.join("index.md");
    std::fs::write(&md, index).map_err(|e| ReportError::io(&md, e))?;
    let html = crate::html::write(root, &toc, &laid.html, footer)?;
    Ok(ReportFiles { pdf, md, html })
}

/// The rows whose error columns are null because their reference could not be trusted
/// (outside its domain, or failed its self-check), with the first reason; empty if none.
fn unreferenced(res: &Results) -> String {
    let judged: Vec<&str> = res
        .runs
        .iter()
        .filter_map(|r| r.reference.as_deref())
        .filter(|w| w.starts_with("outside") || w.starts_with("failed"))
        .collect();
    match judged.first() {
        None => String::new(),
        Some(first) => format!(
            " {} rows have no error columns: their reference is {first}.",
            judged.len()
        ),
    }
}

/// What the numbers of one experiment show, stated from its rows: cells and failures
/// (with the failing variants), the most accurate run by the experiment's accuracy
/// measure and the cheapest meeting its target, and how the observed orders compare with
/// the declared.
pub fn findings(res: &Results) -> String {
    let n = res.runs.len();
    let refused = |r: &&Run| {
        r.fail_kind
            .as_deref()
            .is_some_and(driftlab_results::FailKind::tag_is_refusal)
    };
    let declined = res.runs.iter().filter(|r| !r.ok).filter(refused).count();
    let failed: Vec<&Run> = res
        .runs
        .iter()
        .filter(|r| !r.ok)
        .filter(|r| !refused(r))
        .collect();
    let mut out = format!("What the numbers show: {n} cells, {} failed", failed.len());
    if declined > 0 {
        out.push_str(&format!(
            ", {declined} refused (the method does not take the problem's form; not a failure)"
        ));
    }
    if !failed.is_empty() {
        let mut who: Vec<String> = failed.iter().map(|r| r.variant.clone()).collect();
        who.sort();
        who.dedup();
        let shown: Vec<String> = who.iter().take(6).cloned().collect();
        out.push_str(&format!(
            " ({}{})",
            shown.join(", "),
            if who.len() > 6 { ", …" } else { "" }
        ));
    }
    out.push('.');
    out.push_str(&peer_note(res));
    out.push_str(&unreferenced(res));
    out.push_str(&best_and_cheapest(res));
    let declared: Vec<_> = res
        .orders
        .iter()
        .filter(|o| o.expected.is_some() && o.observed.is_some())
        .collect();
    if !declared.is_empty() {
        let within = declared
            .iter()
            .filter(|o| crate::orders_table::verdict(o) == crate::orders_table::Verdict::Matches)
            .count();
        out.push_str(&format!(
            " Observed orders that match the declared (±0.15 from at least 3 points): {within} of {} fits (the others are listed in the orders table with their verdicts).",
            declared.len()
        ));
    }
    out
}

/// Whether the peer simulators the experiment's `[report] peers` names have rows in the
/// folder (rows whose label starts with the simulator's word), and the script that adds
/// them where they do not.
fn peer_note(res: &Results) -> String {
    let Some(spec) = &res.report else {
        return String::new();
    };
    spec.peers
        .iter()
        .map(|p| {
            let word = format!("{} ", p.simulator.to_lowercase());
            let rows = res
                .runs
                .iter()
                .filter(|r| r.variant.to_lowercase().starts_with(&word))
                .count();
            if rows > 0 {
                format!(" {rows} rows of peer {} stand beside driftlab's.", p.simulator)
            } else {
                format!(
                    " Peer {} has no rows in this folder: `{}` runs it on the same cells and adds them.",
                    p.simulator, p.script
                )
            }
        })
        .collect()
}

/// The best run by the first measure any successful run has (scd, position error,
/// energy error, position residual, in that order), and the cheapest run meeting the
/// experiment's target.
fn best_and_cheapest(res: &Results) -> String {
    let mut out = String::new();
    type Measure = (&'static str, bool, fn(&Run) -> Option<f64>);
    let measures: [Measure; 4] = [
        ("scd", true, |r| r.scd),
        ("max position error", false, |r| r.err_q),
        ("max relative energy error", false, |r| {
            r.max_energy_rel_error
        }),
        ("max position residual", false, |r| r.max_pos_residual),
    ];
    let ok: Vec<&Run> = res.runs.iter().filter(|r| r.ok).collect();
    if let Some((name, higher, get)) = measures
        .into_iter()
        .find(|(_, _, g)| ok.iter().any(|r| g(r).is_some_and(f64::is_finite)))
    {
        let val = |r: &Run| get(r).filter(|x| x.is_finite());
        let best = ok
            .iter()
            .copied()
            .filter(|r| val(r).is_some())
            .min_by(|a, b| {
                let (x, y) = (val(a).unwrap_or(f64::NAN), val(b).unwrap_or(f64::NAN));
                if higher {
                    y.total_cmp(&x)
                } else {
                    x.total_cmp(&y)
                }
            });
        // Correct digits beyond what the reference itself supports do not rank runs.
        let limit = (name == "scd")
            .then(|| crate::verdicts::reference_digits(&ok))
            .flatten();
        let saturated = |v: f64| limit.is_some_and(|l| v > l);
        match (best, limit) {
            (Some(b), Some(l)) if saturated(val(b).unwrap_or(f64::NAN)) => {
                let n = ok.iter().filter(|r| val(r).is_some_and(saturated)).count();
                out.push_str(&format!(
                    " {n} run(s) reach beyond the reference's own {l:.1} correct digits, where it cannot rank them (the most: {} at h = {:.1e}, scd = {:.2}).",
                    b.variant,
                    b.h,
                    val(b).unwrap_or(f64::NAN)
                ));
            }
            (Some(b), _) => out.push_str(&format!(
                " Best {name}: {} at h = {:.1e} ({}, {} s step time).",
                b.variant,
                b.h,
                if name == "scd" {
                    format!("{:.2}", val(b).unwrap_or(f64::NAN))
                } else {
                    format!("{:.3e}", val(b).unwrap_or(f64::NAN))
                },
                crate::verdicts::sig3(b.step_seconds)
            )),
            (None, _) => {}
        }
    }
    out.push_str(&cheapest_meeting_target(res));
    out
}

/// The cheapest run (step time) that meets the experiment's `[report]` target; nothing
/// without a target (a fastest run regardless of accuracy says nothing).
fn cheapest_meeting_target(res: &Results) -> String {
    let Some(role) = Role::of(res).filter(|r| r.spec.target.is_some()) else {
        return String::new();
    };
    let cheapest = role
        .runs
        .iter()
        .copied()
        .filter(|r| role.meets(r) == Some(true))
        .min_by(|a, b| a.step_seconds.total_cmp(&b.step_seconds));
    match cheapest {
        Some(r) => format!(
            " Cheapest run meeting the target ({}): {} at h = {:.1e} ({} s step time, {} = {}).",
            role.target_text(),
            r.variant,
            r.h,
            crate::verdicts::sig3(r.step_seconds),
            role.spec.measure,
            match role.value(r) {
                Some(v) if role.in_digits() => format!("{v:.2}"),
                v => e3(v),
            }
        ),
        None => format!(" No run meets the target ({}).", role.target_text()),
    }
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
