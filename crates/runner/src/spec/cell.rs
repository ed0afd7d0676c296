//! Expansion of a spec into cells, validated against the registry before anything runs.

use crate::error::RunnerError;
use crate::registry::Registry;
use crate::spec::{sweep, sweep_len, MethodSpec, ProblemSpec, Spec, Stepping, MAX_CELLS};
use driftlab_core::{Method, MethodInfo};
use std::sync::Arc;

/// A cell's method, built and validated once at expansion and shared by every run of the
/// cell (its repeats, its timing runs): a [`Method`] holds parameters only and
/// [`Method::start`] takes `&self`, so one instance serves any number of runs.
#[derive(Clone)]
pub struct BuiltMethod(Arc<dyn Method>);

impl BuiltMethod {
    /// The method.
    pub fn method(&self) -> &dyn Method {
        self.0.as_ref()
    }
}

impl std::fmt::Debug for BuiltMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BuiltMethod({})", self.0.info().id)
    }
}

/// One unit of work: a problem with parameters, a method with parameters, a step size,
/// a thread count.
#[derive(Clone, Debug)]
pub struct Cell {
    /// Position in the expansion.
    pub index: usize,
    /// Problem id.
    pub problem: String,
    /// Problem parameters (one sweep point).
    pub problem_params: toml::Table,
    /// Method id in the registry.
    pub method_id: String,
    /// Method name as reported: id plus `+projection` when decorated.
    pub method: String,
    /// Method parameters (one sweep point).
    pub method_params: toml::Table,
    /// Projection decorator parameters, if any.
    pub projection: Option<toml::Table>,
    /// Wrapped in Richardson step control.
    pub richardson: bool,
    /// Emergency recovery parameters, if any.
    pub recovery: Option<toml::Table>,
    /// Display label of the method variant (method + parameters).
    pub variant: String,
    /// Declared properties of the (decorated) method.
    pub info: MethodInfo,
    /// The (decorated) method itself, built once.
    pub built: BuiltMethod,
    /// Step size (snapped to divide `t_end`); the initial step of an error-controlled cell.
    pub h: f64,
    /// Error-controlled steps instead of fixed ones.
    pub adaptive: Option<driftlab_core::Adaptive>,
    /// End time.
    pub t_end: f64,
    /// faer threads inside the cell.
    pub threads: usize,
    /// Trace stride.
    pub trace_stride: usize,
    /// Metrics stride (1 = every step).
    pub metrics_stride: usize,
    /// Store q, v in traces.
    pub trace_states: bool,
    /// The violation monitor's allowances (spec `[monitor]`), `None` without one.
    pub allowed: Option<driftlab_core::AllowedViolation>,
    /// Step budget.
    pub max_steps: usize,
    /// Wall-time budget in seconds (spec `cell_seconds`), if any.
    pub cell_seconds: Option<f64>,
    /// Runs of the cell (median time recorded).
    pub repeat: usize,
    /// Run as an ensemble of perturbed rollouts ([`crate::ensemble`]).
    pub ensemble: Option<crate::ensemble::EnsembleSpec>,
    /// Where the problem's exact solution or published reference holds at these
    /// parameters and this end time ([`crate::analysis::reference`] judges the rows by it).
    pub reference: driftlab_core::ReferenceDomain,
    /// The problem is tagged `conservative` (its energy is a first integral): only then
    /// does a reference's energy belong in its self-check ([`crate::analysis::reference::judge`]).
    pub conservative: bool,
}

fn compact(t: &toml::Table) -> String {
    t.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// JSON text of a TOML table (for the `params` columns).
pub fn json_of(t: &toml::Table) -> String {
    serde_json::to_string(t).unwrap_or_else(|_| "{}".into())
}

impl Cell {
    /// The decorators of this cell's method.
    pub fn decorators(&self) -> driftlab_methods::Decorators<'_> {
        driftlab_methods::Decorators {
            projection: self.projection.as_ref(),
            recovery: self.recovery.as_ref(),
            richardson: self.richardson,
        }
    }

    /// The `params` column: method parameters and projection parameters as JSON.
    pub fn params_json(&self) -> String {
        let mut o = serde_json::Map::new();
        o.insert(
            "method".into(),
            serde_json::to_value(&self.method_params).unwrap_or_default(),
        );
        if let Some(p) = &self.projection {
            o.insert(
                "projection".into(),
                serde_json::to_value(p).unwrap_or_default(),
            );
        }
        if let Some(r) = &self.recovery {
            o.insert(
                "recovery".into(),
                serde_json::to_value(r).unwrap_or_default(),
            );
        }
        serde_json::Value::Object(o).to_string()
    }
}

