//! Stress with operating-system processes (SPEC.md §26, issue 15 item 8): four producer
//! processes (`alluvium state put`, one at a time each, idempotent, one put repeated as a
//! crashed producer's retry would) and two `alluvium state sync --follow` processes on one
//! store on local disk. At the end the state equals the fold of every acknowledged event,
//! the log holds each event exactly once, and the two followers together applied each
//! event exactly once (the sums of their sync reports).

use std::sync::{Arc, Mutex};

use super::common::ok;
use super::state::{
    Event, fold, follower, state_rows, status, terminate, wait_synced, write_events,
};

const PRODUCERS: i64 = 4;
const ROUNDS: i64 = 6;
const EVENTS_PER_PUT: i64 = 25;
const KEYS: i64 = 40;

/// A small deterministic generator (xorshift), so a failure replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: i64) -> i64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as i64
    }
}

/// Producer `p`'s events of round `r`: random keys, event times in a narrow window (many
/// out of order across producers, many equal so that `seq` decides), ~1/6 deletes. `seq`
/// is unique over the test, so it names the event.
fn events(p: i64, r: i64) -> Vec<Event> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((p as u64) << 32 | r as u64));
    (0..EVENTS_PER_PUT)
        .map(|i| Event {
            id: rng.below(KEYS),
            amount: p * 1_000_000 + r * 1_000 + i,
            t_us: rng.below(30),
            seq: rng.below(1_000) * 1_000_000 + p * 10_000 + r * 100 + i,
            delete: rng.below(6) == 0,
        })
        .collect()
}

#[test]
fn four_producer_processes_and_two_followers_end_with_the_fold_of_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s").to_string_lossy().into_owned();
    let sample = dir.path().join("sample.csv");
    write_events(&sample, &events(0, 0));
    ok(&[
        "state",
        "init",
        &store,
        "--key",
        "id",
        "--schema-from",
        sample.to_str().unwrap(),
    ]);
    let followers = [follower(&store, 10), follower(&store, 25)];
    let acknowledged: Arc<Mutex<Vec<Event>>> = Arc::default();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let (store, acknowledged) = (store.clone(), acknowledged.clone());
            let dir = dir.path().to_path_buf();
            std::thread::spawn(move || {
                for r in 0..ROUNDS {
                    let batch = events(p, r);
                    let f = dir.join(format!("p{p}-r{r}.csv"));
                    write_events(&f, &batch);
                    let put = |f: &str| -> serde_json::Value {
                        let args = [
                            "state",
                            "put",
                            &store,
                            f,
                            "--app-id",
                            &format!("producer-{p}"),
                            "--app-version",
                            &r.to_string(),
                            "--json",
                        ];
                        serde_json::from_str(&ok(&args)).unwrap()
                    };
                    let first = put(f.to_str().unwrap());
                    assert_eq!(first["skipped"], false, "{first}");
                    acknowledged.lock().unwrap().extend(batch);
                    if r == 2 {
                        // A producer that lost the acknowledgement puts again: skipped.
                        let again = put(f.to_str().unwrap());
                        assert_eq!(again["skipped"], true, "{again}");
                    }
                }
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    wait_synced(&store);
    let [a, b] = followers;
    let reports: Vec<serde_json::Value> = terminate(a).into_iter().chain(terminate(b)).collect();

    let events = acknowledged.lock().unwrap().clone();
    let total = (PRODUCERS * ROUNDS * EVENTS_PER_PUT) as u64;
    assert_eq!(events.len() as u64, total);
    // The log holds each acknowledged event once (seq names it).
    let log = ok(&["scan", &format!("{store}/log"), "--format", "jsonl"]);
    let mut seqs: Vec<i64> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
                .as_i64()
                .unwrap()
        })
        .collect();
    seqs.sort_unstable();
    let mut want: Vec<i64> = events.iter().map(|e| e.seq).collect();
    want.sort_unstable();
    assert_eq!(seqs, want);
    // The followers' syncs applied every event exactly once between them.
    let applied: u64 = reports
        .iter()
        .filter(|r| r.get("polls").is_none())
        .map(|r| r["events"].as_u64().unwrap())
        .sum();
    assert_eq!(applied, total, "{reports:?}");
    // The state is the fold of the log.
    assert_eq!(state_rows(&store), fold(&events));
    let s = status(&store);
    assert_eq!(s["lag"]["events"], 0, "{s}");
    assert_eq!(s["keys"].as_u64().unwrap() as usize, fold(&events).len());
}
