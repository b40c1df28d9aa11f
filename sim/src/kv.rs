//! The state-store actor and its oracle (issue 30 item 1, "state put/sync"): on some seeds
//! a keyed state store (`alluvium-state`, SPEC.md §26) lives under the hidden directory
//! `_kv` of the simulated store (hidden, so the table's VACUUM never lists it), and one
//! actor puts small batches of events and syncs, crashing and restarting like the others.
//!
//! What this module owns: the events the actor put and what it was told of each put
//! ([`KvEvent`]), and the check of the store's final state against its own fold of those
//! events. The fold is written here from the ordering rule of SPEC.md §26.2 (the greatest
//! (`event_time`, `seq`) wins; a `DELETE` leaves the key absent), not from the state
//! crate's code: every event carries an explicit `seq`, so no order depends on the log
//! version a put landed at.

use std::collections::BTreeMap;
use std::sync::Arc;

use alluvium::arrow::array::{
    Array, ArrayRef, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use alluvium::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use alluvium::{PrefixStore, StoreRef};
use alluvium_state::{StateAt, StateOptions, StateStore};

use crate::actors::{Actor, Outcome, classify_kind};
use crate::store::SimStore;

/// The directory of the state store in the simulated store.
pub(crate) const KV_DIR: &str = "_kv";
/// Keys are drawn from this small set, so events of one key meet.
const KEYS: u64 = 5;
/// The application id of the actor's puts (its versions are the put's number).
const KV_APP: &str = "kv";

/// One event the actor put.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KvEvent {
    pub(crate) key: i64,
    /// `None` for a DELETE.
    pub(crate) value: Option<i64>,
    pub(crate) time_us: i64,
    pub(crate) seq: i64,
    /// What the put that carried it was told (pending until it ends).
    pub(crate) outcome: Option<Outcome>,
}

/// Counts for the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct KvCounts {
    /// Puts acknowledged (at the first attempt or a retry).
    pub(crate) puts: u64,
    /// Puts retried after an attempt of unknown outcome (whatever the retry was told).
    pub(crate) retried: u64,
    /// Puts whose outcome stayed unknown.
    pub(crate) unknown: u64,
    /// Syncs acknowledged.
    pub(crate) syncs: u64,
}

/// The store's value schema: a key and a nullable value.
fn value_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("v", DataType::Int64, true),
    ]))
}

/// The store's root: `_kv` of the simulated store.
pub(crate) fn root(store: &Arc<SimStore>) -> StoreRef {
    Arc::new(PrefixStore::new(store.clone() as StoreRef, KV_DIR))
}

/// Creates the store (at setup, before any actor runs).
pub(crate) fn create(store: &Arc<SimStore>) -> Result<(), String> {
    StateStore::create_in_store(root(store), &["k"], value_schema(), StateOptions::default())
        .map(|_| ())
        .map_err(|e| format!("creating the state store: {e}"))
}

fn events_batch(events: &[KvEvent]) -> alluvium::Result<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("v", DataType::Int64, true),
        Field::new(
            "event_time",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("seq", DataType::Int64, false),
        Field::new("op", DataType::Utf8, false),
    ]));
    let ops: Vec<&str> = events
        .iter()
        .map(|e| {
            if e.value.is_some() {
                "UPSERT"
            } else {
                "DELETE"
            }
        })
        .collect();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(events.iter().map(|e| e.key))) as ArrayRef,
            Arc::new(Int64Array::from_iter(events.iter().map(|e| e.value))),
            Arc::new(
                TimestampMicrosecondArray::from_iter_values(events.iter().map(|e| e.time_us))
                    .with_timezone("UTC"),
            ),
            Arc::new(Int64Array::from_iter_values(events.iter().map(|e| e.seq))),
            Arc::new(StringArray::from(ops)),
        ],
    )
    .map_err(|e| alluvium::Error::InvalidArgument(e.to_string()))
}

impl Actor {
    /// The state actor's body: `ops` operations, two puts for each sync (drawn from the
    /// seed). A crash drops the handle; the next operation opens the store again, as a new
    /// process would.
    pub(crate) fn run_kv(&self) {
        let mut kv: Option<StateStore> = None;
        for n in 0..self.ops {
            if self.sched.below(3) == 0 {
                self.kv_sync(&mut kv);
            } else {
                self.kv_put(&mut kv, i64::from(n) + 1);
            }
            if self.sched.stopped() {
                break;
            }
        }
    }

