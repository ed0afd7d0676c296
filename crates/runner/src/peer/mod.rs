//! Rows of another simulator in an experiment's runs table: `driftlab import-peer FILE
//! --into DIR` reads one JSON object per run of a peer (MuJoCo, measured by
//! `scripts/mujoco_peer.py`; Pinocchio's corrector), checks each as driftlab checks its own
//! rows ([`row::PeerRow::invalid`]) and that it ran a cell of the experiment in `DIR`
//! (same problem, parameters — numbers compared by value, `90` and `90.0` alike — step
//! and end time), and **adds** them to the folder's peer rows: `DIR/peers.jsonl` holds
//! every peer row imported (the source of truth), and the runs table is written again —
//! the experiment's own rows from its journal, then the peers' — through the one runs
//! schema, so that the report's figures show the peer beside the catalog's methods.
//! A run imported twice is refused; `--replace` replaces the earlier rows of the file's
//! simulators (other simulators' rows stay).

pub mod row;

use crate::error::RunnerError;
use crate::store::journal::{Journal, RunItem};
use crate::store::record::{
    nullable, runs_frame, unmeasured_row, write_csv, write_parquet, RowIdentity,
};
use driftlab_core::FailKind;
use driftlab_results::schema::runs;
pub use row::PeerRow;
use std::collections::BTreeMap;
use std::path::Path;

/// The peer rows a folder holds ([`crate::store::folder::PEERS_FILE`]).
pub use crate::store::folder::PEERS_FILE as FILE;

/// What an import did: rows added, and peer rows the folder holds now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Imported {
    /// Rows of the file imported.
    pub added: usize,
    /// Peer rows in the runs table now (earlier ones kept, unless replaced).
    pub total: usize,
    /// Earlier peer rows replaced (`--replace`).
    pub replaced: usize,
}

fn peer_err(path: &Path, message: String) -> RunnerError {
    RunnerError::Peer {
        path: path.display().to_string(),
        message,
    }
}

/// The experiment's own rows from its journal: per cell the first run with the median
/// times of its repeats (as `run` wrote them).
fn own_rows(dir: &Path) -> Result<Vec<runs::Row>, RunnerError> {
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
            Some(crate::exec::cell_run::with_repeats(first, runs.collect()))
        })
        .collect())
}

/// What `run` set on a cell's row after the journal recorded it: its batch (cells side
/// by side, the batch's wall time) and, for a row a verdict uses, the times of its runs
/// alone (`timed_alone` > 0, [`crate::exec::timing`]), which the journal does not hold.
#[derive(Clone, Copy, Debug, Default)]
struct AfterJournal {
    sweep_threads: usize,
    batch_seconds: f64,
    timed_alone: usize,
    wall_seconds: f64,
    step_seconds: f64,
    observe_seconds: f64,
    step_seconds_min: f64,
    step_seconds_max: f64,
}

impl AfterJournal {
    /// Set on `r`: the batch, and the times alone where there are any.
    fn apply(&self, r: &mut runs::Row) {
        r.sweep_threads = self.sweep_threads as u64;
        r.batch_seconds = self.batch_seconds;
        if self.timed_alone > 0 {
            r.timed_alone = self.timed_alone as u64;
            r.wall_seconds = self.wall_seconds;
            r.step_seconds = self.step_seconds;
            r.observe_seconds = self.observe_seconds;
            r.step_seconds_min = nullable(self.step_seconds_min);
            r.step_seconds_max = nullable(self.step_seconds_max);
        }
    }
}

