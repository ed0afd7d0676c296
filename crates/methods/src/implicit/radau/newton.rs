//! Radau IIA's two Newton systems `(c B − J) x = r` on the first-order form
//! ([`crate::dae_form`]), solved through their **second-order structure**, as RADAU5 does
//! for systems whose first `M1` components satisfy `y_i' = y_{i+M2}` (its `IWORK(9)`,
//! `IWORK(10)`; Hairer & Wanner, *Solving ODEs II*, 2nd ed. 1996, §IV.8 and the
//! `radau5.f` documentation): here `M1 = 2n`, `M2 = n` (`q' = v`, `v' = a`), so only the
//! `n + m` algebraic rows are factored.
//!
//! With `y = (q, v, a, λ)`, the rows of `q' = v` and `v' = a` read `c x_q − x_v = r_q`
//! and `c x_v − x_a = r_v`, so
//!
//! ```text
//! x_v = (r_v + x_a) / c,   x_q = (r_q + x_v) / c = s + x_a / c²,
//! t = r_v / c,             s = (r_q + t) / c,
//! ```
//!
//! and the algebraic rows `−J_q x_q − J_v x_v − J_a x_a − J_λ x_λ = r_alg` become the
//! `(n + m)`-square system
//!
//! ```text
//! [ −(J_a + J_v / c + J_q / c²) | −J_λ ] (x_a, x_λ) = r_alg + J_q s + J_v t
//! ```
//!
//! (`J_v` and `J_q` only have the columns of `a`'s partners). Its LU costs
//! `((n + m) / (3n + m))³` of the full one: 1/9 on Andrews' squeezer (13 against 27).
//! `c = γ/h` is real, `c = (α_k + iβ_k)/h` complex (one per complex eigenvalue pair of
//! `A⁻¹`: one for s = 3, two for s = 5, three for s = 7); the complex systems are
//! factored in split real/imaginary storage ([`DenseComplexLu`]).

use driftlab_solver::dense::{DenseComplexLu, DenseLu};
use driftlab_solver::SolverError;

/// A complex number as `(re, im)`.
type Complex = (f64, f64);

fn mul((a, b): Complex, (c, d): Complex) -> Complex {
    (a * c - b * d, a * d + b * c)
}

fn inverse((a, b): Complex) -> Complex {
    let norm = a * a + b * b;
    (a / norm, -b / norm)
}

/// The algebraic rows of the form's Jacobian, in compact row-major blocks: `J_q`, `J_v`
/// (`(n + m) × n`) and `J_a|J_λ` (`(n + m)`-square).
struct AlgebraicRows {
    n: usize,
    rows: usize,
    jq: Vec<f64>,
    jv: Vec<f64>,
    ja: Vec<f64>,
}

impl AlgebraicRows {
    fn new(n: usize, m: usize) -> Self {
        let rows = n + m;
        Self {
            n,
            rows,
            jq: vec![0.0; rows * n],
            jv: vec![0.0; rows * n],
            ja: vec![0.0; rows * rows],
        }
    }

    /// Copy the blocks out of the row-major `(3n + m)`-square Jacobian `jac`.
    fn load(&mut self, jac: &[f64]) {
        let (n, rows) = (self.n, self.rows);
        let dim = 2 * n + rows;
        for i in 0..rows {
            let row = &jac[(2 * n + i) * dim..(2 * n + i + 1) * dim];
            self.jq[i * n..(i + 1) * n].copy_from_slice(&row[..n]);
            self.jv[i * n..(i + 1) * n].copy_from_slice(&row[n..2 * n]);
            self.ja[i * rows..(i + 1) * rows].copy_from_slice(&row[2 * n..]);
        }
    }

    /// Reduced matrix entry `(i, k)` for `1/c = u` and `1/c² = u2` (real parts, or one
    /// part of a complex `u` with `ja_weight` 1 for the real and 0 for the imaginary part):
    /// `−ja_weight·J_a − J_v u − J_q u2`, the last two for `k < n` only.
    fn reduced(&self, i: usize, k: usize, (ja_weight, u, u2): (f64, f64, f64)) -> f64 {
        let a = -ja_weight * self.ja[i * self.rows + k];
        if k < self.n {
            let (jq, jv) = (self.jq[i * self.n + k], self.jv[i * self.n + k]);
            a - jv * u - jq * u2
        } else {
            a
        }
    }

