//! Parameters from Python (TOML text the package writes from dicts) into TOML tables, and
//! counters and metrics into Python dicts.

use super::input_error;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The TOML table `text` (the package writes a dict as TOML, `driftlab._toml`, so that
/// numbers cross as the command line reads them); `what` names the argument in the error.
pub(crate) fn table(text: Option<&str>, what: &str) -> PyResult<toml::Table> {
    match text {
        None => Ok(toml::Table::new()),
        Some(t) => t
            .parse::<toml::Table>()
            .map_err(|e| input_error(format!("{what}: {e}"))),
    }
}

/// `object`'s fields into `dict`, each under `prefix` + its name: numbers as floats or
/// ints, nulls (NaN, which JSON cannot hold) as `nan`.
pub(crate) fn fields_into(
    dict: &Bound<'_, PyDict>, prefix: &str, object: &impl serde::Serialize,
) -> PyResult<()> {
    let value = serde_json::to_value(object).map_err(|e| input_error(e.to_string()))?;
    let serde_json::Value::Object(map) = value else {
        return Ok(());
    };
    for (k, v) in map {
        let key = format!("{prefix}{k}");
        match v {
            serde_json::Value::Null => dict.set_item(key, f64::NAN)?,
            serde_json::Value::Bool(b) => dict.set_item(key, b)?,
            serde_json::Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => dict.set_item(key, u)?,
                (None, Some(i)) => dict.set_item(key, i)?,
                _ => dict.set_item(key, n.as_f64().unwrap_or(f64::NAN))?,
            },
            other => dict.set_item(key, other.to_string())?,
        }
    }
    Ok(())
}
