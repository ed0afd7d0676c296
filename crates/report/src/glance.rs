//! "Experiments at a glance": per experiment its findings and its key figures as small
//! multiples, two to a row — the main body's evidence in a few pages; every figure of an
//! experiment is in its appendix section of the HTML report.

use crate::book::{Book, FigureRef};
use crate::data::Results;
use std::path::PathBuf;

/// Figure kinds (stem prefixes) by how much of an experiment's answer one panel carries.
/// The kinds drawn only for a dimension the experiment sweeps on purpose come first —
/// threads, problem size, a parameter map, tolerances: an experiment that has one asks
/// about that dimension (thread-scaling's speedup, not its work–precision plot) — then
/// cost against accuracy, orders, one-parameter sweeps, then time traces.
const KEY_KINDS: [&str; 12] = [
    "threads",
    "scaling",
    "map",
    "tolerance",
    "work_precision",
    "convergence",
    "sweep",
    "energy",
    "residuals",
    "errors",
    "trajectory",
    "positions",
];

/// Most key figures per experiment (one, beside the experiment's findings: 51
/// experiments fit in about 20 pages).
const MAX_KEY: usize = 1;

/// Every figure SVG of an experiment's `figures/` folder, in file-name order.
pub fn svgs_of(res: &Results) -> Vec<PathBuf> {
    let fig_dir = res.dir.join("figures");
    let mut svgs: Vec<PathBuf> = std::fs::read_dir(&fig_dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "svg"))
                .filter(|p| !stem(p).ends_with(".key"))
                .collect()
        })
        .unwrap_or_default();
    svgs.sort();
    svgs
}

fn stem(p: &std::path::Path) -> String {
    p.file_stem()
        .map(|x| x.to_string_lossy().to_string())
        .unwrap_or_default()
}

/// The figure reference of `svg` in experiment `res`, captioned with the experiment and
/// the figure's stem.
pub fn figure_ref<'a>(res: &Results, svg: &'a std::path::Path) -> FigureRef<'a> {
    let stem = stem(svg);
    FigureRef {
        svg,
        rel_stem: format!("{}/figures/{stem}", res.name),
        caption: format!("{} — {}", res.name, stem.replace('_', " ")),
    }
}

/// The key figures of an experiment: the first figure of each of the highest-ranked
/// kinds it has, at most `MAX_KEY` (one), from different kinds.
pub fn key_figures(svgs: &[PathBuf]) -> Vec<&PathBuf> {
    KEY_KINDS
        .iter()
        .filter_map(|kind| {
            svgs.iter().find(|p| {
                stem(p)
                    .strip_prefix(kind)
                    .is_some_and(|r| r.starts_with('_'))
            })
        })
        .take(MAX_KEY)
        .collect()
}

/// The problem key (as figure stems spell it) of the instance a class's recommendation is
/// about: its recommended setting's first run.
fn recommended_instance(res: &Results) -> Option<String> {
    let role = crate::role::Role::of(res)?;
    let view = crate::verdicts::ClassView::of(res, &role)?;
    let run = view.recommended_runs().into_iter().next()?;
    Some(crate::style::slug(&run.problem_key()))
}

/// The key figures of an experiment. A class's key figure is its work–precision figure
/// of the recommendation's `instance` (cost against the class's measure, every method, the
/// recommended setting ringed: what the verdict rests on), else that instance's figures by
/// the rank of their kind; otherwise by the rank of their kind.
pub fn key_figures_of<'a>(svgs: &'a [PathBuf], instance: Option<&str>) -> Vec<&'a PathBuf> {
    if let Some(slug) = instance {
        let verdict = format!("work_precision_{slug}");
        if let Some(p) = svgs.iter().find(|p| stem(p) == verdict) {
            return vec![p];
        }
        let mine: Vec<PathBuf> = svgs
            .iter()
            .filter(|p| {
                let s = stem(p);
                s.ends_with(&format!("_{slug}")) || s.contains(&format!("_{slug}_h"))
            })
            .cloned()
            .collect();
        let ranked = key_figures(&mine);
        if let Some(first) = ranked.first() {
            let at = svgs.iter().find(|p| p == first);
            return at.into_iter().collect();
        }
    }
    key_figures(svgs)
}