    /// `r_alg + J_q s + J_v t` for algebraic row `i`.
    fn reduce_rhs(&self, i: usize, r: f64, s: &[f64], t: &[f64]) -> f64 {
        let (jq, jv) = (
            &self.jq[i * self.n..(i + 1) * self.n],
            &self.jv[i * self.n..(i + 1) * self.n],
        );
        let mut x = r;
        for j in 0..self.n {
            x += jq[j] * s[j] + jv[j] * t[j];
        }
        x
    }
}

/// The factored reduced Newton matrices of one `h` and their work arrays.
pub(crate) struct ReducedNewton {
    n: usize,
    blocks: AlgebraicRows,
    real: DenseLu,
    complex: Vec<DenseComplexLu>,
    /// `c` of the real system (`γ/h`) and of the complex ones (`(α_k + iβ_k)/h`).
    c_real: f64,
    c_complex: Vec<Complex>,
    /// Reduced right-hand sides (real and imaginary parts), `n + m`.
    rhs: [Vec<f64>; 2],
    /// `s` and `t` of the module documentation (real and imaginary parts), `n`.
    s: [Vec<f64>; 2],
    t: [Vec<f64>; 2],
}

impl ReducedNewton {
    /// Work arrays for a system with `n` coordinates and `m` constraints, and `pairs`
    /// complex systems.
    pub(crate) fn new(n: usize, m: usize, pairs: usize) -> Self {
        let z = |k| [vec![0.0; k], vec![0.0; k]];
        Self {
            n,
            blocks: AlgebraicRows::new(n, m),
            real: DenseLu::new(n + m),
            complex: (0..pairs).map(|_| DenseComplexLu::new(n + m)).collect(),
            c_real: f64::NAN,
            c_complex: vec![(f64::NAN, f64::NAN); pairs],
            rhs: z(n + m),
            s: z(n),
            t: z(n),
        }
    }

    /// Factor the real system for `c = c_real` and the complex one for `c = c_complex`
    /// with the row-major Jacobian `jac` of the form (kept for the solves).
    pub(crate) fn factor(
        &mut self, jac: &[f64], c_real: f64, c_complex: &[Complex],
    ) -> Result<(), SolverError> {
        self.c_real = f64::NAN;
        self.blocks.load(jac);
        let blocks = &self.blocks;
        let u = 1.0 / c_real;
        self.real
            .refactor(|i, k| blocks.reduced(i, k, (1.0, u, u * u)))?;
        for (lu, &c) in self.complex.iter_mut().zip(c_complex) {
            let u = inverse(c);
            let u2 = mul(u, u);
            lu.refactor(|i, k| {
                (
                    blocks.reduced(i, k, (1.0, u.0, u2.0)),
                    blocks.reduced(i, k, (0.0, u.1, u2.1)),
                )
            })?;
        }
        self.c_complex.copy_from_slice(c_complex);
        self.c_real = c_real;
        Ok(())
    }

    /// Overwrite `r` with `(γ/h B − J)⁻¹ r`.
    pub(crate) fn solve_real(&mut self, r: &mut [f64]) -> Result<(), SolverError> {
        let (n, c) = (self.n, self.c_real);
        let ([s, _], [t, _]) = (&mut self.s, &mut self.t);
        for j in 0..n {
            t[j] = r[n + j] / c;
            s[j] = (r[j] + t[j]) / c;
        }
        let rhs = &mut self.rhs[0];
        for (i, x) in rhs.iter_mut().enumerate() {
            *x = self.blocks.reduce_rhs(i, r[2 * n + i], s, t);
        }
        self.real.solve(rhs)?;
        r[2 * n..].copy_from_slice(rhs);
        for j in 0..n {
            r[n + j] = (r[n + j] + r[2 * n + j]) / c;
            r[j] = (r[j] + r[n + j]) / c;
        }
        Ok(())
    }

