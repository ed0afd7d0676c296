//! Planar mechanisms: the pendulum (with and without stops), point-mass chains in
//! Cartesian and angle coordinates, the priority conflict, the circle rotor, the bead on a
//! spinning rod, the free-floating space robot and the ball stack.

pub mod ball_stack;
pub mod circle_rotor;
pub mod pendulum;
pub mod pendulum_limits;
pub mod planar_chain;
pub mod planar_chain_angles;
pub mod priority_conflict;
pub mod rotating_rod;
pub mod space_robot;
