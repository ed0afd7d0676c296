//! The Baumgarte tuning guide of the report: the same second-order error law written in
//! the parameters of the seeds, MuJoCo, ODE/Bullet and Rapier, converted into each other
//! in a table with every parameter's unit, the exact linear region of this workspace's
//! explicit update ([`region`]), and what the stored experiments that declare `[report]
//! tuning_map = true` measured against it ([`map`]).
//!
//! ```text
//! Φ̈ + 2ξω_n Φ̇ + ω_n² Φ = 0 = Φ̈ + 2αΦ̇ + β²Φ:   α = ξω_n [1/s], β = ω_n [1/s]    (seeds 001, 002)
//! MuJoCo (d = d_max → 1):  b = 2/τ, k = 1/(τ²ζ²)  ⇒  ζ = ξ, τ = 1/(ξω_n) [s]
//! ODE/Bullet: k_p = m ω_n², k_d = 2mξω_n  ⇒  ERP = hω_n/(hω_n + 2ξ) [1],
//!             CFM = 1/(hk_p + k_d) = 1/(m(hω_n² + 2ξω_n)) [s/kg],  CFM·m [s]
//! Rapier: natural frequency f = ω_n/(2π) [Hz], damping ratio ζ = ξ
//! Taylor update: stable ⇔ ω_n h/4 < ξ < 1/(ω_n h); marginal on either line (ω_n h < 2)
//! ```
//!
//! CFM's unit: ODE's row is `J v = c + CFM·λ` with λ a force \[N\] and J v a velocity
//! \[m/s\] (ODE user guide, "constraint force mixing"), so CFM is in (m/s)/N = s/kg; with
//! k_p \[N/m\] and k_d \[N s/m\], h k_p + k_d is in N s/m = kg/s and CFM = 1/(hk_p + k_d)
//! agrees. For a rotational row m is an inertia \[kg m²\] and CFM is in s/(kg m²); CFM·m
//! is in seconds either way.
//!
//! Where the best cells sit (derived in `best_cells_text`): the residual of a cell on or
//! inside the region is the step's local error d = (d_z, h·d_ż) filtered by the map A of
//! [`region`]; a slowly varying d leaves the steady error e = (I − A)⁻¹d, whose position
//! part is z = [2a·d_z + (1 − a)·h d_ż]/b² (a = ξω_n h, b = ω_n h; det(I − A) = b²). The
//! Taylor step's own local error of Φ is d_z = h³J/6, d_ż = h²J/2 with the part of Φ⃛ the
//! constant-acceleration step misses, J = Φ_qqq(v,v,v) + 3Φ_qq(v, a) (expand Φ(q⁺) and
//! Φ_q(q⁺)v⁺ to third order), so z = (3 − a)·hJ/(6ω_n²): it falls as 1/ω_n², and to 2/3
//! of its a → 0 value as a rises to 1.
//!
//! A map's rows are grouped by label (`baumgarte`, and a peer's corrector such as
//! `pinocchio taylor`, `pinocchio euler`); each group gets the region of its update (a peer
//! row names it in its parameters, `"scheme": "euler"`).

pub mod map;
pub mod region;

use crate::book::Book;
use crate::data::Results;
use region::Region;

/// The law recommended at step `h` (`driftlab tune`, issue 47 item 5): critically damped,
/// ξ = 1, ω_n = 1/(2h). Its steady error falls as 1/ω_n² ("where the best cells sit"
/// above), so the stiffest law the step can carry is best; at ω_n h = 1/2 it is inside the
/// Taylor update's region (ω_n h/4 = 0.125 < ξ < 1/(ω_n h) = 2) and the semi-implicit one's
/// (ξω_n h = 0.5 < 1 − (ω_n h)²/4 = 0.9375) with margin, and at MuJoCo's floor τ = 2h.
pub fn recommended(h: f64) -> (f64, f64) {
    (1.0, 1.0 / (2.0 * h))
}

