//! `baumgarte`: Baumgarte's stabilization (seed 002 §19, eq. 19.5; seed 001 §3.3) on the
//! Taylor scheme of seed 002 §18.2, with the variants of seed 001 §3.3.3–3.3.4 and
//! seed 002 §18.2.
//!
//! The hidden constraint `Φ̈ = 0` is replaced by the stable error dynamics
//!
//! ```text
//! Φ̈ + 2ξω_n Φ̇ + ω_n² Φ = 0          (seed 002 eq. 19.1, ξ damping ratio, ω_n natural frequency)
//! Φ̈ + 2α Φ̇ + β² Φ = 0               (seed 001 §3.3.2, the same law)
//! ```
//!
//! **Conversion** (compare coefficients): `α = ξ ω_n`, `β = ω_n`; conversely
//! `ω_n = β`, `ξ = α / β`. Critical damping is `ξ = 1` ⇔ `α = β`. With
//! `Φ̇ = Φ_q v + Φ_t` the acceleration row of the KKT system becomes
//!
//! ```text
//! Φ_q a = γ − 2α (Φ_q v + Φ_t) − β² Φ − K_i ∫Φ dt
//! ```
//!
//! and the state is advanced by `q += h v + ½h² a`, `v += h a` (seed 002 Example 19.1,
//! eq. 19.6 with the right-hand side `r_k`). On the exact solution `Φ = Φ̇ = 0`, so the
//! stabilization does not change consistency: global order 1 as for `taylor`.
//! Defaults are the seed's example values `ξ = 0.8`, `ω_n = 2`.
//!
//! Variants (all optional parameters):
//! * per-constraint diagonal gains `alpha_diag`, `beta_diag` (seed 001 §3.3.4, "使用对角增益矩阵"),
//!   or gains per physical kind of row, `groups` (§3.3.4, "基于约束的物理特性分组处理");
//! * the PID form with integral gain `k_i` (seed 001 §3.3.4; "rarely used, may destabilize");
//! * the adaptive gain `α = α₀ min(1, ‖Φ‖∞ / ε_tol)` with `adaptive_eps = ε_tol`
//!   (seed 001 §3.3.4);
//! * gains adapted from the violation history, `history = { window, gamma, delta,
//!   stable_region }` (seed 001 exercise 5; [`crate::explicit::baumgarte_history`]);
//! * the constant offset of seed 002 §18.2: `Φ̃ = Φ + a₀ + a₁ t` with `a₀, a₁` chosen so that
//!   `Φ̃(0) = 0`, `Φ̃'(0) = 0` (`offset = true`): for inconsistent initial data this keeps
//!   the initial violation instead of pulling it back.
//!
//! **Step-size guidance** (seed 001 §3.11 pitfall 1): `α, β < 1/(2h)`. For this Taylor
//! update the error dynamics of a linear constraint are exactly the map
//! `(z, ż) ↦ (z + hż + ½h²z̈, ż + hz̈)` with `z̈ = −2αż − β²z`; [`amplification_radius`]
//! gives its spectral radius. The Jury conditions give the exact region
//! `β²h/4 < α < 1/h` (in seed 002's terms `ω_n h/4 < ξ < 1/(ω_n h)`): the guidance is
//! sufficient for the upper limit, but an under-damped choice (ξ < ω_n h/4) is unstable
//! however small h is (test `guidance_holds_only_with_enough_damping`).
use crate::dynamics::{with_kkt_stats, AccelerationSolver, KktChoice};
pub use crate::explicit::baumgarte_gains::Gains;
use crate::explicit::baumgarte_history::{GainHistory, HistoryParams};
use driftlab_core::prelude::*;
use serde::{Deserialize, Serialize};
use std::ops::Deref;

/// Damping ratio ξ when a spec gives neither `xi` nor `(alpha, beta)`: the seed's example
/// value (module doc), slightly under critical damping.
pub const DEFAULT_XI: f64 = 0.8;
/// Natural frequency ω_n [1/s] when a spec gives neither `omega_n` nor `(alpha, beta)`.
pub const DEFAULT_OMEGA_N: f64 = 2.0;

