//! The catalogue of bad inputs (issue 13): every case runs the `driftlab` binary and
//! asserts its exact outcome — exit status 2 with a message naming the field and the fix
//! before anything runs, a failed row with its typed `fail_kind`, or `simulate`'s exit
//! status 1 for a run that fails on the way. None may panic or hang (each case is killed
//! after [`LIMIT`]). The README's table "Bad inputs and what becomes of them" is this
//! catalogue, row for row ([`readme_lists_every_case`]).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_core::FailKind;
use polars::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "bad_inputs/folders.rs"]
mod folders;
#[path = "bad_inputs/mjcf.rs"]
mod mjcf;
#[path = "bad_inputs/model_input.rs"]
mod model_input;
#[path = "bad_inputs/models.rs"]
mod models;
#[path = "bad_inputs/surfaces.rs"]
mod surfaces;

/// Longest a case may take before it counts as a hang.
const LIMIT: Duration = Duration::from_secs(120);

/// How a case is given to the binary.
enum Given {
    /// `driftlab run SPEC --out DIR` with this spec text and extra arguments.
    Spec(String, &'static [&'static str]),
    /// `driftlab ARGS` (`{dir}` is replaced by the case's folder).
    Args(&'static [&'static str]),
    /// A case that needs set-up of its own: run by the function.
    Scripted(fn(&Path) -> Ran),
}

