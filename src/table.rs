//! The table handle: where a table lives and how to read its snapshots.

use std::path::Path;
use std::sync::Arc;

use alluvium_mvcc::snapshot::VersionedCache;
use alluvium_mvcc::{Snapshot, VersionSpec};
use alluvium_storage::{InMemoryStore, LocalFsStore, StoreRef, remote_scheme};

use crate::{Error, Result};

/// Opens an object-store table (feature `s3`).
#[cfg(feature = "s3")]
fn open_remote<K: AsRef<str>, V: AsRef<str>>(location: &str, pairs: &[(K, V)]) -> Result<Table> {
    let options = alluvium_storage::RemoteOptions::from_pairs(
        pairs
            .iter()
            .map(|(k, v)| (k.as_ref().to_string(), v.as_ref().to_string())),
    )?;
    Ok(Table::from_store(Arc::new(
        alluvium_storage::RemoteStore::open(location, &options)?,
    )))
}

/// Without the `s3` feature object-store locations are refused.
#[cfg(not(feature = "s3"))]
fn open_remote<K: AsRef<str>, V: AsRef<str>>(location: &str, _pairs: &[(K, V)]) -> Result<Table> {
    Err(Error::InvalidArgument(format!(
        "{location}: this build of alluvium has no object-store support (cargo feature `s3`)"
    )))
}

/// A Delta table at a location. Cheap to clone (clones share the snapshot cache);
/// thread-safe.
///
/// The handle caches the newest snapshot it has seen; [`snapshot`](Self::snapshot) refreshes
/// it incrementally (one listing, then only the new commits).
#[derive(Debug, Clone)]
pub struct Table {
    store: StoreRef,
    cache: Arc<VersionedCache<Snapshot>>,
}

impl Table {
    /// Opens the table at `location`: a local path, a `file://` URI, or (with the default
    /// cargo feature `s3`) an object-store URI: `s3://bucket/prefix` (also `s3a://`),
    /// `gs://bucket/prefix`, `az://container/prefix` (also `azure://`, `abfs[s]://`).
    ///
    /// Object stores take their configuration from the `object_store` crate's environment
    /// variables (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_REGION`, `AWS_ALLOW_HTTP`, ...; `GOOGLE_*`, `AZURE_*`) and alluvium's defaults;
    /// alluvium's own options are given with
    /// [`open_with_options`](Self::open_with_options). The library reads no environment
    /// variable of its own (the CLI reads `ALLUVIUM_STORAGE_OPTIONS` and passes the pairs).
    ///
    /// Opening does no I/O; a missing table is reported by the first read.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for URIs of unsupported schemes (or object-store URIs in a
    /// build without the `s3` feature);
    /// [`Error::Storage`] for a bad object-store configuration.
    pub fn open(location: &str) -> Result<Table> {
        if remote_scheme(location).is_some() {
            return open_remote::<&str, &str>(location, &[]);
        }
        Self::open_local(location, true)
    }

    /// Opens the table at `location` with explicit options, which win over the
    /// `object_store` crate's environment variables.
    ///
    /// For object-store locations the keys are alluvium's own:
    /// * `put_if_absent`: `probe` (default: find out with a scratch object when a writer
    ///   first commits), `true` (the store gives conditional creates) or `false`;
    /// * `single_writer`: `true` declares that at most one writer uses the table at a time,
    ///   which lets writes go ahead on a store without put-if-absent (default `false`);
    /// * `concurrency`: requests in flight per batch of reads or deletes (default 32);
    ///
    /// and every `object_store` configuration key, e.g. `aws_endpoint`,
    /// `aws_access_key_id`, `aws_secret_access_key`, `aws_region`, `aws_allow_http`,
    /// `google_service_account`, `azure_storage_account_name`.
    ///
    /// For local locations the one key is `fsync` (`true` by default; see
    /// [`open_local`](Self::open_local)).
    ///
    /// # Errors
    /// As [`open`](Self::open); [`Error::InvalidArgument`] for a key that does not apply
    /// to the location; [`Error::Storage`] for a bad key or value of an object store.
    pub fn open_with_options(location: &str, options: &[(&str, &str)]) -> Result<Table> {
        if remote_scheme(location).is_some() {
            return open_remote(location, options);
        }
        let mut durable = true;
        for (k, v) in options {
            match k.trim().to_ascii_lowercase().as_str() {
                "fsync" => {
                    durable = match v.trim().to_ascii_lowercase().as_str() {
                        "true" | "1" | "yes" | "on" => true,
                        "false" | "0" | "no" | "off" => false,
                        _ => {
                            return Err(Error::InvalidArgument(format!(
                                "fsync={v}: expected true or false"
                            )));
                        }
                    }
                }
                other => {
                    return Err(Error::InvalidArgument(format!(
                        "option {other} does not apply to the local table {location}"
                    )));
                }
            }
        }
        Self::open_local(location, durable)
    }

