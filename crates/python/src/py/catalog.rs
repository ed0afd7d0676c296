//! The catalogs and `describe`, as JSON text the package decodes into lists and dicts.

use super::input_error;
use driftlab_core::MethodInfo;
use driftlab_runner::Registry;
use pyo3::prelude::*;
use serde_json::{json, Value};

/// Every problem: id, summary, default parameters.
#[pyfunction]
pub fn problems_json() -> String {
    let list: Vec<Value> = Registry::default()
        .problems()
        .iter()
        .map(|p| {
            json!({
                "id": p.id,
                "summary": p.summary,
                "defaults": (p.defaults)(),
            })
        })
        .collect();
    Value::Array(list).to_string()
}

/// Every method: its declared properties (`MethodInfo`) and default parameters.
#[pyfunction]
pub fn methods_json() -> String {
    let list: Vec<Value> = Registry::default()
        .methods()
        .iter()
        .map(|m| method_value(&(m.info)(), (m.defaults)()))
        .collect();
    Value::Array(list).to_string()
}

fn method_value(info: &MethodInfo, defaults: toml::Table) -> Value {
    let mut v = serde_json::to_value(info).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut v {
        map.insert("kind".into(), "method".into());
        map.insert("defaults".into(), json!(defaults));
    }
    v
}

/// A problem (built with `params`, TOML text: its metadata, sizes and the structure of its
/// Jacobian at t₀) or a method (its declared properties).
#[pyfunction]
#[pyo3(signature = (id, params=None))]
pub fn describe_json(py: Python<'_>, id: &str, params: Option<&str>) -> PyResult<String> {
    let registry = Registry::default();
    let table = super::convert::table(params, "params")?;
    if let Ok(entry) = registry.find_problem(id) {
        let problem = entry.instantiate(&table).map_err(input_error)?;
        let structure = py.detach(|| driftlab_problems::inspect::structure(&problem));
        let info = problem.as_system().info();
        let dims = problem.as_system().dims();
        let mut v = json!({
            "kind": "problem",
            "id": info.id,
            "title": info.title,
            "equations": info.equations,
            "citation": info.citation,
            "tags": info.tags,
            "index": info.index,
            "t_end": info.t_end,
            "reference": info.reference,
            "form": problem.as_system().form().name(),
            "n": dims.n,
            "m": dims.m,
            "defaults": (entry.defaults)(),
        });
        if let (Value::Object(map), Ok(s)) = (&mut v, structure) {
            map.insert("nonholonomic_rows".into(), s.nonholonomic.into());
            map.insert("unilateral_rows".into(), s.unilateral.into());
            map.insert("mass_nonzeros".into(), s.mass_nonzeros.into());
            map.insert("jacobian_nonzeros".into(), s.jacobian_nonzeros.into());
            let rank = s.rank.as_ref().map(|r| r.rank);
            map.insert("jacobian_rank".into(), json!(rank));
        }
        return Ok(v.to_string());
    }
    if !table.is_empty() {
        return Err(input_error(format!(
            "params are for problems (their structure at t₀); `{id}` is not a problem"
        )));
    }
    let entry = registry.find_method(id).map_err(|e| {
        input_error(format!(
            "`{id}` is neither a problem nor a method: {e}; list them with driftlab.problems() and driftlab.methods()"
        ))
    })?;
    Ok(method_value(&(entry.info)(), (entry.defaults)()).to_string())
}
