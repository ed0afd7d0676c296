//! A user's own crate on driftlab: a mechanism ([`spring_dumbbell`]) and a method
//! ([`symplectic_euler`]) defined here, registered next to driftlab's catalogs, and run
//! through specs, the orders fit and the report exactly like driftlab's own.

pub mod spring_dumbbell;
pub mod symplectic_euler;

use driftlab_runner::Registry;

/// driftlab's catalogs plus this crate's problem and method.
pub fn registry() -> Registry {
    Registry::with_defaults().problem(spring_dumbbell::entry()).method(symplectic_euler::entry())
}
