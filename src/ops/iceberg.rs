//! Iceberg metadata beside the Delta log (`alluvium_iceberg`): [`Table::sync_iceberg`].

use alluvium_iceberg::SyncReport;
use alluvium_mvcc::VersionSpec;

use crate::{Result, Table};

impl Table {
    /// Writes Iceberg v2 metadata for the table under `metadata/`, one Iceberg snapshot per
    /// Delta version since the last sync (the first sync: one, of the latest version), so
    /// Iceberg readers (pyiceberg, DuckDB's iceberg extension, ...) read the same data
    /// files, with deletion vectors as position deletes. Incremental, idempotent (a synced
    /// version is left alone) and safe against a concurrent sync. The Delta log is not
    /// changed.
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// let table = alluvium::Table::open("/data/events")?;
    /// let report = table.sync_iceberg()?;
    /// println!("Iceberg snapshot {:?} mirrors versions {:?}", report.snapshot_id, report.synced_versions);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// A column type Iceberg v2 cannot hold (variant, geometry, void) names the column;
    /// storage and log errors; existing `metadata/` of another table.
    pub fn sync_iceberg(&self) -> Result<SyncReport> {
        self.sync_iceberg_at(VersionSpec::Latest)
    }

    /// As [`sync_iceberg`](Self::sync_iceberg), up to the version `spec` names.
    ///
    /// # Errors
    /// As [`sync_iceberg`](Self::sync_iceberg).
    pub fn sync_iceberg_at(&self, spec: VersionSpec) -> Result<SyncReport> {
        Ok(self.run(|| alluvium_iceberg::sync(self.store().clone(), spec))?)
    }
}
