//! `lie-rkmk4`: the Runge–Kutta–Munthe-Kaas method of order 4 on the rotation group, for a
//! problem whose configuration is one rigid body's attitude quaternion ([`Attitude`],
//! issue 32 W17). The attitude is advanced by the group's exponential, never leaving the
//! unit sphere of quaternions, so the constraint `pᵀp = 1` holds to round-off without a
//! projection or a multiplier:
//!
//! ```text
//! p(t_n + τ) = p_n ⊗ exp(θ(τ)),   exp(θ) = (cos ½|θ|, sin ½|θ| θ/|θ|),   θ(0) = 0
//! θ' = dexp⁻¹_{−θ}(ω') ≈ ω' + ½ θ × ω' + (1/12) θ × (θ × ω')
//! J'ω̇' = n'(t, p, ω') − ω' × J'ω'
//! ```
//!
//! the classical fourth-order Runge–Kutta method applied to `(θ, ω')` in the Lie algebra
//! (ℝ³ ≅ so(3)), with dexp⁻¹ truncated after the second commutator, as order 4 requires
//! (H. Munthe-Kaas, BIT 38 (1998) 92–111; Iserles, Munthe-Kaas, Nørsett & Zanna, Acta
//! Numerica 9 (2000) 215–365, §5.1 and §8; the right-trivialized form for body rates,
//! `d/dt exp(θ) = exp(θ) dexp_{−θ}(θ')`). The state's velocity is `ṗ = ½ p ⊗ (0, ω')`, so
//! `pᵀṗ = 0` holds exactly too; the reported acceleration and multiplier solve the
//! problem's acceleration-level KKT system at the new `(q, v)` (one solve per step).
//! Explicit, not symplectic and not symmetric: it keeps the group, not the energy
//! (the drift of ½ω'ᵀJ'ω' is O(h⁴) per unit time).

use crate::dynamics::{with_kkt_stats, AccelerationSolver, KktChoice};
use driftlab_core::prelude::*;
use driftlab_core::Attitude;
use serde::{Deserialize, Serialize};

/// Parameters of [`LieRkmk`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LieRkmkParams {
    /// KKT factorization of the reported acceleration and multiplier.
    pub kkt: KktChoice,
}

/// RKMK4 on the attitude.
pub struct LieRkmk {
    p: LieRkmkParams,
}

/// Declared properties of `lie-rkmk4`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: RKMK applies the explicit classical Runge–Kutta method in the Lie algebra, which is not symplectic (Iserles et al., Acta Numerica 2000, §5); it preserves the group, not the canonical form".into(),
        family: "lie-group".into(),
        title: "Runge–Kutta–Munthe-Kaas (RK4 in so(3), attitude by the exponential map) for one rigid body's quaternion".into(),
        equations: "p_{n+1} = p_n ⊗ exp(θ_{n+1});  θ' = ω' + ½θ×ω' + (1/12)θ×(θ×ω'),  J'ω̇' = n' − ω'×J'ω';  RK4 on (θ, ω')".into(),
        citation: "H. Munthe-Kaas, BIT 38 (1998) 92–111; A. Iserles, H. Munthe-Kaas, S. P. Nørsett, A. Zanna, \
                   Acta Numerica 9 (2000) 215–365, §5.1 and §8 (order 4 with dexp⁻¹ to the second commutator)"
            .into(),
        orders: DeclaredOrders { q: Some(4.0), v: Some(4.0), lambda: Some(4.0) },
        enforces: ConstraintLevels { position: true, velocity: true, acceleration: true },
        ..MethodInfo::default()
    }
}

