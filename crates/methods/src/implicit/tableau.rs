//! Runge–Kutta coefficients as cited data (Butcher tableaux), with the simplifying
//! assumptions that certify their order checked in the tests:
//! `B(p): Σ b_i c_i^{k−1} = 1/k (k ≤ p)`, `C(η): Σ_j a_ij c_j^{k−1} = c_i^k / k (k ≤ η)`,
//! `D(ζ): Σ_i b_i c_i^{k−1} a_ij = b_j (1 − c_j^k)/k (k ≤ ζ)`. By Butcher's theorem
//! (Hairer, Nørsett & Wanner, Solving ODEs I, §II.7, Thm. 7.4) B(p), C(η), D(ζ) with
//! p ≤ η + ζ + 1 and p ≤ 2η + 2 give order p.

/// A Butcher tableau `(A, b, c)` with `s` stages.
#[derive(Clone, Debug, PartialEq)]
pub struct Tableau {
    /// Name.
    pub name: &'static str,
    /// Stages.
    pub s: usize,
    /// Row-major `s × s` matrix A.
    pub a: Vec<f64>,
    /// Weights b.
    pub b: Vec<f64>,
    /// Nodes c.
    pub c: Vec<f64>,
    /// Classical order.
    pub order: u32,
    /// Source of the coefficients.
    pub citation: &'static str,
}

