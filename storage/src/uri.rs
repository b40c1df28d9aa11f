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

/// The local path a table location names: the location itself, or what follows `file://`.
/// `None` for a URI of any other scheme (anything else with `://`).
///
/// The path after `file://` is taken as written, not percent-decoded: it is the form
/// `ObjectStore::root_uri` of a local store gives (and the CLI prints), so a location
/// read back from a table opens the same table.
pub fn local_path(location: &str) -> Option<&str> {
    if let Some(rest) = location.strip_prefix("file://") {
        return Some(rest);
    }
    (!location.contains("://")).then_some(location)
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
    fn local_locations_are_taken_as_written() {
        assert_eq!(local_path("/tmp/t"), Some("/tmp/t"));
        assert_eq!(local_path("rel/t"), Some("rel/t"));
        assert_eq!(local_path("file:///tmp/my%20t"), Some("/tmp/my%20t"));
        assert_eq!(local_path("file:///tmp/a#b"), Some("/tmp/a#b"));
        assert_eq!(local_path("hdfs://nn/t"), None);
        assert_eq!(local_path("s3://b/t"), None);
        assert_eq!(local_path("a:b"), Some("a:b"));
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
