//! Conformance checks of a fully implicit system `F(t, y, y′) = 0`: its initial pair
//! solves `F = 0` and `F_{y′}` is invertible there, and its exact solution, where it has
//! one, has `y′` equal to the time derivative of `y` and solves `F = 0`.

use driftlab_core::ImplicitDae;

/// Step of the central differences in time along an exact solution.
const EXACT_STEP: f64 = 1e-5;

/// `F(t₀, y₀, y′₀) = 0` (to `1e-12 (1 + ‖y′₀‖∞)`) and `F_{y′}` (forward differences)
/// invertible at the initial state: the form's two assumptions.
pub fn check_initial_state(name: &str, s: &dyn ImplicitDae) -> Result<(), String> {
    let y = s.initial_state();
    let n = s.dim();
    if y.q.len() != n || y.v.len() != n {
        return Err(format!(
            "{name}: initial y has {} and y′ {} entries, dim() = {n}",
            y.q.len(),
            y.v.len()
        ));
    }
    let mut r = vec![0.0; n];
    s.residual(y.t, &y.q, &y.v, &mut r);
    let scale = 1.0 + inf_norm(&y.v);
    let consistent = inf_norm(&r) <= 1e-12 * scale;
    if !consistent {
        return Err(format!(
            "{name}: ‖F(t₀, y₀, y′₀)‖∞ = {:.3e}: the initial pair is not consistent",
            inf_norm(&r)
        ));
    }
    let jac = dfdyp(s, y.t, &y.q, &y.v);
    let mut e = vec![1.0; n];
    driftlab_solver::dense::solve_dense(n, &jac, &mut e)
        .map_err(|err| format!("{name}: F_y′ is singular at the initial state ({err})"))?;
    Ok(())
}

/// Along the exact solution, at 8 times in `[0, t_end]`: `y′` against central
/// differences of `y` (step 1e-5, within `1e-8 (1 + |y′|)`), and `‖F‖∞ ≤ 1e-10 (1 + ‖y′‖∞)`.
pub fn check_exact(name: &str, s: &dyn ImplicitDae) -> Result<(), String> {
    if s.exact(0.0).is_none() {
        return Ok(());
    }
    let n = s.dim();
    let t_end = s.info().t_end;
    for k in 0..8 {
        let t = t_end * (0.05 + 0.9 * k as f64 / 7.0);
        let at = |t: f64| {
            s.exact(t)
                .ok_or_else(|| format!("{name}: no exact solution at t = {t}"))
        };
        let (e0, ep, em) = (at(t)?, at(t + EXACT_STEP)?, at(t - EXACT_STEP)?);
        if e0.q.len() != n || e0.v.len() != n {
            return Err(format!(
                "{name}: exact y or y′ at t = {t} is not of length {n}"
            ));
        }
        for i in 0..n {
            let fd = (ep.q[i] - em.q[i]) / (2.0 * EXACT_STEP);
            let agrees = (fd - e0.v[i]).abs() < 1e-8 * (1.0 + e0.v[i].abs());
            if !agrees {
                return Err(format!(
                    "{name}: exact y′[{i}] = {} at t = {t}, the difference quotient of y gives {fd}",
                    e0.v[i]
                ));
            }
        }
        let mut r = vec![0.0; n];
        s.residual(t, &e0.q, &e0.v, &mut r);
        let solves = inf_norm(&r) <= 1e-10 * (1.0 + inf_norm(&e0.v));
        if !solves {
            return Err(format!(
                "{name}: ‖F‖∞ = {:.3e} on the exact solution at t = {t}",
                inf_norm(&r)
            ));
        }
    }
    Ok(())
}

/// `∂F/∂y′` by forward differences (dense, row-major).
fn dfdyp(s: &dyn ImplicitDae, t: f64, y: &[f64], yp: &[f64]) -> Vec<f64> {
    let n = s.dim();
    let (mut r0, mut r1) = (vec![0.0; n], vec![0.0; n]);
    s.residual(t, y, yp, &mut r0);
    let mut p = yp.to_vec();
    let mut jac = vec![0.0; n * n];
    for j in 0..n {
        let d = 1e-7 * (1.0 + yp[j].abs());
        p[j] = yp[j] + d;
        s.residual(t, y, &p, &mut r1);
        p[j] = yp[j];
        for i in 0..n {
            jac[i * n + j] = (r1[i] - r0[i]) / d;
        }
    }
    jac
}

/// `‖x‖∞`, NaN when any entry is (a NaN residual must fail the checks, and `f64::max`
/// would drop it).
fn inf_norm(x: &[f64]) -> f64 {
    x.iter().fold(0.0_f64, |m, v| {
        if m.is_nan() || v.is_nan() {
            f64::NAN
        } else {
            m.max(v.abs())
        }
    })
}

#[cfg(test)]
mod tests {
    /// A NaN residual is not a small one (the checks compare `inf_norm(r) <= tol`).
    #[test]
    fn a_nan_entry_makes_the_norm_nan() {
        assert!(super::inf_norm(&[1e-20, f64::NAN, 0.0]).is_nan());
        assert_eq!(super::inf_norm(&[-3.0, 2.0]).to_bits(), 3.0_f64.to_bits());
    }
}
