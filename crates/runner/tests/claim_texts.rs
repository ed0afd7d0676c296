//! Issue 32's standard for claims: every quantitative sentence in a shipped claim's
//! `instead` or `condition` quotes the rows (`{measure | …}`, filled in by the report from
//! the run), never a typed measurement. A number typed outside the quotes must be one of
//! the spec's inputs (a parameter, a step, a bound — any number written before the first
//! `[[claims]]`, where the header derives the theory's limits), a small count (at most 4:
//! an order's s + 1, ωh < 2), or a year of a citation.

use driftlab_results::claim_spec::quotes;
use driftlab_runner::Spec;
use std::path::{Path, PathBuf};

/// The shipped specs, optional ones included.
fn shipped() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut files = Vec::new();
    for dir in [root.clone(), root.join("optional")] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            panic!("{} is not readable", dir.display());
        };
        files.extend(
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml")),
        );
    }
    files.sort();
    files
}

/// The numbers written in `text` (`12`, `0.5`, `1.1e6`, `−4`), as values.
fn numbers(text: &str) -> Vec<f64> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < chars.len() {
        let prev = if k > 0 { chars[k - 1] } else { ' ' };
        if !chars[k].is_ascii_digit() || prev.is_alphanumeric() || prev == '_' || prev == '.' {
            k += 1;
            continue;
        }
        let start = k;
        let digits = |k: &mut usize| {
            while *k < chars.len() && chars[*k].is_ascii_digit() {
                *k += 1;
            }
        };
        digits(&mut k);
        if k + 1 < chars.len() && chars[k] == '.' && chars[k + 1].is_ascii_digit() {
            k += 1;
            digits(&mut k);
        }
        if k + 1 < chars.len() && chars[k] == 'e' {
            let mut e = k + 1;
            if e < chars.len() && (chars[e] == '-' || chars[e] == '−') {
                e += 1;
            }
            if e < chars.len() && chars[e].is_ascii_digit() {
                k = e;
                digits(&mut k);
            }
        }
        let literal: String = chars[start..k].iter().collect();
        if let Ok(x) = literal.replace('−', "-").parse::<f64>() {
            out.push(x);
        }
    }
    out
}

/// `text` without its quotes.
fn unquoted(text: &str) -> String {
    let Ok(qs) = quotes(text) else {
        return text.to_string();
    };
    let mut out = String::new();
    let mut at = 0;
    for q in qs {
        out.push_str(&text[at..q.span.start]);
        out.push_str(" · ");
        at = q.span.end;
    }
    out.push_str(&text[at..]);
    out
}

fn allowed(x: f64, inputs: &[f64]) -> bool {
    let year = x.fract() == 0.0 && (1900.0..=2100.0).contains(&x);
    x.abs() <= 4.0 || year || inputs.iter().any(|&i| (i - x).abs() <= 1e-12 * x.abs())
}

/// The typed numbers of one spec's claims that are not inputs: `(claim, field, number)`.
fn typed_measurements(text: &str, name: &str) -> Vec<(usize, &'static str, f64)> {
    let head = text.split("[[claims]]").next().unwrap_or_default();
    let inputs = numbers(head);
    let spec = match Spec::parse(text, name) {
        Ok(s) => s,
        Err(e) => panic!("{name}: {e}"),
    };
    let mut bad = Vec::new();
    for (i, c) in spec.claims.iter().enumerate() {
        for (field, t) in [
            ("instead", Some(&c.instead)),
            ("condition", c.condition.as_ref()),
        ] {
            let Some(t) = t else { continue };
            for x in numbers(&unquoted(t)) {
                if !allowed(x, &inputs) {
                    bad.push((i, field, x));
                }
            }
        }
    }
    bad
}

#[test]
fn shipped_claims_quote_their_measurements_instead_of_typing_them() {
    let mut found = Vec::new();
    let mut claims = 0;
    for path in shipped() {
        let name = path.display().to_string();
        let Ok(text) = std::fs::read_to_string(&path) else {
            panic!("{name} is not readable");
        };
        claims += text.matches("[[claims]]").count();
        for (i, field, x) in typed_measurements(&text, &name) {
            found.push(format!("{name} [[claims]] {i} `{field}`: {x}"));
        }
    }
    assert!(
        claims >= 38,
        "{claims} claims found: the scan missed the specs"
    );
    assert!(
        found.is_empty(),
        "typed numbers, quote the rows instead:\n{}",
        found.join("\n")
    );
}

/// The check can fail: the texts the issue found typed are caught.
#[test]
fn a_typed_measurement_is_caught_and_a_quoted_one_is_not() {
    let spec = |instead: &str| {
        format!(
            "schema_version = 1\nname = \"x\"\nt_end = 1.0\n[steps]\nh = [1e-3]\n[[problems]]\nid = \"pendulum\"\n[[methods]]\nid = \"taylor\"\n[[claims]]\nclaim = \"c\"\nsource = \"s\"\nmeasure = \"err_q\"\nat_most = 1.0\ninstead = \"{instead}\"\n"
        )
    };
    let typed = typed_measurements(&spec("fails at t = 2735 s, energy error 498"), "x");
    assert_eq!(typed, vec![(0, "instead", 2735.0), (0, "instead", 498.0)]);
    let quoted = spec("fails at t = {fail_time | taylor} s at h = 1e-3, an order s + 1 (1989)");
    assert!(typed_measurements(&quoted, "x").is_empty());
}
