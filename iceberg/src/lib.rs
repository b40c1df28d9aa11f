//! Iceberg v2 metadata for alluvium's Delta tables, so that readers that speak only Iceberg
//! (pyiceberg, DuckDB's iceberg extension, Snowflake, BigQuery, Athena) read the same data
//! files, deletion vectors included, with nothing copied.
//!
//! [`sync`] writes, under the table's `metadata/` directory (where Delta's UniForm puts it),
//! one Iceberg snapshot per Delta version since the last sync: Avro manifests and manifest
//! lists ([`avro`], [`manifest`]), position-delete Parquet files for deletion vectors
//! ([`deletes`]), and a `vN.metadata.json` created with put-if-absent. The mapping (field
//! ids, identity partitions, statistics as bounds) is in [`schema`], [`partition`] and
//! [`bounds`]; SPEC.md §38 lists it rule by rule.
//!
//! What this crate owns: the Iceberg side, from Delta snapshots. What it must not know: how
//! Delta commits are made (it only reads snapshots through `alluvium-mvcc`, and data-file footers through
//! `alluvium-datafile`) and anything of
//! the facade (the table property that syncs after each commit lives there). It never
//! changes the Delta log.
//!
//! Stability: internal to alluvium, versioned with the workspace, no semver promise of its
//! own; embed it through the `alluvium` facade (`Table::sync_iceberg`).
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod avro;
pub mod bounds;
mod check;
pub mod deletes;
mod error;
mod expire;
pub mod manifest;
pub mod metadata;
pub mod partition;
pub mod schema;
mod sync;
pub mod tree;

pub use check::{Disagreement, check};
pub use error::{IcebergError, Result};
pub use expire::{ExpireReport, expire};

/// The table property that makes every commit through the facade sync the Iceberg metadata
/// afterwards, as a post-commit step (`true` to enable).
pub const SYNC_PROPERTY: &str = "alluvium.iceberg.sync";

/// Whether a table configuration asks for a sync after each commit.
pub fn sync_after_commit(configuration: &std::collections::HashMap<String, String>) -> bool {
    configuration
        .get(SYNC_PROPERTY)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}
pub use sync::{
    DELTA_TIMESTAMP_KEY, DELTA_VERSION_KEY, SyncReport, sync, sync_from, synced_versions,
};
