//! The columns of the tables the runner writes and the report reads, defined once: name,
//! type, unit and meaning, one line per column. The same line adds the field to the
//! table's row type ([`runs::Row`], [`traces::Row`], [`members::Row`], [`orders::Row`])
//! and its accessors ([`runs::COLUMNS`], …), through which [`crate::table`] writes rows
//! into a frame and reads them back: the runner and the report share the row type and the
//! code. The docs' column table is checked against [`runs::ALL`]. Adding a runs column is
//! one line here plus its value before a run in the runner's `unmeasured_row` (which
//! names every column, so the compiler asks for it) and where the run measures it.

/// The type of a column's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Text, never null.
    Text,
    /// Text or null.
    OptText,
    /// Non-negative integer.
    Count,
    /// Floating point, never null.
    Real,
    /// Floating point or null (undefined: no reference, not an error-controlled cell, …).
    OptReal,
    /// A list of floating point numbers per row (states in the traces).
    RealList,
}

impl Kind {
    /// How the column tables of docs/output-files.md name the type.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::OptText => "text or null",
            Kind::Count => "count",
            Kind::Real => "real",
            Kind::OptReal => "real or null",
            Kind::RealList => "list of reals",
        }
    }
}

impl ColumnDef {
    /// The column's row in a docs table: `| name | type | unit | meaning |`, with `|`
    /// in the meaning escaped as Markdown tables need.
    pub fn readme_row(&self) -> String {
        format!(
            "| `{}` | {} | {} | {} |",
            self.name,
            self.kind.label(),
            self.unit,
            self.meaning.replace('|', "\\|")
        )
    }
}

/// Whether the Markdown table under the header line `header` in `readme` holds exactly
/// `rows` (in any order): `None` when it does, else what differs, with the rows to paste.
/// The tables of docs/ (columns, failure kinds, bad inputs) are checked with it
/// against the definitions they document.
pub fn readme_table_differs(readme: &str, header: &str, rows: &[String]) -> Option<String> {
    let Some(table) = readme.split(header).nth(1) else {
        return Some(format!(
            "no table headed `{header}`; it should hold\n{}",
            rows.join("\n")
        ));
    };
    let listed: Vec<&str> = table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with("| "))
        .collect();
    let lacking: Vec<&String> = rows
        .iter()
        .filter(|r| !listed.contains(&r.as_str()))
        .collect();
    let extra: Vec<&&str> = listed
        .iter()
        .filter(|l| !rows.iter().any(|r| r == *l))
        .collect();
    if lacking.is_empty() && extra.is_empty() {
        return None;
    }
    Some(format!(
        "the table headed `{header}` lacks {} rows and has {} rows too many ({:?}); it should be\n{}",
        lacking.len(),
        extra.len(),
        extra,
        rows.join("\n")
    ))
}

/// One column: its name in Parquet and CSV, the type of its values, its unit and what it
/// holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnDef {
    /// Column name.
    pub name: &'static str,
    /// Value type.
    pub kind: Kind,
    /// Unit: `s` (simulated or wall-clock seconds, as the meaning says), `1`
    /// (dimensionless), `problem` (the problem's own units), `digits`, or `—` for text.
    pub unit: &'static str,
    /// What the column holds.
    pub meaning: &'static str,
}

/// Defines, from one line per column (`CONST field: Kind, "unit", "meaning";`), one
/// `pub const` [`ColumnDef`] per column (named `field` in the tables), `ALL` (every column
/// in table order), the table's row type `Row` (one field per column, typed by its
/// [`Kind`], serde names = column names) and `COLUMNS` (each column with its accessors,
/// through which [`crate::table`] writes and reads rows).
macro_rules! columns {
    ($( $id:ident $field:ident: $kind:ident, $unit:literal, $meaning:literal; )*) => {
        $(
            #[doc = concat!("`", stringify!($field), "`: ", $meaning)]
            pub const $id: ColumnDef = ColumnDef {
                name: stringify!($field),
                kind: Kind::$kind,
                unit: $unit,
                meaning: $meaning,
            };
        )*
        /// Every column, in table order.
        pub const ALL: &[ColumnDef] = &[$($id),*];

        /// One row of the table: one field per column, named and typed as the column
        /// (null: `None`; a column missing from an older file reads as the default).
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        pub struct Row {
            $(
                #[doc = $meaning]
                pub $field: crate::schema::field_type!($kind),
            )*
        }

        impl Default for Row {
            fn default() -> Self {
                Self { $( $field: crate::schema::field_default!($kind), )* }
            }
        }

        /// Every column with its accessors on [`Row`], in table order.
        pub const COLUMNS: &[(ColumnDef, crate::table::Access<Row>)] = &[
            $( ($id, crate::schema::access!($kind, $field)), )*
        ];
    };
}

