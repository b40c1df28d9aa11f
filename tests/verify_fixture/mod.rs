//! A table built for `verify` tests (versions 0 to 4 with a checkpoint of version 2) and the
//! hand-made damages each finding kind must report; shared by the library's `verify` tests
//! and the `alluvium verify` tests of the CLI package.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use alluvium::{FindingKind, Table, VerifyOptions, VerifyReport, WriteOptions};
use alluvium_compaction::CheckpointConfig;
use arrow::array::{Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

pub fn run_verify(root: &Path, version: Option<u64>, deep: bool) -> VerifyReport {
    Table::open(root.to_str().unwrap())
        .unwrap()
        .verify(
            &VerifyOptions::default()
                .with_version(version)
                .with_deep(deep),
        )
        .unwrap()
}

pub fn kinds(r: &VerifyReport) -> BTreeSet<FindingKind> {
    r.findings.iter().map(|f| f.kind).collect()
}

pub fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
    ]))
}

pub fn batch(ids: &[i64]) -> RecordBatch {
    let names: Vec<String> = ids.iter().map(|i| format!("n{i}")).collect();
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(ids.to_vec())),
            Arc::new(StringArray::from(names)),
        ],
    )
    .unwrap()
}

/// Versions 0 (create) to 4 (appends), with a checkpoint of version 2 and its
/// `_last_checkpoint`.
pub fn build(table: &Table) {
    table
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    for v in 1..=4i64 {
        table
            .append([batch(&[v * 10, v * 10 + 1])], &WriteOptions::default())
            .unwrap();
        if v == 2 {
            table.checkpoint(&CheckpointConfig::default()).unwrap();
        }
    }
}

pub fn built() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    build(&Table::open(root.to_str().unwrap()).unwrap());
    (dir, root)
}

pub fn log(root: &Path, name: &str) -> PathBuf {
    root.join("_delta_log").join(name)
}

pub fn commit(root: &Path, v: u64) -> PathBuf {
    log(root, &format!("{v:020}.json"))
}

/// A live data file of the latest version (the first in path order).
pub fn data_file(root: &Path) -> PathBuf {
    let snapshot = Table::open(root.to_str().unwrap())
        .unwrap()
        .snapshot()
        .unwrap();
    let mut paths: Vec<String> = snapshot.files().map(|a| a.path().to_string()).collect();
    paths.sort();
    root.join(&paths[0])
}

