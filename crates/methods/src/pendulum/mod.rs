//! Problem-specific formulations of seed 002 §19 for the pendulum: Crank–Nicolson with
//! stabilization polynomials, constraint-enforcing implicit Euler and its μ-ODE variant.

pub mod crank_nicolson_pendulum;
pub mod implicit_euler_mu_ode;
pub mod implicit_euler_pendulum;
