//! `seed003-dae`: the index-1 teaching example of seed 003 (§状态演化与即时约束).
//!
//! ```text
//! x' = −x + z,   0 = x + z − c,   x(0) = 0, z(0) = c
//! exact: x(t) = c (1 − e^{−2t}) / 2,  z(t) = c − x(t)
//! ```
//!
//! Eliminating `z = c − x` gives `x' = c − 2x`. Seed 003 tabulates implicit Euler for
//! `c = 1`, `h = 1/4`: `(x₁, z₁) = (1/6, 5/6)`, `(x₂, z₂) = (5/18, 13/18)`, and the
//! recursion `x_{n+1} = (x_n + c h)/(1 + 2h)`.

use crate::entry::{Problem, ProblemEntry};
use driftlab_core::params::{self, bounded_positive};
use driftlab_core::{
    ExactSolution, Index1Jacobians, ParamError, ProblemInfo, SemiExplicitDae, State,
};
use serde::{Deserialize, Serialize};

/// Parameters of [`Seed003Dae`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Seed003Params {
    /// Right-hand side `c` of the constraint `x + z = c` (seed 003 uses 1 and 2).
    pub c: f64,
    /// Default end time.
    pub t_end: f64,
}

impl Default for Seed003Params {
    fn default() -> Self {
        Self { c: 1.0, t_end: 0.5 }
    }
}

/// The seed-003 index-1 DAE.
#[derive(Clone, Debug)]
pub struct Seed003Dae {
    p: Seed003Params,
}

impl Seed003Dae {
    /// Build and validate.
    pub fn new(p: Seed003Params) -> Result<Self, ParamError> {
        bounded_positive(ID, "t_end", p.t_end)?;
        if !p.c.is_finite() {
            return Err(ParamError::OutOfRange {
                id: ID.into(),
                field: "c",
                value: p.c,
                fix: "give a finite c".into(),
            });
        }
        Ok(Self { p })
    }
}

/// The catalog id `seed003-dae`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "seed003-dae";

/// Catalog entry `seed003-dae`.
pub fn entry() -> ProblemEntry {
    ProblemEntry {
        id: ID,
        summary: "seed 003 index-1 example x' = −x + z, 0 = x + z − c, exact solution",
        build: |t| {
            Ok(Problem::SemiExplicit(Box::new(Seed003Dae::new(
                params::parse("problem", ID, t)?,
            )?)))
        },
        defaults: params::defaults::<Seed003Params>,
    }
}

impl SemiExplicitDae for Seed003Dae {
    fn info(&self) -> ProblemInfo {
        ProblemInfo {
            id: ID.into(),
            title: format!("Seed-003 index-1 DAE with c = {}", self.p.c),
            equations: "x' = −x + z,  0 = x + z − c,  x(0) = 0;  exact x = c(1 − e^{−2t})/2, z = c − x".into(),
            citation: "seed 003 (微分代数方程: 状态演化与即时约束; 保持约束的离散计算), after Atkinson, Han & Stewart, \
                       Numerical Solution of ODEs, ch. 10"
                .into(),
            tags: vec!["index-1".into(), "exact-solution".into(), "linear".into()],
            index: 1,
            t_end: self.p.t_end,
            reference: "exact".into(),
        }
    }
    fn dims(&self) -> (usize, usize) {
        (1, 1)
    }
    fn f(&self, _t: f64, x: &[f64], z: &[f64], out: &mut [f64]) {
        out[0] = -x[0] + z[0];
    }
    fn g(&self, _t: f64, x: &[f64], z: &[f64], out: &mut [f64]) {
        out[0] = x[0] + z[0] - self.p.c;
    }
    fn jacobians(&self, _t: f64, _x: &[f64], _z: &[f64], out: &mut Index1Jacobians) {
        out.fx[0] = -1.0;
        out.fz[0] = 1.0;
        out.gx[0] = 1.0;
        out.gz[0] = 1.0;
    }
    fn initial_state(&self) -> State {
        State::semi_explicit(0.0, vec![0.0], vec![self.p.c])
    }
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        let x = self.p.c * (1.0 - (-2.0 * t).exp()) / 2.0;
        Some(ExactSolution {
            q: vec![x],
            v: Vec::new(),
            lambda: vec![self.p.c - x],
        })
    }
    /// `x = c(1 − e^{−2t})/2` and `z = c − x` in f64: `e^{−2t}` is good to a few ε
    /// relative (its argument's rounding `ε 2t` is damped by `e^{−2t}` itself: `2t e^{−2t} ≤
    /// 1/e`), the difference `1 − e^{−2t}` is then exact to ε absolute (Sterbenz), so x and
    /// z are good to `8ε|c|` at every t (safety 8) — absolute, also near t = 0 where x
    /// itself is small. Valid for every finite c: `|x|, |z| ≤ |c|` never overflow.
    fn reference_domain(&self, _t_end: f64) -> driftlab_core::ReferenceDomain {
        use crate::domain::{judge, part, EPS, SAFETY};
        let c = self.p.c.abs();
        judge(
            &format!("c(1 − e^{{−2t}})/2 with |c| = {c:e}: 8ε|c| on x and z (safety 8)"),
            &[
                part("x", SAFETY * EPS * c, c),
                part("z", SAFETY * EPS * c, c),
            ],
            "give a finite c",
        )
    }
}
