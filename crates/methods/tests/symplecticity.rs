//! Issue 32 W6: which methods preserve the symplectic form on the constraint manifold,
//! measured, against what each declares (`MethodInfo::symplectic` and its reason).
//!
//! The phase space of a holonomically constrained system with constant M is
//! `𝓜 = {(q, p) : Φ(q) = 0, Φ_q M⁻¹ p = 0}`, and the canonical form `Σ dq_i ∧ dp_i`
//! restricted to it is symplectic (Hairer, Lubich & Wanner, Geometric Numerical
//! Integration, 2nd ed., §VII.1.3). On the planar double pendulum in Cartesian
//! coordinates, the link angles θ and `p_θ = J(θ)ᵀ M v` (J = ∂q/∂θ) are canonical
//! coordinates of 𝓜: with q = x(θ), `Σ dq ∧ dp = Σ dθ_k ∧ d(Jᵀp)_k` because the second
//! derivatives of x are symmetric. A one-step map Ψ_h on 𝓜, written in these coordinates
//! as F: ℝ⁴ → ℝ⁴, is symplectic iff `F'ᵀ J₄ F' = J₄` (GNI Def. VI.2.2).
//!
//! A method that ends off 𝓜 is read through the same chart: the link directions of q, and
//! `Jᵀ M v`, which is the M-orthogonal projection of v (Jᵀ M annihilates every
//! `M⁻¹Φ_qᵀμ`, since Φ_q J = 0). Its measured map is the method followed by that
//! projection, as its projected variant would be.
//!
//! The test differentiates F by central differences with Richardson extrapolation (ε and
//! ε/2), so the truncation error is O(ε⁴) and the noise of the methods' Newton tolerances
//! (≈ 1e-13 per step) enters as 1e-13/ε ≈ 1e-9: the floor below which a defect
//! `‖F'ᵀ J₄ F' − J₄‖_max` cannot be resolved. At h = 0.2 a non-symplectic method of order
//! p shows a defect of O(h^{p+1}); the symplectic ones stay at the floor.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::{MechanicalSystem, Method, StartOptions, State};
use driftlab_problems::Problem;

const LINK: f64 = 1.0;
const MASS: f64 = 1.0;

/// The bobs' positions for absolute link angles θ (from the downward vertical).
fn positions(theta: [f64; 2]) -> Vec<f64> {
    let (mut x, mut y) = (0.0, 0.0);
    let mut q = Vec::new();
    for t in theta {
        x += LINK * t.sin();
        y -= LINK * t.cos();
        q.extend([x, y]);
    }
    q
}

/// J = ∂q/∂θ, 4 × 2 row-major.
fn jacobian(theta: [f64; 2]) -> [[f64; 2]; 4] {
    let d = |t: f64| [LINK * t.cos(), LINK * t.sin()];
    let (a, b) = (d(theta[0]), d(theta[1]));
    [[a[0], 0.0], [a[1], 0.0], [a[0], b[0]], [a[1], b[1]]]
}

/// (θ, p_θ) → (q, v) on 𝓜: v = J (JᵀMJ)⁻¹ p_θ.
fn to_state(z: [f64; 4]) -> (Vec<f64>, Vec<f64>) {
    let theta = [z[0], z[1]];
    let j = jacobian(theta);
    let mut g = [[0.0; 2]; 2];
    for r in 0..2 {
        for c in 0..2 {
            g[r][c] = MASS * (0..4).map(|i| j[i][r] * j[i][c]).sum::<f64>();
        }
    }
    let det = g[0][0] * g[1][1] - g[0][1] * g[1][0];
    let rate = [
        (g[1][1] * z[2] - g[0][1] * z[3]) / det,
        (g[0][0] * z[3] - g[1][0] * z[2]) / det,
    ];
    let v = (0..4)
        .map(|i| j[i][0] * rate[0] + j[i][1] * rate[1])
        .collect();
    (positions(theta), v)
}

/// (q, v) → (θ, p_θ): θ from the link directions, p_θ = Jᵀ M v.
fn coordinates(q: &[f64], v: &[f64]) -> [f64; 4] {
    let (dx1, dy1) = (q[0], q[1]);
    let (dx2, dy2) = (q[2] - q[0], q[3] - q[1]);
    let theta = [dx1.atan2(-dy1), dx2.atan2(-dy2)];
    let j = jacobian(theta);
    let p = |c: usize| MASS * (0..4).map(|i| j[i][c] * v[i]).sum::<f64>();
    [theta[0], theta[1], p(0), p(1)]
}

/// One step of `method` from the point z of 𝓜, in canonical coordinates.
fn step(sys: &dyn MechanicalSystem, method: &dyn Method, z: [f64; 4], h: f64) -> [f64; 4] {
    let (q, v) = to_state(z);
    let mut state = State::mechanical(0.0, q, v, 2);
    let mut stepper = method
        .start(sys, &mut state, &StartOptions::default())
        .unwrap();
    stepper.step(&mut state, h).unwrap();
    coordinates(&state.q, &state.v)
}

