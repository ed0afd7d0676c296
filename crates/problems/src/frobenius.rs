//! Frobenius integrability test of a constraint row (seed 001 §3.8.1): a Pfaffian
//! constraint `a(q) · dq = 0` is holonomic (integrable: there is Φ with `a ∥ ∇Φ`) iff
//! `ω ∧ dω = 0` for `ω = a · dq`, i.e. for every triple i < j < k
//!
//! ```text
//! a_i (∂_j a_k − ∂_k a_j) + a_j (∂_k a_i − ∂_i a_k) + a_k (∂_i a_j − ∂_j a_i) = 0
//! ```
//!
//! (Frobenius' theorem for one 1-form; e.g. Bloch, *Nonholonomic Mechanics and Control*,
//! 2nd ed., §1.4). The derivatives of `a` are central differences of the problem's own
//! `Φ_q` row; a row is classified holonomic when the largest triple stays below `tol`
//! (relative to |a|²) at every sampled configuration.
//!
//! For several rows together the test is the involutivity of the distribution
//! `D = ker A(q)` ([`involutivity_defect`]): the rows are jointly integrable iff the Lie
//! bracket of any two fields in D stays in D (Frobenius' theorem; Bloch 2003). Seed
//! 001 §3.8.1 states the test as `A_i · (∇ × A_j) = 0 ∀ i, j`, which is defined in three
//! dimensions only and is not the multi-row condition (for one row in ℝ³ it is
//! `ω ∧ dω = 0`, the test above).

use driftlab_core::MechanicalSystem;

/// Classification of one row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RowKind {
    /// `ω ∧ dω = 0` at every sample: integrable.
    Holonomic,
    /// `ω ∧ dω ≠ 0` somewhere: the largest triple found.
    Nonholonomic {
        /// max |ω ∧ dω| / |a|² over the samples.
        defect: f64,
    },
}

/// The dense row `r` of `Φ_q(t, q)`.
fn row(s: &dyn MechanicalSystem, r: usize, t: f64, q: &[f64]) -> Vec<f64> {
    let jp = s.jacobian_pattern();
    let mut jv = vec![0.0; jp.nnz()];
    s.jacobian(t, q, &mut jv);
    let mut a = vec![0.0; q.len()];
    for (k, &(i, j)) in jp.entries.iter().enumerate() {
        if i == r {
            a[j] += jv[k];
        }
    }
    a
}

/// Largest `|ω ∧ dω| / |a|²` of row `r` at `(t, q)`.
pub fn defect(s: &dyn MechanicalSystem, r: usize, t: f64, q: &[f64]) -> f64 {
    let n = q.len();
    let a = row(s, r, t, q);
    let e = 1e-6;
    // da[j][i] = ∂_j a_i.
    let da: Vec<Vec<f64>> = (0..n)
        .map(|j| {
            let (mut qp, mut qm) = (q.to_vec(), q.to_vec());
            qp[j] += e;
            qm[j] -= e;
            let (ap, am) = (row(s, r, t, &qp), row(s, r, t, &qm));
            ap.iter()
                .zip(&am)
                .map(|(x, y)| (x - y) / (2.0 * e))
                .collect()
        })
        .collect();
    let curl = |i: usize, j: usize| da[i][j] - da[j][i]; // ∂_i a_j − ∂_j a_i
    let norm2 = a.iter().map(|x| x * x).sum::<f64>().max(f64::MIN_POSITIVE);
    let mut worst = 0.0_f64;
    for i in 0..n {
        for j in i + 1..n {
            for k in j + 1..n {
                let w = a[i] * curl(j, k) + a[j] * curl(k, i) + a[k] * curl(i, j);
                worst = worst.max(w.abs() / norm2);
            }
        }
    }
    worst
}

/// The dense rows `rows` of `Φ_q(t, q)` (row-major, `rows.len() × n`).
fn rows_at(s: &dyn MechanicalSystem, rows: &[usize], t: f64, q: &[f64]) -> Vec<f64> {
    rows.iter().flat_map(|&r| row(s, r, t, q)).collect()
}

/// The orthogonal projector `P = I − Aᵀ(AAᵀ)⁻¹A` onto `ker A` (row-major `n × n`);
/// `None` when `AAᵀ` is singular (dependent rows).
fn kernel_projector(a: &[f64], k: usize, n: usize) -> Option<Vec<f64>> {
    let mut aat = vec![0.0; k * k];
    for i in 0..k {
        for j in 0..k {
            aat[i * k + j] = (0..n).map(|c| a[i * n + c] * a[j * n + c]).sum();
        }
    }
    let mut p = vec![0.0; n * n];
    for c in 0..n {
        // Column c of Aᵀ(AAᵀ)⁻¹A: Aᵀ (AAᵀ)⁻¹ (A e_c).
        let mut y: Vec<f64> = (0..k).map(|i| a[i * n + c]).collect();
        driftlab_solver::dense::solve_dense(k, &aat, &mut y).ok()?;
        for r in 0..n {
            let proj: f64 = (0..k).map(|i| a[i * n + r] * y[i]).sum();
            p[r * n + c] = f64::from(u8::from(r == c)) - proj;
        }
    }
    Some(p)
}