    /// Opens a local table choosing whether writes are fsynced (`durable`, the default of
    /// [`open`](Self::open)). Without fsync a power loss may lose acknowledged commits;
    /// a process crash cannot. An object-store location is opened as by
    /// [`open`](Self::open) (`durable` does not apply: a stored object is durable).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_local(location: &str, durable: bool) -> Result<Table> {
        if remote_scheme(location).is_some() {
            return Self::open(location);
        }
        let path = if let Some(rest) = location.strip_prefix("file://") {
            rest.to_string()
        } else if location.contains("://") {
            return Err(Error::InvalidArgument(format!(
                "unsupported table location {location}"
            )));
        } else {
            location.to_string()
        };
        let path = Path::new(&path);
        let absolute = match std::fs::canonicalize(path) {
            Ok(p) => p,
            Err(_) if path.is_absolute() => path.to_path_buf(),
            Err(_) => std::env::current_dir()
                .map_err(|e| Error::Io {
                    context: "current directory".into(),
                    source: e,
                })?
                .join(path),
        };
        Ok(Table::from_store(Arc::new(
            LocalFsStore::new(absolute).with_durability(durable),
        )))
    }

    /// A table in an existing store.
    pub fn from_store(store: StoreRef) -> Table {
        Table {
            store,
            cache: Arc::new(VersionedCache::new()),
        }
    }

    /// A table in a fresh in-memory store.
    pub fn in_memory() -> Table {
        Table::from_store(Arc::new(InMemoryStore::new()))
    }

    /// The store.
    pub fn store(&self) -> &StoreRef {
        &self.store
    }

    /// The location, as a URI.
    pub fn uri(&self) -> String {
        self.store.root_uri()
    }

    /// The latest snapshot.
    ///
    /// # Errors
    /// See [`Snapshot::load`].
    pub fn snapshot(&self) -> Result<Snapshot> {
        let fresh = match self.cache.get() {
            Some(cached) => cached.refresh()?,
            None => Snapshot::load(self.store.clone(), VersionSpec::Latest)?,
        };
        Ok((*self.cache.publish(Arc::new(fresh))).clone())
    }

    /// The snapshot of a version, or as of a timestamp.
    ///
    /// # Errors
    /// See [`Snapshot::load`].
    pub fn snapshot_at(&self, spec: VersionSpec) -> Result<Snapshot> {
        Ok(Snapshot::load(self.store.clone(), spec)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_options_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let loc = dir.path().to_str().unwrap();
        assert!(Table::open_with_options(loc, &[("fsync", "false")]).is_ok());
        assert!(Table::open_with_options(loc, &[("fsync", "maybe")]).is_err());
        assert!(Table::open_with_options(loc, &[("aws_region", "x")]).is_err());
    }

    #[cfg(feature = "s3")]
    #[test]
    fn remote_locations_open_without_io() {
        let t = Table::open_with_options(
            "s3://bucket/some/table",
            &[
                ("aws_endpoint", "http://127.0.0.1:1"),
                ("aws_region", "us-east-1"),
                ("single_writer", "true"),
            ],
        )
        .unwrap();
        assert_eq!(t.uri(), "s3://bucket/some/table");
        assert!(t.store().single_writer());
        assert!(Table::open_with_options("s3://bucket/t", &[("single_writer", "maybe")]).is_err());
    }
}
