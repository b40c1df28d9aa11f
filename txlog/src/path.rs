//! File paths in actions: percent-decoding, canonical forms for log replay, and resolution to
//! a [`FileLocation`].
//!
//! `add.path` is an RFC 2396 URI reference: relative to the table root, or absolute with a
//! scheme. Decoding `%XX` exactly once gives the object key (partition directories are
//! therefore double-encoded in the log). Two spellings of one absolute path (`/x`, `file:/x`,
//! `file:///x`) name the same file, so replay compares canonical forms.

use std::borrow::Cow;

use alluvium_storage::{FileLocation, FileLocationRef, LocalRef, StorePathRef, local_ref};
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};

use crate::{LogError, Result};

/// Percent-decodes once. Malformed escapes are kept literally.
///
/// # Errors
/// A message if the decoded bytes are not UTF-8.
pub fn percent_decode(s: &str) -> Result<String, String> {
    match percent_decode_str(s).decode_utf8() {
        Ok(c) => Ok(c.into_owned()),
        Err(e) => Err(format!("{s:?} does not decode to UTF-8: {e}")),
    }
}

/// Characters percent-encoded when a relative file path is written into `add.path`: what
/// java.net.URI would reject in a path (controls, space, `"#%<>?[\]^` backtick `{|}`) plus
/// non-ASCII.
const URI_PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Encodes an object key (relative path) as the URI string written in `add.path`.
pub fn encode_path(key: &str) -> String {
    utf8_percent_encode(key, URI_PATH).to_string()
}

/// The table root as a URI (`file:///abs/dir`, `s3://bucket/prefix`, `memory://`), without a
/// trailing slash. Used to recognise absolute paths that point inside the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRoot(String);

impl TableRoot {
    /// Wraps a root URI.
    pub fn new(uri: impl Into<String>) -> Self {
        let uri = uri.into();
        let canonical = canonical_absolute(&uri).unwrap_or(uri);
        TableRoot(canonical.trim_end_matches('/').to_string())
    }

    /// The root URI.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// True if `raw` is an absolute reference: `/x` or `scheme:/...`.
pub(crate) fn is_absolute(raw: &str) -> bool {
    if raw.starts_with('/') {
        return true;
    }
    match raw.find(':') {
        Some(i) if i > 0 => {
            let scheme = &raw[..i];
            scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                && raw[i + 1..].starts_with('/')
        }
        _ => false,
    }
}

/// The canonical spelling of an absolute, already decoded reference: a local file
/// (`alluvium_storage::local_ref`'s rule: `file:///p`, `file://localhost/p`, `file:/p`,
/// `/p`) becomes `file:///p`; other absolute URIs keep their text.
fn canonical_absolute(decoded: &str) -> Option<String> {
    match local_ref(decoded) {
        Some(LocalRef::Absolute(p)) => Some(format!("file://{p}")),
        _ => is_absolute(decoded).then(|| decoded.to_string()),
    }
}

/// Whether `raw` is a plain relative path (no `%` escape, no scheme, no leading `/`), as
/// nearly every action path is: it is then its own decoded, canonical form and object key,
/// and one scan says so. The fast paths of [`canonical_path`] and [`resolve`] both rest on
/// this one rule, so that a file's identity in replay and its location cannot disagree.
fn is_plain_relative(raw: &str) -> bool {
    !raw.starts_with('/') && memchr::memchr2(b'%', b':', raw.as_bytes()).is_none()
}

/// The canonical form of an action path, used as the file identity in log replay: the
/// decoded relative path, or the canonical absolute URI (made relative when it points inside
/// the table root). Cheap (no allocation) for relative paths without escapes.
pub fn canonical_path<'a>(raw: &'a str, root: &TableRoot) -> Cow<'a, str> {
    // This runs for every action of every load.
    if is_plain_relative(raw) {
        return Cow::Borrowed(raw);
    }
    let decoded: Cow<'a, str> = if raw.contains('%') {
        Cow::Owned(percent_decode_str(raw).decode_utf8_lossy().into_owned())
    } else {
        Cow::Borrowed(raw)
    };
    if !is_absolute(&decoded) {
        return decoded;
    }
    match canonical_absolute(&decoded) {
        Some(abs) => match abs
            .strip_prefix(root.as_str())
            .and_then(|r| r.strip_prefix('/'))
        {
            Some(rel) if !rel.is_empty() => Cow::Owned(rel.to_string()),
            _ => Cow::Owned(abs),
        },
        None => decoded,
    }
}

/// Resolves an action path to the location of the file.
///
/// # Errors
/// [`LogError::InvalidAction`] if the path does not decode to UTF-8 or is a relative path
/// that escapes the table root (such files are never read or deleted).
pub fn resolve(raw: &str, root: &TableRoot) -> Result<FileLocation> {
    resolve_ref(raw, root).map(FileLocationRef::into_owned)
}