/// Expand `spec` into cells; every problem and method is built once here so that a bad
/// parameter fails the whole spec before any computation, naming the entry and field.
pub fn expand(spec: &Spec, path: &str, registry: &Registry) -> Result<Vec<Cell>, RunnerError> {
    let bad = |m: String| RunnerError::Spec {
        path: path.into(),
        message: m,
    };
    let hs = spec.steps.values().map_err(bad)?;
    let tols = match &spec.steps.adaptive {
        Some(a) => a.rtols().map_err(bad)?,
        None => Vec::new(),
    };
    count_cells(spec, hs.len().max(tols.len())).map_err(bad)?;
    let mut out = Expansion {
        spec,
        steps: (&hs, &tols),
        cells: Vec::new(),
        seen: Seen::default(),
    };
    for (pi, ps) in spec.problems.iter().enumerate() {
        for pp in sweep(&ps.params) {
            let problem = ProblemCell::build(spec, registry, pi, ps, pp).map_err(bad)?;
            for (mi, ms) in spec.methods.iter().enumerate() {
                for mp in sweep(&ms.params) {
                    out.method_cells(registry, &problem, (mi, ms), &mp)
                        .map_err(bad)?;
                }
            }
        }
    }
    Ok(out.cells)
}

/// One problem entry at one point of its parameter sweep, as its cells share it.
struct ProblemCell<'a> {
    /// 1-based index of the `[[problems]]` entry.
    entry: usize,
    spec: &'a ProblemSpec,
    params: toml::Table,
    t_end: f64,
    reference: driftlab_core::ReferenceDomain,
    conservative: bool,
    allowed: Option<driftlab_core::AllowedViolation>,
}

impl<'a> ProblemCell<'a> {
    /// Build the problem once (a bad parameter refuses the spec, naming the entry), with
    /// its end time, reference domain and monitor allowance.
    fn build(
        spec: &Spec, registry: &Registry, pi: usize, ps: &'a ProblemSpec, params: toml::Table,
    ) -> Result<Self, String> {
        let named = |e: String| format!("[[problems]] entry {} (`{}`): {e}", pi + 1, ps.id);
        let prob = registry
            .build_problem(&ps.id, &params)
            .map_err(|e| named(e.to_string()))?;
        let t_end = spec.t_end.unwrap_or_else(|| prob.as_system().info().t_end);
        let reference = prob.as_system().reference_domain(t_end);
        let conservative = prob
            .as_system()
            .info()
            .tags
            .iter()
            .any(|t| t == "conservative");
        if let driftlab_core::ReferenceDomain::Outside(why) = &reference {
            eprintln!(
                "note: [[problems]] entry {} (`{}` {}): its reference is outside its domain ({why}); the error columns of its cells will be null",
                pi + 1,
                ps.id,
                json_of(&params)
            );
        }
        let allowed = match &spec.monitor {
            Some(mon) => Some(mon.allowance(prob.as_system().dims().m).map_err(named)?),
            None => None,
        };
        Ok(Self {
            entry: pi + 1,
            spec: ps,
            params,
            t_end,
            reference,
            conservative,
            allowed,
        })
    }
}

/// The cells expanded so far, and what they must not repeat.
struct Expansion<'a> {
    spec: &'a Spec,
    /// The spec's fixed steps and adaptive tolerances.
    steps: (&'a [f64], &'a [f64]),
    cells: Vec<Cell>,
    seen: Seen,
}

