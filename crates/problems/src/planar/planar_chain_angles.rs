//! `planar-chain-angles`: the mechanism of `planar-chain` (N point masses m on massless
//! rods of length ℓ, the first pinned) in **reduced (joint-space) coordinates**, the
//! absolute angles θ_i of the rods from the downward vertical — an ODE with no constraint
//! rows, to compare state-space integration with the maximal-coordinate DAE on the same
//! mechanism (seed 001 §3.12 "选择合适的坐标系（最大坐标vs约简坐标）"; N = 1 is the
//! pendulum, with its exact solution).
//!
//! ```text
//! p_k = Σ_{i≤k} ℓ (sin θ_i, −cos θ_i),      a_ij = m ℓ² (N − max(i, j))   (0-based)
//! M_ij(θ) = a_ij cos(θ_i − θ_j)
//! f_i(θ, θ') = −Σ_j a_ij sin(θ_i − θ_j) θ_j'² − m g ℓ (N − i) sin θ_i
//! H = ½ θ'ᵀ M(θ) θ' − m g ℓ Σ_i (N − i) cos θ_i
//! ```
//!
//! from Lagrange's equations with `T = ½ m Σ_k |p_k'|²` and `U = Σ_k m g y_k`
//! (the term `Σ_j a_ij sin(θ_i − θ_j) θ_j'²` collects d/dt(M θ')_i − ∂T/∂θ_i). `M` is
//! dense: the price of the reduced coordinates (Featherstone, Rigid Body Dynamics
//! Algorithms, 2008, ch. 6, for the O(N) alternative); the maximal-coordinate chain's `M`
//! is diagonal and its `Φ_q` banded.

use crate::entry::{Problem, ProblemEntry};
use crate::planar::pendulum::{Pendulum, PendulumParams};
use driftlab_core::params;
use driftlab_core::{
    Dims, ExactSolution, MechanicalSystem, ParamError, ProblemInfo, SparsityPattern, State,
};

/// Parameters of [`PlanarChainAngles`] (those of `planar-chain`).
pub type PlanarChainAnglesParams = crate::planar::planar_chain::PlanarChainParams;

/// The planar chain in joint angles.
pub struct PlanarChainAngles {
    p: PlanarChainAnglesParams,
    /// For N = 1, the pendulum whose exact solution this one shares.
    pendulum: Option<Pendulum>,
}

const ID: &str = "planar-chain-angles";

impl PlanarChainAngles {
    /// Build and validate (the checks of `planar-chain`).
    pub fn new(p: PlanarChainAnglesParams) -> Result<Self, ParamError> {
        p.validate(ID)?;
        let pendulum = if p.links == 1 {
            Some(Pendulum::new(
                PendulumParams::released(p.m, p.length, p.g, p.theta0_deg, p.t_end),
                ID,
            )?)
        } else {
            None
        };
        Ok(Self { p, pendulum })
    }

    /// `a_ij = m ℓ² (N − max(i, j))`.
    fn a(&self, i: usize, j: usize) -> f64 {
        self.p.m * self.p.length * self.p.length * (self.p.links - i.max(j)) as f64
    }
}

/// Catalog entry `planar-chain-angles`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "the planar chain in joint angles (reduced coordinates, an ODE with dense M(θ)); N = 1: the pendulum with its exact solution",
        build: |t| Ok(Problem::Mechanical(Box::new(PlanarChainAngles::new(params::parse("problem", ID, t)?)?))),
        defaults: params::defaults::<PlanarChainAnglesParams>,
    }
}

