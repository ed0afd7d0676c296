//! What goes into `report.pdf` / `index.md`, in order: title and provenance, the
//! recommendation page (per problem class: the run that reached the class's accuracy
//! target at the least CPU time, its parameters, the runners-up), the published-reference
//! comparisons, the orders table over the whole catalog, the Baumgarte tuning guide, one
//! section per experiment (question, equations and citations from the catalog metadata
//! stored in its manifest, runs table, figures), and the provenance appendix. Every number
//! comes from the stored runs; the rules that pick the recommendations are in
//! [`CLASSES`] and printed with them.

use crate::book::Book;
use crate::data::{Results, Run};
use crate::error::ReportError;
use std::path::{Path, PathBuf};

/// A problem class of the recommendation page: which experiment answers it, which runs
/// count, which accuracy measure and target.
pub struct Class {
    /// Class name as printed.
    pub name: &'static str,
    /// Experiment folder name.
    pub experiment: &'static str,
    /// Runs of the class (problem, parameters).
    pub select: fn(&Run) -> bool,
    /// Accuracy measure as printed.
    pub measure: &'static str,
    /// Accuracy of a run.
    pub accuracy: fn(&Run) -> Option<f64>,
    /// Target: a run qualifies when `accuracy ≤ target` (or `≥` when `higher_is_better`).
    pub target: f64,
    /// Direction of the measure.
    pub higher_is_better: bool,
}

/// The recommendation classes and their targets (targets from the benchmark
/// specifications where they exist: IFToMM's high-precision 1e-3 m for A01).
pub const CLASSES: &[Class] = &[
    Class {
        name: "smooth, long time (IFToMM A01 pendulum, 1000 periods)",
        experiment: "iftomm-a01",
        select: |_| true,
        measure: "max position error [m]",
        accuracy: |r| r.err_q,
        target: 1e-3,
        higher_is_better: false,
    },
    Class {
        name: "stiff closed loop (Andrews, IVP Test Set)",
        experiment: "andrews-work-precision",
        select: |_| true,
        measure: "scd (positions)",
        accuracy: |r| r.scd,
        target: 5.0,
        higher_is_better: true,
    },
    Class {
        name: "stiff rheonomic (car axis, IVP Test Set)",
        experiment: "car-axis",
        select: |_| true,
        measure: "scd (all components)",
        accuracy: |r| r.scd,
        target: 6.0,
        higher_is_better: true,
    },
    Class {
        name: "closed loop through singular positions (IFToMM A02, N = 40)",
        experiment: "iftomm-a02",
        select: |r| r.problem_params.contains("\"n\":40"),
        measure: "max relative energy error",
        accuracy: |r| r.max_energy_rel_error,
        target: 1e-3,
        higher_is_better: false,
    },
    Class {
        name: "redundant constraints (Bricard, rank 23 of 24)",
        experiment: "bricard",
        select: |_| true,
        measure: "max relative energy error",
        accuracy: |r| r.max_energy_rel_error,
        target: 1e-3,
        higher_is_better: false,
    },
    Class {
        name: "nonholonomic (knife edge)",
        experiment: "knife-edge",
        select: |r| r.problem == "knife-edge",
        measure: "max position error [m]",
        accuracy: |r| r.err_q,
        target: 1e-6,
        higher_is_better: false,
    },
    Class {
        name: "unilateral (joint stops, e = 1)",
        experiment: "joint-limits",
        select: |r| r.problem_params.contains("\"restitution\":1.0"),
        measure: "max relative energy error",
        accuracy: |r| r.max_energy_rel_error,
        target: 5e-2,
        higher_is_better: false,
    },
    Class {
        name: "conflicting priorities (two-link chain)",
        experiment: "priority",
        select: |_| true,
        measure: "max priority-0 residual ‖Φ‖∞",
        accuracy: |r| r.max_pos_residual,
        target: 2e-2,
        higher_is_better: false,
    },
];

fn e3(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.2e}"))
}