/// Per cell, what `run` set after the journal ([`AfterJournal`]), from the runs table it
/// wrote; and how many rows that table holds.
fn after_journal(dir: &Path) -> Result<(BTreeMap<usize, AfterJournal>, usize), RunnerError> {
    use driftlab_results::schema::runs;
    use polars::prelude::DataType;
    let path = dir.join("runs.parquet");
    let Some(df) = crate::store::compare::read(&path)? else {
        return Ok((BTreeMap::new(), 0));
    };
    let err = |e: polars::prelude::PolarsError| RunnerError::Resume {
        path: path.display().to_string(),
        message: format!("cannot read the columns set after the journal: {e}"),
    };
    let col = |name: &str| -> Result<Vec<Option<f64>>, RunnerError> {
        let c = df.column(name).map_err(err)?;
        let c = c.cast(&DataType::Float64).map_err(err)?;
        Ok(c.f64().map_err(err)?.iter().collect())
    };
    let cols = [
        runs::CELL.name,
        runs::SWEEP_THREADS.name,
        runs::BATCH_SECONDS.name,
        runs::TIMED_ALONE.name,
        runs::WALL_SECONDS.name,
        runs::STEP_SECONDS.name,
        runs::OBSERVE_SECONDS.name,
        runs::STEP_SECONDS_MIN.name,
        runs::STEP_SECONDS_MAX.name,
    ]
    .map(col);
    let [cell, sweep, batch, alone, wall, step, observe, min, max] = cols;
    let (cell, sweep, batch, alone) = (cell?, sweep?, batch?, alone?);
    let (wall, step, observe, min, max) = (wall?, step?, observe?, min?, max?);
    let nan = |x: &Option<f64>| x.unwrap_or(f64::NAN);
    let map = (0..df.height())
        .filter_map(|k| {
            let after = AfterJournal {
                sweep_threads: sweep[k]? as usize,
                batch_seconds: batch[k]?,
                timed_alone: alone[k].unwrap_or(0.0) as usize,
                wall_seconds: nan(&wall[k]),
                step_seconds: nan(&step[k]),
                observe_seconds: nan(&observe[k]),
                step_seconds_min: nan(&min[k]),
                step_seconds_max: nan(&max[k]),
            };
            Some((cell[k]? as usize, after))
        })
        .collect();
    Ok((map, df.height()))
}

/// The experiment's own rows, each with its parameters in canonical form (computed once,
/// not once per peer row).
struct Cells<'a> {
    own: Vec<(&'a runs::Row, String)>,
}

impl<'a> Cells<'a> {
    fn new(own: &'a [runs::Row]) -> Self {
        let canonical = |r: &runs::Row| {
            serde_json::from_str::<serde_json::Value>(&r.problem_params)
                .map_or_else(|_| String::new(), |v| row::canonical(&v))
        };
        Self {
            own: own.iter().map(|r| (r, canonical(r))).collect(),
        }
    }

    /// The cell that `row` ran: same problem and parameters (numbers by value), step and
    /// end time.
    fn of(&self, row: &PeerRow) -> Option<&'a runs::Row> {
        let params = row::canonical(&serde_json::Value::Object(row.problem_params.clone()));
        self.own
            .iter()
            .find(|(r, p)| {
                r.problem == row.problem
                    && *p == params
                    && (r.h - row.h).abs() <= 1e-12 * row.h
                    && (r.t_end - row.t_end).abs() <= 1e-12 * row.t_end
            })
            .map(|(r, _)| *r)
    }
}

