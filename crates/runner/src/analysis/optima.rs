//! The constraint stiffness optimized against a task loss, seed 001 §3.6.2:
//!
//! ```text
//! k_opt = argmin_k E[L_task] + α E[L_c(k)]
//! ```
//!
//! over ensembles of rollouts. A spec's `[[optima]]` entry names a swept method parameter
//! (`k_p`, `omega_n`, …) and two members columns, the task loss and the constraint loss;
//! the expectation over the policy's states is the mean over an ensemble's members (its
//! seeded initial states and constraint noise). The search is gradient-free: the grid the
//! spec sweeps, then one step of successive parabolic interpolation in `log k` through the
//! grid minimum and its two neighbours (Brent, *Algorithms for Minimization without
//! Derivatives*, 1973, ch. 5). A value at which any member failed, or a loss is undefined,
//! is not a candidate (its expected loss is infinite: a diverged rollout is no policy
//! update). Each group of cells that differ only in the parameter gives one row per α of
//! `optima.csv` ([`driftlab_results::schema::optima`]).
//!
//! ```toml
//! [[optima]]
//! parameter = "k_p"
//! task = "max_err_q"          # members column: E[L_task]
//! constraint = "max_drift"    # members column: E[L_c]
//! alpha = [0.0, 1.0, 10.0]
//! ```

use crate::store::members::MemberRecord;
use driftlab_results::schema::optima;
use driftlab_results::schema::runs;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The members columns a loss may be.
pub const LOSSES: [&str; 6] = [
    "max_err_q",
    "max_drift",
    "final_drift",
    "max_vel_residual",
    "max_energy_rel_error",
    "final_energy_rel_error",
];

/// One `[[optima]]` entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptimumSpec {
    /// The swept method parameter searched.
    pub parameter: String,
    /// The members column averaged as `E[L_task]` (one of [`LOSSES`]).
    pub task: String,
    /// The members column averaged as `E[L_c]` (one of [`LOSSES`]).
    pub constraint: String,
    /// The weights α of the constraint loss.
    pub alpha: Vec<f64>,
}

impl OptimumSpec {
    /// Check the fields; the message names the entry, the field and the fix.
    pub fn validate(&self, index: usize) -> Result<(), String> {
        let at = format!("[[optima]] entry {index}");
        for (field, loss) in [("task", &self.task), ("constraint", &self.constraint)] {
            if !LOSSES.contains(&loss.as_str()) {
                return Err(format!(
                    "{at}: {field} = \"{loss}\" is not a members column to average; give one of {}",
                    LOSSES.join(", ")
                ));
            }
        }
        if self.alpha.is_empty() || self.alpha.iter().any(|a| !(a.is_finite() && *a >= 0.0)) {
            return Err(format!(
                "{at}: alpha = {:?}: give a list of finite weights ≥ 0",
                self.alpha
            ));
        }
        Ok(())
    }
}

/// The losses of one grid point: the parameter's value and `(E[L_task], E[L_c])`, `None`
/// when a member failed or a loss is undefined.
type Point = (f64, Option<(f64, f64)>);

/// The expected losses over the members of `cell` (see [`Point`]).
fn expected(members: &[&MemberRecord], spec: &OptimumSpec) -> Option<(f64, f64)> {
    let pick = |m: &MemberRecord, name: &str| match name {
        "max_err_q" => m.max_err_q,
        "max_drift" => m.max_drift,
        "final_drift" => m.final_drift,
        "max_vel_residual" => m.max_vel_residual,
        "max_energy_rel_error" => m.max_energy,
        _ => m.final_energy,
    };
    if members.is_empty() || members.iter().any(|m| !m.ok) {
        return None;
    }
    let mean = |name: &str| {
        let sum: f64 = members.iter().map(|m| pick(m, name)).sum();
        Some(sum / members.len() as f64).filter(|x| x.is_finite())
    };
    Some((mean(&spec.task)?, mean(&spec.constraint)?))
}

/// The group key of a row without the searched parameter, and the parameter's value.
fn split_params(row: &runs::Row, parameter: &str) -> Option<(String, f64)> {
    let mut params: serde_json::Value = serde_json::from_str(&row.params).ok()?;
    let value = params["method"]
        .as_object_mut()?
        .remove(parameter)?
        .as_f64()?;
    Some((params.to_string(), value))
}

/// Cells that differ only in the searched parameter: problem, problem parameters, method,
/// the other parameters (JSON), the step's bits and the ensemble's settings (an entry's
/// own curriculum makes another group).
type GroupKey = (String, String, String, String, u64, String);

