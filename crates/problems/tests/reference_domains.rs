//! Reference domains (`reference_domain`): every catalog problem with an exact solution or
//! a published reference declares where it holds, and the closed forms are pushed to the
//! edges of their declared domains — at random parameters inside (and near the edge) the
//! exact state satisfies the constraints, the velocity constraints and the energy balance
//! to a small multiple of the declared accuracy (scaled by the Jacobians where units
//! differ), matches the initial state, and its v is the time derivative of its q (central
//! differences, their truncation estimated by a second step); just outside, the domain says
//! `Outside`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{ExactSolution, MechanicalSystem, ReferenceDomain};
use driftlab_problems::{build, catalog, Problem};
use proptest::prelude::*;
use std::f64::consts::PI;

/// The tests' own margin over a declared accuracy (which already carries its safety 8).
const K: f64 = 4.0;

/// A few units of round-off, for the evaluation of residuals and energies themselves.
const R: f64 = 8.0 * f64::EPSILON;

fn describe(d: &ReferenceDomain) -> String {
    match d {
        ReferenceDomain::Absent => "absent".into(),
        ReferenceDomain::Undeclared => "UNDECLARED".into(),
        ReferenceDomain::Valid { accuracy, basis } => format!("valid ±{accuracy:.2e}: {basis}"),
        ReferenceDomain::Outside(why) => format!("outside: {why}"),
    }
}

/// Whether a catalog problem's domain at its defaults is acceptable; `Err` says why not.
fn judge_default(id: &str, has_reference: bool, d: &ReferenceDomain) -> Result<(), String> {
    match (d, has_reference) {
        (ReferenceDomain::Valid { accuracy, .. }, true)
            if accuracy.is_finite() && *accuracy >= 0.0 =>
        {
            Ok(())
        }
        (ReferenceDomain::Absent, false) => Ok(()),
        _ => Err(format!(
            "{id} (reference: {has_reference}): {}",
            describe(d)
        )),
    }
}

