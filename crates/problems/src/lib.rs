//! # driftlab-problems
//!
//! The problem catalog: one file per problem (system + equations + citation + reference
//! solution), and [`catalog`] with one line per entry. Everything else — the CLI, the
//! runner, the conformance suite (`tests/conformance.rs`, over the public [`conformance`]
//! checks) — reads the catalog.
//!
//! The models are grouped by family: [`planar`], [`spatial`], [`nonholonomic`],
//! [`benchmarks`] (the IVP Test Set and IFToMM problems with published references),
//! [`index1`] and [`model`] (mechanisms from model files: URDF, SDF, TOML). The machinery
//! every problem can use stays at the top: [`conformance`], [`initial`], [`inspect`],
//! [`consistency`], [`independent_rows`], [`disturbance`], [`natural`] (natural-coordinate
//! pieces), [`elliptic`], [`frobenius`], [`testset`].
//!
//! Adding a problem: write `src/<family>/<name>.rs` with a parameter struct
//! (`#[serde(deny_unknown_fields, default)]`), the system (implement
//! [`driftlab_core::MechanicalSystem`] or [`driftlab_core::SemiExplicitDae`]) and an
//! `entry()` function; add `pub mod <name>;` to the family's `mod.rs` and one line to
//! [`catalog`]. A problem
//! in a user's own crate needs none of this: its [`ProblemEntry`] goes to
//! `driftlab_runner::Registry::problem` (see `examples/user-crate`).

mod adjusted;
pub mod benchmarks;
pub mod conformance;
pub mod consistency;
pub mod copies;
pub mod disturbance;
mod domain;
pub mod elliptic;
pub mod frobenius;
pub mod implicit;
pub mod independent_rows;
pub mod index1;
pub mod initial;
pub mod inspect;
pub mod model;
pub mod natural;
pub mod nonholonomic;
pub mod planar;
pub mod spatial;
pub mod testset;

use benchmarks::{andrews, bricard, car_axis, n_four_bar, n_four_bar_angle, slider_crank};
use driftlab_core::{ImplicitDae, MechanicalSystem, ParamError, SemiExplicitDae, SystemRef};
use index1::seed003_dae;
use nonholonomic::{knife_edge, parallel_parking, rolling_disk, snake_robot};
use planar::{
    ball_stack, chain_floor, circle_rotor, elastic_rod, leaking_pendulum, pendulum,
    pendulum_limits, planar_chain, planar_chain_angles, priority_conflict, rotating_rod,
    space_robot, tracked_arm,
};
use spatial::{
    heavy_top, natural_body, prismatic_slider, quaternion_body, spatial_chain,
    spatial_double_pendulum,
};

/// An owned problem of either form.
pub enum Problem {
    /// Index-3 mechanical system.
    Mechanical(Box<dyn MechanicalSystem>),
    /// Semi-explicit index-1 DAE.
    SemiExplicit(Box<dyn SemiExplicitDae>),
    /// Fully implicit `F(t, y, y′) = 0`.
    Implicit(Box<dyn ImplicitDae>),
}

impl Problem {
    /// Borrow as the system [`driftlab_core::drive()`] takes.
    pub fn as_system(&self) -> SystemRef<'_> {
        match self {
            Problem::Mechanical(s) => s.as_ref().into(),
            Problem::SemiExplicit(s) => s.as_ref().into(),
            Problem::Implicit(s) => s.as_ref().into(),
        }
    }
}

/// A catalog line: id, summary, constructor from a parameter table, and defaults.
#[derive(Clone, Copy)]
pub struct ProblemEntry {
    /// Catalog id.
    pub id: &'static str,
    /// One-line summary for `driftlab list problems`.
    pub summary: &'static str,
    /// Build from a parameter table (missing keys take defaults; unknown keys are errors).
    pub build: fn(&toml::Table) -> Result<Problem, ParamError>,
    /// Default parameters.
    pub defaults: fn() -> toml::Table,
}

impl ProblemEntry {
    /// Build from `table`, with the reserved parameters taken out first and applied to
    /// the built problem: `redundant = "remove"` ([`independent_rows`]), a
    /// `disturbance` force pulse ([`disturbance`]), the `initial` table ([`initial`]: a
    /// user's start, checked and refused or projected) and then `copies = k`
    /// ([`copies`]: `k` independent copies stepped as one system).
    /// Every catalog and user problem gets them through this one function.
    pub fn instantiate(&self, table: &toml::Table) -> Result<Problem, ParamError> {
        let (mut params, start) = initial::split(self.id, table)?;
        let remove = independent_rows::split(self.id, &mut params)?;
        let pulse = disturbance::split(self.id, &mut params)?;
        let copies = copies::split(self.id, &mut params)?;
        let mut problem = (self.build)(&params)?;
        if let Some(tol) = remove {
            problem = independent_rows::apply(self.id, problem, tol)?;
        }
        if let Some(p) = pulse {
            problem = disturbance::apply(self.id, problem, p)?;
        }
        if let Some(s) = start {
            problem = initial::apply(self.id, problem, &s)?;
        }
        match copies {
            Some(k) => copies::apply(self.id, problem, k),
            None => Ok(problem),
        }
    }
}

/// The catalog, one line per problem.
pub fn catalog() -> Vec<ProblemEntry> {
    vec![
        pendulum::entry(),
        pendulum::bertolazzi_entry(),
        pendulum::a01_entry(),
        rotating_rod::entry(),
        leaking_pendulum::entry(),
        circle_rotor::entry(),
        andrews::entry(),
        car_axis::entry(),
        slider_crank::entry(),
        n_four_bar::four_bar_entry(),
        n_four_bar::entry(),
        n_four_bar_angle::entry(),
        knife_edge::entry(),
        knife_edge::vakonomic_entry(),
        parallel_parking::entry(),
        rolling_disk::entry(),
        spatial_double_pendulum::entry(),
        quaternion_body::entry(),
        heavy_top::entry(),
        natural_body::entry(),
        prismatic_slider::entry(),
        bricard::entry(),
        spatial_chain::entry(),
        pendulum_limits::entry(),
        ball_stack::entry(),
        chain_floor::entry(),
        priority_conflict::entry(),
        planar_chain::entry(),
        elastic_rod::entry(),
        planar_chain_angles::entry(),
        space_robot::entry(),
        tracked_arm::entry(),
        snake_robot::entry(),
        seed003_dae::entry(),
        implicit::chain_angles_implicit::entry(),
        model::entry(),
    ]
}

/// Look up `id` in the default [`catalog`]; the error lists the valid ids.
pub fn find(id: &str) -> Result<ProblemEntry, ParamError> {
    find_in(&catalog(), id)
}

/// Look up `id` in `catalog` (the default one or a user's registry); the error lists the
/// valid ids.
pub fn find_in(catalog: &[ProblemEntry], id: &str) -> Result<ProblemEntry, ParamError> {
    catalog
        .iter()
        .find(|e| e.id == id)
        .copied()
        .ok_or_else(|| ParamError::UnknownId {
            kind: "problem",
            id: id.to_string(),
            known: catalog.iter().map(|e| e.id).collect::<Vec<_>>().join(", "),
        })
}

/// Build problem `id` of the default [`catalog`] with parameters `table`.
pub fn build(id: &str, table: &toml::Table) -> Result<Problem, ParamError> {
    find(id)?.instantiate(table)
}
