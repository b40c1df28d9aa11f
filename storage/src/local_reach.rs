//! Which objects of a local table a reference reaches, the way the reader's `open(2)`
//! resolves it: through symbolic links, `..` after a link, and any spelling of the root.
//!
//! A reference is resolved to the real file it opens; if that file lies inside the real
//! (canonical) table root, its table-relative path is reachable. The reference's own
//! lexical target is reachable too (a link in the table is itself an object the reader
//! goes through). Over-approximating is safe for VACUUM, missing a file is not, so only an
//! error that leaves the target unknown fails the resolution.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::reach::lexically_inside;
use crate::uri::external_path;
use crate::{FileLocation, Result, StorageError, StorePath};

/// Resolves references against one table root, caching the real location of each
/// directory (a table has few directories and many files).
struct Resolver {
    root: PathBuf,
    real_root: PathBuf,
    real_dirs: HashMap<PathBuf, Option<PathBuf>>,
}

/// Errors that prove the path opens nothing: the reader would fail too.
fn opens_nothing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

impl Resolver {
    /// The real path `path` opens, or `None` if opening it would fail.
    fn real_path(&mut self, path: &Path) -> Result<Option<PathBuf>> {
        let shown = || path.display().to_string();
        let md = match fs::symlink_metadata(path) {
            Ok(md) => md,
            Err(e) if opens_nothing(&e) => return Ok(None),
            Err(e) => return Err(StorageError::io("resolve", shown(), e)),
        };
        // A link as the last component is followed by the reader; a path ending in `..`
        // has no file name. Both are resolved whole; a plain name uses the cached directory.
        let (Some(parent), Some(name), false) =
            (path.parent(), path.file_name(), md.file_type().is_symlink())
        else {
            return match fs::canonicalize(path) {
                Ok(p) => Ok(Some(p)),
                Err(e) if opens_nothing(&e) => Ok(None),
                Err(e) => Err(StorageError::io("resolve", shown(), e)),
            };
        };
        let real_dir = match self.real_dirs.get(parent) {
            Some(d) => d.clone(),
            None => {
                let d = match fs::canonicalize(parent) {
                    Ok(p) => Some(p),
                    Err(e) if opens_nothing(&e) => None,
                    Err(e) => {
                        return Err(StorageError::io("resolve", parent.display().to_string(), e));
                    }
                };
                self.real_dirs.insert(parent.to_path_buf(), d.clone());
                d
            }
        };
        Ok(real_dir.map(|d| d.join(name)))
    }

    /// The table-relative path of a real path inside the real root.
    fn inside(&self, real: &Path) -> Option<StorePath> {
        let rel = real.strip_prefix(&self.real_root).ok()?;
        let segs: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
        StorePath::parse(segs?.join("/")).ok()
    }

    fn reach(&mut self, location: &FileLocation, out: &mut Vec<StorePath>) -> Result<()> {
        let path = match location {
            FileLocation::Table(p) => {
                out.push(p.clone());
                let mut full = self.root.clone();
                full.extend(p.segments());
                full
            }
            FileLocation::External(uri) => {
                // A URI this store cannot open reaches nothing of it.
                let Some(path) = external_path(uri) else {
                    return Ok(());
                };
                let as_uri = |root: &Path| format!("file://{}", root.display());
                for root in [&self.root, &self.real_root] {
                    if let Some(p) = lexically_inside(&as_uri(root), &as_uri(&path)) {
                        out.push(p);
                    }
                }
                path
            }
        };
        if let Some(real) = self.real_path(&path)?
            && let Some(p) = self.inside(&real)
        {
            out.push(p);
        }
        Ok(())
    }
}

/// See [`crate::ObjectStore::reachable_objects`]; `root` is the store's root directory.
pub(crate) fn reachable_objects(root: &Path, locations: &[FileLocation]) -> Result<Vec<StorePath>> {
    let root = std::path::absolute(root)
        .map_err(|e| StorageError::io("resolve", root.display().to_string(), e))?;
    let real_root = fs::canonicalize(&root)
        .map_err(|e| StorageError::io("resolve", root.display().to_string(), e))?;
    let mut resolver = Resolver {
        root,
        real_root,
        real_dirs: HashMap::new(),
    };
    let mut out = Vec::with_capacity(locations.len());
    for loc in locations {
        resolver.reach(loc, &mut out)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn reach(root: &Path, loc: FileLocation) -> BTreeSet<String> {
        reachable_objects(root, &[loc])
            .unwrap()
            .into_iter()
            .map(|p| p.to_string())
            .collect()
    }

    #[test]
    fn every_spelling_and_link_reaches_the_real_file() {
        let sandbox = tempfile::tempdir().unwrap();
        let table = sandbox.path().join("t");
        fs::create_dir_all(table.join("d")).unwrap();
        fs::create_dir_all(sandbox.path().join("elsewhere")).unwrap();
        fs::write(table.join("d/a.parquet"), b"1").unwrap();
        std::os::unix::fs::symlink("d", table.join("alias")).unwrap();
        std::os::unix::fs::symlink("d/a.parquet", table.join("file-link")).unwrap();
        std::os::unix::fs::symlink("t", sandbox.path().join("t-link")).unwrap();
        std::os::unix::fs::symlink("../t/d", sandbox.path().join("elsewhere/into")).unwrap();
        let s = sandbox.path().display().to_string();
        for uri in [
            format!("file://{s}/t/d/a.parquet"),
            format!("file://{s}/t//d/a.parquet"),
            format!("file://{s}/t/./d/a.parquet"),
            format!("file://{s}/t/x/../d/a.parquet"),
            format!("file://{s}/t-link/d/a.parquet"),
            format!("file://{s}/t/alias/a.parquet"),
            format!("file://{s}/elsewhere/into/a.parquet"),
            format!("file://{s}/elsewhere/into/../d/a.parquet"),
        ] {
            assert!(
                reach(&table, FileLocation::External(uri.clone())).contains("d/a.parquet"),
                "{uri}"
            );
        }
        for rel in ["alias/a.parquet", "file-link", "d/a.parquet"] {
            let got = reach(&table, FileLocation::Table(StorePath::parse(rel).unwrap()));
            assert!(
                got.contains("d/a.parquet") && got.contains(rel),
                "{rel}: {got:?}"
            );
        }
        assert!(
            reach(
                &table,
                FileLocation::External("s3://b/t/d/a.parquet".into())
            )
            .is_empty()
        );
        assert!(
            reach(
                &table,
                FileLocation::External(format!("file://{s}/elsewhere/a.parquet"))
            )
            .is_empty()
        );
    }
}
