//! The system traits: what a problem must provide so that any method can step it.

use crate::error::MethodError;
use crate::evaluate::{Evaluate, ImplicitMetrics, Index1Metrics, MechanicalMetrics};
use crate::method::{Method, StartOptions, Stepper};
use crate::pattern::SparsityPattern;
use crate::state::State;

/// Dimensions of a mechanical system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    /// Number of position coordinates `q` (equal to the number of velocities here).
    pub n: usize,
    /// Number of holonomic constraints `Φ`.
    pub m: usize,
}

/// Metadata of a problem: what it is, its equations, and where it comes from.
#[derive(Clone, Debug, Default)]
pub struct ProblemInfo {
    /// Catalog id (kebab-case).
    pub id: String,
    /// One-line title.
    pub title: String,
    /// The equations, in plain text with Unicode math.
    pub equations: String,
    /// Citation of the source of the model and of its reference solution.
    pub citation: String,
    /// Tags (`planar`, `conservative`, `exact-solution`, `scalable`, `index-1`, …).
    pub tags: Vec<String>,
    /// Differentiation index of the DAE.
    pub index: u8,
    /// Default end time.
    pub t_end: f64,
    /// Where the reference solution comes from (`exact: Jacobi elliptic functions`, …).
    pub reference: String,
}

/// The exact (or reference) state at one time.
#[derive(Clone, Debug, PartialEq)]
pub struct ExactSolution {
    /// Positions (differential variables `x` for an index-1 DAE).
    pub q: Vec<f64>,
    /// Velocities (empty for an index-1 DAE).
    pub v: Vec<f64>,
    /// Multipliers (algebraic variables `z` for an index-1 DAE).
    pub lambda: Vec<f64>,
}

/// Which components count in the Test Set's "significant correct digits" score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScdComponents {
    /// Positions only (the IVP Test Set andrews driver skips components > 7).
    Positions,
    /// Positions, velocities and multipliers (the car axis driver uses all 10).
    All,
}

/// A published reference state at one time (IVP Test Set style), with its provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceSolution {
    /// Time of the reference state.
    pub t: f64,
    /// The state (multipliers in this workspace's sign convention `M v' = f − Φ_qᵀλ`).
    pub state: ExactSolution,
    /// Components scored by `scd`.
    pub scd: ScdComponents,
    /// Who computed it, how, and how accurate it is believed to be.
    pub provenance: String,
}

impl ReferenceSolution {
    /// Significant correct digits of `(q, v, λ)` at `self.t`:
    /// `scd = −log₁₀ max_i |y_i − ref_i| / |ref_i|` over the scored components (absolute
    /// error where `ref_i = 0`), the measure of the IVP Test Set drivers (Mazzia &
    /// Magherini, *Test Set for IVP Solvers*, release 2.4, 2008, §I.1.5).
    pub fn scd(&self, q: &[f64], v: &[f64], lambda: &[f64]) -> f64 {
        let rel = |y: &[f64], r: &[f64]| {
            y.iter().zip(r).fold(0.0_f64, |m, (a, b)| {
                let d = (a - b).abs();
                m.max(if *b == 0.0 { d } else { d / b.abs() })
            })
        };
        let mut e = rel(q, &self.state.q);
        if self.scd == ScdComponents::All {
            e = e
                .max(rel(v, &self.state.v))
                .max(rel(lambda, &self.state.lambda));
        }
        if e.is_nan() {
            f64::NAN
        } else {
            -e.max(f64::MIN_POSITIVE).log10()
        }
    }
}

/// Where a problem's exact solution or published reference holds, at the problem's
/// parameters over `[t₀, t_end]`: what the runner checks before it compares a method
/// against it (outside its domain the error columns are left null, with the reason), and
/// the accuracy below which an error is not the method's (the order fit's floor).
#[derive(Clone, Debug, PartialEq)]
pub enum ReferenceDomain {
    /// The problem has neither an exact solution nor a published reference.
    Absent,
    /// It has one but declares no domain (a user's problem that did not say): only the
    /// run-time self-check (its own residuals at the compared points) guards it.
    Undeclared,
    /// Valid here: errors against it are good to `accuracy` (absolute, in the units of the
    /// error columns; for a published reference relative, so that `scd ≤ −log₁₀
    /// accuracy`), for the reason given in `basis` (the formula's error bound, the
    /// reference's published accuracy).
    Valid {
        /// The reference's own error bound at these parameters and this end time.
        accuracy: f64,
        /// Where the bound comes from.
        basis: String,
    },
    /// Outside its domain: why, with the numbers, and what the domain is.
    Outside(String),
}

