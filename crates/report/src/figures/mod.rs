//! The figures: residuals vs time, energy error vs time, error vs h with fitted and
//! declared slopes, and the trajectory in the plane. Each is drawn once per backend
//! (PNG bitmap, SVG) and the SVG converted to PDF.
//!
//! The plotting engine (`engine.rs`: figures, panels, curves, axes, legends, the
//! PNG/SVG/PDF writer) knows nothing of runs or experiments. The figure kinds are
//! registered in one list ([`KINDS`]) in drawing order, as the report's sections are in
//! [`crate::sections::SECTIONS`]: a figure kind is a file in this folder that turns the
//! stored [`Results`] into figures, plus one line in that list; [`write()`] only walks it.

mod common;
mod convergence;
mod engine;
mod maps;
mod positions;
mod rows;
mod scaling;
mod sweeps;
mod threads;
mod tolerance;
mod traces;
mod work_precision;

pub(crate) use engine::write_png_svg_pdf;
pub use engine::{render, Figure, Line, Panel, Stroke};
pub use maps::maps;
pub use scaling::scaling;
pub(crate) use scaling::{problem_param, sized_runs, step_time};
pub use sweeps::sweeps;
pub use threads::thread_scaling;
pub use tolerance::tolerance_proportionality;
pub use traces::TracesAt;

use crate::data::{Results, Run};
use crate::error::ReportError;
use crate::style::Colours;
use common::{shown_hs, MAX_CURVES};
use std::path::{Path, PathBuf};

/// What a figure kind draws from, which says where the walk over an experiment calls it.
pub enum Draw {
    /// The runs of one problem at one shown step size (the time traces): at most one
    /// figure, none for a parameter sweep.
    AtStep(fn(&TracesAt<'_>) -> Option<Figure>),
    /// The runs of one problem over all its step sizes, in the problem's colours: at most
    /// one figure.
    PerProblem(fn(&Results, &str, &[&Run], &Colours) -> Option<Figure>),
    /// The whole experiment: the kind renders its figures into the folder itself and
    /// returns the files written.
    Experiment(fn(&Results, &Path, &Colours) -> Result<Vec<PathBuf>, ReportError>),
}

/// One registered figure kind.
pub struct FigureKind {
    /// A short name (the stem prefix of its figures; for tests and the reader of the list).
    pub id: &'static str,
    /// What the kind draws from, and how.
    pub draw: Draw,
}

/// Every figure kind, in drawing order: the kinds at one step size, then the kinds over
/// all step sizes of a problem (both per problem, by [`all`]), then the kinds over the
/// whole experiment.
pub const KINDS: &[FigureKind] = &[
    FigureKind {
        id: "residuals",
        draw: Draw::AtStep(|at| Some(at.residuals())),
    },
    FigureKind {
        id: "energy",
        draw: Draw::AtStep(|at| at.energy()),
    },
    FigureKind {
        id: "errors",
        draw: Draw::AtStep(|at| at.errors()),
    },
    FigureKind {
        id: "trajectory",
        draw: Draw::AtStep(|at| at.trajectory()),
    },
    FigureKind {
        id: "positions",
        draw: Draw::AtStep(positions::at_step),
    },
    FigureKind {
        id: "rows",
        draw: Draw::AtStep(rows::at_step),
    },
    FigureKind {
        id: "convergence",
        draw: Draw::PerProblem(convergence::per_problem),
    },
    FigureKind {
        id: "work_precision",
        draw: Draw::PerProblem(work_precision::work_precision),
    },
    FigureKind {
        id: "tolerance",
        draw: Draw::PerProblem(|_, key, runs, colours| {
            tolerance::tolerance_proportionality(key, runs, colours)
        }),
    },
    FigureKind {
        id: "sweep",
        draw: Draw::Experiment(sweeps::sweeps),
    },
    FigureKind {
        id: "scaling",
        draw: Draw::Experiment(scaling::scaling),
    },
    FigureKind {
        id: "threads",
        draw: Draw::Experiment(threads::thread_scaling),
    },
    FigureKind {
        id: "map",
        draw: Draw::Experiment(|res, dir, _| maps::maps(res, dir)),
    },
];

/// Every figure of an experiment, in the order of [`KINDS`]: the kinds drawn per problem
/// ([`all`]), then the kinds over the whole experiment; returns the files written.
pub fn write(res: &Results, dir: &Path, colours: &Colours) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = all(res, dir, colours)?;
    for kind in KINDS {
        if let Draw::Experiment(draw) = kind.draw {
            files.extend(draw(res, dir, colours)?);
        }
    }
    Ok(files)
}

/// Every figure of an experiment: per problem, the time-trace figures at the shown step
/// sizes (residuals, energy, errors, trajectory, positions), then the figures over all its
/// step sizes (convergence, work–precision, tolerance proportionality).
pub fn all(res: &Results, dir: &Path, global: &Colours) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = Vec::new();
    for key in res.problem_keys() {
        let runs: Vec<&Run> = res.runs.iter().filter(|r| r.problem_key() == key).collect();
        let colours = global.local(runs.iter().map(|r| (r.method.as_str(), r.variant.as_str())));
        if !res.traces.is_empty() {
            for h in shown_hs(&res.hs(&key)) {
                for fig in trace_figures(res, &key, h, &runs, &colours) {
                    files.extend(render(&fig, dir)?);
                }
            }
        }
        for fig in problem_figures(res, &key, &runs, &colours) {
            files.extend(render(&fig, dir)?);
        }
    }
    Ok(files)
}

