//! A stored (ξ, ω_n, h) map against the linear region of its update: which cells ran in
//! each part of the region, where the smallest residuals sit, which cells ran outside the
//! region (and how much the linear map lets them grow in the run) and which failed inside
//! it (with the rows' kinds and times, and the map's other methods at the same step).

use super::region::{self, Region, Scheme};
use crate::data::{Results, Run};

/// One cell of a map: its row, its (ξ, ω_n), its numbers (a, b) = (ξω_n h, ω_n h) and
/// its region.
pub struct Cell<'a> {
    /// The stored row.
    pub run: &'a Run,
    /// Damping ratio ξ \[1\].
    pub xi: f64,
    /// Natural frequency ω_n \[1/s\].
    pub wn: f64,
    /// a = ξω_n h \[1\].
    pub a: f64,
    /// b = ω_n h \[1\].
    pub b: f64,
    /// The region of the row's update.
    pub region: Region,
}

/// The cells of one law (`baumgarte`, `pinocchio euler`) at one step h, and the map's
/// rows of other methods at that step (its drift-free references).
pub struct Slice<'a> {
    /// The law's label.
    pub group: String,
    /// Step size \[s\].
    pub h: f64,
    /// Its cells, in the stored order.
    pub cells: Vec<Cell<'a>>,
    /// The map's rows at this h that are not cells of any law (references).
    pub others: Vec<&'a Run>,
}

/// The law a row belongs to: its label before the parameters (`baumgarte`, `pinocchio
/// euler`), for the rows with ξ and ω_n.
pub fn map_group(r: &Run) -> Option<String> {
    r.method_param("xi")?;
    r.method_param("omega_n")?;
    Some(
        r.variant
            .split(" [")
            .next()
            .unwrap_or(&r.variant)
            .to_string(),
    )
}

/// The update of a row: semi-implicit Euler where a peer row says `"scheme": "euler"`,
/// the catalog's Taylor update otherwise.
pub fn scheme_of(r: &Run) -> Scheme {
    let scheme = serde_json::from_str::<serde_json::Value>(&r.params)
        .ok()
        .and_then(|v| v.get("scheme").and_then(|s| s.as_str()).map(str::to_owned));
    match scheme.as_deref() {
        Some("euler") => Scheme::Euler,
        _ => Scheme::Taylor,
    }
}

/// Whether two step sizes are the same stored step.
fn same_h(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-12 * y.abs()
}

/// The map's slices: every law × every step h that has cells of it, laws by name, h
/// ascending.
pub fn slices(map: &Results) -> Vec<Slice<'_>> {
    let mut hs: Vec<f64> = map.runs.iter().map(|r| r.h).collect();
    hs.sort_by(f64::total_cmp);
    hs.dedup_by(|x, y| same_h(*x, *y));
    let mut groups: Vec<String> = map.runs.iter().filter_map(map_group).collect();
    groups.sort();
    groups.dedup();
    let mut out = Vec::new();
    for g in &groups {
        for &h in &hs {
            let at = map.runs.iter().filter(|r| same_h(r.h, h));
            let cells: Vec<Cell> = at
                .clone()
                .filter(|r| map_group(r).as_deref() == Some(g.as_str()))
                .map(|run| cell(run, h))
                .collect();
            if cells.is_empty() {
                continue;
            }
            let others = at.filter(|r| map_group(r).is_none()).collect();
            out.push(Slice {
                group: g.clone(),
                h,
                cells,
                others,
            });
        }
    }
    out
}

/// A row as a cell of the map at step h.
fn cell(run: &Run, h: f64) -> Cell<'_> {
    let xi = run.method_param("xi").unwrap_or(f64::NAN);
    let wn = run.method_param("omega_n").unwrap_or(f64::NAN);
    let (a, b) = region::numbers(xi, wn, h);
    Cell {
        run,
        xi,
        wn,
        a,
        b,
        region: region::region(scheme_of(run), a, b),
    }
}

