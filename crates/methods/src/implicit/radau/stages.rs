//! The stage arrays of one Radau IIA run with `s` stages and what the step does with them:
//! starting values from the last step's collocation polynomial, the transformed
//! simplified-Newton iteration, the embedded error estimate and the new polynomial
//! (Hairer & Wanner, *Solving ODEs II*, 2nd ed. 1996, §IV.8; RADAU5's `CONT`, `SLVRAD`,
//! `ESTRAD`, for any odd `s`).

use super::coefficients::RadauTableau;
use super::newton::ReducedNewton;
use crate::dae_form::DaeForm;
use driftlab_core::prelude::*;

/// Dense work arrays of one run (dimension `N = 3n + m`, `s` stages).
pub(super) struct Work {
    pub form: DaeForm,
    pub tab: RadauTableau,
    pub y: Vec<f64>,
    pub f0: Vec<f64>,
    pub scal: Vec<f64>,
    /// Scale of the Newton norm (`scal`, or with the velocities not divided by h).
    pub scal_newton: Vec<f64>,
    pub jac: Vec<f64>,
    pub z: Vec<Vec<f64>>,
    pub w: Vec<Vec<f64>>,
    pub f: Vec<Vec<f64>>,
    /// Newton right-hand sides, then corrections, of `W`.
    pub r: Vec<Vec<f64>>,
    pub tmp: Vec<f64>,
    /// The error estimate's `B Σ eᵢZᵢ / h`, its solution and the shifted point.
    pub be: Vec<f64>,
    pub err: Vec<f64>,
    pub shifted: Vec<f64>,
    /// The real and complex Newton matrices, factored in their reduced form, and the
    /// complex shifts `(α_k + iβ_k)/h` they were factored for.
    pub newton: ReducedNewton,
    pub shifts: Vec<(f64, f64)>,
    /// `h` the LUs were built for (NaN: not factored).
    pub h_factored: f64,
}

impl Work {
    /// Work arrays for `sys` and the method `tab`.
    pub fn new(sys: &dyn MechanicalSystem, tab: RadauTableau) -> Self {
        let form = DaeForm::new(sys);
        let dim = form.dim();
        let v = || vec![0.0; dim];
        let stages = || (0..tab.s).map(|_| v()).collect::<Vec<_>>();
        let d = sys.dims();
        Self {
            y: v(),
            f0: v(),
            scal: v(),
            scal_newton: v(),
            jac: vec![0.0; dim * dim],
            z: stages(),
            w: stages(),
            f: stages(),
            r: stages(),
            tmp: v(),
            be: v(),
            err: v(),
            shifted: v(),
            newton: ReducedNewton::new(d.n, d.m, tab.pairs.len()),
            shifts: vec![(0.0, 0.0); tab.pairs.len()],
            h_factored: f64::NAN,
            form,
            tab,
        }
    }

    /// Switch to the method `tab` (an order change): stage arrays, Newton matrices and
    /// shifts of its size, nothing factored.
    pub fn set_tableau(&mut self, tab: RadauTableau) {
        let dim = self.form.dim();
        let stages = || vec![vec![0.0; dim]; tab.s];
        (self.z, self.w, self.f, self.r) = (stages(), stages(), stages(), stages());
        let (n, m) = self.form.dims();
        self.newton = ReducedNewton::new(n, m, tab.pairs.len());
        self.shifts = vec![(0.0, 0.0); tab.pairs.len()];
        self.h_factored = f64::NAN;
        self.tab = tab;
    }

    /// Factor the Newton matrices for `h` (the Jacobian in `jac`).
    pub fn factor(&mut self, h: f64) -> Result<(), driftlab_solver::SolverError> {
        for (shift, (alpha, beta)) in self.shifts.iter_mut().zip(&self.tab.pairs) {
            *shift = (alpha / h, beta / h);
        }
        self.newton
            .factor(&self.jac, self.tab.gamma / h, &self.shifts)
    }
}

