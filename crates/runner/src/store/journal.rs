//! The journal: every finished run of a cell made durable the moment it finishes, so that
//! a sweep killed at any point loses at most the runs in flight (one per worker) and
//! `--resume` continues it.
//!
//! `journal.bin`, beside the result tables, is append-only. It starts with a [`Header`]
//! naming the run it belongs to (spec hash, size, sweep thread counts, cell count,
//! shard) and continues with one [`RunItem`] per finished work item (a cell's `k`-th run,
//! or a whole ensemble). Each record is framed as
//!
//! ```text
//! u32 length (LE) · u32 CRC-32 of the payload (LE) · payload (MessagePack)
//! ```
//!
//! and is `fsync`ed before the worker takes its next item. MessagePack keeps every `f64`
//! bit for bit (NaN included), so a resumed run's rows equal an uninterrupted run's.
//! A record cut short by a kill (short length, bad checksum, undecodable payload) ends
//! the readable journal: [`Journal::resume`] keeps the records before it and truncates
//! the file there, so the cut record's run is simply recomputed.

use crate::error::RunnerError;
use crate::store::atomic::sync_dir;
use crate::store::members::MemberRecord;
use crate::store::record::CellTrace;
use driftlab_results::schema::runs;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The journal's file name inside a result folder.
pub const FILE: &str = "journal.bin";

/// Largest record accepted when reading (a corrupt length beyond it ends the journal).
const MAX_RECORD: u32 = 1 << 30;

/// What run a journal belongs to; a resume must match it field by field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// SHA-256 of the spec text.
    pub spec_hash: String,
    /// Size applied (`full`, `quick`, …).
    pub size: String,
    /// Counts of cells side by side, one batch each.
    pub sweep_thread_counts: Vec<usize>,
    /// Cells over all batches (before sharding).
    pub cells_total: usize,
    /// `(index, count)` of the shard this folder holds, if sharded.
    pub shard: Option<(usize, usize)>,
    /// The source revision of the binary that wrote it (`+dirty` for uncommitted
    /// changes): another build may compute other numbers, so it may not continue the run.
    pub binary: String,
    /// The experiment's name (journals written before it: empty).
    #[serde(default)]
    pub experiment: String,
    /// The spec text the run started with, so that a resume whose `manifest.json` is lost
    /// can still name what changed (journals written before it: empty).
    #[serde(default)]
    pub spec_text: String,
    /// When the run started (UTC, RFC 3339).
    #[serde(default)]
    pub started: String,
    /// The cells' wall-time budget (the spec's `cell_seconds` or `--cell-seconds`): runs
    /// recorded under one budget may not be continued under another.
    #[serde(default)]
    pub cell_seconds: Option<f64>,
    /// `(file, SHA-256)` of every data file the run's problems read (a user's model file,
    /// a shipped robot, the Test Set's data): a file changed between the kill and the
    /// resume would give the folder rows of two mechanisms (journals written before it:
    /// empty, not checked).
    #[serde(default)]
    pub datasets: Vec<(String, String)>,
}

/// The first data file whose hash differs between the interrupted run and now, named.
fn changed_dataset(then: &[(String, String)], now: &[(String, String)]) -> Option<String> {
    then.iter().find_map(|(file, a)| {
        let b = now.iter().find(|(f, _)| f == file).map(|(_, h)| h.as_str());
        (b != Some(a.as_str())).then(|| match b {
            Some(b) => format!(
                "the data file `{file}` changed since the interrupted run (SHA-256 {}… → {}…); restore the file the run started with",
                a.chars().take(12).collect::<String>(),
                b.chars().take(12).collect::<String>()
            ),
            None => format!("the run no longer reads the data file `{file}`"),
        })
    })
}

impl Header {
    /// The [`Header::binary`] of this build.
    pub fn this_binary() -> String {
        let m = crate::store::manifest::Manifest::of_this_build();
        format!(
            "{} {}{}",
            m.driftlab_version,
            m.git_revision,
            if m.git_dirty { "+dirty" } else { "" }
        )
    }
}

