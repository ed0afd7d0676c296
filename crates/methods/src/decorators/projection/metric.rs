//! The metric every projection measures its correction in (`W = M` or `W = I`), its
//! values for the KKT block, and the step error of a failed projection: the leaf the
//! projection's variants (sequential, symmetric, momentum) share.

use crate::dynamics::linear_error;
use driftlab_core::prelude::*;
use driftlab_solver::SolverError;
use serde::{Deserialize, Serialize};

/// The metric of the projections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// `‖x‖²_M` (mass-orthogonal; seed 001 §3.4.2 "质量加权投影").
    #[default]
    Mass,
    /// `‖x‖²` (Euclidean; the pseudo-inverse projection `Δq = −J⁺C`).
    Euclidean,
}

/// Values of the block `[M entries…, diagonal…]` for the mass metric (`[M, 0]`) and the
/// Euclidean one (`[0, I]`); `mass_vals` always gets `[M, 0]`.
pub(crate) fn fill_metric(
    metric: Metric, n_mass: usize, mass_vals: &mut [f64], metric_vals: &mut [f64],
    s: &dyn MechanicalSystem, q: &[f64],
) {
    s.mass(q, &mut mass_vals[..n_mass]);
    mass_vals[n_mass..].iter_mut().for_each(|x| *x = 0.0);
    match metric {
        Metric::Mass => metric_vals.copy_from_slice(mass_vals),
        Metric::Euclidean => {
            metric_vals[..n_mass].iter_mut().for_each(|x| *x = 0.0);
            metric_vals[n_mass..].iter_mut().for_each(|x| *x = 1.0);
        }
    }
}

pub(crate) fn projection_error(t: f64, e: SolverError) -> StepError {
    match e {
        SolverError::ProjectionDiverged {
            iterations,
            residual,
            tol,
        } => StepError::ProjectionFailed {
            t,
            iterations,
            residual,
            tol,
        },
        other => linear_error(t, other),
    }
}
