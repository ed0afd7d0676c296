//! One run of a peer simulator as its measuring script writes it, read as untrusted
//! input: every field typed, every number checked as driftlab checks its own rows (a
//! positive step and end time, no negative time, an `ok` row without a failure, a failed
//! row with its time, kind and reason), and the file's rows distinct.

use driftlab_core::FailKind;
use std::path::Path;

/// One run of a peer simulator, as its measuring script writes it.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PeerRow {
    /// driftlab's id of the problem the peer modelled.
    pub problem: String,
    /// Its parameters (those the experiment's cell gives).
    pub problem_params: serde_json::Map<String, serde_json::Value>,
    /// Label: simulator and setting (`mujoco default [solref=(0.02, 1)]`).
    pub variant: String,
    /// The peer's settings (solver parameters, version).
    pub params: serde_json::Value,
    /// Step size.
    pub h: f64,
    /// End time.
    pub t_end: f64,
    /// Steps completed.
    pub steps: usize,
    /// The run reached `t_end`.
    pub ok: bool,
    /// Where a failed run stopped.
    pub fail_time: Option<f64>,
    /// The failure's kind, one of driftlab's `fail_kind` tags (`diverged`, `non-finite`,
    /// `external`, …); `null` for a run that reached `t_end`.
    #[serde(default)]
    pub fail_kind: Option<String>,
    /// Why it failed, with its numbers.
    pub fail_reason: Option<String>,
    /// max over steps and rows of |Φ_i| in driftlab's form of the rows.
    #[serde(deserialize_with = "null_as_nan")]
    pub max_pos_residual: f64,
    /// max |H − H₀| / max(|H₀|, the problem's energy scale).
    #[serde(deserialize_with = "null_as_nan")]
    pub max_energy_rel_error: f64,
    /// max over steps and rows of |Φ_q v + Φ_t| (optional: a peer that measured it).
    #[serde(default = "nan", deserialize_with = "null_as_nan")]
    pub max_vel_residual: f64,
    /// max |Φ_i| at the end (optional).
    #[serde(default = "nan", deserialize_with = "null_as_nan")]
    pub final_pos_residual: f64,
    /// max over steps and coordinates of |q − q_ref| against the experiment's converged
    /// reference, sampled at the peer's steps (optional).
    #[serde(default = "nan", deserialize_with = "null_as_nan")]
    pub err_q: f64,
    /// |q − q_ref| at the end (optional).
    #[serde(default = "nan", deserialize_with = "null_as_nan")]
    pub final_err_q: f64,
    /// Wall time of the measured run.
    pub wall_seconds: f64,
    /// Wall time of the steps alone (the median over `repeat` runs).
    pub step_seconds: f64,
    /// Runs behind the times (optional, 1 by default; at most [`MAX_PEER_REPEAT`]).
    #[serde(default = "one")]
    pub repeat: usize,
    /// The smallest and largest step time over those runs (optional; `step_seconds` when
    /// not given).
    #[serde(default = "nan", deserialize_with = "null_as_nan")]
    pub step_seconds_min: f64,
    /// See `step_seconds_min`.
    #[serde(default = "nan", deserialize_with = "null_as_nan")]
    pub step_seconds_max: f64,
    /// Whether those runs had the machine to themselves (optional, `false` by default):
    /// nothing else ran, as driftlab's `timed_alone` rows.
    #[serde(default)]
    pub alone: bool,
}

/// The most runs a peer row's times may rest on (as a spec's `timing_repeats`).
pub const MAX_PEER_REPEAT: usize = 100;

fn one() -> usize {
    1
}

/// An optional measure the peer did not give: NaN, as driftlab's rows without it.
fn nan() -> f64 {
    f64::NAN
}

/// A measure the peer could not take (`null`, e.g. a run MuJoCo refused) is NaN, as in
/// driftlab's own failed rows.
fn null_as_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    use serde::Deserialize;
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// The largest peer file read (a peer's rows are a few hundred bytes each).
pub const MAX_PEER_BYTES: u64 = 64 << 20;

impl PeerRow {
    /// The simulator id: the first word of the label (`mujoco`).
    pub fn simulator(&self) -> &str {
        self.variant.split_whitespace().next().unwrap_or("peer")
    }

    /// The row's typed failure kind (`None` for an `ok` row).
    pub fn kind(&self) -> Option<FailKind> {
        self.fail_kind.as_deref().and_then(FailKind::from_tag)
    }

