//! Seed 004's coupled energy projection: q and v together onto the position, velocity
//! and energy manifolds, by Newton on one dense KKT system.

use super::params::MAX_COUPLED_DENSE;
use crate::dynamics::linear_error;
use driftlab_core::prelude::*;
use driftlab_solver::newton::{NewtonFailure, NewtonKernel, NewtonOptions};

/// Seed 004's coupled energy projection: `(q, v)` nearest to `(q̃, ṽ)` in the metric
/// diag(M, M) with `Φ(q) = 0`, `Φ_q v + Φ_t = 0` and `H(q, v) = H₀`. Newton on the KKT
/// system
///
/// ```text
/// [ M    0    Φ_qᵀ  J₂ᵀ  ∇_qH ] [Δq]   [ −M(q − q̃) ]
/// [ 0    M    0     Φ_qᵀ ∇_vH ] [Δv]   [ −M(v − ṽ) ]
/// [ Φ_q  0    0     0    0    ] [μ₁] = [ −Φ        ]      J₂ = (Φ_q v)_q
/// [ J₂   Φ_q  0     0    0    ] [μ₂]   [ −(Φ_q v + Φ_t) ]
/// [ ∇_qH ∇_vH 0     0    0    ] [η ]   [ −(H − H₀) ]
/// ```
///
/// (curvature of the constraints dropped from the Hessian; J₂, ∇H by central differences;
/// dense, up to [`MAX_COUPLED_DENSE`] unknowns). Returns the iterations.
pub fn coupled_energy_projection(
    s: &dyn MechanicalSystem, state: &mut State, h0: f64, tol: f64, max_iter: usize,
) -> Result<usize, StepError> {
    let t = state.t;
    let mut sys = CoupledSystem::new(s, state, h0);
    if sys.dim > MAX_COUPLED_DENSE {
        return Err(StepError::LinearSolve { t, detail: format!("coupled energy projection: {} unknowns exceed the dense limit {MAX_COUPLED_DENSE}; use energy_strategy = \"sequential\"", sys.dim) });
    }
    // Stops on its residual (the kernel's η test off), as the position projection.
    let mut kernel = NewtonKernel::new(NewtonOptions::residual_stop(max_iter));
    let mut res = f64::NAN;
    let solved = kernel.solve(|k| {
        let updates = k - 1;
        let e;
        (res, e) = sys.residual(&state.q, &state.v);
        if res <= tol {
            return Ok(0.0);
        }
        if updates >= max_iter || res.is_nan() {
            return Err(StepError::ProjectionFailed {
                t,
                iterations: updates,
                residual: res,
                tol,
            });
        }
        let a = sys.matrix(&state.q, &state.v);
        let mut rhs = sys.rhs(&state.q, &state.v, e);
        driftlab_solver::dense::solve_dense(sys.dim, &a, &mut rhs)
            .map_err(|er| linear_error(t, er))?;
        let n = state.q.len();
        for i in 0..n {
            state.q[i] += rhs[i];
            state.v[i] += rhs[n + i];
        }
        Ok(res / tol)
    });
    let iterations = kernel.counters.iterations - 1;
    match solved {
        Ok(_) => Ok(iterations),
        Err(NewtonFailure::Iteration(e)) => Err(e),
        Err(_) => Err(StepError::ProjectionFailed {
            t,
            iterations,
            residual: res,
            tol,
        }),
    }
}

/// The KKT system of [`coupled_energy_projection`] around the unprojected `(q̃, ṽ)`.
struct CoupledSystem<'a> {
    s: &'a dyn MechanicalSystem,
    t: f64,
    h0: f64,
    scale: f64,
    dim: usize,
    qs: Vec<f64>,
    vs: Vec<f64>,
    mass: Vec<f64>,
    jac: Vec<f64>,
    phi: Vec<f64>,
    phit: Vec<f64>,
    gv: Vec<f64>,
}

impl<'a> CoupledSystem<'a> {
    fn new(s: &'a dyn MechanicalSystem, state: &State, h0: f64) -> Self {
        let d = s.dims();
        let m = d.m;
        Self {
            s,
            t: state.t,
            h0,
            scale: h0.abs().max(s.energy_scale()),
            dim: 2 * d.n + 2 * m + 1,
            qs: state.q.clone(),
            vs: state.v.clone(),
            mass: vec![0.0; s.mass_pattern().nnz()],
            jac: vec![0.0; s.jacobian_pattern().nnz()],
            phi: vec![0.0; m],
            phit: vec![0.0; m],
            gv: vec![0.0; m],
        }
    }

