//! `verify` against the damage of the second hostile round: each case is damage every read
//! of the table (or of its change feed) trips over, which `verify` must report, or a
//! healthy table it must not call damaged:
//! * a deletion vector naming rows past the end of its data file;
//! * a change-data file missing, cut short or corrupt;
//! * a table schema without columns;
//! * a log compaction cut at a line boundary (whole-looking, rows lost): reported while
//!   its commits exist, and readers then replay the commits instead;
//! * a classic and a multi-part checkpoint of one version side by side (a rerun, or a killed
//!   `checkpoint`): healthy.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use alluvium::{FindingKind, ScanBuilder, Table, VersionSpec, WriteOptions};
use alluvium_compaction::CheckpointConfig;
use alluvium_txlog::dv::inline_descriptor;
use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use roaring::RoaringTreemap;

use crate::verify_fixture::{built, commit, kinds, log, run_verify};

fn ids(range: std::ops::Range<i64>) -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("v", DataType::Int64, true),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values(range.clone())) as ArrayRef,
            Arc::new(Int64Array::from_iter_values(range.map(|i| i * 10))),
        ],
    )
    .unwrap()
}

/// A local table with `props`, created at version 0, then one append per id range
/// `(start, end)`.
fn local(root: &Path, props: &[(&str, &str)], appends: &[(i64, i64)]) -> Table {
    let t = Table::open(root.to_str().unwrap()).unwrap();
    let props: HashMap<String, String> = props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    t.create(&ids(0..0).schema(), &[], &props).unwrap();
    for &(start, end) in appends {
        t.append([ids(start..end)], &WriteOptions::default())
            .unwrap();
    }
    t
}

/// Rewrites every line of commit `v` with `f` (the parsed action).
fn rewrite_commit(root: &Path, v: u64, f: impl Fn(&mut serde_json::Value)) {
    let path = commit(root, v);
    let text = std::fs::read_to_string(&path).unwrap();
    let out: String = text
        .lines()
        .map(|l| {
            let mut j: serde_json::Value = serde_json::from_str(l).unwrap();
            f(&mut j);
            format!("{j}\n")
        })
        .collect();
    std::fs::write(&path, out).unwrap();
}

fn scan_ids(root: &Path) -> alluvium::Result<Vec<i64>> {
    let t = Table::open(root.to_str().unwrap()).unwrap();
    let batches = ScanBuilder::new(t.snapshot()?)
        .with_columns(["id"])
        .build()?
        .execute_to_vec()?;
    let mut out: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let c = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            (0..c.len()).map(|i| c.value(i)).collect::<Vec<_>>()
        })
        .collect();
    out.sort_unstable();
    Ok(out)
}

fn findings_of(root: &Path, deep: bool) -> BTreeSet<FindingKind> {
    kinds(&run_verify(root, None, deep))
}

#[test]
fn a_deletion_vector_naming_rows_past_the_end_of_its_file_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    local(
        &root,
        &[("delta.enableDeletionVectors", "true")],
        &[(0, 3), (10, 13)],
    );
    assert!(run_verify(&root, None, true).is_clean());
    // Rows 1 and 7 of a 3-row file.
    let bitmap = RoaringTreemap::from_iter([1u64, 7]);
    let dv = serde_json::to_value(inline_descriptor(&bitmap)).unwrap();
    rewrite_commit(&root, 1, |j| {
        if let Some(add) = j.get_mut("add") {
            add["deletionVector"] = dv.clone();
        }
    });
    assert!(scan_ids(&root).is_err(), "a read must reject the file");
    for deep in [false, true] {
        let found = findings_of(&root, deep);
        assert!(
            found.contains(&FindingKind::DeletionVectorOutOfRange),
            "deep {deep}: {found:?}"
        );
    }
    // Without statistics only the deep check (which reads the file) can tell.
    rewrite_commit(&root, 1, |j| {
        if let Some(add) = j.get_mut("add") {
            add.as_object_mut().unwrap().remove("stats");
        }
    });
    assert!(findings_of(&root, true).contains(&FindingKind::DeletionVectorOutOfRange));
}