/// Parameters as written in a spec: either `(xi, omega_n)` or `(alpha, beta)`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BaumgarteParams {
    /// Damping ratio ξ (with `omega_n`; default 0.8).
    pub xi: Option<f64>,
    /// Natural frequency ω_n [1/s] (with `xi`; default 2).
    pub omega_n: Option<f64>,
    /// Gain α of `Φ̈ + 2αΦ̇ + β²Φ = 0` [1/s] (with `beta`, instead of `xi`/`omega_n`).
    pub alpha: Option<f64>,
    /// Gain β [1/s] (with `alpha`).
    pub beta: Option<f64>,
    /// Per-constraint α_i (length m), replacing the scalar α. In a spec a list sweeps, so
    /// write a list-valued parameter as a list of lists: `alpha_diag = [[1.0, 2.0]]`.
    pub alpha_diag: Option<Vec<f64>>,
    /// Per-constraint β_i (length m), replacing the scalar β.
    pub beta_diag: Option<Vec<f64>>,
    /// Integral gain K_i [1/s³] of the PID form (0: plain Baumgarte).
    pub k_i: f64,
    /// Adaptive damping: `α = α₀ min(1, ‖Φ‖∞ / adaptive_eps)` (none if absent).
    pub adaptive_eps: Option<f64>,
    /// Keep the initial violation: stabilize `Φ̃ = Φ + a₀ + a₁ t` (seed 002 §18.2).
    pub offset: bool,
    /// KKT factorization.
    pub kkt: KktChoice,
    /// Gains per physical kind of constraint row (seed 001 §3.3.4, "基于约束的物理特性分组处
    /// 理"): `groups = { joint = { xi = 1.0, omega_n = 80.0 } }`, kinds as the problem names
    /// them (`MechanicalSystem::row_kinds`: `rigid-body`, `unit-norm`, `joint`); rows of
    /// other kinds keep the scalar gains. Excludes `alpha_diag`/`beta_diag`.
    pub groups: Option<std::collections::BTreeMap<String, GroupGains>>,
    /// Gains adapted from the violation history (seed 001 exercise 5;
    /// [`crate::explicit::baumgarte_history`]): `history = { window, gamma, delta, stable_region }`.
    pub history: Option<HistoryParams>,
    /// Tikhonov regularization ε of the multiplier system (seed 001 §3.5.4):
    /// `(Φ_q M⁻¹ Φ_qᵀ + εI) λ = b`; 0 = off. Biases the acceleration: `Φ_q a − γ = −ελ`.
    pub tikhonov: f64,
    /// Full gain matrices (seed 001 §3.3.4, "K_p, K_d"): the rows' error dynamics become
    /// `Φ̈ = −K_d Φ̇ − K_p Φ`, coupled through the off-diagonal entries, stable iff every
    /// eigenvalue s of `s² I + s K_d + K_p` has Re s < 0 — not decided by the diagonal.
    /// `gain_matrices = { k_p = [[…], …], k_d = [[…], …] }`, m rows of m entries each.
    /// Excludes every per-row, per-kind, adaptive and integral gain.
    pub gain_matrices: Option<GainMatrices>,
}

/// The gain matrices `K_p` [1/s²] and `K_d` [1/s] of [`BaumgarteParams::gain_matrices`],
/// as lists of rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GainMatrices {
    /// Position gain, m × m.
    pub k_p: Vec<Vec<f64>>,
    /// Velocity gain, m × m.
    pub k_d: Vec<Vec<f64>>,
}

impl GainMatrices {
    /// Both matrices m × m with finite entries, or the reason.
    fn check(&self, m: usize) -> Result<(), String> {
        for (name, k) in [("k_p", &self.k_p), ("k_d", &self.k_d)] {
            if k.len() != m || k.iter().any(|row| row.len() != m) {
                let cols: Vec<usize> = k.iter().map(Vec::len).collect();
                return Err(format!(
                    "`gain_matrices.{name}` has {} rows of {cols:?} entries; the problem has m = {m} constraint rows, give m rows of m entries",
                    k.len()
                ));
            }
            if k.iter().flatten().any(|x| !x.is_finite()) {
                return Err(format!("`gain_matrices.{name}` has a non-finite entry"));
            }
        }
        Ok(())
    }

    /// `out = −K_d φ̇ − K_p φ`.
    fn feedback(&self, phi: &[f64], phidot: &[f64], out: &mut [f64]) {
        for (r, o) in out.iter_mut().enumerate() {
            *o = -(0..phi.len())
                .map(|c| self.k_d[r][c] * phidot[c] + self.k_p[r][c] * phi[c])
                .sum::<f64>();
        }
    }
}

