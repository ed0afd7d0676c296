//! Times that verdicts use, measured with the cell alone (issue 46).
//!
//! The sweep runs cells side by side (`sweep_threads` at a time) and, unless the spec
//! asks for `repeat`, once: right for the deterministic columns, not for a time that
//! decides a recommendation or a claim. After the sweep, every row a verdict rests on is
//! run again `timing_repeats` times (5 by default) with nothing else running, after a
//! warm-up run when the cell takes under a second; its times become the median of those
//! runs, with their range, and `timed_alone` counts them. Which rows:
//!
//! * a `[report]` class's candidates ([`driftlab_results::verdict::rows_to_time`]): per
//!   method, the cheapest setting meeting the target on every instance of the class and
//!   every such setting within [`BAND`] × its sweep time (or, where no setting covers
//!   every instance, the same per instance); and per instance and method variant, its
//!   cheapest run meeting the target (where its curve on the class's work–precision
//!   figure reaches the target, so that each curve's cost there has a spread);
//! * the rows a claim selects for a time ([`driftlab_results::claim_spec::time_selections`]).
//!
//! A rerun must reproduce the row (status and steps): one that does not keeps the sweep's
//! times and is reported, rather than mixing two runs' numbers in one row. A row the
//! sweep already ran alone at least as often, and long enough to need no warm-up, keeps
//! those times ([`timed_by_the_sweep`]).

use crate::registry::Registry;
use crate::spec::cell::Cell;
use crate::spec::Spec;
use crate::store::record::nullable;
use driftlab_results::claim_spec::{select_key, selects, time_selections};
use driftlab_results::schema::runs;
use driftlab_results::verdict::{self, Cost, Entry, Target};

/// Settings within this factor of a method's cheapest covering one (by their sweep times)
/// are timed too: a side-by-side time can be off by this much against a time alone.
pub const BAND: f64 = 1.25;

/// A cell shorter than this gets a warm-up run before the timed ones (caches, page
/// faults, the allocator's first requests).
const WARM_UP_BELOW_SECONDS: f64 = 1.0;

