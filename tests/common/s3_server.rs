//! The S3 API server the object-store tests run against (gated on `ALLUVIUM_S3_ENDPOINT`,
//! see `tests/integration/s3.rs`): its connection options and fresh table locations on it. Shared by the
//! library's S3 tests and the CLI package's.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use alluvium::Table;

/// The test server (`ALLUVIUM_S3_ENDPOINT`), if any.
pub fn endpoint() -> Option<String> {
    std::env::var("ALLUVIUM_S3_ENDPOINT")
        .ok()
        .filter(|e| !e.is_empty())
}

/// The bucket of the tests (`ALLUVIUM_S3_BUCKET`, default `alluvium`).
pub fn bucket() -> String {
    std::env::var("ALLUVIUM_S3_BUCKET").unwrap_or_else(|_| "alluvium".into())
}

/// The access key of the test server.
pub fn key_id() -> String {
    std::env::var("AWS_ACCESS_KEY_ID").unwrap_or_else(|_| "testkey".into())
}

/// The secret key of the test server.
pub fn secret() -> String {
    std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|_| "testsecret".into())
}

/// The connection options of the test server, plus `extra`.
pub fn pairs(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut p: Vec<(String, String)> = vec![
        ("aws_endpoint".into(), endpoint().unwrap()),
        ("aws_allow_http".into(), "true".into()),
        ("aws_access_key_id".into(), key_id()),
        ("aws_secret_access_key".into(), secret()),
        ("aws_region".into(), "us-east-1".into()),
    ];
    p.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    p
}

/// A fresh table URI under the bucket, or `None` (test skipped) without an endpoint.
pub fn fresh_uri(name: &str) -> Option<String> {
    if endpoint().is_none() {
        eprintln!("skipped {name}: set ALLUVIUM_S3_ENDPOINT to run it against an S3 server");
        return None;
    }
    Some(format!(
        "s3://{}/root-tests/{name}-{}",
        bucket(),
        uuid::Uuid::new_v4().simple()
    ))
}

/// Opens `uri` on the test server with its connection options plus `extra`.
pub fn open(uri: &str, extra: &[(&str, &str)]) -> Table {
    let p = pairs(extra);
    let refs: Vec<(&str, &str)> = p.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Table::open_with_options(uri, &refs).unwrap()
}