/// The gains of one kind of constraint row.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupGains {
    /// Damping ratio ξ.
    pub xi: f64,
    /// Natural frequency ω_n [1/s].
    pub omega_n: f64,
}

impl BaumgarteParams {
    /// Resolve to `(α, β)`, rejecting mixed or partial specifications.
    pub fn gains(&self) -> Result<Gains, ParamError> {
        let id = ID;
        let nonneg = |field: &'static str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(v)
            } else {
                Err(ParamError::OutOfRange {
                    id: id.into(),
                    field,
                    value: v,
                    fix: "give a finite value ≥ 0".into(),
                })
            }
        };
        match (self.xi, self.omega_n, self.alpha, self.beta) {
            (None, None, Some(a), Some(b)) => Ok(Gains {
                alpha: nonneg("alpha", a)?,
                beta: nonneg("beta", b)?,
            }),
            (xi, om, None, None) => {
                let xi = nonneg("xi", xi.unwrap_or(DEFAULT_XI))?;
                let om = nonneg("omega_n", om.unwrap_or(DEFAULT_OMEGA_N))?;
                Ok(Gains::from_xi_omega(xi, om))
            }
            (_, _, a, b) => Err(ParamError::OutOfRange {
                id: id.into(),
                field: if a.is_none() {
                    "alpha"
                } else if b.is_none() {
                    "beta"
                } else {
                    "xi"
                },
                value: f64::NAN,
                fix:
                    "give either (xi, omega_n) or both (alpha, beta), not a mix: α = ξ ω_n, β = ω_n"
                        .into(),
            }),
        }
    }
}

/// The spectral radius of the Baumgarte error map of the Taylor update for one linear
/// constraint, as a function of `αh` and `βh`:
/// `[[1 − ½β²h², h − αh²], [−β²h, 1 − 2αh]]` in the variables `(z, ż)` (scaled so that
/// only `αh`, `βh` enter). Radius < 1: the discrete constraint error decays.
pub fn amplification_radius(alpha_h: f64, beta_h: f64) -> f64 {
    let (a, b) = (alpha_h, beta_h);
    // In (z, h ż): [[1 − ½b², 1 − a], [−b², 1 − 2a]].
    let (m11, m12, m21, m22) = (1.0 - 0.5 * b * b, 1.0 - a, -b * b, 1.0 - 2.0 * a);
    let tr = m11 + m22;
    let det = m11 * m22 - m12 * m21;
    let disc = tr * tr - 4.0 * det;
    if disc >= 0.0 {
        let s = disc.sqrt();
        ((tr + s) / 2.0).abs().max(((tr - s) / 2.0).abs())
    } else {
        det.abs().sqrt()
    }
}

/// `v[r]`, or `uniform` when `v` is empty (a per-constraint value that is the same for
/// every constraint is not stored).
fn uniform_or(v: &[f64], r: usize, uniform: f64) -> f64 {
    v.get(r).copied().unwrap_or(uniform)
}

/// Baumgarte-stabilized Taylor scheme.
pub struct Baumgarte {
    gains: Gains,
    p: BaumgarteParams,
    kkt: KktChoice,
}

/// [`Baumgarte`] bound to its system. `S` holds the system: a reference to it, or (for
/// `typed`, whose inner Baumgarte step runs on a view of the problem that it builds at
/// start) the view itself.
struct BaumgarteStepper<S> {
    sys: S,
    /// The gains in use (the history rule adapts them during the run).
    gains: Gains,
    p: BaumgarteParams,
    // Per-constraint values; empty when uniform (the scalar gain, or zero): a 10⁶-link
    // chain saves 8 bytes per link and vector (see [`uniform_or`]).
    alpha: Vec<f64>,
    beta: Vec<f64>,
    integral: Vec<f64>,
    a0: Vec<f64>,
    a1: Vec<f64>,
    solver: AccelerationSolver,
    stats: MethodStats,
    phi: Vec<f64>,
    phit: Vec<f64>,
    bias: Vec<f64>,
    history: Option<GainHistory>,
}

