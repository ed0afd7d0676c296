//! SUNDIALS IDA as catalog method `ida` (feature `ida`): its three forms' residuals vanish
//! at a consistent state and match finite differences of the formulation's own
//! definition, its error falls in proportion to the tolerance on the pendulum over four
//! decades, its counters reach the run, and it holds or drifts from the constraints as
//! each form predicts. Without the feature, asking for `ida` names the feature and the fix.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_methods::find;

#[cfg(not(feature = "ida"))]
#[test]
fn ida_without_the_feature_names_the_feature_and_the_fix() {
    let Err(e) = find("ida") else {
        panic!("`ida` must not be in a build without the feature")
    };
    let msg = e.to_string();
    assert!(msg.contains("`ida`") && msg.contains("feature"), "{msg}");
    assert!(msg.contains("scripts/install-sundials.sh"), "{msg}");
    assert!(msg.contains("--features ida"), "{msg}");
}

#[cfg(feature = "ida")]
mod with_ida {
    use super::find;
    use driftlab_core::{
        drive, Adaptive, ControllerKind, MetricsObserver, Observer, RunOutcome, RunStatus,
        Schedule, SummaryMetrics, Tolerances,
    };
    use driftlab_methods::ida::formulation::{Formulation, Kind};
    use driftlab_problems::build as problem;

    const PERIOD2: &str = "g = 13.750371636040745654980191559621114395801712";

    fn schedule(tol: f64, t_end: f64) -> Adaptive {
        Adaptive {
            tol: Tolerances {
                rtol: tol,
                atol: tol,
            },
            controller: ControllerKind::Gustafsson,
            t_end,
            h0: 1e-6,
            h_min: 0.0,
            h_max: t_end,
            output_dt: None,
        }
    }

    fn run(pid: &str, pp: &str, form: &str, a: Adaptive) -> (RunOutcome, SummaryMetrics) {
        let p = problem(pid, &pp.parse().unwrap()).unwrap();
        let params: toml::Table = format!("formulation = \"{form}\"").parse().unwrap();
        let mut m = (find("ida").unwrap().build)(&params).unwrap();
        let mut obs = MetricsObserver::new(0);
        let out = drive(
            p.as_system(),
            m.as_mut(),
            &Schedule::adaptive(a),
            &mut [&mut obs as &mut dyn Observer],
        );
        (out, obs.summary)
    }

    /// At the consistent start (q₀, v₀, a₀, λ₀ of the acceleration-level KKT system) the
    /// residual of every form is zero to round-off, and F is linear in y' exactly as each
    /// form states: ∂F/∂y' by central differences is I on the q rows, M on the velocity
    /// rows of GGL and index 1, Φ_q on the acceleration rows of index 1.
    #[test]
    fn every_form_vanishes_at_a_consistent_state() {
        let p = problem("andrews", &toml::Table::new()).unwrap();
        let driftlab_core::SystemRef::Mechanical(sys) = p.as_system() else {
            panic!()
        };
        let mut s = sys.initial_state();
        driftlab_methods::dynamics::consistent_start(
            sys,
            driftlab_methods::dynamics::KktChoice::DenseLu.options(&Default::default()),
            &mut s,
        )
        .unwrap();
        for kind in [Kind::Index3, Kind::Ggl, Kind::Index1] {
            let mut f = Formulation::new(kind, sys);
            let dim = f.dim();
            let (mut y, mut yp, mut r) = (vec![0.0; dim], vec![0.0; dim], vec![0.0; dim]);
            f.start(&s, &mut y, &mut yp);
            f.residual(sys, 0.0, &y, &yp, &mut r);
            let scale = 1.0 + s.lambda.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
            let worst = r.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
            assert!(
                worst < 1e-9 * scale,
                "{kind:?}: residual {worst:e} at the start"
            );
            // ∂F/∂y'_0 (first position): a unit column on row 0 in every form.
            let (mut rp, mut rm) = (vec![0.0; dim], vec![0.0; dim]);
            let d = 1e-6;
            yp[0] += d;
            f.residual(sys, 0.0, &y, &yp, &mut rp);
            yp[0] -= 2.0 * d;
            f.residual(sys, 0.0, &y, &yp, &mut rm);
            for i in 0..dim {
                let fd = (rp[i] - rm[i]) / (2.0 * d);
                let want = f64::from(u8::from(i == 0));
                assert!((fd - want).abs() < 1e-6, "{kind:?}: ∂F_{i}/∂y'_0 = {fd}");
            }
        }
    }

