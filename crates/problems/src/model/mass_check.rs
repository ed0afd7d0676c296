//! Whether a model's mass matrix can be inverted: a dense Cholesky of M(q) names the first
//! coordinate whose pivot is not positive relative to the largest diagonal entry
//! ([`PIVOT_TOL`]). A joint that moves no mass makes M singular at every q and is refused,
//! named with the links it carries; a pose where M is singular but not elsewhere (iCub's
//! neck at its zero angles: three axes and the head's centre of mass coplanar) is the
//! start's own singularity, listed as a note, so that the model still loads (its runs
//! from that start fail as rows, and `pose_seed` or `q0` start elsewhere).

use super::import::description::{Model, ModelError, ModelNote, Origin};
use super::uniform;
use driftlab_core::{MechanicalSystem, ParamError};

/// A pivot below this fraction of M's largest diagonal entry counts as zero.
pub const PIVOT_TOL: f64 = 1e-13;

/// The first coordinate whose Cholesky pivot of M(q) is not positive: `(k, pivot,
/// largest diagonal)`.
pub fn singular_pivot(sys: &dyn MechanicalSystem, q: &[f64]) -> Option<(usize, f64, f64)> {
    let n = q.len();
    let mp = sys.mass_pattern();
    let mut mv = vec![0.0; mp.nnz()];
    sys.mass(q, &mut mv);
    let mut a = mp.to_dense(&mv, true);
    let scale = (0..n)
        .map(|i| a[i * n + i])
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE);
    for k in 0..n {
        let d = a[k * n + k] - (0..k).map(|i| a[k * n + i].powi(2)).sum::<f64>();
        if d.is_nan() || d <= PIVOT_TOL * scale {
            return Some((k, d, scale));
        }
        let d = d.sqrt();
        a[k * n + k] = d;
        for r in k + 1..n {
            let s = a[r * n + k] - (0..k).map(|i| a[r * n + i] * a[k * n + i]).sum::<f64>();
            a[r * n + k] = s / d;
        }
    }
    None
}

/// `q` moved by up to ±0.3 in every coordinate (a seeded draw): a pose near the start
/// that a singularity of the start alone does not share.
fn nearby(q: &[f64]) -> Vec<f64> {
    let mut s = 0x5eed_u64;
    q.iter()
        .map(|x| x + 0.3 * (2.0 * uniform(&mut s) - 1.0))
        .collect()
}

/// Refuse a mass matrix singular at the start and near it; a singularity of the start
/// alone is returned as a note. `names` are the coordinates' names, `model` (joint
/// coordinates) explains a refusal by the mass each joint carries.
pub fn regular_mass(
    sys: &dyn MechanicalSystem, names: &[String], file: &str, model: Option<&Model>,
) -> Result<Option<ModelNote>, ParamError> {
    let q = sys.initial_state().q;
    let Some((k, d, scale)) = singular_pivot(sys, &q) else {
        return Ok(None);
    };
    let at = Origin {
        element: format!("coordinate `{}`", names[k]),
        line: None,
    };
    if singular_pivot(sys, &nearby(&q)).is_none() {
        return Ok(Some(ModelNote {
            at,
            what: format!("M(q₀) is singular at the start (pivot {d:.3e} against the largest diagonal {scale:.3e}) but regular near it: the start is a singular configuration, where runs fail; give q0 or pose_seed to start elsewhere"),
        }));
    }
    let (what, fix) = match model.and_then(|m| carried(m, &names[k])) {
        Some((0.0, links)) => (
            format!("joint `{}` moves no mass: the links it carries ({links}) have none, so M(q) is singular (pivot {d:.3e} against the largest diagonal {scale:.3e})", names[k]),
            "give those links an <inertial> with mass and inertia, or make the joint fixed".to_string(),
        ),
        Some((mass, _)) => (
            format!("the mass matrix is numerically singular at every pose: pivot {d:.3e} at this coordinate against the largest diagonal {scale:.3e} (below {PIVOT_TOL:e} of it), though the joint carries {mass:.3e} kg"),
            "the masses or inertias this joint moves are too small against the heaviest (check their units), or its axis moves nothing (a rotation about the line through the masses it carries)".to_string(),
        ),
        None => (
            format!("the mass matrix is singular: pivot {d:.3e} at this coordinate against the largest diagonal {scale:.3e}"),
            format!(
                "in body and natural coordinates every body needs its own mass and a full inertia: give link `{}` an <inertial> with both, use coordinates = \"joint\" (a point mass or a massless link is fine there), or, where `describe` lists an inertia no rigid body has, inertia = \"balance\"",
                body_of(&names[k])
            ),
        ),
    };
    Err(ModelError::at(file, &at, what, fix).into())
}

/// The body a coordinate of body (`link:free[4]`) or natural coordinates (`link.u[0]`)
/// belongs to.
fn body_of(coordinate: &str) -> &str {
    match coordinate.split_once(':') {
        Some((body, _)) => body,
        None => coordinate
            .rsplit_once('.')
            .map_or(coordinate, |(body, _)| body),
    }
}

/// The mass a joint carries (its child and every body below it) and the names of those
/// bodies (at most five), for the joint owning coordinate `name` (`joint` or `joint[k]`).
fn carried(model: &Model, name: &str) -> Option<(f64, String)> {
    let joint = name.split('[').next()?;
    let j = model.joint(joint)?;
    let mut below = vec![model.joints[j].child];
    let mut k = 0;
    while k < below.len() {
        let b = below[k];
        below.extend(
            model
                .joints
                .iter()
                .filter(|c| c.parent == Some(b))
                .map(|c| c.child),
        );
        k += 1;
    }
    let mass = below.iter().map(|&b| model.bodies[b].inertia.mass).sum();
    let mut names: Vec<&str> = below
        .iter()
        .take(5)
        .map(|&b| model.bodies[b].name.as_str())
        .collect();
    if below.len() > 5 {
        names.push("…");
    }
    Some((mass, names.join(", ")))
}
