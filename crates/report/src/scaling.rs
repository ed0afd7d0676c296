//! The cost-against-size table: for a problem with a size parameter (a chain's links),
//! each method variant's time per step at the smallest size from 10³ on, the log–log
//! slope of time per step against the size decade by decade and from 10³ to the largest
//! size, and the measured peak heap per unit of size at the largest size. The decade
//! slopes show where the cost stops being linear.

use crate::book::Book;
use crate::data::{Results, Run};
use crate::figures::{problem_param, sized_runs, step_time};

/// Sizes below this are left out of the slopes (fixed costs per step dominate there).
const SMALLEST: f64 = 1e3;

/// The table's rows of `res` (none when no problem has a size parameter).
pub fn rows(res: &Results) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (problem, name, runs) in sized_runs(res) {
        let mut variants: Vec<(&str, u64)> = runs
            .iter()
            .map(|r| (r.variant.as_str(), r.h.to_bits()))
            .collect();
        variants.sort_unstable();
        variants.dedup();
        for (variant, h) in variants {
            let mine: Vec<&Run> = runs
                .iter()
                .copied()
                .filter(|r| r.variant == variant && r.h.to_bits() == h)
                .collect();
            out.push(row(problem, variant, &name, &mine));
        }
    }
    out
}

/// One variant's row: `(size, seconds per step)` of its successful runs from
/// [`SMALLEST`] on.
fn row(problem: &str, variant: &str, name: &str, runs: &[&Run]) -> Vec<String> {
    let mut points: Vec<(f64, f64, Option<f64>)> = runs
        .iter()
        .filter(|r| r.ok())
        .filter_map(|r| {
            let size = problem_param(r, name)?;
            let heap = r.peak_heap_bytes.map(|b| b / size);
            Some((size, step_time(r), heap))
        })
        .filter(|(size, t, _)| *size >= SMALLEST && t.is_finite() && *t > 0.0)
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let sizes_times: Vec<(f64, f64)> = points.iter().map(|p| (p.0, p.1)).collect();
    let (steps, overall) = slopes(&sizes_times);
    let decades = steps
        .iter()
        .map(|s| format!("{s:.2}"))
        .collect::<Vec<_>>()
        .join(" · ");
    let dash = || "—".to_string();
    let (first, last) = (points.first(), points.last());
    let failed = runs.iter().filter(|r| !r.ok()).count();
    vec![
        problem.to_string(),
        variant.to_string(),
        runs.first().map_or_else(dash, |r| r.step_label()),
        first.map_or_else(dash, |p| format!("{:.3} @ {:.0e}", p.1 * 1e3, p.0)),
        if decades.is_empty() { dash() } else { decades },
        overall.map_or_else(dash, |s| format!("{s:.2}")),
        last.and_then(|p| Some(format!("{:.0} @ {:.0e}", p.2?, p.0)))
            .unwrap_or_else(dash),
        failed.to_string(),
    ]
}

/// The log–log slopes of `(size, time)` points sorted by size: between consecutive
/// points, and from the first to the last (None for fewer than two sizes).
fn slopes(points: &[(f64, f64)]) -> (Vec<f64>, Option<f64>) {
    let slope = |a: (f64, f64), b: (f64, f64)| (b.1 / a.1).ln() / (b.0 / a.0).ln();
    let steps = points.windows(2).map(|w| slope(w[0], w[1])).collect();
    let overall = match (points.first(), points.last()) {
        (Some(&a), Some(&b)) if b.0 > a.0 => Some(slope(a, b)),
        _ => None,
    };
    (steps, overall)
}

/// The section's table in `b` (nothing when `res` has no size parameter).
pub fn table(b: &mut Book, res: &Results) {
    let rows = rows(res);
    if rows.is_empty() {
        return;
    }
    b.heading("Cost per step against size", 3);
    b.paragraph(
        "Per method variant: the time per step (ms, metrics excluded) at the smallest size \
         from 10³ on; the log–log slope of the time per step against the size between \
         consecutive sizes from there (1 is linear cost) and from the smallest to the largest; \
         the measured peak heap per unit of size at the largest size; failed runs at any size. \
         The cost of one KKT factorization and solve alone, the floor a step stands on, is \
         measured by `cargo bench -p driftlab-methods --bench step -- \"kkt floor\"`.",
    );
    b.table(
        &[
            "problem",
            "method",
            "h",
            "ms/step @ size",
            "slope per step of size",
            "slope overall",
            "heap B/unit @ size",
            "failed",
        ],
        &rows,
    );
}

#[cfg(test)]
mod tests {
    use super::slopes;

    #[test]
    fn slopes_are_log_log_ratios_per_step_and_overall() {
        // Linear to 10⁴, then t ∝ N^1.2: slopes 1, 1.2, 1.2; overall (1 + 2·1.2)/3.
        let t = |n: f64| {
            if n <= 1e4 {
                n
            } else {
                1e4 * (n / 1e4).powf(1.2)
            }
        };
        let pts: Vec<(f64, f64)> = [1e3, 1e4, 1e5, 1e6].iter().map(|&n| (n, t(n))).collect();
        let (steps, overall) = slopes(&pts);
        let expected = [1.0, 1.2, 1.2];
        assert_eq!(steps.len(), 3);
        for (s, e) in steps.iter().zip(expected) {
            assert!((s - e).abs() < 1e-12, "{s} vs {e}");
        }
        assert!((overall.expect("two sizes") - 3.4 / 3.0).abs() < 1e-12);
        assert_eq!(slopes(&pts[..1]), (Vec::new(), None));
    }
}