/// The default [`MechanicalSystem::reference_domain`]: [`ReferenceDomain::Undeclared`]
/// when `exact_at_t0` or `published` says there is a reference, else absent.
pub fn undeclared_domain(exact_at_t0: bool, published: bool) -> ReferenceDomain {
    if exact_at_t0 || published {
        ReferenceDomain::Undeclared
    } else {
        ReferenceDomain::Absent
    }
}

/// A holonomically constrained mechanical system, the index-3 DAE
///
/// ```text
/// M(q) v' = f(t, q, v) − Φ_q(t, q)ᵀ λ,     q' = v,     Φ(t, q) = 0.
/// ```
///
/// Derivatives are hand-coded and property-tested against central finite differences
/// (`driftlab_problems::conformance`, run over the catalog and callable on any problem). The trait is object safe; all outputs are
/// written into caller-provided slices so that a step allocates nothing.
pub trait MechanicalSystem: Send + Sync {
    /// What the problem is.
    fn info(&self) -> ProblemInfo;
    /// Dimensions `(n, m)`.
    fn dims(&self) -> Dims;
    /// Lower-triangle pattern of `M` (fixed for the run).
    fn mass_pattern(&self) -> SparsityPattern;
    /// Values of `M(q)` in the order of [`Self::mass_pattern`]. For a problem whose mass
    /// depends on time or velocity ([`Self::mass_varies`]) this is `M(t₀, q, v₀)` at the
    /// start.
    fn mass(&self, q: &[f64], out: &mut [f64]);
    /// Values of `M(t, q, v)` (issue 32 B2: a variable-mass or rheonomic inertia); by
    /// default `M(q)`. Only methods whose [`crate::MethodInfo::varying_mass`] is set call
    /// it at every state; [`crate::drive()`] refuses the others on a problem whose
    /// [`Self::mass_varies`].
    fn mass_at(&self, _t: f64, q: &[f64], _v: &[f64], out: &mut [f64]) {
        self.mass(q, out);
    }
    /// Whether `M` depends on `t` or `v` (so that [`Self::mass`] alone does not give it).
    fn mass_varies(&self) -> bool {
        false
    }
    /// Applied forces `f(t, q, v)` (gravity, springs, torques; not the constraint force).
    fn forces(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]);
    /// Constraint residual `Φ(t, q)` (length `m`).
    fn constraints(&self, t: f64, q: &[f64], out: &mut [f64]);
    /// Pattern of `Φ_q` (`m × n`, fixed for the run).
    fn jacobian_pattern(&self) -> SparsityPattern;
    /// Values of `Φ_q(t, q)` in the order of [`Self::jacobian_pattern`].
    fn jacobian(&self, t: f64, q: &[f64], out: &mut [f64]);
    /// `Φ(t, q)` and `Φ_q(t, q)` at once, for a method that needs both at one point (the
    /// first-order form's residual): a problem whose two share work (Andrews' squeezer,
    /// one set of sines and cosines) overrides it; the default calls both.
    fn constraints_and_jacobian(&self, t: f64, q: &[f64], phi: &mut [f64], jac: &mut [f64]) {
        self.constraints(t, q, phi);
        self.jacobian(t, q, jac);
    }
    /// `Φ_t(t, q)`; zero for scleronomic constraints (the default).
    fn phi_t(&self, _t: f64, _q: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = 0.0);
    }
    /// Curvature term `γ = −(Φ_q v)_q v − 2 Φ_qt v − Φ_tt`, so that the acceleration
    /// constraint reads `Φ_q a = γ`.
    fn curvature(&self, t: f64, q: &[f64], v: &[f64], out: &mut [f64]);
    /// The constraint Hessian contraction `K(q, λ) = Σ_i λ_i ∇²Φ_i(q)`, if the problem
    /// provides it ([`ConstraintHessian`]; return `Some(self)`). Implicit methods add
    /// `h² K` to their Newton matrix for quadratic convergence; without it they use the
    /// simplified Newton matrix (the term is O(h²)).
    fn constraint_hessian(&self) -> Option<&dyn ConstraintHessian> {
        None
    }
    /// Symmetric tangent matrices of the applied forces, if the problem provides them
    /// ([`TangentMatrices`]): a stiff elastic body stepped at the scale of its slow motion.
    fn tangent(&self) -> Option<&dyn TangentMatrices> {
        None
    }
    /// Total energy `H(t, q, v)`, if the problem defines one.
    fn energy(&self, _t: f64, _q: &[f64], _v: &[f64]) -> Option<f64> {
        None
    }
    /// The physical kind of each constraint row (`"rigid-body"`, `"unit-norm"`, `"joint"`,
    /// …), for stabilizations that treat kinds apart (seed 001 §3.3.4 "基于约束的物理特性分组
    /// 处理"; Baumgarte's `groups`). Empty (the default): the problem does not say.
    fn row_kinds(&self) -> Vec<&'static str> {
        Vec::new()
    }
    /// The momenta the problem conserves (linear and angular momentum of a free system,
    /// in the problem's order), if it defines any: the runs table records their largest
    /// deviation from the initial values (`max_momentum_error`).
    fn momentum(&self, _t: f64, _q: &[f64], _v: &[f64]) -> Option<Vec<f64>> {
        None
    }
    /// Scale for the relative energy error `|H − H0| / max(|H0|, scale)`; needed when
    /// `H0` is zero (a pendulum released at the height of its pivot).
    fn energy_scale(&self) -> f64 {
        1.0
    }
    /// A consistent initial state (`Φ = 0`, `Φ_q v + Φ_t = 0`). `lambda` and `a` may be
    /// NaN; a method's `init` computes them from the KKT system.
    fn initial_state(&self) -> State;
    /// The exact solution at `t`, where one is known.
    fn exact(&self, _t: f64) -> Option<ExactSolution> {
        None
    }
    /// Number of **nonholonomic** rows, which are the last rows of `Φ_q` (seed 001 §3.8):
    /// `A(q) v + b(t, q) = 0` with `A` in [`Self::jacobian`], `b` in [`Self::phi_t`] and
    /// `−(A_q v) v − …` in [`Self::curvature`], while [`Self::constraints`] writes 0 for
    /// them (there is no position-level constraint). Default 0: all rows holonomic.
    /// Problems with such rows provide no constraint Hessian.
    fn nonholonomic_rows(&self) -> usize {
        0
    }
    /// Prioritized constraint groups ([`Prioritized`]), for problems whose groups may
    /// conflict (seed 001 §3.5.3). `None` (default): one level, all rows must hold.
    /// Methods that do not resolve priorities are refused by [`crate::drive()`].
    fn prioritized(&self) -> Option<&dyn Prioritized> {
        None
    }
    /// The rigid-body attitude structure a Lie-group integrator works on ([`Attitude`]),
    /// for a problem whose configuration is one body's unit quaternion.
    fn attitude(&self) -> Option<&dyn Attitude> {
        None
    }
    /// Unilateral rows `g(t, q) ≥ 0` ([`Unilateral`]: joint limits, contacts; seed 001
    /// §3.6.1), kept apart from Φ. Methods that do not enforce them are refused by
    /// [`crate::drive()`].
    fn unilateral(&self) -> Option<&dyn Unilateral> {
        None
    }
    /// A published reference state (IVP Test Set), where one exists; runs that end at its
    /// time are scored in significant correct digits (`scd` column).
    fn reference(&self) -> Option<ReferenceSolution> {
        None
    }
    /// Where [`Self::exact`] and [`Self::reference`] hold at this problem's parameters over
    /// `[t₀, t_end]` ([`ReferenceDomain`]). A problem with either declares it; the default
    /// says [`ReferenceDomain::Undeclared`] when it has one.
    fn reference_domain(&self, _t_end: f64) -> ReferenceDomain {
        undeclared_domain(self.exact(0.0).is_some(), self.reference().is_some())
    }
    /// The actuators a policy drives, where the problem has them (a model file's motors):
    /// each a generalized force `gear · u` on its coordinates, `u` clipped to its control
    /// range. None by default.
    fn actuators(&self) -> Vec<Actuator> {
        Vec::new()
    }
    /// The threads the running cell may use inside itself, stated by the time loop
    /// ([`crate::drive::drive`], from [`Schedule::threads`](crate::drive::Schedule::threads))
    /// before the first model call. A system whose model functions can fan out over
    /// independent parts (`driftlab_problems`' `copies`) keeps the count and fans out on
    /// the current rayon pool only when it is ≥ 2; the runner gives a cell of `threads =
    /// k ≥ 2` a pool of `k` threads of its own, and runs cells of 1 side by side, where a
    /// fan-out would take a neighbour's core. Others ignore it (the default). A wrapper
    /// passes it on (`forward_mechanical!`'s `threads`).
    fn use_threads(&self, _threads: usize) {}
}

