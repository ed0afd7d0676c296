//! The scaling figures: step time, largest residual and peak heap per unit of size against
//! a problem's size parameter, one figure per problem and step size; and the size
//! parameter and sized runs that the report's cost-against-size table shares.

use super::common::h_label;
use super::{render, Figure, Line, Panel, Stroke};
use crate::data::{Results, Run};
use crate::error::ReportError;
use crate::style::{slug, Colours, FIG_W};
use std::path::{Path, PathBuf};

/// Numeric problem parameters of a run (`problem_params` JSON).
fn problem_params(r: &Run) -> Vec<(String, f64)> {
    serde_json::from_str::<serde_json::Value>(&r.problem_params)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .map(|o| {
            o.into_iter()
                .filter_map(|(k, v)| v.as_f64().map(|x| (k, x)))
                .collect()
        })
        .unwrap_or_default()
}

/// Least-squares slope of `log y` against `log x` (None below two points), by the
/// workspace's one line fit.
fn loglog_slope(points: &[(f64, f64)]) -> Option<f64> {
    let (x, y): (Vec<f64>, Vec<f64>) = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .map(|(x, y)| (x.ln(), y.ln()))
        .unzip();
    let slope = driftlab_results::fit::fit_line(&x, &y).0;
    (x.len() >= 2 && slope.is_finite()).then_some(slope)
}

/// Scaling with problem size: where one numeric problem parameter of a problem is a size
/// (three or more positive integers spanning a decade: links of a chain), the method's
/// step time per step (metric evaluation excluded), the
/// largest position residual and the measured peak heap per unit of size against it, log–log, one curve per method variant at each h,
/// with the fitted slope in the legend (1 means cost linear in the size). Failed runs are
/// marked at the largest time per step shown.
pub fn scaling(res: &Results, dir: &Path, colours: &Colours) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = Vec::new();
    for (problem, name, runs) in sized_runs(res) {
        let mut hs: Vec<f64> = runs.iter().map(|r| r.h).collect();
        hs.sort_by(f64::total_cmp);
        hs.dedup_by(|a, b| (*a - *b).abs() <= 1e-12 * b.abs());
        for h in hs {
            let fig = Scaling::at(problem, &name, h, &runs, colours).figure();
            files.extend(render(&fig, dir)?);
        }
    }
    Ok(files)
}

/// Per problem with a size parameter (see [`size_parameter`]): the problem, the
/// parameter's name and its runs — one point per size: the cells with the fewest faer
/// threads, of the first batch of a side-by-side sweep (the thread-scaling figure draws
/// the rest). Shared by the scaling figure and the report's cost-against-size table.
pub(crate) fn sized_runs(res: &Results) -> Vec<(&str, String, Vec<&Run>)> {
    let mut problems: Vec<&str> = res.runs.iter().map(|r| r.problem.as_str()).collect();
    problems.sort_unstable();
    problems.dedup();
    let fewest = res.runs.iter().map(|r| r.cell_threads()).min().unwrap_or(1);
    let first_batch = res.runs.iter().filter_map(|r| r.batch_threads()).min();
    problems
        .into_iter()
        .filter_map(|problem| {
            let runs: Vec<&Run> = res
                .runs
                .iter()
                .filter(|r| r.problem == problem)
                .filter(|r| r.cell_threads() == fewest && r.batch_threads() == first_batch)
                .collect();
            size_parameter(&runs).map(|name| (problem, name, runs))
        })
        .collect()
}

/// The numeric problem parameter `name` of a run.
pub(crate) fn problem_param(r: &Run, name: &str) -> Option<f64> {
    problem_params(r)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, x)| x)
}

/// The one problem parameter of `runs` that is a size: three or more positive integer
/// values spanning at least a decade (not a physical parameter such as a restitution
/// coefficient or an angle). None when no parameter, or more than one, is.
fn size_parameter(runs: &[&Run]) -> Option<String> {
    let mut names: Vec<String> = runs
        .iter()
        .flat_map(|r| problem_params(r).into_iter().map(|(k, _)| k))
        .collect();
    names.sort();
    names.dedup();
    let is_size = |name: &str| {
        let mut v: Vec<f64> = runs.iter().filter_map(|r| problem_param(r, name)).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v.len() >= 3
            && v.iter().all(|x| *x >= 1.0 && x.fract() == 0.0)
            && v[v.len() - 1] >= 10.0 * v[0]
    };
    let swept: Vec<&String> = names.iter().filter(|n| is_size(n)).collect();
    let [name] = swept.as_slice() else {
        return None;
    };
    Some(name.to_string())
}

/// The method's own time per step (metrics and observers excluded).
pub(crate) fn step_time(r: &Run) -> f64 {
    r.step_seconds / r.steps.max(1) as f64
}

