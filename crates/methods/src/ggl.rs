//! `ggl`: the Gear–Gupta–Leimkuhler stabilized index-2 formulation (Gear, Leimkuhler &
//! Gupta, J. Comput. Appl. Math. 12–13 (1985) 77–90), integrated by implicit Euler:
//!
//! ```text
//! q' = v − Φ_q(q)ᵀ μ,   M v' = f − Φ_q(q)ᵀ λ,   0 = Φ(t, q),   0 = Φ_q(q) v + Φ_t
//! ```
//!
//! Both the position and the velocity constraint are imposed; the extra multiplier μ is
//! zero on the exact solution and absorbs the inconsistency between them. Implicit
//! Euler: with unknowns `(q⁺, v⁺, Λ = hλ⁺, μ⁺)`,
//!
//! ```text
//! q⁺ − q_n − h v⁺ + h Φ_q(q⁺)ᵀ μ⁺ = 0,     M(v⁺ − v_n) − h f⁺ + Φ_q(q⁺)ᵀ Λ = 0,
//! Φ(t⁺, q⁺) = 0,                          Φ_q(q⁺) v⁺ + Φ_t(t⁺, q⁺) = 0,
//! ```
//!
//! solved by Newton with a dense `(2n + 2m)²` matrix (the `(Φ_q v)_q` block by central
//! differences; constraint Hessians contracted with μ and Λ where the problem provides
//! them). Dense: meant for the small models of the formulation comparison; larger systems
//! are refused with a clear message. First order (BDF1 on an index-2 system: Brenan,
//! Campbell & Petzold 1996, §3.1; Hairer & Wanner, Solving ODEs II, §VII.1 for GGL).

use crate::dynamics::consistent_start;
use crate::dynamics::newton_outcome;
use crate::dynamics::KktChoice;
use driftlab_core::method::unsupported;
use driftlab_core::{
    ConstraintLevels, DeclaredOrders, MechanicalSystem, Method, MethodError, MethodInfo,
    MethodStats, ParamError, State, StepError, StepReport, SystemForm, SystemRef,
};
use driftlab_solver::dense::solve_dense;
use driftlab_solver::newton::{NewtonKernel, NewtonOptions};
use serde::{Deserialize, Serialize};

/// Largest `2n + 2m` the dense Newton matrix is built for.
pub const MAX_DENSE: usize = 400;

/// Parameters of [`Ggl`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GglParams {
    /// Newton stops when `‖Δ‖∞ ≤ tol (1 + ‖unknowns‖∞)`.
    pub tol: f64,
    /// Newton iteration cap.
    pub max_iter: usize,
}

impl Default for GglParams {
    fn default() -> Self {
        Self {
            tol: 1e-12,
            max_iter: 25,
        }
    }
}

/// GGL + implicit Euler.
pub struct Ggl {
    p: GglParams,
    stats: MethodStats,
    mu: Vec<f64>,
}

impl Ggl {
    /// GGL with Newton tolerance `tol > 0`; `ParamError` otherwise.
    pub fn new(p: GglParams) -> Result<Self, ParamError> {
        driftlab_core::params::positive("ggl", "tol", p.tol)?;
        Ok(Self {
            p,
            stats: MethodStats::default(),
            mu: Vec::new(),
        })
    }
}

/// Declared properties of `ggl`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: "ggl".into(),
        family: "stabilized-index-2".into(),
        title: "Gear–Gupta–Leimkuhler stabilized index-2 formulation, implicit Euler".into(),
        equations: "q' = v − Φ_qᵀμ, M v' = f − Φ_qᵀλ, Φ = 0, Φ_q v + Φ_t = 0;  implicit Euler, dense Newton".into(),
        citation: "Gear, Leimkuhler & Gupta, J. Comput. Appl. Math. 12–13 (1985) 77–90; order 1: Brenan, Campbell & Petzold \
                   1996 §3.1"
            .into(),
        orders: DeclaredOrders { q: Some(1.0), v: Some(1.0), lambda: Some(1.0) },
        enforces: ConstraintLevels { position: true, velocity: true, acceleration: false },
        implicit: true,
        symmetric: false,
        symplectic: false,
        forms: vec![SystemForm::Mechanical],
        nonholonomic: false,
        unilateral: false,
        priorities: false,
        error_estimate: None,
    }
}

