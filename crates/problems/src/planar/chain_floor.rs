//! `chain-floor`: the planar chain of `planar-chain` (N point masses on rigid rods, the
//! first pinned at the origin) swinging onto a floor, each mass kept above it by a
//! unilateral row — rigid rods and contacts in one mechanism, the case of seed 001
//! exercise 8's mixed solver ("接触约束：LCP求解器" beside "关节约束"):
//!
//! ```text
//! planar-chain:  m p_i'' = −mg e₂ − Φ_qᵀλ + Gᵀ P,   Φ_i = |p_i − p_{i−1}|² − ℓ²
//! floor:         g_i = y_i + depth ≥ 0,   0 ≤ P_i ⊥ g_i ≥ 0,   ġ⁺ = −e ġ⁻ at impact
//! ```
//!
//! The floor's normal is vertical and the rods' gradients are not, so a contact impulse
//! computed with the mass alone moves the rods' velocities off `Φ_q v = 0`, and a rod
//! projection after it moves the contact velocities: the order in which a solver treats
//! the two groups shows (`typed`'s `order`). Moreau–Jean solves both at once (its
//! Delassus matrix is taken with the rods' KKT matrix). Released horizontally at rest, the
//! chain falls onto the floor `depth` below the pivot (depth < Nℓ).

use crate::entry::{Problem, ProblemEntry};
use crate::planar::planar_chain::{PlanarChain, PlanarChainParams};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{MechanicalSystem, ParamError, ProblemInfo, Unilateral};
use serde::{Deserialize, Serialize};

/// Parameters of [`ChainFloor`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChainFloorParams {
    /// Number of links (and masses), N ≥ 1.
    pub links: usize,
    /// Mass of each bob (kg).
    pub m: f64,
    /// Length of each rod (m).
    pub length: f64,
    /// Gravitational acceleration (m/s²).
    pub g: f64,
    /// Depth of the floor below the pivot (m), less than N·length.
    pub depth: f64,
    /// Coefficient of restitution e ∈ [0, 1].
    pub restitution: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for ChainFloorParams {
    fn default() -> Self {
        Self {
            links: 2,
            m: 1.0,
            length: 1.0,
            g: 9.81,
            depth: 1.5,
            restitution: 0.0,
            t_end: 3.0,
        }
    }
}

/// The chain above a floor.
#[derive(Clone, Debug)]
pub struct ChainFloor {
    p: ChainFloorParams,
    chain: PlanarChain,
}

impl ChainFloor {
    /// Build and validate.
    pub fn new(p: ChainFloorParams) -> Result<Self, ParamError> {
        let id = ID;
        let chain_params = PlanarChainParams {
            links: p.links,
            m: p.m,
            length: p.length,
            g: p.g,
            theta0_deg: 90.0,
            t_end: p.t_end,
        };
        chain_params.validate(id)?;
        let chain = PlanarChain::new(chain_params)?;
        bounded_positive(id, "depth", p.depth)?;
        if p.depth >= p.links as f64 * p.length {
            return Err(ParamError::OutOfRange {
                id: id.into(),
                field: "depth",
                value: p.depth,
                fix: format!(
                    "the chain of {} links of {} m never reaches a floor {} m down; give `depth` < `links`·`length`",
                    p.links, p.length, p.depth
                ),
            });
        }
        if !(0.0..=1.0).contains(&p.restitution) {
            return Err(ParamError::OutOfRange {
                id: id.into(),
                field: "restitution",
                value: p.restitution,
                fix: "give a coefficient of restitution in [0, 1]".into(),
            });
        }
        Ok(Self { p, chain })
    }
}

/// The catalog id `chain-floor`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "chain-floor";

/// Catalog entry `chain-floor`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "planar chain released onto a floor: rigid rods (bilateral) and one contact row per mass (unilateral, restitution e)",
        build: |t| {
            Ok(Problem::Mechanical(Box::new(ChainFloor::new(
                params::parse("problem", ID, t)?,
            )?)))
        },
        defaults: params::defaults::<ChainFloorParams>,
    }
}

impl MechanicalSystem for ChainFloor {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!(
                "Planar chain of {} masses (m = {}, ℓ = {}) released horizontally onto a floor {} m below the pivot, e = {}",
                p.links, p.m, p.length, p.depth, p.restitution
            ),
            equations: "m p_i'' = −mg e₂ − Φ_qᵀλ + Gᵀ P,  Φ_i = |p_i − p_{i−1}|² − ℓ²,  g_i = y_i + depth ≥ 0,  \
                        0 ≤ P ⊥ g ≥ 0,  ġ⁺ = −e ġ⁻"
                .into(),
            citation: "seed 001 exercise 8 (混合约束求解器: contacts by LCP, joints by KKT) and §3.6.1 (complementarity); \
                       Acary & Brogliato, Numerical Methods for Nonsmooth Dynamical Systems (2008), §10.1"
                .into(),
            tags: vec!["planar".into(), "unilateral".into(), "index-3".into()],
            index: 3,
            t_end: p.t_end,
            reference: "none (impacts); energy is lost at inelastic impacts only".into(),
        }
    }
    driftlab_core::forward_mechanical!(chain;
        dims, mass_pattern, mass, forces, constraints, jacobian_pattern, jacobian,
        curvature, constraint_hessian, row_kinds, energy, energy_scale, initial_state
    );
    fn unilateral(&self) -> Option<&dyn Unilateral> {
        Some(self)
    }
}

impl Unilateral for ChainFloor {
    fn rows(&self) -> usize {
        self.p.links
    }
    fn gaps(&self, _t: f64, q: &[f64], out: &mut [f64]) {
        for (i, g) in out.iter_mut().enumerate() {
            *g = q[2 * i + 1] + self.p.depth;
        }
    }
    fn gap_jacobian(&self, _t: f64, _q: &[f64], out: &mut [f64]) {
        let n = 2 * self.p.links;
        out.iter_mut().for_each(|x| *x = 0.0);
        for i in 0..self.p.links {
            out[i * n + 2 * i + 1] = 1.0;
        }
    }
    fn restitution(&self) -> f64 {
        self.p.restitution
    }
}
