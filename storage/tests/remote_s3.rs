//! The storage contract (SPEC.md §2) against a real S3 API server.
//!
//! Gated on `ALLUVIUM_S3_ENDPOINT` (e.g. `http://127.0.0.1:9000`, a server that `.ci/run`
//! starts) and `ALLUVIUM_S3_BUCKET` (default `alluvium`, which must exist); credentials
//! from `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` or `testkey`/`testsecret`. Without
//! the endpoint every test prints that it is skipped and passes. Each test works under its
//! own random prefix.
#![cfg(feature = "object-store")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Barrier};

use alluvium_storage::{
    ObjectStore, RemoteStore, RequestCounts, StorageError, StorageOptions, StorePath,
};
use bytes::Bytes;

fn endpoint() -> Option<String> {
    std::env::var("ALLUVIUM_S3_ENDPOINT")
        .ok()
        .filter(|e| !e.is_empty())
}

fn options(extra: &[(&str, &str)]) -> StorageOptions {
    let endpoint = endpoint().unwrap();
    let key = std::env::var("AWS_ACCESS_KEY_ID").unwrap_or_else(|_| "testkey".into());
    let secret = std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|_| "testsecret".into());
    let mut pairs: Vec<(String, String)> = vec![
        ("aws_endpoint".into(), endpoint),
        ("aws_allow_http".into(), "true".into()),
        ("aws_access_key_id".into(), key),
        ("aws_secret_access_key".into(), secret),
        ("aws_region".into(), "us-east-1".into()),
    ];
    pairs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    StorageOptions::from_pairs(pairs).unwrap()
}

/// A store under a fresh prefix, or `None` (test skipped) without an endpoint.
fn store(name: &str, extra: &[(&str, &str)]) -> Option<RemoteStore> {
    if endpoint().is_none() {
        eprintln!("skipped {name}: set ALLUVIUM_S3_ENDPOINT to run it against an S3 server");
        return None;
    }
    let bucket = std::env::var("ALLUVIUM_S3_BUCKET").unwrap_or_else(|_| "alluvium".into());
    let uri = format!(
        "s3://{bucket}/storage-tests/{name}-{}",
        uuid::Uuid::new_v4().simple()
    );
    Some(RemoteStore::open(&uri, &options(extra)).unwrap())
}

fn p(s: &str) -> StorePath {
    StorePath::parse(s).unwrap()
}

fn names(listing: &[alluvium_storage::ObjectMeta]) -> Vec<&str> {
    listing.iter().map(|m| m.path.as_str()).collect()
}

#[test]
fn objects_round_trip_and_errors_are_typed() {
    let Some(s) = store("round-trip", &[]) else {
        return;
    };
    let body = Bytes::from_static(b"0123456789");
    s.put_if_absent(&p("x=a%2Fb/part 0.parquet"), body.clone())
        .unwrap();
    assert_eq!(s.get(&p("x=a%2Fb/part 0.parquet")).unwrap(), body);
    assert_eq!(
        s.get_range(&p("x=a%2Fb/part 0.parquet"), 2..5).unwrap(),
        Bytes::from_static(b"234")
    );
    assert!(s.get_range(&p("x=a%2Fb/part 0.parquet"), 5..50).is_err());
    assert!(
        s.get_range(&p("x=a%2Fb/part 0.parquet"), 10..10)
            .unwrap()
            .is_empty()
    );
    let meta = s.head(&p("x=a%2Fb/part 0.parquet")).unwrap();
    assert_eq!(meta.size, 10);
    assert!(meta.last_modified_ms > 1_600_000_000_000);
    assert!(s.get(&p("missing")).unwrap_err().is_not_found());
    assert!(s.head(&p("missing")).unwrap_err().is_not_found());
    let err = s
        .put_if_absent(&p("x=a%2Fb/part 0.parquet"), Bytes::new())
        .unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    assert!(err.to_string().contains("part 0.parquet"), "{err}");
    s.put(&p("x=a%2Fb/part 0.parquet"), Bytes::from_static(b"new"))
        .unwrap();
    assert_eq!(
        s.get(&p("x=a%2Fb/part 0.parquet")).unwrap(),
        Bytes::from_static(b"new")
    );
    s.delete(&p("x=a%2Fb/part 0.parquet")).unwrap();
    s.delete(&p("x=a%2Fb/part 0.parquet")).unwrap();
    assert!(s.get(&p("x=a%2Fb/part 0.parquet")).is_err());
    // An absolute URI in the same bucket is readable.
    s.put(&p("abs"), Bytes::from_static(b"a")).unwrap();
    assert_eq!(
        s.get_external(&format!("{}/abs", s.root_uri())).unwrap(),
        Bytes::from_static(b"a")
    );
}

#[test]
fn listings_are_per_directory_sorted_and_start_at_a_key() {
    let Some(s) = store("listing", &[]) else {
        return;
    };
    for k in [
        "_delta_log/00000000000000000000.json",
        "_delta_log/00000000000000000001.json",
        "_delta_log/00000000000000000002.checkpoint.parquet",
        "_delta_log/00000000000000000002.json",
        "_delta_log/00000000000000000010.json",
        "_delta_log/_last_checkpoint",
        "_delta_log/_sidecars/a.parquet",
        "part-0.parquet",
        "p=1/part-1.parquet",
    ] {
        s.put(&p(k), Bytes::from_static(b"x")).unwrap();
    }
    let log = p("_delta_log");
    let all = s.list_dir_from(Some(&log), "").unwrap();
    assert_eq!(
        names(&all),
        [
            "_delta_log/00000000000000000000.json",
            "_delta_log/00000000000000000001.json",
            "_delta_log/00000000000000000002.checkpoint.parquet",
            "_delta_log/00000000000000000002.json",
            "_delta_log/00000000000000000010.json",
            "_delta_log/_last_checkpoint",
        ]
    );
    let from2 = s.list_dir_from(Some(&log), "00000000000000000002").unwrap();
    assert_eq!(
        names(&from2)[..3],
        [
            "_delta_log/00000000000000000002.checkpoint.parquet",
            "_delta_log/00000000000000000002.json",
            "_delta_log/00000000000000000010.json",
        ]
    );
    assert!(s.list_dir_from(Some(&p("nothing")), "").unwrap().is_empty());
    assert_eq!(
        names(&s.list_dir_from(None, "").unwrap()),
        ["part-0.parquet"]
    );
    let tree = s.list_tree(None).unwrap();
    assert_eq!(tree.len(), 9);
    assert!(tree.windows(2).all(|w| w[0].path < w[1].path));
    assert_eq!(
        names(&s.list_tree(Some(&p("p=1"))).unwrap()),
        ["p=1/part-1.parquet"]
    );
}

