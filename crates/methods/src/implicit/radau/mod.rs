//! Radau IIA on the index-3 formulation, with the algorithm of Hairer & Wanner's RADAU5
//! (s = 3, order 5, the default) and of RADAU (s = 5 and 7, orders 9 and 13, fixed or
//! chosen during the run by RADAU's order selection, `variable_order`; module `order`).
//! Below, s = 3 is written out; the higher orders use the same steps with their own
//! coefficients (module `coefficients`), `(s − 1)/2` complex systems, the error weights
//! of RADAU's `ESTRAV`, `rtol' = 0.1 rtol^((s+1)/(2s))`, the Newton tolerance
//! `rtol'^((s−1)/(s+1))`, `NIT + 2.5 (s − 3)` iterations and an estimate of order
//! `s + 1` in `h`.
//!
//! On index-3 problems at stringent tolerances the higher orders meet a round-off floor
//! in the Newton iteration: the `a` and `λ` components are fixed by the constraints
//! through `(c B)²`, whose eigenvalues grow with s (`|α + iβ| ≈ 11` for s = 7 against
//! 4.1 for s = 3), and `T⁻¹` has entries up to 300 (4.3 for s = 3). On the period-2
//! pendulum at h = 0.04 the s = 7 iteration stalls at a scaled correction of 1e-5
//! (dominated by `a` and `λ`) where rtol = 1e-12 asks for 1.3e-6: such runs fail as
//! Newton failures, and the variable-order method then lowers the order, as RADAU does
//! after a failed iteration. At loose tolerances the same amplification acts on the error
//! estimate: a step accepted with the Newton iteration's residual in `Φ` (3.5e-5 on the
//! period-2 pendulum at rtol = 1e-4, s = 7) puts `F(t_n, y_n)`'s algebraic rows into the
//! next estimate, which `(γ/h B − J)⁻¹` amplifies by `γ²/h²` in `a` and `λ` (γ = 6.29 and
//! 8.94 for s = 5, 7 against 3.64), so the scaled estimate stays near 9 as h → 0 and the
//! run fails with a step-size underflow (`radau-tolerance`: s = 5 at rtol 1e-4 and 1e-5,
//! s = 7 at 1e-4, the variable order at 1e-5).
//!
//! The system is integrated in its constant-mass first-order form
//! ([`crate::dae_form`]): `y = (q, v, a, λ)`, `B y' = F(t, y)`, `B = diag(I, I, 0, 0)`.
//! One step solves the collocation equations
//!
//! ```text
//! B Z_i = h Σ_j a_ij F(t + c_j h, y_n + Z_j),   i = 1, 2, 3,   y_{n+1} = y_n + Z_3
//! ```
//!
//! (Radau IIA: `c = ((4 − √6)/10, (4 + √6)/10, 1)`) by **simplified Newton** with the
//! Jacobian `J = ∂F/∂y` frozen, in the variables `W = (T⁻¹ ⊗ I) Z` that decouple the
//! Newton matrix into one real system `(γ/h · B − J)` and one complex system
//! `((α + iβ)/h · B − J)`, where `γ, α ± iβ` are the eigenvalues of `A⁻¹` — one real and
//! one complex LU per Newton matrix (Hairer & Wanner, *Solving ODEs II*, 2nd ed. 1996,
//! §IV.8, eqs. (8.15)–(8.19)). As RADAU5 does for second-order structure (its `M1`,
//! `M2`), the rows `q' = v`, `v' = a` are eliminated and only the `n + m` algebraic rows
//! are factored (module `newton`: 13 instead of 27 on Andrews). The iteration is the
//! workspace's Newton kernel ([`driftlab_solver::newton`]) with RADAU5's tolerance
//! `max(10 ε / rtol', min(0.03, √rtol'))`.
//!
//! **Error estimate** (HW II (8.20), with a mass matrix as RADAU5's `ESTRAD`):
//! `err = (γ/h B − J)⁻¹ (F(t_n, y_n) + B (e₁Z₁ + e₂Z₂ + e₃Z₃)/h)` with
//! `e = γ⁻¹(−(13 + 7√6)/3, (−13 + 7√6)/3, −1/3)`; on a first or rejected step with
//! `‖err‖ ≥ 1` it is filtered once more through `F(t_n, y_n + err)`. The norm is the
//! RMS of `err_i / sc_i` with `sc_i = atol' + rtol' |y_i|`, where RADAU5's tolerance
//! transformation `rtol' = 0.1 rtol^(2/3)`, `atol' = rtol' · atol / rtol` maps the
//! user's tolerances onto the estimate of an order-3 embedded method, and the
//! **index-aware scaling** divides `sc` by `h` for the index-2 components (`v`) and by
//! `h²` for the index-3 components (`a`, `λ`) (Hairer, Lubich & Roche, LNM 1409, 1989,
//! §6; HW II §VII.4 and the RADAU5 documentation of `NIND2`, `NIND3`). The estimate has
//! order `k = 4` in `h`; [`driftlab_core::control`] sets the next step.
//!
//! **Newton norm** (`newton_scale`): RADAU5 stops the iteration in the error test's norm,
//! where the velocities (index 2) are divided by `h`. Their Newton errors, up to
//! `FNEWT · sc / h` per step, are integrated into the positions by the following steps:
//! on the period-2 pendulum to t = 100 at rtol = 1e-10 the max position error is 2.9e-4
//! (18 854 steps); holding the velocities at the positions' scale (`"differential"`)
//! gives 6.8e-7 with 27 045 steps, at the price of many more slow-Newton retries
//! (`radau-tolerance`).
//!
//! **Reuse**: the Jacobian is re-evaluated after an accepted step only if the last
//! Newton contraction exceeded `jacobian_reuse` (RADAU5's `THET = 0.001`), and after a
//! failed or rejected step only if it is not already fresh; the two LUs are refactored
//! only when `h` or the Jacobian changed. Starting values for `Z` come from the
//! collocation polynomial of the last accepted step (RADAU5's `CONT`).
//!
//! **Orders** (index-3 systems in Hessenberg form, Hairer, Lubich & Roche 1989; HW II
//! §VII.4): the global error is `O(h^{2s−1}) = O(h⁵)` in `q`, and bounded by `O(h^s) =
//! O(h³)` in `v` and `O(h^{s−1}) = O(h²)` in `λ`. Only the order in `q` is declared: the
//! `v` and `λ` bounds are not sharp on the problems here (the convergence suite measured
//! 3.32 in `v` on the 90° pendulum over h = 0.01 … 0.022, and 4.9 in `v` and `λ` with the
//! projection decorator, which carries the declared orders over), so they are measured
//! (`pendulum-orders`), not asserted.

