//! Measured heap use per cell, and the memory available to a sweep.
//!
//! [`CountingAllocator`] wraps the system allocator and keeps, per thread, the bytes
//! currently allocated by that thread and their high-water mark. A binary opts in with
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: driftlab_runner::memory::CountingAllocator = driftlab_runner::memory::CountingAllocator;
//! ```
//!
//! (the `driftlab` binary does), and [`measure_peak`] then returns the peak heap bytes a
//! closure added on its thread — the `peak_heap_bytes` column. A cell runs on one thread
//! (faer's own workers only touch preallocated workspace), so cells side by side do not
//! see each other's allocations. Without the allocator the column is null.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

static INSTALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Bytes allocated minus bytes freed on this thread.
    static CURRENT: Cell<i64> = const { Cell::new(0) };
    /// High-water mark of `CURRENT` since the last [`measure_peak`] began.
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

/// The system allocator, counting bytes per thread (see the module documentation).
pub struct CountingAllocator;

fn count(delta: i64) {
    // `try_with`: during thread teardown the slots may be gone; the count is then lost,
    // which only affects a thread that no longer runs a cell.
    let _ = CURRENT.try_with(|c| {
        let now = c.get() + delta;
        c.set(now);
        let _ = PEAK.try_with(|p| {
            if now > p.get() {
                p.set(now);
            }
        });
    });
}

// SAFETY: every call forwards to `System` with the caller's layout unchanged; the
// counting touches only const-initialized thread-locals without destructors, which
// never allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        INSTALLED.store(true, Ordering::Relaxed);
        // SAFETY: forwarded as is (see the impl).
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as i64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        INSTALLED.store(true, Ordering::Relaxed);
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as i64));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as i64 - layout.size() as i64);
        }
        p
    }
}

/// Run `f` and return its result with the peak heap bytes it added on this thread above
/// what the thread held when it began (`None` when the binary does not use
/// [`CountingAllocator`]).
pub fn measure_peak<R>(f: impl FnOnce() -> R) -> (R, Option<u64>) {
    let start = CURRENT.with(Cell::get);
    let outer_peak = PEAK.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let r = f();
    let peak = PEAK.with(Cell::get);
    // Nested measurements: the outer one still sees this peak.
    PEAK.with(|p| p.set(outer_peak.max(peak)));
    let added = (peak - start).max(0) as u64;
    (r, INSTALLED.load(Ordering::Relaxed).then_some(added))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_is_none_without_the_allocator() {
        // The test binary uses the system allocator: nothing is counted.
        let (v, peak) = measure_peak(|| vec![0u8; 1 << 20]);
        assert_eq!(v.len(), 1 << 20);
        assert_eq!(peak, None);
    }
}
