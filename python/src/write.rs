//! Writes from Python: `write_deltalake` and `DeltaTable.create` under the Python layer.
//!
//! The data is any Arrow source [`import_source`] accepts, streamed into the writer with
//! the GIL released; Ctrl-C stops the write before the next batch, and nothing is
//! committed or left behind. A write to a location without a table creates it with the
//! data in one commit (version 0), as deltalake does.

use std::collections::HashMap;

use alluvium::{ErrorKind, Table, WriteOptions, WriteOutcome};
use arrow_array::RecordBatchReader;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrow_io::{Interruptible, import_schema, import_source};
use crate::blocking;
use crate::errors::{IntoPy, invalid_input, to_py};
use crate::table::{RawTable, commit_options, open};

/// What a write does when a table is already there (deltalake's `mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Error,
    Append,
    Overwrite,
    Ignore,
}

fn mode(text: &str) -> PyResult<Mode> {
    match text {
        "error" => Ok(Mode::Error),
        "append" => Ok(Mode::Append),
        "overwrite" => Ok(Mode::Overwrite),
        "ignore" => Ok(Mode::Ignore),
        other => Err(invalid_input(format!(
            "mode must be 'error', 'append', 'overwrite' or 'ignore', got {other:?}"
        ))),
    }
}

fn exists_error(table: &Table) -> PyErr {
    to_py(alluvium::Error::from(
        alluvium::MvccError::TableAlreadyExists {
            location: table.uri(),
        },
    ))
}

/// Writes `data` to the table at `uri` (or through the handle `table`). Returns the
/// version committed, or `None` when nothing was (mode `ignore` on an existing table, or an
/// application transaction already recorded).
#[pyfunction]
#[pyo3(signature = (uri, data, mode_text="error", partition_by=None, predicate=None, merge_schema=false, configuration=None, target_file_size=None, storage_options=None, commit=None, table=None, overwrite_schema=false, compression=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_table(
    py: Python<'_>,
    uri: &str,
    data: &Bound<'_, PyAny>,
    mode_text: &str,
    partition_by: Option<Vec<String>>,
    predicate: Option<String>,
    merge_schema: bool,
    configuration: Option<HashMap<String, String>>,
    target_file_size: Option<u64>,
    storage_options: Option<HashMap<String, String>>,
    commit: Option<Bound<'_, PyDict>>,
    table: Option<Bound<'_, RawTable>>,
    overwrite_schema: bool,
    compression: Option<String>,
) -> PyResult<Option<u64>> {
    let mode = mode(mode_text)?;
    if predicate.is_some() && mode != Mode::Overwrite {
        return Err(invalid_input(
            "a predicate (replaceWhere) needs mode='overwrite'",
        ));
    }
    if overwrite_schema && (mode != Mode::Overwrite || predicate.is_some() || merge_schema) {
        return Err(invalid_input(
            "schema_mode='overwrite' replaces the whole table's schema: it needs mode='overwrite' and no predicate",
        ));
    }
    let mut options: WriteOptions = commit_options(commit.as_ref())?;
    options.merge_schema = merge_schema;
    options.target_file_size = target_file_size;
    options.compression = compression;
    let handle = table.map(Bound::unbind);
    let target = match &handle {
        Some(h) => h.get().table.clone(),
        None => open(uri, storage_options)?,
    };
    let source = import_source(data)?;
    let written = blocking::run(py, move |interrupt| {
        let source = Interruptible::new(source, interrupt);
        let current = match target.snapshot() {
            Ok(s) => Some(s),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(to_py(e)),
        };
        let outcome = match current {
            None => {
                if predicate.is_some() {
                    return Err(invalid_input(format!(
                        "no table at {}: an overwrite with a predicate replaces rows of an existing table",
                        target.uri()
                    )));
                }
                let schema = source.schema();
                target
                    .create_with_data(
                        &schema,
                        &partition_by.unwrap_or_default(),
                        &configuration.unwrap_or_default(),
                        source,
                        &options,
                    )
                    .py_err()?
            }
            Some(snapshot) => {
                match mode {
                    Mode::Error => return Err(exists_error(&target)),
                    Mode::Ignore => return Ok(None),
                    Mode::Append | Mode::Overwrite => {}
                }
                if overwrite_schema {
                    let schema = source.schema();
                    let options = options.with_read_snapshot(snapshot);
                    return target
                        .overwrite_with_schema(&schema, source, partition_by.as_deref(), &options)
                        .py_err()
                        .map(Some);
                }
                if let Some(p) = &partition_by {
                    let same = p.len() == snapshot.partition_columns().len()
                        && p.iter()
                            .zip(snapshot.partition_columns())
                            .all(|(a, b)| a.eq_ignore_ascii_case(b));
                    if !same {
                        return Err(invalid_input(format!(
                            "partition_by {:?} does not match the table's partition columns {:?}",
                            p,
                            snapshot.partition_columns()
                        )));
                    }
                }
                let options = options.with_read_snapshot(snapshot);
                match mode {
                    Mode::Overwrite => target
                        .overwrite_str(source, predicate.as_deref(), &options)
                        .py_err()?,
                    _ => target.append(source, &options).py_err()?,
                }
            }
        };
        Ok(Some(outcome))
    })?;
    if let Some(h) = handle {
        let h = h.get();
        match &written {
            Some(outcome) => blocking::run(py, |_| h.after_commit(outcome).py_err())?,
            // `mode="ignore"` on an existing table: nothing written.
            None => blocking::run(py, |_| h.reload_latest().py_err())?,
        }
    }
    Ok(written.and_then(|outcome| match outcome {
        WriteOutcome::Committed(summary) => Some(summary.version),
        WriteOutcome::Skipped { .. } => None,
    }))
}

/// Creates an empty table at `uri` with `schema` (anything exporting `__arrow_c_schema__`);
/// with mode `ignore` (or `append`) an existing table is opened instead, with mode
/// `overwrite` it is replaced (CREATE OR REPLACE TABLE).
#[pyfunction]
#[pyo3(signature = (uri, schema, mode_text="error", partition_by=None, configuration=None, storage_options=None, commit=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn create_table(
    py: Python<'_>,
    uri: &str,
    schema: &Bound<'_, PyAny>,
    mode_text: &str,
    partition_by: Option<Vec<String>>,
    configuration: Option<HashMap<String, String>>,
    storage_options: Option<HashMap<String, String>>,
    commit: Option<Bound<'_, PyDict>>,
) -> PyResult<RawTable> {
    let mode = mode(mode_text)?;
    let options = commit_options(commit.as_ref())?;
    let schema = import_schema(schema)?;
    let table = open(uri, storage_options)?;
    let t = table.clone();
    let snapshot = blocking::run(py, move |_| {
        let partition_by = partition_by.unwrap_or_default();
        let configuration = configuration.unwrap_or_default();
        let done = if mode == Mode::Overwrite {
            // CREATE OR REPLACE TABLE: a new, empty table on top of the old one's log.
            t.replace(&schema, &partition_by, &configuration, &options)
        } else {
            t.create_with_options(&schema, &partition_by, &configuration, &options)
        };
        match done {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::AlreadyExists && mode != Mode::Error => {}
            Err(e) => return Err(to_py(e)),
        }
        t.snapshot().py_err()
    })?;
    Ok(RawTable::new(table, snapshot))
}