mod coefficients;
mod newton;
mod order;
mod stages;

use crate::dynamics::{consistent_start, KktChoice};
use coefficients::RadauTableau;
use driftlab_core::prelude::*;
use driftlab_solver::newton::{NewtonFailure, NewtonKernel, NewtonOptions};
use order::OrderSelection;
use serde::{Deserialize, Serialize};
use stages::{collocation_polynomial, estimate_error, newton_iteration, start_values, Work};

/// Parameters of `radau`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RadauParams {
    /// Relative tolerance used at fixed steps (an error-controlled run sets its own).
    pub rtol: f64,
    /// Absolute tolerance used at fixed steps.
    pub atol: f64,
    /// Newton iteration limit (RADAU5's `NIT`).
    pub max_newton: usize,
    /// Keep the Jacobian while the Newton contraction stays below this (RADAU5's
    /// `THET`); a negative value evaluates it every step.
    pub jacobian_reuse: f64,
    /// Newton stopping tolerance on the scaled correction (RADAU5's `FNEWT`, its
    /// `WORK(4)`); default `max(10 ε / rtol', min(0.03, √rtol'))`.
    pub newton_tol: Option<f64>,
    /// Scale of the Newton stopping norm: `"radau5"` (the error test's scale, velocities
    /// divided by h, as RADAU5) or `"differential"` (velocities unscaled: their Newton
    /// errors are carried into the positions by later steps, so they are held at the
    /// positions' tolerance; a and λ stay divided by h²).
    pub newton_scale: NewtonScale,
    /// Stages s = 3, 5 or 7 (order 2s − 1: 5, 9, 13; RADAU's methods), the start order
    /// when `variable_order` is set.
    pub stages: usize,
    /// Choose the order between s = 3 and 7 during the run by RADAU's rules (error
    /// controlled runs).
    pub variable_order: bool,
}

