//! Distributed writes from Python (SPEC.md §33): the worker's half
//! ([`write_data_files`]: data files and their add actions, nothing committed), the
//! driver's half ([`commit_files`]: every worker's adds in one commit, idempotent through
//! the application transaction) and the clean-up of a job that will not commit
//! ([`discard_files`]).
//!
//! Add actions cross into Python as their JSON text (the log's `add` action, without the
//! `{"add": ...}` wrapper): `alluvium.AddAction` wraps it, so that actions pickle and travel
//! between processes (Ray tasks, a driver) as plain strings, and come back here to be
//! parsed and checked by the engine, which trusts nothing a worker sends beyond their
//! well-formedness (path, partition values, statistics: see `Table::commit_files`).

use std::collections::HashSet;

use alluvium::{Add, CommitFilesOptions, CommitMode, FileLocation, StorePath, WriteOutcome};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrow_io::{Interruptible, import_source};
use crate::blocking;
use crate::errors::{IntoPy, invalid_input, to_py};
use crate::table::{RawTable, commit_options};

/// Writes `data` as data files of the table (its latest version's schema and partitioning)
/// without committing them; returns each file's add action as JSON text. The files this
/// call wrote are deleted when it fails (bad data, the source raising, Ctrl-C).
#[pyfunction]
#[pyo3(signature = (table, data, partition_by=None))]
pub(crate) fn write_data_files(
    py: Python<'_>,
    table: &Bound<'_, RawTable>,
    data: &Bound<'_, PyAny>,
    partition_by: Option<Vec<String>>,
) -> PyResult<Vec<String>> {
    let handle = table.get();
    let source = import_source(data)?;
    let adds = blocking::run(py, |interrupt| {
        let source = Interruptible::new(source, interrupt);
        handle
            .table
            .write_data_files(source, partition_by.as_deref())
            .py_err()
    })?;
    adds.iter()
        .map(|a| {
            serde_json::to_string(a)
                .map_err(|e| invalid_input(format!("add action of {}: {e}", a.path)))
        })
        .collect()
}

/// Parses add actions' JSON text; the error names the action (its position, and its path
/// when it has one).
fn parse_adds(actions: &[String]) -> PyResult<Vec<Add>> {
    actions
        .iter()
        .enumerate()
        .map(|(i, text)| {
            serde_json::from_str::<Add>(text).map_err(|e| {
                let path = serde_json::from_str::<serde_json::Value>(text)
                    .ok()
                    .and_then(|v| v.get("path").and_then(|p| p.as_str()).map(str::to_string));
                match path {
                    Some(p) => invalid_input(format!(
                        "add action {i} ({p}) is not a valid Delta add action: {e}"
                    )),
                    None => invalid_input(format!(
                        "add action {i} is not a valid Delta add action: {e}"
                    )),
                }
            })
        })
        .collect()
}

