//! `bdf`: the backward differentiation formulas of order k = 1 … 4 at fixed steps on the
//! index-3 form, without the optional SUNDIALS feature (issue 32 W15):
//!
//! ```text
//! Σ_{j=0}^{k} α_j q_{n+1−j} = h v_{n+1},     M Σ_{j=0}^{k} α_j v_{n+1−j} = h (f_{n+1} − Φ_qᵀλ_{n+1}),     Φ(t_{n+1}, q_{n+1}) = 0
//! k = 1: α = (1, −1);  2: (3/2, −2, 1/2);  3: (11/6, −3, 3/2, −1/3);  4: (25/12, −4, 3, −4/3, 1/4)
//! ```
//!
//! (Hairer & Wanner, Solving ODEs I, §III.1, Table 1.2). Divided by α₀ this is one
//! backward-Euler step of length `h/α₀` from `q̄ = −Σ_{j≥1} (α_j/α₀) q_{n+1−j}` and
//! `v̄` likewise, so the step is `implicit-euler`'s index-3 Newton iteration on the sparse
//! KKT matrix from that start (`implicit_euler::Backward`).
//!
//! The history is read from the state each step begins with, so the projection decorator
//! around `bdf` projects the values the formula uses next ("BDF with projection"); a
//! rejected step takes its start back out of the history, and a restart empties it. The
//! first k − 1 steps are taken by Radau IIA (s = 3): global order k needs start values
//! accurate to O(h^k), and Radau's local errors are O(h⁶) in q and O(h⁴) in v (k ≤ 4); a
//! lower-order BDF start would cost the global order.
//!
//! Orders: k in q, v and λ at fixed t > 0 with constant steps (BDF-k on index-3 Hessenberg
//! systems, k < 7: Lötstedt & Petzold, Math. Comp. 46 (1986) 491–516; Brenan, Campbell &
//! Petzold 1996, Thm. 3.2.2). Radau's own λ is of order s − 1 = 2, so after each start
//! step (a, λ) are recomputed from the acceleration-level KKT system at its (q, v). BDF-k is A(α)-stable and damps: not symmetric, not
//! symplectic.

use crate::dynamics::{consistent_start, KktChoice};
use crate::implicit::implicit_euler::{Backward, ImplicitEuler, ImplicitEulerParams, Index3};
use crate::implicit::implicit_form::{ImplicitBdf, NewtonSettings};
use crate::implicit::radau::{Radau, RadauParams};
use driftlab_core::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Parameters of [`Bdf`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BdfParams {
    /// The order k = 1 … 4.
    pub order: usize,
    /// Newton stops when `‖Δv‖∞ ≤ tol (1 + ‖v‖∞)` or at the round-off floor.
    pub tol: f64,
    /// Newton iteration cap.
    pub max_iter: usize,
    /// KKT factorization.
    pub kkt: KktChoice,
}

impl Default for BdfParams {
    fn default() -> Self {
        Self {
            order: 2,
            tol: 1e-12,
            max_iter: 25,
            kkt: KktChoice::Auto,
        }
    }
}

/// `α_0 … α_k` of BDF-k (Hairer & Wanner I, Table III.1.2 expanded).
fn coefficients(k: usize) -> &'static [f64] {
    match k {
        1 => &[1.0, -1.0],
        2 => &[1.5, -2.0, 0.5],
        3 => &[11.0 / 6.0, -3.0, 1.5, -1.0 / 3.0],
        _ => &[25.0 / 12.0, -4.0, 3.0, -4.0 / 3.0, 0.25],
    }
}

/// BDF-k on the index-3 form.
pub struct Bdf {
    p: BdfParams,
    /// The backward-Euler iteration the BDF step runs (its parameters).
    euler: ImplicitEuler,
    /// The start.
    radau: Radau,
}

impl Bdf {
    /// BDF of `order` 1 … 4 with `tol > 0`; `ParamError` naming the field otherwise.
    pub fn new(p: BdfParams) -> Result<Self, ParamError> {
        driftlab_core::params::positive(ID, "tol", p.tol)?;
        if !(1..=4).contains(&p.order) {
            return Err(ParamError::OutOfRange {
                id: ID.into(),
                field: "order",
                value: p.order as f64,
                fix: "give order = 1, 2, 3 or 4".into(),
            });
        }
        Ok(Self {
            p,
            euler: ImplicitEuler::new(euler_params(&p))?,
            radau: Radau::new(RadauParams::default())?,
        })
    }
}

/// The backward-Euler iteration's parameters (index-3 formulation).
fn euler_params(p: &BdfParams) -> ImplicitEulerParams {
    ImplicitEulerParams {
        tol: p.tol,
        max_iter: p.max_iter,
        kkt: p.kkt,
        ..ImplicitEulerParams::default()
    }
}

/// Declared properties of `bdf` of order `k`.
fn info_for(k: usize) -> MethodInfo {
    let order = Some(k as f64);
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: BDF methods are multistep and damp (A(α)-stable, not symmetric); their step is not even a map of the phase space alone".into(),
        family: "bdf".into(),
        title: format!("BDF{k} at fixed steps on the index-3 form (Newton on the sparse KKT matrix; Radau IIA start)"),
        equations: "Σ α_j q_{n+1−j} = h v_{n+1}, M Σ α_j v_{n+1−j} = h(f − Φ_qᵀλ)_{n+1}, Φ(q_{n+1}) = 0".into(),
        citation: "Hairer & Wanner, Solving ODEs I §III.1 (coefficients); Lötstedt & Petzold, Math. Comp. 46 (1986) 491–516 \
                   (order k on index-3 Hessenberg systems, k < 7)"
            .into(),
        orders: DeclaredOrders { q: order, v: order, lambda: order },
        enforces: ConstraintLevels { position: true, velocity: false, acceleration: false },
        implicit: true,
        forms: vec![SystemForm::Mechanical, SystemForm::Implicit],
        ..MethodInfo::default()
    }
}

