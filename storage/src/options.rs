//! How a table's storage is configured ([`StorageOptions`]) and which URI schemes are remote.
//!
//! The options are compiled with or without the `object-store` feature, so that callers can
//! parse them and report a missing feature cleanly. Nothing here reads the environment:
//! the only environment reading below the CLI is the `object_store` crate's own (its
//! builders start from the `AWS_*`, `GOOGLE_*` and `AZURE_*` variables, the providers'
//! credential chains), and explicit options win over it.

use std::collections::BTreeMap;
use std::fmt;

use crate::{Result, StorageError};

/// URI schemes served by the remote backend: S3 (`s3`, `s3a`), Google Cloud Storage (`gs`)
/// and Azure Blob Storage / ADLS Gen2 (`az`, `azure`, `abfs`, `abfss`).
pub const REMOTE_SCHEMES: &[&str] = &["s3", "s3a", "gs", "az", "azure", "abfs", "abfss"];

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

/// How a table's store is opened: alluvium's own settings as typed fields, plus the
/// `object_store` crate's configuration keys for remote stores.
///
/// Build one with [`StorageOptions::default`] and the `with_*` methods, or parse `key=value`
/// pairs with [`from_pairs`](Self::from_pairs) (the text form the CLI accepts).
///
/// `config` holds the `object_store` crate's configuration keys (for S3 `aws_endpoint`,
/// `aws_access_key_id`, `aws_secret_access_key`, `aws_region`, `aws_allow_http`, ...; for
/// GCS `google_*`; for Azure `azure_*`), applied over what the crate's builders take from
/// the environment (`AWS_*`, `GOOGLE_*`, `AZURE_*` variables), so explicit options win.
#[derive(Clone)]
#[non_exhaustive]
pub struct StorageOptions {
    /// `object_store` configuration keys and values (remote stores only).
    pub config: BTreeMap<String, String>,
    /// Whether the store gives put-if-absent, or how to find out (remote stores only).
    pub put_if_absent: PutIfAbsentSupport,
    /// Single-writer mode: the user promises that at most one writer uses the table at a
    /// time, so writes go ahead on a store without put-if-absent (a create is then a
    /// check followed by a write). Remote stores only: a local store has put-if-absent.
    pub single_writer: bool,
    /// Most requests one batch call (reads of many commits, bulk deletes) keeps in flight
    /// (remote stores only).
    pub concurrency: usize,
    /// Whether a local store fsyncs what it writes (default `true`). Without fsync a power
    /// loss may lose acknowledged commits; a process crash cannot. Objects in a remote
    /// store are durable once written, so remote stores ignore it.
    pub fsync: bool,
    /// The tokio runtime remote requests run on: the embedder's own (it must be a
    /// multi-thread runtime). `None` (the default): the store starts and owns a small
    /// runtime of its own.
    #[cfg(feature = "object-store")]
    pub runtime: Option<tokio::runtime::Handle>,
}

impl Default for StorageOptions {
    fn default() -> Self {
        StorageOptions {
            config: BTreeMap::new(),
            put_if_absent: PutIfAbsentSupport::Probe,
            single_writer: false,
            concurrency: 32,
            fsync: true,
            #[cfg(feature = "object-store")]
            runtime: None,
        }
    }
}

impl fmt::Debug for StorageOptions {
    /// Configuration values are not shown: they may hold credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("StorageOptions");
        d.field("config_keys", &self.config.keys().collect::<Vec<_>>())
            .field("put_if_absent", &self.put_if_absent)
            .field("single_writer", &self.single_writer)
            .field("concurrency", &self.concurrency)
            .field("fsync", &self.fsync);
        #[cfg(feature = "object-store")]
        d.field("runtime", &self.runtime.is_some());
        d.finish()
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

impl StorageOptions {
    /// Sets whether the store gives put-if-absent, or how to find out.
    pub fn with_put_if_absent(mut self, support: PutIfAbsentSupport) -> Self {
        self.put_if_absent = support;
        self
    }

    /// Sets single-writer mode (see [`single_writer`](Self::single_writer)).
    pub fn with_single_writer(mut self, single_writer: bool) -> Self {
        self.single_writer = single_writer;
        self
    }

    /// Sets the most requests in flight per batch call (at least 1 is used).
    pub fn with_concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency;
        self
    }

    /// Sets whether a local store fsyncs what it writes.
    pub fn with_fsync(mut self, fsync: bool) -> Self {
        self.fsync = fsync;
        self
    }

    /// Sets one `object_store` configuration key (e.g. `aws_region`), checked when the
    /// store is opened.
    pub fn with_config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.config.insert(key.into(), value.into());
        self
    }

    /// Runs remote requests on the embedder's tokio runtime instead of one the store owns.
    /// The handle must be of a multi-thread runtime (opening refuses a current-thread one,
    /// which nothing would drive while a caller blocks).
    #[cfg(feature = "object-store")]
    pub fn with_runtime(mut self, handle: tokio::runtime::Handle) -> Self {
        self.runtime = Some(handle);
        self
    }

    /// Options from `key=value` pairs: alluvium's own keys (below) are taken out, every other
    /// key goes to `config` unchanged (unknown keys are reported when the store is opened).
    ///
    /// * `put_if_absent`: `probe` (default), `true`/`supported` or `false`/`unsupported`;
    /// * `single_writer`: `true` or `false` (default);
    /// * `concurrency`: requests in flight per batch call (default 32);
    /// * `fsync`: `true` (default) or `false`, for local stores.
    ///
    /// # Errors
    /// [`StorageError::InvalidConfig`] for a bad value of one of alluvium's keys.
    pub fn from_pairs<I, K, V>(pairs: I) -> Result<Self>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let mut options = StorageOptions::default();
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
            "fsync" => self.fsync = parse_bool(&key, &value)?,
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
    fn options_split_into_ours_and_the_crates() {
        let o = StorageOptions::from_pairs([
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
        assert!(StorageOptions::from_pairs([("put_if_absent", "maybe")]).is_err());
        assert!(StorageOptions::from_pairs([("concurrency", "0")]).is_err());
        assert!(StorageOptions::from_pairs([("single_writer", "perhaps")]).is_err());
        assert!(
            !StorageOptions::from_pairs([("fsync", "off")])
                .unwrap()
                .fsync
        );
        assert!(StorageOptions::from_pairs([("fsync", "sometimes")]).is_err());
    }

    #[test]
    fn options_build_with_typed_setters() {
        let o = StorageOptions::default()
            .with_single_writer(true)
            .with_put_if_absent(PutIfAbsentSupport::Unsupported)
            .with_concurrency(4)
            .with_fsync(false)
            .with_config("aws_region", "eu-west-1");
        assert!(o.single_writer && !o.fsync);
        assert_eq!(o.put_if_absent, PutIfAbsentSupport::Unsupported);
        assert_eq!(o.concurrency, 4);
        assert_eq!(
            o.config.get("aws_region").map(String::as_str),
            Some("eu-west-1")
        );
        // Credentials never reach a log line through `Debug`.
        let shown = format!("{:?}", o.with_config("aws_secret_access_key", "hunter2"));
        assert!(shown.contains("aws_secret_access_key") && !shown.contains("hunter2"));
    }
}
