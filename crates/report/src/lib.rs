//! # driftlab-report
//!
//! Figures and tables drawn **only** from stored results (`runs.parquet`,
//! `traces.parquet`, `orders.csv`): this crate links no solver, method or problem code.
//!
//! For every experiment folder it writes `figures/` with, per figure, a PNG, an SVG and a
//! one-page PDF (svg2pdf, text kept as text in an embedded DejaVu Sans subset), and a
//! `summary.md` with the run and order tables; over all folders, the combined
//! `report.pdf` and `index.md` ([`compose`]).
//!
//! Fonts: no system font is used. DejaVu Sans (crate `dejavu`) is registered with
//! plotters' `ab_glyph` renderer for the PNGs and loaded into the font database that
//! svg2pdf uses for the PDFs.

mod appendix;
pub mod book;
pub mod check;
mod cjk;
pub mod claims;
pub mod compose;
pub mod data;
pub mod dimensions;
pub mod error;
pub mod failures;
pub mod figures;
pub mod findings;
pub mod folders;
pub mod glance;
pub mod html;
pub mod metrics;
pub mod orders_table;
pub mod paper_tables;
pub mod pdf;
pub mod role;
pub mod scaling;
pub mod sections;
pub mod soft_audit;
pub mod solref_check;
pub mod style;
pub mod tables;
pub mod tuning;
pub mod verdicts;

pub use error::ReportError;

use std::path::{Path, PathBuf};

/// Build the figures and tables of one experiment folder; returns the files written.
pub fn report_experiment(dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let results = data::Results::load(dir)?;
    let colours = style::Colours::new(
        results
            .runs
            .iter()
            .map(|r| (r.method.as_str(), r.variant.as_str())),
    );
    write_experiment(&results, &colours)
}

fn write_experiment(
    results: &data::Results, colours: &style::Colours,
) -> Result<Vec<PathBuf>, ReportError> {
    style::register_fonts();
    let dir = results.dir.as_path();
    let fig_dir = dir.join("figures");
    // Figures are derived data: start from an empty folder so that a figure a previous
    // run drew (another h, a removed method) cannot slip into the report.
    if fig_dir.exists() {
        std::fs::remove_dir_all(&fig_dir).map_err(|e| ReportError::io(&fig_dir, e))?;
    }
    std::fs::create_dir_all(&fig_dir).map_err(|e| ReportError::io(&fig_dir, e))?;
    let mut files = figures::write(results, &fig_dir, colours)?;
    files.push(tables::write_summary(results, dir)?);
    Ok(files)
}

/// What [`report_all`] made.
#[derive(Debug, Default)]
pub struct Made {
    /// Per drawn experiment (and `report` for the combined report), the files written.
    pub files: Vec<(String, Vec<PathBuf>)>,
    /// Folders not drawn: runs still being written or interrupted, with why.
    pub unfinished: Vec<folders::Unfinished>,
}

/// Build every experiment folder under `root` that holds a complete run, and the
/// combined report over them; folders whose run is being written or was interrupted are
/// named in the report and in [`Made::unfinished`], never drawn. A root without a complete
/// run is an error ([`ReportError::Nothing`]) naming what it holds.
pub fn report_all(root: &Path) -> Result<Made, ReportError> {
    let survey = folders::survey(root)?;
    if survey.complete.is_empty() {
        return Err(ReportError::Nothing {
            root: root.display().to_string(),
            unfinished: survey
                .unfinished
                .iter()
                .map(|u| format!("{}: {}", u.dir.display(), u.why))
                .collect(),
        });
    }
    let all: Vec<data::Results> = survey
        .complete
        .iter()
        .map(|(d, _)| data::Results::load(d))
        .collect::<Result<_, _>>()?;
    let colours = style::Colours::new(all.iter().flat_map(|r| {
        r.runs
            .iter()
            .map(|x| (x.method.as_str(), x.variant.as_str()))
    }));
    let written = in_parallel(&all, |r| write_experiment(r, &colours));
    let mut files: Vec<(String, Vec<PathBuf>)> = all
        .iter()
        .zip(written)
        .map(|(r, files)| Ok((r.name.clone(), files?)))
        .collect::<Result<_, ReportError>>()?;
    let f = compose::write_report(root, &all, &survey.unfinished)?;
    files.push(("report".into(), vec![f.pdf, f.md, f.html]));
    Ok(Made {
        files,
        unfinished: survey.unfinished,
    })
}

/// `f` of every item, on as many scoped threads as the machine has cores (at most one per
/// item), results in the items' order. The experiments' figures are independent of each
/// other; the combined report is composed after them.
pub(crate) fn in_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len())
        .max(1);
    let f = &f;
    let mut slots: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                scope.spawn(move || {
                    (w..items.len())
                        .step_by(workers)
                        .map(|i| (i, f(&items[i])))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    slots.sort_by_key(|(i, _)| *i);
    slots.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn in_parallel_keeps_the_order() {
        let items: Vec<u64> = (0..37).collect();
        let out = super::in_parallel(&items, |x| x * x);
        assert_eq!(out, items.iter().map(|x| x * x).collect::<Vec<_>>());
    }
}
