//! The `[report]` table of an experiment spec: how the combined report uses the
//! experiment. The runner validates it with the rest of the spec; the report reads it back
//! from the spec text stored in `manifest.json`. Keeping it in the experiment (not in the
//! report's code) means the report has no experiment names built in: a new experiment
//! joins the recommendation page by declaring its class, measure and target.
//!
//! ```toml
//! [report]
//! class = "smooth, long time (IFToMM A01 pendulum, 1000 periods)"  # recommendation page
//! measure = "err_q"          # a runs column, one of MEASURES
//! target = 1e-3              # the accuracy a run must reach to be recommended
//! target_why = "…"           # what a user of the class needs that the target stands for
//! higher_is_better = false   # true for scd
//! select = "\"n\":40"        # only runs whose problem_params JSON contains this text
//! note = "…"                 # the reference and its own accuracy, with the source
//! tuning_map = false         # true: a (ξ, ω_n, h) map for the Baumgarte tuning guide
//! peers = [{ simulator = "pinocchio", script = "scripts/pinocchio-check.sh --loops" }]
//! ```

use serde::{Deserialize, Serialize};

pub use crate::schema::runs::MEASURES;

/// The `[report]` table of a spec.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportSpec {
    /// Problem class on the recommendation page (absent: not a class of its own).
    pub class: Option<String>,
    /// Accuracy measure: a runs column from [`MEASURES`].
    pub measure: String,
    /// Accuracy a run must reach to be recommended.
    pub target: Option<f64>,
    /// Why the target is where it is: what a user of the class needs (a published
    /// allowed error, the accuracy a design decision or a long run depends on), with its
    /// source. Required with `class`: a target without its reason is not a verdict a
    /// reader can weigh.
    pub target_why: Option<String>,
    /// The measure improves upwards (scd) rather than downwards (errors).
    #[serde(default)]
    pub higher_is_better: bool,
    /// Only runs whose `problem_params` JSON contains this text count.
    pub select: Option<String>,
    /// What the reference is and how accurate it is itself, with its source.
    pub note: Option<String>,
    /// The experiment is a (ξ, ω_n, h) Baumgarte map feeding the tuning guide.
    #[serde(default)]
    pub tuning_map: bool,
    /// Peer simulators whose rows the experiment is meant to stand beside, each with the
    /// script that adds them: the report says whether they are in the folder, and how to
    /// add them when they are not, instead of promising them.
    #[serde(default)]
    pub peers: Vec<PeerNote>,
}

/// A peer simulator of an experiment and the script that imports its rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerNote {
    /// The first word of the peer rows' labels (`pinocchio`, `mujoco`, `ida`).
    pub simulator: String,
    /// The command that runs the peer and imports its rows into the folder.
    pub script: String,
}

impl ReportSpec {
    /// Check the fields; the message names the field and the fix.
    pub fn validate(&self) -> Result<(), String> {
        if !MEASURES.iter().any(|m| m.name == self.measure) {
            let names: Vec<&str> = MEASURES.iter().map(|m| m.name).collect();
            return Err(format!(
                "[report] measure = \"{}\" is not a runs column that measures accuracy; give one of {}",
                self.measure,
                names.join(", ")
            ));
        }
        if let Some(t) = self.target {
            if !t.is_finite() {
                return Err(format!(
                    "[report] target = {t}: give a finite accuracy target"
                ));
            }
        }
        if let Some(p) = self
            .peers
            .iter()
            .find(|p| p.simulator.trim().is_empty() || p.script.trim().is_empty())
        {
            return Err(format!(
                "[report] peers: {{ simulator = \"{}\", script = \"{}\" }}: give the peer's label word and the script that adds its rows",
                p.simulator, p.script
            ));
        }
        if self.class.is_some() && self.target.is_none() {
            return Err(
                "[report] class needs a target: the recommendation is the setting that meets it on every instance of the class at the least step time"
                    .into(),
            );
        }
        if self.class.is_some()
            && self
                .target_why
                .as_deref()
                .is_none_or(|w| w.trim().is_empty())
        {
            return Err(
                "[report] class needs target_why: say what a user of the class needs that the target stands for (a published allowed error, the accuracy a decision depends on)"
                    .into(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class_spec() -> ReportSpec {
        ReportSpec {
            class: Some("a class".into()),
            measure: "err_q".into(),
            target: Some(1e-3),
            target_why: Some("IFToMM's allowed error".into()),
            ..ReportSpec::default()
        }
    }

    #[test]
    fn a_class_with_target_and_reason_is_valid() {
        assert_eq!(class_spec().validate(), Ok(()));
    }

    #[test]
    fn a_class_without_the_targets_reason_is_refused_naming_the_field() {
        for why in [None, Some("  ".to_string())] {
            let spec = ReportSpec {
                target_why: why,
                ..class_spec()
            };
            let message = spec.validate().unwrap_err();
            assert!(message.contains("target_why"), "{message}");
        }
    }

    #[test]
    fn a_class_without_a_target_is_refused() {
        let spec = ReportSpec {
            target: None,
            ..class_spec()
        };
        assert!(spec.validate().unwrap_err().contains("needs a target"));
    }
}
