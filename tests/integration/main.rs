//! The library's integration tests, linked into one binary (one compile and link instead
//! of one per file). Each module is one area; the shared fixtures are declared here once.
//! The conformance harness over the reference tables (`tests/conformance.rs`) stays its
//! own binary: it has its own runner and report.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../common/batches.rs"]
mod batches;
#[path = "../common/mod.rs"]
mod common;
#[path = "../common/fault_workload.rs"]
mod fault_workload;
#[path = "../common/s3_server.rs"]
mod s3_server;
#[path = "../common/table_check.rs"]
mod table_check;
#[path = "../verify_fixture/mod.rs"]
mod verify_fixture;

/// The mvcc layer's snapshot behind a facade snapshot, for tests that commit through
/// `alluvium_mvcc::Transaction` (or run the compaction layer) directly.
fn mvcc(snapshot: &alluvium::Snapshot) -> alluvium_mvcc::Snapshot {
    snapshot.into()
}

mod bad_input;
mod cdf_write;
mod changes;
mod checkpoints;
mod clustering;
mod column_rules;
mod columns;
mod commit_files;
mod commit_snapshot;
mod conflicts;
mod convert;
mod count;
mod dml_common;
mod dml_delete;
mod dml_merge;
mod dml_update;
mod duplicate_columns;
mod errors;
mod errors_name_the_fix;
mod expressions;
mod facade;
mod faults;
mod group_commit;
mod group_faults;
mod hostile_paths;
mod hostile_reads;
mod iceberg;
mod input_streams;
mod log_diagnostics;
mod maintenance;
mod maintenance_faults;
mod materialize;
mod merge_empty_source;
mod merge_nested_loop;
mod overwrite_schema;
mod parallel_uploads;
mod repair;
mod replace;
mod restore;
mod row_tracking;
mod s3;
mod scan_stream;
mod stress;
mod table_features;
mod transaction;
mod variant;
mod verify;
mod verify_edges;
mod void_columns;
mod write;