/// The section: per experiment a heading, what its numbers show, and its key figures.
pub fn section(b: &mut Book, all: &[Results]) {
    b.heading("Experiments at a glance", 1);
    b.paragraph(
        "Per experiment: what its rows show, beside its key figure — for a problem class its work–precision figure on \
         the instance the recommendation is about; otherwise by rank thread scaling, size scaling, parameter map, \
         tolerance, work–precision, convergence, parameter sweep, then time traces. Methods keep one colour and marker \
         in every figure; × marks where a failed run stopped. Every figure and runs table of every \
         experiment is in the HTML report (index.html); its catalog entries are in appendix B.",
    );
    for res in all {
        let svgs = svgs_of(res);
        let findings = crate::findings::findings(res);
        let instance = recommended_instance(res);
        match key_figures_of(&svgs, instance.as_deref()).first() {
            Some(p) => {
                // The first panel alone when the figure has several (see figures::render).
                let key = p.with_extension("key.svg");
                let shown = if key.exists() { &key } else { *p };
                // Paper shows the first panel; screen and Markdown link the whole figure.
                let whole = figure_ref(res, p);
                let fig = FigureRef {
                    svg: shown,
                    ..whole
                };
                b.figure_beside(&res.name, &fig, &findings)
            }
            None => {
                b.heading(&res.name, 2);
                b.paragraph(&format!(
                    "{findings} (No figures: the experiment's rows are in its runs table, index.html.)"
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_figures_rank_by_kind_and_differ_in_kind() {
        let svgs: Vec<PathBuf> = [
            "energy_pendulum_h1e-3.svg",
            "residuals_pendulum_h1e-3.svg",
            "convergence_pendulum.svg",
            "convergence_chain.svg",
            "mapping_x.svg",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let key: Vec<String> = key_figures(&svgs).iter().map(|p| stem(p)).collect();
        assert_eq!(key, vec!["convergence_pendulum"]);
    }

    #[test]
    fn a_class_shows_the_figure_of_its_recommendation_s_instance() {
        let svgs: Vec<PathBuf> = [
            "energy_pendulum-limits_restitution_0.0_h1e-3.svg",
            "work_precision_pendulum-limits_restitution_0.0.svg",
            "work_precision_pendulum-limits_restitution_1.0.svg",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let key: Vec<String> = key_figures_of(&svgs, Some("pendulum-limits_restitution_1.0"))
            .iter()
            .map(|p| stem(p))
            .collect();
        assert_eq!(key, vec!["work_precision_pendulum-limits_restitution_1.0"]);
        let alphabetical: Vec<String> = key_figures_of(&svgs, None)
            .iter()
            .map(|p| stem(p))
            .collect();
        assert_eq!(
            alphabetical,
            vec!["work_precision_pendulum-limits_restitution_0.0"]
        );
    }

    /// A class whose experiment also sweeps tolerances (andrews-work-precision) shows its
    /// work–precision figure, which has the cost axis the verdict uses, not the tolerance
    /// figure that would otherwise rank first.
    #[test]
    fn a_class_shows_its_work_precision_figure_before_any_other_kind() {
        let svgs: Vec<PathBuf> = ["tolerance_andrews.svg", "work_precision_andrews.svg"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let key: Vec<String> = key_figures_of(&svgs, Some("andrews"))
            .iter()
            .map(|p| stem(p))
            .collect();
        assert_eq!(key, vec!["work_precision_andrews"]);
        let unranked: Vec<String> = key_figures_of(&svgs, None)
            .iter()
            .map(|p| stem(p))
            .collect();
        assert_eq!(unranked, vec!["tolerance_andrews"]);
    }

    #[test]
    fn an_experiment_that_sweeps_threads_shows_its_speedup_first() {
        let svgs: Vec<PathBuf> = ["threads_thread-scaling.svg", "work_precision_chain.svg"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let key: Vec<String> = key_figures(&svgs).iter().map(|p| stem(p)).collect();
        assert_eq!(key, vec!["threads_thread-scaling"]);
    }
}
