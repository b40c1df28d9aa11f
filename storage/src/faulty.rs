//! A fault-injecting store wrapper for crash and fault tests (SPEC.md §10, the fault model).
//!
//! It counts every operation and, at the chosen one, injects a fault:
//! * [`Fault::ErrorBefore`]: the operation fails without effect (a request that never
//!   reached the store);
//! * [`Fault::ErrorAfter`]: the operation takes effect, then fails (a lost response);
//! * [`Fault::CrashBefore`] / [`Fault::CrashAfter`]: as above, and every later operation
//!   fails too, as if the process died; the test then reopens the table from the inner store
//!   alone. On a durable local filesystem this is also what a power loss leaves, because
//!   every acknowledged write was fsynced (file and directory) before it returned.
//!
//! The injected error is of kind [`io::ErrorKind::Other`] (an outcome the caller cannot
//! know) unless [`FaultyStore::with_error_kind`] names another, such as
//! [`io::ErrorKind::StorageFull`] for a disk-full refusal.

use std::io;
use std::ops::Range;

use bytes::Bytes;

use crate::sync::{Arc, AtomicBool, AtomicU64, Ordering};
use crate::{
    FileLocation, NewObjectWriter, ObjectMeta, ObjectStore, Publish, Result, StorageError,
    StorePath, StoreRef,
};

/// Which fault to inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Fail without effect.
    ErrorBefore,
    /// Take effect, then fail.
    ErrorAfter,
    /// Fail without effect and fail everything afterwards.
    CrashBefore,
    /// Take effect, fail, and fail everything afterwards.
    CrashAfter,
}

impl Fault {
    /// Every fault kind.
    pub const ALL: [Fault; 4] = [
        Fault::ErrorBefore,
        Fault::ErrorAfter,
        Fault::CrashBefore,
        Fault::CrashAfter,
    ];
}

/// Wraps a store and injects one fault at operation number `at` (1-based).
#[derive(Debug)]
pub struct FaultyStore {
    inner: StoreRef,
    /// Shared with the staged writers the store hands out, whose publishing is an
    /// operation of the same plan.
    plan: Arc<Plan>,
}

/// The fault plan and what it has counted.
#[derive(Debug)]
struct Plan {
    at: u64,
    fault: Fault,
    count: AtomicU64,
    dead: AtomicBool,
    kind: io::ErrorKind,
}

impl FaultyStore {
    /// Injects `fault` at the `at`-th operation (0 = never).
    pub fn new(inner: StoreRef, at: u64, fault: Fault) -> Self {
        FaultyStore {
            inner,
            plan: Arc::new(Plan {
                at,
                fault,
                count: AtomicU64::new(0),
                dead: AtomicBool::new(false),
                kind: io::ErrorKind::Other,
            }),
        }
    }

    /// Injects errors of `kind` instead of [`io::ErrorKind::Other`]. Pair a kind that
    /// proves nothing happened ([`StorageError::is_definite`]) with the faults that have no
    /// effect ([`Fault::ErrorBefore`], [`Fault::CrashBefore`]), as a real store would.
    #[must_use]
    pub fn with_error_kind(self, kind: io::ErrorKind) -> Self {
        let plan = Plan {
            at: self.plan.at,
            fault: self.plan.fault,
            count: AtomicU64::new(self.plan.count.load(Ordering::SeqCst)),
            dead: AtomicBool::new(self.plan.dead.load(Ordering::SeqCst)),
            kind,
        };
        FaultyStore {
            inner: self.inner,
            plan: Arc::new(plan),
        }
    }

    /// Operations performed so far.
    pub fn operations(&self) -> u64 {
        self.plan.count.load(Ordering::SeqCst)
    }

    /// Whether the simulated process has crashed.
    pub fn crashed(&self) -> bool {
        self.plan.dead.load(Ordering::SeqCst)
    }

    fn injected(&self, op: &'static str, path: &str) -> StorageError {
        self.plan.injected(op, path)
    }

    /// Runs `f` under the fault plan.
    fn run<T>(&self, op: &'static str, path: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.plan.run(op, path, f)
    }
}

impl Plan {
    fn injected(&self, op: &'static str, path: &str) -> StorageError {
        StorageError::Io {
            op,
            path: path.to_string(),
            source: io::Error::new(self.kind, "injected fault"),
        }
    }

