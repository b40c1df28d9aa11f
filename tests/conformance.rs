//! Conformance against 194 reference Delta tables written by Spark, delta-rs and the Delta
//! kernels (`tests/data/conformance`, see its README and MANIFEST.json).
//!
//! Every manifest entry runs as its `test_usage` says:
//! * `read-latest-compare-expected`: full scan equals the expected rows (parquet or text);
//! * `read-latest-compare-derived`: full scan has the derived row count;
//! * `snapshot-assertions`: snapshot facts and the entry's assertions;
//! * `cdf-compare-expected-text+snapshot-compare-derived`: snapshot facts and row count, and
//!   every expected change feed (`expected_text/cdf_v<start>_to_<end>.txt`, read with
//!   `Table::changes` without `_commit_timestamp`) equal as sorted rows; the ranges the
//!   entry's `assertions` say must fail do fail, with the typed error;
//! * `expect-error`: loading or reading fails with the typed error the entry describes.
//!
//! For every table that is not an expected error, the snapshot facts are checked too:
//! version, protocol, partition and schema columns, live files, app transactions, domains.
//!
//! Every readable non-empty table (all data files present, a scan returning rows) must also
//! accept an append of one of its own rows (issue 16, SPEC.md §29): a copy of the table in
//! a temporary directory gets its first scanned row appended with `Table::append`, and the
//! new snapshot must read one more row, that row included. A refusal passes only when the
//! table and the feature refusing it are listed in [`EXPECTED_APPEND_REFUSALS`].
//!
//! Run one table: `cargo test --test conformance -- <name-substring>`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use alluvium::{Error, ScanBuilder, Snapshot, Table, VersionSpec};
use alluvium_txlog::LogError;
use arrow::array::RecordBatch;
use arrow::util::pretty::pretty_format_batches;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rayon::prelude::*;
use serde_json::Value;

/// Expected results that are wrong upstream: (table, column, the value the log holds, the
/// value the expected file holds instead, proof). Our column must hold exactly the log's
/// value and the expected file exactly the wrong one in every non-null row; with the wrong
/// value mapped to the log's, every row must be equal, that column included. Such a table
/// passes, and its line says why.
const EXPECTED_DIVERGENCES: &[(&str, &str, &str, &str, &str)] = &[(
    "data-reader-partition-values",
    "as_timestamp",
    "ts:1631099471000000",
    "ts:1631124671000000",
    "the log holds the partition value \"2021-09-08 11:11:11\" (no zone; the protocol reads it as \
     UTC: 2021-09-08T11:11:11Z = 1631099471 s); the expected file holds 1631124671 s = \
     2021-09-08T18:11:11Z, the same wall time read in the generator's America/Los_Angeles session \
     (UTC-7). delta-kernel-rs skips this golden test for the same reason",
)];

/// Tables whose append alluvium refuses, with the writer feature that refuses it and why:
/// none today (issue 16). A listed table that accepts the append fails, so a stale entry is
/// noticed.
const EXPECTED_APPEND_REFUSALS: &[(&str, &str, &str)] = &[];

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance")
}

#[derive(Debug)]
enum Outcome {
    Pass(String),
    Fail(String),
}

fn main() {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(data_dir().join("MANIFEST.json")).unwrap()).unwrap();
    let entries: Vec<&Value> = manifest["tables"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            filters.is_empty()
                || filters
                    .iter()
                    .any(|f| e["name"].as_str().unwrap().contains(f.as_str()))
        })
        .collect();
    let results: Vec<(String, Outcome)> = entries
        .par_iter()
        .map(|e| {
            let name = e["name"].as_str().unwrap().to_string();
            let outcome = match std::panic::catch_unwind(|| run_entry(e)) {
                Ok(o) => o,
                Err(p) => {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    Outcome::Fail(format!("panicked: {msg}"))
                }
            };
            (name, outcome)
        })
        .collect();
    let (mut pass, mut fail) = (0, 0);
    for (name, o) in &results {
        match o {
            Outcome::Pass(d) => {
                pass += 1;
                println!(
                    "PASS {name}{}",
                    if d.is_empty() {
                        String::new()
                    } else {
                        format!(" ({d})")
                    }
                );
            }
            Outcome::Fail(d) => {
                fail += 1;
                println!("FAIL {name}: {d}");
            }
        }
    }
    println!(
        "\nconformance: {pass} passed, {fail} failed, of {}",
        results.len()
    );
    if fail > 0 {
        std::process::exit(1);
    }
}