/// The Rust type of a column of kind `$kind` in a row.
macro_rules! field_type {
    (Text) => { String };
    (OptText) => { Option<String> };
    (Count) => { u64 };
    (Real) => { f64 };
    (OptReal) => { Option<f64> };
}

/// The value of a field before it is set, and of a column an older file lacks: empty
/// text, null, 0, NaN.
macro_rules! field_default {
    (Text) => {
        String::new()
    };
    (OptText) => {
        None
    };
    (Count) => {
        0
    };
    (Real) => {
        f64::NAN
    };
    (OptReal) => {
        None
    };
}

/// The accessors of field `$field` of kind `$kind`.
macro_rules! access {
    ($kind:ident, $field:ident) => {
        crate::table::Access::$kind(|r| &r.$field, |r| &mut r.$field)
    };
}

pub(crate) use {access, field_default, field_type};

/// `runs.parquet` / `runs.csv`: one row per cell.
pub mod runs {
    use super::{ColumnDef, Kind};
    columns! {
        EXPERIMENT experiment: Text, "—", "spec name";
        CELL cell: Count, "1", "cell index within the experiment";
        PROBLEM problem: Text, "—", "problem id";
        PROBLEM_PARAMS problem_params: Text, "—", "problem parameters of this cell (JSON)";
        METHOD method: Text, "—", "method id (`+projection` when decorated)";
        VARIANT variant: Text, "—", "method label with its parameters (one curve per variant in figures)";
        PARAMS params: Text, "—", "method and projection parameters (JSON)";
        H h: Real, "s", "step size (snapped so that t_end/h is an integer); error-controlled cells: the mean accepted step t_end/steps";
        T_END t_end: Real, "s", "end time";
        THREADS threads: Count, "1", "faer threads inside the cell";
        SWEEP_THREADS sweep_threads: Count, "1", "cells run side by side in the batch this row ran in (the run's `--threads`, or the spec's `sweep_threads` entry)";
        RTOL rtol: OptReal, "1", "relative tolerance of an error-controlled cell (null for fixed steps)";
        ATOL atol: OptReal, "problem", "absolute tolerance of an error-controlled cell (null for fixed steps)";
        STATUS status: Text, "—", "`ok` or `failed`";
        FAIL_TIME fail_time: OptReal, "s", "last time reached before the failure (null if ok)";
        FAIL_KIND fail_kind: OptText, "—", "what failed, as one tag of the closed set `FailKind` (`newton-diverged`, `linear-solve`, `step-budget`, `memory`, `panic`, …; docs/bad-inputs.md lists them all) (null if ok)";
        FAIL_REASON fail_reason: OptText, "—", "the typed error's message with its numbers (null if ok)";
        STEPS steps: Count, "1", "steps completed (accepted steps of an error-controlled cell)";
        REJECTED_STEPS rejected_steps: Count, "1", "steps rejected by the error test (0 for fixed steps)";
        NEWTON_FAILURES newton_failures: Count, "1", "step attempts whose Newton iteration or linear solve failed and were retried with a smaller h (0 for fixed steps)";
        H_MIN_USED h_min_used: OptReal, "s", "smallest accepted step (h for fixed steps)";
        H_MAX_USED h_max_used: OptReal, "s", "largest accepted step (h for fixed steps)";
        MAX_POS_RESIDUAL max_pos_residual: OptReal, "problem", "max over all steps of ‖Φ(t,q)‖∞ (index-1: ‖g‖∞; fully implicit F(t, y, y′) = 0: ‖F‖∞ of the stored pair)";
        MAX_VEL_RESIDUAL max_vel_residual: OptReal, "problem", "max over all steps of ‖Φ_q v + Φ_t‖∞";
        MAX_ACC_RESIDUAL max_acc_residual: OptReal, "problem", "max over all steps of ‖Φ_q a − γ‖∞ with the method's own a";
        FINAL_POS_RESIDUAL final_pos_residual: OptReal, "problem", "‖Φ‖∞ at the last state";
        FINAL_VEL_RESIDUAL final_vel_residual: OptReal, "problem", "‖Φ_q v + Φ_t‖∞ at the last state";
        SETTLE_TIME settle_time: OptReal, "s", "2 % settling time of a start off the constraints: the time (from t₀) of the last observed state with ‖Φ‖∞ above 2 % of its start (Ogata, Modern Control Engineering, §5-3); null for a start within 1e-8 of them, or when the last state is still above the band (not settled)";
        RESIDUAL_PEAKS residual_peaks: OptReal, "1", "local maxima of ‖Φ‖∞ above that 2 % band among the observed states: the swings of an under-damped constraint error (0 when it decays monotonically); null for a start within 1e-8 of the constraints";
        MAX_ENERGY_REL_ERROR max_energy_rel_error: OptReal, "1", "max of |H − H0| / max(|H0|, problem energy scale)";
        FINAL_ENERGY_REL_ERROR final_energy_rel_error: OptReal, "1", "the same at the last state";
        MAX_MOMENTUM_ERROR max_momentum_error: OptReal, "problem", "max over all steps of ‖p − p₀‖∞ of the momenta the problem conserves (linear, angular; `MechanicalSystem::momentum`); null where it defines none";
        FINAL_MOMENTUM_ERROR final_momentum_error: OptReal, "problem", "the same at the last state";
        ERR_Q err_q: OptReal, "problem", "max over all steps of ‖q − q_exact‖∞ (index-1: differential variables x; fully implicit: y, whose q and v columns of traces and states hold y and y′); null without reference";
        ERR_V err_v: OptReal, "problem", "max over all steps of ‖v − v_exact‖∞ (fully implicit: y′)";
        ERR_LAMBDA err_lambda: OptReal, "problem", "max over all steps of ‖λ − λ_exact‖∞ (index-1: algebraic variables z)";
        FINAL_ERR_Q final_err_q: OptReal, "problem", "‖q − q_exact‖∞ at t_end";
        FINAL_ERR_V final_err_v: OptReal, "problem", "‖v − v_exact‖∞ at t_end";
        FINAL_ERR_LAMBDA final_err_lambda: OptReal, "problem", "‖λ − λ_exact‖∞ at t_end";
        MAX_DEFERRED_RESIDUAL max_deferred_residual: OptReal, "problem", "max over all steps of ‖Φ‖∞ over the lower-priority rows (prioritized problems; the residual columns then cover priority 0); null otherwise";
        FINAL_DEFERRED_RESIDUAL final_deferred_residual: OptReal, "problem", "the same at the last state";
        MAX_PENETRATION max_penetration: OptReal, "problem", "max over all steps of the unilateral rows' penetration max_i max(0, −g_i(q)) (problems with unilateral rows; null otherwise)";
        MAX_APPROACH_VELOCITY max_approach_velocity: OptReal, "problem", "max over all steps of the closed unilateral rows' approach velocity, max over g_i ≤ 0 of max(0, −G_i v) (problems with unilateral rows; null otherwise)";
        SCD scd: OptReal, "digits", "significant correct digits at t_end against the published reference (IVP Test Set measure); null without one";
        REFERENCE reference: OptText, "—", "the exact solution or published reference the error columns compare with, judged before they are written: `valid: …` (its declared domain holds here, with the basis of its accuracy), `undeclared` (a problem that declares no domain; only the self-check guards it), `outside its domain: …` or `failed its self-check: …` (then `err_*`, `final_err_*` and `scd` are null, with this reason); null without a reference";
        REFERENCE_ACCURACY reference_accuracy: OptReal, "problem", "the reference's own error bound at these parameters and t_end (`MechanicalSystem::reference_domain`; relative for a published one): errors below about ten times it are not the method's, and the order fit ignores them; null when undeclared or absent";
        REF_POS_RESIDUAL ref_pos_residual: OptReal, "problem", "the reference's own ‖Φ(t, q_ref)‖∞ (index-1: ‖g‖∞; fully implicit: ‖F‖∞ on the exact pair), max over the compared points (every evaluated state of an exact solution; a published reference at its time): the self-check";
        REF_VEL_RESIDUAL ref_vel_residual: OptReal, "problem", "the reference's own ‖Φ_q v_ref + Φ_t‖∞, max over the compared points";
        REF_ENERGY_REL_ERROR ref_energy_rel_error: OptReal, "1", "the exact solution's own relative energy error against the run's initial energy, max over the compared points (null for published references and problems without energy)";
        WARN_TIME warn_time: OptReal, "s", "first time some row of Φ (index-1: g; fully implicit: F) exceeded its allowed violation (spec `[monitor]`, seed 001 §3.12); null if never or without a monitor";
        WARN_STATES warn_states: Count, "1", "evaluated states with some row beyond its allowed violation (0 without a monitor)";
        WARN_RATIO warn_ratio: OptReal, "1", "max over the evaluated states and rows of |Φ_i| / allowed_i (null without a monitor)";
        WARN_ROW warn_row: OptReal, "1", "the row of Φ (index from 0) where `warn_ratio` was reached (null without a monitor)";
        NEWTON_ITERATIONS newton_iterations: Count, "1", "Newton iterations (stage equations)";
        PROJECTION_ITERATIONS projection_iterations: Count, "1", "Newton iterations of position projections";
        FACTORIZATIONS factorizations: Count, "1", "numeric factorizations (KKT or Newton matrices)";
        SUPERNODAL_FACTORIZATIONS supernodal_factorizations: Count, "1", "of those, sparse LDLᵀ factorizations faer ran supernodal (dense blocks, parallel with `threads` > 1) rather than simplicial (column by column, sequential): what bounds the in-cell speedup";
        JACOBIAN_EVALUATIONS jacobian_evaluations: Count, "1", "evaluations of a Newton Jacobian (finite differences or analytic)";
        ROLLBACKS rollbacks: Count, "1", "emergency rollbacks: steps retaken as substeps (`recovery`, seed 001 §3.5.4)";
        RESETS resets: Count, "1", "emergency resets: projections onto the nearest valid configuration (`recovery`)";
        RELAXATIONS relaxations: Count, "1", "emergency relaxations: constraint restored over several steps (`recovery`)";
        SYMBOLIC_ANALYSES symbolic_analyses: Count, "1", "symbolic analyses (once per sparse structure)";
        SOLVES solves: Count, "1", "linear solves (incl. refinement)";
        REFINEMENT_STEPS refinement_steps: Count, "1", "iterative-refinement steps of the KKT solves";
        NEWTON_MAX_PER_STEP newton_max_per_step: Count, "1", "most Newton iterations one accepted step took (0 without Newton)";
        ERROR_ESTIMATE_MAX error_estimate_max: OptReal, "1", "largest scaled local error estimate of an accepted step (≤ 1 under error control; null for methods without an estimate)";
        COUNTERS counters: Text, "—", "the method's own counters (JSON object, e.g. hybrid's `soft_steps`, `baumgarte_steps`, `projected_steps`; `{}` when none)";
        ENSEMBLE ensemble: OptText, "—", "the spec's `[ensemble]` settings (JSON: members, seed, initial noise, constraint noise, curriculum) when the row summarizes an ensemble of rollouts (seed 001 §3.6); null for a single run. The residual, energy, step and counter columns then hold the worst member (maxima) or the sum over members (steps, counters), and each member has a row in `members`";
        MEMBERS members: Count, "1", "rollouts in the ensemble (0 for a single run)";
        MEMBER_FAILURES member_failures: Count, "1", "members that failed (the row is `failed` when any did; `fail_kind` is the most frequent member failure)";
        DRIFT_MEDIAN drift_median: OptReal, "problem", "median over the members that reached t_end of each member's max ‖Φ(t,q)‖∞ of the unperturbed constraints (failed members are counted in `member_failures`; the maximum over all members is `max_pos_residual`)";
        DRIFT_P95 drift_p95: OptReal, "problem", "95th percentile (nearest rank) over the members that reached t_end of the same";
        ENERGY_MEDIAN energy_median: OptReal, "1", "median over the members that reached t_end of each member's max relative energy error (against its own initial energy; the maximum over all members is `max_energy_rel_error`)";
        ENERGY_P95 energy_p95: OptReal, "1", "95th percentile (nearest rank) over the members that reached t_end of the same";
        ROLLOUT_STEPS_PER_SECOND rollout_steps_per_second: OptReal, "1/s", "ensemble throughput: steps of all members over the wall time of the ensemble, members run side by side on `sweep_threads` threads (median over `repeat` runs); null for a single run";
        WALL_SECONDS wall_seconds: Real, "s", "total wall time of the cell (init + steps + metrics); the median over `repeat` runs (over `timed_alone` runs with the cell alone where that is > 0)";
        STEP_SECONDS step_seconds: Real, "s", "wall time of the steps (the method's steps with the loop's per-step checks; fixed steps are timed as a whole less the metrics' time); the median over `repeat` runs (over `timed_alone` runs with the cell alone where that is > 0)";
        OBSERVE_SECONDS observe_seconds: Real, "s", "wall time evaluating the metrics (every `metrics_stride` steps) and feeding the observers, apart from the steps; the median over `repeat` runs (over `timed_alone` runs with the cell alone where that is > 0)";
        BATCH_SECONDS batch_seconds: Real, "s", "wall time of the side-by-side part of the batch this row ran in (every cell of the experiment with one faer thread, `sweep_threads` at a time; cells with more threads run alone after it): the side-by-side speedup is its ratio between counts";
        METRICS_STRIDE metrics_stride: Count, "1", "steps between metric evaluations (spec key `metrics_stride`; 1 = every step): the maxima are over the evaluated states";
        REPEAT repeat: Count, "1", "runs of the cell behind the times (spec key `repeat`)";
        STEP_SECONDS_MIN step_seconds_min: OptReal, "s", "smallest step time over the runs";
        STEP_SECONDS_MAX step_seconds_max: OptReal, "s", "largest step time over the runs";
        TIMED_ALONE timed_alone: Count, "1", "runs with the cell alone on the machine behind the times (after a warm-up run for a cell under 1 s), for a row a verdict uses: a class recommendation or a claim's time (`driftlab_results::verdict`); 0: the times are from the sweep, `sweep_threads` cells side by side, over `repeat` runs";
        PEAK_HEAP_BYTES peak_heap_bytes: OptReal, "B", "measured peak heap bytes the cell's first run added on its thread (problem, method, solver, metrics, traces), counted by the binary's allocator (null without it); a measurement like the times, not part of the deterministic columns";
        DECLARED_ORDER_Q declared_order_q: OptReal, "1", "the method's declared order in q (MethodInfo)";
        DECLARED_ORDER_V declared_order_v: OptReal, "1", "declared order in v";
        DECLARED_ORDER_LAMBDA declared_order_lambda: OptReal, "1", "declared order in λ";
    }