fn pick<'a>(c: &Class, runs: &'a [Run]) -> (Vec<&'a Run>, Option<&'a Run>) {
    let ok: Vec<&Run> = runs.iter().filter(|r| (c.select)(r) && r.ok).collect();
    let meets = |r: &&Run| {
        (c.accuracy)(r).is_some_and(|a| {
            a.is_finite()
                && if c.higher_is_better {
                    a >= c.target
                } else {
                    a <= c.target
                }
        })
    };
    let mut good: Vec<&Run> = ok.iter().copied().filter(meets).collect();
    good.sort_by(|a, b| a.wall_seconds.total_cmp(&b.wall_seconds));
    let best_acc = ok
        .iter()
        .copied()
        .filter(|r| (c.accuracy)(r).is_some_and(f64::is_finite))
        .min_by(|a, b| {
            let (x, y) = (
                (c.accuracy)(a).unwrap_or(f64::NAN),
                (c.accuracy)(b).unwrap_or(f64::NAN),
            );
            if c.higher_is_better {
                y.total_cmp(&x)
            } else {
                x.total_cmp(&y)
            }
        });
    (good, best_acc)
}

fn describe(r: &Run, c: &Class) -> String {
    format!(
        "{} (h = {:.1e}, {:.3} s, {} = {})",
        r.variant,
        r.h,
        r.wall_seconds,
        c.measure,
        e3((c.accuracy)(r))
    )
}

fn manifest(dir: &Path) -> serde_json::Value {
    std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null)
}

fn s(v: &serde_json::Value, k: &str) -> String {
    match &v[k] {
        serde_json::Value::String(x) => x.clone(),
        serde_json::Value::Null => "—".into(),
        other => other.to_string(),
    }
}

