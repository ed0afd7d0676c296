//! The spec loader fuzzed (issue 13): arbitrary text, valid-shaped specs with mutated
//! values, and random byte edits of the shipped specs go through everything that
//! happens before a cell runs — parsing, validation, every named size, the expansion
//! into cells (which builds every problem and method). No input may panic; each ends as
//! a spec, or as an error that names the field (a backticked key, a `[section]`, or a
//! TOML parse position).
//!
//! Cases per strategy: `DRIFTLAB_FUZZ_CASES` (default 4000, so the three strategies run
//! 1.2·10⁴ cases in `cargo test`; `DRIFTLAB_FUZZ_CASES=34000` runs > 10⁵).

use driftlab_runner::spec::cell::expand;
use driftlab_runner::{Registry, Spec};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Cases per strategy.
fn cases() -> u32 {
    std::env::var("DRIFTLAB_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000)
}

fn config() -> Config {
    Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    }
}

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(Registry::with_defaults)
}

/// The shipped specs' texts.
fn shipped() -> &'static Vec<String> {
    static S: OnceLock<Vec<String>> = OnceLock::new();
    S.get_or_init(|| {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments");
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("experiments folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect();
        v.sort();
        v
    })
}

/// Everything before a cell runs; `Ok` with the cell count, or the error's message.
fn load(text: &str) -> Result<usize, String> {
    let spec = Spec::parse(text, "fuzz.toml").map_err(|e| e.to_string())?;
    let mut cells = 0;
    let mut sizes: Vec<Option<&str>> = vec![None];
    sizes.extend(spec.sizes.keys().map(|k| Some(k.as_str())));
    for size in sizes {
        let s = spec.sized(size, "fuzz.toml").map_err(|e| e.to_string())?;
        cells += expand(&s, "fuzz.toml", registry())
            .map_err(|e| e.to_string())?
            .len();
    }
    Ok(cells)
}

/// An error names what is wrong: a backticked key or value, a `[section]`, or where
/// TOML failed to parse.
fn names_a_field(message: &str) -> bool {
    message.contains('`') || message.contains("[steps]") || message.contains("at line")
}

/// How many inputs loaded so far (printed with `--nocapture`).
fn report() {
    eprintln!(
        "{} of {} inputs loaded, the rest refused naming a field",
        LOADED.load(Ordering::Relaxed),
        CHECKED.load(Ordering::Relaxed)
    );
}

/// Inputs that loaded (the rest were refused), over all strategies of this process.
static LOADED: AtomicUsize = AtomicUsize::new(0);
/// Inputs checked.
static CHECKED: AtomicUsize = AtomicUsize::new(0);

/// Check one input: no panic (a panic fails the case), and an error names a field.
fn check(text: &str) -> Result<(), TestCaseError> {
    CHECKED.fetch_add(1, Ordering::Relaxed);
    match load(text) {
        Ok(_) => {
            LOADED.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        Err(m) if names_a_field(&m) => Ok(()),
        Err(m) => Err(TestCaseError::fail(format!(
            "an error that names no field: {m}\n--- input ---\n{text}"
        ))),
    }
}

#[test]
fn arbitrary_text_is_refused_or_loaded_without_a_panic() {
    let mut runner = TestRunner::new(config());
    runner
        .run(&any::<String>(), |text| check(&text))
        .expect("no panic, every error names a field");
    report();
}

/// A TOML value of any type, with the extremes a typo or a tool produces.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|x| x.to_string()),
        prop_oneof![Just(0i64), Just(-1), Just(1), Just(1_000_000_000_000)]
            .prop_map(|x| x.to_string()),
        any::<f64>().prop_map(|x| format!("{x:e}")),
        prop_oneof![
            Just("nan"),
            Just("inf"),
            Just("-inf"),
            Just("0.0"),
            Just("-0.0"),
            Just("1e308"),
            Just("1e-308"),
            Just("5e-324"),
        ]
        .prop_map(String::from),
        "[a-z\\-]{0,12}".prop_map(|s| format!("{s:?}")),
        any::<bool>().prop_map(|b| b.to_string()),
        prop::collection::vec(any::<f64>(), 0..4).prop_map(|v| format!("{v:?}")),
        prop::collection::vec(0usize..2000, 0..4).prop_map(|v| format!("{v:?}")),
        Just("{}".to_string()),
        Just("{ from = 1e-300, to = 1e300, per_decade = 1000000000 }".to_string()),
    ]
}

/// The value positions of a spec that exercises every section.
const TEMPLATE: &str = r#"schema_version = @
name = @
t_end = @
trace_stride = @
metrics_stride = @
threads = @
repeat = @
max_steps = @

[steps]
h = @

[[problems]]
id = @
params = { links = @, theta0_deg = @, m = @ }

[[methods]]
id = @
params = { omega_n = @, xi = @ }
projection = { tol = @, max_iter = @ }

[ensemble]
members = @
seed = @
initial = { q_sigma = @ }
constraint_noise = { sigma0 = @, tau = @ }

[sizes.quick]
t_end = @
steps = { log_range = { from = @, to = @, per_decade = @ } }
"#;

/// A valid value for each `@` of [`TEMPLATE`], in order.
const VALID: [&str; 27] = [
    "1",
    "\"fuzz\"",
    "0.01",
    "0",
    "1",
    "[1]",
    "1",
    "100000",
    "[1e-3]",
    "\"planar-chain\"",
    "[3]",
    "30.0",
    "1.0",
    "\"baumgarte\"",
    "10.0",
    "1.0",
    "1e-10",
    "20",
    "2",
    "1",
    "0.0",
    "0.1",
    "1.0",
    "0.005",
    "1e-3",
    "1e-2",
    "2",
];