impl MechanicalSystem for PlanarChainAngles {
    fn info(&self) -> ProblemInfo {
        let p = &self.p;
        ProblemInfo {
            id: ID.into(),
            title: format!("Planar chain of N = {} point masses (m = {}, ℓ = {}) in joint angles", p.links, p.m, p.length),
            equations: "M(θ) θ'' = f(θ, θ'),  M_ij = a_ij cos(θ_i − θ_j),  f_i = −Σ_j a_ij sin(θ_i − θ_j) θ_j'² − mgℓ(N − i) sin θ_i,  a_ij = mℓ²(N − max(i, j)); no constraints".into(),
            citation: "Lagrange's equations in absolute joint angles; seed 001 §3.12 (maximal vs reduced coordinates); O(N) alternative: Featherstone 2008, ch. 6".into(),
            tags: vec!["planar".into(), "conservative".into(), "reduced-coordinates".into(), "ode".into()],
            index: 0,
            t_end: p.t_end,
            reference: if p.links == 1 {
                "exact (elliptic functions, the pendulum's)".into()
            } else {
                "none (no closed form for N ≥ 2); energy is conserved".into()
            },
        }
    }
    fn dims(&self) -> Dims {
        Dims {
            n: self.p.links,
            m: 0,
        }
    }
    fn mass_pattern(&self) -> SparsityPattern {
        let n = self.p.links;
        SparsityPattern::new(
            n,
            n,
            (0..n).flat_map(|i| (0..=i).map(move |j| (i, j))).collect(),
        )
    }
    fn mass(&self, q: &[f64], out: &mut [f64]) {
        let n = self.p.links;
        let mut k = 0;
        for i in 0..n {
            for j in 0..=i {
                out[k] = self.a(i, j) * (q[i] - q[j]).cos();
                k += 1;
            }
        }
    }
    fn forces(&self, _t: f64, q: &[f64], v: &[f64], out: &mut [f64]) {
        let p = &self.p;
        let n = p.links;
        for i in 0..n {
            let coriolis: f64 = (0..n)
                .map(|j| self.a(i, j) * (q[i] - q[j]).sin() * v[j] * v[j])
                .sum();
            out[i] = -coriolis - p.m * p.g * p.length * (n - i) as f64 * q[i].sin();
        }
    }
    fn constraints(&self, _t: f64, _q: &[f64], _out: &mut [f64]) {}
    fn jacobian_pattern(&self) -> SparsityPattern {
        SparsityPattern::new(0, self.p.links, Vec::new())
    }
    fn jacobian(&self, _t: f64, _q: &[f64], _out: &mut [f64]) {}
    fn curvature(&self, _t: f64, _q: &[f64], _v: &[f64], _out: &mut [f64]) {}
    fn energy(&self, _t: f64, q: &[f64], v: &[f64]) -> Option<f64> {
        let p = &self.p;
        let n = p.links;
        let mut kinetic = 0.0;
        for i in 0..n {
            for j in 0..n {
                kinetic += 0.5 * self.a(i, j) * (q[i] - q[j]).cos() * v[i] * v[j];
            }
        }
        let potential: f64 = (0..n)
            .map(|i| -p.m * p.g * p.length * (n - i) as f64 * q[i].cos())
            .sum();
        Some(kinetic + potential)
    }
    fn energy_scale(&self) -> f64 {
        let p = &self.p;
        p.m * p.g * p.length * (p.links * (p.links + 1) / 2) as f64
    }
    fn initial_state(&self) -> State {
        let n = self.p.links;
        State::mechanical(
            0.0,
            vec![self.p.theta0_deg.to_radians(); n],
            vec![0.0; n],
            0,
        )
    }
    /// N = 1: the pendulum's exact solution, θ = atan2(x, −y), θ' = (x v_y − y v_x)/ℓ².
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        let e = self.pendulum.as_ref()?.exact(t)?;
        let l2 = self.p.length * self.p.length;
        let (x, y) = (e.q[0], e.q[1]);
        Some(ExactSolution {
            q: vec![x.atan2(-y)],
            v: vec![(x * e.v[1] - y * e.v[0]) / l2],
            lambda: Vec::new(),
        })
    }
    /// N = 1: the pendulum's domain ([`Pendulum`]'s `reference_domain`, whose accuracy
    /// `a` is in metres of the bob), converted to the angle: `θ = atan2(x, −y)` is off by
    /// `a/ℓ` (plus `8επ` for the atan2 itself) and `θ' = (x v_y − y v_x)/ℓ²` by the bob's
    /// velocity error over ℓ, which for the elliptic functions is their phase error times
    /// the rate, `≤ 4ω a/ℓ` (`ω = √(g/ℓ)`, speeds ≤ 2ωℓ; plus `16εω`). Outside where the
    /// pendulum's is; absent for N ≥ 2 (no closed form).
    fn reference_domain(&self, t_end: f64) -> driftlab_core::ReferenceDomain {
        use driftlab_core::ReferenceDomain;
        let Some(pendulum) = &self.pendulum else {
            return ReferenceDomain::Absent;
        };
        let (l, w) = (self.p.length, (self.p.g / self.p.length).sqrt());
        match pendulum.reference_domain(t_end) {
            ReferenceDomain::Valid { accuracy, basis } => {
                let eps = crate::domain::SAFETY * crate::domain::EPS;
                let angle = accuracy / l + eps * std::f64::consts::PI;
                let rate = 4.0 * w * accuracy / l + 2.0 * eps * w;
                ReferenceDomain::Valid {
                    accuracy: angle.max(rate),
                    basis: format!(
                        "the pendulum's solution converted to the angle (θ ±a/ℓ + 8επ = {angle:.1e}, θ' ±4ωa/ℓ + 16εω = {rate:.1e} with a = {accuracy:.1e} m): {basis}"
                    ),
                }
            }
            ReferenceDomain::Outside(why) => ReferenceDomain::Outside(format!(
                "the pendulum's solution it converts to the angle is outside its domain: {why}"
            )),
            other => other,
        }
    }
}
