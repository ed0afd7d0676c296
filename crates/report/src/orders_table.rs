//! The orders tables: every fitted order of every experiment with its verdict and, where
//! it does not match, the reason (the spec's `[[order_notes]]`, or what the fit itself
//! shows); and the curated main-body table — per method variant and quantity, the fit
//! over the most points (the best-conditioned problem of the catalog for that method).

use crate::book::Book;
use crate::data::{Order, Results};

/// Columns of the full orders table (appendix and `tables/orders.*`).
pub const HEADERS: [&str; 11] = [
    "experiment",
    "problem",
    "method",
    "qty",
    "observed",
    "declared",
    "fit range h",
    "pts",
    "r²",
    "verdict",
    "why",
];

/// Tolerance of "matches": the convergence suite's |observed − declared| ≤ 0.15.
const ORDER_MATCH: f64 = 0.15;
/// A fit through fewer points is no order (two points always give r² = 1).
const ORDER_MIN_POINTS: u64 = 3;

/// What a fitted order amounts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Fewer than 3 points in the asymptotic window: no order.
    NoWindow,
    /// No declared order: a measurement.
    Measured,
    /// Within ±0.15 of the declared order.
    Matches,
    /// A mismatch from a fit whose points are not on one line (r² < 0.999).
    PreAsymptotic,
    /// Above the declared order.
    Superconvergent,
    /// Below the declared order.
    Reduced,
}

/// The verdict of one fitted order.
pub fn verdict(o: &Order) -> Verdict {
    let Some(observed) = o
        .observed_order
        .filter(|x| x.is_finite() && o.points >= ORDER_MIN_POINTS)
    else {
        return Verdict::NoWindow;
    };
    let Some(expected) = o.expected_order else {
        return Verdict::Measured;
    };
    if (observed - expected).abs() <= ORDER_MATCH {
        Verdict::Matches
    } else if o.r2.is_none_or(|r2| r2.is_nan() || r2 < R2_LINE) {
        Verdict::PreAsymptotic
    } else if observed > expected {
        Verdict::Superconvergent
    } else {
        Verdict::Reduced
    }
}

/// The verdict as the tables print it (the r² of a pre-asymptotic fit included).
pub fn verdict_text(o: &Order) -> String {
    match verdict(o) {
        Verdict::NoWindow => "no window".into(),
        Verdict::Measured => "measured (none declared)".into(),
        Verdict::Matches => "matches".into(),
        Verdict::PreAsymptotic => format!("pre-asymptotic (r² = {:.4})", o.r2.unwrap_or(0.0)),
        Verdict::Superconvergent => "superconvergent".into(),
        Verdict::Reduced => "reduced".into(),
    }
}

/// Why a row does not match, in one line: the spec's note if one explains it, else what
/// the fit shows (too few points above the floor; points off one line); empty for a
/// matching or measured row, "unexplained" for a clean mismatch without a note.
pub fn reason(res: &Results, o: &Order) -> String {
    let v = verdict(o);
    if matches!(v, Verdict::Matches | Verdict::Measured) {
        return String::new();
    }
    let k = o.key();
    let note = res
        .order_notes
        .iter()
        .find(|n| n.explains(&k, &o.quantity))
        .map(|n| n.reason.clone());
    match (v, note) {
        (_, Some(n)) => n,
        (Verdict::NoWindow, None) => {
            let why = if o.note.is_empty() {
                format!("{} points in the window", o.points)
            } else {
                o.note.clone()
            };
            format!("{why}; ≥ {ORDER_MIN_POINTS} points above the round-off floor needed")
        }
        (Verdict::PreAsymptotic, None) => {
            "the log–log points are not on one line: the steps are outside the asymptotic range"
                .into()
        }
        _ => "unexplained".into(),
    }
}

/// One row per line of every experiment's `orders.csv`.
pub fn rows(all: &[Results]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for res in all {
        for o in &res.orders {
            rows.push(vec![
                res.name.clone(),
                o.problem.clone(),
                o.variant.clone(),
                o.quantity.clone(),
                o.observed_order.map_or("—".into(), |x| format!("{x:.2}")),
                o.expected_order.map_or("—".into(), |x| format!("{x}")),
                match (o.h_min, o.h_max) {
                    (Some(a), Some(b)) => format!("{a:.1e}–{b:.1e}"),
                    _ => "—".into(),
                },
                format!("{}", o.points),
                o.r2.map_or("—".into(), |x| format!("{x:.4}")),
                verdict_text(o),
                reason(res, o),
            ]);
        }
    }
    rows
}

