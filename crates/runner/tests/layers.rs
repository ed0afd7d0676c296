//! The runner's folders import downward only (ARCHITECTURE.md): `distributed`, `peer`,
//! `vecenv` → `exec` → `spec` → `analysis` → `store` → `ensemble` → the leaves (`error`,
//! `memory`, `registry`), and the files of one folder import each other without a
//! circle. Read from the sources: every `crate::…` path, doc links included (a link is
//! a reader's arrow too).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A top-level module's layer: a file may name its own layer or any below it.
fn layer(module: &str) -> Option<usize> {
    Some(match module {
        "error" | "memory" | "registry" => 0,
        "ensemble" => 1,
        "store" => 2,
        "analysis" => 3,
        "spec" => 4,
        "exec" => 5,
        "distributed" | "peer" | "vecenv" => 6,
        _ => return None,
    })
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `crate::a::b…` path in `text`, as its first two segments.
fn crate_paths(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("crate::") {
        if text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue; // e.g. `driftlab_runner_crate::`
        }
        let rest = &text[i + "crate::".len()..];
        let seg = |s: &str| -> String {
            s.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        let first = seg(rest);
        let after = &rest[first.len()..];
        let second = after.strip_prefix("::").map(seg);
        out.push((first, second));
    }
    out
}

/// `src/exec/run.rs` → ("exec", "run"); `src/error.rs` → ("error", "error").
fn place(src: &Path, file: &Path) -> (String, String) {
    let rel = file.strip_prefix(src).expect("under src");
    let parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    match parts.as_slice() {
        [one] => (one.clone(), one.clone()),
        [folder, file, ..] => (folder.clone(), file.clone()),
        [] => unreachable!("a file has a name"),
    }
}

#[test]
fn the_runner_imports_downward_only_and_without_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut upward = Vec::new();
    let mut inside: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let (folder, name) = place(&src, file);
        let Some(own) = layer(&folder) else {
            assert_eq!(
                folder,
                "lib",
                "{} is in no layer: add it to layer()",
                file.display()
            );
            continue;
        };
        let text = std::fs::read_to_string(file).expect("read");
        for (module, second) in crate_paths(&text) {
            let Some(theirs) = layer(&module) else {
                continue; // items re-exported at the crate root are named by their paths
            };
            if theirs > own {
                upward.push(format!("{} names crate::{module}", file.display()));
            }
            if module == folder && module != name {
                if let Some(s) = second.filter(|s| *s != name) {
                    inside
                        .entry((folder.clone(), name.clone()))
                        .or_default()
                        .insert(s);
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports pointing back up:\n{}",
        upward.join("\n")
    );
    // A circle among the files of one folder: a file that reaches itself.
    for (folder, start) in inside.keys() {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.clone()];
        while let Some(f) = todo.pop() {
            for next in inside.get(&(folder.clone(), f)).into_iter().flatten() {
                assert_ne!(
                    next, start,
                    "{folder}/{start}.rs reaches itself through {folder}/"
                );
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
    }
    assert!(files.len() > 30, "read {} files", files.len());
}

#[test]
fn paths_are_read_whole() {
    let p = crate_paths("use crate::store::journal::Journal; [`crate::error`] x_crate::no");
    assert_eq!(
        p,
        vec![
            ("store".into(), Some("journal".into())),
            ("error".into(), None)
        ]
    );
}