/// One actuator of a [`MechanicalSystem`]: the generalized force `u·Σ (gear_i e_{c_i})` of
/// a control `u`, clipped to `ctrlrange` where limited (MuJoCo's motor).
#[derive(Clone, Debug, PartialEq)]
pub struct Actuator {
    /// Its name in the model file.
    pub name: String,
    /// The coordinates it drives and the force per unit of control on each.
    pub column: Vec<(usize, f64)>,
    /// The control range, where limited.
    pub ctrlrange: Option<[f64; 2]>,
}

impl Actuator {
    /// Add this actuator's force at control `u` (clipped) to `f`.
    pub fn apply(&self, u: f64, f: &mut [f64]) {
        let u = match self.ctrlrange {
            Some([lo, hi]) => u.clamp(lo, hi),
            None => u,
        };
        for &(c, gear) in &self.column {
            f[c] += gear * u;
        }
    }
}

/// Opt-in capability of a [`MechanicalSystem`]: the constraint Hessian contraction
///
/// ```text
/// K(q, λ) = Σ_i λ_i ∇²Φ_i(q) = (Φ_q(q)ᵀ λ)_q      (symmetric, n × n)
/// ```
///
/// A problem implements it and returns `Some(self)` from
/// [`MechanicalSystem::constraint_hessian`]; a pattern without values cannot exist.
pub trait ConstraintHessian {
    /// Lower-triangle pattern of `K` (fixed for the run).
    fn pattern(&self) -> SparsityPattern;
    /// Values of `K(q, λ)` in the order of [`Self::pattern`].
    fn values(&self, t: f64, q: &[f64], lambda: &[f64], out: &mut [f64]);
}