    /// The open store, opening it if the last crash (or a failed open) dropped it.
    fn kv_open<'a>(&self, kv: &'a mut Option<StateStore>) -> Option<&'a StateStore> {
        if kv.is_none() {
            let opened = StateStore::from_store(root(&self.store), StateOptions::default());
            let crashed = self.sched.take_crash(self.id);
            *kv = opened.ok().filter(|_| !crashed);
        }
        kv.as_ref()
    }

    /// Takes a crash of the actor's process, if one happened: the handle is dropped.
    fn kv_crashed(&self, kv: &mut Option<StateStore>) -> bool {
        let c = self.sched.take_crash(self.id);
        if c {
            *kv = None;
        }
        c
    }

    /// Put `n`: 1–3 events (a DELETE in one of four) with `appId` `kv` and version `n`,
    /// retried with the same events and version after an unknown outcome (the state
    /// store's idempotent put: skipped if it landed).
    fn kv_put(&self, kv: &mut Option<StateStore>, n: i64) {
        if self.sched.boundary(self.id, "state put") {
            return;
        }
        let count = 1 + self.sched.below(3);
        let first = self.model().kv.len();
        let events: Vec<KvEvent> = (0..count)
            .map(|j| {
                let seq = (first as u64 + j) as i64 + 1;
                KvEvent {
                    key: self.sched.below(KEYS) as i64,
                    value: (self.sched.below(4) != 0).then_some(seq * 100),
                    // A small range of times: a later put may carry an older event, which
                    // must not overwrite a newer state.
                    time_us: 1_000_000 * self.sched.below(4) as i64,
                    seq,
                    outcome: None,
                }
            })
            .collect();
        self.model().kv.extend(events.iter().cloned());
        let set = |to: Outcome| {
            let mut m = self.model();
            for e in m.kv.iter_mut().skip(first) {
                e.outcome = Some(to);
            }
        };
        let mut unknown = false;
        for _attempt in 0..6 {
            let r = match self.kv_open(kv) {
                Some(store) => {
                    let r = events_batch(&events)
                        .map_err(alluvium_state::StateError::from)
                        .and_then(|b| store.put(&[b], Some((KV_APP, n))));
                    let crashed = self.kv_crashed(kv);
                    Some(classify_kind(r.as_ref().err().map(|e| e.kind()), crashed))
                }
                // The store could not be opened: this attempt did nothing.
                None => None,
            };
            match r {
                Some(Outcome::Acked) => {
                    set(Outcome::Acked);
                    self.model().kv_counts.puts += 1;
                    return;
                }
                Some(Outcome::Failed) | None if !unknown => {
                    set(Outcome::Failed);
                    return;
                }
                _ => {
                    if !unknown {
                        self.model().kv_counts.retried += 1;
                    }
                    unknown = true;
                    set(Outcome::Unknown);
                }
            }
            if self.sched.boundary(self.id, "retry state put") {
                break;
            }
        }
        if unknown {
            self.model().kv_counts.unknown += 1;
        }
    }

    /// A sync: its outcome changes nothing the oracle expects (a sync only folds what the
    /// log holds), but a sync that folded wrongly leaves `state/` wrong for the final one.
    fn kv_sync(&self, kv: &mut Option<StateStore>) {
        if self.sched.boundary(self.id, "state sync") {
            return;
        }
        let ok = self.kv_open(kv).map(StateStore::sync);
        self.kv_crashed(kv);
        if matches!(ok, Some(Ok(_))) {
            self.model().kv_counts.syncs += 1;
        }
    }
}

