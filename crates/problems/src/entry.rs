//! What the catalog holds of a problem: the owned problem of either form ([`Problem`]),
//! its catalog line ([`ProblemEntry`]) and the lookup by id. A leaf: every problem file
//! names its entry from here, and `lib.rs` lists them (`catalog()`).

use driftlab_core::{ImplicitDae, MechanicalSystem, ParamError, SemiExplicitDae, SystemRef};

/// An owned problem of either form.
pub enum Problem {
    /// Index-3 mechanical system.
    Mechanical(Box<dyn MechanicalSystem>),
    /// Semi-explicit index-1 DAE.
    SemiExplicit(Box<dyn SemiExplicitDae>),
    /// Fully implicit `F(t, y, y′) = 0`.
    Implicit(Box<dyn ImplicitDae>),
}

impl Problem {
    /// Borrow as the system [`driftlab_core::drive()`] takes.
    pub fn as_system(&self) -> SystemRef<'_> {
        match self {
            Problem::Mechanical(s) => s.as_ref().into(),
            Problem::SemiExplicit(s) => s.as_ref().into(),
            Problem::Implicit(s) => s.as_ref().into(),
        }
    }
}

/// A catalog line: id, summary, constructor from a parameter table, and defaults.
#[derive(Clone, Copy)]
pub struct ProblemEntry {
    /// Catalog id.
    pub id: &'static str,
    /// One-line summary for `driftlab list problems`.
    pub summary: &'static str,
    /// Build from a parameter table (missing keys take defaults; unknown keys are errors).
    pub build: fn(&toml::Table) -> Result<Problem, ParamError>,
    /// Default parameters.
    pub defaults: fn() -> toml::Table,
}

/// Look up `id` in `catalog` (the default one or a user's registry); the error lists the
/// valid ids.
pub fn find_in(catalog: &[ProblemEntry], id: &str) -> Result<ProblemEntry, ParamError> {
    catalog
        .iter()
        .find(|e| e.id == id)
        .copied()
        .ok_or_else(|| ParamError::UnknownId {
            kind: "problem",
            id: id.to_string(),
            known: catalog.iter().map(|e| e.id).collect::<Vec<_>>().join(", "),
        })
}
