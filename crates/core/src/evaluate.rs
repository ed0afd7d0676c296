//! The metrics of a state, computed identically for every method: one evaluator per
//! system form, bound to its system when the run starts (in the start module, `system.rs`),
//! so that nothing after the start asks which form a system has.
//!
//! An evaluator computes everything an observer may want from the system — the
//! [`Metrics`] columns, the rows of `Φ` for a violation monitor, the momentum error and,
//! at the last state, the published reference's score — and hands it to the observers as
//! one [`Observation`]; observers only accumulate.

use crate::observe::{Metrics, RefResiduals};
use crate::pattern::ProductPattern;
use crate::state::State;
use crate::system::{ExactSolution, ImplicitDae, MechanicalSystem, SemiExplicitDae};

/// What the loop hands every observer after evaluating a state.
pub struct Observation<'a> {
    /// The state.
    pub state: &'a State,
    /// Its metrics.
    pub metrics: &'a Metrics,
    /// Every row of `Φ(t, q)` (index-1: `g(t, x, z)`) at this state, no row masked by
    /// priority: what a violation monitor compares with its allowances.
    pub rows: &'a [f64],
    /// `‖p − p₀‖∞` of the problem's conserved momenta against the run's first evaluated
    /// state (NaN where the problem defines none).
    pub momentum_error: f64,
    /// At the last state, when it is at the time of the problem's published reference:
    /// the score against it and the reference's own residuals.
    pub published: Option<Published>,
    /// Steps taken so far.
    pub step: usize,
    /// Whether this is the run's final state (successful or not).
    pub last: bool,
}

/// The last state scored against a published reference at its time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Published {
    /// Significant correct digits ([`crate::ReferenceSolution::scd`]).
    pub scd: f64,
    /// The published state's own position and velocity residuals (its energy against
    /// the run's initial energy is not checked: a driven or stiff Test Set problem does
    /// not conserve it).
    pub residuals: RefResiduals,
}

/// What one evaluation yields besides the metrics (borrowed from the evaluator).
pub(crate) struct Evaluated<'a> {
    pub(crate) metrics: Metrics,
    pub(crate) rows: &'a [f64],
    pub(crate) momentum_error: f64,
    pub(crate) published: Option<Published>,
}

/// A metrics evaluator bound to one system, with preallocated buffers.
pub(crate) trait Evaluate: Send {
    /// Evaluate `state`; `last` asks for the published reference's score too.
    fn evaluate(&mut self, state: &State, last: bool) -> Evaluated<'_>;
}

pub(crate) fn inf_norm(x: &[f64]) -> f64 {
    x.iter().fold(0.0_f64, |m, v| {
        if v.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.max(v.abs())
        }
    })
}

fn inf_diff(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return f64::NAN;
    }
    a.iter().zip(b).fold(0.0_f64, |m, (x, y)| {
        if (x - y).is_nan() {
            f64::NAN
        } else {
            m.max((x - y).abs())
        }
    })
}

/// `‖q − q_e‖∞`, `‖v − v_e‖∞`, `‖λ − λ_e‖∞` against the exact state (NaN without one).
fn exact_errors(state: &State, exact: Option<&ExactSolution>) -> (f64, f64, f64) {
    match exact {
        Some(e) => (
            inf_diff(&state.q, &e.q),
            inf_diff(&state.v, &e.v),
            inf_diff(&state.lambda, &e.lambda),
        ),
        None => (f64::NAN, f64::NAN, f64::NAN),
    }
}

/// A reference position that is not a number is as far off its manifold as can be (NaN
/// velocities or multipliers are ones a reference does not give: the IVP Test Set's snake
/// gives positions only).
fn non_finite_reference(r: &ExactSolution) -> Option<RefResiduals> {
    (!r.q.iter().all(|v| v.is_finite())).then(|| RefResiduals {
        pos: f64::INFINITY,
        ..RefResiduals::default()
    })
}

