//! Hostile tables and failing disks, the read side and the commit loop (SPEC.md §10, §11):
//! generated variants of each class, on the local and in-memory stores where the class
//! exists there, each asserting the typed error or the exact rows. Every case runs under a
//! timeout guard, so a hang fails the test instead of stalling the suite.
//! * special files where a table file is expected (FIFO, symlink to `/dev/zero`, directory):
//!   a typed error naming the file, or the exact rows where the file is only a hint or a
//!   shortcut, never a hang or an endless read;
//! * commit puts refused with an error that proves nothing was written fail at once, and a
//!   put whose outcome is unknown is never reported as "nothing committed";
//! * log compaction files cut at every byte, or empty, never lose rows;
//! * every pair of stored and declared column types either reads through a protocol
//!   widening or fails with "stored as X, cannot be read as Y".

use crate::fault_workload;

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use alluvium::{Error, ScanBuilder, Table, WriteOptions};
use alluvium_mvcc::{MvccError, RetryPolicy};
use alluvium_storage::{
    Fault, FaultyStore, InMemoryStore, LocalFsStore, ObjectStore, StorePath, StoreRef,
};
use alluvium_txlog::log_path::commit_path;
use arrow::array::{ArrayRef, RecordBatch, new_null_array};
use arrow::datatypes::{DataType as ArrowType, Field, Schema};
use fault_workload::{batch, rows_of, schema};

/// Runs `f` on its own thread and fails the test if it does not finish within `secs`.
fn guarded<T: Send + 'static>(what: &str, secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(v)) => v,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("{what}: did not finish within {secs} s (hang)"),
    }
}

fn p(s: &str) -> StorePath {
    StorePath::parse(s).unwrap()
}

fn local_store(dir: &Path) -> StoreRef {
    Arc::new(LocalFsStore::new(dir).with_durability(false))
}

/// Creates a table partitioned by `p` and appends `appends` one commit each.
fn make_table(store: &StoreRef, appends: &[&[(i64, &str)]]) {
    let t = Table::from_store(store.clone());
    t.create(&schema(), &["p".into()], alluvium::NO_PROPERTIES)
        .unwrap();
    for rows in appends {
        t.append([batch(rows)], &WriteOptions::default()).unwrap();
    }
}

fn expected(appends: &[&[(i64, &str)]]) -> Vec<(i64, String)> {
    let mut rows: Vec<(i64, String)> = appends
        .iter()
        .flat_map(|r| r.iter().map(|(i, s)| (*i, (*s).to_string())))
        .collect();
    rows.sort();
    rows
}

fn data_files(store: &dyn ObjectStore) -> Vec<String> {
    store
        .list_tree(None)
        .unwrap()
        .into_iter()
        .map(|m| m.path.to_string())
        .filter(|p| p.ends_with(".parquet") && !p.starts_with("_delta_log"))
        .collect()
}

const APPENDS: &[&[(i64, &str)]] = &[&[(1, "a"), (2, "b")], &[(3, "a")], &[(4, "c")]];

// ---------------------------------------------------------------------------------------
// Special files where a table file is expected.

#[derive(Debug, Clone, Copy)]
enum Special {
    Fifo,
    DevZero,
    Directory,
}

impl Special {
    const ALL: [Special; 3] = [Special::Fifo, Special::DevZero, Special::Directory];

    /// Replaces `path` (a file or nothing) by this kind of special file.
    fn place(self, path: &Path) {
        let _ = std::fs::remove_file(path);
        match self {
            Special::Fifo => {
                let ok = std::process::Command::new("mkfifo")
                    .arg(path)
                    .status()
                    .unwrap()
                    .success();
                assert!(ok, "mkfifo {}", path.display());
            }
            Special::DevZero => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
            Special::Directory => std::fs::create_dir(path).unwrap(),
        }
    }

    fn kind(self) -> &'static str {
        match self {
            Special::Fifo => "fifo",
            Special::DevZero => "character device",
            Special::Directory => "directory",
        }
    }
}

