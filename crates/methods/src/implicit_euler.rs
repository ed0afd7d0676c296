//! `implicit-euler` for the semi-explicit index-1 form (seed 003 §保持约束的离散计算):
//! the differential equation by backward Euler and the algebraic equation imposed at
//! the new time,
//!
//! ```text
//! (x_{n+1} − x_n)/h = f(t_{n+1}, x_{n+1}, z_{n+1}),     0 = g(t_{n+1}, x_{n+1}, z_{n+1}),
//! ```
//!
//! solved by Newton's method with the Jacobian `[[I − h f_x, −h f_z], [g_x, g_z]]`
//! (dense LU; these systems are small). For the seed-003 example this is the recursion
//! `x_{n+1} = (x_n + c h)/(1 + 2h)`. The constraint holds at every step to Newton
//! tolerance; the time discretization is first order in `x` and in `z` (backward Euler
//! is order 1 for index-1 DAEs: Hairer & Wanner, Solving ODEs II, §VI.1 and Thm. VI.1.1;
//! Brenan, Campbell & Petzold 1996, §3.1).

use driftlab_core::method::unsupported;
use driftlab_core::{
    ConstraintLevels, DeclaredOrders, Index1Jacobians, Method, MethodError, MethodInfo,
    MethodStats, ParamError, State, StepError, StepReport, SystemForm, SystemRef,
};
use driftlab_solver::dense::solve_dense;
use serde::{Deserialize, Serialize};

/// Parameters of [`ImplicitEuler`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImplicitEulerParams {
    /// Newton stops when `‖Δ‖∞ ≤ tol (1 + ‖(x, z)‖∞)`.
    pub tol: f64,
    /// Newton iteration cap (exceeding it fails the run).
    pub max_iter: usize,
}

impl Default for ImplicitEulerParams {
    fn default() -> Self {
        Self {
            tol: 1e-13,
            max_iter: 25,
        }
    }
}

/// Backward Euler for semi-explicit index-1 DAEs.
pub struct ImplicitEuler {
    p: ImplicitEulerParams,
    stats: MethodStats,
}

impl ImplicitEuler {
    /// A new instance.
    pub fn new(p: ImplicitEulerParams) -> Result<Self, ParamError> {
        driftlab_core::params::positive("implicit-euler", "tol", p.tol)?;
        Ok(Self {
            p,
            stats: MethodStats::default(),
        })
    }
}

/// Declared properties of `implicit-euler`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: "implicit-euler".into(),
        family: "implicit-runge-kutta".into(),
        title: "Implicit (backward) Euler with the algebraic constraint imposed at t_{n+1}".into(),
        equations: "(x_{n+1} − x_n)/h = f(t_{n+1}, x_{n+1}, z_{n+1});  0 = g(t_{n+1}, x_{n+1}, z_{n+1});  Newton on [I − h f_x, −h f_z; g_x, g_z]".into(),
        citation: "seed 003 §保持约束的离散计算; order 1 in x and z for index-1 DAEs: Hairer & Wanner, Solving ODEs II, §VI.1".into(),
        orders: DeclaredOrders { q: Some(1.0), v: None, lambda: Some(1.0) },
        enforces: ConstraintLevels { position: true, velocity: false, acceleration: false },
        implicit: true,
        symmetric: false,
        symplectic: false,
        forms: vec![SystemForm::SemiExplicit],
    }
}

impl Method for ImplicitEuler {
    fn info(&self) -> MethodInfo {
        info()
    }
    fn init(&mut self, sys: SystemRef<'_>, _state: &mut State) -> Result<(), MethodError> {
        match sys {
            SystemRef::SemiExplicit(_) => Ok(()),
            _ => Err(unsupported(&info(), sys.form())),
        }
    }
    fn step(
        &mut self,
        sys: SystemRef<'_>,
        state: &mut State,
        h: f64,
    ) -> Result<StepReport, StepError> {
        let SystemRef::SemiExplicit(s) = sys else {
            return Err(StepError::LinearSolve {
                t: state.t,
                detail: "implicit-euler: not an index-1 system".into(),
            });
        };
        let (nx, nz) = s.dims();
        let n = nx + nz;
        let t1 = state.t + h;
        let xn = state.q.clone();
        let (mut x, mut z) = (state.q.clone(), state.lambda.clone());
        let mut jacs = Index1Jacobians::zeros(nx, nz);
        let (mut f, mut g) = (vec![0.0; nx], vec![0.0; nz]);
        let mut jac = vec![0.0; n * n];
        let mut rhs = vec![0.0; n];
        let mut report = StepReport::default();
        loop {
            if report.newton_iterations >= self.p.max_iter {
                s.f(t1, &x, &z, &mut f);
                s.g(t1, &x, &z, &mut g);
                let res = (0..nx)
                    .map(|i| (x[i] - xn[i] - h * f[i]).abs())
                    .chain(g.iter().map(|v| v.abs()))
                    .fold(0.0, f64::max);
                return Err(StepError::NewtonDiverged {
                    t: state.t,
                    iterations: report.newton_iterations,
                    residual: res,
                    tol: self.p.tol,
                });
            }
            s.f(t1, &x, &z, &mut f);
            s.g(t1, &x, &z, &mut g);
            s.jacobians(t1, &x, &z, &mut jacs);
            let Index1Jacobians { fx, fz, gx, gz } = &jacs;
            for i in 0..nx {
                rhs[i] = -(x[i] - xn[i] - h * f[i]);
                for j in 0..nx {
                    jac[i * n + j] = if i == j { 1.0 } else { 0.0 } - h * fx[i * nx + j];
                }
                for j in 0..nz {
                    jac[i * n + nx + j] = -h * fz[i * nz + j];
                }
            }
            for i in 0..nz {
                rhs[nx + i] = -g[i];
                for j in 0..nx {
                    jac[(nx + i) * n + j] = gx[i * nx + j];
                }
                for j in 0..nz {
                    jac[(nx + i) * n + nx + j] = gz[i * nz + j];
                }
            }
            solve_dense(n, &jac, &mut rhs).map_err(|e| StepError::LinearSolve {
                t: state.t,
                detail: e.to_string(),
            })?;
            report.newton_iterations += 1;
            report.factorizations += 1;
            for i in 0..nx {
                x[i] += rhs[i];
            }
            for i in 0..nz {
                z[i] += rhs[nx + i];
            }
            let size = x.iter().chain(&z).fold(0.0_f64, |m, v| m.max(v.abs()));
            let step = rhs.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            if step <= self.p.tol * (1.0 + size) {
                break;
            }
        }
        state.q = x;
        state.lambda = z;
        state.t = t1;
        self.stats.steps += 1;
        self.stats.newton_iterations += report.newton_iterations;
        self.stats.factorizations += report.factorizations;
        self.stats.solves += report.factorizations;
        Ok(report)
    }
    fn stats(&self) -> MethodStats {
        self.stats
    }
}
