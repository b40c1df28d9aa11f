//! Hostile tables against maintenance and writes (SPEC.md §10, issue classes 1-4 and 10):
//! generated path spellings and symbolic-link placements, corrupt checkpoints, unsupported
//! writer features and abandoned temporary files, on the local and in-memory stores where
//! they apply. Every case asserts the typed error or the exact rows, and that nothing in
//! the sandbox outside the table root changed.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use alluvium::{ScanBuilder, Table, VersionSpec, WriteOptions};
use alluvium_compaction::CheckpointConfig;
use alluvium_compaction::optimize::OptimizeOptions;
use alluvium_compaction::vacuum::{VacuumMode, VacuumOptions};
use alluvium_storage::{InMemoryStore, LocalFsStore, ObjectStore, StorePath, StoreRef};
use alluvium_txlog::actions::{Action, Remove};
use alluvium_txlog::log_path::commit_path;
use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

const DAY_MS: i64 = 86_400_000;
const HOUR: Duration = Duration::from_secs(3600);

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("x", DataType::Int64, true),
        Field::new("p", DataType::Utf8, true),
    ]))
}

fn batch(rows: &[(i64, &str)]) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            )) as ArrayRef,
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

fn create(store: StoreRef, props: &[(&str, &str)]) -> Table {
    let t = Table::from_store(store);
    let props: HashMap<String, String> = props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    t.create(&schema(), &["p".into()], &props).unwrap();
    t
}

fn append(t: &Table, rows: &[(i64, &str)]) {
    t.append([batch(rows)], &WriteOptions::default()).unwrap();
}

fn rows(t: &Table) -> Vec<(i64, String)> {
    let batches = ScanBuilder::new(t.snapshot_at(VersionSpec::Latest).unwrap())
        .with_columns(["x", "p"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let mut out = Vec::new();
    for b in &batches {
        let x = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let p = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        for i in 0..b.num_rows() {
            out.push((x.value(i), p.value(i).to_string()));
        }
    }
    out.sort();
    out
}

/// Every object of a store with its bytes: what "nothing changed" compares.
fn contents(store: &dyn ObjectStore) -> BTreeMap<String, Vec<u8>> {
    store
        .list_tree(None)
        .unwrap()
        .into_iter()
        .map(|m| {
            let bytes = store.get(&m.path).unwrap().to_vec();
            (m.path.to_string(), bytes)
        })
        .collect()
}

/// A sandbox directory holding the table root `t` and whatever hostile surroundings a case
/// builds around it.
struct Sandbox {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(base.join("t")).unwrap();
        fs::create_dir_all(base.join("outside")).unwrap();
        fs::write(base.join("outside/victim.parquet"), b"not yours").unwrap();
        Sandbox { _dir: dir, base }
    }

    fn root(&self) -> PathBuf {
        self.base.join("t")
    }

    fn store(&self) -> StoreRef {
        Arc::new(LocalFsStore::new(self.root()).with_durability(false))
    }

    /// Everything in the sandbox outside the table root: kind, bytes or link target. Links
    /// are recorded, never followed.
    fn outside(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let mut stack = vec![self.base.clone()];
        while let Some(dir) = stack.pop() {
            for e in fs::read_dir(&dir).unwrap() {
                let path = e.unwrap().path();
                if path == self.root() {
                    continue;
                }
                let shown = path.strip_prefix(&self.base).unwrap().display().to_string();
                let md = fs::symlink_metadata(&path).unwrap();
                let what = if md.file_type().is_symlink() {
                    format!("link {}", fs::read_link(&path).unwrap().display())
                } else if md.is_dir() {
                    stack.push(path.clone());
                    "dir".to_string()
                } else {
                    format!("file {:?}", fs::read(&path).unwrap())
                };
                out.insert(shown, what);
            }
        }
        out
    }
}

fn link(target: impl AsRef<Path>, at: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, at).unwrap();
}

