//! # driftlab-runner
//!
//! Experiments as data: a TOML [`spec::Spec`] expands, against a [`Registry`] of problems
//! and methods (driftlab's catalogs plus a user's own), to [`spec::cell::Cell`]s (problem ×
//! method × parameters × h × threads), which run in parallel with rayon — each cell
//! through [`driftlab_core::drive()`], the one time loop, with faer sequential inside —
//! and become rows. The output folder (default `reports/<experiment>/`) receives
//!
//! * `runs.parquet`, `runs.csv`: one row per cell (columns: [`driftlab_results::schema::runs`]);
//! * `traces.parquet`: sampled time series per cell;
//! * `orders.csv`: fitted convergence orders where h is swept ([`analysis::orders`]);
//! * `members.parquet`, `members.csv`: one row per rollout when the spec runs ensembles
//!   ([`ensemble`]; columns: [`driftlab_results::schema::members`]);
//! * `manifest.json`: spec text and hash, git revision, versions, machine, times.
//!
//! A failed cell (diverged, Newton failure, unsupported form, even a panic) is a row with
//! `status = failed`, its `fail_time`, `fail_kind` (the typed error's tag) and
//! `fail_reason`; nothing is dropped.

// The layers, each importing only those listed below it: `distributed`, `peer`,
// `vecenv` → `exec` → `spec` → `analysis` → `store` → `ensemble` (the perturbation
// model), with `error`, `memory` and `registry` the leaves (ARCHITECTURE.md).
pub mod analysis;
pub mod distributed;
pub mod ensemble;
pub mod error;
pub mod exec;
#[allow(unsafe_code)] // a GlobalAlloc impl forwarding to System; every block justified
pub mod memory;
pub mod peer;
pub mod registry;
pub mod spec;
pub mod store;
pub mod vecenv;

pub use error::RunnerError;
pub use exec::cell_run::drive_cell;
pub use exec::run::{run_spec, RunOptions, RunSummary};
pub use registry::Registry;
pub use spec::Spec;