impl Expansion<'_> {
    /// The cells of one method entry at one point of its parameter sweep on `problem`: one
    /// per step (or tolerance) and thread count.
    fn method_cells(
        &mut self, registry: &Registry, problem: &ProblemCell, (mi, ms): (usize, &MethodSpec),
        mp: &toml::Table,
    ) -> Result<(), String> {
        let spec = self.spec;
        let (pi, pid, t_end) = (problem.entry, &problem.spec.id, problem.t_end);
        let named = |m: String| format!("[[methods]] entry {} (`{}`): {m}", mi + 1, ms.id);
        let (built, stepping) = checked_method(spec, registry, ms, mp).map_err(named)?;
        let info = built.method().info();
        let variant = match &ms.label {
            Some(l) => l.clone(),
            None if mp.is_empty() => info.id.clone(),
            None => format!("{} [{}]", info.id, compact(mp)),
        };
        let own_hs = own_steps(ms).map_err(named)?;
        let points = match stepping {
            Stepping::Fixed => own_hs
                .as_deref()
                .unwrap_or(self.steps.0)
                .iter()
                .map(|&h| (h, None))
                .collect(),
            Stepping::Adaptive => step_points(spec, self.steps.1, t_end)?,
        };
        let mut snapped: Vec<(f64, f64)> = Vec::new();
        for (h, adaptive) in points {
            let (n, stride) = steps_and_stride(spec, t_end, h, adaptive.is_some())
                .map_err(|m| format!("[[problems]] entry {pi} (`{pid}`): {m}"))?;
            if adaptive.is_none() {
                refuse_snapped_twice(&mut snapped, h, n, t_end).map_err(|m| {
                    format!("[[methods]] entry {} (`{}`) on `{pid}`: {m}", mi + 1, ms.id)
                })?;
            }
            for &threads in &spec.threads {
                self.cells.push(Cell {
                    index: self.cells.len(),
                    problem: pid.clone(),
                    problem_params: problem.params.clone(),
                    method_id: ms.id.clone(),
                    method: info.id.clone(),
                    method_params: mp.clone(),
                    projection: ms.projection.clone(),
                    richardson: ms.richardson,
                    recovery: ms.recovery.clone(),
                    variant: variant.clone(),
                    info: info.clone(),
                    built: built.clone(),
                    h: if adaptive.is_some() { h } else { t_end / n },
                    adaptive,
                    t_end,
                    threads,
                    trace_stride: stride,
                    metrics_stride: spec.metrics_stride,
                    trace_states: spec.trace_states,
                    allowed: problem.allowed.clone(),
                    max_steps: spec.max_steps,
                    cell_seconds: spec.cell_seconds,
                    repeat: spec.repeat,
                    ensemble: ensemble_of(spec, ms),
                    reference: problem.reference.clone(),
                    conservative: problem.conservative,
                });
                let last = self.cells.last().map(|c: &Cell| (key_of(c), describe(c)));
                if let Some((key, what)) = last {
                    self.seen.insert(key, (pi, mi + 1), what)?;
                }
            }
        }
        Ok(())
    }
}

/// Refuse a fixed step `h` that snaps (`t_end / n`, `n` steps) to the step of one given
/// before (`snapped`: the given h and the snapped step count of each): the same cell
/// twice, which an order fit would count as two points.
fn refuse_snapped_twice(
    snapped: &mut Vec<(f64, f64)>, h: f64, n: f64, t_end: f64,
) -> Result<(), String> {
    if let Some((other, _)) = snapped.iter().find(|(_, m)| m.to_bits() == n.to_bits()) {
        return Err(format!(
            "step sizes {other:e} and {h:e} both snap to h = {:e} (t_end = {t_end} in {n} steps), the same cell twice; drop one of them from `h` / `log_range` (or lower `per_decade`), or lengthen `t_end`",
            t_end / n
        ));
    }
    snapped.push((h, n));
    Ok(())
}

/// What makes a cell's run: two cells with one key would compute the same numbers.
fn key_of(c: &Cell) -> String {
    let tol = c
        .adaptive
        .map(|a| (a.tol.rtol.to_bits(), a.tol.atol.to_bits()));
    let curriculum = c
        .ensemble
        .as_ref()
        .map(|e| json_of_curriculum(e.curriculum.as_ref()));
    format!(
        "{}|{}|{}|{}|{:?}|{:?}|{}|{:x}|{:?}|{}|{:?}",
        c.problem,
        json_of(&c.problem_params),
        c.method_id,
        json_of(&c.method_params),
        c.projection.as_ref().map(json_of),
        c.recovery.as_ref().map(json_of),
        c.richardson,
        c.h.to_bits(),
        tol,
        c.threads,
        curriculum
    )
}

/// The spec's ensemble for the cells of method entry `ms`, with the entry's own
/// curriculum in place of the ensemble's where it gives one.
fn ensemble_of(spec: &Spec, ms: &MethodSpec) -> Option<crate::ensemble::EnsembleSpec> {
    let mut e = spec.ensemble.clone()?;
    if let Some(c) = &ms.curriculum {
        e.curriculum = Some(c.clone());
    }
    Some(e)
}

/// A curriculum as JSON (part of a cell's identity).
fn json_of_curriculum(c: Option<&crate::ensemble::noise::Curriculum>) -> String {
    c.map(|c| serde_json::to_string(c).unwrap_or_default())
        .unwrap_or_default()
}

