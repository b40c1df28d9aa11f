//! A view of a store under one directory, so that several tables can share one store root
//! (the facade's state store keeps three tables under one location this way, on any
//! backend). Every path is the inner path with the prefix prepended; listings come back
//! relative to the prefix.

use std::ops::Range;

use crate::{FileLocation, ObjectMeta, ObjectStore, RequestCounts, Result, StorePath, StoreRef};
use bytes::Bytes;

/// `inner` seen from the directory `prefix` (no leading or trailing `/`).
#[derive(Debug)]
pub struct PrefixStore {
    inner: StoreRef,
    prefix: String,
}

impl PrefixStore {
    /// The view of `inner` under `prefix`.
    pub fn new(inner: StoreRef, prefix: &str) -> PrefixStore {
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

    /// An inner path relative to the prefix, `None` for a path outside it.
    fn relative(&self, path: &StorePath) -> Option<StorePath> {
        let rest = path
            .as_str()
            .strip_prefix(self.prefix.as_str())?
            .strip_prefix('/')?;
        Some(StorePath::from_trusted(rest.to_string()))
    }

    /// A listing entry of the inner store, relative to the prefix (entries outside it,
    /// which a listing of the prefix never returns, are dropped).
    fn strip(&self, meta: ObjectMeta) -> Option<ObjectMeta> {
        Some(ObjectMeta {
            path: self.relative(&meta.path)?,
            size: meta.size,
            last_modified_ms: meta.last_modified_ms,
        })
    }
}

impl ObjectStore for PrefixStore {
    fn root_uri(&self) -> String {
        // `memory://` has its objects at `memory:///path`: its empty authority stays.
        let root = self.inner.root_uri();
        let base = if root.ends_with("://") {
            root.as_str()
        } else {
            root.trim_end_matches('/')
        };
        format!("{base}/{}", self.prefix)
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
    fn put_new(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.inner.put_new(&self.full(path), data)
    }
    fn put_new_deferred(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.inner.put_new_deferred(&self.full(path), data)
    }
    fn put_new_streaming(
        &self,
        path: &StorePath,
        defer_name_sync: bool,
    ) -> Result<Option<Box<dyn crate::NewObjectWriter>>> {
        self.inner
            .put_new_streaming(&self.full(path), defer_name_sync)
    }
    fn put_staged(
        &self,
        path: &StorePath,
        publish: crate::Publish,
    ) -> Result<Option<Box<dyn crate::NewObjectWriter>>> {
        self.inner.put_staged(&self.full(path), publish)
    }
    fn sync_deferred(&self, paths: &[StorePath]) -> Result<()> {
        let full: Vec<StorePath> = paths.iter().map(|p| self.full(p)).collect();
        self.inner.sync_deferred(&full)
    }
    fn list_dir_from(&self, dir: Option<&StorePath>, start: &str) -> Result<Vec<ObjectMeta>> {
        self.list_dir_range(dir, start, None)
    }
    fn list_dir_range(
        &self,
        dir: Option<&StorePath>,
        start: &str,
        end: Option<&str>,
    ) -> Result<Vec<ObjectMeta>> {
        Ok(self
            .inner
            .list_dir_range(Some(&self.dir(dir)), start, end)?
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
    // The batch calls go to the inner store's own, so a view of a remote store keeps its
    // concurrent requests.
    fn get_many(&self, paths: &[StorePath]) -> Vec<Result<Bytes>> {
        let full: Vec<StorePath> = paths.iter().map(|p| self.full(p)).collect();
        self.inner.get_many(&full)
    }
    fn fetches_concurrently(&self) -> bool {
        self.inner.fetches_concurrently()
    }
    fn delete_many(&self, paths: &[StorePath]) -> Vec<Result<()>> {
        let full: Vec<StorePath> = paths.iter().map(|p| self.full(p)).collect();
        self.inner.delete_many(&full)
    }
    /// The inner store's answer (a local store resolves symbolic links), relative to the
    /// prefix: what lies outside it is not this view's to keep or delete.
    fn reachable_objects(&self, locations: &[FileLocation]) -> Result<Vec<StorePath>> {
        let inner: Vec<FileLocation> = locations
            .iter()
            .map(|l| match l {
                FileLocation::Table(p) => FileLocation::Table(self.full(p)),
                FileLocation::External(u) => FileLocation::External(u.clone()),
            })
            .collect();
        Ok(self
            .inner
            .reachable_objects(&inner)?
            .iter()
            .filter_map(|p| self.relative(p))
            .collect())
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::InMemoryStore;

    /// Paths go under the prefix, listings come back relative to it, and what lies beside
    /// the prefix (`logbook/`, sharing its first letters) is never seen through the view.
    #[test]
    fn a_view_reads_writes_and_lists_only_under_its_prefix() {
        let root: StoreRef = Arc::new(InMemoryStore::new());
        let p = |s: &str| StorePath::parse(s).unwrap();
        root.put(&p("logbook/x.json"), Bytes::from_static(b"beside"))
            .unwrap();
        let view = PrefixStore::new(root.clone(), "/log/");
        view.put_if_absent(&p("_delta_log/0.json"), Bytes::from_static(b"zero"))
            .unwrap();
        view.put(&p("part-1.parquet"), Bytes::from_static(b"data"))
            .unwrap();
        assert_eq!(root.get(&p("log/_delta_log/0.json")).unwrap(), "zero");
        assert_eq!(view.get(&p("part-1.parquet")).unwrap(), "data");
        assert_eq!(
            view.head(&p("part-1.parquet")).unwrap().path,
            p("part-1.parquet")
        );
        assert_eq!(view.get_range(&p("part-1.parquet"), 1..3).unwrap(), "at");
        let mut tree: Vec<String> = view
            .list_tree(None)
            .unwrap()
            .into_iter()
            .map(|m| m.path.as_str().to_string())
            .collect();
        tree.sort();
        assert_eq!(tree, vec!["_delta_log/0.json", "part-1.parquet"]);
        let listed = view.list_dir_from(Some(&p("_delta_log")), "").unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].path, p("_delta_log/0.json"));
        assert_eq!(view.root_uri(), "memory:///log");
        let reached = view
            .reachable_objects(&[
                FileLocation::Table(p("part-1.parquet")),
                FileLocation::External(format!("{}/./part-1.parquet", view.root_uri())),
            ])
            .unwrap();
        assert_eq!(reached, vec![p("part-1.parquet"), p("part-1.parquet")]);
        view.delete(&p("part-1.parquet")).unwrap();
        assert!(root.get(&p("log/part-1.parquet")).is_err());
        assert_eq!(root.get(&p("logbook/x.json")).unwrap(), "beside");
    }

    /// A view over a store that streams new files streams them too, under its prefix.
    #[test]
    fn a_view_streams_new_and_staged_files_under_its_prefix() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let root: StoreRef = Arc::new(crate::LocalFsStore::new(dir.path()));
        let view = PrefixStore::new(root.clone(), "state");
        let p = |s: &str| StorePath::parse(s).unwrap();
        let mut w = view
            .put_new_streaming(&p("part-1.parquet"), false)
            .unwrap()
            .expect("the local store streams");
        w.write_all(b"streamed").unwrap();
        assert_eq!(w.finish().unwrap(), 8);
        assert_eq!(root.get(&p("state/part-1.parquet")).unwrap(), "streamed");
        let memory = PrefixStore::new(Arc::new(InMemoryStore::new()), "state");
        assert!(memory.put_new_streaming(&p("x"), false).unwrap().is_none());

        // Staged objects too.
        let mut w = view
            .put_staged(&p("_delta_log/c.parquet"), crate::Publish::IfAbsent)
            .unwrap()
            .expect("the local store stages");
        w.write_all(b"staged").unwrap();
        assert_eq!(w.finish().unwrap(), 6);
        assert_eq!(
            root.get(&p("state/_delta_log/c.parquet")).unwrap(),
            "staged"
        );
        assert!(
            memory
                .put_staged(&p("x"), crate::Publish::Replace)
                .unwrap()
                .is_none()
        );
    }

    /// An in-memory store that says it fetches concurrently and records the batches it is
    /// handed, as a remote store would see them.
    #[derive(Debug, Default)]
    struct BatchProbe {
        inner: InMemoryStore,
        batches: std::sync::Mutex<Vec<Vec<String>>>,
    }

    impl BatchProbe {
        fn record(&self, paths: &[StorePath]) {
            let names = paths.iter().map(|p| p.as_str().to_string()).collect();
            self.batches.lock().unwrap().push(names);
        }
    }

    impl ObjectStore for BatchProbe {
        fn root_uri(&self) -> String {
            self.inner.root_uri()
        }
        fn get(&self, path: &StorePath) -> Result<Bytes> {
            self.inner.get(path)
        }
        fn get_range(&self, path: &StorePath, range: Range<u64>) -> Result<Bytes> {
            self.inner.get_range(path, range)
        }
        fn head(&self, path: &StorePath) -> Result<ObjectMeta> {
            self.inner.head(path)
        }
        fn put_if_absent(&self, path: &StorePath, data: Bytes) -> Result<()> {
            self.inner.put_if_absent(path, data)
        }
        fn put(&self, path: &StorePath, data: Bytes) -> Result<()> {
            self.inner.put(path, data)
        }
        fn list_dir_from(&self, dir: Option<&StorePath>, start: &str) -> Result<Vec<ObjectMeta>> {
            self.inner.list_dir_from(dir, start)
        }
        fn list_tree(&self, dir: Option<&StorePath>) -> Result<Vec<ObjectMeta>> {
            self.inner.list_tree(dir)
        }
        fn delete(&self, path: &StorePath) -> Result<()> {
            self.inner.delete(path)
        }
        fn get_many(&self, paths: &[StorePath]) -> Vec<Result<Bytes>> {
            self.record(paths);
            self.inner.get_many(paths)
        }
        fn fetches_concurrently(&self) -> bool {
            true
        }
        fn delete_many(&self, paths: &[StorePath]) -> Vec<Result<()>> {
            self.record(paths);
            self.inner.delete_many(paths)
        }
    }

    /// A view of a store that batches its requests hands it whole batches, under the prefix.
    #[test]
    fn batches_reach_the_inner_store_whole() {
        let probe = Arc::new(BatchProbe::default());
        let view = PrefixStore::new(probe.clone(), "t");
        let p = |s: &str| StorePath::parse(s).unwrap();
        view.put(&p("a"), Bytes::from_static(b"1")).unwrap();
        view.put(&p("b"), Bytes::from_static(b"2")).unwrap();
        assert!(view.fetches_concurrently());
        let got: Vec<Bytes> = view
            .get_many(&[p("b"), p("a")])
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(got, vec!["2", "1"]);
        assert!(
            view.delete_many(&[p("a"), p("b")])
                .iter()
                .all(Result::is_ok)
        );
        assert_eq!(
            *probe.batches.lock().unwrap(),
            vec![vec!["t/b", "t/a"], vec!["t/a", "t/b"]]
        );
        assert!(probe.inner.get(&p("t/a")).is_err());
    }
}