/// See [`RadauParams::newton_scale`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NewtonScale {
    /// RADAU5's: the error test's scale.
    #[default]
    Radau5,
    /// Velocities not divided by h.
    Differential,
}

impl Default for RadauParams {
    fn default() -> Self {
        Self {
            rtol: 1e-12,
            atol: 1e-12,
            max_newton: 7,
            jacobian_reuse: 1e-3,
            newton_tol: None,
            newton_scale: NewtonScale::Radau5,
            stages: 3,
            variable_order: false,
        }
    }
}

/// Declared properties (the default s = 3).
pub fn info() -> MethodInfo {
    info_for(3, false)
}

/// Declared properties with `s` stages, or of the variable-order method starting at `s`.
fn info_for(s: usize, variable: bool) -> MethodInfo {
    let title = if variable {
        format!("Radau IIA, variable order (s = 3, 5, 7; orders 5, 9, 13; start s = {s}) on the index-3 form, RADAU's algorithm")
    } else if s == 3 {
        "Radau IIA (s = 3, order 5) on the index-3 form, RADAU5's algorithm".into()
    } else {
        format!(
            "Radau IIA (s = {s}, order {}) on the index-3 form, RADAU's algorithm",
            2 * s - 1
        )
    };
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: Radau IIA is algebraically stable but not symplectic (its coefficients violate b_i a_ij + b_j a_ji = b_i b_j; GNI Thm. VI.4.3)".into(),
        family: "implicit-rk".into(),
        title,
        equations:
            "B Z_i = h Σ_j a_ij F(t + c_j h, y + Z_j), y = (q, v, a, λ), B = diag(I, I, 0, 0); \
                    simplified Newton on (γ/h B − J) and ((α+iβ)/h B − J); \
                    err = (γ/h B − J)⁻¹ (F(y_n) + B Σ e_i Z_i / h)"
                .into(),
        citation:
            "E. Hairer, G. Wanner, Solving Ordinary Differential Equations II, 2nd ed. 1996, \
                   §IV.8 (RADAU5) and §VII.4; order 2s−1 in q for index 3 (v, λ bounded by s, \
                   s−1; measured, not declared): E. Hairer, Ch. Lubich, M. Roche, The Numerical Solution of Differential-Algebraic Systems \
                   by Runge–Kutta Methods, LNM 1409, Springer 1989"
                .into(),
        // A variable-order run has no single order to declare.
        orders: DeclaredOrders {
            q: (!variable).then_some(2.0 * s as f64 - 1.0),
            v: None,
            lambda: None,
        },
        // The stages satisfy Φ = 0 and the dynamic equation for (a, λ); the velocity and
        // acceleration constraints hold only to the method's accuracy.
        enforces: ConstraintLevels {
            position: true,
            velocity: false,
            acceleration: false,
        },
        implicit: true,
        // The embedded formula has order s, so the estimate is O(h^(s+1)) (RADAU's
        // EXPO = 1/(s + 1)); a variable-order run reports each step's order.
        error_estimate: Some(ErrorEstimate {
            order: s as u8 + 1,
            rule: "embedded estimate of RADAU5 (HW II (8.20); RADAU's ESTRAV for s = 5, 7), RMS over \
                   y = (q, v, a, λ) with sc = atol' + rtol'|y|, divided by h for v and by h² for a, λ \
                   (index 2 and 3)"
                .into(),
            own_controller: false,
        }),
        varying_mass: true,
        // The fully implicit form runs s = 3 at fixed steps only (`start_implicit`).
        forms: if s == 3 && !variable {
            vec![SystemForm::Mechanical, SystemForm::Implicit]
        } else {
            vec![SystemForm::Mechanical]
        },
        ..MethodInfo::default()
    }
}

/// Largest `N = 3n + m` for the dense Jacobian `∂F/∂y` (N × N: 2000 is 32 MB) beside the
/// reduced Newton matrices (`(n + m)`-square, one real and one complex).
const MAX_DENSE_DIM: usize = 2000;

