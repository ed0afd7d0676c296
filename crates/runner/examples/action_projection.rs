//! Action projection (seed 001 §3.6.3): a policy's raw velocity command plus exploration
//! noise, `u = c + σ ε`, applied kinematically (`q ← q + h v`) to a pendulum and a
//! two-link arm, with and without projecting it onto the feasible velocities
//! `{v : Φ_q v = 0}` first. Prints the measured constraint drift of each.
//!
//! ```text
//! cargo run --release -p driftlab-runner --example action_projection
//! ```

use driftlab_problems::planar::pendulum::{Pendulum, PendulumParams};
use driftlab_problems::planar::planar_chain::{PlanarChain, PlanarChainParams};
use driftlab_runner::ensemble::action::kinematic_rollout;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pendulum = Pendulum::new(PendulumParams::default(), "pendulum")?;
    let arm = PlanarChain::new(PlanarChainParams {
        links: 2,
        theta0_deg: 30.0,
        ..PlanarChainParams::default()
    })?;
    let systems: [(&str, &dyn driftlab_core::MechanicalSystem, Vec<f64>); 2] = [
        ("pendulum", &pendulum, vec![1.0, 0.5]),
        ("two-link arm", &arm, vec![1.0, 0.0, 1.0, 0.5]),
    ];
    println!("| system | h | steps (t = 1) | max ‖Φ‖∞ raw | max ‖Φ‖∞ projected | ratio |");
    println!("|---|---|---|---|---|---|");
    for (name, sys, command) in systems {
        for h in [1e-2_f64, 1e-3] {
            let steps = (1.0 / h).round() as usize;
            let raw = kinematic_rollout(sys, &command, 0.5, h, steps, 2026, false)?;
            let projected = kinematic_rollout(sys, &command, 0.5, h, steps, 2026, true)?;
            println!(
                "| {name} | {h:.0e} | {steps} | {:.3e} | {:.3e} | {:.0} |",
                raw.max,
                projected.max,
                raw.max / projected.max
            );
        }
    }
    Ok(())
}