/// The unilateral rows' penetration `max_i max(0, −g_i)` and the approach velocity of the
/// closed rows `max over g_i ≤ 0 of max(0, −G_i v)`; NaN without unilateral rows.
fn contact_residuals(sys: &dyn MechanicalSystem, state: &State) -> (f64, f64) {
    let Some(u) = sys.unilateral() else {
        return (f64::NAN, f64::NAN);
    };
    let (k, n) = (u.rows(), state.q.len());
    let (mut g, mut gq) = (vec![0.0; k], vec![0.0; k * n]);
    u.gaps(state.t, &state.q, &mut g);
    u.gap_jacobian(state.t, &state.q, &mut gq);
    let mut penetration = 0.0_f64;
    let mut approach = 0.0_f64;
    for (i, gi) in g.iter().enumerate() {
        penetration = penetration.max(-gi);
        if *gi <= 0.0 {
            let rate: f64 = (0..n).map(|c| gq[i * n + c] * state.v[c]).sum();
            approach = approach.max(-rate);
        }
    }
    (penetration, approach)
}

/// The metrics of a mechanical system's states.
pub(crate) struct MechanicalMetrics<'s> {
    sys: &'s dyn MechanicalSystem,
    /// Rows of lower priority (excluded from the residuals, reported apart).
    deferred: Vec<usize>,
    h0: f64,
    scale: f64,
    phi: Vec<f64>,
    /// `Φ` before the lower-priority rows are masked (filled only when there are some).
    rows: Vec<f64>,
    jac: Vec<f64>,
    /// Φ_q's pattern (built once: a problem may assemble it on every call).
    pattern: ProductPattern,
    gamma: Vec<f64>,
    phit: Vec<f64>,
    jv: Vec<f64>,
    /// The momenta at the first evaluated state.
    momentum0: Option<Vec<f64>>,
}

impl<'s> MechanicalMetrics<'s> {
    /// Prepare for `sys`, with the reference energy taken from `initial`.
    pub(crate) fn new(sys: &'s dyn MechanicalSystem, initial: &State) -> Self {
        let d = sys.dims();
        let h0 = sys
            .energy(initial.t, &initial.q, &initial.v)
            .unwrap_or(f64::NAN);
        let pattern = sys.jacobian_pattern();
        let deferred = sys
            .prioritized()
            .map(|p| p.priorities())
            .map(|p| (0..p.len()).filter(|&r| p[r] > 0).collect())
            .unwrap_or_default();
        Self {
            sys,
            deferred,
            h0,
            scale: h0.abs().max(sys.energy_scale()),
            phi: vec![0.0; d.m],
            rows: Vec::new(),
            jac: vec![0.0; pattern.nnz()],
            pattern: ProductPattern::new(pattern),
            gamma: vec![0.0; d.m],
            phit: vec![0.0; d.m],
            jv: vec![0.0; d.m],
            momentum0: None,
        }
    }

    /// The residuals of the mechanical state `(t, q, v)`: `‖Φ‖∞` and `‖Φ_q v + Φ_t‖∞`
    /// (lower-priority rows excluded), and its relative energy error; `self.jac` holds
    /// `Φ_q(t, q)` afterwards.
    fn residuals(&mut self, t: f64, q: &[f64], v: &[f64]) -> RefResiduals {
        let s = self.sys;
        s.constraints(t, q, &mut self.phi);
        for &r in &self.deferred {
            self.phi[r] = 0.0;
        }
        let pos = inf_norm(&self.phi);
        s.jacobian(t, q, &mut self.jac);
        self.pattern.mul_vec(&self.jac, v, &mut self.jv);
        s.phi_t(t, q, &mut self.phit);
        for (a, b) in self.jv.iter_mut().zip(&self.phit) {
            *a += b;
        }
        for &r in &self.deferred {
            self.jv[r] = 0.0;
        }
        RefResiduals {
            pos,
            vel: inf_norm(&self.jv),
            energy: self.energy_error(t, q, v),
        }
    }

    /// `|H − H0| / max(|H0|, scale)` (NaN without an energy).
    fn energy_error(&self, t: f64, q: &[f64], v: &[f64]) -> f64 {
        match self.sys.energy(t, q, v) {
            Some(h) => (h - self.h0).abs() / self.scale,
            None => f64::NAN,
        }
    }

    /// The residuals of a reference state at `t` ([`RefResiduals`]).
    fn reference_residuals(&mut self, t: f64, r: &ExactSolution) -> RefResiduals {
        if let Some(off) = non_finite_reference(r) {
            return off;
        }
        if r.q.len() == self.sys.dims().n && r.v.len() == r.q.len() {
            self.residuals(t, &r.q, &r.v)
        } else {
            RefResiduals::default()
        }
    }

