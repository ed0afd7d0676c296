//! Two result folders compared in every column except the measured ones (times, heap):
//! how a user, a test or CI checks that a resumed, sharded or repeated sweep reproduced
//! another (`driftlab compare A B`).

use crate::error::RunnerError;
use driftlab_results::schema::{members, runs, ColumnDef};
use polars::prelude::*;
use std::path::Path;

/// The tables a comparison reads, each with the measured columns it leaves out (times,
/// heap); `orders.csv` is compared whole besides. The fingerprint (`fingerprint.rs`) digests the same.
pub(crate) const COMPARED: [(&str, &[ColumnDef]); 3] = [
    ("runs.parquet", &runs::MEASURED),
    ("traces.parquet", &[]),
    ("members.parquet", &members::MEASURED),
];

/// At most this many differences are listed.
const LIMIT: usize = 20;

/// The differences between result folders `a` and `b` (empty: they agree), in
/// `runs.parquet` and `members.parquet` without their measured columns, `traces.parquet`
/// and `orders.csv` whole.
///
/// Each side must be a folder holding a complete run (its `runs.parquet`, and a manifest
/// that says `complete` where there is one); a missing, empty, interrupted or foreign
/// folder, or a file, is refused naming the side, so that a check in CI cannot pass on
/// a typo.
pub fn compare(a: &Path, b: &Path) -> Result<Vec<String>, RunnerError> {
    comparable(a, "first")?;
    comparable(b, "second")?;
    let mut out = Vec::new();
    for (file, measured) in COMPARED {
        match (read(&a.join(file))?, read(&b.join(file))?) {
            (None, None) => {}
            (Some(x), Some(y)) => frames(file, &x, &y, measured, &mut out),
            (x, _) => out.push(format!(
                "{file} exists in only `{}`",
                if x.is_some() { a } else { b }.display()
            )),
        }
    }
    for file in ["orders.csv", "optima.csv"] {
        let text = |d: &Path| std::fs::read_to_string(d.join(file)).ok();
        if text(a) != text(b) {
            out.push(format!("{file} differs"));
        }
    }
    out.truncate(LIMIT);
    Ok(out)
}

/// Refuse `dir` (the `side` folder of a comparison) unless it holds a complete run.
fn comparable(dir: &Path, side: &str) -> Result<(), RunnerError> {
    let refuse = |why: String| RunnerError::Folder {
        path: dir.display().to_string(),
        message: format!("cannot compare it ({side} folder): {why}"),
    };
    let meta = std::fs::metadata(dir)
        .map_err(|e| refuse(format!("{e}; give the path of a result folder")))?;
    if !meta.is_dir() {
        return Err(refuse(
            "it is a file; give the result folder that holds runs.parquet".into(),
        ));
    }
    let manifest = dir.join("manifest.json");
    if manifest.exists() {
        let m = crate::store::manifest::Manifest::read(&manifest)?;
        if m.status != "complete" {
            return Err(refuse(format!(
                "it holds an interrupted run of `{}` ({} of {} cells recorded); finish it with --resume first",
                m.experiment, m.cells_done, m.cells_total
            )));
        }
    }
    if !dir.join("runs.parquet").exists() {
        return Err(refuse(
            "it holds no runs.parquet; give a folder written by `driftlab run` or `merge`".into(),
        ));
    }
    driftlab_results::folder_check::check(dir).map_err(|d| {
        refuse(format!(
            "damaged: {d}; its tables are not the ones its run wrote"
        ))
    })?;
    Ok(())
}

/// The Parquet file at `path`, if it exists.
pub(crate) fn read(path: &Path) -> Result<Option<DataFrame>, RunnerError> {
    if !path.exists() {
        return Ok(None);
    }
    let err = |e: String| RunnerError::Resume {
        path: path.display().to_string(),
        message: format!("cannot read: {e}"),
    };
    let file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
    ParquetReader::new(file)
        .finish()
        .map(Some)
        .map_err(|e| err(e.to_string()))
}

/// How two tables' column lists differ, briefly: the names only one side has (at most
/// five each), or the first place where their order differs.
fn column_difference(file: &str, a: &[String], b: &[String]) -> String {
    let only = |x: &[String], y: &[String]| -> Vec<String> {
        x.iter().filter(|n| !y.contains(n)).cloned().collect()
    };
    let list = |v: Vec<String>| -> String {
        let n = v.len();
        let mut shown: Vec<String> = v.into_iter().take(5).map(|c| format!("`{c}`")).collect();
        if n > 5 {
            shown.push(format!("and {} more", n - 5));
        }
        shown.join(", ")
    };
    let (in_a, in_b) = (only(a, b), only(b, a));
    if in_a.is_empty() && in_b.is_empty() {
        let k = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(0);
        return format!(
            "{file}: the same columns in another order (column {k}: `{}` against `{}`)",
            a[k], b[k]
        );
    }
    let mut parts = Vec::new();
    if !in_a.is_empty() {
        parts.push(format!("only the first has {}", list(in_a)));
    }
    if !in_b.is_empty() {
        parts.push(format!("only the second has {}", list(in_b)));
    }
    format!(
        "{file}: other columns ({}): written by other versions of driftlab?",
        parts.join("; ")
    )
}

/// Push the differences of `x` and `y` (columns in `measured` left out) into `out`.
fn frames(file: &str, x: &DataFrame, y: &DataFrame, measured: &[ColumnDef], out: &mut Vec<String>) {
    if x.height() != y.height() {
        out.push(format!(
            "{file}: {} rows against {}",
            x.height(),
            y.height()
        ));
        return;
    }
    let names = |d: &DataFrame| -> Vec<String> {
        d.get_column_names()
            .into_iter()
            .map(|n| n.to_string())
            .filter(|n| !measured.iter().any(|m| m.name == n))
            .collect()
    };
    let (nx, ny) = (names(x), names(y));
    if nx != ny {
        out.push(column_difference(file, &nx, &ny));
        return;
    }
    for name in &nx {
        let (Ok(cx), Ok(cy)) = (x.column(name), y.column(name)) else {
            continue;
        };
        if cx
            .as_materialized_series()
            .equals_missing(cy.as_materialized_series())
        {
            continue;
        }
        let row = (0..x.height()).find(|&i| cx.get(i).ok() != cy.get(i).ok());
        out.push(match row {
            Some(i) => format!(
                "{file}: column `{name}` differs first in row {i}: {} against {}",
                cx.get(i).map(|v| v.to_string()).unwrap_or_default(),
                cy.get(i).map(|v| v.to_string()).unwrap_or_default()
            ),
            None => format!("{file}: column `{name}` differs"),
        });
    }
}
