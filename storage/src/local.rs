//! A store on a local filesystem directory.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::local_list::{ListError, list_files, modified_ms};
use crate::local_new_file::LocalNewFile;
use crate::no_follow::check_no_linked_dirs;
use crate::{
    FileLocation, NewObjectWriter, ObjectMeta, ObjectStore, Result, StorageError, StorePath,
};

/// Objects at least this large are memory-mapped instead of copied into memory.
const MMAP_THRESHOLD: u64 = 256 * 1024;

/// A table stored in a local directory.
///
/// * `put_if_absent` writes a hidden temporary file next to the target, fsyncs it,
///   hard-links it to the final name (`link(2)` fails with `EEXIST` if the name is taken,
///   which gives mutual exclusion between processes), removes the temporary name and fsyncs
///   the directory. A crash leaves at most a hidden `.*.tmp` file, which the protocol ignores.
/// * `put` replaces atomically with `rename(2)` after the same fsyncs.
/// * Reads of large objects are memory-mapped. That is sound here because alluvium never
///   modifies a file in place: objects are only created whole and deleted (an unlinked file
///   stays mapped until dropped).
///
/// With durability off (`with_durability(false)`), fsyncs are skipped: faster, but a power
/// loss may lose acknowledged writes. Process crashes are still safe.
#[derive(Debug, Clone)]
pub struct LocalFsStore {
    root: PathBuf,
    durable: bool,
}

impl LocalFsStore {
    /// A store rooted at `root` (which need not exist yet; puts create it). Durable.
    pub fn new(root: impl AsRef<Path>) -> Self {
        LocalFsStore {
            root: root.as_ref().to_path_buf(),
            durable: true,
        }
    }

