//! `tune`: the stabilization the tuning guide recommends at a step, for each constraint
//! group of a model, in every engine's parameters (`driftlab tune` on the command line;
//! issue 47, item 5), as JSON text the package decodes into a dict.

use super::input_error;
use driftlab_problems::model::groups::constraint_groups;
use driftlab_problems::model::ModelParams;
use driftlab_report::tuning::{recommended, EngineParams};
use pyo3::prelude::*;
use serde_json::json;

/// The recommendation for the `model` problem with `params` (TOML text) at step `h`.
#[pyfunction]
pub fn tune_json(py: Python<'_>, params: &str, h: f64) -> PyResult<String> {
    if let Some(why) = driftlab_report::tuning::step_refused(h) {
        return Err(input_error(format!("tune: {why}")));
    }
    let table = super::convert::table(Some(params), "params")?;
    let p: ModelParams =
        driftlab_core::params::parse("problem", "model", &table).map_err(input_error)?;
    let groups = py
        .detach(|| constraint_groups(&p))
        .map_err(|e| input_error(format!("tune: {e}")))?;
    if groups.is_empty() {
        return Err(input_error(
            "tune: the model has no loop closure or coupling, so no constraint to stabilize; a tree in joint coordinates holds its joints exactly",
        ));
    }
    let (xi, wn) = recommended(h);
    let e = EngineParams::of(xi, wn, h);
    let groups: Vec<_> = groups
        .iter()
        .map(|g| {
            let cfm: Vec<Option<f64>> = g
                .effective_masses
                .iter()
                .map(|m| (m.is_finite() && *m > 0.0).then(|| e.ode_cfm_times_mass / m))
                .collect();
            let masses: Vec<Option<f64>> = g
                .effective_masses
                .iter()
                .map(|m| m.is_finite().then_some(*m))
                .collect();
            json!({"name": g.name, "kind": g.kind, "rows": g.rows,
                   "effective_masses": masses, "ode_cfm": cfm})
        })
        .collect();
    Ok(json!({
        "h": h,
        "xi": e.xi,
        "omega_n": e.omega_n,
        "baumgarte": {"alpha": e.baumgarte_alpha, "beta": e.baumgarte_beta},
        "mujoco": {"solref": [e.mujoco_solref.0, e.mujoco_solref.1]},
        "pinocchio": {"kp": e.pinocchio_kp, "kd": e.pinocchio_kd},
        "ode": {"erp": e.ode_erp, "cfm_times_mass": e.ode_cfm_times_mass},
        "rapier": {"frequency_hz": e.rapier_hz, "damping_ratio": e.rapier_damping_ratio},
        "groups": groups,
    })
    .to_string())
}