    /// The position rows at `state`: `‖Φ‖∞` over the priority-0 rows and over the
    /// deferred ones (NaN without priorities); `self.phi` holds the masked rows after.
    fn position_rows(&mut self, state: &State) -> (f64, f64) {
        self.sys.constraints(state.t, &state.q, &mut self.phi);
        let deferred = if self.deferred.is_empty() {
            f64::NAN
        } else {
            self.rows.clone_from(&self.phi);
            self.deferred
                .iter()
                .fold(0.0_f64, |m, &r| m.max(self.phi[r].abs()))
        };
        for &r in &self.deferred {
            self.phi[r] = 0.0;
        }
        (inf_norm(&self.phi), deferred)
    }

    /// `‖Φ_q v + Φ_t‖∞` and `‖Φ_q a − γ‖∞` at `state` (NaN without the method's `a`);
    /// `self.jac` must hold `Φ_q(t, q)`.
    fn velocity_acceleration(&mut self, state: &State) -> (f64, f64) {
        let (s, t, pat) = (self.sys, state.t, &self.pattern);
        pat.mul_vec(&self.jac, &state.v, &mut self.jv);
        s.phi_t(t, &state.q, &mut self.phit);
        for (a, b) in self.jv.iter_mut().zip(&self.phit) {
            *a += b;
        }
        for &r in &self.deferred {
            self.jv[r] = 0.0;
        }
        let vel = inf_norm(&self.jv);
        if state.a.iter().any(|x| x.is_nan()) || state.a.is_empty() {
            return (vel, f64::NAN);
        }
        s.curvature(t, &state.q, &state.v, &mut self.gamma);
        pat.mul_vec(&self.jac, &state.a, &mut self.jv);
        for (a, b) in self.jv.iter_mut().zip(&self.gamma) {
            *a -= b;
        }
        for &r in &self.deferred {
            self.jv[r] = 0.0;
        }
        (vel, inf_norm(&self.jv))
    }

    /// Metrics of `state`, given its errors against the exact solution `(q, v, λ)` and
    /// the reference's residuals.
    fn state_metrics(
        &mut self, state: &State, (err_q, err_v, err_lambda): (f64, f64, f64),
        reference: RefResiduals,
    ) -> Metrics {
        let t = state.t;
        let (pos, deferred) = self.position_rows(state);
        self.sys.jacobian(t, &state.q, &mut self.jac);
        let (vel, acc) = self.velocity_acceleration(state);
        let (penetration, approach_velocity) = contact_residuals(self.sys, state);
        Metrics {
            t,
            pos_residual: pos,
            vel_residual: vel,
            acc_residual: acc,
            energy_rel_error: self.energy_error(t, &state.q, &state.v),
            err_q,
            err_v,
            err_lambda,
            deferred_residual: deferred,
            penetration,
            approach_velocity,
            reference,
        }
    }

    /// `‖p − p₀‖∞` of the conserved momenta, where the problem defines them.
    fn momentum_error(&mut self, state: &State) -> f64 {
        let Some(p) = self.sys.momentum(state.t, &state.q, &state.v) else {
            return f64::NAN;
        };
        let p0 = self.momentum0.get_or_insert_with(|| p.clone());
        p.iter()
            .zip(p0.iter())
            .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()))
    }

    /// The score of `state` against the published reference, when it is at its time.
    fn published(&self, state: &State) -> Option<Published> {
        let r = self.sys.reference()?;
        if (state.t - r.t).abs() > 1e-9 * r.t.abs().max(1.0) {
            return None;
        }
        let mut fresh = MechanicalMetrics::new(self.sys, &self.sys.initial_state());
        Some(Published {
            scd: r.scd(&state.q, &state.v, &state.lambda),
            residuals: RefResiduals {
                energy: f64::NAN,
                ..fresh.reference_residuals(r.t, &r.state)
            },
        })
    }
}

impl Evaluate for MechanicalMetrics<'_> {
    fn evaluate(&mut self, state: &State, last: bool) -> Evaluated<'_> {
        let published = if last { self.published(state) } else { None };
        let exact = self.sys.exact(state.t);
        let reference = match &exact {
            Some(e) => self.reference_residuals(state.t, e),
            None => RefResiduals::default(),
        };
        let errors = exact_errors(state, exact.as_ref());
        let metrics = self.state_metrics(state, errors, reference);
        let momentum_error = self.momentum_error(state);
        let rows = if self.deferred.is_empty() {
            &self.phi
        } else {
            &self.rows
        };
        Evaluated {
            metrics,
            rows,
            momentum_error,
            published,
        }
    }
}

