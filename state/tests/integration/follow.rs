//! Follow mode of the state store (`StateStore::follow`, SPEC.md §26 "Follow mode"): each
//! new log version is folded after the poll that sees it, each event once; the polls
//! refresh the log's snapshot incrementally (every new commit read once, no checkpoint read
//! although the log checkpoints every two versions); a set flag stops the loop between
//! commits. Waiting is on the follower's own reports, never on time.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use alluvium::VersionSpec;
use alluvium_state::{StateAt, StateOptions, StateStore, SyncReport};
use alluvium_storage::{InMemoryStore, StoreRef};

use super::state::{Ev, batch, model, state_at, value_schema};

/// A hang guard for waiting on the follower, not a timing assertion.
const PATIENCE: Duration = Duration::from_secs(120);

fn store_with_checkpoints_every_two_versions() -> StateStore {
    let root: StoreRef = Arc::new(InMemoryStore::new());
    StateStore::create_in_store(
        root,
        &["id"],
        value_schema(),
        StateOptions::default().with_log_property("delta.checkpointInterval", "2"),
    )
    .unwrap()
}

/// Puts `evs` (seq given) and records them in `log` under the version committed.
fn put(store: &StateStore, log: &mut Vec<(u64, Vec<Ev>)>, evs: Vec<Ev>) -> u64 {
    let v = store
        .put(&[batch(&evs, true)], None)
        .unwrap()
        .log_version
        .unwrap();
    log.push((v, evs));
    v
}

/// Receives the follower's sync reports until one has applied log version `v`.
fn until_synced(rx: &mpsc::Receiver<SyncReport>, v: u64, seen: &mut Vec<SyncReport>) {
    loop {
        let r = rx
            .recv_timeout(PATIENCE)
            .expect("the follower stopped reporting");
        let done = r.synced_through.is_some_and(|t| t >= v);
        seen.push(r);
        if done {
            return;
        }
    }
}

#[test]
fn a_follower_folds_every_new_log_version_once_and_stops_on_its_flag() {
    let store = store_with_checkpoints_every_two_versions();
    let mut log: Vec<(u64, Vec<Ev>)> = Vec::new();
    // Put before following: the follower's first sync catches up with it.
    let before = put(
        &store,
        &mut log,
        vec![Ev::up(1, "a", 10, Some(1)), Ev::up(2, "b", 10, Some(2))],
    );
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let follower = {
        let (store, stop) = (store.clone(), stop.clone());
        std::thread::spawn(move || {
            store.follow(Duration::from_millis(1), &stop, |r| {
                let _ = tx.send(r.clone());
            })
        })
    };
    let mut seen = Vec::new();
    until_synced(&rx, before, &mut seen);
    let mut last = before;
    for round in 0..6i64 {
        // Out of order, a delete, a re-insert, a late older event: the fold decides.
        let evs = vec![
            Ev::up(
                round % 3,
                &format!("r{round}"),
                20 - round,
                Some(10 + round),
            ),
            Ev::del((round + 1) % 3, 15, Some(100 + round)),
            Ev::up(10 + round, "new", 5, Some(200 + round)),
        ];
        last = put(&store, &mut log, evs);
        until_synced(&rx, last, &mut seen);
        assert_eq!(state_at(&store, StateAt::Latest), model(&log, Some(last)));
    }
    stop.store(true, Ordering::SeqCst);
    let report = follower.join().unwrap().unwrap();
    seen.extend(rx.try_iter());

    // Each event applied once, whichever sync applied it.
    let events: u64 = seen.iter().map(|r| r.events).sum();
    let put_events: usize = log.iter().map(|(_, evs)| evs.len()).sum();
    assert_eq!(events, put_events as u64);
    // The polls read each commit after the follower's first load once, and no checkpoint.
    assert_eq!(report.log_version, last);
    assert_eq!(report.commits_read, last - before);
    assert_eq!(report.checkpoint_files_read, 0);
    // (A fresh load: the log did checkpoint, which a reload would have read.)
    let fresh = store.log_table().snapshot_at(VersionSpec::Latest).unwrap();
    assert!(fresh.checkpoint_version().is_some());
    assert!(report.syncs >= 7 && report.polls >= 6, "{report:?}");
    assert_eq!(store.lag().unwrap().versions, 0);
}

#[test]
fn a_flag_set_before_the_start_stops_before_any_sync() {
    let store = store_with_checkpoints_every_two_versions();
    let mut log = Vec::new();
    put(&store, &mut log, vec![Ev::up(1, "a", 10, Some(1))]);
    let stop = AtomicBool::new(true);
    let mut syncs = 0;
    let report = store
        .follow(Duration::from_millis(1), &stop, |_| syncs += 1)
        .unwrap();
    assert_eq!((report.syncs, report.polls, syncs), (0, 0, 0));
    // Nothing was applied: the state is still empty and the put still lags.
    assert!(state_at(&store, StateAt::Latest).is_empty());
    assert_eq!(store.lag().unwrap().events, 1);
}
