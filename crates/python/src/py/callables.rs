//! A problem whose model functions are Python callables, for prototyping: `M(q)`,
//! `f(t, q, v)`, `Φ(t, q)`, `Φ_q(t, q)`, `γ(t, q, v)`, optionally `H(t, q, v)` and an exact
//! solution. Every call crosses into Python (a few microseconds each, several per step:
//! docs/python.md measures it); the patterns are dense.
//!
//! The package wraps each callable (`driftlab.Problem`) so that it returns a contiguous
//! float64 vector of the right length or raises an `InputError` naming the callable and
//! the shape it must return. A callable that raises inside a run cannot unwind through the
//! numerical code: its first exception is kept, the outputs of that call are NaN (the run
//! then fails as non-finite), and the exception is raised when the run returns (a
//! `KeyboardInterrupt` as itself).

use super::input_error;
use driftlab_core::{Dims, ExactSolution, MechanicalSystem, ProblemInfo, SparsityPattern, State};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use std::sync::Mutex;

/// The callables and the start of a Python-defined problem.
#[pyclass(module = "driftlab._driftlab", frozen)]
pub struct CallableProblem {
    pub(crate) name: String,
    pub(crate) n: usize,
    pub(crate) m: usize,
    calls: Calls,
    q0: Vec<f64>,
    v0: Vec<f64>,
    pub(crate) t_end: f64,
    /// The scale of the relative energy error, `|H − H₀| / max(|H₀|, scale)`.
    energy_scale: f64,
    /// The first failure of a callable (its own exception, a KeyboardInterrupt included).
    error: Mutex<Option<PyErr>>,
}

/// The wrapped callables (each returns a flat float64 array).
struct Calls {
    mass: Py<PyAny>,
    forces: Py<PyAny>,
    constraints: Py<PyAny>,
    jacobian: Py<PyAny>,
    gamma: Py<PyAny>,
    energy: Option<Py<PyAny>>,
    exact: Option<Py<PyAny>>,
}

#[pymethods]
impl CallableProblem {
    /// See `driftlab.Problem`, which checks the arguments and wraps the callables.
    #[new]
    #[pyo3(signature = (name, n, m, mass, forces, constraints, jacobian, gamma, q0, v0, t_end, energy=None, exact=None, energy_scale=1.0))]
    #[allow(clippy::too_many_arguments)] // the Python signature
    fn new(
        name: String, n: usize, m: usize, mass: Py<PyAny>, forces: Py<PyAny>,
        constraints: Py<PyAny>, jacobian: Py<PyAny>, gamma: Py<PyAny>, q0: Vec<f64>, v0: Vec<f64>,
        t_end: f64, energy: Option<Py<PyAny>>, exact: Option<Py<PyAny>>, energy_scale: f64,
    ) -> PyResult<Self> {
        if !(energy_scale.is_finite() && energy_scale > 0.0) {
            return Err(input_error(format!(
                "energy_scale = {energy_scale}: give a positive scale of H (e.g. m g ℓ)"
            )));
        }
        if q0.len() != n || v0.len() != n {
            return Err(input_error(format!(
                "q0 and v0: lengths {} and {} for n = {n}; give n numbers each",
                q0.len(),
                v0.len()
            )));
        }
        Ok(Self {
            name,
            n,
            m,
            calls: Calls {
                mass,
                forces,
                constraints,
                jacobian,
                gamma,
                energy,
                exact,
            },
            q0,
            v0,
            t_end,
            energy_scale,
            error: Mutex::new(None),
        })
    }
}

