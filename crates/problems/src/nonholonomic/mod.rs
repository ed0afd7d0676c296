//! Nonholonomic systems (seed 001 §3.8): the rolling disk, the knife edge, the parking
//! unicycle and the wheeled snake.

pub mod knife_edge;
pub mod parallel_parking;
pub mod rolling_disk;
pub mod snake_robot;
