//! Radau IIA, s = 3 (order 5), on the index-3 formulation, with the algorithm of
//! Hairer & Wanner's RADAU5.
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
//! are factored (module `radau_newton`: 13 instead of 27 on Andrews). The iteration is the workspace's Newton kernel
//! ([`driftlab_solver::newton`]) with RADAU5's tolerance
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

use super::radau_newton::ReducedNewton;
use crate::dae_form::DaeForm;
use crate::dynamics::{consistent_start, KktChoice};
use driftlab_core::prelude::*;
use driftlab_solver::newton::{NewtonFailure, NewtonKernel, NewtonOptions};
use serde::{Deserialize, Serialize};

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
        }
    }
}

/// RADAU5's constants (`radau5.f`, 1996/2002 version): nodes, error weights, the
/// eigenvalues of `A⁻¹` (`γ` real, `α ± iβ`) and the transformation `T` and its inverse.
#[allow(clippy::excessive_precision)] // the 20-digit constants as radau5.f prints them
mod coefficients {
    pub const C1: f64 = 0.155_051_025_721_682_190_18;
    pub const C2: f64 = 0.644_948_974_278_317_809_82;
    pub const DD: [f64; 3] = [
        -10.048_809_399_827_415_562,
        1.382_142_733_160_748_895_8,
        -1.0 / 3.0,
    ];
    pub const GAMMA: f64 = 3.637_834_252_744_495_732_2;
    pub const ALPHA: f64 = 2.681_082_873_627_752_133_9;
    pub const BETA: f64 = 3.050_430_199_247_410_569_4;
    pub const T: [[f64; 3]; 3] = [
        [
            9.123_239_487_089_294_279_2e-2,
            -0.141_255_295_020_954_208_43,
            -3.002_919_410_514_742_449_2e-2,
        ],
        [
            0.241_717_932_707_107_018_96,
            0.204_129_352_293_799_931_99,
            0.382_942_112_757_261_937_79,
        ],
        [0.966_048_182_615_092_936_19, 1.0, 0.0],
    ];
    pub const TI: [[f64; 3]; 3] = [
        [
            4.325_579_890_063_155_351_0,
            0.339_199_251_815_809_869_54,
            0.541_770_539_935_874_871_19,
        ],
        [
            -4.178_718_591_551_904_727_3,
            -0.327_682_820_761_062_387_08,
            0.476_623_554_500_550_451_96,
        ],
        [
            -0.502_872_634_945_786_875_95,
            2.571_926_949_855_605_429_2,
            -0.596_039_204_828_224_924_97,
        ],
    ];
}
use coefficients as rc;

/// Declared properties.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: "radau".into(),
        family: "implicit-rk".into(),
        title: "Radau IIA (s = 3, order 5) on the index-3 form, RADAU5's algorithm".into(),
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
        orders: DeclaredOrders {
            q: Some(5.0),
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
        error_estimate: Some(ErrorEstimate {
            order: 4,
            rule: "embedded estimate of RADAU5 (HW II (8.20)), RMS over y = (q, v, a, λ) with \
                   sc = atol' + rtol'|y|, divided by h for v and by h² for a, λ (index 2 and 3)"
                .into(),
            own_controller: false,
        }),
        ..MethodInfo::default()
    }
}

/// Largest `N = 3n + m` for the dense Jacobian `∂F/∂y` (N × N: 2000 is 32 MB) beside the
/// reduced Newton matrices (`(n + m)`-square, one real and one complex).
const MAX_DENSE_DIM: usize = 2000;