    /// The runs columns that may serve as an experiment's accuracy measure
    /// (`[report] measure`).
    pub const MEASURES: [ColumnDef; 6] = [
        ERR_Q,
        FINAL_ERR_Q,
        SCD,
        MAX_ENERGY_REL_ERROR,
        MAX_POS_RESIDUAL,
        FINAL_DEFERRED_RESIDUAL,
    ];

    /// The measured columns: wall-clock times and heap use. Every other column is
    /// bitwise identical across repeated runs and across thread counts of both kinds
    /// (cells side by side, faer threads inside a cell) — except `cell`, `threads` and
    /// `sweep_threads` themselves (test `determinism` of the runner).
    pub const MEASURED: [ColumnDef; 9] = [
        WALL_SECONDS,
        ROLLOUT_STEPS_PER_SECOND,
        BATCH_SECONDS,
        STEP_SECONDS,
        OBSERVE_SECONDS,
        STEP_SECONDS_MIN,
        STEP_SECONDS_MAX,
        TIMED_ALONE,
        PEAK_HEAP_BYTES,
    ];

    /// The column named `name`.
    pub fn find(name: &str) -> Option<ColumnDef> {
        ALL.iter().copied().find(|c| c.name == name)
    }
}

/// `traces.parquet`: one row per sample per cell (long format).
pub mod traces {
    use super::{ColumnDef, Kind};
    columns! {
        CELL cell: Count, "1", "cell index (joins the runs table)";
        PROBLEM problem: Text, "—", "problem id";
        METHOD method: Text, "—", "method id";
        VARIANT variant: Text, "—", "method label with its parameters";
        H h: Real, "s", "step size of the cell";
        T t: OptReal, "s", "time of the sample";
        POS_RESIDUAL pos_residual: OptReal, "problem", "‖Φ(t,q)‖∞";
        VEL_RESIDUAL vel_residual: OptReal, "problem", "‖Φ_q v + Φ_t‖∞";
        ACC_RESIDUAL acc_residual: OptReal, "problem", "‖Φ_q a − γ‖∞";
        ENERGY_REL_ERROR energy_rel_error: OptReal, "1", "|H − H0| / max(|H0|, problem energy scale)";
        ERR_Q err_q: OptReal, "problem", "‖q − q_exact‖∞ (null without reference)";
        ERR_V err_v: OptReal, "problem", "‖v − v_exact‖∞";
        ERR_LAMBDA err_lambda: OptReal, "problem", "‖λ − λ_exact‖∞";
    }

