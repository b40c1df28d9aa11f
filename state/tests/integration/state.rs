//! The keyed state store (`alluvium-state`, SPEC.md §26): layout and schema validation,
//! the ordering rule, exactly-once sync (property test over random event streams, two
//! syncs racing), reads at past states, and retention.

use std::collections::BTreeMap;
use std::sync::Arc;

use alluvium::ErrorKind;
use alluvium_state::{StateAt, StateError, StateOptions, StateStore, assigned_seq};
use alluvium_storage::{InMemoryStore, StoreRef};
use arrow::array::{
    Array, AsArray, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{
    DataType, Field, Int64Type, Schema, SchemaRef, TimeUnit, TimestampMicrosecondType,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Microseconds in a day.
pub const DAY: i64 = 86_400_000_000;
/// 2023-11-14 (the in-memory stores' manual clock starts near it), in µs.
pub const T0: i64 = 1_699_920_000_000_000;

/// Key `id` (Int64) and value `v` (Utf8).
pub fn value_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("v", DataType::Utf8, true),
    ]))
}

/// One event of the tests.
#[derive(Debug, Clone, PartialEq)]
pub struct Ev {
    pub id: i64,
    pub v: Option<String>,
    pub t: i64,
    pub seq: Option<i64>,
    pub delete: bool,
}

impl Ev {
    pub fn up(id: i64, v: &str, t: i64, seq: Option<i64>) -> Ev {
        Ev {
            id,
            v: Some(v.to_string()),
            t,
            seq,
            delete: false,
        }
    }
    pub fn del(id: i64, t: i64, seq: Option<i64>) -> Ev {
        Ev {
            id,
            v: None,
            t,
            seq,
            delete: true,
        }
    }
}

/// The events as a `put` batch (with a `seq` column only if `with_seq`).
pub fn batch(evs: &[Ev], with_seq: bool) -> RecordBatch {
    let mut fields = vec![
        Field::new("id", DataType::Int64, false),
        Field::new("v", DataType::Utf8, true),
        Field::new(
            "event_time",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("op", DataType::Utf8, true),
    ];
    let mut cols: Vec<Arc<dyn Array>> = vec![
        Arc::new(Int64Array::from(
            evs.iter().map(|e| e.id).collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            evs.iter().map(|e| e.v.clone()).collect::<Vec<_>>(),
        )),
        Arc::new(
            TimestampMicrosecondArray::from(evs.iter().map(|e| e.t).collect::<Vec<_>>())
                .with_timezone("UTC"),
        ),
        Arc::new(StringArray::from(
            evs.iter()
                .map(|e| if e.delete { "DELETE" } else { "UPSERT" })
                .collect::<Vec<_>>(),
        )),
    ];
    if with_seq {
        fields.push(Field::new("seq", DataType::Int64, true));
        cols.push(Arc::new(Int64Array::from(
            evs.iter().map(|e| e.seq).collect::<Vec<_>>(),
        )));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap()
}

/// A batch of keys for `get`.
pub fn keys(ids: &[i64]) -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)])),
        vec![Arc::new(Int64Array::from(ids.to_vec()))],
    )
    .unwrap()
}

/// A key's state: value, event time, seq.
pub type Row = (Option<String>, i64, i64);

/// State rows by key.
pub fn rows(batches: &[RecordBatch]) -> BTreeMap<i64, Row> {
    let mut out = BTreeMap::new();
    for b in batches {
        let id = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
        let v = b.column_by_name("v").unwrap().as_string::<i32>();
        let t = b
            .column_by_name("event_time")
            .unwrap()
            .as_primitive::<TimestampMicrosecondType>();
        let s = b.column_by_name("seq").unwrap().as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            let v = (!v.is_null(i)).then(|| v.value(i).to_string());
            let old = out.insert(id.value(i), (v, t.value(i), s.value(i)));
            assert!(old.is_none(), "key {} twice in the state", id.value(i));
        }
    }
    out
}

/// The whole state at `at`.
pub fn state_at(store: &StateStore, at: StateAt) -> BTreeMap<i64, Row> {
    let batches: Vec<RecordBatch> = store.scan(at).unwrap().map(|b| b.unwrap()).collect();
    rows(&batches)
}

/// The model: folds `log` (per log version, its events in commit order) by the ordering
/// rule of SPEC.md §26.2, written independently of the implementation.
pub fn model(log: &[(u64, Vec<Ev>)], through: Option<u64>) -> BTreeMap<i64, Row> {
    // key -> (event, order)
    let mut latest: BTreeMap<i64, (Ev, (i64, i64))> = BTreeMap::new();
    for (version, evs) in log {
        if through.is_none_or(|t| *version > t) {
            continue;
        }
        for (i, e) in evs.iter().enumerate() {
            let seq = e
                .seq
                .unwrap_or_else(|| ((*version as i64) << 32) + i as i64);
            let order = (e.t, seq);
            match latest.get(&e.id) {
                Some((_, cur)) if order <= *cur => {}
                _ => {
                    latest.insert(e.id, (e.clone(), order));
                }
            }
        }
    }
    latest
        .into_iter()
        .filter(|(_, (e, _))| !e.delete)
        .map(|(k, (e, (t, s)))| (k, (e.v, t, s)))
        .collect()
}

