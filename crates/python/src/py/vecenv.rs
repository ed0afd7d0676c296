//! `VecEnv`: the runner's vectorized environment ([`driftlab_runner::vecenv`]) as a Python
//! class. Stepping releases the GIL and runs the environments on the environment's own
//! pool; observations are written by the environments straight into the NumPy array
//! returned (one allocation per call, no copy).

use super::input_error;
use driftlab_runner::vecenv::{ActionMode, EnvInfo};
use driftlab_runner::{Registry, Spec};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// `num_envs` environments of one problem and method (see `driftlab.VecEnv`).
///
/// Locking: `step`, `reset` and the Rust timing take the lock only with the GIL released
/// (inside `detach`), and `infos` holds it with the GIL but waits for nothing else, so a
/// thread that holds the lock never waits for the GIL: two Python threads using one
/// environment serialize instead of deadlocking. The sizes are kept outside the lock.
#[pyclass(module = "driftlab._driftlab")]
pub struct VecEnv {
    /// The environments are `Send`, not `Sync`.
    inner: Mutex<driftlab_runner::vecenv::VecEnv>,
    num_envs: usize,
    action_dim: usize,
    /// Per actuator (action = "actuators"): name, lower and upper control bound (±inf
    /// where unlimited).
    actuators: Vec<(String, f64, f64)>,
    observation_dim: usize,
    episode_steps: usize,
    h: f64,
    threads: usize,
}

impl VecEnv {
    fn env(&self) -> MutexGuard<'_, driftlab_runner::vecenv::VecEnv> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The action mode from its name.
fn action_mode(action: &str, project: bool) -> PyResult<ActionMode> {
    match (action, project) {
        ("force", false) => Ok(ActionMode::Force),
        ("force", true) => Err(input_error(
            "project_actions = True applies to velocity actions; give action=\"velocity\" or project_actions=False",
        )),
        ("velocity", p) => Ok(ActionMode::Velocity { project: p }),
        ("actuators", false) => Ok(ActionMode::Actuators),
        ("actuators", true) => Err(input_error(
            "project_actions = True applies to velocity actions; give action=\"velocity\" or project_actions=False",
        )),
        (other, _) => Err(input_error(format!(
            "action = {other:?}: give \"force\" (a generalized force held over the substeps), \"velocity\" (a velocity command) or \"actuators\" (the model file's motors)"
        ))),
    }
}

#[pymethods]
impl VecEnv {
    /// From a one-cell spec with an `[ensemble]` table (TOML text, written by the
    /// package), the action mode and the threads (0: all cores).
    #[new]
    #[pyo3(signature = (spec, action="force", project_actions=false, threads=0))]
    fn new(
        py: Python<'_>, spec: &str, action: &str, project_actions: bool, threads: usize,
    ) -> PyResult<Self> {
        let mode = action_mode(action, project_actions)?;
        let spec = Spec::parse(spec, "VecEnv").map_err(input_error)?;
        let env = py
            .detach(|| {
                driftlab_runner::vecenv::VecEnv::from_spec(
                    Registry::default(),
                    &spec,
                    mode,
                    threads,
                )
            })
            .map_err(input_error)?;
        let actuators = env
            .actuators()
            .iter()
            .map(|a| {
                let [lo, hi] = a.ctrlrange.unwrap_or([f64::NEG_INFINITY, f64::INFINITY]);
                (a.name.clone(), lo, hi)
            })
            .collect();
        Ok(Self {
            num_envs: env.num_envs(),
            actuators,
            action_dim: env.action_dim(),
            observation_dim: env.observation_dim(),
            episode_steps: env.episode_steps(),
            h: env.h(),
            threads: env.threads(),
            inner: Mutex::new(env),
        })
    }

    /// Environments.
    #[getter]
    fn num_envs(&self) -> usize {
        self.num_envs
    }

    /// Length of one action (the coordinates n, or the actuators).
    #[getter]
    fn action_dim(&self) -> usize {
        self.action_dim
    }

    /// The actuators driven by action = "actuators": (name, lower, upper) per control.
    #[getter]
    fn actuators(&self) -> Vec<(String, f64, f64)> {
        self.actuators.clone()
    }

    /// Length of one observation (2n: q then v).
    #[getter]
    fn observation_dim(&self) -> usize {
        self.observation_dim
    }

    /// Steps of one episode (t_end / h).
    #[getter]
    fn episode_steps(&self) -> usize {
        self.episode_steps
    }

