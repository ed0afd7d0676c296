//! `prismatic-slider`: a block sliding down a straight rail inclined at α in space, held by
//! a **prismatic** joint (5 rows) built from the natural-coordinate pieces of
//! [`crate::natural`] — the test problem of that joint piece, with an exact solution.
//!
//! ```text
//! ground: point O, unit vectors v = (sin α, cos α, 0), w = (0, 0, 1) normal to the rail
//!         direction u = (cos α, −sin α, 0)
//! block:  points A, B (B − A = ℓ u initially), unit vectors v₂, w₂ across it
//!         rigid body: |B − A|² = ℓ², (B − A)·v₂ = 0, (B − A)·w₂ = 0, v₂·w₂ = 0, |v₂|² = |w₂|² = 1
//! prismatic: (B − A)·v = 0, (B − A)·w = 0, v₂·w = 0, (A − O)·v = 0, (A − O)·w = 0
//! ```
//!
//! 12 coordinates, 11 rows, 1 degree of freedom. Gravity −g ŷ; released with speed s₀'
//! down the rail, the block translates without turning:
//!
//! ```text
//! s(t) = s₀' t + ½ g sin α t²,   A(t) = A₀ + s(t) u,   B(t) = B₀ + s(t) u,   v₂, w₂ constant
//! ```
//!
//! and, since every row's gradient is constant under a translation, the multipliers are
//! constant: those of the acceleration-level KKT solve at the start (its balance
//! `M ä = f − Φ_qᵀλ` along the exact motion is asserted in a test). Energy is conserved.
//! Natural coordinates: J. García de Jalón & E. Bayo (1994), ch. 3; seed 001 §3.6.1.

use crate::domain::{judge, part, EPS, SAFETY};
use crate::entry::{Problem, ProblemEntry};
use crate::natural::{NaturalModel, NaturalSystem};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{ExactSolution, MechanicalSystem, ParamError, ProblemInfo};
use serde::{Deserialize, Serialize};

/// Parameters of the prismatic slider.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PrismaticSliderParams {
    /// Block mass (kg).
    pub m: f64,
    /// Block length along the rail (m).
    pub length: f64,
    /// Block width across the rail (m).
    pub width: f64,
    /// Rail inclination α below the horizontal (deg), in (−90, 90).
    pub incline_deg: f64,
    /// Gravity along −y [m/s²].
    pub g: f64,
    /// Initial speed down the rail (m/s).
    pub speed0: f64,
    /// Default end time (s).
    pub t_end: f64,
}

impl Default for PrismaticSliderParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            length: 1.0,
            width: 0.2,
            incline_deg: 30.0,
            g: 9.81,
            speed0: 0.5,
            t_end: 2.0,
        }
    }
}

/// The catalog id `prismatic-slider`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "prismatic-slider";

/// Catalog entry `prismatic-slider`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "block on an inclined rail in space: prismatic joint (5 rows) in natural coordinates, exact solution",
        build: |t| {
            let p: PrismaticSliderParams = params::parse("problem", ID, t)?;
            Ok(Problem::Mechanical(Box::new(build(&p)?)))
        },
        defaults: params::defaults::<PrismaticSliderParams>,
    }
}

