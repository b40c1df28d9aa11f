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
                .filter_map(|m| {
                    let name = m.path.as_str().rsplit('/').next()?;
                    name.strip_prefix('v')?
                        .strip_suffix(".metadata.json")?
                        .parse::<u64>()
                        .ok()
                })
                .max();
            match found {
                Some(n) => n,
                None => return Ok(None),
            }
        }
    };
    // The hint may lag the files: a sync writes the hint after its metadata file.
    loop {
        match store.head(&store_path(&metadata_file(n + 1))?) {
            Ok(_) => n += 1,
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
