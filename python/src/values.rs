//! Python values as expression literals and JSON, and JSON as Python values.
//!
//! Literals: `None`, `bool`, `int`, `float`, `str`, `bytes`, `decimal.Decimal`,
//! `datetime.date` and `datetime.datetime`. Dates and times travel as their ISO text, which
//! the engine types by the column they meet (a `timestamp` column reads an aware datetime
//! at its instant and a naive one as UTC; a `timestamp_ntz` column reads the wall clock),
//! as SQL text would. JSON goes through Python's `json` module, so what it cannot encode
//! fails with its usual `TypeError`.

use alluvium::{Literal, Scalar};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyString};

use crate::errors::invalid_input;

/// The literal for the Python value `v`.
///
/// # Errors
/// `InvalidInputError` for a value of another type (a list, a dict, ...).
pub(crate) fn literal_of(v: &Bound<'_, PyAny>) -> PyResult<Literal> {
    if v.is_none() {
        return Ok(Literal::Null);
    }
    // bool before int: a Python bool is an int.
    if v.is_instance_of::<PyBool>() {
        return Ok(Literal::Boolean(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(Literal::Number(v.str()?.to_string()));
    }
    if v.is_instance_of::<PyFloat>() {
        let f: f64 = v.extract()?;
        return Ok(if f.is_finite() {
            // repr() is the shortest text that reads back as the same double.
            Literal::Number(v.repr()?.to_string())
        } else {
            Literal::Typed(Scalar::Double(f))
        });
    }
    if v.is_instance_of::<PyString>() {
        return Ok(Literal::String(v.extract()?));
    }
    if v.is_instance_of::<PyBytes>() {
        return Ok(Literal::Typed(Scalar::Binary(v.extract()?)));
    }
    let py = v.py();
    let datetime = py.import("datetime")?;
    // datetime before date: a datetime is a date.
    if v.is_instance(&datetime.getattr("datetime")?)? {
        let text: String = v.call_method1("isoformat", (" ",))?.extract()?;
        return Ok(Literal::String(text));
    }
    if v.is_instance(&datetime.getattr("date")?)? {
        return Ok(Literal::String(v.call_method0("isoformat")?.extract()?));
    }
    if v.is_instance(&py.import("decimal")?.getattr("Decimal")?)? {
        if !v.call_method0("is_finite")?.extract::<bool>()? {
            return Err(invalid_input(format!(
                "{} is not a finite decimal",
                v.str()?
            )));
        }
        return Ok(Literal::Number(v.str()?.to_string()));
    }
    Err(invalid_input(format!(
        "cannot use a value of type {} here (expected None, bool, int, float, str, bytes, Decimal, date or datetime)",
        v.get_type().name()?
    )))
}

/// The JSON value of a Python object (through `json.dumps`).
pub(crate) fn to_json(v: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    let text: String = v
        .py()
        .import("json")?
        .call_method1("dumps", (v,))?
        .extract()?;
    serde_json::from_str(&text).map_err(|e| invalid_input(format!("not JSON: {e}")))
}

/// The Python object of a JSON value (through `json.loads`).
pub(crate) fn from_json<'py>(
    py: Python<'py>,
    v: &serde_json::Value,
) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(v).map_err(|e| invalid_input(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// The Python object of anything serialisable (a report).
pub(crate) fn from_serialize<'py, T: serde::Serialize>(
    py: Python<'py>,
    v: &T,
) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(v).map_err(|e| invalid_input(e.to_string()))?;
    from_json(py, &value)
}
