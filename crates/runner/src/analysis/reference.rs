//! References that know their domain: before a row's error columns are written, the
//! reference they compare with is judged.
//!
//! * Its **declared domain** ([`ReferenceDomain`], from the problem at the cell's
//!   parameters and end time): outside it (a pendulum released so close to the upright
//!   that its elliptic modulus rounds to 1, a published reference at other parameters than
//!   the published ones) the errors would be the reference's, not the method's.
//! * Its **self-check** at the compared points ([`RefResiduals`]: the reference's own
//!   constraint residuals and, for a problem tagged `conservative`, its energy error,
//!   measured during the run): a reference that is off its own constraint manifold, or off
//!   the run's energy where energy is a first integral, is broken whatever it declares. A
//!   damped model's converged trajectory loses energy as the physics does; that is not a
//!   broken reference.
//!
//! Either way the row keeps its residual, energy and cost columns — the run happened — and
//! its `err_*`, `final_err_*` and `scd` columns are null, with the reason in `reference`.

use driftlab_core::{RefResiduals, ReferenceDomain};
use driftlab_results::schema::runs;

/// The largest own residual (or relative energy error) a reference may show at the
/// compared points: an exact solution evaluated in floating point sits on its manifold to
/// a few ε times its scale; a reference 10⁻⁶ off is no reference.
pub const SELF_CHECK_LIMIT: f64 = 1e-6;

/// Judge the reference of `rec` (its metrics filled by the run): the `reference` and
/// `reference_accuracy` columns, and the error columns nulled when it cannot be trusted;
/// the reference's energy is checked only when the problem is `conservative`.
/// Returns whether the errors were kept.
pub fn judge(rec: &mut runs::Row, domain: &ReferenceDomain, conservative: bool) -> bool {
    let undefined = |x: Option<f64>| x.unwrap_or(f64::NAN);
    let own = RefResiduals {
        pos: undefined(rec.ref_pos_residual),
        vel: undefined(rec.ref_vel_residual),
        energy: match conservative {
            true => undefined(rec.ref_energy_rel_error),
            false => f64::NAN,
        },
    };
    let (text, keep) = match domain {
        ReferenceDomain::Absent => (None, true),
        ReferenceDomain::Outside(why) => (Some(format!("outside its domain: {why}")), false),
        ReferenceDomain::Undeclared => match self_check(&own) {
            Some(broken) => (Some(broken), false),
            None => (
                Some("undeclared (no domain declared; its self-check passed)".into()),
                true,
            ),
        },
        ReferenceDomain::Valid { accuracy, basis } => {
            rec.reference_accuracy = Some(*accuracy);
            match self_check(&own) {
                Some(broken) => (Some(broken), false),
                None => (Some(format!("valid: {basis}")), true),
            }
        }
    };
    rec.reference = text;
    if !keep {
        for x in [
            &mut rec.err_q,
            &mut rec.err_v,
            &mut rec.err_lambda,
            &mut rec.final_err_q,
            &mut rec.final_err_v,
            &mut rec.final_err_lambda,
            &mut rec.scd,
        ] {
            *x = None;
        }
    }
    keep
}

/// Why the reference fails its self-check, with its numbers; `None` when it passes (or
/// nothing was compared).
fn self_check(own: &RefResiduals) -> Option<String> {
    let checks = [
        ("‖Φ(t, q_ref)‖∞", own.pos),
        ("‖Φ_q v_ref + Φ_t‖∞", own.vel),
        ("relative energy error", own.energy),
    ];
    let failed: Vec<String> = checks
        .iter()
        .filter(|(_, x)| *x > SELF_CHECK_LIMIT)
        .map(|(what, x)| format!("{what} = {x:.3e}"))
        .collect();
    (!failed.is_empty()).then(|| {
        format!(
            "failed its self-check: {} at the compared points (limit {SELF_CHECK_LIMIT:e}); the error columns would measure the reference",
            failed.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pos: f64) -> runs::Row {
        runs::Row {
            err_q: Some(2.0),
            ref_pos_residual: Some(pos),
            ref_vel_residual: Some(0.0),
            ref_energy_rel_error: Some(1e-15),
            ..runs::Row::default()
        }
    }

    #[test]
    fn a_reference_off_its_manifold_loses_the_error_columns_with_the_reason() {
        let domain = ReferenceDomain::Valid {
            accuracy: 1e-15,
            basis: "formula".into(),
        };
        let mut ok = row(1e-16);
        assert!(judge(&mut ok, &domain, true));
        assert_eq!(ok.err_q, Some(2.0), "kept as measured");
        assert_eq!(ok.reference_accuracy, Some(1e-15));
        let mut broken = row(0.3);
        assert!(!judge(&mut broken, &domain, true));
        assert_eq!(broken.err_q, None);
        let why = broken.reference.unwrap_or_default();
        assert!(why.contains("‖Φ(t, q_ref)‖∞ = 3.000e-1"), "{why}");
    }

    #[test]
    fn a_reference_losing_energy_is_broken_only_where_energy_is_a_first_integral() {
        let domain = ReferenceDomain::Valid {
            accuracy: 1e-9,
            basis: "a converged trace".into(),
        };
        let damped = || {
            let mut r = row(1e-16);
            r.ref_energy_rel_error = Some(4.7e-4);
            r
        };
        let mut conservative = damped();
        assert!(!judge(&mut conservative, &domain, true));
        let why = conservative.reference.unwrap_or_default();
        assert!(why.contains("relative energy error = 4.700e-4"), "{why}");
        let mut dissipative = damped();
        assert!(
            judge(&mut dissipative, &domain, false),
            "damping loses energy"
        );
        assert_eq!(dissipative.err_q, Some(2.0));
        assert_eq!(
            dissipative.ref_energy_rel_error,
            Some(4.7e-4),
            "its ref_energy_rel_error column keeps what was measured"
        );
    }

    #[test]
    fn outside_its_domain_the_errors_are_null_whatever_the_self_check_says() {
        let mut r = row(0.0);
        let domain = ReferenceDomain::Outside("k = 1".into());
        assert!(!judge(&mut r, &domain, true));
        assert_eq!(r.err_q, None);
        assert_eq!(r.reference.as_deref(), Some("outside its domain: k = 1"));
    }
}
