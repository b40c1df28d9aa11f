//! Planning a change-data-feed read: resolving the range, checking that every version of it
//! recorded its changes, choosing the schema, and turning each version's actions into the
//! files to read (PROTOCOL.md "Change Data Files", "Add CDC File"; the reader rules are
//! SPEC.md §24).

use std::collections::HashMap;

use crate::Snapshot;
use alluvium_mvcc::VersionSpec;
use alluvium_mvcc::snapshot::commit_timestamps;
use alluvium_storage::StoreRef;
use alluvium_txlog::Version;
use alluvium_txlog::actions::{Action, Add, Metadata, OptStringMap, Protocol, Remove};
use alluvium_txlog::cdf::ChangeType;
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::commit_range::{VersionActions, commits_in_range};
use alluvium_txlog::dv::DeletionVectorDescriptor;
use alluvium_txlog::features::check_read_supported;
use alluvium_txlog::log_path::{LogFile, LogFileKind};
use alluvium_txlog::path::percent_decode;
use alluvium_txlog::properties::TableProperties;
use alluvium_txlog::schema::{DataType, StructType};
use alluvium_txlog::segment::list_log_from;

use crate::{Error, Result};

/// What one change file of the feed is and which of its rows are changes.
#[derive(Debug, Clone)]
pub(crate) enum TaskKind {
    /// A change-data (`cdc`) file: every row, with its stored `_change_type`.
    Cdc,
    /// The live rows of a data file, all of one change type (`insert` for an `add`,
    /// `delete` for a `remove`, each under its own deletion vector).
    Whole(&'static str),
    /// A file removed and re-added in one version with another deletion vector: the rows
    /// the new vector deletes and the old did not (`delete`), and the rows the old vector
    /// deleted and the new does not (`insert`).
    DvDiff {
        /// The removed logical file's vector.
        old: Option<Box<DeletionVectorDescriptor>>,
        /// The added logical file's vector.
        new: Option<Box<DeletionVectorDescriptor>>,
    },
}

/// One file to read for the feed, with the commit it belongs to.
#[derive(Debug, Clone)]
pub(crate) struct ChangeTask {
    pub(crate) version: Version,
    /// The commit timestamp, microseconds since the epoch.
    pub(crate) timestamp_us: i64,
    pub(crate) kind: TaskKind,
    /// The file as an `add` (path, partition values, size, and for [`TaskKind::Whole`] the
    /// deletion vector to apply).
    pub(crate) file: Add,
}

/// The planned feed: the versions, the table at the end version, the files.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub(crate) start: Version,
    pub(crate) end: Version,
    pub(crate) metadata: Metadata,
    /// The protocol at the end version.
    pub(crate) protocol: Protocol,
    pub(crate) schema: StructType,
    pub(crate) column_mapping: ColumnMappingMode,
    pub(crate) tasks: Vec<ChangeTask>,
}