/// A data file replaced by a special file: the scan fails with a typed error naming the
/// file and what it is, at once.
#[test]
fn special_files_as_data_files_are_refused_by_name() {
    for special in Special::ALL {
        guarded(&format!("{special:?} data file"), 60, move || {
            let dir = tempfile::tempdir().unwrap();
            let store = local_store(dir.path());
            make_table(&store, APPENDS);
            let victim = data_files(store.as_ref()).pop().unwrap();
            special.place(&dir.path().join(&victim));
            let t = Table::from_store(store.clone());
            let err = ScanBuilder::new(t.snapshot().unwrap())
                .build()
                .and_then(|s| s.execute_to_vec())
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("not a regular file") && err.contains(special.kind()),
                "{special:?}: {err}"
            );
            assert!(err.contains(&victim), "{special:?} names the file: {err}");
        });
    }
}

/// `_last_checkpoint` is only a hint: a special file (or one larger than the cap) there is
/// ignored and the table reads exactly, without hanging or reading without end.
#[test]
fn special_or_oversized_last_checkpoint_is_ignored() {
    for special in Special::ALL.map(Some).into_iter().chain([None]) {
        guarded(&format!("{special:?} _last_checkpoint"), 60, move || {
            let dir = tempfile::tempdir().unwrap();
            let store = local_store(dir.path());
            make_table(&store, APPENDS);
            Table::from_store(store.clone())
                .checkpoint(&alluvium_compaction::CheckpointConfig::default())
                .unwrap();
            let hint = dir.path().join("_delta_log/_last_checkpoint");
            match special {
                Some(s) => s.place(&hint),
                None => {
                    let big =
                        vec![b' '; alluvium_txlog::checkpoint::LAST_CHECKPOINT_LIMIT as usize + 1];
                    std::fs::write(&hint, big).unwrap();
                }
            }
            let t = Table::from_store(store.clone());
            assert_eq!(rows_of(&t), expected(APPENDS), "{special:?}");
        });
    }
}

/// A checkpoint or a commit replaced by a special file is never opened: the checkpoint is
/// passed over for the commits it summarises; a commit in the middle of the log leaves a
/// gap, reported as such.
#[test]
fn special_files_in_the_log_are_never_opened() {
    for special in Special::ALL {
        guarded(&format!("{special:?} checkpoint"), 60, move || {
            let dir = tempfile::tempdir().unwrap();
            let store = local_store(dir.path());
            make_table(&store, APPENDS);
            Table::from_store(store.clone())
                .checkpoint(&alluvium_compaction::CheckpointConfig::default())
                .unwrap();
            let cp = store
                .list_dir_from(Some(&p("_delta_log")), "")
                .unwrap()
                .into_iter()
                .find(|m| m.path.as_str().ends_with(".checkpoint.parquet"))
                .unwrap();
            special.place(&dir.path().join(cp.path.as_str()));
            let t = Table::from_store(store.clone());
            assert_eq!(rows_of(&t), expected(APPENDS), "{special:?}");
        });
        guarded(&format!("{special:?} commit"), 60, move || {
            let dir = tempfile::tempdir().unwrap();
            let store = local_store(dir.path());
            make_table(&store, APPENDS);
            special.place(&dir.path().join(commit_path(1).as_str()));
            let err = Table::from_store(store.clone())
                .snapshot()
                .unwrap_err()
                .to_string();
            assert!(err.contains("not contiguous"), "{special:?}: {err}");
        });
    }
}

// ---------------------------------------------------------------------------------------
// Commit puts that fail.

/// The error kinds that prove a write stored nothing, as a local filesystem or an object
/// store reports them.
const DEFINITE: [io::ErrorKind; 4] = [
    io::ErrorKind::StorageFull,
    io::ErrorKind::QuotaExceeded,
    io::ErrorKind::PermissionDenied,
    io::ErrorKind::ReadOnlyFilesystem,
];

fn fresh_store(on_disk: bool) -> (StoreRef, Option<tempfile::TempDir>) {
    if on_disk {
        let dir = tempfile::tempdir().unwrap();
        (local_store(dir.path()), Some(dir))
    } else {
        (Arc::new(InMemoryStore::new()), None)
    }
}