/// The grid points of every group of `rows` for `spec`, with the group's first row.
fn groups<'a>(
    spec: &OptimumSpec, rows: &'a [runs::Row], by_cell: &BTreeMap<usize, Vec<&MemberRecord>>,
) -> BTreeMap<GroupKey, (&'a runs::Row, Vec<Point>)> {
    let mut groups: BTreeMap<GroupKey, (&runs::Row, Vec<Point>)> = BTreeMap::new();
    for r in rows {
        let Some((others, value)) = split_params(r, &spec.parameter) else {
            continue;
        };
        let key = (
            r.problem.clone(),
            r.problem_params.clone(),
            r.method.clone(),
            others,
            r.h.to_bits(),
            r.ensemble.clone().unwrap_or_default(),
        );
        let cell = by_cell
            .get(&(r.cell as usize))
            .map_or(&[][..], Vec::as_slice);
        let entry = groups.entry(key).or_insert((r, Vec::new()));
        entry.1.push((value, expected(cell, spec)));
    }
    groups
}

/// The rows of `optima.csv` for `specs` over the first thread batch's `rows` and their
/// `members`.
pub fn find(
    specs: &[OptimumSpec], rows: &[runs::Row], members: &[MemberRecord],
) -> Vec<optima::Row> {
    let mut by_cell: BTreeMap<usize, Vec<&MemberRecord>> = BTreeMap::new();
    for m in members {
        by_cell.entry(m.cell).or_default().push(m);
    }
    let mut out = Vec::new();
    for spec in specs {
        for ((_, _, _, others, _, _), (first, mut points)) in groups(spec, rows, &by_cell) {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            for &alpha in &spec.alpha {
                out.push(optimum_row(spec, first, &others, &points, alpha));
            }
        }
    }
    out
}

/// One row: the grid minimum of `E[L_task] + α E[L_c]` over the feasible `points` and
/// its parabolic refinement.
fn optimum_row(
    spec: &OptimumSpec, first: &runs::Row, others: &str, points: &[Point], alpha: f64,
) -> optima::Row {
    // (grid index, k, E[L_task], E[L_c]) of the feasible points.
    let feasible: Vec<(usize, f64, f64, f64)> = points
        .iter()
        .enumerate()
        .filter_map(|(g, &(k, l))| l.map(|(task, c)| (g, k, task, c)))
        .filter(|p| p.1 > 0.0)
        .collect();
    let loss = |p: &(usize, f64, f64, f64)| p.2 + alpha * p.3;
    let best =
        (0..feasible.len()).min_by(|&i, &j| loss(&feasible[i]).total_cmp(&loss(&feasible[j])));
    let mut row = optima::Row {
        problem: first.problem.clone(),
        problem_params: first.problem_params.clone(),
        method: first.method.clone(),
        params: others.to_string(),
        h: first.h,
        parameter: spec.parameter.clone(),
        task_loss: spec.task.clone(),
        constraint_loss: spec.constraint.clone(),
        alpha,
        candidates: points.len() as u64,
        feasible: feasible.len() as u64,
        ..optima::Row::default()
    };
    let Some(i) = best else { return row };
    let p = feasible[i];
    row.k_grid = Some(p.1);
    row.task = Some(p.2);
    row.constraint = Some(p.3);
    row.loss = Some(loss(&p));
    row.edge = edge_of(&feasible, i);
    row.k_opt = Some(if row.edge.is_some() {
        p.1
    } else {
        let at = |j: usize| (feasible[j].1.ln(), loss(&feasible[j]));
        parabola_minimum(at(i - 1), at(i), at(i + 1)).exp()
    });
    row
}

/// Where the grid minimum `i` of the feasible points sits: `lowest` or `highest` at an end
/// of the feasible grid, `gap` when a neighbour on the grid was not feasible (a failed
/// member: the parabola would span a value that is no candidate), else `None`.
fn edge_of(feasible: &[(usize, f64, f64, f64)], i: usize) -> Option<String> {
    if i == 0 {
        return Some("lowest".into());
    }
    if i + 1 == feasible.len() {
        return Some("highest".into());
    }
    let adjacent = feasible[i - 1].0 + 1 == feasible[i].0 && feasible[i].0 + 1 == feasible[i + 1].0;
    (!adjacent).then(|| "gap".into())
}

