//! The implicit methods on a **fully implicit** system `F(t, y, y′) = 0` with `F_{y′}`
//! invertible ([`driftlab_core::ImplicitDae`], issue 32 D4): `implicit-euler`, `radau`
//! and `bdf` run it through the steppers here, at fixed steps.
//!
//! **Radau IIA** (s = 1: implicit Euler; s = 3: order 5), in the stage derivatives
//! `Y′_i` as unknowns:
//!
//! ```text
//! F(t_n + c_i h,  y_n + h Σ_j a_ij Y′_j,  Y′_i) = 0,  i = 1…s
//! y_{n+1} = y_n + h Σ_j b_j Y′_j,     y′_{n+1} = Y′_s   (stiffly accurate: b = last row of A, c_s = 1)
//! ```
//!
//! (Hairer & Wanner, *Solving ODEs II*, §VI.1 for implicit ODEs `M y′ = f` and its
//! extension to `F(t, y, y′) = 0`; Hairer, Lubich & Roche, LNM 1409, 1989). On an
//! implicit ODE the order is the classical 2s − 1 in `y`, and `y′_{n+1}`, the solution
//! of `F(t_{n+1}, y_{n+1}, ·) = 0`, inherits it.
//!
//! **BDF-k** (k = 1 … 4; coefficients of [`crate::implicit::bdf`]), in `y_{n+1}`:
//!
//! ```text
//! F(t_{n+1},  y_{n+1},  (1/h) Σ_{j=0}^{k} α_j y_{n+1−j}) = 0
//! ```
//!
//! as DASSL and IDA discretize `F(t, y, y′) = 0` (Brenan, Campbell & Petzold 1996, §3.1),
//! here at constant steps, order k; the first k − 1 steps are Radau IIA s = 3 steps
//! (local error O(h⁶), enough for order k ≤ 4), and a change of `h` restarts the history.
//!
//! Both solve their equations by Newton with a forward-difference Jacobian and dense LU
//! ([`crate::fd_newton`]), so `F` alone is needed; `F_{y′}`'s invertibility is what
//! makes the Newton matrix `I ⊗ ∂F/∂y′ + h A ⊗ ∂F/∂y` (or `α₀/h ∂F/∂y′ + ∂F/∂y`)
//! regular for small h. No error estimate: `radau` refuses an error-controlled schedule on
//! this form.

use crate::dynamics::count_step_and_factorizations;
use crate::fd_newton::FdNewton;
use crate::implicit::tableau::Tableau;
use driftlab_core::prelude::*;
use std::collections::VecDeque;

/// Largest `s · dim y` of the dense Newton matrix.
pub const MAX_DENSE: usize = 300;

/// The Newton settings: stop when `η ‖Δ‖∞ ≤ tol (1 + ‖x‖∞)`, at most `max_iter`
/// iterations.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NewtonSettings {
    pub(crate) tol: f64,
    pub(crate) max_iter: usize,
}

/// Refuse a system whose dense Newton matrix of `unknowns` would be too large.
fn check_size(method: &str, sys: &dyn ImplicitDae, unknowns: usize) -> Result<(), MethodError> {
    if unknowns > MAX_DENSE {
        return Err(MethodError::Incompatible {
            method: method.into(),
            problem: sys.info().id,
            reason: format!(
                "{unknowns} unknowns in the dense Newton matrix of the fully implicit form exceed {MAX_DENSE}"
            ),
        });
    }
    Ok(())
}

/// Radau IIA on `F(t, y, y′) = 0`.
pub(crate) struct ImplicitRk<'s> {
    sys: &'s dyn ImplicitDae,
    t: Tableau,
    newton: FdNewton,
    settings: NewtonSettings,
    /// Stage value `Y_i` (work).
    y_stage: Vec<f64>,
    stats: MethodStats,
}

impl<'s> ImplicitRk<'s> {
    /// Radau IIA with `s` = 1, 2 or 3 stages on `sys` (refused above [`MAX_DENSE`]).
    pub(crate) fn new(
        method: &str, sys: &'s dyn ImplicitDae, s: usize, settings: NewtonSettings,
    ) -> Result<Self, MethodError> {
        let t = Tableau::radau_iia(s).ok_or_else(|| MethodError::Incompatible {
            method: method.into(),
            problem: sys.info().id,
            reason: format!(
                "the fully implicit form runs Radau IIA with s = 1, 2 or 3 stages, not {s}"
            ),
        })?;
        let n = sys.dim();
        check_size(method, sys, s * n)?;
        Ok(Self {
            sys,
            newton: FdNewton::new(s * n),
            y_stage: vec![0.0; n],
            t,
            settings,
            stats: MethodStats::default(),
        })
    }

    /// The stage residuals `F(t_n + c_i h, y_n + h Σ a_ij Y′_j, Y′_i)` at `x = (Y′_i)`.
    fn residual(&mut self, (t0, h): (f64, f64), yn: &[f64], x: &[f64], out: &mut [f64]) {
        let (s, n) = (self.t.s, yn.len());
        for i in 0..s {
            for k in 0..n {
                self.y_stage[k] =
                    yn[k] + h * (0..s).map(|j| self.t.a(i, j) * x[j * n + k]).sum::<f64>();
            }
            let ti = t0 + self.t.c[i] * h;
            let yp = &x[i * n..(i + 1) * n];
            self.sys
                .residual(ti, &self.y_stage, yp, &mut out[i * n..(i + 1) * n]);
        }
    }