impl Baumgarte {
    /// Baumgarte's stabilization with gains `p`; `ParamError` naming the field unless
    /// `adaptive_eps > 0` (when given), `k_i ≥ 0` and the gains are valid
    /// ([`BaumgarteParams::gains`]).
    pub fn new(p: BaumgarteParams) -> Result<Self, ParamError> {
        if let Some(e) = p.adaptive_eps {
            driftlab_core::params::positive(ID, "adaptive_eps", e)?;
        }
        if let Some(groups) = &p.groups {
            if p.alpha_diag.is_some() || p.beta_diag.is_some() {
                return Err(ParamError::Invalid {
                    kind: "method",
                    id: ID.into(),
                    message: "give gains per row (`alpha_diag`, `beta_diag`) or per kind of row (`groups`), not both".into(),
                });
            }
            for g in groups.values() {
                for (field, x) in [("groups.xi", g.xi), ("groups.omega_n", g.omega_n)] {
                    if !(x.is_finite() && x >= 0.0) {
                        return Err(ParamError::OutOfRange {
                            id: ID.into(),
                            field,
                            value: x,
                            fix: "give a finite value ≥ 0".into(),
                        });
                    }
                }
            }
        }
        if let Some(hp) = &p.history {
            if hp.window < 2 {
                return Err(ParamError::OutOfRange {
                    id: ID.into(),
                    field: "history.window",
                    value: hp.window as f64,
                    fix: "give a window of at least 2 steps".into(),
                });
            }
            for (field, x) in [("history.gamma", hp.gamma), ("history.delta", hp.delta)] {
                if !(x.is_finite() && x >= 0.0) {
                    return Err(ParamError::OutOfRange {
                        id: ID.into(),
                        field,
                        value: x,
                        fix: "give a finite gain ≥ 0".into(),
                    });
                }
            }
        }
        if p.gain_matrices.is_some() {
            let others = [
                ("alpha_diag", p.alpha_diag.is_some()),
                ("beta_diag", p.beta_diag.is_some()),
                ("groups", p.groups.is_some()),
                ("history", p.history.is_some()),
                ("adaptive_eps", p.adaptive_eps.is_some()),
                ("k_i", p.k_i != 0.0),
            ];
            if let Some((field, _)) = others.iter().find(|(_, set)| *set) {
                return Err(ParamError::Invalid {
                    kind: "method",
                    id: ID.into(),
                    message: format!(
                        "`gain_matrices` replaces every other gain: drop `{field}` or drop `gain_matrices`"
                    ),
                });
            }
        }
        if !(p.k_i.is_finite() && p.k_i >= 0.0) {
            return Err(ParamError::OutOfRange {
                id: ID.into(),
                field: "k_i",
                value: p.k_i,
                fix: "give k_i ≥ 0".into(),
            });
        }
        Ok(Self {
            gains: p.gains()?,
            p: p.clone(),
            kkt: p.kkt,
        })
    }

    /// The per-row gains `(α_i, β_i)` on `s` (empty: the scalar gains), from
    /// `alpha_diag`/`beta_diag` or the kinds' `groups`; the gain matrices checked.
    fn row_gains(&self, s: &dyn MechanicalSystem) -> Result<(Vec<f64>, Vec<f64>), MethodError> {
        let m = s.dims().m;
        let per = |diag: &Option<Vec<f64>>, field: &str| -> Result<Vec<f64>, MethodError> {
            match diag {
                // Uniform: the scalar gain (`uniform_or`).
                None => Ok(Vec::new()),
                Some(v) if v.len() == m && v.iter().all(|x| x.is_finite() && *x >= 0.0) => {
                    Ok(v.clone())
                }
                Some(v) => Err(MethodError::Incompatible {
                    method: ID.into(),
                    problem: s.info().id,
                    reason: format!(
                        "`{field}` has {} entries ≥ 0 expected {} (one per constraint)",
                        v.len(),
                        m
                    ),
                }),
            }
        };
        if let Some(gm) = &self.p.gain_matrices {
            gm.check(m).map_err(|reason| MethodError::Incompatible {
                method: ID.into(),
                problem: s.info().id,
                reason,
            })?;
        }
        let alpha = per(&self.p.alpha_diag, "alpha_diag")?;
        let beta = per(&self.p.beta_diag, "beta_diag")?;
        match &self.p.groups {
            Some(groups) => group_gains(s, groups, self.gains),
            None => Ok((alpha, beta)),
        }
    }

