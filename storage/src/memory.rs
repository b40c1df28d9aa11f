//! An in-memory store: an ordered map behind one mutex.

use std::collections::BTreeMap;
use std::ops::Range;

use bytes::Bytes;

use crate::sync::{AtomicI64, Mutex, Ordering};
use crate::{ObjectMeta, ObjectStore, Result, StorageError, StorePath};

#[derive(Debug, Clone)]
struct Object {
    data: Bytes,
    modified_ms: i64,
}

/// A store that keeps every object in memory.
///
/// `put_if_absent` checks and inserts under one lock, which makes it linearizable; the loom
/// models in `mvcc` check the commit protocol against exactly this code. Modification times
/// come from the system clock unless a manual clock is set ([`InMemoryStore::with_manual_clock`]),
/// which tests use to make time travel deterministic.
#[derive(Debug)]
pub struct InMemoryStore {
    objects: Mutex<BTreeMap<String, Object>>,
    /// Milliseconds since the epoch of the manual clock; `i64::MIN` = use the system clock.
    manual_now_ms: AtomicI64,
    /// Negative control for the loom models: when set, `put_if_absent` checks for existence
    /// and inserts under two separate lock acquisitions (a check-then-act race). Never set
    /// outside tests.
    racy: bool,
}

impl Default for InMemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemoryStore {
    /// An empty store using the system clock.
    pub fn new() -> Self {
        InMemoryStore {
            objects: Mutex::new(BTreeMap::new()),
            manual_now_ms: AtomicI64::new(i64::MIN),
            racy: false,
        }
    }

    /// An empty store whose clock starts at `start_ms` and only moves with
    /// [`advance_clock`](Self::advance_clock): each write takes the current clock value as
    /// its modification time.
    #[must_use]
    pub fn with_manual_clock(self, start_ms: i64) -> Self {
        self.manual_now_ms.store(start_ms, Ordering::SeqCst);
        self
    }

    /// Moves the manual clock forward.
    pub fn advance_clock(&self, ms: i64) {
        self.manual_now_ms.fetch_add(ms, Ordering::SeqCst);
    }

    /// Overrides the modification time of an existing object (tests of time travel).
    ///
    /// # Errors
    /// [`StorageError::NotFound`] if the object does not exist.
    pub fn set_last_modified(&self, path: &StorePath, ms: i64) -> Result<()> {
        let mut objects = self.objects.lock();
        match objects.get_mut(path.as_str()) {
            Some(o) => {
                o.modified_ms = ms;
                Ok(())
            }
            None => Err(StorageError::NotFound {
                path: path.to_string(),
            }),
        }
    }

    /// A deliberately broken store whose `put_if_absent` is not atomic. It exists only so
    /// the concurrency models can prove they would catch a store without mutual exclusion
    /// (feature `testing`).
    #[cfg(any(test, feature = "testing"))]
    pub fn racy_for_testing() -> Self {
        InMemoryStore {
            racy: true,
            ..Self::new()
        }
    }

    fn clock_ms(&self) -> i64 {
        let manual = self.manual_now_ms.load(Ordering::SeqCst);
        if manual != i64::MIN {
            return manual;
        }
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }

    fn meta(path: &str, o: &Object) -> Option<ObjectMeta> {
        Some(ObjectMeta {
            path: StorePath::parse(path).ok()?,
            size: o.data.len() as u64,
            last_modified_ms: o.modified_ms,
        })
    }

    fn dir_prefix(dir: Option<&StorePath>) -> String {
        dir.map_or_else(String::new, |d| format!("{d}/"))
    }
}

impl ObjectStore for InMemoryStore {
    fn root_uri(&self) -> String {
        "memory://".to_string()
    }

    fn now_ms(&self) -> i64 {
        self.clock_ms()
    }

    fn get(&self, path: &StorePath) -> Result<Bytes> {
        self.objects
            .lock()
            .get(path.as_str())
            .map(|o| o.data.clone())
            .ok_or_else(|| StorageError::NotFound {
                path: path.to_string(),
            })
    }

