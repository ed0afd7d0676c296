//! `driftlab tune FILE --h H`: for each constraint group of a model (a loop closure or a
//! coupling of joint positions), the constraint stabilization the tuning guide recommends
//! at step `h`, written in the parameters of each engine (issue 47, item 5), and with
//! `--write-mjcf OUT` a copy of an MJCF model with MuJoCo's `solref` set on its
//! equalities.
//!
//! The recommendation. Every engine here corrects a constraint error by the same
//! second-order law `Φ̈ + 2ξω_n Φ̇ + ω_n² Φ = 0` (the guide, `driftlab_report::tuning`). Its
//! steady error under a step's truncation falls as `1/ω_n²` (the guide's "where the best
//! cells sit"), so the stiffest law the step can carry is best; critically damped
//! (`ξ = 1`) it is `ω_n = 1/(2h)`:
//!
//! ```text
//! ω_n h = 1/2, ξ = 1:  Taylor update   ω_n h/4 = 0.125 < ξ < 1/(ω_n h) = 2      (stable, margin)
//!                      semi-implicit   ξω_n h = 0.5 < 1 − (ω_n h)²/4 = 0.9375    (stable, margin)
//!                      MuJoCo          τ = 1/(ξω_n) = 2h, MuJoCo's floor with refsafe on
//! ```
//!
//! The engines' parameters, derived in the guide's module doc:
//!
//! ```text
//! Baumgarte (seeds 001, 002)   α = ξω_n, β = ω_n                         [1/s]
//! MuJoCo solref (τ, ζ)         τ = 1/(ξω_n) [s], ζ = ξ                    (d → d_max limit of solimp)
//! Pinocchio corrector          Kp = ω_n² [1/s²], Kd = 2ξω_n [1/s]         (a* = −Kp Φ − Kd Φ̇)
//! ODE/Bullet                   ERP = hω_n/(hω_n + 2ξ), CFM = 1/(m(hω_n² + 2ξω_n))  [s/kg]
//! Box2D, Rapier                f = ω_n/(2π) [Hz], ζ = ξ
//! ```
//!
//! ODE's CFM is per unit of the row's effective mass `m = 1/(Φ_q M⁻¹ Φ_qᵀ)_rr` (MuJoCo's
//! `diagA` is its inverse), computed at the model's start for each row of the group.

use super::{bad, Failure};
use driftlab_core::MechanicalSystem;
use driftlab_problems::model::import::description::Model;
use driftlab_problems::model::{build, load, ModelParams};
use std::path::PathBuf;

/// Arguments of `driftlab tune`.
#[derive(clap::Args, Debug)]
pub struct TuneArgs {
    /// The model file (MJCF, URDF, SDF or TOML) or `robot:ID` for a shipped one.
    pub file: String,
    /// The step the stabilization is tuned for (s).
    #[arg(long)]
    pub h: f64,
    /// Write a copy of the MJCF model with the recommended `solref` on every equality
    /// (a new file: an existing one is refused).
    #[arg(long, value_name = "OUT.xml")]
    pub write_mjcf: Option<PathBuf>,
}

/// The recommended law at step `h`: `(ξ, ω_n)`.
pub fn recommended(h: f64) -> (f64, f64) {
    (1.0, 1.0 / (2.0 * h))
}

