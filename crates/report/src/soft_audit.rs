//! The audit of MuJoCo's soft constraints against the exact solution (issue 47, item 4):
//! for every experiment whose runs table holds MuJoCo rows measured against a converged
//! reference (`err_q`, written by `scripts/mujoco-loops.sh`, for the shipped loops or a
//! user's `--file F.xml`), per model:
//!
//! * the **error budget against the step**: for each MuJoCo setting (integrator × solref,
//!   at the largest solver iteration count run) and each of driftlab's exact methods, the
//!   loop residual max ‖Φ‖∞ and the trajectory error max ‖q − q_ref‖∞ at every step, with
//!   the slope p of a least-squares fit `value ∝ h^p` (a soft constraint whose residual
//!   does not fall with the step shows p ≈ 0: its time constant, not the step, sets it);
//! * **where the exact methods cost less at equal error**: for each MuJoCo row on its own
//!   error–time front (no other MuJoCo row both cheaper and more accurate), driftlab's
//!   cheapest exact row with an error at most MuJoCo's, both step times as median and range
//!   over their repeated runs (the same simulated interval), and a verdict only where the
//!   two ranges do not overlap.
//!
//! Errors below ten times the reference's own accuracy (`reference_accuracy`, the
//! reference method against itself at twice its step) are not resolved and are shown as
//! such; they are not used to pick the cheaper side.

use crate::book::Book;
use crate::data::{Results, Run};
use std::collections::BTreeMap;

/// The simulator id of MuJoCo's peer rows (`runs::METHOD`).
const MUJOCO: &str = "mujoco";

/// A residual at or below this is round-off (no slope is fitted through it).
const ROUND_OFF: f64 = 1e-12;

/// Errors below this many times the reference's accuracy are not resolved.
const RESOLVED_ABOVE: f64 = 10.0;

/// One model's rows of one experiment.
struct Model<'a> {
    label: String,
    mujoco: Vec<&'a Run>,
    exact: Vec<&'a Run>,
    /// The reference's own accuracy (the largest over the exact rows that declare it).
    accuracy: Option<f64>,
}

/// A MuJoCo row's parameters, from its `params` JSON.
struct Setting {
    integrator: String,
    solref: String,
    iterations: u64,
}

fn setting(r: &Run) -> Setting {
    let v: serde_json::Value = serde_json::from_str(&r.params).unwrap_or_default();
    let text = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("?").to_string();
    let solref = match text("solref_setting").as_str() {
        "tune" => "driftlab tune's (2h, 1)".to_string(),
        "default" => "MuJoCo's default (0.02, 1)".to_string(),
        "model" => match v.get("solref").and_then(|s| s.as_array()) {
            Some(s) => format!(
                "the model's ({})",
                s.iter()
                    .filter_map(|x| x.as_f64())
                    .map(|x| format!("{x}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "the model's own".to_string(),
        },
        other => other.to_string(),
    };
    Setting {
        integrator: text("integrator"),
        solref,
        iterations: v.get("iterations").and_then(|x| x.as_u64()).unwrap_or(0),
    }
}

/// The model a row ran: its shipped id or its file's name.
fn model_label(problem_params: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(problem_params).unwrap_or_default();
    if let Some(id) = v.get("robot").and_then(|x| x.as_str()) {
        return id.to_string();
    }
    v.get("file")
        .and_then(|x| x.as_str())
        .map(|f| f.rsplit('/').next().unwrap_or(f).to_string())
        .unwrap_or_else(|| problem_params.to_string())
}

/// The audited models of `res`: those with MuJoCo rows measured against a reference.
fn models(res: &Results) -> Vec<Model<'_>> {
    let mut by: BTreeMap<String, Model> = BTreeMap::new();
    for r in &res.runs {
        let label = model_label(&r.problem_params);
        let m = by.entry(label.clone()).or_insert_with(|| Model {
            label,
            mujoco: Vec::new(),
            exact: Vec::new(),
            accuracy: None,
        });
        if r.method == MUJOCO {
            m.mujoco.push(r);
        } else {
            m.exact.push(r);
            if let Some(a) = r.reference_accuracy.filter(|a| a.is_finite()) {
                m.accuracy = Some(m.accuracy.map_or(a, |b: f64| b.max(a)));
            }
        }
    }
    by.into_values()
        .filter(|m| m.mujoco.iter().any(|r| r.err_q.is_some()))
        .collect()
}

/// The slope p of `value ∝ h^p` by least squares over the points given (None below 3).
fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|(h, y)| *h > 0.0 && y.is_finite() && *y > 0.0)
        .map(|(h, y)| (h.ln(), y.ln()))
        .collect();
    if pts.len() < 3 {
        return None;
    }
    let n = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / n,
        pts.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// What a table cell shows for `value` of row `r`: the number, `failed`, or, under the
/// floor `floor`, that it is not resolved.
fn cell(r: Option<&Run>, value: impl Fn(&Run) -> Option<f64>, floor: f64) -> String {
    match r {
        None => "—".into(),
        Some(r) if !r.ok() => format!("failed ({})", r.fail_kind.as_deref().unwrap_or("?")),
        Some(r) => match value(r) {
            Some(x) if x.is_finite() && x < floor => format!("< {floor:.0e}"),
            Some(x) if x.is_finite() => format!("{x:.2e}"),
            _ => "—".into(),
        },
    }
}

/// One series (a MuJoCo setting or an exact method) and its rows by step.
struct Series<'a> {
    label: String,
    rows: Vec<&'a Run>,
}

