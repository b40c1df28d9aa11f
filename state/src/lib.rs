//! A keyed state store on the log (SPEC.md §26): state changes are appended as events to a
//! Delta table `log/`; the latest value per key is folded incrementally, with one MERGE
//! per bounded chunk, into a Delta table `state/`; every past state is a version of
//! `state/` (time travel). Both are ordinary Delta tables any engine reads.
//!
//! ```no_run
//! # fn main() -> alluvium_state::Result<()> {
//! use std::sync::Arc;
//! use alluvium_state::{StateAt, StateOptions, StateStore};
//! use arrow::datatypes::{DataType, Field, Schema};
//! let schema = Arc::new(Schema::new(vec![
//!     Field::new("user", DataType::Utf8, false),
//!     Field::new("balance", DataType::Int64, true),
//! ]));
//! let store = StateStore::create("/tmp/balances", &["user"], schema, StateOptions::default())?;
//! # let events: Vec<arrow::array::RecordBatch> = Vec::new();
//! # let keys: arrow::array::RecordBatch = unimplemented!();
//! store.put(&events, None)?; // key, value, event_time[, seq][, op] columns
//! store.sync()?;
//! let rows = store.get(&keys, StateAt::Latest)?;
//! # Ok(()) }
//! ```
//!
//! This crate is built on the `alluvium` facade's public API (the compiler keeps it there:
//! it is what any embedder could build), plus `alluvium-txlog` where a sync decodes the
//! commit files of `log/` and the statistics and deletion vectors of their files itself.
//! Its errors are its own [`StateError`], which wraps the tables' [`alluvium::Error`].
//!
//! Files, one concept each: `layout` (tables, schemas, reserved names, configuration),
//! `events` (what `put` takes), `fold` (the ordering rule), `sync`, `read` (get, scan,
//! history), `lookup` (point lookups), `clustering`, `retain`, `follow`, `report`, `error`.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod clustering;
mod error;
mod events;
mod fold;
pub mod follow;
mod layout;
mod lookup;
mod read;
mod report;
mod retain;
mod sync;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use alluvium::{StoreRef, remote_scheme};
use alluvium_txlog::stats::FileStats;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

pub use error::{Result, StateError};
pub use fold::{EventOrder, assigned_seq};
pub use layout::{
    EVENT_DATE, EVENT_TIME, FORMAT_VERSION_PROPERTY, KEY_COLUMNS_PROPERTY, OP, OP_DELETE,
    OP_UPSERT, ROLE_PROPERTY, SEQ,
};
pub use report::{Lag, PutReport, RetainReport, StateStatus, SyncReport};
pub use sync::SYNC_APP_ID;

use alluvium::{AppTransaction, Table, WriteOptions, WriteOutcome};
use layout::{Layout, Role};

/// Which state to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateAt {
    /// The latest state (as synced).
    Latest,
    /// A version of `state/`.
    Version(i64),
    /// The state as of this time (ms since the epoch): the last version of `state/`
    /// committed at or before it.
    Timestamp(i64),
}

/// How a store is created and used. Builder-style; `Default` is sensible.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StateOptions {
    /// A sync chunk ends after the log version that brings it to at least this many
    /// events (default 1 000 000): the bound on a sync's memory.
    pub chunk_events: usize,
    /// A sync starts a chunk again at most this many times in a row when other syncs
    /// commit first (default 64).
    pub max_conflict_retries: u32,
    /// After a chunk, OPTIMIZE `state/` with Z-order on the key when more than this many
    /// data files may hold one key (by their key statistics: the most files a point
    /// lookup reads; default 8; `None`: never).
    pub compact_above_overlap: Option<usize>,
    /// Extra table properties of `log/` at creation (e.g. `delta.checkpointInterval`).
    pub log_properties: BTreeMap<String, String>,
    /// Extra table properties of `state/` and `tombstones/` at creation (default:
    /// `delta.enableDeletionVectors=true`, `alluvium.parquet.dataPageRowLimit=1024`).
    pub state_properties: BTreeMap<String, String>,
    /// Storage options for opening the tables (see [`Table::open_with_options`]).
    pub storage_options: Vec<(String, String)>,
}

