//! Conformance checks for any problem, the catalog's or a user's own: every hand-coded
//! derivative against central finite differences, a consistent initial state, a symmetric
//! positive definite mass matrix, and — where an exact solution exists — that it satisfies
//! the equations of motion and conserves energy.
//!
//! These are the checks of driftlab's own conformance suite (`tests/conformance.rs`, which
//! runs them over the whole catalog with proptest-generated perturbations), with the same
//! formulas and tolerances. Every check returns `Err(message)` instead of panicking; the
//! message names the problem, the quantity, the index and both numbers (the hand-coded
//! value and the finite difference, or the residual and its bound). A problem whose shapes
//! are inconsistent (a pattern entry outside its matrix, an initial state of the wrong
//! length, …) also gets an `Err`, not a panic; a panic inside the problem's own functions
//! is the problem's.
//!
//! Usage, for a problem of your own crate (here the catalog's pendulum) at a few perturbed
//! states:
//!
//! ```no_run
//! use driftlab_problems::conformance::{
//!     check_derivatives, check_exact_solution, check_initial_state,
//! };
//!
//! // In your crate: (my_crate::my_problem::entry().build)(&toml::Table::new()).
//! let problem = driftlab_problems::build("pendulum", &toml::Table::new())
//!     .map_err(|e| e.to_string())?;
//! check_initial_state("pendulum", &problem)?;
//! for (dq, v, t) in [([0.1, -0.2], [0.5, 1.0], 0.3), ([-0.7, 0.4], [-1.5, 0.2], 2.1)] {
//!     check_derivatives("pendulum", &problem, &dq, &v, t)?;
//! }
//! check_exact_solution("pendulum", &problem)?;
//! # Ok::<(), String>(())
//! ```

use crate::entry::Problem;
use driftlab_core::{
    Dims, ExactSolution, Index1Jacobians, MechanicalSystem, SemiExplicitDae, SparsityPattern,
};

/// Step of the central differences of the derivative checks.
const STEP: f64 = 1e-6;
/// Step of the central differences in time along an exact solution.
const EXACT_STEP: f64 = 1e-5;
/// Number of sample times along an exact solution.
const EXACT_SAMPLES: usize = 40;

// ---------------------------------------------------------------------------------------
// Dispatch over the two forms.
// ---------------------------------------------------------------------------------------

/// All derivative checks of `problem` at one perturbed state: [`check_mechanical`] for a
/// mechanical system, [`check_index1`] with `dx = dq[0]`, `dz = dq[1]` for a semi-explicit
/// index-1 DAE (then `dq` needs at least two entries and `v` is unused).
pub fn check_derivatives(
    name: &str, problem: &Problem, dq: &[f64], v: &[f64], t: f64,
) -> Result<(), String> {
    match problem {
        Problem::Mechanical(s) => check_mechanical(name, s.as_ref(), dq, v, t),
        Problem::SemiExplicit(s) => match dq {
            [dx, dz, ..] => check_index1(name, s.as_ref(), *dx, *dz, t),
            _ => Err(format!(
                "{name}: an index-1 DAE needs dq = [dx, dz, …] (got {} entries)",
                dq.len()
            )),
        },
        // The methods difference F themselves: no hand-coded derivatives to check.
        Problem::Implicit(_) => Ok(()),
    }
}

/// The initial state of `problem`: [`check_mechanical_initial_state`] and
/// [`check_mass_spd`] for a mechanical system, [`check_index1_initial_state`] for a
/// semi-explicit index-1 DAE.
pub fn check_initial_state(name: &str, problem: &Problem) -> Result<(), String> {
    match problem {
        Problem::Mechanical(s) => {
            check_mechanical_initial_state(name, s.as_ref())?;
            check_mass_spd(name, s.as_ref())
        }
        Problem::SemiExplicit(s) => check_index1_initial_state(name, s.as_ref()),
        Problem::Implicit(s) => crate::implicit::conformance::check_initial_state(name, s.as_ref()),
    }
}

/// The exact solution of `problem`, if it has one ([`check_mechanical_exact`] or
/// [`check_index1_exact`]); `Ok` when `sys.exact(0.0)` is `None`.
pub fn check_exact_solution(name: &str, problem: &Problem) -> Result<(), String> {
    match problem {
        Problem::Mechanical(s) => check_mechanical_exact(name, s.as_ref()),
        Problem::SemiExplicit(s) => check_index1_exact(name, s.as_ref()),
        Problem::Implicit(s) => crate::implicit::conformance::check_exact(name, s.as_ref()),
    }
}