/// A cell as a message names it.
fn describe(c: &Cell) -> String {
    let params = json_of(&c.problem_params);
    let step = match c.adaptive {
        Some(a) => format!("rtol = {:e}", a.tol.rtol),
        None => format!("h = {:e}", c.h),
    };
    format!(
        "`{}`{} with `{}` at {step}",
        c.problem,
        if params == "{}" {
            String::new()
        } else {
            format!(" {params}")
        },
        c.variant
    )
}

/// The cells made so far, by [`key_of`], with the entries they came from.
#[derive(Default)]
struct Seen(std::collections::HashMap<String, (usize, usize)>);

impl Seen {
    /// Record a cell from `[[problems]]` and `[[methods]]` entries `from`; a second
    /// cell with the same key is refused, naming both entries.
    fn insert(&mut self, key: String, from: (usize, usize), what: String) -> Result<(), String> {
        match self.0.insert(key, from) {
            None => Ok(()),
            Some(first) => Err(format!(
                "{what} is made twice: by [[problems]] entry {} with [[methods]] entry {}, and by [[problems]] entry {} with [[methods]] entry {}; the same run would count twice — drop one of the entries or give them different parameters (a `label` alone does not change the run)",
                first.0, first.1, from.0, from.1
            )),
        }
    }
}

/// Build the method of entry `ms` with parameters `mp` and check that its id matches the
/// entry's and that it can run the entry's stepping: its info and stepping.
fn checked_method(
    spec: &Spec, registry: &Registry, ms: &crate::spec::MethodSpec, mp: &toml::Table,
) -> Result<(BuiltMethod, Stepping), String> {
    let m: Arc<dyn Method> = registry
        .build_method(&ms.id, mp, ms.decorators())
        .map_err(|e| e.to_string())?
        .into();
    let info = m.info();
    if !(info.id == ms.id || info.id.starts_with(&format!("{}+", ms.id))) {
        return Err(format!(
            "the registry entry builds a method whose MethodInfo::id is `{}`; rows are keyed by \
             that id, so the entry's id and its info().id must agree — fix the entry",
            info.id
        ));
    }
    let stepping = stepping_of(spec, ms)?;
    if stepping == Stepping::Adaptive && info.error_estimate.is_none() {
        return Err(
            "has no local error estimate, so it cannot run `[steps] adaptive`; use fixed \
             steps (`h = [..]`) in another spec, or a method with an error estimate (radau)"
                .into(),
        );
    }
    Ok((BuiltMethod(m), stepping))
}

/// The step count `round(t_end / h)` (refused beyond `max_steps` for fixed steps) and
/// the trace stride of a cell.
fn steps_and_stride(
    spec: &Spec, t_end: f64, h: f64, adaptive: bool,
) -> Result<(f64, usize), String> {
    let n = (t_end / h).round().max(1.0);
    if !adaptive && (n.is_nan() || n > spec.max_steps as f64) {
        return Err(format!(
            "h = {h:e} over t_end = {t_end:e} needs {n:e} steps, beyond max_steps = {}; raise `[steps] h`, shorten `t_end`, or raise `max_steps`",
            spec.max_steps
        ));
    }
    let stride = match (spec.trace_dt, adaptive) {
        // Error-controlled cells trace every accepted step (and the output times, which
        // the loop hits exactly).
        (_, true) => usize::from(spec.trace_stride > 0 || spec.trace_dt.is_some()),
        (Some(dt), false) => ((dt / (t_end / n)).round() as usize).max(1),
        (None, false) => spec.trace_stride,
    };
    Ok((n, stride))
}

/// Refuse a spec whose sweeps multiply to no cell (an empty parameter list) or to more
/// than [`MAX_CELLS`] (counted before any cell is built), with `points` step sizes or
/// tolerances.
fn count_cells(spec: &Spec, points: usize) -> Result<(), String> {
    let problems: f64 = spec.problems.iter().map(|p| sweep_len(&p.params)).sum();
    // A method entry with its own steps runs those instead of the global ones.
    let method_cells: f64 = spec
        .methods
        .iter()
        .map(|m| {
            let own = own_steps(m).ok().flatten().map(|v| v.len());
            sweep_len(&m.params) * own.unwrap_or(points.max(1)) as f64
        })
        .sum();
    let methods: f64 = spec.methods.iter().map(|m| sweep_len(&m.params)).sum();
    let cells = problems * method_cells * spec.threads.len() as f64;
    if cells == 0.0 {
        return Err("the spec expands to no cell: a parameter list is empty (`[]`); give each swept parameter at least one value".into());
    }
    if cells > MAX_CELLS as f64 {
        return Err(format!(
            "the spec expands to {cells:e} cells ({problems} problem variants × {methods} method variants × {points} step sizes, or a method entry's own, × {} thread counts), more than {MAX_CELLS}; split the study or sweep fewer values",
            spec.threads.len()
        ));
    }
    Ok(())
}

