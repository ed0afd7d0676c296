//! The `driftlab` binary: the command line of [`driftlab_cli`] over driftlab's own catalogs.

fn main() -> std::process::ExitCode {
    driftlab_cli::main_with(driftlab_runner::Registry::with_defaults())
}