impl Slice<'_> {
    /// `ran/all` of the cells in region `r`.
    pub fn ran_of(&self, r: Region) -> String {
        let all = self.cells.iter().filter(|c| c.region == r);
        let ran = all.clone().filter(|c| c.run.ok()).count();
        format!("{ran}/{}", all.count())
    }

    /// The cells that ran with a max position residual, smallest residual first.
    pub fn ranked(&self) -> Vec<&Cell<'_>> {
        let mut good: Vec<&Cell> = self
            .cells
            .iter()
            .filter(|c| c.run.ok() && c.run.max_pos_residual.is_some())
            .collect();
        good.sort_by(|x, y| {
            let r = |c: &Cell| c.run.max_pos_residual.unwrap_or(f64::INFINITY);
            r(x).total_cmp(&r(y))
        });
        good
    }

    /// The corner the derivation points to (module doc of `tuning.rs`): among the cells
    /// that ran on or inside the region, the largest b = ω_n h, and at that b the largest
    /// a = ξω_n h.
    pub fn corner(&self) -> Option<&Cell<'_>> {
        let inside = self
            .cells
            .iter()
            .filter(|c| c.run.ok() && c.region != Region::Unstable);
        let b_max = inside.clone().map(|c| c.b).fold(f64::NAN, f64::max);
        inside
            .filter(|c| same_h(c.b, b_max))
            .max_by(|x, y| x.a.total_cmp(&y.a))
    }
}

/// One row of the table of cells per region: law, h, cells, and `ran/all` per region.
pub fn count_row(s: &Slice) -> Vec<String> {
    vec![
        s.group.clone(),
        format!("{:e}", s.h),
        format!("{}", s.cells.len()),
        s.ran_of(Region::Stable),
        s.ran_of(Region::Marginal),
        s.ran_of(Region::Unstable),
    ]
}

/// The rows of the best-cells table for one slice: the three cells with the smallest max
/// position residual, ranked, or one row saying that none ran.
pub fn best_rows(s: &Slice) -> Vec<Vec<String>> {
    let ranked = s.ranked();
    if ranked.is_empty() {
        let mut row = vec![s.group.clone(), format!("{:e}", s.h), "—".into()];
        row.extend([
            "none ran".into(),
            "".into(),
            "".into(),
            "".into(),
            "".into(),
        ]);
        row.push("—".into());
        return vec![row];
    }
    ranked
        .iter()
        .take(3)
        .enumerate()
        .map(|(k, c)| {
            vec![
                s.group.clone(),
                format!("{:e}", s.h),
                format!("{}", k + 1),
                format!("{}", c.xi),
                format!("{}", c.wn),
                format!("{:.3}", c.a),
                format!("{:.3}", c.b),
                c.region.word().into(),
                format!("{:.2e}", c.run.max_pos_residual.unwrap_or(f64::NAN)),
            ]
        })
        .collect()
}

/// `lo–hi` of some values (one value when they agree to 3 digits), formatted by `f`.
fn span(values: impl Iterator<Item = f64>, f: impl Fn(f64) -> String) -> String {
    let v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if v.is_empty() {
        "—".into()
    } else if f(lo) == f(hi) {
        f(lo)
    } else {
        format!("{}–{}", f(lo), f(hi))
    }
}

/// The cells that ran outside the region, each with the growth ρ(A)^N its linear map
/// allows over the N steps it took (the run ends before the error reaches the
/// divergence bound), or None when there are none.
pub fn ran_outside(s: &Slice) -> Option<String> {
    let cells: Vec<String> = s
        .cells
        .iter()
        .filter(|c| c.run.ok() && c.region == Region::Unstable)
        .map(|c| {
            let g = region::growth(scheme_of(c.run), c.a, c.b, c.run.steps as f64);
            format!(
                "ξ = {}, ω_n = {} (ξω_n h = {:.3}, ω_n h = {:.3}; ρ^N = {g:.1e} over N = {} steps; max ‖Φ‖∞ = {:.2e})",
                c.xi,
                c.wn,
                c.a,
                c.b,
                c.run.steps,
                c.run.max_pos_residual.unwrap_or(f64::NAN)
            )
        })
        .collect();
    (!cells.is_empty()).then(|| {
        format!(
            "{} at h = {:e}: {} ran though outside the region — outside means the error grows by ρ per step, \
             not that it reaches the divergence bound within the run: {}.",
            s.group,
            s.h,
            cells.len(),
            cells.join("; ")
        )
    })
}