/// Plans the feed of `start..=end` of the table in `store`.
pub(crate) fn plan(
    store: &StoreRef,
    start: VersionSpec,
    end: Option<VersionSpec>,
) -> Result<Planned> {
    let listing = list_log_from(store.as_ref(), 0)?;
    let latest = listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .map(|f| f.version)
        .max()
        .or_else(|| listing.iter().map(|f| f.version).max())
        .ok_or_else(|| {
            Error::from(alluvium_txlog::LogError::TableNotFound {
                location: store.root_uri(),
            })
        })?;
    let start_v = resolve(store, &listing, latest, start, Bound::Start)?;
    let end_v = match end {
        None => latest,
        Some(spec) => resolve(store, &listing, latest, spec, Bound::End)?,
    };
    if start_v > latest {
        return Err(Error::ChangeDataStartAfterLatest {
            start: start_v,
            latest,
        });
    }
    if start_v > end_v {
        return Err(Error::ChangeDataInvalidRange {
            start: start_v,
            end: end_v,
        });
    }
    // Past the latest version the range ends at the latest one, as Delta Spark reads it.
    let end_v = end_v.min(latest);
    let commits = commits_in_range(store.as_ref(), &listing, start_v, end_v)
        .map_err(|e| unavailable(e, start_v, end_v))?;

    // The table as of `start`: from its own commit when it sets both, else a snapshot of
    // `start`, or of any later version of the range before the next protocol or metadata
    // change (same table state; helps when log cleanup left only a later checkpoint).
    let Some(first) = commits.first() else {
        return Err(Error::ChangeDataVersionUnavailable {
            version: start_v,
            start: start_v,
            end: end_v,
            reason: "no commit file of the range was found".into(),
        });
    };
    let (mut protocol, mut metadata) = match (last_protocol(first), last_metadata(first)) {
        (Some(p), Some(m)) => (p.clone(), m.clone()),
        (p, m) => {
            let same_state_until = commits
                .iter()
                .skip(1)
                .find(|c| last_protocol(c).is_some() || last_metadata(c).is_some())
                .map_or(end_v, |c| c.version - 1);
            let s = Snapshot::load(store.clone(), VersionSpec::Version(start_v))
                .or_else(|e| {
                    if same_state_until > start_v {
                        Snapshot::load(store.clone(), VersionSpec::Version(same_state_until))
                            .map_err(|_| e)
                    } else {
                        Err(e)
                    }
                })
                .map_err(|e| unavailable(e, start_v, end_v))?;
            (
                p.cloned().unwrap_or_else(|| s.protocol().clone()),
                m.cloned().unwrap_or_else(|| s.metadata().clone()),
            )
        }
    };
    // Every version's metadata (to know CDF was on, and the schemas to reconcile).
    let mut per_version: Vec<(Version, Metadata, Protocol)> = Vec::with_capacity(commits.len());
    // The first and last versions of the range without change data: the error names the
    // first, and where the feed is recorded from (after the last) to the end.
    let mut unrecorded: Option<(Version, Version)> = None;
    for c in &commits {
        if let Some(p) = last_protocol(c) {
            protocol = p.clone();
        }
        if let Some(m) = last_metadata(c) {
            metadata = m.clone();
        }
        check_read_supported(&protocol)?;
        if !TableProperties(&metadata.configuration).change_data_feed() {
            unrecorded = Some(unrecorded.map_or((c.version, c.version), |(f, _)| (f, c.version)));
        }
        per_version.push((c.version, metadata.clone(), protocol.clone()));
    }
    if let Some((first, last)) = unrecorded {
        return Err(Error::ChangeDataNotRecorded {
            version: first,
            start: start_v,
            end: end_v,
            recorded_from: (last < end_v).then_some(last + 1),
        });
    }
    let schema = StructType::from_json(&metadata.schema_string)?;
    let column_mapping = ColumnMappingMode::of(&protocol, &metadata);
    let mut seen_schema: Option<&str> = None;
    for (v, m, p) in &per_version {
        if seen_schema == Some(m.schema_string.as_str()) {
            continue;
        }
        seen_schema = Some(m.schema_string.as_str());
        check_compatible(*v, m, p, &metadata, &schema, column_mapping)?;
    }

    let stamps = timestamps(&listing, &commits, &per_version);
    let mut tasks = Vec::new();
    let mut added = AddedPartitions {
        partitioned: !metadata.partition_columns.is_empty(),
        by_path: HashMap::new(),
    };
    for (c, ts_ms) in commits.into_iter().zip(stamps) {
        version_tasks(c, ts_ms.saturating_mul(1000), &mut added, &mut tasks);
    }
    Ok(Planned {
        start: start_v,
        end: end_v,
        metadata,
        protocol,
        schema,
        column_mapping,
        tasks,
    })
}

/// Which end of the range a timestamp is resolved for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bound {
    Start,
    End,
}

/// The version a bound names: a timestamp starts at the first commit at or after it and
/// ends at the last commit at or before it (Delta's rule).
fn resolve(
    store: &StoreRef,
    listing: &[LogFile],
    latest: Version,
    spec: VersionSpec,
    bound: Bound,
) -> Result<Version> {
    let ts = match spec {
        VersionSpec::Latest => return Ok(latest),
        VersionSpec::Version(v) => return Ok(v),
        VersionSpec::Timestamp(ts) => ts,
    };
    let latest_snapshot = Snapshot::load(store.clone(), VersionSpec::Latest)?;
    let earliest = listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .map(|f| f.version)
        .min()
        .unwrap_or(0);
    let stamps = commit_timestamps(
        store.as_ref(),
        listing,
        &latest_snapshot.properties(),
        earliest,
    )?;
    let out_of_range = |reason: String| Error::ChangeDataTimestampOutOfRange {
        timestamp_ms: ts,
        reason,
    };
    let (Some(first), Some(last)) = (stamps.first(), stamps.last()) else {
        return Err(out_of_range("the log has no commit files".into()));
    };
    match bound {
        Bound::Start => stamps
            .iter()
            .find(|s| s.timestamp_ms >= ts)
            .map(|s| s.version)
            .ok_or_else(|| {
                out_of_range(format!(
                    "it is after the latest commit (version {} at {} ms)",
                    last.version, last.timestamp_ms
                ))
            }),
        Bound::End => stamps
            .iter()
            .rev()
            .find(|s| s.timestamp_ms <= ts)
            .map(|s| s.version)
            .ok_or_else(|| {
                out_of_range(format!(
                    "it is before the earliest commit (version {} at {} ms)",
                    first.version, first.timestamp_ms
                ))
            }),
    }
}

