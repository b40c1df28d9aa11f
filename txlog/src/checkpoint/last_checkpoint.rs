//! `_last_checkpoint`: a hint naming the latest checkpoint, so readers can list the log from
//! there instead of from version 0.
//!
//! It is only ever a hint. It is overwritten in place after the checkpoint is written, so it
//! may be missing, empty, unparseable, stale (older than the newest checkpoint) or ahead of
//! what exists; every reader path must work in all of those cases (SPEC.md §5).

use alluvium_storage::ObjectStore;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::log_path::{LAST_CHECKPOINT, log_path};

/// The contents of `_last_checkpoint`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastCheckpointHint {
    /// The checkpoint's version.
    pub version: u64,
    /// Number of actions in the checkpoint.
    #[serde(default)]
    pub size: Option<i64>,
    /// Number of parts (multi-part checkpoints only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<u32>,
    /// Total size of the checkpoint in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_in_bytes: Option<i64>,
    /// Number of `add` actions in the checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_of_add_files: Option<i64>,
    /// The checkpoint's schema (Spark StructType JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_schema: Option<Value>,
    /// MD5 checksum of the canonicalized JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
    /// V2 checkpoint details (Spark).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v2_checkpoint: Option<Value>,
}

/// Reads the hint. Any failure (missing, empty, unparseable, unreadable) yields `None`: the
/// caller then lists the log from the beginning.
pub fn read_last_checkpoint(store: &dyn ObjectStore) -> Option<LastCheckpointHint> {
    let bytes = store.get(&log_path(LAST_CHECKPOINT)).ok()?;
    serde_json::from_slice(&bytes).ok()
}