/// For every operation of an append and every definite error kind, on both stores: when
/// the commit put (or the sync of the new file's name before it) is refused, the append
/// fails at once (well inside the default five-minute
/// retry budget) with `CommitWriteFailed` naming the kind, nothing is committed and the
/// transaction's data file is removed. A regression (retrying until the budget runs out)
/// trips the timeout guard.
#[test]
fn definite_commit_put_errors_fail_at_once() {
    for on_disk in [false, true] {
        for kind in DEFINITE {
            guarded(&format!("{kind:?} on_disk={on_disk}"), 120, move || {
                let mut refused_commits = 0;
                for at in 1.. {
                    let (inner, _dir) = fresh_store(on_disk);
                    make_table(&inner, &[&[(1, "a")]]);
                    let files_before = data_files(inner.as_ref());
                    let faulty = Arc::new(
                        FaultyStore::new(inner.clone(), at, Fault::ErrorBefore)
                            .with_error_kind(kind),
                    );
                    let t = Table::from_store(faulty.clone());
                    let started = Instant::now();
                    let result = t.append([batch(&[(2, "b")])], &WriteOptions::default());
                    if faulty.operations() < at {
                        break; // the fault was never reached: every operation is covered
                    }
                    let Err(Error::Mvcc(MvccError::CommitWriteFailed { version, source })) = result
                    else {
                        continue; // a fault elsewhere (planning, the data file write)
                    };
                    refused_commits += 1;
                    assert_eq!(version, 2);
                    assert!(started.elapsed() < Duration::from_secs(30), "not at once");
                    let msg =
                        Error::Mvcc(MvccError::CommitWriteFailed { version, source }).to_string();
                    assert!(
                        msg.contains("nothing was committed")
                            && msg.contains("injected fault")
                            && !msg.contains('\n'),
                        "{msg}"
                    );
                    let t = Table::from_store(inner.clone());
                    assert_eq!(t.snapshot().unwrap().version(), 1, "nothing committed");
                    assert_eq!(rows_of(&t), vec![(1, "a".to_string())]);
                    assert_eq!(
                        data_files(inner.as_ref()),
                        files_before,
                        "data file removed"
                    );
                }
                // The sync that makes the new data file's name durable, then the commit
                // put: either refusal fails the commit before anything was committed.
                assert_eq!(
                    refused_commits, 2,
                    "exactly the name sync and the commit put"
                );
            });
        }
    }
}

/// The converse: when the retry budget runs out after a put whose outcome is unknown (an
/// ambiguous error, and nothing visible yet on reading back), the outcome is reported
/// unknown and the data file is kept, since that put may still land.
#[test]
fn an_unsettled_put_keeps_the_data_files_when_the_budget_runs_out() {
    for on_disk in [false, true] {
        guarded(&format!("unsettled put on_disk={on_disk}"), 60, move || {
            let mut unknown = 0;
            for at in 1.. {
                let (inner, _dir) = fresh_store(on_disk);
                make_table(&inner, &[&[(1, "a")]]);
                let faulty = Arc::new(FaultyStore::new(inner.clone(), at, Fault::ErrorBefore));
                let t = Table::from_store(faulty.clone());
                let options = WriteOptions::default().with_retry(
                    RetryPolicy::default()
                        .with_initial_backoff(Duration::ZERO)
                        .with_max_backoff(Duration::ZERO)
                        .with_budget(Duration::ZERO)
                        .with_max_attempts(None),
                );
                let result = t.append([batch(&[(2, "b")])], &options);
                if faulty.operations() < at {
                    break;
                }
                match result {
                    Err(Error::Mvcc(MvccError::RetryBudgetExhausted { .. })) => {
                        panic!("at {at}: an unsettled put reported as nothing committed")
                    }
                    Err(Error::Mvcc(MvccError::CommitOutcomeUnknown { reason, .. })) => {
                        unknown += 1;
                        assert!(reason.contains("may still land"), "{reason}");
                        let files = data_files(inner.as_ref());
                        assert_eq!(files.len(), 2, "at {at}: the new data file is kept");
                    }
                    _ => {}
                }
            }
            assert_eq!(unknown, 1, "the commit put was the one faulted");
        });
    }
}

