//! The problems and methods a run may name: the default catalogs, extended by a user's
//! crate.
//!
//! ```no_run
//! use driftlab_runner::{run_spec, Registry, RunOptions, Spec};
//! # fn my_problem() -> driftlab_problems::ProblemEntry { driftlab_problems::planar::pendulum::entry() }
//! # fn my_method() -> driftlab_methods::MethodEntry { driftlab_methods::explicit::taylor::entry() }
//! let registry = Registry::with_defaults()
//!     .problem(my_problem())
//!     .method(my_method());
//! let (spec, text) = Spec::load("my-experiment.toml".as_ref())?;
//! let opts = RunOptions { registry, ..RunOptions::default() };
//! let summary = run_spec(&spec, &text, "my-experiment.toml", &opts)?;
//! println!("{} cells, {} failed", summary.cells, summary.failed);
//! # Ok::<(), driftlab_runner::RunnerError>(())
//! ```
//!
//! A user's binary gets the whole command line (`list`, `describe`, `run`, `simulate`,
//! `report`) over its registry with `driftlab_cli::main_with(registry)`.

use driftlab_core::{Method, ParamError};
use driftlab_methods::{Decorators, MethodEntry};
use driftlab_problems::{Problem, ProblemEntry};

/// Problems and methods by id. Entries added later replace earlier ones of the same id,
/// so a user's crate can also substitute its own version of a catalog entry.
#[derive(Clone)]
pub struct Registry {
    problems: Vec<ProblemEntry>,
    methods: Vec<MethodEntry>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::with_defaults()
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field(
                "problems",
                &self.problems.iter().map(|e| e.id).collect::<Vec<_>>(),
            )
            .field(
                "methods",
                &self.methods.iter().map(|e| e.id).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Registry {
    /// driftlab's problem and method catalogs
    /// ([`driftlab_problems::catalog`], [`driftlab_methods::catalog`]).
    pub fn with_defaults() -> Self {
        Self {
            problems: driftlab_problems::catalog(),
            methods: driftlab_methods::catalog(),
        }
    }

    /// No problems and no methods (a registry of a user's entries only).
    pub fn empty() -> Self {
        Self {
            problems: Vec::new(),
            methods: Vec::new(),
        }
    }

    /// Add problem `entry` (replacing an entry with the same id).
    pub fn problem(mut self, entry: ProblemEntry) -> Self {
        self.problems.retain(|e| e.id != entry.id);
        self.problems.push(entry);
        self
    }

    /// Add method `entry` (replacing an entry with the same id).
    pub fn method(mut self, entry: MethodEntry) -> Self {
        self.methods.retain(|e| e.id != entry.id);
        self.methods.push(entry);
        self
    }

    /// The problem entries, in the order added.
    pub fn problems(&self) -> &[ProblemEntry] {
        &self.problems
    }

    /// The method entries, in the order added.
    pub fn methods(&self) -> &[MethodEntry] {
        &self.methods
    }

    /// Problem `id`; the error lists the known ids.
    pub fn find_problem(&self, id: &str) -> Result<ProblemEntry, ParamError> {
        driftlab_problems::find_in(&self.problems, id)
    }

    /// Method `id`; the error lists the known ids or names the cargo feature that adds it.
    pub fn find_method(&self, id: &str) -> Result<MethodEntry, ParamError> {
        driftlab_methods::find_in(&self.methods, id)
    }

    /// Build problem `id` from its parameter table.
    pub fn build_problem(&self, id: &str, params: &toml::Table) -> Result<Problem, ParamError> {
        self.find_problem(id)?.instantiate(params)
    }

    /// Build method `id` from its parameter table, wrapped in the decorators of `with`.
    pub fn build_method(
        &self, id: &str, params: &toml::Table, with: Decorators<'_>,
    ) -> Result<Box<dyn Method>, ParamError> {
        driftlab_methods::decorate((self.find_method(id)?.build)(params)?, with)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_entry_replaces_one_with_the_same_id() {
        let mut renamed = driftlab_methods::explicit::taylor::entry();
        renamed.id = "my-taylor";
        let r = Registry::with_defaults()
            .method(renamed)
            .method(driftlab_methods::explicit::taylor::entry());
        let n = driftlab_methods::catalog().len();
        assert_eq!(r.methods().len(), n + 1);
        assert!(r.find_method("my-taylor").is_ok());
        let e = Registry::empty()
            .find_method("taylor")
            .err()
            .map(|e| e.to_string());
        assert!(e.is_some_and(|m| m.contains("unknown method `taylor`")));
    }
}