    fn get_range(&self, path: &StorePath, range: Range<u64>) -> Result<Bytes> {
        let data = self.get(path)?;
        let (start, end) = (usize::try_from(range.start), usize::try_from(range.end));
        match (start, end) {
            (Ok(s), Ok(e)) if s <= e && e <= data.len() => Ok(data.slice(s..e)),
            _ => Err(StorageError::io(
                "read range",
                path.as_str(),
                std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "range past end of object",
                ),
            )),
        }
    }

    fn head(&self, path: &StorePath) -> Result<ObjectMeta> {
        let objects = self.objects.lock();
        objects
            .get(path.as_str())
            .and_then(|o| Self::meta(path.as_str(), o))
            .ok_or_else(|| StorageError::NotFound {
                path: path.to_string(),
            })
    }

    fn put_if_absent(&self, path: &StorePath, data: Bytes) -> Result<()> {
        let now = self.clock_ms();
        if self.racy {
            let exists = self.objects.lock().contains_key(path.as_str());
            crate::sync::yield_now();
            if exists {
                return Err(StorageError::AlreadyExists {
                    path: path.to_string(),
                });
            }
            self.objects.lock().insert(
                path.to_string(),
                Object {
                    data,
                    modified_ms: now,
                },
            );
            return Ok(());
        }
        let mut objects = self.objects.lock();
        if objects.contains_key(path.as_str()) {
            return Err(StorageError::AlreadyExists {
                path: path.to_string(),
            });
        }
        objects.insert(
            path.to_string(),
            Object {
                data,
                modified_ms: now,
            },
        );
        Ok(())
    }

    fn put(&self, path: &StorePath, data: Bytes) -> Result<()> {
        let now = self.clock_ms();
        self.objects.lock().insert(
            path.to_string(),
            Object {
                data,
                modified_ms: now,
            },
        );
        Ok(())
    }

    fn list_dir_from(&self, dir: Option<&StorePath>, start: &str) -> Result<Vec<ObjectMeta>> {
        let prefix = Self::dir_prefix(dir);
        let from = format!("{prefix}{start}");
        let objects = self.objects.lock();
        Ok(objects
            .range(from..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(k, _)| !k[prefix.len()..].contains('/'))
            .filter_map(|(k, o)| Self::meta(k, o))
            .collect())
    }

    fn list_tree(&self, dir: Option<&StorePath>) -> Result<Vec<ObjectMeta>> {
        let prefix = Self::dir_prefix(dir);
        let objects = self.objects.lock();
        Ok(objects
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter_map(|(k, o)| Self::meta(k, o))
            .collect())
    }

    fn delete(&self, path: &StorePath) -> Result<()> {
        self.objects.lock().remove(path.as_str());
        Ok(())
    }
}

#[cfg(all(test, not(alluvium_loom)))]
mod tests {
    use super::*;

    fn p(s: &str) -> StorePath {
        StorePath::parse(s).unwrap()
    }

    #[test]
    fn put_if_absent_conflicts() {
        let s = InMemoryStore::new();
        s.put_if_absent(&p("a"), Bytes::from_static(b"1")).unwrap();
        assert!(
            s.put_if_absent(&p("a"), Bytes::from_static(b"2"))
                .unwrap_err()
                .is_already_exists()
        );
        assert_eq!(s.get(&p("a")).unwrap(), Bytes::from_static(b"1"));
    }

    #[test]
    fn listing_is_per_directory_and_sorted() {
        let s = InMemoryStore::new();
        for k in ["d/b", "d/a", "d/sub/x", "e/z", "root"] {
            s.put(&p(k), Bytes::new()).unwrap();
        }
        let l: Vec<_> = s
            .list_dir_from(Some(&p("d")), "")
            .unwrap()
            .into_iter()
            .map(|m| m.path.to_string())
            .collect();
        assert_eq!(l, ["d/a", "d/b"]);
        let l: Vec<_> = s
            .list_dir_from(None, "")
            .unwrap()
            .into_iter()
            .map(|m| m.path.to_string())
            .collect();
        assert_eq!(l, ["root"]);
        let l: Vec<_> = s
            .list_tree(Some(&p("d")))
            .unwrap()
            .into_iter()
            .map(|m| m.path.to_string())
            .collect();
        assert_eq!(l, ["d/a", "d/b", "d/sub/x"]);
    }

    #[test]
    fn manual_clock_sets_modification_times() {
        let s = InMemoryStore::new().with_manual_clock(1000);
        s.put(&p("a"), Bytes::new()).unwrap();
        s.advance_clock(5);
        s.put(&p("b"), Bytes::new()).unwrap();
        assert_eq!(s.head(&p("a")).unwrap().last_modified_ms, 1000);
        assert_eq!(s.head(&p("b")).unwrap().last_modified_ms, 1005);
        assert!(s.get_range(&p("a"), 0..1).is_err());
    }
}
