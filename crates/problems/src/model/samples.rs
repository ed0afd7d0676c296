//! The joint-space dynamics of a model at random states, as data another code can
//! recompute: the cross-check against Pinocchio (`scripts/pinocchio-check.sh`) reads
//! these samples, evaluates `crba` and `aba` (or `constraintDynamics` for a model with
//! loops) at the same states, and compares.
//!
//! Per state: `q`, `q̇` (this crate's conventions: Euler parameters `(e₀, e₁, e₂, e₃)`,
//! a floating joint's position in its parent frame and `q̇` = the coordinates' rates),
//! the tree's mass matrix `M(q)` by CRBA *without* the Euler-parameter regularization
//! (so that `q̇ᵀMq̇` is the kinetic energy), and the acceleration `q̈` of the DAE with
//! every row of the model (unit norms, mimics, loop closures) from its KKT system with
//! zero joint torques.

use super::import::description::JointKind;
use super::joint_coords::JointCoordinates;
use super::{build, random_pose, start_of, ModelParams};
use crate::consistency::accelerations;
use crate::independent_rows::{independent_at_start, restrict};
use driftlab_core::{MechanicalSystem, ParamError};
use serde::Serialize;

/// One joint of the layout.
#[derive(Serialize)]
pub struct JointLayout {
    /// Its name in the model file.
    pub name: String,
    /// `revolute`, `prismatic`, … .
    pub kind: &'static str,
    /// Offset of its coordinates in q.
    pub offset: usize,
    /// Number of coordinates.
    pub nq: usize,
}

/// One sampled state.
#[derive(Serialize)]
pub struct Sample {
    /// Positions.
    pub q: Vec<f64>,
    /// Velocities (`q̇`).
    pub v: Vec<f64>,
    /// `M(q)`, row-major, n × n.
    pub mass: Vec<f64>,
    /// `q̈` of the constrained system at zero torques.
    pub acceleration: Vec<f64>,
    /// The multipliers.
    pub lambda: Vec<f64>,
    /// `Φ_q(q)` of the rows kept, row-major (rows in `row_names` order) × n.
    pub jacobian: Vec<f64>,
    /// The generalized forces at zero joint torque, `τ_springs,dampers − c(q, q̇)`
    /// (gravity, velocity products, springs, dampers), so that `M q̈ = forces − Φ_qᵀλ`.
    pub forces: Vec<f64>,
    /// The rows of Φ at this state (all, or those kept by `redundant = "remove"`), named
    /// as [`JointCoordinates::row_names`] does.
    pub row_names: Vec<String>,
}

/// The samples and what they are.
#[derive(Serialize)]
pub struct Samples {
    /// The model file (or `robots/<file>` for a shipped robot).
    pub file: String,
    /// `fixed` or `floating`.
    pub root: String,
    /// Gravity.
    pub gravity: [f64; 3],
    /// The joints, document order.
    pub joints: Vec<JointLayout>,
    /// The constraint rows' kinds (the first sample's rows).
    pub rows: Vec<&'static str>,
    /// Their names (the first sample's; each sample carries its own).
    pub row_names: Vec<String>,
    /// The independence tolerance of `redundant = "remove"`, when rows were removed.
    pub redundant_tol: Option<f64>,
    /// The states.
    pub samples: Vec<Sample>,
}

/// The most states one call samples.
pub const MAX_STATES: usize = 100_000;

/// Refuse `states` beyond [`MAX_STATES`], or whose samples (M, Φ_q and five vectors per
/// state, about 20 bytes per number as JSON text, twice: in memory and written) would not
/// fit the memory limit, before any is computed.
fn check_states(states: usize, (n, m): (usize, usize)) -> Result<(), ParamError> {
    if states == 0 || states > MAX_STATES {
        return Err(super::invalid(format!(
            "--states {states}: give between 1 and {MAX_STATES} states"
        )));
    }
    let numbers = (states as u64).saturating_mul((n * n + m * n + 5 * n + m) as u64);
    let bytes = numbers.saturating_mul(2 * (8 + 20));
    if let Some((limit, source)) = driftlab_core::memory::limit() {
        if bytes > limit {
            return Err(super::invalid(format!(
                "--states {states} of a model with n = {n} needs about {} for its samples, above the limit ({}, {source}); give fewer states",
                driftlab_core::memory::human(bytes),
                driftlab_core::memory::human(limit)
            )));
        }
    }
    Ok(())
}