// ---------------------------------------------------------------------------------------
// Mechanical systems: derivatives.
// ---------------------------------------------------------------------------------------

/// All derivative checks of a mechanical system at the state of [`perturbed_state`]
/// (`q = q0 + 0.3 dq`, `v` cycled to length `n`) and time `t`, each against central
/// differences with step 1e-6: [`check_jacobian`], [`check_phi_t`],
/// [`check_constraint_hessian`] (with `λ_i = 0.7 − 0.3 i + v_{i mod n}`),
/// [`check_gap_jacobian`] and [`check_curvature`].
pub fn check_mechanical(
    name: &str, s: &dyn MechanicalSystem, dq: &[f64], v: &[f64], t: f64,
) -> Result<(), String> {
    let (q, v) = perturbed_state(name, s, dq, v)?;
    check_jacobian(name, s, t, &q)?;
    check_phi_t(name, s, t, &q)?;
    let lambda: Vec<f64> = (0..s.dims().m)
        .map(|i| 0.7 - 0.3 * i as f64 + v[i % v.len()])
        .collect();
    check_constraint_hessian(name, s, t, &q, &lambda)?;
    check_gap_jacobian(name, s, t, &q)?;
    check_curvature(name, s, t, &q, &v)
}

/// The state [`check_mechanical`] differentiates at: `q_i = q0_i + 0.3 dq_{i mod len}`
/// (`q0` from the initial state) and `v_i = v_{i mod len}`, both of length `n`. Errs if
/// `dq` or `v` is empty or the system's shapes are inconsistent.
pub fn perturbed_state(
    name: &str, s: &dyn MechanicalSystem, dq: &[f64], v: &[f64],
) -> Result<(Vec<f64>, Vec<f64>), String> {
    if dq.is_empty() || v.is_empty() {
        return Err(format!(
            "{name}: perturbations dq ({} entries) and v ({} entries) must not be empty",
            dq.len(),
            v.len()
        ));
    }
    let d = mechanical_shape(name, s)?;
    let q0 = s.initial_state().q;
    expect_len(name, "initial q", q0.len(), d.n)?;
    let q = q0
        .iter()
        .enumerate()
        .map(|(i, x)| x + 0.3 * dq[i % dq.len()])
        .collect();
    Ok((q, (0..d.n).map(|i| v[i % v.len()]).collect()))
}

/// `Φ_q(t, q)` against central differences of `Φ`, column by column, holonomic rows only
/// (the nonholonomic rows have no `Φ`; [`check_curvature`] checks them): each entry within
/// `1e-6 · (1 + max_r |Φ_q[r, c]|)` of its column.
pub fn check_jacobian(
    name: &str, s: &dyn MechanicalSystem, t: f64, q: &[f64],
) -> Result<(), String> {
    let d = mechanical_shape(name, s)?;
    expect_len(name, "q", q.len(), d.n)?;
    let jp = s.jacobian_pattern();
    let mut jv = vec![0.0; jp.nnz()];
    s.jacobian(t, q, &mut jv);
    let jd = jp.to_dense(&jv, false);
    let hol = d.m - s.nonholonomic_rows();
    for c in 0..d.n {
        let fd = central(
            |e| {
                let mut qq = q.to_vec();
                qq[c] += e;
                let mut phi = vec![0.0; d.m];
                s.constraints(t, &qq, &mut phi);
                phi
            },
            STEP,
        );
        let col: Vec<f64> = (0..hol).map(|r| jd[r * d.n + c]).collect();
        let tol = 1e-6 * (1.0 + max_abs(&col));
        agree(name, |r| format!("Φ_q[{r},{c}]"), &col, &fd[..hol], |_| tol)?;
    }
    Ok(())
}