fn in_memory(options: StateOptions) -> (StoreRef, StateStore) {
    let root: StoreRef = Arc::new(InMemoryStore::new().with_manual_clock(1_700_000_000_000));
    let store =
        StateStore::create_in_store(root.clone(), &["id"], value_schema(), options).unwrap();
    (root, store)
}

fn put(store: &StateStore, log: &mut Vec<(u64, Vec<Ev>)>, evs: Vec<Ev>, with_seq: bool) {
    let r = store.put(&[batch(&evs, with_seq)], None).unwrap();
    log.push((r.log_version.unwrap(), evs));
}

#[test]
fn put_sync_get_latest_and_past_states() {
    let (_root, store) = in_memory(StateOptions::default());
    let mut log = Vec::new();
    put(
        &store,
        &mut log,
        vec![
            Ev::up(1, "a", T0, None),
            Ev::up(2, "b", T0 + 1, None),
            Ev::up(1, "a2", T0 + 5, None),
        ],
        false,
    );
    let r = store.sync().unwrap();
    assert_eq!(r.synced_through, Some(log[0].0));
    assert_eq!(
        state_at(&store, StateAt::Latest),
        model(&log, Some(log[0].0))
    );
    let v1 = r.state_version.unwrap();
    // An older event, a delete and a re-insert.
    put(
        &store,
        &mut log,
        vec![
            Ev::up(1, "old", T0 + 1, None),
            Ev::del(2, T0 + 2, None),
            Ev::up(3, "c", T0 + 3, Some(7)),
        ],
        true,
    );
    store.sync().unwrap();
    let latest = state_at(&store, StateAt::Latest);
    assert_eq!(latest, model(&log, Some(log[1].0)));
    assert_eq!(latest[&1].0.as_deref(), Some("a2"));
    assert!(!latest.contains_key(&2));
    assert_eq!(
        state_at(&store, StateAt::Version(v1 as i64)),
        model(&log, Some(log[0].0))
    );
    let got = rows(&[store.get(&keys(&[3, 2, 1, 3]), StateAt::Latest).unwrap()]);
    assert_eq!(got.keys().copied().collect::<Vec<_>>(), vec![1, 3]);
    let got = rows(&[store.get(&keys(&[2]), StateAt::Version(v1 as i64)).unwrap()]);
    assert_eq!(got[&2].0.as_deref(), Some("b"));
    assert_eq!(store.lag().unwrap().versions, 0);
    let h = store.history(&keys(&[1])).unwrap();
    assert_eq!(h.num_rows(), 3);
    // Reopened from storage alone.
    let again = StateStore::from_store(_root.clone(), StateOptions::default()).unwrap();
    assert_eq!(again.key_columns(), &["id".to_string()]);
    assert_eq!(state_at(&again, StateAt::Latest), latest);
    let st = again.status().unwrap();
    assert_eq!(st.keys, 2);
    assert_eq!(st.tombstones, 1);
    assert_eq!(assigned_seq(1, 2).unwrap(), (1 << 32) + 2);
    let _ = (ErrorKind::Other, StateError::NoKeyColumns);
    let fresh = StateStore::in_memory(&["id"], value_schema(), StateOptions::default()).unwrap();
    assert_eq!(fresh.status().unwrap().keys, 0);
}

/// The log version `state/` had applied through at each of its versions, and the
/// operation of that version's commit.
fn sync_chain(store: &StateStore) -> Vec<(u64, Option<u64>, String)> {
    let table = store.state_table();
    let latest = table.snapshot().unwrap().version();
    (0..=latest)
        .map(|v| {
            let s = table
                .snapshot_at(alluvium::VersionSpec::Version(v))
                .unwrap();
            let applied = s
                .app_transaction_version(alluvium_state::SYNC_APP_ID, i64::MAX / 2)
                .map(|x| x as u64);
            let op = s
                .commit_info()
                .and_then(|c| {
                    c.0.get("operation")
                        .and_then(|o| o.as_str())
                        .map(String::from)
                })
                .unwrap_or_default();
            (v, applied, op)
        })
        .collect()
}

/// Every version of `state/` equals the fold of the log prefix it recorded, and the
/// recorded progress only grows: each commit that changed the state (not an OPTIMIZE)
/// applied log versions no commit before it had (nothing applied twice).
fn check_every_version(store: &StateStore, log: &[(u64, Vec<Ev>)]) {
    let chain = sync_chain(store);
    let mut prev: Option<u64> = None;
    for (v, applied, op) in &chain {
        if *v > 0 && op != "OPTIMIZE" {
            assert!(
                applied > &prev,
                "state version {v} ({op}) recorded {applied:?} after {prev:?}: {chain:?}"
            );
        }
        if op == "OPTIMIZE" {
            assert_eq!(applied, &prev, "OPTIMIZE changed the sync progress");
        }
        prev = *applied;
        let expected = model(log, *applied);
        assert_eq!(
            state_at(store, StateAt::Version(*v as i64)),
            expected,
            "state version {v} (through log version {applied:?})"
        );
        // Point lookups (the page-pruned path, deletion vectors applied) agree with scans.
        // Up to 64 keys the reader filters rows on the key; above, it does not.
        for ids in [(-1..32).collect::<Vec<i64>>(), (-50..60).collect()] {
            let got = store.get(&keys(&ids), StateAt::Version(*v as i64)).unwrap();
            assert_eq!(rows(&[got]), expected, "lookups at state version {v}");
        }
    }
}

