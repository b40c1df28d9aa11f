//! Which objects of a store a reference reaches: the resolution VACUUM compares against,
//! so that a file is never judged unreferenced because its reference is spelled differently
//! from the listing (`//`, `/./`, `/x/../`).
//!
//! This module owns the lexical part, valid for every store: URIs are normalised segment
//! by segment (empty and `.` segments dropped, `..` removed with its parent) before they are
//! compared with the store root. Filesystems add symbolic links on top (see
//! `local_reach.rs`).

use crate::uri::split_authority as split_uri;
use crate::{FileLocation, StorePath};

/// The segments of an absolute path after lexical normalisation (`..` at the top stays at
/// the top, as on POSIX).
fn normalized_segments(path: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    out
}

/// The table-relative path that `uri` names lexically inside the store rooted at
/// `root_uri`, or `None` if it names something outside (another scheme, authority or
/// directory) or the root itself.
pub(crate) fn lexically_inside(root_uri: &str, uri: &str) -> Option<StorePath> {
    let (root_prefix, root_path) = split_uri(root_uri)?;
    let (prefix, path) = split_uri(uri)?;
    if root_prefix != prefix {
        return None;
    }
    let root_segs = normalized_segments(root_path);
    let segs = normalized_segments(path);
    let rest = segs.strip_prefix(root_segs.as_slice())?;
    if rest.is_empty() {
        return None;
    }
    StorePath::parse(rest.join("/")).ok()
}

/// The default of [`crate::ObjectStore::reachable_objects`]: a table path reaches itself,
/// an absolute URI the object it names lexically inside the root (stores without links).
pub(crate) fn lexically_reachable(root_uri: &str, locations: &[FileLocation]) -> Vec<StorePath> {
    locations
        .iter()
        .filter_map(|loc| match loc {
            FileLocation::Table(p) => Some(p.clone()),
            FileLocation::External(uri) => lexically_inside(root_uri, uri),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_object_resolve_alike() {
        let root = "file:///data/t";
        for uri in [
            "file:///data/t/a/b.parquet",
            "file:///data/t//a/b.parquet",
            "file:///data//t/a/./b.parquet",
            "file:///data/t/x/../a/b.parquet",
            "file:///data/u/../t/a/b.parquet",
            "file:///../data/t/a/b.parquet",
        ] {
            assert_eq!(
                lexically_inside(root, uri)
                    .map(|p| p.to_string())
                    .as_deref(),
                Some("a/b.parquet"),
                "{uri}"
            );
        }
        for uri in [
            "file:///data/tt/a.parquet",
            "file:///data/t/../a.parquet",
            "file:///data/t",
            "file:///data/t/.",
            "s3://data/t/a.parquet",
            "file://host/data/t/a.parquet",
            "relative/a.parquet",
        ] {
            assert_eq!(lexically_inside(root, uri), None, "{uri}");
        }
    }

    #[test]
    fn memory_and_bucket_roots() {
        assert_eq!(
            lexically_inside("memory://", "memory:///x//y").map(|p| p.to_string()),
            Some("x/y".into())
        );
        assert_eq!(
            lexically_inside("s3://b/pre", "s3://b/pre/./k/../k2").map(|p| p.to_string()),
            Some("k2".into())
        );
        assert_eq!(lexically_inside("s3://b/pre", "s3://c/pre/k"), None);
    }
}
