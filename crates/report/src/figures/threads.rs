//! Thread scaling, both kinds (issue 12): the speedup `S(k) = T(1) / T(k)` and the
//! parallel efficiency `E(k) = S(k) / k` against the thread count `k`, with the ideal
//! lines `S = k` and `E = 1`.
//!
//! * **Inside a cell** (spec `threads`, faer's parallelism): `T` is the method's time per
//!   step of the cell, one curve per method variant and problem size, from the first
//!   batch of a side-by-side sweep.
//! * **Cells side by side** (spec `sweep_threads`, the runner's pool): `T` is the wall
//!   time of the whole batch (`batch_seconds`), one curve for the experiment.
//!
//! * **Ensemble members side by side** (spec `[ensemble]` with `sweep_threads`): `T` is
//!   the inverse throughput, seconds per rollout step, one curve per method, problem and h.
//!
//! A figure appears only where some curve has two thread counts or more.

use crate::data::{Results, Run};
use crate::error::ReportError;
use crate::figures::{render, Figure, Line, Panel, Stroke};
use crate::style::{slug, Colours};
use plotters::style::RGBColor;
use std::path::{Path, PathBuf};

/// Points `(threads, value)` of one curve.
type Curve = Vec<(f64, f64)>;

/// `(k, T(k))` points, one per thread count, sorted; the speedup and efficiency curves
/// relative to the smallest count's time scaled by that count (`T(1)` when 1 is there).
fn speedup_and_efficiency(mut pts: Curve) -> Option<(Curve, Curve)> {
    pts.retain(|(k, t)| *k >= 1.0 && t.is_finite() && *t > 0.0);
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Thread counts are integers: one point per count.
    pts.dedup_by(|a, b| a.0.total_cmp(&b.0).is_eq());
    let &(k0, t0) = pts.first()?;
    if pts.len() < 2 {
        return None;
    }
    let speedup: Vec<(f64, f64)> = pts.iter().map(|&(k, t)| (k, k0 * t0 / t)).collect();
    let efficiency = speedup.iter().map(|&(k, s)| (k, s / k)).collect();
    Some((speedup, efficiency))
}

/// The method's time per step.
fn per_step(r: &Run) -> f64 {
    r.step_seconds / r.steps.max(1) as f64
}

/// In-cell curves: per (variant, problem, problem parameters, h) of the first batch, the
/// successful cells' time per step against their faer threads.
fn in_cell(runs: &[&Run], colours: &Colours) -> (Vec<Line>, Vec<Line>) {
    let first_batch = runs.iter().filter_map(|r| r.batch_threads()).min();
    let batch: Vec<&Run> = runs
        .iter()
        .copied()
        .filter(|r| r.ok() && r.batch_threads() == first_batch)
        .collect();
    let mut keys: Vec<(String, String, String, u64)> = batch
        .iter()
        .map(|r| {
            (
                r.variant.clone(),
                r.problem.clone(),
                r.problem_params.clone(),
                r.h.to_bits(),
            )
        })
        .collect();
    keys.sort();
    keys.dedup();
    let (mut s_lines, mut e_lines) = (Vec::new(), Vec::new());
    for (variant, problem, params, h) in keys {
        let pts = batch
            .iter()
            .filter(|r| r.variant == variant && r.problem == problem && r.problem_params == params)
            .filter(|r| r.h.to_bits() == h)
            .map(|r| (r.cell_threads() as f64, per_step(r)))
            .collect();
        let Some((s, e)) = speedup_and_efficiency(pts) else {
            continue;
        };
        let label = format!("{variant}, {problem} {params}");
        let colour = colours.of(&variant);
        s_lines.push(markers(&label, colour, s));
        e_lines.push(markers("", colour, e));
    }
    (s_lines, e_lines)
}

/// Ensemble curves: per (variant, problem, h), the time per rollout step (the inverse
/// throughput) against the threads running the members side by side.
fn ensembles(runs: &[&Run], colours: &Colours) -> (Vec<Line>, Vec<Line>) {
    let rows: Vec<&Run> = runs
        .iter()
        .copied()
        .filter(|r| r.ensemble_stats().is_some())
        .collect();
    let mut keys: Vec<(String, String, u64)> = rows
        .iter()
        .map(|r| (r.variant.clone(), r.problem_key(), r.h.to_bits()))
        .collect();
    keys.sort();
    keys.dedup();
    let (mut s_lines, mut e_lines) = (Vec::new(), Vec::new());
    for (variant, problem, h) in keys {
        let pts = rows
            .iter()
            .filter(|r| r.variant == variant && r.problem_key() == problem && r.h.to_bits() == h)
            .filter_map(|r| {
                let k = r.batch_threads()? as f64;
                let throughput = r.ensemble_stats()?.throughput?;
                Some((k, 1.0 / throughput))
            })
            .collect();
        let Some((s, e)) = speedup_and_efficiency(pts) else {
            continue;
        };
        let label = format!("{variant}, {problem}, h = {:.0e}", f64::from_bits(h));
        let colour = colours.of(&variant);
        s_lines.push(markers(&label, colour, s));
        e_lines.push(markers("", colour, e));
    }
    (s_lines, e_lines)
}