#[test]
fn racing_put_if_absent_has_exactly_one_winner() {
    let Some(s) = store("race", &[("put_if_absent", "probe")]) else {
        return;
    };
    assert!(s.check_put_if_absent().unwrap(), "the server must qualify");
    let s = Arc::new(s);
    for round in 0..5 {
        let path = p(&format!("_delta_log/{round:020}.json"));
        let writers = 4;
        let barrier = Arc::new(Barrier::new(writers));
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let (s, path, barrier) = (s.clone(), path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    s.put_if_absent(&path, Bytes::from(format!("writer {w}")))
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let winners = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(winners, 1, "round {round}: {results:?}");
        assert!(
            results
                .iter()
                .filter_map(|r| r.as_ref().err())
                .all(StorageError::is_already_exists)
        );
    }
    // The probe cleaned up after itself.
    assert_eq!(s.list_tree(None).unwrap().len(), 5);
}

#[test]
fn batches_and_request_counts() {
    let Some(s) = store(
        "batches",
        &[("put_if_absent", "true"), ("concurrency", "4")],
    ) else {
        return;
    };
    let paths: Vec<StorePath> = (0..25).map(|i| p(&format!("d/{i:03}"))).collect();
    let before = s.request_counts();
    for (i, path) in paths.iter().enumerate() {
        s.put_if_absent(path, Bytes::from(i.to_string())).unwrap();
    }
    let mut with_missing = paths.clone();
    with_missing.push(p("d/missing"));
    let got = s.get_many(&with_missing);
    assert_eq!(got.len(), 26);
    for (i, r) in got.iter().take(25).enumerate() {
        assert_eq!(r.as_ref().unwrap(), &Bytes::from(i.to_string()));
    }
    assert!(got[25].as_ref().unwrap_err().is_not_found());
    assert_eq!(s.list_dir_from(Some(&p("d")), "").unwrap().len(), 25);
    let counts = s.request_counts().since(&before);
    assert_eq!(
        counts,
        RequestCounts {
            list: 1,
            get: 26,
            put: 25,
            ..Default::default()
        }
    );
    let before = s.request_counts();
    assert!(s.delete_many(&with_missing).iter().all(Result::is_ok));
    assert!(s.list_tree(None).unwrap().is_empty());
    let counts = s.request_counts().since(&before);
    assert_eq!(counts.delete, 1, "one bulk request: {counts}");
}

#[test]
fn without_put_if_absent_only_single_writer_mode_creates() {
    let Some(s) = store("no-pia", &[("put_if_absent", "false")]) else {
        return;
    };
    assert!(!s.check_put_if_absent().unwrap());
    assert!(!s.supports_put_if_absent());
    let err = s.put_if_absent(&p("a"), Bytes::new()).unwrap_err();
    assert!(matches!(err, StorageError::Unsupported { .. }), "{err}");
    let single = s.at("single").unwrap();
    let single = RemoteStore::open(
        single.uri(),
        &options(&[("put_if_absent", "false"), ("single_writer", "true")]),
    )
    .unwrap();
    assert!(single.single_writer());
    single.put_if_absent(&p("a"), Bytes::new()).unwrap();
    assert!(
        single
            .put_if_absent(&p("a"), Bytes::new())
            .unwrap_err()
            .is_already_exists()
    );
}

#[test]
fn callers_inside_an_async_runtime_are_served() {
    let Some(s) = store("nested", &[]) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        s.put(&p("a"), Bytes::from_static(b"1")).unwrap();
        assert_eq!(s.get(&p("a")).unwrap(), Bytes::from_static(b"1"));
    });
    // A current-thread runtime cannot be blocked: a typed error, not a hang or a panic.
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let err = current.block_on(async { s.get(&p("a")) }).unwrap_err();
    assert!(matches!(err, StorageError::Unsupported { .. }), "{err}");
    // Dropping the store inside an async context must not panic either.
    rt.block_on(async move { drop(s) });
}

#[test]
fn requests_run_on_the_embedders_runtime() {
    if endpoint().is_none() {
        eprintln!("skipped embedder runtime: set ALLUVIUM_S3_ENDPOINT to run it");
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let bucket = std::env::var("ALLUVIUM_S3_BUCKET").unwrap_or_else(|_| "alluvium".into());
    let uri = format!(
        "s3://{bucket}/storage-tests/embedder-{}",
        uuid::Uuid::new_v4().simple()
    );
    let s = RemoteStore::open(&uri, &options(&[]).with_runtime(rt.handle().clone())).unwrap();
    s.put(&p("a"), Bytes::from_static(b"2")).unwrap();
    assert_eq!(s.get(&p("a")).unwrap(), Bytes::from_static(b"2"));
    rt.block_on(async { assert_eq!(s.get(&p("a")).unwrap(), Bytes::from_static(b"2")) });
}
