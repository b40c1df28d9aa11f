//! Tables on object stores: `s3://bucket/prefix` (and `gs://`, `az://`), through the
//! `object_store` crate.
//!
//! This module owns the mapping of the storage contract (SPEC.md §2) onto an object store:
//! * table-relative paths become keys under the URI's prefix, unchanged (no re-encoding, so
//!   other engines find the same keys);
//! * put-if-absent is a conditional create (`PutMode::Create`, `If-None-Match: *` on S3).
//!   Whether the store honours it is configured or probed once ([`PutIfAbsentSupport`]);
//!   without it the store creates by check-then-write, and only in single-writer mode;
//! * listings are paginated `LIST` requests with a `/` delimiter and a start-after key, so
//!   listing the log from a version costs in proportion to what it returns;
//! * batch reads and deletes run concurrently, at most `concurrency` requests at a time;
//! * every HTTP request is counted by kind (retries included) for the operation reports.
//!
//! The rest of alluvium is synchronous. The store blocks on a tokio runtime, its own or the
//! embedder's ([`StorageOptions::runtime`]); any thread may call it, concurrently, and no
//! request spawns a thread (the bridge's rules are in `blocking.rs`).
//!
//! An `AlreadyExists` from a conditional create is not proof that another writer won: the
//! crate retries some failures, and a retry of a create that had landed is refused too.
//! Callers that must know (the commit loop) read the object back (SPEC.md §7).

use std::fmt;
use std::future::Future;
use std::io;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::StreamExt;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpRequest, HttpResponse, HttpService, ReqwestConnector,
};
use object_store::list::{PaginatedListOptions, PaginatedListStore};
use object_store::path::Path;
use object_store::{ClientOptions, ObjectStoreExt, PutMode, PutOptions, PutPayload};

use crate::blocking::Bridge;
use crate::counts::{RequestCounters, RequestKind};
use crate::uri::bucket_and_prefix;
use crate::{
    ObjectMeta, ObjectStore, PutIfAbsentSupport, RequestCounts, Result, StorageError,
    StorageOptions, StorePath,
};

/// Objects per bulk delete request (the S3 limit).
const DELETE_CHUNK: usize = 1000;

/// What one client shares between the stores made from it ([`RemoteStore::at`]).
struct Client {
    store: Arc<dyn object_store::ObjectStore>,
    lister: Arc<dyn PaginatedListStore>,
    runtime: Bridge,
    counters: Arc<RequestCounters>,
}

/// A table in an object store (S3 and S3-compatible servers, GCS, Azure).
///
/// Open with [`RemoteStore::open`]; see the module docs for how the storage contract maps
/// onto the store.
pub struct RemoteStore {
    client: Arc<Client>,
    /// The location as given, without a trailing `/` (for messages and `root_uri`).
    uri: String,
    /// `scheme://authority`, for recognising absolute URIs inside this bucket.
    bucket_uri: String,
    /// The key prefix of the table inside the bucket, without leading or trailing `/`
    /// (empty for a table at the bucket root).
    prefix: String,
    put_if_absent: PutIfAbsentSupport,
    probed: OnceLock<bool>,
    single_writer: bool,
    concurrency: usize,
}

impl fmt::Debug for RemoteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteStore")
            .field("uri", &self.uri)
            .field("put_if_absent", &self.put_if_absent)
            .field("single_writer", &self.single_writer)
            .finish_non_exhaustive()
    }
}

/// Counts each HTTP request by kind, then sends it with the crate's reqwest client.
#[derive(Debug)]
struct CountingConnector {
    counters: Arc<RequestCounters>,
}

impl HttpConnector for CountingConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(CountingService {
            inner,
            counters: self.counters.clone(),
        }))
    }
}

#[derive(Debug)]
struct CountingService {
    inner: HttpClient,
    counters: Arc<RequestCounters>,
}