/// The template with each `@` replaced by one of `values` where `keep` says no, and by
/// its valid value where `keep` says yes (so that a case mutates a few values of an
/// otherwise valid spec).
fn fill(values: &[String], keep: &[bool]) -> String {
    let mut out = String::new();
    let mut parts = TEMPLATE.split('@');
    out.push_str(parts.next().unwrap_or_default());
    for (i, part) in parts.enumerate() {
        let v = if keep[i % keep.len()] {
            VALID[i % VALID.len()].to_string()
        } else {
            values[i % values.len()].clone()
        };
        out.push_str(&v);
        out.push_str(part);
    }
    out
}

#[test]
fn the_template_filled_with_valid_values_loads() {
    let text = fill(&[String::new()], &[true]);
    assert_eq!(TEMPLATE.matches('@').count(), VALID.len());
    // One cell at full size, three (h = 1e-3, 10^-2.5, 1e-2) at quick.
    assert_eq!(load(&text), Ok(4), "{text}");
}

#[test]
fn valid_shaped_specs_with_mutated_values_are_refused_or_loaded() {
    let mut runner = TestRunner::new(config());
    let strategy = (
        prop::collection::vec(value(), VALID.len()),
        prop::collection::vec(prop::bool::weighted(0.85), VALID.len()),
    );
    runner
        .run(&strategy, |(values, keep)| check(&fill(&values, &keep)))
        .expect("no panic, every error names a field");
    report();
}

/// One byte edit: replace, insert or delete at a position (modulo the length).
#[derive(Clone, Debug)]
enum Edit {
    Replace(usize, u8),
    Insert(usize, u8),
    Delete(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    // Bytes a spec is made of, plus any byte.
    let byte = prop_oneof![
        prop::sample::select(b"0123456789.-+e[]{}=,\"# \nabcxyz_".to_vec()),
        any::<u8>(),
    ];
    prop_oneof![
        (any::<usize>(), byte.clone()).prop_map(|(i, b)| Edit::Replace(i, b)),
        (any::<usize>(), byte).prop_map(|(i, b)| Edit::Insert(i, b)),
        any::<usize>().prop_map(Edit::Delete),
    ]
}

#[test]
fn shipped_specs_with_random_byte_edits_are_refused_or_loaded() {
    let mut runner = TestRunner::new(config());
    let strategy = (
        any::<prop::sample::Index>(),
        prop::collection::vec(edit(), 1..6),
    );
    runner
        .run(&strategy, |(which, edits)| {
            let mut bytes = which.get(shipped()).clone().into_bytes();
            for e in edits {
                let n = bytes.len().max(1);
                match e {
                    Edit::Replace(i, b) if !bytes.is_empty() => bytes[i % n] = b,
                    Edit::Insert(i, b) => bytes.insert(i % (bytes.len() + 1), b),
                    Edit::Delete(i) if !bytes.is_empty() => {
                        bytes.remove(i % n);
                    }
                    _ => {}
                }
            }
            check(&String::from_utf8_lossy(&bytes))
        })
        .expect("no panic, every error names a field");
    report();
}

/// Every shipped spec loads and expands at every size it names (the edits above start
/// from them; a shipped spec that does not load — a comment line broken by an edit — is a
/// defect of its own, caught here before `run-experiments` meets it).
#[test]
fn every_shipped_spec_loads_at_every_size() {
    assert!(shipped().len() >= 40, "{} specs", shipped().len());
    for text in shipped() {
        let name = text
            .lines()
            .find_map(|l| l.strip_prefix("name = "))
            .unwrap_or("?")
            .to_string();
        let cells = load(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(cells > 0, "{name}: no cells");
    }
}

/// A method entry's own `steps` replace `[steps]` for that entry only, in every size: an
/// order study gives a sixth-order method steps whose errors stay above round-off.
#[test]
fn a_method_entry_runs_its_own_steps() {
    let text = "schema_version = 1\nname = \"own\"\nt_end = 1.0\n\n[steps]\nh = [1e-2, 5e-3]\n\n\
                [[problems]]\nid = \"pendulum\"\n\n[[methods]]\nid = \"rattle\"\n\n\
                [[methods]]\nid = \"gauss\"\nparams = { stages = 3 }\n\
                steps = { log_range = { from = 0.05, to = 0.2, per_decade = 4 } }\n\n\
                [sizes.quick]\nsteps = { h = [0.1] }\n";
    let spec = Spec::parse(text, "own.toml").expect("spec");
    for (size, rattle_hs) in [(None, vec![1e-2, 5e-3]), (Some("quick"), vec![0.1])] {
        let cells = expand(
            &spec.sized(size, "own.toml").expect("size"),
            "own.toml",
            registry(),
        )
        .expect("cells");
        let hs = |m: &str| -> Vec<f64> {
            cells
                .iter()
                .filter(|c| c.method == m)
                .map(|c| c.h)
                .collect()
        };
        assert_eq!(hs("rattle"), rattle_hs, "size {size:?}");
        // 0.05 · 10^(k/4) for the 2.4 decades rounded to 2 (0.158, 0.089, 0.05), each
        // then rounded to t_end / n: 1/6, 1/11, 1/20.
        let gauss = hs("gauss");
        let expected = [1.0 / 6.0, 1.0 / 11.0, 1.0 / 20.0];
        assert_eq!(gauss.len(), 3, "size {size:?}: {gauss:?}");
        assert!(
            gauss
                .iter()
                .zip(expected)
                .all(|(a, b)| (a - b).abs() < 1e-12),
            "{gauss:?}"
        );
    }
}
