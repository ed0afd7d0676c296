//! The Baumgarte tuning guide of the report: the same second-order error law written in
//! the parameters of the seeds, MuJoCo, ODE/Bullet and Rapier, converted into each other
//! in a table, with the exact stability region of this workspace's explicit update and
//! the best cells of the stored experiment that declares `[report] tuning_map = true`.
//!
//! ```text
//! Φ̈ + 2ξω_n Φ̇ + ω_n² Φ = 0 = Φ̈ + 2αΦ̇ + β²Φ:   α = ξω_n, β = ω_n          (seeds 001, 002)
//! MuJoCo (d = d_max → 1):  b = 2/τ, k = 1/(τ²ζ²)  ⇒  ζ = ξ, τ = 1/(ξω_n)
//! ODE/Bullet: k_p = m ω_n², k_d = 2mξω_n  ⇒  ERP = hω_n/(hω_n + 2ξ), CFM = 1/(m(hω_n² + 2ξω_n))
//! Rapier: natural frequency f = ω_n/(2π) [Hz], damping ratio ζ = ξ
//! explicit Taylor update stable ⇔ β²h/4 < α < 1/h  ⇔  ω_n h/4 < ξ < 1/(ω_n h)
//! semi-implicit Euler stable   ⇔ 0 < α < 1/h − β²h/4  ⇔  0 < ξω_n h < 1 − (ω_n h)²/4
//! ```
//!
//! A map's rows are grouped by label (`baumgarte`, and a peer's corrector such as
//! `pinocchio taylor`, `pinocchio euler`); each group gets the region of its update (a peer
//! row names it in its parameters, `"scheme": "euler"`).

use crate::book::Book;
use crate::data::Results;

/// ERP and CFM·m_eff of ODE/Bullet for (ξ, ω_n, h).
pub fn erp_cfm(xi: f64, wn: f64, h: f64) -> (f64, f64) {
    (
        h * wn / (h * wn + 2.0 * xi),
        1.0 / (h * wn * wn + 2.0 * xi * wn),
    )
}

/// MuJoCo `solref = (timeconst, dampratio)` for (ξ, ω_n), in the hard limit d = d_max = 1.
pub fn solref(xi: f64, wn: f64) -> (f64, f64) {
    (1.0 / (xi * wn), xi)
}

/// Whether the explicit Taylor update of `baumgarte` is stable (exact Jury region).
pub fn taylor_stable(xi: f64, wn: f64, h: f64) -> bool {
    let (a, b) = (xi * wn, wn);
    b * b * h / 4.0 < a && a < 1.0 / h
}

/// Whether the semi-implicit Euler update `v⁺ = v + h z̈(z, v)`, `z⁺ = z + h v⁺` of the
/// error law is stable (Jury conditions on its characteristic polynomial
/// `λ² − (2 − 2αh − β²h²)λ + (1 − 2αh)`): `0 < α < 1/h − β²h/4`. Unlike the Taylor update
/// it needs no damping (undamped: `ω_n h < 2`).
pub fn euler_stable(xi: f64, wn: f64, h: f64) -> bool {
    let (a, b) = (xi * wn, wn);
    0.0 < a && a < 1.0 / h - b * b * h / 4.0
}

/// Write the guide: the conversions between the engines' parameters, a table of them for
/// typical (ξ, ω_n, h), and the best cells of the stored tuning map if there is one.
pub fn write(b: &mut Book, all: &[Results]) {
    b.heading("Baumgarte tuning guide", 2);
    conversions_text(b);
    conversions_table(b);
    crate::solref_check::write(b, all);
    for map in all
        .iter()
        .filter(|r| r.report.as_ref().is_some_and(|x| x.tuning_map))
    {
        tuning_map_table(b, map);
    }
}

/// The prose and formulas of the guide: where each engine's conversion comes from, and
/// why the seeds' rule of thumb does not make the explicit update stable.
fn conversions_text(b: &mut Book) {
    b.paragraph(
        "Every engine below stabilizes a constraint by the same damped-oscillator law for its error, only in different \
         parameters. Comparing coefficients gives the conversions (MuJoCo: documentation, “Solver parameters”, reference \
         acceleration a_ref = −bΦ̇ − kΦ with b = 2/(d_max·timeconst), k = d/(d_max²·timeconst²·dampratio²), taken in the hard \
         limit d = d_max = 1; ODE: user guide, “soft constraint and constraint force mixing”, a spring k_p and damper k_d on \
         a constraint of effective mass m give ERP = hk_p/(hk_p + k_d), CFM = 1/(hk_p + k_d); Rapier: IntegrationParameters' \
         natural frequency in Hz and damping ratio, from which it derives the same ERP):",
    );
    b.pre(
        "Φ̈ + 2ξω_nΦ̇ + ω_n²Φ = 0  ⇔  Φ̈ + 2αΦ̇ + β²Φ = 0 with α = ξω_n, β = ω_n\n\
         MuJoCo solref = (timeconst τ, dampratio ζ):  ζ = ξ,  τ = 1/(ξω_n)   (ω_n = 1/(τζ))\n\
         ODE/Bullet:  ERP = hω_n/(hω_n + 2ξ),  CFM·m = 1/(hω_n² + 2ξω_n)\n\
         Rapier:  natural_frequency f = ω_n/(2π) Hz,  damping_ratio = ξ\n\
         explicit Taylor update (driftlab `baumgarte`): stable ⇔ β²h/4 < α < 1/h ⇔ ω_n h/4 < ξ < 1/(ω_n h)",
    );
    b.paragraph(
        "The seeds' rule of thumb α, β < 1/(2h) is not sufficient for the explicit update: with little damping (ξ < ω_n h/4) \
         the update pumps energy into the constraint error at any step size (driftlab-methods `baumgarte.rs`, Jury \
         conditions of the error map). Implicit engines (MuJoCo, ODE, Rapier solve for the velocity) are stable for all ERP in \
         (0, 1]; there the guide is about accuracy: ERP near 1 (τ ≲ 2h) corrects in one step and reacts to noise, MuJoCo \
         recommends τ ≥ 2h.",
    );
}