    /// Turns fsync on or off (on by default).
    #[must_use]
    pub fn with_durability(mut self, durable: bool) -> Self {
        self.durable = durable;
        self
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether writes are fsynced ([`with_durability`](Self::with_durability)).
    pub fn is_durable(&self) -> bool {
        self.durable
    }

    fn full(&self, path: &StorePath) -> PathBuf {
        let mut p = self.root.clone();
        for seg in path.segments() {
            p.push(seg);
        }
        p
    }

    fn dir_path(&self, dir: Option<&StorePath>) -> PathBuf {
        dir.map_or_else(|| self.root.clone(), |d| self.full(d))
    }

    /// Creates `dir` and any missing ancestors, fsyncing each new directory's parent so the
    /// new entries survive a crash.
    pub(crate) fn create_dirs(&self, dir: &Path) -> Result<()> {
        if dir.is_dir() {
            return Ok(());
        }
        let mut missing = Vec::new();
        let mut cur = Some(dir);
        while let Some(d) = cur {
            if d.is_dir() {
                break;
            }
            missing.push(d.to_path_buf());
            cur = d.parent();
        }
        for d in missing.iter().rev() {
            match fs::create_dir(d) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(StorageError::io(
                        "create directory",
                        d.display().to_string(),
                        e,
                    ));
                }
            }
            if let Some(parent) = d.parent() {
                self.sync_dir(parent)?;
            }
        }
        Ok(())
    }

    pub(crate) fn sync_dir(&self, dir: &Path) -> Result<()> {
        if !self.durable {
            return Ok(());
        }
        File::open(dir)
            .and_then(|f| f.sync_all())
            .map_err(|e| StorageError::io("fsync directory", dir.display().to_string(), e))
    }

    /// The full path a write of `path` goes to and its directory, once `path` is known not
    /// to pass through a linked directory.
    fn write_target(&self, path: &StorePath) -> Result<(PathBuf, PathBuf)> {
        check_no_linked_dirs(&self.root, path)?;
        let target = self.full(path);
        let dir = target
            .parent()
            .map_or_else(|| self.root.clone(), Path::to_path_buf);
        Ok((target, dir))
    }

    /// Writes `data` to a fresh hidden temporary file in `dir` and fsyncs it.
    fn write_temp(&self, dir: &Path, name: &str, data: &[u8]) -> Result<PathBuf> {
        self.create_dirs(dir)?;
        let tmp = dir.join(crate::temp_name::temp_name(name));
        let write = || -> io::Result<()> {
            let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
            crate::durable_write::write_file(&mut f, data, self.durable)
        };
        if let Err(e) = write() {
            let _ = fs::remove_file(&tmp);
            return Err(StorageError::io("write", tmp.display().to_string(), e));
        }
        Ok(tmp)
    }

    /// Writes a new file in place under its own name (no temporary name, link and unlink:
    /// one directory operation instead of three, which is what many writers creating files
    /// in one directory contend on) and fsyncs its content, not its directory; returns the
    /// directory. A failed write removes what it wrote; a crash may leave a partial file,
    /// which no commit names.
    fn write_new(&self, path: &StorePath, data: &[u8]) -> Result<PathBuf> {
        let (target, dir) = self.write_target(path)?;
        self.create_dirs(&dir)?;
        let mut f = match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(StorageError::AlreadyExists {
                    path: path.to_string(),
                });
            }
            Err(e) => return Err(StorageError::io("create", path.as_str(), e)),
        };
        let written = crate::durable_write::write_file(&mut f, data, self.durable);
        drop(f);
        if let Err(e) = written {
            let _ = fs::remove_file(&target);
            return Err(StorageError::io("write", path.as_str(), e));
        }
        Ok(dir)
    }

    /// Opens `path` for reading if it is a regular file, and returns it with its size.
    ///
    /// The open does not block (`O_NONBLOCK`: opening a FIFO for reading would otherwise
    /// wait for a writer forever); the type is then checked on the open handle, so a name
    /// swapped between a check and the open cannot slip a FIFO or a device through.
    fn open_regular(path: &Path, shown: &str) -> Result<(File, u64)> {
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NONBLOCK);
        }
        let file = options.open(path).map_err(|e| map_io("read", shown, e))?;
        let md = file.metadata().map_err(|e| map_io("read", shown, e))?;
        if !md.is_file() {
            return Err(StorageError::NotAFile {
                path: shown.to_string(),
                kind: file_kind(&md.file_type()),
            });
        }
        Ok((file, md.len()))
    }

    /// Reads a whole regular file, at most `limit` bytes of it (refusing larger ones), and
    /// never more than the size it had when opened.
    fn read_file(path: &Path, shown: &str, limit: Option<u64>) -> Result<Bytes> {
        let (mut file, len) = Self::open_regular(path, shown)?;
        if let Some(limit) = limit.filter(|l| len > *l) {
            return Err(StorageError::TooLarge {
                path: shown.to_string(),
                size: len,
                limit,
            });
        }
        if len >= MMAP_THRESHOLD {
            // SAFETY: objects are immutable once visible (created whole by put/put_if_absent,
            // then only deleted); nothing truncates or rewrites a file in place, so the
            // mapping's contents cannot change while it is alive.
            let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| map_io("mmap", shown, e))?;
            return Ok(Bytes::from_owner(map));
        }
        // One read of the whole length into a buffer of that length: `read_to_end` through
        // `take` has no size hint, so it reads in growing steps (8, 16, 32, 64 KiB, ...),
        // five system calls for a 142 KB data file. A file found shorter than its length
        // gives what it holds, as `take` did.
        let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0)];
        let mut filled = 0;
        while let Some(rest) = buf.get_mut(filled..).filter(|r| !r.is_empty()) {
            match file.read(rest) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(map_io("read", shown, e)),
            }
        }
        buf.truncate(filled);
        Ok(Bytes::from(buf))
    }

    fn meta_of(path: StorePath, md: &fs::Metadata) -> ObjectMeta {
        ObjectMeta {
            path,
            size: md.len(),
            last_modified_ms: modified_ms(md),
        }
    }
}

fn map_io(op: &'static str, path: &str, e: io::Error) -> StorageError {
    if e.kind() == io::ErrorKind::NotFound {
        StorageError::NotFound {
            path: path.to_string(),
        }
    } else {
        StorageError::io(op, path, e)
    }
}

/// A name for what a non-regular file is, for messages.
fn file_kind(ft: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "fifo";
        }
        if ft.is_char_device() {
            return "character device";
        }
        if ft.is_block_device() {
            return "block device";
        }
        if ft.is_socket() {
            return "socket";
        }
    }
    if ft.is_dir() {
        "directory"
    } else if ft.is_symlink() {
        "symbolic link"
    } else {
        "special file"
    }
}

impl ObjectStore for LocalFsStore {
    fn root_uri(&self) -> String {
        format!("file://{}", self.root.display())
    }

    fn get(&self, path: &StorePath) -> Result<Bytes> {
        Self::read_file(&self.full(path), path.as_str(), None)
    }

    fn get_limited(&self, path: &StorePath, limit: u64) -> Result<Bytes> {
        Self::read_file(&self.full(path), path.as_str(), Some(limit))
    }

