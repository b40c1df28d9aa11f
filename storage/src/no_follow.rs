//! Writes and deletes on a local store never follow a symbolic link below the table root:
//! a directory inside the table that is a link (`evil -> ../outside`) would otherwise let a
//! hostile table make the engine write or delete files outside it.
//!
//! Every directory on the way from the root to the object is checked with `lstat` before
//! the operation. The root itself may be a link (the user chose it). The check and the
//! operation are separate calls: alluvium does not defend against a process that swaps a
//! directory for a link in between, only against tables that hold links.

use std::fs;
use std::io;
use std::path::Path;

use crate::{Result, StorageError, StorePath};

/// Why a write or delete through a linked directory is refused.
pub(crate) const LINKED_DIRECTORY: &str = "a directory on the path below the table root is a symbolic link; writes and deletes never follow links";

/// Checks that no existing directory between `root` and the object `path` is a symbolic
/// link (missing directories are fine: the store creates them as real directories).
///
/// # Errors
/// [`StorageError::InvalidPath`] naming `path` if one is a link; an I/O error if one cannot
/// be examined.
pub(crate) fn check_no_linked_dirs(root: &Path, path: &StorePath) -> Result<()> {
    let segments: Vec<&str> = path.segments().collect();
    let Some((_, dirs)) = segments.split_last() else {
        return Ok(());
    };
    let mut dir = root.to_path_buf();
    for seg in dirs {
        dir.push(seg);
        match fs::symlink_metadata(&dir) {
            Ok(md) if md.file_type().is_symlink() => {
                return Err(StorageError::InvalidPath {
                    path: path.to_string(),
                    reason: LINKED_DIRECTORY,
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(StorageError::io("stat", path.as_str(), e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::{LocalFsStore, ObjectStore};

    fn p(s: &str) -> StorePath {
        StorePath::parse(s).unwrap()
    }

    #[test]
    fn writes_and_deletes_refuse_linked_directories() {
        let sandbox = tempfile::tempdir().unwrap();
        let (table, outside) = (sandbox.path().join("t"), sandbox.path().join("outside"));
        fs::create_dir_all(table.join("real")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("victim"), b"keep").unwrap();
        std::os::unix::fs::symlink("../outside", table.join("evil")).unwrap();
        std::os::unix::fs::symlink("../outside", table.join("real/deeper")).unwrap();
        let store = LocalFsStore::new(&table).with_durability(false);
        for path in ["evil/victim", "real/deeper/victim", "evil/new/x"] {
            let refused = |r: Result<()>| {
                assert!(
                    matches!(r, Err(StorageError::InvalidPath { reason, .. }) if reason == LINKED_DIRECTORY),
                    "{path}"
                )
            };
            refused(store.delete(&p(path)));
            refused(store.put(&p(path), Bytes::from_static(b"x")));
            refused(store.put_if_absent(&p(path), Bytes::from_static(b"x")));
        }
        assert_eq!(fs::read(outside.join("victim")).unwrap(), b"keep");
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 1);
        // Real directories (new or existing) still work.
        store.put(&p("real/a"), Bytes::from_static(b"1")).unwrap();
        store
            .put(&p("new/dir/a"), Bytes::from_static(b"1"))
            .unwrap();
        store.delete(&p("real/a")).unwrap();
        // A link as the object itself is removed, never its target.
        std::os::unix::fs::symlink("../outside/victim", table.join("link")).unwrap();
        store.delete(&p("link")).unwrap();
        assert!(fs::symlink_metadata(table.join("link")).is_err());
        assert_eq!(fs::read(outside.join("victim")).unwrap(), b"keep");
    }

    #[test]
    fn a_linked_root_is_the_users_choice() {
        let sandbox = tempfile::tempdir().unwrap();
        fs::create_dir_all(sandbox.path().join("real")).unwrap();
        std::os::unix::fs::symlink("real", sandbox.path().join("root")).unwrap();
        let store = LocalFsStore::new(sandbox.path().join("root")).with_durability(false);
        store.put(&p("d/a"), Bytes::from_static(b"1")).unwrap();
        assert!(sandbox.path().join("real/d/a").is_file());
        store.delete(&p("d/a")).unwrap();
    }
}