    /// The sampled quantities, in the order of a trace's sample array.
    pub const SAMPLED: [ColumnDef; 8] = [
        T,
        POS_RESIDUAL,
        VEL_RESIDUAL,
        ACC_RESIDUAL,
        ENERGY_REL_ERROR,
        ERR_Q,
        ERR_V,
        ERR_LAMBDA,
    ];
    /// `q` at each sample (only with `trace_states`).
    pub const Q: ColumnDef = ColumnDef {
        name: "q",
        kind: Kind::RealList,
        unit: "problem",
        meaning: "generalized coordinates at the sample (only with `trace_states`)",
    };
    /// `v` at each sample (only with `trace_states`).
    pub const V: ColumnDef = ColumnDef {
        name: "v",
        kind: Kind::RealList,
        unit: "problem",
        meaning: "velocities at the sample (only with `trace_states`)",
    };
    /// `λ` at each sample (only with `trace_states`).
    pub const LAMBDA: ColumnDef = ColumnDef {
        name: "lambda",
        kind: Kind::RealList,
        unit: "problem",
        meaning: "Lagrange multipliers at the sample as the method computed them (index-1: algebraic variables z; only with `trace_states`)",
    };
    /// The rows of `Φ` at each sample (only with `trace_states`).
    pub const PHI: ColumnDef = ColumnDef {
        name: "phi",
        kind: Kind::RealList,
        unit: "problem",
        meaning: "the constraint rows Φ_i(t, q) at the sample, signed (index-1: g_i; only with `trace_states`): the per-row violation",
    };
}

