//! The counting allocator (issue 12: memory per link as a measured column): with it
//! installed, `measure_peak` returns the peak heap bytes a closure added on its thread,
//! and a cell's row carries them in `peak_heap_bytes`.

use driftlab_runner::memory::{measure_peak, CountingAllocator};
use driftlab_runner::{run_spec, RunOptions, Spec};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

#[test]
fn peak_counts_the_largest_live_allocation_and_not_what_was_freed() {
    let mb = 1 << 20;
    let (_, peak) = measure_peak(|| {
        // black_box: an optimized build would otherwise elide the unused buffer.
        let a = std::hint::black_box(vec![1u8; 8 * mb]);
        drop(a);
        let b = std::hint::black_box(vec![1u8; 2 * mb]);
        b.len()
    });
    let peak = peak.expect("the allocator is installed");
    assert!(peak >= 8 * mb as u64, "peak {peak} below the 8 MiB buffer");
    assert!(
        peak < 9 * mb as u64,
        "peak {peak}: the two buffers were never live together"
    );
    // A nested measurement does not hide its peak from the outer one.
    let (inner, outer) =
        measure_peak(|| measure_peak(|| std::hint::black_box(vec![0u8; 4 * mb]).len()).1);
    assert!(inner.expect("installed") >= 4 * mb as u64);
    assert!(outer.expect("installed") >= 4 * mb as u64);
}

#[test]
fn a_cell_row_reports_its_peak_heap_growing_with_the_chain() {
    let text = r#"
schema_version = 1
name = "peak"
t_end = 0.005
trace_stride = 0
[steps]
h = [1e-3]
[[problems]]
id = "planar-chain"
params = { links = [1000, 10000] }
[[methods]]
id = "baumgarte"
"#;
    let spec = Spec::parse(text, "peak.toml").expect("spec");
    let dir = std::env::temp_dir().join(format!("driftlab-test-peak-{}", std::process::id()));
    let opts = RunOptions {
        out_dir: Some(dir.clone()),
        threads: Some(1),
        ..RunOptions::default()
    };
    let sum = run_spec(&spec, text, "peak.toml", &opts).expect("run");
    let peaks: Vec<u64> = sum
        .rows
        .iter()
        .map(|r| r.peak_heap_bytes.expect("measured") as u64)
        .collect();
    // At least the state (q, v, a: 2N each, λ: N → 56 B per link) and at most what the
    // chain-scaling experiment measured (≈ 1.6 kB per link) with a margin of 2.
    for (&p, n) in peaks.iter().zip([1000u64, 10000]) {
        assert!(p >= 56 * n && p <= 3200 * n, "{p} bytes for {n} links");
    }
    let ratio = peaks[1] as f64 / peaks[0] as f64;
    assert!(
        (8.0..12.0).contains(&ratio),
        "peak heap ×{ratio} for 10× the links"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_chain_beyond_the_limit_is_refused_without_allocating_it() {
    let text = r#"
schema_version = 1
name = "huge"
t_end = 0.01
[steps]
h = [1e-3]
[[problems]]
id = "planar-chain"
params = { links = [100000000] }
[[methods]]
id = "generalized-alpha"
"#;
    let spec = Spec::parse(text, "huge.toml").expect("spec");
    let dir = std::env::temp_dir().join(format!("driftlab-test-huge-{}", std::process::id()));
    let opts = RunOptions {
        out_dir: Some(dir.clone()),
        threads: Some(1),
        ..RunOptions::default()
    };
    driftlab_core::memory::set_limit(Some(1 << 30));
    let sum = run_spec(&spec, text, "huge.toml", &opts).expect("run");
    driftlab_core::memory::set_limit(None);
    let row = &sum.rows[0];
    assert!(!row.ok());
    assert_eq!(
        row.fail_kind.as_deref(),
        Some(driftlab_core::FailKind::Memory.tag())
    );
    let reason = row.fail_reason.clone().unwrap_or_default();
    // 8 (4·(3·2·10⁸ + 10⁸) + 4·3·10⁸) B = 32·10⁹ B = 29.8 GiB, against 1 GiB.
    assert!(reason.contains("29.8 GiB > the limit 1.0 GiB"), "{reason}");
    let peak = row.peak_heap_bytes.expect("measured");
    assert!(
        peak < (1u64 << 20) as f64,
        "{peak} bytes allocated for a refused 10⁸-link chain"
    );
    let _ = std::fs::remove_dir_all(dir);
}