/// A CDF table whose version 2 (a copy-on-write UPDATE) wrote one change-data file.
fn cdf_table(root: &Path) -> std::path::PathBuf {
    let t = local(root, &[("delta.enableChangeDataFeed", "true")], &[(0, 4)]);
    t.update_str("v = v + 1", Some("id = 2"), &WriteOptions::default())
        .unwrap();
    let text = std::fs::read_to_string(commit(root, 2)).unwrap();
    let cdc: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let j: serde_json::Value = serde_json::from_str(l).unwrap();
            j.get("cdc")
                .map(|c| c["path"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(cdc.len(), 1, "{text}");
    root.join(&cdc[0])
}

fn feed(root: &Path) -> alluvium::Result<usize> {
    let t = Table::open(root.to_str().unwrap()).unwrap();
    let batches = t.changes(VersionSpec::Version(2), None).execute_to_vec()?;
    Ok(batches.iter().map(RecordBatch::num_rows).sum())
}

#[test]
fn missing_cut_or_corrupt_change_data_files_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    let cdc = cdf_table(&root);
    assert_eq!(feed(&root).unwrap(), 2);
    assert!(run_verify(&root, None, true).is_clean());
    let whole = std::fs::read(&cdc).unwrap();

    std::fs::remove_file(&cdc).unwrap();
    assert!(feed(&root).is_err());
    for deep in [false, true] {
        let found = findings_of(&root, deep);
        assert!(
            found.contains(&FindingKind::MissingChangeDataFile),
            "deep {deep}: {found:?}"
        );
    }

    std::fs::write(&cdc, &whole[..whole.len() / 2]).unwrap();
    assert!(feed(&root).is_err());
    for deep in [false, true] {
        let found = findings_of(&root, deep);
        assert!(
            found.contains(&FindingKind::CorruptChangeDataFile),
            "deep {deep}: {found:?}"
        );
    }

    // The same size, garbage inside: only reading it tells.
    let mut garbage = whole.clone();
    for b in &mut garbage[4..whole.len() - 8] {
        *b = 0x55;
    }
    std::fs::write(&cdc, &garbage).unwrap();
    assert!(feed(&root).is_err());
    assert!(findings_of(&root, true).contains(&FindingKind::CorruptChangeDataFile));
}

#[test]
fn a_schema_without_columns_is_found_and_reads_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    local(&root, &[], &[(0, 3)]);
    rewrite_commit(&root, 0, |j| {
        if let Some(m) = j.get_mut("metaData") {
            m["schemaString"] = r#"{"type":"struct","fields":[]}"#.into();
        }
    });
    let e = scan_ids(&root).unwrap_err();
    assert!(e.to_string().contains("no columns"), "{e}");
    for deep in [false, true] {
        let found = findings_of(&root, deep);
        assert!(
            found.contains(&FindingKind::InvalidSchema),
            "deep {deep}: {found:?}"
        );
    }
}

