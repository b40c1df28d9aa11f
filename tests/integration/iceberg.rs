//! Iceberg metadata beside the Delta log (SPEC.md §38): each synced Delta version's Iceberg
//! snapshot lists exactly that version's files, deletion vectors as position-delete files
//! naming their data file exactly; a re-sync writes nothing; racing syncs agree; the
//! post-commit property syncs and never fails the commit. The Iceberg readers themselves
//! (pyiceberg, DuckDB) are the interop step's `iceberg` case.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use alluvium::{Table, VersionSpec, WriteOptions};
use alluvium_iceberg::manifest::{Content, Status, read_manifest, read_manifest_list};
use alluvium_iceberg::metadata;
use arrow::array::{Array, Int64Array, StringArray};
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::batches::id_batch as batch;

/// v0 create (deletion vectors on), v1 append 0..10, v2 append 10..20, v3 delete id < 5
/// (a DV on the first file), v4 delete id = 7 (the DV grows), v5 delete id >= 10 (a file
/// goes).
fn history(dir: &Path) -> Table {
    let t = Table::open(dir.to_str().unwrap()).unwrap();
    let props = HashMap::from([(
        "delta.enableDeletionVectors".to_string(),
        "true".to_string(),
    )]);
    t.create(&batch(0..0).schema(), &[], &props).unwrap();
    let w = WriteOptions::default();
    t.append([batch(0..10)], &w).unwrap();
    t.append([batch(10..20)], &w).unwrap();
    t
}

