//! Row ids and row commit versions through UPDATE and MERGE (PROTOCOL.md "Writer
//! Requirements for Row Tracking"; SPEC.md §27).
//!
//! On a table with row tracking enabled, target rows are read with the layout of
//! `crate::read::scan::rewrite_layout`: the table's columns followed by the hidden materialised
//! row-id and row-commit-version columns, filled with each row's stable values. New data
//! files are written with the same layout, and this module gives the new rows their two
//! hidden values:
//! * an UPDATED row keeps its stable row id and gets a NULL commit version (the new file's
//!   `defaultRowCommitVersion`, the version the update lands at);
//! * an INSERTED row gets NULL for both (a fresh id from the new file's `baseRowId`);
//! * a COPIED row (copy-on-write rewrites) keeps both, as read.

use arrow_array::{ArrayRef, RecordBatch, new_null_array};
use arrow_schema::{DataType, Field};

use crate::Result;

/// The shape of target rows with row tracking: how many table columns come before the two
/// hidden ones. `None` (no hidden columns) leaves every batch as it is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TrackedRows {
    width: Option<usize>,
}

impl TrackedRows {
    /// For rows of `table_width` columns read and written with a layout of
    /// `layout_width` columns (the hidden ones, if any, last).
    pub(crate) fn new(table_width: usize, layout_width: usize) -> TrackedRows {
        TrackedRows {
            width: (layout_width == table_width + 2).then_some(table_width),
        }
    }

    /// `new_rows` (the table's columns) as updated versions of `old` (read with the
    /// hidden columns, same row order): the old stable row id, a NULL commit version.
    pub(crate) fn updated(&self, new_rows: RecordBatch, old: &RecordBatch) -> Result<RecordBatch> {
        let Some(w) = self.width else {
            return Ok(new_rows);
        };
        self.updated_with_ids(new_rows, old.column(w).clone())
    }

    /// `new_rows` (the table's columns) as updated versions of the rows whose stable row
    /// ids are `row_ids` (same order): those ids, a NULL commit version.
    pub(crate) fn updated_with_ids(
        &self,
        new_rows: RecordBatch,
        row_ids: ArrayRef,
    ) -> Result<RecordBatch> {
        if self.width.is_none() {
            return Ok(new_rows);
        }
        let n = new_rows.num_rows();
        let version = new_null_array(&DataType::Int64, n);
        with_hidden(new_rows, row_ids, version)
    }

    /// Whether rows carry the hidden columns.
    pub(crate) fn is_on(&self) -> bool {
        self.width.is_some()
    }

    /// `new_rows` (the table's columns) as inserted rows: NULL row id and commit version.
    pub(crate) fn inserted(&self, new_rows: RecordBatch) -> Result<RecordBatch> {
        if self.width.is_none() {
            return Ok(new_rows);
        }
        let n = new_rows.num_rows();
        with_hidden(
            new_rows,
            new_null_array(&DataType::Int64, n),
            new_null_array(&DataType::Int64, n),
        )
    }
}

fn with_hidden(rows: RecordBatch, row_id: ArrayRef, version: ArrayRef) -> Result<RecordBatch> {
    super::with_appended(
        &rows,
        [
            (Field::new("_row_id", DataType::Int64, true), row_id),
            (
                Field::new("_row_commit_version", DataType::Int64, true),
                version,
            ),
        ],
    )
}