/// [`resolve`] without copying: a plain relative path (nearly every action path) is
/// validated and borrowed, and only a path that needs decoding or re-rooting is built
/// anew. Both forms come from this one function, so they cannot disagree.
///
/// # Errors
/// As [`resolve`].
pub fn resolve_ref<'a>(raw: &'a str, root: &TableRoot) -> Result<FileLocationRef<'a>> {
    let bad = |reason: String| LogError::InvalidAction {
        action: "add",
        path: raw.to_string(),
        reason,
    };
    // Scans and loads resolve every live file, so this is on their path once per file.
    if is_plain_relative(raw) {
        return StorePathRef::parse(raw)
            .map(FileLocationRef::Table)
            .map_err(|e| bad(e.to_string()));
    }
    let decoded = if raw.contains('%') {
        percent_decode(raw).map_err(bad)?
    } else {
        raw.to_string()
    };
    if is_absolute(&decoded) {
        let abs = canonical_absolute(&decoded).unwrap_or(decoded);
        if let Some(rel) = abs
            .strip_prefix(root.as_str())
            .and_then(|r| r.strip_prefix('/'))
            && let Ok(p) = StorePathRef::parse(rel.to_string())
        {
            return Ok(FileLocationRef::Table(p));
        }
        return Ok(FileLocationRef::External(Cow::Owned(abs)));
    }
    StorePathRef::parse(decoded)
        .map(FileLocationRef::Table)
        .map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alluvium_storage::StorePath;

    fn root() -> TableRoot {
        TableRoot::new("file:///data/t")
    }

    #[test]
    fn canonical_forms_of_one_absolute_file_agree() {
        let r = root();
        let forms = [
            "/some/abs/path",
            "file:/some/abs/path",
            "file:///some/abs/path",
            "file://localhost/some/abs/path",
            "FILE://LOCALHOST/some/abs/path",
            "file:////some/abs/path",
        ];
        for f in forms {
            assert_eq!(canonical_path(f, &r), "file:///some/abs/path", "{f}");
        }
        assert_eq!(
            canonical_path("/some/with%20space/p@%23h", &r),
            canonical_path("file:///some/with%20space/p@%23h", &r)
        );
    }

    #[test]
    fn absolute_paths_inside_the_root_become_relative() {
        let r = root();
        assert_eq!(
            canonical_path("file:///data/t/a/b.parquet", &r),
            "a/b.parquet"
        );
        assert_eq!(
            resolve("file:/data/t/a%20b.parquet", &r).unwrap(),
            FileLocation::Table(StorePath::parse("a b.parquet").unwrap())
        );
        assert_eq!(canonical_path("a/b.parquet", &r), "a/b.parquet");
    }

    #[test]
    fn partition_directories_decode_once() {
        let r = root();
        let loc = resolve("region=US%252FEast/part-0.parquet", &r).unwrap();
        assert_eq!(loc.as_str(), "region=US%2FEast/part-0.parquet");
        assert_eq!(
            encode_path("region=US%2FEast/p 1.parquet"),
            "region=US%252FEast/p%201.parquet"
        );
    }

    #[test]
    fn escaping_paths_are_refused_and_external_ones_kept() {
        let r = root();
        assert!(resolve("../outside.parquet", &r).is_err());
        assert!(resolve("a/%2E%2E/%2E%2E/x", &r).is_err());
        assert_eq!(
            resolve("s3://bucket/x.parquet", &r).unwrap(),
            FileLocation::External("s3://bucket/x.parquet".into())
        );
        assert_eq!(
            resolve("/elsewhere/x", &r).unwrap(),
            FileLocation::External("file:///elsewhere/x".into())
        );
        assert!(!is_absolute("x=a:b/part.parquet"));
        // Another host's file is no local file: kept as written.
        assert_eq!(
            resolve("file://otherhost/x", &r).unwrap(),
            FileLocation::External("file://otherhost/x".into())
        );
    }

    #[test]
    fn plain_paths_resolve_borrowed_and_the_rest_as_before() {
        let r = root();
        // Plain relative paths are borrowed: the location's text is the action's.
        for raw in [
            "part-0.parquet",
            "x=1/y=a b/part-0.parquet",
            "deep/er/p.parquet",
        ] {
            let loc = resolve_ref(raw, &r).unwrap();
            assert!(matches!(loc, FileLocationRef::Table(_)), "{raw}");
            assert_eq!(loc.as_str().as_ptr(), raw.as_ptr(), "{raw} was copied");
        }
        // The other forms: decoded, re-rooted or external, each built anew.
        for (raw, table, text) in [
            (
                "region=US%252FEast/part-0.parquet",
                true,
                "region=US%2FEast/part-0.parquet",
            ),
            ("file:///data/t/a/b.parquet", true, "a/b.parquet"),
            ("file:/data/t/a%20b.parquet", true, "a b.parquet"),
            ("/elsewhere/x", false, "file:///elsewhere/x"),
            ("s3://bucket/x.parquet", false, "s3://bucket/x.parquet"),
            ("file://otherhost/x", false, "file://otherhost/x"),
        ] {
            let loc = resolve_ref(raw, &r).unwrap();
            assert_eq!(matches!(loc, FileLocationRef::Table(_)), table, "{raw}");
            assert_eq!(loc.as_str(), text, "{raw}");
        }
        // Paths that escape the root or do not decode are refused, borrowed or not.
        for raw in [
            "../outside.parquet",
            "a/%2E%2E/%2E%2E/x",
            "a//b",
            "",
            "a/./b",
            "%FF",
        ] {
            assert!(resolve_ref(raw, &r).is_err(), "{raw}");
        }
    }
}
