//! A view of a store under one directory: the store of a state store's `log/`, `state/` or
//! `tombstones/` table when the caller hands over a single store root (in-memory tests,
//! embedders with their own backend). Every path is the inner path with the prefix
//! prepended; listings come back relative to the prefix.

use std::ops::Range;

use alluvium_storage::{
    FileLocation, ObjectMeta, ObjectStore, RequestCounts, Result, StorePath, StoreRef,
};
use bytes::Bytes;

/// `inner` seen from the directory `prefix` (no leading or trailing `/`).
#[derive(Debug)]
pub(crate) struct PrefixStore {
    inner: StoreRef,
    prefix: String,
}

impl PrefixStore {
    /// The view of `inner` under `prefix`.
    pub(crate) fn new(inner: StoreRef, prefix: &str) -> PrefixStore {
        PrefixStore {
            inner,
            prefix: prefix.trim_matches('/').to_string(),
        }
    }

    fn full(&self, path: &StorePath) -> StorePath {
        StorePath::from_trusted(format!("{}/{}", self.prefix, path.as_str()))
    }

    fn dir(&self, dir: Option<&StorePath>) -> StorePath {
        match dir {
            Some(d) => self.full(d),
            None => StorePath::from_trusted(self.prefix.clone()),
        }
    }

    /// A listing entry of the inner store, relative to the prefix (entries outside it,
    /// which a listing of the prefix never returns, are dropped).
    fn strip(&self, meta: ObjectMeta) -> Option<ObjectMeta> {
        let rest = meta
            .path
            .as_str()
            .strip_prefix(self.prefix.as_str())?
            .strip_prefix('/')?;
        Some(ObjectMeta {
            path: StorePath::from_trusted(rest.to_string()),
            size: meta.size,
            last_modified_ms: meta.last_modified_ms,
        })
    }
}

impl ObjectStore for PrefixStore {
    fn root_uri(&self) -> String {
        format!(
            "{}/{}",
            self.inner.root_uri().trim_end_matches('/'),
            self.prefix
        )
    }
    fn get(&self, path: &StorePath) -> Result<Bytes> {
        self.inner.get(&self.full(path))
    }
    fn get_limited(&self, path: &StorePath, limit: u64) -> Result<Bytes> {
        self.inner.get_limited(&self.full(path), limit)
    }
    fn get_range(&self, path: &StorePath, range: Range<u64>) -> Result<Bytes> {
        self.inner.get_range(&self.full(path), range)
    }
    fn head(&self, path: &StorePath) -> Result<ObjectMeta> {
        let meta = self.inner.head(&self.full(path))?;
        Ok(ObjectMeta {
            path: path.clone(),
            size: meta.size,
            last_modified_ms: meta.last_modified_ms,
        })
    }
    fn put_if_absent(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.inner.put_if_absent(&self.full(path), data)
    }
    fn put(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.inner.put(&self.full(path), data)
    }
    fn list_dir_from(&self, dir: Option<&StorePath>, start: &str) -> Result<Vec<ObjectMeta>> {
        Ok(self
            .inner
            .list_dir_from(Some(&self.dir(dir)), start)?
            .into_iter()
            .filter_map(|m| self.strip(m))
            .collect())
    }
    fn list_tree(&self, dir: Option<&StorePath>) -> Result<Vec<ObjectMeta>> {
        Ok(self
            .inner
            .list_tree(Some(&self.dir(dir)))?
            .into_iter()
            .filter_map(|m| self.strip(m))
            .collect())
    }
    fn delete(&self, path: &StorePath) -> Result<()> {
        self.inner.delete(&self.full(path))
    }
    fn request_counts(&self) -> RequestCounts {
        self.inner.request_counts()
    }
    fn get_external(&self, uri: &str) -> Result<Bytes> {
        self.inner.get_external(uri)
    }
    fn get_location(&self, location: &FileLocation) -> Result<Bytes> {
        match location {
            FileLocation::Table(p) => self.get(p),
            FileLocation::External(u) => self.get_external(u),
        }
    }
    fn now_ms(&self) -> i64 {
        self.inner.now_ms()
    }
    fn supports_put_if_absent(&self) -> bool {
        self.inner.supports_put_if_absent()
    }
    fn check_put_if_absent(&self) -> Result<bool> {
        self.inner.check_put_if_absent()
    }
    fn single_writer(&self) -> bool {
        self.inner.single_writer()
    }
    fn lists_from_key_cheaply(&self) -> bool {
        self.inner.lists_from_key_cheaply()
    }
}