/// The conversion table: for two step sizes and six (ξ, ω_n) pairs, one row of
/// [`conversion_row`].
fn conversions_table(b: &mut Book) {
    let mut rows = Vec::new();
    for h in [1e-3, 1e-2] {
        for (xi, wn) in [
            (1.0, 10.0),
            (1.0, 50.0),
            (1.0, 0.5 / h),
            (0.7, 100.0),
            (0.05, 300.0),
            (3.0, 30.0),
        ] {
            rows.push(conversion_row(xi, wn, h));
        }
    }
    b.table(
        &[
            "h",
            "ξ",
            "ω_n",
            "α=ξω_n",
            "τ (MuJoCo)",
            "ζ",
            "ERP",
            "CFM·m",
            "f Rapier [Hz]",
            "α,β<1/2h",
            "explicit update",
        ],
        &rows,
    );
}

/// One (ξ, ω_n, h) in every engine's parameters: α, MuJoCo's solref, ODE's ERP and CFM,
/// Rapier's frequency, whether the seeds' rule holds and whether the explicit update is stable.
fn conversion_row(xi: f64, wn: f64, h: f64) -> Vec<String> {
    let (tau, zeta) = solref(xi, wn);
    let (erp, cfm) = erp_cfm(xi, wn, h);
    vec![
        format!("{h:.0e}"),
        format!("{xi}"),
        format!("{wn:.0}"),
        format!("{:.3}", xi * wn),
        format!("{:.3e}", tau),
        format!("{zeta}"),
        format!("{erp:.3}"),
        format!("{cfm:.2e}"),
        format!("{:.2}", wn / std::f64::consts::TAU),
        if xi * wn < 0.5 / h && wn < 0.5 / h {
            "yes".into()
        } else {
            "no".into()
        },
        if taylor_stable(xi, wn, h) {
            "stable".into()
        } else {
            "unstable".into()
        },
    ]
}

/// What the stored (ξ, ω_n, h) map supports: per step size, the cells that ran, the cells
/// predicted stable and the three cells with the smallest max residual.
fn tuning_map_table(b: &mut Book, map: &Results) {
    let mut hs: Vec<f64> = map.runs.iter().map(|r| r.h).collect();
    hs.sort_by(f64::total_cmp);
    hs.dedup_by(|a, b| (*a - *b).abs() <= 1e-12 * b.abs());
    let mut groups: Vec<String> = map.runs.iter().filter_map(map_group).collect();
    groups.sort();
    groups.dedup();
    let rows: Vec<Vec<String>> = groups
        .iter()
        .flat_map(|g| hs.iter().flat_map(move |&h| best_cells(map, g, h)))
        .collect();
    b.paragraph(&format!(
        "What the stored (ξ, ω_n, h) map of experiment {} supports, per Baumgarte law (the catalog's and a peer's \
         corrector): cells that ran, cells the exact linear region of its update predicts stable (Taylor: ω_n h/4 < ξ < \
         1/(ω_n h); semi-implicit Euler: 0 < ξω_n h < 1 − (ω_n h)²/4), and the three cells with the smallest max residual \
         at each h. Recommendation: \
         critical damping ξ ≈ 1 with ω_n as large as the explicit region allows (ω_n h well below 1); for implicit engines \
         the same ξ = 1 with τ = 1/ω_n ≥ 2h.",
        map.name
    ));
    b.table(
        &[
            "map",
            "h",
            "cells ok",
            "predicted stable",
            "best cells",
            "max ‖Φ‖∞",
        ],
        &rows,
    );
}

/// The map a row belongs to: its label before the parameters (`baumgarte`, `pinocchio
/// euler`), for the rows with ξ and ω_n.
fn map_group(r: &crate::data::Run) -> Option<String> {
    r.method_param("xi")?;
    r.method_param("omega_n")?;
    Some(
        r.variant
            .split(" [")
            .next()
            .unwrap_or(&r.variant)
            .to_string(),
    )
}

