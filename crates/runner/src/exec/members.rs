//! Running an ensemble's members (the model: [`crate::ensemble`]): each member's seeded
//! perturbation of the cell's problem, its rollout through the one time loop, and the
//! summary of the distribution over members that the cell's `runs` row carries.

use crate::ensemble::noise::{Purpose, Stream};
use crate::ensemble::perturbed::{ConstraintNoise, Perturbed};
use crate::ensemble::{feedback, noise, perturbed, EnsembleSpec};
use crate::registry::Registry;
use crate::spec::cell::Cell;
use crate::store::members::{EnsembleSummary, MemberRecord};
use crate::store::record::{nullable, write_ensemble, write_stats};
use driftlab_core::{drive, FailKind, MechanicalSystem, MethodStats, Observation, Observer};
use driftlab_results::schema::runs;
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

/// Measures a member on the unperturbed problem at the states the loop evaluates.
struct DriftObserver<'a> {
    inner: &'a dyn MechanicalSystem,
    phi: Vec<f64>,
    rec: MemberRecord,
}

impl Observer for DriftObserver<'_> {
    fn observe(&mut self, o: &Observation<'_>) {
        let (s, m, last) = (o.state, o.metrics, o.last);
        let drift = holonomic_drift(self.inner, s.t, &s.q, &mut self.phi);
        let err_q = self.inner.exact(s.t).map_or(f64::NAN, |e| {
            e.q.iter()
                .zip(&s.q)
                .fold(0.0_f64, |m, (a, b)| nan_max(m, (a - b).abs()))
        });
        let r = &mut self.rec;
        r.max_drift = nan_max(r.max_drift, drift);
        r.max_err_q = nan_max(r.max_err_q, err_q);
        r.max_vel_residual = nan_max(r.max_vel_residual, m.vel_residual);
        r.max_energy = nan_max(r.max_energy, m.energy_rel_error);
        if last {
            r.final_drift = drift;
            r.final_energy = m.energy_rel_error;
        }
    }
}

/// The drift an ensemble member and an environment report: `‖Φ(t, q)‖∞` over the
/// holonomic rows of the unperturbed problem `sys` (NaN once any row is NaN); `phi` is
/// work space.
pub(crate) fn holonomic_drift(
    sys: &dyn MechanicalSystem, t: f64, q: &[f64], phi: &mut Vec<f64>,
) -> f64 {
    phi.resize(sys.dims().m, 0.0);
    sys.constraints(t, q, phi);
    let holonomic = phi.len() - sys.nonholonomic_rows();
    phi[..holonomic].iter().fold(0.0_f64, |a, x| {
        if x.is_nan() || a.is_nan() {
            f64::NAN
        } else {
            a.max(x.abs())
        }
    })
}

/// `max` that keeps a NaN (a non-finite state is worse than any number) but starts from
/// an undefined (NaN) accumulator.
fn nan_max(acc: f64, x: f64) -> f64 {
    match (acc.is_nan(), x.is_nan()) {
        (true, _) => x,
        (false, true) => x,
        (false, false) => acc.max(x),
    }
}

/// The member's record before it runs.
fn member_base(cell: &Cell, ens: &EnsembleSpec, member: usize) -> MemberRecord {
    MemberRecord {
        cell: cell.index,
        member,
        sigma0: ens.constraint_noise.map_or(0.0, |n| n.sigma(0.0, member)),
        max_drift: f64::NAN,
        final_drift: f64::NAN,
        max_err_q: f64::NAN,
        max_vel_residual: f64::NAN,
        max_energy: f64::NAN,
        final_energy: f64::NAN,
        ..Default::default()
    }
}

/// A member that failed before its first step (`kind`, `reason`).
fn member_failed(mut rec: MemberRecord, kind: FailKind, reason: String) -> MemberRecord {
    rec.fail_time = Some(0.0);
    rec.fail_kind = Some(kind);
    rec.fail_reason = Some(reason);
    rec
}

/// A member ready to run: its perturbed system, its method (with the curriculum's
/// parameters) and the curriculum's strength where it applied.
pub struct MemberSetup {
    /// The problem as the member sees it.
    pub system: Perturbed,
    /// The method, decorated as the cell says.
    pub method: Box<dyn driftlab_core::Method>,
    /// Curriculum strength, where it applied.
    pub strength: Option<f64>,
}