/// Why `h` cannot be tuned for, if it cannot: a step is finite and within [1e-60, 1e60] s,
/// so that ω_n = 1/(2h), ω_n² and τ = 2h stay finite and normal (the window of the
/// catalog's physical parameters, `driftlab_core::params::MIN_MAGNITUDE`/`MAX_MAGNITUDE`;
/// h = 1e308 gave τ = ∞).
pub fn step_refused(h: f64) -> Option<String> {
    (!(1e-60..=1e60).contains(&h)).then(|| {
        format!("h = {h}: give the step in seconds, a positive number within [1e-60, 1e60]")
    })
}

/// One error law (ξ, ω_n) at step h in every engine's parameters (the module doc's
/// conversions).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngineParams {
    /// Damping ratio ξ \[1\].
    pub xi: f64,
    /// Natural frequency ω_n \[1/s\].
    pub omega_n: f64,
    /// Baumgarte α = ξω_n \[1/s\] (seeds 001, 002).
    pub baumgarte_alpha: f64,
    /// Baumgarte β = ω_n \[1/s\].
    pub baumgarte_beta: f64,
    /// MuJoCo solref (timeconst τ \[s\], dampratio ζ \[1\]), in the limit d → d_max.
    pub mujoco_solref: (f64, f64),
    /// Pinocchio's corrector a* = −Kp Φ − Kd Φ̇: Kp = ω_n² \[1/s²\].
    pub pinocchio_kp: f64,
    /// Kd = 2ξω_n \[1/s\].
    pub pinocchio_kd: f64,
    /// ODE/Bullet ERP \[1\].
    pub ode_erp: f64,
    /// ODE/Bullet CFM times the row's effective mass \[s\] (CFM = this / m).
    pub ode_cfm_times_mass: f64,
    /// Box2D/Rapier soft-constraint frequency f = ω_n/(2π) \[Hz\].
    pub rapier_hz: f64,
    /// Box2D/Rapier damping ratio ζ = ξ \[1\].
    pub rapier_damping_ratio: f64,
}

impl EngineParams {
    /// The law (ξ, ω_n) at step `h` in every engine's parameters.
    pub fn of(xi: f64, wn: f64, h: f64) -> Self {
        let (erp, cfm_m) = erp_cfm(xi, wn, h);
        Self {
            xi,
            omega_n: wn,
            baumgarte_alpha: xi * wn,
            baumgarte_beta: wn,
            mujoco_solref: solref(xi, wn),
            pinocchio_kp: wn * wn,
            pinocchio_kd: 2.0 * xi * wn,
            ode_erp: erp,
            ode_cfm_times_mass: cfm_m,
            rapier_hz: wn / (2.0 * std::f64::consts::PI),
            rapier_damping_ratio: xi,
        }
    }
}

/// ERP \[1\] and CFM·m_eff \[s\] of ODE/Bullet for (ξ, ω_n \[1/s\], h \[s\]): ERP = hω_n/(hω_n + 2ξ),
/// CFM·m = 1/(hω_n² + 2ξω_n) (module doc; CFM itself is in s/kg).
pub fn erp_cfm(xi: f64, wn: f64, h: f64) -> (f64, f64) {
    (
        h * wn / (h * wn + 2.0 * xi),
        1.0 / (h * wn * wn + 2.0 * xi * wn),
    )
}

/// MuJoCo `solref = (timeconst τ \[s\], dampratio ζ \[1\])` for (ξ, ω_n \[1/s\]), in the hard
/// limit d = d_max = 1: τ = 1/(ξω_n), ζ = ξ.
pub fn solref(xi: f64, wn: f64) -> (f64, f64) {
    (1.0 / (xi * wn), xi)
}

