//! `gauss-index2`: Gauss–Legendre collocation (s = 1, 2, 3) applied to the **index-2
//! form** of the mechanical system (the position constraint replaced by its time
//! derivative), with the end-of-step projection of Ascher & Petzold's projected
//! collocation (issue 32 W19):
//!
//! ```text
//! Q_i = q_n + h Σ_j a_ij V_j,   V_i = v_n + h Σ_j a_ij W_j,
//! M W_i = f(t_i, Q_i, V_i) − Φ_q(Q_i)ᵀ Λ_i,   Φ_q(t_i, Q_i) V_i + Φ_t(t_i, Q_i) = 0,  i = 1…s
//! q̃ = q_n + h Σ b_i V_i,   ṽ = v_n + h Σ b_i W_i
//! projected (default):  q_{n+1} = q̃,  v_{n+1} = ṽ − M⁻¹Φ_qᵀ μ  with  Φ_q v_{n+1} + Φ_t = 0  (all at q̃)
//! ```
//!
//! With `x = (q, v)` and `z = λ` this is the index-2 Hessenberg system `x' = f(x, z)`,
//! `0 = g(x) = Φ_q v + Φ_t`, and the projection is Ascher & Petzold's: `x_{n+1} = x̃ +
//! f_z(x̃) μ` with `g(x_{n+1}) = 0`, here `f_z = (0, −M⁻¹Φ_qᵀ)`, so only the velocity moves
//! (U. M. Ascher & L. R. Petzold, *Projected implicit Runge–Kutta methods for
//! differential-algebraic equations*, SIAM J. Numer. Anal. 28 (1991) 1097–1120). Gauss is
//! not stiffly accurate: without the projection `ṽ` leaves `g = 0` and the velocity error
//! is of order s + 1 for odd s and s for even s (`R(∞) = (−1)^s`), below the classical 2s
//! for s ≥ 2, while `q` keeps 2s; the projection restores the superconvergence of
//! collocation at Gauss points in `x` (ibid., and Hairer & Wanner, *Solving ODEs II*,
//! §VII.4).
//!
//! The projection is **internal**: it belongs to the discretization, acts only on the
//! formulation's own constraint (the velocity level), and the next step starts from it.
//! The position constraint `Φ = 0` is not imposed anywhere — it is an invariant of the
//! exact flow that the index-2 form only differentiates, so `Φ` drifts by the global
//! error. **Post-projection** onto both manifolds is the projection decorator around
//! this method (`projection = { acceleration = false }`; Ascher, Chin, Petzold & Reich,
//! Mech. Struct. Mach. 23 (1995) 135–157, "post-stabilization"); the `projected-collocation`
//! experiment measures the two side by side.
//!
//! The stage system is `gauss-index3`'s ([`crate::implicit::gauss_index3`]: unknowns
//! `(V_i, hΛ_i)`, forward-difference Newton, dense LU, refused above its size limit) with
//! the velocity constraint in place of the position constraint; `a_{n+1}` and `λ_{n+1}`
//! are the Lagrange extrapolations of the stage values to τ = 1.

use crate::implicit::gauss_index3::{Collocation, StageLevel};
use driftlab_core::prelude::*;
use serde::{Deserialize, Serialize};

/// Parameters of [`GaussIndex2`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GaussIndex2Params {
    /// Stages s ∈ {1, 2, 3}.
    pub stages: usize,
    /// Newton stops when `‖Δ‖∞ ≤ tol (1 + ‖unknowns‖∞)` or at the round-off floor.
    pub tol: f64,
    /// Newton iteration cap.
    pub max_iter: usize,
    /// Ascher & Petzold's projection of the step's end onto `Φ_q v + Φ_t = 0` along
    /// `M⁻¹Φ_qᵀ` (default); `false` is plain Gauss collocation on the index-2 form.
    pub projected: bool,
}

impl Default for GaussIndex2Params {
    fn default() -> Self {
        Self {
            stages: 3,
            tol: 1e-12,
            max_iter: 30,
            projected: true,
        }
    }
}

/// Gauss collocation on the index-2 form, projected or not.
pub struct GaussIndex2 {
    p: GaussIndex2Params,
    c: Collocation,
}

impl GaussIndex2 {
    /// Gauss with `stages` = 1, 2 or 3 on the index-2 form; `ParamError` naming the field
    /// otherwise.
    pub fn new(p: GaussIndex2Params) -> Result<Self, ParamError> {
        let c = Collocation::new(
            ID,
            p.stages,
            StageLevel::Velocity,
            (p.tol, p.max_iter),
            p.projected,
        )?;
        Ok(Self { p, c })
    }
}

/// Declared properties of the projected method with `s` stages (the default, s = 3), or
/// of the unprojected one.
fn info_for(s: usize, projected: bool) -> MethodInfo {
    let order = projected.then_some(2.0 * s as f64);
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: the index-2 form does not hold Φ = 0, so the flow leaves the constraint manifold on which the symplectic form is defined; the projection is not a symplectic map".into(),
        family: "implicit-runge-kutta".into(),
        title: match projected {
            true => format!("Gauss collocation (s = {s}) on the index-2 form with Ascher–Petzold projection"),
            false => format!("Gauss collocation (s = {s}) on the index-2 form, unprojected"),
        },
        equations: "Q_i = q + hΣa_ij V_j, V_i = v + hΣa_ij W_j, M W_i = f_i − Φ_q(Q_i)ᵀΛ_i, Φ_q(Q_i)V_i + Φ_t = 0; \
                    q⁺ = q + hΣb_i V_i, ṽ = v + hΣb_i W_i; projected: v⁺ = ṽ − M⁻¹Φ_qᵀμ, Φ_q(q⁺)v⁺ + Φ_t = 0".into(),
        citation: "U. M. Ascher & L. R. Petzold, SIAM J. Numer. Anal. 28 (1991) 1097–1120 (projected collocation, \
                   superconvergence 2s in x = (q, v) for index-2 Hessenberg systems); Hairer & Wanner II §VII.4".into(),
        orders: DeclaredOrders { q: order, v: order, lambda: None },
        enforces: ConstraintLevels {
            position: false,
            velocity: projected,
            acceleration: false,
        },
        implicit: true,
        // The stage constraints are velocity rows, which nonholonomic rows A(q) v = 0 are.
        nonholonomic: true,
        symmetric: !projected,
        ..MethodInfo::default()
    }
}

/// Declared properties (the default: projected, s = 3).
pub fn info() -> MethodInfo {
    info_for(3, true)
}

impl Method for GaussIndex2 {
    fn info(&self) -> MethodInfo {
        info_for(self.p.stages, self.p.projected)
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        self.c.start(sys, state, opts)
    }
    fn restartable(&self) -> bool {
        true
    }
}

/// The catalog id `gauss-index2`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "gauss-index2";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(GaussIndex2::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<GaussIndex2Params>,
    }
}
