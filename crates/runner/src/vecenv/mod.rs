//! A vectorized environment for learning (seed 001 §3.6): `num_envs` members of one
//! ensemble cell, stepped a call at a time by a policy.
//!
//! Each environment runs episodes of the cell's problem and method through
//! [`driftlab_core::Rollout`], the loop of every run taken a chunk of `substeps` fixed steps
//! at a time. Between calls the policy acts:
//!
//! * **force** actions: a generalized force `u` added to the applied forces and held over
//!   the call's steps, `M v' = f + u − Φ_qᵀ λ` ([`actuated::Actuated`]);
//! * **velocity** actions: a command that replaces `v`, optionally first projected
//!   mass-orthogonally onto the feasible velocities `{v : Φ_q v + Φ_t = 0}`
//!   ([`crate::ensemble::action`], seed 001 §3.6.3), after which the method recomputes what
//!   it derives from `v`.
//!
//! Episode `e` of environment `i` is member `e · num_envs + i` of the cell's ensemble: the
//! same seeded initial-state noise, constraint noise `σ(t) = σ₀ e^{−t/τ}` and curriculum
//! strength as [`crate::ensemble`] gives that member, so the environments reproduce bit for
//! bit on any number of threads. With zero forces, an episode is that ensemble member's
//! rollout (test `vecenv_episodes_are_ensemble_members`).
//!
//! An episode ends when the method fails (`terminated`, with the failure's kind and
//! reason) or at the cell's end time (`truncated`); the next call starts the environment's
//! next episode instead of stepping it (the "next step" autoreset of gymnasium's vector
//! API). Drift is measured on the unperturbed constraints, as for ensembles.

mod actuated;
mod member;

pub use actuated::Actuated;

use crate::ensemble::EnsembleSpec;
use crate::exec::members::mechanical_problem;
use crate::registry::Registry;
use crate::spec::cell::Cell;
use driftlab_core::{FailKind, MechanicalSystem, Schedule};
use member::Member;
use rayon::prelude::*;
use std::sync::Arc;

/// How an action acts on an environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionMode {
    /// A generalized force added to `f`, held over the call's steps.
    Force,
    /// A velocity command replacing `v` (projected onto the feasible velocities first
    /// when `project`).
    Velocity {
        /// Project onto `{v : Φ_q v + Φ_t = 0}` first.
        project: bool,
    },
    /// The controls of the problem's actuators (a model file's motors, MJCF `<motor>`):
    /// the force `Σ_k gear_k · clip(u_k)` on each actuator's coordinate, held over the
    /// call's steps as a force action.
    Actuators,
}

/// What one environment reported at the last `reset` or `step`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EnvInfo {
    /// Time in the episode.
    pub t: f64,
    /// Steps taken in the episode.
    pub steps: usize,
    /// The episode's ensemble member index (`e · num_envs + i`).
    pub episode: usize,
    /// This call started the episode (the action was not applied).
    pub reset: bool,
    /// The action was applied (false on a reset, or when it could not be: a velocity
    /// command that cannot be projected, a restart that failed; `fail_reason` says why).
    pub applied: bool,
    /// The method failed: the episode ended early.
    pub terminated: bool,
    /// The episode reached its end time.
    pub truncated: bool,
    /// `‖Φ(t, q)‖∞` of the unperturbed holonomic constraints.
    pub drift: f64,
    /// `‖Φ_q v + Φ_t‖∞`.
    pub vel_residual: f64,
    /// Relative energy error since the episode's start (it includes the work of the
    /// forces the actions applied).
    pub energy_error: f64,
    /// Curriculum strength, where it applied.
    pub strength: Option<f64>,
    /// The failure's tag (a terminated episode).
    pub fail_kind: Option<FailKind>,
    /// The failure's message, or why an action could not be applied.
    pub fail_reason: Option<String>,
}

/// What every environment shares.
pub(crate) struct Shared {
    registry: Registry,
    cell: Cell,
    ensemble: EnsembleSpec,
    problem: Arc<dyn MechanicalSystem>,
    schedule: Schedule,
    action: ActionMode,
    /// The problem's actuators (with [`ActionMode::Actuators`]).
    actuators: Vec<driftlab_core::Actuator>,
    num_envs: usize,
    episode_steps: usize,
    /// Coordinates.
    n: usize,
}

/// `num_envs` environments of one cell (see the module documentation).
pub struct VecEnv {
    shared: Shared,
    members: Vec<Member>,
    pool: rayon::ThreadPool,
    /// The episodes [`VecEnv::new`] began to check that they can start: the first
    /// [`VecEnv::reset`] begins episode 0 again instead of the next one.
    begun_by_new: bool,
}

