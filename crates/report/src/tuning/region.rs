//! The linear error maps of the two Baumgarte updates and their stability regions,
//! derived here once and used by the guide's tables.
//!
//! A constraint error z = Φ under the law `z̈ = −2αż − β²z` (α = ξω_n, β = ω_n) is
//! advanced by the method's update. In the scaled coordinates (z, hż), with the two
//! dimensionless numbers `a = ξω_n h` and `b = ω_n h`:
//!
//! ```text
//! Taylor (driftlab `baumgarte`):   z⁺ = z + hż + ½h²z̈,  ż⁺ = ż + hz̈
//!   A = [[1 − b²/2, 1 − a], [−b², 1 − 2a]]
//!   p(λ) = λ² − (2 − 2a − b²/2)λ + (1 − 2a + b²/2):  p(1) = b², p(−1) = 4(1 − a)
//! semi-implicit Euler:             ż⁺ = ż + hz̈,  z⁺ = z + hż⁺
//!   A = [[1 − b², 1 − 2a], [−b², 1 − 2a]]
//!   p(λ) = λ² − (2 − 2a − b²)λ + (1 − 2a):          p(1) = b², p(−1) = 4 − 4a − b²
//! ```
//!
//! Jury's conditions for a real quadratic (p(1) > 0, p(−1) > 0, |p(0)| < 1) give the
//! regions where both eigenvalues lie strictly inside the unit circle:
//!
//! ```text
//! Taylor:  b > 0,  b²/4 < a < 1          ⇔  ω_n h/4 < ξ < 1/(ω_n h)   (needs ω_n h < 2)
//! Euler:   b > 0,  0 < a < 1 − b²/4      ⇔  0 < ξω_n h < 1 − (ω_n h)²/4
//! ```
//!
//! On the boundary an eigenvalue has modulus exactly 1 (marginal: bounded, not damped):
//! * Taylor, a = 1 (ξω_n h = 1), 0 < b < 2: λ ∈ {−1, 1 − b²/2}. The position row of A is
//!   then (1 − b²/2, 0): the position error decays on its own, `z⁺ = (1 − b²/2)z`, and only
//!   the velocity error keeps the mode λ = −1 (its sign flips every step, its size stays).
//! * Taylor, a = b²/4 (ξ = ω_n h/4), 0 < b < 2: p(0) = 1 and the discriminant
//!   b²(b² − 4) < 0, a complex pair of modulus 1: position and velocity oscillate undamped.
//! * Euler, a = 0 (ξ = 0): a complex pair of modulus 1 for 0 < b < 2 (symplectic Euler
//!   of an undamped oscillator); a = 1 − b²/4: λ ∈ {−1, 2a − 1}.
//! * b ≥ 2 has no stable ξ in either map; at b = 2 on the boundary both eigenvalues are −1
//!   with one eigenvector (a Jordan block: the error grows linearly), so it is unstable.

/// Where a cell lies relative to the stability region of a linear error map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// Both eigenvalues strictly inside the unit circle: the error decays.
    Stable,
    /// On the boundary: an eigenvalue of modulus exactly 1, simple; the error stays
    /// bounded without decaying (see the module doc for which part of it).
    Marginal,
    /// An eigenvalue outside the unit circle (or a Jordan block on it): the error grows.
    Unstable,
}

impl Region {
    /// The word the guide's tables print.
    pub fn word(self) -> &'static str {
        match self {
            Region::Stable => "stable",
            Region::Marginal => "marginal",
            Region::Unstable => "unstable",
        }
    }
}

/// The update that advances the error law: the catalog's Taylor step or the
/// semi-implicit Euler step a peer row may name (`"scheme": "euler"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// `z⁺ = z + hż + ½h²z̈`, `ż⁺ = ż + hz̈` (driftlab `baumgarte`).
    Taylor,
    /// `ż⁺ = ż + hz̈`, `z⁺ = z + hż⁺`.
    Euler,
}

/// Relative width of the boundary: a cell whose a = ξω_n h lies within this fraction of
/// a boundary value is on it. The grids' decimal cells (ξ = 1, ω_n = 1000, h = 1e-3)
/// land on a boundary only up to rounding of the product (a few ulp, ~1e-16).
const ON_BOUNDARY: f64 = 1e-9;