/// `cell`'s problem as one mechanical system, shared by the members that step it
/// (`Err`: the failure kind and the reason).
pub fn mechanical_problem(
    registry: &Registry, cell: &Cell,
) -> Result<Arc<dyn MechanicalSystem>, (FailKind, String)> {
    match registry.build_problem(&cell.problem, &cell.problem_params) {
        Ok(driftlab_problems::Problem::Mechanical(sys)) => Ok(Arc::from(sys)),
        Ok(other) => Err((
            FailKind::UnsupportedForm,
            format!(
                "ensembles perturb mechanical problems (q, v, Φ); `{}` is a {} system",
                cell.problem,
                other.as_system().form().name()
            ),
        )),
        Err(e) => Err((FailKind::Build, e.to_string())),
    }
}

/// Member (episode) `member` of `cell`'s ensemble on `problem`: the curriculum's
/// parameters, the method, the perturbed initial state and the constraint noise, each a
/// pure function of `(ens.seed, member)` — and, under a performance ramp, of its
/// generation's strength `generation` ([`feedback`]; `None`: the index ramp's `s(member)`).
pub fn member_setup(
    registry: &Registry, cell: &Cell, ens: &EnsembleSpec, problem: &Arc<dyn MechanicalSystem>,
    member: usize, generation: Option<f64>,
) -> Result<MemberSetup, (FailKind, String)> {
    let mut params = cell.method_params.clone();
    let mut strength = None;
    if let Some(c) = &ens.curriculum {
        let s = generation.unwrap_or_else(|| c.strength(member));
        match c.scale(&cell.method_params, s) {
            Ok((p, true)) => {
                params = p;
                strength = Some(s);
            }
            Ok((_, false)) => {}
            Err(e) => return Err((FailKind::Build, e)),
        }
    }
    let method = registry
        .build_method(&cell.method_id, &params, cell.decorators())
        .map_err(|e| (FailKind::Build, e.to_string()))?;
    let initial =
        perturbed::perturbed_initial_state(problem.as_ref(), &ens.initial, ens.seed, member)
            .map_err(|e| (FailKind::InitialState, e))?;
    let noise = ens.constraint_noise.map(|schedule| ConstraintNoise {
        schedule,
        member,
        stream: Stream::new(ens.seed, member as u64, Purpose::Constraint),
        h: cell.h,
    });
    Ok(MemberSetup {
        system: Perturbed::new(Arc::clone(problem), initial, noise),
        method,
        strength,
    })
}

/// Run member `member` of `cell`'s ensemble: build, perturb, drive, measure.
///
/// `deadline` is the ensemble's time budget, shared by all its members (started when the
/// ensemble started); `generation` the strength of the member's generation under a
/// performance ramp.
pub fn run_member(
    registry: &Registry, cell: &Cell, ens: &EnsembleSpec, member: usize,
    (generation, deadline): (Option<f64>, Option<driftlab_core::Deadline>),
) -> MemberRecord {
    let mut rec = member_base(cell, ens, member);
    let setup = mechanical_problem(registry, cell)
        .and_then(|problem| member_setup(registry, cell, ens, &problem, member, generation));
    let setup = match setup {
        Ok(s) => s,
        Err((kind, reason)) => {
            rec.strength = curriculum_strength(cell, ens, member, generation);
            return member_failed(rec, kind, reason);
        }
    };
    rec.strength = setup.strength;
    let mut obs = DriftObserver {
        inner: setup.system.inner(),
        phi: vec![0.0; setup.system.dims().m],
        rec,
    };
    let mut schedule = crate::spec::cell::schedule_of(cell);
    schedule.deadline = deadline;
    let perturbed: &dyn MechanicalSystem = &setup.system;
    let out = drive(
        perturbed.into(),
        setup.method.as_ref(),
        &schedule,
        &mut [&mut obs],
    );
    let mut rec = obs.rec;
    rec.ok = out.status == driftlab_core::RunStatus::Ok;
    if let driftlab_core::RunStatus::Failed { t, error } = &out.status {
        rec.fail_time = Some(*t);
        rec.fail_kind = Some(error.fail_kind());
        rec.fail_reason = Some(format!("member {member}: {error}"));
    }
    rec.steps = out.steps;
    rec.stats = out.stats;
    rec.step_seconds = out.step_seconds;
    rec
}

