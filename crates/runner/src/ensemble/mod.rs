//! Batched ensembles, the model: the reinforcement-learning workload of seed 001 §3.6 and
//! §3.12 ("optimize for RL training: batching"). This folder holds the spec's
//! `[ensemble]` table, the seeded perturbations and curricula, and the action projection:
//! numerics on a system, no cell and no file. The members are run by `exec/members.rs`,
//! and stepped call by call by the environments of `vecenv/`.
//!
//! A spec with an `[ensemble]` table turns every cell into `members` independent rollouts
//! of its problem and method, run side by side on the runner's pool. Member `i` differs
//! from the others only through seeded perturbations ([`noise`]), each a pure function of
//! `(seed, i)`, so an ensemble is reproducible bit for bit on any number of threads:
//!
//! * initial-state noise `q₀ + N(0, σ_q²)`, `v₀ + N(0, σ_v²)`, projected back onto the
//!   constraint manifold ([`perturbed::perturbed_initial_state`]);
//! * constraint noise `C + N(0, σ²)`, `σ(x) = σ₀ e^{−x/τ}` over time or episodes
//!   ([`noise::NoiseSchedule`], [`perturbed::Perturbed`]);
//! * a constraint-strength curriculum over episodes for the soft methods (penalty,
//!   Baumgarte, hybrid), as the seed's listing writes it ([`noise::Curriculum`]), or
//!   driven by the rollouts' performance, generation by generation ([`feedback`]).
//!
//! [`action`] projects a raw command onto the feasible velocities (seed 001 §3.6.3).
//!
//! When they have run, the cell's `runs` row summarizes the distribution over members (median, p95 and max
//! of drift and energy error, failures) and the throughput in rollout steps per second;
//! each member gets a row of `members` ([`driftlab_results::schema::members`]). Drift is
//! measured on the unperturbed constraints: the noise moves the target the method
//! enforces, not the mechanism.

pub mod action;
pub mod feedback;
pub mod noise;
pub mod perturbed;

use noise::{Curriculum, NoiseSchedule};
use perturbed::InitialNoise;
use serde::{Deserialize, Serialize};

/// Most members an ensemble may have (each keeps a member row of about 200 bytes).
pub const MAX_MEMBERS: usize = 1 << 20;

/// The spec's `[ensemble]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnsembleSpec {
    /// Rollouts per cell (1 … 2²⁰).
    pub members: usize,
    /// Seed of every member's streams.
    #[serde(default)]
    pub seed: u64,
    /// Initial-state noise (none by default).
    #[serde(default)]
    pub initial: InitialNoise,
    /// Constraint noise `C + N(0, σ²)` (none by default).
    pub constraint_noise: Option<NoiseSchedule>,
    /// Constraint-strength curriculum over members (episodes).
    pub curriculum: Option<Curriculum>,
}

impl EnsembleSpec {
    /// `Err` naming the field and the fix.
    pub fn validate(&self) -> Result<(), String> {
        if self.members == 0 || self.members > MAX_MEMBERS {
            return Err(format!(
                "`ensemble.members` = {}: give the number of rollouts, 1 … {MAX_MEMBERS}",
                self.members
            ));
        }
        self.initial.validate()?;
        if let Some(n) = &self.constraint_noise {
            n.validate()?;
        }
        if let Some(c) = &self.curriculum {
            c.validate()?;
        }
        Ok(())
    }

    /// The settings as JSON (the `ensemble` column).
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}
