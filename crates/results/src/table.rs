//! A table of rows to and from a polars frame, column by column through the accessors the
//! schema generates for each table ([`crate::schema::runs::COLUMNS`], …): the runner's
//! writer and the report's reader are this one code, so a column cannot be written as
//! one type and read as another.
//!
//! A column that an older result file lacks reads as the field's default (empty text,
//! null, 0, NaN): results written before the column existed stay readable. A column
//! stored with a type its kind cannot be read from is an error naming it.

use crate::schema::ColumnDef;
use polars::prelude::*;

/// How to reach one column's field in a row of type `R`: a getter and a setter, typed by
/// the column's [`crate::schema::Kind`].
pub enum Access<R> {
    /// Text, never null.
    Text(fn(&R) -> &String, fn(&mut R) -> &mut String),
    /// Text or null.
    OptText(fn(&R) -> &Option<String>, fn(&mut R) -> &mut Option<String>),
    /// Non-negative integer.
    Count(fn(&R) -> &u64, fn(&mut R) -> &mut u64),
    /// Floating point, never null (NaN allowed).
    Real(fn(&R) -> &f64, fn(&mut R) -> &mut f64),
    /// Floating point or null (NaN is written as null).
    OptReal(fn(&R) -> &Option<f64>, fn(&mut R) -> &mut Option<f64>),
}

impl<R> Access<R> {
    /// The field as a number, where it is one (counts as `f64`; null and text: `None`).
    pub fn number(&self, row: &R) -> Option<f64> {
        match self {
            Access::Count(get, _) => Some(*get(row) as f64),
            Access::Real(get, _) => Some(*get(row)),
            Access::OptReal(get, _) => *get(row),
            Access::Text(..) | Access::OptText(..) => None,
        }
    }
}

/// The value of the numeric column `name` in `row` (`None`: null, a text column, or no
/// such column): how a measure named in a spec is looked up, with no second mapping of
/// names to fields.
pub fn number<R>(row: &R, columns: &[(ColumnDef, Access<R>)], name: &str) -> Option<f64> {
    columns
        .iter()
        .find(|(def, _)| def.name == name)
        .and_then(|(_, access)| access.number(row))
}

/// A table failed to convert: which column and why.
#[derive(Clone, Debug, PartialEq)]
pub struct TableError {
    /// The column (empty: the frame as a whole).
    pub column: String,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.column.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "column `{}`: {}", self.column, self.message)
        }
    }
}

impl std::error::Error for TableError {}

fn table_error(def: ColumnDef, e: impl std::fmt::Display) -> TableError {
    TableError {
        column: def.name.to_string(),
        message: e.to_string(),
    }
}

/// NaN → null, the convention of the optional real columns.
fn non_nan(x: f64) -> Option<f64> {
    (!x.is_nan()).then_some(x)
}

/// One column of `rows` through its accessor, typed by its kind.
fn column_of<R>(def: ColumnDef, access: &Access<R>, rows: &[R]) -> Column {
    let name = def.name.into();
    match access {
        Access::Text(get, _) => Column::new(
            name,
            rows.iter().map(|r| get(r).clone()).collect::<Vec<_>>(),
        ),
        Access::OptText(get, _) => Column::new(
            name,
            rows.iter().map(|r| get(r).clone()).collect::<Vec<_>>(),
        ),
        Access::Count(get, _) => {
            Column::new(name, rows.iter().map(|r| *get(r)).collect::<Vec<_>>())
        }
        Access::Real(get, _) => Column::new(name, rows.iter().map(|r| *get(r)).collect::<Vec<_>>()),
        Access::OptReal(get, _) => Column::new(
            name,
            rows.iter()
                .map(|r| get(r).and_then(non_nan))
                .collect::<Vec<_>>(),
        ),
    }
}

/// The frame of `rows`, one column per entry of `columns`, in their order.
pub fn frame<R>(rows: &[R], columns: &[(ColumnDef, Access<R>)]) -> Result<DataFrame, TableError> {
    let cols = columns
        .iter()
        .map(|(def, access)| column_of(*def, access, rows))
        .collect();
    DataFrame::new_infer_height(cols).map_err(|e| TableError {
        column: String::new(),
        message: e.to_string(),
    })
}

/// The values of a numeric column as `f64` (null: `None`). A stored value that is not a
/// number (text where the schema declares a count) is an error naming the column, not a
/// silent null.
fn numbers(def: ColumnDef, c: &Column) -> Result<Vec<Option<f64>>, TableError> {
    let cast = c
        .cast(&DataType::Float64)
        .map_err(|e| table_error(def, e))?;
    if cast.null_count() > c.null_count() {
        let lost = cast.null_count() - c.null_count();
        let what = format!(
            "{lost} value(s) stored as {} are not numbers (the schema declares {:?})",
            c.dtype(),
            def.kind
        );
        return Err(table_error(def, what));
    }
    Ok(cast
        .f64()
        .map_err(|e| table_error(def, e))?
        .iter()
        .collect())
}

