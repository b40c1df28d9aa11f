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

/// The most `_last_checkpoint` may hold. Real hints are a few hundred bytes (a few KiB with
/// a `checkpointSchema` of a wide table); a larger file is not a hint and is not read.
pub const LAST_CHECKPOINT_LIMIT: u64 = 64 * 1024;

/// Reads the hint. Any failure (missing, empty, unparseable, unreadable, not a regular file,
/// larger than [`LAST_CHECKPOINT_LIMIT`], or a checksum that does not match) yields `None`:
/// the caller then lists the log from the beginning.
pub fn read_last_checkpoint(store: &dyn ObjectStore) -> Option<LastCheckpointHint> {
    let bytes = store
        .get_limited(&log_path(LAST_CHECKPOINT), LAST_CHECKPOINT_LIMIT)
        .ok()?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    if let Some(stored) = value.get("checksum").and_then(Value::as_str)
        && stored != json_checksum(&value)
    {
        return None;
    }
    serde_json::from_value(value).ok()
}

/// Characters left unescaped by the checksum's URL encoding: `A-Z a-z 0-9 - . _ ~`.
const UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn quoted(s: &str) -> String {
    format!(
        "\"{}\"",
        percent_encoding::utf8_percent_encode(s, UNRESERVED)
    )
}

fn canonical_pairs(v: &Value, path: &str, out: &mut Vec<(String, String)>) {
    let join = |seg: String| {
        if path.is_empty() {
            seg
        } else {
            format!("{path}+{seg}")
        }
    };
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                canonical_pairs(v, &join(quoted(k)), out);
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                canonical_pairs(v, &join(i.to_string()), out);
            }
        }
        Value::String(s) => out.push((path.to_string(), quoted(s))),
        other => out.push((path.to_string(), other.to_string())),
    }
}

/// The protocol's checksum of a `_last_checkpoint` JSON object: MD5 of its canonical form
/// (leaf paths and values URL-encoded, sorted by path bytes, top-level `checksum` ignored).
pub fn json_checksum(v: &Value) -> String {
    use md5::{Digest, Md5};
    let mut pairs = Vec::new();
    if let Value::Object(m) = v {
        for (k, v) in m.iter().filter(|(k, _)| k.as_str() != "checksum") {
            canonical_pairs(v, &quoted(k), &mut pairs);
        }
    }
    pairs.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let text = pairs
        .iter()
        .map(|(p, v)| format!("{p}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    Md5::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl LastCheckpointHint {
    /// The checksum of this hint as it serializes.
    pub fn checksum_of(&self) -> String {
        serde_json::to_value(self)
            .map(|v| json_checksum(&v))
            .unwrap_or_default()
    }
}

/// Publishes `hint` as `_last_checkpoint` (an atomic replace), unless the current hint
/// already names a newer checkpoint (a concurrent writer got further).
///
/// # Errors
/// Storage errors.
pub fn write_last_checkpoint(
    store: &dyn ObjectStore,
    hint: &LastCheckpointHint,
) -> crate::Result<bool> {
    if read_last_checkpoint(store).is_some_and(|current| current.version > hint.version) {
        return Ok(false);
    }
    let bytes = serde_json::to_vec(hint).map_err(|e| crate::LogError::Invalid(e.to_string()))?;
    store.put(&log_path(LAST_CHECKPOINT), bytes.into())?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_checksum_test_vector() {
        let v: Value = serde_json::from_str(
            r#"{"k0":"'v 0'", "checksum": "adsaskfljadfkjadfkj", "k1":{"k2": 2, "k3": ["v3", [1, 2], {"k4": "v4", "k5": ["v5", "v6", "v7"]}]}}"#,
        )
        .unwrap();
        assert_eq!(json_checksum(&v), "6a92d155a59bf2eecbd4b4ec7fd1f875");
    }

    #[test]
    fn hints_round_trip_with_their_checksum_and_keep_the_key_order() {
        let mut h = LastCheckpointHint {
            version: 10,
            size: Some(24),
            parts: None,
            size_in_bytes: Some(1000),
            num_of_add_files: Some(20),
            checkpoint_schema: None,
            checksum: None,
            v2_checkpoint: None,
        };
        h.checksum = Some(h.checksum_of());
        let text = serde_json::to_string(&h).unwrap();
        assert!(
            text.starts_with(r#"{"version":10,"size":24,"sizeInBytes""#),
            "{text}"
        );
        assert!(!text.contains("parts"));
        let back: LastCheckpointHint = serde_json::from_str(&text).unwrap();
        assert_eq!(back.checksum_of(), h.checksum.clone().unwrap());
    }
}