/// (1) Every catalog problem with an exact solution or a published reference declares its
/// domain at its default t_end — valid there — and one without says absent.
#[test]
fn every_reference_declares_its_domain_at_the_defaults() {
    let mut failures = Vec::new();
    for e in catalog() {
        let p = e.instantiate(&toml::Table::new()).expect(e.id);
        let sys = p.as_system();
        let has = sys.exact(0.0).is_some() || sys.reference().is_some();
        let d = sys.reference_domain(sys.info().t_end);
        println!("{:<24} {}", e.id, describe(&d));
        if let Err(why) = judge_default(e.id, has, &d) {
            failures.push(why);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------
// Generic checks of an exact solution against its declared accuracy.
// ---------------------------------------------------------------------------------------

/// `x ≤ tol`, false for a NaN (which must fail a check).
fn within(x: f64, tol: f64) -> bool {
    x <= tol
}

fn inf(x: &[f64]) -> f64 {
    x.iter().fold(0.0_f64, |m, y| m.max(y.abs()))
}

fn exact(s: &dyn MechanicalSystem, t: f64) -> Result<ExactSolution, String> {
    s.exact(t)
        .ok_or_else(|| format!("no exact solution at t = {t}"))
}

/// Dense row-major `Φ_q(t, q)` (`m × n`).
fn jacobian(s: &dyn MechanicalSystem, t: f64, q: &[f64]) -> Vec<f64> {
    let jp = s.jacobian_pattern();
    let mut jv = vec![0.0; jp.nnz()];
    s.jacobian(t, q, &mut jv);
    jp.to_dense(&jv, false)
}

/// Largest absolute row sum of the row-major `rows × cols` matrix `a` (∞-norm), or of its
/// transpose.
fn row_norm(a: &[f64], rows: usize, cols: usize, transpose: bool) -> f64 {
    let (outer, inner) = if transpose {
        (cols, rows)
    } else {
        (rows, cols)
    };
    (0..outer)
        .map(|i| {
            (0..inner)
                .map(|j| {
                    a[if transpose {
                        j * cols + i
                    } else {
                        i * cols + j
                    }]
                    .abs()
                })
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// `‖∂g/∂x‖∞` of `g: ℝⁿ → ℝᵐ` at `x` by central differences of step `eta`.
fn fd_norm(g: impl Fn(&[f64]) -> Vec<f64>, x: &[f64], eta: f64) -> f64 {
    let m = g(x).len();
    let mut d = vec![0.0; m * x.len()];
    for j in 0..x.len() {
        let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
        xp[j] += eta;
        xm[j] -= eta;
        let (gp, gm) = (g(&xp), g(&xm));
        for i in 0..m {
            d[i * x.len() + j] = (gp[i] - gm[i]) / (2.0 * eta);
        }
    }
    row_norm(&d, m, x.len(), false)
}

/// `|Φ(t, q_ex)|∞ ≤ K (‖Φ_q‖∞ a + R (1 + ‖Φ_q‖∞ |q|∞))`.
fn check_position(
    s: &dyn MechanicalSystem, t: f64, e: &ExactSolution, a: f64,
) -> Result<(), String> {
    let d = s.dims();
    let mut phi = vec![0.0; d.m];
    s.constraints(t, &e.q, &mut phi);
    let jn = row_norm(&jacobian(s, t, &e.q), d.m, d.n, false);
    let tol = K * (jn * a + R * (1.0 + jn * inf(&e.q)));
    (inf(&phi) <= tol).then_some(()).ok_or_else(|| {
        format!(
            "|Φ(t = {t}, q_ex)|∞ = {:.3e} > {tol:.3e} (‖Φ_q‖ = {jn:.3e}, accuracy {a:.3e})",
            inf(&phi)
        )
    })
}

/// `Φ_q(t, q) v + Φ_t(t, q)`.
fn velocity_rows(s: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64]) -> Vec<f64> {
    let d = s.dims();
    let j = jacobian(s, t, q);
    let mut r = vec![0.0; d.m];
    s.phi_t(t, q, &mut r);
    for i in 0..d.m {
        r[i] += (0..d.n).map(|k| j[i * d.n + k] * v[k]).sum::<f64>();
    }
    r
}

/// `|Φ_q v_ex + Φ_t|∞ ≤ K ((‖Φ_q‖ + ‖∂(Φ_q v + Φ_t)/∂q‖) a + R (‖Φ_q‖|v| + |Φ_t|))`; `len`
/// is the motion's length scale (for the difference step in q).
fn check_velocity(
    s: &dyn MechanicalSystem, t: f64, e: &ExactSolution, a: f64, len: f64,
) -> Result<(), String> {
    let d = s.dims();
    let r = velocity_rows(s, t, &e.q, &e.v);
    let jn = row_norm(&jacobian(s, t, &e.q), d.m, d.n, false);
    let gn = fd_norm(|q| velocity_rows(s, t, q, &e.v), &e.q, 1e-6 * len);
    let mut phit = vec![0.0; d.m];
    s.phi_t(t, &e.q, &mut phit);
    let tol = K * ((jn + gn) * a + R * (jn * inf(&e.v) + inf(&phit) + gn * inf(&e.q)));
    (inf(&r) <= tol).then_some(()).ok_or_else(|| {
        format!("|Φ_q v_ex + Φ_t|∞ at t = {t} = {:.3e} > {tol:.3e} (‖Φ_q‖ = {jn:.3e}, ‖∂/∂q‖ = {gn:.3e}, accuracy {a:.3e})", inf(&r))
    })
}

/// The exact state at t = 0 is the initial state, to `K a + R |x|`.
fn check_start(s: &dyn MechanicalSystem, a: f64) -> Result<(), String> {
    let (e, st) = (exact(s, 0.0)?, s.initial_state());
    for (what, x, y) in [("q", &e.q, &st.q), ("v", &e.v, &st.v)] {
        let dev = x
            .iter()
            .zip(y.iter())
            .map(|(p, r)| (p - r).abs())
            .fold(0.0, f64::max);
        let tol = K * a + R * inf(y);
        if !within(dev, tol) {
            return Err(format!(
                "exact {what}(0) is {dev:.3e} off the initial state (tolerance {tol:.3e})"
            ));
        }
    }
    Ok(())
}

/// Central differences of `x(t)` with steps h and 2h at `t`.
fn central(
    x: impl Fn(f64) -> Result<Vec<f64>, String>, t: f64, h: f64,
) -> Result<(Vec<f64>, Vec<f64>), String> {
    let d = |k: f64| -> Result<Vec<f64>, String> {
        let (p, m) = (x(t + k * h)?, x(t - k * h)?);
        Ok(p.iter()
            .zip(&m)
            .map(|(a, b)| (a - b) / (2.0 * k * h))
            .collect())
    };
    Ok((d(1.0)?, d(2.0)?))
}

/// `|v_ex − D_h q_ex| ≤ |D_h − D_2h| + K (a + R|q|)/h + 2ε (t/h)|v|` per entry: the
/// truncation (estimated by the 2h step, which has four times it), the exact solution's
/// own error over the step, and the rounding of `t ± h`.
fn check_derivative(s: &dyn MechanicalSystem, t: f64, tau: f64, a: f64) -> Result<(), String> {
    let h = 1e-5 * tau;
    let t = t.max(2.0 * h);
    let e = exact(s, t)?;
    let (d1, d2) = central(|t| exact(s, t).map(|e| e.q), t, h)?;
    for i in 0..e.v.len() {
        let tol = (d1[i] - d2[i]).abs()
            + K * (a + R * inf(&e.q)) / h
            + 2.0 * f64::EPSILON * (t / h) * e.v[i].abs();
        if !within((e.v[i] - d1[i]).abs(), tol) {
            return Err(format!(
                "v_ex[{i}]({t}) = {:.12e} vs central difference {:.12e} (h = {h:.3e}): off by {:.3e} > {tol:.3e}",
                e.v[i], d1[i], (e.v[i] - d1[i]).abs()
            ));
        }
    }
    Ok(())
}

/// `|H| + Σ|∂H/∂q_i q_i| + Σ|∂H/∂v_i v_i|`: the size of the terms H sums (its rounding
/// scale), with the gradient norms `(|∇_q H|₁, |∇_v H|₁)`.
fn energy_terms(
    s: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64], len: f64, tau: f64,
) -> Option<(f64, f64, f64)> {
    let h = |q: &[f64], v: &[f64]| s.energy(t, q, v).unwrap_or(f64::NAN);
    let grad = |x: &[f64], eta: f64, f: &dyn Fn(&[f64]) -> f64| -> Vec<f64> {
        (0..x.len())
            .map(|j| {
                let (mut p, mut m) = (x.to_vec(), x.to_vec());
                p[j] += eta;
                m[j] -= eta;
                (f(&p) - f(&m)) / (2.0 * eta)
            })
            .collect()
    };
    let gq = grad(q, 1e-6 * len, &|x| h(x, v));
    let gv = grad(v, 1e-6 * len / tau, &|x| h(q, x));
    let terms = h(q, v).abs()
        + gq.iter().zip(q).map(|(g, x)| (g * x).abs()).sum::<f64>()
        + gv.iter().zip(v).map(|(g, x)| (g * x).abs()).sum::<f64>();
    let one = |g: &[f64]| g.iter().map(|x| x.abs()).sum::<f64>();
    Some((terms, one(&gq), one(&gv)))
}

/// `|H(t) − H(0)| ≤ K (|∇_q H|₁ + |∇_v H|₁) a + R (terms(t) + terms(0))` (H(0) at the initial
/// state, as the runner takes it).
fn check_energy(
    s: &dyn MechanicalSystem, t: f64, e: &ExactSolution, a: f64, len: f64, tau: f64,
) -> Result<(), String> {
    let st = s.initial_state();
    let (Some(h0), Some(h)) = (s.energy(0.0, &st.q, &st.v), s.energy(t, &e.q, &e.v)) else {
        return Ok(());
    };
    let (terms, gq, gv) = energy_terms(s, t, &e.q, &e.v, len, tau).unwrap_or_default();
    let (terms0, ..) = energy_terms(s, 0.0, &st.q, &st.v, len, tau).unwrap_or_default();
    let tol = K * (gq + gv) * a + R * (terms + terms0);
    ((h - h0).abs() <= tol).then_some(()).ok_or_else(|| {
        format!(
            "H({t}) − H(0) = {:.3e} > {tol:.3e} (H(0) = {h0:.6e}, |∇H| = {:.3e}, accuracy {a:.3e})",
            h - h0,
            gq + gv
        )
    })
}

/// `M a − f + Φ_qᵀ λ_ex` with `a` the central difference of `v_ex`, against its
/// truncation (2h step), the error of `v_ex` over the step, λ's accuracy and rounding.
fn check_balance(s: &dyn MechanicalSystem, t: f64, tau: f64, a: f64) -> Result<(), String> {
    let (d, h) = (s.dims(), 1e-5 * tau);
    let t = t.max(2.0 * h);
    let e = exact(s, t)?;
    let (a1, a2) = central(|t| exact(s, t).map(|e| e.v), t, h)?;
    let mp = s.mass_pattern();
    let mut mv = vec![0.0; mp.nnz()];
    s.mass_at(t, &e.q, &e.v, &mut mv);
    let mut ma = vec![0.0; d.n];
    mp.mul_vec(&mv, &a1, &mut ma, true);
    let mut dense_m = vec![0.0; d.n * d.n];
    for (&(i, j), x) in mp.entries.iter().zip(&mv) {
        dense_m[i * d.n + j] = *x;
        dense_m[j * d.n + i] = *x;
    }
    let mn = row_norm(&dense_m, d.n, d.n, false);
    let j = jacobian(s, t, &e.q);
    let jtn = row_norm(&j, d.m, d.n, true);
    let mut f = vec![0.0; d.n];
    s.forces(t, &e.q, &e.v, &mut f);
    let jtl: Vec<f64> = (0..d.n)
        .map(|c| (0..d.m).map(|r| j[r * d.n + c] * e.lambda[r]).sum())
        .collect();
    let res: Vec<f64> = (0..d.n).map(|k| ma[k] - f[k] + jtl[k]).collect();
    let trunc = a1
        .iter()
        .zip(&a2)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    let tol = mn * (trunc + K * (a + R * inf(&e.v)) / h + 2.0 * f64::EPSILON * (t / h) * inf(&a1))
        + K * jtn * a
        + R * (inf(&f) + mn * inf(&a1) + jtn * inf(&e.lambda));
    (inf(&res) <= tol).then_some(()).ok_or_else(|| {
        format!(
            "|M a − f + Φ_qᵀλ_ex|∞ at t = {t} = {:.3e} > {tol:.3e} (λ = {:?}, accuracy {a:.3e})",
            inf(&res),
            e.lambda
        )
    })
}

/// One random problem instance: its catalog id and parameters, the time scale τ of its
/// motion (the difference steps are 1e-5 τ), whether its energy is conserved.
#[derive(Clone, Debug)]
struct Case {
    id: &'static str,
    params: toml::Table,
    tau: f64,
    conservative: bool,
}

fn case(id: &'static str, pairs: &[(&str, f64)], tau: f64, conservative: bool) -> Case {
    let params = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), toml::Value::Float(*v)))
        .collect();
    Case {
        id,
        params,
        tau,
        conservative,
    }
}

/// The declared accuracy, or `None` (with the reason) when the case is outside its domain.
fn accuracy_of(p: &Problem) -> Result<Option<f64>, String> {
    let sys = p.as_system();
    match sys.reference_domain(sys.info().t_end) {
        ReferenceDomain::Valid { accuracy, .. } => Ok(Some(accuracy)),
        ReferenceDomain::Outside(_) => Ok(None),
        other => Err(format!("declared {}", describe(&other))),
    }
}

/// Every check at the time `frac · t_end`; `Ok(false)` when the case is outside its
/// declared domain (nothing to check).
fn check_case(c: &Case, frac: f64) -> Result<bool, String> {
    let p = build(c.id, &c.params).map_err(|e| e.to_string())?;
    let Some(a) = accuracy_of(&p)? else {
        return Ok(false);
    };
    let Problem::Mechanical(s) = &p else {
        return Err("not mechanical".into());
    };
    let s = s.as_ref();
    let t_end = s.info().t_end;
    let tau = c.tau.min(t_end);
    let t = frac * t_end;
    let e = exact(s, t)?;
    let len = inf(&e.q).max(inf(&e.v) * tau).max(f64::MIN_POSITIVE);
    check_position(s, t, &e, a)?;
    check_velocity(s, t, &e, a, len)?;
    check_start(s, a)?;
    check_derivative(s, t, tau, a)?;
    if c.conservative {
        check_energy(s, t, &e, a, len, tau)?;
    }
    if s.unilateral().is_none() {
        check_balance(s, t, tau, a)?;
    }
    Ok(true)
}

fn run(c: &Case, frac: f64) -> Result<(), TestCaseError> {
    match check_case(c, frac) {
        Ok(true) => Ok(()),
        Ok(false) => Err(TestCaseError::reject("outside its declared domain")),
        Err(why) => Err(TestCaseError::fail(format!(
            "{} {:?}: {why}",
            c.id, c.params
        ))),
    }
}

// ---------------------------------------------------------------------------------------
// Strategies: random parameters over wide ranges, the phases reaching their domain's edges.
// ---------------------------------------------------------------------------------------

fn log_uniform(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    (lo.log10()..hi.log10()).prop_map(|x| 10f64.powf(x))
}

/// Circle: the phase ω t_end up to 10^10.7 (the edge is 5.6e10).
fn circle_rotor() -> impl Strategy<Value = Case> {
    (
        log_uniform(1e-3, 1e3),
        log_uniform(1e-3, 1e3),
        log_uniform(1e-3, 1e3),
        -2.0..10.7f64,
    )
        .prop_map(|(m, radius, speed, phase)| {
            let w = speed / radius;
            let t_end = 10f64.powf(phase) / w;
            case(
                "circle-rotor",
                &[
                    ("m", m),
                    ("radius", radius),
                    ("speed", speed),
                    ("t_end", t_end),
                ],
                1.0 / w,
                true,
            )
        })
}

/// Rotating rod: Ω t_end up to 705, near cosh's overflow at 710.48 (with r₀ up to 1e3
/// some magnitudes overflow first: those are outside).
fn rotating_rod() -> impl Strategy<Value = Case> {
    (
        log_uniform(1e-3, 1e3),
        log_uniform(1e-2, 1e2),
        log_uniform(1e-3, 1e3),
        0.01..705.0f64,
    )
        .prop_map(|(m, omega, r0, x)| {
            let t_end = x / omega;
            case(
                "rotating-rod",
                &[("m", m), ("omega", omega), ("r0", r0), ("t_end", t_end)],
                1.0 / omega,
                false,
            )
        })
}

/// Knife edge: ω t_end from 10^−5.2 (the slow-spin edge is 6e-6) to 1e9.
fn knife_edge() -> impl Strategy<Value = Case> {
    (
        log_uniform(0.1, 10.0),
        log_uniform(0.01, 10.0),
        log_uniform(0.1, 100.0),
        -89.0..89.0f64,
        -5.2..9.0f64,
        log_uniform(0.01, 1e3),
    )
        .prop_map(|(m, inertia, g, alpha, phase, t_end)| {
            let spin = 10f64.powf(phase) / t_end;
            let pairs = [
                ("m", m),
                ("inertia", inertia),
                ("g", g),
                ("alpha_deg", alpha),
                ("spin", spin),
                ("t_end", t_end),
            ];
            case("knife-edge", &pairs, (2.0 * PI / spin).min(t_end), true)
        })
}

/// Rolling disk: |Ω| t_end from 10^−10.3 (the slow-turn edge is 5e-11), either sign, any
/// rolling rate (0 included).
fn rolling_disk() -> impl Strategy<Value = Case> {
    (
        log_uniform(0.1, 10.0),
        log_uniform(0.01, 10.0),
        -10.3..9.0f64,
        prop::bool::ANY,
        -50.0..50.0f64,
        log_uniform(0.01, 1e3),
    )
        .prop_map(|(m, radius, phase, neg, roll, t_end)| {
            let turn = 10f64.powf(phase) / t_end * if neg { -1.0 } else { 1.0 };
            let tau = (2.0 * PI / turn.abs())
                .min(2.0 * PI / roll.abs().max(1e-300))
                .min(t_end);
            let pairs = [
                ("m", m),
                ("radius", radius),
                ("turn_rate", turn),
                ("roll_rate", roll),
                ("t_end", t_end),
            ];
            case("rolling-disk", &pairs, tau, true)
        })
}

/// Parallel parking: c = W/Ω up to 36 (the quadrature's edge is about 33 over two periods).
fn parallel_parking() -> impl Strategy<Value = Case> {
    (
        log_uniform(0.1, 10.0),
        log_uniform(0.1, 10.0),
        0.01..36.0f64,
        log_uniform(0.1, 10.0),
        0.05..20.0f64,
    )
        .prop_map(|(m, speed, c, period, periods)| {
            let pairs = [
                ("m", m),
                ("speed", speed),
                ("turn_rate", c * 2.0 * PI / period),
                ("period", period),
                ("t_end", periods * period),
            ];
            case("parallel-parking", &pairs, period / (1.0 + c), false)
        })
}

/// A rotating body's time scale from its exact state at 0: `|q|∞ / |v|∞`.
fn spin_time(id: &'static str, pairs: &[(&str, f64)]) -> f64 {
    let c = case(id, pairs, 1.0, true);
    build(id, &c.params)
        .ok()
        .and_then(|p| p.as_system().exact(0.0))
        .map_or(1.0, |e| inf(&e.q) / inf(&e.v).max(1e-300))
}

/// Heavy top: slow precessions (down to 1e-3, whose spin ω₃ ∝ 1/Ω is fast) and any
/// nutation angle.
fn heavy_top() -> impl Strategy<Value = Case> {
    let inertias = (
        log_uniform(0.1, 10.0),
        log_uniform(0.01, 1.0),
        log_uniform(0.01, 1.0),
        log_uniform(0.1, 10.0),
    );
    (
        inertias,
        log_uniform(0.1, 100.0),
        -179.0..179.0f64,
        log_uniform(1e-3, 1e2),
        prop::bool::ANY,
        log_uniform(0.1, 100.0),
    )
        .prop_map(|((m, a, c, length), g, theta, prec, neg, t_end)| {
            let precession = if neg { -prec } else { prec };
            let pairs = [
                ("m", m),
                ("a", a),
                ("c", c),
                ("length", length),
                ("g", g),
                ("theta0_deg", theta),
                ("precession", precession),
                ("t_end", t_end),
            ];
            case("heavy-top", &pairs, spin_time("heavy-top", &pairs), true)
        })
}

/// A torque-free symmetric body (`quaternion-body` or `natural-body`): c = ratio · a.
fn free_body(id: &'static str, ratio: std::ops::Range<f64>) -> impl Strategy<Value = Case> {
    (
        log_uniform(0.01, 10.0),
        ratio,
        -20.0..20.0f64,
        -20.0..20.0f64,
        log_uniform(0.1, 1e3),
    )
        .prop_map(move |(a, ratio, w1, w3, t_end)| {
            let pairs = [
                ("a", a),
                ("c", ratio * a),
                ("w1", w1),
                ("w3", w3),
                ("t_end", t_end),
            ];
            case(id, &pairs, spin_time(id, &pairs), true)
        })
}

/// Prismatic slider: slender to squat blocks, rails from −89° to 89°, gravity either way.
fn prismatic_slider() -> impl Strategy<Value = Case> {
    (
        log_uniform(0.1, 10.0),
        log_uniform(0.1, 10.0),
        log_uniform(1e-3, 10.0),
        -89.0..89.0f64,
        -20.0..20.0f64,
        -5.0..5.0f64,
        log_uniform(0.01, 100.0),
    )
        .prop_map(|(m, length, width, incline, g, speed0, t_end)| {
            let pairs = [
                ("m", m),
                ("length", length),
                ("width", width * length),
                ("incline_deg", incline),
                ("g", g),
                ("speed0", speed0),
                ("t_end", t_end),
            ];
            case("prismatic-slider", &pairs, t_end, true)
        })
}

/// Ball stack at rest: any radius (not only binary fractions), up to 40 balls.
fn ball_stack() -> impl Strategy<Value = Case> {
    (
        1usize..40,
        log_uniform(0.1, 10.0),
        log_uniform(1e-3, 10.0),
        0.0..20.0f64,
        0.0..1.0f64,
        log_uniform(0.01, 100.0),
    )
        .prop_map(|(balls, m, radius, g, e, t_end)| {
            let mut c = case(
                "ball-stack",
                &[
                    ("m", m),
                    ("radius", radius),
                    ("g", g),
                    ("restitution", e),
                    ("t_end", t_end),
                ],
                t_end,
                false,
            );
            c.params
                .insert("balls".into(), toml::Value::Integer(balls as i64));
            c
        })
}

/// The planar chain in joint angles with N = 1 (the pendulum's solution converted).
fn chain_angle() -> impl Strategy<Value = Case> {
    (
        log_uniform(0.1, 10.0),
        log_uniform(0.1, 10.0),
        log_uniform(0.1, 100.0),
        -170.0..170.0f64,
        log_uniform(0.1, 100.0),
    )
        .prop_map(|(m, length, g, theta, t_end)| {
            let mut c = case(
                "planar-chain-angles",
                &[
                    ("m", m),
                    ("length", length),
                    ("g", g),
                    ("theta0_deg", theta),
                    ("t_end", t_end),
                ],
                (length / g).sqrt(),
                true,
            );
            c.params.insert("links".into(), toml::Value::Integer(1));
            c
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, max_global_rejects: 4096, ..ProptestConfig::default() })]

    #[test]
    fn circle_rotor_holds_to_its_accuracy(c in circle_rotor(), frac in 0.0..1.0f64) { run(&c, frac)?; }

    #[test]
    fn rotating_rod_holds_to_its_accuracy(c in rotating_rod(), frac in 0.0..1.0f64) { run(&c, frac)?; }

    #[test]
    fn knife_edge_holds_to_its_accuracy(c in knife_edge(), frac in 0.0..1.0f64) { run(&c, frac)?; }

    #[test]
    fn rolling_disk_holds_to_its_accuracy(c in rolling_disk(), frac in 0.0..1.0f64) { run(&c, frac)?; }

    #[test]
    fn parallel_parking_holds_to_its_accuracy(c in parallel_parking(), frac in 0.0..1.0f64) { run(&c, frac)?; }

    #[test]
    fn heavy_top_holds_to_its_accuracy(c in heavy_top(), frac in 0.0..1.0f64) { run(&c, frac)?; }

    #[test]
    fn quaternion_body_holds_to_its_accuracy(c in free_body("quaternion-body", 0.05..20.0), frac in 0.0..1.0f64) { run(&c, frac)?; }

    #[test]
    fn natural_body_holds_to_its_accuracy(c in free_body("natural-body", 0.01..1.9999), frac in 0.0..1.0f64) { run(&c, frac)?; }

    #[test]
    fn prismatic_slider_holds_to_its_accuracy(c in prismatic_slider(), frac in 0.0..1.0f64) { run(&c, frac)?; }

    #[test]
    fn ball_stack_holds_to_its_accuracy(c in ball_stack(), frac in 0.0..1.0f64) { run(&c, frac)?; }

    #[test]
    fn chain_angle_holds_to_its_accuracy(c in chain_angle(), frac in 0.0..1.0f64) { run(&c, frac)?; }

    #[test]
    fn seed003_holds_to_its_accuracy(c in -1e3..1e3f64, t_end in log_uniform(1e-3, 100.0), frac in 0.0..1.0f64) {
        check_seed003(c, t_end, frac).map_err(TestCaseError::fail)?;
    }
}