/// Whether the explicit Taylor update of `baumgarte` is stable: strictly inside the exact
/// Jury region ω_n h/4 < ξ < 1/(ω_n h) ([`region::taylor_region`]).
pub fn taylor_stable(xi: f64, wn: f64, h: f64) -> bool {
    region::taylor_region(xi, wn, h) == Region::Stable
}

/// Whether the semi-implicit Euler update `v⁺ = v + h z̈(z, v)`, `z⁺ = z + h v⁺` of the
/// error law is stable: strictly inside `0 < ξω_n h < 1 − (ω_n h)²/4`
/// ([`region::euler_region`]). Unlike the Taylor update it needs no damping (undamped:
/// marginal below `ω_n h = 2`).
pub fn euler_stable(xi: f64, wn: f64, h: f64) -> bool {
    region::euler_region(xi, wn, h) == Region::Stable
}

/// Write the guide: the conversions between the engines' parameters, a table of them for
/// typical (ξ, ω_n, h), MuJoCo's check, and what each stored tuning map measured.
pub fn write(b: &mut Book, all: &[Results]) {
    b.heading("Baumgarte tuning guide", 2);
    conversions_text(b);
    conversions_table(b);
    crate::solref_check::write(b, all);
    let maps: Vec<&Results> = all
        .iter()
        .filter(|r| r.report.as_ref().is_some_and(|x| x.tuning_map))
        .collect();
    if !maps.is_empty() {
        maps_section(b, &maps);
    }
}

/// The prose and formulas of the guide: where each engine's conversion comes from, the
/// units, the exact region of the explicit update, and why the seeds' rule of thumb does
/// not make it stable.
fn conversions_text(b: &mut Book) {
    b.paragraph(
        "Every engine below stabilizes a constraint by the same damped-oscillator law for its error, only in different \
         parameters. Comparing coefficients gives the conversions (MuJoCo: documentation, “Solver parameters”, reference \
         acceleration a_ref = −bΦ̇ − kΦ with b = 2/(d_max·timeconst), k = d/(d_max²·timeconst²·dampratio²), taken in the hard \
         limit d = d_max = 1; ODE: user guide, “soft constraint and constraint force mixing”, a spring k_p [N/m] and damper \
         k_d [N s/m] on a constraint of effective mass m [kg] give ERP = hk_p/(hk_p + k_d), CFM = 1/(hk_p + k_d); Rapier: \
         IntegrationParameters' natural frequency in Hz and damping ratio, from which it derives the same ERP):",
    );
    b.pre(
        "Φ̈ + 2ξω_nΦ̇ + ω_n²Φ = 0  ⇔  Φ̈ + 2αΦ̇ + β²Φ = 0 with α = ξω_n [1/s], β = ω_n [1/s], ξ [1]\n\
         MuJoCo solref = (timeconst τ [s], dampratio ζ [1]):  ζ = ξ,  τ = 1/(ξω_n)   (ω_n = 1/(τζ))\n\
         ODE/Bullet:  ERP = hω_n/(hω_n + 2ξ) [1],  CFM = 1/(m(hω_n² + 2ξω_n)) [s/kg],  CFM·m = 1/(hω_n² + 2ξω_n) [s]\n\
         Rapier:  natural_frequency f = ω_n/(2π) [Hz],  damping_ratio = ξ [1]\n\
         explicit Taylor update (driftlab `baumgarte`), a = ξω_n h, b = ω_n h:\n\
         \x20 stable   ⇔ b²/4 < a < 1  ⇔  ω_n h/4 < ξ < 1/(ω_n h)   (so ω_n h < 2)\n\
         \x20 marginal ⇔ a = 1 or a = b²/4, with 0 < b < 2  (an eigenvalue of modulus exactly 1)",
    );
    b.paragraph(
        "Units: CFM enters ODE's velocity row J v = c + CFM·λ with λ a force [N], so it is in (m/s)/N = s/kg, as \
         1/(hk_p + k_d) with hk_p + k_d in N s/m = kg/s; the table gives CFM·m in seconds (for a rotational row m is an \
         inertia [kg m²] and CFM is in s/(kg m²)). The region is the Jury test of the error map (z, hż) ↦ A(z, hż) with \
         A = [[1 − b²/2, 1 − a], [−b², 1 − 2a]]: p(1) = b² > 0, p(−1) = 4(1 − a) > 0, |det A| = |1 − 2a + b²/2| < 1. On \
         the line ξω_n h = 1 the eigenvalues are −1 and 1 − (ω_n h)²/2, and the position row of A is (1 − b²/2, 0): the \
         position error decays on its own, z⁺ = (1 − (ω_n h)²/2)z, while the velocity error keeps the eigenvalue −1 — \
         bounded, its sign flipping every step, never damped. On ξ = ω_n h/4 both oscillate undamped (a complex pair of \
         modulus 1). For ω_n h ≥ 2 no ξ is stable.",
    );
    b.paragraph(
        "The seeds' rule of thumb α, β < 1/(2h) is not sufficient for the explicit update: with little damping (ξ < ω_n h/4) \
         the update pumps energy into the constraint error at any step size (driftlab-methods `baumgarte.rs`, Jury \
         conditions of the error map). Implicit engines (MuJoCo, ODE, Rapier solve for the velocity) are stable for all ERP in \
         (0, 1]; there the guide is about accuracy: ERP near 1 (τ ≲ 2h) corrects in one step and reacts to noise, MuJoCo \
         recommends τ ≥ 2h.",
    );
}

