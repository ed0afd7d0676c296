//! Whether a result folder's tables are the ones its run wrote, before anything reads
//! them: every file the manifest lists is there; each Parquet table has the rows and the
//! columns (names and stored types) the manifest recorded when the run completed
//! ([`TableNote`]); every column the schema defines is stored with its kind's type; the
//! runs table has one row per cell. A folder that fails is damaged: the report leaves it
//! out naming why, `compare` and `fingerprint` refuse it — never "agree" over a dropped
//! column, zero rows or duplicated ones.
//!
//! Folders written before manifests recorded their tables are held to what can still be
//! checked: the listed files exist, stored types match the schema, cells are unique and a
//! complete run has rows.

use crate::schema::{self, ColumnDef, Kind};
use polars::prelude::{DataType, ParquetReader, SerReader};
use std::path::Path;

/// What a run recorded of one Parquet table it wrote: its rows and its columns with their
/// stored types.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TableNote {
    /// The file, in the result folder.
    pub file: String,
    /// Rows.
    pub rows: usize,
    /// `(column, stored type)` in order.
    pub columns: Vec<(String, String)>,
}

/// The note of the Parquet table `file` in `dir`, from its metadata (no data read).
pub fn note(dir: &Path, file: &str) -> Result<TableNote, String> {
    let path = dir.join(file);
    let f = std::fs::File::open(&path).map_err(|e| format!("`{file}`: {e}"))?;
    let mut reader = ParquetReader::new(f);
    let rows = reader
        .num_rows()
        .map_err(|e| format!("`{file}` is not a readable Parquet table: {e}"))?;
    let schema = reader
        .schema()
        .map_err(|e| format!("`{file}` is not a readable Parquet table: {e}"))?;
    let columns = schema
        .iter()
        .map(|(name, field)| (name.to_string(), format!("{:?}", field.dtype())))
        .collect();
    Ok(TableNote {
        file: file.to_string(),
        rows,
        columns,
    })
}

/// The schema's columns of the table `file` (`None`: not a table of the schema).
fn schema_of(file: &str) -> Option<&'static [ColumnDef]> {
    match file {
        "runs.parquet" => Some(schema::runs::ALL),
        "traces.parquet" => Some(schema::traces::ALL),
        "members.parquet" => Some(schema::members::ALL),
        _ => None,
    }
}

/// Whether a stored column of type `dtype` can hold the schema's `kind`.
fn stores(kind: Kind, dtype: &DataType) -> bool {
    match kind {
        Kind::Text | Kind::OptText => matches!(dtype, DataType::String | DataType::Null),
        Kind::Count => dtype.is_integer() || matches!(dtype, DataType::Null),
        Kind::Real | Kind::OptReal => dtype.is_float() || matches!(dtype, DataType::Null),
        Kind::RealList => matches!(dtype, DataType::List(_)),
    }
}

/// The stored columns of `file` whose type is not their schema kind's.
fn retyped(dir: &Path, file: &str) -> Result<Option<String>, String> {
    let Some(defs) = schema_of(file) else {
        return Ok(None);
    };
    let f = std::fs::File::open(dir.join(file)).map_err(|e| format!("`{file}`: {e}"))?;
    let schema = ParquetReader::new(f)
        .schema()
        .map_err(|e| format!("`{file}` is not a readable Parquet table: {e}"))?;
    for (name, field) in schema.iter() {
        let Some(def) = defs.iter().find(|d| d.name == name.as_str()) else {
            continue;
        };
        let dtype = DataType::from_arrow_field(field);
        if !stores(def.kind, &dtype) {
            return Ok(Some(format!(
                "`{file}`: column `{name}` is stored as {dtype}, but the schema declares {:?}",
                def.kind
            )));
        }
    }
    Ok(None)
}

/// How `now` differs from the recorded `then`, if at all.
fn differs(then: &TableNote, now: &TableNote) -> Option<String> {
    let file = &then.file;
    if then.rows != now.rows {
        return Some(format!(
            "`{file}` holds {} rows, but the run wrote {}",
            now.rows, then.rows
        ));
    }
    let names = |n: &TableNote| n.columns.iter().map(|c| c.0.clone()).collect::<Vec<_>>();
    if let Some(c) = names(then).iter().find(|c| !names(now).contains(c)) {
        return Some(format!("`{file}` lacks the column `{c}` the run wrote"));
    }
    if let Some(c) = names(now).iter().find(|c| !names(then).contains(c)) {
        return Some(format!("`{file}` has a column `{c}` the run did not write"));
    }
    let retyped = then.columns.iter().find(|c| !now.columns.contains(c))?;
    let stored = now.columns.iter().find(|c| c.0 == retyped.0)?;
    Some(format!(
        "`{file}`: column `{}` is stored as {}, but the run wrote {}",
        retyped.0, stored.1, retyped.1
    ))
}