/// Whether x equals the boundary value y up to [`ON_BOUNDARY`] (exactly, for y = 0).
fn on(x: f64, y: f64) -> bool {
    (x - y).abs() <= ON_BOUNDARY * y.abs()
}

/// The dimensionless numbers (a, b) = (ξω_n h, ω_n h) of a cell.
pub fn numbers(xi: f64, wn: f64, h: f64) -> (f64, f64) {
    (xi * wn * h, wn * h)
}

/// The update matrix A of `scheme` in the scaled coordinates (z, hż) (module doc).
pub fn matrix(scheme: Scheme, a: f64, b: f64) -> [[f64; 2]; 2] {
    let b2 = b * b;
    match scheme {
        Scheme::Taylor => [[1.0 - 0.5 * b2, 1.0 - a], [-b2, 1.0 - 2.0 * a]],
        Scheme::Euler => [[1.0 - b2, 1.0 - 2.0 * a], [-b2, 1.0 - 2.0 * a]],
    }
}

/// Spectral radius of a real 2 × 2 matrix: the larger |λ| of λ² − tr λ + det = 0.
pub fn spectral_radius(m: [[f64; 2]; 2]) -> f64 {
    let (tr, det) = (m[0][0] + m[1][1], m[0][0] * m[1][1] - m[0][1] * m[1][0]);
    let disc = tr * tr / 4.0 - det;
    if disc >= 0.0 {
        (tr / 2.0).abs() + disc.sqrt()
    } else {
        det.sqrt()
    }
}

/// The region of (a, b) = (ξω_n h, ω_n h) for `scheme` (Jury's conditions, module doc):
/// strictly inside, on a boundary with 0 < b < 2, or outside.
pub fn region(scheme: Scheme, a: f64, b: f64) -> Region {
    // b ≥ 2 (up to the boundary's width: the corner b = 2, a = 1 is a Jordan block).
    if !(a.is_finite() && b.is_finite()) || b <= 0.0 || b >= 2.0 - 2.0 * ON_BOUNDARY || a < 0.0 {
        return Region::Unstable;
    }
    let (lo, hi) = match scheme {
        Scheme::Taylor => (b * b / 4.0, 1.0),
        Scheme::Euler => (0.0, 1.0 - b * b / 4.0),
    };
    if on(a, lo) || on(a, hi) {
        Region::Marginal
    } else if lo < a && a < hi {
        Region::Stable
    } else {
        Region::Unstable
    }
}

/// The Taylor update's region for a cell (ξ, ω_n, h).
pub fn taylor_region(xi: f64, wn: f64, h: f64) -> Region {
    let (a, b) = numbers(xi, wn, h);
    region(Scheme::Taylor, a, b)
}

/// The semi-implicit Euler update's region for a cell (ξ, ω_n, h).
pub fn euler_region(xi: f64, wn: f64, h: f64) -> Region {
    let (a, b) = numbers(xi, wn, h);
    region(Scheme::Euler, a, b)
}