/// Opt-in capability of a [`MechanicalSystem`]: symmetric tangent matrices of the applied
/// forces, a stiffness `K_t ≈ −∂f/∂q` and a damping `C_t ≈ −∂f/∂v` (their symmetric
/// parts, or their stiff parts). Implicit methods add them, scaled by their step
/// coefficients, to the Newton iteration matrix (Arnold & Brüls 2007, §3:
/// `S_t = β′M + γ′C_t + K_t`). Without them the iteration is a fixed point in the stiff
/// forces and needs `h ω_max ≲ 1`. Dropped skew parts (gyroscopic terms) only slow
/// convergence, never change the converged result.
pub trait TangentMatrices {
    /// Lower-triangle pattern shared by `K_t` and `C_t` (fixed for the run).
    fn pattern(&self) -> SparsityPattern;
    /// Values of `K_t` and `C_t` in the order of [`Self::pattern`].
    fn values(&self, t: f64, q: &[f64], v: &[f64], k: &mut [f64], c: &mut [f64]);
}

/// Opt-in capability of a [`MechanicalSystem`] (issue 32 W17): the configuration `q = p`
/// is one rigid body's attitude as a unit quaternion (n = 4, the row `pᵀp = 1`), its
/// velocity `ṗ = ½ p ⊗ (0, ω')` with the body angular velocity ω', and the motion Euler's
/// equations `J'ω̇' + ω' × J'ω' = n'(t, p, ω')` in the principal body frame — the structure
/// on which a Lie-group integrator steps the attitude on SO(3) (through its double cover
/// S³) instead of in ℝ⁴ with a constraint (Iserles, Munthe-Kaas, Nørsett & Zanna, Acta
/// Numerica 9, 2000, §8).
pub trait Attitude: Send + Sync {
    /// Principal moments of inertia `(J₁, J₂, J₃)` of the body frame.
    fn principal_inertia(&self) -> [f64; 3];
    /// Applied torque `n'(t, p, ω')` in the body frame.
    fn body_torque(&self, t: f64, p: &[f64], w: &[f64; 3]) -> [f64; 3];
}

