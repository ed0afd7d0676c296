//! The parameter-sweep figures: per method swept over one numeric parameter at one step
//! size, residual, energy error and error in q against the parameter.

use super::common::h_label;
use super::{render, Figure, Line, Panel, Stroke};
use crate::data::{distinct_values, param_names, Results, Run};
use crate::error::ReportError;
use crate::style::{slug, Colours, FIG_W};
use plotters::style::RGBColor;
use std::path::{Path, PathBuf};

/// Parameter sweeps: for every method swept over a numeric parameter (≥ 3 values at one
/// h), max position residual, max energy error and max error in q against the
/// parameter; failed cells are drawn as × at the top of the panel, never dropped.
pub fn sweeps(res: &Results, dir: &Path, colours: &Colours) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = Vec::new();
    for key in res.problem_keys() {
        let hs = res.hs(&key);
        for &h in &hs {
            for (method, mine) in res.runs_by_method(&key, h) {
                let Some(name) = swept_parameter(&mine, hs.len()) else {
                    continue;
                };
                let sweep = Sweep {
                    key: &key,
                    h,
                    method,
                    name: &name,
                    runs: &mine,
                    colour: colours.of(method),
                };
                if let Some(fig) = sweep.figure() {
                    files.extend(render(&fig, dir)?);
                }
            }
        }
    }
    Ok(files)
}

/// The one method parameter that `runs` (one method at one h) sweep over, if it takes
/// three or more values and no other parameter does (two or more swept: the parameter
/// map). `n_hs` is the number of step sizes of the problem: a handful of discrete variants
/// (stages = 1, 2, 3) swept together with three or more step sizes is no sweep — the
/// convergence figure already compares them at every h; a sweep figure per h would repeat
/// it, flattened.
fn swept_parameter(runs: &[&Run], n_hs: usize) -> Option<String> {
    let names = param_names(runs);
    let swept: Vec<&String> = names
        .iter()
        .filter(|n| distinct_values(runs, n, false) >= 3)
        .collect();
    let [name] = swept.as_slice() else {
        return None;
    };
    if distinct_values(runs, name, false) <= 3 && n_hs >= 3 {
        return None;
    }
    Some(name.to_string())
}

/// A metric of the sweep figure: panel title, y-axis label, value of a run.
type Metric = (&'static str, &'static str, fn(&Run) -> Option<f64>);

/// The metrics of the sweep figure, one panel each.
const SWEEP_METRICS: [Metric; 3] = [
    ("Max position residual", "max ‖Φ‖∞", |r| {
        r.max_pos_residual
    }),
    (
        "Max relative energy error",
        "max |H − H₀| / E_scale",
        |r| r.max_energy_rel_error,
    ),
    ("Max error in q", "max_t ‖q − q_exact‖∞", |r| {
        r.err_q
    }),
];

/// The runs of one method at one step size over its swept parameter `name`.
struct Sweep<'a> {
    key: &'a str,
    h: f64,
    method: &'a str,
    name: &'a str,
    runs: &'a [&'a Run],
    colour: RGBColor,
}

impl Sweep<'_> {
    /// The value of the swept parameter in a run.
    fn value(&self, r: &Run) -> Option<f64> {
        r.method_param(self.name)
    }

    /// The sweep figure: one panel per metric that some successful run has (none if no
    /// metric has any); x logarithmic for positive values spanning more than 100×.
    fn figure(&self) -> Option<Figure> {
        let mut vals: Vec<f64> = self.runs.iter().filter_map(|r| self.value(r)).collect();
        vals.sort_by(f64::total_cmp);
        vals.dedup();
        let positive = vals.iter().all(|v| *v > 0.0);
        let log_x = positive && vals[vals.len() - 1] / vals[0] > 100.0;
        let panels: Vec<Panel> = SWEEP_METRICS
            .iter()
            .filter_map(|m| self.panel(*m, log_x))
            .collect();
        if panels.is_empty() {
            return None;
        }
        Some(Figure {
            stem: format!(
                "sweep_{}_{}_{}_h{}",
                slug(self.key),
                slug(self.method),
                slug(self.name),
                h_label(self.h)
            ),
            panels,
            width: FIG_W,
            panel_height: 240,
        })
    }

    /// The panel of one metric against the parameter (None without a successful run
    /// that has it): successful runs as markers, failed ones as × at the panel's top.
    fn panel(&self, (title, ylabel, get): Metric, log_x: bool) -> Option<Panel> {
        let mut pts: Vec<(f64, f64)> = self
            .runs
            .iter()
            .filter(|r| r.ok())
            .filter_map(|r| Some((self.value(r)?, get(r)?)))
            .collect();
        if pts.is_empty() {
            return None;
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let top = pts.iter().map(|p| p.1).fold(0.0_f64, f64::max);
        let failed: Vec<(f64, f64)> = self
            .runs
            .iter()
            .filter(|r| !r.ok())
            .filter_map(|r| Some((self.value(r)?, if top > 0.0 { top } else { 1.0 })))
            .collect();
        let (method, nf) = (self.method, failed.len());
        Some(Panel {
            title: format!(
                "{title} vs {} — {method} on {}, h = {}",
                self.name,
                self.key,
                h_label(self.h)
            ),
            xlabel: self.name.to_string(),
            ylabel: ylabel.into(),
            log_x,
            log_y: true,
            equal: false,
            lines: vec![Line {
                label: if nf > 0 {
                    format!("{method} ({nf} failed: ×)")
                } else {
                    method.to_string()
                },
                colour: self.colour,
                points: pts,
                stroke: Stroke::Markers,
                failed_at: failed,
            }],
        })
    }
}
