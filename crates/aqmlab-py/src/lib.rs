//! Thin PyO3 bindings: scenario text in, results out as plain Python objects (the public API
//! is the Python package `aqmlab`; this module is private as `aqmlab._core`).

use aqmlab_core::results::Column;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::collections::HashMap;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario was rejected; `path` names the field."
);

fn scenario_err(py: Python<'_>, e: aqmlab_core::ScenarioError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    let value = err.value_bound(py);
    let _ = value.setattr("path", e.path.clone());
    let _ = value.setattr("line", e.line);
    let _ = value.setattr("detail", e.message.clone());
    err
}

/// Encodes a column compactly: ("f64", little-endian bytes), ("u64", bytes), or
/// ("cat", u32 codes as bytes, categories in order of first appearance).
fn column_to_py(py: Python<'_>, c: &Column) -> PyObject {
    match c {
        Column::F64(v) => {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            ("f64", PyBytes::new_bound(py, &bytes)).into_py(py)
        }
        Column::U64(v) => {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            ("u64", PyBytes::new_bound(py, &bytes)).into_py(py)
        }
        Column::Str(v) => {
            let mut index: HashMap<&str, u32> = HashMap::new();
            let mut categories: Vec<&str> = Vec::new();
            let mut codes: Vec<u8> = Vec::with_capacity(v.len() * 4);
            for s in v {
                let code = *index.entry(s.as_str()).or_insert_with(|| {
                    categories.push(s.as_str());
                    (categories.len() - 1) as u32
                });
                codes.extend_from_slice(&code.to_le_bytes());
            }
            (
                "cat",
                PyBytes::new_bound(py, &codes),
                PyList::new_bound(py, categories),
            )
                .into_py(py)
        }
    }
}

/// Runs a scenario given as TOML text; returns {"summary": json str, "resolved": toml str,
/// "tables": {name: {column: encoded column}}} (see `column_to_py`).
#[pyfunction]
#[pyo3(signature = (text, seed=None))]
fn run(py: Python<'_>, text: String, seed: Option<u64>) -> PyResult<PyObject> {
    let outcome = py.allow_threads(|| aqmlab_core::run(&text, seed));
    let results = match outcome {
        Ok(r) => r,
        Err(aqmlab_core::RunError::Scenario(e)) => return Err(scenario_err(py, e)),
        Err(e) => return Err(PyRuntimeError::new_err(e.to_string())),
    };
    let out = PyDict::new_bound(py);
    out.set_item("summary", results.summary.to_string())?;
    out.set_item("resolved", results.resolved_scenario)?;
    let tables = PyDict::new_bound(py);
    for (name, table) in &results.tables {
        let cols = PyDict::new_bound(py);
        for (cname, col) in &table.columns {
            cols.set_item(cname, column_to_py(py, col))?;
        }
        tables.set_item(name, cols)?;
    }
    out.set_item("tables", tables)?;
    Ok(out.into_py(py))
}

/// Validates a scenario without running it; returns the resolved scenario as TOML text.
#[pyfunction]
fn validate(py: Python<'_>, text: String) -> PyResult<String> {
    aqmlab_core::validate(&text).map_err(|e| scenario_err(py, e))
}

/// Registered queue disciplines as (name, description) pairs.
#[pyfunction]
fn qdiscs() -> Vec<(&'static str, &'static str)> {
    aqmlab_core::qdisc::REGISTRY.to_vec()
}

/// The private compiled module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(qdiscs, m)?)?;
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
