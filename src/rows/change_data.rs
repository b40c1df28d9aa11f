//! Writing the change data feed (PROTOCOL.md "Change Data Files", "Add CDC File",
//! "Writer Requirements for AddCDCFile"; SPEC.md §25):
//! the cdc files an operation that changes part of a file writes on a table with
//! `delta.enableChangeDataFeed=true`, and their `cdc` actions.
//!
//! What each operation records (SPEC.md "Change data feed (writing)"):
//! * copy-on-write DELETE: every deleted row as `delete` once any file is rewritten in
//!   part (whole-file removals then also go through the cdc files, as in Delta Spark,
//!   whose DELETE rewrites every file with a matching row); a DELETE that only removes
//!   whole files, and every deletion-vector DELETE, writes none (readers derive `delete`
//!   rows from the removes and the DV differences, as for Delta Spark's DV DELETE);
//! * UPDATE (both modes): `update_preimage` and `update_postimage` for every updated row;
//! * MERGE whose clauses can change existing rows (both modes): pre/post images,
//!   `delete` and `insert` rows, i.e. every change of the commit; an insert-only MERGE
//!   writes none (it is an append);
//! * copy-on-write replaceWhere (`ops::write::remove_matching`): as DELETE, and then the new
//!   rows as `insert` too;
//! * appends, full overwrites and OPTIMIZE: none.
//!
//! Rows stream into a [`FileSink`] in change-data mode (memory: the open cdc files, at
//! most the target size per partition), never collected. The files are uploaded before
//! the commit and deleted again when the operation fails or the commit does not land
//! (`Transaction` discards them), so a cdc file of an unacknowledged commit is never
//! referenced.

use std::sync::{Arc, Mutex};

use alluvium_datafile::sink::{CHANGE_TYPE_COLUMN, FileSink, SinkTable, discard};
use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::{Add, Cdc};
use alluvium_txlog::properties::TableProperties;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray, new_null_array};
use arrow_schema::{DataType, Field, SchemaRef};

use crate::rows::input;
use crate::{Error, Result};

/// What happened to a row (the `_change_type` value): the log's change-data vocabulary.
pub(crate) use alluvium_txlog::cdf::ChangeType;

/// Whether operations on a table with this configuration record their row changes:
/// `delta.enableChangeDataFeed` (or the legacy `delta.enableChangeDataCapture`) is true,
/// the property Delta Spark's writers and readers go by.
pub(crate) fn records_changes(configuration: &std::collections::HashMap<String, String>) -> bool {
    TableProperties(configuration).change_data_feed()
}

/// A writer of one operation's change rows into cdc files. Shared by reference between
/// the threads of a parallel rewrite (rows are written under a lock; each call writes one
/// batch).
pub(crate) struct ChangeDataWriter<'a> {
    sink: Mutex<FileSink<'a>>,
    /// The table's logical Arrow schema (the rows' layout; columns missing from a batch of
    /// an older schema are NULL).
    logical: SchemaRef,
}

impl<'a> ChangeDataWriter<'a> {
    /// A writer of change rows of `table` (its schema as the commit will have it: MERGE's
    /// evolved schema).
    ///
    /// # Errors
    /// A schema the sink cannot write.
    pub(crate) fn new(table: SinkTable<'a>, target_size: Option<u64>) -> Result<Self> {
        let logical = input::logical_schema(table.schema)?;
        Ok(ChangeDataWriter {
            sink: Mutex::new(FileSink::for_change_data(table, target_size)?),
            logical,
        })
    }

    /// Records `rows` (the table's logical columns, all of them) as changes of type `kind`.
    ///
    /// # Errors
    /// Rows of another layout; a failure encoding or uploading a cdc file.
    pub(crate) fn write(&self, rows: &RecordBatch, kind: ChangeType) -> Result<()> {
        if rows.num_rows() == 0 {
            return Ok(());
        }
        // Rows read with the hidden row-tracking columns (after the table's columns) are
        // recorded without them: change data has no row ids (PROTOCOL.md "Row Tracking").
        let n = self.logical.fields().len();
        let trimmed;
        let rows = if rows.num_columns() > n {
            trimmed = rows.project(&(0..n).collect::<Vec<_>>())?;
            &trimmed
        } else {
            rows
        };
        let change_type = StringArray::new_repeated(kind.as_str(), rows.num_rows());
        let batch = super::with_appended(
            rows,
            [(
                Field::new(CHANGE_TYPE_COLUMN, DataType::Utf8, false),
                Arc::new(change_type) as ArrayRef,
            )],
        )?;
        let mut sink = self
            .sink
            .lock()
            .map_err(|_| Error::InvalidArgument("a change-data writer panicked".into()))?;
        sink.write(&batch)?;
        Ok(())
    }

