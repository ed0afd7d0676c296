//! RATTLE's first half kick, implicit in the velocity as the Lobatto IIIA–IIIB pair
//! prescribes (its velocity stage is `V₁ = v_{n+½}`; GNI 2nd ed. §II.2.2):
//!
//! ```text
//! M (v_{n+½} − v_n) = ½h (f(t_n, q_n, v_{n+½}) − Φ_q(q_n)ᵀ λ_n),   q_{n+1} = q_n + h v_{n+½},
//! Φ(t_{n+1}, q_{n+1}) = 0
//! ```
//!
//! SHAKE (in `rattle.rs`) first solves these with the force `b = f(t_n, q_n, v_n)` of the
//! predictor. If `f(t_n, q_n, v_{n+½})` at its result compares equal to it component by
//! component, SHAKE's point already solves the kick and the step goes on unchanged (a
//! force of the positions only always ends here, with the same bits as before). Otherwise a simplified Newton
//! iteration in `q_{n+1}` (`v_{n+½} = (q_{n+1} − q_n)/h`) solves the coupled system with the
//! matrix
//!
//! ```text
//! [M + ½h D   Φ_q(q_n)ᵀ] [δq]   [½h² (f(v_{n+½}) − b)]
//! [Φ_q(q_n)   0        ] [μ ] = [−Φ(t_{n+1}, q_{n+1}) ],   D = −sym(∂f/∂v) in M's pattern,
//! ```
//!
//! where `b` is the force the current `q_{n+1}` carries (`M(q_{n+1} − q_n − h v_n) − ½h² b`
//! lies in the range of `Φ_q(q_n)ᵀ`, as SHAKE leaves it); after the update
//! `b ← f − D δq / h`, the force linearized at the new velocity, which keeps that so. At
//! `δq = 0`, `b = f(v_{n+½})` and the kick's equation holds exactly: `D` sets the speed of
//! the iteration, not its solution. `D` is a forward difference at SHAKE's `v_{n+½}`, one
//! force evaluation per coordinate, kept from step to step while the iteration contracts
//! well (`implicit_half_kick`); the skew part of `∂f/∂v` (gyroscopic terms) and its entries outside
//! M's pattern are left out, which slows the contraction. A fixed point without `D` needs
//! `½h ‖M⁻¹ ∂f/∂v‖ < 1`, which the light links of a robot with joint damping break at
//! h = 1e-3 (Cassie, `tests/redundancy.rs`).

use crate::dynamics::kkt_failure;
use driftlab_core::prelude::*;
use driftlab_core::SparsityPattern;
use driftlab_solver::newton::{NewtonFailure, NewtonKernel, NewtonOptions};
use driftlab_solver::KktSolver;

/// The entry map of `D = −sym(∂f/∂v)` in M's pattern, built once per run, at the first
/// step that needs it.
pub(super) struct DampingColumns {
    /// Per column `j`: the pattern entries it feeds, as (row `i`, entry index `k`, weight).
    /// Off-diagonal entries take half of `∂f_i/∂v_j` and half of `∂f_j/∂v_i`.
    feeds: Vec<Vec<(usize, usize, f64)>>,
}

impl DampingColumns {
    /// The map of the columns of `mp` (symmetric, one triangle) to its entries.
    pub(super) fn new(mp: &SparsityPattern) -> Self {
        let mut feeds = vec![Vec::new(); mp.nrows];
        for (k, &(i, j)) in mp.entries.iter().enumerate() {
            if i == j {
                feeds[j].push((i, k, 1.0));
            } else {
                feeds[j].push((i, k, 0.5));
                feeds[i].push((j, k, 0.5));
            }
        }
        Self { feeds }
    }