/// A version the range needs that cannot be read, as the feed's typed error.
fn unavailable(e: impl Into<Error>, start: Version, end: Version) -> Error {
    let e: Error = e.into();
    match e.as_log_error() {
        Some(alluvium_txlog::LogError::VersionNotFound { version, reason }) => {
            Error::ChangeDataVersionUnavailable {
                version: *version,
                start,
                end,
                reason: reason.clone(),
            }
        }
        _ => e,
    }
}

fn last_metadata(c: &VersionActions) -> Option<&Metadata> {
    c.actions.iter().rev().find_map(|a| match a {
        Action::Metadata(m) => Some(m),
        _ => None,
    })
}

fn last_protocol(c: &VersionActions) -> Option<&Protocol> {
    c.actions.iter().rev().find_map(|a| match a {
        Action::Protocol(p) => Some(p),
        _ => None,
    })
}

/// Refuses a schema inside the range that the end schema cannot read its data as: a
/// column dropped or renamed (by name, or by physical name under column mapping), a column
/// whose type changed other than by widening a primitive, or other partition columns. Adding
/// columns is fine (older rows read them as null), as in Delta.
fn check_compatible(
    version: Version,
    at: &Metadata,
    at_protocol: &Protocol,
    end: &Metadata,
    end_schema: &StructType,
    end_mode: ColumnMappingMode,
) -> Result<()> {
    let refuse = |reason: String| Error::ChangeDataIncompatibleSchema { version, reason };
    let schema = StructType::from_json(&at.schema_string)?;
    let mode = ColumnMappingMode::of(at_protocol, at);
    if !same_names(&at.partition_columns, &end.partition_columns) {
        return Err(refuse(format!(
            "the partition columns are {:?} there and {:?} at the end of the range",
            at.partition_columns, end.partition_columns
        )));
    }
    for f in &schema.fields {
        let Some(e) = end_schema.field(&f.name) else {
            return Err(refuse(format!(
                "column `{}` was dropped or renamed later in the range",
                f.name
            )));
        };
        if mode.physical_name(f) != end_mode.physical_name(e) || f.column_id() != e.column_id() {
            return Err(refuse(format!(
                "column `{}` names other data later in the range (column mapping changed)",
                f.name
            )));
        }
        if !type_compatible(&f.data_type, &e.data_type) {
            return Err(refuse(format!(
                "column `{}` changed type later in the range",
                f.name
            )));
        }
    }
    Ok(())
}

fn same_names(a: &[String], b: &[String]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.eq_ignore_ascii_case(y))
}

/// True if data of type `from` reads as `to`: equal, a primitive (type widening is checked
/// per value when the file is read), or containers whose parts are compatible.
fn type_compatible(from: &DataType, to: &DataType) -> bool {
    match (from, to) {
        (DataType::Primitive(_), DataType::Primitive(_)) => true,
        (DataType::Struct(a), DataType::Struct(b)) => a.fields.iter().all(|f| {
            b.field(&f.name)
                .is_some_and(|g| type_compatible(&f.data_type, &g.data_type))
        }),
        (DataType::Array(a), DataType::Array(b)) => {
            type_compatible(&a.element_type, &b.element_type)
        }
        (DataType::Map(a), DataType::Map(b)) => {
            type_compatible(&a.key_type, &b.key_type)
                && type_compatible(&a.value_type, &b.value_type)
        }
        (a, b) => a == b,
    }
}

/// The commit timestamp of each commit (milliseconds): its in-commit timestamp where the
/// table has them enabled at that version, else the commit file's modification time made
/// monotonic over the whole log (as Delta Spark dates commits).
fn timestamps(
    listing: &[LogFile],
    commits: &[VersionActions],
    per_version: &[(Version, Metadata, Protocol)],
) -> Vec<i64> {
    let mut file_times: HashMap<Version, i64> = HashMap::new();
    let mut prev: Option<i64> = None;
    let mut sorted: Vec<&LogFile> = listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .collect();
    sorted.sort_by_key(|f| f.version);
    for f in sorted {
        let mut t = f.meta.last_modified_ms;
        if let Some(p) = prev
            && t <= p
        {
            t = p + 1;
        }
        prev = Some(t);
        file_times.insert(f.version, t);
    }
    commits
        .iter()
        .zip(per_version)
        .map(|(c, (v, m, _))| {
            let props = TableProperties(&m.configuration);
            let ict = (props.in_commit_timestamps()
                && props.ict_enablement_version().is_none_or(|e| *v >= e))
            .then(|| {
                c.actions.iter().find_map(|a| match a {
                    Action::CommitInfo(ci) => ci.in_commit_timestamp(),
                    _ => None,
                })
            })
            .flatten();
            ict.unwrap_or_else(|| {
                file_times
                    .get(&c.version)
                    .copied()
                    .unwrap_or(c.file_time_ms)
            })
        })
        .collect()
}