/// What key `k` may hold after the run: the result of its latest acknowledged event (or
/// absent without one), or of any of its unknown events ordered after that one.
fn allowed(events: &[KvEvent]) -> BTreeMap<i64, Vec<Option<i64>>> {
    let order = |e: &KvEvent| (e.time_us, e.seq);
    let mut latest: BTreeMap<i64, &KvEvent> = BTreeMap::new();
    for e in events.iter().filter(|e| e.outcome == Some(Outcome::Acked)) {
        let slot = latest.entry(e.key).or_insert(e);
        if order(e) > order(slot) {
            *slot = e;
        }
    }
    let mut out: BTreeMap<i64, Vec<Option<i64>>> = BTreeMap::new();
    for k in 0..KEYS as i64 {
        let acked = latest.get(&k);
        let mut values = vec![acked.and_then(|e| e.value)];
        for e in events.iter().filter(|e| {
            e.key == k
                && e.outcome == Some(Outcome::Unknown)
                && acked.is_none_or(|a| order(e) > order(a))
        }) {
            values.push(e.value);
        }
        out.insert(k, values);
    }
    out
}

/// The oracle's part for the state store: reopened from the simulated store alone and
/// synced, its latest state is the fold of the acknowledged events (unknown ones may
/// count); no key holds a value no event gave it.
pub(crate) fn check(store: &Arc<SimStore>, events: &[KvEvent]) -> Result<(), String> {
    let kv = StateStore::from_store(root(store), StateOptions::default())
        .map_err(|e| format!("reopening the state store: {e}"))?;
    kv.sync()
        .map_err(|e| format!("the final state sync: {e}"))?;
    let mut state: BTreeMap<i64, Option<i64>> = BTreeMap::new();
    let reader = kv
        .scan(StateAt::Latest)
        .map_err(|e| format!("scanning the state store: {e}"))?;
    for b in reader {
        let b = b.map_err(|e| format!("scanning the state store: {e}"))?;
        let ks = b
            .column_by_name("k")
            .and_then(|c| c.as_any().downcast_ref::<Int64Array>());
        let vs = b
            .column_by_name("v")
            .and_then(|c| c.as_any().downcast_ref::<Int64Array>());
        let (Some(ks), Some(vs)) = (ks, vs) else {
            return Err("the state store's scan lacks k or v".into());
        };
        for i in 0..b.num_rows() {
            let v = (!vs.is_null(i)).then(|| vs.value(i));
            if state.insert(ks.value(i), v).is_some() {
                return Err(format!("state key {} appears twice", ks.value(i)));
            }
        }
    }
    let allowed = allowed(events);
    for k in state.keys() {
        if !allowed.contains_key(k) {
            return Err(format!("state key {k} was never put"));
        }
    }
    for (k, values) in &allowed {
        // A live key's value; an absent key is `None` (never put, or deleted).
        let got = state.get(k).copied().flatten();
        let live = state.contains_key(k);
        let ok = values.iter().any(|v| match v {
            Some(v) => live && got == Some(*v),
            None => !live,
        });
        if !ok {
            return Err(format!(
                "state key {k}: {} but the events allow {values:?}",
                if live {
                    format!("value {got:?}")
                } else {
                    "absent".to_string()
                }
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(key: i64, value: Option<i64>, time_us: i64, seq: i64, o: Outcome) -> KvEvent {
        KvEvent {
            key,
            value,
            time_us,
            seq,
            outcome: Some(o),
        }
    }

    #[test]
    fn the_fold_takes_the_greatest_order_and_lets_later_unknown_events_count() {
        let events = [
            // Key 0: the later put carries an older time, so the first event stays.
            ev(0, Some(100), 2, 1, Outcome::Acked),
            ev(0, Some(200), 1, 2, Outcome::Acked),
            // An unknown event ordered before the acknowledged one cannot count.
            ev(0, Some(300), 0, 3, Outcome::Unknown),
            // Key 1: deleted, then an unknown upsert after it may count.
            ev(1, Some(400), 0, 4, Outcome::Acked),
            ev(1, None, 0, 5, Outcome::Acked),
            ev(1, Some(600), 0, 6, Outcome::Unknown),
            // Key 2: only a failed event: absent.
            ev(2, Some(700), 0, 7, Outcome::Failed),
        ];
        let a = allowed(&events);
        assert_eq!(a[&0], vec![Some(100)]);
        assert_eq!(a[&1], vec![None, Some(600)]);
        assert_eq!(a[&2], vec![None]);
        assert_eq!(a[&3], vec![None]);
    }
}
