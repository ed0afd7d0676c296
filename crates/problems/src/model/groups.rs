//! A model's constraint groups as a stabilization sees them: each loop closure and each
//! coupling of joint positions, with its rows' effective masses at the start,
//! `m_r = 1/(Φ_q M⁻¹ Φ_qᵀ)_rr` (the inertia a row's correcting force acts against; MuJoCo's
//! `diagA` is its inverse, ODE's CFM is per unit of it). `driftlab tune` and the Python
//! `tune` translate a stabilization law into each engine's parameters for these groups.

use super::import::description::Model;
use super::{build, load, ModelParams};
use driftlab_core::MechanicalSystem;

/// One loop closure or coupling of a model.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstraintGroup {
    /// Its name in the model file.
    pub name: String,
    /// `coupling`, or the closure's kind (`connect`, `weld`, …).
    pub kind: String,
    /// Its constraint rows.
    pub rows: usize,
    /// Each row's effective mass at the start (∞ where the row meets no mass).
    pub effective_masses: Vec<f64>,
}

/// `model` parameters for `target`: a model file, or `robot:ID` for a shipped model.
pub fn params_of(target: &str) -> ModelParams {
    match target.strip_prefix("robot:") {
        Some(id) => ModelParams {
            robot: id.to_string(),
            ..ModelParams::default()
        },
        None => ModelParams {
            file: target.to_string(),
            ..ModelParams::default()
        },
    }
}

/// The constraint groups of the model of `p` with their effective masses; empty for a
/// model without closures or couplings (a tree in joint coordinates holds its joints
/// exactly).
pub fn constraint_groups(p: &ModelParams) -> Result<Vec<ConstraintGroup>, String> {
    let model = load(p).map_err(|e| e.to_string())?;
    let named = names(&model);
    if named.is_empty() {
        return Ok(Vec::new());
    }
    let masses = effective_masses(p)?;
    let mut row = 0;
    let mut out = Vec::new();
    for (name, kind, rows) in named {
        let m = masses.get(row..row + rows).ok_or_else(|| {
            format!(
                "{} constraint rows after the unit-norm rows, fewer than the groups' {}",
                masses.len(),
                row + rows
            )
        })?;
        row += rows;
        out.push(ConstraintGroup {
            name,
            kind,
            rows,
            effective_masses: m.to_vec(),
        });
    }
    Ok(out)
}

/// Each coupling and loop closure: name, kind and rows, in the system's row order.
fn names(model: &Model) -> Vec<(String, String, usize)> {
    let mut out: Vec<(String, String, usize)> = model
        .couplings
        .iter()
        .map(|c| (c.name.clone(), "coupling".to_string(), 1))
        .collect();
    out.extend(
        model
            .closures
            .iter()
            .map(|c| (c.name.clone(), c.kind.name().to_string(), c.kind.rows())),
    );
    out
}

/// The effective mass of each coupling and closure row at the start, in the order of
/// [`names`] (the unit-norm rows of Euler parameters and mimic rows, which come first in
/// the system's rows, are skipped).
fn effective_masses(p: &ModelParams) -> Result<Vec<f64>, String> {
    let s = build(p).map_err(|e| e.to_string())?;
    let d = s.dims();
    let q = s.initial_state().q;
    let mut mass = vec![0.0; s.mass_pattern().entries.len()];
    s.mass(&q, &mut mass);
    let m = s.mass_pattern().to_dense(&mass, true);
    let jp = s.jacobian_pattern();
    let mut jv = vec![0.0; jp.entries.len()];
    s.jacobian(0.0, &q, &mut jv);
    let j = jp.to_dense(&jv, false);
    let kinds = s.row_kinds();
    let lu = driftlab_solver::dense::DenseLu::factor(d.n, &m).map_err(|e| {
        format!("the mass matrix at the start cannot be factored ({e}): no effective mass")
    })?;
    let mut out = Vec::new();
    for r in 0..d.m {
        if kinds[r] == "unit-norm" || kinds[r] == "mimic" {
            continue;
        }
        let row = &j[r * d.n..(r + 1) * d.n];
        let mut x = row.to_vec();
        lu.solve(&mut x)
            .map_err(|e| format!("M⁻¹Φ_qᵀ at the start: {e}"))?;
        let a: f64 = row.iter().zip(&x).map(|(u, v)| u * v).sum();
        out.push(if a > 0.0 { 1.0 / a } else { f64::INFINITY });
    }
    Ok(out)
}