fn run_entry(e: &Value) -> Outcome {
    let name = e["name"].as_str().unwrap();
    let root = data_dir().join(e["table_root"].as_str().unwrap());
    let usage = e["test_usage"].as_str().unwrap();
    if usage == "expect-error" {
        return check_expected_error(name, &root, e);
    }
    match check_table(name, &root, e, usage) {
        Ok(detail) => Outcome::Pass(detail),
        Err(msg) => match msg.strip_prefix("DIVERGENCE: ") {
            // Every row and column equal, the one documented upstream error mapped to the
            // protocol's value: a pass, reported with its reason.
            Some(reason) => Outcome::Pass(format!(
                "equal to expected up to one upstream error in the expected file; {reason}"
            )),
            None => Outcome::Fail(msg),
        },
    }
}

fn table(root: &Path) -> Table {
    Table::open(root.to_str().unwrap()).unwrap()
}

fn full_scan(snapshot: &Snapshot) -> Result<Vec<RecordBatch>, String> {
    ScanBuilder::new(snapshot.clone())
        .build()
        .and_then(|s| s.execute_to_vec())
        .map_err(|e| format!("scan failed: {e}"))
}

/// A scan with view types returns the same rows as `batches` (the scan without), with no
/// `Utf8` or `Binary` left but the binaries extension types are defined on.
fn check_view_scan(snapshot: &Snapshot, batches: &[RecordBatch]) -> Result<(), String> {
    let views = ScanBuilder::new(snapshot.clone())
        .with_view_types(true)
        .build()
        .and_then(|s| s.execute_to_vec())
        .map_err(|e| format!("scan with view types failed: {e}"))?;
    if let Some(b) = views.first() {
        for f in b.schema().fields() {
            if common::has_offset_strings(f) {
                return Err(format!(
                    "scan with view types: column `{}` is {}",
                    f.name(),
                    f.data_type()
                ));
            }
        }
    }
    let (a, b) = (common::canon_rows(&views), common::canon_rows(batches));
    if a != b {
        return Err(format!(
            "scan with view types: {}",
            first_difference(&a, &b)
        ));
    }
    Ok(())
}

