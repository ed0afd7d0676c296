//! Jacobi elliptic functions and the complete elliptic integral of the first kind, by
//! the arithmetic–geometric mean (Abramowitz & Stegun 1964, §16.4 and §17.6).
//!
//! All functions take the modulus `k` (not the parameter `m = k²`), `0 ≤ k < 1`; the
//! `_c` forms also take its complement `k′ = √(1 − k²)` as the caller computed it. Near
//! `k = 1` (a pendulum released near the upright) `1 − k²` cancels: with `k` rounded to
//! a relative ε, `k′` from `√(1 − k²)` carries a relative error ε/k′² (1.5e-4 at
//! k′ = 8.7e-7, a release at 179.9999°), and `K(k) ≈ ln(4/k′)` with it; a caller that
//! knows `k′` directly (the pendulum: `cos(θ₀/2)` from the complement angle) passes it.

use std::f64::consts::PI;

/// Complete elliptic integral of the first kind `K(k) = π / (2 AGM(1, √(1 − k²)))`
/// (A&S 17.6.1–17.6.4).
pub fn complete_k(k: f64) -> f64 {
    complete_k_c(complement(k))
}

/// `k′ = √((1 − k)(1 + k))`: the factored form loses no more than an ε relative to `1 − k`
/// (`1 − k²` would lose `k²`'s rounding as well).
pub fn complement(k: f64) -> f64 {
    ((1.0 - k) * (1.0 + k)).max(0.0).sqrt()
}

/// `K` from the complementary modulus `k′` (A&S 17.6.1–17.6.4: `K = π / (2 AGM(1, k′))`).
pub fn complete_k_c(kc: f64) -> f64 {
    let (mut a, mut b) = (1.0_f64, kc);
    for _ in 0..64 {
        if (a - b).abs() <= f64::EPSILON * a {
            break;
        }
        let an = 0.5 * (a + b);
        b = (a * b).sqrt();
        a = an;
    }
    PI / (2.0 * a)
}

/// `(sn, cn, dn)(u, k)` by the descending Landen / AGM scheme (A&S 16.4.3):
/// `a₀ = 1, b₀ = √(1−k²), c₀ = k`, `a_{n+1} = (a_n + b_n)/2`, `b_{n+1} = √(a_n b_n)`,
/// `c_{n+1} = (a_n − b_n)/2` until `c_N ≈ 0`; `φ_N = 2ᴺ a_N u`,
/// `sin(2φ_{n−1} − φ_n) = (c_n / a_n) sin φ_n`; then `sn = sin φ₀`, `cn = cos φ₀`,
/// `dn = √(1 − k² sn²)`. The argument is first reduced modulo the real period
/// `4K`.
pub fn sn_cn_dn(u: f64, k: f64) -> (f64, f64, f64) {
    sn_cn_dn_c(u, k, complement(k))
}

/// [`sn_cn_dn`] with the complementary modulus `kc = k′` given: the AGM starts from
/// `b₀ = k′`, and `dn = √(k′² + k² cn²)` (the same as `√(1 − k² sn²)`, without its
/// cancellation near `k sn = ±1`).
pub fn sn_cn_dn_c(u: f64, k: f64, kc: f64) -> (f64, f64, f64) {
    if k == 0.0 {
        return (u.sin(), u.cos(), 1.0);
    }
    let period = 4.0 * complete_k_c(kc);
    let u = u - period * (u / period).round();
    let mut a = [0.0_f64; 32];
    let mut c = [0.0_f64; 32];
    a[0] = 1.0;
    let mut b = kc;
    c[0] = k;
    let mut n = 0;
    // Stop once c_n is below round-off relative to a_n: the next c would be rounding
    // noise of a_n − b_n (≈ 1e-16, never below an absolute 1e-17), and iterating to the
    // cap n = 31 made φ_N = 2³¹ a_N u ≈ 1e10, whose sines take glibc's slow
    // large-argument reduction (a third of a pendulum run's time went into the exact
    // solution).
    while c[n].abs() > f64::EPSILON * a[n] && n < 31 {
        a[n + 1] = 0.5 * (a[n] + b);
        c[n + 1] = 0.5 * (a[n] - b);
        b = (a[n] * b).sqrt();
        n += 1;
    }
    let mut phi = (1u64 << n) as f64 * a[n] * u;
    for j in (1..=n).rev() {
        phi = 0.5 * (phi + (c[j] / a[j] * phi.sin()).asin());
    }
    let (s, cc) = phi.sin_cos();
    // dn > 0 for real u and 0 ≤ k < 1, so dn = √(1 − k² sn²) = √(k′² + k² cn²); this
    // avoids the 0/0 of A&S's cos φ₀ / cos(φ₁ − φ₀) near u = K, and the second form the
    // cancellation of the first near k sn = ±1.
    (s, cc, (kc * kc + k * k * cc * cc).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_of_lemniscatic_modulus() {
        // K(1/√2) = Γ(1/4)² / (4 √π) = 1.854074677301372… (A&S Table 17.1, m = 0.5).
        let k = complete_k(std::f64::consts::FRAC_1_SQRT_2);
        assert!((k - 1.854_074_677_301_372).abs() < 2e-15, "K = {k}");
        assert!((complete_k(0.0) - PI / 2.0).abs() < 1e-15);
    }

    #[test]
    fn identities_and_special_values() {
        for &k in &[0.1, 0.5, std::f64::consts::FRAC_1_SQRT_2, 0.9, 0.985, 0.999] {
            let kk = complete_k(k);
            let (s, c, d) = sn_cn_dn(kk, k);
            let dk = (1.0 - k * k).sqrt();
            assert!(
                (s - 1.0).abs() < 1e-14 && c.abs() < 1e-13 && (d - dk).abs() < 1e-13,
                "k {k}: sn {s} cn {c:e} dn {d} vs {dk}"
            );
            // Half-period values (A&S 16.5.2): sn(K/2) = 1/√(1 + k′), cn(K/2) = √(k′/(1 + k′)).
            let (s, c, _) = sn_cn_dn(0.5 * kk, k);
            let (s_want, c_want) = (1.0 / (1.0 + dk).sqrt(), (dk / (1.0 + dk)).sqrt());
            assert!(
                (s - s_want).abs() < 4e-16 && (c - c_want).abs() < 1e-15,
                "k {k}: sn(K/2) = {s} vs {s_want}, cn(K/2) = {c} vs {c_want}"
            );
            for i in 0..50 {
                let u = -7.0 + 0.37 * i as f64;
                let (s, c, d) = sn_cn_dn(u, k);
                assert!((s * s + c * c - 1.0).abs() < 1e-14);
                assert!((d * d + k * k * s * s - 1.0).abs() < 1e-14);
                // d sn / du = cn dn (central difference)
                let e = 1e-5;
                let ds = (sn_cn_dn(u + e, k).0 - sn_cn_dn(u - e, k).0) / (2.0 * e);
                assert!((ds - c * d).abs() < 1e-8, "k {k} u {u}: {ds} vs {}", c * d);
            }
        }
    }
}
