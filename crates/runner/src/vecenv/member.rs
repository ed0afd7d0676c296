//! One environment of a [`super::VecEnv`]: its current episode (a perturbed system owning
//! the force it is pushed with, and the rollout stepping it), its action projector and
//! what it last reported.

use super::{ActionMode, EnvInfo, Shared};
use crate::ensemble::action::ActionProjector;
use crate::exec::members::{holonomic_drift, member_setup};
use crate::vecenv::actuated::Actuated;
use driftlab_core::{
    FailKind, MechanicalSystem, Metrics, Observation, Observer, Rollout, RunStatus,
};

/// The metrics the loop evaluated at a chunk's last state.
struct LastMetrics(Option<Metrics>);

impl Observer for LastMetrics {
    fn observe(&mut self, o: &Observation<'_>) {
        self.0 = Some(*o.metrics);
    }
}

self_cell::self_cell!(
    /// An episode: the member's system and the rollout that borrows it for the episode.
    struct Episode {
        owner: Actuated,
        #[covariant]
        dependent: Rollout,
    }
);

/// One environment.
pub(super) struct Member {
    /// Its index in the vector.
    index: usize,
    /// Episodes begun since the last `reset`, this one included.
    episodes: usize,
    /// `None` when the episode could not start (its reason is in `info`).
    episode: Option<Episode>,
    /// Projects velocity commands (velocity actions with projection only).
    projector: Option<ActionProjector>,
    /// The command being projected (velocity actions).
    command: Vec<f64>,
    /// `Φ` of the unperturbed problem (the drift).
    phi: Vec<f64>,
    /// The last step's report.
    pub(super) info: EnvInfo,
    /// The episode ended at the last call: the next call starts a new one.
    done: bool,
}

impl Member {
    /// Environment `index` before its first episode.
    pub(super) fn new(index: usize) -> Self {
        Self {
            index,
            episodes: 0,
            episode: None,
            projector: None,
            command: Vec::new(),
            phi: Vec::new(),
            info: EnvInfo::default(),
            done: true,
        }
    }

    /// Forget the episodes begun (a reset with a new seed starts again at episode 0).
    pub(super) fn forget_episodes(&mut self) {
        self.episodes = 0;
    }

    /// Whether the last episode could not start.
    pub(super) fn failed_to_start(&self) -> bool {
        self.episode.is_none()
    }

    /// Start the next episode: episode `e` of environment `i` is the ensemble's member
    /// `e · num_envs + i`, so its perturbations and curriculum strength are those the
    /// ensemble with as many members would give it.
    pub(super) fn begin(&mut self, shared: &Shared) {
        let global = self.episodes * shared.num_envs + self.index;
        self.episodes += 1;
        self.done = false;
        self.episode = None;
        self.info = EnvInfo {
            episode: global,
            reset: true,
            ..EnvInfo::default()
        };
        let setup = member_setup(
            &shared.registry,
            &shared.cell,
            &shared.ensemble,
            &shared.problem,
            global,
            None,
        );
        let setup = match setup {
            Ok(s) => s,
            Err((kind, reason)) => return self.fail_to_start(kind, reason),
        };
        self.info.strength = setup.strength;
        let method = setup.method;
        let schedule = &shared.schedule;
        let h = shared.cell.h;
        let started = Episode::try_new(Actuated::new(setup.system), |sys| {
            let sys: &dyn MechanicalSystem = sys;
            Rollout::start(sys.into(), method.as_ref(), h, schedule)
        });
        match started {
            Ok(episode) => self.episode = Some(episode),
            Err(out) => {
                let reason = match &out.status {
                    RunStatus::Failed { error, .. } => error.to_string(),
                    RunStatus::Ok => "the method did not start".into(),
                };
                let kind = match &out.status {
                    RunStatus::Failed { error, .. } => error.fail_kind(),
                    RunStatus::Ok => FailKind::Build,
                };
                self.fail_to_start(kind, reason)
            }
        }
        self.measure_with(shared, None);
    }

    /// An episode that could not start: terminated at once, with its reason.
    fn fail_to_start(&mut self, kind: FailKind, reason: String) {
        self.info.terminated = true;
        self.info.fail_kind = Some(kind);
        self.info.fail_reason = Some(format!("env {}: {reason}", self.index));
        self.done = true;
    }