/// The curriculum's strength for `member` (its generation's, where given), where the
/// curriculum applies to the method.
fn curriculum_strength(
    cell: &Cell, ens: &EnsembleSpec, member: usize, generation: Option<f64>,
) -> Option<f64> {
    let c = ens.curriculum.as_ref()?;
    let s = generation.unwrap_or_else(|| c.strength(member));
    matches!(c.scale(&cell.method_params, s), Ok((_, true))).then_some(s)
}

/// Run member `member`, a panic becoming its failed row.
fn run_member_caught(
    registry: &Registry, cell: &Cell, ens: &EnsembleSpec, member: usize,
    at: (Option<f64>, Option<driftlab_core::Deadline>),
) -> MemberRecord {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_member(registry, cell, ens, member, at)
    }))
    .unwrap_or_else(|panic| {
        let msg = crate::error::panic_message(&panic);
        let mut rec = member_base(cell, ens, member);
        rec.strength = curriculum_strength(cell, ens, member, at.0);
        member_failed(
            rec,
            FailKind::Panic,
            format!("member {member}: internal error (panic): {msg}"),
        )
    })
}

/// Every member of `cell`'s ensemble on the current rayon pool, in member order, and
/// the wall time of the whole: all at once, or generation by generation under a
/// performance ramp that applies to the method.
fn run_members(registry: &Registry, cell: &Cell, ens: &EnsembleSpec) -> (Vec<MemberRecord>, f64) {
    let clock = Instant::now();
    let deadline = cell.cell_seconds.map(driftlab_core::Deadline::from_now);
    let members = match performance_ramp(cell, ens) {
        Some(mut generations) => {
            let size = ens
                .curriculum
                .as_ref()
                .and_then(|c| c.feedback)
                .map_or(ens.members, |f| f.generation);
            let mut members = Vec::with_capacity(ens.members);
            for first in (0..ens.members).step_by(size.max(1)) {
                let s = Some(generations.strength());
                let generation: Vec<MemberRecord> = (first..(first + size).min(ens.members))
                    .into_par_iter()
                    .map(|i| run_member_caught(registry, cell, ens, i, (s, deadline)))
                    .collect();
                let succeeded = generation.iter().filter(|m| m.ok).count();
                generations.record(succeeded, generation.len());
                members.extend(generation);
            }
            members
        }
        None => (0..ens.members)
            .into_par_iter()
            .map(|i| run_member_caught(registry, cell, ens, i, (None, deadline)))
            .collect(),
    };
    (members, clock.elapsed().as_secs_f64())
}

/// The generations of a performance ramp whose parameters the cell's method has.
fn performance_ramp(cell: &Cell, ens: &EnsembleSpec) -> Option<feedback::Generations> {
    let c = ens.curriculum.as_ref()?;
    let f = c.feedback.filter(|_| c.ramp == noise::Ramp::Performance)?;
    let applies = c.params.keys().any(|k| cell.method_params.contains_key(k));
    applies.then(|| feedback::Generations::new(f, c.start))
}

/// Run `cell` as the ensemble `ens`, `cell.repeat` times for the throughput (the members
/// of the first run are the data; the runs are deterministic): the summary row and the
/// member rows.
pub fn run_ensemble(
    registry: &Registry, rec: runs::Row, cell: &Cell, ens: &EnsembleSpec,
) -> (runs::Row, Vec<MemberRecord>) {
    let (members, wall) = run_members(registry, cell, ens);
    let mut walls = vec![wall];
    for _ in 1..cell.repeat {
        walls.push(run_members(registry, cell, ens).1);
    }
    walls.sort_by(f64::total_cmp);
    let wall = walls[walls.len() / 2];
    let mut rec = summarize(rec, ens, &members, wall);
    rec.repeat = cell.repeat as u64;
    rec.step_seconds_min = None;
    rec.step_seconds_max = None;
    (rec, members)
}