/// `members.parquet` / `members.csv`: one row per rollout of an ensemble (a spec with
/// `[ensemble]`), joined to its `runs` row by `cell`.
pub mod members {
    use super::{ColumnDef, Kind};
    columns! {
        EXPERIMENT experiment: Text, "—", "spec name";
        CELL cell: Count, "1", "the ensemble's cell (its row in `runs`)";
        MEMBER member: Count, "1", "member index (the episode of a curriculum or a member-decaying noise)";
        STRENGTH strength: OptReal, "1", "curriculum strength s of this member (null without a curriculum or for a method without its parameters)";
        SIGMA0 sigma0: Real, "problem", "constraint-noise level σ at t = 0 for this member (0 without noise)";
        STATUS status: Text, "—", "`ok` or `failed`";
        FAIL_TIME fail_time: OptReal, "s", "last time reached before the failure (null if ok)";
        FAIL_KIND fail_kind: OptText, "—", "the failure's stable tag, as in `runs` (null if ok)";
        FAIL_REASON fail_reason: OptText, "—", "the typed error's message (null if ok)";
        STEPS steps: Count, "1", "steps completed";
        MAX_DRIFT max_drift: OptReal, "problem", "max over the evaluated states of ‖Φ(t,q)‖∞, unperturbed constraints";
        FINAL_DRIFT final_drift: OptReal, "problem", "the same at the last state";
        MAX_ERR_Q max_err_q: OptReal, "problem", "max over the evaluated states of ‖q − q*(t)‖∞ against the unperturbed problem's exact solution q* (for a tracked problem, the plan: the tracking error; with initial-state noise it includes the member's own offset); null without an exact solution";
        MAX_VEL_RESIDUAL max_vel_residual: OptReal, "problem", "max of ‖Φ_q v + Φ_t‖∞";
        MAX_ENERGY_REL_ERROR max_energy_rel_error: OptReal, "1", "max relative energy error against the member's initial energy";
        FINAL_ENERGY_REL_ERROR final_energy_rel_error: OptReal, "1", "the same at the last state";
        STEP_SECONDS step_seconds: Real, "s", "wall time of the member's steps, as `runs.step_seconds` (a measurement)";
    }

