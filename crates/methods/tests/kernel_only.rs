//! Architecture check (issue 10): every Newton-type iteration of the methods and of the
//! solver's projections runs through `driftlab_solver::newton::NewtonKernel`, which owns the
//! loop, the stopping rule and the counters. An open-ended `loop {` or `for _ in 0..` in
//! their sources is a private iteration unless it is one of the reviewed exceptions below.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::Path;

/// Reviewed open-ended loops that are not Newton iterations of their own.
const ALLOWED: &[(&str, &str)] = &[
    // Retries the kernel's solve once with a fresh Jacobian (the kernel runs inside).
    ("methods/src/implicit/radau/mod.rs", "loop {"),
    // Iterative refinement of one KKT solve (a linear-solver detail, not Newton).
    ("solver/src/kkt/mod.rs", "loop {"),
];

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_method_keeps_a_private_iteration_loop() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["methods/src", "solver/src"] {
        sources(&crates.join(dir), &mut files);
    }
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f
            .strip_prefix(&crates)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        for (no, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let open = code.contains("loop {")
                || (code.contains("for ")
                    && code.contains(" in 0..")
                    && code.trim_end().ends_with(".. {"));
            let allowed = ALLOWED
                .iter()
                .any(|(file, pat)| rel.ends_with(file) && code.contains(pat));
            if open && !allowed {
                found.push(format!("{rel}:{}: {}", no + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "private iteration loops (use NewtonKernel):\n{}",
        found.join("\n")
    );
}