/// Starting `Z` from the last accepted step's collocation polynomial `cont` of step
/// `h_old` (zero at the first step), and `W = T⁻¹ Z`.
pub(super) fn start_values(work: &mut Work, cont: Option<(&[Vec<f64>], f64)>, h: f64) {
    match cont {
        Some((cont, h_old)) => {
            let ratio = h / h_old;
            let c = &work.tab.c;
            for (k, z) in work.z.iter_mut().enumerate() {
                polynomial_at(c, cont, c[k] * ratio, z);
            }
        }
        None => work
            .z
            .iter_mut()
            .for_each(|z| z.iter_mut().for_each(|x| *x = 0.0)),
    }
    transform(&work.tab.ti, &work.z, &mut work.w);
}

/// The last step's collocation polynomial minus `y_{n+1}`, at `θ = (t − t_{n+1}) / h_old`,
/// into `out`: Horner's scheme in Newton's form over the nodes `1, c_{s−1}, …, c_1`
/// (shifted by −1), as RADAU5 writes it for s = 3.
fn polynomial_at(c: &[f64], cont: &[Vec<f64>], theta: f64, out: &mut [f64]) {
    let s = c.len();
    out.copy_from_slice(&cont[s - 1]);
    for j in (1..s).rev() {
        let factor = theta - (c[s - 1 - j] - 1.0);
        for (o, d) in out.iter_mut().zip(&cont[j - 1]) {
            *o = d + factor * *o;
        }
    }
    out.iter_mut().for_each(|o| *o *= theta);
}

/// `out = (M ⊗ I) x` stage-wise for the row-major `s × s` matrix `M`.
pub(super) fn transform(mat: &[f64], x: &[Vec<f64>], out: &mut [Vec<f64>]) {
    match x.len() {
        3 => transform_fixed::<3>(mat, x, out),
        5 => transform_fixed::<5>(mat, x, out),
        _ => transform_fixed::<7>(mat, x, out),
    }
}

/// [`transform`] for `S` stages known at compile time (one pass over the components,
/// the stage sum unrolled; the sum runs left to right, `((m₀x₀ + m₁x₁) + m₂x₂) + …`).
fn transform_fixed<const S: usize>(mat: &[f64], x: &[Vec<f64>], out: &mut [Vec<f64>]) {
    let dim = x[0].len();
    let xs: [&[f64]; S] = std::array::from_fn(|j| &x[j][..dim]);
    for (k, o) in out.iter_mut().enumerate().take(S) {
        let row: [f64; S] = std::array::from_fn(|j| mat[k * S + j]);
        for (i, oi) in o[..dim].iter_mut().enumerate() {
            let mut acc = row[0] * xs[0][i];
            for j in 1..S {
                acc += row[j] * xs[j][i];
            }
            *oi = acc;
        }
    }
}

/// `F` at the stages `y_n + Z_k`, `t + c_k h`.
fn stage_values(work: &mut Work, sys: &dyn MechanicalSystem, t: f64, h: f64) {
    let dim = work.form.dim();
    for k in 0..work.tab.s {
        for i in 0..dim {
            work.tmp[i] = work.y[i] + work.z[k][i];
        }
        let stage = std::mem::take(&mut work.tmp);
        work.form
            .eval(sys, t + work.tab.c[k] * h, &stage, &mut work.f[k]);
        work.tmp = stage;
    }
}