    /// The measured columns (everything else is bitwise reproducible).
    pub const MEASURED: [ColumnDef; 1] = [STEP_SECONDS];
}

/// `orders.csv`: one fitted convergence order per variant and quantity where h is swept.
pub mod orders {
    use super::{ColumnDef, Kind};
    columns! {
        PROBLEM problem: Text, "—", "problem id";
        PROBLEM_PARAMS problem_params: Text, "—", "problem parameters (JSON)";
        METHOD method: Text, "—", "method id";
        VARIANT variant: Text, "—", "method label with its parameters";
        PARAMS params: Text, "—", "method parameters (JSON)";
        QUANTITY quantity: Text, "—", "`q`, `v` or `lambda`";
        OBSERVED_ORDER observed_order: OptReal, "1", "fitted log–log slope of the max error against h over the asymptotic range (null: fewer than 2 usable points)";
        EXPECTED_ORDER expected_order: OptReal, "1", "the method's declared order (MethodInfo)";
        H_MIN h_min: OptReal, "s", "smallest h in the fit range";
        H_MAX h_max: OptReal, "s", "largest h in the fit range";
        POINTS points: Count, "1", "points in the fit";
        R2 r2: OptReal, "1", "coefficient of determination of the fit";
        NOTE note: Text, "—", "why there is no fit, if so";
    }
}