/// What carries from an accepted step to the next.
struct Memory {
    /// Collocation polynomial coefficients of the last accepted step (`CONT`).
    cont: Vec<Vec<f64>>,
    /// Its step size; `None` before the first accepted step.
    cont_h: Option<f64>,
    /// The same from the step just taken, until it is known to be accepted.
    pending: Vec<Vec<f64>>,
    /// Its step size; `None` when no step is pending.
    pending_h: Option<f64>,
    /// Jacobian must be re-evaluated before the next iteration.
    jacobian_stale: bool,
    /// The Jacobian was evaluated during the current step attempt.
    jacobian_fresh: bool,
    /// The last attempt was rejected (or failed).
    rejected: bool,
    /// The order changed since the last accepted step: Newton starts from zero (the
    /// polynomial kept is of the other order).
    restart: bool,
    /// Last Newton contraction.
    theta: f64,
}

/// Radau IIA (s = 3) with RADAU5's step algorithm.
pub struct Radau {
    params: RadauParams,
}

/// [`Radau`] bound to its system.
struct RadauStepper<'s> {
    sys: &'s dyn MechanicalSystem,
    params: RadauParams,
    /// RADAU5-transformed tolerances `(rtol', atol')`.
    tol: Tolerances,
    /// The tolerances given and whether the run is error controlled (to transform
    /// them again when the order changes).
    given: (Tolerances, bool),
    /// RADAU's order selection, for a variable-order run.
    order: Option<OrderSelection>,
    kernel: NewtonKernel,
    work: Work,
    mem: Memory,
    stats: MethodStats,
}

impl Radau {
    /// Radau IIA with parameters `params`; `ParamError` naming the field unless
    /// `rtol > 1e-15`, `atol > 0` and `max_newton ≥ 2`.
    pub fn new(params: RadauParams) -> Result<Self, driftlab_core::ParamError> {
        let bad = |field: &'static str, value: f64, fix: &str| {
            Err(driftlab_core::ParamError::OutOfRange {
                id: ID.into(),
                field,
                value,
                fix: fix.into(),
            })
        };
        if !(params.rtol > 10.0 * f64::EPSILON && params.rtol.is_finite()) {
            return bad("rtol", params.rtol, "give a relative tolerance above 1e-15");
        }
        if !(params.atol > 0.0 && params.atol.is_finite()) {
            return bad("atol", params.atol, "give an absolute tolerance > 0");
        }
        if params.max_newton < 2 {
            return bad(
                "max_newton",
                params.max_newton as f64,
                "allow at least 2 iterations",
            );
        }
        if !matches!(params.stages, 3 | 5 | 7) {
            return bad(
                "stages",
                params.stages as f64,
                "give stages = 3, 5 or 7 (orders 5, 9, 13)",
            );
        }
        Ok(Self { params })
    }
}

/// RADAU's Newton tolerance base `rtol'^((s−1)/(s+1))`: RADAU5's correctly rounded
/// `√rtol'` at s = 3.
fn newton_power(rtol: f64, s: usize) -> f64 {
    if s == 3 {
        rtol.sqrt()
    } else {
        rtol.powf((s - 1) as f64 / (s + 1) as f64)
    }
}

