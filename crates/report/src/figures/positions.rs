//! The figures of where the bodies went, from stored states at one step size: the
//! trajectory in the plane of two-coordinate systems (with the constraint circle) and the
//! position components against time of larger ones.

use super::common::{failure_note, h_label};
use super::traces::TracesAt;
use super::{Figure, Line, Panel, Stroke};
use crate::data::{Results, Run, Trace};
use crate::style::{slug, Colours, FIG_W};
use plotters::style::RGBColor;

impl TracesAt<'_> {
    /// The path of two-coordinate systems in the plane (equal aspect), with the constraint
    /// circle through the first stored position, when some run stored its positions.
    pub(super) fn trajectory(&self) -> Option<Figure> {
        let with_q: Vec<(&Run, &Trace)> = self
            .runs
            .iter()
            .filter_map(|r| Some((*r, self.res.traces.get(&r.cell)?)))
            .filter(|(_, t)| t.q.first().is_some_and(|q| q.len() == 2))
            .collect();
        let (_, first) = with_q.first()?;
        let mut lines: Vec<Line> = with_q
            .iter()
            .map(|(r, tr)| Line {
                label: format!("{}{}", r.variant, failure_note(r)),
                colour: self.colours.of(&r.variant),
                points: tr
                    .q
                    .iter()
                    .filter(|q| q.len() == 2)
                    .map(|q| (q[0], q[1]))
                    .collect(),
                stroke: Stroke::Solid,
                failed_at: vec![],
            })
            .collect();
        if let Some(q0) = first.q.first() {
            lines.insert(0, constraint_circle(q0));
        }
        Some(Figure {
            stem: self.stem("trajectory"),
            panels: vec![Panel {
                title: format!(
                    "Trajectory in the plane — {}, h = {}",
                    self.key,
                    h_label(self.h)
                ),
                xlabel: "x [m]".into(),
                ylabel: "y [m]".into(),
                log_x: false,
                log_y: false,
                equal: true,
                lines,
            }],
            width: FIG_W,
            panel_height: FIG_W,
        })
    }
}

/// The constraint circle `|q| = |q0|` (Φ = 0 of a pendulum) through the initial position
/// `q0`, dotted grey, 361 points.
fn constraint_circle(q0: &[f64]) -> Line {
    let r0 = (q0[0] * q0[0] + q0[1] * q0[1]).sqrt();
    let circle = (0..=360)
        .map(|d| (d as f64).to_radians())
        .map(|a| (r0 * a.cos(), r0 * a.sin()))
        .collect();
    Line {
        label: format!("circle |q| = {r0:.3} (Φ = 0)"),
        colour: RGBColor(160, 160, 160),
        points: circle,
        stroke: Stroke::Dotted,
        failed_at: vec![],
    }
}

/// Most position components drawn in a positions figure.
const MAX_COMPONENTS: usize = 8;

/// The position components against time (one panel per component, one curve per method
/// variant at step `h`), for runs that stored their states (`trace_states`) of systems with
/// more than two coordinates — Andrews' seven angles, the slider crank's rigid and elastic
/// coordinates. (Two-coordinate systems get the trajectory figure instead.) A failed run's
/// curve ends with a marker at its last stored point.
fn positions(res: &Results, key: &str, h: f64, at_h: &[&Run], colours: &Colours) -> Option<Figure> {
    let dim = at_h
        .iter()
        .filter_map(|r| res.traces.get(&r.cell)?.q.first().map(Vec::len))
        .max()?;
    if dim <= 2 {
        return None;
    }
    let component = |r: &Run, c: usize| -> Vec<(f64, f64)> {
        res.traces.get(&r.cell).map_or_else(Vec::new, |tr| {
            tr.t.iter()
                .zip(&tr.q)
                .filter_map(|(t, q)| q.get(c).map(|x| (*t, *x)))
                .filter(|(_, x)| x.is_finite())
                .collect()
        })
    };
    let panels = (0..dim.min(MAX_COMPONENTS))
        .map(|c| {
            // The y-range of the runs that succeeded, widened by half its span: a diverging
            // failed run is cut where it leaves it (its marker there), so that it cannot
            // flatten every other curve.
            let (lo, hi) = at_h
                .iter()
                .filter(|r| r.ok())
                .flat_map(|r| component(r, c))
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, x)| {
                    (lo.min(x), hi.max(x))
                });
            let pad = 0.5 * (hi - lo).max(1e-12 * hi.abs().max(lo.abs()));
            let inside = |x: f64| !lo.is_finite() || (x >= lo - pad && x <= hi + pad);
            let lines = at_h
                .iter()
                .map(|r| {
                    let mut points = component(r, c);
                    let mut failed_at = vec![];
                    if !r.ok() {
                        let keep = points.iter().take_while(|(_, x)| inside(*x)).count();
                        points.truncate(keep.max(1).min(points.len()));
                        failed_at = points.last().copied().into_iter().collect();
                    }
                    Line {
                        // One legend, in the first panel.
                        label: if c == 0 {
                            format!("{}{}", r.variant, failure_note(r))
                        } else {
                            String::new()
                        },
                        colour: colours.of(&r.variant),
                        points,
                        stroke: Stroke::Solid,
                        failed_at,
                    }
                })
                .collect();
            Panel {
                title: format!("Position q[{c}] — {key}, h = {}", h_label(h)),
                xlabel: "time t [s]".into(),
                ylabel: format!("q[{c}]"),
                log_x: false,
                log_y: false,
                equal: false,
                lines,
            }
        })
        .collect();
    Some(Figure {
        stem: format!("positions_{}_h{}", slug(key), h_label(h)),
        panels,
        width: FIG_W,
        panel_height: 200,
    })
}

/// The positions figure of the runs at one step size (see [`positions`]).
pub(super) fn at_step(at: &TracesAt<'_>) -> Option<Figure> {
    positions(at.res, at.key, at.h, &at.runs, at.colours)
}
