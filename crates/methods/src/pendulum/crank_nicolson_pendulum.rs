//! `crank-nicolson-pendulum`: seed 002 §19.3 — the pendulum reduced to the ODE of §19.1
//! (multiplier `μ = −2λ/m` as a state) and integrated with Crank–Nicolson (the
//! trapezoidal rule), optionally with the **third-order stabilization** of the constraint
//! `V = x² + y² − r²`:
//!
//! ```text
//! x' = u, y' = v, u' = μx, v' = μy − g,
//! V''' + a V'' + b V' + c V = 0,   V' = 2(xu + yv),  V'' = 2(u² + v² + μ(x² + y²) − gy),
//! V''' = 2(μ'(x² + y²) + 4μ(xu + yv) − 3gv)
//! ⇒ μ' = [3gv − 4μ(xu + yv) − ½(aV'' + bV' + cV)] / (x² + y²).
//! ```
//!
//! With `a = b = c = 0` this is the unstabilized index-0 form (on the manifold
//! `μ' = 3gv/r²`, seed 002 §19.1): V then obeys `V''' = 0` and drifts. The constraint
//! error decays iff `s³ + a s² + b s + c` is Hurwitz: **Routh–Hurwitz** `a > 0, c > 0,
//! ab > c` (then `b > 0` too) — [`routh_hurwitz`]. Trapezoidal steps are solved by Newton
//! with a central-difference Jacobian of the 5-dimensional right-hand side. Crank–Nicolson
//! is second order and conserves quadratic invariants of linear problems; unlike implicit
//! Euler it does not damp the pendulum's energy (seed 002 §19.3: "Implicit Euler works
//! but is too dissipative").

use crate::dynamics::{count_step_and_factorizations, newton_outcome};
use crate::pendulum::implicit_euler_pendulum::{consistent_mu, pendulum_data, PendulumData};
use driftlab_core::prelude::*;
use driftlab_solver::dense::solve_dense;
use driftlab_solver::newton::{NewtonKernel, NewtonOptions};
use serde::{Deserialize, Serialize};

/// Parameters of [`CrankNicolsonPendulum`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CrankNicolsonParams {
    /// Coefficient a of `V''' + aV'' + bV' + cV = 0` (0: unstabilized).
    pub a: f64,
    /// Coefficient b.
    pub b: f64,
    /// Coefficient c.
    pub c: f64,
    /// Newton stops when `‖Δy‖∞ ≤ tol (1 + ‖y‖∞)`.
    pub tol: f64,
    /// Newton iteration cap.
    pub max_iter: usize,
}

impl Default for CrankNicolsonParams {
    fn default() -> Self {
        Self {
            a: 0.0,
            b: 0.0,
            c: 0.0,
            tol: 1e-13,
            max_iter: 30,
        }
    }
}

/// Routh–Hurwitz for `s³ + a s² + b s + c`: all roots in the open left half plane iff
/// `a > 0`, `c > 0` and `ab > c`.
pub fn routh_hurwitz(a: f64, b: f64, c: f64) -> bool {
    a > 0.0 && c > 0.0 && a * b > c
}

/// Crank–Nicolson on the (optionally stabilized) pendulum ODE.
pub struct CrankNicolsonPendulum {
    p: CrankNicolsonParams,
}

/// [`CrankNicolsonPendulum`] bound to its system.
struct CrankNicolsonPendulumStepper {
    p: CrankNicolsonParams,
    data: PendulumData,
    mu: f64,
    stats: MethodStats,
}

impl CrankNicolsonPendulum {
    /// The method with the coefficients `a, b, c`; `ParamError` naming the field if one is
    /// not finite. The problem's data are read at `start`.
    pub fn new(p: CrankNicolsonParams) -> Result<Self, ParamError> {
        for (field, v) in [("a", p.a), ("b", p.b), ("c", p.c)] {
            if !v.is_finite() {
                return Err(ParamError::OutOfRange {
                    id: ID.into(),
                    field,
                    value: v,
                    fix: "give a finite coefficient".into(),
                });
            }
        }
        driftlab_core::params::positive(ID, "tol", p.tol)?;
        Ok(Self { p })
    }
}

impl CrankNicolsonPendulumStepper {
    fn rhs(&self, d: &PendulumData, y: &[f64; 5]) -> [f64; 5] {
        let [x, yy, u, v, mu] = *y;
        let r2 = x * x + yy * yy;
        let vv = r2 - d.r * d.r;
        let v1 = 2.0 * (x * u + yy * v);
        let v2 = 2.0 * (u * u + v * v + mu * r2 - d.g * yy);
        let dmu = (3.0 * d.g * v
            - 4.0 * mu * (x * u + yy * v)
            - 0.5 * (self.p.a * v2 + self.p.b * v1 + self.p.c * vv))
            / r2;
        [u, v, mu * x, mu * yy - d.g, dmu]
    }
}

