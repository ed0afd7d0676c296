//! An external disturbance (seed 001 §3.5.1 "系统来源：外部扰动：用户交互或碰撞引入的突变"):
//! a generalized force added to a mechanical problem over a time window, through the
//! reserved parameter table
//!
//! ```toml
//! params = { disturbance = { time = 1.0, duration = 1e-3, force = [0.0, 50.0] } }
//! ```
//!
//! `force` has one entry per coordinate (its impulse is `force · duration`); a short
//! window is a blow (a collision), a long one a push (a joint stop's slow load). The
//! constraint forces answer it as they answer any applied force, so in exact arithmetic
//! the constraints still hold; what it does to a method's residuals is discretization —
//! the acceleration jumps inside a step — and the stabilization's answer to that. The
//! disturbed motion has no exact solution or published reference (they are dropped); the
//! energy error then includes the pulse's work.

use crate::adjusted::{Adjusted, Pulse};
use crate::entry::Problem;
use driftlab_core::ParamError;
use serde::Deserialize;

/// The reserved parameter name.
pub const KEY: &str = "disturbance";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DisturbanceParams {
    time: f64,
    duration: f64,
    force: Vec<f64>,
}

/// Take `disturbance` out of a problem's parameter table and parse it.
pub fn split(
    id: &str, params: &mut toml::Table,
) -> Result<Option<(f64, f64, Vec<f64>)>, ParamError> {
    let Some(value) = params.remove(KEY) else {
        return Ok(None);
    };
    let d: DisturbanceParams =
        value
            .try_into()
            .map_err(|e: toml::de::Error| ParamError::Invalid {
                kind: "problem",
                id: id.to_string(),
                message: format!(
                    "`disturbance`: {} (keys: time, duration, force = [one per coordinate])",
                    e.message()
                ),
            })?;
    let bad = |field: &'static str, value: f64, fix: &str| ParamError::OutOfRange {
        id: id.to_string(),
        field,
        value,
        fix: fix.to_string(),
    };
    if !(d.time.is_finite() && d.time >= 0.0) {
        return Err(bad("disturbance.time", d.time, "give a start time ≥ 0"));
    }
    if !(d.duration.is_finite() && d.duration > 0.0) {
        return Err(bad(
            "disturbance.duration",
            d.duration,
            "give a duration > 0",
        ));
    }
    if let Some(f) = d.force.iter().find(|f| !f.is_finite()) {
        return Err(bad("disturbance.force", *f, "give finite forces"));
    }
    Ok(Some((d.time, d.duration, d.force)))
}

/// `problem` with the force pulse added.
pub fn apply(
    id: &str, problem: Problem, (start, duration, force): (f64, f64, Vec<f64>),
) -> Result<Problem, ParamError> {
    let Problem::Mechanical(s) = problem else {
        return Err(ParamError::Invalid {
            kind: "problem",
            id: id.to_string(),
            message: "`disturbance` is a force: it is for mechanical problems".into(),
        });
    };
    let n = s.dims().n;
    if force.len() != n {
        return Err(ParamError::OutOfRange {
            id: id.to_string(),
            field: "disturbance.force",
            value: force.len() as f64,
            fix: format!("give {n} values (one per coordinate)"),
        });
    }
    Ok(Problem::Mechanical(Box::new(Adjusted {
        inner: s,
        state: None,
        keep_exact: false,
        pulse: Some(Pulse {
            start,
            duration,
            force,
        }),
    })))
}