/// A random event stream: out-of-order event times over several days, duplicate keys in
/// one batch, deletes and re-inserts, ties of `event_time` broken by `seq`, exact ties
/// (first folded wins), producer and assigned seqs. Batches without a producer `seq` for
/// some rows stay within one day (one log file, so the commit's row order is the batch's).
fn random_batch(rng: &mut StdRng, tag: &str) -> (Vec<Ev>, bool) {
    let single_day = rng.random_bool(0.5);
    let with_seq = !single_day || rng.random_bool(0.5);
    let day = T0 + rng.random_range(-3..=0i64) * DAY;
    let n = rng.random_range(1..12);
    let evs = (0..n)
        .map(|i| {
            let id = rng.random_range(0..30);
            let t = if single_day {
                day
            } else {
                T0 + rng.random_range(-3..=0i64) * DAY
            } + rng.random_range(0..4);
            let seq =
                (with_seq && (!single_day || rng.random_bool(0.7))).then(|| rng.random_range(0..3));
            if rng.random_bool(0.3) {
                Ev::del(id, t, seq)
            } else {
                Ev::up(id, &format!("{tag}-{i}"), t, seq)
            }
        })
        .collect();
    (evs, with_seq)
}

/// The property test of SPEC.md §26.2-3: after every sync `state/` equals the log folded
/// by the ordering rule, and every past state version equals the fold of the log prefix
/// it recorded.
#[test]
fn random_streams_fold_to_the_model_at_every_version() {
    let mut compactions = 0;
    let mut tombstone_compactions = 0;
    for seed in 0..24u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let options = StateOptions::default()
            .with_chunk_events(rng.random_range(1..20))
            .with_compact_above_overlap(Some(rng.random_range(3..8)));
        let (_root, store) = in_memory(options);
        let mut log = Vec::new();
        for round in 0..10 {
            for b in 0..rng.random_range(0..3) {
                let (evs, with_seq) = random_batch(&mut rng, &format!("{seed}-{round}-{b}"));
                put(&store, &mut log, evs, with_seq);
            }
            if rng.random_bool(0.6) {
                let r = store.sync().unwrap();
                assert!(r.compaction_errors.is_empty(), "{r:?}");
                compactions += r.compactions;
                assert_eq!(
                    state_at(&store, StateAt::Latest),
                    model(&log, r.synced_through),
                    "seed {seed} round {round}"
                );
                assert_eq!(store.lag().unwrap().versions, 0);
            }
        }
        let r = store.sync().unwrap();
        assert_eq!(
            r.synced_through,
            Some(store.log_table().snapshot().unwrap().version())
        );
        assert_eq!(
            state_at(&store, StateAt::Latest),
            model(&log, r.synced_through)
        );
        check_every_version(&store, &log);
        let tombstones = store.tombstones_table();
        let latest = tombstones.snapshot().unwrap().version();
        tombstone_compactions += (1..=latest)
            .filter(|v| {
                let s = tombstones
                    .snapshot_at(alluvium::VersionSpec::Version(*v))
                    .unwrap();
                s.commit_info()
                    .and_then(|c| c.0.get("operation").and_then(|o| o.as_str()))
                    == Some("OPTIMIZE")
            })
            .count();
    }
    // Seeded and single-threaded: the streams do compact `state/` and `tombstones/`.
    assert!(compactions > 0);
    assert!(tombstone_compactions > 0);
}

/// An UPSERT older than a key's DELETE never brings the key back, however late it comes:
/// in the same chunk, in a later sync, and after an unrelated newer UPSERT of another key.
#[test]
fn a_late_older_upsert_does_not_resurrect_a_deleted_key() {
    let (_root, store) = in_memory(StateOptions::default());
    let mut log = Vec::new();
    put(
        &store,
        &mut log,
        vec![Ev::up(1, "a", T0 + 10, Some(0))],
        true,
    );
    store.sync().unwrap();
    put(&store, &mut log, vec![Ev::del(1, T0 + 20, Some(0))], true);
    store.sync().unwrap();
    assert!(state_at(&store, StateAt::Latest).is_empty());
    // Late: older than the delete, newer than the first upsert.
    put(
        &store,
        &mut log,
        vec![Ev::up(1, "late", T0 + 15, Some(0))],
        true,
    );
    store.sync().unwrap();
    assert!(state_at(&store, StateAt::Latest).is_empty(), "resurrected");
    // An exact tie with the delete: the delete was folded first and stays.
    put(
        &store,
        &mut log,
        vec![Ev::up(1, "tie", T0 + 20, Some(0))],
        true,
    );
    store.sync().unwrap();
    assert!(
        state_at(&store, StateAt::Latest).is_empty(),
        "tie resurrected"
    );
    // Newer: the key is back.
    put(
        &store,
        &mut log,
        vec![Ev::up(1, "new", T0 + 21, Some(0))],
        true,
    );
    store.sync().unwrap();
    assert_eq!(
        state_at(&store, StateAt::Latest)[&1].0.as_deref(),
        Some("new")
    );
    assert_eq!(
        state_at(&store, StateAt::Latest),
        model(&log, Some(u64::MAX))
    );
}