/// The index-1 example: `g = x + z − c` within `K(2a + R|c|)`, `x' = f(x, z)` against the
/// central difference of `x_ex`, and the start.
fn check_seed003(c: f64, t_end: f64, frac: f64) -> Result<(), String> {
    let p =
        build("seed003-dae", &toml::toml! { c = c t_end = t_end }).map_err(|e| e.to_string())?;
    let Problem::SemiExplicit(s) = &p else {
        return Err("not index-1".into());
    };
    let ReferenceDomain::Valid { accuracy: a, .. } = s.reference_domain(t_end) else {
        return Err(format!("c = {c}: not valid"));
    };
    let at = |t: f64| {
        s.exact(t)
            .ok_or_else(|| format!("no exact solution at {t}"))
    };
    let (h, t) = (1e-5, (frac * t_end).max(2e-5));
    let e = at(t)?;
    let mut g = [0.0];
    s.g(t, &e.q, &e.lambda, &mut g);
    let tol_g = K * (2.0 * a + R * c.abs());
    let (d1, d2) = central(|t| at(t).map(|e| e.q), t, h)?;
    let mut f = [0.0];
    s.f(t, &e.q, &e.lambda, &mut f);
    let tol_f = (d1[0] - d2[0]).abs() + K * (2.0 * a + (a + R * c.abs()) / h);
    let (e0, st) = (at(0.0)?, s.initial_state());
    let start = (e0.q[0] - st.q[0])
        .abs()
        .max((e0.lambda[0] - st.lambda[0]).abs());
    let checks = [
        ("|g|", g[0].abs(), tol_g),
        ("|f − x'|", (f[0] - d1[0]).abs(), tol_f),
        ("start", start, K * a),
    ];
    match checks.iter().find(|(_, x, tol)| !within(*x, *tol)) {
        Some((what, x, tol)) => Err(format!(
            "seed003-dae c = {c}, t = {t}: {what} = {x:.3e} > {tol:.3e} (accuracy {a:.3e})"
        )),
        None => Ok(()),
    }
}

