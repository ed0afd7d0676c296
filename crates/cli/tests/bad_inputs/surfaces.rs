//! The surfaces of issue 45 beside model files: `compare-methods` writing only inside a
//! folder of its own, `import-peer` adding rows it has checked as driftlab checks its own,
//! `report`, `compare` and `fingerprint` refusing tables that are not the ones their run
//! wrote, and the memory check against the process's own limits.

use super::{base, driftlab, run_spec, strings, with, Ran};
use polars::prelude::*;
use std::path::Path;

fn rssr() -> String {
    super::root()
        .join("models/rssr-linkage.toml")
        .display()
        .to_string()
}

fn compare_methods(dir: &Path, file: &str, extra: &[&str]) -> Ran {
    let mut args = vec!["compare-methods", file, "--size", "quick", "--out", "out"];
    args.extend(extra);
    driftlab(&strings(&args, dir), dir)
}

/// A user's `index.md` and `tables/` in `--out`: untouched, the comparison in its folder.
pub fn compare_methods_beside_user_files(dir: &Path) -> Ran {
    std::fs::create_dir_all(dir.join("out/tables")).expect("dir");
    std::fs::write(dir.join("out/index.md"), "mine").expect("write");
    std::fs::write(dir.join("out/tables/mine.csv"), "a,b").expect("write");
    let ran = compare_methods(dir, &rssr(), &[]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("out/index.md")).expect("read"),
        "mine"
    );
    assert!(dir.join("out/tables/mine.csv").exists());
    assert!(dir.join("out/mechanism-rssr-linkage/report.pdf").exists());
    ran
}

