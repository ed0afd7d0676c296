//! `simulate`: one run, the cell `driftlab simulate` runs (the same spec, built by
//! [`OneCell`], through the same `drive_cell`), with every step's state kept as arrays.

use super::convert::{fields_into, table};
use super::input_error;
use driftlab_core::{
    Dims, Metrics, MetricsObserver, Observation, Observer, RunOutcome, RunStatus, State, SystemForm,
};
use driftlab_runner::spec::cell::expand;
use driftlab_runner::spec::one_cell::{OneCell, OneCellSteps};
use driftlab_runner::{drive_cell, Registry};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Every `stride`-th step's state and metrics (and the last), row by row, as the
/// `--trace` CSV of `driftlab simulate` holds them (index-1: `q` holds x, `lam` holds z).
pub(crate) struct Recorder {
    stride: usize,
    index1: bool,
    dims: Dims,
    t: Vec<f64>,
    q: Vec<f64>,
    v: Vec<f64>,
    lam: Vec<f64>,
    residuals: [Vec<f64>; 3],
    last_t: Option<f64>,
}

impl Recorder {
    /// Keep every `stride`-th step of a system of form `index1` and dimensions `dims`.
    pub(crate) fn new(stride: usize, index1: bool, dims: Dims) -> Self {
        Self {
            stride,
            index1,
            dims,
            t: Vec::new(),
            q: Vec::new(),
            v: Vec::new(),
            lam: Vec::new(),
            residuals: [Vec::new(), Vec::new(), Vec::new()],
            last_t: None,
        }
    }

    fn push(&mut self, s: &State, m: &Metrics) {
        self.t.push(s.t);
        self.q.extend_from_slice(&s.q);
        if !self.index1 {
            self.v.extend_from_slice(&s.v);
        }
        self.lam.extend_from_slice(&s.lambda);
        self.residuals[0].push(m.pos_residual);
        self.residuals[1].push(m.vel_residual);
        self.residuals[2].push(m.energy_rel_error);
    }
}

impl Observer for Recorder {
    fn observe(&mut self, o: &Observation<'_>) {
        // A state observed twice is kept once (the CLI's trace does the same).
        if self
            .last_t
            .is_some_and(|t| t.to_bits() == o.metrics.t.to_bits())
        {
            return;
        }
        if o.last || o.step.is_multiple_of(self.stride) {
            self.last_t = Some(o.metrics.t);
            self.push(o.state, o.metrics);
        }
    }

    fn wants(&self, step: usize) -> bool {
        step.is_multiple_of(self.stride)
    }
}

/// One run of `problem` with `method` (parameters as TOML text), at fixed steps `h` or
/// error-controlled at `rtol`; a dict with the arrays, the summary and the status.
#[pyfunction]
#[pyo3(signature = (problem, method, h=None, rtol=None, t_end=None, params=None, method_params=None, projection=None, stride=1))]
#[allow(clippy::too_many_arguments)] // the Python signature: keywords with defaults
pub fn simulate<'py>(
    py: Python<'py>, problem: &str, method: &str, h: Option<f64>, rtol: Option<f64>,
    t_end: Option<f64>, params: Option<&str>, method_params: Option<&str>,
    projection: Option<&str>, stride: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let steps = steps_of(h, rtol)?;
    if let Some(t) = t_end.filter(|t| !(t.is_finite() && *t > 0.0)) {
        return Err(input_error(format!("t_end = {t}: give an end time > 0")));
    }
    if stride == 0 {
        return Err(input_error(
            "stride = 0: keep every stride-th step, stride ≥ 1",
        ));
    }
    let (pp, mp) = (
        table(params, "params")?,
        table(method_params, "method_params")?,
    );
    let jp = projection
        .map(|p| table(Some(p), "projection"))
        .transpose()?;
    let spec = OneCell {
        problem,
        problem_params: &pp,
        method,
        method_params: &mp,
        projection: jp.as_ref(),
        steps,
        t_end,
        kept_every: Some(stride),
    }
    .spec("simulate")
    .map_err(input_error)?;
    let registry = Registry::default();
    let cells = expand(&spec, "simulate", &registry).map_err(input_error)?;
    let [cell] = cells.as_slice() else {
        return Err(input_error(format!(
            "simulate runs one cell, but the parameters expand to {}",
            cells.len()
        )));
    };
    let built = registry
        .build_problem(&cell.problem, &cell.problem_params)
        .map_err(input_error)?;
    let sys = built.as_system();
    let mut rec = Recorder::new(stride, sys.form() == SystemForm::SemiExplicit, sys.dims());
    drop(built);
    let mut summary = MetricsObserver::new(0);
    let out = py
        .detach(|| drive_cell(&registry, cell, &mut [&mut summary, &mut rec]))
        .map_err(input_error)?;
    if let RunStatus::Failed { error, .. } = &out.status {
        // Refused before allocating: the request cannot be served as given.
        if error.kind() == "memory" {
            return Err(input_error(error));
        }
    }
    result_dict(py, rec, &summary, &out)
}

