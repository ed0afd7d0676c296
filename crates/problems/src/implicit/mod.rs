//! Fully implicit systems `F(t, y, y′) = 0` ([`driftlab_core::ImplicitDae`], issue 32
//! D4) and their conformance checks.

pub mod chain_angles_implicit;
pub mod conformance;
