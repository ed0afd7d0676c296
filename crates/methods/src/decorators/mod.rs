//! Stabilizations and controls that wrap any method: projection (and its sequential,
//! symmetric and velocity variants), emergency recovery, Richardson error estimation.

/// Forward the named [`Stepper`](driftlab_core::Stepper) functions of a decorator to the
/// stepper it wraps, `self.inner` — the ones the decorator leaves as they are:
///
/// ```ignore
/// impl Stepper for Decorated<'_> {
///     fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> { … }
///     forward_stepper!(accept, reject, refresh, counters, stats);
/// }
/// ```
macro_rules! forward_stepper {
    (@one accept) => {
        fn accept(&mut self) {
            self.inner.accept();
        }
    };
    (@one reject) => {
        fn reject(&mut self) {
            self.inner.reject();
        }
    };
    (@one refresh) => {
        fn refresh(
            &mut self, state: &mut driftlab_core::State,
        ) -> Result<(), driftlab_core::StepError> {
            self.inner.refresh(state)
        }
    };
    (@one restart) => {
        fn restart(
            &mut self, state: &mut driftlab_core::State,
        ) -> Result<(), driftlab_core::StepError> {
            self.inner.restart(state)
        }
    };
    (@one counters) => {
        fn counters(&self) -> Vec<(&'static str, usize)> {
            self.inner.counters()
        }
    };
    (@one stats) => {
        fn stats(&self) -> driftlab_core::MethodStats {
            self.inner.stats()
        }
    };
    ($($name:ident),+ $(,)?) => {
        $(forward_stepper!(@one $name);)+
    };
}

pub mod projection;
pub mod recovery;
pub mod richardson;
pub mod velocity_projection;
