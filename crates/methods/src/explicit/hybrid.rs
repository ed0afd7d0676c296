//! `hybrid`: the switching strategy of seed 001 §3.5.2 ("混合方法"): by the size of the
//! position violation `‖Φ‖∞` at the start of each step,
//!
//! ```text
//! ‖Φ‖ < soft_below           → soft constraints: a = M⁻¹(f − Φ_qᵀ(k_p Φ + k_d Φ̇))   (penalty)
//! soft_below ≤ ‖Φ‖ < project_above → Baumgarte: Φ_q a = γ − 2ξω_n Φ̇ − ω_n² Φ            (KKT)
//! ‖Φ‖ ≥ project_above        → Baumgarte step, then mass-orthogonal projection of q and v
//! q_{n+1} = q_n + h v_n + ½h² a,   v_{n+1} = v_n + h a     (the Taylor update in every regime)
//! ```
//!
//! The regimes reuse the `penalty` and `baumgarte` accelerations and the solver's
//! projections. The switch makes the scheme non-smooth, and the soft regime does not
//! converge to the DAE as h → 0 at fixed stiffness, so no convergence order is declared;
//! what it offers is cheap steps while the violation is small and a hard bound on it.

use crate::dynamics::{add_kkt_stats, kkt_pattern, linear_error, ConstraintsAt, KktChoice};
use crate::explicit::baumgarte::{Baumgarte, BaumgarteParams};
use crate::explicit::penalty::{Penalty, PenaltyParams};
use driftlab_core::prelude::*;
use driftlab_solver::{project_position, project_velocity, KktSolver};
use serde::{Deserialize, Serialize};

/// Parameters of [`Hybrid`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HybridParams {
    /// Below this `‖Φ‖∞` the soft (penalty) regime is used.
    pub soft_below: f64,
    /// At or above this `‖Φ‖∞` the step is followed by a projection.
    pub project_above: f64,
    /// Penalty stiffness of the soft regime.
    pub k_p: f64,
    /// Penalty damping of the soft regime.
    pub k_d: f64,
    /// Baumgarte damping ratio of the middle regime.
    pub xi: f64,
    /// Baumgarte natural frequency of the middle regime.
    pub omega_n: f64,
    /// Projection tolerance.
    pub tol: f64,
}

impl Default for HybridParams {
    fn default() -> Self {
        Self {
            soft_below: 1e-6,
            project_above: 1e-3,
            k_p: 1e4,
            k_d: 10.0,
            xi: 1.0,
            omega_n: 10.0,
            tol: 1e-12,
        }
    }
}

/// Counts of the regimes used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegimeCounts {
    /// Soft steps.
    pub soft: usize,
    /// Baumgarte steps.
    pub baumgarte: usize,
    /// Projected steps.
    pub projected: usize,
}

/// The hybrid switching method.
pub struct Hybrid {
    p: HybridParams,
    soft: Penalty,
    baum: Baumgarte,
}

/// [`Hybrid`] bound to its system.
struct HybridStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: HybridParams,
    soft: Box<dyn Stepper + 's>,
    baum: Box<dyn Stepper + 's>,
    kkt: KktSolver,
    /// Regimes used so far.
    counts: RegimeCounts,
    iterations: usize,
    steps: usize,
    next_projects: bool,
}

impl HybridStepper<'_> {
    /// Pick the regime for the next step from `‖Φ(q)‖∞` at the current state and compute
    /// that regime's `(a, λ)` there (so the reported acceleration is the one used next).
    fn choose(&mut self, state: &mut State) -> Result<(), StepError> {
        let s = self.sys;
        let mut phi = vec![0.0; state.lambda.len()];
        s.constraints(state.t, &state.q, &mut phi);
        let norm = phi.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        self.next_projects = norm >= self.p.project_above;
        if norm < self.p.soft_below {
            self.counts.soft += 1;
            self.soft.refresh(state)
        } else {
            if self.next_projects {
                self.counts.projected += 1;
            } else {
                self.counts.baumgarte += 1;
            }
            self.baum.refresh(state)
        }
    }
}