impl Header {
    /// The first field in which `self` (recorded) and `now` differ, as
    /// `field: recorded → now`, or `None` when they match.
    pub fn difference(&self, now: &Header) -> Option<String> {
        let pairs = [
            ("spec hash", &self.spec_hash, &now.spec_hash),
            ("--size", &self.size, &now.size),
        ];
        for (field, a, b) in pairs {
            if a != b {
                return Some(format!("{field}: {a} → {b}"));
            }
        }
        if self.sweep_thread_counts != now.sweep_thread_counts {
            return Some(format!(
                "cells side by side (--threads or sweep_threads): {:?} → {:?}",
                self.sweep_thread_counts, now.sweep_thread_counts
            ));
        }
        if self.binary != now.binary {
            return Some(format!(
                "binary: {} → {}; resume with the build that started the run",
                self.binary, now.binary
            ));
        }
        if self.cell_seconds.map(f64::to_bits) != now.cell_seconds.map(f64::to_bits) {
            let s = |x: Option<f64>| x.map_or("none".into(), |v| format!("{v} s"));
            return Some(format!(
                "cell time budget (cell_seconds or --cell-seconds): {} → {}",
                s(self.cell_seconds),
                s(now.cell_seconds)
            ));
        }
        if let Some(d) = changed_dataset(&self.datasets, &now.datasets) {
            return Some(d);
        }
        if self.cells_total != now.cells_total {
            return Some(format!("cells: {} → {}", self.cells_total, now.cells_total));
        }
        (self.shard != now.shard).then(|| {
            let s =
                |x: Option<(usize, usize)>| x.map_or("none".into(), |(i, n)| format!("{i}/{n}"));
            format!("--shard: {} → {}", s(self.shard), s(now.shard))
        })
    }
}

/// One finished work item: the `repeat`-th run of `cell` (an ensemble's item holds all
/// its repeats and its members).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunItem {
    /// Cell index (over all batches).
    pub cell: usize,
    /// Which run of the cell (0 = the measured first run, which carries the trace).
    pub repeat: usize,
    /// The run's row, as it goes into `runs.parquet`.
    pub record: runs::Row,
    /// The first run's sampled trace.
    pub trace: Option<CellTrace>,
    /// An ensemble's member rows.
    pub members: Vec<MemberRecord>,
}

/// A journal record, as read.
#[derive(Deserialize)]
enum Record {
    Header(Box<Header>),
    Run(Box<RunItem>),
}

/// A journal record, as written (the same encoding as [`Record`], borrowed).
#[derive(Serialize)]
enum RecordRef<'a> {
    Header(&'a Header),
    Run(&'a RunItem),
}

/// The items of a journal, by `(cell, repeat)`.
pub type Recorded = HashMap<(usize, usize), RunItem>;

/// An open journal, appended to by the workers.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: Mutex<File>,
}

impl Journal {
    /// Start a new journal in `dir` for the run `header` describes (an older journal
    /// there is replaced).
    pub fn create(dir: &Path, header: &Header) -> Result<Self, RunnerError> {
        let path = dir.join(FILE);
        let file = File::create(&path).map_err(|e| write_error(&path, &e))?;
        let journal = Self {
            path,
            file: Mutex::new(file),
        };
        journal.append_record(&RecordRef::Header(header))?;
        sync_dir(dir);
        Ok(journal)
    }

