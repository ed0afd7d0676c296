//! The `driftlab` binary end to end: listing, describing, bad input (exit 2 with the field
//! named), `simulate --trace` CSV round trip, and `run` + `report` producing PDFs that
//! really contain text.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn driftlab(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_driftlab"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("binary runs")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("driftlab-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn lists_show_the_first_sets() {
    let o = driftlab(&["list", "methods"], &root());
    assert!(o.status.success());
    for id in ["taylor", "baumgarte", "implicit-euler", "projection"] {
        assert!(text(&o).contains(id), "{id} missing from list methods");
    }
    let o = driftlab(&["list", "problems"], &root());
    for id in [
        "pendulum",
        "bertolazzi-pendulum",
        "planar-chain",
        "seed003-dae",
    ] {
        assert!(text(&o).contains(id), "{id} missing from list problems");
    }
    let o = driftlab(&["describe", "baumgarte"], &root());
    assert!(
        o.status.success() && text(&o).contains("α = ξω_n") && text(&o).contains("omega_n = 2"),
        "{}",
        text(&o)
    );
    let o = driftlab(&["describe", "pendulum"], &root());
    assert!(
        o.status.success() && text(&o).contains("theta0_deg = 90") && text(&o).contains("Jacobi"),
        "{}",
        text(&o)
    );
}