/// Build `report.pdf` and `index.md` under `root` from the loaded experiments.
pub fn write_report(root: &Path, all: &[Results]) -> Result<(PathBuf, PathBuf), ReportError> {
    let first = all
        .first()
        .map(|r| manifest(&r.dir))
        .unwrap_or(serde_json::Value::Null);
    let dirty = all
        .iter()
        .any(|r| manifest(&r.dir)["git_dirty"].as_bool().unwrap_or(false));
    let rev = s(&first, "git_revision");
    let footer = format!(
        "driftlab {} · git {}{} · {} · {} ({} CPUs) · {}",
        s(&first, "driftlab_version"),
        rev.chars().take(10).collect::<String>(),
        if dirty { " (dirty)" } else { "" },
        s(&first, "build_profile"),
        s(&first, "cpu"),
        s(&first, "logical_cpus"),
        s(&first, "finished")
    );
    let mut b = Book::new(&footer);
    b.heading("driftlab — constraint stabilization methods compared", 1);
    b.paragraph(&format!(
        "Generated by `driftlab report` from the stored results of {} experiments (runs.parquet, orders.csv, manifest.json); \
         nothing in this document is typed by hand except the prose that explains the rules. Size of the runs: {}. Timings \
         are wall times of single cells on the machine in the footer and are comparable within this report only.",
        all.len(),
        s(&first, "size")
    ));
    b.paragraph(
        "Reading guide: the recommendation table answers “which method, which parameters, at what cost” per problem class; \
         the following pages give the evidence — published references, the observed orders over the whole catalog, a Baumgarte \
         tuning guide, and one section per experiment with its question, equations, runs and figures.",
    );

    // Recommendations.
    b.heading("Recommendations per problem class", 2);
    b.paragraph(
        "Rule: among the successful runs of the class's experiment that reach the target accuracy, the one with the least \
         CPU time wins; the next two are the runners-up. If no run reaches the target, the most accurate run is named instead. \
         Failed runs never qualify (they are listed in the experiment sections with their reasons).",
    );
    for c in CLASSES {
        let target = format!(
            "{} {} {:.0e}",
            c.measure,
            if c.higher_is_better { "≥" } else { "≤" },
            c.target
        );
        let Some(res) = all.iter().find(|r| r.name == c.experiment) else {
            b.heading(c.name, 3);
            b.paragraph(&format!(
                "Target: {target}. The experiment {} was not run.",
                c.experiment
            ));
            continue;
        };
        let (good, best) = pick(c, &res.runs);
        b.heading(c.name, 3);
        let text = match good.first() {
            Some(w) => {
                let others: Vec<String> = good
                    .iter()
                    .skip(1)
                    .take(2)
                    .map(|r| describe(r, c))
                    .collect();
                format!(
                    "Target: {target} (experiment {}). Recommended: {}. Runners-up: {}.",
                    c.experiment,
                    describe(w, c),
                    if others.is_empty() {
                        "none".into()
                    } else {
                        others.join("; ")
                    }
                )
            }
            None => format!(
                "Target: {target} (experiment {}). No run reached the target; {}.",
                c.experiment,
                best.map_or("no successful run".into(), |r| format!(
                    "the most accurate was {}",
                    describe(r, c)
                ))
            ),
        };
        b.paragraph(&text);
    }

    // Published references.
    b.heading("Published references", 2);
    b.paragraph(
        "Andrews and car axis against the IVP Test Set references (scd = −log₁₀ of the largest relative error over the scored \
         components). The references are themselves finite: Andrews' PSIDE reference is good to about 3e-10 in positions \
         (scd cannot exceed ≈ 9.5), the car axis reference to ≈ 7e-10 relative in its smallest velocity component (≈ 9.2). \
         IFToMM A01: position error at 2000 s against the exact elliptic solution (allowed: 1e-3 m, high precision).",
    );
    let mut rows = Vec::new();
    for (exp, label) in [
        ("andrews-work-precision", "Andrews scd"),
        ("car-axis", "car axis scd"),
    ] {
        if let Some(res) = all.iter().find(|r| r.name == exp) {
            let mut variants: Vec<&str> = res.runs.iter().map(|r| r.variant.as_str()).collect();
            variants.dedup();
            variants.sort_unstable();
            variants.dedup();
            for v in variants {
                let best = res
                    .runs
                    .iter()
                    .filter(|r| r.variant == v && r.ok)
                    .max_by(|a, b| {
                        a.scd
                            .unwrap_or(f64::NEG_INFINITY)
                            .total_cmp(&b.scd.unwrap_or(f64::NEG_INFINITY))
                    });
                let failed = res.runs.iter().filter(|r| r.variant == v && !r.ok).count();
                rows.push(vec![
                    label.into(),
                    v.into(),
                    best.map_or("—".into(), |r| {
                        format!("{:.2}", r.scd.unwrap_or(f64::NAN))
                    }),
                    best.map_or("—".into(), |r| format!("{:.1e}", r.h)),
                    best.map_or("—".into(), |r| format!("{:.3}", r.wall_seconds)),
                    format!("{failed}"),
                ]);
            }
        }
    }
    if let Some(res) = all.iter().find(|r| r.name == "seed003-index1") {
        // Seed 003's table: implicit Euler, c = 1, h = 1/4, error at t = 1/2 against the
        // exact x(1/2) = (1 − e^{−1})/2; the seed's value is (1 − e^{−1})/2 − 5/18.
        let seed = (1.0 - (-1.0f64).exp()) / 2.0 - 5.0 / 18.0;
        for r in res
            .runs
            .iter()
            .filter(|r| r.problem_params.contains("\"c\":1.0") && (r.h - 0.25).abs() < 1e-12)
        {
            rows.push(vec![
                "seed 003 |x − x_exact| at t = 1/2".into(),
                r.variant.clone(),
                r.final_err_q.map_or("—".into(), |v| format!("{v:.13}")),
                format!("{:.2e}", r.h),
                format!("{:.3}", r.wall_seconds),
                format!("seed: {seed:.13}"),
            ]);
        }
    }
    if let Some(res) = all.iter().find(|r| r.name == "iftomm-a01") {
        for r in res.runs.iter().filter(|r| r.ok) {
            rows.push(vec![
                format!("A01 error at {} s [m]", r.t_end),
                r.variant.clone(),
                e3(r.final_err_q),
                format!("{:.1e}", r.h),
                format!("{:.3}", r.wall_seconds),
                String::from(if r.final_err_q.is_some_and(|e| e <= 1e-3) {
                    "meets 1e-3"
                } else {
                    "misses 1e-3"
                }),
            ]);
        }
    }
    b.table(
        &[
            "measure",
            "method",
            "value",
            "h",
            "wall [s]",
            "failed cells / note",
        ],
        &rows,
    );

    // Orders over the catalog.
    b.heading("Observed orders over the catalog", 2);
    b.paragraph(
        "Least-squares slope of log(max-over-run error) against log(h) over the longest window of consecutive step sizes whose \
         local slopes stay within ±0.25 of their median, errors above 1e-11 (driftlab-runner `orders`). The convergence suite \
         asserts |observed − declared| ≤ 0.15 where a method declares an order; rows without a declared order are measurements.",
    );
    let mut rows = Vec::new();
    for res in all {
        for o in &res.orders {
            rows.push(vec![
                res.name.clone(),
                o.problem.clone(),
                o.variant.clone(),
                o.quantity.clone(),
                o.observed.map_or("—".into(), |x| format!("{x:.2}")),
                o.expected.map_or("—".into(), |x| format!("{x}")),
                match (o.h_min, o.h_max) {
                    (Some(a), Some(b)) => format!("{a:.1e}–{b:.1e}"),
                    _ => o.note.clone(),
                },
                format!("{}", o.points),
                o.r2.map_or("—".into(), |x| format!("{x:.4}")),
            ]);
        }
    }
    b.table(
        &[
            "experiment",
            "problem",
            "method",
            "qty",
            "observed",
            "declared",
            "fit range h",
            "pts",
            "r²",
        ],
        &rows,
    );

    crate::tuning::write(&mut b, all);

    // Experiments.
    for res in all {
        b.heading(&format!("Experiment {}", res.name), 1);
        b.paragraph(&res.description);
        b.paragraph(&findings(res));
        let m = manifest(&res.dir);
        if let Some(cat) = m["catalog"].as_array() {
            for kind in ["problem", "method"] {
                for n in cat.iter().filter(|n| n["kind"] == kind) {
                    b.heading(&format!("{kind} {}: {}", s(n, "id"), s(n, "title")), 3);
                    b.pre(&s(n, "equations"));
                    b.paragraph(&format!("Source: {}. {}", s(n, "citation"), s(n, "note")));
                }
            }
        }
        let rows: Vec<Vec<String>> = res
            .runs
            .iter()
            .map(|r| {
                vec![
                    r.problem_key(),
                    r.variant.clone(),
                    format!("{:.1e}", r.h),
                    if r.ok {
                        "ok".into()
                    } else {
                        format!(
                            "failed t={:.3}: {}",
                            r.fail_time.unwrap_or(f64::NAN),
                            r.fail_reason.clone().unwrap_or_default()
                        )
                    },
                    e3(r.max_pos_residual),
                    e3(r.max_energy_rel_error),
                    if r.scd.is_some() {
                        r.scd.map_or("—".into(), |x| format!("scd {x:.2}"))
                    } else {
                        e3(r.err_q)
                    },
                    format!("{}", r.steps),
                    format!("{}", r.factorizations),
                    format!("{}", r.newton_iterations),
                    format!("{:.3}", r.wall_seconds),
                ]
            })
            .collect();
        b.heading("Runs and cost", 3);
        b.table(
            &[
                "problem",
                "method",
                "h",
                "status",
                "max‖Φ‖",
                "energy",
                "err q / scd",
                "steps",
                "factor.",
                "Newton",
                "wall [s]",
            ],
            &rows,
        );
        let fig_dir = res.dir.join("figures");
        let mut svgs: Vec<PathBuf> = std::fs::read_dir(&fig_dir)
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "svg"))
                    .collect()
            })
            .unwrap_or_default();
        svgs.sort();
        for svg in svgs {
            let stem = svg
                .file_stem()
                .map(|x| x.to_string_lossy().to_string())
                .unwrap_or_default();
            let png_rel = format!("{}/figures/{stem}.png", res.name);
            b.figure(
                &svg,
                &png_rel,
                &format!("{} — {}", res.name, stem.replace('_', " ")),
            );
        }
        b.md_only(&format!(
            "Full tables: [{0}/summary.md]({0}/summary.md)",
            res.name
        ));
    }

    // Provenance.
    b.heading("Provenance", 1);
    b.paragraph("Per experiment: the spec's SHA-256, the size it ran at, the git revision and dirty flag of the working tree, the machine, the threads running cells side by side, and the start time (UTC).");
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|res| {
            let m = manifest(&res.dir);
            vec![
                res.name.clone(),
                s(&m, "spec_hash").chars().take(16).collect(),
                s(&m, "size"),
                s(&m, "git_revision").chars().take(10).collect(),
                s(&m, "git_dirty"),
                s(&m, "cpu"),
                s(&m, "sweep_threads"),
                s(&m, "started"),
            ]
        })
        .collect();
    b.table(
        &[
            "experiment",
            "spec sha256",
            "size",
            "git",
            "dirty",
            "cpu",
            "threads",
            "started",
        ],
        &rows,
    );
    b.paragraph(&format!(
        "Build: {}; {}; dependencies: {}.",
        s(&first, "rustc"),
        s(&first, "build_profile"),
        first["crate_versions"]
            .as_array()
            .map(|v| v
                .iter()
                .filter_map(|x| x.as_str())
                .collect::<Vec<_>>()
                .join(", "))
            .unwrap_or_default()
    ));

    let toc: Vec<(usize, String, usize)> = b.toc.clone();
    let (pages, md) = b.finish();
    let pdf = root.join("report.pdf");
    crate::pdf::pages_to_pdf(&pages, &pdf)?;
    let mut index = String::from("# driftlab report\n\nThe same content as `report.pdf`, with PNG figures.\n\n## Contents\n\n");
    for (level, title, page) in &toc {
        index.push_str(&format!(
            "{}- {title} (p. {page})\n",
            "  ".repeat(level.saturating_sub(1))
        ));
    }
    index.push_str(&md);
    let md_path = root.join("index.md");
    std::fs::write(&md_path, index).map_err(|e| ReportError::io(&md_path, e))?;
    Ok((pdf, md_path))
}