/// Nearest-rank percentile `p` (0 < p ≤ 1) of `x` ignoring NaN (NaN if none).
pub fn percentile(x: &[f64], p: f64) -> f64 {
    let mut v: Vec<f64> = x.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let rank = (p * v.len() as f64).ceil().max(1.0) as usize;
    v[rank.min(v.len()) - 1]
}

/// The ensemble's `runs` row from its members and its wall time.
fn summarize(
    mut rec: runs::Row, ens: &EnsembleSpec, members: &[MemberRecord], wall: f64,
) -> runs::Row {
    // The distribution is over the members that reached t_end: a failed member's maxima
    // cover only the states evaluated before its failure (the failure itself is counted).
    let drift: Vec<f64> = members
        .iter()
        .filter(|m| m.ok)
        .map(|m| m.max_drift)
        .collect();
    let energy: Vec<f64> = members
        .iter()
        .filter(|m| m.ok)
        .map(|m| m.max_energy)
        .collect();
    let max = |f: fn(&MemberRecord) -> f64| members.iter().map(f).fold(f64::NAN, nan_max);
    rec.max_pos_residual = nullable(max(|m| m.max_drift));
    rec.final_pos_residual = nullable(max(|m| m.final_drift));
    rec.max_vel_residual = nullable(max(|m| m.max_vel_residual));
    rec.max_energy_rel_error = nullable(max(|m| m.max_energy));
    rec.final_energy_rel_error = nullable(max(|m| m.final_energy));
    let steps: usize = members.iter().map(|m| m.steps).sum();
    rec.steps = steps as u64;
    let stats = members
        .iter()
        .fold(MethodStats::default(), |a, m| a.merged(m.stats));
    write_stats(&mut rec, &stats);
    rec.step_seconds = members.iter().map(|m| m.step_seconds).sum();
    rec.wall_seconds = wall;
    let failed: Vec<&MemberRecord> = members.iter().filter(|m| !m.ok).collect();
    rec.status = if failed.is_empty() { "ok" } else { "failed" }.into();
    if let Some(first) = failed.first() {
        let fail_time = failed.iter().filter_map(|m| m.fail_time).reduce(f64::min);
        rec.fail_time = fail_time.and_then(nullable);
        rec.fail_kind =
            most_frequent(failed.iter().filter_map(|m| m.fail_kind)).map(|k| k.tag().to_string());
        rec.fail_reason = Some(format!(
            "{} of {} members failed; first: {}",
            failed.len(),
            members.len(),
            first.fail_reason.as_deref().unwrap_or("unknown")
        ));
    }
    let summary = EnsembleSummary {
        settings: ens.json(),
        members: members.len(),
        failures: failed.len(),
        drift_median: percentile(&drift, 0.5),
        drift_p95: percentile(&drift, 0.95),
        energy_median: percentile(&energy, 0.5),
        energy_p95: percentile(&energy, 0.95),
        rollout_steps_per_second: steps as f64 / wall,
    };
    write_ensemble(&mut rec, &summary);
    rec
}

/// The most frequent tag (the first to reach the top count on ties).
fn most_frequent<T: PartialEq + Copy>(tags: impl Iterator<Item = T>) -> Option<T> {
    let mut counts: Vec<(T, usize)> = Vec::new();
    for t in tags {
        match counts.iter_mut().find(|(k, _)| *k == t) {
            Some((_, n)) => *n += 1,
            None => counts.push((t, 1)),
        }
    }
    let top = counts.iter().map(|(_, n)| *n).max()?;
    counts.iter().find(|(_, n)| *n == top).map(|(k, _)| *k)
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // the values compared are exact (formulas at exact points)
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let x: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&x, 0.5), 10.0);
        assert_eq!(percentile(&x, 0.95), 19.0);
        assert_eq!(percentile(&x, 1.0), 20.0);
        assert_eq!(percentile(&[f64::NAN, 3.0], 0.5), 3.0);
        assert!(percentile(&[], 0.5).is_nan());
    }

    #[test]
    fn most_frequent_tag_wins_and_ties_go_to_the_first() {
        let tags = ["a", "b", "b", "a", "c"];
        assert_eq!(most_frequent(tags.into_iter()), Some("a"));
        assert_eq!(most_frequent(["x", "y", "y"].into_iter()), Some("y"));
        assert_eq!(most_frequent(std::iter::empty::<&str>()), None);
    }
}
