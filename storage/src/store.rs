//! The object-store trait: the storage contract of alluvium (SPEC.md §2).

use std::fmt::Debug;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use crate::{FileLocation, RequestCounts, Result, StorageError, StorePath};

/// Metadata of one stored object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    /// The object's table-relative path.
    pub path: StorePath,
    /// Size in bytes.
    pub size: u64,
    /// Last modification time in milliseconds since the Unix epoch. For commit files this is
    /// the commit time the protocol uses for time travel on tables without in-commit
    /// timestamps.
    pub last_modified_ms: i64,
}

/// A new object being written piece by piece ([`ObjectStore::put_new_streaming`],
/// [`ObjectStore::put_staged`]).
///
/// Its [`std::io::Write`] side takes the object's bytes in order; nothing is visible as
/// complete before [`finish`](NewObjectWriter::finish) returns.
pub trait NewObjectWriter: std::io::Write + Send {
    /// Completes the object as the call that made the writer promises (durable as `put_new`,
    /// `put_new_deferred`, `put` or `put_if_absent` would make it) and returns its size in
    /// bytes.
    ///
    /// # Errors
    /// A failed write or sync; [`StorageError::AlreadyExists`] for a staged
    /// [`Publish::IfAbsent`] whose name was taken. A failure before the object is in place
    /// removes what was written; one after it (a directory sync) leaves the outcome unknown
    /// ([`StorageError::is_definite`] is false).
    fn finish(self: Box<Self>) -> Result<u64>;
}

/// How an object written through [`ObjectStore::put_staged`] takes its name when its writer
/// finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Publish {
    /// Create or atomically replace the object, as [`ObjectStore::put`].
    Replace,
    /// Create the object only if no object has the name, as
    /// [`ObjectStore::put_if_absent`] (with its mutual exclusion).
    IfAbsent,
}

/// A shared, dynamically typed store.
pub type StoreRef = Arc<dyn ObjectStore>;