impl Tableau {
    /// `‖A²‖∞` (max row sum of |A²|): the factor of h²‖∂a/∂q‖ in the contraction of the
    /// kinematic stage iteration.
    pub fn a2_norm(&self) -> f64 {
        (0..self.s)
            .map(|i| {
                (0..self.s)
                    .map(|k| {
                        (0..self.s)
                            .map(|j| self.a(i, j) * self.a(j, k))
                            .sum::<f64>()
                            .abs()
                    })
                    .sum::<f64>()
            })
            .fold(0.0, f64::max)
    }
    /// `A[i][j]`.
    pub fn a(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.s + j]
    }

    /// Gauss–Legendre collocation with `s = 1, 2, 3` stages (order 2s, symmetric,
    /// symplectic): Butcher 1964; Hairer, Nørsett & Wanner, Solving ODEs I, §II.7,
    /// Table 7.3/7.4; the s = 3 coefficients as in seed 004 (Wei et al. 2016, eq. 15).
    pub fn gauss(s: usize) -> Option<Tableau> {
        let r3 = 3f64.sqrt();
        let r15 = 15f64.sqrt();
        let citation = "Butcher (1964); Hairer, Nørsett & Wanner, Solving ODEs I, §II.7 (Gauss methods); seed 004 eq. (15)";
        match s {
            1 => Some(Tableau {
                name: "Gauss s=1 (implicit midpoint)",
                s,
                a: vec![0.5],
                b: vec![1.0],
                c: vec![0.5],
                order: 2,
                citation,
            }),
            2 => Some(Tableau {
                name: "Gauss s=2",
                s,
                a: vec![0.25, 0.25 - r3 / 6.0, 0.25 + r3 / 6.0, 0.25],
                b: vec![0.5, 0.5],
                c: vec![0.5 - r3 / 6.0, 0.5 + r3 / 6.0],
                order: 4,
                citation,
            }),
            3 => Some(Tableau {
                name: "Gauss s=3",
                s,
                a: vec![
                    5.0 / 36.0,
                    2.0 / 9.0 - r15 / 15.0,
                    5.0 / 36.0 - r15 / 30.0,
                    5.0 / 36.0 + r15 / 24.0,
                    2.0 / 9.0,
                    5.0 / 36.0 - r15 / 24.0,
                    5.0 / 36.0 + r15 / 30.0,
                    2.0 / 9.0 + r15 / 15.0,
                    5.0 / 36.0,
                ],
                b: vec![5.0 / 18.0, 4.0 / 9.0, 5.0 / 18.0],
                c: vec![0.5 - r15 / 10.0, 0.5, 0.5 + r15 / 10.0],
                order: 6,
                citation,
            }),
            _ => None,
        }
    }

    /// Radau IIA with `s = 1, 2, 3` stages (order 2s − 1, stiffly accurate: `b` is the
    /// last row of `A`, `c_s = 1`; s = 1 is implicit Euler): Hairer & Wanner, Solving ODEs
    /// II, §IV.5, Table 5.5 (s = 2) and Table 5.6 (s = 3).
    pub fn radau_iia(s: usize) -> Option<Tableau> {
        let r6 = 6f64.sqrt();
        let citation = "Ehle (1969); Hairer & Wanner, Solving ODEs II, §IV.5, Tables 5.5 and 5.6";
        let (name, a, c, order) = match s {
            1 => ("Radau IIA s=1 (implicit Euler)", vec![1.0], vec![1.0], 1),
            2 => (
                "Radau IIA s=2",
                vec![5.0 / 12.0, -1.0 / 12.0, 0.75, 0.25],
                vec![1.0 / 3.0, 1.0],
                3,
            ),
            3 => (
                "Radau IIA s=3",
                vec![
                    (88.0 - 7.0 * r6) / 360.0,
                    (296.0 - 169.0 * r6) / 1800.0,
                    (-2.0 + 3.0 * r6) / 225.0,
                    (296.0 + 169.0 * r6) / 1800.0,
                    (88.0 + 7.0 * r6) / 360.0,
                    (-2.0 - 3.0 * r6) / 225.0,
                    (16.0 - r6) / 36.0,
                    (16.0 + r6) / 36.0,
                    1.0 / 9.0,
                ],
                vec![(4.0 - r6) / 10.0, (4.0 + r6) / 10.0, 1.0],
                5,
            ),
            _ => return None,
        };
        let b = a[(s - 1) * s..].to_vec();
        Some(Tableau {
            name,
            s,
            a,
            b,
            c,
            order,
            citation,
        })
    }

    /// Lobatto IIIA with `s = 2, 3` stages (order 2s − 2; stiffly accurate, `a_1j = 0`):
    /// Hairer, Nørsett & Wanner, Solving ODEs I, §II.7 / Hairer & Wanner II, §IV.5,
    /// Table 5.7; Jay, SIAM J. Numer. Anal. 33 (1996).
    pub fn lobatto_iiia(s: usize) -> Option<Tableau> {
        let citation = "Hairer & Wanner, Solving ODEs II, §IV.5 (Lobatto IIIA); Jay, SIAM J. Numer. Anal. 33 (1996) 368–387";
        match s {
            2 => Some(Tableau {
                name: "Lobatto IIIA s=2",
                s,
                a: vec![0.0, 0.0, 0.5, 0.5],
                b: vec![0.5, 0.5],
                c: vec![0.0, 1.0],
                order: 2,
                citation,
            }),
            3 => Some(Tableau {
                name: "Lobatto IIIA s=3",
                s,
                a: vec![
                    0.0,
                    0.0,
                    0.0,
                    5.0 / 24.0,
                    1.0 / 3.0,
                    -1.0 / 24.0,
                    1.0 / 6.0,
                    2.0 / 3.0,
                    1.0 / 6.0,
                ],
                b: vec![1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0],
                c: vec![0.0, 0.5, 1.0],
                order: 4,
                citation,
            }),
            _ => None,
        }
    }

    /// Lobatto IIIB with `s = 2, 3` stages (order 2s − 2; last column of A zero), the
    /// partner of IIIA in the symplectic pair (same source).
    pub fn lobatto_iiib(s: usize) -> Option<Tableau> {
        let citation = "Hairer & Wanner, Solving ODEs II, §IV.5 (Lobatto IIIB); Jay, SIAM J. Numer. Anal. 33 (1996) 368–387";
        match s {
            2 => Some(Tableau {
                name: "Lobatto IIIB s=2",
                s,
                a: vec![0.5, 0.0, 0.5, 0.0],
                b: vec![0.5, 0.5],
                c: vec![0.0, 1.0],
                order: 2,
                citation,
            }),
            3 => Some(Tableau {
                name: "Lobatto IIIB s=3",
                s,
                a: vec![
                    1.0 / 6.0,
                    -1.0 / 6.0,
                    0.0,
                    1.0 / 6.0,
                    1.0 / 3.0,
                    0.0,
                    1.0 / 6.0,
                    5.0 / 6.0,
                    0.0,
                ],
                b: vec![1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0],
                c: vec![0.0, 0.5, 1.0],
                order: 4,
                citation,
            }),
            _ => None,
        }
    }

    /// Does `B(p)` hold to `tol`?
    pub fn b_condition(&self, p: u32, tol: f64) -> bool {
        (1..=p).all(|k| {
            let sum: f64 = (0..self.s)
                .map(|i| self.b[i] * self.c[i].powi(k as i32 - 1))
                .sum();
            (sum - 1.0 / k as f64).abs() <= tol
        })
    }

    /// Does `C(η)` hold to `tol`?
    pub fn c_condition(&self, eta: u32, tol: f64) -> bool {
        (1..=eta).all(|k| {
            (0..self.s).all(|i| {
                let sum: f64 = (0..self.s)
                    .map(|j| self.a(i, j) * self.c[j].powi(k as i32 - 1))
                    .sum();
                (sum - self.c[i].powi(k as i32) / k as f64).abs() <= tol
            })
        })
    }

    /// Does `D(ζ)` hold to `tol`?
    pub fn d_condition(&self, zeta: u32, tol: f64) -> bool {
        (1..=zeta).all(|k| {
            (0..self.s).all(|j| {
                let sum: f64 = (0..self.s)
                    .map(|i| self.b[i] * self.c[i].powi(k as i32 - 1) * self.a(i, j))
                    .sum();
                (sum - self.b[j] * (1.0 - self.c[j].powi(k as i32)) / k as f64).abs() <= tol
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gauss with s stages satisfies B(2s), C(s), D(s), hence order 2s (Butcher's
    /// theorem), and fails B(2s + 1) (the order is not higher).
    #[test]
    fn gauss_order_conditions() {
        for s in 1..=3 {
            let t = Tableau::gauss(s).unwrap();
            let p = 2 * s as u32;
            assert!(
                t.b_condition(p, 1e-15)
                    && t.c_condition(s as u32, 1e-15)
                    && t.d_condition(s as u32, 1e-15),
                "{}",
                t.name
            );
            assert!(
                !t.b_condition(p + 1, 1e-12),
                "{} would have order > {p}",
                t.name
            );
            assert_eq!(t.order, p);
            // Consistency: Σ b = 1, row sums of A = c.
            assert!((t.b.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        }
        assert!(Tableau::gauss(4).is_none());
    }

    /// Radau IIA: B(2s−1), C(s), D(s−1), hence order 2s − 1 (HW II, §IV.5), and not
    /// B(2s).
    #[test]
    fn radau_iia_order_conditions() {
        for s in 1..=3 {
            let t = Tableau::radau_iia(s).unwrap();
            let p = 2 * s as u32 - 1;
            assert!(
                t.b_condition(p, 1e-15)
                    && t.c_condition(s as u32, 1e-15)
                    && t.d_condition(s as u32 - 1, 1e-15),
                "{}",
                t.name
            );
            assert!(
                !t.b_condition(p + 1, 1e-12),
                "{} would have order > {p}",
                t.name
            );
            assert_eq!(t.order, p);
            assert!(
                (t.c[s - 1] - 1.0).abs() < 1e-15,
                "{}: c_s = {}",
                t.name,
                t.c[s - 1]
            );
        }
        assert!(Tableau::radau_iia(4).is_none());
    }

    /// Lobatto IIIA: B(2s−2), C(s), D(s−2); IIIB: B(2s−2), C(s−2), D(s) (Hairer & Wanner
    /// II, §IV.5); both of order 2s − 2, and the pair satisfies b_i â_ij + b_j a_ji = b_i b_j
    /// (the symplecticity condition of partitioned RK, HLW GNI Thm. VI.4.6).
    #[test]
    fn lobatto_order_conditions_and_symplectic_pair() {
        for s in 2..=3 {
            let (a, b) = (
                Tableau::lobatto_iiia(s).unwrap(),
                Tableau::lobatto_iiib(s).unwrap(),
            );
            let p = 2 * s as u32 - 2;
            assert!(
                a.b_condition(p, 1e-15)
                    && a.c_condition(s as u32, 1e-15)
                    && a.d_condition(s as u32 - 2, 1e-15),
                "{}",
                a.name
            );
            assert!(
                b.b_condition(p, 1e-15)
                    && b.c_condition(s as u32 - 2, 1e-15)
                    && b.d_condition(s as u32, 1e-15),
                "{}",
                b.name
            );
            assert!(!a.b_condition(p + 1, 1e-12));
            for i in 0..s {
                for j in 0..s {
                    let lhs = a.b[i] * b.a(i, j) + a.b[j] * a.a(j, i);
                    assert!(
                        (lhs - a.b[i] * a.b[j]).abs() < 1e-15,
                        "pair condition at ({i}, {j})"
                    );
                }
            }
        }
    }
}
