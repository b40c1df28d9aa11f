//! Expiring Iceberg snapshots VACUUM has made unreadable, and deleting the Iceberg files
//! no retained snapshot references.
//!
//! VACUUM deletes data files that no Delta version in its retention window references; an
//! Iceberg snapshot of an older Delta version may reference them. So after VACUUM, the
//! snapshots of versions below the oldest protected one are removed from the metadata (a
//! new metadata file, put-if-absent like a sync), then manifests, manifest lists and
//! position-delete files under `metadata/` that no retained snapshot references and that
//! are older than the cutoff are deleted. Files younger than the cutoff are kept: a sync
//! running now may have written them without having committed its metadata yet. Metadata
//! JSON files and the version hint are never deleted.

use std::collections::HashSet;

use alluvium_storage::{ObjectStore, StorePath};
use alluvium_txlog::Version;
use serde_json::{Value, json};

use crate::error::{IcebergError, Result};
use crate::manifest::Status;
use crate::metadata::{self, METADATA_DIR};
use crate::sync::DELTA_VERSION_KEY;
use crate::tree::snapshot_files;

/// What an expiry did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExpireReport {
    /// Iceberg snapshots removed from the metadata.
    pub expired_snapshots: usize,
    /// The metadata version written, if any.
    pub metadata_version: Option<u64>,
    /// Files deleted under `metadata/`.
    pub deleted: Vec<StorePath>,
    /// Deletes that failed, with the reason (the file stays; a later run retries).
    pub failed: Vec<String>,
}

fn delta_version(s: &Value) -> Option<Version> {
    s.pointer(&format!("/summary/{DELTA_VERSION_KEY}"))?
        .as_str()?
        .parse()
        .ok()
}

/// Expires the snapshots of Delta versions below `keep_from` (never the current one) and
/// deletes unreferenced Iceberg files modified at or before `cutoff_ms`. Without Iceberg
/// metadata, does nothing.
///
/// # Errors
/// Storage errors and unreadable metadata (nothing is deleted then);
/// [`IcebergError::Contended`] if syncs keep winning the metadata file.
pub fn expire(store: &dyn ObjectStore, keep_from: Version, cutoff_ms: i64) -> Result<ExpireReport> {
    let mut report = ExpireReport::default();
    let mut attempts = 0u32;
    let (location, retained) = loop {
        let Some((n, mut m)) = metadata::latest(store)? else {
            return Ok(report);
        };
        let current = m["current-snapshot-id"].as_i64();
        let snapshots = m["snapshots"].as_array().cloned().unwrap_or_default();
        let (keep, gone): (Vec<Value>, Vec<Value>) = snapshots.into_iter().partition(|s| {
            s["snapshot-id"].as_i64() == current || delta_version(s).is_none_or(|v| v >= keep_from)
        });
        let location = m["location"].as_str().unwrap_or_default().to_string();
        if gone.is_empty() {
            break (location, keep);
        }
        let gone_ids: HashSet<i64> = gone
            .iter()
            .filter_map(|s| s["snapshot-id"].as_i64())
            .collect();
        m["snapshots"] = Value::Array(keep.clone());
        if let Some(log) = m["snapshot-log"].as_array_mut() {
            log.retain(|e| {
                e["snapshot-id"]
                    .as_i64()
                    .is_none_or(|id| !gone_ids.contains(&id))
            });
        }
        let previous = json!({"metadata-file": format!("{location}/{}", metadata::metadata_file(n)),
            "timestamp-ms": m["last-updated-ms"].clone()});
        match m["metadata-log"].as_array_mut() {
            Some(log) => log.push(previous),
            None => m["metadata-log"] = json!([previous]),
        }
        if metadata::create(store, n + 1, &m)? {
            report.expired_snapshots = gone.len();
            report.metadata_version = Some(n + 1);
            break (location, keep);
        }
        attempts += 1;
        if attempts >= 16 {
            return Err(IcebergError::Contended { attempts });
        }
    };
    // What the retained snapshots reference stays.
    let mut referenced: HashSet<String> = HashSet::new();
    for s in &retained {
        let files = snapshot_files(store, &location, s)?;
        referenced.insert(files.manifest_list);
        for (mf, entries) in files.manifests {
            referenced.insert(mf.manifest_path);
            // A DELETED entry records a removal; its file was live only in older snapshots.
            referenced.extend(
                entries
                    .into_iter()
                    .filter(|e| e.status != Status::Deleted)
                    .map(|e| e.file.file_path),
            );
        }
    }
    let dir = StorePath::parse(METADATA_DIR)?;
    let listed = match store.list_tree(Some(&dir)) {
        Ok(l) => l,
        Err(e) if e.is_not_found() => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    for meta in listed {
        let rel = meta.path.as_str();
        if metadata::is_table_metadata_file(rel) || meta.last_modified_ms > cutoff_ms {
            continue;
        }
        if referenced.contains(&format!("{location}/{rel}")) {
            continue;
        }
        match store.delete(&meta.path) {
            Ok(()) => report.deleted.push(meta.path),
            Err(e) if e.is_not_found() => {}
            Err(e) => report.failed.push(format!("{rel}: {e}")),
        }
    }
    report.deleted.sort();
    Ok(report)
}