/// The runs-table row of a peer run, as cell `cell` of `experiment`, in the first batch
/// (`sweep_threads`) of the experiment's own rows, so that figures drawing one batch
/// show it; its parameters written as the cell's.
fn record(
    experiment: &str, cell: usize, sweep_threads: usize, row: &PeerRow, of: &runs::Row,
) -> runs::Row {
    let mut rec = unmeasured_row(&RowIdentity {
        experiment,
        cell,
        problem: row.problem.clone(),
        problem_params: of.problem_params.clone(),
        method: row.simulator().to_string(),
        variant: row.variant.clone(),
        params: row.params.to_string(),
        h: row.h,
        t_end: row.t_end,
        threads: 1,
        metrics_stride: 1,
        tolerances: None,
        declared: driftlab_core::DeclaredOrders::default(),
    });
    rec.sweep_threads = sweep_threads as u64;
    rec.status = if row.ok { "ok" } else { "failed" }.into();
    rec.fail_time = row.fail_time.and_then(nullable);
    rec.fail_kind = (!row.ok).then(|| row.kind().unwrap_or(FailKind::External).tag().to_string());
    rec.fail_reason = row.fail_reason.clone();
    rec.steps = row.steps as u64;
    rec.wall_seconds = row.wall_seconds;
    rec.step_seconds = row.step_seconds;
    rec.observe_seconds = (row.wall_seconds - row.step_seconds).max(0.0);
    rec.repeat = row.repeat as u64;
    rec.timed_alone = if row.alone { row.repeat as u64 } else { 0 };
    rec.max_pos_residual = nullable(row.max_pos_residual);
    rec.max_energy_rel_error = nullable(row.max_energy_rel_error);
    rec.max_vel_residual = nullable(row.max_vel_residual);
    rec.final_pos_residual = nullable(row.final_pos_residual);
    rec.err_q = nullable(row.err_q);
    rec.final_err_q = nullable(row.final_err_q);
    let or_median = |x: f64| if x.is_nan() { row.step_seconds } else { x };
    rec.step_seconds_min = nullable(or_median(row.step_seconds_min));
    rec.step_seconds_max = nullable(or_median(row.step_seconds_max));
    rec
}

/// The peer rows `dir` holds (`peers.jsonl`); a runs table with peer rows but no such
/// file (imported by an older driftlab) is refused unless they are to be replaced.
fn earlier_rows(
    dir: &Path, own: usize, table_rows: usize, replace: bool,
) -> Result<Vec<PeerRow>, RunnerError> {
    let path = dir.join(FILE);
    if path.exists() {
        return row::read_rows(&path).map_err(|m| peer_err(&path, m));
    }
    if table_rows > own && !replace {
        return Err(peer_err(
            dir,
            format!(
                "the runs table holds {} peer rows that an older driftlab imported without keeping them in {FILE}; give --replace to replace them with this file's rows",
                table_rows - own
            ),
        ));
    }
    Ok(Vec::new())
}

/// Check every new row against the experiment: a cell it ran, a label that is not a
/// method's, and not imported already (unless replacing).
fn check_new(
    file: &Path, new: &[PeerRow], own: &[runs::Row], earlier: &[PeerRow], replace: bool,
    experiment: &str,
) -> Result<(), RunnerError> {
    let cells = Cells::new(own);
    let imported: std::collections::HashSet<_> = earlier.iter().map(PeerRow::key).collect();
    for (k, row) in new.iter().enumerate() {
        if cells.of(row).is_none() {
            return Err(peer_err(file, format!(
                "run {} ({} {} at h = {:e}, t_end = {}) is not a cell of experiment `{experiment}`; run the peer at the experiment's problems, steps and size",
                k + 1,
                row.problem,
                serde_json::Value::Object(row.problem_params.clone()),
                row.h,
                row.t_end
            )));
        }
        // A peer named like one of the experiment's methods would merge with that
        // method's curves.
        if own.iter().any(|o| o.method == row.simulator()) {
            return Err(peer_err(file, format!(
                "the peer's label `{}` starts with `{}`, a method id of experiment `{experiment}`; begin each label with the simulator's own name (`mujoco default …`)",
                row.variant,
                row.simulator()
            )));
        }
        if !replace && imported.contains(&row.key()) {
            return Err(peer_err(file, format!(
                "run {} (`{}` at h = {:e}) was imported already; give --replace to replace the earlier peer rows",
                k + 1,
                row.variant,
                row.h
            )));
        }
    }
    Ok(())
}