/// Just inside the edges (deterministic): every check holds at 30 % of t_end and at t_end.
#[test]
fn closed_forms_hold_just_inside_their_edges() {
    let cases = [
        // cosh(709.5) = 6.8e307: λ's bound 2mr₀Ω² cosh is 1.4e308, the last finite one.
        case("rotating-rod", &[("t_end", 709.5)], 1.0, false),
        // The phase edge of the circle is 5.6e10.
        case("circle-rotor", &[("t_end", 2.5e10)], 0.5, true),
        // The knife edge's slow-spin edge is ω t_end ≈ 6e-6, the disk's slow-turn edge 5e-11.
        case("knife-edge", &[("spin", 1e-5), ("t_end", 1.0)], 1.0, true),
        case(
            "rolling-disk",
            &[("turn_rate", 1e-10), ("t_end", 1.0)],
            0.25,
            true,
        ),
        // The quadrature's edge over two periods is c ≈ 33.
        case(
            "parallel-parking",
            &[("turn_rate", 30.0)],
            2.0 * PI / 31.0,
            false,
        ),
    ];
    let failures: Vec<String> = cases
        .iter()
        .flat_map(|c| [0.3, 1.0].map(|f| (c, f)))
        .filter_map(|(c, f)| match check_case(c, f) {
            Ok(true) => None,
            Ok(false) => Some(format!("{} {:?}: declared outside", c.id, c.params)),
            Err(why) => Some(format!("{} {:?} at {f} t_end: {why}", c.id, c.params)),
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

// ---------------------------------------------------------------------------------------
// Just outside: the edges say `Outside`, with their numbers.
// ---------------------------------------------------------------------------------------

/// The domain of catalog problem `id` at `params` (TOML) and its default t_end.
fn domain(id: &str, params: &str) -> ReferenceDomain {
    let p = build(id, &params.parse::<toml::Table>().expect("toml")).expect("builds");
    let sys = p.as_system();
    sys.reference_domain(sys.info().t_end)
}

/// `Ok` when the domain is outside and its reason mentions every `words`.
fn expect_outside(id: &str, params: &str, words: &[&str]) -> Result<(), String> {
    match domain(id, params) {
        ReferenceDomain::Outside(why) if words.iter().all(|w| why.contains(w)) => Ok(()),
        other => Err(format!(
            "{id} {{{params}}}: expected outside mentioning {words:?}, got {}",
            describe(&other)
        )),
    }
}

/// `Ok` when the domain is valid.
fn expect_valid(id: &str, params: &str) -> Result<(), String> {
    match domain(id, params) {
        ReferenceDomain::Valid { .. } => Ok(()),
        other => Err(format!(
            "{id} {{{params}}}: expected valid, got {}",
            describe(&other)
        )),
    }
}

fn all(results: &[Result<(), String>]) {
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn rotating_rod_is_outside_past_the_overflow_of_cosh() {
    all(&[
        expect_valid("rotating-rod", "omega = 1.0\nt_end = 700.0"),
        expect_outside(
            "rotating-rod",
            "omega = 1.0\nt_end = 711.0",
            &["711", "710.48", "cosh"],
        ),
        expect_outside(
            "rotating-rod",
            "omega = 2.0\nt_end = 400.0",
            &["8.0000e2", "overflows"],
        ),
        // cosh itself is finite, r₀ cosh Ωt is not.
        expect_outside(
            "rotating-rod",
            "omega = 1.0\nr0 = 1e10\nt_end = 705.0",
            &["overflow"],
        ),
    ]);
}

#[test]
fn phases_that_keep_no_digits_are_outside() {
    all(&[
        expect_valid("circle-rotor", "t_end = 1e9"),
        expect_outside("circle-rotor", "t_end = 1e11", &["ω·t_end"]),
        expect_outside("quaternion-body", "t_end = 1e10", &["phase"]),
        expect_outside("natural-body", "t_end = 1e10", &["phase"]),
        expect_outside("heavy-top", "t_end = 1e10", &["phase"]),
        // A slow precession needs a fast spin ω₃ ∝ 1/Ω.
        expect_outside("heavy-top", "precession = 1e-12", &["precession"]),
        expect_outside("rolling-disk", "t_end = 1e12", &["Ω·t_end"]),
    ]);
}

#[test]
fn slow_spins_and_turns_whose_formulas_cancel_are_outside() {
    all(&[
        expect_valid("knife-edge", "spin = 1e-5\nt_end = 1.0"),
        expect_outside("knife-edge", "spin = 1e-6\nt_end = 1.0", &["raise spin"]),
        expect_valid("rolling-disk", "turn_rate = 1e-9\nt_end = 1.0"),
        expect_outside(
            "rolling-disk",
            "turn_rate = 1e-11\nt_end = 1.0",
            &["turn_rate"],
        ),
    ]);
}

#[test]
fn parking_quadrature_is_outside_where_its_panels_do_not_resolve_the_turns() {
    all(&[
        expect_valid("parallel-parking", "turn_rate = 20.0"),
        expect_outside(
            "parallel-parking",
            "turn_rate = 40.0",
            &["c = W/Ω = 40", "quadrature"],
        ),
        expect_outside(
            "parallel-parking",
            "period = 1e-8\nt_end = 10.0",
            &["panels"],
        ),
    ]);
}

#[test]
fn physics_and_published_parameters_outside_the_reference_are_outside() {
    all(&[
        expect_outside("ball-stack", "g = -9.81", &["g = -9.81"]),
        expect_valid("ball-stack", "g = 0.0\nradius = 0.3"),
        expect_outside("slider-crank", "start = \"rigid\"", &["start"]),
        expect_outside("slider-crank", "damping = true", &["damping"]),
        expect_outside(
            "slider-crank",
            "nonlinear_stiffness = true",
            &["nonlinear_stiffness"],
        ),
        expect_valid(
            "slider-crank",
            "reference = \"mebdfi-driver\"\nt_end = 0.05",
        ),
        expect_valid("andrews", "t_end = 0.01"),
        expect_valid("car-axis", "t_end = 1.0"),
    ]);
}

/// The wrappers: a start equal to the problem's keeps its domain, another start or a
/// force pulse has none, removed rows keep it.
#[test]
fn wrappers_forward_or_drop_the_domain() {
    let with = |params: &str| domain("circle-rotor", params);
    let own = with("");
    assert!(
        matches!(own, ReferenceDomain::Valid { .. }),
        "{}",
        describe(&own)
    );
    assert_eq!(with("initial = { q = [1.0, 0.0], v = [0.0, 2.0] }"), own);
    assert_eq!(
        with("initial = { q = [0.0, 1.0], v = [-2.0, 0.0] }"),
        ReferenceDomain::Absent
    );
    assert_eq!(
        with("disturbance = { time = 1.0, duration = 0.1, force = [1.0, 0.0] }"),
        ReferenceDomain::Absent
    );
    assert_eq!(with("redundant = \"remove\""), own);
    let andrews = domain("andrews", "redundant = \"remove\"");
    assert!(
        matches!(andrews, ReferenceDomain::Valid { .. }),
        "{}",
        describe(&andrews)
    );
}

/// The snake's RK4 reference: its a-posteriori estimate (the run at 2h) bounds the error
/// measured against a run at h/2, and a run too long for the reference is outside.
#[test]
fn snake_reference_estimate_bounds_its_error() {
    use driftlab_problems::nonholonomic::snake_robot::{
        kinematic_reference, kinematic_reference_step, SnakeRobot, SnakeRobotParams,
    };
    let p = SnakeRobotParams {
        t_end: 4.0,
        ..Default::default()
    };
    let s = SnakeRobot::new(p).unwrap();
    let ReferenceDomain::Valid { accuracy, basis } = s.reference_domain(p.t_end) else {
        panic!("snake-robot at t_end = 4 is not valid");
    };
    let (q, fine) = (
        kinematic_reference(&s, 4.0).unwrap(),
        kinematic_reference_step(&s, 4.0, 5e-5).unwrap(),
    );
    let rel = q
        .iter()
        .zip(&fine)
        .map(|(a, b)| ((a - b) / b).abs())
        .fold(0.0, f64::max);
    assert!(rel <= accuracy, "RK4 at h = 1e-4 is {rel:.3e} off the run at h/2 (relative), beyond its declared {accuracy:.3e} ({basis})");
    all(&[expect_outside("snake-robot", "t_end = 1e3", &["RK4"])]);
}