/// A real read-only log directory: the commit fails at once with the permission error.
/// Skipped where permissions do not bind (running as root).
#[test]
fn a_read_only_log_directory_fails_the_commit_at_once() {
    use std::os::unix::fs::PermissionsExt;
    guarded("read-only directory", 60, || {
        let dir = tempfile::tempdir().unwrap();
        let store = local_store(dir.path());
        make_table(&store, &[&[(1, "a")]]);
        let log = dir.path().join("_delta_log");
        std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o555)).unwrap();
        if std::fs::write(log.join("probe"), b"x").is_ok() {
            eprintln!("permissions do not bind here (root): skipped");
            return;
        }
        let result =
            Table::from_store(store.clone()).append([batch(&[(2, "b")])], &WriteOptions::default());
        std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o755)).unwrap();
        match result {
            Err(Error::Mvcc(MvccError::CommitWriteFailed { source, .. })) => {
                assert!(source.is_definite(), "{source}");
            }
            other => panic!("{other:?}"),
        }
    });
}

// ---------------------------------------------------------------------------------------
// Log compaction files.

/// The commit file's actions other than commitInfo, as a compaction holds them.
fn action_lines(store: &dyn ObjectStore, version: u64) -> Vec<String> {
    let bytes = store.get(&commit_path(version)).unwrap();
    String::from_utf8(bytes.to_vec())
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("{\"commitInfo\""))
        .map(str::to_string)
        .collect()
}

