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

/// The values of a numeric column as `f64` (null: `None`).
fn numbers(def: ColumnDef, c: &Column) -> Result<Vec<Option<f64>>, TableError> {
    let c = c
        .cast(&DataType::Float64)
        .map_err(|e| table_error(def, e))?;
    Ok(c.f64().map_err(|e| table_error(def, e))?.iter().collect())
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