fn check_expected_error(name: &str, root: &Path, e: &Value) -> Outcome {
    let result = table(root)
        .snapshot()
        .and_then(|s| ScanBuilder::new(s).build().and_then(|s| s.execute_to_vec()));
    let Err(err) = result else {
        return Outcome::Fail(format!(
            "expected an error ({}), but the table loaded",
            e["expected_error"]
        ));
    };
    let log = err.as_log_error();
    let ok = match name {
        "catalog-owned-preview" => {
            matches!(log, Some(LogError::UnsupportedFeature { feature, .. }) if feature == "catalogManaged")
        }
        "crc-malformed" | "no-delta-log-folder" => {
            matches!(log, Some(LogError::TableNotFound { .. }))
        }
        "deltalog-invalid-protocol-version" => matches!(
            log,
            Some(LogError::UnsupportedProtocolVersion { version: 99, .. })
        ),
        "deltalog-state-reconstruction-from-checkpoint-missing-metadata"
        | "deltalog-state-reconstruction-without-metadata" => {
            matches!(
                log,
                Some(LogError::MissingAction {
                    action: "metaData",
                    ..
                })
            )
        }
        "deltalog-state-reconstruction-from-checkpoint-missing-protocol"
        | "deltalog-state-reconstruction-without-protocol" => {
            matches!(
                log,
                Some(LogError::MissingAction {
                    action: "protocol",
                    ..
                })
            )
        }
        "err-log-table_c" => matches!(log, Some(LogError::NonContiguousLog { .. })),
        "simple_table_features" => matches!(
            log,
            Some(LogError::UnsupportedFeature { .. })
                | Some(LogError::UnsupportedProtocolVersion { .. })
        ),
        other => return Outcome::Fail(format!("no expected-error rule for {other}: {err}")),
    };
    if ok {
        Outcome::Pass(format!("fails with: {err}"))
    } else {
        Outcome::Fail(format!("wrong error kind: {err}"))
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn check_facts(s: &Snapshot, e: &Value) -> Result<(), String> {
    let mut errs = Vec::new();
    if let Some(v) = e["latest_version"].as_u64()
        && s.version() != v
    {
        errs.push(format!("version {} != {v}", s.version()));
    }
    if let Some(p) = e["protocol"].as_object() {
        let proto = s.protocol();
        if p.get("minReaderVersion").and_then(Value::as_i64)
            != Some(i64::from(proto.min_reader_version))
            || p.get("minWriterVersion").and_then(Value::as_i64)
                != Some(i64::from(proto.min_writer_version))
        {
            errs.push(format!("protocol {proto:?} != {p:?}"));
        }
        for (key, ours) in [
            ("readerFeatures", &proto.reader_features),
            ("writerFeatures", &proto.writer_features),
        ] {
            if let Some(expected) = p.get(key) {
                let a: BTreeSet<String> = strings(expected).into_iter().collect();
                let b: BTreeSet<String> = ours.clone().unwrap_or_default().into_iter().collect();
                if a != b {
                    errs.push(format!("{key} {b:?} != {a:?}"));
                }
            }
        }
    }
    if !e["partition_columns"].is_null()
        && strings(&e["partition_columns"]) != s.partition_columns()
    {
        errs.push(format!(
            "partition columns {:?} != {}",
            s.partition_columns(),
            e["partition_columns"]
        ));
    }
    let cols: Vec<String> = s.schema().fields.iter().map(|f| f.name.clone()).collect();
    if !e["schema_columns"].is_null() && strings(&e["schema_columns"]) != cols {
        errs.push(format!(
            "schema columns {cols:?} != {}",
            e["schema_columns"]
        ));
    }
    let d = &e["derived"];
    if let Some(n) = d["live_file_count"].as_u64()
        && s.num_files() as u64 != n
    {
        errs.push(format!("live files {} != {n}", s.num_files()));
    }
    if let Some(n) = d["app_txn_count"].as_u64()
        && s.state().app_transactions().len() as u64 != n
    {
        errs.push(format!(
            "app txns {} != {n}",
            s.state().app_transactions().len()
        ));
    }
    if d["domains"].is_array() {
        let a: BTreeSet<String> = strings(&d["domains"]).into_iter().collect();
        let b: BTreeSet<String> = s.domains().map(|d| d.domain.clone()).collect();
        if a != b {
            errs.push(format!("domains {b:?} != {a:?}"));
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs.join("; "))
    }
}

fn check_table(name: &str, root: &Path, e: &Value, usage: &str) -> Result<String, String> {
    let snapshot = table(root)
        .snapshot()
        .map_err(|err| format!("snapshot failed: {err}"))?;
    check_facts(&snapshot, e)?;
    check_assertions(name, &snapshot)?;
    let data = e["data_files_present"].as_str().unwrap_or("");
    let scannable = matches!(data, "all" | "none-referenced" | "partial");
    let mut detail = format!("v{} {} files", snapshot.version(), snapshot.num_files());
    if usage == "read-latest-compare-expected" {
        let batches = full_scan(&snapshot)?;
        check_view_scan(&snapshot, &batches)?;
        for exp in e["expected"].as_array().into_iter().flatten() {
            compare_expected(&snapshot, &batches, exp)?;
        }
        detail.push_str(&format!(
            ", {} rows equal to expected",
            batches.iter().map(RecordBatch::num_rows).sum::<usize>()
        ));
    } else if scannable && let Some(expected) = e["row_count"].as_u64() {
        if usage.starts_with("cdf") {
            let mut feeds = 0;
            for exp in e["expected"].as_array().into_iter().flatten() {
                compare_cdf(root, &snapshot, exp)?;
                feeds += 1;
            }
            let failing = check_cdf_assertions(root, e)?;
            detail.push_str(&format!(
                ", {feeds} change feeds equal to expected, {failing} ranges fail as asserted"
            ));
        }
        let batches = full_scan(&snapshot)?;
        check_view_scan(&snapshot, &batches)?;
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        if rows as u64 != expected {
            return Err(format!("scan returned {rows} rows, expected {expected}"));
        }
        detail.push_str(&format!(", {rows} rows"));
    }
    if data == "all" {
        let batches = full_scan(&snapshot)?;
        if batches.iter().any(|b| b.num_rows() > 0) {
            detail.push_str(&append_own_row(name, root, &batches)?);
        }
    }
    Ok(detail)
}

/// Copies `src` (a directory tree) to `dst`.
fn copy_dir(src: &Path, dst: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dst)?;
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let to = dst.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to)?;
        } else {
            std::fs::copy(entry.path(), &to)?;
        }
    }
    Ok(())
}