impl VecEnv {
    /// `ensemble.members` environments of `cell` (a fixed-step cell of a mechanical
    /// problem) on `threads` threads (0: all cores), reset with the ensemble's seed.
    /// `Err` names the field and the fix.
    pub fn new(
        registry: Registry, cell: Cell, ensemble: EnsembleSpec, action: ActionMode, threads: usize,
    ) -> Result<Self, String> {
        ensemble.validate()?;
        let ramp = ensemble.curriculum.as_ref().map(|c| c.ramp);
        if ramp == Some(crate::ensemble::noise::Ramp::Performance) {
            return Err("`ensemble.curriculum.ramp` = \"performance\" sets a generation's strength from the rollouts before it, which in an environment a policy drives: give an index ramp (\"seed\" or \"linear\") for a vector environment".into());
        }
        if cell.adaptive.is_some() {
            return Err("an environment steps at a fixed h: give `h`, not tolerances".into());
        }
        let problem = mechanical_problem(&registry, &cell).map_err(|(_, reason)| reason)?;
        if problem.dims().n == 0 {
            return Err(format!("`{}` has no coordinates to act on", cell.problem));
        }
        if threads > crate::spec::MAX_THREADS {
            return Err(format!(
                "threads = {threads}: give at most {} (0: all cores)",
                crate::spec::MAX_THREADS
            ));
        }
        let episode_steps = (cell.t_end / cell.h).round();
        if !(episode_steps >= 1.0 && episode_steps <= cell.max_steps as f64) {
            return Err(format!(
                "an episode of t_end / h = {} / {} = {episode_steps} steps: give t_end ≥ h and at most {} steps",
                cell.t_end, cell.h, cell.max_steps
            ));
        }
        let mut schedule = crate::spec::cell::schedule_of(&cell);
        // Metrics are evaluated at the end of each call only (and for the info).
        schedule.metrics_stride = usize::MAX;
        schedule.deadline = None;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| format!("threads = {threads}: cannot start the pool: {e}"))?;
        let num_envs = ensemble.members;
        let actuators = if action == ActionMode::Actuators {
            let a = problem.actuators();
            if a.is_empty() {
                return Err(format!("`{}` has no actuators (a model file's motors): give action = \"force\" (a generalized force) or \"velocity\"", cell.problem));
            }
            a
        } else {
            Vec::new()
        };
        let shared = Shared {
            actuators,
            n: problem.dims().n,
            registry,
            cell,
            ensemble,
            problem,
            schedule,
            action,
            num_envs,
            episode_steps: episode_steps as usize,
        };
        let mut env = Self {
            members: (0..num_envs).map(Member::new).collect(),
            shared,
            pool,
            begun_by_new: false,
        };
        let mut obs = vec![0.0; num_envs * env.observation_dim()];
        env.reset(None, &mut obs)?;
        env.begun_by_new = true;
        if env.members.iter().all(Member::failed_to_start) {
            let why = env.members[0].info.fail_reason.clone().unwrap_or_default();
            return Err(format!("no environment can start: {why}"));
        }
        Ok(env)
    }

    /// The environments of a one-cell `spec` with an `[ensemble]` table (its `members`
    /// are the environments): how the Python package and the tests build one, so that a
    /// spec's checks and messages apply unchanged.
    pub fn from_spec(
        registry: Registry, spec: &crate::spec::Spec, action: ActionMode, threads: usize,
    ) -> Result<Self, String> {
        let Some(ensemble) = spec.ensemble.clone() else {
            return Err("an environment needs an `[ensemble]` table (members = num_envs)".into());
        };
        let sized = spec.sized(None, &spec.name).map_err(|e| e.to_string())?;
        let cells =
            crate::spec::cell::expand(&sized, &spec.name, &registry).map_err(|e| e.to_string())?;
        let [cell] = <[Cell; 1]>::try_from(cells).map_err(|cells| {
            format!(
                "an environment is one problem, one method and one h; the parameters expand to {} cells — give single values, not lists",
                cells.len()
            )
        })?;
        // The method entry's own curriculum, where it gives one, is in the cell's ensemble.
        let ensemble = cell.ensemble.clone().unwrap_or(ensemble);
        Self::new(registry, cell, ensemble, action, threads)
    }

    /// Environments.
    pub fn num_envs(&self) -> usize {
        self.shared.num_envs
    }

    /// Length of one action: `n`, the coordinates (force and velocity actions), or the
    /// number of actuators.
    pub fn action_dim(&self) -> usize {
        match self.shared.action {
            ActionMode::Actuators => self.shared.actuators.len(),
            _ => self.shared.n,
        }
    }

    /// The actuators' names and control ranges (with [`ActionMode::Actuators`]).
    pub fn actuators(&self) -> &[driftlab_core::Actuator] {
        &self.shared.actuators
    }

    /// Length of one observation (`2n`: `q` then `v`).
    pub fn observation_dim(&self) -> usize {
        2 * self.shared.n
    }

    /// Steps of one episode (`t_end / h`).
    pub fn episode_steps(&self) -> usize {
        self.shared.episode_steps
    }

    /// The fixed step.
    pub fn h(&self) -> f64 {
        self.shared.cell.h
    }

    /// Threads stepping the environments.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Start every environment's next episode, in parallel, and write the observations
    /// into `obs` (`num_envs × observation_dim`, row by row). With a `seed`, the episodes
    /// start again from episode 0 of that seed; without one, they go on (episode `e + 1`
    /// of each environment, other perturbations), as gymnasium expects of `reset()`.
    pub fn reset(&mut self, seed: Option<u64>, obs: &mut [f64]) -> Result<(), String> {
        self.check_observations(obs)?;
        if let Some(seed) = seed {
            self.shared.ensemble.seed = seed;
        }
        // The first reset after `new` starts episode 0, which `new` began only to check it.
        let first = std::mem::take(&mut self.begun_by_new);
        let restart = seed.is_some() || first;
        let (shared, d) = (&self.shared, 2 * self.shared.n);
        self.pool.install(|| {
            self.members
                .par_iter_mut()
                .zip(obs.par_chunks_mut(d))
                .for_each(|(m, o)| {
                    if restart {
                        m.forget_episodes();
                    }
                    m.begin(shared);
                    m.observe(shared, o);
                })
        });
        Ok(())
    }

    /// One call: every environment's action held over `substeps` steps (or its next
    /// episode begun), in parallel, each writing its observation into its row of `obs`
    /// (`num_envs × observation_dim`). `actions` holds `num_envs × action_dim` numbers,
    /// row by row; `Err` names the first bad argument and the fix, before any step.
    pub fn step(
        &mut self, actions: &[f64], substeps: usize, obs: &mut [f64],
    ) -> Result<(), String> {
        self.check_actions(actions)?;
        if substeps == 0 {
            return Err("substeps = 0: give the steps per call, ≥ 1".into());
        }
        self.check_observations(obs)?;
        self.begun_by_new = false;
        let forces = self.actuator_forces(actions);
        let actions = forces.as_deref().unwrap_or(actions);
        let (shared, n) = (&self.shared, self.shared.n);
        self.pool.install(|| {
            self.members
                .par_iter_mut()
                .zip(actions.par_chunks(n))
                .zip(obs.par_chunks_mut(2 * n))
                .for_each(|((m, a), o)| {
                    m.step(shared, a, substeps);
                    m.observe(shared, o);
                })
        });
        Ok(())
    }

    /// The generalized forces of actuator controls (`None` for other action modes).
    fn actuator_forces(&self, actions: &[f64]) -> Option<Vec<f64>> {
        if self.shared.action != ActionMode::Actuators {
            return None;
        }
        let (n, k) = (self.shared.n, self.shared.actuators.len());
        let mut f = vec![0.0; self.shared.num_envs * n];
        for (fe, ue) in f.chunks_mut(n).zip(actions.chunks(k)) {
            for (a, &u) in self.shared.actuators.iter().zip(ue) {
                a.apply(u, fe);
            }
        }
        Some(f)
    }

    /// `Err` unless `obs` holds `num_envs × observation_dim` numbers.
    fn check_observations(&self, obs: &[f64]) -> Result<(), String> {
        let want = self.shared.num_envs * self.observation_dim();
        if obs.len() == want {
            return Ok(());
        }
        Err(format!(
            "observations: a buffer of {} numbers for {want} (num_envs × observation_dim)",
            obs.len()
        ))
    }

    /// `Err` unless `actions` has `num_envs × n` finite entries.
    fn check_actions(&self, actions: &[f64]) -> Result<(), String> {
        let (envs, n) = (self.shared.num_envs, self.action_dim());
        let what = if self.shared.action == ActionMode::Actuators {
            "actuators"
        } else {
            "coordinates"
        };
        if actions.len() != envs * n {
            return Err(format!(
                "actions: {} numbers for {envs} environments × {n} {what}; give an array of shape ({envs}, {n})",
                actions.len()
            ));
        }
        match actions.iter().position(|x| !x.is_finite()) {
            Some(k) => Err(format!(
                "actions[{}, {}] = {}: give finite actions (a policy that produced NaN or inf)",
                k / n,
                k % n,
                actions[k]
            )),
            None => Ok(()),
        }
    }

    /// Write every environment's observation `[q, v]` into `out`
    /// (`num_envs × observation_dim`, row by row).
    pub fn observe(&self, out: &mut [f64]) -> Result<(), String> {
        self.check_observations(out)?;
        let d = self.observation_dim();
        for (m, o) in self.members.iter().zip(out.chunks_mut(d)) {
            m.observe(&self.shared, o);
        }
        Ok(())
    }

    /// Every environment's report of the last call.
    pub fn infos(&self) -> impl ExactSizeIterator<Item = &EnvInfo> {
        self.members.iter().map(|m| &m.info)
    }
}