/// MuJoCo's settings at the largest iteration count, then the exact methods.
fn series<'a>(m: &Model<'a>, iterations: u64) -> Vec<Series<'a>> {
    let mut out: Vec<Series> = Vec::new();
    let mut push = |label: String, r: &'a Run| match out.iter_mut().find(|s| s.label == label) {
        Some(s) => s.rows.push(r),
        None => out.push(Series {
            label,
            rows: vec![r],
        }),
    };
    for r in &m.mujoco {
        let s = setting(r);
        if s.iterations == iterations {
            push(format!("MuJoCo {}, solref {}", s.integrator, s.solref), r);
        }
    }
    for r in &m.exact {
        push(format!("driftlab {}", r.variant), r);
    }
    out
}

/// The steps of `m`'s rows, largest first.
fn steps(m: &Model) -> Vec<f64> {
    let mut hs: Vec<f64> = m.mujoco.iter().chain(&m.exact).map(|r| r.h).collect();
    hs.sort_by(|a, b| b.total_cmp(a));
    hs.dedup_by(|a, b| (*a - *b).abs() <= 1e-12 * b.abs());
    hs
}

/// A table of `value` per series and step, with its fitted slope.
fn budget_table(
    b: &mut Book, all: &[Series], hs: &[f64], value: impl Fn(&Run) -> Option<f64> + Copy,
    floor: f64,
) {
    let mut head: Vec<String> = vec!["setting".into()];
    head.extend(hs.iter().map(|h| format!("h = {}", step(*h))));
    head.push("slope p".into());
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|s| {
            let at = |h: f64| {
                s.rows
                    .iter()
                    .copied()
                    .find(|r| (r.h - h).abs() <= 1e-12 * h)
            };
            let mut row = vec![s.label.clone()];
            row.extend(hs.iter().map(|h| cell(at(*h), value, floor)));
            let points: Vec<(f64, f64)> = s
                .rows
                .iter()
                .filter(|r| r.ok())
                .filter_map(|r| Some((r.h, value(r).filter(|x| *x >= floor)?)))
                .collect();
            row.push(slope(&points).map_or("—".into(), |p| format!("{p:.2}")));
            row
        })
        .collect();
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    b.table(&head, &rows);
}

/// A step to three significant digits, trailing zeros dropped (`4e-3`, `1.61e-2`: a step
/// snapped so that t_end/h is whole keeps its digits).
fn step(h: f64) -> String {
    let text = format!("{h:.2e}");
    match text.split_once('e') {
        Some((mantissa, exp)) if mantissa.contains('.') => {
            let m = mantissa.trim_end_matches('0').trim_end_matches('.');
            format!("{m}e{exp}")
        }
        _ => text,
    }
}