    /// [`Method::start`] on a system held by `sys` (a reference, or an owned view such as
    /// `typed`'s restriction of the problem to some of its rows).
    pub(crate) fn start_on<'s, S>(
        &self, sys: S, state: &mut State, opts: &StartOptions,
    ) -> Result<Box<dyn Stepper + 's>, MethodError>
    where
        S: Deref<Target = dyn MechanicalSystem + 's> + Send + 's,
    {
        let s: &dyn MechanicalSystem = &*sys;
        let d = s.dims();
        let solver =
            AccelerationSolver::new(s, self.kkt.options(opts))?.with_tikhonov(self.p.tikhonov);
        let mut phi = vec![0.0; d.m];
        let mut phit = vec![0.0; d.m];
        let mut bias = vec![0.0; d.m];
        let (alpha, beta) = self.row_gains(s)?;
        let integral = if self.p.k_i > 0.0 {
            vec![0.0; d.m]
        } else {
            Vec::new()
        };
        let (a0, a1) = if self.p.offset {
            offsets(s, state, (&mut phi, &mut phit, &mut bias))
        } else {
            (Vec::new(), Vec::new())
        };
        let mut stepper = BaumgarteStepper {
            sys,
            gains: self.gains,
            p: self.p.clone(),
            alpha,
            beta,
            integral,
            a0,
            a1,
            solver,
            stats: MethodStats::default(),
            phi,
            phit,
            bias,
            history: self.p.history.map(GainHistory::new),
        };
        stepper.refresh(state)?;
        Ok(Box::new(stepper))
    }
}

/// Per-row `(α, β)` from the gains of each row's kind (`groups`), the scalar `gains` for
/// rows of other kinds.
fn group_gains(
    s: &dyn MechanicalSystem, groups: &std::collections::BTreeMap<String, GroupGains>, gains: Gains,
) -> Result<(Vec<f64>, Vec<f64>), MethodError> {
    let kinds = s.row_kinds();
    let refuse = |reason: String| MethodError::Incompatible {
        method: ID.into(),
        problem: s.info().id,
        reason,
    };
    if kinds.len() != s.dims().m {
        return Err(refuse(
            "`groups` needs the problem to name the kind of each constraint row (MechanicalSystem::row_kinds); this one does not".into(),
        ));
    }
    if let Some(unknown) = groups.keys().find(|k| !kinds.contains(&k.as_str())) {
        let mut present: Vec<&str> = kinds.clone();
        present.sort_unstable();
        present.dedup();
        return Err(refuse(format!(
            "`groups` names the kind `{unknown}`; this problem's rows are of the kinds {}",
            present.join(", ")
        )));
    }
    Ok(kinds
        .iter()
        .map(|k| match groups.get(*k) {
            Some(g) => (g.xi * g.omega_n, g.omega_n),
            None => (gains.alpha, gains.beta),
        })
        .unzip())
}

/// Declared properties of `baumgarte`.
pub fn info() -> MethodInfo {
    MethodInfo {
        id: ID.into(),
        symplectic_reason: "no: the feedback −2αΦ̇ − β²Φ is not Hamiltonian (it damps the constraint error), and the explicit Taylor update leaves the constraint manifold".into(),
        family: "baumgarte".into(),
        title: "Baumgarte stabilization (ξ, ω_n) on the Taylor scheme".into(),
        equations: "Φ_q a = γ − 2ξω_n(Φ_q v + Φ_t) − ω_n²Φ  (α = ξω_n, β = ω_n);  q += h v + ½h² a;  v += h a".into(),
        citation: "J. Baumgarte, Comput. Methods Appl. Mech. Eng. 1 (1972) 1–16; seed 002 §19 eq. (19.5)–(19.6); \
                   seed 001 §3.3.2–3.3.3"
            .into(),
        orders: DeclaredOrders { q: Some(1.0), v: Some(1.0), lambda: Some(1.0) },
        enforces: ConstraintLevels::default(),
        nonholonomic: true,
        varying_mass: true,
        ..MethodInfo::default()
    }
}