/// Two models with one file stem: two folders, neither replacing the other.
pub fn compare_methods_same_stem(dir: &Path) -> Ran {
    std::fs::create_dir_all(dir.join("b")).expect("dir");
    std::fs::copy(rssr(), dir.join("b/rssr-linkage.toml")).expect("copy");
    let first = compare_methods(dir, &rssr(), &[]);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let ran = compare_methods(dir, "b/rssr-linkage.toml", &[]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    for name in ["mechanism-rssr-linkage", "mechanism-rssr-linkage-2"] {
        assert!(
            dir.join("out")
                .join(name)
                .join(name)
                .join("runs.parquet")
                .exists(),
            "{name}"
        );
    }
    ran
}

/// A file the user put into the command's own folder stops the rerun before it writes.
pub fn compare_methods_foreign_file(dir: &Path) -> Ran {
    let first = compare_methods(dir, &rssr(), &[]);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    std::fs::write(dir.join("out/mechanism-rssr-linkage/notes.txt"), "mine").expect("write");
    compare_methods(dir, &rssr(), &[])
}

/// The spec the command tells the user to edit, edited: not overwritten.
pub fn compare_methods_edited_spec(dir: &Path) -> Ran {
    let first = compare_methods(dir, &rssr(), &[]);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let spec = dir.join("out/mechanism-rssr-linkage/mechanism-rssr-linkage.toml");
    let edited = std::fs::read_to_string(&spec)
        .expect("spec")
        .replace("t_end = 0.1", "t_end = 0.2");
    std::fs::write(&spec, &edited).expect("edit");
    let ran = compare_methods(dir, &rssr(), &[]);
    assert_eq!(
        std::fs::read_to_string(&spec).expect("spec"),
        edited,
        "the edit was overwritten"
    );
    ran
}

/// `compare-methods` killed (SIGKILL) as soon as it has claimed its folder, wherever it
/// then is (writing the spec, running, reporting): the marker already names every entry
/// the command writes, so `--resume` takes the folder as its own and finishes it.
pub fn compare_methods_killed_then_resumed(dir: &Path) -> Ran {
    let folder = dir.join("out/mechanism-rssr-linkage");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_driftlab"))
        .args([
            "compare-methods",
            &rssr(),
            "--size",
            "quick",
            "--out",
            "out",
        ])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("binary starts");
    let start = std::time::Instant::now();
    while !folder.join("compare-methods.json").exists() {
        assert!(
            start.elapsed().as_secs() < 60,
            "the command never claimed its folder"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let _ = child.kill();
    let _ = child.wait();
    let marker = std::fs::read_to_string(folder.join("compare-methods.json")).expect("marker");
    for entry in [
        "mechanism-rssr-linkage.toml",
        "\"mechanism-rssr-linkage\"",
        "report.pdf",
    ] {
        assert!(marker.contains(entry), "{entry} not planned: {marker}");
    }
    let ran = compare_methods(dir, &rssr(), &["--resume"]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(folder.join("mechanism-rssr-linkage/runs.parquet").exists());
    assert!(folder.join("report.pdf").exists());
    ran
}

/// A point-mass link (mass, no rotational inertia): fine in joint coordinates, singular in
/// body and natural ones, which the spec leaves out with the reason instead of failing.
pub fn compare_methods_point_mass(dir: &Path) -> Ran {
    let point = super::models::urdf().replace(
        "ixx=\"0.02\" ixy=\"0\" ixz=\"0\" iyy=\"0.02\" iyz=\"0\" izz=\"0.001\"",
        "ixx=\"0\" ixy=\"0\" ixz=\"0\" iyy=\"0\" iyz=\"0\" izz=\"0\"",
    );
    assert_ne!(
        point,
        super::models::urdf(),
        "the fixture's inertia changed"
    );
    std::fs::write(dir.join("point.urdf"), point).expect("write");
    let ran = compare_methods(dir, "point.urdf", &[]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let spec = std::fs::read_to_string(dir.join("out/mechanism-point/mechanism-point.toml"))
        .expect("spec");
    assert!(spec.contains("coordinates = [\"joint\"]"), "{spec}");
    assert!(spec.contains("# Left out: body coordinates"), "{spec}");
    ran
}

/// A model that cannot be used: refused before anything is written.
pub fn compare_methods_bad_model(dir: &Path) -> Ran {
    std::fs::write(
        dir.join("fixed.urdf"),
        super::models::urdf().replace("type=\"revolute\"", "type=\"fixed\""),
    )
    .expect("write");
    let ran = compare_methods(dir, "fixed.urdf", &[]);
    assert!(
        !dir.join("out").exists(),
        "a refused model wrote into --out"
    );
    ran
}

/// A finished pendulum sweep at h = 1e-2 and 5e-3 to t = 0.05 in `dir/out`.
fn finished(dir: &Path) {
    let spec = with("h = [1e-2]", "h = [1e-2, 5e-3]").replace("t_end = 0.1", "t_end = 0.05");
    let ran = run_spec(&spec, &[], dir);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
}

/// A peer's run of the pendulum at `h`, labelled `variant`, `edit` applied to its JSON.
fn peer(variant: &str, h: f64, edit: (&str, &str)) -> String {
    let steps = (0.05 / h).round();
    format!(r#"{{"problem": "pendulum", "problem_params": {{}}, "variant": "{variant}", "params": {{}}, "h": {h}, "t_end": 0.05, "steps": {steps}, "ok": true, "fail_time": null, "fail_reason": null, "max_pos_residual": 0.1, "max_energy_rel_error": 0.01, "wall_seconds": 0.002, "step_seconds": 0.001}}"#)
        .replacen(edit.0, edit.1, 1)
}

fn import(dir: &Path, rows: &str, extra: &[&str]) -> Ran {
    std::fs::write(dir.join("peer.jsonl"), rows).expect("write");
    let mut args = vec!["import-peer", "peer.jsonl", "--into", "out"];
    args.extend(extra);
    driftlab(&strings(&args, dir), dir)
}

fn import_row(dir: &Path, edit: (&str, &str)) -> Ran {
    finished(dir);
    import(dir, &peer("sim a", 1e-2, edit), &[])
}

pub fn peer_twice(dir: &Path) -> Ran {
    finished(dir);
    let ok = import(dir, &peer("sim a", 1e-2, ("", "")), &[]);
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    let other = import(dir, &peer("sim b", 5e-3, ("", "")), &[]);
    assert_eq!(
        other.code,
        Some(0),
        "a second peer's rows are added: {}",
        other.stderr
    );
    let replaced = import(dir, &peer("sim c", 5e-3, ("", "")), &["--replace"]);
    assert_eq!(replaced.code, Some(0), "{}", replaced.stderr);
    let runs = std::fs::read_to_string(dir.join("out/runs.csv")).expect("runs");
    assert!(
        runs.contains("sim c") && !runs.contains("sim a"),
        "--replace replaces `sim`'s rows"
    );
    import(dir, &peer("sim c", 5e-3, ("", "")), &[])
}

pub fn peer_empty(dir: &Path) -> Ran {
    finished(dir);
    assert_eq!(
        import(dir, &peer("sim a", 1e-2, ("", "")), &[]).code,
        Some(0)
    );
    let ran = import(dir, "\n", &[]);
    assert!(
        std::fs::read_to_string(dir.join("out/runs.csv"))
            .expect("runs")
            .contains("sim a"),
        "the earlier rows stay"
    );
    ran
}

/// An `import-peer` killed after it wrote the runs table but before the manifest (the
/// manifest put back as it was): the folder is not "damaged" to the next import, which
/// writes the table again; the folder then checks clean.
pub fn peer_import_killed(dir: &Path) -> Ran {
    finished(dir);
    let manifest = std::fs::read_to_string(dir.join("out/manifest.json")).expect("manifest");
    let first = import(dir, &peer("sim a", 1e-2, ("", "")), &[]);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    std::fs::write(dir.join("out/manifest.json"), manifest).expect("put back");
    let ran = import(dir, &peer("sim a", 1e-2, ("", "")), &["--replace"]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let fp = driftlab(&strings(&["fingerprint", "out"], dir), dir);
    assert_eq!(
        fp.code,
        Some(0),
        "the repaired folder checks clean: {}",
        fp.stderr
    );
    let runs = std::fs::read_to_string(dir.join("out/runs.csv")).expect("runs");
    assert_eq!(runs.matches("sim a").count(), 1, "{runs}");
    ran
}

pub fn peer_negative_time(dir: &Path) -> Ran {
    import_row(dir, ("\"wall_seconds\": 0.002", "\"wall_seconds\": -0.002"))
}

pub fn peer_repeat_zero(dir: &Path) -> Ran {
    import_row(
        dir,
        (
            "\"step_seconds\": 0.001",
            "\"step_seconds\": 0.001, \"repeat\": 0",
        ),
    )
}

pub fn peer_range_outside_median(dir: &Path) -> Ran {
    import_row(
        dir,
        (
            "\"step_seconds\": 0.001",
            "\"step_seconds\": 0.001, \"step_seconds_min\": 0.002, \"step_seconds_max\": 0.003",
        ),
    )
}

pub fn peer_ok_with_failure(dir: &Path) -> Ran {
    import_row(dir, ("\"fail_time\": null", "\"fail_time\": 0.02"))
}

pub fn peer_duplicate_rows(dir: &Path) -> Ran {
    finished(dir);
    let row = peer("sim a", 1e-2, ("", ""));
    import(dir, &format!("{row}\n{row}\n"), &[])
}

pub fn peer_failed_without_kind(dir: &Path) -> Ran {
    let failed = peer("sim a", 1e-2, ("", ""))
        .replace("\"ok\": true", "\"ok\": false")
        .replace("\"fail_time\": null", "\"fail_time\": 0.02")
        .replace("\"steps\": 5", "\"steps\": 2")
        .replace("\"fail_reason\": null", "\"fail_reason\": \"blew up\"");
    finished(dir);
    import(dir, &failed, &[])
}

/// A parameter written `90` where the cell has `90.0`: one value, accepted.
pub fn peer_integer_parameter(dir: &Path) -> Ran {
    let spec = with(
        "id = \"pendulum\"",
        "id = \"pendulum\"\nparams = { theta0_deg = 90.0 }",
    )
    .replace("t_end = 0.1", "t_end = 0.05");
    assert_eq!(run_spec(&spec, &[], dir).code, Some(0));
    let row = peer(
        "sim a",
        1e-2,
        (
            "\"problem_params\": {}",
            "\"problem_params\": {\"theta0_deg\": 90}",
        ),
    );
    let ran = import(dir, &row, &[]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    ran
}

/// `spec` run into `dir/out`.
fn run_into(dir: &Path, spec: &str, out: &str) -> Ran {
    std::fs::write(dir.join("s.toml"), spec).expect("write");
    let ran = driftlab(&strings(&["run", "s.toml", "--out", out], dir), dir);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    ran
}

/// A finished sweep's runs table rewritten by `damage` (the manifest left as the run
/// wrote it), then `args` run on the folder's parent.
fn damaged(dir: &Path, damage: impl Fn(DataFrame) -> DataFrame, args: &[&str]) -> Ran {
    run_into(
        dir,
        &with("\"bad\"", "\"x\"").replace("h = [1e-2]", "h = [1e-2, 5e-3]"),
        "root/x",
    );
    let path = dir.join("root/x/runs.parquet");
    let df = ParquetReader::new(std::fs::File::open(&path).expect("runs"))
        .finish()
        .expect("parquet");
    let mut df = damage(df);
    ParquetWriter::new(std::fs::File::create(&path).expect("runs"))
        .finish(&mut df)
        .expect("write");
    driftlab(&strings(args, dir), dir)
}

const REPORT: &[&str] = &["report", "--dir", "root"];

pub fn report_dropped_column(dir: &Path) -> Ran {
    damaged(dir, |df| df.drop("err_q").expect("drop"), REPORT)
}

pub fn report_zero_rows(dir: &Path) -> Ran {
    damaged(dir, |df| df.head(Some(0)), REPORT)
}

pub fn report_duplicated_rows(dir: &Path) -> Ran {
    damaged(dir, |df| df.vstack(&df).expect("stack"), REPORT)
}

pub fn report_retyped_column(dir: &Path) -> Ran {
    damaged(
        dir,
        |mut df| {
            let h = df
                .column("h")
                .expect("h")
                .cast(&DataType::String)
                .expect("cast");
            df.with_column(h).expect("replace");
            df
        },
        REPORT,
    )
}

pub fn report_missing_file(dir: &Path) -> Ran {
    run_into(
        dir,
        &with("\"bad\"", "\"x\"").replace("t_end = 0.1", "t_end = 0.1\ntrace_stride = 1"),
        "root/x",
    );
    std::fs::remove_file(dir.join("root/x/traces.parquet")).expect("remove");
    driftlab(&strings(REPORT, dir), dir)
}

pub fn compare_damaged(dir: &Path) -> Ran {
    run_into(dir, &base(), "a");
    damaged(dir, |df| df.head(Some(0)), &["compare", "a", "root/x"])
}

/// Two folders whose runs tables have other columns (one written before a column
/// existed, its manifest without the table notes): the difference in a line, not two
/// lists of 87 names.
pub fn compare_other_schema(dir: &Path) -> Ran {
    run_into(
        dir,
        &with("\"bad\"", "\"x\"").replace("h = [1e-2]", "h = [1e-2, 5e-3]"),
        "a",
    );
    let ran = damaged(dir, |df| df.drop("scd").expect("drop"), &["--version"]);
    assert_eq!(ran.code, Some(0));
    let manifest = dir.join("root/x/manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).expect("manifest")).expect("json");
    m["tables"] = serde_json::Value::Array(Vec::new());
    std::fs::write(&manifest, m.to_string()).expect("write");
    let ran = driftlab(&strings(&["compare", "a", "root/x"], dir), dir);
    assert!(ran.stderr.lines().all(|l| l.len() < 400), "{}", ran.stderr);
    ran
}

pub fn fingerprint_malformed(dir: &Path) -> Ran {
    let ran = run_spec(&base(), &[], dir);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    std::fs::write(
        dir.join("stored.txt"),
        "# driftlab fingerprint, simd x86-64-v3\nbad 12345\n",
    )
    .expect("write");
    driftlab(
        &strings(&["fingerprint", "out", "--check", "stored.txt"], dir),
        dir,
    )
}

/// A cell beyond what the process may address (`ulimit -v`, 3 GB) on a machine with the
/// memory free (20 million links: 6.4 GB at least): refused as a failed row naming the
/// limit, not an abort part-way.
pub fn address_space_limit(dir: &Path) -> Ran {
    let spec = with(
        "id = \"pendulum\"",
        "id = \"planar-chain\"\nparams = { links = 20000000 }",
    )
    .replace("h = [1e-2]", "h = [1e-3]");
    std::fs::write(dir.join("s.toml"), spec).expect("write");
    let script = format!(
        "ulimit -v 3000000; exec '{}' run s.toml --out out --threads 1",
        env!("CARGO_BIN_EXE_driftlab")
    );
    let status = std::process::Command::new("sh")
        .args(["-c", &script])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(dir.join("stderr.txt")).expect("stderr"))
        .status()
        .expect("sh starts");
    Ran {
        code: status.code(),
        stderr: std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default(),
        out: dir.join("out"),
    }
}