/// The one live file of partition `p` in the latest version.
fn file_of(t: &Table, p: &str) -> String {
    let files: Vec<String> = t
        .snapshot()
        .unwrap()
        .files()
        .filter(|f| f.path().starts_with(&format!("p={p}/")))
        .map(|f| f.path().to_string())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

/// Commits, by hand, a version that renames the reference to live file `from` into `to`
/// (the same file for a reader that resolves `to`, as another engine may write it).
fn respell(t: &Table, from: &str, to: &str) {
    let snapshot = t.snapshot().unwrap();
    let add = snapshot
        .files()
        .find(|f| f.path() == from)
        .unwrap()
        .to_add();
    let now = t.store().now_ms();
    let remove = Remove::from_add(&add, now, false);
    let mut moved = add.clone();
    moved.path = to.to_string();
    moved.data_change = false;
    let text = [Action::Remove(remove), Action::Add(moved)]
        .iter()
        .map(|a| serde_json::to_string(a).unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    t.store()
        .put_if_absent(&commit_path(snapshot.version() + 1), text.into())
        .unwrap();
}

/// Commits, by hand, a tombstone for `path` (which no version ever added).
fn tombstone(t: &Table, path: &str) {
    let v = t.snapshot().unwrap().version() + 1;
    let text = format!(
        r#"{{"remove":{{"path":"{path}","deletionTimestamp":1,"dataChange":true,"size":9}}}}"#
    );
    t.store()
        .put_if_absent(&commit_path(v), text.into())
        .unwrap();
}

fn vacuum_now(t: &Table, mode: VacuumMode) -> alluvium_compaction::VacuumReport {
    t.vacuum(
        &VacuumOptions::default()
            .with_retention_hours(0.0)
            .with_force(true)
            .with_mode(mode),
    )
    .unwrap()
}

/// Class 1: VACUUM never deletes a file a retained version reads, however its reference
/// is spelled. Each variant names the live file of partition `a` differently; the reader
/// resolves every spelling to the same file, and so must VACUUM.
#[test]
fn vacuum_keeps_files_named_by_any_spelling_of_their_location() {
    type Spell = fn(&Sandbox, &str) -> String;
    let variants: &[(&str, Spell)] = &[
        ("double slash after the root", |s, f| {
            format!("file://{}//{f}", s.root().display())
        }),
        ("dot segment", |s, f| {
            format!("file://{}/./{f}", s.root().display())
        }),
        ("dot-dot segment", |s, f| {
            format!("file://{}/p=a/../{f}", s.root().display())
        }),
        ("double slash inside", |s, f| {
            format!("file://{}/{}", s.root().display(), f.replace('/', "//"))
        }),
        ("file: without authority", |s, f| {
            format!("file:{}/./{f}", s.root().display())
        }),
        ("bare absolute path", |s, f| {
            format!("{}//{f}", s.root().display())
        }),
        ("linked root", |s, f| {
            link("t", s.base.join("alias"));
            format!("file://{}/alias/{f}", s.base.display())
        }),
        ("linked directory outside the root", |s, f| {
            fs::create_dir_all(s.base.join("elsewhere")).unwrap();
            link("../t/p=a", s.base.join("elsewhere/into"));
            let name = f.rsplit('/').next().unwrap();
            format!("file://{}/elsewhere/into/{name}", s.base.display())
        }),
        ("relative path through a link inside the root", |s, f| {
            link("p=a", s.root().join("via"));
            let name = f.rsplit('/').next().unwrap();
            format!("via/{name}")
        }),
    ];
    for (name, spell) in variants {
        for mode in [VacuumMode::Full, VacuumMode::Lite] {
            let s = Sandbox::new();
            let t = create(s.store(), &[]);
            append(&t, &[(1, "a"), (2, "a")]);
            append(&t, &[(3, "b")]);
            let f = file_of(&t, "a");
            let spelled = spell(&s, &f);
            respell(&t, &f, &spelled);
            let expected = vec![(1, "a".into()), (2, "a".into()), (3, "b".into())];
            assert_eq!(rows(&t), expected, "{name}: the reader resolves {spelled}");
            let outside = s.outside();
            let r = vacuum_now(&t, mode);
            assert!(
                !r.deleted.iter().any(|p| p.as_str() == f),
                "{name} ({mode:?}): VACUUM deleted {f}, read as {spelled}"
            );
            assert!(s.root().join(&f).is_file(), "{name} ({mode:?})");
            assert_eq!(rows(&t), expected, "{name} ({mode:?})");
            assert_eq!(s.outside(), outside, "{name} ({mode:?})");
        }
    }
}

/// Class 1, unresolvable: a reference through a link loop cannot be resolved, so VACUUM
/// fails before deleting anything (an orphan it would otherwise delete stays).
#[test]
fn vacuum_deletes_nothing_when_a_reference_cannot_be_resolved() {
    for mode in [VacuumMode::Full, VacuumMode::Lite] {
        let s = Sandbox::new();
        let t = create(s.store(), &[]);
        append(&t, &[(1, "a")]);
        let f = file_of(&t, "a");
        link("loop", s.root().join("loop"));
        respell(&t, &f, "loop/x.parquet");
        // Something VACUUM would delete if it ran: the file the respelling unreferenced.
        let outside = s.outside();
        let e = t
            .vacuum(
                &VacuumOptions::default()
                    .with_retention_hours(0.0)
                    .with_force(true)
                    .with_mode(mode),
            )
            .unwrap_err();
        assert!(e.to_string().contains("loop"), "{mode:?}: {e}");
        assert!(s.root().join(&f).is_file(), "{mode:?}");
        assert_eq!(s.outside(), outside);
    }
}

/// Class 1 on the in-memory store: lexical spellings of its root protect the object too.
#[test]
fn vacuum_on_memory_keeps_objects_named_by_any_spelling() {
    for spell in [
        "memory:///{f}",
        "memory:////{f}",
        "memory:///./{f}",
        "memory:///p=a/../{f}",
        "memory:///x/../{f}",
    ] {
        for mode in [VacuumMode::Full, VacuumMode::Lite] {
            let store = Arc::new(InMemoryStore::new().with_manual_clock(1_700_000_000_000));
            let t = create(store.clone(), &[]);
            append(&t, &[(1, "a")]);
            let f = file_of(&t, "a");
            respell(&t, &f, &spell.replace("{f}", &f));
            store.advance_clock(DAY_MS);
            let r = vacuum_now(&t, mode);
            assert!(r.deleted.is_empty(), "{spell} ({mode:?}): {:?}", r.deleted);
            assert!(store.head(&StorePath::parse(&f).unwrap()).is_ok());
        }
    }
}

/// Class 2: a tombstone through a linked directory never deletes outside the root; the
/// delete is refused (a failed delete naming the link), the outside file stays.
#[test]
fn vacuum_never_deletes_through_a_linked_directory() {
    let placements: &[(&str, &str, bool)] = &[
        ("evil", "evil/victim.parquet", false),
        ("evil", "evil/victim.parquet", true),
        ("p=a/evil", "p=a/evil/victim.parquet", false),
        ("p=z", "p=z/victim.parquet", true),
    ];
    for (at, tomb, absolute) in placements {
        for mode in [VacuumMode::Lite, VacuumMode::Full] {
            let s = Sandbox::new();
            let t = create(s.store(), &[]);
            append(&t, &[(1, "a")]);
            let target = if *absolute {
                s.base.join("outside")
            } else {
                let depth = at.matches('/').count() + 1;
                PathBuf::from(format!("{}outside", "../".repeat(depth)))
            };
            link(&target, s.root().join(at));
            assert!(s.root().join(tomb).is_file(), "{at}: the link resolves");
            tombstone(&t, tomb);
            let outside = s.outside();
            let r = vacuum_now(&t, mode);
            assert_eq!(s.outside(), outside, "{at} -> {target:?} ({mode:?})");
            if mode == VacuumMode::Lite {
                assert!(
                    r.failed.iter().any(|e| e.contains("symbolic link")),
                    "{at} ({mode:?}): {:?}",
                    r.failed
                );
            }
            assert_eq!(rows(&t), vec![(1, "a".into())]);
        }
    }
}

/// Class 2: a tombstone naming the log or a hidden file is never a VACUUM LITE candidate
/// (the same paths a full listing skips): a hostile `remove` of a commit file must not
/// delete the table's history.
#[test]
fn vacuum_lite_never_deletes_the_log_or_hidden_files_named_by_tombstones() {
    let s = Sandbox::new();
    let t = create(s.store(), &[]);
    append(&t, &[(1, "a")]);
    fs::create_dir_all(s.root().join("_scratch")).unwrap();
    fs::write(s.root().join("_scratch/x.parquet"), b"x").unwrap();
    fs::write(s.root().join(".hidden.parquet"), b"x").unwrap();
    let named = [
        "_delta_log/00000000000000000000.json",
        "_delta_log/00000000000000000001.json",
        "_scratch/x.parquet",
        ".hidden.parquet",
    ];
    for path in named {
        tombstone(&t, path);
    }
    let r = vacuum_now(&t, VacuumMode::Lite);
    assert!(r.deleted.is_empty(), "{:?}", r.deleted);
    for path in named {
        assert!(s.root().join(path).is_file(), "{path}");
    }
    assert_eq!(rows(&t), vec![(1, "a".into())]);
}

/// Class 2: data is never written through a linked partition directory (relative or
/// absolute link, new or replacing an existing directory), and the write fails with the
/// typed error.
#[test]
fn writes_never_go_through_a_linked_partition_directory() {
    for (absolute, replaced) in [(false, false), (true, false), (false, true), (true, true)] {
        let s = Sandbox::new();
        let t = create(s.store(), &[]);
        append(&t, &[(1, "a")]);
        let dir = if replaced { "p=a" } else { "p=b" };
        if replaced {
            // A partition directory that exists for real, replaced by a link.
            fs::rename(s.root().join("p=a"), s.base.join("moved")).unwrap();
        }
        let target = if absolute {
            s.base.join("outside")
        } else {
            PathBuf::from("../outside")
        };
        link(&target, s.root().join(dir));
        let before = s.outside();
        let value = dir.trim_start_matches("p=");
        let e = t
            .append([batch(&[(7, value)])], &WriteOptions::default())
            .unwrap_err();
        assert!(
            matches!(
                &e,
                alluvium::Error::Storage(alluvium_storage::StorageError::InvalidPath { .. })
            ) && e.to_string().contains("symbolic link"),
            "{dir} -> {target:?}: {e}"
        );
        assert_eq!(s.outside(), before, "{dir} -> {target:?}");
    }
}

/// Corrupts the checkpoint file of `version` in place, in one of several ways.
fn corrupt(store: &dyn ObjectStore, version: u64, how: usize) {
    let listing = store
        .list_dir_from(Some(&StorePath::parse("_delta_log").unwrap()), "")
        .unwrap();
    let cp = listing
        .iter()
        .find(|m| {
            m.path
                .file_name()
                .starts_with(&format!("{version:020}.checkpoint"))
        })
        .unwrap();
    let good = store.get(&cp.path).unwrap().to_vec();
    let bad: Vec<u8> = match how {
        0 => (0..good.len()).map(|i| (i * 131 % 251) as u8).collect(),
        1 => good[..good.len() / 2].to_vec(),
        _ => good[..good.len() - 9].to_vec(),
    };
    store.put(&cp.path, bad.into()).unwrap();
}

/// Sets the modification time of every log file back by `by` (local stores, whose clock
/// is the system's).
fn age_log(root: &Path, by: Duration) {
    for e in fs::read_dir(root.join("_delta_log")).unwrap() {
        let path = e.unwrap().path();
        if path.is_file() {
            let f = fs::File::options().write(true).open(&path).unwrap();
            f.set_modified(SystemTime::now() - by).unwrap();
        }
    }
}

/// Class 3: log cleanup anchors only on a checkpoint that reads back whole. With the newest
/// expired checkpoint corrupt, the older good one anchors (the commits it needs stay and
/// every row is still readable); with all of them corrupt, nothing is deleted.
#[test]
fn log_cleanup_anchors_only_on_a_checkpoint_that_reads_back() {
    let props = [
        ("delta.checkpointInterval", "3"),
        ("delta.logRetentionDuration", "interval 1 days"),
        ("delta.enableExpiredLogCleanup", "false"),
    ];
    for local in [false, true] {
        for how in 0..3 {
            for both in [false, true] {
                let case = format!("local={local} corruption={how} both={both}");
                let s = Sandbox::new();
                let memory = Arc::new(InMemoryStore::new().with_manual_clock(1_700_000_000_000));
                let store: StoreRef = if local { s.store() } else { memory.clone() };
                let t = create(store.clone(), &props);
                for i in 0..7 {
                    append(&t, &[(i, "a")]);
                }
                let expected = rows(&t);
                if local {
                    age_log(&s.root(), Duration::from_secs(3 * 86_400));
                } else {
                    memory.advance_clock(3 * DAY_MS);
                }
                corrupt(store.as_ref(), 6, how);
                if both {
                    corrupt(store.as_ref(), 3, how);
                }
                let before = contents(store.as_ref());
                let r = t.cleanup_log(false).unwrap();
                if both {
                    assert_eq!(r.anchor, None, "{case}");
                    assert!(r.deleted.is_empty(), "{case}: {:?}", r.deleted);
                    assert_eq!(contents(store.as_ref()), before, "{case}");
                } else {
                    assert_eq!(r.anchor, Some(3), "{case}");
                    for v in 0..3 {
                        assert!(
                            r.deleted.contains(&commit_path(v)),
                            "{case}: {:?}",
                            r.deleted
                        );
                    }
                    for v in 3..=7 {
                        assert!(store.head(&commit_path(v)).is_ok(), "{case}: commit {v}");
                    }
                }
                // A reader starting afresh (the corrupt checkpoint is the newest) still
                // reads every row.
                assert_eq!(rows(&Table::from_store(store.clone())), expected, "{case}");
            }
        }
    }
}

/// Class 4: every operation that writes or deletes refuses a table with an unsupported
/// writer feature before touching anything, through the library API, on the in-memory and
/// the local store (where nothing outside the table root may change either).
#[test]
fn every_writing_operation_refuses_unsupported_writer_features() {
    for local in [false, true] {
        let s = Sandbox::new();
        let memory = Arc::new(InMemoryStore::new().with_manual_clock(1_700_000_000_000));
        let store: StoreRef = if local { s.store() } else { memory.clone() };
        let t = create(
            store.clone(),
            &[("delta.logRetentionDuration", "interval 1 days")],
        );
        for i in 0..4 {
            append(&t, &[(i, "a")]);
        }
        t.checkpoint(&CheckpointConfig::default()).unwrap();
        let protocol = r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["aFeatureFromTheFuture"]}}"#;
        let v = t.snapshot().unwrap().version() + 1;
        store
            .put_if_absent(&commit_path(v), format!("{protocol}\n").into())
            .unwrap();
        store
            .put(
                &StorePath::parse("p=a/orphan.parquet").unwrap(),
                vec![1u8; 4].into(),
            )
            .unwrap();
        if local {
            age_log(&s.root(), Duration::from_secs(40 * 86_400));
        } else {
            memory.advance_clock(40 * DAY_MS);
        }
        let expected = rows(&t);
        let before = contents(store.as_ref());
        let outside = s.outside();
        type Op<'a> = Box<dyn Fn() -> Result<(), alluvium::Error> + 'a>;
        let ops: Vec<(&str, Op)> = vec![
            (
                "checkpoint",
                Box::new(|| t.checkpoint(&CheckpointConfig::default()).map(|_| ())),
            ),
            ("cleanup-log", Box::new(|| t.cleanup_log(false).map(|_| ()))),
            (
                "optimize",
                Box::new(|| t.optimize(&OptimizeOptions::default()).map(|_| ())),
            ),
            (
                "vacuum",
                Box::new(|| {
                    t.vacuum(
                        &VacuumOptions::default()
                            .with_retention_hours(0.0)
                            .with_force(true),
                    )
                    .map(|_| ())
                }),
            ),
            (
                "append",
                Box::new(|| {
                    t.append([batch(&[(9, "a")])], &WriteOptions::default())
                        .map(|_| ())
                }),
            ),
            (
                "overwrite",
                Box::new(|| {
                    t.overwrite_str([batch(&[(9, "a")])], None, &WriteOptions::default())
                        .map(|_| ())
                }),
            ),
            (
                "replaceWhere",
                Box::new(|| {
                    t.overwrite_str(
                        [batch(&[(9, "a")])],
                        Some("x = 9"),
                        &WriteOptions::default(),
                    )
                    .map(|_| ())
                }),
            ),
            (
                "delete",
                Box::new(|| t.delete_str("x = 1", &WriteOptions::default()).map(|_| ())),
            ),
            (
                "update",
                Box::new(|| {
                    t.update_str("x = x + 1", Some("x = 1"), &WriteOptions::default())
                        .map(|_| ())
                }),
            ),
            (
                "merge",
                Box::new(|| {
                    t.merge([batch(&[(1, "a"), (99, "a")])], "t.x = s.x")
                        .when("MATCHED THEN UPDATE SET *")
                        .when("NOT MATCHED THEN INSERT *")
                        .execute(&WriteOptions::default())
                        .map(|_| ())
                }),
            ),
            (
                "alter",
                Box::new(|| {
                    t.set_properties([("delta.appendOnly", "true")], &[])
                        .map(|_| ())
                }),
            ),
            (
                "transaction",
                Box::new(|| {
                    let mut txn = t.transaction("WRITE")?;
                    let adds = txn.write_files([batch(&[(9, "a")])])?;
                    txn.add_files(adds);
                    txn.commit().map(|_| ())
                }),
            ),
        ];
        for (name, op) in ops {
            let e = op().unwrap_err();
            assert!(
                e.to_string().contains("aFeatureFromTheFuture"),
                "{name} (local={local}): {e}"
            );
            assert_eq!(
                contents(store.as_ref()),
                before,
                "{name} (local={local}) touched the table"
            );
            assert_eq!(s.outside(), outside, "{name} (local={local})");
        }
        assert_eq!(rows(&t), expected);
    }
}

