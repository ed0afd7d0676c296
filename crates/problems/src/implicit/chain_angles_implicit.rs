//! `chain-angles-implicit`: the planar chain in joint angles (`planar-chain-angles`) left
//! in the form a multibody code writes it, **without solving for the accelerations**:
//!
//! ```text
//! y = (θ, ω),   F(t, y, y′) = ( θ′ − ω ,  M(θ) ω′ − f(θ, ω) ) = 0
//! F_{y′} = diag(I, M(θ))   (invertible: M is the chain's mass matrix, SPD)
//! ```
//!
//! with `M` and `f` of [`crate::planar::planar_chain_angles`] (Lagrange's equations in
//! absolute joint angles). The implicit methods solve `F = 0` for the step with the
//! dense mass matrix inside their Newton iteration, as DASSL and IDA do (Brenan,
//! Campbell & Petzold 1996, §1.1). N = 1 is the pendulum, whose exact solution gives
//! `θ`, `ω` and `ω′ = −(g/ℓ) sin θ`.

use crate::entry::{Problem, ProblemEntry};
use crate::planar::planar_chain_angles::{PlanarChainAngles, PlanarChainAnglesParams};
use driftlab_core::params;
use driftlab_core::{
    ExactSolution, ImplicitDae, MechanicalSystem, ParamError, ProblemInfo, ReferenceDomain,
    SparsityPattern, State,
};

const ID: &str = "chain-angles-implicit";

/// The joint-angle chain as `F(t, y, y′) = 0`.
pub struct ChainAnglesImplicit {
    chain: PlanarChainAngles,
    p: PlanarChainAnglesParams,
    mass_pattern: SparsityPattern,
}

impl ChainAnglesImplicit {
    /// Build and validate (the checks of `planar-chain`).
    pub fn new(p: PlanarChainAnglesParams) -> Result<Self, ParamError> {
        let chain = PlanarChainAngles::new(p)?;
        let mass_pattern = chain.mass_pattern();
        Ok(Self {
            chain,
            p,
            mass_pattern,
        })
    }

    /// `M(θ) x` into `out`.
    fn mass_times(&self, theta: &[f64], x: &[f64], out: &mut [f64]) {
        let mut m = vec![0.0; self.mass_pattern.nnz()];
        self.chain.mass(theta, &mut m);
        self.mass_pattern.mul_vec(&m, x, out, true);
    }
}

/// Catalog entry `chain-angles-implicit`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "the joint-angle chain as F(t, y, y′) = (θ′ − ω, M(θ)ω′ − f) = 0, not solved for ω′ (fully implicit); N = 1: the pendulum's exact solution",
        build: |t| Ok(Problem::Implicit(Box::new(ChainAnglesImplicit::new(params::parse("problem", ID, t)?)?))),
        defaults: params::defaults::<PlanarChainAnglesParams>,
    }
}

impl ImplicitDae for ChainAnglesImplicit {
    fn info(&self) -> ProblemInfo {
        let mut info = self.chain.info();
        info.id = ID.into();
        info.title = format!(
            "Planar chain of N = {} point masses in joint angles, fully implicit F(t, y, y′) = 0",
            self.p.links
        );
        info.equations = "y = (θ, ω); F = (θ′ − ω, M(θ)ω′ − f(θ, ω)) = 0; F_y′ = diag(I, M(θ)); M, f of planar-chain-angles".into();
        info.tags.push("fully-implicit".into());
        info
    }
    fn dim(&self) -> usize {
        2 * self.p.links
    }
    fn residual(&self, t: f64, y: &[f64], yp: &[f64], out: &mut [f64]) {
        let n = self.p.links;
        let (theta, omega) = y.split_at(n);
        let (out_q, out_v) = out.split_at_mut(n);
        for i in 0..n {
            out_q[i] = yp[i] - omega[i];
        }
        self.mass_times(theta, &yp[n..], out_v);
        let mut f = vec![0.0; n];
        self.chain.forces(t, theta, omega, &mut f);
        out_v.iter_mut().zip(&f).for_each(|(r, fi)| *r -= fi);
    }
    /// `y₀ = (θ₀, 0)` and `y′₀ = (0, M⁻¹f)`: the chain released at rest, `ω′` from one
    /// dense solve, so that `F(0, y₀, y′₀) = 0`.
    fn initial_state(&self) -> State {
        let s = self.chain.initial_state();
        let n = self.p.links;
        let accel = accelerations(self, &s.q, &s.v).unwrap_or_else(|| vec![f64::NAN; n]);
        let mut yp = s.v.clone();
        yp.extend(accel);
        let mut y = s.q;
        y.extend(s.v);
        State {
            t: s.t,
            q: y,
            v: yp,
            lambda: Vec::new(),
            a: vec![0.0; 2 * n],
        }
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        let e = self.chain.exact(t)?;
        let accel = accelerations(self, &e.q, &e.v)?;
        Some(ExactSolution {
            q: [e.q.as_slice(), e.v.as_slice()].concat(),
            v: [e.v.as_slice(), accel.as_slice()].concat(),
            lambda: Vec::new(),
        })
    }
    /// The chain's domain, the accuracy scaled by `max(1, g/ℓ)` for `ω′ = −(g/ℓ) sin θ`.
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        match self.chain.reference_domain(t_end) {
            ReferenceDomain::Valid { accuracy, basis } => ReferenceDomain::Valid {
                accuracy: accuracy * (self.p.g / self.p.length).max(1.0),
                basis: format!("{basis}; ω′ = −(g/ℓ) sin θ scales it by max(1, g/ℓ)"),
            },
            other => other,
        }
    }
}

/// `ω′ = M(θ)⁻¹ f(θ, ω)` by a dense solve; `None` if `M` is singular.
fn accelerations(s: &ChainAnglesImplicit, theta: &[f64], omega: &[f64]) -> Option<Vec<f64>> {
    let n = theta.len();
    let mut m = vec![0.0; s.mass_pattern.nnz()];
    s.chain.mass(theta, &mut m);
    let dense = s.mass_pattern.to_dense(&m, true);
    let mut f = vec![0.0; n];
    s.chain.forces(0.0, theta, omega, &mut f);
    driftlab_solver::dense::solve_dense(n, &dense, &mut f).ok()?;
    Some(f)
}