/// Opt-in capability of a [`MechanicalSystem`]: unilateral rows `g(t, q) ≥ 0` (joint
/// limits, contacts; seed 001 §3.6.1), kept apart from Φ. A method that accepts them
/// enforces the complementarity `0 ≤ P ⊥ g ≥ 0` with Newton's impact law.
pub trait Unilateral {
    /// Number of rows `k`.
    fn rows(&self) -> usize;
    /// Gaps `g(t, q)` (admissible when ≥ 0), length `k`.
    fn gaps(&self, t: f64, q: &[f64], out: &mut [f64]);
    /// Dense row-major gradient `G = g_q` (`k × n`).
    fn gap_jacobian(&self, t: f64, q: &[f64], out: &mut [f64]);
    /// Coefficient of restitution `e ∈ [0, 1]`: the normal velocity after an impact is
    /// `−e` times the one before.
    fn restitution(&self) -> f64;
}

/// Opt-in capability of a [`MechanicalSystem`]: constraint groups with priorities (seed 001
/// §3.5.3: lower priorities are satisfied only in the null space of the higher ones).
pub trait Prioritized {
    /// Priority level of every constraint row (0 = highest), length `m`.
    fn priorities(&self) -> Vec<u8>;
}

/// A semi-explicit index-1 DAE (seed 003):
///
/// ```text
/// x' = f(t, x, z),     0 = g(t, x, z),     g_z invertible near the solution.
/// ```
///
/// Jacobians are dense row-major (these systems are small); they are checked against
/// finite differences by the conformance suite.
pub trait SemiExplicitDae: Send + Sync {
    /// What the problem is.
    fn info(&self) -> ProblemInfo;
    /// `(dim x, dim z)`.
    fn dims(&self) -> (usize, usize);
    /// `f(t, x, z)`.
    fn f(&self, t: f64, x: &[f64], z: &[f64], out: &mut [f64]);
    /// `g(t, x, z)`.
    fn g(&self, t: f64, x: &[f64], z: &[f64], out: &mut [f64]);
    /// `g_t(t, x, z)`, the explicit time derivative of the constraint, so that the
    /// consistent algebraic velocity is `z' = −g_z⁻¹ (g_t + g_x f)`
    /// (`driftlab_problems::initial::index1_derivatives`). Default zero (autonomous `g`).
    fn g_t(&self, _t: f64, _x: &[f64], _z: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = 0.0);
    }
    /// Dense row-major Jacobians `f_x, f_z, g_x, g_z` at `(t, x, z)`.
    fn jacobians(&self, t: f64, x: &[f64], z: &[f64], out: &mut Index1Jacobians);
    /// Consistent initial state (`g(t0, x0, z0) = 0`).
    fn initial_state(&self) -> State;
    /// Exact solution at `t`, where known (`q` = x, `lambda` = z).
    fn exact(&self, _t: f64) -> Option<ExactSolution> {
        None
    }
    /// Where [`Self::exact`] holds ([`MechanicalSystem::reference_domain`]).
    fn reference_domain(&self, _t_end: f64) -> ReferenceDomain {
        undeclared_domain(self.exact(0.0).is_some(), false)
    }
}