impl RadauStepper<'_> {
    /// Transform `tol` as RADAU5 and RADAU do (`rtol' = 0.1 rtol^((s+1)/(2s))`, RADAU5's
    /// `rtol^(2/3)` at s = 3; `atol' = rtol' atol / rtol`) and set the Newton tolerance
    /// and iteration limit of the current order from it. An
    /// error-controlled run (`adaptive`) gives up a slow Newton iteration early and
    /// retries with a smaller step; a fixed-step run iterates to the limit
    /// (`max_newton`, at least 20) after refreshing the Jacobian once.
    fn apply_tolerances(&mut self, tol: Tolerances, adaptive: bool) {
        self.given = (tol, adaptive);
        // RADAU: rtol' = 0.1 rtol^((s+1)/(2s)) (RADAU5's 2/3 at s = 3), Newton tolerance
        // rtol'^((s−1)/(s+1)) (√rtol' at s = 3), iteration limit NIT + 2.5 (s − 3).
        let s = self.work.tab.s;
        let rtol = 0.1 * tol.rtol.powf((s + 1) as f64 / (2 * s) as f64);
        let atol = rtol * tol.atol / tol.rtol;
        self.tol = Tolerances { rtol, atol };
        let newton_power = newton_power(rtol, s);
        let limit = self.params.max_newton + 5 * (s - 3) / 2;
        self.kernel.opts = NewtonOptions {
            tol: self
                .params
                .newton_tol
                .unwrap_or((10.0 * f64::EPSILON / rtol).max(0.03f64.min(newton_power))),
            max_iter: if adaptive { limit } else { limit.max(20) },
            floor: 0.0,
            predict: adaptive,
            carry_eta: true,
            stop_on_growth: true,
        };
    }

    /// RADAU's order selection before a step of size `h` (see [`order`]): tested where a
    /// factorization happens, or on a kept factorization once 10 passes went by. On a
    /// change, the stage arrays, tolerances and Newton parameters are those of the new
    /// order, and Newton starts from zero. (RADAU then refactors even when the order
    /// stays; here a kept factorization is kept.)
    fn select_order(&mut self, h: f64) {
        let Some(order) = self.order.as_mut() else {
            return;
        };
        let s = self.work.tab.s;
        let factoring = self.mem.jacobian_stale || self.work.h_factored.to_bits() != h.to_bits();
        if !factoring && !order.keeps(s) {
            return;
        }
        let next = order.decide(s, h);
        if next == s {
            return;
        }
        let Some(tab) = RadauTableau::with_stages(next) else {
            return;
        };
        self.work.set_tableau(tab);
        let arrays = || vec![vec![0.0; self.work.form.dim()]; next];
        (self.mem.cont, self.mem.pending) = (arrays(), arrays());
        self.mem.restart = true;
        let (tol, adaptive) = self.given;
        self.apply_tolerances(tol, adaptive);
        if let Some(order) = self.order.as_mut() {
            order.changes += 1;
        }
    }

    /// The Newton solve of one step; at fixed steps a failure with a Jacobian from an
    /// earlier step is retried once with a fresh one.
    fn solve_stages(
        &mut self, sys: &dyn MechanicalSystem, t: f64, h: f64,
    ) -> Result<(usize, f64), StepError> {
        let mut iterations = 0;
        loop {
            let work = &mut self.work;
            if let Err(e) = prepare_matrices(work, &mut self.mem, &mut self.stats, sys, t, h) {
                self.order.iter_mut().for_each(|o| o.failed = true);
                return Err(e);
            }
            let cont = self.mem.cont_h.filter(|_| !self.mem.restart);
            start_values(work, cont.map(|h_old| (&self.mem.cont[..], h_old)), h);
            let before = self.kernel.counters.iterations;
            let solved = self.kernel.solve(|_| newton_iteration(work, sys, t, h));
            let done = self.kernel.counters.iterations - before;
            iterations += done;
            self.stats.newton_iterations += done;
            self.stats.solves += (1 + work.tab.pairs.len()) * done;
            if let Some(order) = self.order.as_mut() {
                order.after_newton(done, &solved, self.params.jacobian_reuse);
            }
            match solved {
                Ok(r) => return Ok((iterations, if r.theta.is_nan() { 0.0 } else { r.theta })),
                Err(e) if self.kernel.opts.predict || self.mem.jacobian_fresh => {
                    return Err(newton_error(e, t, iterations, self.kernel.opts.tol))
                }
                Err(_) => {
                    self.mem.jacobian_stale = true;
                    self.kernel.reset_eta();
                }
            }
        }
    }
}