/// The values of a text column (null: `None`).
fn texts(def: ColumnDef, c: &Column) -> Result<Vec<Option<String>>, TableError> {
    let c = c.cast(&DataType::String).map_err(|e| table_error(def, e))?;
    Ok(c.str()
        .map_err(|e| table_error(def, e))?
        .iter()
        .map(|s| s.map(String::from))
        .collect())
}

/// Set column `c`'s values into `rows` through `access`.
fn fill<R>(
    def: ColumnDef, access: &Access<R>, c: &Column, rows: &mut [R],
) -> Result<(), TableError> {
    match access {
        Access::Text(_, set) => {
            for (r, v) in rows.iter_mut().zip(texts(def, c)?) {
                *set(r) = v.unwrap_or_default();
            }
        }
        Access::OptText(_, set) => {
            for (r, v) in rows.iter_mut().zip(texts(def, c)?) {
                *set(r) = v;
            }
        }
        Access::Count(_, set) => {
            for (r, v) in rows.iter_mut().zip(numbers(def, c)?) {
                *set(r) = v.unwrap_or(0.0) as u64;
            }
        }
        Access::Real(_, set) => {
            for (r, v) in rows.iter_mut().zip(numbers(def, c)?) {
                *set(r) = v.unwrap_or(f64::NAN);
            }
        }
        Access::OptReal(_, set) => {
            for (r, v) in rows.iter_mut().zip(numbers(def, c)?) {
                *set(r) = v;
            }
        }
    }
    Ok(())
}

/// The rows of `df`, each field read from its column through `columns` (a column the
/// frame lacks leaves the field at its default).
pub fn rows<R: Default>(
    df: &DataFrame, columns: &[(ColumnDef, Access<R>)],
) -> Result<Vec<R>, TableError> {
    let mut rows: Vec<R> = (0..df.height()).map(|_| R::default()).collect();
    for (def, access) in columns {
        if let Ok(c) = df.column(def.name) {
            fill(*def, access, c, &mut rows)?;
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{orders, runs};

    /// A runs row of every kind of value, including NaN in a real column and in an
    /// optional one.
    fn sample() -> runs::Row {
        runs::Row {
            experiment: "x".into(),
            cell: 7,
            problem: "pendulum".into(),
            h: 1e-3,
            status: "failed".into(),
            fail_time: Some(0.25),
            fail_kind: Some("newton-diverged".into()),
            steps: 250,
            max_pos_residual: Some(3.5e-14),
            err_q: Some(f64::NAN),
            wall_seconds: f64::NAN,
            newton_iterations: 1234,
            ..runs::Row::default()
        }
    }

    /// Written and read back through the same accessors, a row comes back bit for bit,
    /// except that an optional real NaN is stored as null (the columns' convention) and a
    /// plain real NaN stays NaN.
    #[test]
    fn a_row_survives_the_round_trip_through_a_parquet_file() {
        let row = sample();
        let mut df = frame(std::slice::from_ref(&row), runs::COLUMNS).expect("frame");
        let mut bytes = Vec::new();
        ParquetWriter::new(&mut bytes)
            .finish(&mut df)
            .expect("write");
        let read = ParquetReader::new(std::io::Cursor::new(bytes))
            .finish()
            .expect("read");
        let back = rows::<runs::Row>(&read, runs::COLUMNS).expect("rows");
        assert_eq!(back.len(), 1);
        let want = runs::Row { err_q: None, ..row };
        assert!(back[0].wall_seconds.is_nan());
        // Debug prints each f64 in round-trip precision and NaN as `NaN`, which `==`
        // cannot compare.
        assert_eq!(format!("{:?}", back[0]), format!("{want:?}"));
        assert_eq!(
            back[0].max_pos_residual.map(f64::to_bits),
            Some(3.5e-14_f64.to_bits())
        );
    }

    /// A file written before a column existed reads that column as its default; a column
    /// stored as text where a number is declared is an error naming it.
    #[test]
    fn a_missing_column_reads_as_default_and_a_mistyped_one_is_named() {
        let df = DataFrame::new_infer_height(vec![
            Column::new("cell".into(), vec![3_u64]),
            Column::new("status".into(), vec!["ok"]),
        ])
        .expect("frame");
        let back = rows::<runs::Row>(&df, runs::COLUMNS).expect("rows");
        assert_eq!(back[0].cell, 3);
        assert_eq!(back[0].status, "ok");
        assert_eq!(back[0].rtol, None);
        assert_eq!(back[0].repeat, 0);
        assert!(back[0].h.is_nan());
        let bad = DataFrame::new_infer_height(vec![Column::new("points".into(), vec!["many"])])
            .expect("frame");
        let e = rows::<orders::Row>(&bad, orders::COLUMNS).expect_err("text in a count column");
        assert_eq!(e.column, "points", "{e}");
    }

    /// A numeric column is found by name; a text or unknown one is not a number.
    #[test]
    fn number_finds_a_column_by_name() {
        let row = sample();
        assert_eq!(
            number(&row, runs::COLUMNS, "newton_iterations"),
            Some(1234.0)
        );
        assert_eq!(number(&row, runs::COLUMNS, "fail_time"), Some(0.25));
        assert_eq!(number(&row, runs::COLUMNS, "problem"), None);
        assert_eq!(number(&row, runs::COLUMNS, "no_such_column"), None);
    }
}
