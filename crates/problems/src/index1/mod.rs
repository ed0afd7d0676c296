//! Semi-explicit index-1 DAEs (seed 003).

pub mod seed003_dae;
