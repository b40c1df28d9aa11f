//! Reading back what an Iceberg snapshot references: its manifest list, manifests and
//! their entries. Shared by expiry (what must stay) and the check against the Delta log.

use alluvium_storage::{ObjectStore, StorePath};
use serde_json::Value;

use crate::error::{IcebergError, Result};
use crate::manifest::{Entry, ManifestFile, read_manifest, read_manifest_list};

/// One snapshot's manifests with their entries.
#[derive(Debug, Clone)]
pub struct SnapshotFiles {
    /// The manifest list's location.
    pub manifest_list: String,
    /// Each manifest and its entries (deleted ones included).
    pub manifests: Vec<(ManifestFile, Vec<Entry>)>,
}

/// A location inside the table, relative to its root (`location`).
pub(crate) fn relative(location: &str, path: &str) -> Option<String> {
    path.strip_prefix(location)?
        .strip_prefix('/')
        .map(str::to_string)
}

/// The store path of a location inside the table.
pub(crate) fn store_path(location: &str, path: &str) -> Result<StorePath> {
    let rel = relative(location, path).ok_or_else(|| IcebergError::CorruptMetadata {
        file: path.to_string(),
        reason: format!("lies outside the table location {location}"),
    })?;
    Ok(StorePath::parse(rel)?)
}

/// Reads the manifest list and manifests of `snapshot` (a snapshot object of the metadata).
///
/// # Errors
/// Storage errors (a missing file among them) and undecodable Avro.
pub fn snapshot_files(
    store: &dyn ObjectStore,
    location: &str,
    snapshot: &Value,
) -> Result<SnapshotFiles> {
    let list = snapshot
        .get("manifest-list")
        .and_then(Value::as_str)
        .ok_or_else(|| IcebergError::CorruptMetadata {
            file: "metadata".into(),
            reason: format!(
                "snapshot {} has no manifest list",
                snapshot.get("snapshot-id").unwrap_or(&Value::Null)
            ),
        })?;
    let bytes = store.get(&store_path(location, list)?)?;
    let files = read_manifest_list(&bytes).map_err(|reason| IcebergError::CorruptMetadata {
        file: list.to_string(),
        reason,
    })?;
    let mut manifests = Vec::with_capacity(files.len());
    for mf in files {
        let bytes = store.get(&store_path(location, &mf.manifest_path)?)?;
        let entries = read_manifest(&bytes).map_err(|reason| IcebergError::CorruptMetadata {
            file: mf.manifest_path.clone(),
            reason,
        })?;
        manifests.push((mf, entries));
    }
    Ok(SnapshotFiles {
        manifest_list: list.to_string(),
        manifests,
    })
}