/// The model, its consistent start and its exact solution.
pub fn build(p: &PrismaticSliderParams) -> Result<NaturalSystem, ParamError> {
    for (f, v) in [
        ("m", p.m),
        ("length", p.length),
        ("width", p.width),
        ("t_end", p.t_end),
    ] {
        bounded_positive(ID, f, v)?;
    }
    if !p.incline_deg.is_finite() || p.incline_deg.abs() >= 90.0 {
        return Err(ParamError::OutOfRange {
            id: ID.into(),
            field: "incline_deg",
            value: p.incline_deg,
            fix: "give an inclination strictly between −90 and 90 degrees".into(),
        });
    }
    params::finite(ID, "g", p.g)?;
    params::finite(ID, "speed0", p.speed0)?;
    let (sa, ca) = p.incline_deg.to_radians().sin_cos();
    let u = [ca, -sa, 0.0];
    let mut md = NaturalModel::default();
    let o = md.fixed_node([0.0; 3]);
    let v = md.fixed_node([sa, ca, 0.0]);
    let w = md.fixed_node([0.0, 0.0, 1.0]);
    let a0 = [0.0; 3];
    let b0 = u.map(|x| p.length * x);
    let a = md.free_node(a0);
    let b = md.free_node(b0);
    let v2 = md.free_node([sa, ca, 0.0]);
    let w2 = md.free_node([0.0, 0.0, 1.0]);
    md.unit(v2, "|v₂|");
    md.unit(w2, "|w₂|");
    md.rigid_rod(a, b, &[v2, w2], p.m, p.width, [0.0, -p.g, 0.0], "block");
    md.prismatic(o, v, w, a, vec![(b, 1.0), (a, -1.0)], v2, "prismatic");
    // Free nodes A, B, v₂, w₂: the points move along u, the vectors do not.
    let q0 = md.q0();
    let moving = move |s: f64| -> Vec<f64> {
        let mut q = q0.clone();
        for node in 0..2 {
            for c in 0..3 {
                q[3 * node + c] += s * u[c];
            }
        }
        q
    };
    let n = md.n();
    let along = move |rate: f64| -> Vec<f64> {
        let mut v = vec![0.0; n];
        for node in 0..2 {
            for c in 0..3 {
                v[3 * node + c] = rate * u[c];
            }
        }
        v
    };
    let acc = p.g * sa;
    let v0 = along(p.speed0);
    let sys = NaturalSystem::new(md, info(p), v0, p.m * p.g * p.length);
    let lambda = constant_multipliers(&sys)?;
    let domain = slider_domain(p, &sys, &lambda);
    let (s0, m_) = (p.speed0, lambda);
    Ok(sys
        .with_exact(Box::new(move |t| ExactSolution {
            q: moving(s0 * t + 0.5 * acc * t * t),
            v: along(s0 + acc * t),
            lambda: m_.clone(),
        }))
        .with_domain(domain))
}

/// Where the exact motion holds. `s = s₀'t + ½ g sin α t²` and `q = q₀ + s u` round a few
/// times each: q is good to `8ε(ℓ + 2S)` with `S = |s₀'| t_end + ½|g sin α| t_end²` the
/// largest travel, v to `16ε(|s₀'| + |g sin α| t_end)`, and the constant λ (one KKT solve
/// at the start) to `8ε` times the balance's sensitivity
/// `(|f| + ‖M‖|a| + ‖Φ_q‖|λ|)/σ_min(Φ_q)` (safety 8). Outside when a bound exceeds 1e-4 of
/// its scale (`max(1, ℓ, S)`, the largest speed, `|λ|∞`): only an ill-conditioned joint
/// (a block far thinner than long) can make λ so; the polynomial motion itself stays
/// good to a few ε relative until f64 overflows.
fn slider_domain(
    p: &PrismaticSliderParams, sys: &NaturalSystem, lambda: &[f64],
) -> crate::natural::DomainFn {
    let st = sys.initial_state();
    let acc = p.g * p.incline_deg.to_radians().sin();
    let n = st.q.len();
    let (sa, ca) = p.incline_deg.to_radians().sin_cos();
    let u = [ca, -sa, 0.0];
    let a: Vec<f64> = (0..n)
        .map(|i| if i < 6 { acc * u[i % 3] } else { 0.0 })
        .collect();
    let sens = crate::domain::multiplier_sensitivity(sys, 0.0, &st.q, &st.v, &a, lambda);
    let lambda_scale = lambda.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    let (l, s0) = (p.length, p.speed0);
    Box::new(move |t_end: f64| {
        let travel = s0.abs() * t_end + 0.5 * acc.abs() * t_end * t_end;
        let speed = s0.abs().max((s0 + acc * t_end).abs());
        let rounding = SAFETY * EPS;
        judge(
            &format!(
                "uniform acceleration g sin α = {acc:.4e} along the rail, travel S = {travel:.3e}: q 8ε(ℓ + 2S), v 16ε(|s₀'| + |g sin α| t_end), λ 8ε×{sens:.3e} (the balance's sensitivity) (safety 8)"
            ),
            &[
                part("q", rounding * (l + 2.0 * travel), 1f64.max(l).max(travel)),
                part(
                    "v",
                    2.0 * rounding * (s0.abs() + acc.abs() * t_end),
                    speed,
                ),
                part("λ", rounding * sens, lambda_scale),
            ],
            "make the block less slender (width closer to length) or change the inclination",
        )
    })
}