/// The kind of an HTTP request of the S3, GCS (XML) and Azure APIs.
fn request_kind(method: &str, query: Option<&str>) -> RequestKind {
    let has = |name: &str| {
        query.is_some_and(|q| {
            q.split('&')
                .any(|kv| kv == name || kv.split_once('=').is_some_and(|(k, _)| k == name))
        })
    };
    match method {
        "GET" if has("list-type") || query.is_some_and(|q| q.contains("comp=list")) => {
            RequestKind::List
        }
        "GET" => RequestKind::Get,
        "HEAD" => RequestKind::Head,
        "PUT" => RequestKind::Put,
        "DELETE" => RequestKind::Delete,
        // S3 bulk delete is `POST /?delete`; other POSTs start or complete multipart uploads.
        "POST" if has("delete") => RequestKind::Delete,
        "POST" => RequestKind::Put,
        _ => RequestKind::Other,
    }
}

#[async_trait]
impl HttpService for CountingService {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        self.counters
            .record(request_kind(req.method().as_str(), req.uri().query()), 1);
        self.inner.execute(req).await
    }
}

/// Maps a crate error to the storage error of `op` on `shown` (the object's URI).
fn map_err(op: &'static str, shown: &str, e: object_store::Error) -> StorageError {
    use object_store::Error as E;
    match e {
        E::NotFound { .. } => StorageError::NotFound {
            path: shown.to_string(),
        },
        E::AlreadyExists { .. } => StorageError::AlreadyExists {
            path: shown.to_string(),
        },
        E::NotImplemented { .. } | E::NotSupported { .. } => StorageError::Unsupported {
            op,
            reason: format!("{shown}: {e}"),
        },
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => StorageError::io(
            op,
            shown,
            io::Error::new(io::ErrorKind::PermissionDenied, e),
        ),
        other => StorageError::io(op, shown, io::Error::other(other)),
    }
}

fn to_meta(rel: &str, meta: &object_store::ObjectMeta) -> Option<ObjectMeta> {
    Some(ObjectMeta {
        path: StorePath::parse(rel).ok()?,
        size: meta.size,
        last_modified_ms: meta.last_modified.timestamp_millis(),
    })
}

/// Reads one whole object.
async fn fetch(
    store: Arc<dyn object_store::ObjectStore>,
    path: Result<Path>,
    shown: String,
) -> Result<Bytes> {
    let path = path?;
    let r = match store.get(&path).await {
        Ok(r) => r.bytes().await,
        Err(e) => Err(e),
    };
    r.map_err(|e| map_err("read", &shown, e))
}

/// Deletes up to [`DELETE_CHUNK`] objects with one bulk request (where the store has one);
/// one result per object, in order. Missing objects count as deleted.
async fn delete_chunk(
    store: Arc<dyn object_store::ObjectStore>,
    chunk: Vec<(Result<Path>, String)>,
) -> Vec<Result<()>> {
    let valid: Vec<Path> = chunk
        .iter()
        .filter_map(|(p, _)| p.as_ref().ok().cloned())
        .collect();
    let expected = valid.len();
    let results: Vec<object_store::Result<Path>> = store
        .delete_stream(futures_util::stream::iter(valid.into_iter().map(Ok)).boxed())
        .collect()
        .await;
    // One result per object, unless the whole request failed: then that error for all.
    let request_error = (results.len() != expected).then(|| {
        results
            .iter()
            .find_map(|r| r.as_ref().err().map(ToString::to_string))
            .unwrap_or_else(|| "bulk delete failed".into())
    });
    let mut results = results.into_iter();
    chunk
        .into_iter()
        .map(|(path, shown)| match (path, &request_error) {
            (Err(e), _) => Err(e),
            (Ok(_), Some(msg)) => Err(StorageError::io(
                "delete",
                shown,
                io::Error::other(msg.clone()),
            )),
            (Ok(_), None) => match results.next() {
                Some(Ok(_)) | Some(Err(object_store::Error::NotFound { .. })) => Ok(()),
                Some(Err(e)) => Err(map_err("delete", &shown, e)),
                None => Err(StorageError::io(
                    "delete",
                    shown,
                    io::Error::other("no result for this object"),
                )),
            },
        })
        .collect()
}

