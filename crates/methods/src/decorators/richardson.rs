//! Step-size control for any one-step method by **Richardson extrapolation** (step
//! doubling), as a decorator: from `y_n`, one step of `h` gives `y_h` and two steps of
//! `h/2` give `y_{h/2}`; for a method of order `p` the local error of `y_{h/2}` is
//!
//! ```text
//! err ≈ (y_{h/2} − y_h) / (2^p − 1)
//! ```
//!
//! (Hairer, Nørsett & Wanner, *Solving ODEs I*, 2nd ed. 1993, §II.4, eq. (4.4)), of
//! order `k = p + 1` in `h`. The step continues from `y_{h/2}` (no local extrapolation:
//! the extrapolated value would leave the constraint manifold and break symmetry). The
//! norm is the RMS over `q` and `v` of `err_i / (atol + rtol · max(|y_{h/2,i}|, |y_{h,i}|))`;
//! multipliers are left out (they are outputs of a step, not carried by it).
//!
//! It wraps only **restartable** methods (their next step depends on `State` alone,
//! [`Method::restartable`]): the full step is taken from a copy of the start state.
//! Three inner steps per step: the counters show the price. Variable steps break the
//! long-time energy behaviour of symplectic and symmetric methods (Hairer, Lubich &
//! Wanner, *Geometric Numerical Integration*, 2nd ed. 2006, §VIII.1) — measured in
//! `variable-step-energy`.

use driftlab_core::prelude::*;

/// The decorator.
pub struct Richardson {
    inner: Box<dyn Method>,
}

impl Richardson {
    /// Wrap `inner`.
    pub fn new(inner: Box<dyn Method>) -> Self {
        Self { inner }
    }

    fn order(&self) -> Option<u8> {
        self.inner
            .info()
            .orders
            .q
            .filter(|p| *p >= 1.0 && p.fract() == 0.0)
            .map(|p| p as u8)
    }

    /// The inner method can be step-doubled: restartable, with an integer order in q.
    fn check(&self, problem: &str) -> Result<f64, MethodError> {
        let info = self.inner.info();
        let incompatible = |reason: String| MethodError::Incompatible {
            method: format!("{}+richardson", info.id),
            problem: problem.into(),
            reason,
        };
        if !self.inner.restartable() {
            return Err(incompatible(format!(
                "`{}` keeps memory between steps beyond the state, so a step cannot be repeated \
                 from a copy; Richardson control needs a restartable one-step method",
                info.id
            )));
        }
        match self.order() {
            Some(p) => Ok(f64::from(p)),
            None => Err(incompatible(format!(
                "`{}` declares no integer order in q, which step doubling needs",
                info.id
            ))),
        }
    }

    /// The stepper around a started inner stepper.
    fn bind<'s>(
        &self, p: f64, inner: Box<dyn Stepper + 's>, state: &State, opts: &StartOptions,
    ) -> Box<dyn Stepper + 's> {
        Box::new(RichardsonStepper {
            inner,
            p,
            tol: opts.tolerances.unwrap_or(Tolerances {
                rtol: 1e-6,
                atol: 1e-6,
            }),
            full: state.clone(),
        })
    }
}

/// [`Richardson`] bound to its system: the inner stepper and the full step's state.
struct RichardsonStepper<'s> {
    inner: Box<dyn Stepper + 's>,
    /// The inner method's order in q.
    p: f64,
    tol: Tolerances,
    /// Work copy for the full step.
    full: State,
}

impl Method for Richardson {
    fn info(&self) -> MethodInfo {
        let mut info = self.inner.info();
        let p = self.order().unwrap_or(1);
        info.id = format!("{}+richardson", info.id);
        // Step doubling runs mechanical and index-1 systems only (no `start_implicit`).
        info.forms.retain(|f| *f != SystemForm::Implicit);
        info.title = format!("{} with Richardson step control", info.title);
        info.symplectic_reason = format!(
            "{}; each step continues from two half steps of it, so each step map is as \
             symplectic as the method's (the variable steps do not keep the long-time \
             behaviour of fixed steps: GNI §VIII.1)",
            info.symplectic_reason
        );
        info.citation = format!(
            "{}; step doubling: Hairer, Nørsett & Wanner, Solving ODEs I, 2nd ed. 1993, §II.4",
            info.citation
        );
        info.error_estimate = Some(ErrorEstimate {
            order: p + 1,
            rule: format!(
                "Richardson (step doubling): (y_h/2 − y_h)/(2^{p} − 1), RMS over q and v with \
                 sc = atol + rtol·max(|y_h/2|, |y_h|)"
            ),
            own_controller: false,
        });
        info
    }

    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let p = self.check(&sys.info().id)?;
        let inner = self.inner.start(sys, state, opts)?;
        Ok(self.bind(p, inner, state, opts))
    }

    fn start_index1<'s>(
        &self, sys: &'s dyn SemiExplicitDae, state: &mut State, opts: &StartOptions,
    ) -> Result<Box<dyn Stepper + 's>, MethodError> {
        let p = self.check(&sys.info().id)?;
        let inner = self.inner.start_index1(sys, state, opts)?;
        Ok(self.bind(p, inner, state, opts))
    }

    fn restartable(&self) -> bool {
        true
    }
}

impl Stepper for RichardsonStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let p = self.p;
        let full = &mut self.full;
        let t = state.t;
        full.clone_from(state);
        let r_full = self.inner.step(full, h)?;
        let r1 = self.inner.step(state, 0.5 * h)?;
        state.t = t + 0.5 * h;
        let r2 = self.inner.step(state, 0.5 * h)?;
        let err = scaled_difference(state, &self.full, self.tol) / (2f64.powf(p) - 1.0);
        Ok(StepReport {
            newton_iterations: r_full.newton_iterations
                + r1.newton_iterations
                + r2.newton_iterations,
            factorizations: r_full.factorizations + r1.factorizations + r2.factorizations,
            projection_iterations: r_full.projection_iterations
                + r1.projection_iterations
                + r2.projection_iterations,
            error: Some(err),
            ..StepReport::default()
        })
    }

    fn inner(&self) -> Option<&dyn Stepper> {
        Some(self.inner.as_ref())
    }
    fn inner_mut(&mut self) -> Option<&mut dyn Stepper> {
        Some(self.inner.as_mut())
    }
    fn stats(&self) -> MethodStats {
        self.inner.stats()
    }
}

/// RMS over `q` and `v` of `(a − b) / (atol + rtol max(|a|, |b|))`.
fn scaled_difference(a: &State, b: &State, tol: Tolerances) -> f64 {
    let mut sum = 0.0;
    let mut count = 0usize;
    for (x, y) in a.q.iter().zip(&b.q).chain(a.v.iter().zip(&b.v)) {
        let sc = tol.atol + tol.rtol * x.abs().max(y.abs());
        sum += ((x - y) / sc).powi(2);
        count += 1;
    }
    (sum / count.max(1) as f64).sqrt()
}
