//! A keyed state store (crate `alluvium-state`): account balances kept as an immutable log of
//! events, with the latest balance per account folded into a table by `sync`.
//!
//! * producers `put` events (key, value, `event_time`, optional `seq` and `op`) as blind
//!   appends to `log/`: any number of them at once, never conflicting;
//! * `sync` folds what is new into `state/` with one MERGE per chunk, recording how far it
//!   got in the same commit, so it can crash or race another sync and still apply each
//!   event once;
//! * an event older than a key's state never overwrites it (late events are harmless),
//!   and a deleted key stays deleted unless a newer UPSERT comes;
//! * every past state is a version of `state/`: read it as of a version or a time.
//!
//! Run: `cargo run -p alluvium-state --example state_store`

use std::sync::Arc;

use alluvium::arrow::array::{Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use alluvium::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use alluvium::arrow::util::display::{ArrayFormatter, FormatOptions};
use alluvium_state::{StateAt, StateOptions, StateStore};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// 2024-01-01T00:00:00Z in microseconds.
const JAN_1: i64 = 1_704_067_200_000_000;
const MINUTE: i64 = 60_000_000;

/// Events: (account, balance, minutes after JAN_1, op).
fn events(rows: &[(&str, i64, i64, &str)]) -> Res<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("account", DataType::Utf8, false),
        Field::new("balance", DataType::Int64, true),
        Field::new(
            "event_time",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("op", DataType::Utf8, false),
    ]));
    Ok(RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(
                TimestampMicrosecondArray::from_iter_values(
                    rows.iter().map(|r| JAN_1 + r.2 * MINUTE),
                )
                .with_timezone("UTC"),
            ),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.3))),
        ],
    )?)
}

fn accounts(names: &[&str]) -> Res<RecordBatch> {
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new(
            "account",
            DataType::Utf8,
            false,
        )])),
        vec![Arc::new(StringArray::from_iter_values(
            names.iter().copied(),
        ))],
    )?)
}
/// A scratch directory for the example's tables, removed when dropped (as `tempfile`'s
/// `TempDir`, without the dependency: an embedder's project needs only `alluvium`).
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path =
            std::env::temp_dir().join(format!("alluvium-example-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(Scratch(path))
    }

    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The rows of `batch`, one `column=value, ...` line each. Arrow's display of the
/// `event_time` timestamps (zone `UTC`) needs Arrow's time-zone database, which `alluvium`'s
/// default features turn on.
fn rows(batch: &RecordBatch) -> Res<String> {
    let options = FormatOptions::default().with_null("NULL");
    let schema = batch.schema();
    let formatters = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = String::new();
    for row in 0..batch.num_rows() {
        let cells: Vec<String> = schema
            .fields()
            .iter()
            .zip(&formatters)
            .map(|(f, fmt)| format!("{}={}", f.name(), fmt.value(row)))
            .collect();
        out.push_str(&format!("  {}\n", cells.join(", ")));
    }
    Ok(out)
}

fn main() -> Res<()> {
    let dir = Scratch::new()?;
    let location = dir.path().join("balances");
    let location = location.to_str().ok_or("non-UTF-8 temporary path")?;

    // The store: key `account`, value `balance`. The schema of sample events will do.
    let sample = events(&[])?;
    let store = StateStore::create(
        location,
        &["account"],
        sample.schema(),
        StateOptions::default(),
    )?;

    // Two producers' batches; `alice` changes twice within one batch.
    store.put(
        &[events(&[
            ("alice", 100, 0, "UPSERT"),
            ("bob", 50, 1, "UPSERT"),
            ("alice", 120, 5, "UPSERT"),
        ])?],
        None,
    )?;
    // An idempotent put: running it again (a retried producer) writes nothing.
    let batch = events(&[("carol", 10, 2, "UPSERT")])?;
    store.put(std::slice::from_ref(&batch), Some(("producer-2", 1)))?;
    let again = store.put(&[batch], Some(("producer-2", 1)))?;
    assert!(again.skipped);

    let first = store.sync()?;
    println!(
        "sync: {} events folded, {} keys inserted",
        first.events, first.inserted
    );
    let first_version = first.state_version.ok_or("no state version")?;

    // A late event (older than alice's state: ignored) and a delete of bob.
    store.put(
        &[events(&[
            ("alice", 999, 3, "UPSERT"),
            ("bob", 0, 10, "DELETE"),
        ])?],
        None,
    )?;
    println!("lag before the second sync: {:?}", store.lag()?);
    store.sync()?;

    let latest = store.get(&accounts(&["alice", "bob", "carol"])?, StateAt::Latest)?;
    println!("latest state:\n{}", rows(&latest)?);
    let past = store.get(
        &accounts(&["alice", "bob", "carol"])?,
        StateAt::Version(first_version as i64),
    )?;
    println!("state after the first sync:\n{}", rows(&past)?);
    let history = store.history(&accounts(&["alice"])?)?;
    println!("alice's events:\n{}", rows(&history)?);
    println!("status: {:?}", store.status()?);
    Ok(())
}