    fn get_range(&self, path: &StorePath, range: Range<u64>) -> Result<Bytes> {
        let shown = path.as_str();
        let (mut file, size) = Self::open_regular(&self.full(path), shown)?;
        // Checked before allocating: a range from a hostile footer must not reserve memory
        // for bytes the file does not have.
        if range.end > size {
            return Err(StorageError::io(
                "read range",
                shown,
                io::Error::new(io::ErrorKind::UnexpectedEof, "range past end of object"),
            ));
        }
        let len = range.end.saturating_sub(range.start);
        let len = usize::try_from(len).map_err(|_| {
            StorageError::io(
                "read",
                shown,
                io::Error::new(io::ErrorKind::InvalidInput, "range too large"),
            )
        })?;
        let mut buf = vec![0u8; len];
        file.seek(SeekFrom::Start(range.start))
            .and_then(|_| file.read_exact(&mut buf))
            .map_err(|e| map_io("read range", shown, e))?;
        Ok(Bytes::from(buf))
    }

    fn head(&self, path: &StorePath) -> Result<ObjectMeta> {
        let md = fs::metadata(self.full(path)).map_err(|e| map_io("stat", path.as_str(), e))?;
        if !md.is_file() {
            return Err(StorageError::NotFound {
                path: path.to_string(),
            });
        }
        Ok(Self::meta_of(path.clone(), &md))
    }