/// Dense work arrays of one run (dimension `N = 3n + m`).
struct Work {
    form: DaeForm,
    y: Vec<f64>,
    f0: Vec<f64>,
    scal: Vec<f64>,
    /// Scale of the Newton norm (`scal`, or with the velocities not divided by h).
    scal_newton: Vec<f64>,
    jac: Vec<f64>,
    z: [Vec<f64>; 3],
    w: [Vec<f64>; 3],
    f: [Vec<f64>; 3],
    /// Newton right-hand sides, then corrections, of `W`.
    r: [Vec<f64>; 3],
    tmp: Vec<f64>,
    /// The error estimate's `B Σ eᵢZᵢ / h`, its solution and the shifted point.
    be: Vec<f64>,
    err: Vec<f64>,
    shifted: Vec<f64>,
    /// The real and complex Newton matrices, factored in their reduced form.
    newton: ReducedNewton,
    /// `h` the LUs were built for (NaN: not factored).
    h_factored: f64,
}

/// What carries from an accepted step to the next.
struct Memory {
    /// Collocation polynomial coefficients of the last accepted step (`CONT`).
    cont: [Vec<f64>; 3],
    /// Its step size; `None` before the first accepted step.
    cont_h: Option<f64>,
    /// The same from the step just taken, until it is known to be accepted.
    pending: [Vec<f64>; 3],
    /// Its step size; `None` when no step is pending.
    pending_h: Option<f64>,
    /// Jacobian must be re-evaluated before the next iteration.
    jacobian_stale: bool,
    /// The Jacobian was evaluated during the current step attempt.
    jacobian_fresh: bool,
    /// The last attempt was rejected (or failed).
    rejected: bool,
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
                id: "radau".into(),
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
        Ok(Self { params })
    }
}

