//! The `[[order_notes]]` tables of an experiment spec: why an observed order does not
//! match the declared one — a cited order reduction, a start-up layer, a phase error over a
//! long run, a reference that is itself numerical. The verdict (matches, reduced,
//! superconvergent, pre-asymptotic, no window) is computed by the report from the fit; a
//! note only explains it, and the report shows a note on a row only when the row does not
//! match.
//!
//! ```toml
//! [[order_notes]]
//! select = ["gauss-index3 [stages=3]"]   # every text in the row's key
//! quantity = "q"                          # optional: q, v or lambda (default: all three)
//! reason = "order s + 1 in q for odd s on the index-3 form (Hairer, Lubich & Roche 1989)"
//! ```
//!
//! A row's key is `problem problem_params variant` (as for the claims' order measures).

use serde::{Deserialize, Serialize};

/// The order fit's parameters (driftlab-runner `orders`), here so that the report can state
/// them. Errors below this are treated as round-off (∞-norm errors of O(1) quantities).
pub const ROUNDOFF_FLOOR: f64 = 1e-11;
/// Half-width of the band that the fit window's local slopes must stay in.
pub const SLOPE_BAND: f64 = 0.25;

/// One explanation of observed orders.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderNote {
    /// Texts that must all occur in the row's key.
    pub select: Vec<String>,
    /// `q`, `v` or `lambda` (absent: every quantity of the selected rows).
    pub quantity: Option<String>,
    /// One line: why the order differs, with its source.
    pub reason: String,
}

impl OrderNote {
    /// Check the fields of the `index`-th (1-based) note; the message names the field and
    /// the fix.
    pub fn validate(&self, index: usize) -> Result<(), String> {
        if self.select.is_empty() || self.select.iter().any(|s| s.trim().is_empty()) {
            return Err(format!(
                "[[order_notes]] entry {index}: `select` needs at least one non-empty text of the row key (\"problem params variant\")"
            ));
        }
        if let Some(q) = &self.quantity {
            if !["q", "v", "lambda"].contains(&q.as_str()) {
                return Err(format!(
                    "[[order_notes]] entry {index}: quantity = \"{q}\" is not one of q, v, lambda"
                ));
            }
        }
        if self.reason.trim().is_empty() {
            return Err(format!(
                "[[order_notes]] entry {index}: `reason` is empty; say in one line why the order differs, with its source"
            ));
        }
        Ok(())
    }

    /// Whether this note explains the order of `quantity` on the row keyed `key`.
    pub fn explains(&self, key: &str, quantity: &str) -> bool {
        self.quantity.as_deref().is_none_or(|q| q == quantity)
            && self.select.iter().all(|s| key.contains(s.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(q: Option<&str>, reason: &str) -> OrderNote {
        OrderNote {
            select: vec!["gauss-index3 [stages=3]".into()],
            quantity: q.map(String::from),
            reason: reason.into(),
        }
    }

    #[test]
    fn a_note_matches_its_rows_and_quantities_only() {
        let n = note(Some("q"), "reduction");
        let key = "pendulum {\"length\":2.0} gauss-index3 [stages=3]";
        assert!(n.explains(key, "q"));
        assert!(!n.explains(key, "v"));
        assert!(!n.explains("pendulum {} gauss-index3 [stages=2]", "q"));
        assert!(note(None, "r").explains(key, "lambda"));
    }

    #[test]
    fn bad_notes_name_the_field() {
        assert!(note(Some("x"), "r")
            .validate(1)
            .unwrap_err()
            .contains("quantity"));
        assert!(note(None, " ").validate(2).unwrap_err().contains("reason"));
        let mut n = note(None, "r");
        n.select.clear();
        assert!(n.validate(3).unwrap_err().contains("select"));
    }
}