impl RemoteStore {
    /// One copy of `error` for each of `paths` (a batch that could not run at all).
    fn fail_all<T>(
        &self,
        op: &'static str,
        paths: &[StorePath],
        error: &StorageError,
    ) -> Vec<Result<T>> {
        let msg = error.to_string();
        paths
            .iter()
            .map(|p| {
                Err(StorageError::io(
                    op,
                    self.shown(p.as_str()),
                    io::Error::other(msg.clone()),
                ))
            })
            .collect()
    }

    /// Opens the table at `uri` (`s3://bucket/prefix`, `s3a://`, `gs://bucket/prefix`,
    /// `az://container/prefix`, `abfss://container@account.dfs.core.windows.net/prefix`).
    ///
    /// Configuration comes from the environment, read by the `object_store` crate's
    /// builders (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_REGION`, `AWS_ALLOW_HTTP`, ...; `GOOGLE_*`, `AZURE_*`: the providers' usual
    /// chains), then from `options.config`, which wins. Requests run on
    /// `options.runtime` if given, else on a runtime the store starts. Opening sends no
    /// request.
    ///
    /// # Errors
    /// [`StorageError::InvalidConfig`] for an unknown scheme, a malformed URI, a bad
    /// configuration key or value, or a current-thread runtime handle;
    /// [`StorageError::Io`] if the store's own runtime cannot start.
    pub fn open(uri: &str, options: &StorageOptions) -> Result<RemoteStore> {
        let uri = uri.trim_end_matches('/').to_string();
        let (bucket_uri, prefix) = bucket_and_prefix(&uri)?;
        let scheme = bucket_uri
            .split_once("://")
            .map(|(s, _)| s.to_ascii_lowercase())
            .unwrap_or_default();
        let counters = Arc::new(RequestCounters::default());
        let connector = CountingConnector {
            counters: counters.clone(),
        };
        let config_err =
            |e: object_store::Error| StorageError::InvalidConfig(format!("{uri}: {e}"));
        let (store, lister): (
            Arc<dyn object_store::ObjectStore>,
            Arc<dyn PaginatedListStore>,
        ) = match scheme.as_str() {
            "s3" | "s3a" => {
                let mut b = object_store::aws::AmazonS3Builder::from_env().with_url(&bucket_uri);
                for (k, v) in &options.config {
                    b = b.with_config(k.to_ascii_lowercase().parse().map_err(config_err)?, v);
                }
                let s = Arc::new(
                    b.with_http_connector(connector)
                        .build()
                        .map_err(config_err)?,
                );
                (s.clone(), s)
            }
            "gs" => {
                let mut b =
                    object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(&bucket_uri);
                for (k, v) in &options.config {
                    b = b.with_config(k.to_ascii_lowercase().parse().map_err(config_err)?, v);
                }
                let s = Arc::new(
                    b.with_http_connector(connector)
                        .build()
                        .map_err(config_err)?,
                );
                (s.clone(), s)
            }
            "az" | "azure" | "abfs" | "abfss" => {
                let mut b =
                    object_store::azure::MicrosoftAzureBuilder::from_env().with_url(&bucket_uri);
                for (k, v) in &options.config {
                    b = b.with_config(k.to_ascii_lowercase().parse().map_err(config_err)?, v);
                }
                let s = Arc::new(
                    b.with_http_connector(connector)
                        .build()
                        .map_err(config_err)?,
                );
                (s.clone(), s)
            }
            other => {
                return Err(StorageError::InvalidConfig(format!(
                    "{uri}: unsupported scheme {other}://"
                )));
            }
        };
        let runtime = Bridge::new(options.runtime.clone(), &uri)?;
        Ok(RemoteStore {
            client: Arc::new(Client {
                store,
                lister,
                runtime,
                counters,
            }),
            uri,
            bucket_uri,
            prefix,
            put_if_absent: options.put_if_absent,
            probed: OnceLock::new(),
            single_writer: options.single_writer,
            concurrency: options.concurrency.max(1),
        })
    }