/// The runs of one problem at one step size against its size parameter `name`.
struct Scaling<'a> {
    problem: &'a str,
    name: &'a str,
    h: f64,
    runs: Vec<&'a Run>,
    /// Method variants, sorted, each once.
    variants: Vec<&'a str>,
    /// The largest time per step of a successful run (where failed runs are marked).
    top: f64,
    colours: &'a Colours,
}

impl<'a> Scaling<'a> {
    /// The runs of `runs` at step `h`.
    fn at(problem: &'a str, name: &'a str, h: f64, runs: &[&'a Run], colours: &'a Colours) -> Self {
        let at_h: Vec<&Run> = runs
            .iter()
            .copied()
            .filter(|r| (r.h - h).abs() <= 1e-12 * h)
            .collect();
        let mut variants: Vec<&str> = at_h.iter().map(|r| r.variant.as_str()).collect();
        variants.sort_unstable();
        variants.dedup();
        let top = at_h
            .iter()
            .filter(|r| r.ok())
            .map(|r| step_time(r))
            .fold(0.0_f64, f64::max);
        Self {
            problem,
            name,
            h,
            runs: at_h,
            variants,
            top,
            colours,
        }
    }

    /// The scaling figure: step time per step (with fitted slopes), largest position
    /// residual and peak heap bytes per unit of size against the size.
    fn figure(&self) -> Figure {
        Figure {
            stem: format!(
                "scaling_{}_{}_h{}",
                slug(self.problem),
                slug(self.name),
                h_label(self.h)
            ),
            panels: vec![
                self.panel(
                    "Step time per step (× failed)",
                    "seconds per step",
                    &|r| Some(step_time(r)),
                    true,
                ),
                self.panel(
                    "Largest position residual",
                    "max ‖Φ‖∞",
                    &|r| r.max_pos_residual,
                    false,
                ),
                self.panel(
                    "Measured peak heap per unit of size",
                    "peak heap bytes / size",
                    &|r| Some(r.peak_heap_bytes? / problem_param(r, self.name)?),
                    false,
                ),
            ],
            width: FIG_W,
            panel_height: 280,
        }
    }

    /// A log–log panel of `get` against the size, one curve per variant.
    fn panel(
        &self, title: &str, ylabel: &str, get: &dyn Fn(&Run) -> Option<f64>, slope: bool,
    ) -> Panel {
        Panel {
            title: format!("{title} — {}, h = {}", self.problem, h_label(self.h)),
            xlabel: format!("problem size `{}`", self.name),
            ylabel: ylabel.into(),
            log_x: true,
            log_y: true,
            equal: false,
            lines: self
                .variants
                .iter()
                .map(|v| self.curve(v, get, slope))
                .collect(),
        }
    }

    /// Variant `v`'s curve of `get` against the size (positive finite values of successful
    /// runs; failed runs as × at [`Scaling::top`]), with the fitted log–log slope in the
    /// legend when `slope`.
    fn curve(&self, v: &str, get: &dyn Fn(&Run) -> Option<f64>, slope: bool) -> Line {
        let size = |r: &Run| problem_param(r, self.name);
        let mine: Vec<&Run> = self
            .runs
            .iter()
            .copied()
            .filter(|r| r.variant == v)
            .collect();
        let mut points: Vec<(f64, f64)> = mine
            .iter()
            .filter(|r| r.ok())
            .filter_map(|r| Some((size(r)?, get(r)?)))
            .filter(|(_, y)| y.is_finite() && *y > 0.0)
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let failed_at = mine
            .iter()
            .filter(|r| !r.ok())
            .filter_map(|r| size(r).map(|x| (x, self.top.max(f64::MIN_POSITIVE))))
            .collect();
        let fitted = if slope {
            loglog_slope(&points).map_or(String::new(), |s| format!(" (slope {s:.2})"))
        } else {
            String::new()
        };
        Line {
            label: format!("{v}{fitted}"),
            colour: self.colours.of(v),
            points,
            stroke: Stroke::Markers,
            failed_at,
        }
    }
}

#[cfg(test)]
mod scaling_tests {
    use super::loglog_slope;

    #[test]
    fn loglog_slope_recovers_a_power_law() {
        let pts: Vec<(f64, f64)> = [10.0, 100.0, 1000.0, 1e4]
            .iter()
            .map(|x| (*x, 3e-7 * x * x))
            .collect();
        let s = loglog_slope(&pts).expect("four points");
        assert!((s - 2.0).abs() < 1e-12, "slope {s}");
        // Non-positive values are skipped; one point left is no slope.
        assert_eq!(loglog_slope(&[(10.0, 1.0), (100.0, 0.0)]), None);
    }
}
