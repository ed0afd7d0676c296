//! The readers of files a user or another tool hands driftlab, fuzzed (issue 45): a
//! peer's rows and a stored fingerprint file, with random lines, numbers, keys and bytes,
//! end in rows or in an error naming the line — never a panic, never rows that break the
//! checks a driftlab row passes.

use driftlab_runner::peer::row::read_rows;
use proptest::prelude::*;

/// A valid peer row whose fields the fuzzer replaces.
fn row(
    h: &str, t_end: &str, steps: &str, ok: &str, fail_time: &str, wall: &str, extra: &str,
) -> String {
    format!(
        r#"{{"problem": "pendulum", "problem_params": {{}}, "variant": "sim x", "params": {{}}, "h": {h}, "t_end": {t_end}, "steps": {steps}, "ok": {ok}, "fail_time": {fail_time}, "fail_reason": null, "max_pos_residual": 0.1, "max_energy_rel_error": 0.1, "wall_seconds": {wall}, "step_seconds": 0.1{extra}}}"#
    )
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("1e308".to_string()),
        Just("null".to_string()),
        Just("\"1\"".to_string()),
        Just("1e-3".to_string()),
        (-1e3..1e3f64).prop_map(|x| format!("{x}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn peer_rows_are_read_or_refused_with_their_line(
        h in number(), t_end in number(), steps in prop_oneof![Just("0".to_string()), Just("-5".to_string()), Just("18446744073709551616".to_string()), (0u64..100_000).prop_map(|s| s.to_string())],
        ok in prop_oneof![Just("true"), Just("false"), Just("1")],
        fail_time in number(), wall in number(),
        extra in prop_oneof![Just(String::new()), Just(", \"fail_kind\": \"diverged\"".to_string()), Just(", \"bogus\": 1".to_string())],
        junk in "[{}\\[\\]\",:a-z0-9 \n]{0,40}",
        copies in 1usize..3,
    ) {
        let dir = std::env::temp_dir().join(format!("driftlab-hostile-peer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("peer.jsonl");
        let line = row(&h, &t_end, &steps, ok, &fail_time, &wall, &extra);
        let text = format!("{}{junk}\n", format!("{line}\n").repeat(copies));
        std::fs::write(&file, &text).expect("write");
        match read_rows(&file) {
            Ok(rows) => {
                for r in &rows {
                    prop_assert!(r.invalid().is_none());
                    prop_assert!(r.h > 0.0 && r.t_end > 0.0 && r.wall_seconds >= 0.0);
                    prop_assert!(r.ok == r.fail_time.is_none());
                }
                prop_assert!(copies == 1 || rows.len() < copies, "a run twice passed");
            }
            Err(e) => prop_assert!(e.contains("line ") || e.contains("no peer rows"), "{e}"),
        }
    }

    #[test]
    fn stored_fingerprints_are_parsed_or_refused_with_their_line(
        lines in prop::collection::vec("[# a-z0-9_\\-]{0,30}", 0..6),
        head in prop_oneof![Just("# driftlab fingerprint, simd x86-64-v3\n".to_string()), Just(String::new()), "[ -~]{0,40}\n"],
    ) {
        let text = format!("{head}{}", lines.join("\n"));
        match driftlab_runner::store::fingerprint::parse(&text) {
            Ok((_, entries)) => {
                for (name, digest) in entries {
                    prop_assert!(!name.is_empty() && digest.len() == 16);
                }
            }
            Err(e) => prop_assert!(e.contains("line "), "{e}"),
        }
    }
}