/// `states` random states of `p`'s model (poses as `pose_seed` draws them — or, for a
/// model with loop closures or couplings, its start with every joint moved by up to ±[`LOOP_SPREAD`]
/// rad or m, since a random pose is far from assembled — seeds `seed, seed + 1, …`; joint
/// rates uniform in (−1, 1), body rates for Euler parameters), projected onto the
/// model's rows. With `redundant_tol`, the rows redundant at each state
/// ([`crate::independent_rows`]) are left out of its KKT solve.
pub fn sample(
    p: &ModelParams, states: usize, seed: u64, redundant_tol: Option<f64>,
) -> Result<Samples, ParamError> {
    if states > MAX_STATES {
        check_states(states, (0, 0))?;
    }
    let base = build(p)?;
    let dims = base.dims();
    check_states(states, (dims.n, dims.m))?;
    let model = base.model().clone();
    let mut out = Samples {
        file: model.file.clone(),
        root: p.root.clone(),
        gravity: model.gravity,
        joints: Vec::new(),
        rows: Vec::new(),
        row_names: Vec::new(),
        redundant_tol,
        samples: Vec::with_capacity(states),
    };
    let mut offset = 0;
    for j in &model.joints {
        out.joints.push(JointLayout {
            name: j.name.clone(),
            kind: j.kind.name(),
            offset,
            nq: j.kind.nq(),
        });
        offset += j.kind.nq();
    }
    for k in 0..states {
        let (sample, kinds) =
            sample_at(&model, p, seed.wrapping_add(k as u64).max(1), redundant_tol)
                .map_err(|e| super::invalid(format!("sample {k}: {e}")))?;
        if k == 0 {
            out.rows = kinds;
            out.row_names = sample.row_names.clone();
        }
        out.samples.push(sample);
    }
    Ok(out)
}

/// How far (rad or m) [`sample`] moves each joint of a model with loop closures.
pub const LOOP_SPREAD: f64 = 0.05;

/// One sampled state of `model` from seed `s`, and its rows' kinds.
fn sample_at(
    model: &super::import::description::Model, p: &ModelParams, s: u64, redundant_tol: Option<f64>,
) -> Result<(Sample, Vec<&'static str>), String> {
    let mut m = model.clone();
    if m.closures.is_empty() && m.couplings.is_empty() {
        random_pose(&mut m, s);
    } else {
        let mut draw = s;
        for j in &mut m.joints {
            if matches!(
                j.kind,
                JointKind::Revolute | JointKind::Continuous | JointKind::Prismatic
            ) {
                j.q0[0] += LOOP_SPREAD * (2.0 * super::uniform(&mut draw) - 1.0);
            }
        }
    }
    let mut rate = s.wrapping_mul(0x2545_f491_4f6c_dd1d);
    for j in &mut m.joints {
        if j.kind != JointKind::Fixed {
            j.v0.iter_mut()
                .for_each(|x| *x = 2.0 * super::uniform(&mut rate) - 1.0);
        }
    }
    let (q0, v0) = start_of(&m);
    let sys = JointCoordinates::new(m.clone(), q0, v0, p.t_end, String::new(), "joint");
    let names = sys.row_names();
    let kinds_all = sys.row_kinds();
    let kept = match redundant_tol {
        // Decided at the assembled start (the model's own), where the perturbed state is
        // projected to: the near-redundant rows would stall the projection too.
        Some(tol) => {
            let (q, v) = start_of(model);
            let start = JointCoordinates::new(model.clone(), q, v, p.t_end, String::new(), "joint");
            independent_at_start(&start, tol)
        }
        None => (0..names.len()).collect(),
    };
    let system: Box<dyn MechanicalSystem> = restrict(Box::new(sys), kept.clone());
    let mut st = system.initial_state();
    let (pos, vel) = crate::initial::mechanical_residuals(system.as_ref(), &st);
    let scale = 1.0 + st.q.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    if pos > 1e-12 * scale || vel > 1e-12 * scale {
        crate::initial::project_start(system.as_ref(), &mut st).map_err(|e| {
            format!("the state drawn is off the rows (‖Φ‖∞ = {pos:.3e}) and its projection failed ({e})")
        })?;
    }
    let mass = JointCoordinates::new(
        m,
        st.q.clone(),
        st.v.clone(),
        p.t_end,
        String::new(),
        "joint",
    )
    .tree_mass(&st.q);
    let (a, lambda) = accelerations(system.as_ref(), 0.0, &st.q, &st.v)
        .map_err(|e| format!("the KKT solve failed: {e}"))?;
    let pattern = system.jacobian_pattern();
    let mut values = vec![0.0; pattern.entries.len()];
    system.jacobian(0.0, &st.q, &mut values);
    let mut forces = vec![0.0; st.q.len()];
    system.forces(0.0, &st.q, &st.v, &mut forces);
    let sample = Sample {
        jacobian: pattern.to_dense(&values, false),
        forces,
        mass,
        q: st.q,
        v: st.v,
        acceleration: a,
        lambda,
        row_names: kept.iter().map(|&r| names[r].clone()).collect(),
    };
    Ok((sample, kept.iter().map(|&r| kinds_all[r]).collect()))
}