/// The cells that failed inside the region: how many, their kinds, when (time and step
/// of N), over which (ξ, ω_n), and how the map's other methods fared at the same h; None
/// when every cell inside ran.
pub fn failed_inside(s: &Slice) -> Option<String> {
    let failed: Vec<&Cell> = s
        .cells
        .iter()
        .filter(|c| !c.run.ok() && c.region == Region::Stable)
        .collect();
    if failed.is_empty() {
        return None;
    }
    let mut kinds: Vec<&str> = failed
        .iter()
        .map(|c| c.run.fail_kind.as_deref().unwrap_or("unknown"))
        .collect();
    kinds.sort();
    kinds.dedup();
    let n = (s.cells[0].run.t_end / s.h).round();
    let others: Vec<String> = s
        .others
        .iter()
        .map(|r| format!("{} {}", r.variant, if r.ok() { "ran" } else { "failed" }))
        .collect();
    Some(format!(
        "{} at h = {:e}: {} of the {} cells inside the region failed ({}) at t = {} s (step {} of {n}), \
         over ξ = {} and ω_n = {} 1/s, where their linear maps decay the error by ρ = {} per step{}.",
        s.group,
        s.h,
        failed.len(),
        s.cells.iter().filter(|c| c.region == Region::Stable).count(),
        kinds.join(", "),
        span(failed.iter().filter_map(|c| c.run.fail_time), |t| format!("{t:.3}")),
        span(failed.iter().map(|c| c.run.steps as f64), |k| format!("{k:.0}")),
        span(failed.iter().map(|c| c.xi), |x| format!("{x}")),
        span(failed.iter().map(|c| c.wn), |x| format!("{x}")),
        span(
            failed.iter().map(|c| region::spectral_radius(region::matrix(
                scheme_of(c.run),
                c.a,
                c.b
            ))),
            |x| format!("{x:.4}")
        ),
        if others.is_empty() {
            String::new()
        } else {
            format!("; at the same h {}", others.join(", "))
        }
    ))
}

/// Whether the best cell of each slice where cells ran is its [`Slice::corner`]: the
/// sentence that says so, with the exceptions named and how many of the best cells lie
/// on the line ξω_n h = 1 itself.
pub fn corner_check(slices: &[&Slice]) -> Option<String> {
    // (slice, best is the corner, best is on the line a = 1)
    let judged: Vec<(&Slice, bool, bool)> = slices
        .iter()
        .filter_map(|s| {
            let best = *s.ranked().first()?;
            let corner = s.corner()?;
            let on_line = best.region == Region::Marginal && (best.a - 1.0).abs() <= 1e-9;
            Some((*s, std::ptr::eq(best.run, corner.run), on_line))
        })
        .collect();
    if judged.is_empty() {
        return None;
    }
    let hits = judged.iter().filter(|j| j.1).count();
    let on_line = judged.iter().filter(|j| j.2).count();
    let misses: Vec<String> = judged
        .iter()
        .filter(|j| !j.1)
        .map(|(s, _, _)| format!("{} at h = {:e}", s.group, s.h))
        .collect();
    Some(format!(
        "Measured: the smallest max ‖Φ‖∞ is the cell of largest ω_n h on or inside the region, at its largest ξω_n h, \
         at {hits} of the {} steps where cells ran{}; {on_line} of those best cells lie on the line ξω_n h = 1 itself.",
        judged.len(),
        if misses.is_empty() {
            String::new()
        } else {
            format!(" (not at {})", misses.join(", "))
        }
    ))
}