/// A row's step time as median and range over its runs, and whether they were alone.
fn time_text(r: &Run) -> String {
    let (lo, hi) = (
        r.step_seconds_min.unwrap_or(r.step_seconds),
        r.step_seconds_max.unwrap_or(r.step_seconds),
    );
    let runs = r.runs_behind_times().max(r.timed_alone);
    format!(
        "{:.3} ms [{:.3}–{:.3}], {runs} run{}",
        1e3 * r.step_seconds,
        1e3 * lo,
        1e3 * hi,
        if runs == 1 { "" } else { "s" }
    )
}

/// Whether `r`'s times were measured with nothing beside them: timed alone, or a sweep
/// of one cell at a time.
fn alone(r: &Run) -> bool {
    r.timed_alone > 0 || r.batch_threads() == Some(1)
}

/// Who is cheaper, only where the ranges do not overlap and both were timed alone over
/// more than one run.
fn cost_verdict(exact: &Run, mujoco: &Run) -> &'static str {
    let range = |r: &Run| {
        (
            r.step_seconds_min.unwrap_or(r.step_seconds),
            r.step_seconds_max.unwrap_or(r.step_seconds),
        )
    };
    let repeated = |r: &Run| r.runs_behind_times().max(r.timed_alone) > 1 && alone(r);
    if !(repeated(exact) && repeated(mujoco)) {
        return "not timed alone and repeated: no verdict";
    }
    let ((elo, ehi), (mlo, mhi)) = (range(exact), range(mujoco));
    if ehi < mlo {
        "exact cheaper"
    } else if elo > mhi {
        "MuJoCo cheaper"
    } else {
        "within the spread"
    }
}

/// MuJoCo's rows on their own error–time front: sorted by time, each more accurate than
/// every cheaper one.
fn front<'a>(rows: &[&'a Run], floor: f64) -> Vec<&'a Run> {
    let mut ok: Vec<&Run> = rows
        .iter()
        .copied()
        .filter(|r| r.ok() && r.err_q.is_some_and(|e| e.is_finite() && e >= floor))
        .collect();
    ok.sort_by(|a, b| a.step_seconds.total_cmp(&b.step_seconds));
    let mut best = f64::INFINITY;
    ok.into_iter()
        .filter(|r| {
            let e = r.err_q.unwrap_or(f64::INFINITY);
            let keep = e < best;
            best = best.min(e);
            keep
        })
        .collect()
}

/// The equal-error table of `m` and the counts of its verdicts.
fn equal_error(b: &mut Book, m: &Model, iterations: u64, floor: f64) -> BTreeMap<String, usize> {
    let mujoco: Vec<&Run> = m
        .mujoco
        .iter()
        .copied()
        .filter(|r| setting(r).iterations == iterations)
        .collect();
    let mut counts = BTreeMap::new();
    let rows: Vec<Vec<String>> = front(&mujoco, floor)
        .into_iter()
        .map(|mj| {
            let s = setting(mj);
            let e = mj.err_q.unwrap_or(f64::INFINITY);
            let cheapest = m
                .exact
                .iter()
                .copied()
                .filter(|r| r.ok() && r.err_q.is_some_and(|x| x <= e))
                .min_by(|a, b| a.step_seconds.total_cmp(&b.step_seconds));
            let mut row = vec![
                format!("{}, solref {}, h = {}", s.integrator, s.solref, step(mj.h)),
                format!("{e:.2e}"),
                time_text(mj),
            ];
            let verdict = match cheapest {
                None => {
                    row.extend(["none reaches it".into(), "—".into(), "—".into(), "—".into()]);
                    "no exact row at that error"
                }
                Some(x) => {
                    row.extend([
                        format!("{}, h = {}", x.variant, step(x.h)),
                        cell(Some(x), |r| r.err_q, floor),
                        time_text(x),
                        format!("{:.2}", x.step_seconds / mj.step_seconds),
                    ]);
                    cost_verdict(x, mj)
                }
            };
            *counts.entry(verdict.to_string()).or_insert(0) += 1;
            row.push(verdict.into());
            row
        })
        .collect();
    b.table(
        &[
            "MuJoCo row",
            "its err_q",
            "its step time",
            "cheapest exact row with err_q at most that",
            "its err_q",
            "its step time",
            "time ratio exact / MuJoCo",
            "verdict",
        ],
        &rows,
    );
    counts
}

