//! # driftlab-results
//!
//! The results contract: what the runner writes into a result folder and the report reads
//! back, shared by both so that it is defined once.
//!
//! * [`schema`]: every column of the runs, traces, members and orders tables — name, type,
//!   unit, meaning — and, generated from the same lines, each table's row type
//!   ([`schema::runs::Row`], …) with its column accessors.
//! * [`table`]: a table of rows to and from a polars frame, column by column through those
//!   accessors: the runner's writer and the report's reader are the same code.
//! * [`fail_kind`]: the closed set of failure tags in `runs.fail_kind`.
//! * [`claim_spec`], [`report_spec`], [`order_note`]: what a spec says about its report.
//! * [`fit`]: the least-squares line of the order fits.
//! * [`folder_lock`]: one run per result folder; [`folder_check`]: its tables as its run
//!   wrote them.
//!
//! It depends on no other driftlab crate: the numerical crates map their typed errors onto
//! [`FailKind`], and the report depends on this crate alone.

pub mod claim_spec;
pub mod fail_kind;
pub mod fit;
pub mod folder_check;
pub mod folder_lock;
pub mod order_note;
pub mod report_spec;
pub mod runs_row;
pub mod schema;
pub mod table;
pub mod verdict;

pub use fail_kind::FailKind;
