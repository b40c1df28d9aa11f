//! Listing one directory of the local filesystem: the regular files whose names fall in a
//! range, with their sizes and modification times.
//!
//! A Delta log directory holds one entry per commit, so a long-lived table's `_delta_log`
//! has tens of thousands of entries, while a snapshot load asks for the few at or after its
//! checkpoint and time travel for the few up to its version. The directory has to be read
//! whole (a filesystem returns entries in its own order, not by name), so what an entry
//! outside the range costs decides the listing's cost. On Linux the names are read with
//! `getdents64` into one reused buffer and compared in place: an entry outside the range
//! costs no allocation and no `stat`. (`std::fs::read_dir` allocates two strings per
//! entry; for a 10,000-entry log that was about a third of the listing.) Elsewhere the
//! listing goes through `std::fs::read_dir`, with the same answers.
//!
//! The answers, on every platform: entries that are not regular files (directories,
//! symbolic links, which are not followed, devices) and names that are not UTF-8 are left
//! out; an entry deleted between the directory read and its `stat` is simply not there; a
//! directory that does not exist lists as empty.

use std::io;
use std::path::Path;

/// One regular file of a listed directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListedFile {
    /// The file's name within the directory.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time in milliseconds since the Unix epoch (before it: negative).
    pub modified_ms: i64,
}

/// Why a listing failed: the directory read, or the `stat` of one named entry.
#[derive(Debug)]
pub(crate) enum ListError {
    /// Opening or reading the directory.
    Read(io::Error),
    /// The `stat` of the entry `name`.
    Stat { name: String, source: io::Error },
}

/// Whether `name` is in `[start, end)` (no upper bound without `end`), by byte order.
fn in_range(name: &[u8], start: &str, end: Option<&str>) -> bool {
    name >= start.as_bytes() && end.is_none_or(|end| name < end.as_bytes())
}

/// Milliseconds since the Unix epoch of a time given as seconds and nanoseconds, truncated
/// toward zero as `SystemTime::duration_since` gives them on either side of the epoch (so
/// both listing paths agree to the millisecond).
fn millis(secs: i64, nanos: i64) -> i64 {
    let total = i128::from(secs) * 1_000_000_000 + i128::from(nanos);
    let ms = if total >= 0 {
        total / 1_000_000
    } else {
        -((-total) / 1_000_000)
    };
    i64::try_from(ms).unwrap_or(if ms < 0 { i64::MIN } else { i64::MAX })
}

/// A file's modification time in milliseconds since the Unix epoch, truncated toward zero
/// on either side of it (0 where the platform does not record it).
pub(crate) fn modified_ms(md: &std::fs::Metadata) -> i64 {
    match md.modified() {
        Ok(t) => match t.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
        },
        Err(_) => 0,
    }
}

/// The regular files of `dir` whose names are in `[start, end)`, in no particular order.
///
/// # Errors
/// [`ListError::Read`] when the directory cannot be read (other than not existing),
/// [`ListError::Stat`] when an entry in the range cannot be `stat`ed (other than having
/// gone).
#[cfg(target_os = "linux")]
pub(crate) fn list_files(
    dir: &Path,
    start: &str,
    end: Option<&str>,
) -> Result<Vec<ListedFile>, ListError> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};
    use std::mem::MaybeUninit;

    let fd = match rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(Vec::new()),
        Err(e) => return Err(ListError::Read(e.into())),
    };
    // 64 KiB: a few hundred entries per system call.
    let mut buf = vec![MaybeUninit::<u8>::uninit(); 64 * 1024];
    let mut entries = RawDir::new(&fd, &mut buf);
    let mut out = Vec::new();
    while let Some(entry) = entries.next() {
        let entry = entry.map_err(|e| ListError::Read(e.into()))?;
        let raw = entry.file_name();
        let bytes = raw.to_bytes();
        if bytes == b"." || bytes == b".." || !in_range(bytes, start, end) {
            continue;
        }
        // The directory entry's type, where the filesystem gives it, saves a `stat` on
        // what cannot be a regular file.
        match entry.file_type() {
            FileType::RegularFile | FileType::Unknown => {}
            _ => continue,
        }
        let Ok(name) = std::str::from_utf8(bytes) else {
            continue;
        };
        // Not following a symbolic link, as `DirEntry::metadata` does not.
        let st = match rustix::fs::statat(&fd, raw, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(rustix::io::Errno::NOENT) => continue,
            Err(e) => {
                return Err(ListError::Stat {
                    name: name.to_string(),
                    source: e.into(),
                });
            }
        };
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            continue;
        }
        out.push(ListedFile {
            name: name.to_string(),
            size: u64::try_from(st.st_size).unwrap_or(0),
            modified_ms: millis(st.st_mtime, i64::try_from(st.st_mtime_nsec).unwrap_or(0)),
        });
    }
    Ok(out)
}

