//! The table handle: where a table lives and how to read its snapshots.

use std::path::Path;
use std::sync::Arc;

use alluvium_mvcc::snapshot::VersionedCache;
use alluvium_mvcc::{Snapshot, VersionSpec};
use alluvium_storage::{InMemoryStore, LocalFsStore, StoreRef};

use crate::{Error, Result};

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
    /// Opens the table at `location`: a local path or a `file://` URI.
    ///
    /// Opening does no I/O; a missing table is reported by the first read.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for URIs of unsupported schemes.
    pub fn open(location: &str) -> Result<Table> {
        Self::open_local(location, true)
    }

    /// Opens a local table choosing whether writes are fsynced (`durable`, the default of
    /// [`open`](Self::open)). Without fsync a power loss may lose acknowledged commits;
    /// a process crash cannot.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_local(location: &str, durable: bool) -> Result<Table> {
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
