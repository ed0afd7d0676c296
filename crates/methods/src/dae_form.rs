//! A mechanical system as a first-order DAE with a **constant** mass matrix, the form
//! that general DAE codes (RADAU5, IDA) integrate:
//!
//! ```text
//! y = (q, v, a, λ),   B y' = F(t, y):
//!   q' = v
//!   v' = a
//!   0  = M(q) a − f(t, q, v) + Φ_q(t, q)ᵀ λ
//!   0  = Φ(t, q)
//! B = diag(I_n, I_n, 0, 0)
//! ```
//!
//! This is the formulation of the IVP Test Set's index-3 problems (e.g. `andrews`,
//! 27 = 7 + 7 + 13 variables; Mazzia & Magherini, *Test Set for IVP Solvers*, release
//! 2.4, 2008): `q` are index-1 variables, `v` index-2, `a` and `λ` index-3 — which is
//! what the index-aware error scaling of [`DaeForm::index_split`] needs. The Jacobian
//! `∂F/∂y` is dense. Only two blocks are differenced (RADAU5's increment
//! `√(ε max(1e-5, |y_j|))`): `∂r/∂q` of the dynamic rows `r = M a − f + Φ_qᵀλ`, one
//! evaluation of `M`, `f` and `Φ_q` per column, and `−∂f/∂v`, one force evaluation per
//! column (`∂r/∂v` whole where the mass varies, `M = M(t, q, v)`). The rest is exact: the identities of `q' = v` and `v' = a`, `M` and `Φ_qᵀ` (`F`
//! is linear in `a` and `λ`), and `Φ_q` in the constraint rows.

use driftlab_core::{MechanicalSystem, State};

/// `M(q)`, `f(t, q, v)` and `Φ_q(t, q)` of a mechanical system in buffers, with the
/// entries of their patterns, and the products the first-order forms build from them
/// (this form's dynamic rows, the GGL and index-1 forms of `ida`).
pub struct MechanicalTerms {
    mass_entries: Vec<(usize, usize)>,
    jac_entries: Vec<(usize, usize)>,
    mass: Vec<f64>,
    jac: Vec<f64>,
    force: Vec<f64>,
}

impl MechanicalTerms {
    /// Buffers for `sys`.
    pub fn new(sys: &dyn MechanicalSystem) -> Self {
        let d = sys.dims();
        let (mp, jp) = (sys.mass_pattern(), sys.jacobian_pattern());
        Self {
            mass: vec![0.0; mp.nnz()],
            jac: vec![0.0; jp.nnz()],
            mass_entries: mp.entries,
            jac_entries: jp.entries,
            force: vec![0.0; d.n],
        }
    }

    /// Evaluate `M(t, q, v)` ([`MechanicalSystem::mass_at`]), `f(t, q, v)` and
    /// `Φ_q(t, q)`, in that order.
    pub fn load(&mut self, sys: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64]) {
        sys.mass_at(t, q, v, &mut self.mass);
        sys.forces(t, q, v, &mut self.force);
        sys.jacobian(t, q, &mut self.jac);
    }

    /// [`Self::load`], and `Φ(t, q)` into `phi` from the same evaluation
    /// ([`MechanicalSystem::constraints_and_jacobian`]).
    pub fn load_with_constraints(
        &mut self, sys: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64], phi: &mut [f64],
    ) {
        sys.mass_at(t, q, v, &mut self.mass);
        sys.forces(t, q, v, &mut self.force);
        sys.constraints_and_jacobian(t, q, phi, &mut self.jac);
    }

    /// `f` of the last [`Self::load`].
    pub fn force(&self) -> &[f64] {
        &self.force
    }

    /// `out += M x` (`M` from its lower triangle).
    pub fn add_mass_times(&self, x: &[f64], out: &mut [f64]) {
        for (k, &(i, j)) in self.mass_entries.iter().enumerate() {
            out[i] += self.mass[k] * x[j];
            if i != j {
                out[j] += self.mass[k] * x[i];
            }
        }
    }

    /// `out += Φ_q x`.
    pub fn add_jacobian_times(&self, x: &[f64], out: &mut [f64]) {
        for (k, &(i, j)) in self.jac_entries.iter().enumerate() {
            out[i] += self.jac[k] * x[j];
        }
    }

    /// `out += Φ_qᵀ x`.
    pub fn add_jacobian_transpose_times(&self, x: &[f64], out: &mut [f64]) {
        for (k, &(i, j)) in self.jac_entries.iter().enumerate() {
            out[j] += self.jac[k] * x[i];
        }
    }
}

