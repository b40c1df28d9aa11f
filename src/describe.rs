//! A summary of a table version for humans and tools (`alluvium inspect`).

use std::collections::BTreeMap;

use crate::Snapshot;
use alluvium_mvcc::VersionSpec;
use alluvium_txlog::actions::Protocol;
use alluvium_txlog::segment::{complete_checkpoints, earliest_readable_version, list_log_from};
use serde::{Deserialize, Serialize};

use crate::{Result, Table};

impl Table {
    /// What `inspect` reports about the table at `at` (the latest version with
    /// [`VersionSpec::Latest`]): protocol, schema, partitioning, properties, live files,
    /// rows and bytes, checkpoints, application transactions and domains.
    ///
    /// # Errors
    /// No table, a version or timestamp outside its history, storage errors.
    pub fn describe(&self, at: VersionSpec) -> Result<TableDescription> {
        TableDescription::of(&self.snapshot_at(at)?)
    }
}

impl TableDescription {
    /// The description of `snapshot`'s version (see [`Table::describe`]).
    ///
    /// # Errors
    /// Storage errors while listing the log.
    pub fn of(snapshot: &Snapshot) -> Result<TableDescription> {
        describe(snapshot)
    }
}

/// What `inspect` reports about one version of a table.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct TableDescription {
    /// The version described.
    pub version: u64,
    /// Its commit timestamp (ms since the epoch).
    pub timestamp_ms: i64,
    /// The table id (`metaData.id`).
    pub table_id: String,
    /// The table name, if set.
    pub name: Option<String>,
    /// The protocol.
    pub protocol: ProtocolDescription,
    /// The schema as Delta schema JSON.
    pub schema: serde_json::Value,
    /// Partition columns.
    pub partition_columns: Vec<String>,
    /// Table properties.
    pub configuration: BTreeMap<String, String>,
    /// Column mapping mode (`none`, `name`, `id`).
    pub column_mapping_mode: String,
    /// Live data files.
    pub num_files: usize,
    /// Live rows from statistics (minus deletion vectors); `None` if any file lacks a row
    /// count or has an impossible one.
    pub num_records: Option<u64>,
    /// Why `num_records` is unknown when a file's statistics are wrong rather than absent:
    /// the first file whose `numRecords` is negative or below its deletion vector's count,
    /// named with the value (counting such a file as 0 rows would hide the damage).
    pub num_records_problem: Option<String>,
    /// Total size of the live files.
    pub size_bytes: u64,
    /// Live files that carry a deletion vector.
    pub num_deletion_vectors: usize,
    /// The checkpoint this version was loaded from.
    pub loaded_from_checkpoint: Option<u64>,
    /// The newest complete checkpoint in the log.
    pub last_checkpoint: Option<u64>,
    /// The earliest version that can still be reconstructed.
    pub earliest_readable_version: Option<u64>,
    /// Application transaction ids with their versions.
    pub app_transactions: BTreeMap<String, i64>,
    /// Live domain names.
    pub domains: Vec<String>,
    /// The memory the loaded snapshot holds, estimated ([`Snapshot::memory_usage`]): what
    /// keeping this version open costs a process.
    pub memory_bytes: u64,
}

/// The protocol, with the JSON key names of the log.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProtocolDescription {
    /// Minimum reader version.
    pub min_reader_version: i32,
    /// Minimum writer version.
    pub min_writer_version: i32,
    /// Reader features (empty below reader version 3).
    pub reader_features: Vec<String>,
    /// Writer features (empty below writer version 7).
    pub writer_features: Vec<String>,
}

impl From<&Protocol> for ProtocolDescription {
    fn from(p: &Protocol) -> Self {
        ProtocolDescription {
            min_reader_version: p.min_reader_version,
            min_writer_version: p.min_writer_version,
            reader_features: p.reader_features.clone().unwrap_or_default(),
            writer_features: p.writer_features.clone().unwrap_or_default(),
        }
    }
}

#[derive(Deserialize)]
struct RowCount {
    #[serde(rename = "numRecords")]
    num_records: Option<i64>,
}

/// Describes `snapshot`. Lists the whole log once to find the checkpoints and the earliest
/// readable version.
///
/// # Errors
/// Storage errors while listing the log.
pub(crate) fn describe(snapshot: &Snapshot) -> Result<TableDescription> {
    let listing = list_log_from(snapshot.store_ref(), 0)?;
    let mut records: Option<u64> = Some(0);
    let mut problem: Option<String> = None;
    let mut size: u64 = 0;
    let mut dvs = 0;
    for f in snapshot.files() {
        size = size.saturating_add(u64::try_from(f.size()).unwrap_or(0));
        let deleted = f.deletion_vector().map_or(0, |d| d.cardinality);
        if f.deletion_vector().is_some() {
            dvs += 1;
        }
        let n = f
            .stats()
            .and_then(|s| serde_json::from_str::<RowCount>(&s).ok())
            .and_then(|r| r.num_records);
        let live = n.map(|n| {
            u64::try_from(n)
                .ok()
                .and_then(|n| n.checked_sub(u64::try_from(deleted).unwrap_or(u64::MAX)))
                .ok_or_else(|| match n < 0 {
                    true => format!(
                        "{}: numRecords is {n} (a row count cannot be negative)",
                        f.path()
                    ),
                    false => format!(
                        "{}: numRecords is {n} but its deletion vector deletes {deleted} rows",
                        f.path()
                    ),
                })
        });
        records = match (records, live) {
            (Some(acc), Some(Ok(n))) => Some(acc.saturating_add(n)),
            (_, Some(Err(p))) => {
                problem.get_or_insert(p);
                None
            }
            _ => None,
        };
    }
    let md = snapshot.metadata();
    let schema = serde_json::from_str(&md.schema_string).unwrap_or(serde_json::Value::Null);
    Ok(TableDescription {
        version: snapshot.version(),
        timestamp_ms: snapshot.timestamp_ms(),
        table_id: md.id.clone(),
        name: md.name.clone(),
        protocol: snapshot.protocol().into(),
        schema,
        partition_columns: md.partition_columns.clone(),
        configuration: md
            .configuration
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        column_mapping_mode: format!("{:?}", snapshot.column_mapping()).to_lowercase(),
        num_files: snapshot.num_files(),
        memory_bytes: u64::try_from(snapshot.memory_usage().total()).unwrap_or(u64::MAX),
        num_records: records,
        num_records_problem: problem,
        size_bytes: size,
        num_deletion_vectors: dvs,
        loaded_from_checkpoint: snapshot.checkpoint_version(),
        last_checkpoint: complete_checkpoints(&listing).keys().next_back().copied(),
        earliest_readable_version: earliest_readable_version(&listing),
        app_transactions: snapshot
            .state()
            .app_transactions()
            .iter()
            .map(|(k, t)| (k.clone(), t.version))
            .collect(),
        domains: {
            let mut d: Vec<String> = snapshot.domains().map(|d| d.domain.clone()).collect();
            d.sort();
            d
        },
    })
}
