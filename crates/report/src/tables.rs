//! `summary.md`: the run table and the orders table of an experiment, in Markdown with
//! links to the figures.

use crate::data::Results;
use crate::error::ReportError;
use std::fmt::Write;
use std::path::{Path, PathBuf};

fn e(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.3e}"))
}

/// Write `summary.md` into `dir`.
pub fn write_summary(res: &Results, dir: &Path) -> Result<PathBuf, ReportError> {
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n\n{}\n", res.name, res.description);
    summary_runs(&mut s, res);
    summary_scored(&mut s, res);
    summary_orders(&mut s, res);
    summary_figures(&mut s, dir);
    let path = dir.join("summary.md");
    std::fs::write(&path, s).map_err(|er| ReportError::io(&path, er))?;
    Ok(path)
}

/// The summary's runs table: one row per run, swept dimensions as extra columns.
fn summary_runs(s: &mut String, res: &Results) {
    let _ = writeln!(s, "## Runs\n");
    let extra = crate::dimensions::swept(res);
    let headers: String = extra.iter().map(|d| format!(" {} |", d.header)).collect();
    let _ = writeln!(s, "| problem | method | h |{headers} status | max ‖Φ‖∞ | max ‖Φ_q v‖∞ | max ‖Φ_q a − γ‖∞ | max energy err | err q | err v | err λ | factorizations | wall [s] |");
    let _ = writeln!(
        s,
        "|---|---|---|{}---|---|---|---|---|---|---|---|---|---|",
        "---|".repeat(extra.len())
    );
    for r in &res.runs {
        let status = r.status_text();
        let values: String = extra
            .iter()
            .map(|d| format!(" {} |", (d.value)(r)))
            .collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} |{values} {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3} |",
            r.problem_key(),
            r.variant,
            r.step_label(),
            status,
            e(r.max_pos_residual),
            e(r.max_vel_residual),
            e(r.max_acc_residual),
            e(r.max_energy_rel_error),
            e(r.err_q),
            e(r.err_v),
            e(r.err_lambda),
            r.factorizations,
            r.wall_seconds
        );
    }
}

/// The summary's table of runs scored against a published reference (scd), if any.
fn summary_scored(s: &mut String, res: &Results) {
    let scored: Vec<_> = res
        .runs
        .iter()
        .filter(|r| r.scd.is_some_and(f64::is_finite))
        .collect();
    if !scored.is_empty() {
        let _ = writeln!(s, "\n## Against the published reference\n\nscd = −log₁₀ of the largest relative error over the scored components at the reference time (IVP Test Set measure; the problem's `reference` field states how accurate the reference itself is).\n");
        let _ = writeln!(s, "| problem | method | h | scd | wall [s] |");
        let _ = writeln!(s, "|---|---|---|---|---|");
        for r in scored {
            let _ = writeln!(
                s,
                "| {} | {} | {:.3e} | {:.2} | {:.3} |",
                r.problem_key(),
                r.variant,
                r.h,
                r.scd.unwrap_or(f64::NAN),
                r.wall_seconds
            );
        }
    }
}

/// The summary's table of observed orders, if any.
fn summary_orders(s: &mut String, res: &Results) {
    if !res.orders.is_empty() {
        let _ = writeln!(s, "\n## Observed orders\n\nLeast-squares slope of log(err) vs log(h) over the asymptotic range (rule: driftlab-runner `orders`).\n");
        let _ = writeln!(
            s,
            "| problem | method | quantity | observed | declared | h range | points | r² | note |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
        for o in &res.orders {
            let _ = writeln!(
                s,
                "| {} {} | {} | {} | {} | {} | {}–{} | {} | {} | {} |",
                o.problem,
                if o.problem_params == "{}" {
                    ""
                } else {
                    &o.problem_params
                },
                o.variant,
                o.quantity,
                o.observed_order.map_or("—".into(), |v| format!("{v:.3}")),
                o.expected_order.map_or("—".into(), |v| format!("{v}")),
                e(o.h_min),
                e(o.h_max),
                o.points,
                o.r2.map_or("—".into(), |v| format!("{v:.4}")),
                o.note
            );
        }
    }
}

/// Links to the experiment's PNG figures.
fn summary_figures(s: &mut String, dir: &Path) {
    let mut figs: Vec<String> = std::fs::read_dir(dir.join("figures"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| n.ends_with(".png"))
                .collect()
        })
        .unwrap_or_default();
    figs.sort();
    if !figs.is_empty() {
        let _ = writeln!(s, "\n## Figures\n");
        for f in figs {
            let _ = writeln!(s, "![{f}](figures/{f})\n");
        }
    }
}