    /// A store for the table at `sub` below this one (`sub` is table-relative), sharing
    /// this store's client, runtime and request counters (so its counts include both).
    ///
    /// # Errors
    /// [`StorageError::InvalidPath`] if `sub` is not a valid relative path.
    pub fn at(&self, sub: &str) -> Result<RemoteStore> {
        let sub = StorePath::parse(sub.trim_matches('/'))?;
        Ok(RemoteStore {
            client: self.client.clone(),
            uri: format!("{}/{sub}", self.uri),
            bucket_uri: self.bucket_uri.clone(),
            prefix: self.key(sub.as_str()),
            put_if_absent: self.put_if_absent,
            probed: OnceLock::new(),
            single_writer: self.single_writer,
            concurrency: self.concurrency,
        })
    }

    /// The table's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The bucket key of a table-relative path.
    fn key(&self, rel: &str) -> String {
        if self.prefix.is_empty() {
            rel.to_string()
        } else {
            format!("{}/{rel}", self.prefix)
        }
    }

    /// The crate path of a table-relative path. Keys are used as they are (no
    /// percent-encoding), so that every engine finds the same objects.
    fn path(&self, rel: &StorePath) -> Result<Path> {
        Path::parse(self.key(rel.as_str())).map_err(|_| StorageError::InvalidPath {
            path: rel.to_string(),
            reason: "not a valid object key (control characters)",
        })
    }

    /// The object's URI, for messages.
    fn shown(&self, rel: &str) -> String {
        format!("{}/{rel}", self.uri)
    }

    /// The key prefix of directory `dir` (the table root if `None`), ending with `/`;
    /// `None` for the root of a table at the bucket root.
    fn dir_prefix(&self, dir: Option<&StorePath>) -> Option<String> {
        match dir {
            Some(d) => Some(format!("{}/", self.key(d.as_str()))),
            None if self.prefix.is_empty() => None,
            None => Some(format!("{}/", self.prefix)),
        }
    }

