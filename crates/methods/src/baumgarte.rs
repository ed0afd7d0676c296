//! `baumgarte`: Baumgarte's stabilization (seed 002 §19, eq. 19.5; seed 001 §3.3) on the
//! Taylor scheme of seed 002 §18.2.
//!
//! The hidden constraint `Φ̈ = 0` is replaced by the stable second-order error dynamics
//!
//! ```text
//! Φ̈ + 2ξω_n Φ̇ + ω_n² Φ = 0          (seed 002 eq. 19.1, ξ damping ratio, ω_n natural frequency)
//! Φ̈ + 2α Φ̇ + β² Φ = 0               (seed 001 §3.3.2, the same law)
//! ```
//!
//! **Conversion** (compare coefficients): `α = ξ ω_n`, `β = ω_n`; conversely
//! `ω_n = β`, `ξ = α / β`. Critical damping is `ξ = 1` ⇔ `α = β`. With
//! `Φ̇ = Φ_q v + Φ_t` the acceleration row of the KKT system becomes
//!
//! ```text
//! Φ_q a = γ − 2ξω_n (Φ_q v + Φ_t) − ω_n² Φ
//! ```
//!
//! and the state is advanced by `q += h v + ½h² a`, `v += h a` (seed 002 Example 19.1,
//! eq. 19.6 with the right-hand side `r_k`). On the exact solution `Φ = Φ̇ = 0`, so the
//! stabilization does not change consistency: global order 1 as for `taylor`.
//! Defaults are the seed's example values `ξ = 0.8`, `ω_n = 2`.

use crate::dynamics::{add_kkt_stats, AccelerationSolver, KktChoice};
use driftlab_core::method::unsupported;
use driftlab_core::{
    ConstraintLevels, DeclaredOrders, Method, MethodError, MethodInfo, MethodStats, ParamError,
    State, StepError, StepReport, SystemForm, SystemRef,
};
use serde::{Deserialize, Serialize};

/// Parameters as written in a spec: either `(xi, omega_n)` or `(alpha, beta)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BaumgarteParams {
    /// Damping ratio ξ (with `omega_n`; default 0.8).
    pub xi: Option<f64>,
    /// Natural frequency ω_n [1/s] (with `xi`; default 2).
    pub omega_n: Option<f64>,
    /// Gain α of `Φ̈ + 2αΦ̇ + β²Φ = 0` [1/s] (with `beta`, instead of `xi`/`omega_n`).
    pub alpha: Option<f64>,
    /// Gain β [1/s] (with `alpha`).
    pub beta: Option<f64>,
    /// KKT factorization.
    pub kkt: KktChoice,
}

/// Resolved gains `(α, β)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gains {
    /// α = ξ ω_n.
    pub alpha: f64,
    /// β = ω_n.
    pub beta: f64,
}

impl Gains {
    /// From damping ratio and natural frequency: `α = ξ ω_n`, `β = ω_n`.
    pub fn from_xi_omega(xi: f64, omega_n: f64) -> Self {
        Self {
            alpha: xi * omega_n,
            beta: omega_n,
        }
    }
    /// Damping ratio `ξ = α/β`.
    pub fn xi(&self) -> f64 {
        self.alpha / self.beta
    }
    /// Natural frequency `ω_n = β`.
    pub fn omega_n(&self) -> f64 {
        self.beta
    }
}

impl BaumgarteParams {
    /// Resolve to `(α, β)`, rejecting mixed or partial specifications.
    pub fn gains(&self) -> Result<Gains, ParamError> {
        let id = "baumgarte";
        let nonneg = |field: &'static str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(v)
            } else {
                Err(ParamError::OutOfRange {
                    id: id.into(),
                    field,
                    value: v,
                    fix: "give a finite value ≥ 0".into(),
                })
            }
        };
        match (self.xi, self.omega_n, self.alpha, self.beta) {
            (None, None, Some(a), Some(b)) => Ok(Gains {
                alpha: nonneg("alpha", a)?,
                beta: nonneg("beta", b)?,
            }),
            (xi, om, None, None) => {
                let xi = nonneg("xi", xi.unwrap_or(0.8))?;
                let om = nonneg("omega_n", om.unwrap_or(2.0))?;
                Ok(Gains::from_xi_omega(xi, om))
            }
            (_, _, a, b) => Err(ParamError::OutOfRange {
                id: id.into(),
                field: if a.is_none() {
                    "alpha"
                } else if b.is_none() {
                    "beta"
                } else {
                    "xi"
                },
                value: f64::NAN,
                fix:
                    "give either (xi, omega_n) or both (alpha, beta), not a mix: α = ξ ω_n, β = ω_n"
                        .into(),
            }),
        }
    }
}

/// Baumgarte-stabilized Taylor scheme.
pub struct Baumgarte {
    gains: Gains,
    kkt: KktChoice,
    solver: Option<AccelerationSolver>,
    stats: MethodStats,
    phi: Vec<f64>,
    jac: Vec<f64>,
    phit: Vec<f64>,
    bias: Vec<f64>,
}

