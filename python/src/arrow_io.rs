//! Arrow data across the Python boundary through the Arrow PyCapsule interface, so that no
//! particular Arrow library (pyarrow, polars, DuckDB, arro3, nanoarrow) is needed.
//!
//! In: [`import_source`] reads any object exporting `__arrow_c_stream__` (a pyarrow Table
//! or RecordBatchReader, a polars DataFrame, a DuckDB relation, an arro3 table, an
//! [`ArrowStream`]) or `__arrow_c_array__` (a record batch), or an iterable of such
//! objects, as one stream of record batches. Nothing is collected: a C stream is pulled
//! batch by batch by the writer (with the GIL released; producers that need it take it
//! themselves), an iterable is advanced one item at a time with the GIL taken for just that.
//!
//! Out: [`ArrowStream`] wraps an engine stream (a scan, a change feed) and exports it once
//! through `__arrow_c_stream__`; [`ArrowSchema`] exports a schema through
//! `__arrow_c_schema__`.
//!
//! Capsule ownership follows the interface: a consumer moves the C struct out of the
//! capsule (leaving it released), and the capsule's destructor releases what was not moved.

use std::ffi::CStr;
use std::sync::{Arc, Mutex};

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema, from_ffi};
use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{Array, RecordBatch, RecordBatchIterator, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, Schema, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyTuple};

use crate::blocking::{self, Interrupt};
use crate::errors::invalid_input;

const STREAM: &CStr = c"arrow_array_stream";
const SCHEMA: &CStr = c"arrow_schema";
const ARRAY: &CStr = c"arrow_array";

/// A boxed engine or imported stream.
pub(crate) type BoxReader = Box<dyn RecordBatchReader + Send>;

/// A stream of Arrow record batches from alluvium (a scan, a change feed), read once.
///
/// It implements the Arrow PyCapsule stream interface, so `pyarrow.table(s)`,
/// `polars.from_arrow(s)`, `duckdb.sql("SELECT ... FROM s")` and arro3 take it directly;
/// `read_all()` and `to_pyarrow_table()` (in the Python layer) need pyarrow.
#[pyclass(module = "alluvium._native", frozen, subclass)]
pub(crate) struct ArrowStream {
    schema: SchemaRef,
    reader: Mutex<Option<BoxReader>>,
}

impl ArrowStream {
    /// A stream over `reader`.
    pub(crate) fn new(reader: BoxReader) -> ArrowStream {
        ArrowStream {
            schema: reader.schema(),
            reader: Mutex::new(Some(reader)),
        }
    }

    fn take(&self) -> PyResult<BoxReader> {
        let mut guard = self
            .reader
            .lock()
            .map_err(|_| invalid_input("the stream's lock is poisoned"))?;
        guard.take().ok_or_else(|| {
            invalid_input("this ArrowStream was already consumed (a stream is read once)")
        })
    }
}

#[pymethods]
impl ArrowStream {
    /// Exports the stream (once) as an `ArrowArrayStream` capsule. `requested_schema` is
    /// accepted and ignored, as the interface allows: the batches keep their schema.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = self.take()?;
        PyCapsule::new_with_value(py, FFI_ArrowArrayStream::new(reader), STREAM)
    }

    /// Exports the stream's schema as an `ArrowSchema` capsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }

    /// The schema of every batch.
    #[getter]
    fn schema(&self) -> ArrowSchema {
        ArrowSchema(self.schema.clone())
    }

    /// Whether the stream was read (or exported) already.
    #[getter]
    fn consumed(&self) -> bool {
        self.reader.lock().map(|r| r.is_none()).unwrap_or(true)
    }

    /// Reads every batch (with the GIL released, stopping on Ctrl-C between batches) and
    /// returns a new stream over them, all in memory: the Python layer's `read_all()`
    /// hands it to pyarrow.
    fn _drain(&self, py: Python<'_>) -> PyResult<ArrowStream> {
        let mut reader = self.take()?;
        let schema = self.schema.clone();
        let batches = blocking::run(py, move |interrupt| {
            let mut out = Vec::new();
            for batch in reader.by_ref() {
                if interrupt.is_set() {
                    return Err(invalid_input("interrupted"));
                }
                out.push(batch.map_err(|e| crate::errors::to_py(e.into()))?);
            }
            Ok(out)
        })?;
        Ok(ArrowStream::new(Box::new(RecordBatchIterator::new(
            batches.into_iter().map(Ok),
            schema,
        ))))
    }

    /// Reads the whole stream into a `pyarrow.Table` (needs pyarrow). The batches are
    /// read with the GIL released; Ctrl-C stops between batches.
    fn read_all<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pyarrow = import_pyarrow(py, "read_all()")?;
        let drained = Bound::new(py, self._drain(py)?)?;
        pyarrow.call_method1("table", (drained,))
    }

    /// [`read_all`](Self::read_all) by deltalake's name.
    fn to_pyarrow_table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.read_all(py)
    }

    fn __repr__(&self) -> String {
        format!("ArrowStream({})", schema_text(&self.schema))
    }
}