/// The indices of `rows` whose times a verdict of `spec` uses.
pub fn rows_to_time(spec: &Spec, rows: &[runs::Row]) -> Vec<usize> {
    let mut out = class_candidates(spec, rows);
    let selections = time_selections(&spec.claims);
    if !selections.is_empty() {
        for (k, r) in rows.iter().enumerate() {
            let key = select_key(
                &r.problem,
                &r.problem_params,
                &r.variant,
                &r.params,
                r.h,
                r.threads as usize,
            );
            if selections.iter().any(|s| selects(&key, s)) {
                out.push(k);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out.retain(|&k| rows[k].ensemble.is_none());
    out
}

/// Whether the sweep already timed `r` as the pass would: alone on the machine (a sweep of
/// one cell at a time, or a cell with its own threads, which always runs alone), at least
/// `runs` times, and long enough to need no warm-up (parallel-groups).
pub fn timed_by_the_sweep(r: &runs::Row, runs: usize) -> bool {
    (r.sweep_threads == 1 || r.threads > 1)
        && r.repeat >= runs as u64
        && r.wall_seconds >= WARM_UP_BELOW_SECONDS
}

/// The rows of `spec`'s `[report]` class that its verdict rests on.
fn class_candidates(spec: &Spec, rows: &[runs::Row]) -> Vec<usize> {
    let Some(report) = &spec.report else {
        return Vec::new();
    };
    let (Some(_), Some(target)) = (&report.class, report.target) else {
        return Vec::new();
    };
    let chosen: Vec<usize> = (0..rows.len())
        .filter(|&k| {
            report
                .select
                .as_deref()
                .is_none_or(|t| rows[k].problem_params.contains(t))
        })
        .collect();
    let entries: Vec<Entry> = chosen
        .iter()
        .map(|&k| entry(&rows[k], &report.measure))
        .collect();
    let v = verdict::judge(
        &entries,
        Target {
            value: target,
            higher_is_better: report.higher_is_better,
        },
    );
    let target = Target {
        value: target,
        higher_is_better: report.higher_is_better,
    };
    let mut out: Vec<usize> = verdict::rows_to_time(&v, BAND)
        .into_iter()
        .map(|i| chosen[i])
        .collect();
    out.extend(curve_points(&chosen, rows, &entries, target));
    out
}

/// Per instance and method variant, its cheapest run (by the sweep's time) meeting the
/// class's target: the point where each curve of the class's work–precision figure
/// reaches the target, so that every curve's cost there carries a spread (issue 46 item
/// 3). Indices into `rows`.
fn curve_points(
    chosen: &[usize], rows: &[runs::Row], entries: &[Entry], target: Target,
) -> Vec<usize> {
    let mut cheapest: std::collections::BTreeMap<(&str, &str), usize> = Default::default();
    for (i, e) in entries.iter().enumerate() {
        if !target.met_by(e) {
            continue;
        }
        let key = (e.instance.as_str(), rows[chosen[i]].variant.as_str());
        let slot = cheapest.entry(key).or_insert(i);
        if e.cost.median < entries[*slot].cost.median {
            *slot = i;
        }
    }
    cheapest.into_values().map(|i| chosen[i]).collect()
}

/// A row as the class verdict sees it.
pub fn entry(r: &runs::Row, measure: &str) -> Entry {
    let rtol = r.rtol;
    let (instance, setting) = verdict::instance_and_setting(
        &r.problem,
        &r.problem_params,
        &r.variant,
        &r.params,
        r.h,
        rtol,
    );
    Entry {
        instance,
        setting,
        method: r.method.clone(),
        ok: r.ok(),
        value: r.measure(measure).filter(|x| x.is_finite()),
        cost: Cost {
            median: r.step_seconds,
            min: r.step_seconds_min.unwrap_or(f64::NAN).min(r.step_seconds),
            max: r.step_seconds_max.unwrap_or(f64::NAN).max(r.step_seconds),
            runs: r.repeat.max(1) as usize,
            alone: r.timed_alone > 0,
        },
    }
}

/// What the timing pass did: rows timed alone, and rows whose rerun did not reproduce
/// them (kept with the sweep's times), each as `(cell, why)`.
#[derive(Debug, Default)]
pub struct Timed {
    /// Rows timed alone.
    pub rows: usize,
    /// Rows whose rerun differed.
    pub irreproducible: Vec<(usize, String)>,
}

/// Time `rows[k]` for each `k` in `which` with its cell alone, `runs` times: `cell_of`
/// finds a row's cell, `run` runs a cell once (alone: the caller holds no other work).
pub fn time_alone<C>(
    rows: &mut [runs::Row], which: &[usize], runs: usize, cell_of: impl Fn(usize) -> Option<C>,
    run: impl Fn(&C) -> runs::Row,
) -> Timed {
    let mut timed = Timed::default();
    if runs == 0 {
        return timed;
    }
    for &k in which {
        if timed_by_the_sweep(&rows[k], runs) {
            rows[k].timed_alone = rows[k].repeat;
            timed.rows += 1;
            continue;
        }
        let Some(cell) = cell_of(rows[k].cell as usize) else {
            continue;
        };
        if rows[k].wall_seconds < WARM_UP_BELOW_SECONDS {
            run(&cell);
        }
        let reruns: Vec<runs::Row> = (0..runs).map(|_| run(&cell)).collect();
        match reruns
            .iter()
            .find(|r| r.ok() != rows[k].ok() || r.steps != rows[k].steps)
        {
            Some(r) => timed.irreproducible.push((
                rows[k].cell as usize,
                format!(
                    "a rerun ended {} after {} steps where the sweep's run ended {} after {}",
                    r.status, r.steps, rows[k].status, rows[k].steps
                ),
            )),
            None => {
                set_times(&mut rows[k], &reruns);
                timed.rows += 1;
            }
        }
    }
    timed
}

/// `row`'s times: the medians of `reruns` and the range of their step times.
fn set_times(row: &mut runs::Row, reruns: &[runs::Row]) {
    let median = |get: fn(&runs::Row) -> f64| {
        let mut x: Vec<f64> = reruns.iter().map(get).collect();
        x.sort_by(f64::total_cmp);
        let n = x.len();
        if n % 2 == 1 {
            x[n / 2]
        } else {
            0.5 * (x[n / 2 - 1] + x[n / 2])
        }
    };
    row.wall_seconds = median(|r| r.wall_seconds);
    row.step_seconds = median(|r| r.step_seconds);
    row.observe_seconds = median(|r| r.observe_seconds);
    let steps = reruns.iter().map(|r| r.step_seconds);
    row.step_seconds_min = nullable(steps.clone().fold(f64::INFINITY, f64::min));
    row.step_seconds_max = nullable(steps.fold(f64::NEG_INFINITY, f64::max));
    row.timed_alone = reruns.len() as u64;
}

/// The registry-backed runner of one cell alone, for [`time_alone`].
pub(crate) fn run_once<'r>(
    registry: &'r Registry, experiment: &str,
) -> impl Fn(&Cell) -> runs::Row + 'r {
    let experiment = experiment.to_string();
    move |cell| crate::exec::cell_run::run_alone_once(registry, &experiment, cell)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(cell: usize, steps: usize, step_seconds: f64) -> runs::Row {
        runs::Row {
            cell: cell as u64,
            status: "ok".into(),
            steps: steps as u64,
            wall_seconds: 2.0,
            step_seconds,
            step_seconds_min: Some(step_seconds),
            step_seconds_max: Some(step_seconds),
            repeat: 1,
            ..runs::Row::default()
        }
    }

    #[test]
    fn each_variant_s_cheapest_run_meeting_the_target_is_timed_on_each_instance() {
        // (instance, variant, error, sweep time): variant a meets 1e-3 at 4 s and 2 s on
        // instance I, at 7 s on J; variant b at 1 s on I (and misses at 0.5 s).
        let cases = [
            ("I", "a", 1e-4, 4.0),
            ("I", "a", 5e-4, 2.0),
            ("J", "a", 1e-4, 7.0),
            ("I", "b", 1e-2, 0.5),
            ("I", "b", 1e-5, 1.0),
        ];
        let rows: Vec<runs::Row> = cases
            .iter()
            .enumerate()
            .map(|(k, c)| runs::Row {
                variant: c.1.into(),
                ..record(k, 10, c.3)
            })
            .collect();
        let entries: Vec<Entry> = cases
            .iter()
            .map(|c| Entry {
                instance: c.0.into(),
                setting: format!("{} h", c.1),
                method: c.1.into(),
                ok: true,
                value: Some(c.2),
                cost: Cost {
                    median: c.3,
                    min: c.3,
                    max: c.3,
                    runs: 1,
                    alone: false,
                },
            })
            .collect();
        let target = Target {
            value: 1e-3,
            higher_is_better: false,
        };
        let chosen: Vec<usize> = (0..rows.len()).collect();
        let mut picked = curve_points(&chosen, &rows, &entries, target);
        picked.sort_unstable();
        assert_eq!(picked, vec![1, 2, 4]);
    }

    #[test]
    fn a_timed_row_takes_the_median_and_range_of_its_reruns() {
        let mut rows = vec![record(0, 10, 9.0), record(1, 10, 9.0)];
        let times = std::cell::RefCell::new(vec![3.0, 1.0, 2.0, 5.0, 4.0]);
        let timed = time_alone(
            &mut rows,
            &[0],
            5,
            |_| Some(()),
            |_| {
                let t = times.borrow_mut().pop().unwrap_or(f64::NAN);
                record(0, 10, t)
            },
        );
        assert_eq!(timed.rows, 1);
        assert_eq!(rows[0].step_seconds.to_bits(), 3.0_f64.to_bits());
        assert_eq!(
            (rows[0].step_seconds_min, rows[0].step_seconds_max),
            (Some(1.0), Some(5.0))
        );
        assert_eq!(rows[0].timed_alone, 5);
        assert_eq!(
            rows[1].timed_alone, 0,
            "a row not asked for keeps the sweep's times"
        );
        assert_eq!(rows[1].step_seconds.to_bits(), 9.0_f64.to_bits());
    }

    #[test]
    fn a_row_the_sweep_ran_alone_often_enough_is_not_run_again() {
        let mut alone = record(3, 10, 2.0);
        alone.sweep_threads = 1;
        alone.repeat = 5;
        let mut rows = vec![alone];
        let timed = time_alone(
            &mut rows,
            &[0],
            5,
            |_| Some(()),
            |_| -> runs::Row { panic!("the sweep's five runs alone are the timing") },
        );
        assert_eq!((timed.rows, rows[0].timed_alone), (1, 5));
        let mut side_by_side = record(3, 10, 2.0);
        side_by_side.sweep_threads = 2;
        side_by_side.repeat = 5;
        assert!(!timed_by_the_sweep(&side_by_side, 5));
    }

    #[test]
    fn a_rerun_that_differs_keeps_the_sweep_s_times_and_is_reported() {
        let mut rows = vec![record(7, 10, 9.0)];
        let timed = time_alone(&mut rows, &[0], 5, |_| Some(()), |_| record(7, 11, 1.0));
        assert_eq!(timed.rows, 0);
        assert_eq!(rows[0].step_seconds.to_bits(), 9.0_f64.to_bits());
        assert_eq!(timed.irreproducible[0].0, 7);
        assert!(timed.irreproducible[0]
            .1
            .contains("after 11 steps where the sweep's run ended ok after 10"));
    }
}