/// Two syncs racing each other while a producer appends: the end state is the fold of the
/// whole log and no log version was applied twice.
#[test]
fn two_syncs_racing_apply_each_event_once() {
    let (root, store) = in_memory(StateOptions::default().with_chunk_events(3));
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let syncers: Vec<_> = (0..2)
        .map(|_| {
            let s =
                StateStore::from_store(root.clone(), StateOptions::default().with_chunk_events(3))
                    .unwrap();
            let done = done.clone();
            std::thread::spawn(move || {
                let mut retried = 0;
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    retried += s.sync().unwrap().conflicts_retried;
                }
                retried
            })
        })
        .collect();
    let mut rng = StdRng::seed_from_u64(7);
    for round in 0..30 {
        let (evs, with_seq) = random_batch(&mut rng, &format!("race-{round}"));
        let r = store.put(&[batch(&evs, with_seq)], None).unwrap();
        log.lock().unwrap().push((r.log_version.unwrap(), evs));
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let retried: u64 = syncers.into_iter().map(|s| s.join().unwrap()).sum();
    // How often the syncs collided depends on scheduling; shown, not asserted.
    eprintln!("chunks retried after losing a race: {retried}");
    store.sync().unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(
        state_at(&store, StateAt::Latest),
        model(&log, Some(u64::MAX))
    );
    check_every_version(&store, &log);
}

/// Fault injection at every storage operation of a sync (SPEC.md §10's fault kinds: an
/// error before or after the operation's effect, a crash before or after it) over a
/// store with several chunks, deletes and a compaction: afterwards a clean sync from
/// storage alone reaches the fold of the whole log, and every state version still equals
/// the fold of the prefix it recorded, with no log version applied twice.
#[test]
fn every_fault_at_every_operation_of_sync() {
    use alluvium_storage::{Fault, FaultyStore};
    let options = || {
        StateOptions::default()
            .with_chunk_events(4)
            .with_compact_above_overlap(Some(3))
    };
    let run = |at: u64, fault: Fault| -> u64 {
        let root: StoreRef = Arc::new(InMemoryStore::new().with_manual_clock(1_700_000_000_000));
        let store =
            StateStore::create_in_store(root.clone(), &["id"], value_schema(), options()).unwrap();
        let mut log = Vec::new();
        put(
            &store,
            &mut log,
            vec![Ev::up(1, "a", T0, Some(1)), Ev::up(2, "b", T0, Some(1))],
            true,
        );
        store.sync().unwrap();
        put(
            &store,
            &mut log,
            vec![Ev::del(1, T0 + 5, None), Ev::up(3, "c", T0 + 3, None)],
            false,
        );
        put(
            &store,
            &mut log,
            vec![
                Ev::up(1, "late", T0 + 2, Some(0)),
                Ev::up(2, "b2", T0 + 1, Some(0)),
                Ev::up(4, "d", T0 - 2 * DAY, Some(0)),
            ],
            true,
        );
        put(
            &store,
            &mut log,
            vec![Ev::del(4, T0, None), Ev::up(5, "e", T0, None)],
            false,
        );
        let faulty = Arc::new(FaultyStore::new(root.clone(), at, fault));
        let ops = match StateStore::from_store(faulty.clone(), options()) {
            Ok(s) => {
                let _ = s.sync();
                faulty.operations()
            }
            Err(_) => faulty.operations(),
        };
        let clean = StateStore::from_store(root, options()).unwrap();
        let r = clean.sync().unwrap();
        let all = Some(log.last().unwrap().0);
        assert_eq!(r.synced_through, all, "fault {fault:?} at {at}");
        assert_eq!(
            state_at(&clean, StateAt::Latest),
            model(&log, all),
            "fault {fault:?} at {at}"
        );
        check_every_version(&clean, &log);
        ops
    };
    let total = run(0, Fault::ErrorBefore);
    assert!(
        total > 30,
        "the sync should touch storage many times, did {total}"
    );
    for fault in Fault::ALL {
        for at in 1..=total {
            run(at, fault);
        }
    }
}

fn schema(fields: Vec<Field>) -> SchemaRef {
    Arc::new(Schema::new(fields))
}

fn create_err(keys: &[&str], s: SchemaRef) -> StateError {
    let root: StoreRef = Arc::new(InMemoryStore::new());
    match StateStore::create_in_store(root, keys, s, StateOptions::default()) {
        Err(StateError::Table(e)) => panic!("expected the store's own error, got {e:?}"),
        Err(e) => e,
        Ok(_) => panic!("expected a state error, got a store"),
    }
}

