//! Observed convergence orders from an h sweep (`orders.csv`).
//!
//! For every (problem, problem parameters, method variant) with at least two step sizes,
//! and every quantity `q`, `v`, `lambda`, the error measure is `err_*`: the maximum over
//! all steps of the ∞-norm error against the exact solution. The error at a single time
//! (`final_err_*`) can be accidentally small where the leading error term changes sign
//! (measured: taylor + projection on the horizontal pendulum shows "order 2.3" in q at
//! t = 2 s); the maximum cannot, and it also exposes initial layers that do not shrink
//! with h as what they are, an order reduction. The observed order is the
//! least-squares slope of `log10(err)` against `log10(h)` over the **asymptotic range**,
//! chosen by this rule (no hand picking):
//!
//! 1. keep cells with `status = ok` and a finite error above the floor: the round-off
//!    floor [`ROUNDOFF_FLOOR`], or ten times the reference's own declared accuracy
//!    (`reference_accuracy`) when that is larger (below it, errors measure floating point
//!    or the reference, not the method); each step size counts once (two cells at one h
//!    are one point, not two);
//! 2. sort by h and form the local slopes between neighbours;
//! 3. take the **longest contiguous range of h whose local slopes all lie within
//!    ±[`SLOPE_BAND`] of their median**; among equally long ranges, the one whose slopes
//!    spread least around their median, then the one at smaller h (closer to the
//!    asymptotic regime). At least two points; with two, r² = 1 by construction.
//!
//! The row reports the fit range `h_min, h_max`, the number of points and r². A method
//! with fewer than two usable points gets a row with an empty `observed_order` and the
//! reason in `note` — never a silently missing row.

use driftlab_results::schema::runs;

pub use driftlab_results::order_note::{ROUNDOFF_FLOOR, SLOPE_BAND};

/// One line of `orders.csv`: the schema's orders row, which the report reads back through
/// the same accessors.
pub use driftlab_results::schema::orders::Row as OrderRow;

pub use driftlab_results::fit::fit_line;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// The asymptotic range of `(h, err)` points sorted by increasing h: indices `[i, j]`.
pub fn asymptotic_range(logh: &[f64], loge: &[f64]) -> Option<(usize, usize)> {
    let n = logh.len();
    if n < 2 {
        return None;
    }
    let slopes: Vec<f64> = (0..n - 1)
        .map(|k| (loge[k + 1] - loge[k]) / (logh[k + 1] - logh[k]))
        .collect();
    let mut best: Option<(usize, usize, f64)> = None;
    for i in 0..n - 1 {
        for j in (i + 1)..n {
            let mut s = slopes[i..j].to_vec();
            let med = median(&mut s);
            let spread = slopes[i..j]
                .iter()
                .fold(0.0_f64, |m, x| m.max((x - med).abs()));
            if spread <= SLOPE_BAND {
                let better = match best {
                    None => true,
                    Some((bi, bj, bs)) => {
                        (j - i) > (bj - bi) || ((j - i) == (bj - bi) && spread < bs - 1e-12)
                    }
                };
                if better {
                    best = Some((i, j, spread));
                }
            }
        }
    }
    best.map(|(i, j, _)| (i, j))
}

/// The error measure of one quantity in a row (`err_q`, `err_v` or `err_lambda`).
type ErrorOf = fn(&runs::Row) -> Option<f64>;

