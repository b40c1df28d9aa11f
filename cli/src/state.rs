//! `alluvium state ...`: the keyed state store (`alluvium::state`, SPEC.md §26) on the
//! command line: create a store, append events, fold them into the state (once or following
//! the log), read keys, the whole state or a key's history, and drop old synced log days.
//!
//! Thin: each subcommand calls one `StateStore` method and prints what it returns. Reports
//! are printed as one JSON line each (a write that landed reports after the fact, see
//! [`crate::report::print_after_write`]); rows as an aligned table, JSON lines, CSV or
//! Parquet like `scan`.

mod key;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use alluvium::state::{StateAt, StateOptions, StateStore};
use alluvium::{Error, Result};
use arrow::datatypes::{Field, FieldRef, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use clap::{Args, Subcommand};
use serde::Serialize;

use super::input::{infer_schema, read_batches};
use super::output::{Format, Protected, destination, stdout, write_stream};
use super::parse_timestamp_arg;
use super::report::print_after_write;
use super::storage_options::env_pairs;

/// Arguments of `state`.
#[derive(Debug, Args)]
pub struct StateArgs {
    #[command(subcommand)]
    command: StateCommand,
}

#[derive(Debug, Subcommand)]
enum StateCommand {
    /// Create a store: a `log/` table of events and a `state/` table of the latest event per
    /// key, both ordinary Delta tables.
    Init(InitArgs),
    /// Append the events of a file to the log (blind appends: producers never conflict).
    Put(PutArgs),
    /// Fold every log version not yet applied into the state (once, or following the log).
    Sync(SyncArgs),
    /// Print the state of some keys (latest, or at a state version or time).
    Get(GetArgs),
    /// Print the whole state (latest, or at a state version or time).
    Scan(ScanArgs),
    /// Print every event of one key from the log, in the store's order.
    History(HistoryArgs),
    /// Print the store's versions, how far the state lags the log, and its key count.
    Status(StoreArg),
    /// Drop log days older than --keep-days whose every event is synced.
    Retain(RetainArgs),
}

/// Arguments of `state init`.
#[derive(Debug, Args)]
struct InitArgs {
    /// Store location (a directory or an object-store URI).
    store: String,
    /// Key columns (comma-separated; a composite key names several).
    #[arg(long, value_delimiter = ',', required = true)]
    key: Vec<String>,
    /// A data file shaped like the events `put` takes (`.parquet`, `.csv` or `.jsonl`): key
    /// and value columns plus `event_time`, optionally `seq` and `op`.
    #[arg(long)]
    schema_from: String,
}

/// Arguments of `state put`.
#[derive(Debug, Args)]
struct PutArgs {
    /// Store location.
    store: String,
    /// Events: `.parquet`, `.csv` or `.jsonl` with the key and value columns, `event_time`,
    /// optionally `seq` (long) and `op` (`UPSERT` or `DELETE`; missing means `UPSERT`).
    file: String,
    /// Idempotent put: the producer's application id (with --app-version).
    #[arg(long, requires = "app_version")]
    app_id: Option<String>,
    /// Idempotent put: the producer's version of these events (a put whose version is not
    /// above the one recorded for the id is skipped).
    #[arg(long, requires = "app_id")]
    app_version: Option<i64>,
}

/// Arguments of `state sync`.
#[derive(Debug, Args)]
struct SyncArgs {
    /// Store location.
    store: String,
    /// Keep running: poll the log and fold what arrives, until SIGINT or SIGTERM (it stops
    /// between commits, never inside one).
    #[arg(long)]
    follow: bool,
    /// Poll interval of --follow, in milliseconds.
    #[arg(long, default_value_t = 1000, requires = "follow")]
    interval_ms: u64,
}

/// Selects a state version (`--version`) or time (`--timestamp`); default the latest.
#[derive(Debug, Args)]
struct AtArgs {
    /// Read this version of the state table.
    #[arg(long, conflicts_with = "timestamp")]
    version: Option<i64>,
    /// Read the state as of this time (RFC 3339, `YYYY-MM-DD[ HH:MM:SS]` in UTC, or
    /// milliseconds since the epoch).
    #[arg(long)]
    timestamp: Option<String>,
}

impl AtArgs {
    fn at(&self) -> Result<StateAt> {
        if let Some(v) = self.version {
            return Ok(StateAt::Version(v));
        }
        match &self.timestamp {
            Some(t) => Ok(StateAt::Timestamp(parse_timestamp_arg(t)?)),
            None => Ok(StateAt::Latest),
        }
    }
}

/// Arguments of `state get`.
#[derive(Debug, Args)]
struct GetArgs {
    /// Store location.
    store: String,
    /// Keys: the value of a one-column key (or `col=value`); `a=1,b=x` for a composite key.
    #[arg(required = true)]
    keys: Vec<String>,
    #[command(flatten)]
    at: AtArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// Arguments of `state scan`.
#[derive(Debug, Args)]
struct ScanArgs {
    /// Store location.
    store: String,
    #[command(flatten)]
    at: AtArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Write to this file instead of stdout.
    #[arg(long)]
    output: Option<String>,
}

/// Arguments of `state history`.
#[derive(Debug, Args)]
struct HistoryArgs {
    /// Store location.
    store: String,
    /// The key: as for `state get`.
    key: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// A store location alone.
#[derive(Debug, Args)]
struct StoreArg {
    /// Store location.
    store: String,
}

/// Arguments of `state retain`.
#[derive(Debug, Args)]
struct RetainArgs {
    /// Store location.
    store: String,
    /// Keep the log days of the last N days (UTC dates of `event_time`).
    #[arg(long)]
    keep_days: u32,
    /// Print what would be dropped; change nothing.
    #[arg(long)]
    dry_run: bool,
}

/// The columns an event file may carry besides the key and value columns.
const EVENT_COLUMNS: [&str; 3] = ["event_time", "seq", "op"];

/// The options of a store opened or created by the command line: object-store locations
/// take the pairs of [`crate::STORAGE_OPTIONS_ENV`], as every other command.
fn options(location: &str) -> Result<StateOptions> {
    let mut options = StateOptions::default();
    if alluvium::remote_scheme(location).is_some() {
        for (k, v) in env_pairs()? {
            options = options.with_storage_option(&k, &v);
        }
    }
    Ok(options)
}

fn open(store: &str) -> Result<StateStore> {
    StateStore::open(store, options(store)?)
}

/// A report as one JSON line.
fn json_line(report: &impl Serialize) -> Result<String> {
    serde_json::to_string(report)
        .map_err(|e| Error::InvalidArgument(format!("cannot print the report: {e}")))
}

/// The key columns of the store as Arrow fields of its state table.
fn key_fields(store: &StateStore) -> Result<Vec<FieldRef>> {
    let schema = store.state_schema();
    store
        .key_columns()
        .iter()
        .map(|k| {
            schema
                .field_with_name(k)
                .map(|f| Arc::new(f.clone()))
                .map_err(Error::from)
        })
        .collect()
}

fn init(a: InitArgs) -> Result<()> {
    // The file is shaped like the events; the store's value schema is the rest.
    let file = infer_schema(&a.schema_from)?;
    let fields: Vec<Field> = file
        .fields()
        .iter()
        .filter(|f| !EVENT_COLUMNS.contains(&f.name().as_str()))
        .map(|f| f.as_ref().clone())
        .collect();
    let value_schema: SchemaRef = Arc::new(Schema::new(fields));
    let keys: Vec<&str> = a.key.iter().map(|k| k.trim()).collect();
    let store = StateStore::create(&a.store, &keys, value_schema, options(&a.store)?)?;
    // The store exists now: its status is news of it, and cannot fail the command.
    let status = store.status().map_or_else(
        |e| format!("(status unavailable: {})", crate::exit::one_line(&e)),
        |s| json_line(&s).unwrap_or_default(),
    );
    print_after_write(&format!(
        "created state store {} (key: {})\n{status}\n",
        a.store,
        keys.join(", "),
    ));
    Ok(())
}

fn put(a: PutArgs) -> Result<()> {
    let store = open(&a.store)?;
    let batches = read_batches(&a.file, Some(store.log_schema().as_ref()))?;
    let idempotency = match (&a.app_id, a.app_version) {
        (Some(id), Some(v)) => Some((id.as_str(), v)),
        _ => None,
    };
    let report = store.put(&batches, idempotency)?;
    print_after_write(&format!("{}\n", json_line(&report)?));
    Ok(())
}

/// The flag SIGINT and SIGTERM set; a second SIGINT or SIGTERM ends the process at once
/// (the way out of a sync that will not stop).
fn stop_on_signals() -> Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::flag;
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag as it was before this signal set it.
        flag::register_conditional_shutdown(signal, 130, stop.clone()).map_err(io_error)?;
        flag::register(signal, stop.clone()).map_err(io_error)?;
    }
    Ok(stop)
}

fn io_error(e: std::io::Error) -> Error {
    Error::Io {
        context: "signal handler".into(),
        source: e,
    }
}

fn sync(a: SyncArgs) -> Result<()> {
    let store = open(&a.store)?;
    if !a.follow {
        let report = store.sync()?;
        print_after_write(&format!("{}\n", json_line(&report)?));
        return Ok(());
    }
    let stop = stop_on_signals()?;
    let mut printed: Result<()> = Ok(());
    let report = store.follow(Duration::from_millis(a.interval_ms.max(1)), &stop, |r| {
        // One line per sync that applied something; the state committed already.
        if printed.is_ok() && r.chunks > 0 {
            printed = json_line(r).map(|l| print_after_write(&format!("{l}\n")));
        }
    })?;
    printed?;
    print_after_write(&format!("{}\n", json_line(&report)?));
    Ok(())
}

fn get(a: GetArgs) -> Result<()> {
    let store = open(&a.store)?;
    let keys = key::key_batch(&a.keys, &key_fields(&store)?)?;
    let rows = store.get(&keys, a.at.at()?)?;
    write_stream(a.format, rows.schema(), std::iter::once(rows), stdout())
}

fn scan(a: ScanArgs) -> Result<()> {
    let store = open(&a.store)?;
    let reader = store.scan(a.at.at()?)?;
    let schema = reader.schema();
    write_stream(
        a.format,
        schema,
        reader.map(|b| b.map_err(Error::from)),
        destination(
            a.output.as_deref(),
            Protected {
                location: &a.store,
                what: "state store",
            },
        )?,
    )
}

fn history(a: HistoryArgs) -> Result<()> {
    let store = open(&a.store)?;
    let key = key::key_batch(std::slice::from_ref(&a.key), &key_fields(&store)?)?;
    let rows: RecordBatch = store.history(&key)?;
    write_stream(a.format, rows.schema(), std::iter::once(rows), stdout())
}

fn status(a: StoreArg) -> Result<()> {
    let status = open(&a.store)?.status()?;
    crate::outln!("{}", json_line(&status)?);
    Ok(())
}

fn retain(a: RetainArgs) -> Result<()> {
    let report = open(&a.store)?.retain(a.keep_days, a.dry_run)?;
    print_after_write(&format!("{}\n", json_line(&report)?));
    Ok(())
}

/// Runs `state ...`.
pub fn run(a: StateArgs) -> Result<ExitCode> {
    match a.command {
        StateCommand::Init(a) => init(a),
        StateCommand::Put(a) => put(a),
        StateCommand::Sync(a) => sync(a),
        StateCommand::Get(a) => get(a),
        StateCommand::Scan(a) => scan(a),
        StateCommand::History(a) => history(a),
        StateCommand::Status(a) => status(a),
        StateCommand::Retain(a) => retain(a),
    }?;
    Ok(ExitCode::SUCCESS)
}