/// The (ξ, ω_n) pairs of the conversion table at step h: four fixed ones and two tied to
/// h — the seeds' limit α = β = 1/(2h) and the corner ξ = 1, ω_n h = 1 of the region
/// where the tuning maps' best cells sit ([`best_cells_text`]). Pairs that coincide at
/// some h are listed once.
fn conversion_pairs(h: f64) -> Vec<(f64, f64)> {
    let mut pairs: Vec<(f64, f64)> = Vec::new();
    for p in [
        (1.0, 10.0),
        (0.7, 100.0),
        (0.05, 300.0),
        (3.0, 30.0),
        (1.0, 0.5 / h),
        (1.0, 1.0 / h),
    ] {
        let same =
            |q: &(f64, f64)| (q.0 - p.0).abs() <= 1e-12 * p.0 && (q.1 - p.1).abs() <= 1e-9 * p.1;
        if !pairs.iter().any(same) {
            pairs.push(p);
        }
    }
    pairs
}

/// The conversion table: for two step sizes, one row of [`conversion_row`] per pair of
/// [`conversion_pairs`].
fn conversions_table(b: &mut Book) {
    b.table(&CONVERSION_HEADERS, &conversion_rows());
}

/// The conversion table's header: every mapped parameter with its unit.
const CONVERSION_HEADERS: [&str; 11] = [
    "h [s]",
    "ξ [1]",
    "ω_n [1/s]",
    "α = ξω_n [1/s]",
    "τ MuJoCo [s]",
    "ζ [1]",
    "ERP [1]",
    "CFM·m [s]",
    "f Rapier [Hz]",
    "α, β < 1/(2h)",
    "Taylor update",
];

/// The conversion table's rows, at h = 1e-3 s and 1e-2 s.
fn conversion_rows() -> Vec<Vec<String>> {
    [1e-3, 1e-2]
        .into_iter()
        .flat_map(|h| {
            conversion_pairs(h)
                .into_iter()
                .map(move |(xi, wn)| conversion_row(xi, wn, h))
        })
        .collect()
}

/// One (ξ, ω_n, h) in every engine's parameters: α, MuJoCo's solref, ODE's ERP and CFM·m,
/// Rapier's frequency, whether the seeds' rule holds and the explicit update's region.
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
        region::taylor_region(xi, wn, h).word().into(),
    ]
}