/// How much the linear map can amplify an error over `steps` steps: ρ(A)^steps.
pub fn growth(scheme: Scheme, a: f64, b: f64, steps: f64) -> f64 {
    spectral_radius(matrix(scheme, a, b)).powf(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both regions against the spectral radius of their update matrix on a grid of
    /// (ξ, ω_n h) away from the boundary (|ρ − 1| > 1e-9), and the radius 1 on it.
    #[test]
    fn the_regions_are_those_of_the_update_matrices() {
        let mut checked = 0;
        for i in 0..60 {
            for j in 1..80 {
                let (xi, b) = (0.01 * 1.1f64.powi(i), 0.05 * j as f64);
                for scheme in [Scheme::Taylor, Scheme::Euler] {
                    let rho = spectral_radius(matrix(scheme, xi * b, b));
                    let said = region(scheme, xi * b, b);
                    if (rho - 1.0).abs() > 1e-9 {
                        let expect = if rho < 1.0 {
                            Region::Stable
                        } else {
                            Region::Unstable
                        };
                        assert_eq!(said, expect, "{scheme:?} ξ = {xi}, ω_n h = {b}, ρ = {rho}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 9000, "{checked}");
        for b in [0.1, 0.5, 1.0, 1.5, 1.9] {
            for (scheme, a) in [
                (Scheme::Taylor, 1.0),
                (Scheme::Taylor, b * b / 4.0),
                (Scheme::Euler, 1.0 - b * b / 4.0),
                (Scheme::Euler, 0.0),
            ] {
                let rho = spectral_radius(matrix(scheme, a, b));
                assert!(
                    (rho - 1.0).abs() < 1e-12,
                    "{scheme:?} a = {a}, b = {b}: {rho}"
                );
                assert_eq!(region(scheme, a, b), Region::Marginal);
            }
        }
    }

    /// Known cells of the maps (baumgarte-map's grid at h = 1e-3 and 1e-2): inside, on
    /// each boundary, outside, and where the two boundaries meet (ω_n h = 2).
    #[test]
    fn known_cells_are_classified_as_the_derivation_says() {
        use Region::*;
        let cases = [
            // (ξ, ω_n, h, Taylor region): a = ξω_n h, b = ω_n h
            (0.3, 1000.0, 1e-3, Stable), // a = 0.3, b = 1: 0.25 < 0.3 < 1
            (3.0, 300.0, 1e-3, Stable),  // a = 0.9, b = 0.3
            (1.0, 1000.0, 1e-3, Marginal), // a = 1: on ξω_n h = 1
            (10.0, 100.0, 1e-3, Marginal), // a = 1
            (1.0, 100.0, 1e-2, Marginal), // a = 1
            (0.25, 1000.0, 1e-3, Marginal), // a = b²/4 = 0.25: on ξ = ω_n h/4
            (0.1, 1000.0, 1e-2, Unstable), // a = 1 but b = 10 > 2: λ = 1 − b²/2 = −49
            (0.5, 2000.0, 1e-3, Unstable), // a = 1, b = 2: double λ = −1, a Jordan block
            (0.01, 100.0, 1e-3, Unstable), // a = 0.001 < b²/4 = 0.0025
            (3.0, 1000.0, 1e-3, Unstable), // a = 3 > 1
            (3.0, 1000.0, 5e-4, Unstable), // cassie-loops: a = 1.5 > 1
            (1.0, 1000.0, 5e-4, Stable), // cassie-loops: a = 0.5, b = 0.5
        ];
        for (xi, wn, h, expect) in cases {
            assert_eq!(
                taylor_region(xi, wn, h),
                expect,
                "ξ = {xi}, ω_n = {wn}, h = {h}"
            );
        }
        // Euler has no lower bound on ξ and the undamped cell is marginal below ω_n h = 2.
        assert_eq!(euler_region(0.01, 100.0, 1e-3), Stable);
        assert_eq!(euler_region(0.0, 1000.0, 1e-3), Marginal);
        assert_eq!(euler_region(0.0, 2100.0, 1e-3), Unstable);
        assert_eq!(euler_region(1.0, 1000.0, 1e-3), Unstable); // a = 1 > 1 − 1/4
    }

    /// On ξω_n h = 1 the Taylor map's position row drops the velocity error:
    /// z⁺ = (1 − b²/2) z, so the position error decays while λ = −1 stays in ż.
    #[test]
    fn on_the_upper_line_the_position_error_decays_alone() {
        for b in [0.1, 0.3, 1.0, 1.414] {
            let m = matrix(Scheme::Taylor, 1.0, b);
            assert!(m[0][1].abs() < 1e-300, "{m:?}");
            assert!((m[0][0] - (1.0 - b * b / 2.0)).abs() < 1e-15 && m[0][0].abs() < 1.0);
            assert!((m[1][1] + 1.0).abs() < 1e-15, "{m:?}");
        }
        // Growth over a run: ξ = 0.01, ω_n = 100, h = 1e-3 (a = 0.001, b = 0.1) has
        // ρ² = det A = 1 − 2a + b²/2 = 1.003, so 5000 steps amplify by 1.003^2500 ≈ 1.8e3.
        let g = growth(Scheme::Taylor, 0.001, 0.1, 5000.0);
        assert!((g / 1.003f64.powf(2500.0) - 1.0).abs() < 1e-9, "{g}");
    }
}
