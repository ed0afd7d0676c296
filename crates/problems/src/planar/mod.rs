//! Planar mechanisms: the pendulum (with and without stops), point-mass chains in
//! Cartesian and angle coordinates, the priority conflict, the circle rotor, the bead on a
//! spinning rod, the free-floating space robot, the ball stack and the tracked arm.

pub mod ball_stack;
pub mod chain_floor;
pub(crate) mod circle;
pub mod circle_rotor;
pub mod elastic_rod;
pub mod leaking_pendulum;
pub mod pendulum;
pub mod pendulum_limits;
pub mod planar_chain;
pub mod planar_chain_angles;
pub mod priority_conflict;
pub mod rotating_rod;
pub mod space_robot;
pub mod tracked_arm;

use driftlab_core::ParamError;

/// Refuse a count parameter `field` of problem `id` that is zero (a chain of no links):
/// out of range, with `fix`.
pub(crate) fn at_least_one(
    id: &str, field: &'static str, count: usize, fix: &str,
) -> Result<(), ParamError> {
    if count == 0 {
        return Err(ParamError::OutOfRange {
            id: id.into(),
            field,
            value: 0.0,
            fix: fix.into(),
        });
    }
    Ok(())
}