    /// `D = −sym(∂f/∂v)` at `(t, q, v)` in M's pattern into `d`, by forward differences
    /// from `f = f(t, q, v)`, one force evaluation per column: columns cannot share an
    /// evaluation, since `∂f/∂v` may couple coordinates that M does not (a diagonal M
    /// with velocity feedback between links), and perturbing them together would add
    /// those couplings into M's entries. `v_pert` and `f_pert` are work space of length n.
    fn fill(
        &self, s: &dyn MechanicalSystem, (t, q, v, f): (f64, &[f64], &[f64], &[f64]),
        (v_pert, f_pert): (&mut [f64], &mut [f64]), d: &mut [f64],
    ) {
        d.iter_mut().for_each(|x| *x = 0.0);
        v_pert.copy_from_slice(v);
        for (j, feeds) in self.feeds.iter().enumerate() {
            let dv = f64::EPSILON.sqrt() * v[j].abs().max(1.0);
            v_pert[j] = v[j] + dv;
            let dv = v_pert[j] - v[j];
            s.forces(t, q, v_pert, f_pert);
            v_pert[j] = v[j];
            for &(i, k, weight) in feeds {
                d[k] -= weight * (f_pert[i] - f[i]) / dv;
            }
        }
    }
}

/// Work space of the kick, allocated at `start`.
pub(super) struct KickWork {
    /// The force the current `q_{n+1}` carries (`b` above).
    pub(super) carried: Vec<f64>,
    v: Vec<f64>,
    f: Vec<f64>,
    v_pert: Vec<f64>,
    f_pert: Vec<f64>,
    dq: Vec<f64>,
    /// `D` and `M + ½h D` in M's pattern.
    damping: Vec<f64>,
    matrix: Vec<f64>,
    /// Whether `damping` holds a `D` from an earlier step that still contracted well.
    damping_usable: bool,
    /// SHAKE's `q_{n+1}` and carried force, to start over from with a fresh `D`.
    q_shake: Vec<f64>,
    carried_shake: Vec<f64>,
    /// Updates and factorizations of this step's kick, failed attempts included.
    count: KickCount,
}

impl KickWork {
    /// Buffers for `n` coordinates and `nnz` entries of M.
    pub(super) fn new(n: usize, nnz: usize) -> Self {
        Self {
            carried: vec![0.0; n],
            v: vec![0.0; n],
            f: vec![0.0; n],
            v_pert: vec![0.0; n],
            f_pert: vec![0.0; n],
            dq: vec![0.0; n],
            damping: vec![0.0; nnz],
            matrix: vec![0.0; nnz],
            damping_usable: false,
            q_shake: vec![0.0; n],
            carried_shake: vec![0.0; n],
            count: KickCount::default(),
        }
    }
}

impl KickWork {
    /// Drop the kept `D` (the velocities or the forces were changed from outside: the
    /// next kick computes it afresh).
    pub(super) fn forget_damping(&mut self) {
        self.damping_usable = false;
    }

    /// `v_{n+½} = (q − q_n)/h` into `v`.
    fn set_v_half(&mut self, q: &[f64], state: &State, h: f64) {
        for ((v, a), b) in self.v.iter_mut().zip(q).zip(&state.q) {
            *v = (a - b) / h;
        }
    }
}

/// The step's data the kick reads: system, `q_n` at `t_n`, `h`, `M(q_n)` and `Φ_q(q_n)`
/// values with M's pattern, the Newton tolerance and iteration cap.
pub(super) struct KickStep<'a> {
    pub(super) sys: &'a dyn MechanicalSystem,
    pub(super) mass_pattern: &'a SparsityPattern,
    pub(super) state: &'a State,
    pub(super) h: f64,
    pub(super) mass: &'a [f64],
    pub(super) jac: &'a [f64],
    pub(super) tol: f64,
    pub(super) max_iter: usize,
}

/// What the kick did: Newton iterations and factorizations (both 0 for forces of the
/// positions only).
#[derive(Clone, Copy, Default)]
pub(super) struct KickCount {
    pub(super) iterations: usize,
    pub(super) factorizations: usize,
}

/// Contraction (ratio of successive updates) above which `D` is computed afresh at the
/// next step; this project's choice, not measured against others (RADAU5's own
/// threshold for recomputing its Jacobian is θ = 0.001).
const THETA_REFRESH: f64 = 0.1;

