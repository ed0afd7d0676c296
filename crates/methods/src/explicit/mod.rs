//! Index-1 formulations stabilized explicitly in time: Baumgarte (and its gain adaptation
//! from the violation history), the penalty method, the unstabilized Taylor scheme, and the
//! strategies that combine them per regime (`hybrid`), per kind of row (`typed`) and per
//! priority level (`priority`); seed 001 §3.3–3.5, seed 002 §18–19.

pub mod baumgarte;
pub mod baumgarte_gains;
pub mod baumgarte_history;
pub mod hybrid;
pub mod lie_rkmk;
pub mod penalty;
pub mod priority;
pub mod taylor;
pub mod typed;
mod typed_contact;