/// One simplified-Newton iteration on `W`; returns the scaled RMS norm of `ΔW`.
pub(super) fn newton_iteration(
    work: &mut Work, sys: &dyn MechanicalSystem, t: f64, h: f64,
) -> Result<f64, StepError> {
    let dim = work.form.dim();
    stage_values(work, sys, t, h);
    // Right-hand sides R = T⁻¹F − (diag(γ, [[α_k, −β_k], [β_k, α_k]])/h ⊗ B) W.
    transform(&work.tab.ti, &work.f, &mut work.r);
    let (r, w, tab) = (&mut work.r, &work.w, &work.tab);
    let fac1 = tab.gamma / h;
    let n2 = (0..dim).filter(|&i| work.form.is_differential(i)).count();
    for (ri, wi) in r[0][..n2].iter_mut().zip(&w[0]) {
        *ri -= fac1 * wi;
    }
    for (k, (alpha, beta)) in tab.pairs.iter().enumerate() {
        let (alph, beta) = (alpha / h, beta / h);
        let (head, tail) = r.split_at_mut(2 * k + 2);
        let (r_re, r_im) = (&mut head[2 * k + 1][..n2], &mut tail[0][..n2]);
        let (w_re, w_im) = (&w[2 * k + 1], &w[2 * k + 2]);
        for i in 0..n2 {
            r_re[i] -= alph * w_re[i] - beta * w_im[i];
            r_im[i] -= alph * w_im[i] + beta * w_re[i];
        }
    }
    let linear = |e: driftlab_solver::SolverError| StepError::LinearSolve {
        t,
        detail: format!("Radau Newton matrix: {e}"),
    };
    work.newton.solve_real(&mut r[0]).map_err(linear)?;
    for k in 0..tab.pairs.len() {
        let (head, tail) = r.split_at_mut(2 * k + 2);
        work.newton
            .solve_complex(k, &mut head[2 * k + 1], &mut tail[0])
            .map_err(linear)?;
    }
    let mut sum = 0.0;
    for (k, dw) in r.iter().enumerate() {
        for i in 0..dim {
            sum += (dw[i] / work.scal_newton[i]).powi(2);
            work.w[k][i] += dw[i];
        }
    }
    transform(&work.tab.t, &work.w, &mut work.z);
    Ok((sum / (tab.s * dim) as f64).sqrt())
}

/// RADAU5's error estimate (see the module documentation of `radau`); `refine` allows
/// the second, filtered estimate on a first or rejected step.
pub(super) fn estimate_error(
    work: &mut Work, sys: &dyn MechanicalSystem, t: f64, h: f64, refine: bool,
) -> Result<f64, StepError> {
    let dim = work.form.dim();
    let (dd, s) = (&work.tab.dd, work.tab.s);
    for (i, ei) in work.tmp.iter_mut().enumerate() {
        *ei = (0..s).map(|k| dd[k] * work.z[k][i]).sum::<f64>() / h;
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

/// The collocation polynomial through `(0, 0)` and `(c_k, Z_k)` in Newton's form over
/// the nodes `1, c_{s−1}, …, c_1, 0` (RADAU5's `CONT` for s = 3): `out[k]` is the
/// divided difference of order `k + 1` starting at node 1.
pub(super) fn collocation_polynomial(c: &[f64], z: &[Vec<f64>], out: &mut [Vec<f64>]) {
    match c.len() {
        3 => divided_differences::<3>(c, z, out),
        5 => divided_differences::<5>(c, z, out),
        _ => divided_differences::<7>(c, z, out),
    }
}

/// [`collocation_polynomial`] for `S` stages known at compile time.
fn divided_differences<const S: usize>(c: &[f64], z: &[Vec<f64>], out: &mut [Vec<f64>]) {
    // Nodes and values from the end: x_j = c_{S−j} (x_S = 0, y_S = 0).
    let node: [f64; 8] = std::array::from_fn(|j| if j < S { c[S - 1 - j] } else { 0.0 });
    let zs: [&[f64]; S] = std::array::from_fn(|j| &z[S - 1 - j][..]);
    let mut table = [0.0f64; 8];
    for i in 0..zs[0].len() {
        for j in 0..S {
            table[j] = zs[j][i];
        }
        table[S] = 0.0;
        for level in 1..=S {
            for j in 0..=S - level {
                table[j] = (table[j + 1] - table[j]) / (node[j + level] - node[j]);
            }
            out[level - 1][i] = table[0];
        }
    }
}
