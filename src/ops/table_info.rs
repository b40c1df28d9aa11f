//! The table's name and description (`metaData.name`, `metaData.description`): free text
//! for catalogs and people, which no reader interprets (PROTOCOL.md "Change Metadata").
//! Changing either replaces the metadata action, so the commit conflicts with every
//! concurrent commit as any metadata change does (SPEC.md §7).

use alluvium_mvcc::Transaction;

use crate::commit::{WriteOptions, WriteOutcome, finish, outcome_if_done};
use crate::{Result, Table};

/// The operation recorded in `commitInfo` (delta-rs' name for the same change).
const OPERATION: &str = "UPDATE TABLE METADATA";

impl Table {
    /// Sets the table's name (`metaData.name`), in one commit (operation
    /// `UPDATE TABLE METADATA`, parameter `metadataUpdate`), with the options every write
    /// takes: `commitInfo` fields, and an application transaction (a change the
    /// application already committed is [`WriteOutcome::Skipped`]).
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// use alluvium::{Table, WriteOptions};
    /// let table = Table::open("path/to/table")?;
    /// table.set_table_name("orders", &WriteOptions::default())?;
    /// assert_eq!(table.snapshot()?.metadata().name.as_deref(), Some("orders"));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// A missing table; unsupported writer features; options not valid for a write; commit
    /// conflicts (every concurrent commit conflicts with a metadata change).
    pub fn set_table_name(&self, name: &str, options: &WriteOptions) -> Result<WriteOutcome> {
        self.update_table_info(Some(name), None, options)
    }

    /// Sets the table's description (`metaData.description`), as
    /// [`set_table_name`](Self::set_table_name) sets its name.
    ///
    /// # Errors
    /// As [`set_table_name`](Self::set_table_name).
    pub fn set_table_description(
        &self,
        description: &str,
        options: &WriteOptions,
    ) -> Result<WriteOutcome> {
        self.update_table_info(None, Some(description), options)
    }

    fn update_table_info(
        &self,
        name: Option<&str>,
        description: Option<&str>,
        options: &WriteOptions,
    ) -> Result<WriteOutcome> {
        let snapshot = self.read_snapshot(options)?;
        snapshot.check_writable()?;
        let mut txn = Transaction::new(snapshot.inner(), OPERATION);
        if let Some(done) = outcome_if_done(&mut txn, &snapshot, options) {
            return Ok(done);
        }
        let mut md = snapshot.metadata().clone();
        let mut update = serde_json::Map::new();
        if let Some(name) = name {
            md.name = Some(name.to_string());
            update.insert("name".into(), name.into());
        }
        if let Some(description) = description {
            md.description = Some(description.to_string());
            update.insert("description".into(), description.into());
        }
        txn.set_parameter(
            "metadataUpdate",
            serde_json::Value::Object(update).to_string(),
        );
        txn.set_metadata(md);
        finish(self, txn, options)
    }
}