/// Involutivity defect of the distribution `ker A(q)` of the rows `rows` at `(t, q)`:
/// with the fields `X_c = P e_c` spanning it, `max_{b,c} |A [X_b, X_c]|`, the bracket
/// `[X_b, X_c] = DX_c X_b − DX_b X_c` by central differences of `P`, relative to `|A|`.
/// Zero (to the differences' accuracy) iff the rows are jointly integrable; NaN for
/// dependent rows.
pub fn involutivity_defect(s: &dyn MechanicalSystem, rows: &[usize], t: f64, q: &[f64]) -> f64 {
    let (n, k) = (q.len(), rows.len());
    let a = rows_at(s, rows, t, q);
    let Some(p) = kernel_projector(&a, k, n) else {
        return f64::NAN;
    };
    let e = 1e-6;
    // dp[j] = ∂P/∂q_j.
    let mut dp = Vec::with_capacity(n);
    for j in 0..n {
        let (mut qp, mut qm) = (q.to_vec(), q.to_vec());
        qp[j] += e;
        qm[j] -= e;
        let (Some(pp), Some(pm)) = (
            kernel_projector(&rows_at(s, rows, t, &qp), k, n),
            kernel_projector(&rows_at(s, rows, t, &qm), k, n),
        ) else {
            return f64::NAN;
        };
        dp.push(
            pp.iter()
                .zip(&pm)
                .map(|(x, y)| (x - y) / (2.0 * e))
                .collect::<Vec<f64>>(),
        );
    }
    // DX_c X_b = Σ_j (∂P/∂q_j) e_c · X_b[j].
    let dx = |c: usize, b: usize| -> Vec<f64> {
        (0..n)
            .map(|r| (0..n).map(|j| dp[j][r * n + c] * p[j * n + b]).sum())
            .collect()
    };
    let norm = a
        .iter()
        .map(|x| x * x)
        .sum::<f64>()
        .sqrt()
        .max(f64::MIN_POSITIVE);
    let mut worst = 0.0_f64;
    for b in 0..n {
        for c in b + 1..n {
            let (u, w) = (dx(c, b), dx(b, c));
            for i in 0..k {
                let v: f64 = (0..n).map(|r| a[i * n + r] * (u[r] - w[r])).sum();
                worst = worst.max(v.abs() / norm);
            }
        }
    }
    worst
}

/// Classify row `r` over the configurations `samples` at time `t`.
pub fn classify_row(
    s: &dyn MechanicalSystem, r: usize, t: f64, samples: &[Vec<f64>], tol: f64,
) -> RowKind {
    let d = samples
        .iter()
        .map(|q| defect(s, r, t, q))
        .fold(0.0_f64, f64::max);
    if d <= tol {
        RowKind::Holonomic
    } else {
        RowKind::Nonholonomic { defect: d }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::nonholonomic::knife_edge::{KnifeEdge, KnifeEdgeParams};
    use crate::planar::planar_chain::{PlanarChain, PlanarChainParams};

    fn samples(n: usize) -> Vec<Vec<f64>> {
        (0..7)
            .map(|k| {
                (0..n)
                    .map(|i| 0.3 + 0.41 * k as f64 - 0.27 * i as f64)
                    .collect()
            })
            .collect()
    }

    /// The knife edge row sin θ dx − cos θ dy has ω ∧ dω = −(sin²θ + cos²θ) dx∧dy∧dθ:
    /// defect exactly 1 (|a|² = 1), nonholonomic (seed 001 §3.8.1).
    #[test]
    fn knife_edge_row_is_nonholonomic_with_unit_defect() {
        let k = KnifeEdge::new(KnifeEdgeParams::default()).unwrap();
        match classify_row(&k, 0, 0.0, &samples(3), 1e-8) {
            RowKind::Nonholonomic { defect } => {
                assert!((defect - 1.0).abs() < 1e-8, "defect {defect}")
            }
            RowKind::Holonomic => panic!("knife edge classified holonomic"),
        }
    }

    /// Several rows together (the distribution's involutivity): the 3-link chain's three
    /// holonomic rows are jointly integrable; the rolling disk's two rolling rows are
    /// not (seed 001 §3.8.1).
    #[test]
    fn jointly_integrable_rows_are_involutive_and_the_rolling_disk_is_not() {
        let c = PlanarChain::new(PlanarChainParams {
            links: 3,
            ..Default::default()
        })
        .unwrap();
        let d = crate::nonholonomic::rolling_disk::RollingDisk::new(Default::default()).unwrap();
        for q in samples(6) {
            let chain = involutivity_defect(&c, &[0, 1, 2], 0.0, &q);
            assert!(chain <= 1e-6, "chain defect {chain}");
        }
        let disk = samples(4)
            .iter()
            .map(|q| involutivity_defect(&d, &[0, 1], 0.0, q))
            .fold(0.0_f64, f64::max);
        assert!(disk >= 0.1, "rolling disk defect {disk}");
    }

    /// Rows that are gradients of a Φ are integrable: every row of a 3-link chain.
    #[test]
    fn chain_rows_are_holonomic() {
        let c = PlanarChain::new(PlanarChainParams {
            links: 3,
            ..Default::default()
        })
        .unwrap();
        for r in 0..3 {
            assert_eq!(
                classify_row(&c, r, 0.0, &samples(6), 1e-7),
                RowKind::Holonomic,
                "row {r}"
            );
        }
    }
}
