//! The module `driftlab._driftlab` (see the crate documentation).

pub mod callables;
pub mod catalog;
pub mod convert;
pub mod simulate;
pub mod sweep;
pub mod tune;
pub mod vecenv;

use pyo3::prelude::*;

pyo3::create_exception!(
    _driftlab,
    InputError,
    pyo3::exceptions::PyValueError,
    "Bad input: the message names the argument or field and the fix (the command line's exit status 2)."
);
pyo3::create_exception!(
    _driftlab,
    RunError,
    pyo3::exceptions::PyRuntimeError,
    "Results could not be written or read (the command line's exit status 1)."
);

/// `InputError` with `msg`.
pub(crate) fn input_error(msg: impl std::fmt::Display) -> PyErr {
    InputError::new_err(msg.to_string())
}

/// The extension module.
#[pymodule]
fn _driftlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("RunError", py.get_type::<RunError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SCHEMA_VERSION", driftlab_runner::spec::SCHEMA_VERSION)?;
    m.add_function(wrap_pyfunction!(catalog::problems_json, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::methods_json, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::describe_json, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::run, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::report, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::check_folder, m)?)?;
    m.add_function(wrap_pyfunction!(tune::tune_json, m)?)?;
    m.add_class::<vecenv::VecEnv>()?;
    m.add_class::<callables::CallableProblem>()?;
    m.add_function(wrap_pyfunction!(callables::simulate_callables, m)?)?;
    m.add_function(wrap_pyfunction!(callables::check_callables, m)?)?;
    m.add_function(wrap_pyfunction!(callables::check_start, m)?)?;
    Ok(())
}