    /// The fixed step h.
    #[getter]
    fn h(&self) -> f64 {
        self.h
    }

    /// Threads stepping the environments.
    #[getter]
    fn threads(&self) -> usize {
        self.threads
    }

    /// Start every environment's first episode (with `seed`, else the current seed);
    /// the observations, shape (num_envs, observation_dim).
    #[pyo3(signature = (seed=None))]
    fn reset<'py>(
        &self, py: Python<'py>, seed: Option<u64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let obs = PyArray2::<f64>::zeros(py, [self.num_envs, self.observation_dim], false);
        {
            let mut rw = obs.readwrite();
            let out = rw.as_slice_mut()?;
            py.detach(|| self.env().reset(seed, out))
                .map_err(input_error)?;
        }
        Ok(obs)
    }

    /// Hold `actions` (float64, shape (num_envs, action_dim), C-contiguous; copied before
    /// the GIL is released) over `substeps` steps of every environment; the observations.
    #[pyo3(signature = (actions, substeps=1))]
    fn step<'py>(
        &self, py: Python<'py>, actions: PyReadonlyArray2<'py, f64>, substeps: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let a: Vec<f64> = actions
            .as_slice()
            .map_err(|_| {
                input_error("actions: not C-contiguous; pass numpy.ascontiguousarray(actions, dtype=numpy.float64)")
            })?
            .to_vec();
        let obs = PyArray2::<f64>::zeros(py, [self.num_envs, self.observation_dim], false);
        {
            let mut rw = obs.readwrite();
            let out = rw.as_slice_mut()?;
            py.detach(|| self.env().step(&a, substeps, out))
                .map_err(input_error)?;
        }
        Ok(obs)
    }

    /// Every environment's report of the last call, as arrays (and lists for the
    /// failures' tags and messages).
    fn infos<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let env = self.env();
        let infos: Vec<&EnvInfo> = env.infos().collect();
        let d = PyDict::new(py);
        d.set_item(
            "applied",
            PyArray1::from_iter(py, infos.iter().map(|i| i.applied)),
        )?;
        let floats = |f: fn(&EnvInfo) -> f64| PyArray1::from_iter(py, infos.iter().map(|i| f(i)));
        let flags = |f: fn(&EnvInfo) -> bool| PyArray1::from_iter(py, infos.iter().map(|i| f(i)));
        d.set_item("t", floats(|i| i.t))?;
        d.set_item(
            "steps",
            PyArray1::from_iter(py, infos.iter().map(|i| i.steps as u64)),
        )?;
        d.set_item(
            "member",
            PyArray1::from_iter(py, infos.iter().map(|i| i.episode as u64)),
        )?;
        d.set_item("reset", flags(|i| i.reset))?;
        d.set_item("terminated", flags(|i| i.terminated))?;
        d.set_item("truncated", flags(|i| i.truncated))?;
        d.set_item("drift", floats(|i| i.drift))?;
        d.set_item("vel_residual", floats(|i| i.vel_residual))?;
        d.set_item("energy_error", floats(|i| i.energy_error))?;
        d.set_item("strength", floats(|i| i.strength.unwrap_or(f64::NAN)))?;
        let kinds: Vec<Option<&str>> = infos.iter().map(|i| i.fail_kind.map(|k| k.tag())).collect();
        d.set_item("fail_kind", kinds)?;
        let reasons: Vec<Option<&str>> = infos.iter().map(|i| i.fail_reason.as_deref()).collect();
        d.set_item("fail_reason", reasons)?;
        Ok(d)
    }

    /// The same work as `calls` calls of `step` with zero actions and `substeps` steps,
    /// timed inside Rust (no Python in the loop, the observation buffer reused): the
    /// seconds per call. The benchmarks compare `step` from Python against it. It steps
    /// the environments: their episodes go on.
    fn rust_seconds_per_call(
        &self, py: Python<'_>, substeps: usize, calls: usize,
    ) -> PyResult<f64> {
        let mut guard = self.env();
        let env = &mut *guard;
        let zeros = vec![0.0; env.num_envs() * env.action_dim()];
        let mut obs = vec![0.0; env.num_envs() * env.observation_dim()];
        let calls = calls.max(1);
        py.detach(|| {
            let clock = Instant::now();
            for _ in 0..calls {
                env.step(&zeros, substeps, &mut obs)?;
            }
            Ok::<f64, String>(clock.elapsed().as_secs_f64() / calls as f64)
        })
        .map_err(input_error)
    }
}
