//! `ida`: SUNDIALS IDA, the variable-order (1–5), variable-step BDF code for implicit DAEs
//! `F(t, y, y') = 0`, run on a mechanical system in one of three forms
//! ([`formulation`]) side by side with the catalog's own methods.
//!
//! ```text
//! Σ_{j=0..k} α_{n,j} y_{n−j} / h_n = y'_n,   F(t_n, y_n, y'_n) = 0   (fixed-leading-coefficient BDF)
//! Newton on G(y_n) = F(t_n, y_n, α_s/h_n (y_n − y_n^(0)) + y'_n^(0)) with ∂F/∂y + (α_s/h_n) ∂F/∂y'
//! ```
//!
//! The Newton matrix is dense and formed by IDA's difference quotients; IDA keeps it
//! (and its LU) across steps while the convergence rate and `h` allow. The local error
//! test is IDA's, with weights `1/(rtol |y_i| + atol)` over the components named by
//! [`formulation::ErrorTest`]: by default the variables of index ≥ 2 are left out (`v`,
//! `a`, `λ` of the index-3 form; `λ`, `μ` of GGL). With them in the test, IDA fails on
//! the index-3 pendulum within 1e-4 s (error-test or corrector failures at h ≈ 1e-12).
//!
//! Stepping: in an error-controlled run IDA controls its own steps
//! ([`driftlab_core::ErrorEstimate::own_controller`]): each call takes one internal step
//! up to the next output time (`IDA_ONE_STEP` with a stop time), so every accepted step
//! is observed and the loop of [`driftlab_core::drive()`] stays the only time loop. In a
//! fixed-step run `h` is an output interval: IDA steps with the parameters' `rtol`,
//! `atol` and its own step sizes and interpolates at `t + h`.
//!
//! Counters map to the runs table: `steps` IDA's steps, `newton_iterations` its
//! nonlinear iterations (one dense solve each), `factorizations` its linear-solver setups,
//! `jacobian_evaluations` its Jacobians; error-test failures are the rejected steps and
//! Newton convergence failures the Newton failures.
//!
//! Citation: A. C. Hindmarsh, P. N. Brown, K. E. Grant, S. L. Lee, R. Serban, D. E. Shumaker,
//! C. S. Woodward, "SUNDIALS: Suite of nonlinear and differential/algebraic equation
//! solvers", ACM TOMS 31(3) (2005) 363–396; the BDF/DAE theory: K. E. Brenan,
//! S. L. Campbell, L. R. Petzold, *Numerical Solution of Initial-Value Problems in DAEs*,
//! SIAM 1996, ch. 3 and 5. Requires SUNDIALS 6.x (built with `--features ida`).

mod ffi;
pub mod formulation;
mod session;

use crate::dynamics::{consistent_start, KktChoice};
use driftlab_core::prelude::*;
use formulation::{ErrorTest, Formulation, Kind};
use serde::{Deserialize, Serialize};
use session::{Counts, Session, Settings};

/// Parameters.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct IdaParams {
    /// `index3` (y = (q, v, a, λ), default), `ggl` (index 2) or `index1`.
    pub formulation: Kind,
    /// Components in the local error test: `auto` (default: what the form needs, see
    /// [`ErrorTest::Auto`]), `all`, `differential`, `positions`.
    pub error_test: ErrorTest,
    /// Largest BDF order, 1–5 (default 5).
    pub max_order: u8,
    /// Relative tolerance of fixed-step runs (error-controlled runs take the spec's).
    pub rtol: f64,
    /// Absolute tolerance of fixed-step runs.
    pub atol: f64,
    /// Scale the absolute tolerances of index-2 and index-3 components by `1/h` and
    /// `1/h²` before every step, as RADAU5 does (default true; see
    /// [`Formulation::index_scaled_atol`]).
    pub index_scaling: bool,
}

impl Default for IdaParams {
    fn default() -> Self {
        Self {
            formulation: Kind::Index3,
            error_test: ErrorTest::Auto,
            max_order: 5,
            rtol: 1e-8,
            atol: 1e-8,
            index_scaling: true,
        }
    }
}

/// Largest `dim y` for IDA's dense Newton matrix (one 2000 × 2000 matrix is 32 MB; its
/// difference-quotient Jacobian costs `dim y` residuals).
const MAX_DENSE_DIM: usize = 2000;

/// Declared properties at default parameters.
pub fn info() -> MethodInfo {
    info_for(&IdaParams::default())
}

