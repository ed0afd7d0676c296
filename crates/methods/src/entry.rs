//! A method's catalog line ([`MethodEntry`]), the methods behind optional cargo features
//! ([`OPTIONAL`]) and the lookup by id. A leaf: every method file names its entry from
//! here, and `lib.rs` lists them (`catalog()`).

use driftlab_core::prelude::*;

/// A catalog line: what the runner, `list`, `describe` and `simulate` need to know of a
/// method. Every method file has `pub fn entry() -> MethodEntry`; a user's crate writes its
/// own and adds it to a `driftlab_runner::Registry`.
#[derive(Clone, Copy)]
pub struct MethodEntry {
    /// Catalog id.
    pub id: &'static str,
    /// Declared properties at default parameters.
    pub info: fn() -> MethodInfo,
    /// Build from a parameter table (unknown keys are errors).
    pub build: fn(&toml::Table) -> Result<Box<dyn Method>, ParamError>,
    /// Default parameters.
    pub defaults: fn() -> toml::Table,
}

/// Catalog entries behind optional cargo features: (id, feature, how to build them).
pub const OPTIONAL: &[(&str, &str, &str)] = &[(
    "ida",
    "ida",
    "install SUNDIALS with `scripts/install-sundials.sh`, then build with \
     `cargo build --profile experiments -p driftlab-cli --features ida`",
)];

/// Look up `id` in `catalog` (the default one or a user's registry); the error lists the
/// valid ids, or names the cargo feature that adds it.
pub fn find_in(catalog: &[MethodEntry], id: &str) -> Result<MethodEntry, ParamError> {
    if let Some(e) = catalog.iter().find(|e| e.id == id) {
        return Ok(*e);
    }
    if let Some(&(_, feature, fix)) = OPTIONAL.iter().find(|o| o.0 == id) {
        return Err(ParamError::NotBuilt {
            kind: "method",
            id: id.into(),
            feature,
            fix,
        });
    }
    Err(ParamError::UnknownId {
        kind: "method",
        id: id.to_string(),
        known: catalog.iter().map(|e| e.id).collect::<Vec<_>>().join(", "),
    })
}
