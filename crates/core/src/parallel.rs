//! The threads a cell may use inside itself, for the code that runs under [`drive`]
//! (a problem's model functions over independent groups, the KKT groups).
//!
//! The runner runs a cell of `threads = 1` on a worker of its side-by-side pool, next to
//! other cells, and a cell of `threads = k ≥ 2` alone on a pool of `k` threads of its
//! own. Parallel code inside a cell must only fan out in the second case, or it would
//! take a core from a neighbouring cell and put that cell's work into its own timing.
//! [`drive`] states the cell's count for the thread that runs the time loop
//! ([`Schedule::threads`](crate::drive::Schedule::threads)); code under it asks
//! [`in_cell_threads`] and fans out on the current rayon pool only when it is ≥ 2.
//!
//! [`drive`]: crate::drive::drive

use std::cell::Cell;

thread_local! {
    static IN_CELL: Cell<usize> = const { Cell::new(1) };
}

/// The threads the running cell may use inside itself (1 outside [`drive`] and for
/// sequential cells).
///
/// [`drive`]: crate::drive::drive
pub fn in_cell_threads() -> usize {
    IN_CELL.with(Cell::get)
}

/// Run `f` with [`in_cell_threads`] = `threads` on this thread (restored afterwards, also
/// when `f` panics).
pub fn with_in_cell_threads<R>(threads: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            IN_CELL.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(IN_CELL.with(|c| c.replace(threads.max(1))));
    f()
}

#[cfg(test)]
mod tests {
    use super::{in_cell_threads, with_in_cell_threads};

    #[test]
    fn the_count_holds_inside_and_is_restored_after_a_panic() {
        assert_eq!(in_cell_threads(), 1);
        assert_eq!(with_in_cell_threads(2, in_cell_threads), 2);
        let caught = std::panic::catch_unwind(|| with_in_cell_threads(4, || panic!("x")));
        assert!(caught.is_err());
        assert_eq!(in_cell_threads(), 1);
    }
}