/// The metrics of a semi-explicit index-1 DAE's states: `‖g‖∞` and the errors against
/// its exact solution (no velocities, energy or momenta).
pub(crate) struct Index1Metrics<'s> {
    sys: &'s dyn SemiExplicitDae,
    g: Vec<f64>,
}

impl<'s> Index1Metrics<'s> {
    /// Prepare for `sys`.
    pub(crate) fn new(sys: &'s dyn SemiExplicitDae) -> Self {
        Self {
            sys,
            g: vec![0.0; sys.dims().1],
        }
    }

    /// `‖g(t, x, z)‖∞` at `(x, z)`.
    fn g_norm(&mut self, t: f64, x: &[f64], z: &[f64]) -> f64 {
        self.sys.g(t, x, z, &mut self.g);
        inf_norm(&self.g)
    }

    /// The residual of a reference state at `t` ([`RefResiduals`], position row only).
    fn reference_residuals(&mut self, t: f64, r: &ExactSolution) -> RefResiduals {
        if let Some(off) = non_finite_reference(r) {
            return off;
        }
        let (nx, nz) = self.sys.dims();
        if r.q.len() != nx || r.lambda.len() != nz {
            return RefResiduals::default();
        }
        RefResiduals {
            pos: self.g_norm(t, &r.q, &r.lambda),
            ..RefResiduals::default()
        }
    }
}

impl Evaluate for Index1Metrics<'_> {
    fn evaluate(&mut self, state: &State, _last: bool) -> Evaluated<'_> {
        let exact = self.sys.exact(state.t);
        let reference = match &exact {
            Some(e) => self.reference_residuals(state.t, e),
            None => RefResiduals::default(),
        };
        let (err_q, _, err_lambda) = exact_errors(state, exact.as_ref());
        let metrics = Metrics {
            pos_residual: self.g_norm(state.t, &state.q, &state.lambda),
            err_q,
            err_lambda,
            reference,
            ..Metrics::undefined(state.t)
        };
        Evaluated {
            metrics,
            rows: &self.g,
            momentum_error: f64::NAN,
            published: None,
        }
    }
}

/// The metrics of a fully implicit system's states: the residual `‖F(t, y, y′)‖∞` of the
/// stored pair (the position-residual column) and the errors of `y` and `y′` against its
/// exact solution (the `err_q` and `err_v` columns); no multipliers, energy or momenta.
pub(crate) struct ImplicitMetrics<'s> {
    sys: &'s dyn ImplicitDae,
    r: Vec<f64>,
}

impl<'s> ImplicitMetrics<'s> {
    /// Prepare for `sys`.
    pub(crate) fn new(sys: &'s dyn ImplicitDae) -> Self {
        Self {
            sys,
            r: vec![0.0; sys.dim()],
        }
    }

    /// `‖F(t, y, y′)‖∞`.
    fn residual_norm(&mut self, t: f64, y: &[f64], yp: &[f64]) -> f64 {
        if y.len() != self.r.len() || yp.len() != self.r.len() {
            return f64::NAN;
        }
        self.sys.residual(t, y, yp, &mut self.r);
        inf_norm(&self.r)
    }
}

impl Evaluate for ImplicitMetrics<'_> {
    fn evaluate(&mut self, state: &State, _last: bool) -> Evaluated<'_> {
        let exact = self.sys.exact(state.t);
        let reference = match &exact {
            Some(e) if non_finite_reference(e).is_none() => RefResiduals {
                pos: self.residual_norm(state.t, &e.q, &e.v),
                ..RefResiduals::default()
            },
            Some(e) => non_finite_reference(e).unwrap_or_default(),
            None => RefResiduals::default(),
        };
        let (err_q, err_v, _) = exact_errors(state, exact.as_ref());
        let metrics = Metrics {
            pos_residual: self.residual_norm(state.t, &state.q, &state.v),
            err_q,
            err_v,
            reference,
            ..Metrics::undefined(state.t)
        };
        Evaluated {
            metrics,
            rows: &self.r,
            momentum_error: f64::NAN,
            published: None,
        }
    }
}
