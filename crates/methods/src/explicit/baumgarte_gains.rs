//! Baumgarte's gains `(α, β)` of `Φ̈ + 2αΦ̇ + β²Φ = 0` and their damping-ratio and
//! natural-frequency form (`α = ξ ω_n`, `β = ω_n`; Baumgarte, CMAME 1, 1972): the leaf
//! that the method (`baumgarte.rs`) and its gain history (`baumgarte_history.rs`) share.

/// Resolved gains `(α, β)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gains {
    /// α = ξ ω_n.
    pub alpha: f64,
    /// β = ω_n.
    pub beta: f64,
}

impl Gains {
    /// From damping ratio and natural frequency: `α = ξ ω_n`, `β = ω_n`.
    pub fn from_xi_omega(xi: f64, omega_n: f64) -> Self {
        Self {
            alpha: xi * omega_n,
            beta: omega_n,
        }
    }
    /// Damping ratio `ξ = α/β`.
    pub fn xi(&self) -> f64 {
        self.alpha / self.beta
    }
    /// Natural frequency `ω_n = β`.
    pub fn omega_n(&self) -> f64 {
        self.beta
    }
}