/// Import the peer rows of `file` into the experiment folder `dir`, adding them to its
/// earlier peer rows (or replacing those with `replace`).
pub fn import(file: &Path, dir: &Path, replace: bool) -> Result<Imported, RunnerError> {
    let new = row::read_rows(file).map_err(|m| peer_err(file, m))?;
    let path = dir.join("manifest.json");
    if !path.exists() {
        // The manifest's own error names the missing file.
        crate::store::manifest::Manifest::read(&path)?;
    }
    let doing = format!(
        "driftlab import-peer {}, since {}",
        file.display(),
        crate::store::manifest::now_rfc3339()
    );
    let _lock = crate::store::folder::lock(dir, &doing)?;
    let mut manifest = crate::store::manifest::Manifest::read(&path)?;
    // The runs table is rebuilt below from the journal and peers.jsonl: an import killed
    // between that table and the manifest leaves row counts this import repairs.
    driftlab_results::folder_check::check_except_rows(dir, &["runs.parquet"]).map_err(|d| {
        peer_err(
            dir,
            format!("damaged: {d}; rerun the experiment into the folder before importing"),
        )
    })?;
    if manifest.status != "complete" {
        return Err(peer_err(dir, format!(
            "experiment `{}` is `{}`, not complete; finish it (`driftlab run … --resume`) before importing a peer's rows",
            manifest.experiment, manifest.status
        )));
    }
    let mut own = own_rows(dir)?;
    let (after, table_rows) = after_journal(dir)?;
    for r in &mut own {
        if let Some(a) = after.get(&(r.cell as usize)) {
            a.apply(r);
        }
    }
    let earlier = earlier_rows(dir, own.len(), table_rows, replace)?;
    check_new(file, &new, &own, &earlier, replace, &manifest.experiment)?;
    let legacy = if earlier.is_empty() {
        table_rows.saturating_sub(own.len())
    } else {
        0
    };
    let (peers, replaced) = combine(earlier, &new, replace);
    let replaced = replaced + legacy;
    write_peers(&dir.join(FILE), &peers)?;
    let first = own.iter().map(|r| r.cell as usize + 1).max().unwrap_or(0);
    let batch = own
        .iter()
        .map(|r| r.sweep_threads as usize)
        .min()
        .unwrap_or(1);
    let cells = Cells::new(&own);
    let records: Vec<runs::Row> = peers
        .iter()
        .filter_map(|r| Some((r, cells.of(r)?)))
        .enumerate()
        .map(|(k, (r, of))| record(&manifest.experiment, first + k, batch, r, of))
        .collect();
    let peer_rows = records.len();
    let mut rows = own;
    rows.extend(records);
    let mut df = runs_frame(&rows)?;
    write_parquet(&mut df, &dir.join("runs.parquet"))?;
    write_csv(&mut df, &dir.join("runs.csv"))?;
    manifest.peer_rows = peer_rows;
    if !manifest.files.iter().any(|f| f == FILE) {
        manifest.files.push(FILE.into());
    }
    manifest.tables = crate::store::manifest::table_notes(dir, &manifest.files)?;
    manifest.write(&path)?;
    Ok(Imported {
        added: new.len(),
        total: peers.len(),
        replaced,
    })
}

/// The folder's peer rows after the import, and how many earlier ones gave way: the
/// earlier rows then the new ones; with `replace`, the earlier rows of the new rows'
/// simulators (the first word of their labels) are dropped, other simulators' stay.
fn combine(earlier: Vec<PeerRow>, new: &[PeerRow], replace: bool) -> (Vec<PeerRow>, usize) {
    let before = earlier.len();
    let kept: Vec<PeerRow> = earlier
        .into_iter()
        .filter(|e| !replace || !new.iter().any(|n| n.simulator() == e.simulator()))
        .collect();
    let replaced = before - kept.len();
    (
        kept.into_iter().chain(new.iter().cloned()).collect(),
        replaced,
    )
}

