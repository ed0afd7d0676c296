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
                "[report] class needs a target: the recommendation is the fastest run reaching it"
                    .into(),
            );
        }
        Ok(())
    }
}
