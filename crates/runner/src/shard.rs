//! One sweep over many machines: `driftlab run SPEC --shard I/N` runs the I-th of N
//! deterministic shards of the cells, and [`merge`] combines the shards' folders into one
//! result folder whose rows equal an unsharded run's (every column but the measured
//! ones). A Slurm job array runs the shards ([`crate::slurm`]); any scheduler can.
//!
//! The shards are balanced by a cost estimate, not by index: cells are dealt
//! longest-first to the shard with the least estimated work so far (the LPT rule, whose
//! makespan is within 4/3 of the optimum; Graham, SIAM J. Appl. Math. 17, 1969). The
//! deal depends only on the spec, so every task computes the same one.

use crate::cell::Cell;
use crate::error::RunnerError;
use crate::journal::{Header, Journal, RunItem};
use crate::manifest::{Manifest, ShardNote};
use crate::registry::Registry;
use crate::run::{RunOptions, RunSummary};
use crate::spec::Spec;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Parse `I/N` (0 ≤ I < N).
pub fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let parsed = text
        .split_once('/')
        .and_then(|(i, n)| Some((i.trim().parse().ok()?, n.trim().parse().ok()?)));
    match parsed {
        Some((i, n)) if n >= 1 && i < n => Ok((i, n)),
        _ => Err(format!(
            "--shard `{text}`: write I/N with 0 ≤ I < N, e.g. --shard 0/4 for the first of four"
        )),
    }
}

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

/// One shard's folder as read for a merge.
struct ShardDir {
    dir: PathBuf,
    manifest: Manifest,
    header: Header,
    items: Vec<RunItem>,
}

fn refuse(path: &Path, message: String) -> RunnerError {
    RunnerError::Resume {
        path: path.display().to_string(),
        message,
    }
}

/// Read the shard folders and check that they are the N shards of one run.
fn read_shards(dirs: &[PathBuf]) -> Result<Vec<ShardDir>, RunnerError> {
    let mut shards = Vec::new();
    for dir in dirs {
        let manifest = Manifest::read(&dir.join("manifest.json"))?;
        let (header, items) = Journal::read(dir)?;
        shards.push(ShardDir {
            dir: dir.clone(),
            manifest,
            header,
            items,
        });
    }
    let Some(first) = shards.first() else {
        return Err(refuse(
            Path::new("."),
            "give the shard folders to merge".into(),
        ));
    };
    let n = first.header.shard.map_or(0, |(_, n)| n);
    let mut seen = BTreeSet::new();
    for s in &shards {
        let Some((i, _)) = s.header.shard else {
            return Err(refuse(
                &s.dir,
                "not a shard: it was run without --shard".into(),
            ));
        };
        let as_first = Header {
            shard: first.header.shard.map(|(_, n)| (i, n)),
            ..first.header.clone()
        };
        if let Some(d) = as_first.difference(&s.header) {
            return Err(refuse(
                &s.dir,
                format!("another run than `{}` ({d})", first.dir.display()),
            ));
        }
        if !seen.insert(i) {
            return Err(refuse(&s.dir, format!("shard {i}/{n} is given twice")));
        }
    }
    let missing: Vec<String> = (0..n)
        .filter(|i| !seen.contains(i))
        .map(|i| format!("{i}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(refuse(
            &first.dir,
            format!(
                "shards {} are missing; give all {n} shard folders",
                missing.join(", ")
            ),
        ));
    }
    Ok(shards)
}

/// Combine shard folders (each `driftlab run SPEC --shard I/N`) into `out`: the rows,
/// traces, orders and manifest of the whole sweep, equal to an unsharded run's except
/// the measured columns; the manifest lists the shards. Every run of every cell must be
/// in one shard's journal (a shard that did not finish is named, with its progress).
pub fn merge(dirs: &[PathBuf], out: &Path, registry: &Registry) -> Result<RunSummary, RunnerError> {
    let shards = read_shards(dirs)?;
    let first = &shards[0];
    let text = first.manifest.spec_text.clone();
    let spec = Spec::parse(&text, "merge")?;
    for s in &shards {
        if s.manifest.status != "complete" {
            return Err(refuse(&s.dir, format!(
                "shard {} did not finish ({} of {} cells recorded): rerun it with --resume, then merge",
                s.manifest.shard, s.manifest.cells_done, s.manifest.cells_total
            )));
        }
    }
    let opts = RunOptions {
        out_dir: Some(out.to_path_buf()),
        size: Some(first.manifest.size.clone()),
        registry: registry.clone(),
        resume: true,
        complete_only: true,
        ..RunOptions::default()
    };
    let (sized, cells) = crate::run::validated(&spec, "merge", &opts)?;
    let doing = format!("driftlab merge, since {}", crate::manifest::now_rfc3339());
    let _lock = crate::folder::prepare(out, &spec.name, crate::folder::Claim::Fresh, &doing)?;
    let header = Header {
        shard: None,
        ..first.header.clone()
    };
    let journal = Journal::create(out, &header)?;
    let mut items: HashMap<(usize, usize), &RunItem> = HashMap::new();
    for s in &shards {
        for item in &s.items {
            items.insert((item.cell, item.repeat), item);
        }
    }
    let mut keys: Vec<&(usize, usize)> = items.keys().collect();
    keys.sort();
    for key in keys {
        journal.append(items[key])?;
    }
    drop(journal);
    let manifest = Manifest {
        experiment: first.manifest.experiment.clone(),
        spec_text: text.clone(),
        spec_hash: first.manifest.spec_hash.clone(),
        size: first.manifest.size.clone(),
        sweep_thread_counts: first.manifest.sweep_thread_counts.clone(),
        started: first.manifest.started.clone(),
        status: "running".into(),
        shards: shards.iter().map(ShardNote::of).collect(),
        ..Manifest::default()
    };
    manifest.write(&out.join("manifest.json"))?;
    crate::run::run_in_folder(&sized, &cells, &text, &opts, out)
}

impl ShardNote {
    fn of(s: &ShardDir) -> Self {
        Self {
            shard: s.manifest.shard.clone(),
            dir: s.dir.display().to_string(),
            host: s.manifest.host.clone(),
            cells: s.manifest.cells,
            failed_cells: s.manifest.failed_cells,
            started: s.manifest.started.clone(),
            finished: s.manifest.finished.clone(),
            git_revision: s.manifest.git_revision.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_bad_ones_name_the_form() {
        assert_eq!(parse_shard("2/4"), Ok((2, 4)));
        for bad in ["4/4", "1", "a/b", "0/0", "-1/3"] {
            assert!(parse_shard(bad).unwrap_err().contains("write I/N"), "{bad}");
        }
    }

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