/// Dense row-major `rows × cols` block writer.
struct Dense<'a> {
    a: &'a mut [f64],
    dim: usize,
}

impl Dense<'_> {
    fn add(&mut self, r: usize, c: usize, v: f64) {
        self.a[r * self.dim + c] += v;
    }
}

impl Ggl {
    fn newton(
        &mut self,
        s: &dyn MechanicalSystem,
        state: &mut State,
        h: f64,
    ) -> Result<StepReport, StepError> {
        let d = s.dims();
        let (n, m) = (d.n, d.m);
        let dim = 2 * n + 2 * m;
        let t1 = state.t + h;
        let (qn, vn) = (state.q.clone(), state.v.clone());
        let mut q: Vec<f64> = (0..n)
            .map(|i| qn[i] + h * vn[i] + 0.5 * h * h * state.a[i])
            .collect();
        let mut v: Vec<f64> = (0..n).map(|i| vn[i] + h * state.a[i]).collect();
        let mut big_l: Vec<f64> = state.lambda.iter().map(|l| h * l).collect();
        let mut mu = vec![0.0; m];
        let mp = s.mass_pattern();
        let jp = s.jacobian_pattern();
        let hp = s.constraint_hessian_pattern();
        let (mut mass, mut jac) = (vec![0.0; mp.nnz()], vec![0.0; jp.nnz()]);
        let mut hv = vec![0.0; hp.as_ref().map_or(0, |p| p.nnz())];
        let (mut f, mut phi, mut phit) = (vec![0.0; n], vec![0.0; m], vec![0.0; m]);
        let mut kernel = NewtonKernel::new(NewtonOptions::full(self.p.max_iter));
        let solved = kernel.solve(|_| {
            s.mass(&q, &mut mass);
            s.jacobian(t1, &q, &mut jac);
            s.forces(t1, &q, &v, &mut f);
            s.constraints(t1, &q, &mut phi);
            s.phi_t(t1, &q, &mut phit);
            let mut rhs = vec![0.0; dim];
            let mut gtm = vec![0.0; n];
            jp.mul_transpose_vec(&jac, &mu, &mut gtm);
            let mut gtl = vec![0.0; n];
            jp.mul_transpose_vec(&jac, &big_l, &mut gtl);
            let diff: Vec<f64> = (0..n).map(|i| v[i] - vn[i]).collect();
            let mut mdv = vec![0.0; n];
            mp.mul_vec(&mass, &diff, &mut mdv, true);
            let mut gv = vec![0.0; m];
            jp.mul_vec(&jac, &v, &mut gv, false);
            for i in 0..n {
                rhs[i] = -(q[i] - qn[i] - h * v[i] + h * gtm[i]);
                rhs[n + i] = -(mdv[i] - h * f[i] + gtl[i]);
            }
            for r in 0..m {
                rhs[2 * n + r] = -phi[r];
                rhs[2 * n + m + r] = -(gv[r] + phit[r]);
            }
            // Jacobian, unknowns ordered (q, v, Λ, μ).
            let mut jm = vec![0.0; dim * dim];
            {
                let mut w = Dense { a: &mut jm, dim };
                for i in 0..n {
                    w.add(i, i, 1.0);
                    w.add(i, n + i, -h);
                }
                for (&(r, c), &val) in jp.entries.iter().zip(&jac) {
                    w.add(c, 2 * n + m + r, h * val); // ∂R1/∂μ = h Φ_qᵀ
                    w.add(n + c, 2 * n + r, val); // ∂R2/∂Λ = Φ_qᵀ
                    w.add(2 * n + r, c, val); // ∂R3/∂q = Φ_q
                    w.add(2 * n + m + r, n + c, val); // ∂R4/∂v = Φ_q
                }
                for (&(r, c), &val) in mp.entries.iter().zip(&mass) {
                    w.add(n + r, n + c, val);
                    if r != c {
                        w.add(n + c, n + r, val);
                    }
                }
                if let Some(hp) = &hp {
                    // ∂R1/∂q += h K(μ), ∂R2/∂q += K(Λ).
                    for (coef, mult, row0) in [(h, &mu, 0usize), (1.0, &big_l, n)] {
                        s.constraint_hessian(t1, &q, mult, &mut hv);
                        for (&(r, c), &val) in hp.entries.iter().zip(&hv) {
                            w.add(row0 + r, c, coef * val);
                            if r != c {
                                w.add(row0 + c, r, coef * val);
                            }
                        }
                    }
                }
                // ∂R4/∂q = (Φ_q v)_q by central differences.
                for c in 0..n {
                    let e = 1e-7 * (1.0 + q[c].abs());
                    let mut jj = vec![0.0; jp.nnz()];
                    let (mut gp, mut gm) = (vec![0.0; m], vec![0.0; m]);
                    let mut qq = q.clone();
                    qq[c] += e;
                    s.jacobian(t1, &qq, &mut jj);
                    jp.mul_vec(&jj, &v, &mut gp, false);
                    qq[c] -= 2.0 * e;
                    s.jacobian(t1, &qq, &mut jj);
                    jp.mul_vec(&jj, &v, &mut gm, false);
                    for r in 0..m {
                        w.add(2 * n + m + r, c, (gp[r] - gm[r]) / (2.0 * e));
                    }
                }
            }
            solve_dense(dim, &jm, &mut rhs).map_err(|e| StepError::LinearSolve {
                t: state.t,
                detail: e.to_string(),
            })?;
            for i in 0..n {
                q[i] += rhs[i];
                v[i] += rhs[n + i];
            }
            for r in 0..m {
                big_l[r] += rhs[2 * n + r];
                mu[r] += rhs[2 * n + m + r];
            }
            let size = q.iter().chain(&v).fold(0.0_f64, |a, x| a.max(x.abs()));
            let step = rhs[..2 * n].iter().fold(0.0_f64, |a, x| a.max(x.abs()));
            Ok(step / (self.p.tol * (1.0 + size)))
        });
        let iterations = kernel.counters.iterations;
        let report = newton_outcome(solved, iterations, state.t, self.p.tol, || {
            s.constraints(t1, &q, &mut phi);
            let res = phi.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
            res
        })?;
        for i in 0..n {
            state.a[i] = (v[i] - vn[i]) / h;
        }
        state.q = q;
        state.v = v;
        for r in 0..m {
            state.lambda[r] = big_l[r] / h;
        }
        self.mu = mu;
        state.t = t1;
        self.stats.steps += 1;
        self.stats.newton_iterations += report.newton_iterations;
        self.stats.factorizations += report.factorizations;
        Ok(report)
    }
}