/// The manifest of `dir` as JSON (`None`: no manifest, or not JSON).
fn manifest(dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Check the tables of the result folder `dir` against its manifest and the schema;
/// the first damage found, named with the file and the numbers.
pub fn check(dir: &Path) -> Result<(), String> {
    check_except_rows(dir, &[])
}

/// [`check`], with the row counts of the tables in `rewritten` not compared with the
/// manifest's: the command about to rebuild those tables from the journal (`import-peer`)
/// takes a folder whose previous rebuild was killed between the table and the manifest.
/// Their columns, stored types and unique cells are still checked.
pub fn check_except_rows(dir: &Path, rewritten: &[&str]) -> Result<(), String> {
    let Some(m) = manifest(dir) else {
        return Ok(());
    };
    let listed: Vec<&str> = m["files"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f.as_str()).collect())
        .unwrap_or_default();
    for f in &listed {
        if !dir.join(f).exists() {
            return Err(format!(
                "`{f}` is listed by manifest.json among the files the run wrote, but is missing"
            ));
        }
    }
    let notes: Vec<TableNote> = serde_json::from_value(m["tables"].clone()).unwrap_or_default();
    for then in &notes {
        let mut now = note(dir, &then.file)?;
        if rewritten.contains(&then.file.as_str()) {
            now.rows = then.rows;
        }
        if let Some(d) = differs(then, &now) {
            return Err(d);
        }
    }
    for f in listed.iter().filter(|f| f.ends_with(".parquet")) {
        if let Some(d) = retyped(dir, f)? {
            return Err(d);
        }
    }
    if listed.contains(&"runs.parquet") && !rewritten.contains(&"runs.parquet") {
        runs_rows(dir, &m)?;
    }
    Ok(())
}

/// The runs table has a row for every cell, and each cell once.
fn runs_rows(dir: &Path, m: &serde_json::Value) -> Result<(), String> {
    let f = std::fs::File::open(dir.join("runs.parquet"))
        .map_err(|e| format!("`runs.parquet`: {e}"))?;
    let df = ParquetReader::new(f)
        .finish()
        .map_err(|e| format!("`runs.parquet` is not a readable Parquet table: {e}"))?;
    let cells = m["cells"].as_u64().unwrap_or(0) as usize;
    let peers = m["peer_rows"].as_u64().unwrap_or(0) as usize;
    if m["status"] == "complete" && cells > 0 && df.height() < cells + peers {
        return Err(format!(
            "`runs.parquet` holds {} rows, but the complete run has {cells} cells{}",
            df.height(),
            if peers > 0 {
                format!(" and {peers} peer rows")
            } else {
                String::new()
            }
        ));
    }
    let Ok(c) = df.column(schema::runs::CELL.name) else {
        return Ok(());
    };
    let c = c
        .cast(&DataType::Float64)
        .map_err(|e| format!("`runs.parquet`: column `cell`: {e}"))?;
    let mut seen: Vec<u64> = c
        .f64()
        .map_err(|e| e.to_string())?
        .iter()
        .flatten()
        .map(f64::to_bits)
        .collect();
    seen.sort_unstable();
    if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!(
            "`runs.parquet` holds cell {} twice (a run has one row per cell)",
            f64::from_bits(w[0])
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_names_rows_dropped_columns_and_retyped_ones() {
        let col = |n: &str, t: &str| (n.to_string(), t.to_string());
        let then = TableNote {
            file: "runs.parquet".into(),
            rows: 3,
            columns: vec![col("cell", "UInt64"), col("h", "Float64")],
        };
        let fewer = TableNote {
            rows: 0,
            ..then.clone()
        };
        assert!(differs(&then, &fewer)
            .unwrap()
            .contains("holds 0 rows, but the run wrote 3"));
        let dropped = TableNote {
            columns: vec![col("cell", "UInt64")],
            ..then.clone()
        };
        assert!(differs(&then, &dropped)
            .unwrap()
            .contains("lacks the column `h`"));
        let retyped = TableNote {
            columns: vec![col("cell", "UInt64"), col("h", "String")],
            ..then.clone()
        };
        assert!(differs(&then, &retyped)
            .unwrap()
            .contains("`h` is stored as String"));
        assert_eq!(differs(&then, &then), None);
        assert!(stores(Kind::Count, &DataType::Int32) && !stores(Kind::Real, &DataType::String));
    }
}