const TEMP_ID: &str = "0123456789abcdef0123456789abcdef";

/// Class 10: VACUUM removes the temporary files killed writers left (in data, partition
/// and log directories) once older than the retention, and nothing younger, nor files that
/// merely look alike.
#[test]
fn vacuum_removes_abandoned_temporary_files_older_than_the_retention() {
    let old = [
        format!(".part-0.parquet.{TEMP_ID}.tmp"),
        format!("p=a/.part-1.parquet.{TEMP_ID}.tmp"),
        format!("_delta_log/.00000000000000000009.json.{TEMP_ID}.tmp"),
    ];
    let young = [format!("p=a/.part-2.parquet.{TEMP_ID}.tmp")];
    // Six days old: younger than the default retention (7 days), so kept: the threshold is
    // the retention, not some shorter age of its own.
    let almost = format!(".part-6.parquet.{TEMP_ID}.tmp");
    let kept = [
        "p=a/.part-3.parquet.tmp".to_string(),
        format!("_hidden/.part-4.parquet.{TEMP_ID}.tmp"),
        "p=a/.part-5.parquet.crc".to_string(),
    ];
    for local in [false, true] {
        let s = Sandbox::new();
        let memory = Arc::new(InMemoryStore::new().with_manual_clock(1_700_000_000_000));
        let store: StoreRef = if local { s.store() } else { memory.clone() };
        let t = create(store.clone(), &[]);
        append(&t, &[(1, "a")]);
        let put = |p: &str| {
            store
                .put(&StorePath::parse(p).unwrap(), vec![7u8; 3].into())
                .unwrap()
        };
        for p in old.iter().chain(&kept) {
            put(p);
        }
        if local {
            for p in old.iter().chain(&kept) {
                let f = fs::File::options()
                    .write(true)
                    .open(s.root().join(p))
                    .unwrap();
                f.set_modified(SystemTime::now() - 8 * 24 * HOUR).unwrap();
            }
            // The table's own files are old too: only the temporary files are at stake.
            age_log(&s.root(), 8 * 24 * HOUR);
            put(&almost);
            let f = fs::File::options()
                .write(true)
                .open(s.root().join(&almost))
                .unwrap();
            f.set_modified(SystemTime::now() - 6 * 24 * HOUR).unwrap();
        } else {
            memory.advance_clock(2 * DAY_MS);
            put(&almost);
            memory.advance_clock(6 * DAY_MS);
        }
        for p in &young {
            put(p);
        }
        let outside = s.outside();
        let r = t.vacuum(&VacuumOptions::default()).unwrap();
        let deleted: Vec<&str> = r.deleted.iter().map(|p| p.as_str()).collect();
        let mut expected: Vec<&str> = old.iter().map(String::as_str).collect();
        expected.sort();
        assert_eq!(deleted, expected, "local={local}");
        assert!(r.failed.is_empty(), "{:?}", r.failed);
        for p in young.iter().chain(&kept).chain([&almost]) {
            assert!(
                store.head(&StorePath::parse(p).unwrap()).is_ok(),
                "local={local}: {p} must stay"
            );
        }
        for p in &old {
            assert!(store.head(&StorePath::parse(p).unwrap()).is_err(), "{p}");
        }
        assert_eq!(rows(&t), vec![(1, "a".into())]);
        assert_eq!(s.outside(), outside);
    }
}
