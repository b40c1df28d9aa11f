//! `alluvium state ...`: the keyed state store (crate `alluvium-state`, SPEC.md §26) on the
//! command line: create a store, append events, fold them into the state (once or following
//! the log), read keys, the whole state or a key's history, and drop old synced log days.
//!
//! Thin: each subcommand calls one `StateStore` method and prints what it returns. A write
//! (`init`, `put`, `sync`, `retain`) prints one line saying what it did, or with `--json`
//! its report as one JSON object (after the fact, see
//! [`crate::report::print_after_write`]); `status` prints its JSON object; rows are printed
//! as an aligned table, JSON lines, CSV or Parquet like `scan`.

mod key;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use alluvium::Error;
use alluvium_state::{Result, StateAt, StateError, StateOptions, StateStore};
use arrow::datatypes::{Field, FieldRef, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use clap::{Args, Subcommand};
use serde::Serialize;
use serde_json::Value;

use super::input::{infer_schema, read_batches};
use super::output::{
    Format, Protected, Shape, destination, refuse_binary_on_terminal, stdout, write_stream,
};
use super::parse_timestamp_arg;
use super::storage_options::env_pairs;
use super::summary::{JsonFlag, Outcome, count};

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
    #[command(flatten)]
    out: JsonFlag,
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
    #[command(flatten)]
    out: JsonFlag,
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
    #[command(flatten)]
    out: JsonFlag,
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
    #[command(flatten)]
    out: JsonFlag,
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
    Ok(serde_json::to_string(report)
        .map_err(|e| Error::InvalidArgument(format!("cannot print the report: {e}")))?)
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
                .map_err(StateError::from)
        })
        .collect()
}

fn init(a: InitArgs) -> Result<()> {
    let started = Instant::now();
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
        |e| serde_json::json!({ "error": crate::exit::one_line(&cli_error(e)) }),
        |s| serde_json::to_value(&s).unwrap_or_default(),
    );
    Outcome::new("STATE INIT", started)
        .line(format!(
            "created state store {} (key: {})",
            a.store,
            keys.join(", ")
        ))
        .field("store", a.store.clone())
        .field("key", keys)
        .field("status", status)
        .emit(a.out.json);
    Ok(())
}

/// A report as a JSON value (its fields become the JSON object's).
fn report_value(report: &impl Serialize) -> Value {
    serde_json::to_value(report).unwrap_or_default()
}

fn put(a: PutArgs) -> Result<()> {
    let started = Instant::now();
    let store = open(&a.store)?;
    let batches = read_batches(&a.file, Some(store.log_schema().as_ref()))?;
    let idempotency = match (&a.app_id, a.app_version) {
        (Some(id), Some(v)) => Some((id.as_str(), v)),
        _ => None,
    };
    let report = store.put(&batches, idempotency)?;
    let line = if report.skipped {
        format!(
            "skipped: application {} already put its version {}",
            a.app_id.as_deref().unwrap_or(""),
            a.app_version.unwrap_or(0)
        )
    } else if report.log_version.is_none() {
        "nothing to put: the file holds no events".to_string()
    } else {
        format!(
            "put {} in {} into the log",
            count(report.events, "event"),
            count(report.files, "file")
        )
    };
    Outcome::new("STATE PUT", started)
        .line(line)
        .version(report.log_version)
        .fields_of(report_value(&report))
        .emit(a.out.json);
    Ok(())
}

/// The line of one sync.
fn sync_line(r: &alluvium_state::SyncReport) -> String {
    match r.synced_from {
        None => format!(
            "nothing to sync: the state has every log version through {}",
            r.log_version
        ),
        Some(from) => format!(
            "synced {} ({}): {} inserted, {} updated, {} deleted; state version {}",
            match r.synced_through.unwrap_or(r.log_version) {
                to if to == from => format!("log version {from}"),
                to => format!("log versions {from} to {to}"),
            },
            count(r.events, "event"),
            r.inserted,
            r.updated,
            r.deleted,
            r.state_version
                .map_or_else(|| "none".to_string(), |v| v.to_string())
        ),
    }
}

