//! Initial states given by the user, checked for consistency and refused or repaired
//! (seed 001 §3.11 pitfall 5: "inconsistent initial conditions — the initial q, v must
//! satisfy Φ = 0 and Φ_q v + Φ_t = 0, else the first steps carry an O(1) transient or the
//! iteration fails"; seed 003: an index-1 start must satisfy g(x₀, z₀) = 0).
//!
//! Every problem accepts a reserved parameter table `initial` (taken out before the
//! problem sees its parameters, so that it works for a user's own problems too):
//!
//! ```toml
//! params = { initial = { q = [1.0, 0.1], v = [0.0, 0.0], inconsistent = "project" } }
//! ```
//!
//! * `q`, `v` (mechanical) or `x`, `z` (index-1) replace the problem's own start; each is
//!   optional (a missing one keeps the problem's).
//! * `inconsistent = "refuse"` (default): a start whose residuals exceed `tol` is refused
//!   before anything runs, with the residuals in the message.
//!   `"project"`: the start is moved to the nearest consistent one — q onto Φ(t₀, q) = 0
//!   and then v onto Φ_q v + Φ_t = 0, each in the metric of M (mass-orthogonal; the
//!   correction a constraint impulse makes, seed 001 §3.4.2), by
//!   [`driftlab_solver::project_position`] to round-off; index-1: z by Newton on
//!   g(t₀, x₀, z) = 0 (g_z regular by the index-1 assumption).
//!   `"accept"`: run from the start as given, to measure the transient it causes.
//! * `tol` (default 1e-10): the residual `max(‖Φ‖∞, ‖Φ_q v + Φ_t‖∞)` (index-1: `‖g‖∞`)
//!   accepted as consistent.
//!
//! A start that differs from the problem's own has no exact solution or published
//! reference any more: the wrapped problem reports none (error columns stay null).

use crate::adjusted::Adjusted;
use crate::entry::Problem;
use driftlab_core::{Index1Jacobians, MechanicalSystem, ParamError, SemiExplicitDae, State};
use driftlab_solver::{project_position, project_velocity, ConstraintsAt, ProjectionParams};
use serde::{Deserialize, Serialize};

/// The reserved parameter name.
pub const KEY: &str = "initial";

/// What to do with an inconsistent start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Inconsistent {
    /// Refuse the spec, naming the residuals.
    #[default]
    Refuse,
    /// Move the start to the nearest consistent one (mass-orthogonal).
    Project,
    /// Run from the start as given, to study what an inconsistent start does (seed 001
    /// §3.11 pitfall 5): the residual columns show the transient.
    Accept,
}

/// The `initial` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InitialParams {
    /// Positions (mechanical).
    pub q: Option<Vec<f64>>,
    /// Velocities (mechanical).
    pub v: Option<Vec<f64>>,
    /// Differential variables (index-1).
    pub x: Option<Vec<f64>>,
    /// Algebraic variables (index-1).
    pub z: Option<Vec<f64>>,
    /// Refuse or project an inconsistent start.
    #[serde(default)]
    pub inconsistent: Inconsistent,
    /// Residual accepted as consistent.
    pub tol: Option<f64>,
}

/// Default of `tol`.
pub const DEFAULT_TOL: f64 = 1e-10;

/// Take `initial` out of a problem's parameter table: the table the problem sees and the
/// parsed `initial`, if any.
pub fn split(
    id: &str, params: &toml::Table,
) -> Result<(toml::Table, Option<InitialParams>), ParamError> {
    let mut rest = params.clone();
    let Some(value) = rest.remove(KEY) else {
        return Ok((rest, None));
    };
    let initial: InitialParams = value.try_into().map_err(|e: toml::de::Error| {
        ParamError::Invalid {
            kind: "problem",
            id: id.to_string(),
            message: format!(
                "`initial`: {} (keys: q, v (mechanical) or x, z (index-1), inconsistent = \"refuse\" | \"project\" | \"accept\", tol)",
                e.message()
            ),
        }
    })?;
    Ok((rest, Some(initial)))
}

/// `problem` with the start of `initial`, checked and refused or repaired.
pub fn apply(id: &str, problem: Problem, initial: &InitialParams) -> Result<Problem, ParamError> {
    let tol = initial.tol.unwrap_or(DEFAULT_TOL);
    if !(tol.is_finite() && tol > 0.0) {
        return Err(out_of_range(id, "initial.tol", tol, "give a tolerance > 0"));
    }
    match problem {
        Problem::Mechanical(s) => {
            let state = mechanical_start(id, s.as_ref(), initial, tol)?;
            let keep_exact = same_state(&state, &s.initial_state());
            Ok(Problem::Mechanical(Box::new(Adjusted {
                inner: s,
                state: Some(state),
                keep_exact,
                pulse: None,
            })))
        }
        Problem::Implicit(_) => Err(ParamError::Invalid {
            kind: "problem",
            id: id.to_string(),
            message: "`initial` is not supported for fully implicit problems (F(t, y, y′) = 0): set the start through the problem's own parameters".into(),
        }),
        Problem::SemiExplicit(s) => {
            let state = index1_start(id, s.as_ref(), initial, tol)?;
            let keep_exact = same_state(&state, &s.initial_state());
            Ok(Problem::SemiExplicit(Box::new(Adjusted {
                inner: s,
                state: Some(state),
                keep_exact,
                pulse: None,
            })))
        }
    }
}