    /// Records the rows of `rows` (a struct column of table columns by name: MERGE's
    /// target side) as `kind`; table columns the struct lacks (added by schema evolution)
    /// are NULL.
    ///
    /// # Errors
    /// As [`write`](Self::write).
    pub(crate) fn write_struct(&self, rows: &ArrayRef, kind: ChangeType) -> Result<()> {
        let s = rows.as_struct();
        self.write_columns(|name| s.column_by_name(name).cloned(), s.len(), kind)
    }

    /// Records `rows` (table columns by name, in any order, possibly of an older schema
    /// and with hidden columns: a copy-on-write rewrite's rows) as `kind`; table columns
    /// the batch lacks are NULL, columns the table lacks are left out.
    ///
    /// # Errors
    /// As [`write`](Self::write).
    pub(crate) fn write_by_name(&self, rows: &RecordBatch, kind: ChangeType) -> Result<()> {
        self.write_columns(
            |name| rows.column_by_name(name).cloned(),
            rows.num_rows(),
            kind,
        )
    }

    /// Records `n` rows whose column `name` is `column(name)` (NULL where `None`).
    fn write_columns(
        &self,
        column: impl Fn(&str) -> Option<ArrayRef>,
        n: usize,
        kind: ChangeType,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let columns: Vec<ArrayRef> = self
            .logical
            .fields()
            .iter()
            .map(|f| column(f.name()).unwrap_or_else(|| new_null_array(f.data_type(), n)))
            .collect();
        let batch = RecordBatch::try_new(self.logical.clone(), columns)?;
        self.write(&batch, kind)
    }

    /// Closes the cdc files and returns their `cdc` actions.
    ///
    /// # Errors
    /// A failure closing or uploading a file (every file written is deleted then).
    pub(crate) fn finish(self) -> Result<Vec<Cdc>> {
        let sink = self
            .sink
            .into_inner()
            .map_err(|_| Error::InvalidArgument("a change-data writer panicked".into()))?;
        let (files, _) = sink.finish()?;
        Ok(files.into_iter().map(cdc_of).collect())
    }

    /// Gives up: deletes the cdc files already uploaded.
    pub(crate) fn abort(self) {
        if let Ok(sink) = self.sink.into_inner() {
            sink.abort();
        }
    }
}

/// The `cdc` action of a change file the sink wrote (PROTOCOL.md "Add CDC File":
/// `dataChange` always false).
fn cdc_of(a: Add) -> Cdc {
    Cdc {
        path: a.path,
        partition_values: a.partition_values,
        size: a.size,
        data_change: false,
        tags: None,
    }
}

/// Stages `files` in `txn` and returns how many there are (the `numAddedChangeFiles`
/// metric).
pub(crate) fn stage(txn: &mut Transaction, files: Vec<Cdc>) -> u64 {
    let n = files.len() as u64;
    for c in files {
        txn.add_change_file(c);
    }
    n
}

/// Deletes cdc files that will not be committed (best effort).
pub(crate) fn discard_files(store: &dyn alluvium_storage::ObjectStore, files: &[Cdc]) {
    let as_adds: Vec<Add> = files
        .iter()
        .map(|c| Add {
            path: c.path.clone(),
            size: c.size,
            ..Add::default()
        })
        .collect();
    discard(store, &as_adds);
}

/// Closes `writer` (if any) once the operation's scan is done: aborts it when the scan
/// failed; otherwise returns its `cdc` actions.
///
/// # Errors
/// The scan's error; a failure closing a cdc file.
pub(crate) fn close(writer: Option<ChangeDataWriter<'_>>, scanned: Result<()>) -> Result<Vec<Cdc>> {
    match (writer, scanned) {
        (None, r) => r.map(|()| Vec::new()),
        (Some(w), Err(e)) => {
            w.abort();
            Err(e)
        }
        (Some(w), Ok(())) => w.finish(),
    }
}

/// The change writer of an operation on `snapshot`'s table writing rows of `schema` (the
/// schema the commit will have) under `configuration`: `None` unless the table records
/// changes ([`records_changes`]).
///
/// # Errors
/// A schema the sink cannot write.
pub(crate) fn writer_for<'a>(
    table: &'a crate::Table,
    snapshot: &'a crate::Snapshot,
    schema: &'a alluvium_txlog::schema::StructType,
    configuration: &'a std::collections::HashMap<String, String>,
    target_size: Option<u64>,
) -> Result<Option<ChangeDataWriter<'a>>> {
    if !records_changes(configuration) {
        return Ok(None);
    }
    Ok(Some(ChangeDataWriter::new(
        SinkTable {
            store: table.store().as_ref(),
            schema,
            partition_columns: snapshot.partition_columns(),
            configuration,
            column_mapping: snapshot.column_mapping(),
        },
        target_size,
    )?))
}
