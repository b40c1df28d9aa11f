//! The row-change core every writing operation builds on: input batches conformed to the
//! table ([`input`], [`source`]) and passed through the column rules ([`rules`]: CHECK, NOT
//! NULL, generated, identity, defaults) into new data files ([`feed`]); the one way rows of
//! live files are deleted ([`deletes`]: deletion vectors or copy-on-write); the change-data
//! writer ([`change_data`]); row tracking's carried ids ([`row_ids`]); UPDATE's and
//! MERGE's assignments and projections ([`assign`], [`project`], [`sql_text`]); and the
//! staging of a DML's changes ([`stage`]).
//!
//! It must not know any operation (`ops`) and imports only `commit`, `read` and the facade
//! types (checked by `.ci/check_cycles.py`).

pub(crate) mod assign;
pub(crate) mod change_data;
pub(crate) mod deletes;
pub(crate) mod input;
pub(crate) mod project;
pub(crate) mod row_ids;
pub(crate) mod rules;
pub(crate) mod source;
pub(crate) mod sql_text;
mod stage;

use alluvium_datafile::sink::FileSink;
use arrow_array::RecordBatch;

pub(crate) use deletes::{FileDeletes, RewriteSettings, apply_deletes, writes_deletion_vectors};
pub(crate) use stage::{Staged, for_each_file_read, live_rows, stage_changes, with_appended};

use crate::{Error, Result, Snapshot};
use alluvium_txlog::schema::StructType;

/// How [`feed`] makes input batches into the table's rows.
pub(crate) struct Conform<'a> {
    /// The table's schema (after any evolution decided on the first batch).
    pub(crate) schema: &'a StructType,
    /// Its partition columns.
    pub(crate) partitions: &'a [String],
    /// Its logical Arrow schema (`input::logical_schema`).
    pub(crate) target: &'a arrow_schema::SchemaRef,
    /// The column rules applied to every inserted row.
    pub(crate) rules: &'a rules::ColumnRules,
}

/// Writes `batches` to `sink` as new rows: each batch checked against the table's schema
/// (without evolution: it was decided on the first batch), conformed to its logical
/// columns, and passed through the column rules; `each` sees every batch as it will be
/// written, before it is (replaceWhere's check, change rows). Returns the rows written.
/// The caller aborts the sink on failure.
///
/// # Errors
/// The input's failure, [`Error::SchemaMismatch`] (for a batch after the first: "a later
/// batch differs from the first"), the column rules' violations, `each`'s errors, and the
/// sink's upload failures.
pub(crate) fn feed(
    sink: &mut FileSink<'_>,
    batches: impl Iterator<Item = Result<RecordBatch>>,
    to: &Conform<'_>,
    mut each: impl FnMut(&RecordBatch) -> Result<()>,
) -> Result<u64> {
    let mut rows: u64 = 0;
    for (i, b) in batches.enumerate() {
        let b = b?;
        input::check_schema(to.schema, &b.schema(), to.partitions, false).map_err(|e| {
            if i == 0 {
                e
            } else {
                Error::SchemaMismatch(format!("a later batch differs from the first: {e}"))
            }
        })?;
        let input_schema = b.schema();
        let b = to.rules.apply(
            input::conform(&b, to.schema, to.target)?,
            &|c| {
                input_schema
                    .fields()
                    .iter()
                    .any(|f| f.name().eq_ignore_ascii_case(c))
            },
            rules::RowKind::Insert,
        )?;
        each(&b)?;
        rows += b.num_rows() as u64;
        sink.write(&b)?;
    }
    Ok(rows)
}

/// Whether new data files of `snapshot`'s table also store its partition columns
/// (`materializePartitionColumns`, IcebergCompat V1/V2; SPEC.md §29).
pub(crate) fn materializes(snapshot: &Snapshot) -> bool {
    alluvium_txlog::table::TableConfiguration::new(snapshot.protocol(), snapshot.metadata())
        .materializes_partition_columns()
}