    /// The table-relative path of a key listed under the table, if it is one.
    fn relative<'a>(&self, key: &'a str) -> Option<&'a str> {
        if self.prefix.is_empty() {
            return Some(key);
        }
        key.strip_prefix(self.prefix.as_str())?.strip_prefix('/')
    }

    /// Runs a request future to completion on the store's runtime (see `blocking.rs`).
    fn run<T>(&self, fut: impl Future<Output = Result<T>>) -> Result<T> {
        self.client.runtime.block_on(fut)
    }

    /// Every object under `prefix`, following pagination: one LIST request per page.
    async fn list_all(
        &self,
        prefix: Option<&str>,
        delimiter: bool,
        offset: Option<String>,
    ) -> Result<Vec<object_store::ObjectMeta>> {
        let shown = prefix.map_or_else(|| self.uri.clone(), |p| format!("{}/{p}", self.bucket_uri));
        let mut objects = Vec::new();
        let mut page_token = None;
        loop {
            let opts = PaginatedListOptions {
                offset: offset.clone(),
                delimiter: delimiter.then_some("/".into()),
                page_token: page_token.take(),
                ..Default::default()
            };
            let page = self
                .client
                .lister
                .list_paginated(prefix, opts)
                .await
                .map_err(|e| map_err("list", &shown, e))?;
            objects.extend(page.result.objects);
            match page.page_token {
                Some(t) if !t.is_empty() => page_token = Some(t),
                _ => return Ok(objects),
            }
        }
    }

    /// Converts listed objects to sorted table-relative metadata, keeping those whose path
    /// below `dir_prefix` satisfies `keep`.
    fn collect_listing(
        &self,
        listed: Vec<object_store::ObjectMeta>,
        dir_prefix: Option<&str>,
        keep: impl Fn(&str) -> bool,
    ) -> Vec<ObjectMeta> {
        let mut out: Vec<ObjectMeta> = listed
            .iter()
            .filter_map(|m| {
                let key = m.location.as_ref();
                let below = match dir_prefix {
                    Some(p) => key.strip_prefix(p)?,
                    None => key,
                };
                if below.is_empty() || !keep(below) {
                    return None;
                }
                to_meta(self.relative(key)?, m)
            })
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    async fn create(&self, path: &Path, data: Bytes) -> object_store::Result<()> {
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        self.client
            .store
            .put_opts(path, PutPayload::from_bytes(data), opts)
            .await
            .map(|_| ())
    }

    /// Whether conditional creates are known not to work here.
    fn lacks_put_if_absent(&self) -> bool {
        match self.put_if_absent {
            PutIfAbsentSupport::Supported => false,
            PutIfAbsentSupport::Unsupported => true,
            PutIfAbsentSupport::Probe => self.probed.get() == Some(&false),
        }
    }

    /// Creates a scratch object twice with put-if-absent: the store gives put-if-absent if
    /// the second create is refused and the object still holds the first body. The scratch
    /// object is a hidden name at the table root (ignored by Delta readers) and is deleted.
    fn probe(&self) -> Result<bool> {
        let rel = StorePath::from_trusted(format!(
            ".alluvium-put-if-absent-probe-{}",
            uuid::Uuid::new_v4().simple()
        ));
        let path = self.path(&rel)?;
        let shown = self.shown(rel.as_str());
        let first = Bytes::from_static(b"first");
        let outcome = self.run(async {
            match self.create(&path, first.clone()).await {
                // A retried create whose first attempt landed is refused: checked below.
                Ok(()) | Err(object_store::Error::AlreadyExists { .. }) => {}
                Err(object_store::Error::NotImplemented { .. }) => return Ok(false),
                Err(e) => return Err(map_err("probe put-if-absent", &shown, e)),
            }
            let refused = match self.create(&path, Bytes::from_static(b"second")).await {
                Ok(()) => false,
                Err(object_store::Error::AlreadyExists { .. }) => true,
                Err(e) => return Err(map_err("probe put-if-absent", &shown, e)),
            };
            let body = self
                .client
                .store
                .get(&path)
                .await
                .map_err(|e| map_err("probe put-if-absent", &shown, e))?
                .bytes()
                .await
                .map_err(|e| map_err("probe put-if-absent", &shown, e))?;
            Ok(refused && body == first)
        });
        // Best effort: a scratch object left behind is hidden and harmless.
        let _ = self.delete(&rel);
        outcome
    }
}

impl ObjectStore for RemoteStore {
    fn root_uri(&self) -> String {
        self.uri.clone()
    }

    fn get(&self, path: &StorePath) -> Result<Bytes> {
        self.run(fetch(
            self.client.store.clone(),
            self.path(path),
            self.shown(path.as_str()),
        ))
    }

    fn get_range(&self, path: &StorePath, range: Range<u64>) -> Result<Bytes> {
        let p = self.path(path)?;
        let shown = self.shown(path.as_str());
        let past_end = || {
            StorageError::io(
                "read range",
                &shown,
                io::Error::new(io::ErrorKind::UnexpectedEof, "range past end of object"),
            )
        };
        if range.start >= range.end {
            // An empty (or inverted) range: only its bounds need checking.
            let meta = self.head(path)?;
            return if range.start == range.end && range.end <= meta.size {
                Ok(Bytes::new())
            } else {
                Err(past_end())
            };
        }
        let want = range.end - range.start;
        let data = self.run(async {
            self.client
                .store
                .get_range(&p, range)
                .await
                .map_err(|e| match e {
                    // The crate refuses ranges past the end before or after asking.
                    object_store::Error::NotFound { .. } => map_err("read range", &shown, e),
                    object_store::Error::Generic { .. } => past_end(),
                    e => map_err("read range", &shown, e),
                })
        })?;
        if data.len() as u64 != want {
            return Err(past_end());
        }
        Ok(data)
    }

    fn head(&self, path: &StorePath) -> Result<ObjectMeta> {
        let p = self.path(path)?;
        let shown = self.shown(path.as_str());
        let meta = self.run(async {
            self.client
                .store
                .head(&p)
                .await
                .map_err(|e| map_err("stat", &shown, e))
        })?;
        Ok(ObjectMeta {
            path: path.clone(),
            size: meta.size,
            last_modified_ms: meta.last_modified.timestamp_millis(),
        })
    }