/// The pyarrow module, or an `ImportError` saying what needs it and what works without.
fn import_pyarrow<'py>(py: Python<'py>, what: &str) -> PyResult<Bound<'py, PyModule>> {
    py.import("pyarrow").map_err(|_| {
        pyo3::exceptions::PyImportError::new_err(format!(
            "{what} needs pyarrow (pip install pyarrow); without it, pass the stream to any consumer of the Arrow PyCapsule interface: polars.from_arrow(s), duckdb.sql('SELECT * FROM s'), arro3"
        ))
    })
}

/// An Arrow schema, exported through `__arrow_c_schema__` (`pyarrow.schema(s)` takes it).
#[pyclass(module = "alluvium._native", frozen)]
pub(crate) struct ArrowSchema(pub(crate) SchemaRef);

#[pymethods]
impl ArrowSchema {
    /// Exports the schema as an `ArrowSchema` capsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.0)
    }

    /// The column names, in order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.0.fields().iter().map(|f| f.name().clone()).collect()
    }

    fn __repr__(&self) -> String {
        format!("ArrowSchema({})", schema_text(&self.0))
    }
}

fn schema_text(schema: &Schema) -> String {
    schema
        .fields()
        .iter()
        .map(|f| format!("{}: {}", f.name(), f.data_type()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn schema_capsule<'py>(py: Python<'py>, schema: &Schema) -> PyResult<Bound<'py, PyCapsule>> {
    let ffi = FFI_ArrowSchema::try_from(schema)
        .map_err(|e| invalid_input(format!("cannot export the schema: {e}")))?;
    PyCapsule::new_with_value(py, ffi, SCHEMA)
}

/// The schema an object exports through `__arrow_c_schema__` (a pyarrow or arro3 schema, an
/// `ArrowSchema`, or a table or stream object that has one).
pub(crate) fn import_schema(obj: &Bound<'_, PyAny>) -> PyResult<SchemaRef> {
    if !obj.hasattr("__arrow_c_schema__")? {
        return Err(invalid_input(format!(
            "expected an Arrow schema (an object with __arrow_c_schema__, such as a pyarrow.Schema), got {}",
            type_name(obj)
        )));
    }
    let capsule = obj.call_method0("__arrow_c_schema__")?;
    let capsule = capsule.cast::<PyCapsule>()?;
    let ptr = capsule.pointer_checked(Some(SCHEMA))?;
    // SAFETY: a capsule named `arrow_schema` holds an `ArrowSchema` C struct (the
    // interface's contract); it is borrowed, and the capsule keeps owning it.
    let ffi = unsafe { ptr.cast::<FFI_ArrowSchema>().as_ref() };
    let schema = Schema::try_from(ffi)
        .map_err(|e| invalid_input(format!("cannot import the Arrow schema: {e}")))?;
    Ok(Arc::new(schema))
}

/// The Delta schema JSON (`schemaString`) of the Arrow schema `obj` exports through
/// `__arrow_c_schema__`: the schema a table created with it has.
#[pyfunction]
pub(crate) fn delta_schema_json(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let schema = import_schema(obj)?;
    let delta = alluvium::from_arrow_schema(&schema).map_err(|e| {
        invalid_input(format!(
            "cannot read the Arrow schema as a Delta schema: {e}"
        ))
    })?;
    Ok(delta.to_json())
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .fully_qualified_name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an unknown object".into())
}

/// `obj` as one stream of record batches (see the module documentation).
///
/// # Errors
/// `InvalidInputError` for an object that exports no Arrow data, an array that is not a
/// record batch (a struct array), an empty iterable (no schema to take), and the
/// producer's own failures.
pub(crate) fn import_source(obj: &Bound<'_, PyAny>) -> PyResult<BoxReader> {
    if obj.hasattr("__arrow_c_stream__")? {
        return import_stream(obj);
    }
    if obj.hasattr("__arrow_c_array__")? {
        let batch = import_batch(obj)?;
        let schema = batch.schema();
        return Ok(Box::new(RecordBatchIterator::new([Ok(batch)], schema)));
    }
    let is_text = obj.is_instance_of::<pyo3::types::PyString>()
        || obj.is_instance_of::<pyo3::types::PyBytes>();
    if !is_text && let Ok(iter) = obj.try_iter() {
        return import_iterable(iter.into_any());
    }
    Err(invalid_input(format!(
        "expected Arrow data (an object with __arrow_c_stream__ or __arrow_c_array__, such as a pyarrow Table or RecordBatchReader, a polars DataFrame, a DuckDB relation or an arro3 Table) or an iterable of such objects, got {}",
        type_name(obj)
    )))
}

fn import_stream(obj: &Bound<'_, PyAny>) -> PyResult<BoxReader> {
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>()?;
    let ptr = capsule.pointer_checked(Some(STREAM))?;
    // SAFETY: a capsule named `arrow_array_stream` holds an `ArrowArrayStream` (the
    // interface's contract); `from_raw` moves it out and marks the capsule's copy
    // released, so the capsule's destructor does not release it again.
    let stream = unsafe { FFI_ArrowArrayStream::from_raw(ptr.cast().as_ptr()) };
    let reader = RecordBatchStreamReader::try_new(stream)
        .map_err(|e| invalid_input(format!("cannot import the Arrow stream: {e}")))?;
    Ok(Box::new(reader))
}

fn import_batch(obj: &Bound<'_, PyAny>) -> PyResult<RecordBatch> {
    let pair = obj.call_method0("__arrow_c_array__")?;
    let pair = pair.cast::<PyTuple>()?;
    if pair.len() != 2 {
        return Err(invalid_input(
            "__arrow_c_array__ must return (schema capsule, array capsule)",
        ));
    }
    let schema_capsule = pair.get_item(0)?;
    let schema_capsule = schema_capsule.cast::<PyCapsule>()?;
    let array_capsule = pair.get_item(1)?;
    let array_capsule = array_capsule.cast::<PyCapsule>()?;
    let schema_ptr = schema_capsule.pointer_checked(Some(SCHEMA))?;
    let array_ptr = array_capsule.pointer_checked(Some(ARRAY))?;
    // SAFETY: the capsules hold an `ArrowSchema` and an `ArrowArray` (the interface's
    // contract). The schema is borrowed; the array is moved out (its capsule copy is left
    // released) and imported against the schema.
    let data = unsafe {
        let schema = schema_ptr.cast::<FFI_ArrowSchema>().as_ref();
        let array = FFI_ArrowArray::from_raw(array_ptr.cast().as_ptr());
        from_ffi(array, schema)
    }
    .map_err(|e| invalid_input(format!("cannot import the Arrow array: {e}")))?;
    let array = arrow_array::make_array(data);
    let Some(columns) = array.as_any().downcast_ref::<StructArray>() else {
        return Err(invalid_input(format!(
            "expected a record batch (a struct array), got an array of {}",
            array.data_type()
        )));
    };
    Ok(RecordBatch::from(columns.clone()))
}

/// An iterable of Arrow objects, advanced one item at a time.
struct IterableSource {
    iter: Py<PyAny>,
    schema: SchemaRef,
    current: Option<BoxReader>,
}

fn import_iterable(iter: Bound<'_, PyAny>) -> PyResult<BoxReader> {
    let first = match iter.call_method0("__next__") {
        Ok(item) => item,
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyStopIteration>(iter.py()) => {
            return Err(invalid_input(
                "the data is an empty sequence: there is no schema to take; pass an Arrow table or stream (it may have no rows)",
            ));
        }
        Err(e) => return Err(e),
    };
    let current = import_item(&first)?;
    Ok(Box::new(IterableSource {
        schema: current.schema(),
        iter: iter.unbind(),
        current: Some(current),
    }))
}

fn import_item(item: &Bound<'_, PyAny>) -> PyResult<BoxReader> {
    if item.hasattr("__arrow_c_stream__")? {
        return import_stream(item);
    }
    if item.hasattr("__arrow_c_array__")? {
        let batch = import_batch(item)?;
        let schema = batch.schema();
        return Ok(Box::new(RecordBatchIterator::new([Ok(batch)], schema)));
    }
    Err(invalid_input(format!(
        "every item of the data must export Arrow data (__arrow_c_stream__ or __arrow_c_array__), got {}",
        type_name(item)
    )))
}

impl Iterator for IterableSource {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(current) = &mut self.current {
                match current.next() {
                    Some(item) => return Some(item),
                    None => self.current = None,
                }
            }
            let next = Python::attach(|py| -> PyResult<Option<BoxReader>> {
                match self.iter.bind(py).call_method0("__next__") {
                    Ok(item) => import_item(&item).map(Some),
                    Err(e) if e.is_instance_of::<pyo3::exceptions::PyStopIteration>(py) => Ok(None),
                    Err(e) => Err(e),
                }
            });
            match next {
                Ok(Some(reader)) => self.current = Some(reader),
                Ok(None) => return None,
                // The Python exception travels to the writer as the source's failure and
                // comes back to the caller as itself.
                Err(e) => return Some(Err(ArrowError::ExternalError(Box::new(e)))),
            }
        }
    }
}

impl RecordBatchReader for IterableSource {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// A source that stops with `KeyboardInterrupt` once the operation's [`Interrupt`] is
/// raised: a write consuming it then fails before the next batch, deleting what it wrote.
pub(crate) struct Interruptible {
    inner: BoxReader,
    interrupt: Interrupt,
}

impl Interruptible {
    /// `inner`, stopping when `interrupt` is raised.
    pub(crate) fn new(inner: BoxReader, interrupt: &Interrupt) -> Interruptible {
        Interruptible {
            inner,
            interrupt: interrupt.clone(),
        }
    }
}

impl Iterator for Interruptible {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.interrupt.is_set() {
            let stop = pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted");
            return Some(Err(ArrowError::ExternalError(Box::new(stop))));
        }
        self.inner.next()
    }
}

impl RecordBatchReader for Interruptible {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
}
