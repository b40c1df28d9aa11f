//! A column's metadata (the `metadata` map of its field in the schema), changed in one
//! commit: `comment` and the application's own keys. The keys Delta gives meaning to
//! (`ColumnMetadataKey::is_reserved`: column mapping ids and physical names, identity,
//! generation and default expressions, invariants, type changes, anything `delta.*`) are
//! refused, since a change to them would change what the column is rather than describe it.

use alluvium_mvcc::Transaction;
use alluvium_txlog::schema::ColumnMetadataKey;
use serde_json::Value;

use crate::commit::{WriteOptions, WriteOutcome, finish, outcome_if_done};
use crate::{Error, Result, Table};

/// The operation recorded in `commitInfo` (delta-rs' name for the same change).
const OPERATION: &str = "UPDATE FIELD METADATA";

impl Table {
    /// Sets metadata entries of the top-level column `column` (found case-insensitively,
    /// by its logical name under column mapping), in one commit (operation
    /// `UPDATE FIELD METADATA`, parameters `column` and `metadata`): each key is inserted
    /// or replaced as a string; the other keys are kept. `comment` is the column comment
    /// Spark and the CLI show. Takes the options every write takes (`commitInfo` fields, an
    /// application transaction: a change the application already committed is
    /// [`WriteOutcome::Skipped`]).
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// use alluvium::{Table, WriteOptions};
    /// let table = Table::open("path/to/table")?;
    /// table.set_column_metadata("price", [("comment", "in euros")], &WriteOptions::default())?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a column the table does not have, no entry, or a key
    /// the protocol reserves (`delta.*`, `CURRENT_DEFAULT`); a missing table; unsupported
    /// writer features; commit conflicts (every concurrent commit conflicts with a
    /// metadata change).
    pub fn set_column_metadata<K, V>(
        &self,
        column: &str,
        entries: impl IntoIterator<Item = (K, V)>,
        options: &WriteOptions,
    ) -> Result<WriteOutcome>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let entries: Vec<(String, String)> = entries
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        if entries.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "no metadata to set on column `{column}`"
            )));
        }
        if let Some((key, _)) = entries
            .iter()
            .find(|(k, _)| ColumnMetadataKey::is_reserved(k))
        {
            return Err(Error::InvalidArgument(format!(
                "column metadata key {key} is reserved by the Delta protocol (delta.*, CURRENT_DEFAULT) and cannot be set"
            )));
        }
        let snapshot = self.read_snapshot(options)?;
        snapshot.check_writable()?;
        let mut txn = Transaction::new(snapshot.inner(), OPERATION);
        if let Some(done) = outcome_if_done(&mut txn, &snapshot, options) {
            return Ok(done);
        }
        let mut schema = snapshot.schema().clone();
        let Some(field) = schema
            .fields
            .iter_mut()
            .find(|f| f.name.eq_ignore_ascii_case(column))
        else {
            return Err(Error::InvalidArgument(format!(
                "the table has no column `{column}`"
            )));
        };
        let mut shown = serde_json::Map::new();
        for (k, v) in entries {
            shown.insert(k.clone(), Value::String(v.clone()));
            field.metadata.insert(k, Value::String(v));
        }
        txn.set_parameter("column", Value::String(field.name.clone()).to_string());
        txn.set_parameter("metadata", Value::Object(shown).to_string());
        let mut md = snapshot.metadata().clone();
        md.schema_string = schema.to_json();
        txn.set_metadata(md);
        finish(self, txn, options)
    }
}