impl Default for StateOptions {
    fn default() -> Self {
        StateOptions {
            chunk_events: 1_000_000,
            max_conflict_retries: 64,
            compact_above_overlap: Some(8),
            log_properties: BTreeMap::new(),
            // Deletion vectors: a sync's MERGE marks replaced rows instead of rewriting
            // files. Pages of at most 1,024 rows: a point lookup selects pages through the
            // page index and decodes only those (SPEC §26 ST6).
            state_properties: BTreeMap::from([
                (
                    alluvium_txlog::properties::ENABLE_DELETION_VECTORS.to_string(),
                    "true".to_string(),
                ),
                (
                    alluvium_txlog::properties::DATA_PAGE_ROW_LIMIT.to_string(),
                    "1024".to_string(),
                ),
            ]),
            storage_options: Vec::new(),
        }
    }
}

impl StateOptions {
    /// Sets [`chunk_events`](Self::chunk_events) (at least 1).
    #[must_use]
    pub fn with_chunk_events(mut self, events: usize) -> Self {
        self.chunk_events = events.max(1);
        self
    }
    /// Sets [`max_conflict_retries`](Self::max_conflict_retries).
    #[must_use]
    pub fn with_max_conflict_retries(mut self, retries: u32) -> Self {
        self.max_conflict_retries = retries;
        self
    }
    /// Sets [`compact_above_overlap`](Self::compact_above_overlap).
    #[must_use]
    pub fn with_compact_above_overlap(mut self, files: Option<usize>) -> Self {
        self.compact_above_overlap = files;
        self
    }
    /// Adds a table property of `log/` (used at creation).
    #[must_use]
    pub fn with_log_property(mut self, key: &str, value: &str) -> Self {
        self.log_properties.insert(key.into(), value.into());
        self
    }
    /// Adds a table property of `state/` (used at creation).
    #[must_use]
    pub fn with_state_property(mut self, key: &str, value: &str) -> Self {
        self.state_properties.insert(key.into(), value.into());
        self
    }
    /// Adds a storage option for the tables.
    #[must_use]
    pub fn with_storage_option(mut self, key: &str, value: &str) -> Self {
        self.storage_options.push((key.into(), value.into()));
        self
    }
}

/// A keyed state store: the tables `log/`, `state/` and `tombstones/` under one location.
/// Cheap to clone; thread-safe; any number of handles (in any processes) may put and sync
/// at once.
#[derive(Debug, Clone)]
pub struct StateStore {
    location: String,
    layout: Arc<Layout>,
    log: Table,
    state: Table,
    tombstones: Table,
    options: StateOptions,
    /// Footers and deletion vectors of `state/` files, for point lookups.
    lookup_cache: Arc<lookup::LookupCache>,
}

/// The table `dir` under `location`.
fn open_table(location: &str, dir: &str, options: &StateOptions) -> Result<Table> {
    let sub = if remote_scheme(location).is_some() || location.contains("://") {
        format!("{}/{dir}", location.trim_end_matches('/'))
    } else {
        Path::new(location).join(dir).to_string_lossy().into_owned()
    };
    let pairs: Vec<(&str, &str)> = options
        .storage_options
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    Ok(Table::open_with_options(&sub, &pairs)?)
}

impl StateStore {
    fn tables(location: &str, options: &StateOptions) -> Result<[Table; 3]> {
        Ok([
            open_table(location, Role::Log.dir(), options)?,
            open_table(location, Role::State.dir(), options)?,
            open_table(location, Role::Tombstones.dir(), options)?,
        ])
    }

    fn store_tables(root: &StoreRef) -> [Table; 3] {
        let t = |role: Role| {
            Table::from_store(Arc::new(alluvium::PrefixStore::new(
                root.clone(),
                role.dir(),
            )))
        };
        [t(Role::Log), t(Role::State), t(Role::Tombstones)]
    }

    fn create_in(
        location: String,
        [log, state, tombstones]: [Table; 3],
        key_columns: &[&str],
        value_schema: SchemaRef,
        options: StateOptions,
    ) -> Result<StateStore> {
        let layout = Layout::new(key_columns, &value_schema)?;
        for role in Role::ALL {
            let (table, props) = match role {
                Role::Log => (&log, options.log_properties.clone()),
                Role::State => (&state, options.state_properties.clone()),
                Role::Tombstones => (&tombstones, options.state_properties.clone()),
            };
            layout.create_table(table, role, &props)?;
        }
        Ok(StateStore {
            location,
            layout: Arc::new(layout),
            log,
            state,
            tombstones,
            options,
            lookup_cache: Arc::default(),
        })
    }

