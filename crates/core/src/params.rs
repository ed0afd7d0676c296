//! Typed parameters from TOML tables: the one place where names from a spec file meet
//! Rust types. Unknown keys are rejected (`#[serde(deny_unknown_fields)]` on every
//! parameter struct), and the error names the field.

use crate::error::ParamError;
use serde::{de::DeserializeOwned, Serialize};

/// Deserialize a parameter table into `T`, naming `kind` and `id` in the error.
pub fn parse<T: DeserializeOwned>(
    kind: &'static str,
    id: &str,
    table: &toml::Table,
) -> Result<T, ParamError> {
    T::deserialize(toml::Value::Table(table.clone())).map_err(|e| ParamError::Invalid {
        kind,
        id: id.to_string(),
        message: e.to_string().trim().replace('\n', " "),
    })
}

/// The defaults of a parameter struct as a TOML table (for `describe` and manifests).
pub fn defaults<T: Serialize + Default>() -> toml::Table {
    toml::Table::try_from(T::default()).unwrap_or_default()
}

/// Check that `value` is finite and positive.
pub fn positive(id: &str, field: &'static str, value: f64) -> Result<(), ParamError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(ParamError::OutOfRange {
            id: id.to_string(),
            field,
            value,
            fix: "give a finite value > 0".into(),
        })
    }
}
