//! # driftlab-methods
//!
//! The method catalog: one file per method (parameters, the [`Method`] implementation,
//! declared [`MethodInfo`] with citation), stabilizations that can wrap any method as
//! decorators ([`projection::Projected`]), and [`catalog`] with one line per method.
//!
//! Adding a method: write `src/<name>.rs` with a parameter struct
//! (`#[serde(deny_unknown_fields, default)]`), the method type implementing [`Method`]
//! (one step; never a time loop) and an `info()` with declared orders and citation; then
//! add `pub mod <name>;` and one [`MethodEntry`] (id, `info`, `build` from the parameter
//! table, `defaults`) to [`catalog`]. The convergence and invariant tests pick it up from
//! the catalog.

pub mod baumgarte;
pub mod crank_nicolson_pendulum;
pub mod dae_form;
pub mod dynamics;
pub mod fd_newton;
pub mod gauss;
pub mod gauss_index3;
pub mod generalized_alpha;
pub mod ggl;
pub mod hybrid;
#[cfg(feature = "ida")]
#[allow(unsafe_code)] // the SUNDIALS C binding; every `unsafe` block states why it holds
pub mod ida;
pub mod implicit_euler;
pub mod implicit_euler_mu_ode;
pub mod implicit_euler_pendulum;
pub mod lobatto;
pub mod moreau_jean;
pub mod penalty;
pub mod priority;
pub mod projection;
pub mod radau;
pub mod rattle;
pub mod recovery;
pub mod richardson;
pub mod roundoff;
pub mod tableau;
pub mod taylor;

pub use driftlab_solver::{sequential_dense_kernels, set_kkt_threads};

use driftlab_core::params;
use driftlab_core::{Method, MethodInfo, ParamError};

/// A catalog line.
#[derive(Clone, Copy)]
pub struct MethodEntry {
    /// Catalog id.
    pub id: &'static str,
    /// Declared properties at default parameters.
    pub info: fn() -> MethodInfo,
    /// Build from a parameter table (unknown keys are errors).
    pub build: fn(&toml::Table) -> Result<Box<dyn Method>, ParamError>,
    /// Default parameters.
    pub defaults: fn() -> toml::Table,
}

/// The catalog, one line per method.
pub fn catalog() -> Vec<MethodEntry> {
    vec![
        MethodEntry {
            id: "taylor",
            info: taylor::info,
            build: |t| {
                Ok(Box::new(taylor::Taylor::new(params::parse(
                    "method", "taylor", t,
                )?)))
            },
            defaults: params::defaults::<taylor::TaylorParams>,
        },
        MethodEntry {
            id: "baumgarte",
            info: baumgarte::info,
            build: |t| {
                Ok(Box::new(baumgarte::Baumgarte::new(params::parse(
                    "method",
                    "baumgarte",
                    t,
                )?)?))
            },
            defaults: baumgarte_defaults,
        },
        MethodEntry {
            id: "implicit-euler",
            info: implicit_euler::info,
            build: |t| {
                Ok(Box::new(implicit_euler::ImplicitEuler::new(
                    params::parse("method", "implicit-euler", t)?,
                )?))
            },
            defaults: params::defaults::<implicit_euler::ImplicitEulerParams>,
        },
        MethodEntry {
            id: "implicit-euler-pendulum",
            info: implicit_euler_pendulum::info,
            build: |t| {
                Ok(Box::new(
                    implicit_euler_pendulum::ImplicitEulerPendulum::new(params::parse(
                        "method",
                        "implicit-euler-pendulum",
                        t,
                    )?),
                ))
            },
            defaults: params::defaults::<implicit_euler_pendulum::NoParams>,
        },
        MethodEntry {
            id: "implicit-euler-mu-ode",
            info: implicit_euler_mu_ode::info,
            build: |t| {
                Ok(Box::new(implicit_euler_mu_ode::ImplicitEulerMuOde::new(
                    params::parse("method", "implicit-euler-mu-ode", t)?,
                )))
            },
            defaults: params::defaults::<implicit_euler_pendulum::NoParams>,
        },
        MethodEntry {
            id: "rattle",
            info: rattle::info,
            build: |t| {
                Ok(Box::new(rattle::Rattle::new(params::parse(
                    "method", "rattle", t,
                )?)?))
            },
            defaults: params::defaults::<rattle::RattleParams>,
        },
        MethodEntry {
            id: "moreau-jean",
            info: moreau_jean::info,
            build: |t| {
                Ok(Box::new(moreau_jean::MoreauJean::new(params::parse(
                    "method",
                    "moreau-jean",
                    t,
                )?)?))
            },
            defaults: params::defaults::<moreau_jean::MoreauJeanParams>,
        },
        MethodEntry {
            id: "priority",
            info: priority::info,
            build: |t| {
                Ok(Box::new(priority::Priority::new(params::parse(
                    "method", "priority", t,
                )?)?))
            },
            defaults: params::defaults::<priority::PriorityParams>,
        },
        MethodEntry {
            id: "generalized-alpha",
            info: generalized_alpha::info,
            build: |t| {
                Ok(Box::new(generalized_alpha::GeneralizedAlpha::new(
                    params::parse("method", "generalized-alpha", t)?,
                )?))
            },
            defaults: params::defaults::<generalized_alpha::GeneralizedAlphaParams>,
        },
        MethodEntry {
            id: "penalty",
            info: penalty::info,
            build: |t| {
                Ok(Box::new(penalty::Penalty::new(params::parse(
                    "method", "penalty", t,
                )?)?))
            },
            defaults: params::defaults::<penalty::PenaltyParams>,
        },
        MethodEntry {
            id: "crank-nicolson-pendulum",
            info: crank_nicolson_pendulum::info,
            build: |t| {
                Ok(Box::new(
                    crank_nicolson_pendulum::CrankNicolsonPendulum::new(params::parse(
                        "method",
                        "crank-nicolson-pendulum",
                        t,
                    )?)?,
                ))
            },
            defaults: params::defaults::<crank_nicolson_pendulum::CrankNicolsonParams>,
        },
        MethodEntry {
            id: "gauss",
            info: gauss::info,
            build: |t| {
                Ok(Box::new(gauss::Gauss::new(params::parse(
                    "method", "gauss", t,
                )?)?))
            },
            defaults: params::defaults::<gauss::GaussParams>,
        },
        MethodEntry {
            id: "ggl",
            info: ggl::info,
            build: |t| Ok(Box::new(ggl::Ggl::new(params::parse("method", "ggl", t)?)?)),
            defaults: params::defaults::<ggl::GglParams>,
        },
        MethodEntry {
            id: "hybrid",
            info: hybrid::info,
            build: |t| {
                Ok(Box::new(hybrid::Hybrid::new(params::parse(
                    "method", "hybrid", t,
                )?)?))
            },
            defaults: params::defaults::<hybrid::HybridParams>,
        },
        MethodEntry {
            id: "lobatto",
            info: lobatto::info,
            build: |t| {
                Ok(Box::new(lobatto::Lobatto::new(params::parse(
                    "method", "lobatto", t,
                )?)?))
            },
            defaults: params::defaults::<lobatto::LobattoParams>,
        },
        MethodEntry {
            id: "radau",
            info: radau::info,
            build: |t| {
                Ok(Box::new(radau::Radau::new(params::parse(
                    "method", "radau", t,
                )?)?))
            },
            defaults: params::defaults::<radau::RadauParams>,
        },
        MethodEntry {
            id: "gauss-index3",
            info: gauss_index3::info,
            build: |t| {
                Ok(Box::new(gauss_index3::GaussIndex3::new(params::parse(
                    "method",
                    "gauss-index3",
                    t,
                )?)?))
            },
            defaults: params::defaults::<gauss_index3::GaussIndex3Params>,
        },
        #[cfg(feature = "ida")]
        MethodEntry {
            id: "ida",
            info: ida::info,
            build: |t| Ok(Box::new(ida::Ida::new(params::parse("method", "ida", t)?)?)),
            defaults: params::defaults::<ida::IdaParams>,
        },
    ]
}