    fn open_in(
        location: String,
        [log, state, tombstones]: [Table; 3],
        options: StateOptions,
    ) -> Result<StateStore> {
        let layout = Layout::read(&state, Role::State)?;
        for (table, role) in [(&log, Role::Log), (&tombstones, Role::Tombstones)] {
            let other = Layout::read(table, role)?;
            let values_differ = role == Role::Log && other.value_fields != layout.value_fields;
            if other.keys != layout.keys || values_differ {
                return Err(StateError::NotAStore {
                    location: location.clone(),
                    reason: format!(
                        "the {} table's keys or columns differ from state/'s",
                        role.dir()
                    ),
                });
            }
        }
        Ok(StateStore {
            location,
            layout: Arc::new(layout),
            log,
            state,
            tombstones,
            options,
            lookup_cache: Arc::default(),
        })
    }

    /// Creates a store at `location` (a local path or an object-store URI) keyed by
    /// `key_columns`, with the columns of `value_schema` (the keys and the values; an
    /// `event_time`, `seq` or `op` column of the event types is allowed and ignored, so the
    /// schema of sample events will do). Running it again over an interrupted creation
    /// finishes it.
    ///
    /// # Errors
    /// [`StateError`] for invalid schemas: no or unknown or repeated key columns, key
    /// columns of unsupported types, reserved names (`event_date`, change-data-feed
    /// columns, `__alluvium*`, event columns of other types), no value column;
    /// [`StateError::NotAStore`] when different tables are already there; storage errors.
    pub fn create(
        location: &str,
        key_columns: &[&str],
        value_schema: SchemaRef,
        options: StateOptions,
    ) -> Result<StateStore> {
        let tables = Self::tables(location, &options)?;
        Self::create_in(
            location.to_string(),
            tables,
            key_columns,
            value_schema,
            options,
        )
    }

    /// Opens the store at `location`; everything else is read from its tables.
    ///
    /// # Errors
    /// [`StateError::NotAStore`] when a table is missing or is not this store's; storage
    /// errors.
    pub fn open(location: &str, options: StateOptions) -> Result<StateStore> {
        let tables = Self::tables(location, &options)?;
        Self::open_in(location.to_string(), tables, options)
    }

    /// Creates a store in the directories `log/`, `state/` and `tombstones/` of `root`
    /// (an in-memory store in tests, an embedder's own backend).
    ///
    /// # Errors
    /// As [`create`](Self::create).
    pub fn create_in_store(
        root: StoreRef,
        key_columns: &[&str],
        value_schema: SchemaRef,
        options: StateOptions,
    ) -> Result<StateStore> {
        let tables = Self::store_tables(&root);
        Self::create_in(root.root_uri(), tables, key_columns, value_schema, options)
    }

    /// Creates a store in a fresh in-memory store (tests, examples).
    ///
    /// # Errors
    /// As [`create`](Self::create).
    pub fn in_memory(
        key_columns: &[&str],
        value_schema: SchemaRef,
        options: StateOptions,
    ) -> Result<StateStore> {
        let root: StoreRef = Arc::new(alluvium::InMemoryStore::new());
        Self::create_in_store(root, key_columns, value_schema, options)
    }

