//! Typed parameters from TOML tables: the one place where names from a spec file meet
//! Rust types. Unknown keys are rejected (`#[serde(deny_unknown_fields)]` on every
//! parameter struct), and the error names the field.

use crate::error::ParamError;
use serde::{de::DeserializeOwned, Serialize};

/// Deserialize a parameter table into `T`, naming `kind` and `id` in the error.
pub fn parse<T: DeserializeOwned>(
    kind: &'static str, id: &str, table: &toml::Table,
) -> Result<T, ParamError> {
    T::deserialize(toml::Value::Table(table.clone())).map_err(|e| ParamError::Invalid {
        kind,
        id: id.to_string(),
        message: e.to_string().trim().replace('\n', " "),
    })
}

/// The defaults of a parameter struct as a TOML table (for `describe` and manifests).
pub fn defaults<T: Serialize + Default>() -> toml::Table {
    toml::Table::try_from(T::default()).unwrap_or_default()
}

/// Smallest magnitude [`bounded_positive`] and [`nonzero`] accept. Products of up to five
/// parameters within [`MIN_MAGNITUDE`, `MAX_MAGNITUDE`] lie within `[1e-300, 1e300]`,
/// inside f64's normal range (≈ 2.2e-308 … 1.8e308): a square `ℓ²`, an energy `½ m v²`
/// or an inertia `m a²` neither underflows to 0 (a 0/0 later) nor overflows to ∞.
pub const MIN_MAGNITUDE: f64 = 1e-60;

/// Largest magnitude [`bounded_positive`], [`finite`] and [`nonzero`] accept (see
/// [`MIN_MAGNITUDE`] for why).
pub const MAX_MAGNITUDE: f64 = 1e60;

/// Check that `value` is finite and positive (no magnitude window: for tolerances and
/// gains, which enter no products with other parameters; a physical size takes
/// [`bounded_positive`]).
pub fn positive(id: &str, field: &'static str, value: f64) -> Result<(), ParamError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(out_of_range(id, field, value, "give a finite value > 0"))
    }
}

/// Check that `value` is finite, positive and within
/// [[`MIN_MAGNITUDE`], [`MAX_MAGNITUDE`]]: a physical size (length, mass, rate, gravity)
/// whose squares and products with a few other parameters must stay normal f64 numbers.
pub fn bounded_positive(id: &str, field: &'static str, value: f64) -> Result<(), ParamError> {
    let ok = (MIN_MAGNITUDE..=MAX_MAGNITUDE).contains(&value);
    windowed(
        id,
        field,
        value,
        ok,
        "a finite value > 0",
        "its squares and products",
    )
}

/// Check that `value` is 0 or has a magnitude within [[`MIN_MAGNITUDE`],
/// [`MAX_MAGNITUDE`]]: a parameter that may be zero or negative (an angle, a velocity, an
/// offset) and enters products. A nonzero magnitude below the window is refused too: its
/// products with other parameters would underflow into subnormal numbers or 0, where
/// f64 carries no relative precision.
pub fn finite(id: &str, field: &'static str, value: f64) -> Result<(), ParamError> {
    let ok = value == 0.0 || (MIN_MAGNITUDE..=MAX_MAGNITUDE).contains(&value.abs());
    windowed(
        id,
        field,
        value,
        ok,
        "a finite value, 0 or",
        "its squares and products",
    )
}

/// Check that `value` is finite, nonzero and `|value|` within [[`MIN_MAGNITUDE`],
/// [`MAX_MAGNITUDE`]]: a signed rate the problem divides by.
pub fn nonzero(id: &str, field: &'static str, value: f64) -> Result<(), ParamError> {
    let ok = (MIN_MAGNITUDE..=MAX_MAGNITUDE).contains(&value.abs());
    windowed(
        id,
        field,
        value,
        ok,
        "a finite value ≠ 0",
        "the problem divides by it, and its products",
    )
}

/// `Ok` when `ok`, else the refusal of `field` = `value` asking for `what` within the
/// magnitude window, because `why` (…with other parameters) must stay normal numbers.
fn windowed(
    id: &str, field: &'static str, value: f64, ok: bool, what: &str, why: &str,
) -> Result<(), ParamError> {
    if ok {
        return Ok(());
    }
    let fix = format!(
        "give {what} with magnitude between {MIN_MAGNITUDE:e} and {MAX_MAGNITUDE:e} ({why} \
         with other parameters must stay normal f64 numbers)"
    );
    Err(out_of_range(id, field, value, &fix))
}

/// A relation between several parameters fails: [`ParamError::Inconsistent`] naming every
/// one of `fields` with its value, and `fix`, the relation to satisfy.
pub fn inconsistent(
    id: &str, fields: &[(&'static str, f64)], fix: impl Into<String>,
) -> ParamError {
    ParamError::Inconsistent {
        id: id.to_string(),
        fields: fields.to_vec(),
        fix: fix.into(),
    }
}

fn out_of_range(id: &str, field: &'static str, value: f64, fix: &str) -> ParamError {
    ParamError::OutOfRange {
        id: id.to_string(),
        field,
        value,
        fix: fix.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_keep_the_fix_text_and_refuse_outside_the_window() {
        for x in [MIN_MAGNITUDE, 1.0, MAX_MAGNITUDE] {
            assert!(bounded_positive("p", "length", x).is_ok(), "{x}");
        }
        for (x, shown) in [
            (-2.0, "-2"),
            (0.0, "0"),
            (1e-200, "1e-200"),
            (f64::NAN, "NaN"),
        ] {
            let msg = bounded_positive("p", "length", x)
                .err()
                .map(|e| e.to_string());
            let want = format!("parameter `length` of `p` = {shown} is invalid: give a finite value > 0 with magnitude between 1e-60 and 1e60");
            assert!(
                msg.as_deref().is_some_and(|m| m.starts_with(&want)),
                "{msg:?}"
            );
        }
        assert!(bounded_positive("p", "m", 1e61).is_err());
        assert!(bounded_positive("p", "m", f64::INFINITY).is_err());
    }

    #[test]
    fn finite_takes_zero_and_signs_within_the_window() {
        for x in [0.0, -0.0, -1.0, 1e-60, -1e60] {
            assert!(finite("p", "v0", x).is_ok(), "{x}");
        }
        for x in [1e-320, -1e-200, 1e200, f64::NAN, f64::NEG_INFINITY] {
            assert!(finite("p", "v0", x).is_err(), "{x}");
        }
        assert!(nonzero("p", "rate", -2.0).is_ok());
        for x in [0.0, 1e-320, f64::NAN, 1e200] {
            assert!(nonzero("p", "rate", x).is_err(), "{x}");
        }
    }

    #[test]
    fn a_relation_names_every_parameter_in_it() {
        let e = inconsistent(
            "pendulum-limits",
            &[
                ("theta_min_deg", 0.0),
                ("theta_max_deg", 0.0),
                ("theta0_deg", 60.0),
            ],
            "release between the stops",
        );
        assert_eq!(
            e.to_string(),
            "parameters `theta_min_deg` = 0, `theta_max_deg` = 0, `theta0_deg` = 60 of \
             `pendulum-limits` are inconsistent: release between the stops"
        );
    }
}