/// The constant-mass first-order form of a mechanical system, with its work buffers.
pub struct DaeForm {
    n: usize,
    m: usize,
    terms: MechanicalTerms,
    y_pert: Vec<f64>,
    f_pert: Vec<f64>,
}

impl DaeForm {
    /// The form of `sys`.
    pub fn new(sys: &dyn MechanicalSystem) -> Self {
        let d = sys.dims();
        Self {
            n: d.n,
            m: d.m,
            terms: MechanicalTerms::new(sys),
            y_pert: vec![0.0; 3 * d.n + d.m],
            f_pert: vec![0.0; 3 * d.n + d.m],
        }
    }

    /// `(n, m)`.
    pub fn dims(&self) -> (usize, usize) {
        (self.n, self.m)
    }

    /// Dimension `N = 3n + m`.
    pub fn dim(&self) -> usize {
        3 * self.n + self.m
    }

    /// Numbers of index-1, index-2 and index-3 variables: `(n, n, n + m)`.
    pub fn index_split(&self) -> (usize, usize, usize) {
        (self.n, self.n, self.n + self.m)
    }

    /// Whether component `i` has a unit entry in `B` (a differential variable).
    pub fn is_differential(&self, i: usize) -> bool {
        i < 2 * self.n
    }

    /// `out = B x`.
    pub fn mass_times(&self, x: &[f64], out: &mut [f64]) {
        let k = 2 * self.n;
        out[..k].copy_from_slice(&x[..k]);
        out[k..].iter_mut().for_each(|o| *o = 0.0);
    }

    /// `y` from a state.
    pub fn pack(&self, s: &State, y: &mut [f64]) {
        let n = self.n;
        y[..n].copy_from_slice(&s.q);
        y[n..2 * n].copy_from_slice(&s.v);
        y[2 * n..3 * n].copy_from_slice(&s.a);
        y[3 * n..].copy_from_slice(&s.lambda);
    }

    /// A state's `(q, v, a, λ)` from `y`.
    pub fn unpack(&self, y: &[f64], s: &mut State) {
        let n = self.n;
        s.q.copy_from_slice(&y[..n]);
        s.v.copy_from_slice(&y[n..2 * n]);
        s.a.copy_from_slice(&y[2 * n..3 * n]);
        s.lambda.copy_from_slice(&y[3 * n..]);
    }

    /// `out = F(t, y)`.
    pub fn eval(&mut self, sys: &dyn MechanicalSystem, t: f64, y: &[f64], out: &mut [f64]) {
        let n = self.n;
        let (q, v, a, lambda) = (&y[..n], &y[n..2 * n], &y[2 * n..3 * n], &y[3 * n..]);
        out[..n].copy_from_slice(v);
        out[n..2 * n].copy_from_slice(a);
        let (r, phi) = out[2 * n..].split_at_mut(n);
        self.terms.load_with_constraints(sys, t, q, v, phi);
        self.residual(a, lambda, r);
    }

    /// `r = M(q) a − f(t, q, v) + Φ_q(t, q)ᵀ λ`, leaving `M(q)` and `Φ_q(t, q)` in the
    /// form's buffers.
    fn dynamics(
        &mut self, sys: &dyn MechanicalSystem, t: f64,
        (q, v, a, lambda): (&[f64], &[f64], &[f64], &[f64]), r: &mut [f64],
    ) {
        self.terms.load(sys, t, q, v);
        self.residual(a, lambda, r);
    }