/// How far MuJoCo's rows at fewer solver iterations move from those at `most`: the
/// largest relative change of err_q over matching rows, and the rows compared.
fn iteration_effect(m: &Model, most: u64) -> Option<(u64, f64, usize)> {
    let fewer = m
        .mujoco
        .iter()
        .map(|r| setting(r).iterations)
        .filter(|&i| i < most)
        .min()?;
    let key = |r: &Run| {
        let s = setting(r);
        (s.integrator, s.solref, r.h.to_bits())
    };
    let full: BTreeMap<_, &Run> = m
        .mujoco
        .iter()
        .filter(|r| setting(r).iterations == most)
        .map(|r| (key(r), *r))
        .collect();
    let mut worst = 0.0f64;
    let mut n = 0;
    for r in m.mujoco.iter().filter(|r| setting(r).iterations == fewer) {
        let pair = full.get(&key(r)).and_then(|f| Some((r.err_q?, f.err_q?)));
        if let Some((a, c)) = pair.filter(|_| r.ok()) {
            worst = worst.max((a - c).abs() / c.abs().max(f64::MIN_POSITIVE));
            n += 1;
        }
    }
    Some((fewer, worst, n))
}

/// The audit of one model: the budget tables, the iteration axis, the equal-error table.
fn model_section(b: &mut Book, m: &Model) {
    let most = m
        .mujoco
        .iter()
        .map(|r| setting(r).iterations)
        .max()
        .unwrap_or(0);
    let floor = m.accuracy.map_or(0.0, |a| RESOLVED_ABOVE * a);
    let hs = steps(m);
    let all = series(m, most);
    b.heading(&m.label, 2);
    let reference = m
        .exact
        .iter()
        .find_map(|r| r.reference.clone())
        .map_or_else(
            || "the experiment's converged reference".into(),
            |j| format!("the converged reference (judged: {j})"),
        );
    b.paragraph(&format!(
        "{} MuJoCo rows and {} of driftlab's, errors against {reference}{}. MuJoCo at {most} solver iterations below.",
        m.mujoco.len(),
        m.exact.len(),
        m.accuracy.map_or(String::new(), |a| format!(
            ", itself accurate to {a:.1e} (so an error below {floor:.0e} is not resolved and shows as `< {floor:.0e}`)"
        )),
    ));
    if let Some((fewer, worst, n)) = iteration_effect(m, most) {
        let moved = if worst == 0.0 {
            "not at all (the same err_q to the last digit: MuJoCo's Newton solver converges within them on equality rows alone)".to_string()
        } else {
            format!("by at most {worst:.1e} (relative)")
        };
        b.paragraph(&format!(
            "At {fewer} iterations instead of {most}, MuJoCo's trajectory error moves {moved}, over {n} matching rows that reached t_end."
        ));
    }
    b.paragraph(
        "Loop residual max ‖Φ‖∞ against the step (slope p of ‖Φ‖ ∝ h^p, round-off excluded):",
    );
    budget_table(b, &all, &hs, |r| r.max_pos_residual, ROUND_OFF);
    b.paragraph("Trajectory error max ‖q − q_ref‖∞ against the step (slope p of err_q ∝ h^p, unresolved errors excluded):");
    budget_table(b, &all, &hs, |r| r.err_q, floor);
    b.paragraph("Where the exact methods cost less at equal error (MuJoCo's rows on its own error–time front; step times over the same interval, median [range]):");
    let counts = equal_error(b, m, most, floor);
    let said: Vec<String> = counts.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    b.paragraph(&format!("Verdicts: {}.", said.join("; ")));
}