/// The offsets `a₀ = −Φ(t₀, q₀) − a₁ t₀`, `a₁ = −Φ̇(t₀, q₀, v₀)` that keep the initial
/// violation (seed 002 §18.2), computed in the scratch rows `(φ, φ_t, Φ_q v)`.
fn offsets(
    s: &dyn MechanicalSystem, state: &State,
    (phi, phit, bias): (&mut [f64], &mut [f64], &mut [f64]),
) -> (Vec<f64>, Vec<f64>) {
    let m = s.dims().m;
    let (mut a0, mut a1) = (vec![0.0; m], vec![0.0; m]);
    let pattern = s.jacobian_pattern();
    let mut jac = vec![0.0; pattern.nnz()];
    s.constraints(state.t, &state.q, phi);
    s.jacobian(state.t, &state.q, &mut jac);
    s.phi_t(state.t, &state.q, phit);
    pattern.mul_vec(&jac, &state.v, bias, false);
    for r in 0..m {
        a1[r] = -(bias[r] + phit[r]);
        a0[r] = -phi[r] - a1[r] * state.t;
    }
    (a0, a1)
}

impl Method for Baumgarte {
    fn info(&self) -> MethodInfo {
        let mut i = info();
        i.title = format!(
            "Baumgarte stabilization, ξ = {}, ω_n = {} (α = {}, β = {})",
            self.gains.xi(),
            self.gains.omega_n(),
            self.gains.alpha,
            self.gains.beta
        );
        i
    }
    /// Restartable without the integral term and the gain history (the step then
    /// depends on `(q, v, a)` alone; the PID form's integral of Φ and the window are
    /// memory).
    fn restartable(&self) -> bool {
        self.p.k_i <= 0.0 && self.p.history.is_none()
    }
    fn start<'s>(
        &self, sys: Mechanical<'s>, state: &mut State, opts: &StartOptions,
    ) -> Started<'s> {
        self.start_on(sys, state, opts)
    }
}

impl<'s, S> Stepper for BaumgarteStepper<S>
where
    S: Deref<Target = dyn MechanicalSystem + 's> + Send,
{
    fn step(&mut self, state: &mut State, h: f64) -> Result<StepReport, StepError> {
        let sys: &dyn MechanicalSystem = &*self.sys;
        crate::dynamics::taylor_update(state, h);
        self.stats.steps += 1;
        if self.p.k_i > 0.0 {
            sys.constraints(state.t, &state.q, &mut self.phi);
            for r in 0..self.phi.len() {
                let (a0, a1) = (uniform_or(&self.a0, r, 0.0), uniform_or(&self.a1, r, 0.0));
                self.integral[r] += h * (self.phi[r] + a0 + a1 * state.t);
            }
        }
        if let Some(hist) = self.history.as_mut() {
            sys.constraints(state.t, &state.q, &mut self.phi);
            hist.update(&self.phi, h, &mut self.gains);
        }
        self.refresh(state)?;
        Ok(StepReport {
            factorizations: 1,
            ..Default::default()
        })
    }
    fn counters(&self) -> Vec<(&'static str, usize)> {
        match &self.history {
            Some(h) => vec![
                ("beta_raised", h.beta_raised),
                ("alpha_raised", h.alpha_raised),
                ("clamped", h.clamped),
            ],
            None => Vec::new(),
        }
    }
    fn refresh(&mut self, state: &mut State) -> Result<(), StepError> {
        let (s, solver): (&dyn MechanicalSystem, _) = (&*self.sys, &mut self.solver);
        let t = state.t;
        solver.load(s, t, &state.q, &state.v);
        s.constraints(t, &state.q, &mut self.phi);
        s.phi_t(t, &state.q, &mut self.phit);
        let (jp, jac) = solver.jacobian();
        jp.mul_vec(jac, &state.v, &mut self.bias, false);
        // Φ̃ = Φ + a₀ + a₁ t (zero offsets unless `offset`), Φ̃' = Φ_q v + Φ_t + a₁.
        let norm = self
            .phi
            .iter()
            .enumerate()
            .map(|(r, p)| (p + uniform_or(&self.a0, r, 0.0) + 0.0).abs())
            .fold(0.0_f64, f64::max);
        let damp = match self.p.adaptive_eps {
            Some(eps) => (norm / eps).min(1.0),
            None => 1.0,
        };
        for r in 0..self.bias.len() {
            let (a0, a1) = (uniform_or(&self.a0, r, 0.0), uniform_or(&self.a1, r, 0.0));
            self.phi[r] += a0 + a1 * t;
            self.bias[r] += self.phit[r] + a1;
        }
        // bias holds Φ̃' here; it becomes the feedback −2αΦ̃' − β²Φ̃ − K_i∫Φ̃ (or the
        // matrix form).
        if let Some(gm) = &self.p.gain_matrices {
            let phidot = self.bias.clone();
            gm.feedback(&self.phi, &phidot, &mut self.bias);
        } else {
            for r in 0..self.bias.len() {
                let alpha = uniform_or(&self.alpha, r, self.gains.alpha) * damp;
                let beta = uniform_or(&self.beta, r, self.gains.beta);
                let integral = uniform_or(&self.integral, r, 0.0);
                self.bias[r] =
                    -2.0 * alpha * self.bias[r] - beta * beta * self.phi[r] - self.p.k_i * integral;
            }
        }
        solver.solve_loaded(
            s,
            t,
            &state.q,
            Some(&self.bias),
            &mut state.a,
            &mut state.lambda,
        )
    }
    fn stats(&self) -> MethodStats {
        with_kkt_stats(self.stats, Some(self.solver.stats()))
    }
}

