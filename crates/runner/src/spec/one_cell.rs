//! The spec of a single run: one problem, one method (with projection when asked), one
//! step size or tolerance. `driftlab simulate` and the Python package's `simulate` build
//! their run with it, so that both run the same cell through `drive_cell` (`exec/cell_run.rs`).

use crate::error::RunnerError;
use crate::spec::{Spec, SCHEMA_VERSION};

/// How the one run steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OneCellSteps {
    /// Fixed steps of this size.
    Fixed(f64),
    /// Error-controlled steps at this relative tolerance (`atol = rtol`).
    Tolerance(f64),
}

/// One problem, one method, one step size or tolerance.
#[derive(Clone, Copy, Debug)]
pub struct OneCell<'a> {
    /// Problem id.
    pub problem: &'a str,
    /// Its parameters.
    pub problem_params: &'a toml::Table,
    /// Method id.
    pub method: &'a str,
    /// Its parameters.
    pub method_params: &'a toml::Table,
    /// The projection decorator's parameters, when the method is wrapped in it.
    pub projection: Option<&'a toml::Table>,
    /// The steps.
    pub steps: OneCellSteps,
    /// End time (default: the problem's).
    pub t_end: Option<f64>,
    /// The caller's observers keep every `k`-th state (and the first and the last) in
    /// memory: counted in the memory check before the run (`None`: they keep none, as
    /// `driftlab simulate`, which streams its trace).
    pub kept_every: Option<usize>,
}

impl OneCell<'_> {
    /// The spec, named `name`. List values are wrapped so that they stay one value instead
    /// of sweeping; the trace the observers keep is `kept_every` (`trace_stride`, with
    /// states); the step budget is that of a direct `drive`.
    pub fn spec(&self, name: &str) -> Result<Spec, RunnerError> {
        let unswept = |t: &toml::Table| -> toml::Table {
            t.iter()
                .map(|(k, v)| match v {
                    toml::Value::Array(_) => (k.clone(), toml::Value::Array(vec![v.clone()])),
                    _ => (k.clone(), v.clone()),
                })
                .collect()
        };
        let mut m = toml::Table::new();
        m.insert("id".into(), self.method.into());
        m.insert("params".into(), unswept(self.method_params).into());
        if let Some(p) = self.projection {
            m.insert("projection".into(), p.clone().into());
        }
        let mut p = toml::Table::new();
        p.insert("id".into(), self.problem.into());
        p.insert("params".into(), unswept(self.problem_params).into());
        let mut spec = toml::Table::new();
        spec.insert("schema_version".into(), i64::from(SCHEMA_VERSION).into());
        spec.insert("name".into(), name.into());
        let kept = i64::try_from(self.kept_every.unwrap_or(0)).unwrap_or(i64::MAX);
        spec.insert("trace_stride".into(), kept.into());
        spec.insert("trace_states".into(), self.kept_every.is_some().into());
        let budget = driftlab_core::Schedule::fixed(1.0, 1.0).max_steps;
        spec.insert(
            "max_steps".into(),
            i64::try_from(budget).unwrap_or(i64::MAX).into(),
        );
        if let Some(t) = self.t_end {
            spec.insert("t_end".into(), t.into());
        }
        spec.insert("steps".into(), self.steps_table().into());
        spec.insert("problems".into(), vec![toml::Value::from(p)].into());
        spec.insert("methods".into(), vec![toml::Value::from(m)].into());
        let spec: Spec = toml::Value::from(spec)
            .try_into()
            .map_err(|e: toml::de::Error| RunnerError::Spec {
                path: name.into(),
                message: e.to_string(),
            })?;
        spec.sized(None, name)
    }

    /// `[steps]`: `h = [h]`, or `adaptive = { rtol = [rtol] }`.
    fn steps_table(&self) -> toml::Table {
        let mut steps = toml::Table::new();
        match self.steps {
            OneCellSteps::Fixed(h) => {
                steps.insert("h".into(), vec![toml::Value::from(h)].into());
            }
            OneCellSteps::Tolerance(rtol) => {
                let mut a = toml::Table::new();
                a.insert("rtol".into(), vec![toml::Value::from(rtol)].into());
                steps.insert("adaptive".into(), a.into());
            }
        }
        steps
    }
}
