//! Table locations given as URIs: which are remote, how a remote one splits into bucket and
//! key prefix (feature `object-store`; parsed with the `url` crate, and the checks around it
//! keep what it would silently normalise, dot segments, an error), and what a `file://`
//! location names.

use crate::options::REMOTE_SCHEMES;
#[cfg(feature = "object-store")]
use crate::{Result, StorageError, StorePath};

/// The scheme of `location` (as written) if it is an object-store URI (`s3://bucket/prefix`,
/// ...): one of [`REMOTE_SCHEMES`], in any case, followed by `://` and something more.
///
/// Only the scheme is looked at, so that a malformed remote URI still goes to the remote
/// backend, whose parse says what is wrong with it.
pub fn remote_scheme(location: &str) -> Option<&str> {
    let (scheme, rest) = location.split_once("://")?;
    (!rest.is_empty() && REMOTE_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()))
        .then_some(scheme)
}

/// What a location names on the local filesystem, as [`local_ref`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalRef<'a> {
    /// An absolute path, starting with exactly one `/`.
    Absolute(&'a str),
    /// A path relative to the working directory (no scheme, no leading `/`).
    Relative(&'a str),
}

impl<'a> LocalRef<'a> {
    /// The path, absolute or relative, as a slice of the location.
    pub fn as_str(self) -> &'a str {
        match self {
            LocalRef::Absolute(p) | LocalRef::Relative(p) => p,
        }
    }

    /// The path if it is absolute.
    pub fn absolute(self) -> Option<&'a str> {
        match self {
            LocalRef::Absolute(p) => Some(p),
            LocalRef::Relative(_) => None,
        }
    }
}

/// The one rule for reading a location (a table root, an external file URI) as a local path:
///
/// * `file:///a`, `file://localhost/a` and `file:/a` name the absolute path `/a` (scheme
///   and host in any case);
/// * `/a` is that absolute path, `a` (anything else without `://`, `a:b` too) a relative one;
/// * `file://otherhost/a`, `file:a` (a `file:` URI with no absolute path), an empty `file:`
///   URI and any other `scheme://` are `None`: not a local file.
///
/// Runs of leading `/` (`file:////a`, `//a`) collapse to one, so every spelling of a path
/// gives one text. The path is taken as written, not percent-decoded: a local store's
/// `ObjectStore::root_uri` is `file://` and the path unencoded (the CLI prints it), so a
/// location read back from a table opens the same table; callers holding an encoded form
/// (an action path) decode it first.
pub fn local_ref(location: &str) -> Option<LocalRef<'_>> {
    let file_uri = location
        .get(..5)
        .filter(|scheme| scheme.eq_ignore_ascii_case("file:"))
        .map(|_| &location[5..]);
    if let Some(after) = file_uri {
        let path = match after.strip_prefix("//") {
            Some(host_path) => {
                let (host, path) =
                    host_path.split_at(host_path.find('/').unwrap_or(host_path.len()));
                if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                    return None;
                }
                path
            }
            None => after,
        };
        return path
            .starts_with('/')
            .then(|| LocalRef::Absolute(one_leading_slash(path)));
    }
    if location.contains("://") {
        return None;
    }
    Some(if location.starts_with('/') {
        LocalRef::Absolute(one_leading_slash(location))
    } else {
        LocalRef::Relative(location)
    })
}

/// `path` (which starts with `/`) from its last leading `/` on.
fn one_leading_slash(path: &str) -> &str {
    let slashes = path.len() - path.trim_start_matches('/').len();
    &path[slashes.saturating_sub(1)..]
}

/// The local path a table location names, absolute or relative, by [`local_ref`]; `None`
/// if it names no local file (another scheme, a `file:` URI of another host).
pub fn local_path(location: &str) -> Option<&str> {
    local_ref(location).map(LocalRef::as_str)
}

