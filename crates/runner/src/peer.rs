//! Rows of another simulator in an experiment's runs table: `driftlab import-peer FILE
//! --into DIR` reads one JSON object per run of a peer (MuJoCo, measured by
//! `scripts/mujoco_peer.py`), checks that each ran a cell of the experiment in `DIR`
//! (same problem, parameters, step and end time), and writes the experiment's runs table
//! again — its own rows from the journal, then the peer's — through the one runs schema,
//! so that the report's figures show the peer beside the catalog's methods. Importing
//! again replaces the peer's earlier rows.

use crate::error::RunnerError;
use crate::journal::{Journal, RunItem};
use crate::record::{runs_frame, write_csv, write_parquet, RunRecord};
use driftlab_core::FailKind;
use std::collections::BTreeMap;
use std::path::Path;

/// One run of a peer simulator, as its measuring script writes it.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerRow {
    /// driftlab's id of the problem the peer modelled.
    pub problem: String,
    /// Its parameters (those the experiment's cell gives).
    pub problem_params: serde_json::Map<String, serde_json::Value>,
    /// Label: simulator and setting (`mujoco default [solref=(0.02, 1)]`).
    pub variant: String,
    /// The peer's settings (solver parameters, version).
    pub params: serde_json::Value,
    /// Step size.
    pub h: f64,
    /// End time.
    pub t_end: f64,
    /// Steps completed.
    pub steps: usize,
    /// The run reached `t_end`.
    pub ok: bool,
    /// Where a failed run stopped.
    pub fail_time: Option<f64>,
    /// Why it failed, with its numbers.
    pub fail_reason: Option<String>,
    /// max over steps and rows of |Φ_i| in driftlab's form of the rows.
    #[serde(deserialize_with = "null_as_nan")]
    pub max_pos_residual: f64,
    /// max |H − H₀| / max(|H₀|, the problem's energy scale).
    #[serde(deserialize_with = "null_as_nan")]
    pub max_energy_rel_error: f64,
    /// Wall time of the measured run.
    pub wall_seconds: f64,
    /// Wall time of the steps alone.
    pub step_seconds: f64,
}

/// A measure the peer could not take (`null`, e.g. a run MuJoCo refused) is NaN, as in
/// driftlab's own failed rows.
fn null_as_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    use serde::Deserialize;
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// The simulator id of a peer row: the first word of its label (`mujoco`).
fn simulator(row: &PeerRow) -> String {
    row.variant
        .split_whitespace()
        .next()
        .unwrap_or("peer")
        .to_string()
}

/// The experiment's own rows from its journal: per cell the first run with the median
/// times of its repeats (as `run` wrote them).
fn own_rows(dir: &Path) -> Result<Vec<RunRecord>, RunnerError> {
    let (_, items) = Journal::read(dir)?;
    let mut cells: BTreeMap<usize, Vec<RunItem>> = BTreeMap::new();
    for item in items {
        cells.entry(item.cell).or_default().push(item);
    }
    Ok(cells
        .into_values()
        .filter_map(|mut runs| {
            runs.sort_by_key(|i| i.repeat);
            let mut runs = runs.into_iter().map(|i| i.record);
            let first = runs.next()?;
            Some(crate::run::with_repeats(first, runs.collect()))
        })
        .collect())
}

/// The batch columns `run` set on its rows after the journal recorded them (cells side
/// by side and the batch's wall time), per cell, from the runs table it wrote.
fn batch_columns(dir: &Path) -> Result<BTreeMap<usize, (usize, f64)>, RunnerError> {
    use driftlab_results::schema::runs;
    use polars::prelude::DataType;
    let path = dir.join("runs.parquet");
    let Some(df) = crate::compare::read(&path)? else {
        return Ok(BTreeMap::new());
    };
    let err = |e: polars::prelude::PolarsError| RunnerError::Resume {
        path: path.display().to_string(),
        message: format!("cannot read the batch columns: {e}"),
    };
    let col = |name: &str| -> Result<Vec<Option<f64>>, RunnerError> {
        let c = df.column(name).map_err(err)?;
        let c = c.cast(&DataType::Float64).map_err(err)?;
        Ok(c.f64().map_err(err)?.iter().collect())
    };
    let (cells, sweeps, secs) = (
        col(runs::CELL.name)?,
        col(runs::SWEEP_THREADS.name)?,
        col(runs::BATCH_SECONDS.name)?,
    );
    Ok(cells
        .iter()
        .zip(sweeps.iter().zip(&secs))
        .filter_map(|(c, (k, s))| Some((c.as_ref().copied()? as usize, ((*k)? as usize, (*s)?))))
        .collect())
}

