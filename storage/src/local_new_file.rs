//! A new local data file written as its bytes come ([`ObjectStore::put_new_streaming`] of
//! [`LocalFsStore`]).
//!
//! The file is created under its final name, as `put_new` creates it (no reader opens a data
//! file before a commit names it), but only at the first write: a writer that never writes
//! holds no descriptor, so an operation with thousands of partition files open at once
//! does not run out of them before their bytes exist. Bytes go straight to the file, and
//! on a durable store every [`CHUNK`] copied is made durable in the background while the
//! writer goes on ([`crate::early_sync`]), or, when a sync is still in flight, its
//! write-out is started (as [`crate::durable_write`] does for a whole file), so `finish`
//! waits only for the tail. A writer dropped before `finish` removes its file.
//!
//! The same writer stages an object for [`ObjectStore::put_staged`]: the bytes then go to a
//! hidden temporary name beside the target (as `put` and `put_if_absent` write theirs), and
//! `finish`, once the content is durable, renames it over the target or links it to a
//! free target name, then makes the name durable. Readers see the object whole or not at
//! all, as with the buffered puts.
//!
//! [`ObjectStore::put_new_streaming`]: crate::ObjectStore::put_new_streaming
//! [`ObjectStore::put_staged`]: crate::ObjectStore::put_staged

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::PathBuf;

use crate::durable_write::{CHUNK, start_write_out};
use crate::early_sync::EarlySync;
use crate::{LocalFsStore, NewObjectWriter, Publish, Result, StorageError};

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct LocalNewFile {
    store: LocalFsStore,
    /// The full path of the file written (the temporary name when staged) and its directory.
    target: PathBuf,
    dir: PathBuf,
    /// The store path, for messages.
    shown: String,
    /// Open from the first write on.
    file: Option<File>,
    written: u64,
    /// Bytes whose write-out was started.
    hinted: u64,
    /// Background syncs of the bytes written so far.
    early: EarlySync,
    /// Fsync the directory at `finish` (`put_new`), or leave it to the caller's
    /// `sync_deferred` (`put_new_deferred`).
    sync_name: bool,
    /// The file is in place (or never was ours to remove).
    kept: bool,
    /// For a staged object: its final full path, and how it takes that name.
    publish: Option<(PathBuf, Publish)>,
}

impl LocalNewFile {
    pub(crate) fn new(
        store: LocalFsStore,
        target: PathBuf,
        dir: PathBuf,
        shown: String,
        sync_name: bool,
    ) -> LocalNewFile {
        LocalNewFile {
            store,
            target,
            dir,
            shown,
            file: None,
            written: 0,
            hinted: 0,
            early: EarlySync::default(),
            sync_name,
            kept: false,
            publish: None,
        }
    }

    /// A writer that stages the object at `target` under a temporary name in `dir` and
    /// publishes it at `finish` (see the module docs).
    pub(crate) fn staged(
        store: LocalFsStore,
        target: PathBuf,
        dir: PathBuf,
        shown: String,
        publish: Publish,
    ) -> LocalNewFile {
        let name = target
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let temp = dir.join(crate::temp_name::temp_name(&name));
        let mut file = LocalNewFile::new(store, temp, dir, shown, true);
        file.publish = Some((target, publish));
        file
    }

    /// Creates the file (and its directories): at the first write, or at `finish`.
    fn create(&self) -> io::Result<File> {
        self.store
            .create_dirs(&self.dir)
            .map_err(|e| io::Error::other(e.to_string()))?;
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&self.target)
            .map_err(|e| io::Error::new(e.kind(), format!("create {}: {e}", self.shown)))
    }

    fn remove(&mut self) {
        if !self.kept && self.file.take().is_some() {
            let _ = fs::remove_file(&self.target);
        }
        self.kept = true;
    }
}

impl Write for LocalNewFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.file.is_none() {
            self.file = Some(self.create()?);
        }
        let Some(file) = self.file.as_mut() else {
            return Err(io::Error::other("the file was not created"));
        };
        file.write_all(buf)
            .map_err(|e| io::Error::new(e.kind(), format!("write {}: {e}", self.shown)))?;
        let written = self.written + buf.len() as u64;
        if self.store.is_durable() && written - self.hinted >= CHUNK as u64 {
            // A sync started now writes these pages out too; otherwise start their write-out.
            let syncing = self.early.after_write(file, written);
            if !syncing
                && let (Ok(at), Ok(len)) = (
                    usize::try_from(self.hinted),
                    usize::try_from(written - self.hinted),
                )
            {
                start_write_out(file, at, len);
            }
            self.hinted = written;
        }
        self.written = written;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        // Nothing is buffered here: every write went to the file.
        Ok(())
    }
}

