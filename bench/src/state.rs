//! `alluvium-bench state`: the keyed state store's workload (issue 15): `--events` events
//! over `--keys` keys put in batches of `--batch`, a sync after each batch, then `--lookups`
//! point lookups of single keys in the process; one JSON line with the put rate, sync and
//! lookup percentiles and the process's peak memory.
//!
//! The events are generated so that the answer to every lookup is known without keeping a
//! model of the state (memory must measure the store, not the bench): event `e` (0-based)
//! has key `(e * P) mod K` for a `P` coprime with `K`, value `e`, event time `T0 + e` µs and
//! is a `DELETE` when `e % 97 == 96`. Events of one key are `e ≡ k * P⁻¹ (mod K)`, so a
//! key's latest event is the largest such `e` below the events put; each lookup is checked
//! against it and the line counts `lookup_mismatches` (0 unless the store is wrong). Batches
//! touch keys spread over the whole key range, the hard case for a MERGE into a
//! key-clustered state.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use alluvium::Error;
use alluvium_cli::outln;
use alluvium_state::{Result, StateAt, StateError, StateOptions, StateStore};
use arrow::array::{
    Array, ArrayRef, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use clap::Args;
use serde_json::json;

use super::{peak_rss_mib, round3};

/// Arguments of `state`.
#[derive(Debug, Args)]
pub struct StateBenchArgs {
    /// Directory for the new store (must not hold one).
    dir: String,
    /// Events put in total.
    #[arg(long, default_value_t = 10_000_000)]
    events: u64,
    /// Distinct keys.
    #[arg(long, default_value_t = 1_000_000)]
    keys: u64,
    /// Events per put (each followed by a sync).
    #[arg(long, default_value_t = 100_000)]
    batch: u64,
    /// Timed single-key lookups on the final state.
    #[arg(long, default_value_t = 1_000)]
    lookups: u64,
}

/// 2000-01-01T00:00:00Z in microseconds: event `e` happens `e` µs later.
const T0_US: i64 = 946_684_800_000_000;

/// Every 97th event (`e % 97 == 96`) is a delete.
fn is_delete(e: u64) -> bool {
    e % 97 == 96
}

/// The key sequence `e -> (e * p) mod k` and its inverse.
struct Keys {
    k: u64,
    p: u64,
    p_inv: u64,
}

impl Keys {
    fn new(k: u64) -> Result<Keys> {
        // The stride is the first number from k/φ up that is coprime with k: consecutive
        // events land about 0.618 k apart, so every batch covers the whole key range. (A
        // stride near a multiple of k would walk it: 1,000,003 with k = 1,000,000 steps by
        // 3, and a batch of 100,000 events covers a contiguous 30 % of the keys.)
        let start = (k as f64 / 1.618_033_988_749_895) as u64;
        let p = (start.max(1)..=k.max(1))
            .find(|p| gcd(*p, k.max(1)) == 1)
            .ok_or_else(|| Error::InvalidArgument("--keys has no usable stride".into()))?;
        let p_inv = mod_inverse(p % k, k)
            .ok_or_else(|| Error::InvalidArgument("--keys has no usable stride".into()))?;
        Ok(Keys { k, p, p_inv })
    }

    fn key(&self, e: u64) -> u64 {
        ((u128::from(e) * u128::from(self.p)) % u128::from(self.k)) as u64
    }

    /// The latest of the first `n` events with key `key`, if any.
    fn latest(&self, key: u64, n: u64) -> Option<u64> {
        let first = ((u128::from(key) * u128::from(self.p_inv)) % u128::from(self.k)) as u64;
        (first < n).then(|| first + (n - 1 - first) / self.k * self.k)
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `a⁻¹ mod m` (extended Euclid), if `gcd(a, m) == 1`.
fn mod_inverse(a: u64, m: u64) -> Option<u64> {
    if m == 1 {
        return Some(0);
    }
    let (mut old_r, mut r) = (i128::from(a), i128::from(m));
    let (mut old_s, mut s) = (1i128, 0i128);
    while r != 0 {
        let q = old_r / r;
        (old_r, r) = (r, old_r - q * r);
        (old_s, s) = (s, old_s - q * s);
    }
    (old_r == 1).then(|| old_s.rem_euclid(i128::from(m)) as u64)
}

fn event_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("value", DataType::Int64, true),
        Field::new("note", DataType::Utf8, true),
        Field::new(
            "event_time",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("op", DataType::Utf8, true),
    ]))
}

/// Events `from..to`.
fn events(keys: &Keys, from: u64, to: u64) -> Result<RecordBatch> {
    let range = from..to;
    let ids = Int64Array::from_iter_values(range.clone().map(|e| keys.key(e) as i64));
    let values = Int64Array::from_iter_values(range.clone().map(|e| e as i64));
    let notes = StringArray::from_iter_values(range.clone().map(|e| format!("n{}", e % 1000)));
    let times =
        TimestampMicrosecondArray::from_iter_values(range.clone().map(|e| T0_US + e as i64))
            .with_timezone("UTC");
    let ops = StringArray::from_iter_values(
        range.map(|e| if is_delete(e) { "DELETE" } else { "UPSERT" }),
    );
    Ok(RecordBatch::try_new(
        event_schema(),
        vec![
            Arc::new(ids) as ArrayRef,
            Arc::new(values),
            Arc::new(notes),
            Arc::new(times),
            Arc::new(ops),
        ],
    )?)
}

