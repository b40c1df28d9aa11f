//! `alluvium` processes on a real S3 API server (gated on `ALLUVIUM_S3_ENDPOINT` like the
//! library's `tests/integration/s3.rs`; without it the test prints that it is skipped and passes):
//! 4 `alluvium append` processes x 25 appends on one table give contiguous versions and
//! every row exactly once.

use alluvium::ScanBuilder;
use alluvium_txlog::log_path::LogFileKind;
use alluvium_txlog::segment::list_log_from;

use super::common::BIN;

use super::s3_server::{endpoint, fresh_uri, key_id, open, secret};

/// Runs `alluvium` with the test server's connection in the environment.
fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(BIN)
        .args(args)
        .env("AWS_ENDPOINT_URL", endpoint().unwrap())
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_ACCESS_KEY_ID", key_id())
        .env("AWS_SECRET_ACCESS_KEY", secret())
        .env("AWS_REGION", "us-east-1")
        .env("ALLUVIUM_STORAGE_OPTIONS", "put_if_absent=true")
        .output()
        .unwrap()
}

#[test]
fn racing_writer_processes_commit_every_row_once() {
    const WRITERS: usize = 4;
    const APPENDS: usize = 25;
    let Some(uri) = fresh_uri("race") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = |w: usize, i: usize| dir.path().join(format!("w{w}-{i}.csv"));
    for w in 0..WRITERS {
        for i in 0..APPENDS {
            std::fs::write(file(w, i), format!("writer,seq\n{w},{i}\n")).unwrap();
        }
    }
    let out = cli(&[
        "create",
        &uri,
        "--schema-from",
        file(0, 0).to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let workers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let uri = uri.clone();
            let files: Vec<String> = (0..APPENDS)
                .map(|i| file(w, i).to_str().unwrap().to_string())
                .collect();
            std::thread::spawn(move || {
                for f in files {
                    let out = cli(&["append", &uri, &f]);
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            })
        })
        .collect();
    for h in workers {
        h.join().unwrap();
    }
    let table = open(&uri, &[]);
    let listing = list_log_from(table.store().as_ref(), 0).unwrap();
    let versions: Vec<u64> = listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .map(|f| f.version)
        .collect();
    let n = (WRITERS * APPENDS) as u64;
    assert_eq!(versions, (0..=n).collect::<Vec<_>>());
    let batches = ScanBuilder::new(table.snapshot().unwrap())
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let rows = super::root_common::canon_rows(&batches);
    let mut expected: Vec<String> = (0..WRITERS)
        .flat_map(|w| (0..APPENDS).map(move |i| format!("{w} | {i}")))
        .collect();
    expected.sort();
    assert_eq!(rows, expected);
}
