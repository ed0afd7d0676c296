//! Stabilizations and controls that wrap any method: projection (and its sequential,
//! symmetric and velocity variants), emergency recovery, Richardson error estimation.
//!
//! A decorator's stepper names the stepper it wraps (`Stepper::inner`, `inner_mut`): the
//! trait's defaults then pass `accept`, `reject`, `refresh`, `restart` and `counters` on
//! to it, and the decorator writes only the functions it changes (its `step`, and
//! `stats` with its own counts).

pub mod projection;
pub mod recovery;
pub mod richardson;
pub mod velocity_projection;