/// How many rows of each verdict, and how many mismatches are unexplained.
pub fn counts(all: &[Results]) -> String {
    let mut n = [0usize; 6];
    let mut unexplained = 0;
    for res in all {
        for o in &res.orders {
            n[verdict(o) as usize] += 1;
            unexplained += usize::from(reason(res, o) == "unexplained");
        }
    }
    format!(
        "{} fitted orders: {} match, {} superconvergent, {} reduced, {} pre-asymptotic, {} without a window, {} measured (none declared); {} mismatches without a stated reason",
        n.iter().sum::<usize>(),
        n[Verdict::Matches as usize],
        n[Verdict::Superconvergent as usize],
        n[Verdict::Reduced as usize],
        n[Verdict::PreAsymptotic as usize],
        n[Verdict::NoWindow as usize],
        n[Verdict::Measured as usize],
        unexplained
    )
}

/// A mismatch from a fit below this r² is pre-asymptotic (its points are not on one line).
const R2_LINE: f64 = 0.999;

/// The fitting rule, stated once for both tables, from the constants the fit and the
/// verdicts use.
fn rule() -> String {
    use driftlab_results::order_note::{ROUNDOFF_FLOOR, SLOPE_BAND};
    format!(
        "Least-squares slope of log(max-over-run error) against log(h) over the longest window of consecutive step \
         sizes whose local slopes stay within ±{SLOPE_BAND} of their median, errors above {ROUNDOFF_FLOOR:e} (driftlab-runner \
         `orders`). A fit needs at least {ORDER_MIN_POINTS} points (two always give r² = 1). Verdict: matches (|observed − \
         declared| ≤ {ORDER_MATCH}, the convergence suite's tolerance), superconvergent, reduced, pre-asymptotic (a mismatch \
         from a fit with r² < {R2_LINE}), no window, or measured (no declared order). Every row that does not match says why."
    )
}

/// The main body's orders table: per catalog method (with its decorators) with declared
/// orders, and per quantity, the fit over the most points (ties: the larger r²) among all experiments —
/// observed (declared), verdict, and where it was measured.
pub fn main_section(b: &mut Book, all: &[Results]) {
    b.heading("Observed orders (curated)", 2);
    b.paragraph(&format!(
        "{} Shown here: per method (catalog id and decorators) and declared order, for q, v and λ each the fit \
         with the most points over the whole catalog (its best-conditioned problem and variant); the full list is in the appendix. {}.",
        rule(),
        counts(all)
    ));
    b.table_wrapped(
        &[
            "method",
            "declared",
            "q",
            "v",
            "λ",
            "best fit of q (pts)",
            "why not",
        ],
        &curated_rows(all),
        &[0.17, 0.07, 0.09, 0.09, 0.09, 0.24, 0.25],
    );
}

/// The fit a curated cell shows: the one over the most points, ties to the larger r².
fn better(a: &Order, b: &Order) -> bool {
    (a.points, a.r2.unwrap_or(0.0)) > (b.points, b.r2.unwrap_or(0.0))
}

/// A curated cell: the observed order and a short verdict.
fn cell(o: Option<&Order>) -> String {
    let Some(o) = o else {
        return "—".into();
    };
    let short = match verdict(o) {
        Verdict::Matches => "ok",
        Verdict::Superconvergent => "super",
        Verdict::Reduced => "reduced",
        Verdict::PreAsymptotic => "pre-asympt.",
        Verdict::NoWindow => return "no window".into(),
        Verdict::Measured => "measured",
    };
    format!("{:.2} {short}", o.observed_order.unwrap_or(f64::NAN))
}