/// The `p`-quantile of sorted `ms` (nearest rank).
fn quantile(ms: &[f64], p: f64) -> f64 {
    if ms.is_empty() {
        return 0.0;
    }
    ms[(((ms.len() - 1) as f64) * p).round() as usize]
}

/// Whether one lookup's answer is the key's latest event (`None`: absent or deleted).
fn lookup_matches(rows: &RecordBatch, latest: Option<u64>) -> Result<bool> {
    let live = latest.filter(|e| !is_delete(*e));
    let Some(e) = live else {
        return Ok(rows.num_rows() == 0);
    };
    if rows.num_rows() != 1 {
        return Ok(false);
    }
    let value = rows
        .column_by_name("value")
        .and_then(|c| c.as_any().downcast_ref::<Int64Array>().cloned())
        .ok_or_else(|| Error::InvalidArgument("the state has no long `value` column".into()))?;
    Ok(value.is_valid(0) && value.value(0) == e as i64)
}

/// Runs `state`.
pub fn run(a: StateBenchArgs) -> alluvium::Result<()> {
    if a.events == 0 || a.keys == 0 || a.batch == 0 {
        return Err(Error::InvalidArgument(
            "--events, --keys and --batch must be at least 1".into(),
        ));
    }
    if Path::new(&a.dir).join("log").exists() {
        return Err(Error::InvalidArgument(format!(
            "{}: a store is there already; the bench needs a fresh directory",
            a.dir
        )));
    }
    measure(a).map_err(|e| match e {
        StateError::Table(e) => e,
        // The store's own errors: their message is all the bench's one error line shows.
        own => Error::InvalidArgument(own.to_string()),
    })
}

/// The workload, on a fresh directory.
fn measure(a: StateBenchArgs) -> Result<()> {
    let keys = Keys::new(a.keys)?;
    let value_schema = Arc::new(Schema::new(
        event_schema()
            .fields()
            .iter()
            .filter(|f| !["event_time", "op"].contains(&f.name().as_str()))
            .cloned()
            .collect::<Vec<_>>(),
    ));
    let store = StateStore::create(&a.dir, &["id"], value_schema, StateOptions::default())?;
    let mut put_seconds = 0.0;
    let mut sync_ms = Vec::new();
    let mut from = 0;
    while from < a.events {
        let to = (from + a.batch).min(a.events);
        let batch = events(&keys, from, to)?;
        let started = Instant::now();
        store.put(&[batch], None)?;
        put_seconds += started.elapsed().as_secs_f64();
        let started = Instant::now();
        store.sync()?;
        sync_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        from = to;
    }
    let mut get_ms = Vec::new();
    let mut mismatches = 0u64;
    for i in 0..a.lookups {
        // Keys spread over the range, the same for every run.
        let key = keys.key(i.wrapping_mul(7919) % a.keys.max(1)) % a.keys;
        let probe = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)])),
            vec![Arc::new(Int64Array::from(vec![key as i64])) as ArrayRef],
        )?;
        let started = Instant::now();
        let rows = store.get(&probe, StateAt::Latest)?;
        get_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        if !lookup_matches(&rows, keys.latest(key, a.events))? {
            mismatches += 1;
        }
    }
    let status = store.status()?;
    sync_ms.sort_by(f64::total_cmp);
    get_ms.sort_by(f64::total_cmp);
    let status_json = serde_json::to_value(&status)
        .map_err(|e| Error::InvalidArgument(format!("cannot print the status: {e}")))?;
    outln!(
        "{}",
        json!({"bench": "state", "events": a.events, "keys": a.keys, "batch": a.batch, "lookups": a.lookups,
               "put_events_per_s": round3(a.events as f64 / put_seconds.max(1e-9)),
               "put_seconds": round3(put_seconds),
               "syncs": sync_ms.len(),
               "sync_ms_p50": round3(quantile(&sync_ms, 0.5)), "sync_ms_p99": round3(quantile(&sync_ms, 0.99)),
               "sync_ms_max": round3(quantile(&sync_ms, 1.0)),
               "get_ms_p50": round3(quantile(&get_ms, 0.5)), "get_ms_p99": round3(quantile(&get_ms, 0.99)),
               "lookup_mismatches": mismatches,
               "status": status_json,
               "peak_rss_mib": peak_rss_mib()})
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn the_latest_event_of_a_key_is_found_without_a_model() {
        for k in [1u64, 2, 7, 97, 1000, 1_000_000, 1_000_003] {
            let keys = Keys::new(k).unwrap();
            let n = 3 * k.min(500) + 11;
            let mut last = std::collections::HashMap::new();
            for e in 0..n {
                last.insert(keys.key(e), e);
            }
            for key in 0..k.min(2000) {
                assert_eq!(
                    keys.latest(key, n),
                    last.get(&key).copied(),
                    "k={k} key={key}"
                );
            }
        }
    }

    /// A batch touches keys over the whole range (what the module docs promise): 100,000
    /// events over 1,000,000 keys put about a tenth of them in every tenth of the range.
    #[test]
    fn a_batch_spreads_over_the_whole_key_range() {
        let keys = Keys::new(1_000_000).unwrap();
        let mut deciles = [0u32; 10];
        for e in 500_000..600_000 {
            deciles[(keys.key(e) / 100_000) as usize] += 1;
        }
        assert!(
            deciles.iter().all(|n| (9_000..=11_000).contains(n)),
            "{deciles:?}"
        );
    }
}