/// Appends the first row of `batches` (the table's full scan) to a copy of the table and
/// reads it back: one more row, and that row present as often as before plus one. A
/// refusal passes only as listed in [`EXPECTED_APPEND_REFUSALS`].
fn append_own_row(name: &str, root: &Path, batches: &[RecordBatch]) -> Result<String, String> {
    let first = batches
        .iter()
        .find(|b| b.num_rows() > 0)
        .ok_or("no rows")?
        .slice(0, 1);
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let copy = dir.path().join("t");
    copy_dir(root, &copy).map_err(|e| format!("copying the table: {e}"))?;
    let t = Table::open(copy.to_str().ok_or("path")?).map_err(|e| e.to_string())?;
    let before: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let expected = EXPECTED_APPEND_REFUSALS.iter().find(|r| r.0 == name);
    // A GENERATED ALWAYS identity column refuses given values (PROTOCOL.md "Identity
    // Columns"): the row goes in without it and the table generates it, so the row is
    // compared on the other columns.
    let snapshot = t.snapshot().map_err(|e| e.to_string())?;
    let generated: Vec<String> = snapshot
        .schema()
        .fields
        .iter()
        .filter(|f| {
            f.metadata.contains_key("delta.identity.start")
                && f.metadata.get("delta.identity.allowExplicitInsert")
                    == Some(&serde_json::Value::Bool(false))
        })
        .map(|f| f.name.clone())
        .collect();
    let given = |b: &RecordBatch| -> Result<RecordBatch, String> {
        let keep: Vec<usize> = (0..b.num_columns())
            .filter(|&i| !generated.contains(b.schema().field(i).name()))
            .collect();
        b.project(&keep).map_err(|e| e.to_string())
    };
    let first = given(&first)?;
    match t.append(vec![first.clone()], &alluvium::WriteOptions::default()) {
        Err(e) => {
            let refused_by = match e.as_log_error() {
                Some(LogError::UnsupportedFeature { feature, .. }) => Some(feature.clone()),
                _ => None,
            };
            return match expected {
                Some((_, feature, why)) if refused_by.as_deref() == Some(*feature) => {
                    Ok(format!(", append refused as expected ({feature}: {why})"))
                }
                _ => Err(format!("appending one of its own rows failed: {e}")),
            };
        }
        Ok(_) => {
            if let Some((_, feature, _)) = expected {
                return Err(format!(
                    "listed in EXPECTED_APPEND_REFUSALS for {feature}, but the append was accepted: remove the entry"
                ));
            }
        }
    }
    let after = t
        .snapshot()
        .map_err(|e| format!("reload after append: {e}"))?;
    let rows = full_scan(&after)?;
    let n: usize = rows.iter().map(RecordBatch::num_rows).sum();
    if n != before + 1 {
        return Err(format!(
            "after the append: {n} rows, expected {}",
            before + 1
        ));
    }
    let row = common::canon_rows(std::slice::from_ref(&first));
    let count = |bs: &[RecordBatch]| {
        common::canon_rows(bs)
            .iter()
            .filter(|r| **r == row[0])
            .count()
    };
    let batches = batches.iter().map(given).collect::<Result<Vec<_>, _>>()?;
    let rows = rows.iter().map(given).collect::<Result<Vec<_>, _>>()?;
    let (was, now) = (count(&batches), count(&rows));
    if now != was + 1 {
        return Err(format!(
            "after the append the row {} is there {now} times, expected {}",
            row[0],
            was + 1
        ));
    }
    Ok(", own row appended and read back".into())
}

