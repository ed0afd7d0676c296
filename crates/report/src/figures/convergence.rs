//! The convergence figure of one problem: error against h, log–log, one curve per method
//! variant with the fitted and declared slopes of its `orders.csv` line.

use super::common::variants_of;
use super::{Figure, Line, Panel, Stroke};
use crate::data::{Order, Results, Run};
use crate::style::{slug, Colours, FIG_W};
use plotters::style::RGBColor;

/// An error quantity of the convergence figure: name, y-axis label, value of a run.
type Quantity = (&'static str, &'static str, fn(&Run) -> Option<f64>);

/// The quantities of the convergence figure. Index-1 problems store x in the q columns
/// and z in the λ columns (no velocities).
fn error_quantities(index1: bool) -> [Quantity; 3] {
    let (lq, ll) = if index1 {
        ("max_t ‖x − x_exact‖∞", "max_t ‖z − z_exact‖∞")
    } else {
        ("max_t ‖q − q_exact‖∞", "max_t ‖λ − λ_exact‖∞")
    };
    [
        (if index1 { "x" } else { "q" }, lq, |r| r.err_q),
        ("v", "max_t ‖v − v_exact‖∞", |r| r.err_v),
        (if index1 { "z" } else { "lambda" }, ll, |r| {
            r.final_err_lambda
        }),
    ]
}

/// Convergence: error against h, log–log, one panel per error quantity that some run has,
/// one curve per method variant with its fitted and declared slopes
/// ([`convergence_lines`]).
fn convergence(res: &Results, key: &str, runs: &[&Run], colours: &Colours) -> Figure {
    let variants = variants_of(runs);
    let index1 = runs.iter().all(|r| r.err_v.is_none());
    let panels = error_quantities(index1)
        .into_iter()
        .filter(|(_, _, get)| !runs.iter().all(|r| get(r).is_none()))
        .map(|quantity| Panel {
            title: format!(
                "Error in {} vs h — {key} (dashed: fit, dotted: declared order)",
                quantity.0
            ),
            xlabel: "step size h [s]".into(),
            ylabel: quantity.1.into(),
            log_x: true,
            log_y: true,
            equal: false,
            lines: variants
                .iter()
                .flat_map(|v| convergence_lines(res, key, runs, v, quantity, colours.of(v)))
                .collect(),
        })
        .collect();
    Figure {
        stem: format!("convergence_{}", slug(key)),
        panels,
        width: FIG_W,
        panel_height: 280,
    }
}

/// Variant `v`'s curves in the convergence panel of `quantity`: its errors against h
/// (failed runs as × at the largest error of the panel) labelled with the observed and
/// declared order, then the fitted and declared slopes of its `orders.csv` line.
fn convergence_lines(
    res: &Results, key: &str, runs: &[&Run], v: &str, (qname, _, get): Quantity, c: RGBColor,
) -> Vec<Line> {
    let mine: Vec<&Run> = runs.iter().copied().filter(|r| r.variant == v).collect();
    let mut pts: Vec<(f64, f64)> = mine
        .iter()
        .filter(|r| r.ok())
        .filter_map(|r| get(r).map(|e| (r.h, e)))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let top = runs
        .iter()
        .filter_map(|r| get(r))
        .filter(|x| x.is_finite())
        .fold(0.0_f64, f64::max);
    let failed: Vec<(f64, f64)> = mine
        .iter()
        .filter(|r| !r.ok())
        .map(|r| (r.h, if top > 0.0 { top } else { 1.0 }))
        .collect();
    let order = stored_order(res, key, &mine, v, qname);
    let mut lines = vec![Line {
        label: order_label(v, order),
        colour: c,
        points: pts.clone(),
        stroke: Stroke::Markers,
        failed_at: failed,
    }];
    if let Some(o) = order {
        lines.extend(slope_lines(o, &pts, c));
    }
    lines
}

/// The `orders.csv` line of variant `v` (runs `mine`) for quantity `qname` on problem
/// `key`; x and z are stored under the names q and lambda.
fn stored_order<'a>(
    res: &'a Results, key: &str, mine: &[&Run], v: &str, qname: &str,
) -> Option<&'a Order> {
    let stored_q = match qname {
        "x" => "q",
        "z" => "lambda",
        other => other,
    };
    res.orders.iter().find(|o| {
        o.problem_params
            == mine
                .first()
                .map(|r| r.problem_params.clone())
                .unwrap_or_default()
            && o.variant == v
            && o.quantity == stored_q
            && key.starts_with(&o.problem)
    })
}

/// A variant's legend in a convergence panel: observed and declared order, the reason
/// there is no fit, or the bare name without an `orders.csv` line.
fn order_label(v: &str, order: Option<&Order>) -> String {
    match order {
        Some(o) => match o.observed_order {
            Some(p) => format!(
                "{v}: observed {p:.2}, declared {}",
                o.expected_order.map_or("—".into(), |e| format!("{e}"))
            ),
            None => format!("{v}: no fit ({})", o.note),
        },
        None => v.to_string(),
    }
}

/// The fitted (dashed) and declared (dotted) slopes of `o` over its fit range, through
/// the log–log centroid of the points `pts` inside that range (none without a fit or
/// without points in the range).
fn slope_lines(o: &Order, pts: &[(f64, f64)], c: RGBColor) -> Vec<Line> {
    let (Some(p), Some(h0), Some(h1)) = (o.observed_order, o.h_min, o.h_max) else {
        return Vec::new();
    };
    let inr: Vec<&(f64, f64)> = pts
        .iter()
        .filter(|(h, _)| *h >= h0 * (1.0 - 1e-9) && *h <= h1 * (1.0 + 1e-9))
        .collect();
    if inr.is_empty() {
        return Vec::new();
    }
    let n = inr.len() as f64;
    let mx = inr.iter().map(|q| q.0.log10()).sum::<f64>() / n;
    let my = inr.iter().map(|q| q.1.log10()).sum::<f64>() / n;
    let segment = |slope: f64, stroke: Stroke| {
        let at = |h: f64| 10f64.powf(my + slope * (h.log10() - mx));
        Line {
            label: String::new(),
            colour: c,
            points: vec![(h0, at(h0)), (h1, at(h1))],
            stroke,
            failed_at: vec![],
        }
    };
    let mut lines = vec![segment(p, Stroke::Dashed)];
    if let Some(d) = o.expected_order {
        lines.push(segment(d, Stroke::Dotted));
    }
    lines
}

/// The convergence figure of problem `key` where it has something to show: two or more
/// step sizes and some error quantity (see [`convergence`]).
pub(super) fn per_problem(
    res: &Results, key: &str, runs: &[&Run], colours: &Colours,
) -> Option<Figure> {
    if res.hs(key).len() < 2 {
        return None;
    }
    Some(convergence(res, key, runs, colours)).filter(|fig| !fig.panels.is_empty())
}