/// Fit orders for all groups of `rows` that sweep h.
pub fn fit_orders(rows: &[runs::Row]) -> Vec<OrderRow> {
    // Orders are fitted over fixed step sizes; error-controlled cells have none.
    let fixed: Vec<&runs::Row> = rows.iter().filter(|r| r.rtol.is_none()).collect();
    let Some(first) = fixed.first() else {
        return Vec::new();
    };
    let threads = first.threads;
    let key = |r: &runs::Row| {
        (
            r.problem.clone(),
            r.problem_params.clone(),
            r.variant.clone(),
            r.params.clone(),
        )
    };
    let mut keys: Vec<(String, String, String, String)> = Vec::new();
    for r in &fixed {
        let k = key(r);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out = Vec::new();
    for k in keys {
        let group: Vec<&runs::Row> = fixed
            .iter()
            .copied()
            .filter(|r| key(r) == k && r.threads == threads)
            .collect();
        let mut hs: Vec<f64> = group.iter().map(|r| r.h).collect();
        hs.sort_by(f64::total_cmp);
        hs.dedup();
        if hs.len() < 2 {
            continue;
        }
        let g = group[0];
        let quantities: [(&str, ErrorOf, Option<f64>); 3] = [
            ("q", |r| r.err_q, g.declared_order_q),
            ("v", |r| r.err_v, g.declared_order_v),
            ("lambda", |r| r.err_lambda, g.declared_order_lambda),
        ];
        for (quantity, get, declared) in quantities {
            if group.iter().all(|r| get(r).is_none()) {
                continue; // no reference for this quantity (no exact v for an index-1 DAE …)
            }
            let mut row = OrderRow {
                problem: g.problem.clone(),
                problem_params: g.problem_params.clone(),
                method: g.method.clone(),
                variant: g.variant.clone(),
                params: g.params.clone(),
                quantity: quantity.into(),
                observed_order: None,
                expected_order: declared,
                h_min: None,
                h_max: None,
                points: 0,
                r2: None,
                note: String::new(),
            };
            fit_group(&mut row, &group, get);
            out.push(row);
        }
    }
    out
}

/// The error floor of a group: [`ROUNDOFF_FLOOR`], or ten times the largest declared
/// accuracy of its reference when that is larger.
fn floor_of(group: &[&runs::Row]) -> f64 {
    group
        .iter()
        .filter_map(|r| r.reference_accuracy)
        .fold(ROUNDOFF_FLOOR, |f, a| f.max(10.0 * a))
}

/// Fill `row`'s fit from the errors `get` of `group` (one h sweep): the asymptotic range,
/// its slope, range and r², or a note why there are too few points.
fn fit_group(row: &mut OrderRow, group: &[&runs::Row], get: ErrorOf) {
    let floor = floor_of(group);
    let mut pts: Vec<(f64, f64)> = group
        .iter()
        .filter(|r| r.ok())
        .map(|r| (r.h, get(r).unwrap_or(f64::NAN)))
        .filter(|(_, e)| e.is_finite() && *e > floor)
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    // One point per step size: cells at one h (a spec can no longer make them, but a
    // merged or imported table might) are one piece of evidence, not several.
    pts.dedup_by(|a, b| a.0.to_bits() == b.0.to_bits());
    let logh: Vec<f64> = pts.iter().map(|p| p.0.log10()).collect();
    let loge: Vec<f64> = pts.iter().map(|p| p.1.log10()).collect();
    match asymptotic_range(&logh, &loge) {
        Some((i, j)) => {
            let (slope, r2) = fit_line(&logh[i..=j], &loge[i..=j]);
            row.observed_order = Some(slope);
            row.h_min = Some(pts[i].0);
            row.h_max = Some(pts[j].0);
            row.points = (j - i + 1) as u64;
            row.r2 = Some(r2);
        }
        None => {
            let failed = group.iter().filter(|r| !r.ok()).count();
            let what = if floor > ROUNDOFF_FLOOR {
                format!("ten times the reference's own accuracy, {floor:e}")
            } else {
                format!("the round-off floor {ROUNDOFF_FLOOR:e}")
            };
            row.note = format!(
                "fewer than 2 usable points ({} distinct steps with ok cells above {what}, {failed} failed)",
                pts.len()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_rule_skips_preasymptotic_and_roundoff_points() {
        // Order 2 for h ≤ 0.1, a saturated point at h = 1 and a round-off-flattened one.
        let h = [1e-4, 1e-3, 1e-2, 1e-1, 1.0];
        let e = [3e-10, 1e-8, 1e-6, 1e-4, 2e-4];
        let lh: Vec<f64> = h.iter().map(|x: &f64| x.log10()).collect();
        let le: Vec<f64> = e.iter().map(|x: &f64| x.log10()).collect();
        let (i, j) = asymptotic_range(&lh, &le).unwrap();
        assert_eq!((i, j), (1, 3));
        let (s, r2) = fit_line(&lh[i..=j], &le[i..=j]);
        assert!((s - 2.0).abs() < 1e-12 && (r2 - 1.0).abs() < 1e-12);
    }
}