/// F' at z by central differences, Richardson-extrapolated over ε and ε/2.
fn derivative(f: &dyn Fn([f64; 4]) -> [f64; 4], z: [f64; 4], eps: f64) -> [[f64; 4]; 4] {
    let central = |k: usize, e: f64| {
        let (mut a, mut b) = (z, z);
        a[k] += e;
        b[k] -= e;
        let (fa, fb) = (f(a), f(b));
        [0, 1, 2, 3].map(|i| (fa[i] - fb[i]) / (2.0 * e))
    };
    let mut d = [[0.0; 4]; 4];
    for k in 0..4 {
        let (coarse, fine) = (central(k, eps), central(k, eps / 2.0));
        for i in 0..4 {
            d[i][k] = (4.0 * fine[i] - coarse[i]) / 3.0;
        }
    }
    d
}

/// `max |F'ᵀ J₄ F' − J₄|` with J₄ = [[0, I], [−I, 0]].
fn symplecticity_defect(d: &[[f64; 4]; 4]) -> f64 {
    let omega = |i: usize, j: usize| match (i, j) {
        (0, 2) | (1, 3) => 1.0,
        (2, 0) | (3, 1) => -1.0,
        _ => 0.0,
    };
    let mut worst = 0.0_f64;
    for a in 0..4 {
        for b in 0..4 {
            let mut s = 0.0;
            for i in 0..4 {
                for j in 0..4 {
                    s += d[i][a] * omega(i, j) * d[j][b];
                }
            }
            worst = worst.max((s - omega(a, b)).abs());
        }
    }
    worst
}

/// The defect of `method` (with an optional projection) at step h from a generic point.
fn defect(method: &str, params: &str, projection: Option<&str>, h: f64) -> f64 {
    let table = |s: &str| -> toml::Table { s.parse().unwrap() };
    let Problem::Mechanical(sys) = driftlab_problems::build("planar-chain", &table("")).unwrap()
    else {
        panic!("planar-chain is mechanical");
    };
    let m =
        driftlab_methods::build(method, &table(params), projection.map(table).as_ref()).unwrap();
    let z = [0.7, -0.4, 0.3, 0.5];
    let f = |z: [f64; 4]| step(sys.as_ref(), m.as_ref(), z, h);
    symplecticity_defect(&derivative(&f, z, 1e-4))
}

/// What the chart and the differences alone contribute: the defect of the identity map
/// read through the same coordinates (to_state then coordinates), about 1e-12. The
/// methods' Newton tolerances (≈ 1e-13 per step, divided by ε = 1e-4) set the larger
/// floor of 1e-9 that the test uses.
fn floor() -> f64 {
    let f = |z: [f64; 4]| {
        let (q, v) = to_state(z);
        coordinates(&q, &v)
    };
    symplecticity_defect(&derivative(&f, [0.7, -0.4, 0.3, 0.5], 1e-4))
}

#[test]
fn the_symplectic_declarations_match_the_measured_symplectic_form() {
    let resolution = floor().max(1e-9);
    println!("resolution of the measurement: {resolution:.1e}");
    let h = 0.2;
    let cases: &[(&str, &str, Option<&str>)] = &[
        ("rattle", "", None),
        ("lobatto", "stages = 3", None),
        ("taylor", "", None),
        ("semi-implicit-euler", "", None),
        ("gauss", "stages = 2", None),
        ("gauss", "stages = 2", Some("tol = 1e-13")),
        ("gauss", "stages = 1", None),
        ("gauss-index3", "stages = 2", None),
        ("gauss-index3", "stages = 2", Some("tol = 1e-13")),
        ("rattle", "", Some("tol = 1e-13")),
        ("lobatto", "stages = 2", None),
        ("baumgarte", "xi = 1.0\nomega_n = 10.0", None),
        ("radau", "", None),
        ("alf", "", None),
        ("implicit-euler", "", None),
        ("generalized-alpha", "rho_inf = 1.0", None),
    ];
    for &(id, params, projection) in cases {
        let m = driftlab_methods::build(
            id,
            &params.parse().unwrap(),
            projection.map(|p| p.parse().unwrap()).as_ref(),
        )
        .unwrap();
        let declared = m.info().symplectic;
        let d = defect(id, params, projection, h);
        println!(
            "{id} {params} {}: defect {d:.2e} at h = {h} (declared symplectic: {declared}; {})",
            projection.map_or("", |_| "+ projection"),
            m.info().symplectic_reason
        );
        if declared {
            assert!(
                d <= 1e3 * resolution,
                "{id}: defect {d:e} of a symplectic method"
            );
        } else {
            assert!(
                d >= 1e4 * resolution,
                "{id}: defect {d:e}, below what a non-symplectic method shows"
            );
        }
    }
}

/// Every catalog method states why it is or is not symplectic, and the reason agrees with
/// the flag.
#[test]
fn every_method_states_its_symplecticity_with_a_reason() {
    for entry in driftlab_methods::catalog() {
        let info = (entry.info)();
        let reason = &info.symplectic_reason;
        assert!(
            reason.starts_with(if info.symplectic { "yes" } else { "no" }),
            "{}: symplectic = {} with the reason {reason:?}",
            info.id,
            info.symplectic
        );
    }
}
