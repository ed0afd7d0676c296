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
//! (relative to |a|²) at every sampled configuration. For several rows the distribution's
//! involutivity is the full test; this checks each row on its own, which is what
//! classifying "this constraint" means.

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

/// Classify row `r` over the configurations `samples` at time `t`.
pub fn classify_row(
    s: &dyn MechanicalSystem,
    r: usize,
    t: f64,
    samples: &[Vec<f64>],
    tol: f64,
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
    use crate::knife_edge::{KnifeEdge, KnifeEdgeParams};
    use crate::planar_chain::{PlanarChain, PlanarChainParams};

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
