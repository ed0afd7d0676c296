//! Running cells: one cell through the one time loop ([`cell_run`]), an ensemble's
//! members ([`members`]), the sweep over a spec's cells with repeats, budgets, threads
//! and the journal ([`run`], `durable`), cost estimates and the order of the runs
//! ([`cost`]), and the timing pass that reruns the rows a verdict uses alone ([`timing`]).

pub mod cell_run;
pub mod cost;
pub(crate) mod durable;
pub mod members;
pub mod run;
pub mod timing;