/// What the stored (ξ, ω_n, h) maps measured against the region: the cells per region,
/// the best cells with their (ξω_n h, ω_n h), where the best cells sit and why, the cells
/// that ran outside the region and those that failed inside it, and the advice.
fn maps_section(b: &mut Book, maps: &[&Results]) {
    let names: Vec<&str> = maps.iter().map(|m| m.name.as_str()).collect();
    let sliced: Vec<(&Results, Vec<map::Slice>)> =
        maps.iter().map(|m| (*m, map::slices(m))).collect();
    b.paragraph(&format!(
        "What the stored (ξ, ω_n, h) maps of {} measured, per Baumgarte law (the catalog's and a peer's corrector), \
         against the region of the law's update (Taylor as above; semi-implicit Euler: stable ⇔ 0 < ξω_n h < 1 − \
         (ω_n h)²/4, marginal on either line): the cells that ran out of those in each part of the region. A cell that \
         ran lies inside, on the boundary (its error bounded, not damped), or outside with an error that grows too slowly \
         to reach the divergence bound within the run (named below with its growth).",
        names.join(" and ")
    ));
    let rows: Vec<Vec<String>> = sliced
        .iter()
        .flat_map(|(m, ss)| ss.iter().map(move |s| with_map(m, map::count_row(s))))
        .collect();
    b.table(
        &[
            "experiment",
            "law",
            "h [s]",
            "cells",
            "stable: ran",
            "marginal: ran",
            "unstable: ran",
        ],
        &rows,
    );
    b.paragraph(
        "The three cells of smallest max ‖Φ‖∞ at each step, with their position in the region:",
    );
    let rows: Vec<Vec<String>> = sliced
        .iter()
        .flat_map(|(m, ss)| {
            ss.iter()
                .flat_map(move |s| map::best_rows(s).into_iter().map(move |r| with_map(m, r)))
        })
        .collect();
    b.table(
        &[
            "experiment",
            "law",
            "h [s]",
            "rank",
            "ξ [1]",
            "ω_n [1/s]",
            "ξω_n h",
            "ω_n h",
            "linear map",
            "max ‖Φ‖∞",
        ],
        &rows,
    );
    let all: Vec<&map::Slice> = sliced.iter().flat_map(|(_, ss)| ss.iter()).collect();
    best_cells_text(b, &all);
    outliers_text(b, &sliced);
    advice_text(b);
}

/// A table row with the experiment's name in front.
fn with_map(m: &Results, mut row: Vec<String>) -> Vec<String> {
    row.insert(0, m.name.clone());
    row
}

/// Where the best cells sit, derived (module doc) and checked against the maps.
fn best_cells_text(b: &mut Book, slices: &[&map::Slice]) {
    b.paragraph(&format!(
        "Where the best cells sit. On or inside the region the residual is the step's own local error filtered by A. A \
         slowly varying local error d = (d_z, h·d_ż) leaves the steady error e = (I − A)⁻¹d (det(I − A) = (ω_n h)², not \
         zero on the line ξω_n h = 1 either), whose position part is z = [2ξω_n h·d_z + (1 − ξω_n h)·h d_ż]/(ω_n h)². The \
         Taylor step misses J = Φ_qqq(v,v,v) + 3Φ_qq(v,a) of Φ's third derivative: d_z = h³J/6, h·d_ż = h³J/2, so \
         z = (3 − ξω_n h)·hJ/(6ω_n²). The residual falls as 1/ω_n² and, by up to a third, as ξω_n h rises to 1: the best \
         cells lie at the largest ω_n h of the grid below 2 with ξ as large as the grid and ξ ≤ 1/(ω_n h) allow — where the \
         grid reaches the bound, on the line ξω_n h = 1 that the stable region excludes. That is no contradiction: on that \
         line only the velocity error keeps the eigenvalue −1 (bounded, undamped), and the position error, the residual \
         measured here, decays by the factor 1 − (ω_n h)²/2 per step. {}",
        map::corner_check(slices).unwrap_or_default()
    ));
}