/// [`list_files`] through `std::fs::read_dir` (platforms other than Linux).
///
/// # Errors
/// As [`list_files`].
#[cfg_attr(target_os = "linux", allow(dead_code))]
pub(crate) fn list_files_portable(
    dir: &Path,
    start: &str,
    end: Option<&str>,
) -> Result<Vec<ListedFile>, ListError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ListError::Read(e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(ListError::Read)?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        // Outside the range: skipped before its metadata is fetched (one stat each).
        if !in_range(name.as_bytes(), start, end) {
            continue;
        }
        let md = match entry.metadata() {
            Ok(md) => md,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(source) => return Err(ListError::Stat { name, source }),
        };
        if !md.is_file() {
            continue;
        }
        out.push(ListedFile {
            name,
            size: md.len(),
            modified_ms: modified_ms(&md),
        });
    }
    Ok(out)
}

/// [`list_files`] where it is not built: the portable listing.
#[cfg(not(target_os = "linux"))]
pub(crate) fn list_files(
    dir: &Path,
    start: &str,
    end: Option<&str>,
) -> Result<Vec<ListedFile>, ListError> {
    list_files_portable(dir, start, end)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn sorted(mut v: Vec<ListedFile>) -> Vec<ListedFile> {
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// A directory with files in and out of a range, a subdirectory, a symbolic link, a
    /// name that is not UTF-8 and hundreds of entries (several `getdents64` buffers' worth
    /// on filesystems with long records): both listings give the same files.
    #[test]
    fn both_listings_give_the_same_files_of_the_range() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..3000 {
            fs::write(dir.path().join(format!("{i:020}.json")), vec![b'x'; i % 7]).unwrap();
        }
        fs::write(dir.path().join("_last_checkpoint"), b"{}").unwrap();
        fs::create_dir(dir.path().join("00000000000000000005.dir")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            std::os::unix::fs::symlink(
                dir.path().join("_last_checkpoint"),
                dir.path().join("00000000000000000006.link"),
            )
            .unwrap();
            fs::write(
                dir.path()
                    .join(std::ffi::OsStr::from_bytes(b"00000000000000000007.\xff")),
                b"",
            )
            .unwrap();
        }
        for (start, end) in [
            ("", None),
            ("00000000000000000002", Some("00000000000000000009")),
            ("00000000000000002990", None),
            ("_", None),
            ("zzz", None),
        ] {
            let fast = sorted(list_files(dir.path(), start, end).unwrap());
            let portable = sorted(list_files_portable(dir.path(), start, end).unwrap());
            assert_eq!(fast, portable, "range {start:?}..{end:?}");
        }
        let some = sorted(
            list_files(
                dir.path(),
                "00000000000000000002",
                Some("00000000000000000009"),
            )
            .unwrap(),
        );
        let names: Vec<&str> = some.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            (2..9)
                .map(|i| format!("{i:020}.json"))
                .collect::<Vec<_>>()
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
        );
        assert_eq!(some[0].size, 2);
        let all = list_files(dir.path(), "", None).unwrap();
        assert_eq!(
            all.len(),
            3001,
            "every file, not the directory, link or bad name"
        );
    }

    #[test]
    fn a_missing_directory_is_empty_and_a_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            list_files(&dir.path().join("nope"), "", None)
                .unwrap()
                .is_empty()
        );
        let file = dir.path().join("f");
        fs::write(&file, b"1").unwrap();
        assert!(matches!(
            list_files(&file, "", None),
            Err(ListError::Read(_))
        ));
    }

    #[test]
    fn times_before_the_epoch_truncate_toward_zero() {
        assert_eq!(millis(0, 0), 0);
        assert_eq!(millis(1, 999_999), 1000);
        assert_eq!(millis(1_700_000_000, 123_456_789), 1_700_000_000_123);
        // -1.4999995 s: -1499 ms, as `duration_since` gives it.
        assert_eq!(millis(-2, 500_000_500), -1499);
        assert_eq!(millis(-2, 500_000_000), -1500);
    }
}