fn check_assertions(name: &str, s: &Snapshot) -> Result<(), String> {
    let live: BTreeSet<String> = s.files().map(|a| a.path().to_string()).collect();
    let fail = |m: String| Err(m);
    match name {
        "delete-re-add-same-file-different-transactions" => {
            if live != ["bar", "foo"].iter().map(|x| x.to_string()).collect() {
                return fail(format!("live files {live:?}"));
            }
            let readded = s.files().find(|a| a.path() == "foo").unwrap();
            if readded.modification_time() != 1_700_000_000_000 {
                return fail(format!(
                    "foo modificationTime {}",
                    readded.modification_time()
                ));
            }
        }
        "log-replay-special-characters-b" => {
            let decoded: Vec<String> = s
                .files()
                .map(|a| alluvium_txlog::path::percent_decode(a.path()).unwrap())
                .collect();
            if decoded != ["special p@#h"] {
                return fail(format!("live files {decoded:?}"));
            }
        }
        "deltalog-getChanges"
            if (s.app_transaction_version("fakeAppId", 0) != Some(3)
                || s.app_transaction_version("nonExistentAppId", 0).is_some()) =>
        {
            return fail("txn versions wrong".into());
        }
        "app-txn-checkpoint" | "app-txn-no-checkpoint"
            if s.app_transaction_version("my-app", 0).is_none() =>
        {
            return fail("no txn for my-app".into());
        }
        n if n.starts_with("canonicalized-paths") && (s.num_files() != 0 || s.version() != 1) => {
            return fail(format!("expected 0 live files at version 1, got {live:?}"));
        }
        _ => {}
    }
    Ok(())
}

/// Reads the change feed an expected text names and compares it as sorted rows.
fn compare_cdf(root: &Path, snapshot: &Snapshot, exp: &Value) -> Result<(), String> {
    let start = exp["cdf_start_version"]
        .as_u64()
        .ok_or("expected feed without cdf_start_version")?;
    let end = match &exp["cdf_end_version"] {
        Value::String(s) if s == "latest" => None,
        v => Some(VersionSpec::Version(
            v.as_u64().ok_or("bad cdf_end_version")?,
        )),
    };
    let mut columns: Vec<String> = snapshot
        .schema()
        .fields
        .iter()
        .map(|f| f.name.clone())
        .collect();
    columns.extend(["_change_type".to_string(), "_commit_version".to_string()]);
    // Both string layouts must read the expected feed.
    for views in [false, true] {
        let batches = table(root)
            .changes(VersionSpec::Version(start), end)
            .columns(columns.clone())
            .view_types(views)
            .execute_to_vec()
            .map_err(|err| format!("changes from {start} (view types {views}): {err}"))?;
        compare_cdf_rows(exp, &batches).map_err(|e| format!("view types {views}: {e}"))?;
    }
    Ok(())
}

