//! The Iceberg table metadata file (`metadata/vN.metadata.json`, table spec "Table
//! Metadata") as the sync reads and writes it, and how the latest one is found.
//!
//! Metadata files are never rewritten: version N + 1 is created with put-if-absent, so of
//! two syncs racing for it exactly one wins; `version-hint.text` is a hint only (readers of
//! the Hadoop-catalog layout, and this module, probe past it for newer files).

use alluvium_storage::{ObjectStore, StorePath};
use bytes::Bytes;
use serde_json::Value;

use crate::error::{IcebergError, Result};

/// The directory of Iceberg metadata, relative to the table root (where UniForm writes it).
pub const METADATA_DIR: &str = "metadata";

/// The hint file naming the latest metadata version.
pub const VERSION_HINT: &str = "metadata/version-hint.text";

/// The path of metadata version `n`.
pub fn metadata_file(n: u64) -> String {
    format!("{METADATA_DIR}/v{n}.metadata.json")
}

/// The version `N` of a metadata file name `vN.metadata.json`, if it is one.
pub fn version_of_file_name(name: &str) -> Option<u64> {
    name.strip_prefix('v')?
        .strip_suffix(".metadata.json")?
        .parse()
        .ok()
}

/// Whether the table-relative `path` is one of the files that make `metadata/` a table's
/// Iceberg metadata: a `metadata/vN.metadata.json` or the version hint.
pub fn is_table_metadata_file(path: &str) -> bool {
    path == VERSION_HINT
        || path
            .strip_prefix(METADATA_DIR)
            .and_then(|rest| rest.strip_prefix('/'))
            .and_then(version_of_file_name)
            .is_some()
}

fn store_path(p: &str) -> Result<StorePath> {
    Ok(StorePath::parse(p)?)
}

/// The latest metadata version and its JSON, or `None` if the table has never been synced.
///
/// # Errors
/// [`IcebergError::CorruptMetadata`] if the latest file is not metadata JSON.
pub fn latest(store: &dyn ObjectStore) -> Result<Option<(u64, Value)>> {
    let hinted = match store.get(&store_path(VERSION_HINT)?) {
        Ok(b) => std::str::from_utf8(&b)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok()),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(e.into()),
    };
    let mut n = match hinted {
        Some(n) => n,
        None => {
            // No hint (or a damaged one): the largest vN.metadata.json listed.
            let dir = store_path(METADATA_DIR)?;
            let listed = match store.list_dir_from(Some(&dir), "v") {
                Ok(l) => l,
                Err(e) if e.is_not_found() => Vec::new(),
                Err(e) => return Err(e.into()),
            };
            let found = listed
                .iter()
                .filter_map(|m| version_of_file_name(m.path.as_str().rsplit('/').next()?))
                .max();
            match found {
                Some(n) => n,
                None => return Ok(None),
            }
        }
    };
    // The hint may lag the files: a sync writes the hint after its metadata file.
    while let Some(next) = n.checked_add(1) {
        match store.head(&store_path(&metadata_file(next))?) {
            Ok(_) => n = next,
            Err(e) if e.is_not_found() => break,
            Err(e) => return Err(e.into()),
        }
    }
    let file = metadata_file(n);
    let bytes = match store.get(&store_path(&file)?) {
        Ok(b) => b,
        Err(e) if e.is_not_found() && hinted.is_some() => {
            return Err(IcebergError::CorruptMetadata {
                file: VERSION_HINT.into(),
                reason: format!("names version {n}, whose metadata file does not exist"),
            });
        }
        Err(e) => return Err(e.into()),
    };
    let json: Value =
        serde_json::from_slice(&bytes).map_err(|e| IcebergError::CorruptMetadata {
            file: file.clone(),
            reason: format!("not JSON: {e}"),
        })?;
    if json.get("format-version").and_then(Value::as_i64) != Some(2) {
        return Err(IcebergError::CorruptMetadata {
            file,
            reason: "not Iceberg format version 2 metadata".into(),
        });
    }
    Ok(Some((n, json)))
}

/// Creates metadata version `n`; `Ok(false)` if another sync created it first.
///
/// # Errors
/// Storage errors other than the file existing.
pub fn create(store: &dyn ObjectStore, n: u64, json: &Value) -> Result<bool> {
    let text = serde_json::to_vec_pretty(json).map_err(|e| IcebergError::CorruptMetadata {
        file: metadata_file(n),
        reason: format!("cannot encode: {e}"),
    })?;
    match store.put_if_absent(&store_path(&metadata_file(n))?, Bytes::from(text)) {
        Ok(()) => {}
        Err(e) if e.is_already_exists() => return Ok(false),
        Err(e) => return Err(e.into()),
    }
    // Best effort: a stale hint is corrected by the probing in `latest`.
    let _ = store.put(&store_path(VERSION_HINT)?, Bytes::from(n.to_string()));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use alluvium_storage::InMemoryStore;

    use super::*;

    #[test]
    fn metadata_file_names_are_recognised_and_nothing_else() {
        assert_eq!(version_of_file_name("v12.metadata.json"), Some(12));
        assert_eq!(version_of_file_name("v.metadata.json"), None);
        assert_eq!(version_of_file_name("snap-1-m.avro"), None);
        assert!(is_table_metadata_file("metadata/v3.metadata.json"));
        assert!(is_table_metadata_file("metadata/version-hint.text"));
        assert!(!is_table_metadata_file("metadata/sub/v3.metadata.json"));
        assert!(!is_table_metadata_file("metadata/dv-1.parquet"));
        assert!(!is_table_metadata_file("p=metadata/v3.metadata.json"));
    }

    #[test]
    fn a_hint_at_the_largest_version_is_no_overflow() {
        let store = InMemoryStore::new();
        let hint = StorePath::parse(VERSION_HINT).unwrap();
        store.put(&hint, Bytes::from(u64::MAX.to_string())).unwrap();
        let e = latest(&store).unwrap_err().to_string();
        assert!(e.contains("version-hint.text"), "{e}");
    }
}