/// What must come of it.
enum Outcome {
    /// Exit status 2, the message on stderr, no result table written.
    Refused(&'static str),
    /// Exit status 0 and a failed row of this kind whose reason contains the text.
    FailedRow(FailKind, &'static str),
    /// `simulate`: exit status 1, the message on stderr.
    RunFails(&'static str),
    /// Checked by the scripted case itself; the text says what it checks.
    Checked(&'static str),
    /// Exit status 0 and one `ok` row whose error columns are null, its `reference`
    /// column saying why (a reference outside its domain).
    Unreferenced(&'static str),
}

/// One bad input: what the README calls it, how it is given, what must come of it.
struct Case {
    input: &'static str,
    given: Given,
    outcome: Outcome,
}

impl Case {
    /// The case's row in the README's table.
    fn readme_row(&self) -> String {
        let outcome = match &self.outcome {
            Outcome::Refused(m) => format!("exit 2: `{m}`"),
            Outcome::FailedRow(k, m) => format!("failed row, `fail_kind = {k}`: `{m}`"),
            Outcome::RunFails(m) => format!("exit 1: `{m}`"),
            Outcome::Checked(m) => (*m).to_string(),
            Outcome::Unreferenced(m) => {
                format!("ok row, `err_*` and `scd` null, `reference`: `{m}`")
            }
        };
        format!("| {} | {} |", self.input, outcome.replace('|', "\\|"))
    }
}

/// What a run of the binary left.
struct Ran {
    code: Option<i32>,
    stderr: String,
    out: PathBuf,
}

/// A one-cell spec: pendulum, RATTLE, h = 0.01 to t = 0.1.
fn base() -> String {
    "schema_version = 1\nname = \"bad\"\nt_end = 0.1\n\n[steps]\nh = [1e-2]\n\n[[problems]]\nid = \"pendulum\"\n\n[[methods]]\nid = \"rattle\"\n".into()
}

/// [`base`] with `from` replaced by `to`.
fn with(from: &str, to: &str) -> String {
    let b = base();
    assert!(b.contains(from), "the base spec has no `{from}`");
    b.replacen(from, to, 1)
}

/// [`base`] with an `[ensemble]` table.
fn ensemble(table: &str) -> String {
    format!("{}\n[ensemble]\n{table}\n", base())
}

fn spec(text: String) -> Given {
    Given::Spec(text, &[])
}

/// Run the binary with `args` in `dir`, killed after [`LIMIT`].
fn driftlab(args: &[String], dir: &Path) -> Ran {
    let mut child = Command::new(env!("CARGO_BIN_EXE_driftlab"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
        .spawn()
        .expect("binary starts");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            panic!(
                "`driftlab {}` hangs: killed after {LIMIT:?}",
                args.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ran {
        code: status.code(),
        stderr: std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default(),
        out: dir.join("out"),
    }
}

fn strings(args: &[&str], dir: &Path) -> Vec<String> {
    args.iter()
        .map(|a| a.replace("{dir}", dir.to_str().unwrap()))
        .collect()
}

/// `driftlab run` of `text` (as `s.toml`) into `dir/out` with `extra` arguments.
fn run_spec(text: &str, extra: &[&str], dir: &Path) -> Ran {
    std::fs::write(dir.join("s.toml"), text).unwrap();
    let mut args = strings(&["run", "s.toml", "--out", "out"], dir);
    args.extend(strings(extra, dir));
    driftlab(&args, dir)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every case of the catalogue.
#[allow(clippy::too_many_lines)] // a data table: one line per catalogued case
fn cases() -> Vec<Case> {
    let c = |input, given, outcome| Case {
        input,
        given,
        outcome,
    };
    use Outcome::*;
    vec![
        // The spec file itself.
        c("spec file missing", Given::Args(&["run", "missing.toml"]), Refused("cannot read spec `missing.toml`: No such file or directory")),
        c("spec file not UTF-8", Given::Scripted(not_utf8), Refused("stream did not contain valid UTF-8")),
        c("empty spec file", spec(String::new()), Refused("missing field `schema_version`")),
        c("malformed TOML", spec(with("[steps]", "[steps")), Refused("TOML parse error at line 5")),
        c("unsupported `schema_version`", spec(with("schema_version = 1", "schema_version = 7")), Refused("schema_version = 7 is not supported; this driftlab reads schema_version = 1")),
        // Unknown keys at every level.
        c("unknown top-level key", spec(with("name = ", "nmae = ")), Refused("unknown field `nmae`, expected one of `schema_version`, `name`")),
        c("unknown key in `[steps]`", spec(with("h = [1e-2]", "hh = [1e-2]")), Refused("unknown field `hh`, expected one of `h`, `log_range`, `adaptive`")),
        c("unknown key in a `[[problems]]` entry", spec(with("id = \"pendulum\"", "id = \"pendulum\"\nparamz = {}")), Refused("unknown field `paramz`, expected `id` or `params`")),
        c("unknown key in a `[[methods]]` entry", spec(with("id = \"rattle\"", "id = \"rattle\"\nparamz = {}")), Refused("unknown field `paramz`, expected one of `id`, `params`, `projection`")),
        c("unknown key in `projection`", spec(with("id = \"rattle\"", "id = \"rattle\"\nprojection = { tool = 1e-9 }")), Refused("unknown field `tool`, expected one of `tol`")),
        c("unknown perturbation in `[ensemble]`", spec(ensemble("members = 4\ninitial = { sigma_q = 1.0 }")), Refused("unknown field `sigma_q`, expected `q_sigma` or `v_sigma`")),
        c("a performance ramp without its feedback", spec(ensemble("members = 4\ncurriculum = { params = { k_p = 1.0 }, ramp = \"performance\" }")), Refused("ramp = \"performance\" needs its `feedback = { generation = .. }`")),
        c("`[[optima]]` on a parameter no method sweeps", spec(format!("{}[[optima]]\nparameter = \"k_p\"\ntask = \"max_err_q\"\nconstraint = \"max_drift\"\nalpha = [1.0]\n", ensemble("members = 4"))), Refused("parameter = \"k_p\" is not swept over at least 3 values")),
        c("typed's group order naming a group twice", spec(with("id = \"rattle\"", "id = \"typed\"\nparams = { order = \"contact, contact\" }")), Refused("name each correction group once")),
        // Unknown ids and parameters.
        c("unknown problem", spec(with("\"pendulum\"", "\"pendulm\"")), Refused("[[problems]] entry 1 (`pendulm`): unknown problem `pendulm`; known: pendulum")),
        c("unknown method", spec(with("\"rattle\"", "\"ratle\"")), Refused("[[methods]] entry 1 (`ratle`): unknown method `ratle`; known: taylor")),
        c("unknown problem parameter", spec(with("id = \"pendulum\"", "id = \"pendulum\"\nparams = { lenght = 2.0 }")), Refused("invalid parameters for problem `pendulum`: unknown field `lenght`, expected one of `m`, `length`")),
        c("inconsistent start `initial`", spec(with("id = \"pendulum\"", "id = \"pendulum\"\nparams = { initial = { q = [1.1, 0.0] } }")), Refused("the start is inconsistent: ‖Φ(t₀, q₀)‖∞ = 2.100e-1, ‖Φ_q v₀ + Φ_t‖∞ = 0.000e0 > tol 1e-10")),
        c("`redundant_tol` without `redundant = \"remove\"`", spec(with("id = \"pendulum\"", "id = \"pendulum\"\nparams = { redundant_tol = 1e-5 }")), Refused("`redundant_tol` applies to `redundant = \"remove\"`: give both, or neither")),
        c("`redundant_tol` out of range", spec(with("id = \"pendulum\"", "id = \"pendulum\"\nparams = { redundant = \"remove\", redundant_tol = 0.5 }")), Refused("parameter `redundant_tol` of `pendulum` = 0.5 is invalid: give a relative tolerance in (0, 1e-2]")),
        c("`initial.q` of the wrong length", spec(with("id = \"pendulum\"", "id = \"pendulum\"\nparams = { initial = { q = [1.0] } }")), Refused("parameter `initial.q` of `pendulum` = 1 is invalid: give 2 values")),
        c("`[monitor]` allowed_rows of the wrong length", spec(format!("{}\n[monitor]\nallowed_rows = [1e-3, 1e-3]\n", base())), Refused("[monitor] allowed_rows has 2 values; the problem has 1 constraint rows")),
        // Wrong types.
        c("a string where a list of step sizes goes", spec(with("h = [1e-2]", "h = \"big\"")), Refused("invalid type: string \"big\", expected a sequence")),
        c("a real where a count goes", spec(with("id = \"pendulum\"", "id = \"planar-chain\"\nparams = { links = 2.5 }")), Refused("invalid type: floating point `2.5`, expected usize in `links`")),
        // NaN, ∞, negative and zero where not allowed.
        c("h = 0", spec(with("h = [1e-2]", "h = [0.0]")), Refused("[steps] step sizes must be finite and > 0")),
        c("h < 0", spec(with("h = [1e-2]", "h = [-1e-2]")), Refused("[steps] step sizes must be finite and > 0")),
        c("h = NaN", spec(with("h = [1e-2]", "h = [nan]")), Refused("[steps] step sizes must be finite and > 0")),
        c("h = ∞", spec(with("h = [1e-2]", "h = [inf]")), Refused("[steps] step sizes must be finite and > 0")),
        c("t_end = 0", spec(with("t_end = 0.1", "t_end = 0")), Refused("`t_end` = 0: give a finite end time > 0")),
        c("t_end = NaN", spec(with("t_end = 0.1", "t_end = nan")), Refused("`t_end` = NaN: give a finite end time > 0")),
        c("tolerance rtol = 0", spec(with("h = [1e-2]", "adaptive = { rtol = [0.0] }").replace("\"rattle\"", "\"radau\"")), Refused("[steps] adaptive: every rtol must be finite and > 0 (got [0.0])")),
        c("size links = 0", spec(with("id = \"pendulum\"", "id = \"planar-chain\"\nparams = { links = 0 }")), Refused("parameter `links` of `planar-chain` = 0 is invalid: give links ≥ 1")),
        c("size links < 0", spec(with("id = \"pendulum\"", "id = \"planar-chain\"\nparams = { links = -3 }")), Refused("invalid value: integer `-3`, expected usize in `links`")),
        c("length < 0", spec(with("id = \"pendulum\"", "id = \"pendulum\"\nparams = { length = -2.0 }")), Refused("parameter `length` of `pendulum` = -2 is invalid: give a finite value > 0")),
        c("a singular mass matrix (m = 0)", spec(with("id = \"pendulum\"", "id = \"pendulum\"\nparams = { m = 0.0 }")), Refused("parameter `m` of `pendulum` = 0 is invalid: give a finite value > 0")),
        c("gain ω_n < 0", spec(with("id = \"rattle\"", "id = \"baumgarte\"\nparams = { omega_n = -5.0 }")), Refused("parameter `omega_n` of `baumgarte` = -5 is invalid: give a finite value ≥ 0")),
        c("gain ω_n = NaN", spec(with("id = \"rattle\"", "id = \"baumgarte\"\nparams = { omega_n = nan }")), Refused("parameter `omega_n` of `baumgarte` = NaN is invalid: give a finite value ≥ 0")),
        c("a claim with an unknown measure", spec(format!("{}\n[[claims]]\nclaim = \"c\"\nsource = \"s\"\nmeasure = \"nope\"\nat_most = 1.0\ninstead = \"i\"\n", base())), Refused("[[claims]] entry 1: measure = \"nope\" is not a claim measure")),
        c("a claim whose text quotes an unknown measure", spec(format!("{}\n[[claims]]\nclaim = \"c\"\nsource = \"s\"\nmeasure = \"err_q\"\nat_most = 1.0\ninstead = \"it is {{nope | rattle}}\"\n", base())), Refused("[[claims]] entry 1: `instead`: {nope | rattle}: `nope` is not a quotable measure")),
        c("an order note with an unknown quantity", spec(format!("{}\n[[order_notes]]\nselect = [\"rattle\"]\nquantity = \"x\"\nreason = \"r\"\n", base())), Refused("[[order_notes]] entry 1: quantity = \"x\" is not one of q, v, lambda")),
        c("a method's own steps asking for error control", spec(with("id = \"rattle\"", "id = \"rattle\"\nsteps = { adaptive = { rtol = [1e-6] } }")), Refused("`steps` of a method entry takes fixed steps only")),
        c("a method's own steps with `stepping = \"adaptive\"`", spec(with("id = \"rattle\"", "id = \"rattle\"\nstepping = \"adaptive\"\nsteps = { h = [1e-2] }")), Refused("a method entry's own `steps` are fixed steps, but its `stepping = \"adaptive\"`; drop one of the two")),
        c("a method's own steps beyond the cell budget (105 masses × 9 601 steps)", spec(with("id = \"rattle\"", "id = \"rattle\"\nsteps = { log_range = { from = 1e-4, to = 1.0, per_decade = 2400 } }").replacen("id = \"pendulum\"", &format!("id = \"pendulum\"\nparams = {{ m = [{}] }}", (0..105).map(|i| format!("{:.2}", 1.0 + 0.01 * f64::from(i))).collect::<Vec<_>>().join(", ")), 1)), Refused("cells (105 problem variants × 1 method variants × 1 step sizes, or a method entry's own, × 1 thread counts), more than 1000000")),
        c("gain matrices of the wrong size (2 × 2 on the pendulum, m = 1)", spec(with("id = \"rattle\"", "id = \"baumgarte\"\nparams = { gain_matrices = { k_p = [[1.0, 0.0], [0.0, 1.0]], k_d = [[1.0, 0.0], [0.0, 1.0]] } }")), FailedRow(FailKind::Incompatible, "the problem has m = 1 constraint rows, give m rows of m entries")),
        c("projection tol < 0", spec(with("id = \"rattle\"", "id = \"rattle\"\nprojection = { tol = -1.0 }")), Refused("parameter `tol` of `projection` = -1 is invalid: give a finite value > 0")),
        // Budgets, counts and limits.
        c("t_end / h beyond the step budget (t_end = 1e300)", spec(with("t_end = 0.1", "t_end = 1e300")), Refused("h = 1e-2 over t_end = 1e300 needs 1e302 steps, beyond max_steps = 20000000")),
        c("max_steps = 0", spec(with("t_end = 0.1", "t_end = 0.1\nmax_steps = 0")), Refused("`max_steps` = 0: give the most steps a cell may take, ≥ 1")),
        c("threads = [0]", spec(with("t_end = 0.1", "t_end = 0.1\nthreads = [0]")), Refused("`threads` = [0] must list thread counts between 1 and 256")),
        c("--threads 0", Given::Spec(base(), &["--threads", "0"]), Refused("--threads 0: give the cells to run side by side, 1 … 256")),
        c("--threads 100000 (no attempt to start them)", Given::Spec(base(), &["--threads", "100000"]), Refused("--threads 100000: give the cells to run side by side, 1 … 256")),
        c("repeat = 0", spec(with("t_end = 0.1", "t_end = 0.1\nrepeat = 0")), Refused("`repeat` = 0 must be between 1 and 1000")),
        c("ensemble members = 0", spec(ensemble("members = 0")), Refused("`ensemble.members` = 0: give the number of rollouts")),
        c("ensemble σ₀ < 0", spec(ensemble("members = 4\nconstraint_noise = { sigma0 = -1.0, tau = 1.0 }")), Refused("`ensemble.constraint_noise.sigma0` = -1: give a finite noise level ≥ 0")),
        c("ensemble τ = 0", spec(ensemble("members = 4\nconstraint_noise = { sigma0 = 0.1, tau = 0.0 }")), Refused("`ensemble.constraint_noise.tau` = 0")),
        c("--size that the spec does not define", Given::Spec(format!("{}\n[sizes.quick]\nt_end = 0.05\n", base()), &["--size", "tiny"]), Refused("--size `tiny`: this spec defines the sizes quick, full; use one of them")),
        c("--memory-limit that is not a size", Given::Spec(base(), &["--memory-limit", "12Q"]), Refused("memory limit `12Q`: give a positive size in bytes, optionally with K, M, G or T")),
        // Output folder.
        c("a name that escapes the output folder (`../evil`)", spec(with("\"bad\"", "\"../evil\"")), Refused("`name` = \"../evil\" must be a folder name inside the output root")),
        c("the name `..`", spec(with("\"bad\"", "\"..\"")), Refused("`name` = \"..\" must be a folder name inside the output root")),
        c("unwritable output folder", Given::Scripted(unwritable), Refused("cannot write `/proc/driftlab-forbidden`")),
        c("output folder is a file", Given::Scripted(out_is_a_file), Refused("cannot write `s.toml`: File exists")),
        c("output folder on a disk that fills up (a file-size quota: the journal cannot grow past 95 KiB)", Given::Scripted(quota_device), Refused("journal.bin`: File too large (os error 27); the sweep stopped with 2 of 4 cells recorded in the journal; fix the cause and continue with --resume")),
        c("run-experiments with a missing experiments folder", Given::Args(&["run-experiments", "--dir", "missing", "--out", "out"]), Refused("cannot read experiments folder `missing`")),
        // Resuming.
        c("--resume against a changed spec", Given::Scripted(resume_changed_spec), Refused("the spec changed since the interrupted run (steps.h[0]: 0.01 → 0.02)")),
        c("--resume with another --size", Given::Scripted(resume_other_size), Refused("the journal belongs to another run (--size: full → quick)")),
        c("an interrupted write (the journal's last record cut short)", Given::Scripted(interrupted_write), Checked("the cut record is dropped and its run recomputed on `--resume`; the rows equal an uninterrupted run's")),
        // Failures found while running: rows, not exits.
        c("a size beyond memory (planar chain of 10⁸ links)", spec(with("id = \"pendulum\"", "id = \"planar-chain\"\nparams = { links = 100000000 }")), FailedRow(FailKind::Memory, "refused before allocating the state and KKT storage of 200000000 coordinates")),
        c("redundant constraints (Bricard, rank Φ_q = 23 of 24)", spec(with("\"pendulum\"", "\"bricard\"").replace("h = [1e-2]", "h = [1e-3]")), FailedRow(FailKind::LinearSolve, "numerical rank 23 of 24 rows")),
        c("inconsistent initial states (ensemble q noise σ = 100)", spec(ensemble("members = 4\ninitial = { q_sigma = 100.0 }")), FailedRow(FailKind::InitialState, "the perturbed initial state cannot be made consistent")),
        c("Newton divergence (Radau IIA, h = 2.5 on the pendulum)", spec(with("h = [1e-2]", "h = [2.5]").replace("t_end = 0.1", "t_end = 10").replace("\"rattle\"", "\"radau\"")), FailedRow(FailKind::NewtonDiverged, "Newton did not converge at t = 0")),
        c("step-size underflow (h_min above the step the error test needs)", spec(with("h = [1e-2]", "adaptive = { rtol = [1e-12], atol = 1e-12, h0 = 0.1, h_min = 0.05 }").replace("t_end = 0.1", "t_end = 10").replace("\"rattle\"", "\"radau\"")), FailedRow(FailKind::StepSizeUnderflow, "< h_min = 5e-2")),
        c("a method that does not support the problem's form", spec(with("\"pendulum\"", "\"seed003-dae\"").replace("\"rattle\"", "\"taylor\"")), FailedRow(FailKind::UnsupportedForm, "does not support semi-explicit index-1 systems")),
        c("a method without the fully implicit form on an F(t, y, y′) = 0 problem (rattle on chain-angles-implicit)", spec(with("\"pendulum\"", "\"chain-angles-implicit\"")), FailedRow(FailKind::UnsupportedForm, "does not support fully implicit F(t, y, y′) = 0 systems")),
        c("`initial` on a fully implicit problem", spec(with("id = \"pendulum\"", "id = \"chain-angles-implicit\"\nparams = { initial = { q = [1.0, 0.0] } }")), Refused("`initial` is not supported for fully implicit problems")),
        c("a method that evaluates M(q) on a problem whose mass varies (leaking pendulum)", spec(with("\"pendulum\"", "\"leaking-pendulum\"")), FailedRow(FailKind::UnsupportedForm, "does not support varying-mass systems")),
        c("lie-rkmk4 on a problem without an attitude quaternion", spec(with("\"rattle\"", "\"lie-rkmk4\"")), FailedRow(FailKind::Incompatible, "must offer `MechanicalSystem::attitude`")),
        c("an unstable explicit scheme (penalty on Bricard)", spec(with("\"pendulum\"", "\"bricard\"").replace("h = [1e-2]", "h = [1e-3]").replace("\"rattle\"", "\"penalty\"")), FailedRow(FailKind::Diverged, "exceeds the bound")),
        // simulate.
        c("simulate --t-end 1e300", Given::Args(&["simulate", "--problem", "pendulum", "--method", "rattle", "--h", "1e-2", "--t-end", "1e300"]), Refused("needs 1e302 steps, beyond max_steps = 50000000")),
        c("simulate --h NaN", Given::Args(&["simulate", "--problem", "pendulum", "--method", "rattle", "--h", "nan"]), Refused("--h NaN: give a step size > 0")),
        c("simulate beyond memory", Given::Args(&["simulate", "--problem", "planar-chain", "--method", "baumgarte", "--h", "1e-3", "--set", "links=100000000"]), Refused("refused before allocating")),
        c("simulate of a run that fails", Given::Args(&["simulate", "--problem", "pendulum", "--method", "radau", "--h", "2.5"]), RunFails("the run failed at t = 0 (newton-diverged): Newton did not converge")),
        c("simulate --trace on a full device (checked before the run)", Given::Args(&["simulate", "--problem", "pendulum", "--method", "rattle", "--h", "1e-2", "--t-end", "0.1", "--trace", "/dev/full"]), Refused("cannot write trace `/dev/full`: No space left on device (os error 28); choose a writable path")),
        c("simulate --trace into a folder that does not exist (checked before the run)", Given::Args(&["simulate", "--problem", "pendulum", "--method", "rattle", "--h", "1e-2", "--trace", "nodir/trace.csv"]), Refused("cannot write trace `nodir/trace.csv`: No such file or directory (os error 2); create its folder first, or choose another path")),
        c("a trace that would outgrow memory (every state of 10⁶ steps of a 100-link chain, --memory-limit 1G)", Given::Spec(with("t_end = 0.1", "t_end = 100\ntrace_stride = 1\ntrace_states = true").replace("h = [1e-2]", "h = [1e-4]").replace("id = \"pendulum\"", "id = \"planar-chain\"\nparams = { links = 100 }"), &["--memory-limit", "1G"]), FailedRow(FailKind::Memory, "and the trace the run keeps (1000002 samples with states")),
        c("simulate of 4·10⁶ steps without --trace (memory that grows with the run)", Given::Scripted(folders::simulate_memory), Checked("exit 0; resident memory stays below 200 MiB, polled while it runs (it held ≈ 300 B per step, 1.2 GB here, before the summary was accumulated as the run goes)")),
        // Two writers, one folder (issue 27).
        c("a second `run` into a folder a live run is writing", Given::Scripted(folders::second_writer), Refused("another driftlab process is writing this folder: pid")),
        c("the same with `--force`", Given::Scripted(folders::second_writer_forced), Refused("another driftlab process is writing this folder: pid")),
        c("the same with `--resume`", Given::Scripted(folders::second_writer_resuming), Refused("another driftlab process is writing this folder: pid")),
        c("`report` while the only run under its root is being written", Given::Scripted(folders::report_while_writing), Refused("no run in it is complete — root/x: still being written by pid")),
        c("`import-peer` into a folder a live run is writing", Given::Scripted(folders::import_while_writing), Refused("another driftlab process is writing this folder: pid")),
        c("a folder whose run was killed holding its lock", Given::Scripted(folders::taken_over), Checked("the next run takes the lock over (exit 0), naming the dead owner: `ended without releasing it; taken over`")),
        // Stale files and mixtures (issue 27).
        c("a normal run into the folder of an interrupted run", Given::Scripted(folders::after_a_kill), Refused("the folder holds an interrupted run of `bad` (0 of 1 cells recorded, started")),
        c("a run into the folder of another experiment's results", Given::Scripted(folders::other_experiment), Refused("the folder holds the results of experiment `first` (complete,")),
        c("the same with `--force`", Given::Scripted(folders::other_experiment_forced), Checked("exit 0; the other experiment's orders.csv and traces.parquet are removed before the run")),
        c("a rerun of an experiment whose edited spec writes fewer tables", Given::Scripted(folders::rerun_replaces), Checked("exit 0; the previous run's orders.csv and traces.parquet are gone (a complete run of the same experiment is replaced whole)")),
        c("a run into a folder holding files driftlab did not write", Given::Scripted(folders::foreign_files), Refused("the folder is not empty and holds no driftlab run (notes.txt); choose an empty or new folder with --out, or pass --force")),
        c("run-experiments with two specs of one `name`", Given::Scripted(folders::same_name_twice), Refused("both have `name` = \"bad\", so both would write")),
        c("run-experiments over a root where one folder holds an interrupted run", Given::Scripted(folders::experiments_over_an_interrupted_run), Refused("the folder holds an interrupted run of `bad`")),
        c("`--resume` together with `--force`", Given::Spec(base(), &["--resume", "--force"]), Refused("the argument '--resume' cannot be used with '--force'")),
        c("a table copied into a finished run's folder", Given::Scripted(folders::unlisted_table), Checked("exit 0; the report reads only the tables the manifest lists (`files`), so a stale orders.csv is not drawn")),
        // Checks that can fail (issue 27).
        c("compare of two paths that do not exist", Given::Args(&["compare", "nope-a", "nope-b"]), Refused("result folder `nope-a`: cannot compare it (first folder): No such file or directory")),
        c("compare of a folder against a file", Given::Scripted(folders::compare_a_file), Refused("result folder `s.toml`: cannot compare it (second folder): it is a file")),
        c("compare against an empty folder", Given::Scripted(folders::compare_empty), Refused("result folder `empty`: cannot compare it (second folder): it holds no runs.parquet")),
        c("compare against an interrupted run", Given::Scripted(folders::compare_interrupted), Refused("cannot compare it (second folder): it holds an interrupted run of `bad`")),
        c("compare of two runs that differ", Given::Scripted(folders::compare_differs), RunFails("the results differ:")),
        c("report on an empty folder", Given::Scripted(folders::report_empty), Refused("nothing to report in `empty`: no folder in it holds a run")),
        c("report on a root whose only run was interrupted", Given::Scripted(folders::report_only_interrupted), Refused("no run in it is complete — root/cut: interrupted: 0 of 1 cells recorded")),
        c("report on a root with one complete and one interrupted run", Given::Scripted(folders::report_names_the_interrupted), Checked("exit 0; the complete run is drawn, the interrupted one named under “Not in this report” with its progress")),
        c("report --dir at an experiment's folder instead of the root", Given::Scripted(folders::report_one_level_too_deep), Refused("point --dir at the folder that holds the experiment folders")),
        // Resuming (issue 27).
        c("--resume of a folder that lost only manifest.json", Given::Scripted(folders::resume_without_manifest), Checked("exit 0; the journal's header is enough: no recorded cell is recomputed, the manifest is written again")),
        c("--resume under another --cell-seconds", Given::Scripted(folders::resume_other_budget), Refused("the journal belongs to another run (cell time budget (cell_seconds or --cell-seconds): none → 0.2 s)")),
        // Duplicate evidence (issue 27).
        c("a step size listed twice", spec(with("h = [1e-2]", "h = [1e-2, 1e-2]")), Refused("[steps] `h` lists 1e-2 twice")),
        c("two step sizes that snap to one (t_end / h rounded)", spec(with("h = [1e-2]", "h = [4.5e-2, 5.5e-2]")), Refused("step sizes 5.5e-2 and 4.5e-2 both snap to h = 5e-2 (t_end = 0.1 in 2 steps), the same cell twice")),
        c("a log_range whose points snap to one step", spec(with("h = [1e-2]", "log_range = { from = 2e-2, to = 5e-2, per_decade = 40 }")), Refused("both snap to h = 5e-2 (t_end = 0.1 in 2 steps)")),
        c("a method's own steps that snap to one", spec(with("id = \"rattle\"", "id = \"rattle\"\nsteps = { h = [4.5e-2, 5.5e-2] }")), Refused("step sizes 5.5e-2 and 4.5e-2 both snap to h = 5e-2")),
        c("a `[[methods]]` entry given twice", spec(format!("{}\n[[methods]]\nid = \"rattle\"\n", base())), Refused("is made twice: by [[problems]] entry 1 with [[methods]] entry 1, and by [[problems]] entry 1 with [[methods]] entry 2")),
        c("two entries that differ only in `label`", spec(format!("{}\n[[methods]]\nid = \"rattle\"\nlabel = \"again\"\n", base())), Refused("(a `label` alone does not change the run)")),
        c("two `[[problems]]` entries that give one problem", spec(format!("{}\n[[problems]]\nid = \"pendulum\"\nparams = {{ m = [1.0] }}\n", with("id = \"pendulum\"", "id = \"pendulum\"\nparams = { m = 1.0 }"))), Refused("is made twice: by [[problems]] entry 1 with [[methods]] entry 1, and by [[problems]] entry 2 with [[methods]] entry 1")),
        c("a swept parameter listing a value twice", spec(with("id = \"pendulum\"", "id = \"pendulum\"\nparams = { m = [1.0, 2.0, 1.0] }")), Refused("[[problems]] entry 1 (`pendulum`): `m` lists 1.0 twice")),
        c("a thread count listed twice", spec(with("t_end = 0.1", "t_end = 0.1\nthreads = [1, 1]")), Refused("`threads` = [1, 1] lists 1 twice")),
        c("a tolerance listed twice", spec(with("h = [1e-2]", "adaptive = { rtol = [1e-6, 1e-6] }").replace("\"rattle\"", "\"radau\"")), Refused("[steps] adaptive: `rtol` lists 1e-6 twice")),
        // References outside their domain (issue 27).
        c("the pendulum released 10⁻¹⁰° below the upright (its elliptic modulus k → 1)", spec(with("id = \"pendulum\"", "id = \"pendulum\"\nparams = { theta0_deg = 179.9999999999 }")), Unreferenced("outside its domain: k′ = cos(θ₀/2) = ")),
        // Messages name what the user gave (issue 27).
        c("a length whose square underflows (ℓ = 1e-200)", spec(with("id = \"pendulum\"", "id = \"pendulum\"\nparams = { length = 1e-200 }")), Refused("parameter `length` of `pendulum` = 1e-200 is invalid: give a finite value > 0")),
        c("joint stops that exclude the release angle", spec(with("id = \"pendulum\"", "id = \"pendulum-limits\"\nparams = { theta_max_deg = 0.0 }").replace("\"rattle\"", "\"moreau-jean\"")), Refused("`theta_max_deg` = 0")),
        // Time budgets (issue 27).
        c("cell_seconds = 0", spec(with("t_end = 0.1", "t_end = 0.1\ncell_seconds = 0.0")), Refused("`cell_seconds` = 0: give a wall-time budget per cell > 0 s")),
        c("--cell-seconds NaN", Given::Spec(base(), &["--cell-seconds", "nan"]), Refused("--cell-seconds NaN: give a wall-time budget per cell > 0 s")),
        c("a cell past its time budget (10⁷ steps in 0.2 s)", Given::Spec(with("t_end = 0.1", "t_end = 1000").replace("h = [1e-2]", "h = [1e-4]"), &["--cell-seconds", "0.2"]), FailedRow(FailKind::TimeBudget, "time budget of 0.2 s exhausted at t = ")),
        c("an ensemble past its time budget", Given::Spec(ensemble("members = 64").replace("t_end = 0.1", "t_end = 100").replace("h = [1e-2]", "h = [1e-4]"), &["--cell-seconds", "0.2"]), FailedRow(FailKind::TimeBudget, "time budget of 0.2 s exhausted")),
        // Model files (issue 28): refused before anything runs, naming the element and line.
        c("a URDF whose joints form a loop (a link with two parent joints)", Given::Scripted(models::cycle), Refused("line 22, <joint name=\"elbow\">: body `lower` is the child of joint `shoulder` and of joint `elbow`: the joints form a loop")),
        c("a URDF joint naming a link that does not exist", Given::Scripted(models::missing_parent), Refused("line 22, <joint name=\"elbow\">: <parent link=\"forearm\"> names no <link> of this file; add the link, or correct the name")),
        c("a URDF joint without `<child>`", Given::Scripted(models::no_child), Refused("line 22, <joint name=\"elbow\">: <child> is missing")),
        c("a URDF link of negative mass", Given::Scripted(models::negative_mass), Refused("line 13, <mass> in <link name=\"lower\">: mass -1 < 0; give a positive mass")),
        c("a URDF joint that moves only a massless link (mass 0, inertia 0)", Given::Scripted(models::massless_joint), Refused("coordinate `elbow`: joint `elbow` moves no mass: the links it carries (lower) have none, so M(q) is singular (pivot 0.000e0")),
        c("an inertia that is not positive semidefinite, with `inertia = \"refuse\"`", Given::Scripted(models::not_positive), Refused("line 11, <link name=\"lower\">: the rotational inertia is not positive semidefinite: principal moments [-4.0000e-2,")),
        c("an inertia that violates the triangle inequality, with `inertia = \"refuse\"`", Given::Scripted(models::triangle), Refused("violate the triangle inequality I₁ + I₂ ≥ I₃ (2.0000e-3 < 2.0000e-2); no rigid body has this inertia")),
        c("an inertia that violates the triangle inequality (default `inertia = \"keep\"`, and `\"balance\"`)", Given::Scripted(models::triangle_kept), Checked("loads as published with the violation listed by `describe` (and in the manifest); `balance` makes it isotropic, listed too")),
        c("NaN in a URDF joint origin", Given::Scripted(models::nan), Refused("line 23, <origin> in <joint name=\"elbow\">: `xyz` = \"nan\" is not finite")),
        c("an unsupported URDF joint type (planar)", Given::Scripted(models::planar), Refused("joint type \"planar\" is not supported; driftlab reads revolute, continuous, prismatic, fixed and floating joints")),
        c("a vendor element inside a URDF joint (`<spring>`)", Given::Scripted(models::unknown_tag), Checked("skipped and listed by `describe`: `line 27, <spring> in <joint name=\"elbow\">: element <spring> skipped: not in the URDF specification of <joint>`")),
        c("a URDF axis of length zero", Given::Scripted(models::zero_axis), Refused("axis [0.0, 0.0, 0.0] is zero: it has no direction")),
        c("a URDF mimic of a joint that does not exist", Given::Scripted(models::mimic_unknown), Checked("the mimic is dropped and listed (`elbow` moves on its own, as Pinocchio reads the file)")),
        c("an unexpanded xacro file", Given::Scripted(models::xacro), Refused("line 3, <property name=\"l\">: unexpanded xacro element <property>; this is a xacro macro: expand the file with `xacro` first")),
        c("a file that is not XML given as URDF", Given::Scripted(models::not_xml), Refused("arm.urdf: line 1, column 1: not well-formed XML")),
        c("a 100 MB model file", Given::Scripted(models::huge), Refused("file = \"huge.urdf\" is 104857600 bytes, above the 16777216 bytes a model file may have")),
        c(r#"an MJCF attribute misspelled (`axsi`)"#, Given::Scripted(mjcf::typo_attribute), Refused(r#"<joint name="rocker">: attribute `axsi` is not one of <joint>'s in MuJoCo's schema; it resembles `axis`"#)),
        c(r#"an MJCF element misspelled (`<jiont>`)"#, Given::Scripted(mjcf::typo_element), Refused(r#"element <jiont> is not a child of <body> in MuJoCo's schema; it resembles <joint>: write <joint>"#)),
        c(r#"an MJCF `<include>` of a missing file"#, Given::Scripted(mjcf::missing_include), Refused(r#"cannot read the included file "parts/arm.xml""#)),
        c(r#"MJCF `<include>`s that form a cycle"#, Given::Scripted(mjcf::include_cycle), Refused(r#"including "four-bar.xml" again makes a cycle"#)),
        c(r#"an MJCF default class that is not defined"#, Given::Scripted(mjcf::unknown_class), Refused(r#"default class "stiff" is not defined"#)),
        c(r#"an MJCF body whose inertia needs a mesh"#, Given::Scripted(mjcf::mesh_inertia), Refused(r#"the body's inertia would come from a mesh geom, whose volume needs its mesh data; give the body an <inertial>"#)),
        c(r#"an MJCF body without `<inertial>` under `inertiafromgeom="false"`"#, Given::Scripted(mjcf::no_inertial), Refused(r#"a body without <inertial> under inertiafromgeom="false""#)),
        c(r#"an MJCF equality naming an unknown body"#, Given::Scripted(mjcf::unknown_body), Refused(r#"body2 "rockr" is not a body of the model"#)),
        c(r#"an MJCF quaternion of zero norm"#, Given::Scripted(mjcf::zero_quat), Refused(r#"quat = "0 0 0 0" has zero norm"#)),
        c(r#"two MJCF orientation forms on one body"#, Given::Scripted(mjcf::two_orientations), Refused(r#"two orientations given: `quat` and `euler`"#)),
        c(r#"an MJCF hinge range in degrees under `angle="radian"`"#, Given::Scripted(mjcf::radian_range), Refused(r#"hinge range [-90, 90] rad reaches beyond a turn (2π)"#)),
        c(r#"an MJCF spatial tendon"#, Given::Scripted(mjcf::spatial_tendon), Refused(r#"<spatial> is not read by driftlab; spatial tendons"#)),
        c(r#"an MJCF `<composite>`"#, Given::Scripted(mjcf::composite), Refused(r#"<composite> is not read by driftlab; driftlab reads rigid bodies"#)),
        c(r#"an MJCF `<deformable>` section"#, Given::Scripted(mjcf::deformable), Refused(r#"<deformable> is not read by driftlab; deformable bodies are not read"#)),
        c(r#"an MJCF `<plugin>` in a body"#, Given::Scripted(mjcf::plugin), Refused(r#"<plugin> is not read by driftlab; engine plugins are not read"#)),
        c(r#"an MJCF `<replicate>`"#, Given::Scripted(mjcf::replicate), Refused(r#"<replicate> is not read by driftlab; expand <replicate>"#)),
        c(r#"an MJCF joint equality naming an unknown joint"#, Given::Scripted(mjcf::unknown_joint), Refused(r#"joint "elbw" is not in the model"#)),
        c(r#"MJCF global coordinates"#, Given::Scripted(mjcf::global_coordinates), Refused(r#"coordinate="global"; global coordinates were removed in MuJoCo 2.3.3"#)),
        c(r#"an MJCF free joint in a nested body"#, Given::Scripted(mjcf::nested_free_joint), Refused(r#"a free joint that is not its body's only joint, or in a body that is not a child of the world"#)),
        c(r#"an MJCF geom with `fromto` and `pos`"#, Given::Scripted(mjcf::fromto_with_pos), Refused(r#"fromto with pos or an orientation"#)),
        c(r#"an MJCF geom of size zero"#, Given::Scripted(mjcf::zero_size), Refused(r#"a sphere geom needs 1 positive sizes; it has [0.0]"#)),
        c(r#"an MJCF weld of a body to itself"#, Given::Scripted(mjcf::weld_to_itself), Refused(r#"the equality holds a body to itself"#)),
        c(r#"NaN in an MJCF body position"#, Given::Scripted(mjcf::nan_pos), Refused(r#"`pos` = "1.2 nan 0": "nan" is not a finite number"#)),
        c(r#"an MJCF joint axis of length zero"#, Given::Scripted(mjcf::zero_axis), Refused(r#"`axis` has a zero vector"#)),
        c(r#"`root = "floating"` for an MJCF model"#, Given::Scripted(mjcf::floating_root), Refused(r#"root = "floating" for an MJCF model"#)),
        c(r#"`tune` on a model without loops or couplings"#, Given::Args(&["tune", "robot:gym-ant", "--h", "1e-3"]), Refused(r#"no loop closure or coupling, so no constraint to stabilize"#)),
        c(r#"`tune --h 0`"#, Given::Args(&["tune", "robot:mjcf-four-bar", "--h", "0"]), Refused(r#"--h = 0: give the step in seconds, a positive number"#)),
        c(r#"`tune --h 1e308` (τ = 2h overflows)"#, Given::Args(&["tune", "robot:mjcf-four-bar", "--h", "1e308"]), Refused(r#"within [1e-60, 1e60]"#)),
        c(r#"`tune --write-mjcf` onto a file that exists"#, Given::Scripted(mjcf::tune_onto_existing), Refused(r#"the file exists; give a new file name (tune writes a copy and overwrites nothing)"#)),
        c("a TOML model's revolute joint without `axis`", Given::Scripted(models::toml_no_axis), Refused("[[joints]] #1 \"pin\": a revolute joint without `axis`; give axis = [x, y, z]")),
        c("a TOML loop closure between a body and itself", Given::Scripted(models::toml_loop_to_itself), Refused("[[loops]] #1 \"self\": the loop closure holds body `bob` to itself")),
        c("a TOML body of mass 0 with an inertia, with `inertia = \"refuse\"`", Given::Scripted(models::toml_zero_mass_inertia), Refused("[[bodies]] \"tip\": mass 0 with a rotational inertia of trace")),
        c("a robot that is not shipped", Given::Args(&["simulate", "--problem", "model", "--method", "rattle", "--h", "1e-2", "--set", "robot=\"atlas\""]), Refused("robot = \"atlas\" is not shipped; the robots are double-pendulum, ur5")),
        c("unknown model coordinates", Given::Args(&["simulate", "--problem", "model", "--method", "rattle", "--h", "1e-2", "--set", "coordinates=\"maximal\""]), Refused("coordinates = \"maximal\": give \"joint\" (the tree's joint positions), \"body\"")),
        c("a mimic joint in body coordinates (the Panda's fingers)", Given::Args(&["simulate", "--problem", "model", "--method", "rattle", "--h", "1e-2", "--set", "robot=\"panda\"", "--set", "damping=false", "--set", "coordinates=\"body\""]), Refused("<joint name=\"panda_finger_joint2\">: a joint with a mimic relation, in body coordinates; these act on the joint's own coordinate")),
        c("unknown joint-limit handling", Given::Args(&["simulate", "--problem", "model", "--method", "moreau-jean", "--h", "1e-3", "--set", "limits=\"hard\""]), Refused("limits = \"hard\": give \"data\" (kept as data, not enforced) or \"enforce\"")),
        c("a restitution outside [0, 1]", Given::Args(&["simulate", "--problem", "model", "--method", "moreau-jean", "--h", "1e-3", "--set", "robot=\"panda\"", "--set", "limits=\"enforce\"", "--set", "restitution=1.5"]), Refused("parameter `restitution` of `model` = 1.5 is invalid: give a coefficient of restitution in [0, 1]")),
        c("joint limits enforced in body coordinates", Given::Args(&["simulate", "--problem", "model", "--method", "moreau-jean", "--h", "1e-3", "--set", "robot=\"ur5\"", "--set", "limits=\"enforce\"", "--set", "coordinates=\"body\""]), Refused("limits = \"enforce\" with coordinates = \"body\": a joint's angle is a coordinate only in joint coordinates")),
        c("a start outside a joint's limits (the Panda's zero pose)", Given::Args(&["simulate", "--problem", "model", "--method", "moreau-jean", "--h", "1e-3", "--set", "robot=\"panda\"", "--set", "limits=\"enforce\""]), Refused("the start is outside the stop panda_joint4.upper (gap -6.980e-2, limit -0.0698); give q0 within the joint's limits")),
        c("joint limits enforced on a model without any", Given::Args(&["simulate", "--problem", "model", "--method", "moreau-jean", "--h", "1e-3", "--set", "limits=\"enforce\""]), Refused("has no revolute or prismatic joint with lower < upper; give limits in the file, or limits = \"data\"")),
        // Model files as untrusted input (issue 45).
        c("XML nested 50 000 deep inside an element the reader skips (URDF `<visual>`)", Given::Scripted(model_input::deep_urdf), Refused("the elements nest deeper than 1000 levels")),
        c("XML nested 50 000 deep in an SDF `<plugin>`", Given::Scripted(model_input::deep_sdf), Refused("the elements nest deeper than 1000 levels")),
        c("a URDF saved as UTF-16", Given::Scripted(model_input::utf16), Refused("is not UTF-8 text (a NUL byte at 1: UTF-16 or a binary file); save the model as UTF-8 text")),
        c("a URDF chain of 1 500 links", Given::Scripted(model_input::too_many_links), Refused("1501 links and 1500 joints, above the 1000 driftlab reads")),
        c("100 000 vendor elements in one link", Given::Scripted(model_input::many_vendor_elements), Checked("loads in bounded time; the first 1 000 skipped elements are listed, the rest counted in one note")),
        c("a misspelled URDF attribute (`<axis xzy=…>`)", Given::Scripted(model_input::misspelled_attribute), Refused("attribute `xzy` is not one of <axis>'s; it resembles `xyz`; write `xyz` (a misspelled attribute would fall back to its default)")),
        c("a misspelled URDF element (`<limt>`)", Given::Scripted(model_input::misspelled_element), Refused("element <limt> is not a child of <joint>; it resembles <limit>")),
        c("a second `<inertial>` in a link", Given::Scripted(model_input::second_inertial), Refused("a second <inertial> in <link> (the first: line 5)")),
        c("a second `<parent>` in a joint", Given::Scripted(model_input::second_parent), Refused("a second <parent> in <joint> (the first: line 24)")),
        c("a vendor attribute (`dont_collapse` on a joint)", Given::Scripted(model_input::vendor_attribute), Checked("loads; `describe` lists `attribute `dont_collapse` skipped: not in the URDF specification of <joint>`")),
        c("two joints that mimic each other", Given::Scripted(model_input::mimic_cycle), Refused("the mimic relations form a cycle: ")),
        c("a mimic on a fixed joint (talos' grippers)", Given::Scripted(model_input::mimic_on_fixed), Checked("loads; the mimic is dropped and listed (a fixed joint has no coordinate to couple)")),
        c("a URDF whose joints are all fixed", Given::Scripted(model_input::all_fixed), Refused("have no degree of freedom (every joint fixed, the base welded to the world): nothing to integrate; give root = \"floating\"")),
        c("a URDF without links", Given::Scripted(model_input::no_links), Refused("the model has no body (no <link> with dynamics, no [[bodies]]): nothing to integrate")),
        c("a mass ratio of 1e15 between two links", Given::Scripted(model_input::mass_ratio), Refused("the mass matrix is numerically singular at every pose")),
        c("an axis whose norm overflows (`0 1e300 1e300`)", Given::Scripted(model_input::long_axis), Checked("loads: the axis is scaled by its largest component before it is normalized")),
        c("a string for a joint's start (`q0 = { shoulder = \"up\" }`)", Given::Scripted(model_input::q0_string), Refused("q0.shoulder = \"up\": give a finite number")),
        c("an unknown inertia policy (`inertia = \"wobbly\"`)", Given::Scripted(model_input::inertia_policy_typo), Refused("inertia = \"wobbly\": give \"keep\"")),
        c("an SDF pose in degrees (`<pose degrees=\"true\">`)", Given::Scripted(model_input::sdf_degrees), Checked("read in degrees: M and the free acceleration equal those of the same pose in radians, bit for bit")),
        c("an SDF axis `expressed_in` a frame the model lacks", Given::Scripted(model_input::sdf_expressed_in), Refused("expressed_in=\"nowhere\" names no frame of this model")),
        c("a static SDF model", Given::Scripted(model_input::sdf_static), Refused("a static model: its links do not move, so there is nothing to integrate")),
        c("an SDF link that gravity does not act on", Given::Scripted(model_input::sdf_link_gravity), Refused("<gravity>false</gravity>: a link that gravity does not act on")),
        c("a second `<model>` in an SDF file", Given::Scripted(model_input::sdf_second_model), Refused("a second <model> in <sdf>")),
        c("an SDF limit with an upper bound only", Given::Scripted(model_input::sdf_upper_limit), Checked("read as a stop on one side: enforced, the pendulum runs under Moreau–Jean")),
        c("an SDF link without `<inertial>`", Given::Scripted(model_input::sdf_no_inertial), Checked("SDF's default (mass 1, unit inertia at the link origin), listed by `describe`")),
        c("an SDF gearbox whose gears do not turn against its reference body", Given::Scripted(model_input::sdf_gearbox_unhinged), Refused("is not hinged to the reference body by a revolute joint")),
        c("`root = \"floating\"` on a TOML model held to the world by its joint", Given::Scripted(model_input::toml_floating_held), Refused("root = \"floating\" for a model whose joint holds it to the world")),
        c("`root = \"floating\"` on a TOML model with a free base", Given::Scripted(model_input::toml_floating_free), Checked("the base floats: n = 7 (the welded base has no degree of freedom and is refused)")),
        c("a planar four-bar closed by a ball joint (a redundant row), from ten seeded poses", Given::Scripted(model_input::four_bar_seeded), Checked("every seed assembles; `compare-methods` removes the redundant row in its spec and every run is ok")),
        c("`describe` with more rows than coordinates, and with none", Given::Scripted(model_input::describe_ranks), Checked("`rank Φ_q = 2 of 5` and `no constraint rows (m = 0)`, not \"not computed\"")),
        c("a model file edited between the kill of a sweep and its `--resume`", Given::Scripted(model_input::model_changed_under_resume), Refused("the data file `arm.urdf` changed since the interrupted run")),
        // Surfaces beside model files (issue 45).
        c("`compare-methods --out` holding a user's `index.md` and `tables/`", Given::Scripted(surfaces::compare_methods_beside_user_files), Checked("they stay as they were; the comparison and its report go to OUT/mechanism-STEM")),
        c("`compare-methods` on two models with one file stem", Given::Scripted(surfaces::compare_methods_same_stem), Checked("two folders, mechanism-rssr-linkage and mechanism-rssr-linkage-2; neither replaces the other")),
        c("a user's file inside the folder `compare-methods` owns", Given::Scripted(surfaces::compare_methods_foreign_file), Refused("holds `notes.txt`, which compare-methods did not write; move it out of the folder")),
        c("the spec `compare-methods` wrote, edited by the user, then the command again", Given::Scripted(surfaces::compare_methods_edited_spec), Refused("was edited since compare-methods wrote it; run your edit with `driftlab run")),
        c("`compare-methods` killed part-way, then `--resume`", Given::Scripted(surfaces::compare_methods_killed_then_resumed), Checked("the folder's marker names every entry before any is written; the resume finishes the comparison and its report")),
        c("`compare-methods` on a model whose link is a point mass", Given::Scripted(surfaces::compare_methods_point_mass), Checked("compared in joint coordinates; body and natural coordinates left out with the reason, printed and in the spec")),
        c("`compare-methods` on a model with nothing to integrate", Given::Scripted(surfaces::compare_methods_bad_model), Refused("have no degree of freedom")),
        c("`import-peer` of rows imported already", Given::Scripted(surfaces::peer_twice), Refused("was imported already; give --replace to replace the earlier peer rows")),
        c("`import-peer` of an empty file", Given::Scripted(surfaces::peer_empty), Refused("no peer rows (an empty file adds nothing and replaces nothing)")),
        c("`import-peer` killed between the runs table and the manifest, then `--replace`", Given::Scripted(surfaces::peer_import_killed), Checked("the row counts the kill left are not damage to the import that writes the table again; the folder checks clean after it")),
        c("a peer row with a negative time", Given::Scripted(surfaces::peer_negative_time), Refused("line 1: wall_seconds = -0.002: a time is finite and ≥ 0")),
        c("a peer row whose times rest on 0 runs", Given::Scripted(surfaces::peer_repeat_zero), Refused("line 1: repeat = 0: give the number of runs behind the times, 1 to 100")),
        c("a peer row whose step-time range leaves out its median", Given::Scripted(surfaces::peer_range_outside_median), Refused("give both ends of the range, min ≤ median ≤ max")),
        c("an `ok` peer row with a failure time", Given::Scripted(surfaces::peer_ok_with_failure), Refused("line 1: an `ok` row with a failure")),
        c("a peer run given twice in one file", Given::Scripted(surfaces::peer_duplicate_rows), Refused("line 2: the run `sim a` at h = 1e-2 is also line 1: give each run once")),
        c("a failed peer row without its `fail_kind`", Given::Scripted(surfaces::peer_failed_without_kind), Refused("fail_kind = None: give one of memory, linear-solve")),
        c("a peer's `90` against the cell's `90.0`", Given::Scripted(surfaces::peer_integer_parameter), Checked("accepted: parameters are compared by value, and the row takes the cell's")),
        c("`report` of a runs table with a column dropped", Given::Scripted(surfaces::report_dropped_column), Refused("nothing to report in `root`: no run in it is complete — root/x: damaged: `runs.parquet` lacks the column `err_q` the run wrote")),
        c("`report` of a runs table emptied under a complete manifest", Given::Scripted(surfaces::report_zero_rows), Refused("damaged: `runs.parquet` holds 0 rows, but the run wrote 2")),
        c("`report` of a runs table with its rows duplicated", Given::Scripted(surfaces::report_duplicated_rows), Refused("damaged: `runs.parquet` holds 4 rows, but the run wrote 2")),
        c("`report` of a runs table with a column retyped (h as text)", Given::Scripted(surfaces::report_retyped_column), Refused("damaged: `runs.parquet`: column `h` is stored as Utf8View, but the run wrote Float64")),
        c("`report` of a folder missing a table its manifest lists", Given::Scripted(surfaces::report_missing_file), Refused("damaged: `traces.parquet` is listed by manifest.json among the files the run wrote, but is missing")),
        c("`compare` with a damaged folder", Given::Scripted(surfaces::compare_damaged), Refused("cannot compare it (second folder): damaged: `runs.parquet` holds 0 rows")),
        c("`compare` of runs tables with other columns", Given::Scripted(surfaces::compare_other_schema), RunFails("other columns (only the first has `scd`): written by other versions of driftlab?")),
        c("`fingerprint --check` against a malformed stored file", Given::Scripted(surfaces::fingerprint_malformed), Refused("is malformed: line 2: `bad 12345` is not `FOLDER DIGEST` (16 hex digits)")),
        c("`model-dynamics --states` of a billion states", Given::Args(&["model-dynamics", "--states", "1000000000", "--out", "{dir}/s.json"]), Refused("--states 1000000000: give between 1 and 100000 states")),
        c("a cell beyond the process's address space (`ulimit -v` 3 GB; 20 million links, the memory free)", Given::Scripted(surfaces::address_space_limit), FailedRow(FailKind::Memory, "RLIMIT_AS (ulimit -v)")),
    ]
}

fn not_utf8(dir: &Path) -> Ran {
    std::fs::write(dir.join("s.toml"), b"\xff\xfe\x00 garbage").unwrap();
    driftlab(&strings(&["run", "s.toml", "--out", "out"], dir), dir)
}

fn unwritable(dir: &Path) -> Ran {
    std::fs::write(dir.join("s.toml"), base()).unwrap();
    let args = ["run", "s.toml", "--out", "/proc/driftlab-forbidden"];
    driftlab(&strings(&args, dir), dir)
}

fn out_is_a_file(dir: &Path) -> Ran {
    std::fs::write(dir.join("s.toml"), base()).unwrap();
    driftlab(&strings(&["run", "s.toml", "--out", "s.toml"], dir), dir)
}

/// A disk that fills up in the middle of a sweep, as a file-size limit (`ulimit -f`, in
/// 512-byte blocks, with SIGXFSZ ignored so that the write fails instead of killing the
/// process): the journal stops growing after two of four cells (one at a time, the most
/// expensive first, i.e. smallest h first: their traces take about 58 and 29 KiB, the
/// third 15 KiB); the run is refused with the progress named, and `--resume` without the
/// limit finishes it from the two recorded cells.
fn quota_device(dir: &Path) -> Ran {
    let text = with("h = [1e-2]", "h = [1e-2, 5e-3, 2.5e-3, 1.25e-3]")
        .replace("t_end = 0.1", "t_end = 1\ntrace_stride = 1");
    std::fs::write(dir.join("s.toml"), &text).unwrap();
    let script = format!(
        "trap '' XFSZ; ulimit -f 190; exec '{}' run s.toml --out out --threads 1",
        env!("CARGO_BIN_EXE_driftlab")
    );
    let status = Command::new("sh")
        .args(["-c", &script])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
        .status()
        .expect("sh starts");
    let stderr = std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default();
    let (_, items) = driftlab_runner::store::journal::Journal::read(&dir.join("out")).unwrap();
    assert_eq!(items.len(), 2, "two cells recorded before the quota");
    let resumed = run_spec(&text, &["--resume", "--threads", "1"], dir);
    assert_eq!(resumed.code, Some(0), "{}", resumed.stderr);
    let (_, items) = driftlab_runner::store::journal::Journal::read(&dir.join("out")).unwrap();
    assert_eq!(items.len(), 4, "the resume ran the other two");
    Ran {
        code: status.code(),
        stderr,
        out: dir.join("out"),
    }
}

fn resume_changed_spec(dir: &Path) -> Ran {
    let first = run_spec(&base(), &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    run_spec(&with("h = [1e-2]", "h = [2e-2]"), &["--resume"], dir)
}

fn resume_other_size(dir: &Path) -> Ran {
    let text = format!("{}\n[sizes.quick]\nt_end = 0.05\n", base());
    let first = run_spec(&text, &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    run_spec(&text, &["--resume", "--size", "quick"], dir)
}

/// A sweep whose journal's last record is cut in half (a kill in the middle of a
/// write): `--resume` keeps the whole records, recomputes the cut one, and the rows
/// equal the uninterrupted run's.
fn interrupted_write(dir: &Path) -> Ran {
    let text = with("h = [1e-2]", "h = [1e-2, 5e-3, 2.5e-3]");
    let first = run_spec(&text, &[], dir);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let runs = |d: &Path| {
        let f = std::fs::File::open(d.join("runs.parquet")).unwrap();
        let df = ParquetReader::new(f).finish().unwrap();
        df.select(["cell", "status", "err_q", "max_pos_residual", "steps"])
            .unwrap()
    };
    let want = runs(&first.out);
    let journal = first.out.join("journal.bin");
    let len = std::fs::metadata(&journal).unwrap().len();
    let (_, items) = driftlab_runner::store::journal::Journal::read(&first.out).unwrap();
    assert_eq!(items.len(), 3);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&journal)
        .unwrap()
        .set_len(len - 40)
        .unwrap();
    std::fs::remove_file(first.out.join("runs.parquet")).unwrap();
    let again = run_spec(&text, &["--resume"], dir);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert_eq!(runs(&again.out), want, "the resumed rows differ");
    let (_, items) = driftlab_runner::store::journal::Journal::read(&again.out).unwrap();
    assert_eq!(
        items.len(),
        3,
        "the cut run was recomputed and recorded again"
    );
    again
}

/// Run `case` in a folder of its own and check its outcome; `Err` says what differs.
fn check(case: &Case, dir: &Path) -> Result<(), String> {
    let ran = match &case.given {
        Given::Spec(text, extra) => run_spec(text, extra, dir),
        Given::Args(args) => driftlab(&strings(args, dir), dir),
        Given::Scripted(f) => f(dir),
    };
    if ran.stderr.contains("panicked") || ran.code == Some(101) {
        return Err(format!("panicked: {}", ran.stderr));
    }
    let says = |m: &str| {
        if ran.stderr.contains(m) {
            Ok(())
        } else {
            Err(format!("stderr lacks `{m}`:\n{}", ran.stderr))
        }
    };
    match &case.outcome {
        Outcome::Refused(m) => {
            if ran.code != Some(2) {
                return Err(format!("exit {:?}, not 2: {}", ran.code, ran.stderr));
            }
            if ran.out.join("runs.parquet").exists() && !matches!(case.given, Given::Scripted(_)) {
                return Err("a refused input wrote results".into());
            }
            says(m)
        }
        Outcome::RunFails(m) => match ran.code {
            Some(1) => says(m),
            c => Err(format!("exit {c:?}, not 1: {}", ran.stderr)),
        },
        Outcome::FailedRow(kind, m) => failed_row(&ran, *kind, m),
        Outcome::Checked(_) => match ran.code {
            Some(0 | 2) => Ok(()),
            c => Err(format!("exit {c:?}: {}", ran.stderr)),
        },
        Outcome::Unreferenced(m) => unreferenced_row(&ran, m),
    }
}

/// The run exited 0 and wrote one failed row of `kind` whose reason contains `m`.
fn failed_row(ran: &Ran, kind: FailKind, m: &str) -> Result<(), String> {
    if ran.code != Some(0) {
        return Err(format!("exit {:?}, not 0: {}", ran.code, ran.stderr));
    }
    let f = std::fs::File::open(ran.out.join("runs.parquet")).map_err(|e| e.to_string())?;
    let df = ParquetReader::new(f).finish().map_err(|e| e.to_string())?;
    let text = |c: &str| -> Vec<String> {
        df.column(c)
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|s| s.unwrap_or("").to_string())
            .collect()
    };
    let (status, kinds, reasons) = (text("status"), text("fail_kind"), text("fail_reason"));
    if status != ["failed"] || kinds != [kind.tag()] || !reasons[0].contains(m) {
        return Err(format!(
            "rows: status {status:?}, fail_kind {kinds:?}, fail_reason {reasons:?}; wanted one failed row `{kind}` saying `{m}`"
        ));
    }
    Ok(())
}

/// The run exited 0 and wrote one `ok` row without errors, whose `reference` says `m`.
fn unreferenced_row(ran: &Ran, m: &str) -> Result<(), String> {
    if ran.code != Some(0) {
        return Err(format!("exit {:?}, not 0: {}", ran.code, ran.stderr));
    }
    let f = std::fs::File::open(ran.out.join("runs.parquet")).map_err(|e| e.to_string())?;
    let df = ParquetReader::new(f).finish().map_err(|e| e.to_string())?;
    let text = |c: &str| -> Vec<String> {
        let col = df.column(c).unwrap().cast(&DataType::String).unwrap();
        col.str()
            .unwrap()
            .iter()
            .map(|s| s.unwrap_or("null").to_string())
            .collect()
    };
    let (status, err, why) = (text("status"), text("err_q"), text("reference"));
    if status != ["ok"] || err != ["null"] || !why[0].contains(m) {
        return Err(format!(
            "rows: status {status:?}, err_q {err:?}, reference {why:?}; wanted one ok row without errors saying `{m}`"
        ));
    }
    Ok(())
}

#[test]
fn every_bad_input_ends_as_its_catalogued_outcome() {
    let cases = cases();
    assert!(
        cases.len() >= 100,
        "the catalogue has {} cases (issue 27: at least 100)",
        cases.len()
    );
    let root = std::env::temp_dir().join(format!("driftlab-bad-{}", std::process::id()));
    let mut wrong = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let dir = root.join(format!("case-{i:02}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        if let Err(e) = check(case, &dir) {
            wrong.push(format!("{} — {e}", case.input));
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    assert!(
        wrong.is_empty(),
        "{} of {} cases differ:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n\n")
    );
}

/// The table of docs/bad-inputs.md is the catalogue, row for row (the failure gives the
/// rows to paste).
#[test]
fn docs_list_every_case() {
    let readme = std::fs::read_to_string(root().join("docs/bad-inputs.md")).unwrap();
    let rows: Vec<String> = cases().iter().map(Case::readme_row).collect();
    let header = "| bad input | outcome |";
    if let Some(d) = driftlab_results::schema::readme_table_differs(&readme, header, &rows) {
        panic!("{d}");
    }
    // The prose that counts them counts them right.
    let count = format!("lists {} cases, each a", rows.len());
    let commands = std::fs::read_to_string(root().join("docs/commands.md")).unwrap();
    assert!(
        commands.contains(&count),
        "docs/commands.md should say `{count}`"
    );
}
