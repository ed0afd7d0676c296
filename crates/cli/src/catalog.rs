//! `docs/catalog.md`, written from the registry (`driftlab list catalog`): every problem
//! with its summary, form and reference as its own `info()` states them at its default
//! parameters, every method with its title, declared orders and citation. The file is
//! generated, never edited; `crates/cli/tests/catalog_doc.rs` fails when it differs from
//! what the registry says, naming the command that rewrites it.

use driftlab_core::{DeclaredOrders, MethodInfo};
use driftlab_runner::Registry;
use std::fmt::Write as _;

/// The text above the tables.
const HEAD: &str = "# The catalog: problems and methods

Generated from the registry by `driftlab list catalog > docs/catalog.md` (a test checks
that it matches); `driftlab describe ID` shows one entry whole: its equations, parameters
with defaults, structure at the start and citation.
";

/// The text between the problem and the method tables.
const BETWEEN: &str = "
Published data (Test Set, IFToMM) live in `datasets/` with their provenance and are read
by the problem files at compile time. Every problem takes the reserved parameters
`redundant`, `disturbance`, `initial` and `copies` besides its own
(`crates/problems/src/instantiate.rs`).
";

/// The decorators: not catalog entries but spec tables over any method.
const DECORATORS: &str = "
Decorators over any method (keys of a spec's method table, not catalog entries:
`projection`, `recovery`, `richardson` in `crates/runner/src/spec/mod.rs`):

| decorator | what |
|---|---|
| `+projection` | projection of q (Newton or linearized; metric M or I; every k steps; all rows at once or row by row; fixed or seed 001 §3.5.4's adaptive tolerance), v, (a, λ), energy, the conserved momenta, the coupled q–v variant, or Hairer's symmetric projection (`crates/methods/src/decorators/projection/`) |
| `+rollback`, `+reset`, `+relax` | seed 001 §3.5.4's emergency recovery: a step beyond the scaled violation bound is retaken in substeps, projected, or relaxed back over K steps (`recovery = { … }`) |
| `+richardson` | local error by step doubling over any restartable method, so that it can run `[steps] adaptive` (Hairer, Nørsett & Wanner I §II.4) |
";

/// A table cell: one line, `|` escaped.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// `q/v/λ` of declared orders, `—` where none is declared.
fn orders(o: &DeclaredOrders) -> String {
    let one = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v}"));
    format!("{}/{}/{}", one(o.q), one(o.v), one(o.lambda))
}

/// The problems table.
fn problems(registry: &Registry, out: &mut String) {
    out.push_str("\n| id | what | form | reference |\n|---|---|---|---|\n");
    for e in registry.problems() {
        let (form, reference) = match e.instantiate(&(e.defaults)()) {
            Ok(p) => {
                let sys = p.as_system();
                (sys.form().name().to_string(), cell(&sys.info().reference))
            }
            Err(err) => (
                "—".into(),
                cell(&format!("does not build at its defaults: {err}")),
            ),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {form} | {reference} |",
            e.id,
            cell(e.summary)
        );
    }
}

/// One method row.
fn method_row(id: &str, i: &MethodInfo) -> String {
    format!(
        "| `{id}` | {} | {} | {} |",
        cell(&i.title),
        orders(&i.orders),
        cell(&i.citation)
    )
}

/// The methods table, the optional ones last.
fn methods(registry: &Registry, out: &mut String) {
    out.push_str("\n| id | scheme | declared order q/v/λ | citation |\n|---|---|---|---|\n");
    for e in registry.methods() {
        let _ = writeln!(out, "{}", method_row(e.id, &(e.info)()));
    }
    for &(id, feature, fix) in driftlab_methods::OPTIONAL {
        if registry.methods().iter().all(|e| e.id != id) {
            let _ = writeln!(
                out,
                "| `{id}` | behind the cargo feature `{feature}`: {} | | |",
                cell(fix)
            );
        }
    }
}

/// The whole of `docs/catalog.md` for `registry`.
pub fn markdown(registry: &Registry) -> String {
    let mut out = String::from(HEAD);
    out.push_str("\n## Problems (`driftlab list problems`)\n");
    problems(registry, &mut out);
    out.push_str(BETWEEN);
    out.push_str("\n## Methods (`driftlab list methods`)\n");
    methods(registry, &mut out);
    out.push_str(DECORATORS);
    out
}
