//! Conformance suite over the whole problem catalog (issue 2): every problem's `Φ_q`,
//! `Φ_t` and `γ` against central finite differences at perturbed states (proptest), a
//! consistent initial state, a symmetric positive definite mass matrix, and — where an
//! exact solution exists — that it satisfies the equations of motion and conserves
//! energy.

use driftlab_core::{MechanicalSystem, SemiExplicitDae, SystemRef};
use driftlab_problems::{build, catalog, Problem};
use proptest::prelude::*;

/// Every catalog entry at its defaults, plus variants that change the structure.
fn instances() -> Vec<(String, Problem)> {
    let mut out = Vec::new();
    for e in catalog() {
        out.push((
            e.id.to_string(),
            (e.build)(&toml::Table::new()).expect("defaults build"),
        ));
    }
    let variants: [(&str, &str); 6] = [
        ("spatial-chain", "links = 12\nspin = 0.3"),
        ("planar-chain", "links = 1"),
        ("planar-chain", "links = 7\ntheta0_deg = 30.0"),
        ("pendulum", "theta0_deg = -45.0\nlength = 2.0\nm = 3.0"),
        ("pendulum", "theta0_deg = 170.0"),
        ("seed003-dae", "c = 2.0"),
    ];
    for (id, t) in variants {
        let table: toml::Table = t.parse().expect("toml");
        out.push((
            format!("{id} [{}]", t.replace('\n', ", ")),
            build(id, &table).expect("variant builds"),
        ));
    }
    out
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .fold(0.0, |m, (x, y)| f64::max(m, (x - y).abs()))
}

/// Central differences with step `e` of `F(s)` at `s = 0`.
fn central<F: Fn(f64) -> Vec<f64>>(f: F, e: f64) -> Vec<f64> {
    let (p, m) = (f(e), f(-e));
    p.iter().zip(&m).map(|(a, b)| (a - b) / (2.0 * e)).collect()
}