/// Creating a store validates the schema, with typed errors naming the column.
#[test]
fn create_refuses_invalid_schemas() {
    let id = || Field::new("id", DataType::Int64, false);
    let v = || Field::new("v", DataType::Utf8, true);
    assert!(matches!(
        create_err(&[], value_schema()),
        StateError::NoKeyColumns
    ));
    assert!(matches!(
        create_err(&["nope"], value_schema()),
        StateError::MissingKeyColumn { column } if column == "nope"
    ));
    assert!(matches!(
        create_err(&["id", "ID"], value_schema()),
        StateError::DuplicateKeyColumn { .. }
    ));
    for reserved in [
        "event_date",
        "_change_type",
        "_commit_version",
        "__alluvium_x",
    ] {
        let e = create_err(
            &["id"],
            schema(vec![id(), v(), Field::new(reserved, DataType::Int32, true)]),
        );
        assert!(
            matches!(&e, StateError::ReservedColumn { column, .. } if column == reserved),
            "{reserved}: {e:?}"
        );
    }
    // Event columns of other types than the events' are refused; of the events' types
    // they are ignored (a sample of events describes a store).
    let e = create_err(
        &["id"],
        schema(vec![
            id(),
            v(),
            Field::new("event_time", DataType::Int64, true),
        ]),
    );
    assert!(matches!(e, StateError::ReservedColumn { column, .. } if column == "event_time"));
    let e = create_err(
        &["seq"],
        schema(vec![v(), Field::new("seq", DataType::Int64, false)]),
    );
    assert!(matches!(e, StateError::ReservedColumn { column, .. } if column == "seq"));
    assert!(matches!(
        create_err(
            &["f"],
            schema(vec![Field::new("f", DataType::Float64, false), v()])
        ),
        StateError::KeyColumnType { column, .. } if column == "f"
    ));
    assert!(matches!(
        create_err(&["id"], schema(vec![id()])),
        StateError::NoValueColumns
    ));
    let root: StoreRef = Arc::new(InMemoryStore::new());
    let with_events = schema(vec![
        id(),
        v(),
        Field::new(
            "event_time",
            DataType::Timestamp(TimeUnit::Millisecond, Some("+00:00".into())),
            false,
        ),
        Field::new("op", DataType::Utf8, true),
    ]);
    let store =
        StateStore::create_in_store(root.clone(), &["id"], with_events, StateOptions::default())
            .unwrap();
    assert_eq!(store.state_schema().fields().len(), 4);
    // Creating again over the same store is accepted; with other columns it is refused.
    StateStore::create_in_store(
        root.clone(),
        &["id"],
        value_schema(),
        StateOptions::default(),
    )
    .unwrap();
    let e = StateStore::create_in_store(
        root.clone(),
        &["id"],
        schema(vec![id(), Field::new("w", DataType::Int32, true)]),
        StateOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, StateError::NotAStore { .. }), "{e}");
    // Opening where there is no store.
    let e = StateStore::from_store(Arc::new(InMemoryStore::new()), StateOptions::default())
        .unwrap_err();
    assert!(matches!(e, StateError::NotAStore { .. }), "{e}");
    assert_eq!(e.kind(), ErrorKind::NotFound);
}

/// `put` refuses events that break the rules, naming column and row; nothing is written.
#[test]
fn put_refuses_invalid_events() {
    let (_root, store) = in_memory(StateOptions::default());
    let put_err = |b: RecordBatch| match store.put(&[b], None) {
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
            match e {
                StateError::Table(other) => panic!("{other:?}"),
                s => s,
            }
        }
        Ok(r) => panic!("accepted: {r:?}"),
    };
    let good = batch(&[Ev::up(1, "a", T0, None), Ev::up(2, "b", T0, None)], false);
    let with = |name: &str, col: Arc<dyn Array>| {
        let mut fields: Vec<Field> = good
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let mut cols = good.columns().to_vec();
        match fields.iter().position(|f| f.name() == name) {
            Some(i) => {
                fields[i] = Field::new(name, col.data_type().clone(), true);
                cols[i] = col;
            }
            None => {
                fields.push(Field::new(name, col.data_type().clone(), true));
                cols.push(col);
            }
        }
        RecordBatch::try_new(schema(fields), cols).unwrap()
    };
    let e = put_err(with("id", Arc::new(Int64Array::from(vec![Some(1), None]))));
    assert!(
        matches!(&e, StateError::NullValue { operation: "put", column, row: 1 } if column == "id"),
        "{e:?}"
    );
    let e = put_err(with(
        "op",
        Arc::new(StringArray::from(vec!["UPSERT", "MERGE"])),
    ));
    assert!(
        matches!(&e, StateError::InvalidOp { value, row: 1 } if value == "MERGE"),
        "{e:?}"
    );
    let e = put_err(with(
        "event_time",
        Arc::new(TimestampMicrosecondArray::from(vec![Some(T0), None]).with_timezone("UTC")),
    ));
    assert!(matches!(e, StateError::NullValue { column, row: 1, .. } if column == "event_time"));
    let e = put_err(with("extra", Arc::new(Int64Array::from(vec![1, 2]))));
    assert!(matches!(e, StateError::UnknownColumn { column, .. } if column == "extra"));
    let e = put_err(with("id", Arc::new(StringArray::from(vec!["1", "x"]))));
    assert!(matches!(e, StateError::ColumnType { column, .. } if column == "id"));
    let no_time = good.project(&[0, 1, 3]).unwrap();
    let e = put_err(no_time);
    assert!(matches!(e, StateError::MissingColumn { column, .. } if column == "event_time"));
    assert_eq!(store.log_table().snapshot().unwrap().version(), 0);
    // A lower-case op, a missing op and a producer seq of another integer type are fine.
    let ok = with(
        "op",
        Arc::new(StringArray::from(vec![Some("delete"), None])),
    );
    let ok = with_col(
        &ok,
        "seq",
        Arc::new(arrow::array::Int32Array::from(vec![1, 2])),
    );
    store.put(&[ok], None).unwrap();
    // Idempotent puts: the same (app, version) twice writes once.
    let first = store
        .put(std::slice::from_ref(&good), Some(("producer-a", 1)))
        .unwrap();
    assert!(!first.skipped && first.log_version.is_some());
    let again = store.put(&[good], Some(("producer-a", 1))).unwrap();
    assert!(again.skipped && again.log_version.is_none());
}

