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
use crate::data::Results;
use crate::error::ReportError;
use crate::role::{manifest, s};
use crate::sections::context::Context;
use crate::sections::SECTIONS;
use std::path::{Path, PathBuf};

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