/// Compares a feed with the expected text of `exp`, as sorted rows.
fn compare_cdf_rows(exp: &Value, batches: &[RecordBatch]) -> Result<(), String> {
    let path = data_dir().join(exp["path"].as_str().unwrap());
    let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
    let (exp_header, mut exp_rows) = common::pretty_rows(&text);
    let rendered = if batches.is_empty() {
        String::new()
    } else {
        pretty_format_batches(batches)
            .map_err(|e| e.to_string())?
            .to_string()
    };
    let (our_header, mut our_rows) = common::pretty_rows(&rendered);
    if !batches.is_empty() && our_header != exp_header {
        return Err(format!(
            "{}: header {our_header:?} != expected {exp_header:?}",
            path.display()
        ));
    }
    exp_rows.sort();
    our_rows.sort();
    if exp_rows != our_rows {
        let a: Vec<String> = our_rows.iter().map(|r| r.join(" | ")).collect();
        let b: Vec<String> = exp_rows.iter().map(|r| r.join(" | ")).collect();
        return Err(format!("{}: {}", path.display(), first_difference(&a, &b)));
    }
    Ok(())
}

/// The change ranges the entry's `assertions` say must fail (`table_changes(start=S,
/// end=E) must fail: ...`) fail with the typed error for their reason; returns how many.
fn check_cdf_assertions(root: &Path, e: &Value) -> Result<usize, String> {
    let mut n = 0;
    for a in e["assertions"].as_array().into_iter().flatten() {
        let Some(text) = a.as_str() else { continue };
        let Some(rest) = text.strip_prefix("table_changes(start=") else {
            continue;
        };
        let parse = |s: &str| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("bad assertion {text}"))
        };
        let (start, rest) = rest
            .split_once(", end=")
            .ok_or(format!("bad assertion {text}"))?;
        let (end, _) = rest
            .split_once(')')
            .ok_or(format!("bad assertion {text}"))?;
        let (start, end) = (parse(start)?, parse(end)?);
        let result = table(root)
            .changes(VersionSpec::Version(start), Some(VersionSpec::Version(end)))
            .execute_to_vec();
        let ok = match &result {
            Err(Error::ChangeDataInvalidRange { .. }) => text.contains("start > end"),
            Err(Error::ChangeDataStartAfterLatest { .. }) => text.contains("start after"),
            _ => false,
        };
        if !ok {
            return Err(format!("{text}: got {:?}", result.map(|b| b.len())));
        }
        n += 1;
    }
    Ok(n)
}

fn read_expected_parquet(dir: &Path) -> Result<Vec<RecordBatch>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|d| d.ok().map(|d| d.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let bytes = bytes::Bytes::from(std::fs::read(&f).unwrap());
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
            .and_then(|b| b.build())
            .map_err(|e| e.to_string())?;
        for b in reader {
            out.push(b.map_err(|e| e.to_string())?);
        }
    }
    Ok(out)
}

