//! The memory guard (issue 12): a cell whose memory cannot fit is refused **before** it
//! allocates, as a failed row (`fail_kind = memory`) with the estimate and the limit,
//! instead of taking all memory until the kernel kills the process (no row, no message).
//!
//! The limit is the tightest of the configured one ([`set_limit`]: `--memory-limit` on the
//! command line), the memory available when the cell starts (`MemAvailable`, Linux), the
//! headroom under the process's own `RLIMIT_AS`/`RLIMIT_DATA` (`ulimit -v`, `-d`), and the
//! headroom of its cgroup (Slurm's `--mem`, a container's limit) — a machine with free
//! memory still refuses what this process may not take.
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

/// The headroom under this process's soft resource limit `name` of `/proc/self/limits`
/// (`Max address space`: `ulimit -v`; `Max data size`: `ulimit -d`), less what the
/// process holds of it (`VmSize`, `VmData` of `/proc/self/status`); `None` when unlimited
/// or unreadable.
pub fn rlimit_headroom(name: &str, in_use: &str) -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with(name))?;
    let soft: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used = status
        .lines()
        .find(|l| l.starts_with(in_use))?
        .split_whitespace()
        .nth(1)?
        .parse::<u64>()
        .ok()?
        * 1024;
    Some(soft.saturating_sub(used))
}

/// The headroom under the memory limit of this process's cgroup and its ancestors (v2:
/// `memory.max` less `memory.current`; v1: `memory.limit_in_bytes` less
/// `memory.usage_in_bytes`), the reclaimable page cache (`inactive_file` of
/// `memory.stat`) counted as free: what Slurm's `--mem` or a container's limit leaves.
/// `None` without a limit, or where it cannot be read.
pub fn cgroup_headroom() -> Option<u64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut best: Option<u64> = None;
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let (root, max, current, stat_key) = if controllers.is_empty() {
            (
                "/sys/fs/cgroup",
                "memory.max",
                "memory.current",
                "inactive_file",
            )
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                "/sys/fs/cgroup/memory",
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
                "total_inactive_file",
            )
        } else {
            continue;
        };
        let mut dir = std::path::PathBuf::from(format!("{root}{path}"));
        loop {
            let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
            let number = |t: Option<String>| t.and_then(|t| t.trim().parse::<u64>().ok());
            if let (Some(limit), Some(used)) = (number(read(max)), number(read(current))) {
                let cache = read("memory.stat")
                    .and_then(|t| {
                        t.lines()
                            .find_map(|l| l.strip_prefix(stat_key)?.trim().parse::<u64>().ok())
                    })
                    .unwrap_or(0);
                // cgroup v1 writes "no limit" as the largest page-aligned i64.
                if limit < (1 << 62) {
                    let room = limit.saturating_sub(used.saturating_sub(cache));
                    best = Some(best.map_or(room, |b| b.min(room)));
                }
            }
            if dir.as_os_str().len() <= root.len() || !dir.pop() {
                break;
            }
        }
    }
    best
}

/// The limit in force and where it comes from, if any: the tightest of `--memory-limit`,
/// the memory available (`MemAvailable`), the headroom under `ulimit -v` and `ulimit -d`,
/// and the cgroup's.
pub fn limit() -> Option<(u64, &'static str)> {
    [
        configured_limit().map(|b| (b, "--memory-limit")),
        available_bytes().map(|b| (b, "memory available (MemAvailable)")),
        rlimit_headroom("Max address space", "VmSize:")
            .map(|b| (b, "address space left under this process's RLIMIT_AS (ulimit -v)")),
        rlimit_headroom("Max data size", "VmData:")
            .map(|b| (b, "data segment left under this process's RLIMIT_DATA (ulimit -d)")),
        cgroup_headroom().map(|b| (b, "memory left in this process's cgroup (memory.max: Slurm --mem, a container's limit)")),
    ]
    .into_iter()
    .flatten()
    .min_by_key(|(b, _)| *b)
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
