//! The velocity projection that also keeps the problem's conserved momenta (issue 32 W20;
//! projection option `momentum = true`): after the position projection,
//!
//! ```text
//! v = argmin ½‖v − ṽ‖²_W   s.t.   Φ_q(q) v + Φ_t = 0,   A(q) v = p₀
//! v = ṽ − W⁻¹Cᵀμ,   (C W⁻¹ Cᵀ) μ = C ṽ − d,   C = [Φ_q; A],  d = [−Φ_t; p₀]
//! ```
//!
//! with `A(q) v = p(q, v)` the momenta of `MechanicalSystem::momentum` (linear and angular
//! momenta are linear in v; `A` is read column by column as `p(q, e_i) − p(q, 0)`, and a
//! momentum map that is not linear in v is refused) and `p₀` their values at the start.
//! The metric W is the decorator's: M (the kinetic-energy metric of the mass-orthogonal
//! projections, García Orden & Goicolea, Int. J. Numer. Meth. Eng. 47 (2000) 1311–1325
//! for projections in energy-momentum schemes) or I. Constraint forces that are ideal
//! and invariant under translations and rotations do not change P and L, so adding the
//! rows only removes the integrator's own momentum error (Leimkuhler & Reich, Simulating
//! Hamiltonian Dynamics, 2004, §7). Dense: small models. When C has dependent rows (a
//! momentum already fixed by the constraints), the minimum-norm μ of the pseudo-inverse
//! is used.

use super::metric::Metric;
use driftlab_core::prelude::*;
use driftlab_solver::dense::{pseudo_inverse, DenseLu};

/// Largest n the dense projection is built for.
pub const MAX_DENSE: usize = 400;

/// `A(q)` (k × n, row-major) of the momenta `p(q, v) = A(q) v`, or why it cannot be read.
pub(crate) fn momentum_matrix(
    s: &dyn MechanicalSystem, t: f64, q: &[f64],
) -> Result<Vec<f64>, String> {
    let n = q.len();
    let zero = vec![0.0; n];
    let offset = s
        .momentum(t, q, &zero)
        .ok_or("the problem defines no conserved momenta (`MechanicalSystem::momentum`)")?;
    let k = offset.len();
    let mut a = vec![0.0; k * n];
    let mut unit = zero.clone();
    for i in 0..n {
        unit[i] = 1.0;
        let col = s.momentum(t, q, &unit).unwrap_or_default();
        unit[i] = 0.0;
        for r in 0..k.min(col.len()) {
            a[r * n + i] = col[r] - offset[r];
        }
    }
    if offset.iter().any(|x| x.abs() > 1e-12) {
        return Err(format!(
            "the momenta at v = 0 are {offset:?}, not 0: p(q, v) is not linear in v"
        ));
    }
    // Linear: p(q, w) = A w for a test velocity with every component set.
    let w: Vec<f64> = (0..n).map(|i| 1.0 + i as f64 / n as f64).collect();
    let pw = s.momentum(t, q, &w).unwrap_or_default();
    for r in 0..k {
        let aw: f64 = (0..n).map(|i| a[r * n + i] * w[i]).sum();
        let got = pw.get(r).copied().unwrap_or(f64::NAN);
        let linear = (got - aw).abs() <= 1e-9 * (1.0 + aw.abs());
        if !linear {
            return Err(format!(
                "momentum {r} is {got} at a test velocity where the linear map gives {aw}: p(q, v) is not linear in v"
            ));
        }
    }
    Ok(a)
}

/// The dense metric W at q: M (from its lower pattern) or I.
fn metric_matrix(s: &dyn MechanicalSystem, q: &[f64], metric: Metric) -> Vec<f64> {
    let n = q.len();
    let mut w = vec![0.0; n * n];
    match metric {
        Metric::Euclidean => (0..n).for_each(|i| w[i * n + i] = 1.0),
        Metric::Mass => {
            let mp = s.mass_pattern();
            let mut vals = vec![0.0; mp.nnz()];
            s.mass(q, &mut vals);
            for (&(r, c), &x) in mp.entries.iter().zip(&vals) {
                w[r * n + c] += x;
                if r != c {
                    w[c * n + r] += x;
                }
            }
        }
    }
    w
}

/// `C = [Φ_q; A]` and `d = [−Φ_t; p₀]` at `(t, q)`.
fn rows(
    s: &dyn MechanicalSystem, t: f64, q: &[f64], p0: &[f64],
) -> Result<(Vec<f64>, Vec<f64>), String> {
    let n = q.len();
    let jp = s.jacobian_pattern();
    let mut jv = vec![0.0; jp.nnz()];
    s.jacobian(t, q, &mut jv);
    let m = s.dims().m;
    let mut c = vec![0.0; m * n];
    for (&(r, col), &x) in jp.entries.iter().zip(&jv) {
        c[r * n + col] += x;
    }
    c.extend(momentum_matrix(s, t, q)?);
    let mut d = vec![0.0; m];
    s.phi_t(t, q, &mut d);
    d.iter_mut().for_each(|x| *x = -*x);
    d.extend_from_slice(p0);
    Ok((c, d))
}

/// Project `state.v` onto `{Φ_q v + Φ_t = 0, A v = p₀}` in the metric W.
pub(crate) fn project_momenta(
    s: &dyn MechanicalSystem, state: &mut State, p0: &[f64], metric: Metric,
) -> Result<(), StepError> {
    let (t, n) = (state.t, state.q.len());
    let fail = |detail: String| StepError::LinearSolve { t, detail };
    let (c, d) = rows(s, t, &state.q, p0).map_err(|e| fail(format!("momentum projection: {e}")))?;
    let k = d.len();
    let w = DenseLu::factor(n, &metric_matrix(s, &state.q, metric))
        .map_err(|e| fail(format!("momentum projection, metric: {e}")))?;
    // W⁻¹Cᵀ, column by column (row-major n × k).
    let mut wc = vec![0.0; n * k];
    for r in 0..k {
        let mut col: Vec<f64> = c[r * n..(r + 1) * n].to_vec();
        w.solve(&mut col)
            .map_err(|e| fail(format!("momentum projection, metric: {e}")))?;
        (0..n).for_each(|i| wc[i * k + r] = col[i]);
    }
    let schur: Vec<f64> = (0..k * k)
        .map(|ij| {
            (0..n)
                .map(|l| c[(ij / k) * n + l] * wc[l * k + ij % k])
                .sum()
        })
        .collect();
    let mut mu: Vec<f64> = (0..k)
        .map(|r| (0..n).map(|l| c[r * n + l] * state.v[l]).sum::<f64>() - d[r])
        .collect();
    let solved = DenseLu::factor(k, &schur).and_then(|lu| lu.solve(&mut mu));
    if solved.is_err() {
        let (pinv, _) = pseudo_inverse(k, k, &schur)
            .map_err(|e| fail(format!("momentum projection, C W⁻¹ Cᵀ: {e}")))?;
        let b = mu.clone();
        mu = (0..k)
            .map(|r| (0..k).map(|j| pinv[r * k + j] * b[j]).sum())
            .collect();
    }
    for i in 0..n {
        state.v[i] -= (0..k).map(|r| wc[i * k + r] * mu[r]).sum::<f64>();
    }
    Ok(())
}