/// λ from the acceleration-level KKT solve at the initial state: under a pure
/// translation every row's gradient is constant and γ = 0, so these are the multipliers of
/// the whole motion (the test checks `M ä = f − Φ_qᵀλ` along the exact solution).
fn constant_multipliers(sys: &NaturalSystem) -> Result<Vec<f64>, ParamError> {
    let st = sys.initial_state();
    crate::consistency::accelerations(sys, 0.0, &st.q, &st.v)
        .map(|(_, lambda)| lambda)
        .map_err(|e| ParamError::Invalid {
            kind: "problem",
            id: ID.into(),
            message: format!("the exact multipliers could not be computed: {e}"),
        })
}

fn info(p: &PrismaticSliderParams) -> ProblemInfo {
    ProblemInfo {
        id: ID.into(),
        title: format!(
            "Block on a rail inclined at {}° (prismatic joint, natural coordinates), m = {}, s₀' = {} m/s",
            p.incline_deg, p.m, p.speed0
        ),
        equations: "natural coordinates (A, B, v₂, w₂): rigid block |B−A|², (B−A)·v₂, (B−A)·w₂, v₂·w₂, |v₂|², |w₂|²; \
                    prismatic joint to the rail (O; v, w): (B−A)·v, (B−A)·w, v₂·w, (A−O)·v, (A−O)·w: 11 rows, 1 DOF; \
                    s(t) = s₀'t + ½ g sin α t²"
            .into(),
        citation: "seed 001 §3.6.1 (prismatic joint, 5 equations); J. García de Jalón & E. Bayo, Kinematic and Dynamic \
                   Simulation of Multibody Systems (1994), ch. 3"
            .into(),
        tags: vec!["spatial".into(), "conservative".into(), "exact-solution".into(), "index-3".into()],
        index: 3,
        t_end: p.t_end,
        reference: "exact: uniform acceleration g sin α along the rail, constant multipliers".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The multipliers balance the forces exactly along the exact motion (the normal
    /// equations are consistent: Φ_qᵀλ = f − M a with no residual), and Φ_q has full rank
    /// 11: the joint leaves exactly the one sliding freedom (12 − 11).
    #[test]
    fn exact_multipliers_balance_the_forces() {
        let p = PrismaticSliderParams::default();
        let sys = build(&p).expect("builds");
        let d = sys.dims();
        assert_eq!((d.n, d.m), (12, 11));
        let ex = sys.exact(0.7).expect("exact");
        let jp = sys.jacobian_pattern();
        let mut jv = vec![0.0; jp.nnz()];
        sys.jacobian(0.7, &ex.q, &mut jv);
        let mut gtl = vec![0.0; d.n];
        jp.mul_transpose_vec(&jv, &ex.lambda, &mut gtl);
        let mut f = vec![0.0; d.n];
        sys.forces(0.7, &ex.q, &ex.v, &mut f);
        let (sa, ca) = 30f64.to_radians().sin_cos();
        let acc = p.g * sa;
        let u = [ca, -sa, 0.0];
        // M a: the points carry m/3 + m/6 = m/2 each along u; the vectors do not move.
        for node in 0..4 {
            for c in 0..3 {
                let i = 3 * node + c;
                let ma = if node < 2 {
                    0.5 * p.m * acc * u[c]
                } else {
                    0.0
                };
                let res = ma - (f[i] - gtl[i]);
                assert!(
                    res.abs() < 1e-12,
                    "coordinate {i}: M a − (f − Φ_qᵀλ) = {res:e}"
                );
            }
        }
        let r = driftlab_solver::numerical_rank(d.m, d.n, &jp.entries, &jv).expect("svd");
        assert_eq!(r.rank, 11);
    }
}
