//! Actions that only appear inside V2 checkpoints: `checkpointMetadata` and `sidecar`.

use serde::{Deserialize, Serialize};

use super::maps::{OptStringMap, opt_map};

/// `checkpointMetadata`: exactly one per V2 checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointMetadata {
    /// The checkpoint's version.
    pub version: i64,
    /// Optional tags.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_map"
    )]
    pub tags: Option<OptStringMap>,
}

/// `sidecar`: a file in `_delta_log/_sidecars/` holding part of a V2 checkpoint's file
/// actions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sidecar {
    /// Path relative to `_delta_log/_sidecars/` (usually a bare file name).
    pub path: String,
    /// Size in bytes.
    #[serde(default)]
    pub size_in_bytes: i64,
    /// Modification time.
    #[serde(default)]
    pub modification_time: i64,
    /// Optional tags.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_map"
    )]
    pub tags: Option<OptStringMap>,
}