impl Hybrid {
    /// The method with parameters `p`; `ParamError` unless `0 ≤ soft_below < project_above`,
    /// `tol > 0` and the penalty and Baumgarte gains are valid.
    pub fn new(p: HybridParams) -> Result<Self, ParamError> {
        if !(p.soft_below.is_finite() && p.soft_below >= 0.0 && p.project_above > p.soft_below) {
            return Err(driftlab_core::params::inconsistent(
                ID,
                &[
                    ("soft_below", p.soft_below),
                    ("project_above", p.project_above),
                ],
                "give finite 0 ≤ soft_below < project_above",
            ));
        }
        driftlab_core::params::positive(ID, "tol", p.tol)?;
        let soft = Penalty::new(PenaltyParams {
            k_p: p.k_p,
            k_d: p.k_d,
        })?;
        let baum = Baumgarte::new(BaumgarteParams {
            xi: Some(p.xi),
            omega_n: Some(p.omega_n),
            ..Default::default()
        })?;
        Ok(Self { p, soft, baum })
    }
}

/// Declared properties of `hybrid`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: it switches between penalty, Baumgarte and projection, none symplectic on the constraint manifold".into(),
        family: "switching".into(),
        title: "Hybrid switching: soft (penalty) → Baumgarte → projection by the size of ‖Φ‖".into(),
        equations: "‖Φ‖ < ε_s: a = M⁻¹(f − Φ_qᵀ(k_pΦ + k_dΦ̇));  ε_s ≤ ‖Φ‖ < ε_p: Baumgarte KKT;  ‖Φ‖ ≥ ε_p: Baumgarte + projection;  \
                    q += hv + ½h²a, v += ha"
            .into(),
        citation: "seed 001 §3.5.2 (混合方法)".into(),
        orders: DeclaredOrders { q: None, v: None, lambda: None },
        enforces: ConstraintLevels::default(),
        ..MethodInfo::default()
    }
}

impl Method for Hybrid {
    fn info(&self) -> MethodInfo {
        let mut i = info();
        i.title = format!(
            "{} (ε_s = {:e}, ε_p = {:e})",
            i.title, self.p.soft_below, self.p.project_above
        );
        i
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let s = sys;
        let kkt = KktSolver::new(&kkt_pattern(s), KktChoice::Auto.options(opts))
            .map_err(|e| MethodError::Init(linear_error(state.t, e)))?;
        let soft = self.soft.start(sys, state, opts)?;
        let baum = self.baum.start(sys, state, opts)?;
        let mut stepper = HybridStepper {
            sys,
            p: self.p,
            soft,
            baum,
            kkt,
            counts: RegimeCounts::default(),
            iterations: 0,
            steps: 0,
            next_projects: false,
        };
        stepper.choose(state)?;
        Ok(Box::new(stepper))
    }
}

impl Stepper for HybridStepper<'_> {
    fn counters(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("soft_steps", self.counts.soft),
            ("baumgarte_steps", self.counts.baumgarte),
            ("projected_steps", self.counts.projected),
        ]
    }
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let (s, kkt) = (self.sys, &mut self.kkt);
        let project = self.next_projects;
        crate::dynamics::taylor_update(state, h);
        self.steps += 1;
        let mut report = StepReport {
            factorizations: 1,
            ..Default::default()
        };
        if project {
            let t = state.t;
            let mut mass = vec![0.0; s.mass_pattern().nnz()];
            s.mass(&state.q, &mut mass);
            let mut eval = ConstraintsAt { sys: s, t };
            let params = driftlab_solver::ProjectionParams {
                tol: self.p.tol,
                ..Default::default()
            };
            let r = project_position(kkt, &mass, &mut state.q, &mut eval, &params)
                .map_err(|e| crate::decorators::projection::metric::projection_error(t, e))?;
            s.mass(&state.q, &mut mass);
            project_velocity(kkt, &mass, &state.q, &mut state.v, &mut eval)
                .map_err(|e| crate::decorators::projection::metric::projection_error(t, e))?;
            self.iterations += r.iterations;
            report.projection_iterations = r.iterations;
            report.factorizations += r.iterations + 1;
        }
        self.choose(state)?;
        Ok(report)
    }
    fn stats(&self) -> MethodStats {
        let mut s = self.soft.stats().merged(self.baum.stats());
        s.steps = self.steps;
        add_kkt_stats(&mut s, self.kkt.stats());
        s.projection_iterations += self.iterations;
        s
    }
}

/// The catalog id `hybrid`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "hybrid";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(Hybrid::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<HybridParams>,
    }
}