    fn run<T>(&self, op: &'static str, path: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        if self.dead.load(Ordering::SeqCst) {
            return Err(self.injected(op, path));
        }
        let n = self.count.fetch_add(1, Ordering::SeqCst) + 1;
        if n != self.at {
            return f();
        }
        match self.fault {
            Fault::ErrorBefore => Err(self.injected(op, path)),
            Fault::CrashBefore => {
                self.dead.store(true, Ordering::SeqCst);
                Err(self.injected(op, path))
            }
            Fault::ErrorAfter => {
                let _ = f();
                Err(self.injected(op, path))
            }
            Fault::CrashAfter => {
                let _ = f();
                self.dead.store(true, Ordering::SeqCst);
                Err(self.injected(op, path))
            }
        }
    }
}

/// A staged object of the inner store whose publishing (`finish`) is one operation of the
/// plan: failed before it takes effect (the staged bytes dropped, nothing published) or
/// after it. Its writes fail once the simulated process has crashed.
struct FaultyStaged {
    inner: Box<dyn NewObjectWriter>,
    plan: Arc<Plan>,
    path: String,
}

impl io::Write for FaultyStaged {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.plan.dead.load(Ordering::SeqCst) {
            return Err(io::Error::new(self.plan.kind, "injected fault"));
        }
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl NewObjectWriter for FaultyStaged {
    fn finish(self: Box<Self>) -> Result<u64> {
        let FaultyStaged { inner, plan, path } = *self;
        plan.run("put_staged", &path, || inner.finish())
    }
}

impl ObjectStore for FaultyStore {
    fn root_uri(&self) -> String {
        self.inner.root_uri()
    }

    fn get(&self, path: &StorePath) -> Result<Bytes> {
        self.run("read", path.as_str(), || self.inner.get(path))
    }

    fn get_limited(&self, path: &StorePath, limit: u64) -> Result<Bytes> {
        // Delegated, not defaulted: the inner store may refuse before reading.
        self.run("read", path.as_str(), || {
            self.inner.get_limited(path, limit)
        })
    }

    fn get_range(&self, path: &StorePath, range: Range<u64>) -> Result<Bytes> {
        self.run("read range", path.as_str(), || {
            self.inner.get_range(path, range)
        })
    }

    fn head(&self, path: &StorePath) -> Result<ObjectMeta> {
        self.run("stat", path.as_str(), || self.inner.head(path))
    }

    fn put_if_absent(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.run("put_if_absent", path.as_str(), || {
            self.inner.put_if_absent(path, data)
        })
    }

    fn put(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.run("put", path.as_str(), || self.inner.put(path, data))
    }

    fn put_new(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.run("put_new", path.as_str(), || self.inner.put_new(path, data))
    }

    fn put_new_deferred(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.run("put_new", path.as_str(), || {
            self.inner.put_new_deferred(path, data)
        })
    }

    /// Staged through the inner store; the publish at `finish` is the operation (starting
    /// to stage has no effect a reader or a crash could see).
    fn put_staged(
        &self,
        path: &StorePath,
        publish: Publish,
    ) -> Result<Option<Box<dyn NewObjectWriter>>> {
        if self.crashed() {
            return Err(self.injected("put_staged", path.as_str()));
        }
        Ok(self.inner.put_staged(path, publish)?.map(|inner| {
            Box::new(FaultyStaged {
                inner,
                plan: self.plan.clone(),
                path: path.to_string(),
            }) as Box<dyn NewObjectWriter>
        }))
    }

    /// One operation for the whole sync (one per directory on a local store, but a fault
    /// at any of them fails the call alike).
    fn sync_deferred(&self, paths: &[StorePath]) -> Result<()> {
        let shown = paths.first().map_or("", StorePath::as_str);
        self.run("sync", shown, || self.inner.sync_deferred(paths))
    }

    fn list_dir_from(&self, dir: Option<&StorePath>, start: &str) -> Result<Vec<ObjectMeta>> {
        self.run("list", dir.map_or("", StorePath::as_str), || {
            self.inner.list_dir_from(dir, start)
        })
    }

