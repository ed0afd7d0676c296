//! Small helpers shared by the figure kinds: the step-size label of titles and stems,
//! a failed run's legend note, the step sizes shown in time-trace figures, the most
//! curves of one such figure, and the method variants of a set of runs.

use crate::data::Run;

pub(super) fn h_label(h: f64) -> String {
    format!("{h:.3e}").replace(".000e", "e")
}

pub(super) fn failure_note(r: &Run) -> String {
    match (r.ok(), r.fail_time) {
        (false, Some(t)) => format!(" (failed at t = {t:.3})"),
        (false, None) => " (failed)".into(),
        _ => String::new(),
    }
}

/// Most curves in one time-trace figure (more means a sweep, drawn by [`sweeps`](super::sweeps())).
pub(super) const MAX_CURVES: usize = 8;

/// Step sizes shown in time-trace figures: all if at most four, else the extremes.
pub(super) fn shown_hs(hs: &[f64]) -> Vec<f64> {
    if hs.len() <= 4 {
        hs.to_vec()
    } else {
        vec![hs[0], hs[hs.len() - 1]]
    }
}

/// The method variants of `runs`, each once, in order of appearance.
pub(super) fn variants_of(runs: &[&Run]) -> Vec<String> {
    let mut variants: Vec<String> = Vec::new();
    for r in runs {
        if !variants.contains(&r.variant) {
            variants.push(r.variant.clone());
        }
    }
    variants
}
