//! The `driftlab` binary: the command line of [`driftlab_cli`] over driftlab's own catalogs.

/// Counts heap bytes per thread, for the runs table's `peak_heap_bytes` column.
#[global_allocator]
static ALLOC: driftlab_runner::memory::CountingAllocator =
    driftlab_runner::memory::CountingAllocator;

fn main() -> std::process::ExitCode {
    driftlab_cli::main_with(driftlab_runner::Registry::with_defaults())
}