fn with_col(b: &RecordBatch, name: &str, col: Arc<dyn Array>) -> RecordBatch {
    let mut fields: Vec<Field> = b
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    let mut cols = b.columns().to_vec();
    fields.push(Field::new(name, col.data_type().clone(), true));
    cols.push(col);
    RecordBatch::try_new(schema(fields), cols).unwrap()
}

/// `retain` drops old log partitions whose events are all synced and keeps any partition
/// holding an event not yet synced, whatever its age; a dry run commits nothing.
#[test]
fn retain_never_drops_unsynced_events() {
    let (_root, store) = in_memory(StateOptions::default());
    let mut log = Vec::new();
    // The store clock is 2023-11-14; T0 is that day.
    put(
        &store,
        &mut log,
        vec![Ev::up(1, "old", T0 - 10 * DAY, None)],
        false,
    );
    put(
        &store,
        &mut log,
        vec![Ev::up(2, "mid", T0 - 5 * DAY, None)],
        false,
    );
    put(&store, &mut log, vec![Ev::up(3, "new", T0, None)], false);
    store.sync().unwrap();
    // Unsynced, late, into the oldest partition.
    put(
        &store,
        &mut log,
        vec![Ev::up(4, "late", T0 - 10 * DAY + 1, None)],
        false,
    );
    let dry = store.retain(3, true).unwrap();
    assert_eq!(dry.cutoff_date, "2023-11-11");
    assert_eq!(dry.partitions_dropped, vec!["2023-11-09".to_string()]);
    assert_eq!(dry.partitions_kept_unsynced, vec!["2023-11-04".to_string()]);
    assert_eq!((dry.files_removed, dry.events_removed), (2, 2));
    assert_eq!(dry.log_version, None);
    let before = store.log_table().snapshot().unwrap().version();
    assert_eq!(store.log_table().snapshot().unwrap().version(), before);
    let done = store.retain(3, false).unwrap();
    assert_eq!(done.partitions_dropped, dry.partitions_dropped);
    assert_eq!(done.log_version, Some(before + 1));
    // The unsynced event is still there, and syncs.
    assert_eq!(store.lag().unwrap().events, 1);
    store.sync().unwrap();
    assert_eq!(
        state_at(&store, StateAt::Latest)
            .keys()
            .copied()
            .collect::<Vec<_>>(),
        vec![1, 2, 3, 4]
    );
    let h = store.history(&keys(&[4])).unwrap();
    assert_eq!(h.num_rows(), 1);
    // Now everything is synced: the old partition goes too; the state is untouched.
    let again = store.retain(3, false).unwrap();
    assert_eq!(again.partitions_dropped, vec!["2023-11-04".to_string()]);
    assert!(again.partitions_kept_unsynced.is_empty());
    assert_eq!(store.history(&keys(&[4])).unwrap().num_rows(), 0);
    assert_eq!(state_at(&store, StateAt::Latest).len(), 4);
}