/// Write the section, if any experiment holds such rows.
pub fn write(b: &mut Book, all: &[Results]) {
    let audited: Vec<(&Results, Vec<Model>)> = all
        .iter()
        .map(|res| (res, models(res)))
        .filter(|(_, m)| !m.is_empty())
        .collect();
    if audited.is_empty() {
        return;
    }
    b.heading("MuJoCo's soft constraints against the exact solution", 1);
    b.paragraph(
        "MuJoCo enforces a loop closure or a coupling softly: its solref (time constant, damping ratio) and solimp set how fast a violation decays, at the model's timestep and solver iterations. Here MuJoCo ran the same MJCF file as driftlab (contact and limits off, zero control), and every row, MuJoCo's and driftlab's exact index-3 methods', is measured the same way against one converged reference: the loop residual (the softness), the trajectory error err_q (all that the step and the softness together cost), and the step time over the same simulated interval. A slope p near 0 means the step does not buy accuracy: the soft constraint's time constant sets the error. `scripts/mujoco-loops.sh --file your.xml` writes this audit for your own model.",
    );
    for (res, models) in audited {
        b.paragraph(&format!("Experiment {}.", res.name));
        for m in &models {
            model_section(b, m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row with an error, a median step time and its range over `runs` runs alone.
    fn timed(err_q: f64, median: f64, lo: f64, hi: f64, runs: u64) -> Run {
        let mut r = Run {
            status: "ok".into(),
            err_q: Some(err_q),
            step_seconds: median,
            repeat: runs,
            sweep_threads: 1,
            ..Run::default()
        };
        r.step_seconds_min = Some(lo);
        r.step_seconds_max = Some(hi);
        r
    }

    /// A MuJoCo row of the four-bar at `h` with `setting` (`model` or `tune`) and
    /// `iterations`, an error growing with h, times from the step count.
    fn mujoco(h: f64, setting: &str, iterations: u64, err: f64) -> Run {
        let mut r = timed(err, 2.6e-6 * 2.0 / h, 2.5e-6 * 2.0 / h, 2.8e-6 * 2.0 / h, 5);
        r.method = MUJOCO.into();
        r.h = h;
        r.problem_params = r#"{"robot":"mjcf-four-bar"}"#.into();
        r.params = format!(
            r#"{{"integrator":"Euler","solref_setting":"{setting}","solref":[0.02,1.0],"iterations":{iterations}}}"#
        );
        r.max_pos_residual = Some(if setting == "tune" {
            100.0 * h * h
        } else {
            2e-3
        });
        r
    }

    #[test]
    fn the_section_gives_slopes_the_iteration_axis_and_equal_error_verdicts() {
        let mut runs = Vec::new();
        for h in [4e-3, 2e-3, 1e-3, 5e-4] {
            for (setting, err) in [("model", 5.0 * h), ("tune", 4.0 * h)] {
                runs.push(mujoco(h, setting, 100, err));
                runs.push(mujoco(h, setting, 3, err));
            }
        }
        for h in [1.6e-2, 8e-3, 4e-3] {
            // RATTLE: second order, 21 µs a step, timed alone over 3 runs.
            let steps = 2.0 / h;
            let mut r = timed(30.0 * h * h, 21e-6 * steps, 20e-6 * steps, 22e-6 * steps, 3);
            r.method = "rattle".into();
            r.variant = "rattle".into();
            r.h = h;
            r.problem_params = r#"{"robot":"mjcf-four-bar"}"#.into();
            r.max_pos_residual = Some(1e-15);
            r.reference_accuracy = Some(1e-9);
            runs.push(r);
        }
        let res = Results {
            name: "mujoco-loops".into(),
            runs,
            ..Results::default()
        };
        let all = [res];
        let m = models(&all[0]);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].label, "mjcf-four-bar");
        let (fewer, worst, n) = iteration_effect(&m[0], 100).expect("two iteration counts");
        assert_eq!((fewer, n), (3, 8));
        assert_eq!(worst.to_bits(), 0f64.to_bits());
        let mut b = Book::new("test");
        write(&mut b, &all);
        let md = b.finish().md;
        assert!(md.contains("# MuJoCo's soft constraints against the exact solution"));
        // The default's residual is flat in h (slope 0), tune's falls as h² (slope 2).
        let line = |start: &str| {
            md.lines()
                .find(|l| l.starts_with(start))
                .unwrap_or_default()
                .to_string()
        };
        assert!(line("| MuJoCo Euler, solref the model's (0.02, 1) |").ends_with("| 0.00 |"));
        assert!(line("| MuJoCo Euler, solref driftlab tune's (2h, 1) |").ends_with("| 2.00 |"));
        // MuJoCo at 4e-3 (err 1.6e-2, 1.3 ms) against RATTLE at 1.6e-2 (err 7.7e-3,
        // 2.6 ms): MuJoCo cheaper. At 5e-4 (err 2e-3, 10.4 ms) RATTLE at 8e-3 (err
        // 1.9e-3, 5.25 ms) is cheaper; the ranges do not overlap.
        assert!(md.contains("| Euler, solref driftlab tune's (2h, 1), h = 4e-3 | 1.60e-2 |"));
        assert!(md.contains("| 2.02 | MuJoCo cheaper |"), "{md}");
        assert!(md.contains("rattle, h = 8e-3 | 1.92e-3 |"), "{md}");
        assert!(md.contains("| exact cheaper |"), "{md}");
    }

    #[test]
    fn steps_print_with_three_digits_at_most() {
        assert_eq!(step(4e-3), "4e-3");
        assert_eq!(step(1.6e-2), "1.6e-2");
        assert_eq!(step(0.5 / 31.0), "1.61e-2");
        assert_eq!(step(5e-4), "5e-4");
    }

    #[test]
    fn the_front_keeps_each_row_more_accurate_than_every_cheaper_one() {
        let rows = [
            timed(1e-2, 1.0, 1.0, 1.0, 5),
            timed(2e-2, 2.0, 2.0, 2.0, 5), // slower and worse: off the front
            timed(5e-3, 3.0, 3.0, 3.0, 5),
            timed(1e-9, 4.0, 4.0, 4.0, 5), // below the resolved floor: left out
        ];
        let refs: Vec<&Run> = rows.iter().collect();
        let front: Vec<f64> = front(&refs, 1e-6).iter().map(|r| r.step_seconds).collect();
        assert_eq!(front, [1.0, 3.0]);
    }

    #[test]
    fn a_cost_verdict_needs_ranges_apart_and_repeated_runs_alone() {
        let mujoco = timed(1e-2, 1.0, 0.9, 1.1, 5);
        assert_eq!(
            cost_verdict(&timed(1e-3, 0.5, 0.4, 0.6, 3), &mujoco),
            "exact cheaper"
        );
        assert_eq!(
            cost_verdict(&timed(1e-3, 2.0, 1.8, 2.2, 3), &mujoco),
            "MuJoCo cheaper"
        );
        assert_eq!(
            cost_verdict(&timed(1e-3, 1.0, 0.95, 1.2, 3), &mujoco),
            "within the spread"
        );
        let once = timed(1e-3, 0.5, 0.5, 0.5, 1);
        assert!(cost_verdict(&once, &mujoco).starts_with("not timed alone"));
        let mut side_by_side = timed(1e-3, 0.5, 0.4, 0.6, 3);
        side_by_side.sweep_threads = 2;
        assert!(cost_verdict(&side_by_side, &mujoco).starts_with("not timed alone"));
    }

    #[test]
    fn the_slope_of_a_power_law_is_its_exponent() {
        let pts: Vec<(f64, f64)> = [4e-3, 2e-3, 1e-3, 5e-4]
            .iter()
            .map(|h| (*h, 3.0 * h * h))
            .collect();
        assert!((slope(&pts).unwrap_or(f64::NAN) - 2.0).abs() < 1e-12);
        let flat: Vec<(f64, f64)> = pts.iter().map(|(h, _)| (*h, 5e-4)).collect();
        assert!(slope(&flat).unwrap_or(f64::NAN).abs() < 1e-12);
        assert_eq!(slope(&pts[..2]), None, "two points fit no slope");
    }
}
