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

/// A stalled run is the scenario's doing (a model that stops simulated time), so it is a
/// ScenarioError like a validation failure; the others are the machine's or ours.
pub fn finish_error(e: xlayer_sim::FinishError) -> PyErr {
    match e {
        xlayer_sim::FinishError::Stalled(_) => ScenarioError::new_err(e.to_string()),
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}