fn baumgarte_defaults() -> toml::Table {
    let mut t = params::defaults::<baumgarte::BaumgarteParams>();
    t.insert("xi".into(), 0.8.into());
    t.insert("omega_n".into(), 2.0.into());
    t
}

/// Catalog entries behind optional cargo features: (id, feature, how to build them).
pub const OPTIONAL: &[(&str, &str, &str)] = &[(
    "ida",
    "ida",
    "install SUNDIALS with `scripts/install-sundials.sh`, then build with \
     `cargo build --profile experiments -p driftlab-cli --features ida`",
)];

/// Look up `id`; the error lists the valid ids, or names the cargo feature that adds it.
pub fn find(id: &str) -> Result<MethodEntry, ParamError> {
    let cat = catalog();
    let built = cat.iter().any(|e| e.id == id);
    if let Some(&(_, feature, fix)) = OPTIONAL.iter().find(|o| o.0 == id && !built) {
        return Err(ParamError::NotBuilt {
            kind: "method",
            id: id.into(),
            feature,
            fix,
        });
    }
    cat.iter()
        .find(|e| e.id == id)
        .copied()
        .ok_or_else(|| ParamError::UnknownId {
            kind: "method",
            id: id.to_string(),
            known: cat.iter().map(|e| e.id).collect::<Vec<_>>().join(", "),
        })
}

/// Build method `id` with `params`, wrapped in the projection decorator when
/// `projection` is given.
pub fn build(
    id: &str,
    params: &toml::Table,
    projection: Option<&toml::Table>,
) -> Result<Box<dyn Method>, ParamError> {
    let inner = (find(id)?.build)(params)?;
    match projection {
        None => Ok(inner),
        Some(p) => Ok(Box::new(projection::Projected::new(
            inner,
            params::parse("method", "projection", p)?,
        )?)),
    }
}

/// The decorators of one method entry, applied inside out: projection, then recovery,
/// then Richardson step control (outermost: it repeats whole decorated steps).
#[derive(Clone, Copy, Debug, Default)]
pub struct Decorators<'a> {
    /// Projection parameters ([`projection::Projected`]).
    pub projection: Option<&'a toml::Table>,
    /// Emergency recovery parameters ([`recovery::Recovered`]).
    pub recovery: Option<&'a toml::Table>,
    /// Richardson step control ([`richardson::Richardson`]).
    pub richardson: bool,
}

/// [`build`] with the decorators of `with`.
pub fn build_decorated(
    id: &str,
    params: &toml::Table,
    with: Decorators<'_>,
) -> Result<Box<dyn Method>, ParamError> {
    let mut m = build(id, params, with.projection)?;
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