/// A fully implicit system `F(t, y, y′) = 0` with `F_{y′}` invertible near the solution
/// (an implicit ODE), the general form of DASSL and IDA (Brenan, Campbell & Petzold,
/// *Numerical Solution of Initial-Value Problems in DAEs*, SIAM 1996, §1.1; Hindmarsh et
/// al., ACM TOMS 31 (2005) 363–396) — e.g. a mechanism in joint coordinates left as
/// `M(θ) ω′ + c(θ, ω) = τ` without solving for `ω′`. A state holds `y` in `q` and `y′` in
/// `v`; `λ` is empty. The methods that run it difference `F` themselves (dense; these
/// systems are small).
pub trait ImplicitDae: Send + Sync {
    /// What the problem is.
    fn info(&self) -> ProblemInfo;
    /// `dim y`.
    fn dim(&self) -> usize;
    /// `F(t, y, y′)`.
    fn residual(&self, t: f64, y: &[f64], yp: &[f64], out: &mut [f64]);
    /// Consistent initial state: `q = y₀`, `v = y′₀` with `F(t₀, y₀, y′₀) = 0`.
    fn initial_state(&self) -> State;
    /// Exact solution at `t`, where known (`q` = y, `v` = y′).
    fn exact(&self, _t: f64) -> Option<ExactSolution> {
        None
    }
    /// Where [`Self::exact`] holds ([`MechanicalSystem::reference_domain`]).
    fn reference_domain(&self, _t_end: f64) -> ReferenceDomain {
        undeclared_domain(self.exact(0.0).is_some(), false)
    }
}

/// Dense row-major Jacobians of a semi-explicit index-1 DAE.
#[derive(Clone, Debug, PartialEq)]
pub struct Index1Jacobians {
    /// `∂f/∂x` (`nx × nx`).
    pub fx: Vec<f64>,
    /// `∂f/∂z` (`nx × nz`).
    pub fz: Vec<f64>,
    /// `∂g/∂x` (`nz × nx`).
    pub gx: Vec<f64>,
    /// `∂g/∂z` (`nz × nz`).
    pub gz: Vec<f64>,
}

impl Index1Jacobians {
    /// Zeroed Jacobians for `nx` differential and `nz` algebraic variables.
    pub fn zeros(nx: usize, nz: usize) -> Self {
        Self {
            fx: vec![0.0; nx * nx],
            fz: vec![0.0; nx * nz],
            gx: vec![0.0; nz * nx],
            gz: vec![0.0; nz * nz],
        }
    }
}

/// Which form a system has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum SystemForm {
    /// Index-3 mechanical system.
    Mechanical,
    /// Semi-explicit index-1 DAE.
    SemiExplicit,
    /// Fully implicit `F(t, y, y′) = 0`.
    Implicit,
}

impl SystemForm {
    /// Human-readable name.
    pub fn name(self) -> &'static str {
        match self {
            SystemForm::Mechanical => "mechanical (index-3)",
            SystemForm::SemiExplicit => "semi-explicit index-1",
            SystemForm::Implicit => "fully implicit F(t, y, y′) = 0",
        }
    }
}

/// A borrowed system of either form; methods accept the forms they support.
#[derive(Clone, Copy)]
pub enum SystemRef<'a> {
    /// Index-3 mechanical system.
    Mechanical(&'a dyn MechanicalSystem),
    /// Semi-explicit index-1 DAE.
    SemiExplicit(&'a dyn SemiExplicitDae),
    /// Fully implicit system.
    Implicit(&'a dyn ImplicitDae),
}

impl<'a> From<&'a dyn ImplicitDae> for SystemRef<'a> {
    fn from(s: &'a dyn ImplicitDae) -> Self {
        Self::Implicit(s)
    }
}

impl<'a> From<&'a dyn MechanicalSystem> for SystemRef<'a> {
    fn from(s: &'a dyn MechanicalSystem) -> Self {
        Self::Mechanical(s)
    }
}

impl<'a> From<&'a dyn SemiExplicitDae> for SystemRef<'a> {
    fn from(s: &'a dyn SemiExplicitDae) -> Self {
        Self::SemiExplicit(s)
    }
}