/// Declared properties.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: the trapezoidal rule is applied to the pendulum's third-order index-0 ODE, not to a Hamiltonian system".into(),
        family: "implicit-runge-kutta".into(),
        title: "Crank–Nicolson on the pendulum's index-0 form, optional third-order constraint stabilization".into(),
        equations: "y⁺ = y + ½h(F(y) + F(y⁺)),  y = (x, y, u, v, μ),  μ' = [3gv − 4μ(xu + yv) − ½(aV'' + bV' + cV)]/(x² + y²)".into(),
        citation: "seed 002 §19.1 (index reduction, μ' − 3gv = 0) and §19.3 (third-order stabilization, Crank–Nicolson); \
                   trapezoidal rule order 2: Hairer, Nørsett & Wanner, Solving ODEs I, §II.7"
            .into(),
        orders: DeclaredOrders { q: Some(2.0), v: Some(2.0), lambda: Some(2.0) },
        enforces: ConstraintLevels::default(),
        implicit: true,
        symmetric: true,
        ..MethodInfo::default()
    }
}

impl CrankNicolsonPendulumStepper {
    /// `I − ½h ∂F/∂y` at `y` by central differences (row-major 5 × 5).
    fn newton_matrix(&self, d: &PendulumData, y: &[f64; 5], h: f64) -> [f64; 25] {
        let mut jac = [0.0; 25];
        for j in 0..5 {
            let e = 1e-7 * (1.0 + y[j].abs());
            let (mut yp, mut ym) = (*y, *y);
            yp[j] += e;
            ym[j] -= e;
            let (fp, fm) = (self.rhs(d, &yp), self.rhs(d, &ym));
            for i in 0..5 {
                jac[i * 5 + j] =
                    f64::from(u8::from(i == j)) - 0.5 * h * (fp[i] - fm[i]) / (2.0 * e);
            }
        }
        jac
    }
}

impl Method for CrankNicolsonPendulum {
    fn info(&self) -> MethodInfo {
        let mut i = info();
        i.title = format!(
            "{} (a = {}, b = {}, c = {}{})",
            i.title,
            self.p.a,
            self.p.b,
            self.p.c,
            if routh_hurwitz(self.p.a, self.p.b, self.p.c) {
                ", Hurwitz"
            } else {
                ", not Hurwitz"
            }
        );
        i
    }
    fn start<'s>(&self, sys: Mechanical<'s>, state: &mut State, _: &StartOptions) -> Started<'s> {
        let s = sys;
        let d = pendulum_data(ID, s, state)?;
        let mu = consistent_mu(&d, state);
        Ok(Box::new(CrankNicolsonPendulumStepper {
            p: self.p,
            data: d,
            mu,
            stats: MethodStats::default(),
        }))
    }
}

impl Stepper for CrankNicolsonPendulumStepper {
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let d = self.data;
        // μ from the state's λ (a decorator may have changed it): μ = −2λ/m.
        self.mu = -2.0 * state.lambda[0] / d.m;
        let y0 = [state.q[0], state.q[1], state.v[0], state.v[1], self.mu];
        let f0 = self.rhs(&d, &y0);
        let mut y: [f64; 5] = std::array::from_fn(|i| y0[i] + h * f0[i]);
        let mut kernel = NewtonKernel::new(NewtonOptions::full(self.p.max_iter));
        let solved = kernel.solve(|_| {
            let f1 = self.rhs(&d, &y);
            let g: [f64; 5] = std::array::from_fn(|i| y[i] - y0[i] - 0.5 * h * (f0[i] + f1[i]));
            let jac = self.newton_matrix(&d, &y, h);
            let mut delta: Vec<f64> = g.iter().map(|x| -x).collect();
            solve_dense(5, &jac, &mut delta).map_err(|e| StepError::LinearSolve {
                t: state.t,
                detail: e.to_string(),
            })?;
            for i in 0..5 {
                y[i] += delta[i];
            }
            let size = y.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            let step = delta.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            Ok(step / (self.p.tol * (1.0 + size)))
        });
        let iterations = kernel.counters.iterations;
        let report = newton_outcome(solved, iterations, state.t, self.p.tol, || {
            let f1 = self.rhs(&d, &y);
            (0..5)
                .map(|i| (y[i] - y0[i] - 0.5 * h * (f0[i] + f1[i])).abs())
                .fold(0.0, f64::max)
        })?;
        let f1 = self.rhs(&d, &y);
        state.q = vec![y[0], y[1]];
        state.v = vec![y[2], y[3]];
        state.a = vec![f1[2], f1[3]];
        self.mu = y[4];
        state.lambda[0] = -d.m * self.mu / 2.0;
        state.t += h;
        Ok(count_step_and_factorizations(&mut self.stats, report))
    }
    fn stats(&self) -> MethodStats {
        self.stats
    }
}

/// The catalog id `crank-nicolson-pendulum`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "crank-nicolson-pendulum";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| {
            Ok(Box::new(CrankNicolsonPendulum::new(params::parse(
                "method", ID, t,
            )?)?))
        },
        defaults: params::defaults::<CrankNicolsonParams>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routh_hurwitz_matches_the_roots() {
        // (s + 1)³ = s³ + 3s² + 3s + 1: stable. (s + 10)³: stable.
        assert!(routh_hurwitz(3.0, 3.0, 1.0) && routh_hurwitz(30.0, 300.0, 1000.0));
        // s³ + s² + s + 2: ab = 1 < c = 2, a root pair in the right half plane.
        assert!(!routh_hurwitz(1.0, 1.0, 2.0));
        // (s − 1)(s + 2)(s + 3) = s³ + 4s² + s − 6: c < 0.
        assert!(!routh_hurwitz(4.0, 1.0, -6.0));
        // Boundary ab = c: (s + a)(s² + b) has roots on the imaginary axis.
        assert!(!routh_hurwitz(2.0, 3.0, 6.0));
    }
}