impl NewObjectWriter for LocalNewFile {
    fn finish(mut self: Box<Self>) -> Result<u64> {
        // An empty object is still an object, as `put_new` of no bytes makes one.
        if self.file.is_none() {
            match self.create() {
                Ok(file) => self.file = Some(file),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    return Err(StorageError::AlreadyExists {
                        path: self.shown.clone(),
                    });
                }
                Err(e) => return Err(StorageError::io("create", self.shown.clone(), e)),
            }
        }
        let durable = self.store.is_durable();
        let synced = match &self.file {
            Some(file) if durable => self.early.finish().and_then(|()| file.sync_all()),
            _ => Ok(()),
        };
        if let Err(e) = synced {
            self.remove();
            return Err(StorageError::io("fsync", self.shown.clone(), e));
        }
        self.file = None;
        if let Some((target, publish)) = self.publish.take() {
            self.publish_at(&target, publish)?;
        }
        self.kept = true;
        if self.sync_name {
            // The file is in place now: a failed directory sync leaves its durability
            // unknown.
            self.store
                .sync_dir(&self.dir)
                .map_err(StorageError::into_ambiguous)?;
        }
        Ok(self.written)
    }
}

impl LocalNewFile {
    /// Gives the staged file (closed, its content durable) its final name, as `put` or
    /// `put_if_absent` do. The temporary name is gone afterwards, whatever the outcome.
    fn publish_at(&mut self, target: &std::path::Path, publish: Publish) -> Result<()> {
        let placed = match publish {
            Publish::Replace => fs::rename(&self.target, target),
            Publish::IfAbsent => {
                let linked = fs::hard_link(&self.target, target);
                let _ = fs::remove_file(&self.target);
                linked
            }
        };
        match placed {
            Ok(()) => Ok(()),
            Err(e) => {
                // The rename failed (the temporary file is still there) or the link did
                // (already removed): either way nothing was published.
                let _ = fs::remove_file(&self.target);
                self.kept = true;
                Err(match e.kind() {
                    io::ErrorKind::AlreadyExists if publish == Publish::IfAbsent => {
                        StorageError::AlreadyExists {
                            path: self.shown.clone(),
                        }
                    }
                    _ => StorageError::io("publish", self.shown.clone(), e),
                })
            }
        }
    }
}

impl Drop for LocalNewFile {
    fn drop(&mut self) {
        self.remove();
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use bytes::Bytes;

    use crate::durable_write::pattern;
    use crate::{LocalFsStore, ObjectStore, Publish, StorageError, StorePath};

    fn p(s: &str) -> StorePath {
        StorePath::parse(s).unwrap()
    }

    #[test]
    fn a_streamed_file_reads_back_as_put_new_writes_it() {
        let dir = tempfile::tempdir().unwrap();
        let chunk = super::CHUNK;
        for durable in [true, false] {
            let store = LocalFsStore::new(dir.path()).with_durability(durable);
            for (k, len) in [0, 1, chunk - 1, chunk + 1, 3 * chunk + 777]
                .into_iter()
                .enumerate()
            {
                let data = pattern(len);
                let path = p(&format!("d={durable}/part-{k}.parquet"));
                let mut w = store.put_new_streaming(&path, k % 2 == 0).unwrap().unwrap();
                // Pieces of uneven sizes, some across a chunk boundary.
                for piece in data.chunks(chunk / 3 + 5) {
                    w.write_all(piece).unwrap();
                }
                assert_eq!(w.finish().unwrap(), len as u64);
                assert!(store.get(&path).unwrap() == data, "{len} bytes");
            }
        }
    }

    #[test]
    fn nothing_is_created_before_the_first_write_and_a_dropped_writer_removes_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFsStore::new(dir.path());
        let idle = store
            .put_new_streaming(&p("x=1/a.parquet"), false)
            .unwrap()
            .unwrap();
        assert!(
            !dir.path().join("x=1").exists(),
            "no directory before a write"
        );
        drop(idle);
        assert!(!dir.path().join("x=1").exists());

        let mut w = store
            .put_new_streaming(&p("x=2/b.parquet"), false)
            .unwrap()
            .unwrap();
        w.write_all(b"partial").unwrap();
        assert!(dir.path().join("x=2/b.parquet").exists());
        drop(w);
        assert!(
            !dir.path().join("x=2/b.parquet").exists(),
            "an unfinished file is removed"
        );

        // A writer finished without a write still makes its (empty) object.
        let w = store
            .put_new_streaming(&p("c.parquet"), false)
            .unwrap()
            .unwrap();
        assert_eq!(w.finish().unwrap(), 0);
        assert_eq!(store.get(&p("c.parquet")).unwrap().len(), 0);
    }