    /// One call of `step`: a new episode if the last one ended (the action is then not
    /// applied), else the action held over `substeps` steps (fewer at the episode's end).
    pub(super) fn step(&mut self, shared: &Shared, action: &[f64], substeps: usize) {
        if self.done {
            return self.begin(shared);
        }
        self.info.reset = false;
        self.info.fail_reason = None;
        let Some(episode) = self.episode.as_mut() else {
            return;
        };
        let applied = apply_action(
            episode,
            shared.action,
            action,
            &mut self.projector,
            &mut self.command,
        );
        self.info.applied = applied.is_ok();
        if let Err(reason) = applied {
            self.info.fail_reason = Some(format!(
                "env {}: the action was not applied: {reason}",
                self.index
            ));
        }
        let remaining = shared
            .episode_steps
            .saturating_sub(episode.borrow_dependent().steps());
        let mut last = LastMetrics(None);
        episode.with_dependent_mut(|_, rollout| {
            rollout.advance(substeps.min(remaining), &mut [&mut last]);
        });
        self.measure_with(shared, last.0);
    }

    /// Fill `info` from the episode's current state: the drift on the unperturbed
    /// constraints, the velocity residual, the energy error (from `seen`, the metrics the
    /// loop evaluated at the state, else evaluated now), the end of the episode.
    fn measure_with(&mut self, shared: &Shared, seen: Option<Metrics>) {
        let Some(episode) = self.episode.as_mut() else {
            return;
        };
        let (info, phi) = (&mut self.info, &mut self.phi);
        episode.with_dependent_mut(|sys, rollout| {
            // The loop observes a chunk's last state only when the chunk ended well.
            let m = seen.unwrap_or_else(|| rollout.metrics());
            let s = rollout.state();
            info.t = s.t;
            info.steps = rollout.steps();
            info.vel_residual = m.vel_residual;
            info.energy_error = m.energy_rel_error;
            info.drift = holonomic_drift(sys.unperturbed(), s.t, &s.q, phi);
            if let RunStatus::Failed { error, .. } = rollout.status() {
                info.terminated = true;
                info.fail_kind = Some(error.fail_kind());
                info.fail_reason = Some(format!("env {}: {error}", self.index));
            }
        });
        info.truncated = !info.terminated && info.steps >= shared.episode_steps;
        self.done = info.terminated || info.truncated;
    }

    /// Write the observation `[q, v]` (the unperturbed initial state when the episode
    /// did not start).
    pub(super) fn observe(&self, shared: &Shared, out: &mut [f64]) {
        let n = shared.n;
        match &self.episode {
            Some(e) => {
                let s = e.borrow_dependent().state();
                out[..n].copy_from_slice(&s.q);
                out[n..].copy_from_slice(&s.v);
            }
            None => {
                let s = shared.problem.initial_state();
                out[..n].copy_from_slice(&s.q);
                out[n..].copy_from_slice(&s.v);
            }
        }
    }
}

/// Hold `action` as a force, or command it as the velocity (projected onto the feasible
/// velocities first when asked).
fn apply_action(
    episode: &mut Episode, mode: ActionMode, action: &[f64],
    projector: &mut Option<ActionProjector>, command: &mut Vec<f64>,
) -> Result<(), String> {
    match mode {
        ActionMode::Force | ActionMode::Actuators => {
            if !episode.borrow_owner().set_force(action) {
                return Ok(());
            }
            episode.with_dependent_mut(|_, rollout| rollout.restart().map_err(|e| e.to_string()))
        }
        ActionMode::Velocity { project } => episode.with_dependent_mut(|sys, rollout| {
            command.clear();
            command.extend_from_slice(action);
            if project {
                if projector.is_none() {
                    *projector = Some(ActionProjector::new(sys).map_err(|e| e.to_string())?);
                }
                if let Some(p) = projector.as_mut() {
                    let t = rollout.state().t;
                    p.project(sys, t, &rollout.state().q, command)
                        .map_err(|e| format!("the velocity command cannot be projected: {e}"))?;
                }
            }
            rollout.set_velocity(command).map_err(|e| e.to_string())
        }),
    }
}