/// Contraction above which an attempt with a kept `D` is abandoned for a fresh one.
const THETA_ABANDON: f64 = 0.5;

/// The kick's round-off floor, relative to `1 + ‖q‖∞`: an update-and-residual norm below
/// it that no longer halves has stopped at the rounding of Φ (Cassie's rows leave
/// ‖Φ‖ ≈ 2e-13 that no update removes). Two decades below SHAKE's 1e-9 (`crate::roundoff`),
/// since the kick's contraction is not O(h): an iteration contracting by θ stopped here
/// leaves up to θ/(1 − θ) · 1e-11 (1 + ‖q‖∞) in q — 1e-10 for θ = 0.9, 1e-9 at the
/// kernel's divergence limit θ = 0.99 (a fresh `D` is not abandoned for being slow).
const KICK_FLOOR: f64 = 1e-11;

/// Make SHAKE's `q` (in `q`) solve the implicit kick (module documentation). `phi` and
/// `rhs` are work space of lengths m and n + m; `kkt` is refactored with `M + ½h D` when
/// the force depends on the velocity (the caller refactors it for the velocity step).
///
/// `D` is kept from step to step, as RADAU5 keeps its Jacobian (Hairer & Wanner II,
/// §IV.8): a step first tries the last `D`, abandons it for a fresh one computed at
/// SHAKE's point when it contracts worse than `THETA_ABANDON` or fails, and a contraction
/// above `THETA_REFRESH` marks `D` for renewal at the next step. The iteration stops on
/// the same test either way; `D` sets its speed.
pub(super) fn implicit_half_kick(
    step: &KickStep, cols: &mut Option<DampingColumns>, kkt: &mut KktSolver, w: &mut KickWork,
    q: &mut [f64], (phi, rhs): (&mut [f64], &mut [f64]),
) -> Result<KickCount, StepError> {
    let (s, state) = (step.sys, step.state);
    let t0 = state.t;
    w.set_v_half(q, state, step.h);
    s.forces(t0, &state.q, &w.v, &mut w.f);
    if w.f == w.carried {
        return Ok(KickCount::default());
    }
    if let Some(index) = w.f.iter().position(|x| !x.is_finite()) {
        return Err(StepError::NonFinite {
            t: t0,
            field: "f(t_n, q_n, v_{n+½})",
            index,
        });
    }
    let cols = cols.get_or_insert_with(|| DampingColumns::new(step.mass_pattern));
    w.count = KickCount::default();
    if w.damping_usable {
        w.q_shake.copy_from_slice(q);
        w.carried_shake.copy_from_slice(&w.carried);
        if newton_with_damping(step, kkt, w, q, (phi, rhs), true).is_ok() {
            return Ok(w.count);
        }
        q.copy_from_slice(&w.q_shake);
        w.carried.copy_from_slice(&w.carried_shake);
        w.set_v_half(q, state, step.h);
        s.forces(t0, &state.q, &w.v, &mut w.f);
    }
    fresh_damping(step, cols, kkt, w, q, (phi, rhs))?;
    Ok(w.count)
}

/// The kick with `D` computed at SHAKE's `v_{n+½}` (in `w.v`, its force in `w.f`).
fn fresh_damping(
    step: &KickStep, cols: &DampingColumns, kkt: &mut KktSolver, w: &mut KickWork, q: &mut [f64],
    (phi, rhs): (&mut [f64], &mut [f64]),
) -> Result<(), StepError> {
    let t0 = step.state.t;
    cols.fill(
        step.sys,
        (t0, &step.state.q, &w.v, &w.f),
        (&mut w.v_pert, &mut w.f_pert),
        &mut w.damping,
    );
    newton_with_damping(step, kkt, w, q, (phi, rhs), false)
}