/// The absolute filesystem path of an external file reference (a `file:` URI or an absolute
/// path) by [`local_ref`]; `None` for a relative path or a URI that names no local file.
pub(crate) fn external_path(uri: &str) -> Option<std::path::PathBuf> {
    local_ref(uri)?.absolute().map(std::path::PathBuf::from)
}

/// Splits `scheme://authority/path` as written (no decoding, no normalisation) into
/// `scheme://authority` and `/path` (empty if there is none); `None` without `://`.
pub(crate) fn split_authority(uri: &str) -> Option<(&str, &str)> {
    let after = uri.find("://")? + 3;
    let path_start = uri[after..].find('/').map_or(uri.len(), |j| after + j);
    Some((&uri[..path_start], &uri[path_start..]))
}

/// Whether a path segment, as written, is `.` or `..` (also percent-encoded), which URI
/// parsing would resolve away instead of refusing.
#[cfg(feature = "object-store")]
fn is_dot_segment(segment: &str) -> bool {
    let s = segment.to_ascii_lowercase().replace("%2e", ".");
    s == "." || s == ".."
}

/// Splits a remote table location `scheme://authority/path` into `scheme://authority`
/// (scheme in lower case) and the percent-decoded key prefix, without leading or trailing
/// `/` (empty for a table at the bucket root).
///
/// # Errors
/// [`StorageError::InvalidConfig`] naming the location if it is not a URI, has no bucket,
/// a query or fragment, a path that is not UTF-8 after decoding, or a path that is not a
/// valid relative store path (`.`/`..` segments, empty segments inside).
#[cfg(feature = "object-store")]
pub(crate) fn bucket_and_prefix(uri: &str) -> Result<(String, String)> {
    let bad = |why: &str| StorageError::InvalidConfig(format!("table location {uri}: {why}"));
    let url = url::Url::parse(uri).map_err(|e| bad(&format!("not a URI ({e})")))?;
    let authority = url.authority();
    if authority.is_empty() {
        return Err(bad("no bucket"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("a table location has no query or fragment"));
    }
    // `url` resolves `.` and `..` segments; a table location naming another place than it
    // spells is refused instead.
    let written = split_authority(uri).map_or("", |(_, path)| path);
    if written.split('/').any(is_dot_segment) {
        return Err(bad(&format!(
            "invalid path {:?}: dot segments",
            written.trim_matches('/')
        )));
    }
    let path = percent_encoding::percent_decode_str(url.path())
        .decode_utf8()
        .map_err(|_| bad("the path is not UTF-8 after percent-decoding"))?;
    let prefix = path.trim_matches('/').to_string();
    if !prefix.is_empty() {
        StorePath::parse(prefix.clone()).map_err(|e| bad(&e.to_string()))?;
    }
    Ok((format!("{}://{authority}", url.scheme()), prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_schemes() {
        assert_eq!(remote_scheme("s3://b/p"), Some("s3"));
        assert_eq!(remote_scheme("S3A://b"), Some("S3A"));
        assert_eq!(remote_scheme("gs://b/x/y"), Some("gs"));
        assert_eq!(
            remote_scheme("abfss://c@a.dfs.core.windows.net/t"),
            Some("abfss")
        );
        assert_eq!(remote_scheme("s3://"), None);
        assert_eq!(remote_scheme("s3:/b/p"), None);
        assert_eq!(remote_scheme("file:///tmp/t"), None);
        assert_eq!(remote_scheme("/tmp/t"), None);
        assert_eq!(remote_scheme("s3"), None);
        // Malformed, but remote: the backend reports what is wrong.
        assert_eq!(remote_scheme("s3://b c/t"), Some("s3"));
    }

    #[test]
    fn every_spelling_of_a_local_location_follows_one_rule() {
        use LocalRef::{Absolute, Relative};
        let table: &[(&str, Option<LocalRef<'_>>)] = &[
            ("file:///a", Some(Absolute("/a"))),
            ("file:///a/b/", Some(Absolute("/a/b/"))),
            ("file://localhost/a", Some(Absolute("/a"))),
            ("FILE://LocalHost/a", Some(Absolute("/a"))),
            ("file:/a", Some(Absolute("/a"))),
            ("file:////a", Some(Absolute("/a"))),
            ("file:///", Some(Absolute("/"))),
            ("/a", Some(Absolute("/a"))),
            ("//a/b", Some(Absolute("/a/b"))),
            ("rel/t", Some(Relative("rel/t"))),
            ("a:b", Some(Relative("a:b"))),
            ("", Some(Relative(""))),
            // As written: no percent-decoding, no fragment.
            ("file:///tmp/my%20t", Some(Absolute("/tmp/my%20t"))),
            ("/tmp/my%20t", Some(Absolute("/tmp/my%20t"))),
            ("file:///tmp/a#b", Some(Absolute("/tmp/a#b"))),
            // Windows-style drive paths are plain paths here (the engine runs on POSIX).
            ("file:///C:/a", Some(Absolute("/C:/a"))),
            (r"C:\a", Some(Relative(r"C:\a"))),
            // Not a local file.
            ("file://otherhost/a", None),
            ("file://localhost.example/a", None),
            ("file://localhost", None),
            ("file://", None),
            ("file:", None),
            ("file:relative", None),
            ("hdfs://nn/t", None),
            ("s3://b/t", None),
        ];
        for (location, expected) in table {
            assert_eq!(local_ref(location), *expected, "{location}");
            assert_eq!(
                local_path(location),
                expected.map(LocalRef::as_str),
                "{location}"
            );
        }
    }

    #[test]
    fn external_references_are_absolute_local_paths() {
        use std::path::PathBuf;
        assert_eq!(external_path("file:///a/b"), Some(PathBuf::from("/a/b")));
        assert_eq!(external_path("file:/a/b"), Some(PathBuf::from("/a/b")));
        assert_eq!(
            external_path("file://localhost/a/b"),
            Some(PathBuf::from("/a/b"))
        );
        assert_eq!(external_path("/a/b"), Some(PathBuf::from("/a/b")));
        assert_eq!(external_path("s3://bucket/a"), None);
        assert_eq!(external_path("file:relative"), None);
        assert_eq!(external_path("file://otherhost/a"), None);
        assert_eq!(external_path("relative"), None);
    }

    #[test]
    fn authorities_split_as_written() {
        assert_eq!(
            split_authority("s3://b/a/../k"),
            Some(("s3://b", "/a/../k"))
        );
        assert_eq!(split_authority("memory://"), Some(("memory://", "")));
        assert_eq!(split_authority("file:///x"), Some(("file://", "/x")));
        assert_eq!(split_authority("/x"), None);
    }

    #[cfg(feature = "object-store")]
    #[test]
    fn uris_split_into_bucket_and_prefix() {
        let split = |u: &str| bucket_and_prefix(u).unwrap();
        assert_eq!(split("s3://b/a/t"), ("s3://b".into(), "a/t".into()));
        assert_eq!(split("s3://b"), ("s3://b".into(), String::new()));
        assert_eq!(
            split("gs://b/my%20table/"),
            ("gs://b".into(), "my table".into())
        );
        assert_eq!(
            split("gs://b/my table"),
            ("gs://b".into(), "my table".into())
        );
        assert_eq!(split("S3://b/x"), ("s3://b".into(), "x".into()));
        assert_eq!(
            split("abfss://c@a.dfs.core.windows.net/t"),
            ("abfss://c@a.dfs.core.windows.net".into(), "t".into())
        );
        for bad in [
            "s3:///x",
            "s3://b/a/../x",
            "s3://b/a/%2E%2e/x",
            "s3://b/./x",
            "s3://b/a//x",
            "s3://b/t?x=1",
            "s3://b/t#f",
            "s3://b/%FF",
            "s3://b c/t",
            "not a uri",
        ] {
            assert!(
                matches!(bucket_and_prefix(bad), Err(StorageError::InvalidConfig(_))),
                "{bad}"
            );
        }
    }
}