    /// GGL over four decades of rtol = atol on the period-2 pendulum over one period: the
    /// end position error falls monotonically and in proportion to the tolerance. BDF
    /// codes with local error-per-step control are tolerance-proportional, global error
    /// ∝ tol (Shampine, "Tolerance proportionality in ODE codes", 1989): measured slope
    /// 0.88 (2.2e-4, 3.9e-5, 6.5e-6, 4.9e-7, 6.8e-8 for rtol 1e-5 … 1e-9).
    #[test]
    fn ggl_error_is_proportional_to_the_tolerance() {
        let tols = [1e-5, 1e-6, 1e-7, 1e-8, 1e-9];
        let errs: Vec<f64> = tols
            .iter()
            .map(|&tol| {
                let (out, s) = run("pendulum", PERIOD2, "ggl", schedule(tol, 2.0));
                assert_eq!(out.status, RunStatus::Ok, "rtol {tol}");
                s.err_q
            })
            .collect();
        for w in errs.windows(2) {
            assert!(w[1] < w[0], "error must fall with rtol: {errs:?}");
        }
        let slope = (errs[4] / errs[0]).log10() / (tols[4] / tols[0]).log10();
        assert!((0.7..=1.3).contains(&slope), "slope {slope}: {errs:?}");
    }

    /// IDA's counters reach the run: steps are its internal steps, every one observed;
    /// each Newton iteration is one solve; setups (Jacobian + LU) are at most one per
    /// iteration; GGL holds Φ = 0 and Φ_q v = 0 to its Newton tolerance, the index-1 form
    /// lets them drift.
    #[test]
    fn counters_and_constraint_levels() {
        let (ggl, sg) = run("pendulum", PERIOD2, "ggl", schedule(1e-8, 2.0));
        let (idx1, s1) = run("pendulum", PERIOD2, "index1", schedule(1e-8, 2.0));
        for out in [&ggl, &idx1] {
            assert_eq!(out.status, RunStatus::Ok);
            let a = out.adaptive.unwrap();
            assert_eq!(out.steps, out.stats.steps, "every IDA step observed");
            assert_eq!(a.accepted, out.steps);
            // One dense solve per Newton iteration, plus the start's KKT solve for (a₀, λ₀).
            assert_eq!(out.stats.solves, out.stats.newton_iterations + 1);
            assert!(out.stats.factorizations <= out.stats.newton_iterations);
            assert!(out.stats.factorizations > 0 && a.h_max_used > a.h_min_used);
        }
        // IDA stops Newton when the WRMS correction is below 0.33 (its epsNewt), so a
        // component's correction is below 0.33·√6·(rtol|q| + atol) ≤ 1.6e-8 here, and
        // ‖Φ_q‖ = 2ℓ = 2: Φ ≤ 3.2e-8 (measured 1.3e-8).
        assert!(
            sg.max_pos_residual < 3.2e-8,
            "GGL Φ {:e}",
            sg.max_pos_residual
        );
        assert!(
            s1.max_pos_residual > 10.0 * sg.max_pos_residual,
            "index 1 must drift: {:e} vs GGL {:e}",
            s1.max_pos_residual,
            sg.max_pos_residual
        );
    }

    /// Andrews (IVP Test Set, index 3): with the index scaling of the tolerances the
    /// index-3 and GGL forms run through; without it IDA's Newton test on the index-2 and
    /// 3 components fails at the start (a failed run naming IDA's flag, not a panic).
    #[test]
    fn andrews_needs_the_index_scaling() {
        let (out, s) = run("andrews", "", "ggl", schedule(1e-8, 0.03));
        assert_eq!(out.status, RunStatus::Ok);
        assert!(s.scd > 5.0, "scd {}", s.scd);
        let p = problem("andrews", &toml::Table::new()).unwrap();
        let params: toml::Table = "formulation = \"ggl\"\nindex_scaling = false"
            .parse()
            .unwrap();
        let mut m = (find("ida").unwrap().build)(&params).unwrap();
        let out = drive(
            p.as_system(),
            m.as_mut(),
            &Schedule::adaptive(schedule(1e-8, 0.03)),
            &mut [],
        );
        let RunStatus::Failed { error, .. } = out.status else {
            panic!("expected IDA to fail without index scaling")
        };
        assert!(
            error.kind() == "external" && error.to_string().contains("IDA_CONV_FAIL"),
            "{error}"
        );
    }
}
