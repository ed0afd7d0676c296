//! Tolerance proportionality: for error-controlled cells (`rtol` set), the achieved
//! accuracy against the requested tolerance, log–log, one curve per method variant with
//! its fitted slope in the legend, and the line `error = rtol` for reference. A code whose
//! error is proportional to its tolerance has slope 1; error-per-step control of an order-p
//! method gives `p/(p+1)` (Hairer, Nørsett & Wanner, *Solving ODEs I*, §II.4).
//!
//! Accuracy is the max position error against the exact solution where there is one,
//! else the relative error `10^(−scd)` against a published reference, else the max
//! relative energy error.

use crate::data::Run;
use crate::figures::{Figure, Line, Panel, Stroke};
use crate::style::{slug, Colours};

type Accuracy = (&'static str, fn(&Run) -> Option<f64>);

const ACCURACY: [Accuracy; 3] = [
    ("max_t ‖q − q_exact‖∞", |r| r.err_q),
    ("10^(−scd): relative error at the reference time", |r| {
        r.scd.map(|s| 10f64.powf(-s))
    }),
    ("max_t |H − H₀| / scale (energy error)", |r| {
        r.max_energy_rel_error
    }),
];

/// The figure, when some variant has at least two successful error-controlled cells.
pub fn tolerance_proportionality(key: &str, runs: &[&Run], colours: &Colours) -> Option<Figure> {
    let adaptive: Vec<&Run> = runs
        .iter()
        .copied()
        .filter(|r| r.ok() && r.rtol.is_some())
        .collect();
    let (ylabel, get) = ACCURACY.into_iter().find(|(_, g)| {
        adaptive
            .iter()
            .filter_map(|r| g(r))
            .any(|x| x.is_finite() && x > 0.0)
    })?;
    let mut variants: Vec<String> = Vec::new();
    for r in &adaptive {
        if !variants.contains(&r.variant) {
            variants.push(r.variant.clone());
        }
    }
    let mut lines = Vec::new();
    let mut all_x = Vec::new();
    for v in &variants {
        let mut pts: Vec<(f64, f64)> = adaptive
            .iter()
            .filter(|r| &r.variant == v)
            .filter_map(|r| Some((r.rtol?, get(r)?)))
            .filter(|(x, y)| *x > 0.0 && y.is_finite() && *y > 0.0)
            .collect();
        if pts.len() < 2 {
            continue;
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (lx, ly): (Vec<f64>, Vec<f64>) =
            pts.iter().map(|(x, y)| (x.log10(), y.log10())).unzip();
        let slope = driftlab_results::fit::fit_line(&lx, &ly).0;
        all_x.extend(pts.iter().map(|p| p.0));
        lines.push(Line {
            label: format!("{v} (slope {slope:.2})"),
            colour: colours.of(v),
            points: pts,
            stroke: Stroke::Markers,
            failed_at: Vec::new(),
        });
    }
    if lines.is_empty() {
        return None;
    }
    let lo = all_x.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all_x.iter().copied().fold(0.0_f64, f64::max);
    lines.push(Line {
        label: "error = rtol (slope 1)".into(),
        colour: plotters::style::RGBColor(120, 120, 120),
        points: vec![(lo, lo), (hi, hi)],
        stroke: Stroke::Dotted,
        failed_at: Vec::new(),
    });
    Some(Figure {
        stem: format!("tolerance_{}", slug(key)),
        panels: vec![Panel {
            title: format!("Tolerance proportionality — {key} (rtol = atol unless the spec says)"),
            xlabel: "requested rtol".into(),
            ylabel: ylabel.into(),
            log_x: true,
            log_y: true,
            equal: false,
            lines,
        }],
        width: crate::style::FIG_W,
        panel_height: 340,
    })
}
