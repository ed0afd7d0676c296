//! `Schedule::metrics_stride` (issue 12): the metrics are evaluated on every k-th step, on
//! the steps an observer asks for and on the last state — and only there — while the
//! steps themselves, and so the final state, do not change.

use driftlab_core::{drive, Observation, Observer, RunStatus, Schedule};
use driftlab_methods::build;
use driftlab_problems::build as problem;

/// The steps whose metrics the observers saw.
struct Steps(Vec<usize>);
impl Observer for Steps {
    fn observe(&mut self, o: &Observation<'_>) {
        self.0.push(o.step);
    }
}

/// An observer that also wants every 7th step (a trace with its own stride).
struct Wants7(Vec<usize>);
impl Observer for Wants7 {
    fn observe(&mut self, o: &Observation<'_>) {
        self.0.push(o.step);
    }
    fn wants(&self, step: usize) -> bool {
        step.is_multiple_of(7)
    }
}

fn run(stride: usize, observer: &mut dyn Observer) -> driftlab_core::RunOutcome {
    let p = problem("pendulum", &toml::Table::new()).expect("pendulum");
    let mut m = build("rattle", &toml::Table::new(), None).expect("rattle");
    let mut schedule = Schedule::fixed(0.01, 0.25); // 25 steps
    schedule.metrics_stride = stride;
    drive(p.as_system(), m.as_mut(), &schedule, &mut [observer])
}

#[test]
fn stride_selects_the_evaluated_steps_and_leaves_the_run_unchanged() {
    let mut every = Steps(Vec::new());
    let full = run(1, &mut every);
    assert_eq!(every.0, (0..=25).collect::<Vec<_>>());
    let mut sparse = Steps(Vec::new());
    let strided = run(10, &mut sparse);
    assert_eq!(
        sparse.0,
        vec![0, 10, 20, 25],
        "every 10th step and the last"
    );
    assert_eq!(full.status, RunStatus::Ok);
    assert_eq!(strided.steps, 25);
    for (a, b) in full.final_state.q.iter().zip(&strided.final_state.q) {
        assert_eq!(
            a.to_bits(),
            b.to_bits(),
            "the steps do not depend on the stride"
        );
    }
    let mut wants = Wants7(Vec::new());
    run(10, &mut wants);
    assert_eq!(
        wants.0,
        vec![0, 7, 10, 14, 20, 21, 25],
        "stride ∪ wanted ∪ last"
    );
}