    /// One step: `state.q ← y_{n+1}`, `state.v ← y′_{n+1}`.
    fn advance(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let (s, n) = (self.t.s, state.q.len());
        let mut x: Vec<f64> = (0..s).flat_map(|_| state.v.iter().copied()).collect();
        let (t0, yn) = (state.t, state.q.clone());
        let mut newton = std::mem::replace(&mut self.newton, FdNewton::new(0));
        let NewtonSettings { tol, max_iter } = self.settings;
        let report = newton.solve(&mut x, tol, max_iter, t0, |x, out| {
            self.residual((t0, h), &yn, x, out)
        });
        self.newton = newton;
        let report = report?;
        for k in 0..n {
            state.q[k] = yn[k] + h * (0..s).map(|j| self.t.b[j] * x[j * n + k]).sum::<f64>();
        }
        state.v.copy_from_slice(&x[(s - 1) * n..]);
        state.t = t0 + h;
        Ok(count_step_and_factorizations(&mut self.stats, report))
    }
}

impl Stepper for ImplicitRk<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        self.advance(state, h)
    }
    fn stats(&self) -> MethodStats {
        self.stats
    }
}

/// BDF-k on `F(t, y, y′) = 0` at constant steps, started by Radau IIA s = 3.
pub(crate) struct ImplicitBdf<'s> {
    sys: &'s dyn ImplicitDae,
    alpha: &'static [f64],
    /// `y_{n−1}, y_{n−2}, …` of the accepted steps (newest first), at step `h_history`.
    past: VecDeque<Vec<f64>>,
    h_history: f64,
    /// `y_n` of the step just taken, until it is accepted.
    pending: Option<Vec<f64>>,
    start: ImplicitRk<'s>,
    newton: FdNewton,
    settings: NewtonSettings,
    stats: MethodStats,
}

impl<'s> ImplicitBdf<'s> {
    /// BDF with coefficients `alpha` (`α_0 … α_k`) on `sys`.
    pub(crate) fn new(
        sys: &'s dyn ImplicitDae, alpha: &'static [f64], settings: NewtonSettings,
    ) -> Result<Self, MethodError> {
        check_size("bdf", sys, sys.dim())?;
        Ok(Self {
            sys,
            alpha,
            past: VecDeque::new(),
            h_history: f64::NAN,
            pending: None,
            start: ImplicitRk::new("bdf", sys, 3, settings)?,
            newton: FdNewton::new(sys.dim()),
            settings,
            stats: MethodStats::default(),
        })
    }

    /// `y′ = (α_0 y + α_1 y_n + Σ_{j≥2} α_j y_{n+1−j}) / h` into `out`.
    fn derivative(&self, (y, yn, h): (&[f64], &[f64], f64), out: &mut [f64]) {
        for (k, o) in out.iter_mut().enumerate() {
            let older: f64 = self
                .past
                .iter()
                .zip(&self.alpha[2..])
                .map(|(p, a)| a * p[k])
                .sum();
            *o = (self.alpha[0] * y[k] + self.alpha[1] * yn[k] + older) / h;
        }
    }

    /// The BDF step proper, with the full history.
    fn bdf_step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let (t1, yn) = (state.t + h, state.q.clone());
        let mut y: Vec<f64> = yn.iter().zip(&state.v).map(|(a, b)| a + h * b).collect();
        let mut yp = vec![0.0; yn.len()];
        let mut newton = std::mem::replace(&mut self.newton, FdNewton::new(0));
        let NewtonSettings { tol, max_iter } = self.settings;
        let report = newton.solve(&mut y, tol, max_iter, state.t, |y, out| {
            self.derivative((y, &yn, h), &mut yp);
            self.sys.residual(t1, y, &yp, out);
        });
        self.newton = newton;
        let report = report?;
        self.derivative((&y, &yn, h), &mut yp);
        state.q.copy_from_slice(&y);
        state.v.copy_from_slice(&yp);
        state.t = t1;
        Ok(count_step_and_factorizations(&mut self.stats, report))
    }
}

impl Stepper for ImplicitBdf<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        // A new step size invalidates the constant-step history: start again.
        let same_h = (h - self.h_history).abs() <= 1e-12 * h.abs();
        if !same_h {
            self.past.clear();
            self.h_history = h;
        }
        self.pending = Some(state.q.clone());
        if self.past.len() + 2 < self.alpha.len() {
            let r = self.start.advance(state, h)?;
            return Ok(count_step_and_factorizations(&mut self.stats, r));
        }
        self.bdf_step(state, h)
    }
    fn accept(&mut self) {
        if let Some(y) = self.pending.take() {
            self.past.push_front(y);
            self.past.truncate(self.alpha.len() - 2);
        }
    }
    fn reject(&mut self) {
        self.pending = None;
    }
    /// `(y, y′)` changed from outside (a rollout's new start): the stored history no
    /// longer leads to them, so the next steps start again with Radau IIA.
    fn refresh(&mut self, _state: &mut State) -> Result<(), StepError> {
        self.past.clear();
        self.pending = None;
        Ok(())
    }
    fn stats(&self) -> MethodStats {
        self.stats
    }
}
