//! Stabilizations and controls that wrap any method: projection (and its sequential,
//! symmetric and velocity variants), emergency recovery, Richardson error estimation.

pub mod projection;
pub mod recovery;
pub mod richardson;
pub mod sequential_projection;
pub mod symmetric_projection;
pub mod velocity_projection;