    /// Overwrite `(re, im)` with `((α_k + iβ_k)/h B − J)⁻¹ (re + i im)`.
    pub(crate) fn solve_complex(
        &mut self, k: usize, re: &mut [f64], im: &mut [f64],
    ) -> Result<(), SolverError> {
        let (n, u) = (self.n, inverse(self.c_complex[k]));
        let ([s_re, s_im], [t_re, t_im]) = (&mut self.s, &mut self.t);
        for j in 0..n {
            (t_re[j], t_im[j]) = mul((re[n + j], im[n + j]), u);
            (s_re[j], s_im[j]) = mul((re[j] + t_re[j], im[j] + t_im[j]), u);
        }
        let [rhs_re, rhs_im] = &mut self.rhs;
        for i in 0..rhs_re.len() {
            rhs_re[i] = self.blocks.reduce_rhs(i, re[2 * n + i], s_re, t_re);
            rhs_im[i] = self.blocks.reduce_rhs(i, im[2 * n + i], s_im, t_im);
        }
        self.complex[k].solve(rhs_re, rhs_im)?;
        re[2 * n..].copy_from_slice(rhs_re);
        im[2 * n..].copy_from_slice(rhs_im);
        for j in 0..n {
            (re[n + j], im[n + j]) = mul((re[n + j] + re[2 * n + j], im[n + j] + im[2 * n + j]), u);
            (re[j], im[j]) = mul((re[j] + re[n + j], im[j] + im[n + j]), u);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Jacobian with the form's structure (`q' = v`, `v' = a` rows; algebraic rows with
    /// `J_q`, `J_v` and `J_a` dense, `J_λ` in the dynamic rows, only `J_q` in the
    /// constraint rows), entries from a fixed sequence.
    fn structured_jacobian(n: usize, m: usize) -> Vec<f64> {
        let dim = 3 * n + m;
        let mut seed = 99u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut jac = vec![0.0; dim * dim];
        for k in 0..n {
            jac[k * dim + n + k] = 1.0;
            jac[(n + k) * dim + 2 * n + k] = 1.0;
        }
        for i in 2 * n..dim {
            let dynamic = i < 3 * n;
            for j in 0..dim {
                let present = if dynamic { true } else { j < n };
                let diagonal = if j == i && dynamic { 4.0 } else { 0.0 };
                if present {
                    jac[i * dim + j] = next() + diagonal;
                }
            }
        }
        jac
    }

    /// The reduced solves equal the full `(3n + m)`-square systems' (dense LU of
    /// `c B − J`, `B = diag(I, I, 0, 0)`) to round-off, for the real `c` and every complex
    /// `c` of Radau IIA with s = 3, 5 and 7 stages, at a small and a large `h`. Both are
    /// LU solutions, each within about `cond · ε` of the exact one (the gaps measured
    /// between the two: 2e-15 to 2.5e-12), so `AGREE = 1e-11` separates round-off from a
    /// wrong block or sign (an O(1) gap).
    #[test]
    fn reduced_solves_equal_the_full_systems() -> Result<(), SolverError> {
        const AGREE: f64 = 1e-11;
        let (n, m) = (7, 6);
        let dim = 3 * n + m;
        let jac = structured_jacobian(n, m);
        let r: Vec<f64> = (0..dim).map(|i| (i as f64 * 0.7).sin()).collect();
        let r_im: Vec<f64> = (0..dim).map(|i| (i as f64 * 1.3).cos()).collect();
        let shifted = |shift: f64| -> Vec<f64> {
            (0..dim * dim)
                .map(|k| {
                    let (i, j) = (k / dim, k % dim);
                    -jac[k] + if i == j && i < 2 * n { shift } else { 0.0 }
                })
                .collect()
        };
        let gap = |x: &[f64], y: &[f64]| {
            let scale = y.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            x.iter()
                .zip(y)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
                / scale
        };
        for s in [3, 5, 7] {
            let tab = super::super::coefficients::RadauTableau::with_stages(s).expect("tabulated");
            for h in [1e-4, 0.04] {
                let shifts: Vec<Complex> = tab.pairs.iter().map(|(a, b)| (a / h, b / h)).collect();
                let c = tab.gamma / h;
                let mut reduced = ReducedNewton::new(n, m, shifts.len());
                reduced.factor(&jac, c, &shifts)?;
                let (mut full, mut mine) = (r.clone(), r.clone());
                DenseLu::factor(dim, &shifted(c))?.solve(&mut full)?;
                reduced.solve_real(&mut mine)?;
                let g = gap(&mine, &full);
                assert!(g < AGREE, "s = {s}, h = {h}: real relative gap {g:e}");
                for (k, &(ca, cb)) in shifts.iter().enumerate() {
                    let im_part: Vec<f64> = (0..dim * dim)
                        .map(|q| {
                            if q / dim == q % dim && q / dim < 2 * n {
                                cb
                            } else {
                                0.0
                            }
                        })
                        .collect();
                    let (mut full_re, mut full_im) = (r.clone(), r_im.clone());
                    DenseComplexLu::factor(dim, &shifted(ca), &im_part)?
                        .solve(&mut full_re, &mut full_im)?;
                    let (mut re, mut im) = (r.clone(), r_im.clone());
                    reduced.solve_complex(k, &mut re, &mut im)?;
                    let g = gap(&re, &full_re).max(gap(&im, &full_im));
                    assert!(
                        g < AGREE,
                        "s = {s}, h = {h}, pair {k}: complex relative gap {g:e}"
                    );
                }
            }
        }
        Ok(())
    }
}