impl Method for Ggl {
    fn info(&self) -> MethodInfo {
        info()
    }
    fn init(&mut self, sys: SystemRef<'_>, state: &mut State) -> Result<(), MethodError> {
        let SystemRef::Mechanical(s) = sys else {
            return Err(unsupported(&info(), sys.form()));
        };
        let d = s.dims();
        if 2 * (d.n + d.m) > MAX_DENSE {
            return Err(MethodError::Incompatible {
                method: "ggl".into(),
                problem: s.info().id,
                reason: format!("the dense GGL Newton matrix would be {0}×{0} (limit {MAX_DENSE}); use a smaller model", 2 * (d.n + d.m)),
            });
        }
        let st = consistent_start(s, KktChoice::Auto, state)?;
        self.stats = self.stats.merged(st);
        Ok(())
    }
    fn step(
        &mut self,
        sys: SystemRef<'_>,
        state: &mut State,
        h: f64,
    ) -> Result<StepReport, StepError> {
        match sys {
            SystemRef::Mechanical(s) => self.newton(s, state, h),
            _ => Err(driftlab_core::method::not_ready("ggl", state.t)),
        }
    }
    fn stats(&self) -> MethodStats {
        self.stats
    }
}

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::MethodEntry {
    use driftlab_core::params;
    crate::MethodEntry {
        id: "ggl",
        info,
        build: |t| Ok(Box::new(Ggl::new(params::parse("method", "ggl", t)?)?)),
        defaults: params::defaults::<GglParams>,
    }
}