/// `a ⊗ b` (scalar first).
fn quat_mul(a: &[f64], b: &[f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

/// The unit quaternion of the rotation vector `θ`: `(cos ½|θ|, sin ½|θ| θ/|θ|)`, with the
/// series of `sin(x/2)/x` near 0.
fn quat_exp(th: &[f64; 3]) -> [f64; 4] {
    let x = (th[0] * th[0] + th[1] * th[1] + th[2] * th[2]).sqrt();
    let s = if x < 1e-4 {
        0.5 - x * x / 48.0
    } else {
        (0.5 * x).sin() / x
    };
    [(0.5 * x).cos(), s * th[0], s * th[1], s * th[2]]
}

fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// The body rate `ω' = 2 vec(p* ⊗ ṗ)` of a state.
fn body_rate(p: &[f64], pdot: &[f64]) -> [f64; 3] {
    let conj = [p[0], -p[1], -p[2], -p[3]];
    let r = quat_mul(&conj, &[pdot[0], pdot[1], pdot[2], pdot[3]]);
    [2.0 * r[1], 2.0 * r[2], 2.0 * r[3]]
}

/// `(θ', ω̇')` at `(t, θ, ω')` for the step from `p_n`.
fn rhs(
    att: &dyn Attitude, t: f64, pn: &[f64], (th, w): (&[f64; 3], &[f64; 3]),
) -> ([f64; 3], [f64; 3]) {
    let p = quat_mul(pn, &quat_exp(th));
    let j = att.principal_inertia();
    let n = att.body_torque(t, &p, w);
    let jw = [j[0] * w[0], j[1] * w[1], j[2] * w[2]];
    let gyro = cross(w, &jw);
    let wdot = [
        (n[0] - gyro[0]) / j[0],
        (n[1] - gyro[1]) / j[1],
        (n[2] - gyro[2]) / j[2],
    ];
    let tw = cross(th, w);
    let ttw = cross(th, &tw);
    let thdot = [0, 1, 2].map(|i| w[i] + 0.5 * tw[i] + ttw[i] / 12.0);
    (thdot, wdot)
}

/// One RKMK4 step of `(p, ω')` from `t` by `h`: the new attitude and body rate.
fn rkmk4_step(
    att: &dyn Attitude, t: f64, pn: &[f64], wn: [f64; 3], h: f64,
) -> ([f64; 4], [f64; 3]) {
    let add = |x: &[f64; 3], k: &[f64; 3], c: f64| [0, 1, 2].map(|i| x[i] + c * k[i]);
    let zero = [0.0; 3];
    let (a1, b1) = rhs(att, t, pn, (&zero, &wn));
    let (a2, b2) = rhs(
        att,
        t + 0.5 * h,
        pn,
        (&add(&zero, &a1, 0.5 * h), &add(&wn, &b1, 0.5 * h)),
    );
    let (a3, b3) = rhs(
        att,
        t + 0.5 * h,
        pn,
        (&add(&zero, &a2, 0.5 * h), &add(&wn, &b2, 0.5 * h)),
    );
    let (a4, b4) = rhs(att, t + h, pn, (&add(&zero, &a3, h), &add(&wn, &b3, h)));
    let combine = |k1: &[f64; 3], k2: &[f64; 3], k3: &[f64; 3], k4: &[f64; 3]| {
        [0, 1, 2].map(|i| h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
    };
    let th = combine(&a1, &a2, &a3, &a4);
    let dw = combine(&b1, &b2, &b3, &b4);
    (quat_mul(pn, &quat_exp(&th)), add(&wn, &dw, 1.0))
}

/// [`LieRkmk`] bound to its system.
struct LieRkmkStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    attitude: &'s dyn Attitude,
    solver: AccelerationSolver,
    stats: MethodStats,
}

impl Method for LieRkmk {
    fn info(&self) -> MethodInfo {
        info()
    }
    fn restartable(&self) -> bool {
        true
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let attitude = sys
            .attitude()
            .filter(|_| sys.dims().n == 4)
            .ok_or_else(|| MethodError::Incompatible {
                method: ID.into(),
                problem: sys.info().id,
                reason: "lie-rkmk4 steps one rigid body's attitude quaternion on the rotation group: the problem must offer \
                         `MechanicalSystem::attitude` (q = p, n = 4), as quaternion-body does"
                    .into(),
            })?;
        let solver = AccelerationSolver::new(sys, self.p.kkt.options(opts))?;
        let mut stepper = LieRkmkStepper {
            sys,
            attitude,
            solver,
            stats: MethodStats::default(),
        };
        stepper.refresh(state)?;
        Ok(Box::new(stepper))
    }
}

impl Stepper for LieRkmkStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let w = body_rate(&state.q, &state.v);
        let (p, w) = rkmk4_step(self.attitude, state.t, &state.q, w, h);
        let pdot = quat_mul(&p, &[0.0, 0.5 * w[0], 0.5 * w[1], 0.5 * w[2]]);
        state.t += h;
        state.q.copy_from_slice(&p);
        state.v.copy_from_slice(&pdot);
        self.stats.steps += 1;
        self.refresh(state)?;
        Ok(StepReport {
            factorizations: 1,
            ..Default::default()
        })
    }
    fn refresh(&mut self, state: &mut State) -> Result<(), StepError> {
        self.solver.solve_state(self.sys, state)
    }
    fn stats(&self) -> MethodStats {
        with_kkt_stats(self.stats, Some(self.solver.stats()))
    }
}

/// The catalog id `lie-rkmk4`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "lie-rkmk4";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| {
            Ok(Box::new(LieRkmk {
                p: params::parse("method", ID, t)?,
            }))
        },
        defaults: params::defaults::<LieRkmkParams>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// exp of a rotation vector is a unit quaternion that composes additively about one
    /// axis, and ṗ = ½ p ⊗ (0, ω) gives back ω.
    #[test]
    fn exponential_and_body_rate_are_consistent() {
        let a = quat_exp(&[0.3, -0.2, 0.5]);
        let n: f64 = a.iter().map(|x| x * x).sum();
        assert!((n - 1.0).abs() < 1e-15);
        let ab = quat_mul(&quat_exp(&[0.0, 0.0, 0.4]), &quat_exp(&[0.0, 0.0, 0.7]));
        let c = quat_exp(&[0.0, 0.0, 1.1]);
        assert!(ab.iter().zip(&c).all(|(x, y)| (x - y).abs() < 1e-15));
        let small = quat_exp(&[1e-6, 0.0, 0.0]);
        assert!((small[1] - (0.5e-6f64).sin()).abs() < 1e-20);
        let w = [0.7, -1.1, 0.4];
        let pdot = quat_mul(&a, &[0.0, 0.5 * w[0], 0.5 * w[1], 0.5 * w[2]]);
        let back = body_rate(&a, &pdot);
        assert!(back.iter().zip(&w).all(|(x, y)| (x - y).abs() < 1e-15));
    }
}