fn compare_expected(snapshot: &Snapshot, ours: &[RecordBatch], exp: &Value) -> Result<(), String> {
    let path = data_dir().join(exp["path"].as_str().unwrap());
    match exp["kind"].as_str().unwrap() {
        "parquet-dir" => {
            let expected = read_expected_parquet(&path)?;
            let ours = ours.to_vec();
            let exp_cols: Vec<String> = expected
                .first()
                .map(|b| {
                    b.schema()
                        .fields()
                        .iter()
                        .map(|f| f.name().clone())
                        .collect()
                })
                .unwrap_or_default();
            let our_cols: Vec<String> = snapshot
                .schema()
                .fields
                .iter()
                .map(|f| f.name.clone())
                .collect();
            if !expected.is_empty() && exp_cols != our_cols {
                return Err(format!("columns {our_cols:?} != expected {exp_cols:?}"));
            }
            let name = exp["path"]
                .as_str()
                .unwrap_or("")
                .split('/')
                .nth(1)
                .unwrap_or("");
            if let Some((_, column, value, theirs, proof)) =
                EXPECTED_DIVERGENCES.iter().find(|d| d.0 == name)
            {
                // Ours must be the log's value, theirs the one the proof explains, in every
                // row; with theirs mapped to ours, every row must then be equal, the
                // diverging column included (so its nulls are compared too).
                for (bs, want, whose) in [(&ours, value, "ours"), (&expected, theirs, "expected")] {
                    for b in bs.iter() {
                        let col = b.column_by_name(column).ok_or("diverging column missing")?;
                        for i in 0..b.num_rows() {
                            let v = common::canon(col.as_ref(), i);
                            if v != **want && v != "∅" {
                                return Err(format!("{whose}: {column} = {v}, not {want}"));
                            }
                        }
                    }
                }
                let column_index = |bs: &[RecordBatch]| {
                    bs.first()
                        .and_then(|b| b.schema().index_of(column).ok())
                        .ok_or("diverging column missing")
                };
                let (oi, ei) = (column_index(&ours)?, column_index(&expected)?);
                let mapped = |bs: &[RecordBatch], at: usize, from: &str, to: &str| {
                    let mut rows = Vec::new();
                    for b in bs {
                        for i in 0..b.num_rows() {
                            let cells: Vec<String> = (0..b.num_columns())
                                .map(|c| {
                                    let v = common::canon(b.column(c).as_ref(), i);
                                    if c == at && v == from {
                                        to.to_string()
                                    } else {
                                        v
                                    }
                                })
                                .collect();
                            rows.push(cells.join(" | "));
                        }
                    }
                    rows.sort();
                    rows
                };
                let a = mapped(&ours, oi, "", "");
                let b = mapped(&expected, ei, theirs, value);
                if a != b {
                    return Err(first_difference(&a, &b));
                }
                return Err(format!(
                    "DIVERGENCE: `{column}` compared as {value} where the expected file holds {theirs}: {proof}"
                ));
            }
            let (a, b) = (common::canon_rows(&ours), common::canon_rows(&expected));
            if a != b {
                return Err(first_difference(&a, &b));
            }
        }
        "arrow-pretty-text" => {
            let batches: Vec<RecordBatch> = match exp.get("projection").and_then(Value::as_array) {
                Some(cols) => {
                    let cols: Vec<&str> = cols.iter().filter_map(Value::as_str).collect();
                    ScanBuilder::new(snapshot.clone())
                        .with_columns(cols)
                        .build()
                        .and_then(|s| s.execute_to_vec())
                        .map_err(|e| format!("projected scan: {e}"))?
                }
                None => ours.to_vec(),
            };
            let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
            let (exp_header, mut exp_rows) = common::pretty_rows(&text);
            let rendered = if batches.is_empty() {
                String::new()
            } else {
                pretty_format_batches(&batches)
                    .map_err(|e| e.to_string())?
                    .to_string()
            };
            let (our_header, mut our_rows) = common::pretty_rows(&rendered);
            if !batches.is_empty() && our_header != exp_header {
                return Err(format!("header {our_header:?} != expected {exp_header:?}"));
            }
            exp_rows.sort();
            our_rows.sort();
            if exp_rows != our_rows {
                let a: Vec<String> = our_rows.iter().map(|r| r.join(" | ")).collect();
                let b: Vec<String> = exp_rows.iter().map(|r| r.join(" | ")).collect();
                return Err(first_difference(&a, &b));
            }
        }
        other => return Err(format!("unknown expected kind {other}")),
    }
    Ok(())
}

fn first_difference(ours: &[String], expected: &[String]) -> String {
    let only_ours: Vec<&String> = ours
        .iter()
        .filter(|r| !expected.contains(r))
        .take(3)
        .collect();
    let only_exp: Vec<&String> = expected
        .iter()
        .filter(|r| !ours.contains(r))
        .take(3)
        .collect();
    format!(
        "rows differ: {} ours vs {} expected; only ours: {only_ours:?}; only expected: {only_exp:?}",
        ours.len(),
        expected.len()
    )
}