/// `optima.csv`: the stiffness (or any swept method parameter) that minimizes an
/// ensemble's expected loss `E[L_task] + α E[L_c]` (seed 001 §3.6.2), per group of cells
/// that differ only in that parameter and per α of the spec's `[[optima]]` entry.
pub mod optima {
    use super::{ColumnDef, Kind};
    columns! {
        PROBLEM problem: Text, "—", "problem id";
        PROBLEM_PARAMS problem_params: Text, "—", "problem parameters (JSON)";
        METHOD method: Text, "—", "method id";
        PARAMS params: Text, "—", "the method's other parameters (JSON, without the searched one)";
        H h: Real, "s", "step size";
        PARAMETER parameter: Text, "—", "the searched method parameter";
        TASK_LOSS task_loss: Text, "—", "the members column averaged as E(L_task)";
        CONSTRAINT_LOSS constraint_loss: Text, "—", "the members column averaged as E(L_c)";
        ALPHA alpha: Real, "1", "the weight α of the constraint loss";
        CANDIDATES candidates: Count, "1", "parameter values run (the grid)";
        FEASIBLE feasible: Count, "1", "values at which every member reached t_end with both losses defined";
        K_GRID k_grid: OptReal, "param", "the feasible grid value of least loss (null: none feasible)";
        K_OPT k_opt: OptReal, "param", "the minimizer of the parabola in log k through the grid minimum and its two grid neighbours (successive parabolic interpolation, one step; the grid value where `edge` is set)";
        EDGE edge: OptText, "—", "`lowest` or `highest` when the grid minimum is at an end of the feasible grid (the optimum may lie beyond it), `gap` when a grid neighbour of it had a failed member (no parabolic step across it), else null";
        TASK task: OptReal, "problem", "E(L_task) at k_grid (mean over the members)";
        CONSTRAINT constraint: OptReal, "problem", "E(L_c) at k_grid";
        LOSS loss: OptReal, "problem", "E(L_task) + α E(L_c) at k_grid";
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are unique within a table, and the measures are runs columns of a real type.
    #[test]
    fn names_are_unique_and_measures_are_real_columns() {
        for all in [
            runs::ALL,
            traces::ALL,
            members::ALL,
            orders::ALL,
            optima::ALL,
        ] {
            for (i, c) in all.iter().enumerate() {
                assert!(
                    all[i + 1..].iter().all(|d| d.name != c.name),
                    "{} twice",
                    c.name
                );
            }
        }
        for m in runs::MEASURES {
            assert_eq!(runs::find(m.name), Some(m));
            assert!(matches!(m.kind, Kind::Real | Kind::OptReal), "{}", m.name);
        }
    }
}