/// The cells that ran outside the region and those that failed inside it, per map, with
/// what the rows (and, where stored in [`MEASURED`], a measurement outside them) show.
fn outliers_text(b: &mut Book, sliced: &[(&Results, Vec<map::Slice>)]) {
    for (m, ss) in sliced {
        for s in ss {
            let mut said: Vec<String> = Vec::new();
            said.extend(map::ran_outside(s));
            if let Some(t) = map::failed_inside(s) {
                said.push(t);
                said.extend(
                    MEASURED
                        .iter()
                        .filter(|(name, h, _)| *name == m.name && (h - s.h).abs() <= 1e-12 * s.h)
                        .map(|(_, _, text)| text.to_string()),
                );
            }
            if !said.is_empty() {
                b.paragraph(&format!("{}: {}", m.name, said.join(" ")));
            }
        }
    }
}

/// What runs outside a map's stored rows measured about the cells that failed inside the
/// region: (experiment, h, text), printed after the rows' own account of those cells.
///
/// cassie-loops at h = 5e-4 (2026-12-07, `target/experiments/driftlab` of commit 675dc9c,
/// problem `model` with robot = "cassie", redundant = "remove", redundant_tol = 1e-5,
/// t_end = 0.5; `P` below stands for those `--set`s):
/// * `simulate P --method baumgarte --set xi=1.0 --set omega_n=100.0 --h 5e-4 --trace`:
///   diverged at t = 0.4555, ‖q‖∞ = 1.1992541535899799e11 (the stored row's numbers).
///   The alternating part c_k = v_k − (v_{k−1} + v_{k+1})/2 of the velocities is, from
///   t ≈ 0.4385, the vector (q7, q8) = (−0.64, 0.76) of unit norm — coordinates 7 and 8
///   are left-tarsus-crank-joint and left-crank-rod-joint (`model-dynamics`' joint list)
///   — flipping sign every step, |c_{k+1}|/|c_k| = 1.70 from t = 0.4400 to 0.4480;
///   ‖Φ‖∞ ≤ 4.6e-11 up to t = 0.4445, 5.4e-10 at 0.4475 where |c| = 1.07 rad/s.
/// * `--method taylor` (no stabilization), same h: diverged at t = 0.4605.
/// * baumgarte as above at h = 4.5e-4: ratio 1.36–1.38 per step, diverged at t = 0.4707;
///   h = 3e-4, 3.5e-4, 4e-4 ran to t_end (4e-4 also to t = 1, with --trace: the same
///   vector alternates from t ≈ 0.48, ratio ≤ 1.03 per step falling to 1.000 at t = 0.686,
///   its alternating part peaking at 2.9e-4 rad/s).
/// * A copy of cassie.sdf with the damping of both tarsus-crank joints 1 → 0.5 N m s/rad
///   (`--set file=…`; the unmodified file by `file` reproduces the failure bit for bit):
///   all 14 cells inside the region ran at h = 5e-4, max ‖Φ‖∞ 5.015e-10 (ξ = 1, ω_n =
///   1000) to 3.833e-9 (ξ = 0.3, ω_n = 10); ξ = 3, ω_n = 1000 diverged at t = 0.015.
/// * `--method taylor --projection --set projection.tol=1e-12`, h = 5e-4 (the stored
///   reference, ran): the same mode grows 1.70 per step from t ≈ 0.430 to |c| = 8.15 at
///   t = 0.4410, then left-foot-op joins it (share 0.44) and it decays by 0.57–0.68 per step.
///
/// Derivation of μ: the Taylor update advances a damped mode q̈ = −μq̇ − ω²q of the
/// mechanism by the same map A as the constraint error (a = μh/2, b = ωh); for a damper
/// mode (b ≪ 1) λ = 1 − μh, so λ = −1.70 at h = 5e-4 gives μ = 2.70/h = 5.4e3 1/s and
/// −1.37 at h = 4.5e-4 gives μ = 2.37/h = 5.3e3 1/s, −1.03 at h = 4e-4 gives μ = 2.03/h
/// = 5.1e3 1/s (μ varies along the motion); stability needs μh < 2.
const MEASURED: &[(&str, f64, &str)] = &[(
    "cassie-loops",
    5e-4,
    "Measured outside the stored rows (driftlab simulate of the cell ξ = 1, ω_n = 100 with its trace, which \
     reproduces the row: diverged at t = 0.4555 s): from t ≈ 0.44 s the velocities of left-tarsus-crank-joint and \
     left-crank-rod-joint (−0.64 and 0.76 of the growing vector) flip sign every step and grow by 1.70 per step, while \
     ‖Φ‖∞ stays at 4.6e-11 until that oscillation reaches 1 rad/s (t = 0.4475 s) — the constraint error follows the \
     blow-up, it does not lead it, and the unstabilized taylor diverges at the same h too (t = 0.4605 s). An eigenvalue \
     −1.70 is the region's upper bound broken by the mechanism's own damped mode, which the same explicit update \
     advances: a mode q̈ = −μq̇ − ω²q needs μh/2 < 1, and a damper mode has λ ≈ 1 − μh, so μ ≈ 2.70/h = 5.4e3 1/s \
     (at h = 4.5e-4 the growth is 1.37 per step, μ ≈ 5.3e3 1/s, divergence at t = 0.471 s; at h = 4e-4 at most 1.03 \
     per step between t ≈ 0.48 and 0.69 s, μh just above 2 as μ varies along the motion, and the run reaches t = 1 s). It \
     is the tarsus-crank joints' damper (1 N m s/rad) on that light loop: with it halved in a copy of cassie.sdf all \
     14 cells inside the region run at h = 5e-4 (max ‖Φ‖∞ 5.0e-10 to 3.8e-9) and only the cell outside it \
     (ξ = 3, ω_n = 1000, ξω_n h = 1.5) fails, at t = 0.015 s as stored. The projected taylor reference shows the same \
     mode (growth 1.70 per step up to 8 rad/s at t = 0.441 s); there the foot joint then joins it and it decays.",
)];