/// The time-trace figures of problem `key` at step `h`, in order: residuals, energy error,
/// errors against the exact solution, trajectory in the plane, positions — each where
/// the stored traces allow it. None for a parameter sweep (more than [`MAX_CURVES`] runs).
fn trace_figures(
    res: &Results, key: &str, h: f64, runs: &[&Run], colours: &Colours,
) -> Vec<Figure> {
    let at = TracesAt {
        res,
        key,
        h,
        runs: runs
            .iter()
            .copied()
            .filter(|r| (r.h - h).abs() <= 1e-12 * h)
            .collect(),
        colours,
    };
    if at.runs.len() > MAX_CURVES {
        // A parameter sweep: its figure is the sweep figure, not 14 overlaid traces.
        return Vec::new();
    }
    KINDS
        .iter()
        .filter_map(|kind| match kind.draw {
            Draw::AtStep(draw) => draw(&at),
            _ => None,
        })
        .collect()
}

/// The figures of problem `key` over all its step sizes: convergence (two or more step
/// sizes and some error to show), work–precision and tolerance proportionality.
fn problem_figures(res: &Results, key: &str, runs: &[&Run], colours: &Colours) -> Vec<Figure> {
    KINDS
        .iter()
        .filter_map(|kind| match kind.draw {
            Draw::PerProblem(draw) => draw(res, key, runs, colours),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scope of a kind, in the order the walk draws them.
    fn scope(d: &Draw) -> u8 {
        match d {
            Draw::AtStep(_) => 0,
            Draw::PerProblem(_) => 1,
            Draw::Experiment(_) => 2,
        }
    }

    /// Each kind once, and the list in drawing order: the walk draws the kinds at one
    /// step size, then those over a problem's step sizes, then those over the experiment.
    #[test]
    fn kinds_are_unique_and_listed_in_drawing_order() {
        let ids: Vec<&str> = KINDS.iter().map(|k| k.id).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len(), "{ids:?}");
        let scopes: Vec<u8> = KINDS.iter().map(|k| scope(&k.draw)).collect();
        assert!(
            scopes.windows(2).all(|w| w[0] <= w[1]),
            "{ids:?}: {scopes:?}"
        );
    }
}