impl CallableProblem {
    /// The first callable failure of the last run, taken (and cleared).
    pub(crate) fn take_error(&self) -> Option<PyErr> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// Call `f(args…)` and copy its flat result into `out`; on failure keep the error and
    /// write NaN.
    fn call_into<'py, A>(&self, py: Python<'py>, f: &Py<PyAny>, args: A, out: &mut [f64])
    where
        A: pyo3::call::PyCallArgs<'py>,
    {
        let copied = f
            .bind(py)
            .call1(args)
            .and_then(|r| r.extract::<PyReadonlyArray1<'_, f64>>())
            .and_then(|a| {
                let s = a.as_slice()?;
                if s.len() != out.len() {
                    return Err(input_error(format!(
                        "{}: returned {} numbers where {} were expected",
                        self.name,
                        s.len(),
                        out.len()
                    )));
                }
                out.copy_from_slice(s);
                Ok(())
            });
        if let Err(e) = copied {
            out.iter_mut().for_each(|x| *x = f64::NAN);
            let mut first = self.error.lock().unwrap_or_else(|p| p.into_inner());
            first.get_or_insert(e);
        }
    }

    fn vec<'py>(py: Python<'py>, x: &[f64]) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, x)
    }

    /// Keep `why` as the run's error (the first one wins) unless one is kept already.
    fn keep_error(&self, why: String) {
        let mut first = self.error.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert(input_error(why));
    }

    /// The first pair `(i, j)` where the callable's `M` is not symmetric, to 1e-12 of its
    /// largest entry: driftlab stores the lower triangle, so an asymmetric `M` would be
    /// read as another matrix.
    fn asymmetry(&self, full: &[f64]) -> Option<(usize, usize)> {
        let n = self.n;
        let scale = full.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        (0..n)
            .flat_map(|i| (0..i).map(move |j| (i, j)))
            .find(|&(i, j)| (full[i * n + j] - full[j * n + i]).abs() > 1e-12 * scale)
    }

    /// The dense lower triangle of `M` from the callable's full `n × n` row-major matrix.
    fn lower_triangle(&self, full: &[f64], out: &mut [f64]) {
        let mut k = 0;
        for i in 0..self.n {
            for j in 0..=i {
                out[k] = full[i * self.n + j];
                k += 1;
            }
        }
    }
}