    fn put_if_absent(&self, path: &StorePath, data: Bytes) -> Result<()> {
        let p = self.path(path)?;
        let shown = self.shown(path.as_str());
        if self.lacks_put_if_absent() {
            if !self.single_writer {
                return Err(StorageError::Unsupported {
                    op: "put_if_absent",
                    reason: format!(
                        "{} does not give put-if-absent; with one writer at a time, open it in single-writer mode (single_writer=true)",
                        self.uri
                    ),
                });
            }
            // Single-writer mode: check, then write. Exact only without concurrent writers.
            return match self.head(path) {
                Ok(_) => Err(StorageError::AlreadyExists { path: shown }),
                Err(e) if e.is_not_found() => self.put(path, data),
                Err(e) => Err(e),
            };
        }
        self.run(async {
            self.create(&p, data)
                .await
                .map_err(|e| map_err("put_if_absent", &shown, e))
        })
    }

    fn put(&self, path: &StorePath, data: Bytes) -> Result<()> {
        let p = self.path(path)?;
        let shown = self.shown(path.as_str());
        self.run(async {
            self.client
                .store
                .put(&p, PutPayload::from_bytes(data))
                .await
                .map(|_| ())
                .map_err(|e| map_err("write", &shown, e))
        })
    }

    fn list_dir_from(&self, dir: Option<&StorePath>, start: &str) -> Result<Vec<ObjectMeta>> {
        let prefix = self.dir_prefix(dir);
        // S3's start-after is exclusive and there is no key just below `start`; starting
        // after `start` without its last character lists a superset, trimmed below.
        let offset = start
            .char_indices()
            .last()
            .map(|(i, _)| format!("{}{}", prefix.as_deref().unwrap_or(""), &start[..i]));
        let listed = self.run(self.list_all(prefix.as_deref(), true, offset))?;
        Ok(self.collect_listing(listed, prefix.as_deref(), |name| {
            !name.contains('/') && name >= start
        }))
    }

    fn list_tree(&self, dir: Option<&StorePath>) -> Result<Vec<ObjectMeta>> {
        let prefix = self.dir_prefix(dir);
        let listed = self.run(self.list_all(prefix.as_deref(), false, None))?;
        Ok(self.collect_listing(listed, prefix.as_deref(), |_| true))
    }