/// The catalog id `baumgarte`, written once: the entry, the parameter parse and the messages use it.
const ID: &str = "baumgarte";

/// This method's catalog line: id, declared properties, build from a spec's parameter
/// table (unknown keys are errors), defaults.
pub fn entry() -> crate::entry::MethodEntry {
    use driftlab_core::params;
    crate::entry::MethodEntry {
        id: ID,
        info,
        build: |t| Ok(Box::new(Baumgarte::new(params::parse("method", ID, t)?)?)),
        defaults,
    }
}

/// Default parameters as `describe` shows them: the `(xi, omega_n)` pair filled in.
fn defaults() -> toml::Table {
    let mut t = driftlab_core::params::defaults::<BaumgarteParams>();
    t.insert("xi".into(), DEFAULT_XI.into());
    t.insert("omega_n".into(), DEFAULT_OMEGA_N.into());
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 001 §3.11 says α, β < 1/(2h) keeps the correction stable. For the Taylor
    /// update the error map has det = 1 − 2αh + ½β²h², tr = 2 − 2αh − ½β²h², and the
    /// Jury conditions give exactly: stable ⇔ β²h/4 < α < 1/h. So the guidance is
    /// sufficient only together with enough damping (α > β²h/4, i.e. ξ > ω_n h/4); with
    /// α → 0 the explicit update pumps energy into the constraint error whatever h is.
    #[test]
    fn guidance_holds_only_with_enough_damping() {
        for i in 1..=60 {
            for j in 1..=60 {
                let (ah, bh) = (1.2 * i as f64 / 60.0, 1.2 * j as f64 / 60.0);
                let r = amplification_radius(ah, bh);
                let predicted = bh * bh / 4.0 < ah && ah < 1.0;
                // Away from the boundary (margin for round-off) the radius tells the same.
                let margin = (ah - bh * bh / 4.0).abs().min((ah - 1.0).abs());
                if margin > 1e-9 {
                    assert_eq!(r < 1.0, predicted, "αh = {ah}, βh = {bh}: radius {r}");
                }
            }
        }
        // Inside the guidance box but under-damped: unstable.
        assert!(amplification_radius(0.01, 0.4) > 1.0);
        // Critical damping (α = β): stable for all βh < 1, which contains the guidance.
        assert!((1..100).all(|k| amplification_radius(k as f64 / 100.0, k as f64 / 100.0) < 1.0));
    }

    #[test]
    fn conversion_between_gain_forms() -> Result<(), ParamError> {
        let g = BaumgarteParams {
            xi: Some(0.8),
            omega_n: Some(2.0),
            ..Default::default()
        }
        .gains()?;
        assert!((g.alpha - 1.6).abs() < 1e-15 && (g.beta - 2.0).abs() < 1e-15);
        let g2 = BaumgarteParams {
            alpha: Some(1.6),
            beta: Some(2.0),
            ..Default::default()
        }
        .gains()?;
        assert!((g2.xi() - 0.8).abs() < 1e-15 && (g2.omega_n() - 2.0).abs() < 1e-15);
        let mixed = BaumgarteParams {
            xi: Some(1.0),
            alpha: Some(1.0),
            ..Default::default()
        }
        .gains();
        assert!(mixed.is_err());
        Ok(())
    }
}
