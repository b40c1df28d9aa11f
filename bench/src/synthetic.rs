//! Synthetic logs for benchmarks and scale tests: deterministic commits of blind appends
//! with realistic paths and statistics, written straight to the log without data files.
//!
//! Tables built this way are valid Delta logs (every engine can load their snapshots) but
//! their data files do not exist: they measure the log, not scans.

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::storage::ObjectStore;
use alluvium::txlog::actions::{Action, Add, CommitInfo, OptStringMap};
use alluvium::txlog::log_path::commit_path;
use alluvium::{Result, Table};
use arrow::datatypes::{DataType, Field, Schema};
use bytes::Bytes;

/// The commit of `version`: a `commitInfo` and `files` adds, each with statistics for the
/// columns `id` (long) and `name` (string). Identical for identical arguments.
///
/// # Errors
/// Encoding errors (none in practice).
pub fn commit(version: u64, files: u64) -> Result<Bytes> {
    let mut ci = CommitInfo::default();
    let ts = 1_700_000_000_000i64.saturating_add(i64::try_from(version).unwrap_or(i64::MAX));
    ci.set("timestamp", ts);
    ci.set("operation", "WRITE");
    ci.set("engineInfo", alluvium::ENGINE);
    ci.set("txnId", format!("00000000-0000-4000-8000-{version:012x}"));
    let mut actions = vec![Action::CommitInfo(ci)];
    for i in 0..files {
        let id = version * files + i;
        actions.push(Action::Add(Add {
            path: format!(
                "part-{version:06}-{i:03}-{:016x}.c000.snappy.parquet",
                id.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ),
            partition_values: OptStringMap::default(),
            size: 1000 + i64::try_from(id % 5000).unwrap_or(0),
            modification_time: ts,
            data_change: true,
            stats: Some(format!(
                "{{\"numRecords\":100,\"minValues\":{{\"id\":{},\"name\":\"n{}\"}},\"maxValues\":{{\"id\":{},\"name\":\"n{}\"}},\"nullCount\":{{\"id\":0,\"name\":0}}}}",
                id * 100,
                id,
                id * 100 + 99,
                id + 1
            )),
            tags: None,
            deletion_vector: None,
            base_row_id: None,
            default_row_commit_version: None,
            clustering_provider: None,
        }));
    }
    Ok(alluvium::txlog::commit::encode_commit(&actions)?.into())
}

/// Creates a table (schema `id long, name string`, no automatic checkpoints) in `table` and
/// appends the synthetic commits `1..=commits`.
///
/// # Errors
/// Storage errors; `TableAlreadyExists` if the table exists.
pub fn create_log(table: &Table, commits: u64, files_per_commit: u64) -> Result<()> {
    create_table(table)?;
    append_commits(table.store().as_ref(), 1, commits, files_per_commit)
}

/// Creates the table synthetic commits belong to (columns `id` long and `name` string),
/// with a checkpoint interval so large that the policy never writes one: callers place
/// checkpoints themselves.
///
/// # Errors
/// Storage errors; `TableAlreadyExists` if the table exists.
pub fn create_table(table: &Table) -> Result<()> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
    ]));
    let props = HashMap::from([(
        alluvium::txlog::properties::CHECKPOINT_INTERVAL.to_string(),
        "1000000000".to_string(),
    )]);
    table.create(&schema, &[], &props)?;
    Ok(())
}

/// Puts the synthetic commits `from..=to`, encoding and putting them in parallel (the log
/// is only complete when this returns).
///
/// # Errors
/// Storage errors (`AlreadyExists` if a version is taken).
pub fn append_commits(
    store: &dyn ObjectStore,
    from: u64,
    to: u64,
    files_per_commit: u64,
) -> Result<()> {
    use rayon::prelude::*;
    (from..=to).into_par_iter().try_for_each(|v| {
        store.put_if_absent(&commit_path(v), commit(v, files_per_commit)?)?;
        Ok(())
    })
}