/// What the numbers of one experiment show, stated from its rows: cells and failures
/// (with the failing variants), the most accurate and the fastest successful run by the
/// experiment's accuracy measure, and how the observed orders compare with the declared.
pub fn findings(res: &Results) -> String {
    let n = res.runs.len();
    let failed: Vec<&Run> = res.runs.iter().filter(|r| !r.ok).collect();
    let mut out = format!("What the numbers show: {n} cells, {} failed", failed.len());
    if !failed.is_empty() {
        let mut who: Vec<String> = failed.iter().map(|r| r.variant.clone()).collect();
        who.sort();
        who.dedup();
        let shown: Vec<String> = who.iter().take(6).cloned().collect();
        out.push_str(&format!(
            " ({}{})",
            shown.join(", "),
            if who.len() > 6 { ", …" } else { "" }
        ));
    }
    out.push('.');
    type Measure = (&'static str, bool, fn(&Run) -> Option<f64>);
    let measures: [Measure; 4] = [
        ("scd", true, |r| r.scd),
        ("max position error", false, |r| r.err_q),
        ("max relative energy error", false, |r| {
            r.max_energy_rel_error
        }),
        ("max position residual", false, |r| r.max_pos_residual),
    ];
    let ok: Vec<&Run> = res.runs.iter().filter(|r| r.ok).collect();
    if let Some((name, higher, get)) = measures
        .into_iter()
        .find(|(_, _, g)| ok.iter().any(|r| g(r).is_some_and(f64::is_finite)))
    {
        let val = |r: &Run| get(r).filter(|x| x.is_finite());
        let best = ok
            .iter()
            .copied()
            .filter(|r| val(r).is_some())
            .min_by(|a, b| {
                let (x, y) = (val(a).unwrap_or(f64::NAN), val(b).unwrap_or(f64::NAN));
                if higher {
                    y.total_cmp(&x)
                } else {
                    x.total_cmp(&y)
                }
            });
        let fastest = ok
            .iter()
            .copied()
            .filter(|r| val(r).is_some())
            .min_by(|a, b| a.wall_seconds.total_cmp(&b.wall_seconds));
        if let Some(b) = best {
            out.push_str(&format!(
                " Best {name}: {} at h = {:.1e} ({:.3e}, {:.3} s).",
                b.variant,
                b.h,
                val(b).unwrap_or(f64::NAN),
                b.wall_seconds
            ));
        }
        if let Some(f) = fastest {
            out.push_str(&format!(
                " Fastest successful run: {} at h = {:.1e} ({:.3} s, {name} {:.3e}).",
                f.variant,
                f.h,
                f.wall_seconds,
                val(f).unwrap_or(f64::NAN)
            ));
        }
    }
    let declared: Vec<_> = res
        .orders
        .iter()
        .filter(|o| o.expected.is_some() && o.observed.is_some())
        .collect();
    if !declared.is_empty() {
        let within = declared
            .iter()
            .filter(|o| {
                (o.observed.unwrap_or(f64::NAN) - o.expected.unwrap_or(f64::NAN)).abs() <= 0.15
            })
            .count();
        out.push_str(&format!(
            " Observed orders within ±0.15 of the declared: {within} of {} fits (the others are listed in the orders table).",
            declared.len()
        ));
    }
    out
}