/// The advice, in agreement with the region and the measured best cells.
fn advice_text(b: &mut Book) {
    b.paragraph(
        "Advice for the explicit Taylor update (driftlab `baumgarte`; Pinocchio's corrector stepped the same way): take \
         ω_n as large as the step allows, ω_n h up to 1 (the largest the maps tried inside the region; never ω_n h ≥ 2, \
         where no ξ is stable), and ξ between ω_n h/4 and 1/(ω_n h) — the closer ξω_n h is to 1, the smaller the position \
         residual. ξ = 1 at ω_n = 1/h is the corner where the best cells sit, with the velocity error undamped but \
         bounded; ξω_n h a little below 1 damps every mode for a slightly larger residual. The region bounds the \
         constraint error only: the same update also advances the mechanism's own modes, and a mode of damping rate μ \
         (a joint damper c over the mode's inertia I, μ = c/I) needs μh < 2 as well (the failures inside the region \
         above). For implicit engines: ξ = 1 with τ = 1/(ξω_n) ≥ 2h (MuJoCo's advice), i.e. ω_n h ≤ 1/2.",
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Run;

    /// The conversion table lists each (h, ξ, ω_n) once (at h = 1e-2 the seeds' limit
    /// ω_n = 1/(2h) = 50 once coincided with a fixed pair), has a unit in every parameter's
    /// header, and classifies the corner ξ = 1, ω_n h = 1 as marginal.
    #[test]
    fn the_conversion_table_has_no_duplicated_rows_and_units() {
        let rows = conversion_rows();
        let mut keys: Vec<String> = rows.iter().map(|r| r[..3].join(" ")).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "{rows:?}");
        assert_eq!(n, 12);
        for h in CONVERSION_HEADERS.iter().take(9) {
            assert!(h.contains('['), "{h}");
        }
        let corner = rows
            .iter()
            .find(|r| r[..3] == ["1e-2", "1", "100"])
            .unwrap();
        assert_eq!(corner[10], "marginal");
        // ODE: ξ = 1, ω_n = 10, h = 1e-3: ERP = 0.01/2.01, CFM·m = 1/(0.1 + 20) s.
        let (erp, cfm) = erp_cfm(1.0, 10.0, 1e-3);
        assert!((erp - 0.01 / 2.01).abs() < 1e-15 && (cfm - 1.0 / 20.1).abs() < 1e-15);
    }

    /// A cell of a synthetic map: (ξ, ω_n) at h, ran or failed, with its residual.
    fn cell(xi: f64, wn: f64, h: f64, ok: bool, res: f64) -> Run {
        Run {
            variant: format!("baumgarte [omega_n={wn}, xi={xi}]"),
            params: format!("{{\"method\":{{\"omega_n\":{wn},\"xi\":{xi}}}}}"),
            h,
            t_end: 1.0,
            status: if ok { "ok" } else { "failed" }.into(),
            steps: if ok { (1.0 / h) as u64 } else { 10 },
            fail_kind: (!ok).then(|| "diverged".into()),
            fail_time: (!ok).then_some(10.0 * h),
            max_pos_residual: Some(res),
            ..Run::default()
        }
    }

    /// A map with one cell per region part at h = 1e-2 and a reference row: the counts
    /// per region, the best rows (ranked, no two alike), the corner and the outliers.
    #[test]
    fn a_maps_rows_are_counted_per_region_and_never_repeated() {
        let h = 1e-2;
        let mut reference = cell(1.0, 1.0, h, true, 1e-12);
        reference.variant = "rattle".into();
        reference.params = "{}".into();
        let map = Results {
            name: "m".into(),
            runs: vec![
                cell(1.0, 100.0, h, true, 1e-4), // a = 1, b = 1: marginal, the corner
                cell(0.3, 100.0, h, true, 2e-4), // a = 0.3, b = 1: stable
                cell(1.0, 30.0, h, false, 1.0),  // a = 0.3, b = 0.3: stable, failed
                cell(0.01, 10.0, h, true, 0.5),  // a = 0.001 < b²/4 = 0.0025: ran outside
                cell(3.0, 300.0, h, false, 1.0), // a = 9: unstable, failed
                reference,
            ],
            ..Results::default()
        };
        let ss = map::slices(&map);
        assert_eq!(ss.len(), 1);
        let row = map::count_row(&ss[0]);
        assert_eq!(row[2..], ["5", "1/2", "1/1", "1/2"]);
        let best = map::best_rows(&ss[0]);
        assert_eq!(best.len(), 3);
        let mut keys: Vec<String> = best.iter().map(|r| r.join(" ")).collect();
        keys.dedup();
        assert_eq!(keys.len(), 3);
        assert_eq!(best[0][3..8], ["1", "100", "1.000", "1.000", "marginal"]);
        assert!(map::corner_check(&[&ss[0]])
            .unwrap()
            .contains("at 1 of the 1 steps"));
        let outside = map::ran_outside(&ss[0]).unwrap();
        // ρ² = det A = 1 − 2a + b²/2 = 1.003, over 100 steps: 1.003^50 = 1.16.
        assert!(
            outside.contains("ρ^N = 1.2e0 over N = 100 steps"),
            "{outside}"
        );
        let failed = map::failed_inside(&ss[0]).unwrap();
        assert!(
            failed.contains("1 of the 2 cells inside the region failed (diverged)"),
            "{failed}"
        );
        assert!(failed.contains("rattle ran"), "{failed}");
    }
}
