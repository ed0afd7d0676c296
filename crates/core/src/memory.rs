//! The memory guard (issue 12): a cell whose memory cannot fit is refused **before** it
//! allocates, as a failed row (`fail_kind = memory`) with the estimate and the limit,
//! instead of taking all memory until the kernel kills the process (no row, no message).
//!
//! The limit is the smaller of the configured one ([`set_limit`]: `--memory-limit` on the
//! command line) and the memory available when the cell starts (`MemAvailable`, Linux).
//! Two checks use it:
//!
//! 1. before a method's `init`, a **lower bound** from the dimensions alone
//!    ([`state_lower_bound`]): the loop's four copies of the state and the least a KKT
//!    solve holds — nothing of the problem's size has been allocated yet;
//! 2. in the sparse KKT solver, after the symbolic analysis and before the factor's
//!    values and workspace are allocated, the **fill**: `nnz(L)` and faer's scratch.
//!
//! A lower bound never refuses a run that fits; the fill check catches what it misses
//! where the factor is the largest allocation.

use crate::error::StepError;
use std::sync::atomic::{AtomicU64, Ordering};

static CONFIGURED: AtomicU64 = AtomicU64::new(u64::MAX);

/// Set the configured limit in bytes for the whole process (`None`: only the available
/// memory limits).
pub fn set_limit(bytes: Option<u64>) {
    CONFIGURED.store(bytes.unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// The configured limit, if any.
pub fn configured_limit() -> Option<u64> {
    let b = CONFIGURED.load(Ordering::Relaxed);
    (b != u64::MAX).then_some(b)
}

/// Bytes of memory available to new allocations: `MemAvailable` of `/proc/meminfo`
/// (Linux), `None` where it cannot be read.
pub fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The limit in force and where it comes from, if any.
pub fn limit() -> Option<(u64, &'static str)> {
    let configured = configured_limit().map(|b| (b, "--memory-limit"));
    let available = available_bytes().map(|b| (b, "memory available (MemAvailable)"));
    match (configured, available) {
        (Some(c), Some(a)) => Some(if c.0 <= a.0 { c } else { a }),
        (c, a) => c.or(a),
    }
}

/// A lower bound of the bytes a run of a mechanical system with `n` coordinates and `m`
/// constraint rows holds at once: four copies of the state `(q, v, a, λ)` (current, last
/// accepted, initial, final) and, for the KKT solve, the matrix's values and factor
/// (at least its diagonal) and two right-hand sides, 8 bytes each.
pub fn state_lower_bound(n: usize, m: usize) -> u64 {
    let (n, m) = (n as u64, m as u64);
    8 * (4 * (3 * n + m) + 4 * (n + m))
}

/// `Ok` when `estimate` bytes for `what` fit the limit at time `t`, else the typed error.
pub fn check(t: f64, what: &str, estimate: u64) -> Result<(), StepError> {
    match limit() {
        Some((limit, source)) if estimate > limit => Err(StepError::OutOfMemory {
            t,
            what: what.into(),
            estimate,
            limit,
            limit_source: source.into(),
        }),
        _ => Ok(()),
    }
}

/// `bytes` in the largest binary unit below it, e.g. `3.2 GiB`.
pub fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = bytes as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    format!("{x:.1} {}", units[u])
}

/// Parse a byte count as given on the command line: a number with an optional binary
/// suffix `K`, `M`, `G`, `T` (powers of 1024; `8G`, `512M`, `1.5G`, `1e9`).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (number, scale) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M') => (&t[..t.len() - 1], 1u64 << 20),
        Some('G') => (&t[..t.len() - 1], 1u64 << 30),
        Some('T') => (&t[..t.len() - 1], 1u64 << 40),
        _ => (t, 1),
    };
    match number.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x * (scale as f64) < u64::MAX as f64 => {
            Ok((x * scale as f64) as u64)
        }
        _ => Err(format!(
            "memory limit `{text}`: give a positive size in bytes, optionally with K, M, G or T (e.g. 8G, 512M)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes_and_bad_ones_name_the_fix() {
        assert_eq!(parse_bytes("8G"), Ok(8 << 30));
        assert_eq!(parse_bytes("512m"), Ok(512 << 20));
        assert_eq!(parse_bytes("1.5K"), Ok(1536));
        assert_eq!(parse_bytes("1e9"), Ok(1_000_000_000));
        for bad in ["0", "-1G", "lots", "", "NaNG", "1e30T"] {
            let e = parse_bytes(bad).expect_err(bad);
            assert!(e.contains("e.g. 8G"), "{e}");
        }
        assert_eq!(human(3 << 29), "1.5 GiB");
    }

    #[test]
    fn the_lower_bound_counts_the_state_copies_and_the_kkt_minimum() {
        // Planar chain of 10⁸ links: n = 2·10⁸, m = 10⁸ → 8 (4·7 + 4·3)·10⁸ B = 30.4 GB.
        assert_eq!(state_lower_bound(200_000_000, 100_000_000), 32_000_000_000);
    }

    #[test]
    fn available_memory_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            let b = available_bytes().expect("MemAvailable in /proc/meminfo");
            assert!(b > 1 << 20, "{b} bytes available");
        }
    }
}