    fn delete(&self, path: &StorePath) -> Result<()> {
        let p = self.path(path)?;
        let shown = self.shown(path.as_str());
        self.run(async {
            match self.client.store.delete(&p).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(map_err("delete", &shown, e)),
            }
        })
    }

    fn get_many(&self, paths: &[StorePath]) -> Vec<Result<Bytes>> {
        let store = self.client.store.clone();
        let items: Vec<(Result<Path>, String)> = paths
            .iter()
            .map(|rel| (self.path(rel), self.shown(rel.as_str())))
            .collect();
        let concurrency = self.concurrency;
        let fetched = self.run(async move {
            Ok(futures_util::stream::iter(items)
                .map(move |(p, shown)| fetch(store.clone(), p, shown))
                .buffered(concurrency)
                .collect::<Vec<_>>()
                .await)
        });
        fetched.unwrap_or_else(|e| self.fail_all("read", paths, &e))
    }

    fn fetches_concurrently(&self) -> bool {
        true
    }

    fn delete_many(&self, paths: &[StorePath]) -> Vec<Result<()>> {
        let store = self.client.store.clone();
        let chunks: Vec<Vec<(Result<Path>, String)>> = paths
            .chunks(DELETE_CHUNK)
            .map(|chunk| {
                chunk
                    .iter()
                    .map(|rel| (self.path(rel), self.shown(rel.as_str())))
                    .collect()
            })
            .collect();
        // Bulk requests of up to 1,000 keys each; a few at a time.
        let concurrency = self.concurrency.div_ceil(8);
        let deleted = self.run(async move {
            Ok(futures_util::stream::iter(chunks)
                .map(move |chunk| delete_chunk(store.clone(), chunk))
                .buffered(concurrency)
                .collect::<Vec<_>>()
                .await
                .into_iter()
                .flatten()
                .collect::<Vec<_>>())
        });
        deleted.unwrap_or_else(|e| self.fail_all("delete", paths, &e))
    }

    fn get_external(&self, uri: &str) -> Result<Bytes> {
        // An absolute URI in this bucket (written by another engine, or a shallow clone) is
        // readable; anything else is out of reach.
        let key = uri
            .strip_prefix(self.bucket_uri.as_str())
            .and_then(|k| k.strip_prefix('/'))
            .ok_or_else(|| StorageError::Unsupported {
                op: "get_external",
                reason: format!("{} cannot read {uri}: another bucket or scheme", self.uri),
            })?;
        let p = Path::parse(key).map_err(|_| StorageError::InvalidPath {
            path: uri.to_string(),
            reason: "not a valid object key",
        });
        self.run(fetch(self.client.store.clone(), p, uri.to_string()))
    }

    fn request_counts(&self) -> RequestCounts {
        self.client.counters.read()
    }

    fn supports_put_if_absent(&self) -> bool {
        match self.put_if_absent {
            PutIfAbsentSupport::Supported => true,
            PutIfAbsentSupport::Unsupported => false,
            PutIfAbsentSupport::Probe => self.check_put_if_absent().unwrap_or(false),
        }
    }

    fn check_put_if_absent(&self) -> Result<bool> {
        match self.put_if_absent {
            PutIfAbsentSupport::Supported => Ok(true),
            PutIfAbsentSupport::Unsupported => Ok(false),
            PutIfAbsentSupport::Probe => {
                if let Some(known) = self.probed.get() {
                    return Ok(*known);
                }
                let answer = self.probe()?;
                Ok(*self.probed.get_or_init(|| answer))
            }
        }
    }

    fn single_writer(&self) -> bool {
        self.single_writer
    }

    fn lists_from_key_cheaply(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_requests_are_classified() {
        assert_eq!(
            request_kind("GET", Some("list-type=2&prefix=t%2F")),
            RequestKind::List
        );
        assert_eq!(
            request_kind("GET", Some("restype=container&comp=list")),
            RequestKind::List
        );
        assert_eq!(request_kind("GET", None), RequestKind::Get);
        assert_eq!(request_kind("HEAD", None), RequestKind::Head);
        assert_eq!(request_kind("PUT", None), RequestKind::Put);
        assert_eq!(request_kind("POST", Some("delete")), RequestKind::Delete);
        assert_eq!(request_kind("POST", Some("uploads")), RequestKind::Put);
        assert_eq!(request_kind("DELETE", None), RequestKind::Delete);
    }

    #[test]
    fn opening_checks_the_configuration() {
        let o = StorageOptions::from_pairs([("aws_no_such_key", "1")]).unwrap();
        assert!(matches!(
            RemoteStore::open("s3://b/t", &o),
            Err(StorageError::InvalidConfig(_))
        ));
        assert!(matches!(
            RemoteStore::open("ftp://b/t", &StorageOptions::default()),
            Err(StorageError::InvalidConfig(_))
        ));
        let s = RemoteStore::open(
            "s3://b/t/",
            &StorageOptions::from_pairs([("aws_region", "us-east-1")]).unwrap(),
        )
        .unwrap();
        assert_eq!(s.root_uri(), "s3://b/t");
        let child = s.at("sub/x").unwrap();
        assert_eq!(child.root_uri(), "s3://b/t/sub/x");
        assert_eq!(child.key("_delta_log/0.json"), "t/sub/x/_delta_log/0.json");
        assert_eq!(child.relative("t/sub/x/a"), Some("a"));
        assert_eq!(child.relative("t/sub/xa"), None);
        assert!(s.get_external("s3://other/x").is_err());
    }
}