/// Whether `row` ran a cell of `own`: same problem and parameters, step and end time.
fn matches_a_cell(row: &PeerRow, own: &[RunRecord]) -> bool {
    let params = serde_json::Value::Object(row.problem_params.clone());
    own.iter().any(|r| {
        r.problem == row.problem
            && serde_json::from_str::<serde_json::Value>(&r.problem_params).ok()
                == Some(params.clone())
            && (r.h - row.h).abs() <= 1e-12 * row.h
            && (r.t_end - row.t_end).abs() <= 1e-12 * row.t_end
    })
}

/// The runs-table row of a peer run, as cell `cell` of `experiment`, in the first batch
/// (`sweep_threads`) of the experiment's own rows, so that figures drawing one batch
/// show it.
fn record(experiment: &str, cell: usize, sweep_threads: usize, row: &PeerRow) -> RunRecord {
    let mut rec = RunRecord {
        experiment: experiment.to_string(),
        cell,
        problem: row.problem.clone(),
        problem_params: serde_json::Value::Object(row.problem_params.clone()).to_string(),
        method: simulator(row),
        variant: row.variant.clone(),
        params: row.params.to_string(),
        h: row.h,
        t_end: row.t_end,
        threads: 1,
        sweep_threads,
        ok: row.ok,
        fail_time: row.fail_time,
        fail_kind: (!row.ok).then_some(FailKind::Diverged),
        fail_reason: row.fail_reason.clone(),
        steps: row.steps,
        wall_seconds: row.wall_seconds,
        step_seconds: row.step_seconds,
        observe_seconds: (row.wall_seconds - row.step_seconds).max(0.0),
        metrics_stride: 1,
        repeat: 1,
        ..RunRecord::default()
    };
    rec.summary.max_pos_residual = row.max_pos_residual;
    rec.summary.max_energy_rel_error = row.max_energy_rel_error;
    rec.step_seconds_min = row.step_seconds;
    rec.step_seconds_max = row.step_seconds;
    rec
}

