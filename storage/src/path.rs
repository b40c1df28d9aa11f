//! Table-relative object paths: [`StorePath`], and [`StorePathRef`], the same validated
//! path borrowing its text.

use std::borrow::Cow;
use std::fmt;

use crate::{Result, StorageError};

/// A validated path of an object relative to the table root: `/`-separated, non-empty
/// segments, none of them `.` or `..`, no leading `/`, no NUL byte.
///
/// Invariant: a `StorePath` can never name anything outside the table root, so every backend
/// can join it to its root without further checks. Absolute locations that the protocol
/// allows for reading (e.g. `file:///...` in an `add` action) are [`crate::FileLocation`]s,
/// never `StorePath`s, and can therefore never be written or deleted.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StorePath(String);

impl StorePath {
    /// Validates `path` as a table-relative path.
    ///
    /// # Errors
    /// [`StorageError::InvalidPath`] if the path is empty, absolute, contains a NUL byte or an
    /// empty, `.` or `..` segment.
    pub fn parse(path: impl Into<String>) -> Result<Self> {
        let path = path.into();
        if let Some(reason) = invalid_reason(&path) {
            return Err(StorageError::InvalidPath { path, reason });
        }
        Ok(StorePath(path))
    }

    /// Wraps a path the engine built itself from valid pieces (a constant directory and a
    /// generated file name). Validity is checked in debug builds only; never call this with
    /// text that came from a table or a user (use [`StorePath::parse`]).
    pub fn from_trusted(path: String) -> Self {
        debug_assert!(
            invalid_reason(&path).is_none(),
            "invalid trusted path {path:?}"
        );
        StorePath(path)
    }

    /// The path as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The last segment (the object's name).
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// The parent directory, or `None` for an object at the table root.
    pub fn parent(&self) -> Option<StorePath> {
        self.0
            .rfind('/')
            .map(|i| StorePath(self.0[..i].to_string()))
    }

    /// Appends one or more segments (`a/b` is allowed); the result is validated.
    ///
    /// # Errors
    /// [`StorageError::InvalidPath`] if the joined path is invalid.
    pub fn join(&self, child: &str) -> Result<StorePath> {
        StorePath::parse(format!("{}/{}", self.0, child))
    }

    /// The segments of the path.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }
}

/// A [`StorePath`] that borrows its text where it can: the same validation and invariant
/// (it can never name anything outside the table root), without an allocation for a path
/// taken as it is from a log action. Planning over a million files holds a million of
/// these, where owned paths cost an allocation and about 80 bytes each.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StorePathRef<'a>(Cow<'a, str>);

impl<'a> StorePathRef<'a> {
    /// Validates `path` as a table-relative path, keeping it borrowed if it is.
    ///
    /// # Errors
    /// As [`StorePath::parse`].
    pub fn parse(path: impl Into<Cow<'a, str>>) -> Result<Self> {
        let path = path.into();
        if let Some(reason) = invalid_reason(&path) {
            return Err(StorageError::InvalidPath {
                path: path.into_owned(),
                reason,
            });
        }
        Ok(StorePathRef(path))
    }

    /// The path as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The owned path (no validation again: it was validated when parsed).
    pub fn into_owned(self) -> StorePath {
        StorePath(self.0.into_owned())
    }
}

impl fmt::Display for StorePathRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for StorePathRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

fn invalid_reason(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("empty path");
    }
    if path.starts_with('/') {
        return Some("absolute path escapes the table root");
    }
    // Every file path of a scan or a load is checked here, so the scans are memchr's
    // (vectorised) ones: for a NUL first, then from `/` to `/`, each segment looked at
    // once.
    let bytes = path.as_bytes();
    if memchr::memchr(0, bytes).is_some() {
        return Some("NUL byte in path");
    }
    let mut start = 0;
    for slash in memchr::memchr_iter(b'/', bytes) {
        if let Some(reason) = segment_reason(&bytes[start..slash]) {
            return Some(reason);
        }
        start = slash + 1;
    }
    segment_reason(&bytes[start..])
}

/// Why one `/`-separated segment makes a path invalid, if it does.
fn segment_reason(segment: &[u8]) -> Option<&'static str> {
    match segment {
        b"" => Some("empty path segment"),
        b"." | b".." => Some("relative segment escapes the table root"),
        _ => None,
    }
}

impl fmt::Display for StorePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for StorePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl AsRef<str> for StorePath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_relative_paths() {
        for p in [
            "a",
            "_delta_log/00000000000000000000.json",
            "x=a%2Fb/part-0.parquet",
            "a b/ü",
        ] {
            assert_eq!(StorePath::parse(p).unwrap().as_str(), p);
            let borrowed = StorePathRef::parse(p).unwrap();
            assert_eq!(borrowed.as_str().as_ptr(), p.as_ptr(), "{p} was copied");
            assert_eq!(borrowed.into_owned(), StorePath::parse(p).unwrap());
        }
    }

    #[test]
    fn refuses_paths_that_escape_the_root() {
        for p in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a/./b",
            "a//b",
            "a/",
            "a\0b",
            "..",
        ] {
            let err = StorePath::parse(p).unwrap_err();
            assert!(
                matches!(err, StorageError::InvalidPath { .. }),
                "{p:?} -> {err}"
            );
            // The borrowed form keeps the same invariant.
            let err = StorePathRef::parse(p).unwrap_err();
            assert!(
                matches!(err, StorageError::InvalidPath { .. }),
                "{p:?} -> {err}"
            );
        }
    }

    /// The one-pass check names what the rule-by-rule one named: a NUL anywhere first,
    /// then the first bad segment.
    #[test]
    fn the_first_reason_is_named() {
        assert_eq!(invalid_reason("a//b\0"), Some("NUL byte in path"));
        assert_eq!(invalid_reason("../a\0"), Some("NUL byte in path"));
        assert_eq!(
            invalid_reason("a/../b//c"),
            Some("relative segment escapes the table root")
        );
        assert_eq!(invalid_reason("a//.."), Some("empty path segment"));
        assert_eq!(
            invalid_reason("a/."),
            Some("relative segment escapes the table root")
        );
        assert_eq!(invalid_reason("..."), None);
        assert_eq!(invalid_reason("a/.b/c."), None);
    }

    #[test]
    fn parent_and_file_name() {
        let p = StorePath::parse("a/b/c.json").unwrap();
        assert_eq!(p.file_name(), "c.json");
        assert_eq!(p.parent().unwrap().as_str(), "a/b");
        assert!(StorePath::parse("c").unwrap().parent().is_none());
        assert_eq!(p.parent().unwrap().join("d").unwrap().as_str(), "a/b/d");
        assert!(p.join("../x").is_err());
    }
}