/// A compaction of commits `x..=y` of an append-only table: their actions, with protocol
/// and metaData last (as Spark writes them), so that a cut at a line boundary of a
/// compaction from version 0 loses them.
fn compaction(store: &dyn ObjectStore, x: u64, y: u64) -> String {
    let mut lines: Vec<String> = (x..=y).flat_map(|v| action_lines(store, v)).collect();
    lines.sort_by_key(|l| l.starts_with("{\"protocol\"") || l.starts_with("{\"metaData\""));
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Every cut of a compaction file (each byte length from empty to whole, plus blank
/// content), on both stores: the rows are exactly the commits' rows, and the compaction is
/// used only when whole. Every cut is detected: one inside a line fails to parse, one at a
/// line boundary disagrees with the commits the compaction covers.
#[test]
fn cut_compaction_files_never_lose_rows() {
    for on_disk in [false, true] {
        guarded(
            &format!("compaction cuts on_disk={on_disk}"),
            300,
            move || {
                let appends: &[&[(i64, &str)]] = &[
                    &[(1, "a"), (2, "b")],
                    &[(3, "a")],
                    &[(4, "c"), (5, "c")],
                    &[(6, "d")],
                    &[(7, "a")],
                ];
                let (store, _dir) = fresh_store(on_disk);
                make_table(&store, appends);
                let want = expected(appends);
                for (x, y) in [(0u64, 3u64), (1, 4)] {
                    let whole = compaction(store.as_ref(), x, y);
                    let name = p(&format!("_delta_log/{x:020}.{y:020}.compacted.json"));
                    let cuts = (0..=whole.len())
                        .map(|n| whole[..n].to_string())
                        .chain(["\n".to_string(), "  \n\n".to_string()]);
                    for cut in cuts {
                        // Cuts at a line boundary look whole on their own; the commits,
                        // read beside the compaction, show what they lost (SPEC.md §5.6).
                        store.put(&name, cut.clone().into()).unwrap();
                        let t = Table::from_store(store.clone());
                        let snap = t.snapshot().unwrap();
                        let used = snap.report().compactions_read == 1;
                        // Only the final newline missing loses nothing: the last line is whole.
                        assert_eq!(
                            used,
                            cut.trim_end() == whole.trim_end(),
                            "{x}..{y} cut at {}: {:?}",
                            cut.len(),
                            snap.report()
                        );
                        assert_eq!(rows_of(&t), want, "{x}..{y} cut at {}", cut.len());
                    }
                    store.delete(&name).unwrap();
                }
            },
        );
    }
}

// ---------------------------------------------------------------------------------------
// Stored and declared column types.

/// The Delta types of the sweep, with an Arrow type alluvium writes them as.
fn type_cases() -> Vec<(&'static str, ArrowType)> {
    use arrow::datatypes::TimeUnit;
    vec![
        ("byte", ArrowType::Int8),
        ("short", ArrowType::Int16),
        ("integer", ArrowType::Int32),
        ("long", ArrowType::Int64),
        ("float", ArrowType::Float32),
        ("double", ArrowType::Float64),
        ("boolean", ArrowType::Boolean),
        ("string", ArrowType::Utf8),
        ("binary", ArrowType::Binary),
        ("date", ArrowType::Date32),
        (
            "timestamp",
            ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        ),
        (
            "timestamp_ntz",
            ArrowType::Timestamp(TimeUnit::Microsecond, None),
        ),
        ("decimal(3,0)", ArrowType::Decimal128(3, 0)),
        ("decimal(4,1)", ArrowType::Decimal128(4, 1)),
        ("decimal(4,2)", ArrowType::Decimal128(4, 2)),
        ("decimal(6,1)", ArrowType::Decimal128(6, 1)),
        ("decimal(9,0)", ArrowType::Decimal128(9, 0)),
        ("decimal(10,0)", ArrowType::Decimal128(10, 0)),
        ("decimal(10,2)", ArrowType::Decimal128(10, 2)),
        ("decimal(12,2)", ArrowType::Decimal128(12, 2)),
        ("decimal(12,3)", ArrowType::Decimal128(12, 3)),
        ("decimal(12,4)", ArrowType::Decimal128(12, 4)),
        ("decimal(20,0)", ArrowType::Decimal128(20, 0)),
        ("decimal(22,2)", ArrowType::Decimal128(22, 2)),
    ]
}

fn decimal_of(name: &str) -> Option<(i64, i64)> {
    let inner = name.strip_prefix("decimal(")?.strip_suffix(')')?;
    let (p, s) = inner.split_once(',')?;
    Some((p.parse().ok()?, s.parse().ok()?))
}

/// Whether the protocol lets a file storing `stored` be read as `declared`, written out
/// from PROTOCOL.md "Type Widening" independently of the reader's own table.
fn allowed(stored: &str, declared: &str) -> bool {
    if stored == declared {
        return true;
    }
    let int_rank = |t: &str| {
        ["byte", "short", "integer", "long"]
            .iter()
            .position(|x| *x == t)
    };
    if let (Some(a), Some(b)) = (int_rank(stored), int_rank(declared)) {
        return a < b;
    }
    match (stored, declared) {
        ("float", "double") | ("byte" | "short" | "integer", "double") => return true,
        ("date", "timestamp_ntz") => return true,
        // Not a widening, but the same Parquet representation: INT96 and legacy writers
        // store instants without the UTC flag, and readers take them as instants.
        ("timestamp_ntz", "timestamp") => return true,
        _ => {}
    }
    let Some((p, s)) = decimal_of(declared) else {
        return false;
    };
    // decimal(digits + k1, k2), k1 >= k2 >= 0, with the digits each integer type can have
    // (PROTOCOL.md says 10 for byte and short; Delta Spark writes byte as decimal(4,1)).
    let fits = |digits: i64| p - s >= digits;
    match stored {
        "byte" => fits(3),
        "short" => fits(5),
        "integer" => fits(10),
        "long" => fits(20),
        _ => decimal_of(stored).is_some_and(|(sp, ss)| {
            let (k1, k2) = (p - sp, s - ss);
            k1 >= k2 && k2 >= 0
        }),
    }
}

fn schema_string(column_type: &str) -> String {
    serde_json::json!({
        "type": "struct",
        "fields": [{"name": "c", "type": column_type, "nullable": true, "metadata": {}}]
    })
    .to_string()
}

/// Every pair of the sweep's types: a file storing one type under a table declaring the
/// other reads exactly when the protocol allows it (as the declared type), and otherwise
/// fails with the typed "stored as X, cannot be read as Y" error; never a silent cast.
#[test]
fn stored_types_read_only_through_protocol_widenings() {
    guarded("type pairs", 300, || {
        let cases = type_cases();
        let mut checked = (0, 0);
        for (stored, arrow_type) in &cases {
            let store: StoreRef = Arc::new(InMemoryStore::new());
            let t = Table::from_store(store.clone());
            let file_schema =
                Arc::new(Schema::new(vec![Field::new("c", arrow_type.clone(), true)]));
            t.create(&file_schema, &[], alluvium::NO_PROPERTIES)
                .unwrap();
            let column: ArrayRef = new_null_array(arrow_type, 1);
            let b = RecordBatch::try_new(file_schema.clone(), vec![column]).unwrap();
            // A null would read under any type: store a value too.
            let b = with_a_value(b);
            t.append([b], &WriteOptions::default()).unwrap();
            let metadata_line = action_lines(store.as_ref(), 0)
                .into_iter()
                .find(|l| l.starts_with("{\"metaData\""))
                .unwrap();
            for (version, (declared, _)) in (2..).zip(cases.iter()) {
                let mut action: serde_json::Value = serde_json::from_str(&metadata_line).unwrap();
                action["metaData"]["schemaString"] = schema_string(declared).into();
                store
                    .put_if_absent(&commit_path(version), format!("{action}\n").into())
                    .unwrap();
                let t = Table::from_store(store.clone());
                let result = ScanBuilder::new(t.snapshot().unwrap())
                    .build()
                    .and_then(|s| s.execute_to_vec());
                let ctx = format!("{stored} stored, {declared} declared");
                if allowed(stored, declared) {
                    let batches = result.unwrap_or_else(|e| panic!("{ctx}: {e}"));
                    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
                    assert_eq!(rows, 2, "{ctx}");
                    let nulls: usize = batches.iter().map(|b| b.column(0).null_count()).sum();
                    assert_eq!(nulls, 1, "{ctx}: the value survives");
                    checked.0 += 1;
                } else {
                    let err = result.map(|_| ()).unwrap_err().to_string();
                    assert!(
                        err.contains("is stored as") && err.contains("cannot be read as"),
                        "{ctx}: {err}"
                    );
                    checked.1 += 1;
                }
            }
        }
        let n = cases.len();
        assert_eq!(checked.0 + checked.1, n * n);
        assert!(checked.0 > n && checked.1 > n, "{checked:?}");
    });
}

/// Appends a row holding a representative non-null value of the column's type.
fn with_a_value(b: RecordBatch) -> RecordBatch {
    use arrow::array::*;
    let dt = b.schema().field(0).data_type().clone();
    let value: ArrayRef = match &dt {
        ArrowType::Int8 => Arc::new(Int8Array::from(vec![7])),
        ArrowType::Int16 => Arc::new(Int16Array::from(vec![7])),
        ArrowType::Int32 => Arc::new(Int32Array::from(vec![7])),
        ArrowType::Int64 => Arc::new(Int64Array::from(vec![7])),
        ArrowType::Float32 => Arc::new(Float32Array::from(vec![7.5])),
        ArrowType::Float64 => Arc::new(Float64Array::from(vec![7.5])),
        ArrowType::Boolean => Arc::new(BooleanArray::from(vec![true])),
        ArrowType::Utf8 => Arc::new(StringArray::from(vec!["7"])),
        ArrowType::Binary => Arc::new(BinaryArray::from(vec![b"7".as_slice()])),
        ArrowType::Date32 => Arc::new(Date32Array::from(vec![7])),
        ArrowType::Timestamp(_, tz) => {
            Arc::new(TimestampMicrosecondArray::from(vec![7_000_000]).with_timezone_opt(tz.clone()))
        }
        ArrowType::Decimal128(p, s) => Arc::new(
            Decimal128Array::from(vec![7])
                .with_precision_and_scale(*p, *s)
                .unwrap(),
        ),
        other => panic!("no value for {other}"),
    };
    let column = arrow::compute::concat(&[b.column(0).as_ref(), value.as_ref()]).unwrap();
    RecordBatch::try_new(b.schema(), vec![column]).unwrap()
}