/// Fixed steps `h` or error-controlled at `rtol`: exactly one, positive and finite.
fn steps_of(h: Option<f64>, rtol: Option<f64>) -> PyResult<OneCellSteps> {
    match (h, rtol) {
        (Some(h), None) if h.is_finite() && h > 0.0 => Ok(OneCellSteps::Fixed(h)),
        (Some(h), None) => Err(input_error(format!("h = {h}: give a step size > 0"))),
        (None, Some(r)) if r.is_finite() && r > 0.0 => Ok(OneCellSteps::Tolerance(r)),
        (None, Some(r)) => Err(input_error(format!("rtol = {r}: give a tolerance > 0"))),
        (None, None) => Err(input_error(
            "give h (fixed steps) or rtol (error-controlled steps)",
        )),
        (Some(_), Some(_)) => Err(input_error(
            "give h (fixed steps) or rtol (error-controlled steps), not both",
        )),
    }
}

/// The arrays (moved into NumPy without a copy), the summary and the status.
pub(crate) fn result_dict<'py>(
    py: Python<'py>, rec: Recorder, summary: &MetricsObserver, out: &RunOutcome,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let rows = rec.t.len();
    let (n, m) = (rec.dims.n, rec.dims.m);
    let matrix = |x: Vec<f64>, cols: usize| {
        Array2::from_shape_vec((rows, cols), x)
            .map(|a| a.into_pyarray(py))
            .map_err(|e| input_error(format!("internal: trace shape: {e}")))
    };
    d.set_item("t", PyArray1::from_vec(py, rec.t))?;
    d.set_item("q", matrix(rec.q, n)?)?;
    d.set_item("v", matrix(rec.v, if rec.index1 { 0 } else { n })?)?;
    d.set_item("lam", matrix(rec.lam, m)?)?;
    let [pos, vel, energy] = rec.residuals;
    d.set_item("pos_residual", PyArray1::from_vec(py, pos))?;
    d.set_item("vel_residual", PyArray1::from_vec(py, vel))?;
    d.set_item("energy_rel_error", PyArray1::from_vec(py, energy))?;
    let s = PyDict::new(py);
    status_into(&s, out)?;
    fields_into(&s, "", &summary.summary)?;
    fields_into(&s, "", &out.stats)?;
    s.set_item("wall_seconds", out.wall_seconds())?;
    d.set_item("summary", s)?;
    Ok(d)
}

/// `ok`, `steps`, and for a failed run `fail_kind`, `fail_time`, `fail_reason`.
fn status_into(s: &Bound<'_, PyDict>, out: &RunOutcome) -> PyResult<()> {
    s.set_item("steps", out.steps)?;
    match &out.status {
        RunStatus::Ok => {
            s.set_item("ok", true)?;
            s.set_item("fail_kind", None::<&str>)?;
            s.set_item("fail_time", None::<f64>)?;
            s.set_item("fail_reason", None::<&str>)?;
        }
        RunStatus::Failed { t, error } => {
            s.set_item("ok", false)?;
            s.set_item("fail_kind", error.kind())?;
            s.set_item("fail_time", *t)?;
            s.set_item("fail_reason", error.to_string())?;
        }
    }
    Ok(())
}