/// The simplified Newton iteration of the kick with the `D` in `w.damping`, from the
/// force `w.f` at the current `v_{n+½}`. It runs in the workspace's Newton kernel and
/// stops on its own test ([`Progress::judge`]); it fails as `NewtonDiverged` when the
/// norm grows (θ ≥ 0.99), at `max_iter` updates, or, with `abandon_slow` (a kept `D`),
/// once an update shrinks by less than `THETA_ABANDON`. Sets `w.damping_usable` by the
/// worst contraction it saw; counts into `w.count`.
fn newton_with_damping(
    step: &KickStep, kkt: &mut KktSolver, w: &mut KickWork, q: &mut [f64],
    (phi, rhs): (&mut [f64], &mut [f64]), abandon_slow: bool,
) -> Result<(), StepError> {
    let (s, state) = (step.sys, step.state);
    let (t0, t1) = (state.t, state.t + step.h);
    w.damping_usable = false;
    for ((k, m), d) in w.matrix.iter_mut().zip(step.mass).zip(&w.damping) {
        *k = m + 0.5 * step.h * d;
    }
    w.count.factorizations += 1;
    kkt.factorize(&w.matrix, step.jac, None)
        .map_err(|e| kkt_failure(s, t0, &state.q, e))?;
    s.constraints(t1, q, phi);
    let mut progress = Progress::new(step.tol, q);
    let mut kernel = NewtonKernel::new(NewtonOptions {
        tol: 0.0,
        max_iter: step.max_iter,
        floor: 0.0,
        predict: false,
        carry_eta: false,
        stop_on_growth: true,
    });
    let diverged = |iterations, residual| StepError::NewtonDiverged {
        t: t0,
        iterations,
        residual,
        tol: step.tol,
    };
    let solved = kernel.solve(|k| {
        if k > 1 {
            w.set_v_half(q, state, step.h);
            s.forces(t0, &state.q, &w.v, &mut w.f);
        }
        let dq = newton_update(step, kkt, w, q, (phi, rhs))?;
        w.count.iterations += 1;
        s.constraints(t1, q, phi);
        let norm = phi.iter().fold(dq, |a, x| worse(a, x.abs()));
        match progress.judge(dq, norm) {
            Verdict::Converged => Ok(0.0),
            Verdict::Slow if abandon_slow => Err(diverged(k, norm)),
            _ => Ok(norm),
        }
    });
    match solved {
        Ok(_) => {
            w.damping_usable = progress.worst_ratio <= THETA_REFRESH;
            Ok(())
        }
        Err(NewtonFailure::Iteration(e)) => Err(e),
        Err(_) => Err(diverged(kernel.counters.iterations, progress.previous)),
    }
}

/// What one update of the kick says about its iteration.
#[derive(PartialEq)]
enum Verdict {
    Converged,
    /// Contracting by less than `THETA_ABANDON`.
    Slow,
    Going,
}

/// The kick iteration's norms so far: the stopping test and the contraction.
struct Progress {
    tol: f64,
    floor: f64,
    previous: f64,
    /// Largest ratio of successive norms (0 before the second update).
    worst_ratio: f64,
}

impl Progress {
    fn new(tol: f64, q: &[f64]) -> Self {
        let qscale = 1.0 + q.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
        Self {
            tol,
            floor: KICK_FLOOR * qscale,
            previous: f64::INFINITY,
            worst_ratio: 0.0,
        }
    }

    /// Converged when the update `dq` and `norm = max(dq, ‖Φ‖∞)` are within `tol`, or when
    /// `norm` is below the round-off floor and no longer halves.
    fn judge(&mut self, dq: f64, norm: f64) -> Verdict {
        let ratio = norm / self.previous;
        let stalled = norm < self.floor && ratio >= 0.5;
        if (dq <= self.tol && norm <= self.tol) || stalled {
            return Verdict::Converged;
        }
        self.previous = norm;
        if ratio.is_finite() {
            self.worst_ratio = worse(self.worst_ratio, ratio);
        }
        if ratio > THETA_ABANDON {
            Verdict::Slow
        } else {
            Verdict::Going
        }
    }
}