impl MechanicalSystem for CallableProblem {
    fn info(&self) -> ProblemInfo {
        ProblemInfo {
            id: self.name.clone(),
            title: format!("{} (Python callables)", self.name),
            equations: "M(q) v' = f(t, q, v) − Φ_qᵀ λ, Φ(t, q) = 0 (Python callables)".into(),
            citation: "user-defined".into(),
            tags: vec!["python".into()],
            index: 3,
            t_end: self.t_end,
            reference: if self.calls.exact.is_some() {
                "exact: a Python callable".into()
            } else {
                String::new()
            },
        }
    }
    fn dims(&self) -> Dims {
        Dims {
            n: self.n,
            m: self.m,
        }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        let entries = (0..self.n)
            .flat_map(|i| (0..=i).map(move |j| (i, j)))
            .collect();
        SparsityPattern::new(self.n, self.n, entries)
    }
    fn mass(&self, q: &[f64], out: &mut [f64]) {
        let mut full = vec![0.0; self.n * self.n];
        Python::attach(|py| self.call_into(py, &self.calls.mass, (Self::vec(py, q),), &mut full));
        if let Some((i, j)) = self.asymmetry(&full) {
            let n = self.n;
            self.keep_error(format!(
                "mass returned a matrix that is not symmetric: M[{i}, {j}] = {:e}, M[{j}, {i}] = {:e}; return M = Mᵀ",
                full[i * n + j],
                full[j * n + i]
            ));
            full.iter_mut().for_each(|x| *x = f64::NAN);
        }
        self.lower_triangle(&full, out);
    }
    fn forces(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        Python::attach(|py| {
            self.call_into(
                py,
                &self.calls.forces,
                (t, Self::vec(py, q), Self::vec(py, v)),
                out,
            )
        });
    }
    fn constraints(&self, t: f64, q: &[f64], out: &mut [f64]) {
        Python::attach(|py| {
            self.call_into(py, &self.calls.constraints, (t, Self::vec(py, q)), out)
        });
    }
    fn jacobian_pattern(&self) -> SparsityPattern {
        let (n, m) = (self.n, self.m);
        SparsityPattern::new(
            m,
            n,
            (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect(),
        )
    }
    fn jacobian(&self, t: f64, q: &[f64], out: &mut [f64]) {
        Python::attach(|py| self.call_into(py, &self.calls.jacobian, (t, Self::vec(py, q)), out));
    }
    fn curvature(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        Python::attach(|py| {
            self.call_into(
                py,
                &self.calls.gamma,
                (t, Self::vec(py, q), Self::vec(py, v)),
                out,
            )
        });
    }
    fn energy(&self, t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let f = self.calls.energy.as_ref()?;
        let mut out = [0.0];
        Python::attach(|py| {
            self.call_into(py, f, (t, Self::vec(py, q), Self::vec(py, v)), &mut out)
        });
        Some(out[0])
    }
    fn energy_scale(&self) -> f64 {
        self.energy_scale
    }
    fn initial_state(&self) -> State {
        State::mechanical(0.0, self.q0.clone(), self.v0.clone(), self.m)
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        let f = self.calls.exact.as_ref()?;
        let mut out = vec![0.0; 2 * self.n + self.m];
        Python::attach(|py| self.call_into(py, f, (t,), &mut out));
        let (q, rest) = out.split_at(self.n);
        let (v, lambda) = rest.split_at(self.n);
        Some(ExactSolution {
            q: q.to_vec(),
            v: v.to_vec(),
            lambda: lambda.to_vec(),
        })
    }
}

/// Run `method` (parameters and projection as TOML text) on a Python-defined problem at
/// fixed steps `h` to `t_end` (default: the problem's), keeping every `stride`-th step;
/// the same dict as `simulate`. The GIL stays held: every model function is a call into
/// Python.
#[pyfunction]
#[pyo3(signature = (problem, method, h, t_end=None, method_params=None, projection=None, stride=1))]
#[allow(clippy::too_many_arguments)] // the Python signature: keywords with defaults
pub fn simulate_callables<'py>(
    py: Python<'py>, problem: &Bound<'py, CallableProblem>, method: &str, h: f64,
    t_end: Option<f64>, method_params: Option<&str>, projection: Option<&str>, stride: usize,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    if !(h.is_finite() && h > 0.0) {
        return Err(input_error(format!("h = {h}: give a step size > 0")));
    }
    if stride == 0 {
        return Err(input_error(
            "stride = 0: keep every stride-th step, stride ≥ 1",
        ));
    }
    let sys = problem.get();
    let t_end = t_end.unwrap_or(sys.t_end);
    if !(t_end.is_finite() && t_end > 0.0) {
        return Err(input_error(format!(
            "t_end = {t_end}: give an end time > 0"
        )));
    }
    let mp = super::convert::table(method_params, "method_params")?;
    let jp = projection
        .map(|p| super::convert::table(Some(p), "projection"))
        .transpose()?;
    let decorators = driftlab_methods::Decorators {
        projection: jp.as_ref(),
        recovery: None,
        richardson: false,
    };
    let m = driftlab_runner::Registry::default()
        .build_method(method, &mp, decorators)
        .map_err(input_error)?;
    let mut schedule = driftlab_core::Schedule::fixed(h, t_end);
    // What the recorder keeps, in the memory check before the run.
    schedule.retained = driftlab_core::Retained {
        samples: ((t_end / h).round() / stride as f64) as u64 + 2,
        states: true,
    };
    let mut rec = super::simulate::Recorder::new(stride, false, sys.dims());
    let mut summary = driftlab_core::MetricsObserver::new(0);
    sys.take_error();
    let system: &dyn MechanicalSystem = sys;
    let out = driftlab_core::drive(
        system.into(),
        m.as_ref(),
        &schedule,
        &mut [&mut summary, &mut rec],
    );
    if let Some(e) = sys.take_error() {
        return Err(e);
    }
    super::simulate::result_dict(py, rec, &summary, &out)
}

