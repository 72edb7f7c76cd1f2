//! The one place where Rust errors become Python exceptions.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyErr;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario failed validation; the message names the field path and what is allowed."
);

pub fn scenario_error(e: xlayer_sim::ScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

pub fn finish_error(e: xlayer_sim::FinishError) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}