/// `Φ_t(t, q)` against central differences of `Φ` in `t`: every row within 1e-6
/// (absolute).
pub fn check_phi_t(name: &str, s: &dyn MechanicalSystem, t: f64, q: &[f64]) -> Result<(), String> {
    let d = mechanical_shape(name, s)?;
    expect_len(name, "q", q.len(), d.n)?;
    let fd = central(
        |e| {
            let mut phi = vec![0.0; d.m];
            s.constraints(t + e, q, &mut phi);
            phi
        },
        STEP,
    );
    let mut phit = vec![0.0; d.m];
    s.phi_t(t, q, &mut phit);
    agree(name, |r| format!("Φ_t[{r}]"), &phit, &fd, |_| 1e-6)
}

/// The curvature term `γ(t, q, v)` against `−d/ds [Φ_q(t+s, q+s v) v + Φ_t(t+s, q+s v)]`
/// at `s = 0` by central differences (nonholonomic rows included): every row within
/// `1e-6 · (1 + max |γ|)`.
pub fn check_curvature(
    name: &str, s: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64],
) -> Result<(), String> {
    let d = mechanical_shape(name, s)?;
    expect_len(name, "q", q.len(), d.n)?;
    expect_len(name, "v", v.len(), d.n)?;
    let jp = s.jacobian_pattern();
    let c_of = |e: f64| {
        let qq: Vec<f64> = q.iter().zip(v).map(|(a, b)| a + e * b).collect();
        let mut jj = vec![0.0; jp.nnz()];
        s.jacobian(t + e, &qq, &mut jj);
        let mut out = vec![0.0; d.m];
        jp.mul_vec(&jj, v, &mut out, false);
        let mut pt = vec![0.0; d.m];
        s.phi_t(t + e, &qq, &mut pt);
        out.iter().zip(&pt).map(|(a, b)| a + b).collect()
    };
    let fd: Vec<f64> = central(c_of, STEP).into_iter().map(|x| -x).collect();
    let mut gamma = vec![0.0; d.m];
    s.curvature(t, q, v, &mut gamma);
    let tol = 1e-6 * (1.0 + max_abs(&gamma));
    agree(name, |r| format!("γ[{r}]"), &gamma, &fd, |_| tol)
}

/// The constraint Hessian `K(q, λ) = (Φ_qᵀ λ)_q`, if the problem offers one
/// ([`MechanicalSystem::constraint_hessian`]; `Ok` otherwise): not offered together with
/// nonholonomic rows, a lower-triangle pattern, and every entry `K[r, c]` within
/// `1e-6 · (1 + |K[r, c]|)` of the central difference of `Φ_qᵀ λ` in `q_c`.
pub fn check_constraint_hessian(
    name: &str, s: &dyn MechanicalSystem, t: f64, q: &[f64], lambda: &[f64],
) -> Result<(), String> {
    let Some(hessian) = s.constraint_hessian() else {
        return Ok(());
    };
    // Nonholonomic rows have no position-level Φ, hence no Hessian (system.rs).
    if s.nonholonomic_rows() != 0 {
        return Err(format!(
            "{name}: {} nonholonomic rows and a constraint Hessian together",
            s.nonholonomic_rows()
        ));
    }
    let d = mechanical_shape(name, s)?;
    expect_len(name, "q", q.len(), d.n)?;
    expect_len(name, "λ", lambda.len(), d.m)?;
    let hp = hessian.pattern();
    lower_pattern(name, "K", &hp)?;
    let mut hv = vec![0.0; hp.nnz()];
    hessian.values(t, q, lambda, &mut hv);
    let kd = hp.to_dense(&hv, true);
    let jp = s.jacobian_pattern();
    for c in 0..d.n {
        let fd = central(
            |e| {
                let mut qq = q.to_vec();
                qq[c] += e;
                let mut jj = vec![0.0; jp.nnz()];
                s.jacobian(t, &qq, &mut jj);
                let mut g = vec![0.0; d.n];
                jp.mul_transpose_vec(&jj, lambda, &mut g);
                g
            },
            STEP,
        );
        let col: Vec<f64> = (0..d.n).map(|r| kd[r * d.n + c]).collect();
        agree(
            name,
            |r| format!("K[{r},{c}]"),
            &col,
            &fd,
            |k| 1e-6 * (1.0 + k.abs()),
        )?;
    }
    Ok(())
}

