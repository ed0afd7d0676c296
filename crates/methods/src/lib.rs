//! # driftlab-methods
//!
//! The method catalog: one file per method (parameters, the [`driftlab_core::Method`]
//! configuration and the [`driftlab_core::Stepper`] it starts on a system, declared
//! [`MethodInfo`] with citation), stabilizations that can wrap any method as
//! decorators ([`decorators::projection::Projected`]), and [`catalog`] with one line per method.
//!
//! The files are grouped by family: [`explicit`] (Baumgarte, penalty, Taylor and the
//! strategies combining them), [`implicit`] (collocation, Radau, generalized-α, RATTLE),
//! [`decorators`] (projection, recovery, Richardson), [`unilateral`] (Moreau–Jean),
//! [`pendulum`] (seed 002's problem-specific formulations), `ida` (SUNDIALS, feature
//! `ida`); the shared numerics stay at the top ([`dynamics`], [`dae_form`], [`fd_newton`],
//! [`roundoff`]).
//!
//! Adding a method: write `src/<family>/<name>.rs` with a parameter struct
//! (`#[serde(deny_unknown_fields, default)]`), the method type implementing
//! [`driftlab_core::Method`] and started as a [`driftlab_core::Stepper`] (one step; never a
//! time loop), an `info()` with declared orders and citation, and
//! `pub fn entry() -> MethodEntry` (id, `info`, `build` from the parameter table,
//! `defaults`); then add `pub mod <name>;` to the family's `mod.rs` and `<name>::entry()`
//! to [`catalog`]. The
//! convergence and invariant tests pick it up from the catalog. A method in a user's own
//! crate needs none of this: its [`MethodEntry`] goes to `driftlab_runner::Registry::method`
//! (see `examples/user-crate`).

pub mod dae_form;
pub mod decorators;
pub mod dynamics;
pub mod entry;
pub mod explicit;
pub mod fd_newton;
#[cfg(feature = "ida")]
#[allow(unsafe_code)] // the SUNDIALS C binding; every `unsafe` block states why it holds
pub mod ida;
pub mod implicit;
pub mod pendulum;
pub mod roundoff;
pub mod unilateral;

pub use entry::{find_in, MethodEntry, OPTIONAL};

use decorators::{projection, recovery, richardson, velocity_projection};
use driftlab_core::params;
use driftlab_core::prelude::*;
use explicit::{baumgarte, hybrid, lie_rkmk, penalty, priority, taylor, typed};
use implicit::{
    alf, bdf, gauss, gauss_index2, gauss_index3, generalized_alpha, ggl, implicit_euler, lobatto,
    radau, rattle,
};
use pendulum::{crank_nicolson_pendulum, implicit_euler_mu_ode, implicit_euler_pendulum};
use unilateral::moreau_jean;

/// The catalog, one line per method.
pub fn catalog() -> Vec<MethodEntry> {
    vec![
        taylor::entry(),
        taylor::semi_implicit_euler_entry(),
        baumgarte::entry(),
        lie_rkmk::entry(),
        implicit_euler::entry(),
        implicit_euler_pendulum::entry(),
        implicit_euler_mu_ode::entry(),
        rattle::entry(),
        moreau_jean::entry(),
        priority::entry(),
        generalized_alpha::entry(),
        penalty::entry(),
        crank_nicolson_pendulum::entry(),
        gauss::entry(),
        ggl::entry(),
        hybrid::entry(),
        lobatto::entry(),
        radau::entry(),
        gauss_index3::entry(),
        gauss_index2::entry(),
        velocity_projection::entry(),
        typed::entry(),
        alf::entry(),
        bdf::entry(),
        #[cfg(feature = "ida")]
        ida::entry(),
    ]
}

/// Look up `id` in the default [`catalog`]; the error lists the valid ids, or names the
/// cargo feature that adds it.
pub fn find(id: &str) -> Result<MethodEntry, ParamError> {
    find_in(&catalog(), id)
}

/// Build method `id` of the default [`catalog`] with `params`, wrapped in the projection
/// decorator when `projection` is given.
pub fn build(
    id: &str, params: &toml::Table, projection: Option<&toml::Table>,
) -> Result<Box<dyn Method>, ParamError> {
    build_decorated(
        id,
        params,
        Decorators {
            projection,
            ..Decorators::default()
        },
    )
}

/// The decorators of one method entry, applied inside out: projection, then recovery,
/// then Richardson step control (outermost: it repeats whole decorated steps).
#[derive(Clone, Copy, Debug, Default)]
pub struct Decorators<'a> {
    /// Projection parameters ([`decorators::projection::Projected`]).
    pub projection: Option<&'a toml::Table>,
    /// Emergency recovery parameters ([`decorators::recovery::Recovered`]).
    pub recovery: Option<&'a toml::Table>,
    /// Richardson step control ([`decorators::richardson::Richardson`]).
    pub richardson: bool,
}

/// [`build`] with the decorators of `with`.
pub fn build_decorated(
    id: &str, params: &toml::Table, with: Decorators<'_>,
) -> Result<Box<dyn Method>, ParamError> {
    decorate((find(id)?.build)(params)?, with)
}

/// Wrap `inner` (built from any catalog, a user's included) in the decorators of `with`,
/// inside out: projection, recovery, Richardson.
pub fn decorate(
    inner: Box<dyn Method>, with: Decorators<'_>,
) -> Result<Box<dyn Method>, ParamError> {
    let mut m = inner;
    if let Some(p) = with.projection {
        m = Box::new(projection::Projected::new(
            m,
            params::parse("method", "projection", p)?,
        )?);
    }
    if let Some(r) = with.recovery {
        m = Box::new(recovery::Recovered::new(
            m,
            params::parse("method", "recovery", r)?,
        )?);
    }
    Ok(if with.richardson {
        Box::new(richardson::Richardson::new(m))
    } else {
        m
    })
}