/// A composite key on a local directory: create, open by path, lookups in key order,
/// history of one key, status.
#[test]
fn composite_keys_on_local_disk() {
    use arrow::array::{Float64Array, Int32Array};
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("store");
    let loc = loc.to_str().unwrap();
    let s = schema(vec![
        Field::new("region", DataType::Utf8, false),
        Field::new("id", DataType::Int32, false),
        Field::new("amount", DataType::Float64, true),
    ]);
    let store = StateStore::create(loc, &["region", "id"], s, StateOptions::default()).unwrap();
    let events = |rows: &[(&str, i32, f64, i64, &str)]| {
        RecordBatch::try_new(
            schema(vec![
                Field::new("region", DataType::Utf8, false),
                Field::new("id", DataType::Int32, false),
                Field::new("amount", DataType::Float64, true),
                Field::new(
                    "event_time",
                    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                    false,
                ),
                Field::new("op", DataType::Utf8, false),
            ]),
            vec![
                Arc::new(StringArray::from(
                    rows.iter().map(|r| r.0).collect::<Vec<_>>(),
                )),
                Arc::new(Int32Array::from(
                    rows.iter().map(|r| r.1).collect::<Vec<_>>(),
                )),
                Arc::new(Float64Array::from(
                    rows.iter().map(|r| r.2).collect::<Vec<_>>(),
                )),
                Arc::new(
                    TimestampMicrosecondArray::from(rows.iter().map(|r| r.3).collect::<Vec<_>>())
                        .with_timezone("UTC"),
                ),
                Arc::new(StringArray::from(
                    rows.iter().map(|r| r.4).collect::<Vec<_>>(),
                )),
            ],
        )
        .unwrap()
    };
    store
        .put(
            &[events(&[
                ("eu", 1, 1.0, T0, "UPSERT"),
                ("us", 1, 2.0, T0, "UPSERT"),
                ("eu", 2, 3.0, T0, "UPSERT"),
                ("eu", 1, 4.0, T0 + 1, "UPSERT"),
            ])],
            None,
        )
        .unwrap();
    store
        .put(&[events(&[("us", 1, 0.0, T0 + 2, "DELETE")])], None)
        .unwrap();
    store.sync().unwrap();
    let opened = StateStore::open(loc, StateOptions::default()).unwrap();
    assert_eq!(
        opened.key_columns(),
        &["region".to_string(), "id".to_string()]
    );
    let k = RecordBatch::try_new(
        schema(vec![
            Field::new("region", DataType::Utf8, false),
            Field::new("id", DataType::Int64, false),
        ]),
        vec![
            Arc::new(StringArray::from(vec!["eu", "us", "eu", "eu"])),
            Arc::new(Int64Array::from(vec![2, 1, 1, 9])),
        ],
    )
    .unwrap();
    let got = opened.get(&k, StateAt::Latest).unwrap();
    let amounts: Vec<f64> = got
        .column_by_name("amount")
        .unwrap()
        .as_primitive::<arrow::datatypes::Float64Type>()
        .values()
        .to_vec();
    assert_eq!(
        amounts,
        vec![3.0, 4.0],
        "in the order asked, live keys only"
    );
    let h = opened.history(&k.slice(2, 1)).unwrap();
    assert_eq!(h.num_rows(), 2);
    let st = opened.status().unwrap();
    assert_eq!((st.keys, st.tombstones, st.lag.versions), (2, 1, 0));
    for sub in ["log", "state", "tombstones"] {
        assert!(
            dir.path()
                .join("store")
                .join(sub)
                .join("_delta_log")
                .is_dir()
        );
    }
}

/// A store that records the data files read through it.
#[derive(Debug)]
struct ReadRecorder {
    inner: InMemoryStore,
    reads: std::sync::Mutex<std::collections::BTreeSet<String>>,
    bytes: std::sync::atomic::AtomicU64,
}