    /// Opens the store in `root` (see [`create_in_store`](Self::create_in_store)).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn from_store(root: StoreRef, options: StateOptions) -> Result<StateStore> {
        let tables = Self::store_tables(&root);
        Self::open_in(root.root_uri(), tables, options)
    }

    /// The store location.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The key columns.
    pub fn key_columns(&self) -> &[String] {
        &self.layout.keys
    }

    /// The schema of `log/` rows (keys, values, `event_time`, `seq`, `op`, `event_date`).
    pub fn log_schema(&self) -> SchemaRef {
        self.layout.log.clone()
    }

    /// The schema of `state/` rows (keys, values, `event_time`, `seq`).
    pub fn state_schema(&self) -> SchemaRef {
        self.layout.state.clone()
    }

    /// The options the store was opened with.
    pub fn options(&self) -> &StateOptions {
        &self.options
    }

    /// The `log/` table.
    pub fn log_table(&self) -> &Table {
        &self.log
    }

    /// The `state/` table.
    pub fn state_table(&self) -> &Table {
        &self.state
    }

    /// The `tombstones/` table.
    pub fn tombstones_table(&self) -> &Table {
        &self.tombstones
    }

    /// Appends events (one commit to `log/`, a blind append: producers never conflict
    /// with each other or with syncs). Each batch has the key columns, any of the value
    /// columns (missing ones are NULL), `event_time` (a timestamp with a time zone; NOT
    /// NULL), and optionally `seq` (integer; NULL or missing: assigned at sync) and `op`
    /// (`UPSERT` | `DELETE`, any case; NULL or missing: `UPSERT`).
    ///
    /// With `idempotency` = (app id, version) the commit records a `txn` and is skipped
    /// if that application already recorded this version or a later one.
    ///
    /// # Errors
    /// [`StateError`] for batches that break the rules above (naming column and row);
    /// storage and commit failures.
    pub fn put(
        &self,
        batches: &[RecordBatch],
        idempotency: Option<(&str, i64)>,
    ) -> Result<PutReport> {
        let rows: Vec<RecordBatch> = batches
            .iter()
            .map(|b| events::log_batch(&self.layout, b))
            .collect::<Result<_>>()?;
        let events: u64 = rows.iter().map(|b| b.num_rows() as u64).sum();
        if events == 0 && idempotency.is_none() {
            return Ok(PutReport::default());
        }
        let options = WriteOptions::default()
            .with_app_transaction(idempotency.map(|(id, v)| AppTransaction::new(id, v)));
        match self.log.append(rows, &options)? {
            WriteOutcome::Committed(summary) => Ok(PutReport {
                events,
                log_version: Some(summary.version),
                files: summary.files_added as u64,
                skipped: false,
            }),
            WriteOutcome::Skipped { .. } => Ok(PutReport {
                events,
                log_version: None,
                files: 0,
                skipped: true,
            }),
        }
    }

    /// The log versions (and their events) not yet applied to `state/`.
    ///
    /// # Errors
    /// Storage errors; [`StateError::LogVersionUnavailable`] for a cleaned-up commit.
    pub fn lag(&self) -> Result<Lag> {
        let synced = sync::synced_through(&self.state.snapshot()?);
        let log = self.log.snapshot()?;
        let first = synced.map_or(0, |v| v + 1);
        let mut events = 0u64;
        for v in first..=log.version() {
            for add in sync::commit_adds(&log, v)? {
                events += match add.stats.as_deref().and_then(FileStats::parse) {
                    Some(FileStats {
                        num_records: Some(n),
                        ..
                    }) => n.max(0) as u64,
                    _ => log
                        .read_whole_file(&add)?
                        .iter()
                        .map(|b| b.num_rows() as u64)
                        .sum(),
                };
            }
        }
        Ok(Lag {
            log_version: log.version(),
            synced_through: synced,
            versions: log.version() + 1 - first.min(log.version() + 1),
            events,
        })
    }

    /// Versions, lag and sizes.
    ///
    /// # Errors
    /// As [`lag`](Self::lag).
    pub fn status(&self) -> Result<StateStatus> {
        let lag = self.lag()?;
        let state = self.state.snapshot()?;
        let tombstones = self.tombstones.snapshot()?;
        let log = self.log.snapshot()?;
        Ok(StateStatus {
            location: self.location.clone(),
            key_columns: self.layout.keys.clone(),
            log_version: log.version(),
            state_version: state.version(),
            tombstones_version: tombstones.version(),
            lag,
            keys: live_rows(&state),
            tombstones: live_rows(&tombstones),
            state_files: state.num_files() as u64,
            log_files: log.num_files() as u64,
        })
    }
}

/// Rows of a snapshot by its files' statistics, less deletion vectors.
fn live_rows(snapshot: &alluvium::Snapshot) -> u64 {
    snapshot
        .files()
        .map(|a| {
            let n = a
                .stats()
                .as_deref()
                .and_then(FileStats::parse)
                .and_then(|s| s.num_records)
                .unwrap_or(0);
            let gone = a.deletion_vector().map_or(0, |d| d.cardinality);
            (n - gone).max(0) as u64
        })
        .sum()
}
