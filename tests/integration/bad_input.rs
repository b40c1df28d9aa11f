//! Bad input never panics and never returns partial data: each case fails with a typed
//! error naming the file, version or feature, or (for damage the protocol lets a reader route
//! around) still loads the right state. SPEC.md §5 and §11.

use crate::common;

use std::fs;
use std::path::Path;

use alluvium::{Error, ScanBuilder, Table, VersionSpec};
use alluvium_txlog::LogError;
use common::{copy_table, count_rows};

fn log(table: &Path, name: &str) -> std::path::PathBuf {
    table.join("_delta_log").join(name)
}

fn snapshot_err(table: &Path) -> Error {
    Table::open(table.to_str().unwrap())
        .unwrap()
        .snapshot()
        .unwrap_err()
}

fn log_err(e: &Error) -> &LogError {
    e.as_log_error()
        .unwrap_or_else(|| panic!("not a log error: {e}"))
}

#[test]
fn missing_delta_log_is_table_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let e = snapshot_err(dir.path());
    assert!(
        matches!(log_err(&e), LogError::TableNotFound { location } if location.contains(dir.path().to_str().unwrap())),
        "{e}"
    );
    // An empty _delta_log, or one with only a hint, is no table either.
    fs::create_dir(dir.path().join("_delta_log")).unwrap();
    fs::write(
        dir.path().join("_delta_log/_last_checkpoint"),
        b"{\"version\":3,\"size\":1}",
    )
    .unwrap();
    assert!(matches!(
        log_err(&snapshot_err(dir.path())),
        LogError::TableNotFound { .. }
    ));
}

