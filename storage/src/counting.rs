//! A store wrapper that counts the requests made through it, by kind: request counts for
//! stores that do not count their own (local filesystem, memory), and for tests.

use std::ops::Range;

use bytes::Bytes;

use crate::counts::{RequestCounters, RequestKind};
use crate::{FileLocation, ObjectMeta, ObjectStore, RequestCounts, Result, StorePath, StoreRef};

/// Wraps a store and counts every call: a `get`, `get_range` or `get_external` is a GET, a
/// listing a LIST, `put` and `put_if_absent` a PUT, and so on; a batch call counts one
/// request per object. Everything else is passed through unchanged.
///
/// [`request_counts`](ObjectStore::request_counts) reports the wrapper's own counts (the
/// calls made through it), not the inner store's.
#[derive(Debug)]
pub struct CountingStore {
    inner: StoreRef,
    counters: RequestCounters,
}

impl CountingStore {
    /// Counts the calls made to `inner` through the returned store.
    pub fn new(inner: StoreRef) -> Self {
        CountingStore {
            inner,
            counters: RequestCounters::default(),
        }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &StoreRef {
        &self.inner
    }

    fn count(&self, kind: RequestKind, n: usize) {
        self.counters
            .record(kind, u64::try_from(n).unwrap_or(u64::MAX));
    }
}

impl ObjectStore for CountingStore {
    fn root_uri(&self) -> String {
        self.inner.root_uri()
    }

    fn get(&self, path: &StorePath) -> Result<Bytes> {
        self.count(RequestKind::Get, 1);
        self.inner.get(path)
    }

    fn get_limited(&self, path: &StorePath, limit: u64) -> Result<Bytes> {
        // Delegated, not defaulted: the inner store may refuse before reading.
        self.count(RequestKind::Get, 1);
        self.inner.get_limited(path, limit)
    }

    fn get_range(&self, path: &StorePath, range: Range<u64>) -> Result<Bytes> {
        self.count(RequestKind::Get, 1);
        self.inner.get_range(path, range)
    }

    fn head(&self, path: &StorePath) -> Result<ObjectMeta> {
        self.count(RequestKind::Head, 1);
        self.inner.head(path)
    }

    fn put_if_absent(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.count(RequestKind::Put, 1);
        self.inner.put_if_absent(path, data)
    }

    fn put(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.count(RequestKind::Put, 1);
        self.inner.put(path, data)
    }

    fn put_new(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.count(RequestKind::Put, 1);
        self.inner.put_new(path, data)
    }

    fn put_new_deferred(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.count(RequestKind::Put, 1);
        self.inner.put_new_deferred(path, data)
    }

    fn sync_deferred(&self, paths: &[StorePath]) -> Result<()> {
        self.inner.sync_deferred(paths)
    }

    fn list_dir_from(&self, dir: Option<&StorePath>, start: &str) -> Result<Vec<ObjectMeta>> {
        self.count(RequestKind::List, 1);
        self.inner.list_dir_from(dir, start)
    }

    fn list_dir_range(
        &self,
        dir: Option<&StorePath>,
        start: &str,
        end: Option<&str>,
    ) -> Result<Vec<ObjectMeta>> {
        self.count(RequestKind::List, 1);
        self.inner.list_dir_range(dir, start, end)
    }

    fn list_tree(&self, dir: Option<&StorePath>) -> Result<Vec<ObjectMeta>> {
        self.count(RequestKind::List, 1);
        self.inner.list_tree(dir)
    }

    fn delete(&self, path: &StorePath) -> Result<()> {
        self.count(RequestKind::Delete, 1);
        self.inner.delete(path)
    }

    fn get_many(&self, paths: &[StorePath]) -> Vec<Result<Bytes>> {
        self.count(RequestKind::Get, paths.len());
        self.inner.get_many(paths)
    }

    fn fetches_concurrently(&self) -> bool {
        self.inner.fetches_concurrently()
    }

    fn delete_many(&self, paths: &[StorePath]) -> Vec<Result<()>> {
        self.count(RequestKind::Delete, paths.len());
        self.inner.delete_many(paths)
    }

    fn request_counts(&self) -> RequestCounts {
        self.counters.read()
    }

    fn get_external(&self, uri: &str) -> Result<Bytes> {
        self.count(RequestKind::Get, 1);
        self.inner.get_external(uri)
    }

    fn now_ms(&self) -> i64 {
        self.inner.now_ms()
    }

    fn reachable_objects(&self, locations: &[FileLocation]) -> Result<Vec<StorePath>> {
        self.inner.reachable_objects(locations)
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

#[cfg(all(test, not(alluvium_loom)))]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::InMemoryStore;

    fn p(s: &str) -> StorePath {
        StorePath::parse(s).unwrap()
    }

    #[test]
    fn counts_each_kind() {
        let s = CountingStore::new(Arc::new(InMemoryStore::new()));
        s.put_if_absent(&p("d/a"), Bytes::from_static(b"x"))
            .unwrap();
        s.put(&p("d/b"), Bytes::from_static(b"y")).unwrap();
        let before = s.request_counts();
        assert_eq!(before.put, 2);
        s.get(&p("d/a")).unwrap();
        let many = s.get_many(&[p("d/a"), p("d/b"), p("d/missing")]);
        assert_eq!(many.len(), 3);
        assert!(many[2].as_ref().unwrap_err().is_not_found());
        s.head(&p("d/a")).unwrap();
        assert_eq!(s.list_dir_from(Some(&p("d")), "").unwrap().len(), 2);
        assert!(
            s.delete_many(&[p("d/a"), p("d/a")])
                .iter()
                .all(Result::is_ok)
        );
        let d = s.request_counts().since(&before);
        assert_eq!(
            d,
            RequestCounts {
                list: 1,
                get: 4,
                head: 1,
                delete: 2,
                ..Default::default()
            }
        );
    }
}