/// The rows of the curated table: one per catalog method and declared order (Gauss
/// s = 1, 2, 3 are three rows), the best fit of q, v and λ each, where q's was measured,
/// and the reasons of the cells that do not match.
fn curated_rows(all: &[Results]) -> Vec<Vec<String>> {
    type Best<'a> = [Option<(&'a Results, &'a Order)>; 3];
    let mut best: std::collections::BTreeMap<(String, String), Best> =
        std::collections::BTreeMap::new();
    for res in all {
        for o in res.orders.iter() {
            let Some(expected) = o.expected_order else {
                continue;
            };
            let Some(k) = ["q", "v", "lambda"].iter().position(|q| *q == o.quantity) else {
                continue;
            };
            let slot = &mut best
                .entry((o.method.clone(), format!("{expected}")))
                .or_insert([None; 3])[k];
            if slot.is_none_or(|(_, b)| better(o, b)) {
                *slot = Some((res, o));
            }
        }
    }
    best.into_iter()
        .map(|((method, declared), fits)| {
            // Quantities that share a reason share its line.
            let mut why: Vec<(Vec<&str>, String)> = Vec::new();
            for (q, f) in ["q", "v", "λ"].iter().zip(&fits) {
                if let Some((res, o)) = f {
                    let r = reason(res, o);
                    match why.iter_mut().find(|(_, x)| *x == r) {
                        _ if r.is_empty() => {}
                        Some((qs, _)) => qs.push(q),
                        None => why.push((vec![q], r)),
                    }
                }
            }
            let why: Vec<String> = why
                .into_iter()
                .map(|(qs, r)| format!("{}: {r}", qs.join(", ")))
                .collect();
            let at = fits[0].as_ref().map_or("—".to_string(), |(res, o)| {
                format!(
                    "{}: {} on {} ({} pts)",
                    res.name, o.variant, o.problem, o.points
                )
            });
            vec![
                method,
                declared,
                cell(fits[0].map(|f| f.1)),
                cell(fits[1].map(|f| f.1)),
                cell(fits[2].map(|f| f.1)),
                at,
                why.join("; "),
            ]
        })
        .collect()
}

/// The appendix: every fitted order.
pub fn full_section(b: &mut Book, all: &[Results]) {
    b.heading("Appendix A — every observed order", 1);
    b.paragraph(&rule());
    b.table(&HEADERS, &rows(all));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(observed: f64, expected: Option<f64>, points: u64, r2: f64) -> Order {
        Order {
            observed_order: Some(observed),
            expected_order: expected,
            points,
            r2: Some(r2),
            quantity: "q".into(),
            method: "m".into(),
            variant: "m".into(),
            ..Order::default()
        }
    }

    #[test]
    fn verdicts_follow_the_rules() {
        assert_eq!(verdict(&order(4.0, Some(6.0), 2, 1.0)), Verdict::NoWindow);
        assert_eq!(verdict(&order(2.1, Some(2.0), 5, 0.9999)), Verdict::Matches);
        assert_eq!(verdict(&order(1.5, None, 5, 0.9999)), Verdict::Measured);
        assert_eq!(
            verdict(&order(5.01, Some(4.0), 4, 0.9999)),
            Verdict::Superconvergent
        );
        assert_eq!(
            verdict(&order(1.03, Some(2.0), 4, 0.9999)),
            Verdict::Reduced
        );
        assert_eq!(
            verdict_text(&order(0.07, Some(1.0), 4, 0.5)),
            "pre-asymptotic (r² = 0.5000)"
        );
    }

    #[test]
    fn reasons_come_from_notes_or_the_fit() {
        let mut res = Results::default();
        let reduced = order(1.03, Some(2.0), 4, 0.9999);
        assert_eq!(reason(&res, &reduced), "unexplained");
        assert_eq!(reason(&res, &order(2.0, Some(2.0), 4, 1.0)), "");
        assert!(reason(&res, &order(6.0, Some(6.0), 2, 1.0)).contains("≥ 3 points"));
        res.order_notes
            .push(driftlab_results::order_note::OrderNote {
                select: vec!["m".into()],
                quantity: Some("q".into()),
                reason: "cited reduction".into(),
            });
        assert_eq!(reason(&res, &reduced), "cited reduction");
    }

    #[test]
    fn the_curated_table_takes_the_fit_over_most_points() {
        let mut a = Results {
            name: "a".into(),
            ..Results::default()
        };
        a.orders.push(order(1.5, Some(2.0), 3, 0.99));
        let mut b = Results {
            name: "b".into(),
            ..Results::default()
        };
        b.orders.push(order(2.01, Some(2.0), 6, 0.9999));
        let rows = curated_rows(&[a, b]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0][2], "2.01 ok");
        assert_eq!(rows[0][3], "—");
        assert!(rows[0][5].starts_with("b: "));
    }
}
