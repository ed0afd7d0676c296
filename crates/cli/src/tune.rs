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
use driftlab_problems::model::groups::{constraint_groups, params_of, ConstraintGroup};
use driftlab_problems::model::ModelParams;
use driftlab_report::tuning::{recommended, EngineParams};
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

/// `driftlab tune`.
pub fn tune(args: &TuneArgs) -> Result<(), Failure> {
    let h = args.h;
    if let Some(why) = driftlab_report::tuning::step_refused(h) {
        return Err(bad(format!("--{why}")));
    }
    let p = params_of(&args.file);
    let groups = constraint_groups(&p).map_err(bad)?;
    if groups.is_empty() {
        return Err(bad(format!("{}: no loop closure or coupling, so no constraint to stabilize; a tree in joint coordinates holds its joints exactly", args.file)));
    }
    let (xi, wn) = recommended(h);
    let e = EngineParams::of(xi, wn, h);
    let (tau, zeta) = e.mujoco_solref;
    out!("{} at h = {h:e} s: ξ = {xi}, ω_n = {wn:.6e} /s (ω_n h = 1/2: critically damped, the stiffest law inside the explicit updates' stable regions with margin and at MuJoCo's floor τ = 2h)", args.file);
    out!(
        "  Baumgarte  α = ξω_n = {:.6e} /s, β = ω_n = {:.6e} /s",
        e.baumgarte_alpha,
        e.baumgarte_beta
    );
    out!("  MuJoCo     solref = \"{tau:.6e} {zeta}\" (timeconst s, dampratio), in the limit d → d_max of solimp");
    out!(
        "  Pinocchio  Kp = ω_n² = {:.6e} /s², Kd = 2ξω_n = {:.6e} /s",
        e.pinocchio_kp,
        e.pinocchio_kd
    );
    out!(
        "  ODE/Bullet ERP = {:.6e}, CFM·m = {:.6e} s (CFM per group below)",
        e.ode_erp,
        e.ode_cfm_times_mass
    );
    out!(
        "  Box2D, Rapier  frequency = {:.6e} Hz, damping ratio = {}",
        e.rapier_hz,
        e.rapier_damping_ratio
    );
    print_groups(&groups, e.ode_cfm_times_mass);
    if let Some(outp) = &args.write_mjcf {
        write_mjcf(&p, outp, (tau, zeta))?;
        out!(
            "wrote {} with solref = \"{tau:e} {zeta}\" on every equality",
            outp.display()
        );
    }
    Ok(())
}

/// The groups' table: name, kind, rows and ODE/Bullet's CFM range over the rows.
fn print_groups(groups: &[ConstraintGroup], cfm_m: f64) {
    out!(
        "{:<24} {:<10} {:>4}  {:>24}",
        "group",
        "kind",
        "rows",
        "ODE/Bullet CFM [s/kg]"
    );
    for g in groups {
        let cfm: Vec<f64> = g
            .effective_masses
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
        out!("{:<24} {:<10} {:>4}  {range:>24}", g.name, g.kind, g.rows);
    }
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
