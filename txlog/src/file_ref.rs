//! A live file of a table state, read where the state keeps it.
//!
//! [`TableState::files`](crate::replay::TableState::files) yields [`FileRef`]s, not `&Add`:
//! callers read a file's fields through accessors, so the state is free to keep its files
//! in whatever layout serves a million of them best (columns with interned partition values,
//! one arena of paths) without one struct per file. An owned [`Add`] is produced on demand
//! by [`FileRef::to_add`], for the callers that carry the action into a commit or a plan.
//!
//! Contract: every accessor returns what the file's `add` action says, exactly as replay
//! reconciled it: `to_add()` of a file equals the `add` that made it live.

use std::borrow::Cow;

use crate::actions::{Add, DeletionVectorDescriptor, OptStringMap};
use crate::file_columns::Row;

/// A live file of a table state (see the module docs). Cheap to copy; borrows the state.
#[derive(Debug, Clone, Copy)]
pub struct FileRef<'a>(Inner<'a>);

#[derive(Debug, Clone, Copy)]
enum Inner<'a> {
    /// An `add` held as a struct: a file added since the state's columns were built, or an
    /// action held elsewhere.
    Add(&'a Add),
    /// A row of the state's columns.
    Row(Row<'a>),
}

impl<'a> From<&'a Add> for FileRef<'a> {
    /// A view of an `add` held elsewhere (a plan's or a commit's), to judge it as a live
    /// file is judged (data skipping, for one).
    fn from(add: &'a Add) -> Self {
        FileRef(Inner::Add(add))
    }
}

impl<'a> From<&&'a Add> for FileRef<'a> {
    fn from(add: &&'a Add) -> Self {
        FileRef(Inner::Add(add))
    }
}

impl<'a> From<&FileRef<'a>> for FileRef<'a> {
    fn from(file: &FileRef<'a>) -> Self {
        *file
    }
}

impl<'a> From<Row<'a>> for FileRef<'a> {
    fn from(row: Row<'a>) -> Self {
        FileRef(Inner::Row(row))
    }
}

impl<'a> FileRef<'a> {
    /// The file's path as the log spells it: an RFC 2396 URI reference, relative to the
    /// table root or absolute ([`crate::path::resolve`] turns it into a location).
    pub fn path(&self) -> &'a str {
        match self.0 {
            Inner::Add(a) => &a.path,
            Inner::Row(r) => r.path(),
        }
    }

    /// The file's size in bytes.
    pub fn size(&self) -> i64 {
        match self.0 {
            Inner::Add(a) => a.size,
            Inner::Row(r) => r.size(),
        }
    }

    /// When the file was written, in milliseconds since the epoch.
    pub fn modification_time(&self) -> i64 {
        match self.0 {
            Inner::Add(a) => a.modification_time,
            Inner::Row(r) => r.modification_time(),
        }
    }

    /// Whether the commit that added the file changed data.
    pub fn data_change(&self) -> bool {
        match self.0 {
            Inner::Add(a) => a.data_change,
            Inner::Row(r) => r.data_change(),
        }
    }

    /// The file's statistics JSON ([`crate::stats`]), if it has any: borrowed, or rebuilt
    /// from the shape and values the state keeps (byte for byte the text of the `add`).
    pub fn stats(&self) -> Option<Cow<'a, str>> {
        match self.0 {
            Inner::Add(a) => a.stats.as_deref().map(Cow::Borrowed),
            Inner::Row(r) => r.stats(),
        }
    }

    /// Appends the file's statistics JSON to `out`, as [`stats`](Self::stats) gives it,
    /// without an allocation of its own; false, appending nothing, when it has none.
    pub fn write_stats(&self, out: &mut String) -> bool {
        match self.0 {
            Inner::Add(a) => a.stats.as_deref().map(|s| out.push_str(s)).is_some(),
            Inner::Row(r) => r.write_stats(out),
        }
    }

    /// The row of a state's columns this file is, if it is one: for a copy into other
    /// columns that takes the row's fields as they are kept.
    pub(crate) fn as_row(&self) -> Option<Row<'a>> {
        match self.0 {
            Inner::Add(_) => None,
            Inner::Row(r) => Some(r),
        }
    }

    /// Partition column (physical name) -> serialized value; `None` values are NULL.
    pub fn partition_values(&self) -> &'a OptStringMap {
        match self.0 {
            Inner::Add(a) => &a.partition_values,
            Inner::Row(r) => r.partition_values(),
        }
    }

    /// The file's tags, if it has any.
    pub fn tags(&self) -> Option<&'a OptStringMap> {
        match self.0 {
            Inner::Add(a) => a.tags.as_ref(),
            Inner::Row(r) => r.extras().and_then(|e| e.tags.as_ref()),
        }
    }

    /// The file's deletion vector: rows of the file that are not part of the table.
    pub fn deletion_vector(&self) -> Option<&'a DeletionVectorDescriptor> {
        match self.0 {
            Inner::Add(a) => a.deletion_vector.as_deref(),
            Inner::Row(r) => r.extras().and_then(|e| e.deletion_vector.as_ref()),
        }
    }

    /// Row tracking: the row id of the file's first row.
    pub fn base_row_id(&self) -> Option<i64> {
        match self.0 {
            Inner::Add(a) => a.base_row_id,
            Inner::Row(r) => r.extras().and_then(|e| e.base_row_id),
        }
    }

    /// Row tracking: the commit version that added the file's rows.
    pub fn default_row_commit_version(&self) -> Option<i64> {
        match self.0 {
            Inner::Add(a) => a.default_row_commit_version,
            Inner::Row(r) => r.extras().and_then(|e| e.default_row_commit_version),
        }
    }

    /// Clustered tables: the clustering implementation.
    pub fn clustering_provider(&self) -> Option<&'a str> {
        match self.0 {
            Inner::Add(a) => a.clustering_provider.as_deref(),
            Inner::Row(r) => r.extras().and_then(|e| e.clustering_provider.as_deref()),
        }
    }

    /// The file's physical row count from its statistics (`numRecords`), if they have one
    /// (only that field is decoded).
    pub fn num_records(&self) -> Option<i64> {
        crate::stats::FileStats::parse_columns(&self.stats()?, &[])?.num_records
    }

    /// The file's live rows: [`num_records`](Self::num_records) minus its deletion vector's
    /// cardinality; `None` without a row count.
    pub fn live_rows(&self) -> Option<i64> {
        let deleted = self.deletion_vector().map_or(0, |d| d.cardinality);
        Some(self.num_records()?.saturating_sub(deleted).max(0))
    }

    /// The `add` action that made the file live, as an owned value.
    pub fn to_add(self) -> Add {
        match self.0 {
            Inner::Add(a) => a.clone(),
            Inner::Row(r) => r.to_add(),
        }
    }
}

impl crate::file_set::FileKeyed for FileRef<'_> {
    fn key_path(&self) -> &str {
        self.path()
    }
    fn key_dv(&self) -> Option<&DeletionVectorDescriptor> {
        self.deletion_vector()
    }
}
