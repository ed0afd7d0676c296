//! [`Rollout`]: the fixed-step part of [`drive()`](super::drive) taken a chunk of steps at
//! a time, for a caller that acts between chunks (a policy, a vectorized environment).
//!
//! It is the same loop, not a second one: the same start ([`super::begin`]), the same
//! fixed steps (`Loop::fixed_steps`, with `t_k = t₀ + k h` counted from the rollout's
//! start, so `n` chunks of `k` steps land on the same times as one run of `n k` steps),
//! the same non-finite and divergence checks and the same failure rows. Chunks of a
//! rollout with nothing changed between them reproduce `drive` bit for bit (test
//! `crates/methods/tests/rollout.rs`).

use super::{begin, Loop, RunOutcome, RunStatus, Schedule};
use crate::error::RunError;
use crate::method::{Method, MethodStats, Stepper};
use crate::observe::{Metrics, Observer};
use crate::state::State;
use crate::system::SystemRef;

/// A run at fixed steps `h` advanced by the caller, chunk by chunk.
pub struct Rollout<'s> {
    run: Loop<'s>,
    stepper: Box<dyn Stepper + 's>,
    h: f64,
    t0: f64,
}

impl<'s> Rollout<'s> {
    /// Start `method` on `sys` from its initial state, at fixed steps `h`; `schedule`
    /// supplies the limits (divergence factor, metrics stride, memory, threads) and its
    /// own steps are ignored. `Err`: the outcome of a start refused or failed, as `drive`
    /// would have reported it.
    pub fn start(
        sys: SystemRef<'s>, method: &dyn Method, h: f64, schedule: &Schedule,
    ) -> Result<Self, Box<RunOutcome>> {
        let (run, stepper) = begin(sys, method, schedule, &method.info())?;
        let t0 = run.state.t;
        Ok(Self {
            run,
            stepper,
            h,
            t0,
        })
    }

    /// Take `n` more steps (none once the rollout has failed); the last of them is
    /// observed as a run's last state. Returns the status.
    pub fn advance(&mut self, n: usize, observers: &mut [&mut dyn Observer]) -> &RunStatus {
        if n == 0 || self.run.out.status != RunStatus::Ok {
            return &self.run.out.status;
        }
        let k0 = self.run.out.steps;
        let ks = k0 + 1..=k0 + n;
        let (run, stepper, (h, t0)) = (&mut self.run, self.stepper.as_mut(), (self.h, self.t0));
        run.fixed_steps(stepper, h, t0, ks, observers);
        if self.run.out.status == RunStatus::Ok {
            // The loop skips this copy after a run's last step; a rollout goes on.
            self.run.last_good.clone_from(&self.run.state);
        }
        &self.run.out.status
    }

    /// Replace the velocities by `v` (a velocity command, of the state's length: the caller
    /// checks it) and restart the method from the new state ([`Self::restart`]).
    pub fn set_velocity(&mut self, v: &[f64]) -> Result<(), RunError> {
        if let RunStatus::Failed { error, .. } = &self.run.out.status {
            return Err(error.clone());
        }
        let state = &mut self.run.state;
        debug_assert_eq!(
            v.len(),
            state.v.len(),
            "the caller checks the command's length"
        );
        for (dst, src) in state.v.iter_mut().zip(v) {
            *dst = *src;
        }
        self.restart()
    }

    /// Restart the method from the current state ([`Stepper::restart`]) after the caller
    /// changed what the state alone does not say (the system's applied forces); a failure
    /// fails the rollout at the last good state.
    pub fn restart(&mut self) -> Result<(), RunError> {
        if let RunStatus::Failed { error, .. } = &self.run.out.status {
            return Err(error.clone());
        }
        let (stepper, state) = (&mut self.stepper, &mut self.run.state);
        let restarted = stepper.restart(state);
        match restarted {
            Ok(()) => {
                self.run.last_good.clone_from(&self.run.state);
                Ok(())
            }
            Err(e) => {
                let t = self.run.last_good.t;
                self.run.state.clone_from(&self.run.last_good);
                self.run.fail(t, e.clone());
                Err(e.into())
            }
        }
    }

    /// The current state (after a failure: the last good one).
    pub fn state(&self) -> &State {
        &self.run.state
    }

    /// Ok, or failed with the time and the reason.
    pub fn status(&self) -> &RunStatus {
        &self.run.out.status
    }

    /// Steps taken since the start.
    pub fn steps(&self) -> usize {
        self.run.out.steps
    }

    /// The method's counters so far.
    pub fn stats(&self) -> MethodStats {
        self.stepper.stats()
    }

    /// The metrics of the current state (residuals, energy error, errors against an exact
    /// solution), evaluated now.
    pub fn metrics(&mut self) -> Metrics {
        self.run.evaluator.evaluate(&self.run.state, false).metrics
    }

    /// The outcome so far, as `drive` reports a run.
    pub fn finish(self) -> RunOutcome {
        self.run.finish(Some(self.stepper.as_ref()))
    }
}
