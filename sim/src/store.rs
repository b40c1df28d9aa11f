//! The simulated store: the storage contract of `alluvium_storage::ObjectStore` over an
//! ordered map, with every operation of an actor passing the scheduler's gate.
//!
//! Semantics (SPEC.md §2): objects become visible whole (atomic visibility), of racing
//! put-if-absent calls exactly one wins (the map is checked and written under one lock),
//! a successful put is seen by every later call (read-after-write), listings are sorted.
//! Listings never lag: contract item 3 (read-after-write, for listings too) forbids it, so
//! a lagging listing would be a store outside the contract, not a schedule to explore.
//!
//! Durability, chosen per seed: in **object-store** mode every successful put is durable.
//! In **local-fs** mode a file written with `put_new_deferred` is not durable until
//! `sync_deferred` names it (its directory entry is not fsynced); a machine crash drops
//! each such file, or tears it to a prefix. Every other write is durable when it returns,
//! as the local store's fsyncs make it.
//!
//! Faults come from the gate: an error before the effect, the effect then an error (the
//! caller cannot tell whether a put landed), a crash of the actor's process before or after
//! the effect (it fails everything from then on), and machine crashes.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use alluvium::{ObjectMeta, ObjectStore, StorageError, StorePath};
use bytes::Bytes;

use crate::rng::Rng;
use crate::sched::{Fault, Gate, Scheduler};

type Result<T> = std::result::Result<T, StorageError>;

#[derive(Debug, Clone)]
struct Object {
    data: Bytes,
    modified_ms: i64,
}

#[derive(Debug, Default)]
struct Objects {
    map: BTreeMap<String, Object>,
    /// Local-fs mode: deferred files whose names are not durable yet.
    undurable: BTreeSet<String>,
}

/// The simulated store of one run.
#[derive(Debug)]
pub struct SimStore {
    objects: Mutex<Objects>,
    sched: Arc<Scheduler>,
    local_fs: bool,
}

fn injected(op: &'static str, path: &str, kind: io::ErrorKind, what: &str) -> StorageError {
    StorageError::Io {
        op,
        path: path.to_string(),
        source: io::Error::new(kind, format!("simulated {what}")),
    }
}

fn describe<T>(r: &Result<T>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(e) if e.is_not_found() => "not-found".into(),
        Err(e) if e.is_already_exists() => "exists".into(),
        Err(_) => "error".into(),
    }
}

