//! The time-trace figures of one problem at one step size ([`TracesAt`]): position,
//! velocity and acceleration residuals, the relative energy error and the errors against
//! the exact solution, against time, one curve per run with a stored trace.

use super::common::{failure_note, h_label};
use super::{Figure, Line, Panel, Stroke};
use crate::data::{Results, Run, Trace};
use crate::style::{slug, Colours, FIG_W};

fn series(tr: &Trace, get: impl Fn(&Trace, usize) -> Option<f64>) -> Vec<(f64, f64)> {
    (0..tr.t.len())
        .filter_map(|i| get(tr, i).map(|y| (tr.t[i], y)))
        .collect()
}

/// The runs of one problem at one step size, with what their time-trace figures need.
pub struct TracesAt<'a> {
    pub(super) res: &'a Results,
    pub(super) key: &'a str,
    pub(super) h: f64,
    pub(super) runs: Vec<&'a Run>,
    pub(super) colours: &'a Colours,
}

impl TracesAt<'_> {
    /// The stem `<kind>_<problem>_h<h>`.
    pub(super) fn stem(&self, kind: &str) -> String {
        format!("{kind}_{}_h{}", slug(self.key), h_label(self.h))
    }

    /// A log-y panel of the trace quantity `get` against time, one curve per run with a
    /// stored trace (a failed run's curve ends with ×).
    fn panel(&self, name: &str, unit: &str, get: &dyn Fn(&Trace, usize) -> Option<f64>) -> Panel {
        Panel {
            title: format!("{name} — {}, h = {}", self.key, h_label(self.h)),
            xlabel: "time t [s]".into(),
            ylabel: unit.into(),
            log_x: false,
            log_y: true,
            equal: false,
            lines: self
                .runs
                .iter()
                .filter_map(|r| {
                    let tr = self.res.traces.get(&r.cell)?;
                    let pts = series(tr, get);
                    let failed_at = if r.ok() {
                        vec![]
                    } else {
                        pts.last().copied().into_iter().collect()
                    };
                    Some(Line {
                        label: format!("{}{}", r.variant, failure_note(r)),
                        colour: self.colours.of(&r.variant),
                        points: pts,
                        stroke: Stroke::Solid,
                        failed_at,
                    })
                })
                .collect(),
        }
    }

    /// Position, velocity and acceleration residuals against time.
    pub(super) fn residuals(&self) -> Figure {
        Figure {
            stem: self.stem("residuals"),
            panels: vec![
                self.panel("Position residual", "‖Φ(t,q)‖∞", &|t, i| t.pos[i]),
                self.panel("Velocity residual", "‖Φ_q v + Φ_t‖∞", &|t, i| {
                    t.vel[i]
                }),
                self.panel("Acceleration residual", "‖Φ_q a − γ‖∞", &|t, i| t.acc[i]),
            ],
            width: FIG_W,
            panel_height: 240,
        }
    }

    /// Relative energy error against time, when some run measured it.
    pub(super) fn energy(&self) -> Option<Figure> {
        if !self.runs.iter().any(|r| r.max_energy_rel_error.is_some()) {
            return None;
        }
        Some(Figure {
            stem: self.stem("energy"),
            panels: vec![self.panel(
                "Relative energy error",
                "|H − H₀| / max(|H₀|, E_scale)",
                &|t, i| t.energy[i],
            )],
            width: FIG_W,
            panel_height: 280,
        })
    }

    /// Errors in q, v and λ against the exact solution over time, when some trace has one.
    pub(super) fn errors(&self) -> Option<Figure> {
        let has_exact = self.runs.iter().any(|r| {
            self.res
                .traces
                .get(&r.cell)
                .is_some_and(|t| t.err[0].iter().any(|e| e.is_some()))
        });
        if !has_exact {
            return None;
        }
        Some(Figure {
            stem: self.stem("errors"),
            panels: vec![
                self.panel("Error in q", "‖q − q_exact‖∞", &|t, i| t.err[0][i]),
                self.panel("Error in v", "‖v − v_exact‖∞", &|t, i| t.err[1][i]),
                self.panel("Error in λ", "‖λ − λ_exact‖∞", &|t, i| {
                    t.err[2][i]
                }),
            ],
            width: FIG_W,
            panel_height: 240,
        })
    }
}
