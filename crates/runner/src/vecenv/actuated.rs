//! [`Actuated`]: an ensemble member's system with a generalized force set between steps,
//! the action of a policy, `M v' = f(t, q, v) + u − Φ_qᵀ λ`.

use crate::ensemble::perturbed::Perturbed;
use driftlab_core::MechanicalSystem;
use std::sync::atomic::{AtomicU64, Ordering};

/// `inner` with the generalized force `u` added to its applied forces. `u` is held over
/// the steps between two [`Actuated::set_force`] calls (zero-order hold, as a policy acts)
/// and is constant in `q` and `v`, so the force Jacobians (`tangent`) are `inner`'s. A
/// changed `u` acts from the next step on once the stepper restarts
/// (`driftlab_core::Rollout::restart`: a method that carries its last acceleration over,
/// such as Baumgarte or RATTLE, recomputes it with the new force).
pub struct Actuated {
    inner: Perturbed,
    /// `u` as bits: set between steps through a shared reference (the stepper borrows the
    /// system for its whole episode), read by `forces`.
    force: Vec<AtomicU64>,
}

impl Actuated {
    /// `inner` with `u = 0`.
    pub fn new(inner: Perturbed) -> Self {
        let n = inner.dims().n;
        Self {
            inner,
            force: (0..n).map(|_| AtomicU64::new(0.0_f64.to_bits())).collect(),
        }
    }

    /// Hold `u` (of length `n`: the caller checks it) from the next step on; whether it
    /// differs from the force held so far (by value: a method that carries the old
    /// force's acceleration over must then restart).
    pub fn set_force(&self, u: &[f64]) -> bool {
        let mut changed = false;
        for (slot, &x) in self.force.iter().zip(u) {
            #[allow(clippy::float_cmp)] // the same value needs no restart; −0 equals +0
            if f64::from_bits(slot.load(Ordering::Relaxed)) != x {
                slot.store(x.to_bits(), Ordering::Relaxed);
                changed = true;
            }
        }
        changed
    }

    /// The member's problem without perturbations and without the force.
    pub fn unperturbed(&self) -> &dyn MechanicalSystem {
        self.inner.inner()
    }
}

impl MechanicalSystem for Actuated {
    driftlab_core::forward_mechanical!(inner;
        info, dims, mass_pattern, mass, constraints, jacobian_pattern, jacobian, phi_t,
        curvature, constraint_hessian, tangent, energy, energy_scale, nonholonomic_rows,
        prioritized, unilateral, row_kinds, momentum, initial_state, exact, reference,
        actuators, threads);
    fn forces(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        self.inner.forces(t, q, v, out);
        for (f, u) in out.iter_mut().zip(&self.force) {
            let u = f64::from_bits(u.load(Ordering::Relaxed));
            // A zero component leaves f as it is, bit for bit (f + 0 would turn −0 into +0).
            if u != 0.0 {
                *f += u;
            }
        }
    }
}
