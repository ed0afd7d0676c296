//! What a cell is expected to cost (steps × the size of its system), the order the sweep
//! starts its runs in (longest first) and the cells of one shard (a greedy balance of the
//! estimates; `driftlab run --shard` and `driftlab merge` run and merge the shards).

use crate::registry::Registry;
use crate::spec::cell::Cell;
use std::collections::HashMap;

/// Estimated work of a cell: steps × (coordinates + constraints) × runs, times 3 for an
/// implicit method (Newton iterations) and the member count for an ensemble. The step
/// cost of the sparse path grows linearly with the size (issue 12: measured slopes
/// 1.0–1.1 from 10³ to 10⁶ links); an error-controlled cell is counted as
/// 100 · (1 + log₁₀(1/rtol)) steps. Only the ranking and the sums matter.
pub fn cost_estimate(cell: &Cell, registry: &Registry) -> f64 {
    cost_of_size(cell, problem_size(cell, registry))
}

/// [`cost_estimate`] of each cell, each problem (id and parameters) built once to learn
/// its size.
pub fn cost_estimates<'c>(
    cells: impl IntoIterator<Item = &'c Cell>, registry: &Registry,
) -> Vec<f64> {
    let mut sizes: HashMap<(String, String), f64> = HashMap::new();
    cells
        .into_iter()
        .map(|cell| {
            let key = (cell.problem.clone(), cell.problem_params.to_string());
            let size = *sizes
                .entry(key)
                .or_insert_with(|| problem_size(cell, registry));
            cost_of_size(cell, size)
        })
        .collect()
}

/// `n + m` of the cell's problem (1 if it does not build: its cell fails at once).
fn problem_size(cell: &Cell, registry: &Registry) -> f64 {
    registry
        .build_problem(&cell.problem, &cell.problem_params)
        .map(|p| {
            let d = p.as_system().dims();
            (d.n + d.m) as f64
        })
        .unwrap_or(1.0)
}

/// [`cost_estimate`] for a problem of `size` unknowns.
fn cost_of_size(cell: &Cell, size: f64) -> f64 {
    let steps = match &cell.adaptive {
        Some(a) => 100.0 * (1.0 + (1.0 / a.tol.rtol).log10().max(0.0)),
        None => (cell.t_end / cell.h).round().max(1.0),
    };
    let implicit = if cell.info.implicit { 3.0 } else { 1.0 };
    let members = cell.ensemble.as_ref().map_or(1.0, |e| e.members as f64);
    steps * size.max(1.0) * implicit * members * cell.repeat.max(1) as f64
}

/// The shard (0 … n−1) of each cost: longest first to the least-loaded shard (ties to
/// the lower index, equal costs in their given order).
pub fn assign(costs: &[f64], n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]).then(a.cmp(&b)));
    let mut load = vec![0.0f64; n.max(1)];
    let mut shard = vec![0; costs.len()];
    for i in order {
        let least = (0..load.len())
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .unwrap_or(0);
        load[least] += costs[i];
        shard[i] = least;
    }
    shard
}

/// `batches` with only the cells of shard `i` of `n` (counted over all batches).
pub(crate) fn keep_shard(
    batches: Vec<(usize, Vec<Cell>)>, (i, n): (usize, usize), registry: &Registry,
) -> Vec<(usize, Vec<Cell>)> {
    let costs = cost_estimates(batches.iter().flat_map(|(_, b)| b), registry);
    let mut shard = assign(&costs, n).into_iter();
    batches
        .into_iter()
        .map(|(k, cells)| {
            let kept = cells
                .into_iter()
                .filter(|_| shard.next() == Some(i))
                .collect();
            (k, kept)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_first_balances_and_is_deterministic() {
        // One big cell and many small ones: the big one gets a shard of its own.
        let costs = [1.0, 1.0, 10.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0];
        let s = assign(&costs, 2);
        assert_eq!(s, assign(&costs, 2));
        let load = |k: usize| -> f64 {
            costs
                .iter()
                .zip(&s)
                .filter(|(_, &x)| x == k)
                .map(|(c, _)| c)
                .sum()
        };
        assert_eq!(s[2], 0);
        assert_eq!((load(0), load(1)), (10.0, 10.0));
        // By index alone (alternating) the loads would be 15 and 5.
    }

    /// The smallest largest load over every assignment of `costs` to `n` shards.
    fn optimum(costs: &[f64], n: usize) -> f64 {
        let mut best = f64::INFINITY;
        for code in 0..n.pow(costs.len() as u32) {
            let mut load = vec![0.0f64; n];
            let mut c = code;
            for x in costs {
                load[c % n] += x;
                c /= n;
            }
            best = best.min(load.iter().copied().fold(0.0, f64::max));
        }
        best
    }

    proptest::proptest! {
        /// Graham's bound for longest-processing-time-first (SIAM J. Appl. Math. 17,
        /// 1969): the largest shard load is at most (4/3 − 1/(3n)) of the optimum, here
        /// found by enumerating every assignment; every cell gets a shard in 0 … n−1.
        #[test]
        fn lpt_meets_grahams_bound(
            costs in proptest::collection::vec(0.0f64..1e6, 0..9),
            n in 1usize..4,
        ) {
            let s = assign(&costs, n);
            proptest::prop_assert_eq!(s.len(), costs.len());
            proptest::prop_assert!(s.iter().all(|&k| k < n));
            let mut load = vec![0.0f64; n];
            for (c, &k) in costs.iter().zip(&s) {
                load[k] += c;
            }
            let worst = load.iter().copied().fold(0.0, f64::max);
            let bound = (4.0 / 3.0 - 1.0 / (3.0 * n as f64)) * optimum(&costs, n);
            proptest::prop_assert!(worst <= bound * (1.0 + 1e-12), "{worst} > {bound}");
        }
    }
}
