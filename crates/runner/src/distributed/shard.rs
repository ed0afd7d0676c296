//! One sweep over many machines: `driftlab run SPEC --shard I/N` runs the I-th of N
//! deterministic shards of the cells, and [`merge`] combines the shards' folders into one
//! result folder whose rows equal an unsharded run's (every column but the measured
//! ones). A Slurm job array runs the shards ([`crate::distributed::slurm`]); any scheduler can.
//!
//! The shards are balanced by a cost estimate, not by index: cells are dealt
//! longest-first to the shard with the least estimated work so far (the LPT rule, whose
//! makespan is within 4/3 of the optimum; Graham, SIAM J. Appl. Math. 17, 1969). The
//! deal depends only on the spec, so every task computes the same one.

use crate::error::RunnerError;
use crate::exec::run::{RunOptions, RunSummary};
use crate::registry::Registry;
use crate::spec::Spec;
use crate::store::journal::{Header, Journal, RunItem};
use crate::store::manifest::{Manifest, ShardNote};
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
    let (sized, cells) = crate::exec::run::validated(&spec, "merge", &opts)?;
    let doing = format!(
        "driftlab merge, since {}",
        crate::store::manifest::now_rfc3339()
    );
    let _lock =
        crate::store::folder::prepare(out, &spec.name, crate::store::folder::Claim::Fresh, &doing)?;
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
    crate::exec::run::run_in_folder(&sized, &cells, &text, &opts, out)
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
}
