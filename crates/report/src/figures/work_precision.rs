//! The work–precision figure of one problem: accuracy against CPU time, log–log, one
//! curve per method variant over its step sizes.

use super::common::{variants_of, MAX_CURVES};
use super::{Figure, Line, Panel, Stroke};
use crate::data::Run;
use crate::style::{slug, Colours, FIG_W};

/// Work–precision: accuracy against CPU time, log–log, one curve per method variant over
/// its step sizes; failed cells are marked at their wall time at the worst accuracy shown (an
/// accuracy they never delivered), not dropped. Accuracy is `scd` where a published
/// reference exists (higher is better), else the max position error against the exact
/// solution, else the max relative energy error (conservative problems without one).
pub(super) fn work_precision(key: &str, runs: &[&Run], colours: &Colours) -> Option<Figure> {
    type Acc = (&'static str, bool, fn(&Run) -> Option<f64>);
    let candidates: [Acc; 3] = [
        ("scd: correct digits at t_ref", false, |r| r.scd),
        ("max_t ‖q − q_exact‖∞", true, |r| r.err_q),
        ("max_t |H − H₀| / scale (energy error)", true, |r| {
            r.max_energy_rel_error
        }),
    ];
    let (ylabel, log_y, get) = candidates.into_iter().find(|(_, _, g)| {
        runs.iter()
            .filter(|r| r.ok)
            .filter_map(|r| g(r))
            .any(|x| x.is_finite() && x > 0.0)
    })?;
    let variants = variants_of(runs);
    // Only worth a figure when some variant has at least two runs (a curve), and not for
    // parameter sweeps (their figures are the sweep and map figures).
    if variants.len() > MAX_CURVES
        || !variants
            .iter()
            .any(|v| runs.iter().filter(|r| &r.variant == v).count() >= 2)
    {
        return None;
    }
    let good: Vec<f64> = runs
        .iter()
        .filter(|r| r.ok)
        .filter_map(|r| get(r))
        .filter(|x| x.is_finite() && (!log_y || *x > 0.0))
        .collect();
    let top = if log_y {
        good.iter().copied().fold(0.0_f64, f64::max)
    } else {
        good.iter().copied().fold(f64::INFINITY, f64::min)
    };
    let lines = variants
        .iter()
        .map(|v| work_precision_line(v, runs, get, log_y, top, colours))
        .collect();
    Some(Figure {
        stem: format!("work_precision_{}", slug(key)),
        panels: vec![Panel {
            title: format!(
                "Work–precision — {key} (×: failed cell, drawn at the worst accuracy shown)"
            ),
            xlabel: "CPU (wall) time of the cell [s]".into(),
            ylabel: ylabel.into(),
            log_x: true,
            log_y,
            equal: false,
            lines,
        }],
        width: FIG_W,
        panel_height: 380,
    })
}

/// One variant's work–precision curve: (wall time, accuracy) of its successful runs,
/// its failed runs marked at the worst accuracy shown (`top`).
fn work_precision_line(
    v: &String, runs: &[&Run], get: fn(&Run) -> Option<f64>, log_y: bool, top: f64,
    colours: &Colours,
) -> Line {
    let mine: Vec<&&Run> = runs.iter().filter(|r| &r.variant == v).collect();
    let mut pts: Vec<(f64, f64)> = mine
        .iter()
        .filter(|r| r.ok && r.wall_seconds > 0.0)
        .filter_map(|r| {
            get(r)
                .filter(|x| x.is_finite() && (!log_y || *x > 0.0))
                .map(|y| (r.wall_seconds, y))
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let failed_at = mine
        .iter()
        .filter(|r| !r.ok && r.wall_seconds > 0.0)
        .map(|r| (r.wall_seconds, top))
        .collect();
    Line {
        label: v.clone(),
        colour: colours.of(v),
        points: pts,
        stroke: Stroke::Markers,
        failed_at,
    }
}