fn check_mechanical(
    name: &str,
    s: &dyn MechanicalSystem,
    dq: &[f64],
    v: &[f64],
    t: f64,
) -> Result<(), TestCaseError> {
    let d = s.dims();
    let q0 = s.initial_state().q;
    let q: Vec<f64> = q0
        .iter()
        .enumerate()
        .map(|(i, x)| x + 0.3 * dq[i % dq.len()])
        .collect();
    let v: Vec<f64> = (0..d.n).map(|i| v[i % v.len()]).collect();
    let jp = s.jacobian_pattern();
    let mut jv = vec![0.0; jp.nnz()];
    s.jacobian(t, &q, &mut jv);
    let jd = jp.to_dense(&jv, false);
    let e = 1e-6;
    // Φ_q column by column.
    for c in 0..d.n {
        let fd = central(
            |s_| {
                let mut qq = q.clone();
                qq[c] += s_;
                let mut phi = vec![0.0; d.m];
                s.constraints(t, &qq, &mut phi);
                phi
            },
            e,
        );
        // Nonholonomic rows (the last ones) have no Φ: only holonomic rows are compared;
        // the nonholonomic A(q) is checked through γ below.
        let hol = d.m - s.nonholonomic_rows();
        let col: Vec<f64> = (0..hol).map(|r| jd[r * d.n + c]).collect();
        let err = max_abs_diff(&fd[..hol], &col);
        prop_assert!(
            err < 1e-6 * (1.0 + col.iter().fold(0.0_f64, |m, x| m.max(x.abs()))),
            "{name}: Φ_q column {c} off by {err:e}"
        );
    }
    // Φ_t.
    let fd_t = central(
        |s_| {
            let mut phi = vec![0.0; d.m];
            s.constraints(t + s_, &q, &mut phi);
            phi
        },
        e,
    );
    let mut phit = vec![0.0; d.m];
    s.phi_t(t, &q, &mut phit);
    prop_assert!(max_abs_diff(&fd_t, &phit) < 1e-6, "{name}: Φ_t off");
    // γ = −d/ds [Φ_q(t+s, q+s v) v + Φ_t(t+s, q+s v)] at s = 0.
    let c_of = |s_: f64| {
        let qq: Vec<f64> = q.iter().zip(&v).map(|(a, b)| a + s_ * b).collect();
        let mut jj = vec![0.0; jp.nnz()];
        s.jacobian(t + s_, &qq, &mut jj);
        let mut out = vec![0.0; d.m];
        jp.mul_vec(&jj, &v, &mut out, false);
        let mut pt = vec![0.0; d.m];
        s.phi_t(t + s_, &qq, &mut pt);
        out.iter()
            .zip(&pt)
            .map(|(a, b)| a + b)
            .collect::<Vec<f64>>()
    };
    // K(q, λ) = (Φ_qᵀ λ)_q against central differences, for a fixed λ.
    if let Some(hessian) = s.constraint_hessian() {
        let hp = hessian.pattern();
        let lam: Vec<f64> = (0..d.m)
            .map(|i| 0.7 - 0.3 * i as f64 + v[i % v.len()])
            .collect();
        let mut hv = vec![0.0; hp.nnz()];
        hessian.values(t, &q, &lam, &mut hv);
        let kd = hp.to_dense(&hv, true);
        prop_assert!(
            hp.entries.iter().all(|(i, j)| i >= j),
            "{name}: Hessian pattern must be lower"
        );
        for c in 0..d.n {
            let fd = central(
                |s_| {
                    let mut qq = q.clone();
                    qq[c] += s_;
                    let mut jj = vec![0.0; jp.nnz()];
                    s.jacobian(t, &qq, &mut jj);
                    let mut g = vec![0.0; d.n];
                    jp.mul_transpose_vec(&jj, &lam, &mut g);
                    g
                },
                e,
            );
            for r in 0..d.n {
                prop_assert!(
                    (fd[r] - kd[r * d.n + c]).abs() < 1e-6 * (1.0 + kd[r * d.n + c].abs()),
                    "{name}: K[{r},{c}] = {} vs FD {}",
                    kd[r * d.n + c],
                    fd[r]
                );
            }
        }
    }
    // Unilateral gaps: G = g_q against central differences.
    if let Some(unilateral) = s.unilateral() {
        let k = unilateral.rows();
        let mut gq = vec![0.0; k * d.n];
        unilateral.gap_jacobian(t, &q, &mut gq);
        for c in 0..d.n {
            let fd = central(
                |s_| {
                    let mut qq = q.clone();
                    qq[c] += s_;
                    let mut g = vec![0.0; k];
                    unilateral.gaps(t, &qq, &mut g);
                    g
                },
                e,
            );
            for r in 0..k {
                prop_assert!(
                    (fd[r] - gq[r * d.n + c]).abs() < 1e-6 * (1.0 + gq[r * d.n + c].abs()),
                    "{name}: G[{r},{c}] = {} vs FD {}",
                    gq[r * d.n + c],
                    fd[r]
                );
            }
        }
    }
    let fd_g: Vec<f64> = central(c_of, e).into_iter().map(|x| -x).collect();
    let mut gamma = vec![0.0; d.m];
    s.curvature(t, &q, &v, &mut gamma);
    let scale = 1.0 + gamma.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    prop_assert!(
        max_abs_diff(&fd_g, &gamma) < 1e-6 * scale,
        "{name}: γ off by {:e}",
        max_abs_diff(&fd_g, &gamma)
    );
    Ok(())
}