fn out_of_range(id: &str, field: &'static str, value: f64, fix: &str) -> ParamError {
    ParamError::OutOfRange {
        id: id.to_string(),
        field,
        value,
        fix: fix.to_string(),
    }
}

/// Replace `target` by `given`, checking the length.
fn replace(
    id: &str, field: &'static str, given: &Option<Vec<f64>>, target: &mut Vec<f64>,
) -> Result<(), ParamError> {
    let Some(g) = given else {
        return Ok(());
    };
    if g.len() != target.len() {
        return Err(out_of_range(
            id,
            field,
            g.len() as f64,
            &format!("give {} values (the problem's dimension)", target.len()),
        ));
    }
    if let Some(bad) = g.iter().find(|x| !x.is_finite()) {
        return Err(out_of_range(id, field, *bad, "give finite values"));
    }
    target.clone_from(g);
    Ok(())
}

fn inf(x: &[f64]) -> f64 {
    x.iter().fold(0.0_f64, |m, v| m.max(v.abs()))
}

fn same_state(a: &State, b: &State) -> bool {
    let close = |x: &[f64], y: &[f64]| {
        x.len() == y.len()
            && x.iter()
                .zip(y)
                .all(|(p, q)| (p - q).abs() <= 1e-12 * (1.0 + q.abs()))
    };
    close(&a.q, &b.q) && close(&a.v, &b.v)
}

/// `(‖Φ(t, q)‖∞, ‖Φ_q v + Φ_t‖∞)`.
pub fn mechanical_residuals(s: &dyn MechanicalSystem, st: &State) -> (f64, f64) {
    let m = s.dims().m;
    let (mut phi, mut vel) = (vec![0.0; m], vec![0.0; m]);
    driftlab_core::system::constraint_residuals(s, st.t, &st.q, &st.v, &mut phi, &mut vel)
}

fn mechanical_start(
    id: &str, s: &dyn MechanicalSystem, initial: &InitialParams, tol: f64,
) -> Result<State, ParamError> {
    if initial.x.is_some() || initial.z.is_some() {
        return Err(ParamError::Invalid {
            kind: "problem",
            id: id.to_string(),
            message: "`initial.x`/`initial.z` are for index-1 problems; give `q` and `v`".into(),
        });
    }
    let mut st = s.initial_state();
    replace(id, "initial.q", &initial.q, &mut st.q)?;
    replace(id, "initial.v", &initial.v, &mut st.v)?;
    // The problem's multipliers and accelerations belong to its own start.
    st.lambda.iter_mut().for_each(|x| *x = f64::NAN);
    st.a.iter_mut().for_each(|x| *x = f64::NAN);
    let (pos, vel) = mechanical_residuals(s, &st);
    match initial.inconsistent {
        Inconsistent::Refuse if pos.max(vel) > tol || pos.is_nan() || vel.is_nan() => {
            Err(ParamError::OutOfRange {
                id: id.to_string(),
                field: "initial",
                value: pos.max(vel),
                fix: format!(
                    "the start is inconsistent: ‖Φ(t₀, q₀)‖∞ = {pos:.3e}, ‖Φ_q v₀ + Φ_t‖∞ = {vel:.3e} > tol {tol:e}; give a consistent q and v, or set initial.inconsistent = \"project\" to move them onto the constraints (mass-orthogonal)"
                ),
            })
        }
        Inconsistent::Refuse | Inconsistent::Accept => Ok(st),
        Inconsistent::Project => {
            project_start(s, &mut st).map_err(|e| ParamError::OutOfRange {
                id: id.to_string(),
                field: "initial",
                value: pos.max(vel),
                fix: format!(
                    "the projection of the start onto the constraints failed ({e}); give a start nearer to Φ = 0"
                ),
            })?;
            Ok(st)
        }
    }
}

/// q onto Φ(t₀, q) = 0, then v onto Φ_q v + Φ_t = 0, both in the metric of M.
pub fn project_start(
    s: &dyn MechanicalSystem, st: &mut State,
) -> Result<(), driftlab_solver::SolverError> {
    let (mut kkt, mut mass) = crate::consistency::kkt_at(s, &st.q)?;
    let scale = 1.0 + inf(&st.q);
    let mut eval = ConstraintsAt { sys: s, t: st.t };
    let params = ProjectionParams {
        tol: 4.0 * f64::EPSILON * scale,
        max_iter: 50,
        ..ProjectionParams::default()
    };
    project_position(&mut kkt, &mass, &mut st.q, &mut eval, &params)?;
    s.mass(&st.q, &mut mass);
    project_velocity(&mut kkt, &mass, &st.q, &mut st.v, &mut eval)?;
    Ok(())
}