/// Prints one sync's outcome.
fn print_sync(r: &alluvium_state::SyncReport, started: Instant, json: bool) {
    Outcome::new("STATE SYNC", started)
        .line(sync_line(r))
        .fields_of(report_value(r))
        .emit(json);
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
    let started = Instant::now();
    let store = open(&a.store)?;
    if !a.follow {
        let report = store.sync()?;
        print_sync(&report, started, a.out.json);
        return Ok(());
    }
    let stop = stop_on_signals()?;
    let report = store.follow(Duration::from_millis(a.interval_ms.max(1)), &stop, |r| {
        // One line per sync that applied something; the state committed already.
        if r.chunks > 0 {
            print_sync(r, Instant::now(), a.out.json);
        }
    })?;
    Outcome::new("STATE SYNC", started)
        .line(format!(
            "stopped following after {}: the log is at version {}",
            count(report.syncs, "sync"),
            report.log_version
        ))
        .fields_of(report_value(&report))
        .emit(a.out.json);
    Ok(())
}

fn get(a: GetArgs) -> Result<()> {
    let store = open(&a.store)?;
    let keys = key::key_batch(&a.keys, &key_fields(&store)?)?;
    let rows = store.get(&keys, a.at.at()?)?;
    refuse_binary_on_terminal(a.format, None)?;
    Ok(write_stream(
        a.format,
        rows.schema(),
        std::iter::once(rows),
        stdout(),
        Shape::ALL,
    )?)
}

fn scan(a: ScanArgs) -> Result<()> {
    refuse_binary_on_terminal(a.format, a.output.as_deref())?;
    let store = open(&a.store)?;
    let reader = store.scan(a.at.at()?)?;
    let schema = reader.schema();
    Ok(write_stream(
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
        Shape::ALL,
    )?)
}

fn history(a: HistoryArgs) -> Result<()> {
    let store = open(&a.store)?;
    let key = key::key_batch(std::slice::from_ref(&a.key), &key_fields(&store)?)?;
    let rows: RecordBatch = store.history(&key)?;
    refuse_binary_on_terminal(a.format, None)?;
    Ok(write_stream(
        a.format,
        rows.schema(),
        std::iter::once(rows),
        stdout(),
        Shape::ALL,
    )?)
}

fn status(a: StoreArg) -> Result<()> {
    let status = open(&a.store)?.status()?;
    crate::outln!("{}", json_line(&status)?);
    Ok(())
}

fn retain(a: RetainArgs) -> Result<()> {
    let started = Instant::now();
    let report = open(&a.store)?.retain(a.keep_days, a.dry_run)?;
    let verb = if report.dry_run {
        "would drop"
    } else {
        "dropped"
    };
    let line = match report.partitions_dropped.is_empty() {
        true => format!(
            "nothing to drop: no log day before {} is wholly synced",
            report.cutoff_date
        ),
        false => format!(
            "{verb} {} before {} ({}, {})",
            count(report.partitions_dropped.len() as u64, "log day"),
            report.cutoff_date,
            count(report.files_removed, "file"),
            count(report.events_removed, "event")
        ),
    };
    let outcome = Outcome::new("STATE RETAIN", started)
        .line(line)
        .version(report.log_version)
        .fields_of(report_value(&report));
    // A dry run changed nothing: its answer is its result.
    if report.dry_run {
        let text = match a.out.json {
            true => outcome.to_json().to_string(),
            false => outcome.to_line(),
        };
        crate::outln!("{text}");
        return Ok(());
    }
    outcome.emit(a.out.json);
    Ok(())
}

/// Runs `state ...`. The store's own errors come back as their message, which is what the
/// command line prints of any error (one line, exit status 1); the tables' errors come
/// back as themselves.
pub fn run(a: StateArgs) -> alluvium::Result<ExitCode> {
    let done = match a.command {
        StateCommand::Init(a) => init(a),
        StateCommand::Put(a) => put(a),
        StateCommand::Sync(a) => sync(a),
        StateCommand::Get(a) => get(a),
        StateCommand::Scan(a) => scan(a),
        StateCommand::History(a) => history(a),
        StateCommand::Status(a) => status(a),
        StateCommand::Retain(a) => retain(a),
    };
    match done {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => Err(cli_error(e)),
    }
}

/// A store error as the command line's error: a table's error as itself, the store's own
/// as its message (all the command line prints of an error is its one line).
fn cli_error(e: StateError) -> Error {
    match e {
        StateError::Table(e) => e,
        own => Error::InvalidArgument(own.to_string()),
    }
}