impl Method for Radau {
    fn info(&self) -> MethodInfo {
        info_for(self.params.stages, self.params.variable_order)
    }

    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let s = sys;
        let dim = 3 * s.dims().n + s.dims().m;
        if dim > MAX_DENSE_DIM {
            return Err(MethodError::Incompatible {
                method: ID.into(),
                problem: s.info().id,
                reason: format!(
                    "radau's Newton matrices are dense: N = 3n + m = {dim} > {MAX_DENSE_DIM} \
                     would need {:.1} GB for one matrix; use a sparse method (generalized-alpha, \
                     implicit-euler) for systems this large",
                    (dim * dim * 8) as f64 / 1e9
                ),
            });
        }
        let spent = consistent_start(s, KktChoice::DenseLu.options(opts), state)?;
        let stages = self.params.stages;
        let tab = RadauTableau::with_stages(stages).ok_or_else(|| MethodError::Incompatible {
            method: ID.into(),
            problem: s.info().id,
            reason: format!("no Radau IIA method with {stages} stages (3, 5 or 7)"),
        })?;
        let work = Work::new(s, tab);
        let stage_arrays = || vec![vec![0.0; work.form.dim()]; work.tab.s];
        // The tolerances at fixed steps are the parameters' (as `new` set them); an
        // error-controlled run's replace them.
        let tol = Tolerances {
            rtol: self.params.rtol,
            atol: self.params.atol,
        };
        let mut stepper = RadauStepper {
            sys,
            params: self.params.clone(),
            tol,
            given: (tol, false),
            order: self
                .params
                .variable_order
                .then(|| OrderSelection::new(3, 7)),
            kernel: NewtonKernel::new(NewtonOptions {
                tol: 0.0,
                max_iter: 7,
                floor: 0.0,
                predict: false,
                carry_eta: true,
                stop_on_growth: true,
            }),
            mem: Memory {
                cont: stage_arrays(),
                cont_h: None,
                pending: stage_arrays(),
                pending_h: None,
                jacobian_stale: true,
                jacobian_fresh: false,
                rejected: false,
                restart: false,
                theta: 0.0,
            },
            work,
            stats: MethodStats::default().merged(spent),
        };
        match opts.tolerances {
            Some(tol) => stepper.apply_tolerances(tol, true),
            None => stepper.apply_tolerances(tol, false),
        }
        Ok(Box::new(stepper))
    }

    /// The fully implicit form: Radau IIA with s = 3 stages at fixed steps, on
    /// `F(t, y, y′) = 0` directly ([`crate::implicit::implicit_form`]; not RADAU5's
    /// algorithm: full Newton, no error estimate). Refused for s = 5, 7 and the variable
    /// order.
    fn start_implicit<'s>(
        &self, sys: &'s dyn ImplicitDae, _state: &mut State, opts: &StartOptions,
    ) -> Result<Box<dyn Stepper + 's>, MethodError> {
        if opts.tolerances.is_some() {
            return Err(MethodError::Incompatible {
                method: ID.into(),
                problem: sys.info().id,
                reason: "on the fully implicit form radau runs fixed steps (no error estimate there); give `[steps] h` instead of `adaptive`".into(),
            });
        }
        if self.params.variable_order {
            return Err(MethodError::Incompatible {
                method: ID.into(),
                problem: sys.info().id,
                reason: "the fully implicit form runs fixed stages (s = 3) at fixed steps; set variable_order = false".into(),
            });
        }
        let settings = crate::implicit::implicit_form::NewtonSettings {
            tol: self.params.rtol,
            max_iter: self.params.max_newton,
        };
        let stepper =
            crate::implicit::implicit_form::ImplicitRk::new(ID, sys, self.params.stages, settings)?;
        Ok(Box::new(stepper))
    }
}

impl Stepper for RadauStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        self.select_order(h);
        let (s, work) = (self.sys, &mut self.work);
        self.mem.jacobian_fresh = false;
        let t = state.t;
        work.form.pack(state, &mut work.y);
        let y = std::mem::take(&mut work.y);
        work.form.eval(s, t, &y, &mut work.f0);
        work.y = y;
        scale(work, self.tol, h, self.params.newton_scale);
        let (iterations, theta) = self.solve_stages(s, t, h)?;
        self.mem.theta = theta;
        let work = &mut self.work;
        let err = estimate_error(
            work,
            s,
            t,
            h,
            self.mem.cont_h.is_none() || self.mem.rejected,
        )?;
        self.stats.solves += 1;
        for (yi, zi) in work.y.iter_mut().zip(&work.z[work.tab.s - 1]) {
            *yi += zi;
        }
        work.form.unpack(&work.y, state);
        state.t = t + h;
        collocation_polynomial(&work.tab.c, &work.z, &mut self.mem.pending);
        self.mem.pending_h = Some(h);
        self.stats.steps += 1;
        Ok(StepReport {
            newton_iterations: iterations,
            factorizations: 0,
            projection_iterations: 0,
            error: Some(err),
            newton_limit: self.params.max_newton + 5 * (work.tab.s - 3) / 2,
            error_order: self.order.as_ref().map(|_| work.tab.s as u8 + 1),
            ..StepReport::default()
        })
    }

    /// The step just taken was accepted: keep its polynomial and decide whether the
    /// Jacobian is still good.
    fn accept(&mut self) {
        if let (Some(order), Some(h)) = (self.order.as_mut(), self.mem.pending_h) {
            order.accepted(self.work.tab.s, h);
        }
        commit_pending(&mut self.mem, self.params.jacobian_reuse);
    }

    fn reject(&mut self) {
        self.mem.pending_h = None;
        self.mem.rejected = true;
        if !self.mem.jacobian_fresh {
            self.mem.jacobian_stale = true;
        }
    }

    fn stats(&self) -> MethodStats {
        let mut s = self.stats;
        s.steps = s.steps.max(self.stats.steps);
        s
    }

    /// A variable-order run's accepted steps at each order and its order changes.
    fn counters(&self) -> Vec<(&'static str, usize)> {
        self.order
            .as_ref()
            .map(OrderSelection::counters)
            .unwrap_or_default()
    }
}