/// The gap Jacobian `G = g_q` of the unilateral rows, if the problem has them
/// ([`MechanicalSystem::unilateral`]; `Ok` otherwise): every entry `G[r, c]` within
/// `1e-6 · (1 + |G[r, c]|)` of the central difference of the gaps `g` in `q_c`.
pub fn check_gap_jacobian(
    name: &str, s: &dyn MechanicalSystem, t: f64, q: &[f64],
) -> Result<(), String> {
    let Some(unilateral) = s.unilateral() else {
        return Ok(());
    };
    let d = mechanical_shape(name, s)?;
    expect_len(name, "q", q.len(), d.n)?;
    let k = unilateral.rows();
    let mut gq = vec![0.0; k * d.n];
    unilateral.gap_jacobian(t, q, &mut gq);
    for c in 0..d.n {
        let fd = central(
            |e| {
                let mut qq = q.to_vec();
                qq[c] += e;
                let mut g = vec![0.0; k];
                unilateral.gaps(t, &qq, &mut g);
                g
            },
            STEP,
        );
        let col: Vec<f64> = (0..k).map(|r| gq[r * d.n + c]).collect();
        agree(
            name,
            |r| format!("G[{r},{c}]"),
            &col,
            &fd,
            |g| 1e-6 * (1.0 + g.abs()),
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Mechanical systems: initial state, mass matrix, exact solution.
// ---------------------------------------------------------------------------------------

/// The initial state `(t0, q0, v0)` is consistent: `|Φ_i(t0, q0)| < 1e-12` for every row
/// of priority 0 (rows of lower priority may be unsatisfiable by design,
/// [`MechanicalSystem::prioritized`]) and `|(Φ_q v0 + Φ_t)_i| < 1e-12` for every row.
pub fn check_mechanical_initial_state(name: &str, s: &dyn MechanicalSystem) -> Result<(), String> {
    let d = mechanical_shape(name, s)?;
    let st = s.initial_state();
    expect_len(name, "initial q", st.q.len(), d.n)?;
    expect_len(name, "initial v", st.v.len(), d.n)?;
    let mut phi = vec![0.0; d.m];
    s.constraints(st.t, &st.q, &mut phi);
    if let Some(pr) = s.prioritized().map(|p| p.priorities()) {
        expect_len(name, "priorities", pr.len(), d.m)?;
        phi.iter_mut()
            .zip(&pr)
            .filter(|(_, p)| **p > 0)
            .for_each(|(x, _)| *x = 0.0);
    }
    small(name, |i| format!("Φ(q0)[{i}]"), &phi, 1e-12)?;
    let jp = s.jacobian_pattern();
    let mut jv = vec![0.0; jp.nnz()];
    s.jacobian(st.t, &st.q, &mut jv);
    let mut gv = vec![0.0; d.m];
    jp.mul_vec(&jv, &st.v, &mut gv, false);
    let mut pt = vec![0.0; d.m];
    s.phi_t(st.t, &st.q, &mut pt);
    gv.iter_mut().zip(&pt).for_each(|(g, p)| *g += p);
    small(name, |i| format!("(Φ_q v0 + Φ_t)[{i}]"), &gv, 1e-12)
}

/// The mass matrix `M(q0)` at the initial positions has a lower-triangle pattern and is
/// symmetric positive definite: its dense Cholesky factorization meets only pivots > 0.
pub fn check_mass_spd(name: &str, s: &dyn MechanicalSystem) -> Result<(), String> {
    let d = mechanical_shape(name, s)?;
    let q0 = s.initial_state().q;
    expect_len(name, "initial q", q0.len(), d.n)?;
    let mp = s.mass_pattern();
    lower_pattern(name, "M", &mp)?;
    let mut mv = vec![0.0; mp.nnz()];
    s.mass(&q0, &mut mv);
    let mut a = mp.to_dense(&mv, true);
    let n = d.n;
    for j in 0..n {
        for k in 0..j {
            let l = a[j * n + k];
            for i in j..n {
                a[i * n + j] -= a[i * n + k] * l;
            }
        }
        let pivot = a[j * n + j];
        if pivot.is_nan() || pivot <= 0.0 {
            return Err(format!(
                "{name}: M(q0) not positive definite: Cholesky pivot {j} = {pivot:e} (must be > 0)"
            ));
        }
        let p = pivot.sqrt();
        for i in j..n {
            a[i * n + j] /= p;
        }
    }
    Ok(())
}

/// The exact solution, if the problem has one (`Ok` when `exact(0.0)` is `None`), at 40
/// times spread over `[0, min(t_end, 7)]` (beyond, the rotating rod's cancelling
/// `e^{2Ωt}` terms would test round-off), with time derivatives by central differences of
/// step 1e-5: `|q' − v| < 1e-7` per entry, dynamics residual `|M v' − f + Φ_qᵀ λ|_k <
/// 1e-6 · (1 + max |f|)`, `|Φ_i| < 1e-12`, and energy `|H(t) − H(0)| < 1e-12 ·
/// max(energy_scale, |H(0)|)` (`H(0)` at the initial state; a problem without energy
/// counts as `H = 0`). With unilateral rows the residual may be contact forces `GᵀF`,
/// pushing through closed gaps only (see `subtract_contact_forces`).
pub fn check_mechanical_exact(name: &str, s: &dyn MechanicalSystem) -> Result<(), String> {
    if s.exact(0.0).is_none() {
        return Ok(());
    }
    let d = mechanical_shape(name, s)?;
    let st = s.initial_state();
    expect_len(name, "initial q", st.q.len(), d.n)?;
    expect_len(name, "initial v", st.v.len(), d.n)?;
    let h0 = s.energy(0.0, &st.q, &st.v).unwrap_or(0.0);
    for t in exact_times(s.info().t_end) {
        let sample = exact_sample(name, |t| s.exact(t), t, (d.n, Some(d.n), d.m))?;
        check_mechanical_exact_at(name, s, d, &sample, h0)?;
    }
    Ok(())
}

/// One time of [`check_mechanical_exact`].
fn check_mechanical_exact_at(
    name: &str, s: &dyn MechanicalSystem, d: Dims, sample: &ExactSample, h0: f64,
) -> Result<(), String> {
    let ExactSample { t, e0, dq, dv } = sample;
    let t = *t;
    agree(
        name,
        |k| format!("exact v[{k}] at t = {t} (vs q')"),
        &e0.v,
        dq,
        |_| 1e-7,
    )?;
    let mut f = vec![0.0; d.n];
    s.forces(t, &e0.q, &e0.v, &mut f);
    let jp = s.jacobian_pattern();
    let mut jv = vec![0.0; jp.nnz()];
    s.jacobian(t, &e0.q, &mut jv);
    let mut jtl = vec![0.0; d.n];
    jp.mul_transpose_vec(&jv, &e0.lambda, &mut jtl);
    let mp = s.mass_pattern();
    let mut mv = vec![0.0; mp.nnz()];
    s.mass_at(t, &e0.q, &e0.v, &mut mv);
    let mut ma = vec![0.0; d.n];
    mp.mul_vec(&mv, dv, &mut ma, true);
    let mut res: Vec<f64> = (0..d.n).map(|k| ma[k] - f[k] + jtl[k]).collect();
    let tol = 1e-6 * (1.0 + max_abs(&f));
    if let Some(u) = s.unilateral() {
        subtract_contact_forces(name, u, t, &e0.q, &mut res, tol)?;
    }
    small(
        name,
        |k| format!("exact dynamics residual [{k}] at t = {t}"),
        &res,
        tol,
    )?;
    let mut phi = vec![0.0; d.m];
    s.constraints(t, &e0.q, &mut phi);
    small(name, |i| format!("exact Φ[{i}] at t = {t}"), &phi, 1e-12)?;
    let h = s.energy(t, &e0.q, &e0.v).unwrap_or(0.0);
    let bound = 1e-12 * s.energy_scale().max(h0.abs());
    if (h - h0).abs() < bound {
        Ok(())
    } else {
        Err(format!(
            "{name}: energy along the exact solution H({t}) = {h} vs H(0) = {h0} (|Δ| = {:e}, tolerance {bound:e})",
            (h - h0).abs()
        ))
    }
}

/// With unilateral rows the exact motion may lean on contacts: `M a − f + Φ_qᵀλ = GᵀF`.
/// The forces are the least-squares `F = (Gᵀ)⁺ res`; they must push (`F ≥ −tol`) and only
/// through closed gaps (`F_i > tol` ⇒ `|g_i| ≤ 1e-12`), and `res` becomes `res − GᵀF`.
fn subtract_contact_forces(
    name: &str, u: &dyn driftlab_core::Unilateral, t: f64, q: &[f64], res: &mut [f64], tol: f64,
) -> Result<(), String> {
    let (n, k) = (q.len(), u.rows());
    let mut g = vec![0.0; k];
    let mut gq = vec![0.0; k * n];
    u.gaps(t, q, &mut g);
    u.gap_jacobian(t, q, &mut gq);
    let gt: Vec<f64> = (0..n * k).map(|e| gq[(e % k) * n + e / k]).collect();
    let (pinv, _) = driftlab_solver::dense::pseudo_inverse(n, k, &gt)
        .map_err(|e| format!("{name}: contact forces at t = {t}: {e}"))?;
    let force: Vec<f64> = (0..k)
        .map(|i| (0..n).map(|c| pinv[i * n + c] * res[c]).sum())
        .collect();
    for (i, (&fi, &gi)) in force.iter().zip(&g).enumerate() {
        if fi < -tol || (fi > tol && gi.abs() > 1e-12) {
            return Err(format!(
                "{name}: exact contact force F[{i}] = {fi:e} at t = {t} with gap {gi:e} (must be ≥ 0, and 0 unless the gap is closed)"
            ));
        }
    }
    for (c, r) in res.iter_mut().enumerate() {
        *r -= (0..k).map(|i| gq[i * n + c] * force[i]).sum::<f64>();
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Semi-explicit index-1 DAEs.
// ---------------------------------------------------------------------------------------

/// The Jacobians `f_x, f_z, g_x, g_z` of a semi-explicit index-1 DAE at
/// `x = x0 + dx`, `z = z0 + dz` (every component shifted by the same amount; `(x0, z0)`
/// the initial state) and time `t`, against central differences with step 1e-6: every
/// entry within 1e-7 (absolute).
pub fn check_index1(
    name: &str, s: &dyn SemiExplicitDae, dx: f64, dz: f64, t: f64,
) -> Result<(), String> {
    let (nx, nz) = s.dims();
    let st = s.initial_state();
    expect_len(name, "initial x", st.q.len(), nx)?;
    expect_len(name, "initial z", st.lambda.len(), nz)?;
    let x: Vec<f64> = st.q.iter().map(|a| a + dx).collect();
    let z: Vec<f64> = st.lambda.iter().map(|a| a + dz).collect();
    let mut j = Index1Jacobians::zeros(nx, nz);
    s.jacobians(t, &x, &z, &mut j);
    expect_len(name, "f_x", j.fx.len(), nx * nx)?;
    expect_len(name, "f_z", j.fz.len(), nx * nz)?;
    expect_len(name, "g_x", j.gx.len(), nz * nx)?;
    expect_len(name, "g_z", j.gz.len(), nz * nz)?;
    let at = Index1Point { s, t, x: &x, z: &z };
    at.check_columns(name, false, &j.fx, &j.gx)?;
    at.check_columns(name, true, &j.fz, &j.gz)
}

/// Where [`check_index1`] differentiates.
struct Index1Point<'a> {
    s: &'a dyn SemiExplicitDae,
    t: f64,
    x: &'a [f64],
    z: &'a [f64],
}

impl Index1Point<'_> {
    /// `(f, g)` with `x_c` (or, if `wrt_z`, `z_c`) shifted by `e`.
    fn eval(&self, wrt_z: bool, c: usize, e: f64) -> (Vec<f64>, Vec<f64>) {
        let (nx, nz) = self.s.dims();
        let (mut xx, mut zz) = (self.x.to_vec(), self.z.to_vec());
        if wrt_z {
            zz[c] += e;
        } else {
            xx[c] += e;
        }
        let (mut f, mut g) = (vec![0.0; nx], vec![0.0; nz]);
        self.s.f(self.t, &xx, &zz, &mut f);
        self.s.g(self.t, &xx, &zz, &mut g);
        (f, g)
    }

    /// Columns of `f_x, g_x` (or `f_z, g_z`) against central differences, 1e-7 absolute.
    fn check_columns(&self, name: &str, wrt_z: bool, fj: &[f64], gj: &[f64]) -> Result<(), String> {
        let (nx, nz) = self.s.dims();
        let (nc, w) = if wrt_z { (nz, "z") } else { (nx, "x") };
        for c in 0..nc {
            let ff = central(|e| self.eval(wrt_z, c, e).0, STEP);
            let gg = central(|e| self.eval(wrt_z, c, e).1, STEP);
            let fcol: Vec<f64> = (0..nx).map(|r| fj[r * nc + c]).collect();
            agree(name, |r| format!("f_{w}[{r},{c}]"), &fcol, &ff, |_| 1e-7)?;
            let gcol: Vec<f64> = (0..nz).map(|r| gj[r * nc + c]).collect();
            agree(name, |r| format!("g_{w}[{r},{c}]"), &gcol, &gg, |_| 1e-7)?;
        }
        Ok(())
    }
}

/// The initial state `(t0, x0, z0)` of a semi-explicit index-1 DAE is consistent:
/// `|g_i(t0, x0, z0)| < 1e-14` for every row.
pub fn check_index1_initial_state(name: &str, s: &dyn SemiExplicitDae) -> Result<(), String> {
    let (nx, nz) = s.dims();
    let st = s.initial_state();
    expect_len(name, "initial x", st.q.len(), nx)?;
    expect_len(name, "initial z", st.lambda.len(), nz)?;
    let mut g = vec![0.0; nz];
    s.g(st.t, &st.q, &st.lambda, &mut g);
    small(name, |i| format!("g(x0, z0)[{i}]"), &g, 1e-14)
}

/// The exact solution of a semi-explicit index-1 DAE, if it has one (`Ok` when
/// `exact(0.0)` is `None`), at the 40 times of [`check_mechanical_exact`] with `x'` by
/// central differences of step 1e-5: `|x' − f|_k < 1e-8` and `|g_i| < 1e-14`.
pub fn check_index1_exact(name: &str, s: &dyn SemiExplicitDae) -> Result<(), String> {
    if s.exact(0.0).is_none() {
        return Ok(());
    }
    let (nx, nz) = s.dims();
    for t in exact_times(s.info().t_end) {
        let ExactSample { e0, dq, .. } = exact_sample(name, |t| s.exact(t), t, (nx, None, nz))?;
        let mut f = vec![0.0; nx];
        s.f(t, &e0.q, &e0.lambda, &mut f);
        agree(
            name,
            |k| format!("exact f[{k}] at t = {t} (vs x')"),
            &f,
            &dq,
            |_| 1e-8,
        )?;
        let mut g = vec![0.0; nz];
        s.g(t, &e0.q, &e0.lambda, &mut g);
        small(name, |i| format!("exact g[{i}] at t = {t}"), &g, 1e-14)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------------------

/// Central differences with step `e` of `F(s)` at `s = 0`.
fn central<F: Fn(f64) -> Vec<f64>>(f: F, e: f64) -> Vec<f64> {
    let (p, m) = (f(e), f(-e));
    p.iter().zip(&m).map(|(a, b)| (a - b) / (2.0 * e)).collect()
}

/// `max_i |x_i|` (NaN entries ignored: they fail the comparison they scale).
fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0_f64, |m, x| m.max(x.abs()))
}

/// `Err` naming `quantity(k)` and both numbers at the first `k` where the hand-coded
/// value `analytic[k]` and the finite difference `fd[k]` do not satisfy
/// `|fd[k] − analytic[k]| < tol(analytic[k])` (NaN fails).
fn agree(
    name: &str, quantity: impl Fn(usize) -> String, analytic: &[f64], fd: &[f64],
    tol: impl Fn(f64) -> f64,
) -> Result<(), String> {
    if analytic.len() != fd.len() {
        return Err(format!(
            "{name}: {} has {} entries, its finite difference {}",
            quantity(0),
            analytic.len(),
            fd.len()
        ));
    }
    for (k, (a, f)) in analytic.iter().zip(fd).enumerate() {
        let (err, bound) = ((f - a).abs(), tol(*a));
        if err < bound {
            continue;
        }
        return Err(format!(
            "{name}: {} = {a} vs central difference {f} (|Δ| = {err:e}, tolerance {bound:e})",
            quantity(k)
        ));
    }
    Ok(())
}

/// `Err` naming `quantity(k)`, the value and the bound at the first `k` with
/// `|values[k]| ≥ bound` (NaN fails).
fn small(
    name: &str, quantity: impl Fn(usize) -> String, values: &[f64], bound: f64,
) -> Result<(), String> {
    for (k, x) in values.iter().enumerate() {
        if x.abs() < bound {
            continue;
        }
        return Err(format!(
            "{name}: {} = {x:e}, not below the tolerance {bound:e}",
            quantity(k)
        ));
    }
    Ok(())
}

/// `Err` unless `got == want`.
fn expect_len(name: &str, what: &str, got: usize, want: usize) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{name}: {what} has length {got}, expected {want}"))
    }
}

/// `Err` unless `p` is `nrows × ncols` with every entry inside.
fn pattern_shape(
    name: &str, what: &str, p: &SparsityPattern, nrows: usize, ncols: usize,
) -> Result<(), String> {
    if (p.nrows, p.ncols) != (nrows, ncols) {
        return Err(format!(
            "{name}: {what} pattern is {}×{}, expected {nrows}×{ncols}",
            p.nrows, p.ncols
        ));
    }
    match p
        .entries
        .iter()
        .position(|&(i, j)| i >= nrows || j >= ncols)
    {
        Some(k) => Err(format!(
            "{name}: {what} pattern entry {k} = {:?} outside {nrows}×{ncols}",
            p.entries[k]
        )),
        None => Ok(()),
    }
}

/// `Err` unless every entry of the symmetric matrix's pattern `p` is in the lower triangle.
fn lower_pattern(name: &str, what: &str, p: &SparsityPattern) -> Result<(), String> {
    match p.entries.iter().position(|&(i, j)| i < j) {
        Some(k) => Err(format!(
            "{name}: {what} pattern must be lower, entry {k} is {:?}",
            p.entries[k]
        )),
        None => Ok(()),
    }
}

/// The dimensions of `s` after checking that its patterns fit them (so that no check
/// indexes out of bounds): `n ≥ 1`, `Φ_q` is `m × n`, `M` and `K` are `n × n`, and at most
/// `m` rows are nonholonomic.
fn mechanical_shape(name: &str, s: &dyn MechanicalSystem) -> Result<Dims, String> {
    let d = s.dims();
    if d.n == 0 {
        return Err(format!("{name}: no coordinates (n = 0)"));
    }
    pattern_shape(name, "Φ_q", &s.jacobian_pattern(), d.m, d.n)?;
    pattern_shape(name, "M", &s.mass_pattern(), d.n, d.n)?;
    if let Some(h) = s.constraint_hessian() {
        pattern_shape(name, "K", &h.pattern(), d.n, d.n)?;
    }
    if s.nonholonomic_rows() > d.m {
        return Err(format!(
            "{name}: {} nonholonomic rows of only m = {}",
            s.nonholonomic_rows(),
            d.m
        ));
    }
    Ok(d)
}

/// The sample times of the exact-solution checks: `(i + ½)/40 · min(t_end, 7)`.
fn exact_times(t_end: f64) -> impl Iterator<Item = f64> {
    let horizon = t_end.min(7.0);
    (0..EXACT_SAMPLES).map(move |i| (0.5 + i as f64) / EXACT_SAMPLES as f64 * horizon)
}

/// The exact state at `t` and its time derivatives by central differences.
struct ExactSample {
    t: f64,
    e0: ExactSolution,
    dq: Vec<f64>,
    dv: Vec<f64>,
}

/// Sample `exact` at `t` and `t ± 1e-5`; `Err` if it is missing there or its `(q, v, λ)`
/// lengths differ from `lens` (`v` unchecked when `None`).
fn exact_sample(
    name: &str, exact: impl Fn(f64) -> Option<ExactSolution>, t: f64,
    lens: (usize, Option<usize>, usize),
) -> Result<ExactSample, String> {
    let at = |t: f64| -> Result<ExactSolution, String> {
        let e = exact(t).ok_or_else(|| format!("{name}: no exact solution at t = {t}"))?;
        expect_len(name, &format!("exact q at t = {t}"), e.q.len(), lens.0)?;
        if let Some(nv) = lens.1 {
            expect_len(name, &format!("exact v at t = {t}"), e.v.len(), nv)?;
        }
        expect_len(name, &format!("exact λ at t = {t}"), e.lambda.len(), lens.2)?;
        Ok(e)
    };
    let h = EXACT_STEP;
    let (ep, em, e0) = (at(t + h)?, at(t - h)?, at(t)?);
    let diff = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y) / (2.0 * h)).collect();
    Ok(ExactSample {
        t,
        e0,
        dq: diff(&ep.q, &em.q),
        dv: diff(&ep.v, &em.v),
    })
}