#[test]
fn truncated_commit_names_file_and_line() {
    let (_d, t) = copy_table("basic-with-inserts-updates");
    let last = fs::read_dir(t.join("_delta_log"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .max()
        .unwrap();
    let bytes = fs::read(&last).unwrap();
    fs::write(&last, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let e = snapshot_err(&t);
    match log_err(&e) {
        LogError::MalformedCommit { path, line, .. } => {
            assert!(
                path.ends_with(last.file_name().unwrap().to_str().unwrap()),
                "{path}"
            );
            assert!(*line >= 1);
        }
        other => panic!("{other}"),
    }
}

#[test]
fn malformed_action_field_is_an_error_with_its_line() {
    let (_d, t) = copy_table("basic_partitioned");
    let p = log(&t, "00000000000000000001.json");
    let mut text = fs::read_to_string(&p).unwrap();
    text.push_str("{\"add\":{\"path\":\"x.parquet\",\"size\":\"not a number\",\"partitionValues\":{},\"modificationTime\":1,\"dataChange\":true}}\n");
    let lines = text.lines().count();
    fs::write(&p, text).unwrap();
    match log_err(&snapshot_err(&t)) {
        LogError::MalformedCommit { line, .. } => assert_eq!(*line, lines),
        other => panic!("{other}"),
    }
}

#[test]
fn unknown_actions_and_fields_are_ignored() {
    let (_d, t) = copy_table("basic_partitioned");
    let before = count_rows(&t).unwrap();
    let p = log(&t, "00000000000000000001.json");
    let mut text = fs::read_to_string(&p).unwrap();
    text.push_str("{\"someFutureAction\":{\"x\":[1,2,{\"y\":null}]}}\n");
    text = text.replacen(
        "\"dataChange\":true",
        "\"dataChange\":true,\"futureField\":{\"nested\":1}",
        1,
    );
    fs::write(&p, text).unwrap();
    assert_eq!(count_rows(&t).unwrap(), before);
}

#[test]
fn a_gap_after_the_checkpoint_is_refused() {
    let (_d, t) = copy_table("basic-with-checkpoint");
    fs::remove_file(log(&t, "00000000000000000012.json")).unwrap();
    let e = snapshot_err(&t);
    assert!(
        matches!(log_err(&e), LogError::NonContiguousLog { expected: 12, .. }),
        "{e}"
    );
    // Versions before the gap still read.
    let s = Table::open(t.to_str().unwrap())
        .unwrap()
        .snapshot_at(VersionSpec::Version(11))
        .unwrap();
    assert_eq!(s.version(), 11);
}

/// The checkpoint at version 10 damaged in each way a crash or a bad store can leave it:
/// the table still loads at its latest version, from JSON replay, with the same rows.
#[test]
fn corrupt_checkpoints_fall_back_to_json_replay() {
    let (_d, clean) = copy_table("basic-with-checkpoint");
    let expected_rows = count_rows(&clean).unwrap();
    let expected_files = Table::open(clean.to_str().unwrap())
        .unwrap()
        .snapshot()
        .unwrap()
        .num_files();
    type Damage = fn(&[u8]) -> Vec<u8>;
    let damage: [(&str, Damage); 4] = [
        ("empty", |_| Vec::new()),
        ("truncated footer", |b| b[..b.len() - 20].to_vec()),
        ("garbage", |b| vec![0x5a; b.len()]),
        ("flipped footer length", |b| {
            let mut v = b.to_vec();
            let n = v.len();
            v[n - 6] ^= 0xff;
            v
        }),
    ];
    for (what, f) in damage {
        let (_d, t) = copy_table("basic-with-checkpoint");
        let cp = log(&t, "00000000000000000010.checkpoint.parquet");
        let bytes = fs::read(&cp).unwrap();
        fs::write(&cp, f(&bytes)).unwrap();
        let s = Table::open(t.to_str().unwrap())
            .unwrap()
            .snapshot()
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(s.version(), 14, "{what}");
        assert_eq!(s.num_files(), expected_files, "{what}");
        assert_eq!(s.checkpoint_version(), None, "{what}");
        if what != "empty" {
            assert_eq!(
                s.report().skipped_checkpoints.len(),
                1,
                "{what}: {:?}",
                s.report()
            );
        }
        assert_eq!(count_rows(&t).unwrap(), expected_rows, "{what}");
    }
}

#[test]
fn a_corrupt_checkpoint_without_the_commits_before_it_names_the_checkpoint() {
    let (_d, t) = copy_table("basic-with-checkpoint");
    for v in 0..10 {
        fs::remove_file(log(&t, &format!("{v:020}.json"))).unwrap();
    }
    fs::write(
        log(&t, "00000000000000000010.checkpoint.parquet"),
        b"PAR1 not really",
    )
    .unwrap();
    let e = snapshot_err(&t);
    match log_err(&e) {
        LogError::CorruptCheckpoint { path, .. } => assert!(
            path.ends_with("00000000000000000010.checkpoint.parquet"),
            "{path}"
        ),
        other => panic!("{other}"),
    }
}

#[test]
fn incomplete_multi_part_checkpoint_is_skipped() {
    let (_d, t) = copy_table("multi-part-checkpoint");
    let expected = count_rows(&t).unwrap();
    fs::remove_file(log(
        &t,
        "00000000000000000001.checkpoint.0000000002.0000000002.parquet",
    ))
    .unwrap();
    let s = Table::open(t.to_str().unwrap())
        .unwrap()
        .snapshot()
        .unwrap();
    assert_eq!(s.checkpoint_version(), None);
    assert_eq!(count_rows(&t).unwrap(), expected);
}

/// `_last_checkpoint` is a hint: empty, garbage, naming a checkpoint that does not exist,
/// stale, ahead of the log, or with a wrong `parts`, the table loads the same.
#[test]
fn last_checkpoint_hint_is_never_trusted() {
    let (_d, clean) = copy_table("basic-with-checkpoint");
    let expected = count_rows(&clean).unwrap();
    let hints: [&[u8]; 7] = [
        b"",
        b"{not json",
        b"{\"version\":7,\"size\":3}",
        b"{\"version\":2,\"size\":3}",
        b"{\"version\":1000,\"size\":3}",
        b"{\"version\":10,\"size\":24,\"parts\":2}",
        b"{\"version\":-4}",
    ];
    for hint in hints {
        let (_d, t) = copy_table("basic-with-checkpoint");
        fs::write(log(&t, "_last_checkpoint"), hint).unwrap();
        let s = Table::open(t.to_str().unwrap())
            .unwrap()
            .snapshot()
            .unwrap_or_else(|e| panic!("{hint:?}: {e}"));
        assert_eq!(s.version(), 14);
        assert_eq!(
            s.checkpoint_version(),
            Some(10),
            "{}",
            String::from_utf8_lossy(hint)
        );
        assert_eq!(count_rows(&t).unwrap(), expected);
    }
    // And without the hint at all.
    let (_d, t) = copy_table("basic-with-checkpoint");
    fs::remove_file(log(&t, "_last_checkpoint")).unwrap();
    assert_eq!(count_rows(&t).unwrap(), expected);
}

#[test]
fn missing_data_file_is_named() {
    let (_d, t) = copy_table("basic_partitioned");
    let s = Table::open(t.to_str().unwrap())
        .unwrap()
        .snapshot()
        .unwrap();
    let victim = s.files().next().unwrap().path().to_string();
    let decoded = alluvium_txlog::path::percent_decode(&victim).unwrap();
    fs::remove_file(t.join(&decoded)).unwrap();
    let e = ScanBuilder::new(s)
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap_err();
    match log_err(&e) {
        LogError::DataFile { path, reason } => {
            assert_eq!(path, &decoded);
            assert!(reason.contains("missing"), "{reason}");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn paths_escaping_the_table_root_are_never_read() {
    let (_d, t) = copy_table("basic_partitioned");
    fs::write(t.parent().unwrap().join("secret.parquet"), b"outside").unwrap();
    let p = log(&t, "00000000000000000001.json");
    let mut text = fs::read_to_string(&p).unwrap();
    text.push_str("{\"add\":{\"path\":\"../secret.parquet\",\"partitionValues\":{\"letter\":\"z\"},\"size\":7,\"modificationTime\":1,\"dataChange\":true}}\n");
    fs::write(&p, text).unwrap();
    let s = Table::open(t.to_str().unwrap())
        .unwrap()
        .snapshot()
        .unwrap();
    let e = ScanBuilder::new(s)
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap_err();
    assert!(
        matches!(log_err(&e), LogError::InvalidAction { path, .. } if path == "../secret.parquet"),
        "{e}"
    );
}

#[test]
fn invalid_partition_value_is_typed() {
    let (_d, t) = copy_table("delta-0.8.0-numeric-partition");
    let s = Table::open(t.to_str().unwrap())
        .unwrap()
        .snapshot()
        .unwrap();
    let part = s.partition_columns()[0].clone();
    let add = s.files().next().unwrap();
    let p = log(&t, "00000000000000000000.json");
    let text = fs::read_to_string(&p).unwrap();
    let old = format!(
        "\"{part}\":\"{}\"",
        add.partition_values().get(&part).unwrap().unwrap()
    );
    assert!(text.contains(&old), "{old}");
    fs::write(
        &p,
        text.replace(&old, &format!("\"{part}\":\"not-a-number\"")),
    )
    .unwrap();
    let e = count_rows(&t).unwrap_err();
    assert!(
        matches!(log_err(&e), LogError::InvalidPartitionValue { column, .. } if *column == part),
        "{e}"
    );
}

#[test]
fn corrupt_deletion_vector_is_named_and_returns_no_rows() {
    let (_d, t) = copy_table("table-with-dv-small");
    let dv = fs::read_dir(&t)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("deletion_vector_")
        })
        .unwrap();
    let mut bytes = fs::read(&dv).unwrap();
    let n = bytes.len();
    bytes[n - 6] ^= 0x01; // inside the bitmap: the CRC no longer matches
    fs::write(&dv, &bytes).unwrap();
    let e = count_rows(&t).unwrap_err();
    match log_err(&e) {
        LogError::CorruptDeletionVector { location, reason } => {
            assert!(location.contains("deletion_vector_"), "{location}");
            assert!(reason.contains("checksum"), "{reason}");
        }
        other => panic!("{other}"),
    }
    fs::remove_file(&dv).unwrap();
    assert!(count_rows(&t).is_err());
}

#[test]
fn unsupported_reader_feature_fails_closed_before_any_read() {
    let (_d, t) = copy_table("table-with-dv-small");
    let p = log(&t, "00000000000000000001.json");
    let text = fs::read_to_string(&p).unwrap();
    let text = text
        + "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":[\"deletionVectors\",\"futureThing\"],\"writerFeatures\":[\"deletionVectors\",\"futureThing\"]}}\n";
    fs::write(&p, text).unwrap();
    let e = snapshot_err(&t);
    assert!(
        matches!(log_err(&e), LogError::UnsupportedFeature { feature, .. } if feature == "futureThing"),
        "{e}"
    );
}