    fn energy(&self, q: &[f64], v: &[f64]) -> f64 {
        self.s.energy(self.t, q, v).unwrap_or(self.h0)
    }

    /// `max(‖Φ‖∞, ‖Φ_q v + Φ_t‖∞, |H − H₀|/scale)` and `H − H₀`; fills M, Φ_q, Φ, Φ_t, Φ_q v.
    fn residual(&mut self, q: &[f64], v: &[f64]) -> (f64, f64) {
        let (s, t) = (self.s, self.t);
        s.mass(q, &mut self.mass);
        s.jacobian(t, q, &mut self.jac);
        s.constraints(t, q, &mut self.phi);
        s.phi_t(t, q, &mut self.phit);
        s.jacobian_pattern()
            .mul_vec(&self.jac, v, &mut self.gv, false);
        let e = self.energy(q, v) - self.h0;
        let level = self.phi.iter().zip(&self.gv).zip(&self.phit);
        let res = level
            .fold(0.0_f64, |a, ((p, g), pt)| {
                a.max(p.abs()).max((g + pt).abs())
            })
            .max(e.abs() / self.scale);
        (res, e)
    }

    /// The dense row-major KKT matrix at `(q, v)` (after [`Self::residual`]).
    fn matrix(&self, q: &[f64], v: &[f64]) -> Vec<f64> {
        let (s, t, dim) = (self.s, self.t, self.dim);
        let (n, m) = (q.len(), self.phi.len());
        let (mp, jp) = (s.mass_pattern(), s.jacobian_pattern());
        let mut a = vec![0.0; dim * dim];
        let mut put = |r: usize, c: usize, x: f64| {
            a[r * dim + c] += x;
            if r != c {
                a[c * dim + r] += x;
            }
        };
        for (&(i, j), &x) in mp.entries.iter().zip(&self.mass) {
            put(i, j, x);
            put(n + i, n + j, x);
        }
        let (r1, r2, r3) = (2 * n, 2 * n + m, 2 * n + 2 * m);
        for (&(r, c), &x) in jp.entries.iter().zip(&self.jac) {
            put(r1 + r, c, x);
            put(r2 + r, n + c, x);
        }
        // J₂ = (Φ_q v)_q and ∇_q H by central differences, ∇_v H likewise.
        let (mut jj, mut gp, mut gm) = (vec![0.0; jp.nnz()], vec![0.0; m], vec![0.0; m]);
        for c in 0..n {
            let eps = 1e-7 * (1.0 + q[c].abs());
            let (mut qp, mut qm) = (q.to_vec(), q.to_vec());
            qp[c] += eps;
            qm[c] -= eps;
            s.jacobian(t, &qp, &mut jj);
            jp.mul_vec(&jj, v, &mut gp, false);
            s.jacobian(t, &qm, &mut jj);
            jp.mul_vec(&jj, v, &mut gm, false);
            for r in 0..m {
                put(r2 + r, c, (gp[r] - gm[r]) / (2.0 * eps));
            }
            put(
                r3,
                c,
                (self.energy(&qp, v) - self.energy(&qm, v)) / (2.0 * eps),
            );
            let ev = 1e-7 * (1.0 + v[c].abs());
            let (mut vp, mut vm) = (v.to_vec(), v.to_vec());
            vp[c] += ev;
            vm[c] -= ev;
            put(
                r3,
                n + c,
                (self.energy(q, &vp) - self.energy(q, &vm)) / (2.0 * ev),
            );
        }
        a
    }

    /// The right-hand side `[−M(q − q̃); −M(v − ṽ); −Φ; −(Φ_q v + Φ_t); −(H − H₀)]`.
    fn rhs(&self, q: &[f64], v: &[f64], e: f64) -> Vec<f64> {
        let (n, m) = (q.len(), self.phi.len());
        let mp = self.s.mass_pattern();
        let dq: Vec<f64> = (0..n).map(|i| q[i] - self.qs[i]).collect();
        let dv: Vec<f64> = (0..n).map(|i| v[i] - self.vs[i]).collect();
        let (mut mdq, mut mdv) = (vec![0.0; n], vec![0.0; n]);
        mp.mul_vec(&self.mass, &dq, &mut mdq, true);
        mp.mul_vec(&self.mass, &dv, &mut mdv, true);
        let mut rhs = vec![0.0; self.dim];
        for i in 0..n {
            rhs[i] = -mdq[i];
            rhs[n + i] = -mdv[i];
        }
        for r in 0..m {
            rhs[2 * n + r] = -self.phi[r];
            rhs[2 * n + m + r] = -(self.gv[r] + self.phit[r]);
        }
        rhs[2 * n + 2 * m] = -e;
        rhs
    }
}