/// Side-by-side curve: the batch wall time against the cells run side by side.
fn side_by_side(runs: &[&Run]) -> (Vec<Line>, Vec<Line>) {
    // Ensembles run one at a time after the side-by-side part: not in the batch time.
    let pts = runs
        .iter()
        .filter(|r| r.ensemble_stats().is_none())
        .filter_map(|r| Some((r.batch_threads()? as f64, r.batch_time()?)))
        .collect();
    match speedup_and_efficiency(pts) {
        Some((s, e)) => {
            let colour = RGBColor(31, 119, 180);
            (
                vec![markers("whole batch of cells", colour, s)],
                vec![markers("", colour, e)],
            )
        }
        None => (Vec::new(), Vec::new()),
    }
}

fn markers(label: &str, colour: RGBColor, points: Vec<(f64, f64)>) -> Line {
    Line {
        label: label.into(),
        colour,
        points,
        stroke: Stroke::Markers,
        failed_at: Vec::new(),
    }
}

/// The ideal line over the thread counts of `lines`: `S = k` or `E = 1`.
fn ideal(lines: &[Line], efficiency: bool) -> Line {
    let ks = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
    let (lo, hi) = ks.fold((f64::INFINITY, 0.0_f64), |(a, b), k| (a.min(k), b.max(k)));
    let y = |k: f64| if efficiency { 1.0 } else { k };
    Line {
        label: if efficiency {
            "ideal (E = 1)"
        } else {
            "ideal (S = k)"
        }
        .into(),
        colour: RGBColor(120, 120, 120),
        points: vec![(lo, y(lo)), (hi, y(hi))],
        stroke: Stroke::Dotted,
        failed_at: Vec::new(),
    }
}

fn panel(title: &str, xlabel: &str, ylabel: &str, mut lines: Vec<Line>, efficiency: bool) -> Panel {
    let reference = ideal(&lines, efficiency);
    lines.push(reference);
    Panel {
        title: title.into(),
        xlabel: xlabel.into(),
        ylabel: ylabel.into(),
        log_x: false,
        log_y: false,
        equal: false,
        lines,
    }
}

/// The thread-scaling figure of an experiment, when it sweeps thread counts.
pub fn thread_scaling(
    res: &Results, dir: &Path, colours: &Colours,
) -> Result<Vec<PathBuf>, ReportError> {
    let runs: Vec<&Run> = res.runs.iter().collect();
    let (cell_s, cell_e) = in_cell(&runs, colours);
    let (side_s, side_e) = side_by_side(&runs);
    let (ens_s, ens_e) = ensembles(&runs, colours);
    let mut panels = Vec::new();
    if !ens_s.is_empty() {
        let x = "threads running the members side by side";
        panels.push(panel(
            "Ensemble throughput speedup: rollout steps per second, T(1) / T(k)",
            x,
            "speedup S",
            ens_s,
            false,
        ));
        panels.push(panel(
            "Ensemble parallel efficiency: S / k",
            x,
            "efficiency E",
            ens_e,
            true,
        ));
    }
    if !cell_s.is_empty() {
        let x = "faer threads inside the cell";
        panels.push(panel(
            "Speedup inside a cell: T(1 thread) / T(k), time per step",
            x,
            "speedup S",
            cell_s,
            false,
        ));
        panels.push(panel(
            "Parallel efficiency inside a cell: S / k",
            x,
            "efficiency E",
            cell_e,
            true,
        ));
    }
    if !side_s.is_empty() {
        let x = "cells side by side (runner threads)";
        panels.push(panel(
            "Speedup of the sweep: batch wall time T(1) / T(k)",
            x,
            "speedup S",
            side_s,
            false,
        ));
        panels.push(panel(
            "Parallel efficiency of the sweep: S / k",
            x,
            "efficiency E",
            side_e,
            true,
        ));
    }
    if panels.is_empty() {
        return Ok(Vec::new());
    }
    let fig = Figure {
        stem: format!("threads_{}", slug(&res.name)),
        panels,
        width: crate::style::FIG_W,
        panel_height: 250,
    };
    render(&fig, dir)
}

#[cfg(test)]
mod tests {
    use super::speedup_and_efficiency;

    #[test]
    fn speedup_and_efficiency_follow_their_definitions() {
        let (s, e) =
            speedup_and_efficiency(vec![(2.0, 0.6), (1.0, 1.0), (3.0, 0.5)]).expect("3 points");
        assert_eq!(s, vec![(1.0, 1.0), (2.0, 1.0 / 0.6), (3.0, 2.0)]);
        assert!((e[1].1 - 1.0 / 1.2).abs() < 1e-15 && (e[2].1 - 2.0 / 3.0).abs() < 1e-15);
        assert!(
            speedup_and_efficiency(vec![(1.0, 1.0)]).is_none(),
            "one count: no curve"
        );
        // Without a 1-thread point the smallest count's time scales: T(1) ≈ k₀ T(k₀).
        let (s, _) = speedup_and_efficiency(vec![(2.0, 0.5), (4.0, 0.25)]).expect("2 points");
        assert_eq!(s, vec![(2.0, 2.0), (4.0, 4.0)]);
    }
}
