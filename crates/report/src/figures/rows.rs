//! The debug figures seed 001 §3.12 asks for ("添加调试可视化（约束力、违背程度）": the
//! constraint forces and the degree of violation), per constraint row: for each run at one
//! step size that stored its states (`trace_states`), the multipliers λ_i(t) and the
//! violations |Φ_i(t, q)| of its rows against time, one curve per row. Where the norms of
//! the residuals figure say how far a run is off, these say which row and when.

use super::common::{failure_note, h_label};
use super::traces::TracesAt;
use super::{Figure, Line, Panel, Stroke};
use crate::data::{Run, Trace};
use crate::style::{Colours, FIG_W};

/// Most rows drawn per panel (a chain's thousand rows would be a blur).
const MAX_ROWS: usize = 8;
/// Most runs drawn (two panels each).
const MAX_RUNS: usize = 6;
/// Violations at or below this (exact zeros of round-off) have no place on the log axis
/// and are left out of the curve.
const FLOOR: f64 = 1e-18;

/// Row `i` of `lists` against time, as `f` of the value, finite points only.
fn row_series(tr: &Trace, lists: &[Vec<f64>], i: usize, f: fn(f64) -> f64) -> Vec<(f64, f64)> {
    tr.t.iter()
        .zip(lists)
        .filter_map(|(t, x)| x.get(i).map(|y| (*t, f(*y))))
        .filter(|(_, y)| y.is_finite())
        .collect()
}

/// One panel of a run: one curve per row of `lists` (labelled when `legend`).
fn panel(
    run: &Run, tr: &Trace, what: Quantity, colours: &Colours, title: String, legend: bool,
) -> Panel {
    let lists = match what {
        Quantity::Forces => &tr.lambda,
        Quantity::Violations => &tr.phi,
    };
    let rows = lists.iter().map(Vec::len).max().unwrap_or(0).min(MAX_ROWS);
    let f: fn(f64) -> f64 = match what {
        Quantity::Forces => |x| x,
        Quantity::Violations => |x: f64| if x.abs() > FLOOR { x.abs() } else { f64::NAN },
    };
    let lines = (0..rows)
        .map(|i| {
            let label = format!("row {i}");
            let points = row_series(tr, lists, i, f);
            Line {
                colour: colours.of(&label),
                label: if legend { label } else { String::new() },
                failed_at: if run.ok() {
                    vec![]
                } else {
                    points.last().copied().into_iter().collect()
                },
                points,
                stroke: Stroke::Solid,
            }
        })
        .collect();
    let (ylabel, log_y) = match what {
        Quantity::Forces => ("λ_i", false),
        Quantity::Violations => ("|Φ_i(t, q)|", true),
    };
    Panel {
        title,
        xlabel: "time t [s]".into(),
        ylabel: ylabel.into(),
        log_x: false,
        log_y,
        equal: false,
        lines,
    }
}

#[derive(Clone, Copy)]
enum Quantity {
    Forces,
    Violations,
}

/// The per-row figure of the runs at one step size (see the module), when some run stored
/// its multipliers and rows.
pub(super) fn at_step(at: &TracesAt<'_>) -> Option<Figure> {
    let stored: Vec<(&Run, &Trace)> = at
        .runs
        .iter()
        .filter_map(|r| Some((*r, at.res.traces.get(&r.cell)?)))
        .filter(|(_, tr)| tr.phi.iter().any(|x| !x.is_empty()))
        .take(MAX_RUNS)
        .collect();
    if stored.is_empty() {
        return None;
    }
    let labels: Vec<String> = (0..MAX_ROWS).map(|i| format!("row {i}")).collect();
    let colours = Colours::new(labels.iter().map(|l| (l.as_str(), l.as_str())));
    let h = h_label(at.h);
    // One legend (the row colours), in the first panel.
    let panels = stored
        .iter()
        .enumerate()
        .flat_map(|(k, (r, tr))| {
            let name = format!("{}{}", r.variant, failure_note(r));
            let forces = format!("Constraint forces λ_i — {name}, h = {h}");
            let violations = format!("Violation |Φ_i| per row — {name}, h = {h}");
            [
                panel(r, tr, Quantity::Forces, &colours, forces, k == 0),
                panel(r, tr, Quantity::Violations, &colours, violations, false),
            ]
        })
        .collect();
    Some(Figure {
        stem: at.stem("rows"),
        panels,
        width: FIG_W,
        panel_height: 220,
    })
}