    fn list_dir_range(
        &self,
        dir: Option<&StorePath>,
        start: &str,
        end: Option<&str>,
    ) -> Result<Vec<ObjectMeta>> {
        self.run("list", dir.map_or("", StorePath::as_str), || {
            self.inner.list_dir_range(dir, start, end)
        })
    }

    fn list_tree(&self, dir: Option<&StorePath>) -> Result<Vec<ObjectMeta>> {
        self.run("list", dir.map_or("", StorePath::as_str), || {
            self.inner.list_tree(dir)
        })
    }

    fn delete(&self, path: &StorePath) -> Result<()> {
        self.run("delete", path.as_str(), || self.inner.delete(path))
    }

    fn get_external(&self, uri: &str) -> Result<Bytes> {
        self.run("read", uri, || self.inner.get_external(uri))
    }

    fn supports_put_if_absent(&self) -> bool {
        self.inner.supports_put_if_absent()
    }

    // Batch calls take the default one-at-a-time paths through the methods above, so that
    // every object of a batch is one operation the plan can fail.

    /// The capability probe is configuration, not part of a workload: passed through
    /// without counting as an operation.
    fn check_put_if_absent(&self) -> Result<bool> {
        self.inner.check_put_if_absent()
    }

    fn single_writer(&self) -> bool {
        self.inner.single_writer()
    }

    fn request_counts(&self) -> crate::RequestCounts {
        self.inner.request_counts()
    }

    fn lists_from_key_cheaply(&self) -> bool {
        self.inner.lists_from_key_cheaply()
    }

    fn now_ms(&self) -> i64 {
        self.inner.now_ms()
    }

    fn reachable_objects(&self, locations: &[FileLocation]) -> Result<Vec<StorePath>> {
        self.inner.reachable_objects(locations)
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
    fn faults_fire_once_or_forever() {
        let inner: StoreRef = Arc::new(InMemoryStore::new());
        let f = FaultyStore::new(inner.clone(), 2, Fault::ErrorAfter);
        f.put(&p("a"), Bytes::new()).unwrap();
        assert!(f.put(&p("b"), Bytes::new()).is_err());
        assert!(inner.head(&p("b")).is_ok(), "the effect happened");
        f.put(&p("c"), Bytes::new()).unwrap();
        let f = FaultyStore::new(inner.clone(), 1, Fault::CrashBefore);
        assert!(f.put(&p("d"), Bytes::new()).is_err());
        assert!(f.get(&p("a")).is_err() && f.crashed());
        assert!(inner.head(&p("d")).is_err(), "no effect");
    }

    /// Publishing a staged object is one operation of the plan: a fault before it leaves
    /// nothing (not even the staged bytes), one after it leaves the object published; a
    /// crashed process can neither stage nor write.
    #[test]
    fn a_staged_publish_is_one_operation() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let inner: StoreRef = Arc::new(crate::LocalFsStore::new(dir.path()));
        let staged = |f: &FaultyStore, name: &str| {
            let mut w = f
                .put_staged(&p(name), Publish::Replace)
                .unwrap()
                .expect("the local store stages");
            w.write_all(b"bytes").unwrap();
            w.finish()
        };
        let f = FaultyStore::new(inner.clone(), 1, Fault::ErrorBefore);
        assert!(staged(&f, "a").is_err());
        assert!(inner.head(&p("a")).is_err(), "no effect");
        assert_eq!(f.operations(), 1);
        assert_eq!(staged(&f, "a").unwrap(), 5, "the next operation runs");

        let f = FaultyStore::new(inner.clone(), 1, Fault::ErrorAfter);
        assert!(staged(&f, "b").is_err());
        assert_eq!(inner.get(&p("b")).unwrap(), "bytes", "the effect happened");

        let f = FaultyStore::new(inner.clone(), 1, Fault::CrashBefore);
        let mut w = f.put_staged(&p("c"), Publish::IfAbsent).unwrap().unwrap();
        w.write_all(b"x").unwrap();
        assert!(w.finish().is_err() && f.crashed());
        assert!(inner.head(&p("c")).is_err());
        assert!(f.put_staged(&p("d"), Publish::IfAbsent).is_err());
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.iter().any(|n| crate::is_temp_name(n)), "{names:?}");
    }
}
