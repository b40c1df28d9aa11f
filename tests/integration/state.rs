//! The keyed state store (`alluvium::state`, SPEC.md §26): layout and schema validation,
//! the ordering rule, exactly-once sync (property test over random event streams, two
//! syncs racing), reads at past states, and retention.

use std::collections::BTreeMap;
use std::sync::Arc;

use alluvium::ErrorKind;
use alluvium::state::{StateAt, StateError, StateOptions, StateStore, assigned_seq};
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
                .app_transaction_version(alluvium::state::SYNC_APP_ID, i64::MAX / 2)
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
        assert_eq!(
            state_at(store, StateAt::Version(*v as i64)),
            model(log, *applied),
            "state version {v} (through log version {applied:?})"
        );
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
    let n = rng.random_range(1..8);
    let evs = (0..n)
        .map(|i| {
            let id = rng.random_range(0..6);
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
    for seed in 0..24u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let options = StateOptions::default()
            .with_chunk_events(rng.random_range(1..20))
            .with_compact_after_files(Some(rng.random_range(3..8)));
        let (_root, store) = in_memory(options);
        let mut log = Vec::new();
        for round in 0..10 {
            for b in 0..rng.random_range(0..3) {
                let (evs, with_seq) = random_batch(&mut rng, &format!("{seed}-{round}-{b}"));
                put(&store, &mut log, evs, with_seq);
            }
            if rng.random_bool(0.6) {
                let r = store.sync().unwrap();
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
    }
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
    for s in syncers {
        s.join().unwrap();
    }
    store.sync().unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(
        state_at(&store, StateAt::Latest),
        model(&log, Some(u64::MAX))
    );
    check_every_version(&store, &log);
}
