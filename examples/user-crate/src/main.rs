//! `my-driftlab`: driftlab's whole command line (`list`, `describe`, `run`, `simulate`,
//! `report`) over driftlab's catalogs plus this crate's own problem and method — without
//! editing a file of driftlab:
//!
//! ```text
//! cargo run -p driftlab-example-user -- run examples/user-crate/dumbbell-orders.toml
//! cargo run -p driftlab-example-user -- report --dir reports
//! ```

use driftlab_example_user::registry;

fn main() -> std::process::ExitCode {
    driftlab_cli::main_with(registry())
}