impl RadauStepper<'_> {
    /// Transform `tol` as RADAU5 does (`radau5.f`: `rtol' = 0.1 rtol^(2/3)`,
    /// `atol' = rtol' atol / rtol`) and set the Newton tolerance from it. An
    /// error-controlled run (`adaptive`) gives up a slow Newton iteration early and
    /// retries with a smaller step; a fixed-step run iterates to the limit
    /// (`max_newton`, at least 20) after refreshing the Jacobian once.
    fn apply_tolerances(&mut self, tol: Tolerances, adaptive: bool) {
        let rtol = 0.1 * tol.rtol.powf(2.0 / 3.0);
        let atol = rtol * tol.atol / tol.rtol;
        self.tol = Tolerances { rtol, atol };
        self.kernel.opts = NewtonOptions {
            tol: self
                .params
                .newton_tol
                .unwrap_or((10.0 * f64::EPSILON / rtol).max(0.03f64.min(rtol.sqrt()))),
            max_iter: if adaptive {
                self.params.max_newton
            } else {
                self.params.max_newton.max(20)
            },
            floor: 0.0,
            predict: adaptive,
            carry_eta: true,
            stop_on_growth: true,
        };
    }

    /// The Newton solve of one step; at fixed steps a failure with a Jacobian from an
    /// earlier step is retried once with a fresh one.
    fn solve_stages(
        &mut self, sys: &dyn MechanicalSystem, t: f64, h: f64,
    ) -> Result<(usize, f64), StepError> {
        let mut iterations = 0;
        loop {
            let work = &mut self.work;
            prepare_matrices(work, &mut self.mem, &mut self.stats, sys, t, h)?;
            start_values(work, &self.mem, h);
            let before = self.kernel.counters.iterations;
            let solved = self.kernel.solve(|_| newton_iteration(work, sys, t, h));
            let done = self.kernel.counters.iterations - before;
            iterations += done;
            self.stats.newton_iterations += done;
            self.stats.solves += 2 * done;
            match solved {
                Ok(r) => return Ok((iterations, if r.theta.is_nan() { 0.0 } else { r.theta })),
                Err(e) if self.kernel.opts.predict || self.mem.jacobian_fresh => {
                    return Err(newton_error(e, t, iterations))
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
        info()
    }

    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        let s = sys;
        let dim = 3 * s.dims().n + s.dims().m;
        if dim > MAX_DENSE_DIM {
            return Err(MethodError::Incompatible {
                method: "radau".into(),
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
        let form = DaeForm::new(s);
        let dim = form.dim();
        let v = || vec![0.0; dim];
        let work = Work {
            form,
            y: v(),
            f0: v(),
            scal: v(),
            scal_newton: v(),
            jac: vec![0.0; dim * dim],
            z: [v(), v(), v()],
            w: [v(), v(), v()],
            f: [v(), v(), v()],
            r: [v(), v(), v()],
            tmp: v(),
            be: v(),
            err: v(),
            shifted: v(),
            newton: ReducedNewton::new(s.dims().n, s.dims().m),
            h_factored: f64::NAN,
        };
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
            kernel: NewtonKernel::new(NewtonOptions {
                tol: 0.0,
                max_iter: 7,
                floor: 0.0,
                predict: false,
                carry_eta: true,
                stop_on_growth: true,
            }),
            work,
            mem: Memory {
                cont: [v(), v(), v()],
                cont_h: None,
                pending: [v(), v(), v()],
                pending_h: None,
                jacobian_stale: true,
                jacobian_fresh: false,
                rejected: false,
                theta: 0.0,
            },
            stats: MethodStats::default().merged(spent),
        };
        match opts.tolerances {
            Some(tol) => stepper.apply_tolerances(tol, true),
            None => stepper.apply_tolerances(tol, false),
        }
        Ok(Box::new(stepper))
    }
}

impl Stepper for RadauStepper<'_> {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
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
        for (yi, zi) in work.y.iter_mut().zip(&work.z[2]) {
            *yi += zi;
        }
        work.form.unpack(&work.y, state);
        state.t = t + h;
        collocation_polynomial(&work.z, &mut self.mem.pending);
        self.mem.pending_h = Some(h);
        self.stats.steps += 1;
        Ok(StepReport {
            newton_iterations: iterations,
            factorizations: 0,
            projection_iterations: 0,
            error: Some(err),
            newton_limit: self.params.max_newton,
            ..StepReport::default()
        })
    }

    /// The step just taken was accepted: keep its polynomial and decide whether the
    /// Jacobian is still good.
    fn accept(&mut self) {
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
}

/// The step just taken was accepted ([`Stepper::accept`]): keep its polynomial and
/// decide whether the Jacobian is still good.
fn commit_pending(mem: &mut Memory, reuse: f64) {
    if let Some(h) = mem.pending_h.take() {
        std::mem::swap(&mut mem.cont, &mut mem.pending);
        mem.cont_h = Some(h);
        mem.rejected = false;
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
    let (real, complex) = (rc::GAMMA / h, (rc::ALPHA / h, rc::BETA / h));
    work.newton
        .factor(&work.jac, real, complex)
        .map_err(singular)?;
    work.h_factored = h;
    stats.factorizations += 2;
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

/// Starting `Z` from the last accepted step's collocation polynomial (zero at the first
/// step), and `W = T⁻¹ Z`.
fn start_values(work: &mut Work, mem: &Memory, h: f64) {
    match (&mem.cont, mem.cont_h) {
        (cont, Some(h_old)) => {
            let c3q = h / h_old;
            let cq = [rc::C1 * c3q, rc::C2 * c3q, c3q];
            let (c1m1, c2m1) = (rc::C1 - 1.0, rc::C2 - 1.0);
            for (k, z) in work.z.iter_mut().enumerate() {
                let c = cq[k];
                for (i, zi) in z.iter_mut().enumerate() {
                    *zi = c * (cont[0][i] + (c - c2m1) * (cont[1][i] + (c - c1m1) * cont[2][i]));
                }
            }
        }
        (_, None) => work
            .z
            .iter_mut()
            .for_each(|z| z.iter_mut().for_each(|x| *x = 0.0)),
    }
    transform(&rc::TI, &work.z, &mut work.w);
}

/// `out = (M ⊗ I) x` stage-wise for a 3 × 3 matrix `M`.
fn transform(mat: &[[f64; 3]; 3], x: &[Vec<f64>; 3], out: &mut [Vec<f64>; 3]) {
    for (k, o) in out.iter_mut().enumerate() {
        for (i, oi) in o.iter_mut().enumerate() {
            *oi = mat[k][0] * x[0][i] + mat[k][1] * x[1][i] + mat[k][2] * x[2][i];
        }
    }
}

/// One simplified-Newton iteration on `W`; returns the scaled RMS norm of `ΔW`.
fn newton_iteration(
    work: &mut Work, sys: &dyn MechanicalSystem, t: f64, h: f64,
) -> Result<f64, StepError> {
    let dim = work.form.dim();
    let c = [rc::C1, rc::C2, 1.0];
    for k in 0..3 {
        for i in 0..dim {
            work.tmp[i] = work.y[i] + work.z[k][i];
        }
        let stage = std::mem::take(&mut work.tmp);
        work.form.eval(sys, t + c[k] * h, &stage, &mut work.f[k]);
        work.tmp = stage;
    }
    // Right-hand sides R = T⁻¹F − (diag(γ, α+iβ)/h ⊗ B) W, in place of F.
    let r = &mut work.r;
    transform(&rc::TI, &work.f, r);
    let (fac1, alph, beta) = (rc::GAMMA / h, rc::ALPHA / h, rc::BETA / h);
    for i in (0..dim).filter(|&i| work.form.is_differential(i)) {
        let (w1, w2, w3) = (work.w[0][i], work.w[1][i], work.w[2][i]);
        r[0][i] -= fac1 * w1;
        r[1][i] -= alph * w2 - beta * w3;
        r[2][i] -= alph * w3 + beta * w2;
    }
    let linear = |e: driftlab_solver::SolverError| StepError::LinearSolve {
        t,
        detail: format!("Radau Newton matrix: {e}"),
    };
    work.newton.solve_real(&mut r[0]).map_err(linear)?;
    let [_, r2, r3] = r;
    work.newton.solve_complex(r2, r3).map_err(linear)?;
    let mut sum = 0.0;
    for (k, dw) in r.iter().enumerate() {
        for i in 0..dim {
            sum += (dw[i] / work.scal_newton[i]).powi(2);
            work.w[k][i] += dw[i];
        }
    }
    transform(&rc::T, &work.w, &mut work.z);
    Ok((sum / (3 * dim) as f64).sqrt())
}

/// RADAU5's error estimate (see the module documentation); `refine` allows the second,
/// filtered estimate on a first or rejected step.
fn estimate_error(
    work: &mut Work, sys: &dyn MechanicalSystem, t: f64, h: f64, refine: bool,
) -> Result<f64, StepError> {
    let dim = work.form.dim();
    for (i, ei) in work.tmp.iter_mut().enumerate() {
        *ei = (0..3).map(|k| rc::DD[k] * work.z[k][i]).sum::<f64>() / h;
    }
    work.form.mass_times(&work.tmp, &mut work.be);
    let linear = |e: driftlab_solver::SolverError| StepError::LinearSolve {
        t,
        detail: format!("Radau error estimate: {e}"),
    };
    let cont = &mut work.err;
    for (c, (b, f)) in cont.iter_mut().zip(work.be.iter().zip(&work.f0)) {
        *c = b + f;
    }
    work.newton.solve_real(cont).map_err(linear)?;
    let norm = |c: &[f64], s: &[f64]| {
        let sum: f64 = c.iter().zip(s).map(|(x, s)| (x / s).powi(2)).sum();
        (sum / dim as f64).sqrt().max(1e-10)
    };
    let err = norm(cont, &work.scal);
    if err < 1.0 || !refine {
        return Ok(err);
    }
    for (x, (y, c)) in work.shifted.iter_mut().zip(work.y.iter().zip(cont.iter())) {
        *x = y + c;
    }
    work.form.eval(sys, t, &work.shifted, &mut work.tmp);
    for (c, (f, b)) in cont.iter_mut().zip(work.tmp.iter().zip(&work.be)) {
        *c = f + b;
    }
    work.newton.solve_real(cont).map_err(linear)?;
    Ok(norm(cont, &work.scal))
}

/// RADAU5's `CONT` coefficients of the collocation polynomial through the stages, in
/// `out`.
fn collocation_polynomial(z: &[Vec<f64>; 3], out: &mut [Vec<f64>; 3]) {
    let (c1m1, c2m1, c1mc2) = (rc::C1 - 1.0, rc::C2 - 1.0, rc::C1 - rc::C2);
    for i in 0..z[0].len() {
        let (z1, z2, z3) = (z[0][i], z[1][i], z[2][i]);
        out[0][i] = (z2 - z3) / c2m1;
        let ak = (z1 - z2) / c1mc2;
        let acont3 = (ak - z1 / rc::C1) / rc::C2;
        out[1][i] = (ak - out[0][i]) / c1m1;
        out[2][i] = out[1][i] - acont3;
    }
}

/// A failed Newton solve as a step error (slow: with the suggested step factor).
fn newton_error(e: NewtonFailure<StepError>, t: f64, iterations: usize) -> StepError {
    match e {
        NewtonFailure::Iteration(e) => e,
        NewtonFailure::Slow { theta, factor, .. } => StepError::NewtonSlow {
            t,
            iterations,
            theta,
            factor,
        },
        NewtonFailure::Diverged {
            correction, theta, ..
        } => StepError::NewtonDiverged {
            t,
            iterations,
            residual: correction,
            tol: theta,
        },
    }
}

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::MethodEntry {
    use driftlab_core::params;
    crate::MethodEntry {
        id: "radau",
        info,
        build: |t| Ok(Box::new(Radau::new(params::parse("method", "radau", t)?)?)),
        defaults: params::defaults::<RadauParams>,
    }
}

#[cfg(test)]
mod tests {
    use super::coefficients as rc;

    /// `T⁻¹ A⁻¹ T = [[γ, 0, 0], [0, α, −β], [0, β, α]]` for the Radau IIA matrix `A`,
    /// and `T T⁻¹ = I`: the constants are consistent to round-off.
    #[test]
    fn transformation_block_diagonalizes_the_inverse_tableau() {
        let s6 = 6f64.sqrt();
        let a = [
            [
                (88.0 - 7.0 * s6) / 360.0,
                (296.0 - 169.0 * s6) / 1800.0,
                (-2.0 + 3.0 * s6) / 225.0,
            ],
            [
                (296.0 + 169.0 * s6) / 1800.0,
                (88.0 + 7.0 * s6) / 360.0,
                (-2.0 - 3.0 * s6) / 225.0,
            ],
            [(16.0 - s6) / 36.0, (16.0 + s6) / 36.0, 1.0 / 9.0],
        ];
        let mul = |x: &[[f64; 3]; 3], y: &[[f64; 3]; 3]| {
            let mut o = [[0.0; 3]; 3];
            for i in 0..3 {
                for j in 0..3 {
                    o[i][j] = (0..3).map(|k| x[i][k] * y[k][j]).sum();
                }
            }
            o
        };
        let id = mul(&rc::T, &rc::TI);
        // A · T · D = T ⇔ T⁻¹ A⁻¹ T = D: check A T D = T with D the block form.
        let d = [
            [rc::GAMMA, 0.0, 0.0],
            [0.0, rc::ALPHA, -rc::BETA],
            [0.0, rc::BETA, rc::ALPHA],
        ];
        let atd = mul(&mul(&a, &rc::T), &d);
        for i in 0..3 {
            for j in 0..3 {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((id[i][j] - want).abs() < 1e-14, "T T⁻¹ = {id:?}");
                assert!((atd[i][j] - rc::T[i][j]).abs() < 1e-13, "A T D = {atd:?}");
            }
        }
    }
}
