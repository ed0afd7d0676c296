//! Methods for unilateral rows `g(q) ≥ 0` (joint limits, contacts): Moreau–Jean time
//! stepping with an LCP per step (seed 001 §3.6).

pub mod moreau_jean;
