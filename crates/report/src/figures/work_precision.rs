//! The work–precision figure of one problem: accuracy against cost (step time), log–log,
//! one curve per method variant over its step sizes, the class's recommended setting
//! marked.

use super::common::{variants_of, MAX_CURVES};
use super::{Figure, Line, Panel, Stroke};
use crate::data::{Results, Run};
use crate::style::{slug, Colours, FIG_W};
use driftlab_results::schema::runs as columns;

/// A run's value of the runs column `measure` (finite, or `None`).
fn value(r: &Run, measure: &str) -> Option<f64> {
    driftlab_results::table::number(r, columns::COLUMNS, measure).filter(|x| x.is_finite())
}

/// The accuracy axis: the experiment's `[report]` measure when it declares one (the class
/// is judged on it), else `scd` where a published reference exists, else the max position
/// error against the exact solution, else the max relative energy error. `(label, log y,
/// column)`.
fn accuracy_axis(res: &Results, runs: &[&Run]) -> Option<(String, bool, String)> {
    let declared = res.report.as_ref().map(|r| {
        (
            format!("{} (the class's measure)", r.measure),
            !r.higher_is_better,
            r.measure.clone(),
        )
    });
    let fallbacks = [
        ("scd: correct digits at t_ref", false, "scd"),
        ("max_t ‖q − q_exact‖∞", true, "err_q"),
        (
            "max_t |H − H₀| / scale (energy error)",
            true,
            "max_energy_rel_error",
        ),
    ]
    .map(|(l, log, c)| (l.to_string(), log, c.to_string()));
    declared.into_iter().chain(fallbacks).find(|(_, _, c)| {
        runs.iter()
            .filter(|r| r.ok())
            .filter_map(|r| value(r, c))
            .any(|x| x > 0.0)
    })
}

/// Work–precision: accuracy against step time, log–log, one curve per method variant over
/// its step sizes; failed cells are marked at their step time at the worst accuracy shown
/// (an accuracy they never delivered), not dropped; the class's recommended setting on this
/// problem, when there is one, is marked as its own point.
pub(super) fn work_precision(
    res: &Results, key: &str, runs: &[&Run], colours: &Colours,
) -> Option<Figure> {
    let (ylabel, log_y, measure) = accuracy_axis(res, runs)?;
    let get = |r: &Run| value(r, &measure);
    let variants = variants_of(runs);
    // A problem class's figure shows every method that ran on it, even one point each
    // (issue 46: work–precision for every method of a class; the 64 styles keep up to
    // 2 × MAX_CURVES series apart in hue, tone or marker). Elsewhere it is only worth a
    // figure when some variant has at least two runs (a curve), and not for parameter
    // sweeps (their figures are the sweep and map figures).
    let of_a_class = res.report.as_ref().is_some_and(|r| r.class.is_some());
    let curves = variants
        .iter()
        .any(|v| runs.iter().filter(|r| &r.variant == v).count() >= 2);
    let shown = if of_a_class {
        variants.len() <= 2 * MAX_CURVES
    } else {
        variants.len() <= MAX_CURVES && curves
    };
    if !shown {
        return None;
    }
    let good: Vec<f64> = runs
        .iter()
        .filter(|r| r.ok())
        .filter_map(|r| get(r))
        .filter(|x| x.is_finite() && (!log_y || *x > 0.0))
        .collect();
    let top = if log_y {
        good.iter().copied().fold(0.0_f64, f64::max)
    } else {
        good.iter().copied().fold(f64::INFINITY, f64::min)
    };
    let mut lines: Vec<Line> = variants
        .iter()
        .map(|v| work_precision_line(v, runs, &get, log_y, top, colours))
        .collect();
    lines.extend(
        variants
            .iter()
            .filter_map(|v| time_spread_bars(v, runs, &get, log_y, colours)),
    );
    lines.extend(recommended_point(res, runs, &get));
    Some(Figure {
        stem: format!("work_precision_{}", slug(key)),
        panels: vec![Panel {
            title: format!(
                "Work–precision — {key} (×: failed cell, drawn at the worst accuracy shown)"
            ),
            xlabel: "step time [s] (bar: min–max of repeated runs)".into(),
            ylabel,
            log_x: true,
            log_y,
            equal: false,
            lines,
        }],
        width: FIG_W,
        panel_height: 380,
    })
}

/// The recommended setting's run on this problem, as a point of its own.
fn recommended_point(
    res: &Results, runs: &[&Run], get: &dyn Fn(&Run) -> Option<f64>,
) -> Option<Line> {
    let role = crate::role::Role::of(res)?;
    let view = crate::verdicts::ClassView::of(res, &role)?;
    let chosen = view.recommended_runs();
    let r = runs
        .iter()
        .find(|r| chosen.iter().any(|c| std::ptr::eq(*c, **r)))?;
    Some(Line {
        label: format!("recommended: {}", r.variant),
        colour: plotters::style::RGBColor(0, 0, 0),
        points: vec![(r.step_seconds, get(r)?)],
        stroke: Stroke::Highlight,
        failed_at: Vec::new(),
    })
}

/// One variant's work–precision curve: (step time, accuracy) of its successful runs,
/// its failed runs marked at the worst accuracy shown (`top`).
fn work_precision_line(
    v: &String, runs: &[&Run], get: &dyn Fn(&Run) -> Option<f64>, log_y: bool, top: f64,
    colours: &Colours,
) -> Line {
    let mine: Vec<&&Run> = runs.iter().filter(|r| &r.variant == v).collect();
    let mut pts: Vec<(f64, f64)> = mine
        .iter()
        .filter(|r| r.ok() && r.step_seconds > 0.0)
        .filter_map(|r| {
            get(r)
                .filter(|x| !log_y || *x > 0.0)
                .map(|y| (r.step_seconds, y))
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let failed_at = mine
        .iter()
        .filter(|r| !r.ok() && r.step_seconds > 0.0)
        .map(|r| (r.step_seconds, top))
        .collect();
    Line {
        label: v.clone(),
        colour: colours.of(v),
        points: pts,
        stroke: Stroke::Markers,
        failed_at,
    }
}

/// The spread of a variant's times, as bars through its points: for every successful run
/// timed more than once (alone, by the timing pass, or by the spec's `repeat`), its
/// (min, max) step time at its accuracy. `None` when no run of the variant has a spread.
fn time_spread_bars(
    v: &String, runs: &[&Run], get: &dyn Fn(&Run) -> Option<f64>, log_y: bool, colours: &Colours,
) -> Option<Line> {
    let points: Vec<(f64, f64)> = runs
        .iter()
        .filter(|r| &r.variant == v && r.ok() && (r.timed_alone > 1 || r.runs_behind_times() > 1))
        .filter_map(|r| {
            let y = get(r).filter(|y| !log_y || *y > 0.0)?;
            let lo = r.step_seconds_min?.min(r.step_seconds);
            let hi = r.step_seconds_max?.max(r.step_seconds);
            (lo > 0.0 && hi > lo).then_some([(lo, y), (hi, y)])
        })
        .flatten()
        .collect();
    (!points.is_empty()).then(|| Line {
        label: String::new(),
        colour: colours.of(v),
        points,
        stroke: Stroke::XRange,
        failed_at: Vec::new(),
    })
}
