//! The one wrapper behind the reserved problem parameters that change a problem's motion
//! rather than its equations: another start ([`crate::initial`]) and an added force pulse
//! ([`crate::disturbance`]). Everything else is delegated to the inner problem.

use driftlab_core::{
    ExactSolution, Index1Jacobians, MechanicalSystem, ProblemInfo, ReferenceDomain,
    ReferenceSolution, SemiExplicitDae, State,
};

/// A problem with another start and/or an added force pulse; everything else is the
/// inner problem's.
pub(crate) struct Adjusted<S: ?Sized> {
    pub(crate) inner: Box<S>,
    /// The start, if not the inner problem's.
    pub(crate) state: Option<State>,
    /// The motion is the problem's own: its exact solution and reference still apply.
    pub(crate) keep_exact: bool,
    /// A force added over a time window (mechanical problems only).
    pub(crate) pulse: Option<Pulse>,
}

/// A generalized force `force` applied over `[start, start + duration)`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pulse {
    pub(crate) start: f64,
    pub(crate) duration: f64,
    pub(crate) force: Vec<f64>,
}

impl<S: ?Sized> Adjusted<S> {
    /// The start: the adjusted one, else the inner problem's (`inner_start`).
    fn start(&self, inner_start: impl FnOnce() -> State) -> State {
        self.state.clone().unwrap_or_else(inner_start)
    }

    /// What the inner problem knows of its motion (`inner`: its exact solution or
    /// reference) while the motion is its own; `None` otherwise.
    fn if_own_motion<T>(&self, inner: impl FnOnce() -> Option<T>) -> Option<T> {
        self.keep_exact.then(inner).flatten()
    }
}

impl MechanicalSystem for Adjusted<dyn MechanicalSystem> {
    driftlab_core::forward_mechanical!(inner;
        info, dims, mass_pattern, mass, constraints, jacobian_pattern, jacobian, phi_t,
        curvature, constraint_hessian, tangent, energy, energy_scale, momentum, row_kinds,
        nonholonomic_rows, prioritized, unilateral, actuators, threads);
    fn forces(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        self.inner.forces(t, q, v, out);
        if let Some(p) = &self.pulse {
            if t >= p.start && t < p.start + p.duration {
                out.iter_mut().zip(&p.force).for_each(|(o, f)| *o += f);
            }
        }
    }
    fn initial_state(&self) -> State {
        self.start(|| self.inner.initial_state())
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        self.if_own_motion(|| self.inner.exact(t))
    }
    fn reference(&self) -> Option<ReferenceSolution> {
        self.if_own_motion(|| self.inner.reference())
    }
    /// The inner problem's domain while the motion is its own (a start equal to its own,
    /// no pulse); absent otherwise — another start or a force pulse has no exact solution
    /// or published reference ([`Self::exact`] and [`Self::reference`] give none).
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        if self.keep_exact {
            self.inner.reference_domain(t_end)
        } else {
            ReferenceDomain::Absent
        }
    }
}

impl SemiExplicitDae for Adjusted<dyn SemiExplicitDae> {
    fn info(&self) -> ProblemInfo {
        self.inner.info()
    }
    fn dims(&self) -> (usize, usize) {
        self.inner.dims()
    }
    fn f(&self, t: f64, x: &[f64], z: &[f64], out: &mut [f64]) {
        self.inner.f(t, x, z, out)
    }
    fn g(&self, t: f64, x: &[f64], z: &[f64], out: &mut [f64]) {
        self.inner.g(t, x, z, out)
    }
    fn g_t(&self, t: f64, x: &[f64], z: &[f64], out: &mut [f64]) {
        self.inner.g_t(t, x, z, out)
    }
    fn jacobians(&self, t: f64, x: &[f64], z: &[f64], out: &mut Index1Jacobians) {
        self.inner.jacobians(t, x, z, out)
    }
    fn initial_state(&self) -> State {
        self.start(|| self.inner.initial_state())
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        self.if_own_motion(|| self.inner.exact(t))
    }
    /// As for mechanical problems: the inner domain with the inner start, else absent.
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        if self.keep_exact {
            self.inner.reference_domain(t_end)
        } else {
            ReferenceDomain::Absent
        }
    }
}