impl Baumgarte {
    /// A new instance (validates the gains).
    pub fn new(p: BaumgarteParams) -> Result<Self, ParamError> {
        Ok(Self {
            gains: p.gains()?,
            kkt: p.kkt,
            solver: None,
            stats: MethodStats::default(),
            phi: Vec::new(),
            jac: Vec::new(),
            phit: Vec::new(),
            bias: Vec::new(),
        })
    }
}

/// Declared properties of `baumgarte`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: "baumgarte".into(),
        family: "baumgarte".into(),
        title: "Baumgarte stabilization (ξ, ω_n) on the Taylor scheme".into(),
        equations: "Φ_q a = γ − 2ξω_n(Φ_q v + Φ_t) − ω_n²Φ  (α = ξω_n, β = ω_n);  q += h v + ½h² a;  v += h a".into(),
        citation: "J. Baumgarte, Comput. Methods Appl. Mech. Eng. 1 (1972) 1–16; seed 002 §19 eq. (19.5)–(19.6); \
                   seed 001 §3.3.2–3.3.3"
            .into(),
        orders: DeclaredOrders { q: Some(1.0), v: Some(1.0), lambda: Some(1.0) },
        enforces: ConstraintLevels::default(),
        implicit: false,
        symmetric: false,
        symplectic: false,
        forms: vec![SystemForm::Mechanical],
    }
}

impl Method for Baumgarte {
    fn info(&self) -> MethodInfo {
        let mut i = info();
        i.title = format!(
            "Baumgarte stabilization, ξ = {}, ω_n = {} (α = {}, β = {})",
            self.gains.xi(),
            self.gains.omega_n(),
            self.gains.alpha,
            self.gains.beta
        );
        i
    }
    fn init(&mut self, sys: SystemRef<'_>, state: &mut State) -> Result<(), MethodError> {
        let SystemRef::Mechanical(s) = sys else {
            return Err(unsupported(&info(), sys.form()));
        };
        let d = s.dims();
        self.solver = Some(AccelerationSolver::new(s, self.kkt)?);
        self.phi = vec![0.0; d.m];
        self.phit = vec![0.0; d.m];
        self.bias = vec![0.0; d.m];
        self.jac = vec![0.0; s.jacobian_pattern().nnz()];
        self.refresh(sys, state)?;
        Ok(())
    }
    fn step(
        &mut self,
        sys: SystemRef<'_>,
        state: &mut State,
        h: f64,
    ) -> Result<StepReport, StepError> {
        for i in 0..state.q.len() {
            state.q[i] += h * state.v[i] + 0.5 * h * h * state.a[i];
            state.v[i] += h * state.a[i];
        }
        state.t += h;
        self.stats.steps += 1;
        self.refresh(sys, state)?;
        Ok(StepReport {
            factorizations: 1,
            ..Default::default()
        })
    }
    fn refresh(&mut self, sys: SystemRef<'_>, state: &mut State) -> Result<(), StepError> {
        let (SystemRef::Mechanical(s), Some(solver)) = (sys, self.solver.as_mut()) else {
            return Err(StepError::LinearSolve {
                t: state.t,
                detail: "baumgarte: refresh before init".into(),
            });
        };
        let t = state.t;
        s.constraints(t, &state.q, &mut self.phi);
        s.jacobian(t, &state.q, &mut self.jac);
        s.phi_t(t, &state.q, &mut self.phit);
        s.jacobian_pattern()
            .mul_vec(&self.jac, &state.v, &mut self.bias, false);
        let Gains { alpha, beta } = self.gains;
        for r in 0..self.bias.len() {
            let phidot = self.bias[r] + self.phit[r];
            self.bias[r] = -2.0 * alpha * phidot - beta * beta * self.phi[r];
        }
        solver.solve(
            s,
            t,
            &state.q,
            &state.v,
            Some(&self.bias),
            &mut state.a,
            &mut state.lambda,
        )
    }
    fn stats(&self) -> MethodStats {
        let mut s = self.stats;
        if let Some(k) = &self.solver {
            add_kkt_stats(&mut s, k.stats());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_between_gain_forms() -> Result<(), ParamError> {
        let g = BaumgarteParams {
            xi: Some(0.8),
            omega_n: Some(2.0),
            ..Default::default()
        }
        .gains()?;
        assert!((g.alpha - 1.6).abs() < 1e-15 && (g.beta - 2.0).abs() < 1e-15);
        let g2 = BaumgarteParams {
            alpha: Some(1.6),
            beta: Some(2.0),
            ..Default::default()
        }
        .gains()?;
        assert!((g2.xi() - 0.8).abs() < 1e-15 && (g2.omega_n() - 2.0).abs() < 1e-15);
        let mixed = BaumgarteParams {
            xi: Some(1.0),
            alpha: Some(1.0),
            ..Default::default()
        }
        .gains();
        assert!(mixed.is_err());
        Ok(())
    }
}
