//! Every relative link of the documentation resolves: README.md, ARCHITECTURE.md, the
//! pages under docs/ and the datasets' READMEs. A link names a file or folder of the
//! repository (relative to the page), optionally with `#anchor`; an anchor into a
//! Markdown page must be one of its headings, slugged as GitHub renders them (lower case;
//! letters, digits, `-` and `_` kept, spaces to `-`, everything else dropped; a repeated
//! heading gets `-1`, `-2`, …). Links inside code (fenced blocks, `backticks`) are text,
//! not links; `http(s):` and `mailto:` links are not followed (no network in CI). And every
//! repository path the pages name in code exists (`every_path_the_documentation_names_exists`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The documentation pages.
fn pages() -> Vec<PathBuf> {
    let r = root();
    let mut out = vec![
        r.join("README.md"),
        r.join("ARCHITECTURE.md"),
        r.join("datasets/README.md"),
        r.join("datasets/robots/README.md"),
    ];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(r.join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

/// The page's text outside fenced code blocks, line by line, with inline code removed.
fn prose(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push(String::new());
            continue;
        }
        if fenced {
            out.push(String::new());
            continue;
        }
        // Drop `code spans` (an odd backtick count leaves the rest as prose).
        let mut kept = String::new();
        for (k, part) in line.split('`').enumerate() {
            if k % 2 == 0 {
                kept.push_str(part);
            } else {
                kept.push(' ');
            }
        }
        out.push(kept);
    }
    out
}

/// GitHub's anchor of a heading's text.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown page.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let Some(h) = line.strip_prefix('#') else {
            continue;
        };
        if fenced {
            continue;
        }
        let title = h.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let base = slug(title);
        let mut s = base.clone();
        let mut k = 0;
        while !seen.insert(s.clone()) {
            k += 1;
            s = format!("{base}-{k}");
        }
    }
    seen
}

/// The link targets of one line of prose: `](target)` and `](target "title")`.
fn targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let Some(j) = after.find(')') else { break };
        let target = after[..j].split_whitespace().next().unwrap_or("");
        out.push(target.to_string());
        rest = &after[j..];
    }
    out
}

/// What is wrong with `target` linked from `page`, if anything.
fn broken(page: &Path, target: &str) -> Option<String> {
    if target.starts_with("http://")
        || target.starts_with("https://")
        || target.starts_with("mailto:")
    {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        page.to_path_buf()
    } else {
        page.parent().unwrap().join(path)
    };
    if !file.exists() {
        return Some(format!("{target}: no such file or folder"));
    }
    let anchor = anchor?;
    if file.extension().is_none_or(|e| e != "md") {
        return Some(format!(
            "{target}: an anchor into a file that is not Markdown"
        ));
    }
    let text = std::fs::read_to_string(&file).unwrap();
    (!anchors(&text).contains(anchor))
        .then(|| format!("{target}: no heading with anchor #{anchor}"))
}

#[test]
fn every_relative_link_of_the_documentation_resolves() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text =
            std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        for (n, line) in prose(&text).iter().enumerate() {
            for t in targets(line) {
                checked += 1;
                if let Some(why) = broken(&page, &t) {
                    let name = page
                        .strip_prefix(root())
                        .unwrap_or(&page)
                        .display()
                        .to_string();
                    bad.push(format!("{name}:{}: {why}", n + 1));
                }
            }
        }
    }
    assert!(
        checked > 30,
        "only {checked} links found: is the parser reading the pages?"
    );
    assert!(
        bad.is_empty(),
        "{} broken links:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn the_slug_is_githubs() {
    assert_eq!(
        slug("Bad inputs and what becomes of them"),
        "bad-inputs-and-what-becomes-of-them"
    );
    assert_eq!(
        slug("The report (`reports/report.pdf`, `reports/index.html`)"),
        "the-report-reportsreportpdf-reportsindexhtml"
    );
    assert_eq!(
        slug("Long sweeps: killed and resumed"),
        "long-sweeps-killed-and-resumed"
    );
    let a = anchors("# A\n## B\n## B\n```\n# not a heading\n```\n");
    assert_eq!(a.into_iter().collect::<Vec<_>>(), ["a", "b", "b-1"]);
}

#[test]
fn the_readme_is_a_front_page() {
    let lines = std::fs::read_to_string(root().join("README.md"))
        .unwrap()
        .lines()
        .count();
    assert!(
        lines <= 200,
        "README.md has {lines} lines; the reference belongs in docs/"
    );
}

/// The inline code spans of `text` outside fenced blocks.
fn code_spans(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.extend(line.split('`').skip(1).step_by(2).map(str::to_string));
        }
    }
    out
}

/// A code span that names a file or folder of the repository, without its `:line`,
/// `#anchor` or `::item` suffix: a path from the root (`crates/…`, `docs/…`, …) or a
/// crate's test (`tests/x.rs`); placeholders (`<name>`, `{…}`, `*`, `…`) and commands are
/// not paths.
fn repository_path(span: &str) -> Option<String> {
    const ROOTS: [&str; 8] = [
        "crates/",
        "docs/",
        "scripts/",
        "experiments/",
        "models/",
        "datasets/",
        "examples/",
        "tests/",
    ];
    let t = span.trim();
    if !ROOTS.iter().any(|r| t.starts_with(r))
        || t.contains(|c: char| c.is_whitespace() || "<>{}*…".contains(c))
    {
        return None;
    }
    let end = t.find([':', '#']).unwrap_or(t.len());
    Some(t[..end].to_string())
}

/// Every path the documentation names in code (`crates/runner/src/store/record.rs`) exists: a
/// page that sends the next engineer to a moved file is wrong (issue 48: docs/adding.md's
/// paths true). A crate's test (`tests/schur.rs`) exists in some crate.
#[test]
fn every_path_the_documentation_names_exists() {
    let r = root();
    let crate_test = |p: &str| {
        std::fs::read_dir(r.join("crates"))
            .unwrap()
            .any(|c| c.unwrap().path().join(p).exists())
    };
    let mut bad = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for p in code_spans(&text).iter().filter_map(|s| repository_path(s)) {
            checked += 1;
            let found = r.join(&p).exists() || (p.starts_with("tests/") && crate_test(&p));
            if !found {
                bad.push(format!("{}: `{p}`", page.display()));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} paths found: the scan is broken"
    );
    assert!(
        bad.is_empty(),
        "paths that do not exist:\n{}",
        bad.join("\n")
    );
    assert_eq!(
        repository_path("crates/a.rs:12"),
        Some("crates/a.rs".into())
    );
    assert_eq!(repository_path("crates/<family>/<name>.rs"), None);
    assert_eq!(repository_path("cargo run -p x"), None);
}