/// One simplified Newton update of `q` from the force `w.f` at its current `v_{n+½}` and
/// `Φ(q)` in `phi`; updates the carried force and returns `‖δq‖∞`.
fn newton_update(
    step: &KickStep, kkt: &mut KktSolver, w: &mut KickWork, q: &mut [f64],
    (phi, rhs): (&mut [f64], &mut [f64]),
) -> Result<f64, StepError> {
    let (n, h) = (q.len(), step.h);
    for i in 0..n {
        rhs[i] = 0.5 * h * h * (w.f[i] - w.carried[i]);
    }
    for (r, p) in rhs[n..].iter_mut().zip(phi.iter()) {
        *r = -p;
    }
    kkt.solve(rhs)
        .map_err(|e| kkt_failure(step.sys, step.state.t, &step.state.q, e))?;
    w.dq.copy_from_slice(&rhs[..n]);
    let mut norm = 0.0_f64;
    for i in 0..n {
        q[i] += w.dq[i];
        norm = worse(norm, w.dq[i].abs());
    }
    // b ← f − D δq / h: the force linearized at the updated velocity.
    step.mass_pattern
        .mul_vec(&w.damping, &w.dq, &mut w.f_pert, true);
    for i in 0..n {
        w.carried[i] = w.f[i] - w.f_pert[i] / h;
    }
    Ok(norm)
}

/// The larger of two norms, NaN if either is (`f64::max` would drop a NaN, and a NaN
/// update would pass for a converged one; the kernel fails on a non-finite norm).
fn worse(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A diagonal entry takes all of ∂f_i/∂v_i; an off-diagonal entry (i, j) half of
    /// ∂f_i/∂v_j (column j) and half of ∂f_j/∂v_i (column i).
    #[test]
    fn every_entry_of_m_is_fed_by_both_of_its_columns() {
        let lower = vec![(0, 0), (1, 0), (1, 1), (2, 2)];
        let cols = DampingColumns::new(&SparsityPattern::new(3, 3, lower));
        assert_eq!(cols.feeds[0], vec![(0, 0, 1.0), (1, 1, 0.5)]);
        assert_eq!(cols.feeds[1], vec![(0, 1, 0.5), (1, 2, 1.0)]);
        assert_eq!(cols.feeds[2], vec![(2, 3, 1.0)]);
    }

    /// A NaN update or residual is never taken for a small one.
    #[test]
    fn a_nan_norm_stays_nan() {
        assert!(worse(1e-20, f64::NAN).is_nan());
        assert!(worse(f64::NAN, 1e-20).is_nan());
        assert_eq!(worse(1e-3, 2e-3).to_bits(), 2e-3_f64.to_bits());
    }

    /// A steady slow contraction is flagged slow and runs on down to the floor
    /// (1e-11 · (1 + ‖q‖∞)), where it stops; a norm stuck at the floor after a fast
    /// contraction has converged; within `tol` it has converged.
    #[test]
    fn the_floor_ends_only_a_stalled_iteration() {
        let mut slow = Progress::new(1e-13, &[0.5]);
        assert!(slow.judge(1e-10, 1e-10) == Verdict::Going);
        // 6e-11, 3.6e-11, 2.2e-11: slow above the floor; 1.3e-11 < 1.5e-11: stopped.
        for k in 1..=4 {
            let norm = 1e-10 * 0.6_f64.powi(k);
            let want = if k < 4 {
                Verdict::Slow
            } else {
                Verdict::Converged
            };
            assert!(slow.judge(norm, norm) == want, "at {norm:e}");
        }
        let mut stuck = Progress::new(1e-13, &[0.5]);
        for norm in [1e-7, 1e-10, 2.2e-13] {
            assert!(stuck.judge(norm, norm) == Verdict::Going);
        }
        assert!(stuck.judge(2.1e-13, 2.2e-13) == Verdict::Converged);
        assert!(stuck.worst_ratio <= THETA_REFRESH);
        let mut done = Progress::new(1e-13, &[0.5]);
        assert!(done.judge(5e-14, 8e-14) == Verdict::Converged);
    }
}
