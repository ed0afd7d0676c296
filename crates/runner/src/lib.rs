//! # driftlab-runner
//!
//! Experiments as data: a TOML [`spec::Spec`] expands, against a [`Registry`] of problems
//! and methods (driftlab's catalogs plus a user's own), to [`cell::Cell`]s (problem ×
//! method × parameters × h × threads), which run in parallel with rayon — each cell
//! through [`driftlab_core::drive()`], the one time loop, with faer sequential inside —
//! and become rows. The output folder (default `reports/<experiment>/`) receives
//!
//! * `runs.parquet`, `runs.csv`: one row per cell (columns: [`driftlab_results::schema::runs`]);
//! * `traces.parquet`: sampled time series per cell;
//! * `orders.csv`: fitted convergence orders where h is swept ([`orders`]);
//! * `members.parquet`, `members.csv`: one row per rollout when the spec runs ensembles
//!   ([`ensemble`]; columns: [`driftlab_results::schema::members`]);
//! * `manifest.json`: spec text and hash, git revision, versions, machine, times.
//!
//! A failed cell (diverged, Newton failure, unsupported form, even a panic) is a row with
//! `status = failed`, its `fail_time`, `fail_kind` (the typed error's tag) and
//! `fail_reason`; nothing is dropped.

pub mod cell;
pub mod compare;
mod durable;
pub mod ensemble;
pub mod error;
pub mod fingerprint;
pub mod folder;
pub mod journal;
pub mod manifest;
#[allow(unsafe_code)] // a GlobalAlloc impl forwarding to System; every block justified
pub mod memory;
pub mod one_cell;
pub mod optima;
pub mod orders;
pub mod peer;
pub mod record;
pub mod reference;
pub mod registry;
pub mod run;
pub mod shard;
pub mod slurm;
pub mod spec;
pub mod timing;
pub mod vecenv;

pub use error::RunnerError;
pub use registry::Registry;
pub use run::{drive_cell, run_spec, RunOptions, RunSummary};
pub use spec::Spec;