/// The path a file is identified by across a remove and an add of one commit.
fn path_key(path: &str) -> String {
    percent_decode(path).unwrap_or_else(|_| path.to_string())
}

/// The partition values of the files added earlier in the range, for `remove`s written
/// without theirs (no `extendedFileMetadata`, older writers).
struct AddedPartitions {
    partitioned: bool,
    by_path: HashMap<String, OptStringMap>,
}

impl AddedPartitions {
    fn note(&mut self, add: &Add) {
        if self.partitioned {
            self.by_path
                .insert(path_key(&add.path), add.partition_values.clone());
        }
    }

    /// The remove's own partition values, else those of the add of its path in the range,
    /// else the Hive-style `column=value` directories of its path.
    fn of(&self, r: &Remove) -> OptStringMap {
        if let Some(p) = &r.partition_values {
            return p.clone();
        }
        if !self.partitioned {
            return OptStringMap::default();
        }
        let key = path_key(&r.path);
        if let Some(p) = self.by_path.get(&key) {
            return p.clone();
        }
        let mut values = OptStringMap::default();
        let dirs: Vec<&str> = key.split('/').collect();
        for dir in &dirs[..dirs.len().saturating_sub(1)] {
            if let Some((k, v)) = dir.split_once('=') {
                // Directory names escape special characters once more (Hive style).
                let v = (v != "__HIVE_DEFAULT_PARTITION__")
                    .then(|| percent_decode(v).unwrap_or_else(|_| v.to_string()));
                values.insert(k.to_string(), v);
            }
        }
        values
    }
}

fn remove_as_add(r: &Remove, added: &AddedPartitions) -> Add {
    let mut b = Add::builder(r.path.clone(), r.size.unwrap_or(0), 0).partition_values(added.of(r));
    if let Some(stats) = &r.stats {
        b = b.stats(stats.clone());
    }
    if let Some(dv) = &r.deletion_vector {
        b = b.deletion_vector((**dv).clone());
    }
    b.build()
}

/// The files of one commit, per the reader rules: its `cdc` files when it has any; else its
/// `add`s as inserts and `remove`s as deletes (dataChange=true ones only), a path in both
/// becoming the rows between its two deletion vectors.
fn version_tasks(
    c: VersionActions,
    timestamp_us: i64,
    added: &mut AddedPartitions,
    out: &mut Vec<ChangeTask>,
) {
    let version = c.version;
    for a in &c.actions {
        if let Action::Add(add) = a {
            added.note(add);
        }
    }
    let has_cdc = c.actions.iter().any(|a| matches!(a, Action::Cdc(_)));
    let task = |kind: TaskKind, file: Add| ChangeTask {
        version,
        timestamp_us,
        kind,
        file,
    };
    if has_cdc {
        for a in c.actions {
            if let Action::Cdc(cdc) = a {
                let file = Add::builder(cdc.path, cdc.size, 0)
                    .partition_values(cdc.partition_values)
                    .build();
                out.push(task(TaskKind::Cdc, file));
            }
        }
        return;
    }
    let mut removes: HashMap<String, Remove> = HashMap::new();
    let mut remove_order: Vec<String> = Vec::new();
    let mut adds: Vec<Add> = Vec::new();
    for a in c.actions {
        match a {
            Action::Add(add) if add.data_change => adds.push(add),
            Action::Remove(r) if r.data_change => {
                let key = path_key(&r.path);
                if removes.insert(key.clone(), r).is_none() {
                    remove_order.push(key);
                }
            }
            _ => {}
        }
    }
    for add in adds {
        match removes.remove(&path_key(&add.path)) {
            Some(r) => {
                if r.deletion_vector == add.deletion_vector {
                    continue;
                }
                let kind = TaskKind::DvDiff {
                    old: r.deletion_vector,
                    new: add.deletion_vector.clone(),
                };
                out.push(task(kind, add));
            }
            None => out.push(task(TaskKind::Whole(ChangeType::Insert.as_str()), add)),
        }
    }
    for key in remove_order {
        if let Some(r) = removes.remove(&key) {
            out.push(task(
                TaskKind::Whole(ChangeType::Delete.as_str()),
                remove_as_add(&r, added),
            ));
        }
    }
}