    fn put_if_absent(&self, path: &StorePath, data: Bytes) -> Result<()> {
        let (target, dir) = self.write_target(path)?;
        let tmp = self.write_temp(&dir, path.file_name(), &data)?;
        let linked = fs::hard_link(&tmp, &target);
        let _ = fs::remove_file(&tmp);
        match linked {
            // The object is visible now: a failed fsync must not read as "nothing written".
            Ok(()) => self.sync_dir(&dir).map_err(StorageError::into_ambiguous),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                Err(StorageError::AlreadyExists {
                    path: path.to_string(),
                })
            }
            Err(e) => Err(StorageError::io("link", path.as_str(), e)),
        }
    }

    /// Writes the file in place ([`LocalFsStore::write_new`]), then fsyncs its directory.
    fn put_new(&self, path: &StorePath, data: Bytes) -> Result<()> {
        let dir = self.write_new(path, &data)?;
        // The file is in place now: a failed directory sync leaves its durability unknown.
        self.sync_dir(&dir).map_err(StorageError::into_ambiguous)
    }

    fn put_new_deferred(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.write_new(path, &data).map(|_| ())
    }

    fn put_new_streaming(
        &self,
        path: &StorePath,
        defer_name_sync: bool,
    ) -> Result<Option<Box<dyn NewObjectWriter>>> {
        let (target, dir) = self.write_target(path)?;
        Ok(Some(Box::new(LocalNewFile::new(
            self.clone(),
            target,
            dir,
            path.to_string(),
            !defer_name_sync,
        ))))
    }

    /// Stages the object under a hidden temporary name beside `path` and, at `finish`,
    /// fsyncs it, renames or links it into place and fsyncs the directory, as `put` and
    /// `put_if_absent` do with a buffered object.
    fn put_staged(
        &self,
        path: &StorePath,
        publish: crate::Publish,
    ) -> Result<Option<Box<dyn NewObjectWriter>>> {
        let (target, dir) = self.write_target(path)?;
        Ok(Some(Box::new(LocalNewFile::staged(
            self.clone(),
            target,
            dir,
            path.to_string(),
            publish,
        ))))
    }

    fn sync_deferred(&self, paths: &[StorePath]) -> Result<()> {
        let mut dirs: Vec<PathBuf> = paths
            .iter()
            .map(|p| {
                self.full(p)
                    .parent()
                    .map_or_else(|| self.root.clone(), Path::to_path_buf)
            })
            .collect();
        dirs.sort();
        dirs.dedup();
        dirs.iter().try_for_each(|d| self.sync_dir(d))
    }

    fn put(&self, path: &StorePath, data: Bytes) -> Result<()> {
        let (target, dir) = self.write_target(path)?;
        let tmp = self.write_temp(&dir, path.file_name(), &data)?;
        if let Err(e) = fs::rename(&tmp, &target) {
            let _ = fs::remove_file(&tmp);
            return Err(StorageError::io("rename", path.as_str(), e));
        }
        // The rename has happened: a failed directory sync leaves the outcome unknown.
        self.sync_dir(&dir).map_err(StorageError::into_ambiguous)
    }

    fn lists_from_key_cheaply(&self) -> bool {
        false
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
        let dir_path = self.dir_path(dir);
        let shown = dir.map_or("<root>", StorePath::as_str);
        let listed = list_files(&dir_path, start, end).map_err(|e| match e {
            ListError::Read(e) => StorageError::io("list", shown, e),
            ListError::Stat { name, source } => StorageError::io("stat", name, source),
        })?;
        let mut out = Vec::with_capacity(listed.len());
        for file in listed {
            let path = match dir {
                Some(d) => d.join(&file.name),
                None => StorePath::parse(file.name),
            };
            if let Ok(path) = path {
                out.push(ObjectMeta {
                    path,
                    size: file.size,
                    last_modified_ms: file.modified_ms,
                });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn list_tree(&self, dir: Option<&StorePath>) -> Result<Vec<ObjectMeta>> {
        let mut out = Vec::new();
        let mut stack: Vec<(PathBuf, Option<StorePath>)> = vec![(self.dir_path(dir), dir.cloned())];
        while let Some((fs_dir, rel)) = stack.pop() {
            let shown = rel
                .as_ref()
                .map_or("<root>".to_string(), ToString::to_string);
            let entries = match fs::read_dir(&fs_dir) {
                Ok(e) => e,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(StorageError::io("list", shown, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| StorageError::io("list", shown.clone(), e))?;
                let Ok(name) = entry.file_name().into_string() else {
                    continue;
                };
                let path = match &rel {
                    Some(d) => d.join(&name),
                    None => StorePath::parse(name),
                };
                let Ok(path) = path else { continue };
                let md = match entry.metadata() {
                    Ok(md) => md,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(StorageError::io("stat", path.to_string(), e)),
                };
                if md.is_dir() {
                    stack.push((entry.path(), Some(path)));
                } else if md.is_file() {
                    out.push(Self::meta_of(path, &md));
                }
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn delete(&self, path: &StorePath) -> Result<()> {
        check_no_linked_dirs(&self.root, path)?;
        match fs::remove_file(self.full(path)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StorageError::io("delete", path.as_str(), e)),
        }
    }

    fn reachable_objects(&self, locations: &[FileLocation]) -> Result<Vec<StorePath>> {
        crate::local_reach::reachable_objects(&self.root, locations)
    }

    fn get_external(&self, uri: &str) -> Result<Bytes> {
        let Some(path) = crate::uri::external_path(uri) else {
            return Err(StorageError::Unsupported {
                op: "get_external",
                reason: format!("a local store cannot read {uri}"),
            });
        };
        Self::read_file(&path, uri, None)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Barrier};

    use super::*;

    fn p(s: &str) -> StorePath {
        StorePath::parse(s).unwrap()
    }

    #[test]
    fn put_if_absent_is_exclusive_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFsStore::new(dir.path());
        store
            .put_if_absent(&p("_delta_log/0.json"), Bytes::from_static(b"a"))
            .unwrap();
        let err = store
            .put_if_absent(&p("_delta_log/0.json"), Bytes::from_static(b"b"))
            .unwrap_err();
        assert!(err.is_already_exists());
        assert_eq!(
            store.get(&p("_delta_log/0.json")).unwrap(),
            Bytes::from_static(b"a")
        );
        let names: Vec<_> = fs::read_dir(dir.path().join("_delta_log"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec!["0.json".to_string()]);
    }

    /// A new data file goes straight to its name: no temporary name, the parent
    /// directories created, an existing name refused and left alone.
    #[test]
    fn put_new_writes_in_place_and_refuses_an_existing_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFsStore::new(dir.path());
        store
            .put_new(&p("p=a/part-1.parquet"), Bytes::from_static(b"data"))
            .unwrap();
        let err = store
            .put_new(&p("p=a/part-1.parquet"), Bytes::from_static(b"other"))
            .unwrap_err();
        assert!(err.is_already_exists(), "{err}");
        assert_eq!(
            store.get(&p("p=a/part-1.parquet")).unwrap(),
            Bytes::from_static(b"data")
        );
        let names: Vec<_> = fs::read_dir(dir.path().join("p=a"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec!["part-1.parquet".to_string()]);
    }

    #[test]
    fn racing_put_if_absent_has_exactly_one_winner() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(LocalFsStore::new(dir.path()).with_durability(false));
        for round in 0..50 {
            let barrier = Arc::new(Barrier::new(4));
            let handles: Vec<_> = (0..4)
                .map(|i| {
                    let (store, barrier) = (store.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        barrier.wait();
                        store
                            .put_if_absent(&p(&format!("log/{round}.json")), Bytes::from(vec![i]))
                            .is_ok()
                    })
                })
                .collect();
            let wins = handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .filter(|won| *won)
                .count();
            assert_eq!(wins, 1, "round {round}");
            assert_eq!(
                store.get(&p(&format!("log/{round}.json"))).unwrap().len(),
                1
            );
        }
    }

    #[test]
    fn a_range_listing_stops_before_its_end_on_every_store() {
        let dir = tempfile::tempdir().unwrap();
        let local = LocalFsStore::new(dir.path()).with_durability(false);
        let memory = crate::InMemoryStore::new();
        for store in [&local as &dyn ObjectStore, &memory] {
            for name in ["a", "b", "b1", "c", "d", "sub/x"] {
                store
                    .put(&p(&format!("d/{name}")), Bytes::from_static(b"1"))
                    .unwrap();
            }
            let names = |start: &str, end: Option<&str>| -> Vec<String> {
                store
                    .list_dir_range(Some(&p("d")), start, end)
                    .unwrap()
                    .into_iter()
                    .map(|m| m.path.to_string())
                    .collect()
            };
            assert_eq!(names("b", Some("c")), ["d/b", "d/b1"], "{store:?}");
            assert_eq!(names("", Some("b")), ["d/a"]);
            assert_eq!(names("b", None), ["d/b", "d/b1", "d/c", "d/d"]);
            assert!(names("c", Some("c")).is_empty());
            assert!(names("d", Some("a")).is_empty());
        }
    }

    #[test]
    fn listing_is_sorted_filtered_and_tolerates_missing_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFsStore::new(dir.path()).with_durability(false);
        for name in ["b", "a", "c", "sub/x"] {
            store
                .put(&p(&format!("d/{name}")), Bytes::from_static(b"1"))
                .unwrap();
        }
        let names: Vec<_> = store
            .list_dir_from(Some(&p("d")), "b")
            .unwrap()
            .into_iter()
            .map(|m| m.path.to_string())
            .collect();
        assert_eq!(names, vec!["d/b", "d/c"]);
        assert!(
            store
                .list_dir_from(Some(&p("missing")), "")
                .unwrap()
                .is_empty()
        );
        let all: Vec<_> = store
            .list_tree(None)
            .unwrap()
            .into_iter()
            .map(|m| m.path.to_string())
            .collect();
        assert_eq!(all, vec!["d/a", "d/b", "d/c", "d/sub/x"]);
    }

    #[test]
    fn get_missing_is_not_found_and_delete_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFsStore::new(dir.path());
        assert!(store.get(&p("nope")).unwrap_err().is_not_found());
        assert!(store.head(&p("nope")).unwrap_err().is_not_found());
        store.delete(&p("nope")).unwrap();
    }

    #[test]
    fn large_objects_are_mapped_and_ranges_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFsStore::new(dir.path()).with_durability(false);
        let data: Vec<u8> = (0..(MMAP_THRESHOLD as usize + 10))
            .map(|i| (i % 251) as u8)
            .collect();
        store.put(&p("big"), Bytes::from(data.clone())).unwrap();
        assert_eq!(store.get(&p("big")).unwrap(), Bytes::from(data.clone()));
        assert_eq!(
            store.get_range(&p("big"), 5..9).unwrap(),
            Bytes::from(data[5..9].to_vec())
        );
        assert!(
            store
                .get_range(&p("big"), data.len() as u64..data.len() as u64 + 4)
                .is_err()
        );
    }

    /// Names that are not regular files are refused by every read, without blocking (a
    /// FIFO) and without reading (a device, a directory); a limited read refuses a larger
    /// file without reading it; a range past the end fails before allocating for it.
    #[cfg(unix)]
    #[test]
    fn reads_open_only_regular_files_and_stay_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFsStore::new(dir.path()).with_durability(false);
        let fifo = dir.path().join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero")).unwrap();
        fs::create_dir(dir.path().join("dir")).unwrap();
        for (name, kind) in [
            ("fifo", "fifo"),
            ("zero", "character device"),
            ("dir", "directory"),
        ] {
            let reads = [
                store.get(&p(name)),
                store.get_limited(&p(name), 10),
                store.get_range(&p(name), 0..4),
                store.get_external(&dir.path().join(name).display().to_string()),
            ];
            for r in reads {
                match r {
                    Err(StorageError::NotAFile { kind: k, .. }) => assert_eq!(k, kind, "{name}"),
                    other => panic!("{name}: {other:?}"),
                }
            }
        }
        store.put(&p("f"), Bytes::from(vec![7u8; 100])).unwrap();
        assert_eq!(store.get_limited(&p("f"), 100).unwrap().len(), 100);
        assert!(matches!(
            store.get_limited(&p("f"), 99),
            Err(StorageError::TooLarge {
                size: 100,
                limit: 99,
                ..
            })
        ));
        let err = store.get_range(&p("f"), 0..u64::MAX).unwrap_err();
        assert!(err.to_string().contains("past end"), "{err}");
    }
}
