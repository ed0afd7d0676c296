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
//! ```

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
    let rows: Vec<Vec<String>> = hs.into_iter().flat_map(|h| best_cells(map, h)).collect();
    b.paragraph(&format!(
        "What the stored (ξ, ω_n, h) map of experiment {} supports (its Baumgarte cells): cells that ran, cells the \
         exact linear region predicts stable, and the three cells with the smallest max residual at each h. Recommendation: \
         critical damping ξ ≈ 1 with ω_n as large as the explicit region allows (ω_n h well below 1); for implicit engines \
         the same ξ = 1 with τ = 1/ω_n ≥ 2h.",
        map.name
    ));
    b.table(
        &[
            "h",
            "cells ok",
            "predicted stable",
            "best cells",
            "max ‖Φ‖∞",
        ],
        &rows,
    );
}

/// The tuning-map rows at step `h`: the three successful cells with the smallest max
/// position residual, each with the counts of cells that ran and that are predicted stable.
fn best_cells(map: &Results, h: f64) -> Vec<Vec<String>> {
    // The map's Baumgarte cells (a map may carry reference methods beside them).
    let at: Vec<_> = map
        .runs
        .iter()
        .filter(|r| (r.h - h).abs() <= 1e-12 * h)
        .filter(|r| r.method_param("xi").is_some() && r.method_param("omega_n").is_some())
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
    let predicted = at
        .iter()
        .filter(|r| {
            taylor_stable(
                r.method_param("xi").unwrap_or(f64::NAN),
                r.method_param("omega_n").unwrap_or(f64::NAN),
                h,
            )
        })
        .count();
    if good.is_empty() && !at.is_empty() {
        // A step where no cell ran is a finding too (the whole map failed there).
        return vec![vec![
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