/// The step just taken was accepted ([`Stepper::accept`]): keep its polynomial and
/// decide whether the Jacobian is still good.
fn commit_pending(mem: &mut Memory, reuse: f64) {
    if let Some(h) = mem.pending_h.take() {
        std::mem::swap(&mut mem.cont, &mut mem.pending);
        mem.cont_h = Some(h);
        mem.rejected = false;
        mem.restart = false;
        if mem.theta > reuse {
            mem.jacobian_stale = true;
        }
    }
}

/// Evaluate the Jacobian if stale and refactor the two Newton matrices if `h` or the
/// Jacobian changed.
fn prepare_matrices(
    work: &mut Work, mem: &mut Memory, stats: &mut MethodStats, sys: &dyn MechanicalSystem, t: f64,
    h: f64,
) -> Result<(), StepError> {
    if mem.jacobian_stale {
        work.form.jacobian(sys, t, &work.y, &work.f0, &mut work.jac);
        stats.jacobian_evaluations += 1;
        mem.jacobian_stale = false;
        mem.jacobian_fresh = true;
        work.h_factored = f64::NAN;
    }
    if work.h_factored.to_bits() == h.to_bits() {
        return Ok(());
    }
    let singular = |e: driftlab_solver::SolverError| StepError::LinearSolve {
        t,
        detail: format!("Radau Newton matrix at h = {h:e}: {e}"),
    };
    // Invalidate first: a failed factorization must not leave one LU for the new h
    // beside a stale `h_factored`.
    work.h_factored = f64::NAN;
    work.factor(h).map_err(singular)?;
    work.h_factored = h;
    stats.factorizations += 1 + work.tab.pairs.len();
    Ok(())
}

/// `sc_i = atol' + rtol' |y_i|`, divided by `h` (index 2) and `h²` (index 3).
fn scale(work: &mut Work, tol: Tolerances, h: f64, newton: NewtonScale) {
    let (i1, i2, _) = work.form.index_split();
    for (i, (s, y)) in work.scal.iter_mut().zip(&work.y).enumerate() {
        *s = tol.atol + tol.rtol * y.abs();
        work.scal_newton[i] = *s;
        if i >= i1 + i2 {
            *s /= h * h;
            work.scal_newton[i] = *s;
        } else if i >= i1 {
            *s /= h;
            if newton == NewtonScale::Radau5 {
                work.scal_newton[i] = *s;
            }
        }
    }
}

/// A failed Newton solve as a step error (slow: with the suggested step factor;
/// diverged, `θ ≥ 0.99` or the limit reached: the last scaled correction against the
/// Newton tolerance `tol`, the quantities the stopping test compares).
fn newton_error(e: NewtonFailure<StepError>, t: f64, iterations: usize, tol: f64) -> StepError {
    match e {
        NewtonFailure::Iteration(e) => e,
        NewtonFailure::Slow { theta, factor, .. } => StepError::NewtonSlow {
            t,
            iterations,
            theta,
            factor,
        },
        NewtonFailure::Diverged { correction, .. } => StepError::NewtonDiverged {
            t,
            iterations,
            residual: correction,
            tol,
        },
    }
}

/// The catalog id `radau`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "radau";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(Radau::new(params::parse("method", ID, t)?)?)),
        defaults: params::defaults::<RadauParams>,
    }
}
