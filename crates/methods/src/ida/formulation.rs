//! The three implicit DAE forms `F(t, y, y') = 0` of a mechanical system that IDA
//! integrates, with their consistent start and the components of IDA's error test.
//!
//! ```text
//! index 3 (Test Set form, y = (q, v, a, λ)):  q' − v = 0,  v' − a = 0,
//!                                             M a − f + Φ_qᵀλ = 0,  Φ = 0
//! index 2 (GGL, y = (q, v, λ, μ)):            q' − v + Φ_qᵀμ = 0,  M v' − f + Φ_qᵀλ = 0,
//!                                             Φ_q v + Φ_t = 0,  Φ = 0
//! index 1 (y = (q, v, λ)):                    q' − v = 0,  M v' − f + Φ_qᵀλ = 0,
//!                                             Φ_q v' − γ = 0
//! ```
//!
//! GGL: Gear, Gupta & Leimkuhler, J. Comput. Appl. Math. 12–13 (1985) 77–90; μ = 0 on the
//! exact solution. The index-1 form keeps only the acceleration constraint, so `Φ` and
//! `Φ_q v + Φ_t` drift (Brenan, Campbell & Petzold, *Numerical Solution of Initial-Value
//! Problems in DAEs*, SIAM 1996, §6.2). Components that are algebraic or of index ≥ 2 can
//! be left out of IDA's local error test (`IDASetId` with `IDASetSuppressAlg`), which
//! BDF codes need for higher-index forms (ibid., §6.2; IDA guide, "IDASetSuppressAlg").

use crate::dae_form::{DaeForm, MechanicalTerms};
use driftlab_core::{MechanicalSystem, State};
use serde::{Deserialize, Serialize};

/// Which form IDA integrates.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Index 3, the IVP Test Set's form (default).
    #[default]
    Index3,
    /// Index 2, Gear–Gupta–Leimkuhler stabilized.
    Ggl,
    /// Index 1, acceleration-level constraint.
    Index1,
}

/// Which components enter IDA's local error test.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ErrorTest {
    /// What the form needs (default): `positions` for the index-3 form (`v` is of index 2,
    /// `a` and `λ` of index 3), `differential` for GGL (`λ`, `μ` of index 2), `all` for the
    /// index-1 form (`λ` of index 1, IDA's default).
    #[default]
    Auto,
    /// Every component.
    All,
    /// `q` and `v` (the algebraic `a`, `λ`, `μ` are left out).
    Differential,
    /// `q` only (velocities, of index 2 in the index-3 form, left out as well).
    Positions,
}

/// A form with its work buffers.
pub struct Formulation {
    kind: Kind,
    n: usize,
    m: usize,
    index3: DaeForm,
    terms: MechanicalTerms,
    f3: Vec<f64>,
}

impl Formulation {
    /// The form `kind` of `sys`.
    pub fn new(kind: Kind, sys: &dyn MechanicalSystem) -> Self {
        let d = sys.dims();
        Self {
            kind,
            n: d.n,
            m: d.m,
            index3: DaeForm::new(sys),
            terms: MechanicalTerms::new(sys),
            f3: vec![0.0; 3 * d.n + d.m],
        }
    }

    /// Length of `y`.
    pub fn dim(&self) -> usize {
        let (n, m) = (self.n, self.m);
        match self.kind {
            Kind::Index3 => 3 * n + m,
            Kind::Ggl => 2 * n + 2 * m,
            Kind::Index1 => 2 * n + m,
        }
    }

    /// The error test `auto` stands for with this form.
    pub fn resolve(&self, test: ErrorTest) -> ErrorTest {
        match (test, self.kind) {
            (ErrorTest::Auto, Kind::Index3) => ErrorTest::Positions,
            (ErrorTest::Auto, Kind::Ggl) => ErrorTest::Differential,
            (ErrorTest::Auto, Kind::Index1) => ErrorTest::All,
            (t, _) => t,
        }
    }

    /// The differentiation index of component `i` in this form (1, 2 or 3).
    fn index_of(&self, i: usize) -> i32 {
        let n = self.n;
        match self.kind {
            Kind::Index3 if i < n => 1,
            Kind::Index3 if i < 2 * n => 2,
            Kind::Index3 => 3,
            Kind::Ggl if i < 2 * n => 1,
            Kind::Ggl => 2,
            Kind::Index1 => 1,
        }
    }

    /// Absolute tolerances scaled by the index as RADAU5 scales its error and Newton
    /// norms (`atol / h` for index-2 and `atol / h²` for index-3 components, `h ≤ 1`;
    /// Hairer & Wanner II §VII.8, radau5.f `NIND2`, `NIND3`). Components outside the
    /// error test enter IDA's Newton convergence test only, where their iterates carry
    /// round-off amplified by `1/h` and `1/h²`; unscaled, that floor exceeds tight
    /// tolerances and IDA fails with repeated corrector failures.
    pub fn index_scaled_atol(&self, atol: f64, h: f64, out: &mut [f64]) {
        let h = h.abs().min(1.0);
        for (i, o) in out.iter_mut().enumerate() {
            *o = atol / h.powi(self.index_of(i) - 1);
        }
    }