fn listing(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir.join("metadata"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// What one Iceberg snapshot holds: live data files (path → sequence number) and live
/// delete files (referenced data file → (delete file path, sequence number)).
#[derive(Debug, Default)]
struct Live {
    data: BTreeMap<String, i64>,
    deletes: BTreeMap<String, (String, i64)>,
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// The live files of every snapshot, by the Delta version it mirrors, read with the
/// crate's own Avro reader.
fn snapshots(dir: &Path) -> BTreeMap<u64, Live> {
    let store = alluvium_storage::LocalFsStore::new(dir);
    let (_, m) = metadata::latest(&store).unwrap().unwrap();
    let mut out = BTreeMap::new();
    for s in m["snapshots"].as_array().unwrap() {
        let v: u64 = s["summary"]["delta-version"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let mut live = Live::default();
        for mf in read_manifest_list(&read(s["manifest-list"].as_str().unwrap())).unwrap() {
            for e in read_manifest(&read(&mf.manifest_path)).unwrap() {
                if e.status == Status::Deleted {
                    continue;
                }
                match e.file.content {
                    Content::Data => {
                        assert!(
                            live.data
                                .insert(e.file.file_path, e.sequence_number)
                                .is_none()
                        );
                    }
                    Content::PositionDeletes => {
                        let target = e.file.referenced_data_file.clone().unwrap();
                        let old = live
                            .deletes
                            .insert(target, (e.file.file_path, e.sequence_number));
                        assert!(old.is_none(), "two delete files for one data file at {v}");
                    }
                }
            }
        }
        out.insert(v, live);
    }
    out
}

/// Positions a position-delete file deletes, with the `file_path` it names.
fn positions(delete_file: &str) -> (BTreeSet<String>, Vec<i64>) {
    let r = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(read(delete_file)))
        .unwrap()
        .build()
        .unwrap();
    let (mut paths, mut pos) = (BTreeSet::new(), Vec::new());
    for b in r {
        let b = b.unwrap();
        let p = b.column(0).as_any().downcast_ref::<StringArray>().unwrap();
        let n = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        paths.extend((0..p.len()).map(|i| p.value(i).to_string()));
        pos.extend(n.values().iter().copied());
    }
    (paths, pos)
}

#[test]
fn each_synced_version_lists_exactly_its_files_with_deletion_vectors_as_position_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let t = history(dir.path());
    let first = t.sync_iceberg().unwrap();
    assert_eq!(
        first.synced_versions,
        vec![2],
        "the first sync mirrors the latest version only"
    );
    let w = WriteOptions::default();
    t.delete_str("id < 5", &w).unwrap();
    t.delete_str("id = 7", &w).unwrap();
    t.delete_str("id >= 10", &w).unwrap();
    let r = t.sync_iceberg().unwrap();
    assert_eq!(r.synced_versions, vec![3, 4, 5]);
    let root = dir.path().canonicalize().unwrap();
    let snaps = snapshots(dir.path());
    assert_eq!(snaps.keys().copied().collect::<Vec<_>>(), vec![2, 3, 4, 5]);
    for (v, live) in &snaps {
        let s = t.snapshot_at(VersionSpec::Version(*v)).unwrap();
        let want: BTreeSet<String> = s
            .files()
            .map(|a| format!("{}/{}", root.display(), a.path()))
            .collect();
        assert_eq!(
            live.data.keys().cloned().collect::<BTreeSet<_>>(),
            want,
            "version {v}"
        );
        let dvs: BTreeMap<String, i64> = s
            .files()
            .filter_map(|a| {
                let dv = a.deletion_vector()?;
                Some((format!("{}/{}", root.display(), a.path()), dv.cardinality))
            })
            .collect();
        assert_eq!(
            live.deletes.keys().cloned().collect::<BTreeSet<_>>(),
            dvs.keys().cloned().collect(),
            "version {v}"
        );
        for (data, (delete_file, seq)) in &live.deletes {
            // Applies to its data file: a sequence number not below the data file's.
            assert!(*seq >= live.data[data], "version {v}");
            let (paths, pos) = positions(delete_file);
            assert_eq!(
                paths,
                BTreeSet::from([data.clone()]),
                "file_path equals the manifest's data path"
            );
            assert_eq!(pos.len() as i64, dvs[data]);
            assert!(pos.windows(2).all(|w| w[0] < w[1]), "positions sorted");
        }
    }
    // The DV grew at version 4: its delete file was replaced, not added beside the old one.
    assert_eq!(snaps[&3].deletes.len(), 1);
    assert_eq!(snaps[&4].deletes.len(), 1);
    let (d3, d4) = (
        snaps[&3].deletes.values().next().unwrap(),
        snaps[&4].deletes.values().next().unwrap(),
    );
    assert_ne!(d3.0, d4.0);
    assert_eq!(positions(&d4.0).1, vec![0, 1, 2, 3, 4, 7]);
    // Data files keep the sequence number of the snapshot that added them.
    let kept: Vec<&String> = snaps[&2]
        .data
        .keys()
        .filter(|p| snaps[&5].data.contains_key(*p))
        .collect();
    assert!(!kept.is_empty());
    for p in kept {
        assert_eq!(snaps[&2].data[p], snaps[&5].data[p]);
    }
}

#[test]
fn a_resync_writes_nothing_and_an_append_rewrites_no_earlier_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let t = history(dir.path());
    t.sync_iceberg().unwrap();
    let before = listing(dir.path());
    let again = t.sync_iceberg().unwrap();
    assert!(again.synced_versions.is_empty() && again.metadata_version.is_none());
    assert_eq!(listing(dir.path()), before, "a re-sync changed metadata/");
    t.append([batch(20..30)], &WriteOptions::default()).unwrap();
    t.sync_iceberg().unwrap();
    let after = listing(dir.path());
    for (name, bytes) in &before {
        if name != "version-hint.text" {
            assert_eq!(after.get(name), Some(bytes), "{name} was rewritten");
        }
    }
    // The new snapshot's list names the old manifest as it was.
    let store = alluvium_storage::LocalFsStore::new(dir.path());
    let (_, m) = metadata::latest(&store).unwrap().unwrap();
    let lists: Vec<_> = m["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| read_manifest_list(&read(s["manifest-list"].as_str().unwrap())).unwrap())
        .collect();
    assert!(
        lists[1]
            .iter()
            .any(|mf| mf.manifest_path == lists[0][0].manifest_path)
    );
    assert_eq!(lists[1].len(), 2);
}

#[test]
fn racing_syncs_both_succeed_and_mirror_each_version_once() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let t = Arc::new(history(dir.path()));
        t.sync_iceberg_at(VersionSpec::Version(1)).unwrap();
        for i in 0..4 {
            t.append([batch(100 * i..100 * i + 3)], &WriteOptions::default())
                .unwrap();
        }
        let handles: Vec<_> = (0..3)
            .map(|k| {
                let loc = dir.path().to_str().unwrap().to_string();
                std::thread::spawn(move || {
                    let t = Table::open(&loc).unwrap();
                    // One syncs to the middle first, so the racers build different states.
                    if k == 0 {
                        t.sync_iceberg_at(VersionSpec::Version(4)).unwrap();
                    }
                    t.sync_iceberg().unwrap()
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let snaps = snapshots(dir.path());
        assert_eq!(
            snaps.keys().copied().collect::<Vec<_>>(),
            (1..=6).collect::<Vec<_>>(),
            "round {round}"
        );
        assert_eq!(snaps[&6].data.len(), t.snapshot().unwrap().num_files());
    }
}

/// Appends and returns the commit summary (these appends carry no appId, so they commit).
trait AppendCommitted {
    fn append_committed<const N: usize>(
        &self,
        batches: [arrow::record_batch::RecordBatch; N],
        w: &WriteOptions,
    ) -> alluvium::CommitSummary;
}

impl AppendCommitted for Table {
    fn append_committed<const N: usize>(
        &self,
        batches: [arrow::record_batch::RecordBatch; N],
        w: &WriteOptions,
    ) -> alluvium::CommitSummary {
        self.append(batches, w).unwrap().report().unwrap().clone()
    }
}

#[test]
fn the_sync_property_syncs_after_each_commit_and_its_failure_never_fails_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    let props = HashMap::from([(
        alluvium::ICEBERG_SYNC_PROPERTY.to_string(),
        "true".to_string(),
    )]);
    t.create(&batch(0..0).schema(), &[], &props).unwrap();
    let s = t.append_committed([batch(0..3)], &WriteOptions::default());
    let report = s
        .iceberg_sync
        .clone()
        .expect("the property asks for a sync")
        .unwrap();
    assert_eq!(report.synced_versions, vec![1]);
    // A hint naming a metadata file that does not exist: the sync fails, the commit stands.
    std::fs::write(dir.path().join("metadata/version-hint.text"), "99").unwrap();
    let s = t.append_committed([batch(3..6)], &WriteOptions::default());
    assert_eq!(s.version, 2);
    let err = s.iceberg_sync.clone().unwrap().unwrap_err();
    assert!(err.to_string().contains("version-hint.text"), "{err}");
    // Repaired, the next sync catches up on both versions.
    std::fs::write(dir.path().join("metadata/version-hint.text"), "1").unwrap();
    let s = t.append_committed([batch(6..9)], &WriteOptions::default());
    assert_eq!(
        s.iceberg_sync.clone().unwrap().unwrap().synced_versions,
        vec![2, 3]
    );
    // Without the property, commits do not sync.
    let plain = tempfile::tempdir().unwrap();
    let p = Table::open(plain.path().to_str().unwrap()).unwrap();
    p.create(
        &batch(0..0).schema(),
        &[],
        &HashMap::<String, String>::new(),
    )
    .unwrap();
    assert!(
        p.append_committed([batch(0..3)], &WriteOptions::default())
            .iceberg_sync
            .is_none()
    );
    assert!(!plain.path().join("metadata").exists());
}

#[test]
fn metadata_of_another_table_is_refused_by_name() {
    let a = tempfile::tempdir().unwrap();
    let t = history(a.path());
    t.sync_iceberg().unwrap();
    let b = tempfile::tempdir().unwrap();
    let u = history(b.path());
    std::fs::remove_dir_all(b.path().join("metadata")).ok();
    std::fs::create_dir(b.path().join("metadata")).unwrap();
    for (name, bytes) in listing(a.path()) {
        std::fs::write(b.path().join("metadata").join(name), bytes).unwrap();
    }
    let e = u.sync_iceberg().unwrap_err();
    assert_eq!(e.kind(), alluvium::ErrorKind::Corrupt);
    assert!(
        e.to_string().contains("v1.metadata.json") && e.to_string().contains("belongs to table"),
        "{e}"
    );
}

/// Every live data entry of the current Iceberg snapshot: (file path, record count,
/// partition tuple).
fn current_entries(dir: &Path) -> Vec<(String, i64, Vec<alluvium_iceberg::avro::Datum>)> {
    let store = alluvium_storage::LocalFsStore::new(dir);
    let (_, m) = metadata::latest(&store).unwrap().unwrap();
    let current = m["current-snapshot-id"].as_i64();
    let s = m["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["snapshot-id"].as_i64() == current)
        .unwrap();
    let files =
        alluvium_iceberg::tree::snapshot_files(&store, m["location"].as_str().unwrap(), s).unwrap();
    files
        .manifests
        .into_iter()
        .flat_map(|(_, e)| e)
        .filter(|e| e.status != Status::Deleted && e.file.content == Content::Data)
        .map(|e| (e.file.file_path, e.file.record_count, e.file.partition))
        .collect()
}

#[test]
fn files_without_statistics_count_their_rows_from_the_parquet_footer() {
    // Delta 0.8.0 wrote no statistics; readers skip a file whose record_count is 0.
    let (_d, path) = crate::common::copy_table("delta-0.8.0-special-partition");
    let t = Table::open(path.to_str().unwrap()).unwrap();
    t.sync_iceberg().unwrap();
    let entries = current_entries(&path);
    assert!(!entries.is_empty());
    let total: i64 = entries.iter().map(|(_, n, _)| n).sum();
    assert_eq!(
        total as usize,
        crate::common::canon_rows(
            &alluvium::ScanBuilder::new(t.snapshot().unwrap())
                .build()
                .unwrap()
                .execute_to_vec()
                .unwrap()
        )
        .len()
    );
    assert!(entries.iter().all(|(_, n, _)| *n > 0));
}

#[test]
fn column_mapped_partition_values_are_found_by_their_physical_name() {
    // Delta keys partitionValues by the physical name in a column-mapped table.
    let (_d, path) = crate::common::copy_table("dv-with-columnmapping");
    let t = Table::open(path.to_str().unwrap()).unwrap();
    t.sync_iceberg().unwrap();
    let entries = current_entries(&path);
    assert!(!entries.is_empty());
    for (file, _, partition) in &entries {
        assert!(
            partition
                .iter()
                .all(|d| matches!(d, alluvium_iceberg::avro::Datum::Union(1, _))),
            "{file}: null partition value {partition:?}"
        );
    }
}

#[test]
fn a_delta_table_id_that_is_not_a_uuid_gets_a_stable_uuid() {
    // Spark test tables carry ids like `testId`; Iceberg readers refuse a non-UUID table-uuid.
    let (_d, path) = crate::common::copy_table("data-reader-primitives");
    let t = Table::open(path.to_str().unwrap()).unwrap();
    assert!(!t.snapshot().unwrap().metadata().id.contains('-'));
    t.sync_iceberg().unwrap();
    let store = alluvium_storage::LocalFsStore::new(&path);
    let (_, m) = metadata::latest(&store).unwrap().unwrap();
    let uuid = m["table-uuid"].as_str().unwrap().to_string();
    let groups: Vec<usize> = uuid.split('-').map(str::len).collect();
    assert_eq!(groups, vec![8, 4, 4, 4, 12], "{uuid}");
    // Stable: the next sync accepts its own metadata.
    t.sync_iceberg().unwrap();
}

#[test]
fn vacuum_keeps_iceberg_files_and_expires_the_snapshots_it_made_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let t = history(dir.path());
    t.sync_iceberg().unwrap();
    t.delete_str("id < 5", &WriteOptions::default()).unwrap();
    t.sync_iceberg().unwrap();
    t.overwrite([batch(100..103)], None, &WriteOptions::default())
        .unwrap();
    t.sync_iceberg().unwrap();
    let before = listing(dir.path());
    let far = t.snapshot().unwrap().timestamp_ms() + 1_000 * 3_600_000;
    let options = alluvium::VacuumOptions::default()
        .with_retention_hours(0.0)
        .with_force(true)
        .with_now_ms(far);
    // The maintenance layer alone: a full VACUUM never lists metadata/ beside Iceberg
    // metadata (its files are referenced by Iceberg, not by the Delta log).
    let dry = alluvium_compaction::vacuum(
        &crate::mvcc(&t.snapshot().unwrap()),
        &options.clone().with_dry_run(true),
    )
    .unwrap();
    assert!(!dry.deleted.is_empty(), "the old data files are candidates");
    assert!(
        dry.deleted
            .iter()
            .all(|p| !p.as_str().starts_with("metadata/")),
        "{:?}",
        dry.deleted
    );
    // The facade: VACUUM, then the Iceberg snapshots of versions below the oldest protected
    // one are expired and the files only they referenced deleted.
    let r = t.vacuum(&options).unwrap();
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert_eq!(r.iceberg_snapshots_expired, 2);
    let after = listing(dir.path());
    let gone: Vec<&String> = before.keys().filter(|k| !after.contains_key(*k)).collect();
    assert!(
        gone.iter().any(|n| n.starts_with("dv-")),
        "the old delete file goes: {gone:?}"
    );
    assert!(
        gone.iter()
            .all(|n| !n.ends_with(".metadata.json") && *n != "version-hint.text")
    );
    // What is left reads: the remaining snapshot's files all exist, and it mirrors v4.
    let snaps = snapshots(dir.path());
    assert_eq!(snaps.keys().copied().collect::<Vec<_>>(), vec![4]);
    for p in snaps[&4].data.keys() {
        assert!(Path::new(p).exists(), "{p}");
    }
    // And the next sync continues from it.
    // (VACUUM's START and END commits are versions 5 and 6.)
    t.append([batch(7..8)], &WriteOptions::default()).unwrap();
    assert_eq!(t.sync_iceberg().unwrap().synced_versions, vec![5, 6, 7]);
}

#[test]
fn verify_deep_compares_the_iceberg_metadata_with_the_log() {
    use alluvium::{FindingKind, VerifyOptions};
    let dir = tempfile::tempdir().unwrap();
    let t = history(dir.path());
    t.delete_str("id < 5", &WriteOptions::default()).unwrap();
    t.sync_iceberg().unwrap();
    // Versions committed after the sync are not the metadata's business.
    t.append([batch(50..53)], &WriteOptions::default()).unwrap();
    let deep = VerifyOptions::default().with_deep(true);
    let clean = t.verify(&deep).unwrap();
    assert!(clean.is_clean(), "{:?}", clean.findings);
    // A lost position-delete file: Iceberg readers would return the deleted rows.
    let dv = listing(dir.path())
        .into_keys()
        .find(|n| n.starts_with("dv-"))
        .unwrap();
    std::fs::remove_file(dir.path().join("metadata").join(&dv)).unwrap();
    let r = t.verify(&deep).unwrap();
    let found: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::IcebergMismatch)
        .collect();
    assert_eq!(found.len(), 1, "{:?}", r.findings);
    assert!(found[0].location.contains(&dv), "{}", found[0]);
    // Not without --deep.
    assert!(t.verify(&VerifyOptions::default()).unwrap().is_clean());
}

#[test]
fn types_iceberg_v2_cannot_hold_are_refused_naming_the_column_and_nothing_is_written() {
    for (table, column) in [
        ("unshredded-variant", "v"),
        ("table-with-geo", ""),
        ("void-column", ""),
    ] {
        let (_d, path) = crate::common::copy_table(table);
        let t = Table::open(path.to_str().unwrap()).unwrap();
        let e = t.sync_iceberg().unwrap_err();
        assert_eq!(e.kind(), alluvium::ErrorKind::Unsupported, "{table}: {e}");
        let text = e.to_string();
        assert!(
            text.contains("Iceberg v2 cannot hold") && text.contains(&format!("`{column}")),
            "{table}: {text}"
        );
        assert!(
            !path.join("metadata").exists(),
            "{table}: nothing is written"
        );
    }
}

#[test]
fn a_sync_from_a_held_snapshot_writes_what_a_plain_sync_writes() {
    // One table, its metadata synced at version 2; two more commits; then the same sync
    // twice from that metadata: plainly, and from the snapshot a writer held at version 2
    // (the post-commit path, which applies only the new commits). Same files, same bytes.
    let dir = tempfile::tempdir().unwrap();
    let t = history(dir.path());
    t.sync_iceberg().unwrap();
    let at_two = listing(dir.path());
    let held = crate::mvcc(&t.snapshot().unwrap());
    t.delete_str("id < 3", &WriteOptions::default()).unwrap();
    t.append([batch(40..45)], &WriteOptions::default()).unwrap();
    let restore = |files: &BTreeMap<String, Vec<u8>>| {
        std::fs::remove_dir_all(dir.path().join("metadata")).unwrap();
        std::fs::create_dir(dir.path().join("metadata")).unwrap();
        for (name, bytes) in files {
            std::fs::write(dir.path().join("metadata").join(name), bytes).unwrap();
        }
    };
    let plain = alluvium_iceberg::sync(t.store().clone(), VersionSpec::Latest).unwrap();
    let after_plain = listing(dir.path());
    restore(&at_two);
    let from = alluvium_iceberg::sync_from(t.store().clone(), VersionSpec::Version(4), Some(&held))
        .unwrap();
    assert_eq!(plain.synced_versions, vec![3, 4]);
    assert_eq!(from.synced_versions, plain.synced_versions);
    assert_eq!(listing(dir.path()), after_plain);
}

#[test]
fn each_snapshot_summary_totals_its_live_files() {
    // total-records is carried from the parent's summary (not re-parsed from every file's
    // statistics): it must still equal the live data entries' record counts.
    let dir = tempfile::tempdir().unwrap();
    let t = history(dir.path());
    t.sync_iceberg().unwrap();
    let w = WriteOptions::default();
    t.delete_str("id < 5", &w).unwrap();
    t.append([batch(30..37)], &w).unwrap();
    t.overwrite([batch(100..104)], None, &w).unwrap();
    t.append([batch(7..9)], &w).unwrap();
    t.sync_iceberg().unwrap();
    let store = alluvium_storage::LocalFsStore::new(dir.path());
    let (_, m) = metadata::latest(&store).unwrap().unwrap();
    let location = m["location"].as_str().unwrap().to_string();
    for s in m["snapshots"].as_array().unwrap() {
        let files = alluvium_iceberg::tree::snapshot_files(&store, &location, s).unwrap();
        let (mut records, mut data, mut deletes) = (0i64, 0usize, 0usize);
        for e in files.manifests.iter().flat_map(|(_, e)| e) {
            match (e.status, e.file.content) {
                (Status::Deleted, _) => {}
                (_, Content::Data) => {
                    records += e.file.record_count;
                    data += 1;
                }
                (_, Content::PositionDeletes) => deletes += 1,
            }
        }
        let summary = &s["summary"];
        let v = summary["delta-version"].as_str().unwrap();
        assert_eq!(
            summary["total-records"].as_str().unwrap(),
            records.to_string(),
            "version {v}"
        );
        assert_eq!(
            summary["total-data-files"].as_str().unwrap(),
            data.to_string(),
            "version {v}"
        );
        assert_eq!(
            summary["total-delete-files"].as_str().unwrap(),
            deletes.to_string(),
            "version {v}"
        );
    }
}

#[test]
fn a_post_commit_sync_loads_no_snapshot_from_the_checkpoint() {
    // The sync after a commit starts from the snapshot the writer held (a blind append's
    // cached one, taken before a group publishes): it applies only the new commit.
    for grouped in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Table::open(dir.path().to_str().unwrap()).unwrap();
        if !grouped {
            t = t.with_group_commit(alluvium::GroupCommitOptions::default().with_enabled(false));
        }
        let props = HashMap::from([
            (
                alluvium::ICEBERG_SYNC_PROPERTY.to_string(),
                "true".to_string(),
            ),
            ("delta.checkpointInterval".to_string(), "2".to_string()),
        ]);
        t.create(&batch(0..0).schema(), &[], &props).unwrap();
        for i in 0..5 {
            let s = t
                .append([batch(i * 10..i * 10 + 3)], &WriteOptions::default())
                .unwrap();
            let r = s.report().unwrap().iceberg_sync.clone().unwrap().unwrap();
            assert_eq!(r.synced_versions, vec![i as u64 + 1], "grouped {grouped}");
            if i > 0 {
                assert_eq!(
                    r.snapshots_loaded, 0,
                    "grouped {grouped}, append {i}: {r:?}"
                );
            }
        }
        let d = t.delete_str("id = 1", &WriteOptions::default()).unwrap();
        let r = d.report().unwrap().iceberg_sync.clone().unwrap().unwrap();
        assert_eq!(
            (r.synced_versions.clone(), r.snapshots_loaded),
            (vec![6], 0),
            "{r:?}"
        );
    }
}

#[test]
fn widenings_iceberg_cannot_promote_are_refused_and_the_others_sync() {
    use alluvium_txlog::schema::PrimitiveType;
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    let schema = Arc::new(arrow::datatypes::Schema::new(vec![
        arrow::datatypes::Field::new("a", arrow::datatypes::DataType::Int32, true),
        arrow::datatypes::Field::new("b", arrow::datatypes::DataType::Int32, true),
    ]));
    t.create(&schema, &[], alluvium::NO_PROPERTIES).unwrap();
    t.sync_iceberg().unwrap();
    // int to long: an Iceberg promotion; the field keeps its id in a new schema.
    t.change_column_type("a", PrimitiveType::Long).unwrap();
    assert_eq!(t.sync_iceberg().unwrap().synced_versions, vec![1]);
    let store = alluvium_storage::LocalFsStore::new(dir.path());
    let (_, m) = metadata::latest(&store).unwrap().unwrap();
    let schemas = m["schemas"].as_array().unwrap();
    assert_eq!(schemas.len(), 2);
    assert_eq!(schemas[1]["fields"][0]["id"], schemas[0]["fields"][0]["id"]);
    assert_eq!(schemas[1]["fields"][0]["type"], "long");
    // int to double: Delta widens, Iceberg v2 cannot promote.
    t.change_column_type("b", PrimitiveType::Double).unwrap();
    let e = t.sync_iceberg().unwrap_err();
    assert_eq!(e.kind(), alluvium::ErrorKind::Unsupported);
    assert!(
        e.to_string()
            .contains("column `b` changed from int to double"),
        "{e}"
    );
    assert_eq!(
        alluvium_iceberg::synced_versions(&store)
            .unwrap()
            .into_keys()
            .max(),
        Some(1)
    );
}

#[test]
fn counters_out_of_range_in_the_metadata_are_refused_not_overflowed() {
    // The metadata file is the table's bytes: a counter at the end of its range must not
    // make the next sync's increment overflow.
    for (key, value) in [
        ("last-sequence-number", serde_json::json!(i64::MAX)),
        ("last-column-id", serde_json::json!(i64::MAX)),
        ("last-partition-id", serde_json::json!(-5)),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let t = history(dir.path());
        t.sync_iceberg().unwrap();
        let file = dir.path().join("metadata/v1.metadata.json");
        let mut m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        m[key] = value;
        std::fs::write(&file, serde_json::to_vec(&m).unwrap()).unwrap();
        t.append([batch(90..91)], &WriteOptions::default()).unwrap();
        let e = t.sync_iceberg().unwrap_err();
        assert_eq!(e.kind(), alluvium::ErrorKind::Corrupt, "{key}: {e}");
        assert!(
            e.to_string().contains(key) && e.to_string().contains("v1.metadata.json"),
            "{e}"
        );
    }
}

#[test]
fn optimize_and_clustering_changes_sync_after_their_commits() {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    let props = HashMap::from([(
        alluvium::ICEBERG_SYNC_PROPERTY.to_string(),
        "true".to_string(),
    )]);
    t.create(&batch(0..0).schema(), &[], &props).unwrap();
    for i in 0..4 {
        t.append([batch(i * 10..i * 10 + 3)], &WriteOptions::default())
            .unwrap();
    }
    // OPTIMIZE: one sync, after its last commit, covering every version it committed.
    let o = t.optimize(&alluvium::OptimizeOptions::default()).unwrap();
    let (last, post) = o.post_commits.last().unwrap();
    let r = post.iceberg_sync.clone().unwrap().unwrap();
    assert_eq!(r.synced_versions.last(), Some(last));
    assert_eq!(r.data_files, 1);
    assert!(
        o.post_commits[..o.post_commits.len() - 1]
            .iter()
            .all(|(_, p)| p.iceberg_sync.is_none())
    );
    // A clustering change is a commit like any other.
    let c = t.cluster_by(&["id"]).unwrap();
    let r = c.iceberg_sync.clone().unwrap().unwrap();
    assert_eq!(r.synced_versions, vec![c.version]);
}