    /// `r = M a − f + Φ_qᵀ λ` from the loaded terms.
    fn residual(&self, a: &[f64], lambda: &[f64], r: &mut [f64]) {
        for (ri, fi) in r.iter_mut().zip(self.terms.force()) {
            *ri = -fi;
        }
        self.terms.add_mass_times(a, r);
        self.terms.add_jacobian_transpose_times(lambda, r);
    }

    /// The dense row-major Jacobian `∂F/∂y` at `(t, y)` with `f0 = F(t, y)` (see the
    /// module documentation for how each block is formed).
    pub fn jacobian(
        &mut self, sys: &dyn MechanicalSystem, t: f64, y: &[f64], f0: &[f64], out: &mut [f64],
    ) {
        let (n, dim) = (self.n, self.dim());
        out.iter_mut().for_each(|x| *x = 0.0);
        let (q, v, a, lambda) = (&y[..n], &y[n..2 * n], &y[2 * n..3 * n], &y[3 * n..]);
        let mut pert = std::mem::take(&mut self.y_pert);
        let mut r = std::mem::take(&mut self.f_pert);
        // q columns: the dynamic rows by forward differences.
        pert[..n].copy_from_slice(q);
        for j in 0..n {
            let delta = (f64::EPSILON * q[j].abs().max(1e-5)).sqrt();
            pert[j] = q[j] + delta;
            self.dynamics(sys, t, (&pert[..n], v, a, lambda), &mut r[..n]);
            pert[j] = q[j];
            for i in 0..n {
                out[(2 * n + i) * dim + j] = (r[i] - f0[2 * n + i]) / delta;
            }
        }
        // v columns: only the forces depend on v — and M where it varies (M(t, q, v)):
        // then the dynamic rows are differenced whole, as the q columns are.
        pert[..n].copy_from_slice(v);
        let varies = sys.mass_varies();
        if !varies {
            sys.forces(t, q, v, &mut r[n..2 * n]);
        }
        for j in 0..n {
            let delta = (f64::EPSILON * v[j].abs().max(1e-5)).sqrt();
            pert[j] = v[j] + delta;
            if varies {
                self.dynamics(sys, t, (q, &pert[..n], a, lambda), &mut r[..n]);
            } else {
                sys.forces(t, q, &pert[..n], &mut r[..n]);
            }
            pert[j] = v[j];
            for i in 0..n {
                out[(2 * n + i) * dim + n + j] = if varies {
                    (r[i] - f0[2 * n + i]) / delta
                } else {
                    -(r[i] - r[n + i]) / delta
                };
            }
        }
        self.y_pert = pert;
        self.f_pert = r;
        // Exact blocks: q' = v, v' = a, M and Φ_qᵀ in the dynamics, Φ_q in the
        // constraints (at the unperturbed point).
        let terms = &mut self.terms;
        sys.mass_at(t, q, v, &mut terms.mass);
        sys.jacobian(t, q, &mut terms.jac);
        for k in 0..n {
            out[k * dim + n + k] = 1.0;
            out[(n + k) * dim + 2 * n + k] = 1.0;
        }
        // Patterns may repeat a position (its values add up, as in `dynamics`).
        for (k, &(i, j)) in terms.mass_entries.iter().enumerate() {
            out[(2 * n + i) * dim + 2 * n + j] += terms.mass[k];
            if i != j {
                out[(2 * n + j) * dim + 2 * n + i] += terms.mass[k];
            }
        }
        for (k, &(i, j)) in terms.jac_entries.iter().enumerate() {
            out[(2 * n + j) * dim + 3 * n + i] += terms.jac[k];
            out[(3 * n + i) * dim + j] += terms.jac[k];
        }
    }
}
