//! A method is bound to its system by `start`, one start function per system form: every
//! method of the catalog starts on exactly the forms its `info().forms` declares, and
//! refuses the others with the typed `UnsupportedForm` error naming itself and the forms it
//! accepts. A started stepper then takes a step (a stepper cannot exist before its start,
//! so there is no "step before init" to guard against).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{MethodError, StartOptions};
use driftlab_methods::catalog;
use driftlab_problems::build as problem;

#[test]
fn every_method_starts_on_its_declared_forms_and_refuses_the_others() {
    let (mut started, mut refused, mut incompatible) = (0, 0, 0);
    for pid in ["pendulum", "seed003-dae"] {
        let p = problem(pid, &toml::Table::new()).unwrap();
        let sys = p.as_system();
        for e in catalog() {
            let m = (e.build)(&toml::Table::new()).unwrap();
            let declared = m.info().forms.contains(&sys.form());
            let mut state = sys.initial_state();
            match sys.start(m.as_ref(), &mut state, &StartOptions::default()) {
                Ok(mut stepper) => {
                    assert!(
                        declared,
                        "{}: started on {:?}, not declared",
                        e.id,
                        sys.form()
                    );
                    let r = stepper.step(&mut state, 1e-3);
                    assert!(r.is_ok(), "{} on {pid}: first step failed: {r:?}", e.id);
                    assert!((state.t - 1e-3).abs() < 1e-15, "{}: t = {}", e.id, state.t);
                    started += 1;
                }
                Err(MethodError::UnsupportedForm { method, form, .. }) => {
                    assert!(!declared, "{}: refused {form}, which it declares", e.id);
                    assert_eq!(method, e.id, "the refusal names another method");
                    assert_eq!(form, sys.form().name());
                    refused += 1;
                }
                // A form it takes, but a problem without what the method needs (typed on a
                // problem that names no row kinds): refused with the reason.
                Err(MethodError::Incompatible { method, reason, .. }) => {
                    assert!(
                        declared,
                        "{}: refused {pid} as incompatible: {reason}",
                        e.id
                    );
                    assert_eq!(method, e.id, "the refusal names another method");
                    incompatible += 1;
                }
                Err(other) => panic!("{} on {pid}: {other}", e.id),
            }
        }
    }
    // Both forms were offered to every method: each start either bound it or was refused.
    let n = catalog().len();
    assert_eq!(started + refused + incompatible, 2 * n);
    // Measured: typed needs row kinds the pendulum does not name, lie-rkmk4 an attitude
    // quaternion it does not have; of the index-1 DAE only implicit Euler (and IDA, with
    // its feature) takes the form.
    assert!(incompatible <= 2, "{incompatible} incompatible");
    assert!(refused >= n - 2, "{refused} refusals of {n} methods");
}