/// `driftlab tune`.
pub fn tune(args: &TuneArgs) -> Result<(), Failure> {
    let h = args.h;
    if !(h.is_finite() && h > 0.0) {
        return Err(bad(format!(
            "--h {h}: give the step in seconds, a positive number"
        )));
    }
    let p = params(&args.file);
    let model = load(&p).map_err(bad)?;
    let groups = groups(&model);
    if groups.is_empty() {
        return Err(bad(format!("{}: no loop closure or coupling, so no constraint to stabilize; a tree in joint coordinates holds its joints exactly", args.file)));
    }
    let masses = effective_masses(&p)?;
    let (xi, wn) = recommended(h);
    let (tau, zeta) = driftlab_report::tuning::solref(xi, wn);
    let (erp, cfm_m) = driftlab_report::tuning::erp_cfm(xi, wn, h);
    out!("{} at h = {h:e} s: ξ = {xi}, ω_n = {wn:.6e} /s (ω_n h = 1/2: critically damped, the stiffest law inside the explicit updates' stable regions with margin and at MuJoCo's floor τ = 2h)", args.file);
    out!(
        "  Baumgarte  α = ξω_n = {:.6e} /s, β = ω_n = {wn:.6e} /s",
        xi * wn
    );
    out!("  MuJoCo     solref = \"{tau:.6e} {zeta}\" (timeconst s, dampratio), in the limit d → d_max of solimp");
    out!(
        "  Pinocchio  Kp = ω_n² = {:.6e} /s², Kd = 2ξω_n = {:.6e} /s",
        wn * wn,
        2.0 * xi * wn
    );
    out!("  ODE/Bullet ERP = {erp:.6e}, CFM·m = {cfm_m:.6e} s (CFM per group below)");
    out!(
        "  Box2D, Rapier  frequency = {:.6e} Hz, damping ratio = {xi}",
        wn / (2.0 * std::f64::consts::PI)
    );
    out!(
        "{:<24} {:<10} {:>4}  {:>24}",
        "group",
        "kind",
        "rows",
        "ODE/Bullet CFM [s/kg]"
    );
    let mut row = 0;
    for (name, kind, rows) in &groups {
        let m = &masses[row..row + rows];
        row += rows;
        let cfm: Vec<f64> = m
            .iter()
            .filter(|x| x.is_finite() && **x > 0.0)
            .map(|x| cfm_m / x)
            .collect();
        let range = match (
            cfm.iter().cloned().reduce(f64::min),
            cfm.iter().cloned().reduce(f64::max),
        ) {
            (Some(a), Some(b)) => format!("{a:.3e} – {b:.3e}"),
            _ => "— (rows without mass)".into(),
        };
        out!("{name:<24} {kind:<10} {rows:>4}  {range:>24}");
    }
    if let Some(outp) = &args.write_mjcf {
        write_mjcf(&p, outp, (tau, zeta))?;
        out!(
            "wrote {} with solref = \"{tau:e} {zeta}\" on every equality",
            outp.display()
        );
    }
    Ok(())
}

/// `model` parameters for `file` (`robot:ID` names a shipped model).
fn params(file: &str) -> ModelParams {
    match file.strip_prefix("robot:") {
        Some(id) => ModelParams {
            robot: id.to_string(),
            ..ModelParams::default()
        },
        None => ModelParams {
            file: file.to_string(),
            ..ModelParams::default()
        },
    }
}

/// Each loop closure and coupling: its name, kind and number of rows.
fn groups(model: &Model) -> Vec<(String, String, usize)> {
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

/// The effective mass `1/(Φ_q M⁻¹ Φ_qᵀ)_rr` of each coupling and closure row at the start,
/// in the order of [`groups`] (the unit-norm rows of Euler parameters come first in the
/// system's rows and are skipped).
fn effective_masses(p: &ModelParams) -> Result<Vec<f64>, Failure> {
    let s = build(p).map_err(bad)?;
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
        bad(format!(
            "the mass matrix at the start cannot be factored ({e}): no effective mass"
        ))
    })?;
    let mut out = Vec::new();
    for r in 0..d.m {
        if kinds[r] == "unit-norm" || kinds[r] == "mimic" {
            continue;
        }
        let row = &j[r * d.n..(r + 1) * d.n];
        let mut x = row.to_vec();
        lu.solve(&mut x)
            .map_err(|e| bad(format!("M⁻¹Φ_qᵀ at the start: {e}")))?;
        let a: f64 = row.iter().zip(&x).map(|(u, v)| u * v).sum();
        out.push(if a > 0.0 { 1.0 / a } else { f64::INFINITY });
    }
    Ok(out)
}

/// A copy of the MJCF file of `p` at `out` with `solref` set on every equality of the
/// model file itself (equalities in included files are listed, not changed).
fn write_mjcf(
    p: &ModelParams, out: &std::path::Path, (tau, zeta): (f64, f64),
) -> Result<(), Failure> {
    let (name, text) = driftlab_problems::model::source(p).map_err(bad)?;
    if driftlab_problems::model::root_tag(&text) != Some("mujoco") {
        return Err(bad(format!(
            "--write-mjcf: {name} is not an MJCF file (its root is not <mujoco>)"
        )));
    }
    if out.exists() {
        return Err(bad(format!("--write-mjcf {}: the file exists; give a new file name (tune writes a copy and overwrites nothing)", out.display())));
    }
    let doc = roxmltree::Document::parse(&text).map_err(|e| bad(format!("{name}: {e}")))?;
    let value = format!("{tau:e} {zeta}");
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    for eq in doc
        .root_element()
        .children()
        .filter(|n| n.has_tag_name("equality"))
    {
        for e in eq.children().filter(|n| n.is_element()) {
            match e.attributes().find(|a| a.name() == "solref") {
                Some(a) => edits.push((a.range_value(), value.clone())),
                None => {
                    let at = e.range().start + 1 + e.tag_name().name().len();
                    edits.push((at..at, format!(" solref=\"{value}\"")));
                }
            }
        }
    }
    let mut copy = text.clone();
    for (range, with) in edits.iter().rev() {
        copy.replace_range(range.clone(), with);
    }
    std::fs::write(out, copy).map_err(|e| bad(format!("--write-mjcf {}: {e}", out.display())))
}