/// The linear stability region of a row's update: semi-implicit Euler where a peer row
/// says `"scheme": "euler"`, the catalog's Taylor update otherwise.
fn predicted_stable(r: &crate::data::Run, h: f64) -> bool {
    let scheme = serde_json::from_str::<serde_json::Value>(&r.params)
        .ok()
        .and_then(|v| v.get("scheme").and_then(|s| s.as_str()).map(str::to_owned));
    let (xi, wn) = (
        r.method_param("xi").unwrap_or(f64::NAN),
        r.method_param("omega_n").unwrap_or(f64::NAN),
    );
    if scheme.as_deref() == Some("euler") {
        euler_stable(xi, wn, h)
    } else {
        taylor_stable(xi, wn, h)
    }
}

/// The rows of map `group` at step `h`: the three successful cells with the smallest max
/// position residual, each with the counts of cells that ran and that are predicted stable.
fn best_cells(map: &Results, group: &str, h: f64) -> Vec<Vec<String>> {
    // The map's cells of this law (a map may carry reference methods beside them).
    let at: Vec<_> = map
        .runs
        .iter()
        .filter(|r| (r.h - h).abs() <= 1e-12 * h)
        .filter(|r| map_group(r).as_deref() == Some(group))
        .collect();
    let ok = at.iter().filter(|r| r.ok).count();
    let mut good: Vec<_> = at
        .iter()
        .filter(|r| r.ok && r.max_pos_residual.is_some())
        .collect();
    good.sort_by(|a, b| {
        a.max_pos_residual
            .unwrap_or(f64::INFINITY)
            .total_cmp(&b.max_pos_residual.unwrap_or(f64::INFINITY))
    });
    let predicted = at.iter().filter(|r| predicted_stable(r, h)).count();
    if good.is_empty() && !at.is_empty() {
        // A step where no cell ran is a finding too (the whole map failed there).
        return vec![vec![
            group.to_string(),
            format!("{h:e}"),
            format!("{}/{}", ok, at.len()),
            format!("{predicted}"),
            "none ran".into(),
            "—".into(),
        ]];
    }
    good.iter()
        .take(3)
        .map(|r| {
            vec![
                group.to_string(),
                format!("{h:e}"),
                format!("{}/{}", ok, at.len()),
                format!("{predicted}"),
                format!(
                    "ξ = {}, ω_n = {}",
                    r.method_param("xi").unwrap_or(f64::NAN),
                    r.method_param("omega_n").unwrap_or(f64::NAN)
                ),
                format!("{:.2e}", r.max_pos_residual.unwrap_or(f64::NAN)),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spectral radius of a real 2 × 2 matrix [[a, b], [c, d]].
    fn radius(a: f64, b: f64, c: f64, d: f64) -> f64 {
        let (tr, det) = (a + d, a * d - b * c);
        let disc = tr * tr / 4.0 - det;
        if disc >= 0.0 {
            (tr / 2.0).abs() + disc.sqrt()
        } else {
            det.sqrt()
        }
    }

    /// Both regions against the spectral radius of their update matrix for the error law
    /// z̈ = −2αż − β²z, on a grid of (ξ, ω_n h) away from the boundary (|ρ − 1| > 1e-9).
    #[test]
    fn the_stability_regions_are_those_of_the_update_matrices() {
        let h = 1e-3;
        let mut checked = 0;
        for i in 0..60 {
            for j in 1..80 {
                let xi = 0.01 * 1.1f64.powi(i);
                let wn = 0.05 * j as f64 / h;
                let (a, b2) = (xi * wn, wn * wn);
                // Taylor: z⁺ = z + hż + ½h²z̈, ż⁺ = ż + hz̈.
                let taylor = radius(
                    1.0 - 0.5 * h * h * b2,
                    h - h * h * a,
                    -h * b2,
                    1.0 - 2.0 * h * a,
                );
                // Semi-implicit Euler: ż⁺ = ż + hz̈, z⁺ = z + hż⁺.
                let euler = radius(
                    1.0 - h * h * b2,
                    h * (1.0 - 2.0 * h * a),
                    -h * b2,
                    1.0 - 2.0 * h * a,
                );
                for (rho, said) in [
                    (taylor, taylor_stable(xi, wn, h)),
                    (euler, euler_stable(xi, wn, h)),
                ] {
                    if (rho - 1.0).abs() > 1e-9 {
                        assert_eq!(rho < 1.0, said, "ξ = {xi}, ω_n h = {}, ρ = {rho}", wn * h);
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 9000, "{checked}");
        // The undamped semi-implicit Euler is stable below ω_n h = 2, the Taylor update never.
        assert!(euler_stable(1e-9, 1.9 / h, h) && !euler_stable(1e-9, 2.1 / h, h));
        assert!(!taylor_stable(1e-9, 0.1 / h, h));
    }
}
