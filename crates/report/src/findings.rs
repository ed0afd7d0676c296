//! What an experiment's rows say, in a sentence or two: the best and the cheapest setting,
//! the cheapest that meets the target, the rows without a reference, the peers' rows. Read
//! by the experiment's section and by the experiments at a glance.

use crate::data::{Results, Run};
use crate::role::{e3, Role};

/// What the numbers of one experiment show, stated from its rows: cells and failures
/// (with the failing variants), the most accurate run by the experiment's accuracy
/// measure and the cheapest meeting its target, and how the observed orders compare with
/// the declared.
pub fn findings(res: &Results) -> String {
    let n = res.runs.len();
    let refused = |r: &&Run| {
        r.fail_kind
            .as_deref()
            .is_some_and(driftlab_results::FailKind::tag_is_refusal)
    };
    let declined = res.runs.iter().filter(|r| !r.ok()).filter(refused).count();
    let failed: Vec<&Run> = res
        .runs
        .iter()
        .filter(|r| !r.ok())
        .filter(|r| !refused(r))
        .collect();
    let mut out = format!("What the numbers show: {n} cells, {} failed", failed.len());
    if declined > 0 {
        out.push_str(&format!(
            ", {declined} refused (the method does not take the problem's form; not a failure)"
        ));
    }
    if !failed.is_empty() {
        let mut who: Vec<String> = failed.iter().map(|r| r.variant.clone()).collect();
        who.sort();
        who.dedup();
        let shown: Vec<String> = who.iter().take(6).cloned().collect();
        out.push_str(&format!(
            " ({}{})",
            shown.join(", "),
            if who.len() > 6 { ", …" } else { "" }
        ));
    }
    out.push('.');
    out.push_str(&peer_note(res));
    out.push_str(&unreferenced(res));
    out.push_str(&best_and_cheapest(res));
    let declared: Vec<_> = res
        .orders
        .iter()
        .filter(|o| o.expected_order.is_some() && o.observed_order.is_some())
        .collect();
    if !declared.is_empty() {
        let within = declared
            .iter()
            .filter(|o| crate::orders_table::verdict(o) == crate::orders_table::Verdict::Matches)
            .count();
        out.push_str(&format!(
            " Observed orders that match the declared (±0.15 from at least 3 points): {within} of {} fits (the others are listed in the orders table with their verdicts).",
            declared.len()
        ));
    }
    out
}

/// The rows whose error columns are null because their reference could not be trusted
/// (outside its domain, or failed its self-check), with the first reason; empty if none.
pub(crate) fn unreferenced(res: &Results) -> String {
    let judged: Vec<&str> = res
        .runs
        .iter()
        .filter_map(|r| r.reference.as_deref())
        .filter(|w| w.starts_with("outside") || w.starts_with("failed"))
        .collect();
    match judged.first() {
        None => String::new(),
        Some(first) => format!(
            " {} rows have no error columns: their reference is {first}.",
            judged.len()
        ),
    }
}

/// Whether the peer simulators the experiment's `[report] peers` names have rows in the
/// folder (rows whose label starts with the simulator's word), and the script that adds
/// them where they do not.
pub(crate) fn peer_note(res: &Results) -> String {
    let Some(spec) = &res.report else {
        return String::new();
    };
    spec.peers
        .iter()
        .map(|p| {
            let word = format!("{} ", p.simulator.to_lowercase());
            let rows = res
                .runs
                .iter()
                .filter(|r| r.variant.to_lowercase().starts_with(&word))
                .count();
            if rows > 0 {
                format!(" {rows} rows of peer {} stand beside driftlab's.", p.simulator)
            } else {
                format!(
                    " Peer {} has no rows in this folder: `{}` runs it on the same cells and adds them.",
                    p.simulator, p.script
                )
            }
        })
        .collect()
}

/// The best run by the first measure any successful run has (scd, position error,
/// energy error, position residual, in that order), and the cheapest run meeting the
/// experiment's target.
pub(crate) fn best_and_cheapest(res: &Results) -> String {
    let mut out = String::new();
    type Measure = (&'static str, bool, fn(&Run) -> Option<f64>);
    let measures: [Measure; 4] = [
        ("scd", true, |r| r.scd),
        ("max position error", false, |r| r.err_q),
        ("max relative energy error", false, |r| {
            r.max_energy_rel_error
        }),
        ("max position residual", false, |r| r.max_pos_residual),
    ];
    let ok: Vec<&Run> = res.runs.iter().filter(|r| r.ok()).collect();
    if let Some((name, higher, get)) = measures
        .into_iter()
        .find(|(_, _, g)| ok.iter().any(|r| g(r).is_some_and(f64::is_finite)))
    {
        let val = |r: &Run| get(r).filter(|x| x.is_finite());
        let best = ok
            .iter()
            .copied()
            .filter(|r| val(r).is_some())
            .min_by(|a, b| {
                let (x, y) = (val(a).unwrap_or(f64::NAN), val(b).unwrap_or(f64::NAN));
                if higher {
                    y.total_cmp(&x)
                } else {
                    x.total_cmp(&y)
                }
            });
        // Correct digits beyond what the reference itself supports do not rank runs.
        let limit = (name == "scd")
            .then(|| crate::verdicts::reference_digits(&ok))
            .flatten();
        let saturated = |v: f64| limit.is_some_and(|l| v > l);
        match (best, limit) {
            (Some(b), Some(l)) if saturated(val(b).unwrap_or(f64::NAN)) => {
                let n = ok.iter().filter(|r| val(r).is_some_and(saturated)).count();
                out.push_str(&format!(
                    " {n} run(s) reach beyond the reference's own {l:.1} correct digits, where it cannot rank them (the most: {} at h = {:.1e}, scd = {:.2}).",
                    b.variant,
                    b.h,
                    val(b).unwrap_or(f64::NAN)
                ));
            }
            (Some(b), _) => out.push_str(&format!(
                " Best {name}: {} at h = {:.1e} ({}, {} s step time).",
                b.variant,
                b.h,
                if name == "scd" {
                    format!("{:.2}", val(b).unwrap_or(f64::NAN))
                } else {
                    format!("{:.3e}", val(b).unwrap_or(f64::NAN))
                },
                crate::verdicts::sig3(b.step_seconds)
            )),
            (None, _) => {}
        }
    }
    out.push_str(&cheapest_meeting_target(res));
    out
}

/// The cheapest run (step time) that meets the experiment's `[report]` target; nothing
/// without a target (a fastest run regardless of accuracy says nothing).
pub(crate) fn cheapest_meeting_target(res: &Results) -> String {
    let Some(role) = Role::of(res).filter(|r| r.spec.target.is_some()) else {
        return String::new();
    };
    let cheapest = role
        .runs
        .iter()
        .copied()
        .filter(|r| role.meets(r) == Some(true))
        .min_by(|a, b| a.step_seconds.total_cmp(&b.step_seconds));
    match cheapest {
        Some(r) => format!(
            " Cheapest run meeting the target ({}): {} at h = {:.1e} ({} s step time, {} = {}).",
            role.target_text(),
            r.variant,
            r.h,
            crate::verdicts::sig3(r.step_seconds),
            role.spec.measure,
            match role.value(r) {
                Some(v) if role.in_digits() => format!("{v:.2}"),
                v => e3(v),
            }
        ),
        None => format!(" No run meets the target ({}).", role.target_text()),
    }
}
