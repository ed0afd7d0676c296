//! One ensemble member's view of a problem: a perturbed, consistent initial state and
//! noisy constraints (seed 001 §3.6.2), as a [`MechanicalSystem`] decorator that any
//! method steps unchanged.

use super::noise::{NoiseSchedule, Purpose, Stream};
use driftlab_core::{ExactSolution, MechanicalSystem, ReferenceSolution, State};
use driftlab_solver::{project_position, project_velocity, ConstraintsAt, KktOptions, KktSolver};
use std::sync::Arc;

/// Noise added to the holonomic rows of `Φ`: `Φ(t, q) + σ(t) ε_k`, with `ε_k` standard
/// normal per row and, like σ, held over a step (`k` = the grid point `t/h` nearest `t`,
/// σ taken at `t_k = k h`), so that every stage and Newton iteration of a step sees the
/// same target and `Φ_t` is unchanged.
#[derive(Clone, Copy, Debug)]
pub struct ConstraintNoise {
    /// The schedule σ(x).
    pub schedule: NoiseSchedule,
    /// The member (its stream and, with `over = "member"`, its σ).
    pub member: usize,
    /// The member's stream.
    pub stream: Stream,
    /// The step the noise is held over.
    pub h: f64,
}

impl ConstraintNoise {
    /// `σ(t_k) ε_{k,r}` for the rows `r` of `out` (of `rows` in Φ) at grid point `k`
    /// (`t_k = k h`: σ is held over the step with ε).
    fn draw(&self, k: u64, rows: usize, out: &mut [f64]) {
        let sigma = self.schedule.sigma(k as f64 * self.h, self.member);
        for (r, e) in out.iter_mut().enumerate() {
            *e = if sigma == 0.0 {
                0.0
            } else {
                sigma * self.stream.normal(k * rows as u64 + r as u64)
            };
        }
    }
}

/// `inner` seen by one member: its own initial state, and noisy constraints when
/// `noise` is set. Exact and reference solutions are withheld: they belong to the
/// unperturbed problem.
pub struct Perturbed {
    inner: Arc<dyn MechanicalSystem>,
    initial: State,
    noise: Option<ConstraintNoise>,
    /// The noise of the last grid point drawn: `(k, σ(t_k) ε_k)`.
    cache: std::sync::Mutex<(Option<u64>, Vec<f64>)>,
}

/// Initial-state noise: `q₀ + N(0, q_sigma²)` and `v₀ + N(0, v_sigma²)` per coordinate,
/// then projected back onto `Φ(t₀, q) = 0` and `Φ_q v + Φ_t = 0` (mass-orthogonally).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InitialNoise {
    /// Standard deviation of the position perturbation.
    #[serde(default)]
    pub q_sigma: f64,
    /// Standard deviation of the velocity perturbation.
    #[serde(default)]
    pub v_sigma: f64,
}

impl InitialNoise {
    /// `Err` naming the field when a deviation is negative or not finite.
    pub fn validate(&self) -> Result<(), String> {
        for (name, x) in [("q_sigma", self.q_sigma), ("v_sigma", self.v_sigma)] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(format!(
                    "`ensemble.initial.{name}` = {x}: give a finite standard deviation ≥ 0"
                ));
            }
        }
        Ok(())
    }
}

/// `inner`'s initial state perturbed by `noise` with `member`'s stream of `seed`, made
/// consistent again by the mass-orthogonal projections (tolerance 1e-12 on `‖Φ‖∞`);
/// `Err` with the projection's failure when it cannot be.
pub fn perturbed_initial_state(
    inner: &dyn MechanicalSystem, noise: &InitialNoise, seed: u64, member: usize,
) -> Result<State, String> {
    let mut s = inner.initial_state();
    if noise.q_sigma == 0.0 && noise.v_sigma == 0.0 {
        return Ok(s);
    }
    let stream = Stream::new(seed, member as u64, Purpose::Initial);
    let n = s.q.len();
    for (i, q) in s.q.iter_mut().enumerate() {
        *q += noise.q_sigma * stream.normal(i as u64);
    }
    for (i, v) in s.v.iter_mut().enumerate() {
        *v += noise.v_sigma * stream.normal((n + i) as u64);
    }
    let fail = |e: driftlab_solver::SolverError| {
        format!("member {member}: the perturbed initial state cannot be made consistent: {e}")
    };
    let mut kkt = KktSolver::new(
        &driftlab_methods::dynamics::kkt_pattern(inner),
        KktOptions::default(),
    )
    .map_err(fail)?;
    let mut mass = vec![0.0; inner.mass_pattern().nnz()];
    inner.mass(&s.q, &mut mass);
    let mut eval = ConstraintsAt { sys: inner, t: s.t };
    let params = driftlab_solver::ProjectionParams::default();
    project_position(&mut kkt, &mass, &mut s.q, &mut eval, &params).map_err(fail)?;
    inner.mass(&s.q, &mut mass);
    project_velocity(&mut kkt, &mass, &s.q, &mut s.v, &mut eval).map_err(fail)?;
    Ok(State::mechanical(s.t, s.q, s.v, inner.dims().m))
}

impl Perturbed {
    /// `inner` started from `initial`, with constraint `noise` if any.
    pub fn new(
        inner: Arc<dyn MechanicalSystem>, initial: State, noise: Option<ConstraintNoise>,
    ) -> Self {
        Self {
            inner,
            initial,
            noise,
            cache: std::sync::Mutex::new((None, Vec::new())),
        }
    }

    /// The problem without perturbations.
    pub fn inner(&self) -> &dyn MechanicalSystem {
        self.inner.as_ref()
    }
}

impl MechanicalSystem for Perturbed {
    driftlab_core::forward_mechanical!(inner;
        info, dims, mass_pattern, mass, forces, jacobian_pattern, jacobian, phi_t, curvature,
        constraint_hessian, tangent, energy, energy_scale, nonholonomic_rows, prioritized,
        unilateral, row_kinds, momentum, actuators, threads);
    fn constraints(&self, t: f64, q: &[f64], out: &mut [f64]) {
        self.inner.constraints(t, q, out);
        let Some(noise) = &self.noise else { return };
        let k = (t / noise.h).round().max(0.0) as u64;
        let holonomic = out.len() - self.inner.nonholonomic_rows();
        // One member runs on one thread: the lock is uncontended, and a step evaluates
        // Φ several times with the same ε_k (drawn once: ln, cos, exp per row).
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.0 != Some(k) || cache.1.len() != holonomic {
            cache.1.resize(holonomic, 0.0);
            noise.draw(k, out.len(), &mut cache.1);
            cache.0 = Some(k);
        }
        for (phi, e) in out[..holonomic].iter_mut().zip(&cache.1) {
            *phi += e;
        }
    }
    fn initial_state(&self) -> State {
        self.initial.clone()
    }
    fn exact(&self, _t: f64) -> Option<ExactSolution> {
        None
    }
    fn reference(&self) -> Option<ReferenceSolution> {
        None
    }
}