/// The abscissa of the vertex of the parabola through three points `(x, y)` with the
/// middle one lowest (Brent 1973, ch. 5, eq. 3.4), clamped to `[x₀, x₂]`.
pub fn parabola_minimum(a: (f64, f64), b: (f64, f64), c: (f64, f64)) -> f64 {
    let p = (b.0 - a.0).powi(2) * (b.1 - c.1) - (b.0 - c.0).powi(2) * (b.1 - a.1);
    let q = (b.0 - a.0) * (b.1 - c.1) - (b.0 - c.0) * (b.1 - a.1);
    if q == 0.0 {
        return b.0;
    }
    (b.0 - 0.5 * p / q).clamp(a.0, c.0)
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    /// The vertex of y = (x − 0.3)² + 1 from any three points, and of a lopsided one.
    #[test]
    fn parabola_vertex_is_exact_on_a_parabola() {
        let f = |x: f64| (x - 0.3) * (x - 0.3) + 1.0;
        for (a, b, c) in [(-1.0, 0.0, 1.0), (0.0, 0.25, 2.0), (-3.0, 0.5, 0.7)] {
            let v = parabola_minimum((a, f(a)), (b, f(b)), (c, f(c)));
            assert!((v - 0.3).abs() < 1e-12, "{v}");
        }
        // Collinear points: the middle one.
        assert_eq!(parabola_minimum((0.0, 0.0), (1.0, 0.0), (2.0, 0.0)), 1.0);
    }

    fn record(cell: usize, k: f64) -> runs::Row {
        runs::Row {
            cell: cell as u64,
            problem: "p".into(),
            problem_params: "{}".into(),
            method: "penalty".into(),
            params: format!("{{\"method\":{{\"k_d\":1.0,\"k_p\":{k:?}}}}}"),
            h: 1e-3,
            ..runs::Row::default()
        }
    }

    fn member(cell: usize, task: f64, drift: f64, ok: bool) -> MemberRecord {
        MemberRecord {
            cell,
            ok,
            max_err_q: task,
            max_drift: drift,
            ..MemberRecord::default()
        }
    }

    /// A task loss rising as k and a constraint loss falling as 1/k: the optimum of
    /// k + α/k is √α, found between grid points by the parabola in log k to within the
    /// parabola's error on a non-quadratic; a failed member removes its grid point, and an
    /// optimum at the grid's edge is flagged.
    #[test]
    fn expected_loss_minimum_follows_alpha() {
        let grid = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0];
        let rows: Vec<runs::Row> = grid
            .iter()
            .enumerate()
            .map(|(i, &k)| record(i, k))
            .collect();
        let mut members = Vec::new();
        for (i, &k) in grid.iter().enumerate() {
            members.push(member(i, k, 1.0 / k, true));
            members.push(member(i, k, 1.0 / k, i != 5));
        }
        let spec = OptimumSpec {
            parameter: "k_p".into(),
            task: "max_err_q".into(),
            constraint: "max_drift".into(),
            alpha: vec![1.0, 4.0, 100.0],
        };
        let out = find(&[spec], &rows, &members);
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|r| r.candidates == 6 && r.feasible == 5));
        assert_eq!(out[0].k_grid, Some(1.0));
        assert!(
            (out[0].k_opt.unwrap_or(0.0) - 1.0).abs() < 0.05,
            "{:?}",
            out[0].k_opt
        );
        assert!(
            (out[1].k_opt.unwrap_or(0.0) - 2.0).abs() < 0.1,
            "{:?}",
            out[1].k_opt
        );
        assert_eq!(out[0].params, "{\"method\":{\"k_d\":1.0}}");
        // √100 = 10 lies beyond the feasible grid (k = 8 failed): the edge is named.
        assert_eq!(out[2].k_grid, Some(4.0));
        assert_eq!(out[2].edge.as_deref(), Some("highest"));
        // A failed member at k = 0.5, next to the minimum k = 1 of α = 1: no parabola
        // across the gap, the grid value stands.
        for m in members.iter_mut().filter(|m| m.cell == 1) {
            m.ok = false;
        }
        let spec = OptimumSpec {
            parameter: "k_p".into(),
            task: "max_err_q".into(),
            constraint: "max_drift".into(),
            alpha: vec![1.0],
        };
        let gap = find(&[spec], &rows, &members);
        assert_eq!(gap[0].edge.as_deref(), Some("gap"));
        assert_eq!(gap[0].k_opt, Some(1.0));
    }

    #[test]
    fn bad_entries_name_the_field() {
        let ok = OptimumSpec {
            parameter: "k_p".into(),
            task: "max_err_q".into(),
            constraint: "max_drift".into(),
            alpha: vec![1.0],
        };
        assert!(ok.validate(1).is_ok());
        let bad_task = OptimumSpec {
            task: "err_q".into(),
            ..ok.clone()
        };
        assert!(bad_task.validate(1).unwrap_err().contains("task"));
        let bad_alpha = OptimumSpec {
            alpha: vec![-1.0],
            ..ok
        };
        assert!(bad_alpha.validate(1).unwrap_err().contains("alpha"));
    }
}
