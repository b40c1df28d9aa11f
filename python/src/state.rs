//! The keyed state store (`alluvium.StateStore`): events appended to a log table, folded
//! into a state table by `sync`, point lookups and scans of any synced version.

use std::collections::HashMap;

use alluvium_state::{StateAt, StateOptions, StateStore};
use arrow_array::{RecordBatch, RecordBatchIterator};
use pyo3::prelude::*;

use crate::arrow_io::{ArrowStream, import_schema, import_source};
use crate::blocking;
use crate::errors::{StateIntoPy, invalid_input, to_py};
use crate::values::from_serialize;

fn options(storage_options: Option<HashMap<String, String>>) -> StateOptions {
    let mut o = StateOptions::default();
    for (k, v) in storage_options.unwrap_or_default() {
        o = o.with_storage_option(&k, &v);
    }
    o
}

fn at(version: Option<i64>, timestamp_ms: Option<i64>) -> PyResult<StateAt> {
    match (version, timestamp_ms) {
        (Some(_), Some(_)) => Err(invalid_input("give a version or a timestamp, not both")),
        (Some(v), None) => Ok(StateAt::Version(v)),
        (None, Some(t)) => Ok(StateAt::Timestamp(t)),
        (None, None) => Ok(StateAt::Latest),
    }
}

/// Reads every batch of `data` (keys or events are small: they are held in memory).
fn batches(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Vec<RecordBatch>> {
    let reader = import_source(data)?;
    blocking::run(py, move |_| {
        reader
            .map(|b| b.map_err(|e| to_py(e.into())))
            .collect::<PyResult<Vec<_>>>()
    })
}

/// One batch of `data`'s rows (for keys).
fn one_batch(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<RecordBatch> {
    let all = batches(py, data)?;
    let schema = match all.first() {
        Some(b) => b.schema(),
        None => return Err(invalid_input("no keys given")),
    };
    arrow_select_concat(&schema, &all)
}

fn arrow_select_concat(
    schema: &arrow_schema::SchemaRef,
    batches: &[RecordBatch],
) -> PyResult<RecordBatch> {
    arrow_select::concat::concat_batches(schema, batches)
        .map_err(|e| invalid_input(format!("the keys do not form one table: {e}")))
}

fn stream_of(batch: RecordBatch) -> ArrowStream {
    let schema = batch.schema();
    ArrowStream::new(Box::new(RecordBatchIterator::new([Ok(batch)], schema)))
}

/// A state store handle.
#[pyclass(module = "alluvium._native", frozen)]
pub(crate) struct RawStateStore {
    store: StateStore,
}

#[pymethods]
impl RawStateStore {
    /// Creates a store at `location` keyed by `key_columns`, with the value columns of
    /// `value_schema` (anything exporting `__arrow_c_schema__`).
    #[staticmethod]
    #[pyo3(signature = (location, key_columns, value_schema, storage_options=None))]
    fn create(
        py: Python<'_>,
        location: String,
        key_columns: Vec<String>,
        value_schema: &Bound<'_, PyAny>,
        storage_options: Option<HashMap<String, String>>,
    ) -> PyResult<RawStateStore> {
        let schema = import_schema(value_schema)?;
        let options = options(storage_options);
        let store = blocking::run(py, move |_| {
            let keys: Vec<&str> = key_columns.iter().map(String::as_str).collect();
            StateStore::create(&location, &keys, schema, options).py_err()
        })?;
        Ok(RawStateStore { store })
    }

    /// Opens the store at `location`.
    #[staticmethod]
    #[pyo3(signature = (location, storage_options=None))]
    fn open(
        py: Python<'_>,
        location: String,
        storage_options: Option<HashMap<String, String>>,
    ) -> PyResult<RawStateStore> {
        let options = options(storage_options);
        let store = blocking::run(py, move |_| StateStore::open(&location, options).py_err())?;
        Ok(RawStateStore { store })
    }

    /// The key columns.
    #[getter]
    fn key_columns(&self) -> Vec<String> {
        self.store.key_columns().to_vec()
    }

    /// Appends events; with `app_id` and `app_version`, idempotently.
    #[pyo3(signature = (data, app_id=None, app_version=None))]
    fn put<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        app_id: Option<String>,
        app_version: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let idempotency = match (&app_id, app_version) {
            (Some(id), Some(v)) => Some((id.clone(), v)),
            (None, None) => None,
            _ => {
                return Err(invalid_input(
                    "give both app_id and app_version, or neither",
                ));
            }
        };
        let events = batches(py, data)?;
        let report = blocking::run(py, |_| {
            self.store
                .put(
                    &events,
                    idempotency.as_ref().map(|(id, v)| (id.as_str(), *v)),
                )
                .py_err()
        })?;
        from_serialize(py, &report)
    }

    /// Folds the unsynced events into the state.
    fn sync<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let report = blocking::run(py, |_| self.store.sync().py_err())?;
        from_serialize(py, &report)
    }

    /// The state rows of `keys` (a table with the key columns).
    #[pyo3(signature = (keys, version=None, timestamp_ms=None))]
    fn get(
        &self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        version: Option<i64>,
        timestamp_ms: Option<i64>,
    ) -> PyResult<ArrowStream> {
        let at = at(version, timestamp_ms)?;
        let keys = one_batch(py, keys)?;
        let rows = blocking::run(py, |_| self.store.get(&keys, at).py_err())?;
        Ok(stream_of(rows))
    }

    /// Every state row, as a stream.
    #[pyo3(signature = (version=None, timestamp_ms=None))]
    fn scan(
        &self,
        py: Python<'_>,
        version: Option<i64>,
        timestamp_ms: Option<i64>,
    ) -> PyResult<ArrowStream> {
        let at = at(version, timestamp_ms)?;
        let reader = blocking::run(py, |_| self.store.scan(at).py_err())?;
        Ok(ArrowStream::new(reader))
    }

    /// Every retained event of one key, in order.
    fn history(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<ArrowStream> {
        let key = one_batch(py, key)?;
        let rows = blocking::run(py, |_| self.store.history(&key).py_err())?;
        Ok(stream_of(rows))
    }

    /// Versions, lag, key count.
    fn status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let status = blocking::run(py, |_| self.store.status().py_err())?;
        from_serialize(py, &status)
    }
}
