//! driftlab from Python: the extension module `driftlab._driftlab` behind the package
//! `driftlab` (`crates/python/python/driftlab`), built by maturin with the feature
//! `python` (`scripts/python-setup.sh`, or `pip install ./crates/python`).
//!
//! Without the feature the crate is empty, so that the workspace's README commands build
//! and test without a Python toolchain. With it, the module offers:
//!
//! * the catalogs and `describe` (`src/py/catalog.rs`);
//! * `simulate`: one run through the runner's `drive_cell`, the same cell as
//!   `driftlab simulate`, every step's state as NumPy arrays (`src/py/simulate.rs`);
//! * `run` and `report`: a spec (a file or a dict) into a result folder, stoppable with
//!   Ctrl-C, and the report of a folder (`src/py/sweep.rs`);
//! * `VecEnv`: the runner's vectorized environment for learning, stepped with the GIL
//!   released, observations written straight into NumPy arrays (`src/py/vecenv.rs`; a problem from Python callables: `src/py/callables.rs`).
//!
//! Errors: bad input raises `driftlab.InputError` (a `ValueError`) with the message the
//! command line prints for its exit status 2; a failed write raises `driftlab.RunError`
//! (exit status 1). A method that fails on a problem is a result, never an exception.

#[cfg(feature = "python")]
pub mod py;