/// `rows` as `path`, one JSON object per line, written atomically.
fn write_peers(path: &Path, rows: &[PeerRow]) -> Result<(), RunnerError> {
    let mut text = String::new();
    for r in rows {
        let line = serde_json::to_string(r).map_err(|e| RunnerError::Write {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        text.push_str(&line);
        text.push('\n');
    }
    crate::store::atomic::write_atomically(path, |f| {
        std::io::Write::write_all(f, text.as_bytes()).map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = r#"{"problem": "planar-chain", "problem_params": {"links": 10}, "variant": "mujoco default [solref=(0.02, 1)]", "params": {"solref": [0.02, 1.0]}, "h": 0.001, "t_end": 2.0, "steps": 2000, "ok": true, "fail_time": null, "fail_reason": null, "max_pos_residual": 0.14, "max_energy_rel_error": 0.04, "wall_seconds": 0.5, "step_seconds": 0.026}"#;

    fn own(problem_params: &str, h: f64) -> runs::Row {
        runs::Row {
            problem: "planar-chain".into(),
            problem_params: problem_params.into(),
            h,
            t_end: 2.0,
            ..runs::Row::default()
        }
    }

    fn row(edit: &[(&str, &str)]) -> PeerRow {
        let mut text = ROW.to_string();
        for (a, b) in edit {
            assert!(text.contains(a), "{a}");
            text = text.replacen(a, b, 1);
        }
        serde_json::from_str(&text).expect("row")
    }

    #[test]
    fn a_peer_row_becomes_a_runs_row_of_a_matching_cell() {
        let r = row(&[]);
        let cells = [own("{\"links\":10.0}", 1e-3)];
        let of = Cells::new(&cells)
            .of(&r)
            .expect("links 10 is the cell's 10.0: numbers by value");
        assert!(Cells::new(&[own("{\"links\":100}", 1e-3)]).of(&r).is_none());
        assert!(Cells::new(&[own("{\"links\":10}", 2e-3)]).of(&r).is_none());
        let rec = record("mujoco-peer", 7, 1, &r, of);
        assert_eq!(
            (rec.method.as_str(), rec.cell, rec.steps),
            ("mujoco", 7, 2000)
        );
        assert_eq!(
            rec.problem_params, "{\"links\":10.0}",
            "written as the cell's"
        );
        assert!((rec.max_pos_residual.unwrap_or(f64::NAN) - 0.14).abs() < 1e-15);
        assert!(
            rec.err_q.is_none(),
            "what the peer did not measure stays null"
        );
    }

    #[test]
    fn a_peer_s_optional_measures_reach_the_runs_row() {
        let r = row(&[(
            "\"wall_seconds\"",
            "\"err_q\": 2.5e-3, \"final_err_q\": 1e-3, \"max_vel_residual\": 0.3, \"final_pos_residual\": 0.01, \"wall_seconds\"",
        )]);
        let cells = [own("{\"links\":10.0}", 1e-3)];
        let of = Cells::new(&cells).of(&r).expect("matches");
        let rec = record("mujoco-loops", 7, 1, &r, of);
        let s = &rec;
        assert_eq!((s.err_q, s.final_err_q), (Some(2.5e-3), Some(1e-3)));
        assert_eq!(
            (s.max_vel_residual, s.final_pos_residual),
            (Some(0.3), Some(0.01))
        );
        assert!(s.err_v.is_none(), "what the peer did not give stays null");
    }

    #[test]
    fn a_peer_s_repeated_times_keep_their_range_and_say_whether_alone() {
        let r = row(&[(
            "\"step_seconds\": 0.026",
            "\"step_seconds\": 0.026, \"repeat\": 5, \"step_seconds_min\": 0.025, \"step_seconds_max\": 0.031, \"alone\": true",
        )]);
        assert_eq!(r.invalid(), None);
        let cells = [own("{\"links\":10.0}", 1e-3)];
        let of = Cells::new(&cells).of(&r).expect("matches");
        let rec = record("mujoco-loops", 7, 1, &r, of);
        assert_eq!((rec.repeat, rec.timed_alone), (5, 5));
        assert_eq!(
            (rec.step_seconds_min, rec.step_seconds_max),
            (Some(0.025), Some(0.031))
        );
        let plain = record("mujoco-loops", 7, 1, &row(&[]), of);
        assert_eq!(
            (plain.repeat, plain.timed_alone),
            (1, 0),
            "one run, side by side"
        );
        assert_eq!(
            (plain.step_seconds_min, plain.step_seconds_max),
            (Some(0.026), Some(0.026))
        );
        let said = |edit: &str| {
            row(&[("\"step_seconds\": 0.026", edit)])
                .invalid()
                .unwrap_or_default()
        };
        assert!(said("\"step_seconds\": 0.026, \"repeat\": 0").contains("repeat = 0"));
        assert!(said("\"step_seconds\": 0.026, \"repeat\": 101").contains("1 to 100"));
        let outside =
            "\"step_seconds\": 0.026, \"step_seconds_min\": 0.03, \"step_seconds_max\": 0.04";
        assert!(
            said(outside).contains("min ≤ median ≤ max"),
            "{}",
            said(outside)
        );
        let half = "\"step_seconds\": 0.026, \"step_seconds_min\": 0.02";
        assert!(said(half).contains("both ends"), "{}", said(half));
    }

    #[test]
    fn a_measure_the_peer_could_not_take_is_nan() {
        let r = row(&[("\"max_pos_residual\": 0.14", "\"max_pos_residual\": null")]);
        assert!(r.max_pos_residual.is_nan());
        assert!((r.max_energy_rel_error - 0.04).abs() < 1e-15);
        assert_eq!(r.invalid(), None);
    }

    #[test]
    fn rows_unlike_driftlabs_are_named() {
        let said = |edit: &[(&str, &str)]| row(edit).invalid().unwrap_or_default();
        assert!(said(&[("\"wall_seconds\": 0.5", "\"wall_seconds\": -0.5")])
            .contains("wall_seconds = -0.5"));
        assert!(said(&[("\"fail_time\": null", "\"fail_time\": 1.0")])
            .contains("an `ok` row with a failure"));
        assert!(said(&[("\"steps\": 2000", "\"steps\": 1000")]).contains("reaches t = 1"));
        let failed = [
            ("\"ok\": true", "\"ok\": false"),
            ("\"fail_time\": null", "\"fail_time\": 1.0"),
            ("\"steps\": 2000", "\"steps\": 1000"),
            ("\"fail_reason\": null", "\"fail_reason\": \"blew up\""),
        ];
        assert!(
            said(&failed).contains("fail_kind = None: give one of"),
            "{}",
            said(&failed)
        );
        let mut kinded = failed.to_vec();
        kinded.push(("\"params\"", "\"fail_kind\": \"diverged\", \"params\""));
        assert_eq!(row(&kinded).invalid(), None);
        assert_eq!(row(&kinded).kind(), Some(FailKind::Diverged));
        assert!(said(&[("\"h\": 0.001", "\"h\": -0.001")]).contains("must be finite and > 0"));
    }

    #[test]
    fn a_malformed_an_empty_or_a_repeated_peer_file_is_refused_with_its_line() {
        let dir = std::env::temp_dir().join(format!("driftlab-peer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("peer.jsonl");
        std::fs::write(&file, format!("{ROW}\n\n{{\"problem\": 1}}\n")).expect("write");
        assert!(row::read_rows(&file).unwrap_err().contains("line 3"));
        std::fs::write(&file, "\n \n").expect("write");
        assert!(row::read_rows(&file).unwrap_err().contains("no peer rows"));
        std::fs::write(
            &file,
            format!(
                "{ROW}\n{}\n",
                ROW.replace("\"links\": 10", "\"links\": 10.0")
            ),
        )
        .expect("write");
        let e = row::read_rows(&file).unwrap_err();
        assert!(e.contains("line 2") && e.contains("also line 1"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