#[test]
fn bad_input_exits_2_naming_the_field_and_the_fix() {
    let o = driftlab(&["describe", "pendulumm"], &root());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("pendulumm") && text(&o).contains("pendulum"),
        "{}",
        text(&o)
    );
    let o = driftlab(
        &[
            "simulate",
            "--problem",
            "pendulum",
            "--method",
            "taylor",
            "--set",
            "lenght=2",
            "--h",
            "0.01",
            "--t-end",
            "0.1",
        ],
        &root(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("lenght") && text(&o).contains("length"),
        "{}",
        text(&o)
    );
    let d = tmp("badspec");
    let spec = d.join("s.toml");
    std::fs::write(&spec, "schema_version = 1\nname = \"s\"\nt_end = 1.0\nstep = 3\n[steps]\nh = [0.1]\n[[problems]]\nid = \"pendulum\"\n[[methods]]\nid = \"taylor\"\n").unwrap();
    let o = driftlab(
        &[
            "run",
            spec.to_str().unwrap(),
            "--out",
            d.join("out").to_str().unwrap(),
        ],
        &root(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("step"), "{}", text(&o));
    assert!(
        !d.join("out/runs.csv").exists(),
        "nothing should run on a bad spec"
    );
}

#[test]
fn simulate_trace_is_full_precision_csv() {
    let d = tmp("trace");
    let f = d.join("t.csv");
    let o = driftlab(
        &[
            "simulate",
            "--problem",
            "pendulum",
            "--method",
            "taylor",
            "--projection",
            "--h",
            "0.01",
            "--t-end",
            "0.5",
            "--trace",
            f.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let csv = std::fs::read_to_string(&f).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "t,q0,q1,v0,v1,lambda0,pos_residual,vel_residual,energy_rel_error"
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 51);
    // Round-trip precision: the stored q satisfies the constraint to projection tolerance.
    let last = rows.last().unwrap();
    assert!((last[0] - 0.5).abs() < 1e-15);
    assert!((last[1] * last[1] + last[2] * last[2] - 1.0).abs() < 1e-12);
    let d2 = tmp("trace1");
    let f2 = d2.join("x.csv");
    let o = driftlab(
        &[
            "simulate",
            "--problem",
            "seed003-dae",
            "--method",
            "implicit-euler",
            "--h",
            "0.25",
            "--t-end",
            "0.5",
            "--trace",
            f2.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let csv = std::fs::read_to_string(&f2).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "t,x0,z0,pos_residual");
    // Seed 003: x1 = 1/6. The printed value must carry every bit of the computed one: a
    // 6-digit print would be 3e-7 off. The computed one is the rounding of a 2 × 2 LU
    // solve and its Newton correction, within one unit in the last place of 1/6 (which
    // unit depends on the LU's operation order), so it is checked to 1 ulp.
    let x1: f64 = rows[2].split(',').nth(1).unwrap().parse().unwrap();
    let sixth = 1.0f64 / 6.0;
    assert!(
        x1.to_bits().abs_diff(sixth.to_bits()) <= 1,
        "seed 003: x1 = {x1:e}, not 1/6 = {sixth:e} to the last bit"
    );
}

#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario, its checks in the order a reader follows the output
fn run_and_report_produce_figures_with_text() {
    let d = tmp("report");
    let out = d.join("reports");
    let o = driftlab(
        &[
            "run",
            "experiments/bertolazzi-pendulum.toml",
            "--size",
            "quick",
            "--out",
            out.join("bertolazzi-pendulum").to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = driftlab(&["report", "--dir", out.to_str().unwrap()], &root());
    assert!(o.status.success(), "{}", text(&o));
    let figs = out.join("bertolazzi-pendulum/figures");
    let pdf = figs.join("residuals_bertolazzi-pendulum_h1e-3.pdf");
    let bytes = std::fs::read(&pdf).unwrap();
    assert!(bytes.starts_with(b"%PDF"));
    // Text kept as text: an embedded DejaVu font program with a ToUnicode map.
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    assert!(
        has(b"DejaVu") && has(b"/FontFile2") && has(b"/ToUnicode"),
        "PDF lost its text font"
    );
    for stem in [
        "residuals_bertolazzi-pendulum_h1e-2",
        "energy_bertolazzi-pendulum_h1e-3",
        "trajectory_bertolazzi-pendulum_h1e-3",
        "convergence_bertolazzi-pendulum",
    ] {
        for ext in ["png", "svg", "pdf"] {
            assert!(
                figs.join(format!("{stem}.{ext}")).exists(),
                "{stem}.{ext} missing"
            );
        }
    }
    assert!(out.join("bertolazzi-pendulum/summary.md").exists());
    // The combined report (issues 5, 15): one PDF whose main body (summary, guide,
    // failures by kind — bertolazzi-pendulum has failed rows —, the experiments at a
    // glance with their key figures) precedes the appendices (every order, every
    // experiment's runs, the provenance); its Markdown twin and the HTML report carry
    // every figure.
    let report = std::fs::read(out.join("report.pdf")).unwrap();
    assert!(report.starts_with(b"%PDF"));
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    let level1: Vec<&str> = index.lines().filter(|l| l.starts_with("- ")).collect();
    let expected = [
        "- driftlab — constraint stabilization methods compared",
        "- Failures by kind",
        "- Experiments at a glance",
        "- Appendix A — every observed order",
        "- Appendix B — every experiment",
        "- Appendix C — provenance",
    ];
    assert_eq!(level1.len(), expected.len(), "{level1:?}");
    for (line, start) in level1.iter().zip(expected) {
        assert!(line.starts_with(start), "{line} is not {start}");
    }
    // Its quick size fails Baumgarte (diverged) and Taylor + projection (projection
    // failed): one row each in the table, grouped by the tag.
    for kind in ["| diverged | 1 |", "| projection-failed | 1 |"] {
        assert!(index.contains(kind), "the failures table lacks `{kind}`");
    }
    // Every figure of the experiment is in the Markdown and in the HTML report (SVG
    // beside it), besides its key figure at a glance.
    let svgs = std::fs::read_dir(&figs)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".svg") && !n.ends_with(".key.svg"))
        .count();
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(index.matches("![").count(), svgs + 1);
    assert_eq!(html.matches("<img ").count(), svgs + 1);
    assert!(html.contains("<table class=\"sortable\">") && html.contains("<nav>"));
    for heading in [
        "Recommendations per problem class",
        "Claims versus measurements",
        "Observed orders (curated)",
        "Baumgarte tuning guide",
        "bertolazzi-pendulum — runs, catalog, figures",
        "Appendix C — provenance",
    ] {
        assert!(index.contains(heading), "index.md lacks {heading}");
        assert!(html.contains(heading), "index.html lacks {heading}");
    }
    if let Ok(o) = Command::new("pdftotext")
        .args([out.join("report.pdf").to_str().unwrap(), "-"])
        .output()
    {
        let t = String::from_utf8_lossy(&o.stdout);
        if o.status.success() {
            for heading in [
                "Recommendations per problem class",
                "Baumgarte tuning guide",
                "Appendix C",
            ] {
                assert!(t.contains(heading), "report.pdf text lacks {heading}");
            }
        }
    }
    // Where poppler is installed (CI installs it), the words themselves must come back.
    if let Ok(o) = Command::new("pdftotext")
        .args([pdf.to_str().unwrap(), "-"])
        .output()
    {
        let t = String::from_utf8_lossy(&o.stdout);
        assert!(
            t.contains("Position residual") && t.contains("time t [s]"),
            "pdftotext found: {t}"
        );
    }
}

/// The memory guard (issue 12): a system too large for the limit is refused before it
/// allocates — `simulate` exits 2 with the estimate and the limit, a spec's cell becomes
/// a failed row with `fail_kind = memory` — and a bad `--memory-limit` is refused.
#[test]
fn memory_guard_refuses_before_allocating() {
    let dir = tmp("memory");
    let args = [
        "--memory-limit",
        "100M",
        "simulate",
        "--problem",
        "planar-chain",
        "--set",
        "links=1000000",
        "--method",
        "generalized-alpha",
        "--h",
        "1e-3",
    ];
    let o = driftlab(&args, &dir);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("status: failed (memory)")
            && t.contains("305.2 MiB > the limit 100.0 MiB (--memory-limit)"),
        "{t}"
    );
    let spec = dir.join("big.toml");
    std::fs::write(
        &spec,
        "schema_version = 1\nname = \"big\"\nt_end = 0.01\n[steps]\nh = [1e-3]\n\
         [[problems]]\nid = \"planar-chain\"\nparams = { links = [10, 1000000] }\n\
         [[methods]]\nid = \"baumgarte\"\n",
    )
    .unwrap();
    let o = driftlab(
        &["--memory-limit", "100M", "run", "big.toml", "--out", "out"],
        &dir,
    );
    assert!(o.status.success(), "{}", text(&o));
    let runs = std::fs::read_to_string(dir.join("out/runs.csv")).unwrap();
    let rows: Vec<&str> = runs.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{runs}");
    assert!(
        rows[0].contains(",ok,"),
        "the small chain runs: {}",
        rows[0]
    );
    assert!(
        rows[1].contains(",failed,") && rows[1].contains(",memory,"),
        "the large one is a failed row: {}",
        rows[1]
    );
    let o = driftlab(&["--memory-limit", "lots", "list", "methods"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("e.g. 8G"), "{}", text(&o));
}

/// Provenance (issue 13): started inside another git repository, a run records the
/// revision of the source the binary was built from, not the folder's.
#[test]
fn manifest_records_the_source_revision_not_the_folders() {
    let foreign = tmp("foreign-repo");
    let git = |dir: &Path, args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(source) = git(&root(), &["rev-parse", "HEAD"]) else {
        eprintln!("no git checkout of the source: nothing to compare with");
        return;
    };
    git(&foreign, &["init", "-q"]).unwrap();
    git(
        &foreign,
        &[
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
    )
    .unwrap();
    let foreign_rev = git(&foreign, &["rev-parse", "HEAD"]).unwrap();
    let spec = root().join("experiments/seed003-index1.toml");
    let o = driftlab(
        &[
            "run",
            spec.to_str().unwrap(),
            "--out",
            "out",
            "--size",
            "quick",
        ],
        &foreign,
    );
    assert!(o.status.success(), "{}", text(&o));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(foreign.join("out/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(m["git_revision"], source.as_str());
    assert_ne!(m["git_revision"], foreign_rev.as_str());
    assert_eq!(m["driftlab_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(m["status"], "complete");
}

/// `fingerprint`: two runs of one spec have the same digest (`--check` passes against the
/// other's `--write`), a folder the file does not list is named as not checked, a changed
/// number is found and named (exit 1), a folder without results is refused (exit 2).
#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario over two folders and their fingerprints
fn fingerprints_agree_on_reruns_and_name_a_changed_folder() {
    let d = tmp("fingerprint");
    let spec = root().join("experiments/seed003-index1.toml");
    for side in ["a", "b"] {
        let out = d.join(side).join("seed003-index1");
        let o = driftlab(
            &[
                "run",
                spec.to_str().unwrap(),
                "--size",
                "quick",
                "--out",
                out.to_str().unwrap(),
            ],
            &root(),
        );
        assert!(o.status.success(), "{}", text(&o));
    }
    let stored = d.join("quick.txt");
    let o = driftlab(
        &[
            "fingerprint",
            d.join("a").to_str().unwrap(),
            "--write",
            stored.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let written = std::fs::read_to_string(&stored).unwrap();
    assert!(
        written.starts_with("# driftlab fingerprint, simd "),
        "{written}"
    );
    assert_eq!(
        written
            .lines()
            .filter(|l| l.starts_with("seed003-index1 "))
            .count(),
        1
    );
    let check = |dir: &Path| {
        driftlab(
            &[
                "fingerprint",
                dir.to_str().unwrap(),
                "--check",
                stored.to_str().unwrap(),
            ],
            &root(),
        )
    };
    let o = check(&d.join("b"));
    assert!(
        o.status.success() && text(&o).contains("1 result folders agree"),
        "{}",
        text(&o)
    );
    // A folder the stored file does not list is named as not checked, not counted.
    let extra = d.join("c");
    for name in ["seed003-index1", "unlisted-copy"] {
        let to = extra.join(name);
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(d.join("b/seed003-index1")).unwrap() {
            let f = f.unwrap().path();
            if f.is_file() {
                std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
            }
        }
    }
    let o = check(&extra);
    assert!(
        o.status.success()
            && text(&o).contains("1 result folders agree")
            && text(&o).contains("1 not checked")
            && text(&o).contains("unlisted-copy"),
        "{}",
        text(&o)
    );
    // One digit of the orders table changed: the folder is named, exit 1.
    let orders = d.join("b/seed003-index1/orders.csv");
    let csv = std::fs::read_to_string(&orders).unwrap();
    let changed = csv.replacen('1', "2", 1);
    assert_ne!(csv, changed);
    std::fs::write(&orders, changed).unwrap();
    let o = check(&d.join("b"));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("seed003-index1: "), "{}", text(&o));
    let empty = tmp("fingerprint-empty");
    assert_eq!(check(&empty).status.code(), Some(2));
}

/// A minimal CSV reader for the tests: rows of fields, quoted fields with `""` inside.
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let (mut row, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => row.push(std::mem::take(&mut field)),
            ('\n', false) => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            _ => field.push(c),
        }
    }
    rows
}

/// The method ids (as run, with their decorators, and each catalog id alone) and the
/// parameter names of an experiment folder's runs.csv.
fn methods_and_parameters(dir: &Path) -> Vec<String> {
    let rows = csv_rows(&std::fs::read_to_string(dir.join("runs.csv")).unwrap());
    let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
    let (method, params) = (col("method"), col("params"));
    let mut out = Vec::new();
    for r in rows.iter().skip(1).filter(|r| r.len() > params) {
        out.push(r[method].clone());
        out.extend(r[method].split('+').map(str::to_string));
        let p: serde_json::Value = serde_json::from_str(&r[params]).unwrap();
        for group in p.as_object().into_iter().flat_map(|o| o.values()) {
            out.extend(
                group
                    .as_object()
                    .into_iter()
                    .flat_map(|g| g.keys().cloned()),
            );
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Issue 46 item 6: the report is a document a reader can navigate and search. On a
/// report over three experiments (one with h̄ in its tables beside monospace "method"):
/// no text is wider than its box (every table cell and label measured against its box by
/// the faces' advance widths), no figure text leaves its canvas; the PDF has a contents
/// page whose entries link to their pages and an outline of every heading; and where
/// poppler is installed, `pdftotext` gives back every text as typeset — every method id
/// and parameter name among them ("method" came back as "met od").
#[test]
#[allow(clippy::too_many_lines)] // one report, checked page by page
fn report_is_navigable_and_its_text_layer_gives_back_what_is_typeset() {
    let d = tmp("document");
    let out = d.join("reports");
    let names = [
        "bertolazzi-pendulum",
        "andrews-high-order",
        "pendulum-orders",
    ];
    for name in names {
        let spec = format!("experiments/{name}.toml");
        let to = out.join(name);
        let o = driftlab(
            &[
                "run",
                &spec,
                "--size",
                "quick",
                "--out",
                to.to_str().unwrap(),
            ],
            &root(),
        );
        assert!(o.status.success(), "{}", text(&o));
    }
    let o = driftlab(&["report", "--dir", out.to_str().unwrap()], &root());
    assert!(o.status.success(), "{}", text(&o));
    let laid = driftlab_report::check::lay_out(&out).unwrap();
    let pages = &laid.pages;
    let overflows: Vec<String> = pages.overflows.iter().map(|o| o.to_string()).collect();
    assert!(
        overflows.is_empty(),
        "texts wider than their boxes: {overflows:#?}"
    );
    for name in names {
        for f in std::fs::read_dir(out.join(name).join("figures")).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "svg") {
                let found =
                    driftlab_report::check::svg_overflows(&std::fs::read_to_string(&f).unwrap());
                assert!(found.is_empty(), "{}: {found:#?}", f.display());
            }
        }
    }
    // Navigation: contents entries are links, every heading an outline item.
    let pdf = std::fs::read(out.join("report.pdf")).unwrap();
    let count = |needle: &[u8]| pdf.windows(needle.len()).filter(|w| *w == needle).count();
    let entries = pages
        .marks
        .iter()
        .skip_while(|m| m.title != "Contents")
        .skip(1)
        .filter(|m| m.level <= 2)
        .count();
    assert!(entries >= 8, "{:?}", pages.marks);
    assert_eq!(pages.links.len(), entries);
    assert_eq!(count(b"/Subtype /Link"), entries);
    assert_eq!(count(b"/Type /Outlines"), 1);
    assert_eq!(count(b"/Dest ["), pages.marks.len());
    assert!(pages.marks.iter().any(|m| m.level == 3));
    // The text layer.
    let typeset: Vec<&str> = pages
        .typeset
        .iter()
        .map(|t| t.text.as_str())
        .filter(|t| !t.starts_with("driftlab · layout check"))
        .collect();
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let all_typeset = squeeze(&typeset.join(""));
    let tokens: Vec<String> = names
        .iter()
        .flat_map(|n| methods_and_parameters(&out.join(n)))
        .filter(|t| all_typeset.contains(t.as_str()))
        .collect();
    // Method ids with decorators, parameter names and plain catalog ids are all typeset.
    for must in ["taylor+projection", "omega_n", "stages", "rattle"] {
        assert!(
            tokens.iter().any(|t| t == must),
            "{must} not typeset: {tokens:?}"
        );
    }
    let Ok(o) = Command::new("pdftotext")
        .args(["-raw", out.join("report.pdf").to_str().unwrap(), "-"])
        .output()
    else {
        println!("pdftotext not installed: the text layer is not checked");
        return;
    };
    assert!(o.status.success());
    let got = squeeze(&String::from_utf8_lossy(&o.stdout));
    for token in tokens
        .iter()
        .map(String::as_str)
        .chain(["method", "h\u{304}"])
    {
        assert!(got.contains(token), "pdftotext lost {token:?}");
    }
    let lost: Vec<&&str> = typeset
        .iter()
        .filter(|t| !got.contains(&squeeze(t)))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} texts not given back: {lost:#?}",
        lost.len(),
        typeset.len()
    );
}

/// `tune` at h = 2e-3 on the MJCF four-bar: ξ = 1, ω_n = 1/(2h) = 250 /s, MuJoCo's
/// `solref = (2h, 1)`, Pinocchio's Kp = ω_n², ERP = hω_n/(hω_n + 2) = 0.2; the copy it
/// writes differs from the file only by that `solref` on the equality, and reads as the
/// same model.
#[test]
fn tune_writes_the_recommended_solref_into_a_copy_of_the_mjcf_model() {
    let dir = tmp("tune");
    let out = dir.join("tuned.xml");
    let o = driftlab(
        &[
            "tune",
            "models/four-bar.xml",
            "--h",
            "2e-3",
            "--write-mjcf",
            out.to_str().unwrap(),
        ],
        &root(),
    );
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    for want in [
        "ω_n = 2.500000e2 /s",
        "solref = \"4.000000e-3 1\"",
        "Kp = ω_n² = 6.250000e4 /s²",
        "ERP = 2.000000e-1",
        "frequency = 3.978874e1 Hz",
    ] {
        assert!(said.contains(want), "`{want}` missing from:\n{said}");
    }
    let source = std::fs::read_to_string(root().join("models/four-bar.xml")).unwrap();
    let copy = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        copy.replacen(" solref=\"4e-3 1\"", "", 1),
        source,
        "the copy differs by more than the solref"
    );
    let o = driftlab(
        &[
            "describe",
            "model",
            "--set",
            &format!("file=\"{}\"", out.display()),
        ],
        &root(),
    );
    assert!(
        o.status.success() && text(&o).contains("n = 3, m = 3"),
        "{}",
        text(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}