/// Commits `actions` (add actions' JSON text) in one commit, appending them or (mode
/// `overwrite`) replacing the table's contents with them, or only the partitions
/// `predicate` names, and the table's schema with `schema_json` (Delta schema JSON); an
/// append also removes the live files `removes` names. Returns what
/// happened:
/// `version`, `skipped` (the application transaction was already committed; then
/// `app_id`, `recorded_version` and nothing else was written), and for a commit the
/// counts `num_added_files`, `num_removed_files`, `num_added_bytes`, `num_removed_bytes`.
// The Python signature is the keyword list; a struct would only rename it.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (table, actions, mode_text="append", commit=None, allowed_locations=None, predicate=None, removes=None, schema_json=None))]
pub(crate) fn commit_files<'py>(
    py: Python<'py>,
    table: &Bound<'py, RawTable>,
    actions: Vec<String>,
    mode_text: &str,
    commit: Option<Bound<'py, PyDict>>,
    allowed_locations: Option<Vec<String>>,
    predicate: Option<String>,
    removes: Option<Vec<String>>,
    schema_json: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let mode = match mode_text {
        "append" => CommitMode::Append,
        "overwrite" => CommitMode::Overwrite,
        other => {
            return Err(invalid_input(format!(
                "mode must be 'append' or 'overwrite', got {other:?}"
            )));
        }
    };
    let mut options = CommitFilesOptions::default()
        .with_mode(mode)
        .with_allowed_locations(allowed_locations.unwrap_or_default())
        .with_removes(removes.unwrap_or_default())
        .with_write(commit_options(commit.as_ref())?);
    if let Some(p) = predicate {
        options = options.with_replace_where(p);
    }
    if let Some(text) = schema_json {
        let schema = alluvium::StructType::from_json(&text)
            .map_err(|e| invalid_input(format!("schema is not a Delta schema: {e}")))?;
        options = options.with_schema(schema);
    }
    let adds = parse_adds(&actions)?;
    let handle = table.get();
    let outcome = blocking::run(py, |_| {
        let outcome = handle.table.commit_files(adds, &options).py_err()?;
        handle.after_commit(&outcome).py_err()?;
        Ok(outcome)
    })?;
    let d = PyDict::new(py);
    match outcome {
        WriteOutcome::Committed(summary) => {
            d.set_item("version", summary.version)?;
            d.set_item("skipped", false)?;
            d.set_item("num_added_files", summary.files_added)?;
            d.set_item("num_removed_files", summary.files_removed)?;
            d.set_item("num_added_bytes", summary.bytes_added)?;
            d.set_item("num_removed_bytes", summary.bytes_removed)?;
        }
        WriteOutcome::Skipped {
            app_id,
            recorded_version,
            table_version,
        } => {
            d.set_item("version", py.None())?;
            d.set_item("skipped", true)?;
            d.set_item("app_id", app_id)?;
            d.set_item("recorded_version", recorded_version)?;
            d.set_item("table_version", table_version)?;
        }
    }
    Ok(d)
}

/// Deletes data files that were written for the table (by [`write_data_files`]) and that
/// no commit will reference: the clean-up of a distributed job that failed. `paths` are
/// the add actions' paths. Refuses, before deleting anything, a path outside the table
/// root, one that is not a data file (`.parquet`, outside `_delta_log/` and
/// `_change_data/`), and one the latest version references (live, or removed within the
/// retention, which time travel still reads): this never deletes table data.
/// Missing files count as deleted. Returns how many paths were given.
#[pyfunction]
pub(crate) fn discard_files(
    py: Python<'_>,
    table: &Bound<'_, RawTable>,
    paths: Vec<String>,
) -> PyResult<usize> {
    let handle = table.get();
    blocking::run(py, |_| {
        let latest = handle.table.snapshot().py_err()?;
        // Live files, and removed ones still within retention (time travel reads them).
        let now = handle.table.store().now_ms();
        let kept: HashSet<String> = latest
            .files()
            .map(|a| a.path())
            .chain(latest.unexpired_tombstones(now).map(|r| r.path.as_str()))
            .filter_map(|p| latest.file_location_ref(p).ok())
            .map(|l| l.as_str().to_string())
            .collect();
        let mut targets: Vec<StorePath> = Vec::with_capacity(paths.len());
        for p in &paths {
            match latest.file_location(p).py_err()? {
                FileLocation::External(uri) => {
                    return Err(invalid_input(format!(
                        "cannot discard {uri}: only files under the table root are deleted; nothing was deleted"
                    )));
                }
                FileLocation::Table(path) => {
                    let name = path.as_str();
                    // Only data files: never the log, change data, deletion vectors.
                    if !name.ends_with(".parquet")
                        || name.starts_with("_delta_log/")
                        || name.starts_with("_change_data/")
                    {
                        return Err(invalid_input(format!(
                            "cannot discard {p}: not a data file of the table; nothing was deleted"
                        )));
                    }
                    if kept.contains(name) {
                        return Err(invalid_input(format!(
                            "cannot discard {p}: version {} of the table references it; nothing was deleted",
                            latest.version()
                        )));
                    }
                    targets.push(path);
                }
            }
        }
        for r in handle.table.store().delete_many(&targets) {
            r.map_err(|e| to_py(e.into()))?;
        }
        Ok(targets.len())
    })
}
