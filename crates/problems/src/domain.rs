//! The shared arithmetic of the catalog's [`ReferenceDomain`] declarations
//! ([`driftlab_core::MechanicalSystem::reference_domain`]).
//!
//! A closed-form solution evaluated in f64 is good to a few units of round-off `ε` times
//! the size of what it computes, and every trigonometric or exponential argument `ωt`
//! carries its own rounding `ε ωt` into the result (the argument is rounded before the
//! function sees it), so the error grows with the phase. Each problem bounds its `q`, `v`
//! and `λ` that way, first order in ε and with the safety factor [`SAFETY`] (8), and
//! names the scale of each quantity; [`judge`] turns the parts into the domain:
//!
//! * **valid** when every bound is finite and at most [`LIMIT`] (10⁻⁴) of its scale — the
//!   pendulum's rule (1e-4 ℓ) — with `accuracy` the largest bound (the error columns
//!   mix q, v and λ in one accuracy);
//! * **outside** otherwise, naming the quantity, its numbers and what to change.

use driftlab_core::{MechanicalSystem, ReferenceDomain};

/// Unit round-off of f64 (2.2e-16).
pub(crate) const EPS: f64 = f64::EPSILON;

/// The safety factor on the first-order rounding estimates (every basis states it).
pub(crate) const SAFETY: f64 = 8.0;

/// A closed form whose error bound exceeds this fraction of its quantity's scale is
/// outside its domain (as the pendulum's: 1e-4 of its length).
pub(crate) const LIMIT: f64 = 1e-4;

/// One line of an error budget: a bound on the absolute error of `what` and the scale
/// of `what` itself (its largest magnitude over `[t₀, t_end]`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Part {
    /// What is bounded (`"q"`, `"v"`, `"λ"`, or a component).
    pub(crate) what: &'static str,
    /// The bound on its absolute error.
    pub(crate) err: f64,
    /// Its scale.
    pub(crate) scale: f64,
}

/// A [`Part`].
pub(crate) fn part(what: &'static str, err: f64, scale: f64) -> Part {
    Part { what, err, scale }
}

/// Valid with the largest bound when every part is finite and within [`LIMIT`] of its
/// scale; else outside, naming the first part that is not, with `formula` (how the bound
/// is derived) and `fix` (what to change).
pub(crate) fn judge(formula: &str, parts: &[Part], fix: &str) -> ReferenceDomain {
    for p in parts {
        if !(p.err.is_finite() && p.scale.is_finite()) {
            return ReferenceDomain::Outside(format!(
                "{formula}: the bound on {} is {:.3e} on a scale of {:.3e} (f64 overflow); {fix}",
                p.what, p.err, p.scale
            ));
        }
        if p.err > LIMIT * p.scale {
            return ReferenceDomain::Outside(format!(
                "{formula}: {} is good to only {:.3e} on a scale of {:.3e} (more than {LIMIT:e} of it); {fix}",
                p.what, p.err, p.scale
            ));
        }
    }
    let accuracy = parts.iter().fold(0.0_f64, |m, p| m.max(p.err));
    let detail: Vec<String> = parts
        .iter()
        .map(|p| format!("{} ±{:.1e}", p.what, p.err))
        .collect();
    ReferenceDomain::Valid {
        accuracy,
        basis: format!("{formula}: {}", detail.join(", ")),
    }
}

/// The sensitivity of multipliers solved from the balance `Φ_qᵀ λ = f − M a` (least
/// squares or the KKT system) to a relative perturbation of every term:
/// `(|f|₂ + ‖M‖_F |a|₂ + ‖Φ_q‖_F |λ|₂) / σ_min(Φ_q)`. Times a few ε it bounds the
/// rounding of λ; infinite when `Φ_q` has lost rank (λ is not unique).
pub(crate) fn multiplier_sensitivity(
    s: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64], a: &[f64], lambda: &[f64],
) -> f64 {
    let d = s.dims();
    let norm = |x: &[f64]| x.iter().map(|y| y * y).sum::<f64>().sqrt();
    let mut f = vec![0.0; d.n];
    s.forces(t, q, v, &mut f);
    let mp = s.mass_pattern();
    let mut mv = vec![0.0; mp.nnz()];
    s.mass_at(t, q, v, &mut mv);
    // Lower triangle stored: off-diagonal entries count twice in the Frobenius norm.
    let m_norm = mp
        .entries
        .iter()
        .zip(&mv)
        .map(|(&(i, j), x)| if i == j { x * x } else { 2.0 * x * x })
        .sum::<f64>()
        .sqrt();
    let jp = s.jacobian_pattern();
    let mut jv = vec![0.0; jp.nnz()];
    s.jacobian(t, q, &mut jv);
    let sigma_min = driftlab_solver::numerical_rank(d.m, d.n, &jp.entries, &jv)
        .ok()
        .and_then(|r| {
            r.singular_values
                .get(d.m.min(d.n).saturating_sub(1))
                .copied()
        })
        .unwrap_or(0.0);
    (norm(&f) + m_norm * norm(a) + norm(&jv) * norm(lambda)) / sigma_min
}

/// `1 − sin(u)/u` without cancellation for small `u` (the secular terms of the knife
/// edge's and similar closed forms, to size the motion they describe).
pub(crate) fn one_minus_sinc(u: f64) -> f64 {
    if u.abs() < 0.5 {
        let u2 = u * u;
        u2 / 6.0 * (1.0 - u2 / 20.0 * (1.0 - u2 / 42.0 * (1.0 - u2 / 72.0)))
    } else {
        1.0 - u.sin() / u
    }
}