    /// What makes this row unlike a row driftlab would write, if anything.
    pub fn invalid(&self) -> Option<String> {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if !positive(self.h) || !positive(self.t_end) {
            return Some(format!(
                "h = {} and t_end = {} must be finite and > 0",
                self.h, self.t_end
            ));
        }
        for (name, x) in [
            ("wall_seconds", self.wall_seconds),
            ("step_seconds", self.step_seconds),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Some(format!("{name} = {x}: a time is finite and ≥ 0"));
            }
        }
        for (name, x) in [
            ("max_pos_residual", self.max_pos_residual),
            ("max_energy_rel_error", self.max_energy_rel_error),
        ] {
            if x < 0.0 || x == f64::NEG_INFINITY {
                return Some(format!(
                    "{name} = {x}: a residual or an error is ≥ 0 (or null when not measured)"
                ));
            }
        }
        if let Some(why) = self.invalid_spread() {
            return Some(why);
        }
        if self.variant.trim().is_empty() || self.problem.trim().is_empty() {
            return Some("`variant` and `problem` must not be empty".into());
        }
        let reach = self.steps as f64 * self.h;
        if self.ok {
            return self.invalid_ok(reach);
        }
        self.invalid_failure(reach)
    }

    /// `repeat` in 1..=[`MAX_PEER_REPEAT`], and the step time's range around its median.
    fn invalid_spread(&self) -> Option<String> {
        if !(1..=MAX_PEER_REPEAT).contains(&self.repeat) {
            return Some(format!(
                "repeat = {}: give the number of runs behind the times, 1 to {MAX_PEER_REPEAT}",
                self.repeat
            ));
        }
        let (lo, hi) = (self.step_seconds_min, self.step_seconds_max);
        if lo.is_nan() && hi.is_nan() {
            return None;
        }
        let median = self.step_seconds;
        if !(lo.is_finite() && hi.is_finite() && lo <= median && median <= hi) {
            return Some(format!(
                "step_seconds_min = {lo}, step_seconds = {median}, step_seconds_max = {hi}: give both ends of the range, min ≤ median ≤ max"
            ));
        }
        None
    }

    fn invalid_ok(&self, reach: f64) -> Option<String> {
        if self.fail_time.is_some() || self.fail_kind.is_some() || self.fail_reason.is_some() {
            return Some(format!(
                "an `ok` row with a failure (fail_time {:?}, fail_kind {:?}): a run that reached t_end has fail_time, fail_kind and fail_reason null",
                self.fail_time, self.fail_kind
            ));
        }
        if (reach - self.t_end).abs() > 0.5 * self.h {
            return Some(format!(
                "an `ok` row of {} steps of h = {} reaches t = {reach}, not t_end = {}",
                self.steps, self.h, self.t_end
            ));
        }
        None
    }

    fn invalid_failure(&self, reach: f64) -> Option<String> {
        let Some(t) = self.fail_time else {
            return Some("a failed row without fail_time: give the time the run stopped".into());
        };
        if !(t.is_finite() && (0.0..=self.t_end * (1.0 + 1e-12)).contains(&t)) {
            return Some(format!(
                "fail_time = {t}: give a time in [0, t_end = {}]",
                self.t_end
            ));
        }
        if reach > self.t_end + 0.5 * self.h {
            return Some(format!(
                "a failed row of {} steps of h = {} runs past t_end = {}",
                self.steps, self.h, self.t_end
            ));
        }
        if self
            .fail_reason
            .as_deref()
            .is_none_or(|r| r.trim().is_empty())
        {
            return Some("a failed row without fail_reason: say why, with its numbers".into());
        }
        match self.fail_kind.as_deref() {
            Some(k) if FailKind::from_tag(k).is_some() => None,
            other => {
                Some(format!(
                "fail_kind = {other:?}: give one of {} (docs/bad-inputs.md lists their meanings)",
                FailKind::ALL.iter().map(|k| k.tag()).collect::<Vec<_>>().join(", ")
            ))
            }
        }
    }

    /// What tells two peer runs apart: label, problem and parameters, step and end time.
    pub fn key(&self) -> (String, String, String, u64, u64) {
        (
            self.variant.clone(),
            self.problem.clone(),
            canonical(&serde_json::Value::Object(self.problem_params.clone())),
            self.h.to_bits(),
            self.t_end.to_bits(),
        )
    }
}

/// A JSON value with every number written as an `f64` (so that `90` and `90.0` are one
/// parameter value, as driftlab's parameters are) and object keys sorted.
pub fn canonical(v: &serde_json::Value) -> String {
    use serde_json::Value;
    fn norm(v: &Value) -> Value {
        match v {
            Value::Number(n) => n
                .as_f64()
                .and_then(serde_json::Number::from_f64)
                .map_or(Value::Null, Value::Number),
            Value::Array(a) => Value::Array(a.iter().map(norm).collect()),
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), norm(&o[k]))).collect())
            }
            other => other.clone(),
        }
    }
    norm(v).to_string()
}

/// Parse and check a peer's file: one JSON object per non-empty line; errors name the
/// line. An empty file, a row unlike driftlab's, or a run given twice is refused.
pub fn read_rows(file: &Path) -> Result<Vec<PeerRow>, String> {
    let len = std::fs::metadata(file)
        .map_err(|e| format!("cannot read the peer's rows: {e}"))?
        .len();
    if len > MAX_PEER_BYTES {
        return Err(format!(
            "{len} bytes, above the {MAX_PEER_BYTES} a peer file may have"
        ));
    }
    let text =
        std::fs::read_to_string(file).map_err(|e| format!("cannot read the peer's rows: {e}"))?;
    let mut rows: Vec<PeerRow> = Vec::new();
    let mut seen = std::collections::HashMap::new();
    for (k, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let row: PeerRow = serde_json::from_str(line).map_err(|e| {
            format!("line {}: {e}; give one JSON object per run with the fields of driftlab_runner::peer::PeerRow", k + 1)
        })?;
        if let Some(why) = row.invalid() {
            return Err(format!("line {}: {why}", k + 1));
        }
        if let Some(first) = seen.insert(row.key(), k + 1) {
            return Err(format!(
                "line {}: the run `{}` at h = {:e} is also line {first}: give each run once",
                k + 1,
                row.variant,
                row.h
            ));
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err("no peer rows (an empty file adds nothing and replaces nothing); give one JSON object per run".into());
    }
    Ok(rows)
}