fn check_index1(
    name: &str,
    s: &dyn SemiExplicitDae,
    dx: f64,
    dz: f64,
    t: f64,
) -> Result<(), TestCaseError> {
    let (nx, nz) = s.dims();
    let st = s.initial_state();
    let x: Vec<f64> = st.q.iter().map(|a| a + dx).collect();
    let z: Vec<f64> = st.lambda.iter().map(|a| a + dz).collect();
    let mut j = driftlab_core::Index1Jacobians::zeros(nx, nz);
    s.jacobians(t, &x, &z, &mut j);
    let (fx, fz, gx, gz) = (&j.fx, &j.fz, &j.gx, &j.gz);
    let e = 1e-6;
    for c in 0..nx {
        let ff = central(
            |s_| {
                let mut xx = x.clone();
                xx[c] += s_;
                let mut o = vec![0.0; nx];
                s.f(t, &xx, &z, &mut o);
                o
            },
            e,
        );
        let gg = central(
            |s_| {
                let mut xx = x.clone();
                xx[c] += s_;
                let mut o = vec![0.0; nz];
                s.g(t, &xx, &z, &mut o);
                o
            },
            e,
        );
        for r in 0..nx {
            prop_assert!((ff[r] - fx[r * nx + c]).abs() < 1e-7, "{name}: f_x");
        }
        for r in 0..nz {
            prop_assert!((gg[r] - gx[r * nx + c]).abs() < 1e-7, "{name}: g_x");
        }
    }
    for c in 0..nz {
        let ff = central(
            |s_| {
                let mut zz = z.clone();
                zz[c] += s_;
                let mut o = vec![0.0; nx];
                s.f(t, &x, &zz, &mut o);
                o
            },
            e,
        );
        let gg = central(
            |s_| {
                let mut zz = z.clone();
                zz[c] += s_;
                let mut o = vec![0.0; nz];
                s.g(t, &x, &zz, &mut o);
                o
            },
            e,
        );
        for r in 0..nx {
            prop_assert!((ff[r] - fz[r * nz + c]).abs() < 1e-7, "{name}: f_z");
        }
        for r in 0..nz {
            prop_assert!((gg[r] - gz[r * nz + c]).abs() < 1e-7, "{name}: g_z");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn derivatives_match_central_differences(
        dq in proptest::collection::vec(-1.0f64..1.0, 4),
        v in proptest::collection::vec(-2.0f64..2.0, 5),
        t in 0.0f64..3.0,
    ) {
        for (name, p) in instances() {
            match p.as_system() {
                SystemRef::Mechanical(s) => check_mechanical(&name, s, &dq, &v, t)?,
                SystemRef::SemiExplicit(s) => check_index1(&name, s, dq[0], dq[1], t)?,
            }
        }
    }
}

#[test]
fn initial_states_are_consistent_and_mass_is_spd() {
    for (name, p) in instances() {
        match p.as_system() {
            SystemRef::Mechanical(s) => {
                let d = s.dims();
                let st = s.initial_state();
                let mut phi = vec![0.0; d.m];
                s.constraints(st.t, &st.q, &mut phi);
                // Rows of lower priority may be unsatisfiable by design (priority-conflict).
                if let Some(pr) = s.prioritized().map(|p| p.priorities()) {
                    phi.iter_mut()
                        .zip(&pr)
                        .filter(|(_, p)| **p > 0)
                        .for_each(|(x, _)| *x = 0.0);
                }
                assert!(
                    phi.iter().all(|x| x.abs() < 1e-12),
                    "{name}: Φ(q0) = {phi:?}"
                );
                let jp = s.jacobian_pattern();
                let mut jv = vec![0.0; jp.nnz()];
                s.jacobian(st.t, &st.q, &mut jv);
                let mut gv = vec![0.0; d.m];
                jp.mul_vec(&jv, &st.v, &mut gv, false);
                let mut pt = vec![0.0; d.m];
                s.phi_t(st.t, &st.q, &mut pt);
                gv.iter_mut().zip(&pt).for_each(|(g, p)| *g += p);
                assert!(
                    gv.iter().all(|x| x.abs() < 1e-12),
                    "{name}: Φ_q v0 + Φ_t = {gv:?}"
                );
                // SPD: Cholesky of the dense mass matrix succeeds.
                let mp = s.mass_pattern();
                assert!(
                    mp.entries.iter().all(|(i, j)| i >= j),
                    "{name}: mass pattern must be lower"
                );
                let mut mv = vec![0.0; mp.nnz()];
                s.mass(&st.q, &mut mv);
                let mut a = mp.to_dense(&mv, true);
                let n = d.n;
                for j in 0..n {
                    for k in 0..j {
                        let l = a[j * n + k];
                        for i in j..n {
                            a[i * n + j] -= a[i * n + k] * l;
                        }
                    }
                    assert!(a[j * n + j] > 0.0, "{name}: M not positive definite");
                    let p = a[j * n + j].sqrt();
                    for i in j..n {
                        a[i * n + j] /= p;
                    }
                }
            }
            SystemRef::SemiExplicit(s) => {
                let st = s.initial_state();
                let mut g = vec![0.0; st.lambda.len()];
                s.g(st.t, &st.q, &st.lambda, &mut g);
                assert!(
                    g.iter().all(|x| x.abs() < 1e-14),
                    "{name}: g(x0, z0) = {g:?}"
                );
            }
        }
    }
}

/// Where an exact solution exists it must solve the DAE: `q' = v` and
/// `M v' = f − Φ_qᵀ λ` (derivatives by central differences), `Φ = 0`, energy constant.
#[test]
fn exact_solutions_satisfy_the_equations() {
    for (name, p) in instances() {
        let sys = p.as_system();
        if sys.exact(0.0).is_none() {
            continue;
        }
        // Over the problem's own horizon (capped at 7 s): the rotating rod's Jacobi
        // integral cancels terms of size e^{2Ωt}, so times far beyond t_end would test
        // round-off instead of the formulas.
        let horizon = sys.info().t_end.min(7.0);
        for i in 0..40 {
            let t = (0.5 + i as f64) / 40.0 * horizon;
            let e = 1e-5;
            let (ep, em, e0) = (
                sys.exact(t + e).unwrap(),
                sys.exact(t - e).unwrap(),
                sys.exact(t).unwrap(),
            );
            let dq: Vec<f64> =
                ep.q.iter()
                    .zip(&em.q)
                    .map(|(a, b)| (a - b) / (2.0 * e))
                    .collect();
            match sys {
                SystemRef::Mechanical(s) => {
                    let d = s.dims();
                    assert!(max_abs_diff(&dq, &e0.v) < 1e-7, "{name}: q' ≠ v at t = {t}");
                    let dv: Vec<f64> =
                        ep.v.iter()
                            .zip(&em.v)
                            .map(|(a, b)| (a - b) / (2.0 * e))
                            .collect();
                    let mut f = vec![0.0; d.n];
                    s.forces(t, &e0.q, &e0.v, &mut f);
                    let jp = s.jacobian_pattern();
                    let mut jv = vec![0.0; jp.nnz()];
                    s.jacobian(t, &e0.q, &mut jv);
                    let mut jtl = vec![0.0; d.n];
                    jp.mul_transpose_vec(&jv, &e0.lambda, &mut jtl);
                    let mp = s.mass_pattern();
                    let mut mv = vec![0.0; mp.nnz()];
                    s.mass(&e0.q, &mut mv);
                    let mut ma = vec![0.0; d.n];
                    mp.mul_vec(&mv, &dv, &mut ma, true);
                    let res: Vec<f64> = (0..d.n).map(|k| ma[k] - f[k] + jtl[k]).collect();
                    let scale = 1.0 + f.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
                    assert!(
                        res.iter().all(|x| x.abs() < 1e-6 * scale),
                        "{name}: dynamics residual {res:?} at t = {t}"
                    );
                    let mut phi = vec![0.0; d.m];
                    s.constraints(t, &e0.q, &mut phi);
                    assert!(
                        phi.iter().all(|x| x.abs() < 1e-12),
                        "{name}: exact Φ = {phi:?}"
                    );
                    let st = s.initial_state();
                    let h0 = s.energy(0.0, &st.q, &st.v).unwrap_or(0.0);
                    let h = s.energy(t, &e0.q, &e0.v).unwrap_or(0.0);
                    assert!(
                        (h - h0).abs() < 1e-12 * s.energy_scale().max(h0.abs()),
                        "{name}: energy drifts along the exact solution"
                    );
                }
                SystemRef::SemiExplicit(s) => {
                    let mut f = vec![0.0; dq.len()];
                    s.f(t, &e0.q, &e0.lambda, &mut f);
                    assert!(max_abs_diff(&dq, &f) < 1e-8, "{name}: x' ≠ f");
                    let mut g = vec![0.0; e0.lambda.len()];
                    s.g(t, &e0.q, &e0.lambda, &mut g);
                    assert!(
                        g.iter().all(|x| x.abs() < 1e-14),
                        "{name}: g ≠ 0 on the exact solution"
                    );
                }
            }
        }
    }
}