/// Declared properties of `bdf` (at the default order 2).
pub fn info() -> MethodInfo {
    info_for(BdfParams::default().order)
}

/// [`Bdf`] bound to its system.
struct BdfStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    p: ImplicitEulerParams,
    order: usize,
    index3: Index3,
    /// `(q, v)` of the last steps' starts, newest first (at most `order`).
    history: VecDeque<(Vec<f64>, Vec<f64>)>,
    /// Radau IIA for the first `order − 1` steps.
    starter: Option<Box<dyn Stepper + 's>>,
    /// The KKT options of the acceleration-level solve after each start step.
    kkt: driftlab_solver::KktOptions,
    /// Whether the last step pushed its start into the history (and took it by Radau).
    pushed: Option<Taken>,
    stats: MethodStats,
}

/// How the last step was taken, for [`Stepper::reject`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Taken {
    Start,
    Formula,
}

impl BdfStepper<'_> {
    /// The backward-Euler form of the BDF step from the history (newest first).
    fn backward(&self, t: f64, h: f64) -> Backward {
        let alpha = coefficients(self.order);
        let n = self.history[0].0.len();
        let (mut qbar, mut vbar) = (vec![0.0; n], vec![0.0; n]);
        for (j, (q, v)) in self.history.iter().enumerate() {
            let c = -alpha[j + 1] / alpha[0];
            for i in 0..n {
                qbar[i] += c * q[i];
                vbar[i] += c * v[i];
            }
        }
        Backward {
            qbar,
            vbar,
            h: h / alpha[0],
            t1: t + h,
        }
    }
}

impl Stepper for BdfStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        self.history.push_front((state.q.clone(), state.v.clone()));
        self.history.truncate(self.order);
        self.pushed = Some(Taken::Formula);
        // The first order − 1 steps: Radau IIA (present whenever order > 1).
        // Radau's λ converges only at order s − 1 = 2: the start's (a, λ) are replaced by
        // the acceleration-level ones at its (q, v), accurate to O(h⁴).
        if let (true, Some(starter)) = (self.history.len() < self.order, self.starter.as_mut()) {
            self.pushed = Some(Taken::Start);
            let report = starter.step(state, h)?;
            let solve = consistent_start(self.sys, self.kkt, state)?;
            self.stats = self.stats.merged(solve);
            self.stats.steps += 1;
            return Ok(report);
        }
        let from = self.backward(state.t, h);
        let report = self.index3.backward_step(self.sys, &self.p, &from, state)?;
        Ok(crate::dynamics::count_step(&mut self.stats, report))
    }
    /// The rejected step's start leaves the history (the state of that start is restored
    /// and will be pushed again by the retry); a Radau start step is rejected in Radau too.
    fn reject(&mut self) {
        if let Some(taken) = self.pushed.take() {
            self.history.pop_front();
            if let (Taken::Start, Some(starter)) = (taken, self.starter.as_mut()) {
                starter.reject();
            }
        }
    }
    /// Velocities or forces changed between steps: the history no longer belongs to this
    /// motion. It is emptied (the next k − 1 steps are Radau's again) and (a, λ) are made
    /// consistent with the state.
    fn restart(&mut self, state: &mut State) -> Result<(), StepError> {
        self.history.clear();
        self.pushed = None;
        if let Some(starter) = self.starter.as_mut() {
            starter.restart(state)?;
        }
        let solve = consistent_start(self.sys, self.kkt, state)?;
        self.stats = self.stats.merged(solve);
        Ok(())
    }
    fn stats(&self) -> MethodStats {
        let started = self.starter.as_ref().map(|s| s.stats()).unwrap_or_default();
        let mut total = self.index3.add_stats(self.stats).merged(started);
        total.steps = self.stats.steps;
        total
    }
}

impl Method for Bdf {
    fn info(&self) -> MethodInfo {
        info_for(self.p.order)
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let index3 = self.euler.init_index3(sys, state, opts)?;
        let starter = if self.p.order > 1 {
            let mut start = state.clone();
            Some(self.radau.start(sys, &mut start, opts)?)
        } else {
            None
        };
        Ok(Box::new(BdfStepper {
            sys,
            p: euler_params(&self.p),
            order: self.p.order,
            index3,
            history: VecDeque::with_capacity(self.p.order),
            starter,
            kkt: self.p.kkt.options(opts),
            pushed: None,
            stats: MethodStats::default(),
        }))
    }
    /// The fully implicit form: BDF-k on `F(t, y, y′) = 0` ([`crate::implicit::implicit_form`]).
    fn start_implicit<'s>(
        &self, sys: &'s dyn ImplicitDae, _state: &mut State, _opts: &StartOptions,
    ) -> Result<Box<dyn Stepper + 's>, MethodError> {
        let settings = NewtonSettings {
            tol: self.p.tol,
            max_iter: self.p.max_iter,
        };
        Ok(Box::new(ImplicitBdf::new(
            sys,
            coefficients(self.p.order),
            settings,
        )?))
    }
}

/// The catalog id `bdf`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "bdf";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(Bdf::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<BdfParams>,
    }
}