fn info_for(p: &IdaParams) -> MethodInfo {
    let (form, enforces) = match p.formulation {
        Kind::Index3 => ("index-3 form y = (q, v, a, λ)", [true, false, false]),
        Kind::Ggl => ("GGL index-2 form y = (q, v, λ, μ)", [true, true, false]),
        Kind::Index1 => ("index-1 form y = (q, v, λ)", [false, false, true]),
    };
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: BDF methods are not symplectic (their one-step map is not even defined on the phase space alone: they carry a history)".into(),
        family: "bdf".into(),
        title: format!("SUNDIALS IDA (variable-order BDF) on the {form}"),
        equations: "Σ_j α_{n,j} y_{n−j} / h_n = y'_n, F(t_n, y_n, y'_n) = 0, orders 1–5, \
                    Newton with the dense difference-quotient matrix ∂F/∂y + α/h ∂F/∂y'"
            .into(),
        citation: "Hindmarsh et al., SUNDIALS, ACM TOMS 31 (2005) 363–396; Brenan, Campbell & \
                   Petzold, Numerical Solution of IVPs in DAEs, SIAM 1996"
            .into(),
        // Tolerance-controlled with its own steps: no order in the output interval h.
        orders: DeclaredOrders::default(),
        enforces: ConstraintLevels {
            position: enforces[0],
            velocity: enforces[1],
            acceleration: enforces[2],
        },
        implicit: true,
        error_estimate: Some(ErrorEstimate {
            order: p.max_order + 1,
            rule: "IDA's own: BDF local error estimate from the predictor–corrector difference, \
                   weighted RMS with 1/(rtol|y_i| + atol) over the components of `error_test`; \
                   IDA's own step and order selection"
                .into(),
            own_controller: true,
        }),
        ..MethodInfo::default()
    }
}

/// SUNDIALS IDA as a catalog method.
pub struct Ida {
    params: IdaParams,
    /// Tolerances of fixed-step runs (the parameters' `rtol`, `atol`).
    tol: Tolerances,
}

/// [`Ida`] bound to its system.
struct IdaStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    own_steps: bool,
    session: Session,
    stats: MethodStats,
    counts: Counts,
}

impl Ida {
    /// Validated parameters.
    pub fn new(params: IdaParams) -> Result<Self, ParamError> {
        let bad = |field: &'static str, value: f64, fix: &str| ParamError::OutOfRange {
            id: ID.into(),
            field,
            value,
            fix: fix.into(),
        };
        if !(1..=5).contains(&params.max_order) {
            let order = f64::from(params.max_order);
            return Err(bad("max_order", order, "IDA's BDF orders are 1 to 5"));
        }
        for (field, x) in [("rtol", params.rtol), ("atol", params.atol)] {
            if !(x.is_finite() && x > 0.0) {
                return Err(bad(field, x, "give a finite tolerance > 0, e.g. 1e-8"));
            }
        }
        Ok(Self {
            tol: Tolerances {
                rtol: params.rtol,
                atol: params.atol,
            },
            params,
        })
    }
}

impl IdaStepper<'_> {
    /// The step's share of IDA's counters, and the run's totals in `stats`.
    fn account(&mut self, now: Counts) -> StepReport {
        let before = std::mem::replace(&mut self.counts, now);
        self.stats.steps = now.steps;
        self.stats.newton_iterations += now.newton_iterations - before.newton_iterations;
        self.stats.solves += now.newton_iterations - before.newton_iterations;
        self.stats.factorizations += now.setups - before.setups;
        self.stats.jacobian_evaluations += now.jacobians - before.jacobians;
        StepReport {
            newton_iterations: now.newton_iterations - before.newton_iterations,
            factorizations: now.setups - before.setups,
            rejected: now.error_test_failures - before.error_test_failures,
            retried: now.newton_failures - before.newton_failures,
            // IDA's default maximum of Newton iterations per attempt (`maxcor`).
            newton_limit: 4,
            ..StepReport::default()
        }
    }
}

impl Method for Ida {
    fn info(&self) -> MethodInfo {
        info_for(&self.params)
    }

    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let (mut tol, mut own_steps) = (self.tol, false);
        if let Some(t) = opts.tolerances {
            tol = t;
            own_steps = true;
        }
        // First and largest step of an error-controlled run (0: IDA's choice).
        let mut bounds = (0.0, 0.0);
        if let Some((h0, h_max)) = opts.step_bounds {
            bounds = (h0, if h_max.is_finite() { h_max } else { 0.0 });
        }
        let s = sys;
        let form = Formulation::new(self.params.formulation, s);
        if form.dim() > MAX_DENSE_DIM {
            return Err(MethodError::Incompatible {
                method: ID.into(),
                problem: s.info().id,
                reason: format!(
                    "ida runs with a dense Newton matrix here: dim y = {} > {MAX_DENSE_DIM}; \
                     use a sparse method (generalized-alpha, implicit-euler) for systems this large",
                    form.dim()
                ),
            });
        }
        let spent = consistent_start(s, KktChoice::DenseLu.options(opts), state)?;
        let settings = Settings {
            tol,
            error_test: self.params.error_test,
            max_order: self.params.max_order,
            h0: bounds.0,
            h_max: bounds.1,
            index_scaling: self.params.index_scaling,
        };
        let session = Session::new(form, state, &settings)?;
        Ok(Box::new(IdaStepper {
            sys,
            own_steps,
            session,
            stats: spent,
            counts: Counts::default(),
        }))
    }
}

impl Stepper for IdaStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let (s, session) = (self.sys, &mut self.session);
        let t = state.t;
        let reached = session.advance(s, t, t + h, self.own_steps, state)?;
        let now = session.counts();
        state.t = reached;
        let mut report = self.account(now);
        report.taken = Some(reached - t);
        Ok(report)
    }

    fn refresh(&mut self, state: &mut State) -> Result<(), StepError> {
        self.session.restart(state)
    }

    fn stats(&self) -> MethodStats {
        self.stats
    }
}

/// The catalog id `ida`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "ida";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(Ida::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<IdaParams>,
    }
}