/// The start module: the one place where the system forms are told apart. A run
/// binds its method ([`Self::start`]) and its metrics (`Self::evaluator`) here once;
/// what comes after holds a stepper and an evaluator and never asks for the form again.
impl<'a> SystemRef<'a> {
    /// Bind `method` to this system at `state`: each form meets its start
    /// functions ([`Method::start`], [`Method::start_index1`], [`Method::start_implicit`]).
    pub fn start(
        self, method: &dyn Method, state: &mut State, opts: &StartOptions,
    ) -> Result<Box<dyn Stepper + 'a>, MethodError> {
        match self {
            Self::Mechanical(s) => method.start(s, state, opts),
            Self::SemiExplicit(s) => method.start_index1(s, state, opts),
            Self::Implicit(s) => method.start_implicit(s, state, opts),
        }
    }
    /// The metrics evaluator of this system's form, with its reference energy from
    /// `initial`.
    pub(crate) fn evaluator(self, initial: &State) -> Box<dyn Evaluate + 'a> {
        match self {
            Self::Mechanical(s) => Box::new(MechanicalMetrics::new(s, initial)),
            Self::SemiExplicit(s) => Box::new(Index1Metrics::new(s)),
            Self::Implicit(s) => Box::new(ImplicitMetrics::new(s)),
        }
    }
    /// The mechanical system, if this is one (the capabilities only it has: momenta,
    /// unilateral and nonholonomic rows, priorities, published references).
    pub fn as_mechanical(self) -> Option<&'a dyn MechanicalSystem> {
        match self {
            Self::Mechanical(s) => Some(s),
            Self::SemiExplicit(_) | Self::Implicit(_) => None,
        }
    }
    /// State the running cell's threads ([`MechanicalSystem::use_threads`]; the index-1
    /// and implicit forms have no model function that fans out).
    pub fn use_threads(&self, threads: usize) {
        if let Self::Mechanical(s) = self {
            s.use_threads(threads);
        }
    }
    /// Coordinates and constraint rows: `(n, m)` of a mechanical system, `(nx, nz)` of
    /// an index-1 DAE.
    pub fn dims(&self) -> Dims {
        match self {
            Self::Mechanical(s) => s.dims(),
            Self::SemiExplicit(s) => {
                let (n, m) = s.dims();
                Dims { n, m }
            }
            Self::Implicit(s) => Dims { n: s.dim(), m: 0 },
        }
    }
    /// The form.
    pub fn form(&self) -> SystemForm {
        match self {
            Self::Mechanical(_) => SystemForm::Mechanical,
            Self::SemiExplicit(_) => SystemForm::SemiExplicit,
            Self::Implicit(_) => SystemForm::Implicit,
        }
    }
    /// Problem metadata.
    pub fn info(&self) -> ProblemInfo {
        match self {
            Self::Mechanical(s) => s.info(),
            Self::SemiExplicit(s) => s.info(),
            Self::Implicit(s) => s.info(),
        }
    }
    /// Initial state.
    pub fn initial_state(&self) -> State {
        match self {
            Self::Mechanical(s) => s.initial_state(),
            Self::SemiExplicit(s) => s.initial_state(),
            Self::Implicit(s) => s.initial_state(),
        }
    }
    /// Published reference state, where one exists (mechanical systems only).
    pub fn reference(&self) -> Option<ReferenceSolution> {
        self.as_mechanical().and_then(|s| s.reference())
    }
    /// Exact solution at `t`, where known.
    pub fn exact(&self, t: f64) -> Option<ExactSolution> {
        match self {
            Self::Mechanical(s) => s.exact(t),
            Self::SemiExplicit(s) => s.exact(t),
            Self::Implicit(s) => s.exact(t),
        }
    }
    /// Where the exact solution or published reference holds over `[t₀, t_end]`.
    pub fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        match self {
            Self::Mechanical(s) => s.reference_domain(t_end),
            Self::SemiExplicit(s) => s.reference_domain(t_end),
            Self::Implicit(s) => s.reference_domain(t_end),
        }
    }
}

/// The position and velocity residuals of `s` at `(t, q, v)`: `phi ← Φ(t, q)` and
/// `vel ← Φ_q v + Φ_t`, with their ∞-norms — the residual columns' definition, for the
/// code outside the metrics (projections, start checks) that needs the rows themselves.
pub fn constraint_residuals(
    s: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64], phi: &mut [f64], vel: &mut [f64],
) -> (f64, f64) {
    s.constraints(t, q, phi);
    let jp = s.jacobian_pattern();
    let mut jac = vec![0.0; jp.nnz()];
    s.jacobian(t, q, &mut jac);
    jp.mul_vec(&jac, v, vel, false);
    let mut phit = vec![0.0; vel.len()];
    s.phi_t(t, q, &mut phit);
    vel.iter_mut().zip(&phit).for_each(|(g, p)| *g += p);
    let inf = |x: &[f64]| x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    (inf(phi), inf(vel))
}