impl SimStore {
    pub(crate) fn new(sched: Arc<Scheduler>, local_fs: bool) -> SimStore {
        SimStore {
            objects: Mutex::new(Objects::default()),
            sched,
            local_fs,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Objects> {
        self.objects.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Loses what a machine crash loses: each undurable file is dropped or torn.
    fn machine_crash(&self, random: u64) {
        let mut rng = Rng::new(random);
        let mut o = self.lock();
        let lost: Vec<String> = std::mem::take(&mut o.undurable).into_iter().collect();
        for p in lost {
            if rng.chance(0.5) {
                o.map.remove(&p);
            } else if let Some(obj) = o.map.get_mut(&p) {
                let keep = rng.below(obj.data.len() as u64) as usize;
                obj.data = obj.data.slice(..keep);
            }
        }
    }

    /// Runs `effect` behind the gate of operation `op`.
    fn guarded<T>(
        &self,
        op: &'static str,
        path: &str,
        effect: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        self.guarded_with(op, path, effect, describe)
    }

    fn guarded_with<T>(
        &self,
        op: &'static str,
        path: &str,
        effect: impl FnOnce() -> Result<T>,
        outcome: impl Fn(&Result<T>) -> String,
    ) -> Result<T> {
        let fault = match self.sched.gate(op, path) {
            Gate::Free => return effect(),
            // A definite error: the call of a dead process has no effect, and saying so
            // ends its work at once (a commit loop that takes every unclear error for a
            // reason to go on, as planted bug (b) does, would otherwise spin with it, for
            // as long as a group commit's wall-clock budget).
            Gate::Dead => {
                return Err(injected(
                    op,
                    path,
                    io::ErrorKind::PermissionDenied,
                    "dead process",
                ));
            }
            Gate::MachineCrash(n) => {
                self.machine_crash(n);
                return Err(injected(op, path, io::ErrorKind::Other, "machine crash"));
            }
            Gate::Run(f) => f,
        };
        let r = match fault {
            None => effect(),
            Some(Fault::ErrorBefore { definite: true }) => {
                Err(injected(op, path, io::ErrorKind::StorageFull, "refusal"))
            }
            Some(Fault::ErrorBefore { definite: false } | Fault::CrashBefore) => {
                Err(injected(op, path, io::ErrorKind::TimedOut, "timeout"))
            }
            Some(Fault::ErrorAfter | Fault::CrashAfter) => {
                let _ = effect();
                Err(injected(op, path, io::ErrorKind::TimedOut, "lost response"))
            }
        };
        self.sched.record(op, path, fault, &outcome(&r));
        r
    }

    fn meta(path: &str, o: &Object) -> Option<ObjectMeta> {
        Some(ObjectMeta {
            path: StorePath::parse(path).ok()?,
            size: o.data.len() as u64,
            last_modified_ms: o.modified_ms,
        })
    }

    fn insert(&self, path: &StorePath, data: Bytes, exclusive: bool, deferred: bool) -> Result<()> {
        let now = self.sched.now_ms();
        let mut o = self.lock();
        if exclusive && o.map.contains_key(path.as_str()) {
            return Err(StorageError::AlreadyExists {
                path: path.to_string(),
            });
        }
        o.map.insert(
            path.to_string(),
            Object {
                data,
                modified_ms: now,
            },
        );
        if deferred && self.local_fs {
            o.undurable.insert(path.to_string());
        } else {
            o.undurable.remove(path.as_str());
        }
        Ok(())
    }

    /// The object at `path`, read directly (the oracle's view: no gate, no faults).
    pub(crate) fn peek(&self, path: &str) -> Option<Bytes> {
        self.lock().map.get(path).map(|o| o.data.clone())
    }

    /// The modification time of the object at `path` (the oracle's view).
    pub(crate) fn modified(&self, path: &str) -> Option<i64> {
        self.lock().map.get(path).map(|o| o.modified_ms)
    }

    /// Every path in the store, sorted (the oracle's view).
    pub(crate) fn paths(&self) -> Vec<String> {
        self.lock().map.keys().cloned().collect()
    }
}

impl ObjectStore for SimStore {
    fn root_uri(&self) -> String {
        "memory://".to_string()
    }

    fn now_ms(&self) -> i64 {
        self.sched.now_ms()
    }

    fn get(&self, path: &StorePath) -> Result<Bytes> {
        self.guarded("get", path.as_str(), || {
            self.lock()
                .map
                .get(path.as_str())
                .map(|o| o.data.clone())
                .ok_or_else(|| StorageError::NotFound {
                    path: path.to_string(),
                })
        })
    }

    fn get_range(&self, path: &StorePath, range: Range<u64>) -> Result<Bytes> {
        self.guarded("get_range", path.as_str(), || {
            let data = self
                .lock()
                .map
                .get(path.as_str())
                .map(|o| o.data.clone())
                .ok_or_else(|| StorageError::NotFound {
                    path: path.to_string(),
                })?;
            match (usize::try_from(range.start), usize::try_from(range.end)) {
                (Ok(s), Ok(e)) if s <= e && e <= data.len() => Ok(data.slice(s..e)),
                _ => Err(injected(
                    "read range",
                    path.as_str(),
                    io::ErrorKind::UnexpectedEof,
                    "range past end of object",
                )),
            }
        })
    }

    fn head(&self, path: &StorePath) -> Result<ObjectMeta> {
        self.guarded("head", path.as_str(), || {
            let o = self.lock();
            o.map
                .get(path.as_str())
                .and_then(|obj| Self::meta(path.as_str(), obj))
                .ok_or_else(|| StorageError::NotFound {
                    path: path.to_string(),
                })
        })
    }

    fn put_if_absent(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.guarded("put_if_absent", path.as_str(), || {
            self.insert(path, data, true, false)
        })
    }

    fn put(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.guarded("put", path.as_str(), || {
            self.insert(path, data, false, false)
        })
    }

    fn put_new(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.guarded("put_new", path.as_str(), || {
            self.insert(path, data, true, false)
        })
    }

    fn put_new_deferred(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.guarded("put_new_deferred", path.as_str(), || {
            self.insert(path, data, true, true)
        })
    }

    fn sync_deferred(&self, paths: &[StorePath]) -> Result<()> {
        let first = paths.first().map_or("", |p| p.as_str());
        self.guarded("sync_deferred", first, || {
            let mut o = self.lock();
            for p in paths {
                o.undurable.remove(p.as_str());
            }
            Ok(())
        })
    }

    fn list_dir_from(&self, dir: Option<&StorePath>, start: &str) -> Result<Vec<ObjectMeta>> {
        let prefix = dir.map_or_else(String::new, |d| format!("{d}/"));
        self.guarded_with(
            "list_dir",
            &prefix,
            || {
                let from = format!("{prefix}{start}");
                let o = self.lock();
                Ok(o.map
                    .range(from..)
                    .take_while(|(k, _)| k.starts_with(&prefix))
                    .filter(|(k, _)| !k[prefix.len()..].contains('/'))
                    .filter_map(|(k, obj)| Self::meta(k, obj))
                    .collect::<Vec<_>>())
            },
            |r| match r {
                Ok(v) => format!("ok {}", v.len()),
                Err(_) => "error".into(),
            },
        )
    }

    fn list_tree(&self, dir: Option<&StorePath>) -> Result<Vec<ObjectMeta>> {
        let prefix = dir.map_or_else(String::new, |d| format!("{d}/"));
        self.guarded_with(
            "list_tree",
            &prefix,
            || {
                let o = self.lock();
                Ok(o.map
                    .range(prefix.clone()..)
                    .take_while(|(k, _)| k.starts_with(&prefix))
                    .filter_map(|(k, obj)| Self::meta(k, obj))
                    .collect::<Vec<_>>())
            },
            |r| match r {
                Ok(v) => format!("ok {}", v.len()),
                Err(_) => "error".into(),
            },
        )
    }

    fn delete(&self, path: &StorePath) -> Result<()> {
        self.guarded("delete", path.as_str(), || {
            let mut o = self.lock();
            o.map.remove(path.as_str());
            o.undurable.remove(path.as_str());
            Ok(())
        })
    }
}

/// A view of a store without its checkpoints (and `_last_checkpoint`), so that a snapshot
/// loads from the JSON commits alone: the oracle compares each checkpoint with that replay.
#[derive(Debug)]
pub(crate) struct NoCheckpoints(pub(crate) Arc<SimStore>);

fn is_checkpoint(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.contains(".checkpoint.") || name == "_last_checkpoint" || path.contains("_sidecars/")
}

impl ObjectStore for NoCheckpoints {
    fn root_uri(&self) -> String {
        self.0.root_uri()
    }
    fn now_ms(&self) -> i64 {
        self.0.now_ms()
    }
    fn get(&self, path: &StorePath) -> Result<Bytes> {
        if is_checkpoint(path.as_str()) {
            return Err(StorageError::NotFound {
                path: path.to_string(),
            });
        }
        self.0.get(path)
    }
    fn get_range(&self, path: &StorePath, range: Range<u64>) -> Result<Bytes> {
        if is_checkpoint(path.as_str()) {
            return Err(StorageError::NotFound {
                path: path.to_string(),
            });
        }
        self.0.get_range(path, range)
    }
    fn head(&self, path: &StorePath) -> Result<ObjectMeta> {
        if is_checkpoint(path.as_str()) {
            return Err(StorageError::NotFound {
                path: path.to_string(),
            });
        }
        self.0.head(path)
    }
    fn put_if_absent(&self, path: &StorePath, _data: Bytes) -> Result<()> {
        Err(injected(
            "put",
            path.as_str(),
            io::ErrorKind::PermissionDenied,
            "read-only view",
        ))
    }
    fn put(&self, path: &StorePath, _data: Bytes) -> Result<()> {
        Err(injected(
            "put",
            path.as_str(),
            io::ErrorKind::PermissionDenied,
            "read-only view",
        ))
    }
    fn list_dir_from(&self, dir: Option<&StorePath>, start: &str) -> Result<Vec<ObjectMeta>> {
        let mut v = self.0.list_dir_from(dir, start)?;
        v.retain(|m| !is_checkpoint(m.path.as_str()));
        Ok(v)
    }
    fn list_tree(&self, dir: Option<&StorePath>) -> Result<Vec<ObjectMeta>> {
        let mut v = self.0.list_tree(dir)?;
        v.retain(|m| !is_checkpoint(m.path.as_str()));
        Ok(v)
    }
    fn delete(&self, path: &StorePath) -> Result<()> {
        Err(injected(
            "delete",
            path.as_str(),
            io::ErrorKind::PermissionDenied,
            "read-only view",
        ))
    }
}