/// What every run of a problem needs, checked when it is made (as the catalog's problems
/// are when they are built): `M(q₀)` symmetric and positive definite, `f(0, q₀, v₀)`
/// finite, and a start on the constraints (`‖Φ(0, q₀)‖∞` and `‖Φ_q v₀ + Φ_t‖∞` within
/// 1e-10 of `1 + ‖q₀‖∞`). Raises `InputError` naming the failure and its numbers.
#[pyfunction]
pub fn check_start(problem: &Bound<'_, CallableProblem>) -> PyResult<()> {
    use driftlab_problems::conformance as c;
    let sys = problem.get();
    sys.take_error();
    let name = sys.name.clone();
    let s: &dyn MechanicalSystem = sys;
    let st = s.initial_state();
    let mut f = vec![0.0; sys.n];
    s.forces(0.0, &st.q, &st.v, &mut f);
    let mut result = c::check_mass_spd(&name, s);
    if let Some(k) = f.iter().position(|x| !x.is_finite()) {
        result = result.and_then(|()| {
            Err(format!(
                "{name}: forces(0, q0, v0)[{k}] = {}: return finite forces",
                f[k]
            ))
        });
    }
    let (pos, vel) = driftlab_problems::initial::mechanical_residuals(s, &st);
    let tol = 1e-10 * (1.0 + st.q.iter().fold(0.0_f64, |m, x| m.max(x.abs())));
    if !(pos <= tol && vel <= tol) {
        result = result.and_then(|()| Err(format!(
            "{name}: the start is inconsistent: ‖Φ(0, q0)‖∞ = {pos:.3e}, ‖Φ_q v0 + Φ_t‖∞ = {vel:.3e} > tol {tol:.1e}; give q0 on the constraints and v0 tangent to them"
        )));
    }
    if let Some(e) = sys.take_error() {
        return Err(e);
    }
    result.map_err(input_error)
}

/// `f(t, q, v)` at the states the conformance checks use: finite, of length n.
fn check_forces(
    name: &str, s: &dyn MechanicalSystem, states: &[(Vec<f64>, Vec<f64>, f64)],
) -> Result<(), String> {
    for (q, v, t) in states {
        let mut f = vec![0.0; q.len()];
        s.forces(*t, q, v, &mut f);
        if let Some(k) = f.iter().position(|x| !x.is_finite()) {
            return Err(format!(
                "{name}: forces({t}, q, v)[{k}] = {} at a perturbed state: return finite forces",
                f[k]
            ));
        }
    }
    Ok(())
}

/// driftlab's conformance checks on a Python-defined problem: a consistent initial
/// state, a symmetric positive definite `M(q₀)`, `Φ_q` and `γ` against central finite
/// differences at perturbed states, finite forces there, and the exact solution (if
/// given) against the equations of motion. Raises `InputError` with the first failure's numbers.
#[pyfunction]
pub fn check_callables(problem: &Bound<'_, CallableProblem>) -> PyResult<()> {
    use driftlab_problems::conformance as c;
    let sys = problem.get();
    sys.take_error();
    let name = sys.name.clone();
    let s: &dyn MechanicalSystem = sys;
    let mut result =
        c::check_mechanical_initial_state(&name, s).and_then(|()| c::check_mass_spd(&name, s));
    let mut states = Vec::new();
    for (dq, v, t) in [
        ([0.1, -0.2], [0.5, 1.0], 0.3),
        ([-0.7, 0.4], [-1.5, 0.2], 2.1),
    ] {
        result = result.and_then(|()| c::check_mechanical(&name, s, &dq, &v, t));
        if let Ok((q, v)) = c::perturbed_state(&name, s, &dq, &v) {
            states.push((q, v, t));
        }
    }
    result = result.and_then(|()| check_forces(&name, s, &states));
    result = result.and_then(|()| c::check_mechanical_exact(&name, s));
    if let Some(e) = sys.take_error() {
        return Err(e);
    }
    result.map_err(input_error)
}