/// The lines of commits `x..=y` without commitInfo: a whole compaction of an append-only
/// table.
fn compaction_lines(root: &Path, x: u64, y: u64) -> Vec<String> {
    (x..=y)
        .flat_map(|v| {
            std::fs::read_to_string(commit(root, v))
                .unwrap()
                .lines()
                .filter(|l| !l.starts_with("{\"commitInfo\""))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn a_compaction_cut_at_a_line_boundary_is_found_and_readers_prefer_the_commits() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    local(&root, &[], &[(0, 2), (2, 3), (3, 5), (5, 6)]);
    let all: Vec<i64> = (0..6).collect();
    let lines = compaction_lines(&root, 1, 3);
    let name = log(&root, &format!("{:020}.{:020}.compacted.json", 1, 3));
    let write = |lines: &[String]| {
        std::fs::write(
            &name,
            lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
        )
        .unwrap()
    };
    write(&lines);
    let snap = Table::open(root.to_str().unwrap())
        .unwrap()
        .snapshot()
        .unwrap();
    assert_eq!(snap.report().compactions_read, 1, "{:?}", snap.report());
    assert_eq!(scan_ids(&root).unwrap(), all);
    assert!(run_verify(&root, None, true).is_clean());

    // Cut after its first line: every line that is left is whole.
    write(&lines[..1]);
    let snap = Table::open(root.to_str().unwrap())
        .unwrap()
        .snapshot()
        .unwrap();
    assert_eq!(snap.report().compactions_read, 0, "{:?}", snap.report());
    assert_eq!(snap.report().skipped_compactions.len(), 1);
    assert_eq!(scan_ids(&root).unwrap(), all);
    for deep in [false, true] {
        let found = findings_of(&root, deep);
        assert!(
            found.contains(&FindingKind::CompactionMismatch),
            "deep {deep}: {found:?}"
        );
    }
    // A compaction that cannot even be parsed is reported too (readers skip it as well).
    std::fs::write(&name, "{\"add\": {").unwrap();
    assert_eq!(scan_ids(&root).unwrap(), all);
    assert!(findings_of(&root, false).contains(&FindingKind::UnreadableCompaction));
}

#[test]
fn a_classic_and_a_multi_part_checkpoint_of_one_version_verify_clean() {
    for multi_first in [false, true] {
        let (_dir, root) = built();
        let t = Table::open(root.to_str().unwrap()).unwrap();
        let classic = CheckpointConfig::default();
        let multi = CheckpointConfig::default().with_part_size(2);
        let (first, second) = match multi_first {
            true => (&multi, &classic),
            false => (&classic, &multi),
        };
        t.checkpoint(first).unwrap();
        t.checkpoint(second).unwrap();
        let report = run_verify(&root, None, true);
        assert!(
            report.is_clean(),
            "multi first {multi_first}: {:?}",
            report.findings
        );
    }
    // A killed multi-part rerun: the classic checkpoint and some parts of a multi-part one.
    let (_dir, root) = built();
    let t = Table::open(root.to_str().unwrap()).unwrap();
    t.checkpoint(&CheckpointConfig::default()).unwrap();
    let hint = std::fs::read(log(&root, "_last_checkpoint")).unwrap();
    let out = t
        .checkpoint(&CheckpointConfig::default().with_part_size(2))
        .unwrap();
    assert!(out.files.len() > 1);
    std::fs::remove_file(root.join(out.files[0].as_str())).unwrap();
    std::fs::write(log(&root, "_last_checkpoint"), hint).unwrap();
    let report = run_verify(&root, None, true);
    assert!(report.is_clean(), "killed rerun: {:?}", report.findings);
}

/// A classic and a multi-part checkpoint of one version that do not hold the same state
/// are damage even though readers here read only the multi-part one (the preferred form):
/// another engine may prefer the other. A non-preferred form that cannot be read is
/// damage too. Both are named by their file.
#[test]
fn a_classic_checkpoint_that_disagrees_with_the_multi_part_one_is_found() {
    let classic_name = "00000000000000000004.checkpoint.parquet";
    for damage in ["a part", "garbage"] {
        let (_dir, root) = built();
        let t = Table::open(root.to_str().unwrap()).unwrap();
        let all = scan_ids(&root).unwrap();
        t.checkpoint(&CheckpointConfig::default()).unwrap();
        let out = t
            .checkpoint(&CheckpointConfig::default().with_part_size(2))
            .unwrap();
        assert!(out.files.len() > 1);
        let classic = log(&root, classic_name);
        match damage {
            // A whole Parquet checkpoint file holding only some of the actions.
            "a part" => std::fs::copy(root.join(out.files[0].as_str()), &classic).map(|_| ()),
            _ => std::fs::write(&classic, b"not a parquet file"),
        }
        .unwrap();
        // Readers use the multi-part checkpoint, so the table still reads whole.
        assert_eq!(scan_ids(&root).unwrap(), all, "{damage}");
        let report = run_verify(&root, None, false);
        let expected = match damage {
            "a part" => FindingKind::CheckpointMismatch,
            _ => FindingKind::UnreadableCheckpoint,
        };
        assert!(
            report
                .findings
                .iter()
                .any(|f| f.kind == expected && f.location.ends_with(classic_name)),
            "{damage}: {:?}",
            report.findings
        );
    }
}

/// Statistics that are impossible on their face (a negative `numRecords`, a `nullCount`
/// above `numRecords` or below zero) are found without reading the data: a reader that
/// trusts them counts or skips wrongly.
#[test]
fn impossible_statistics_are_found_without_deep() {
    for (what, edit) in [
        ("negative numRecords", r#"{"numRecords":-5}"#),
        (
            "nullCount above numRecords",
            r#"{"numRecords":3,"nullCount":{"id":4}}"#,
        ),
        (
            "negative nullCount",
            r#"{"numRecords":3,"nullCount":{"v":-1}}"#,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("t");
        local(&root, &[], &[(0, 3), (10, 13)]);
        assert!(run_verify(&root, None, false).is_clean());
        rewrite_commit(&root, 1, |j| {
            if let Some(add) = j.get_mut("add") {
                add["stats"] = edit.into();
            }
        });
        let report = run_verify(&root, None, false);
        assert!(
            report
                .findings
                .iter()
                .any(|f| f.kind == FindingKind::ImpossibleStats && f.location.ends_with(".parquet")),
            "{what}: {:?}",
            report.findings
        );
    }
}

/// A partition value that is not a value of its column's type, or that is missing, fails
/// every read of the column; the log alone shows it, so `verify` finds it without `--deep`.
#[test]
fn a_partition_value_reads_refuse_is_found_without_deep() {
    for damage in ["not a long", "missing"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("t");
        let t = Table::open(root.to_str().unwrap()).unwrap();
        t.create(
            &ids(0..0).schema(),
            &["v".to_string()],
            alluvium::NO_PROPERTIES,
        )
        .unwrap();
        t.append([ids(0..2)], &WriteOptions::default()).unwrap();
        assert!(run_verify(&root, None, false).is_clean());
        rewrite_commit(&root, 1, |j| {
            if let Some(add) = j.get_mut("add") {
                add["partitionValues"] = match damage {
                    "missing" => serde_json::json!({}),
                    _ => serde_json::json!({"v": "abc"}),
                };
            }
        });
        let t = Table::open(root.to_str().unwrap()).unwrap();
        let read = ScanBuilder::new(t.snapshot().unwrap())
            .build()
            .and_then(|s| s.execute_to_vec());
        assert!(read.is_err(), "{damage}: a read of every column must fail");
        let report = run_verify(&root, None, false);
        assert!(
            report
                .findings
                .iter()
                .any(|f| f.kind == FindingKind::InvalidPartitionValue
                    && f.location.ends_with(".parquet")
                    && f.detail.contains("`v`")),
            "{damage}: {:?}",
            report.findings
        );
    }
}

/// `--deep` reads every data file, with statistics or without: a file of the right size
/// whose bytes are not Parquet fails every read, and only reading it shows that.
#[test]
fn deep_reads_files_without_statistics_too() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    local(&root, &[], &[(0, 3)]);
    rewrite_commit(&root, 1, |j| {
        if let Some(add) = j.get_mut("add") {
            add.as_object_mut().unwrap().remove("stats");
        }
    });
    let data = Table::open(root.to_str().unwrap())
        .unwrap()
        .snapshot()
        .unwrap()
        .files()
        .map(|a| root.join(a.path()))
        .next()
        .unwrap();
    let size = std::fs::metadata(&data).unwrap().len() as usize;
    std::fs::write(&data, vec![b'x'; size]).unwrap();
    assert!(scan_ids(&root).is_err(), "a read must fail");
    assert!(findings_of(&root, false).is_empty());
    let report = run_verify(&root, None, true);
    assert!(
        kinds(&report).contains(&FindingKind::UnreadableDataFile),
        "{:?}",
        report.findings
    );
}

/// When the checkpoint form readers prefer (the multi-part one) cannot be read and the
/// commits below it are gone, readers use another complete form of the same version (the
/// classic one) rather than failing: the table reads whole, every time, and `verify` names
/// the unreadable part.
#[test]
fn readers_fall_back_to_another_form_of_the_version_when_the_preferred_one_is_unreadable() {
    let (_dir, root) = built();
    let t = Table::open(root.to_str().unwrap()).unwrap();
    let all = scan_ids(&root).unwrap();
    t.checkpoint(&CheckpointConfig::default()).unwrap();
    let out = t
        .checkpoint(&CheckpointConfig::default().with_part_size(2))
        .unwrap();
    assert!(out.files.len() > 1);
    let part = root.join(out.files[0].as_str());
    std::fs::write(&part, b"not a parquet file").unwrap();
    for v in 0..4 {
        std::fs::remove_file(commit(&root, v)).unwrap();
    }
    for _ in 0..2 {
        assert_eq!(scan_ids(&root).unwrap(), all);
    }
    let report = run_verify(&root, None, false);
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.kind == FindingKind::UnreadableCheckpoint
                && f.location
                    .ends_with(out.files[0].as_str().rsplit('/').next().unwrap())),
        "{:?}",
        report.findings
    );
}
