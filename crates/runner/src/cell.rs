//! Expansion of a spec into cells, validated against the catalogs before anything runs.

use crate::error::RunnerError;
use crate::spec::{sweep, Spec};
use driftlab_core::MethodInfo;

/// One unit of work: a problem with parameters, a method with parameters, a step size,
/// a thread count.
#[derive(Clone, Debug)]
pub struct Cell {
    /// Position in the expansion.
    pub index: usize,
    /// Problem id.
    pub problem: String,
    /// Problem parameters (one sweep point).
    pub problem_params: toml::Table,
    /// Method id (catalog).
    pub method_id: String,
    /// Method name as reported: id plus `+projection` when decorated.
    pub method: String,
    /// Method parameters (one sweep point).
    pub method_params: toml::Table,
    /// Projection decorator parameters, if any.
    pub projection: Option<toml::Table>,
    /// Display label of the method variant (method + parameters).
    pub variant: String,
    /// Declared properties of the (decorated) method.
    pub info: MethodInfo,
    /// Step size (snapped to divide `t_end`).
    pub h: f64,
    /// End time.
    pub t_end: f64,
    /// faer threads inside the cell.
    pub threads: usize,
    /// Trace stride.
    pub trace_stride: usize,
    /// Store q, v in traces.
    pub trace_states: bool,
    /// Step budget.
    pub max_steps: usize,
}

fn compact(t: &toml::Table) -> String {
    t.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// JSON text of a TOML table (for the `params` columns).
pub fn json_of(t: &toml::Table) -> String {
    serde_json::to_string(t).unwrap_or_else(|_| "{}".into())
}

impl Cell {
    /// The `params` column: method parameters and projection parameters as JSON.
    pub fn params_json(&self) -> String {
        let mut o = serde_json::Map::new();
        o.insert(
            "method".into(),
            serde_json::to_value(&self.method_params).unwrap_or_default(),
        );
        if let Some(p) = &self.projection {
            o.insert(
                "projection".into(),
                serde_json::to_value(p).unwrap_or_default(),
            );
        }
        serde_json::Value::Object(o).to_string()
    }
}

/// Expand `spec` into cells; every problem and method is built once here so that a bad
/// parameter fails the whole spec before any computation, naming the entry and field.
pub fn expand(spec: &Spec, path: &str) -> Result<Vec<Cell>, RunnerError> {
    let bad = |m: String| RunnerError::Spec {
        path: path.into(),
        message: m,
    };
    let hs = spec.steps.values().map_err(bad)?;
    let mut cells = Vec::new();
    for (pi, ps) in spec.problems.iter().enumerate() {
        for pp in sweep(&ps.params) {
            let prob = driftlab_problems::build(&ps.id, &pp)
                .map_err(|e| bad(format!("[[problems]] entry {} (`{}`): {e}", pi + 1, ps.id)))?;
            let t_end = spec.t_end.unwrap_or_else(|| prob.as_system().info().t_end);
            for (mi, ms) in spec.methods.iter().enumerate() {
                for mp in sweep(&ms.params) {
                    let m = driftlab_methods::build(&ms.id, &mp, ms.projection.as_ref()).map_err(
                        |e| bad(format!("[[methods]] entry {} (`{}`): {e}", mi + 1, ms.id)),
                    )?;
                    let info = m.info();
                    let variant = match &ms.label {
                        Some(l) => l.clone(),
                        None if mp.is_empty() => info.id.clone(),
                        None => format!("{} [{}]", info.id, compact(&mp)),
                    };
                    for &h in &hs {
                        let n = (t_end / h).round().max(1.0);
                        let stride = match spec.trace_dt {
                            Some(dt) => ((dt / (t_end / n)).round() as usize).max(1),
                            None => spec.trace_stride,
                        };
                        for &threads in &spec.threads {
                            cells.push(Cell {
                                index: cells.len(),
                                problem: ps.id.clone(),
                                problem_params: pp.clone(),
                                method_id: ms.id.clone(),
                                method: info.id.clone(),
                                method_params: mp.clone(),
                                projection: ms.projection.clone(),
                                variant: variant.clone(),
                                info: info.clone(),
                                h: t_end / n,
                                t_end,
                                threads,
                                trace_stride: stride,
                                trace_states: spec.trace_states,
                                max_steps: spec.max_steps,
                            });
                        }
                    }
                }
            }
        }
    }
    Ok(cells)
}