/// A namespace of immutable objects addressed by table-relative paths.
///
/// Contract (every backend must honour it; SPEC.md §2):
/// 1. **Atomic visibility**: an object is visible whole or not at all; a reader never sees a
///    partially written object under its final name.
/// 2. **Mutual exclusion**: of several concurrent [`put_if_absent`](Self::put_if_absent)
///    calls on one path, exactly one succeeds and the others get
///    [`StorageError::AlreadyExists`].
/// 3. **Read-after-write**: once a put returns `Ok`, every later `get`, `head` and listing
///    observes the object.
/// 4. **Sorted listings**: listings are sorted by path in UTF-8 byte order.
/// 5. **Durability** (local filesystem): a put that returned `Ok` survives a crash when the
///    store was opened durable (the default).
///
/// Every method may be called from many threads at once.
pub trait ObjectStore: Debug + Send + Sync + 'static {
    /// A human-readable URI of the store root (for messages).
    fn root_uri(&self) -> String;

    /// Reads a whole object.
    ///
    /// Reads only ever open regular files, and read no more than the size the object had
    /// when it was opened: a FIFO, a device or a directory under an object's name is an
    /// error, never a hang or an endless read (SPEC.md §10).
    ///
    /// # Errors
    /// [`StorageError::NotFound`] if it does not exist; [`StorageError::NotAFile`] if the
    /// name holds something other than a regular file.
    fn get(&self, path: &StorePath) -> Result<Bytes>;

    /// Reads a whole object that may be at most `limit` bytes long (small control files
    /// such as `_last_checkpoint`, whose size no listing vouches for).
    ///
    /// The default reads the object and then checks its length; stores that can learn the
    /// size before reading (the local store) refuse without reading.
    ///
    /// # Errors
    /// [`StorageError::TooLarge`] if the object is longer than `limit`; as [`get`](Self::get)
    /// otherwise.
    fn get_limited(&self, path: &StorePath, limit: u64) -> Result<Bytes> {
        let bytes = self.get(path)?;
        let size = bytes.len() as u64;
        if size > limit {
            return Err(StorageError::TooLarge {
                path: path.to_string(),
                size,
                limit,
            });
        }
        Ok(bytes)
    }

    /// Reads `range` (byte offsets, end exclusive) of an object.
    ///
    /// # Errors
    /// [`StorageError::NotFound`] if it does not exist; [`StorageError::Io`] if the range
    /// extends past the end of the object.
    fn get_range(&self, path: &StorePath, range: Range<u64>) -> Result<Bytes>;

    /// Returns an object's metadata.
    ///
    /// # Errors
    /// [`StorageError::NotFound`] if it does not exist.
    fn head(&self, path: &StorePath) -> Result<ObjectMeta>;

    /// Creates an object atomically if and only if no object with this path exists.
    ///
    /// # Errors
    /// [`StorageError::AlreadyExists`] if the path exists (whoever wrote it).
    fn put_if_absent(&self, path: &StorePath, data: Bytes) -> Result<()>;

    /// Creates or atomically replaces an object. Never used for commit files.
    fn put(&self, path: &StorePath, data: Bytes) -> Result<()>;

    /// Creates a new data file: an object under a fresh, unique name that no reader opens
    /// before a commit names it, and that is durable when this returns (as every write).
    /// Unlike [`put_if_absent`](Self::put_if_absent) it need not appear atomically: a
    /// failure or a crash may leave a partial object under the name, which no commit
    /// references (VACUUM deletes it), so a store may skip the staging a commit file needs.
    /// The default is [`put_if_absent`](Self::put_if_absent).
    ///
    /// # Errors
    /// [`StorageError::AlreadyExists`] if the path exists.
    fn put_new(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.put_if_absent(path, data)
    }

    /// [`put_new`](Self::put_new) whose file's *name* need not be durable yet, only its
    /// content: the caller makes the names of such files durable with
    /// [`sync_deferred`](Self::sync_deferred) before anything refers to them (the commit
    /// that adds them). On a local filesystem that is one directory fsync for many files
    /// instead of one each. The default is [`put_new`](Self::put_new).
    ///
    /// # Errors
    /// As [`put_new`](Self::put_new).
    fn put_new_deferred(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.put_new(path, data)
    }

    /// A writer that creates a new data file at `path` as its bytes come, for stores that
    /// can (`None` for the others: the caller then buffers the file and calls
    /// [`put_new`](Self::put_new)). Once [`NewObjectWriter::finish`] returns `Ok` the object
    /// is what [`put_new`](Self::put_new) would have made of the same bytes, or
    /// [`put_new_deferred`](Self::put_new_deferred) when `defer_name_sync`. A writer dropped
    /// before `finish` removes what it wrote (best effort; a crash may leave a partial
    /// object, which no commit names, as with `put_new`).
    ///
    /// Writing as the bytes come keeps a big file out of memory and lets the device start
    /// on its first part while the rest is still being produced. The default is `None`.
    ///
    /// # Errors
    /// A `path` the store refuses before writing. An existing object under `path` is
    /// reported by the writer (as [`std::io::ErrorKind::AlreadyExists`]), at its first
    /// write or its finish.
    fn put_new_streaming(
        &self,
        path: &StorePath,
        defer_name_sync: bool,
    ) -> Result<Option<Box<dyn NewObjectWriter>>> {
        let _ = (path, defer_name_sync);
        Ok(None)
    }

    /// A writer that stages an object as its bytes come and publishes it under `path` whole
    /// when it finishes, as [`put`](Self::put) ([`Publish::Replace`]) or
    /// [`put_if_absent`](Self::put_if_absent) ([`Publish::IfAbsent`]) would publish the
    /// same bytes, for stores that can (`None` for the others: the caller then buffers the
    /// object and calls the put). Unlike [`put_new_streaming`](Self::put_new_streaming),
    /// the object keeps the store's atomic visibility: no reader sees anything under `path`
    /// before [`NewObjectWriter::finish`] publishes it. A writer dropped before `finish`
    /// removes what it staged (best effort; a crash may leave the staged bytes under a name
    /// readers ignore, as a crash inside a put does).
    ///
    /// This is for large objects readers find by listing (checkpoints): the object never
    /// needs to be held whole in memory. The default is `None`.
    ///
    /// # Errors
    /// A `path` the store refuses before writing. A taken name under
    /// [`Publish::IfAbsent`] is reported by `finish`.
    fn put_staged(
        &self,
        path: &StorePath,
        publish: Publish,
    ) -> Result<Option<Box<dyn NewObjectWriter>>> {
        let _ = (path, publish);
        Ok(None)
    }

    /// Makes durable the names of files written with
    /// [`put_new_deferred`](Self::put_new_deferred) (on a local filesystem: fsyncs each
    /// distinct directory holding them, once). The default does nothing: a stored object
    /// is durable.
    ///
    /// # Errors
    /// A failed sync; the files' names may then not survive a crash.
    fn sync_deferred(&self, paths: &[StorePath]) -> Result<()> {
        let _ = paths;
        Ok(())
    }

    /// Lists the objects directly inside directory `dir` (the root if `None`) whose name is
    /// `>= start`, sorted by name. Subdirectories are not listed. A missing directory lists
    /// as empty.
    fn list_dir_from(&self, dir: Option<&StorePath>, start: &str) -> Result<Vec<ObjectMeta>>;

    /// [`list_dir_from`](Self::list_dir_from) bounded above: the objects directly inside
    /// `dir` whose name is `>= start` and, with `end`, `< end`, sorted by name.
    ///
    /// The default lists from `start` and drops the rest. Stores that pay per listed entry
    /// override it: the local store reads the whole directory either way but fetches the
    /// metadata of the entries in the range only (time travel to an early version of a long
    /// log needs its first commits, not a `stat` of every one).
    fn list_dir_range(
        &self,
        dir: Option<&StorePath>,
        start: &str,
        end: Option<&str>,
    ) -> Result<Vec<ObjectMeta>> {
        let mut listed = self.list_dir_from(dir, start)?;
        if let Some(end) = end {
            listed.retain(|m| m.path.file_name() < end);
        }
        Ok(listed)
    }

    /// Lists every object below `dir` (the root if `None`), recursively, sorted by path.
    fn list_tree(&self, dir: Option<&StorePath>) -> Result<Vec<ObjectMeta>>;

    /// Deletes an object. Deleting a missing object succeeds (idempotent).
    fn delete(&self, path: &StorePath) -> Result<()>;

    /// Reads several whole objects; the results are in the order of `paths`, one each.
    ///
    /// The default reads them one after another. Backends whose requests are slow but can
    /// be issued many at a time (remote stores) override it to run them concurrently, with
    /// a bound, and say so with [`fetches_concurrently`](Self::fetches_concurrently);
    /// callers parallelise [`get`](Self::get) themselves on the others.
    fn get_many(&self, paths: &[StorePath]) -> Vec<Result<Bytes>> {
        paths.iter().map(|p| self.get(p)).collect()
    }

    /// Whether [`get_many`](Self::get_many) issues its requests concurrently (so a caller
    /// should hand it a whole batch rather than call `get` from its own threads).
    fn fetches_concurrently(&self) -> bool {
        false
    }

    /// Deletes several objects (each idempotently, as [`delete`](Self::delete)); the results
    /// are in the order of `paths`. Remote stores send bulk or concurrent requests, with a
    /// bound; the default deletes one after another.
    fn delete_many(&self, paths: &[StorePath]) -> Vec<Result<()>> {
        paths.iter().map(|p| self.delete(p)).collect()
    }

    /// The requests this store has made so far, by kind (see [`RequestCounts`]): remote
    /// stores count what they send, `CountingStore` (feature `testing`) counts the calls
    /// made through it, other stores report zeros. Take the difference of two readings around an
    /// operation; concurrent operations on the same store are included in it.
    fn request_counts(&self) -> RequestCounts {
        RequestCounts::default()
    }

    /// Reads an object at an absolute URI (a [`FileLocation::External`]); read-only.
    ///
    /// # Errors
    /// [`StorageError::Unsupported`] if this store cannot reach that URI.
    fn get_external(&self, uri: &str) -> Result<Bytes> {
        Err(StorageError::Unsupported {
            op: "get_external",
            reason: format!("{} cannot read absolute URI {uri}", self.root_uri()),
        })
    }

    /// The objects of this store that reading any of `locations` may reach, as
    /// table-relative paths, in no particular order (duplicates allowed). VACUUM keeps
    /// every one of them: an object missing here could be deleted while a reader needs it,
    /// one too many is only kept.
    ///
    /// A table path reaches itself; an absolute URI reaches the object it names inside the
    /// root however it is spelled (`//`, `/./`, `/x/../`). Stores with symbolic links
    /// ([`crate::LocalFsStore`]) also resolve links the way the reader's open does. The
    /// default normalises URIs lexically against [`root_uri`](Self::root_uri).
    ///
    /// # Errors
    /// A location whose target cannot be worked out with certainty (the caller must then
    /// keep everything).
    fn reachable_objects(&self, locations: &[FileLocation]) -> Result<Vec<StorePath>> {
        Ok(crate::reach::lexically_reachable(
            &self.root_uri(),
            locations,
        ))
    }

    /// Reads a file wherever it lives.
    fn get_location(&self, location: &FileLocation) -> Result<Bytes> {
        match location {
            FileLocation::Table(p) => self.get(p),
            FileLocation::External(u) => self.get_external(u),
        }
    }

    /// The store's clock, in milliseconds since the epoch: the time writers stamp on
    /// commits and retention is judged against. The system clock by default; test stores
    /// may run a manual clock so that time travel and retention are deterministic.
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }

    /// Whether concurrent [`put_if_absent`](Self::put_if_absent) calls are mutually
    /// exclusive on this store (contract item 2). Stores that cannot promise it return false
    /// and writers refuse to commit through them unless told to run single-writer.
    fn supports_put_if_absent(&self) -> bool {
        true
    }

    /// Finds out whether this store gives put-if-absent (contract item 2), as
    /// [`supports_put_if_absent`](Self::supports_put_if_absent), but may ask the store:
    /// a remote store with no configured answer probes a scratch key once (and deletes it),
    /// then remembers the answer.
    ///
    /// # Errors
    /// The probe could not reach the store; nothing is remembered then.
    fn check_put_if_absent(&self) -> Result<bool> {
        Ok(self.supports_put_if_absent())
    }

    /// Whether the user declared that at most one writer uses this store at a time (the
    /// documented single-writer mode). Writers then commit through it even without
    /// put-if-absent: [`put_if_absent`](Self::put_if_absent) may fall back to a
    /// check-then-write, which is exact only without concurrent writers.
    fn single_writer(&self) -> bool {
        false
    }

    /// Whether [`list_dir_from`](Self::list_dir_from) costs in proportion to the entries
    /// it returns (object stores list from a key; the in-memory store is an ordered map).
    /// Local filesystems return false: a directory read visits every entry, so for a few
    /// expected names a [`head`](Self::head) per name is cheaper than a listing.
    fn lists_from_key_cheaply(&self) -> bool {
        true
    }
}