/// Parse the peer's file: one JSON object per non-empty line; errors name the line.
fn read_peer_rows(file: &Path) -> Result<Vec<PeerRow>, RunnerError> {
    let text = std::fs::read_to_string(file).map_err(|e| RunnerError::Spec {
        path: file.display().to_string(),
        message: format!("cannot read the peer's rows: {e}"),
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(k, l)| {
            serde_json::from_str::<PeerRow>(l).map_err(|e| RunnerError::Spec {
                path: file.display().to_string(),
                message: format!("line {}: {e}; give one JSON object per run with the fields of driftlab_runner::peer::PeerRow", k + 1),
            })
        })
        .collect()
}

/// Import the peer rows of `file` into the experiment folder `dir`; returns how many.
pub fn import(file: &Path, dir: &Path) -> Result<usize, RunnerError> {
    let peer = read_peer_rows(file)?;
    let path = dir.join("manifest.json");
    if !path.exists() {
        // The manifest's own error names the missing file.
        crate::manifest::Manifest::read(&path)?;
    }
    let doing = format!(
        "driftlab import-peer {}, since {}",
        file.display(),
        crate::manifest::now_rfc3339()
    );
    let _lock = crate::folder::lock(dir, &doing)?;
    let manifest = crate::manifest::Manifest::read(&path)?;
    if manifest.status != "complete" {
        return Err(RunnerError::Spec {
            path: dir.display().to_string(),
            message: format!(
                "experiment `{}` is `{}`, not complete; finish it (`driftlab run … --resume`) before importing a peer's rows",
                manifest.experiment, manifest.status
            ),
        });
    }
    let mut own = own_rows(dir)?;
    let batches = batch_columns(dir)?;
    for r in &mut own {
        if let Some((k, secs)) = batches.get(&r.cell) {
            r.sweep_threads = *k;
            r.batch_seconds = *secs;
        }
    }
    if let Some((k, row)) = peer
        .iter()
        .enumerate()
        .find(|(_, r)| !matches_a_cell(r, &own))
    {
        return Err(RunnerError::Spec {
            path: file.display().to_string(),
            message: format!(
                "run {} ({} {} at h = {:e}, t_end = {}) is not a cell of experiment `{}` in {}; run the peer at the experiment's problems, steps and size",
                k + 1,
                row.problem,
                serde_json::Value::Object(row.problem_params.clone()),
                row.h,
                row.t_end,
                manifest.experiment,
                dir.display()
            ),
        });
    }
    // The experiment's own rows come from its journal, which holds no peer row: a second
    // import replaces the first. A peer named like one of the experiment's methods would
    // merge with that method's curves, so it is refused.
    if let Some(row) = peer
        .iter()
        .find(|r| own.iter().any(|o| o.method == simulator(r)))
    {
        return Err(RunnerError::Spec {
            path: file.display().to_string(),
            message: format!(
                "the peer's label `{}` starts with `{}`, a method id of experiment `{}`; begin each label with the simulator's own name (`mujoco default …`)",
                row.variant,
                simulator(row),
                manifest.experiment
            ),
        });
    }
    let mut rows = own;
    let first = rows.iter().map(|r| r.cell + 1).max().unwrap_or(0);
    let batch = rows.iter().map(|r| r.sweep_threads).min().unwrap_or(1);
    rows.extend(
        peer.iter()
            .enumerate()
            .map(|(k, r)| record(&manifest.experiment, first + k, batch, r)),
    );
    let mut df = runs_frame(&rows)?;
    write_parquet(&mut df, &dir.join("runs.parquet"))?;
    write_csv(&mut df, &dir.join("runs.csv"))?;
    Ok(peer.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = r#"{"problem": "planar-chain", "problem_params": {"links": 10}, "variant": "mujoco default [solref=(0.02, 1)]", "params": {"solref": [0.02, 1.0]}, "h": 0.001, "t_end": 2.0, "steps": 2000, "ok": true, "fail_time": null, "fail_reason": null, "max_pos_residual": 0.14, "max_energy_rel_error": 0.04, "wall_seconds": 0.5, "step_seconds": 0.026}"#;

    fn own(problem_params: &str, h: f64) -> RunRecord {
        RunRecord {
            problem: "planar-chain".into(),
            problem_params: problem_params.into(),
            h,
            t_end: 2.0,
            ..RunRecord::default()
        }
    }

    #[test]
    fn a_peer_row_becomes_a_runs_row_of_a_matching_cell() {
        let row: PeerRow = serde_json::from_str(ROW).expect("row");
        assert!(matches_a_cell(&row, &[own("{\"links\":10}", 1e-3)]));
        assert!(!matches_a_cell(&row, &[own("{\"links\":100}", 1e-3)]));
        assert!(!matches_a_cell(&row, &[own("{\"links\":10}", 2e-3)]));
        let rec = record("mujoco-peer", 7, 1, &row);
        assert_eq!(
            (rec.method.as_str(), rec.cell, rec.steps),
            ("mujoco", 7, 2000)
        );
        assert_eq!(rec.problem_params, "{\"links\":10}");
        assert!((rec.summary.max_pos_residual - 0.14).abs() < 1e-15);
        assert!(
            rec.summary.err_q.is_nan(),
            "what the peer did not measure stays null"
        );
    }

    #[test]
    fn a_measure_the_peer_could_not_take_is_nan() {
        let row = ROW.replace("\"max_pos_residual\": 0.14", "\"max_pos_residual\": null");
        let row: PeerRow = serde_json::from_str(&row).expect("row");
        assert!(row.max_pos_residual.is_nan());
        assert!((row.max_energy_rel_error - 0.04).abs() < 1e-15);
    }

    #[test]
    fn a_malformed_peer_file_names_its_line() {
        let dir = std::env::temp_dir().join(format!("driftlab-peer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("peer.jsonl");
        std::fs::write(&file, format!("{ROW}\n\n{{\"problem\": 1}}\n")).expect("write");
        let e = read_peer_rows(&file).unwrap_err().to_string();
        assert!(e.contains("line 3"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