impl ReadRecorder {
    fn note(&self, p: &alluvium_storage::StorePath) {
        if p.as_str().ends_with(".parquet") {
            self.reads.lock().unwrap().insert(p.as_str().to_string());
        }
    }
    fn count(&self, p: &alluvium_storage::StorePath, n: u64) {
        if p.as_str().ends_with(".parquet") {
            self.bytes.fetch_add(n, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

impl alluvium_storage::ObjectStore for ReadRecorder {
    fn root_uri(&self) -> String {
        self.inner.root_uri()
    }
    fn get(&self, p: &alluvium_storage::StorePath) -> alluvium_storage::Result<bytes::Bytes> {
        self.note(p);
        let b = self.inner.get(p)?;
        self.count(p, b.len() as u64);
        Ok(b)
    }
    fn get_range(
        &self,
        p: &alluvium_storage::StorePath,
        r: std::ops::Range<u64>,
    ) -> alluvium_storage::Result<bytes::Bytes> {
        self.note(p);
        self.count(p, r.end - r.start);
        self.inner.get_range(p, r)
    }
    fn head(
        &self,
        p: &alluvium_storage::StorePath,
    ) -> alluvium_storage::Result<alluvium_storage::ObjectMeta> {
        self.inner.head(p)
    }
    fn put_if_absent(
        &self,
        p: &alluvium_storage::StorePath,
        d: bytes::Bytes,
    ) -> alluvium_storage::Result<()> {
        self.inner.put_if_absent(p, d)
    }
    fn put(
        &self,
        p: &alluvium_storage::StorePath,
        d: bytes::Bytes,
    ) -> alluvium_storage::Result<()> {
        self.inner.put(p, d)
    }
    fn list_dir_from(
        &self,
        d: Option<&alluvium_storage::StorePath>,
        s: &str,
    ) -> alluvium_storage::Result<Vec<alluvium_storage::ObjectMeta>> {
        self.inner.list_dir_from(d, s)
    }
    fn list_tree(
        &self,
        d: Option<&alluvium_storage::StorePath>,
    ) -> alluvium_storage::Result<Vec<alluvium_storage::ObjectMeta>> {
        self.inner.list_tree(d)
    }
    fn delete(&self, p: &alluvium_storage::StorePath) -> alluvium_storage::Result<()> {
        self.inner.delete(p)
    }
}

/// A point lookup reads only the `state/` files whose key range may hold the key: syncs
/// write each chunk's rows sorted by key, and OPTIMIZE (Z-order on the key, after syncs
/// once the file count passes the limit) keeps ranges narrow.
#[test]
fn a_point_lookup_reads_only_files_whose_key_range_holds_the_key() {
    let recorder = Arc::new(ReadRecorder {
        inner: InMemoryStore::new(),
        reads: Default::default(),
        bytes: Default::default(),
    });
    let root: StoreRef = recorder.clone();
    let options = StateOptions::default().with_compact_above_overlap(None);
    let store = StateStore::create_in_store(root, &["id"], value_schema(), options).unwrap();
    for chunk in 0..4i64 {
        let evs: Vec<Ev> = (0..50)
            .map(|i| Ev::up(chunk * 1000 + (49 - i), "x", T0, None))
            .collect();
        store.put(&[batch(&evs, false)], None).unwrap();
        store.sync().unwrap();
    }
    assert_eq!(store.state_table().snapshot().unwrap().num_files(), 4);
    recorder.reads.lock().unwrap().clear();
    let got = store.get(&keys(&[2010]), StateAt::Latest).unwrap();
    assert_eq!(got.num_rows(), 1);
    let reads = recorder.reads.lock().unwrap().clone();
    assert_eq!(reads.len(), 1, "{reads:?}");
    assert!(reads.iter().all(|p| p.starts_with("state/")), "{reads:?}");
    // A key no file's range holds reads no data file.
    recorder.reads.lock().unwrap().clear();
    assert_eq!(
        store
            .get(&keys(&[500]), StateAt::Latest)
            .unwrap()
            .num_rows(),
        0
    );
    assert!(recorder.reads.lock().unwrap().is_empty());
}

/// Inside a file, a point lookup fetches only the data pages whose page-index bounds may
/// hold the key (and the footer, once: it is cached), not the whole file.
#[test]
fn a_point_lookup_fetches_only_the_pages_that_may_hold_the_key() {
    let recorder = Arc::new(ReadRecorder {
        inner: InMemoryStore::new(),
        reads: Default::default(),
        bytes: Default::default(),
    });
    let root: StoreRef = recorder.clone();
    let store = StateStore::create_in_store(root, &["id"], value_schema(), StateOptions::default())
        .unwrap();
    let evs: Vec<Ev> = (0..100_000)
        .map(|i| Ev::up(i, &format!("value-{i}"), T0, None))
        .collect();
    store.put(&[batch(&evs, false)], None).unwrap();
    store.sync().unwrap();
    let snapshot = store.state_table().snapshot().unwrap();
    let files: Vec<_> = snapshot.files().collect();
    assert_eq!(files.len(), 1);
    let size = files[0].size() as u64;
    // Warm the footer cache, then look up another key.
    assert_eq!(
        store.get(&keys(&[10]), StateAt::Latest).unwrap().num_rows(),
        1
    );
    recorder.bytes.store(0, std::sync::atomic::Ordering::SeqCst);
    let got = store.get(&keys(&[77_777]), StateAt::Latest).unwrap();
    assert_eq!(rows(&[got])[&77_777].0.as_deref(), Some("value-77777"));
    let read = recorder.bytes.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        read * 2 < size,
        "a lookup fetched {read} bytes of a {size}-byte file"
    );
}

/// An OPTIMIZE of `log/` that folds unsynced events into a rewritten file does not let
/// `retain` drop them: the rewrite's add is protected like the original's.
#[test]
fn retain_keeps_an_optimized_log_file_holding_unsynced_events() {
    let (_root, store) = in_memory(StateOptions::default());
    let mut log = Vec::new();
    put(
        &store,
        &mut log,
        vec![Ev::up(1, "a", T0 - 10 * DAY, None)],
        false,
    );
    store.sync().unwrap();
    put(
        &store,
        &mut log,
        vec![Ev::up(2, "b", T0 - 10 * DAY + 1, None)],
        false,
    );
    let optimized = store
        .log_table()
        .optimize(&alluvium::OptimizeOptions::default())
        .unwrap();
    assert!(optimized.report.files_added > 0, "{:?}", optimized.report);
    let r = store.retain(3, false).unwrap();
    assert!(r.partitions_dropped.is_empty(), "{r:?}");
    assert_eq!(r.partitions_kept_unsynced, vec!["2023-11-04".to_string()]);
    store.sync().unwrap();
    assert_eq!(
        state_at(&store, StateAt::Latest),
        model(&log, Some(u64::MAX))
    );
}