    /// IDA's `id` vector for the error test: 1 for a component in it, 0 for one left out.
    pub fn error_weights(&self, test: ErrorTest) -> Vec<f64> {
        let n = self.n;
        let test = self.resolve(test);
        (0..self.dim())
            .map(|i| match test {
                ErrorTest::All | ErrorTest::Auto => 1.0,
                ErrorTest::Differential => f64::from(u8::from(i < 2 * n)),
                ErrorTest::Positions => f64::from(u8::from(i < n)),
            })
            .collect()
    }

    /// `(y, y')` of a consistent state (`a` and `λ` already consistent with `(q, v)`);
    /// derivatives of the algebraic components start at 0.
    pub fn start(&self, s: &State, y: &mut [f64], yp: &mut [f64]) {
        let (n, m) = (self.n, self.m);
        y.iter_mut().chain(yp.iter_mut()).for_each(|x| *x = 0.0);
        y[..n].copy_from_slice(&s.q);
        y[n..2 * n].copy_from_slice(&s.v);
        yp[..n].copy_from_slice(&s.v);
        yp[n..2 * n].copy_from_slice(&s.a);
        match self.kind {
            Kind::Index3 => {
                y[2 * n..3 * n].copy_from_slice(&s.a);
                y[3 * n..3 * n + m].copy_from_slice(&s.lambda);
            }
            Kind::Ggl | Kind::Index1 => y[2 * n..2 * n + m].copy_from_slice(&s.lambda),
        }
    }

    /// A state's `(q, v, a, λ)` from `(y, y')` (`a = v'` where `a` is not a component).
    pub fn unpack(&self, y: &[f64], yp: &[f64], s: &mut State) {
        let (n, m) = (self.n, self.m);
        s.q.copy_from_slice(&y[..n]);
        s.v.copy_from_slice(&y[n..2 * n]);
        match self.kind {
            Kind::Index3 => {
                s.a.copy_from_slice(&y[2 * n..3 * n]);
                s.lambda.copy_from_slice(&y[3 * n..3 * n + m]);
            }
            Kind::Ggl | Kind::Index1 => {
                s.a.copy_from_slice(&yp[n..2 * n]);
                s.lambda.copy_from_slice(&y[2 * n..2 * n + m]);
            }
        }
    }

    /// `r = F(t, y, y')`.
    pub fn residual(
        &mut self, sys: &dyn MechanicalSystem, t: f64, y: &[f64], yp: &[f64], r: &mut [f64],
    ) {
        match self.kind {
            Kind::Index3 => self.residual_index3(sys, t, y, yp, r),
            Kind::Ggl | Kind::Index1 => self.residual_reduced(sys, t, y, yp, r),
        }
    }

    /// `B y' − F(t, y)` of [`DaeForm`] for the differential rows, `F` for the others.
    fn residual_index3(
        &mut self, sys: &dyn MechanicalSystem, t: f64, y: &[f64], yp: &[f64], r: &mut [f64],
    ) {
        let k = 2 * self.n;
        self.index3.eval(sys, t, y, &mut self.f3);
        for i in 0..r.len() {
            r[i] = if i < k {
                yp[i] - self.f3[i]
            } else {
                self.f3[i]
            };
        }
    }

    /// The GGL and index-1 residuals: both have `M v' − f + Φ_qᵀλ` as velocity rows.
    fn residual_reduced(
        &mut self, sys: &dyn MechanicalSystem, t: f64, y: &[f64], yp: &[f64], r: &mut [f64],
    ) {
        let (n, m) = (self.n, self.m);
        let (q, v, lambda) = (&y[..n], &y[n..2 * n], &y[2 * n..2 * n + m]);
        let terms = &mut self.terms;
        terms.load(sys, t, q, v);
        let (rq, rest) = r.split_at_mut(n);
        let (rv, rc) = rest.split_at_mut(n);
        for i in 0..n {
            rq[i] = yp[i] - v[i];
            rv[i] = -terms.force()[i];
        }
        terms.add_mass_times(&yp[n..2 * n], rv);
        terms.add_jacobian_transpose_times(lambda, rv);
        match self.kind {
            Kind::Ggl => {
                terms.add_jacobian_transpose_times(&y[2 * n + m..], rq);
                let (r_vel, r_pos) = rc.split_at_mut(m);
                sys.phi_t(t, q, r_vel);
                terms.add_jacobian_times(v, r_vel);
                sys.constraints(t, q, r_pos);
            }
            _ => {
                sys.curvature(t, q, v, rc);
                rc.iter_mut().for_each(|x| *x = -*x);
                terms.add_jacobian_times(&yp[n..2 * n], rc);
            }
        }
    }
}