    #[test]
    fn an_existing_name_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFsStore::new(dir.path());
        store
            .put_new(&p("part-1.parquet"), Bytes::from_static(b"theirs"))
            .unwrap();
        let mut w = store
            .put_new_streaming(&p("part-1.parquet"), false)
            .unwrap()
            .unwrap();
        let err = w.write_all(b"ours").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists, "{err}");
        assert!(err.to_string().contains("part-1.parquet"), "{err}");
        drop(w);
        assert_eq!(
            store.get(&p("part-1.parquet")).unwrap(),
            Bytes::from_static(b"theirs")
        );
        let w = store
            .put_new_streaming(&p("part-1.parquet"), false)
            .unwrap()
            .unwrap();
        assert!(
            w.finish().is_err(),
            "finishing without a write checks the name too"
        );
        assert_eq!(
            store.get(&p("part-1.parquet")).unwrap(),
            Bytes::from_static(b"theirs")
        );
    }

    #[test]
    fn a_failed_early_sync_fails_the_file_and_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        for staged in [false, true] {
            let store = LocalFsStore::new(dir.path());
            let name = format!("part-{staged}.parquet");
            let target = dir.path().join(&name);
            let mut w = if staged {
                super::LocalNewFile::staged(
                    store.clone(),
                    target.clone(),
                    dir.path().to_path_buf(),
                    name.clone(),
                    Publish::Replace,
                )
            } else {
                super::LocalNewFile::new(
                    store.clone(),
                    target.clone(),
                    dir.path().to_path_buf(),
                    name.clone(),
                    true,
                )
            };
            w.write_all(&pattern(super::CHUNK + 1)).unwrap();
            w.early.fail_with(std::io::Error::other("device gone"));
            let err = crate::NewObjectWriter::finish(Box::new(w)).unwrap_err();
            assert!(err.to_string().contains("device gone"), "{err}");
            assert!(err.to_string().contains(&name), "{err}");
            assert!(store.head(&p(&name)).is_err(), "nothing published");
            assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
        }
    }

    /// Every entry of `dir` (temporary names included).
    fn entries(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_staged_object_appears_whole_at_finish_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let chunk = super::CHUNK;
        for durable in [true, false] {
            let store = LocalFsStore::new(dir.path()).with_durability(durable);
            for publish in [Publish::Replace, Publish::IfAbsent] {
                for (k, len) in [0, 1, 3 * chunk + 777].into_iter().enumerate() {
                    let data = pattern(len);
                    let path = p(&format!("_delta_log/{durable}-{publish:?}-{k}.parquet"));
                    let mut w = store.put_staged(&path, publish).unwrap().unwrap();
                    for piece in data.chunks(chunk / 3 + 5) {
                        w.write_all(piece).unwrap();
                        assert!(
                            store.head(&path).is_err(),
                            "nothing is visible under the name before finish"
                        );
                    }
                    assert_eq!(w.finish().unwrap(), len as u64);
                    assert!(store.get(&path).unwrap() == data, "{len} bytes");
                }
            }
        }
        let names = entries(&dir.path().join("_delta_log"));
        assert_eq!(names.len(), 12, "{names:?}");
        assert!(!names.iter().any(|n| crate::is_temp_name(n)), "{names:?}");
    }

    #[test]
    fn a_staged_replace_keeps_the_old_object_until_finish() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFsStore::new(dir.path());
        let path = p("_delta_log/00000000000000000010.checkpoint.parquet");
        store.put(&path, Bytes::from_static(b"old")).unwrap();
        let mut w = store.put_staged(&path, Publish::Replace).unwrap().unwrap();
        w.write_all(b"new bytes").unwrap();
        assert_eq!(store.get(&path).unwrap(), Bytes::from_static(b"old"));
        assert_eq!(w.finish().unwrap(), 9);
        assert_eq!(store.get(&path).unwrap(), Bytes::from_static(b"new bytes"));
        assert_eq!(
            entries(&dir.path().join("_delta_log")),
            vec!["00000000000000000010.checkpoint.parquet".to_string()]
        );
    }

    #[test]
    fn a_staged_put_if_absent_refuses_a_taken_name_and_a_dropped_writer_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFsStore::new(dir.path());
        let path = p("_delta_log/_sidecars/a.parquet");
        store.put(&path, Bytes::from_static(b"theirs")).unwrap();
        let mut w = store.put_staged(&path, Publish::IfAbsent).unwrap().unwrap();
        w.write_all(b"ours").unwrap();
        let err = w.finish().unwrap_err();
        assert!(matches!(err, StorageError::AlreadyExists { .. }), "{err:?}");
        assert!(err.to_string().contains("a.parquet"), "{err}");
        assert_eq!(store.get(&path).unwrap(), Bytes::from_static(b"theirs"));

        let other = p("_delta_log/_sidecars/b.parquet");
        let mut w = store
            .put_staged(&other, Publish::IfAbsent)
            .unwrap()
            .unwrap();
        w.write_all(b"partial").unwrap();
        drop(w);
        assert!(store.head(&other).is_err());
        assert_eq!(
            entries(&dir.path().join("_delta_log/_sidecars")),
            vec!["a.parquet".to_string()],
            "neither refused nor dropped writers leave their staged bytes"
        );
    }
}
