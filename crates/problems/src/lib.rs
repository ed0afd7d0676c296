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
pub mod entry;
pub mod frobenius;
pub mod implicit;
pub mod independent_rows;
pub mod index1;
pub mod initial;
pub mod inspect;
mod instantiate;
pub mod model;
pub mod natural;
pub mod nonholonomic;
pub mod planar;
pub mod provenance;
pub mod spatial;
pub mod testset;

use benchmarks::{andrews, bricard, car_axis, n_four_bar, n_four_bar_angle, slider_crank};
use driftlab_core::ParamError;
pub use entry::{find_in, Problem, ProblemEntry};
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

/// Build problem `id` of the default [`catalog`] with parameters `table`.
pub fn build(id: &str, table: &toml::Table) -> Result<Problem, ParamError> {
    find(id)?.instantiate(table)
}