    /// Reopen the journal in `dir` to continue the run `header` describes: the items it
    /// holds, the file truncated after the last whole record. A journal of another run is
    /// refused with the first difference named; a missing journal starts a new one.
    pub fn resume(dir: &Path, header: &Header) -> Result<(Self, Recorded), RunnerError> {
        let path = dir.join(FILE);
        if !path.exists() {
            return Ok((Self::create(dir, header)?, Recorded::new()));
        }
        let (records, valid_len) = read_records(&path)?;
        let mut records = records.into_iter();
        match records.next() {
            Some(Record::Header(h)) => {
                if let Some(d) = h.difference(header) {
                    return Err(RunnerError::Resume {
                        path: path.display().to_string(),
                        message: format!("the journal belongs to another run ({d}); rerun without --resume to start afresh, or resume with the original spec and options"),
                    });
                }
            }
            _ => return Ok((Self::create(dir, header)?, Recorded::new())),
        }
        let items = records
            .filter_map(|r| match r {
                Record::Run(item) => Some(((item.cell, item.repeat), *item)),
                Record::Header(_) => None,
            })
            .collect();
        let file = OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| write_error(&path, &e))?;
        file.set_len(valid_len)
            .map_err(|e| write_error(&path, &e))?;
        let mut file = file;
        file.seek(SeekFrom::End(0))
            .map_err(|e| write_error(&path, &e))?;
        Ok((
            Self {
                path,
                file: Mutex::new(file),
            },
            items,
        ))
    }

    /// The header of the journal in `dir`, if it has a readable one.
    pub fn header(dir: &Path) -> Option<Header> {
        let (records, _) = read_records(&dir.join(FILE)).ok()?;
        match records.into_iter().next() {
            Some(Record::Header(h)) => Some(*h),
            _ => None,
        }
    }

    /// Read every whole item of the journal in `dir` (for `merge`), with its header.
    pub fn read(dir: &Path) -> Result<(Header, Vec<RunItem>), RunnerError> {
        let path = dir.join(FILE);
        let (records, _) = read_records(&path)?;
        let mut records = records.into_iter();
        let Some(Record::Header(header)) = records.next() else {
            return Err(RunnerError::Resume {
                path: path.display().to_string(),
                message: "no journal header: the folder was not written by `driftlab run`".into(),
            });
        };
        let items = records
            .filter_map(|r| match r {
                Record::Run(item) => Some(*item),
                Record::Header(_) => None,
            })
            .collect();
        Ok((*header, items))
    }

    /// Append `item` and make it durable (`fsync`) before returning.
    pub fn append(&self, item: &RunItem) -> Result<(), RunnerError> {
        self.append_record(&RecordRef::Run(item))
    }

    fn append_record(&self, record: &RecordRef<'_>) -> Result<(), RunnerError> {
        let payload = rmp_serde::to_vec(record).map_err(|e| RunnerError::Write {
            path: self.path.display().to_string(),
            message: format!("cannot encode a journal record: {e}"),
        })?;
        let len = u32::try_from(payload.len())
            .ok()
            .filter(|&n| n <= MAX_RECORD)
            .ok_or_else(|| RunnerError::Write {
                path: self.path.display().to_string(),
                message: format!(
                    "a journal record of {} bytes exceeds the limit of {MAX_RECORD} bytes; lower trace_stride or trace fewer states",
                    payload.len()
                ),
            })?;
        let mut frame = Vec::with_capacity(payload.len() + 8);
        frame.extend_from_slice(&len.to_le_bytes());
        frame.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        frame.extend_from_slice(&payload);
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(&frame)
            .and_then(|()| file.sync_data())
            .map_err(|e| write_error(&self.path, &e))
    }
}

/// The whole records of the journal at `path` and the length they span; reading stops at
/// the first record cut short or corrupt.
fn read_records(path: &Path) -> Result<(Vec<Record>, u64), RunnerError> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| RunnerError::Resume {
            path: path.display().to_string(),
            message: format!("cannot read the journal: {e}"),
        })?;
    let mut records = Vec::new();
    let mut at = 0usize;
    while let Some((record, next)) = record_at(&bytes, at) {
        records.push(record);
        at = next;
    }
    Ok((records, at as u64))
}

/// The record starting at byte `at` of `bytes` and the offset after it, if whole.
fn record_at(bytes: &[u8], at: usize) -> Option<(Record, usize)> {
    let word = |i: usize| -> Option<u32> {
        let b: [u8; 4] = bytes.get(i..i + 4)?.try_into().ok()?;
        Some(u32::from_le_bytes(b))
    };
    let len = word(at).filter(|&n| n <= MAX_RECORD)? as usize;
    let crc = word(at + 4)?;
    let payload = bytes.get(at + 8..at + 8 + len)?;
    if crc32fast::hash(payload) != crc {
        return None;
    }
    let record = rmp_serde::from_slice(payload).ok()?;
    Some((record, at + 8 + len))
}

