//! How a remote (object-store) table location is configured: which URIs are remote, and the
//! options of [`crate::RemoteStore`] (compiled with or without the `object-store` feature, so
//! that callers can parse them and report a missing feature cleanly).

use std::collections::BTreeMap;

use crate::{Result, StorageError};

/// URI schemes served by the remote backend: S3 (`s3`, `s3a`), Google Cloud Storage (`gs`)
/// and Azure Blob Storage / ADLS Gen2 (`az`, `azure`, `abfs`, `abfss`).
pub const REMOTE_SCHEMES: &[&str] = &["s3", "s3a", "gs", "az", "azure", "abfs", "abfss"];

/// The scheme of `location` if it is an object-store URI (`s3://bucket/prefix`, ...).
pub fn remote_scheme(location: &str) -> Option<&str> {
    let (scheme, rest) = location.split_once("://")?;
    (!rest.is_empty() && REMOTE_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()))
        .then_some(scheme)
}

/// Whether the store gives put-if-absent (mutual exclusion of conditional creates).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PutIfAbsentSupport {
    /// Find out when a writer first needs to know: create a scratch object twice with
    /// put-if-absent, expect the second create to be refused and the first body to remain,
    /// then delete it. The answer is remembered for the store's lifetime.
    #[default]
    Probe,
    /// Known to be supported (AWS S3 since 2024, R2, MinIO, GCS, Azure): no probe.
    Supported,
    /// Known to be unsupported: writes are refused unless the store is in single-writer
    /// mode.
    Unsupported,
}

/// Options of a remote store.
///
/// `config` holds the `object_store` crate's configuration keys (for S3 `aws_endpoint`,
/// `aws_access_key_id`, `aws_secret_access_key`, `aws_region`, `aws_allow_http`, ...; for
/// GCS `google_*`; for Azure `azure_*`), applied over what the environment gives (`AWS_*`,
/// `GOOGLE_*`, `AZURE_*` variables), so explicit options win.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteOptions {
    /// `object_store` configuration keys and values.
    pub config: BTreeMap<String, String>,
    /// Whether the store gives put-if-absent, or how to find out.
    pub put_if_absent: PutIfAbsentSupport,
    /// Single-writer mode: the user promises that at most one writer uses the table at a
    /// time, so writes go ahead on a store without put-if-absent (a create is then a
    /// check followed by a write).
    pub single_writer: bool,
    /// Most requests one batch call (reads of many commits, bulk deletes) keeps in flight.
    pub concurrency: usize,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            config: BTreeMap::new(),
            put_if_absent: PutIfAbsentSupport::Probe,
            single_writer: false,
            concurrency: 32,
        }
    }
}

fn parse_bool(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(StorageError::InvalidConfig(format!(
            "{key}={value}: expected true or false"
        ))),
    }
}

impl RemoteOptions {
    /// Options from `key=value` pairs: alluvium's own keys (below) are taken out, every other
    /// key goes to `config` unchanged (unknown keys are reported when the store is opened).
    ///
    /// * `put_if_absent`: `probe` (default), `true`/`supported` or `false`/`unsupported`;
    /// * `single_writer`: `true` or `false` (default);
    /// * `concurrency`: requests in flight per batch call (default 32).
    ///
    /// # Errors
    /// [`StorageError::InvalidConfig`] for a bad value of one of alluvium's keys.
    pub fn from_pairs<I, K, V>(pairs: I) -> Result<Self>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let mut options = RemoteOptions::default();
        for (k, v) in pairs {
            options.set(k.into(), v.into())?;
        }
        Ok(options)
    }

    /// Sets one option (see [`from_pairs`](Self::from_pairs)).
    ///
    /// # Errors
    /// As [`from_pairs`](Self::from_pairs).
    pub fn set(&mut self, key: String, value: String) -> Result<()> {
        match key.trim().to_ascii_lowercase().as_str() {
            "put_if_absent" => {
                self.put_if_absent = match value.trim().to_ascii_lowercase().as_str() {
                    "probe" => PutIfAbsentSupport::Probe,
                    "true" | "supported" => PutIfAbsentSupport::Supported,
                    "false" | "unsupported" => PutIfAbsentSupport::Unsupported,
                    _ => {
                        return Err(StorageError::InvalidConfig(format!(
                            "put_if_absent={value}: expected probe, true or false"
                        )));
                    }
                };
            }
            "single_writer" => self.single_writer = parse_bool(&key, &value)?,
            "concurrency" => {
                self.concurrency = value
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        StorageError::InvalidConfig(format!(
                            "concurrency={value}: expected a positive integer"
                        ))
                    })?;
            }
            _ => {
                self.config.insert(key, value);
            }
        }
        Ok(())
    }
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
        assert_eq!(remote_scheme("file:///tmp/t"), None);
        assert_eq!(remote_scheme("/tmp/t"), None);
    }

    #[test]
    fn options_split_into_ours_and_the_crates() {
        let o = RemoteOptions::from_pairs([
            ("aws_endpoint", "http://127.0.0.1:9000"),
            ("put_if_absent", "true"),
            ("single_writer", "yes"),
            ("concurrency", "8"),
        ])
        .unwrap();
        assert_eq!(o.put_if_absent, PutIfAbsentSupport::Supported);
        assert!(o.single_writer);
        assert_eq!(o.concurrency, 8);
        assert_eq!(o.config.len(), 1);
        assert!(RemoteOptions::from_pairs([("put_if_absent", "maybe")]).is_err());
        assert!(RemoteOptions::from_pairs([("concurrency", "0")]).is_err());
        assert!(RemoteOptions::from_pairs([("single_writer", "perhaps")]).is_err());
    }
}