/// Each kind of damage to a built table, the finding kind it must produce, and whether
/// only `--deep` sees it.
pub type Damage = (&'static str, fn(&Path), FindingKind, bool);

pub fn damages() -> Vec<Damage> {
    vec![
        (
            "commit 3 deleted",
            |r| std::fs::remove_file(commit(r, 3)).unwrap(),
            FindingKind::NonContiguousLog,
            false,
        ),
        (
            "commit 3 garbage",
            |r| std::fs::write(commit(r, 3), "{not json\n").unwrap(),
            FindingKind::UnreadableCommit,
            false,
        ),
        (
            "commit 3 truncated",
            |r| {
                let text = std::fs::read(commit(r, 3)).unwrap();
                std::fs::write(commit(r, 3), &text[..text.len() / 2]).unwrap();
            },
            FindingKind::UnreadableCommit,
            false,
        ),
        (
            "checkpoint overwritten with random bytes",
            |r| {
                std::fs::write(
                    log(r, &format!("{:020}.checkpoint.parquet", 2)),
                    [7u8; 4096],
                )
                .unwrap();
            },
            FindingKind::UnreadableCheckpoint,
            false,
        ),
        (
            "checkpoint of version 2 holds version 1's state",
            |r| {
                // A classic checkpoint does not name its version: version 1's, renamed, is
                // readable but lacks the file version 2 added.
                let t = Table::open(r.to_str().unwrap()).unwrap();
                let s1 = t.snapshot_at(alluvium::VersionSpec::Version(1)).unwrap();
                alluvium_compaction::checkpoint(&(&s1).into(), &CheckpointConfig::default(), 0)
                    .unwrap();
                std::fs::rename(
                    log(r, &format!("{:020}.checkpoint.parquet", 1)),
                    log(r, &format!("{:020}.checkpoint.parquet", 2)),
                )
                .unwrap();
            },
            FindingKind::CheckpointMismatch,
            false,
        ),
        (
            "_last_checkpoint beyond the log",
            |r| {
                std::fs::write(log(r, "_last_checkpoint"), r#"{"version":9,"size":4}"#).unwrap();
            },
            FindingKind::LastCheckpoint,
            false,
        ),
        (
            "_last_checkpoint names a missing checkpoint",
            |r| {
                std::fs::write(log(r, "_last_checkpoint"), r#"{"version":3,"size":4}"#).unwrap();
            },
            FindingKind::LastCheckpoint,
            false,
        ),
        (
            "_last_checkpoint with a wrong action count",
            |r| {
                std::fs::write(log(r, "_last_checkpoint"), r#"{"version":2,"size":40}"#).unwrap();
            },
            FindingKind::LastCheckpoint,
            false,
        ),
        (
            "_last_checkpoint with a wrong byte size",
            |r| {
                std::fs::write(
                    log(r, "_last_checkpoint"),
                    r#"{"version":2,"sizeInBytes":1}"#,
                )
                .unwrap();
            },
            FindingKind::LastCheckpoint,
            false,
        ),
        (
            "_last_checkpoint with a wrong part count",
            |r| {
                std::fs::write(log(r, "_last_checkpoint"), r#"{"version":2,"parts":3}"#).unwrap();
            },
            FindingKind::LastCheckpoint,
            false,
        ),
        (
            "_last_checkpoint larger than readers read (a valid hint padded with spaces)",
            |r| {
                let path = log(r, "_last_checkpoint");
                let mut hint = std::fs::read(&path).unwrap();
                hint.resize(hint.len() + 64 * 1024, b' ');
                std::fs::write(path, hint).unwrap();
            },
            FindingKind::LastCheckpoint,
            false,
        ),
        (
            "_last_checkpoint with a wrong checksum",
            |r| {
                std::fs::write(
                    log(r, "_last_checkpoint"),
                    r#"{"version":2,"checksum":"00"}"#,
                )
                .unwrap();
            },
            FindingKind::LastCheckpoint,
            false,
        ),
        (
            "_last_checkpoint not JSON",
            |r| {
                std::fs::write(log(r, "_last_checkpoint"), "garbage").unwrap();
            },
            FindingKind::LastCheckpoint,
            false,
        ),
        (
            "data file deleted",
            |r| std::fs::remove_file(data_file(r)).unwrap(),
            FindingKind::MissingFile,
            false,
        ),
        (
            "data file grown",
            |r| {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(data_file(r))
                    .unwrap();
                f.write_all(b"extra").unwrap();
            },
            FindingKind::FileSizeMismatch,
            false,
        ),
        (
            "data file replaced by a directory",
            |r| {
                let f = data_file(r);
                std::fs::remove_file(&f).unwrap();
                std::fs::create_dir(&f).unwrap();
            },
            FindingKind::NotRegularFile,
            false,
        ),
        (
            "data file replaced by a FIFO",
            |r| {
                let f = data_file(r);
                std::fs::remove_file(&f).unwrap();
                assert!(Command::new("mkfifo").arg(&f).status().unwrap().success());
            },
            FindingKind::NotRegularFile,
            false,
        ),
        (
            "numRecords wrong",
            |r| edit(&commit(r, 3), r#"\"numRecords\":2"#, r#"\"numRecords\":3"#),
            FindingKind::StatsMismatch,
            true,
        ),
        (
            "minValues above the data",
            |r| {
                edit(
                    &commit(r, 3),
                    r#"\"minValues\":{\"id\":30"#,
                    r#"\"minValues\":{\"id\":31"#,
                )
            },
            FindingKind::StatsMismatch,
            true,
        ),
        (
            "maxValues below the data",
            |r| {
                edit(
                    &commit(r, 3),
                    r#"\"maxValues\":{\"id\":31"#,
                    r#"\"maxValues\":{\"id\":30"#,
                )
            },
            FindingKind::StatsMismatch,
            true,
        ),
        (
            "nullCount wrong",
            |r| {
                edit(
                    &commit(r, 3),
                    r#"\"nullCount\":{\"id\":0"#,
                    r#"\"nullCount\":{\"id\":1"#,
                )
            },
            FindingKind::StatsMismatch,
            true,
        ),
    ]
}

/// Replaces `from` (which must occur) by `to` in a file.
pub fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.contains(from),
        "{from} not in {}: {text}",
        path.display()
    );
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}