fn index1_start(
    id: &str, s: &dyn SemiExplicitDae, initial: &InitialParams, tol: f64,
) -> Result<State, ParamError> {
    if initial.q.is_some() || initial.v.is_some() {
        return Err(ParamError::Invalid {
            kind: "problem",
            id: id.to_string(),
            message: "`initial.q`/`initial.v` are for mechanical problems; give `x` and `z`".into(),
        });
    }
    let mut st = s.initial_state();
    replace(id, "initial.x", &initial.x, &mut st.q)?;
    replace(id, "initial.z", &initial.z, &mut st.lambda)?;
    let res = index1_residual(s, &st);
    match initial.inconsistent {
        Inconsistent::Refuse if res > tol || res.is_nan() => Err(ParamError::OutOfRange {
            id: id.to_string(),
            field: "initial",
            value: res,
            fix: format!(
                "the start is inconsistent: ‖g(t₀, x₀, z₀)‖∞ = {res:.3e} > tol {tol:e}; give z₀ with g = 0, or set initial.inconsistent = \"project\" to solve g(t₀, x₀, z) = 0 for z"
            ),
        }),
        Inconsistent::Refuse | Inconsistent::Accept => Ok(st),
        Inconsistent::Project => {
            solve_algebraic(s, &mut st).map_err(|r| ParamError::OutOfRange {
                id: id.to_string(),
                field: "initial",
                value: r,
                fix: "Newton on g(t₀, x₀, z) = 0 did not converge from the given z₀; give a z₀ nearer to the solution".into(),
            })?;
            Ok(st)
        }
    }
}

/// `‖g(t, x, z)‖∞`.
pub fn index1_residual(s: &dyn SemiExplicitDae, st: &State) -> f64 {
    let mut g = vec![0.0; st.lambda.len()];
    s.g(st.t, &st.q, &st.lambda, &mut g);
    if g.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    inf(&g)
}

/// Newton on `g(t₀, x₀, z) = 0` for `z`; `Err(residual)` if it does not converge.
fn solve_algebraic(s: &dyn SemiExplicitDae, st: &mut State) -> Result<(), f64> {
    use driftlab_solver::newton::{NewtonKernel, NewtonOptions};
    let (nx, nz) = s.dims();
    let mut jac = Index1Jacobians::zeros(nx, nz);
    let mut g = vec![0.0; nz];
    // Newton through the one kernel, stopping on the residual (as the projections do).
    let mut kernel = NewtonKernel::new(NewtonOptions::residual_stop(50));
    let solved = kernel.solve(|_| -> Result<f64, f64> {
        s.g(st.t, &st.q, &st.lambda, &mut g);
        let res = inf(&g);
        let tol = 4.0 * f64::EPSILON * (1.0 + inf(&st.lambda));
        if res <= tol {
            return Ok(0.0);
        }
        s.jacobians(st.t, &st.q, &st.lambda, &mut jac);
        let mut dz: Vec<f64> = g.iter().map(|x| -x).collect();
        driftlab_solver::dense::solve_dense(nz, &jac.gz, &mut dz).map_err(|_| res)?;
        st.lambda.iter_mut().zip(&dz).for_each(|(z, d)| *z += d);
        Ok(res / tol)
    });
    match solved {
        Ok(_) => Ok(()),
        Err(_) => Err(index1_residual(s, st)),
    }
}

/// The consistent derivatives of an index-1 start: `x' = f(t, x, z)` and, from
/// `d/dt g(t, x, z) = 0`, `z' = −g_z⁻¹ (g_t + g_x x')` (seed 003: x'(0) = 1, z'(0) = −1
/// for its example with c = 1).
pub fn index1_derivatives(
    s: &dyn SemiExplicitDae, st: &State,
) -> Result<(Vec<f64>, Vec<f64>), driftlab_solver::SolverError> {
    let (nx, nz) = s.dims();
    let mut xp = vec![0.0; nx];
    s.f(st.t, &st.q, &st.lambda, &mut xp);
    let mut jac = Index1Jacobians::zeros(nx, nz);
    s.jacobians(st.t, &st.q, &st.lambda, &mut jac);
    let mut rhs = vec![0.0; nz];
    s.g_t(st.t, &st.q, &st.lambda, &mut rhs);
    for (r, out) in rhs.iter_mut().enumerate() {
        let gx_xp: f64 = (0..nx).map(|c| jac.gx[r * nx + c] * xp[c]).sum();
        *out = -(*out + gx_xp);
    }
    driftlab_solver::dense::solve_dense(nz, &jac.gz, &mut rhs)?;
    Ok((xp, rhs))
}