/// A method entry's own fixed step sizes (`steps = { h = [..] }` or `{ log_range }`), if
/// it gives them; error-controlled steps are refused there (they belong in `[steps]`).
fn own_steps(ms: &crate::spec::MethodSpec) -> Result<Option<Vec<f64>>, String> {
    let Some(st) = &ms.steps else {
        return Ok(None);
    };
    if st.adaptive.is_some() {
        return Err("`steps` of a method entry takes fixed steps only (`h = [..]` or `log_range`); give `adaptive` in [steps]".into());
    }
    st.values().map(Some).map_err(|m| format!("`steps`: {m}"))
}

/// Which `[steps]` entry a method entry runs (see [`crate::spec::MethodSpec::stepping`]).
fn stepping_of(spec: &Spec, ms: &crate::spec::MethodSpec) -> Result<Stepping, String> {
    let fixed = spec.steps.h.is_some() || spec.steps.log_range.is_some() || ms.steps.is_some();
    let adaptive = spec.steps.adaptive.is_some();
    match (ms.stepping, fixed, adaptive) {
        (Some(Stepping::Adaptive), _, _) if ms.steps.is_some() => Err("a method entry's own `steps` are fixed steps, but its `stepping = \"adaptive\"`; drop one of the two".into()),
        (Some(Stepping::Fixed), false, _) => Err("`stepping = \"fixed\"` but [steps] gives no `h` or `log_range`; add one or drop `stepping`".into()),
        (Some(Stepping::Adaptive), _, false) => Err("`stepping = \"adaptive\"` but [steps] has no `adaptive = { rtol = [..] }`; add it or drop `stepping`".into()),
        (Some(s), _, _) => Ok(s),
        (None, true, _) => Ok(Stepping::Fixed),
        (None, false, _) => Ok(Stepping::Adaptive),
    }
}

/// One error-controlled schedule per tolerance `(h0, Some(..))`.
fn step_points(
    spec: &Spec, tols: &[f64], t_end: f64,
) -> Result<Vec<(f64, Option<driftlab_core::Adaptive>)>, String> {
    let Some(a) = &spec.steps.adaptive else {
        return Ok(Vec::new());
    };
    if a.h0 >= t_end {
        return Err(format!(
            "[steps] adaptive: `h0` = {} is not below t_end = {t_end}; give a first step inside the interval",
            a.h0
        ));
    }
    Ok(tols
        .iter()
        .map(|&rtol| {
            let schedule = driftlab_core::Adaptive {
                tol: driftlab_core::Tolerances {
                    rtol,
                    atol: a.atol.unwrap_or(rtol),
                },
                controller: a.controller,
                t_end,
                h0: a.h0,
                h_min: a.h_min,
                h_max: a.h_max.unwrap_or(t_end).min(t_end),
                // Traced at their accepted steps: clipping every step onto the `trace_dt`
                // grid would cap h at trace_dt (no dense output yet) and distort the cost.
                output_dt: None,
            };
            (a.h0, Some(schedule))
        })
        .collect())
}

/// The time schedule of `cell`: fixed or error-controlled steps, budget, metrics stride.
pub fn schedule_of(cell: &Cell) -> driftlab_core::Schedule {
    let mut schedule = match cell.adaptive {
        Some(a) => driftlab_core::Schedule::adaptive(a),
        None => driftlab_core::Schedule::fixed(cell.h, cell.t_end),
    };
    schedule.max_steps = cell.max_steps;
    schedule.metrics_stride = cell.metrics_stride;
    schedule.deadline = cell.cell_seconds.map(driftlab_core::Deadline::from_now);
    schedule.retained = retained_by(cell);
    schedule.threads = cell.threads;
    schedule
}

/// What a cell's observers keep over its run: the trace every `trace_stride` steps (and
/// the first and last state), with states when the spec traces them. The accepted steps
/// of an error-controlled cell are not known before it runs: only its first and last
/// samples are counted (the fill check of the sparse KKT solver still guards its factor).
fn retained_by(cell: &Cell) -> driftlab_core::Retained {
    if cell.trace_stride == 0 {
        return driftlab_core::Retained::default();
    }
    let steps = match cell.adaptive {
        Some(_) => 0.0,
        None => (cell.t_end / cell.h).round(),
    };
    driftlab_core::Retained {
        samples: (steps / cell.trace_stride as f64) as u64 + 2,
        states: cell.trace_states,
    }
}