fn write_error(path: &Path, e: &std::io::Error) -> RunnerError {
    RunnerError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            spec_hash: "abc".into(),
            size: "full".into(),
            sweep_thread_counts: vec![2],
            cells_total: 3,
            shard: None,
            binary: "0.1.0 abc".into(),
            experiment: "x".into(),
            spec_text: String::new(),
            started: String::new(),
            cell_seconds: None,
            datasets: vec![("arm.urdf".into(), "aa11".into())],
        }
    }

    #[test]
    fn a_data_file_changed_since_the_kill_is_named() {
        let now = Header {
            datasets: vec![("arm.urdf".into(), "bb22".into())],
            ..header()
        };
        let d = header().difference(&now).expect("a difference");
        assert!(
            d.contains("`arm.urdf` changed since the interrupted run"),
            "{d}"
        );
        assert_eq!(header().difference(&header()), None);
        let older = Header {
            datasets: Vec::new(),
            ..header()
        };
        assert_eq!(
            older.difference(&now),
            None,
            "a journal without hashes is not checked"
        );
    }

    fn item(cell: usize, x: f64) -> RunItem {
        RunItem {
            cell,
            repeat: 0,
            record: runs::Row {
                cell: cell as u64,
                h: x,
                err_q: None,
                step_seconds: f64::NAN,
                ..runs::Row::default()
            },
            trace: None,
            members: Vec::new(),
        }
    }

    fn tmp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("driftlab-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("tmp dir");
        d
    }

    #[test]
    fn items_round_trip_bit_for_bit_and_a_cut_record_is_dropped() {
        let dir = tmp("cut");
        let j = Journal::create(&dir, &header()).expect("create");
        j.append(&item(0, 0.1)).expect("append");
        j.append(&item(2, 1e-300)).expect("append");
        drop(j);
        // A kill in the middle of the third record: half of its bytes reach the disk.
        let path = dir.join(FILE);
        let whole = std::fs::metadata(&path).expect("meta").len();
        let j = Journal::resume(&dir, &header()).expect("resume").0;
        j.append(&item(1, 0.5)).expect("append");
        drop(j);
        let full = std::fs::metadata(&path).expect("meta").len();
        let f = OpenOptions::new().write(true).open(&path).expect("open");
        f.set_len(whole + (full - whole) / 2).expect("cut");
        let (_, items) = Journal::resume(&dir, &header()).expect("resume");
        assert_eq!(
            items.len(),
            2,
            "the cut record is dropped, the whole ones kept"
        );
        assert_eq!(items[&(2, 0)].record.h.to_bits(), 1e-300f64.to_bits());
        assert_eq!(items[&(0, 0)].record.err_q, None);
        assert!(
            items[&(0, 0)].record.step_seconds.is_nan(),
            "NaN kept bit for bit"
        );
        assert_eq!(
            std::fs::metadata(&path).expect("meta").len(),
            whole,
            "the file is truncated after the last whole record"
        );
    }

    #[test]
    fn a_journal_of_another_run_is_refused_with_the_difference() {
        let dir = tmp("other");
        drop(Journal::create(&dir, &header()).expect("create"));
        let other = Header {
            size: "quick".into(),
            ..header()
        };
        let e = Journal::resume(&dir, &other).expect_err("refused");
        assert!(e.to_string().contains("--size: full → quick"), "{e}");
        let rebuilt = Header {
            binary: "0.1.0 def+dirty".into(),
            ..header()
        };
        let e = Journal::resume(&dir, &rebuilt).expect_err("refused");
        assert!(
            e.to_string()
                .contains("binary: 0.1.0 abc → 0.1.0 def+dirty"),
            "{e}"
        );
    }

    #[test]
    fn atomic_write_leaves_the_old_file_when_filling_fails() {
        let dir = tmp("atomic");
        let path = dir.join("runs.csv");
        std::fs::write(&path, "old").expect("write");
        let r = crate::store::atomic::write_atomically(&path, |_| Err("disk full".into()));
        assert!(r.is_err());
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "old");
        assert!(!dir.join(".runs.csv.partial").exists());
    }
}
