//! The sync: one Iceberg snapshot per Delta version since the last sync, written beside the
//! Delta log from the Delta snapshots alone.
//!
//! Contracts:
//! - **Incremental.** A sync reads the latest Iceberg metadata and the manifest list of its
//!   current snapshot, decodes only the manifests that hold a file the new versions remove,
//!   and writes new manifests for what changed; unchanged manifests are carried over by
//!   path.
//! - **Idempotent.** Every file but the metadata JSON is named by a hash of its content, and
//!   every value in it (snapshot ids, timestamps) comes from the Delta log, so re-syncing a
//!   synced version writes nothing and two syncs of the same state write the same bytes.
//! - **Safe against a concurrent sync.** The metadata file `v(N+1)` is created with
//!   put-if-absent; the loser re-reads the winner's metadata and continues from its last
//!   synced version.
//! - **The first sync** of a table creates one Iceberg snapshot, of the target version (the
//!   earlier versions' files may be long gone); later syncs create one per Delta version.
//! - **Sequence numbers.** Every entry carries its data and file sequence numbers
//!   explicitly. A data file keeps the sequence number of the snapshot that added it; a
//!   deletion vector's delete file gets its own snapshot's number, so it applies to its data
//!   file (position deletes apply to data files whose sequence number is not larger).

use std::collections::{BTreeMap, HashMap, HashSet};

use alluvium_datafile::read::footer_row_count;
use alluvium_mvcc::{Snapshot, VersionSpec};
use alluvium_storage::{ObjectStore, StorePath, StoreRef};
use alluvium_txlog::dv::read_deletion_vector;
use alluvium_txlog::path::percent_decode;
use alluvium_txlog::stats::FileStats;
use alluvium_txlog::{FileRef, Version};
use bytes::Bytes;
use md5::{Digest, Md5};
use serde_json::{Value, json};

use crate::avro::Datum;
use crate::bounds::bound;
use crate::deletes::position_delete_file;
use crate::error::{IcebergError, Result};
use crate::manifest::{
    Content, DataFile, Entry, FieldSummary, ManifestFile, ManifestHeader, Status, read_manifest,
    read_manifest_list, write_manifest, write_manifest_list,
};
use crate::metadata::{self, METADATA_DIR};
use crate::partition::{FIRST_PARTITION_FIELD_ID, PartitionField, PartitionSpec};
use crate::schema::{Converted, KnownIds, convert};
use crate::tree::relative;

/// The summary key holding the Delta version a snapshot mirrors (UniForm's name).
pub const DELTA_VERSION_KEY: &str = "delta-version";
/// The summary key holding that version's commit timestamp in milliseconds.
pub const DELTA_TIMESTAMP_KEY: &str = "delta-timestamp";

/// Entries per new manifest: a change then rewrites one manifest of at most this many
/// entries, not every file of the table.
const MANIFEST_ENTRIES: usize = 10_000;

/// How many times a sync re-reads and continues after losing the race for a metadata file.
const MAX_ATTEMPTS: u32 = 16;

/// What a sync did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SyncReport {
    /// The Delta versions given an Iceberg snapshot by this sync (empty: already in sync).
    pub synced_versions: Vec<Version>,
    /// The metadata version written, if any.
    pub metadata_version: Option<u64>,
    /// The Iceberg snapshot mirroring the target Delta version.
    pub snapshot_id: Option<i64>,
    /// Live data files at the target version.
    pub data_files: usize,
    /// Live position-delete files (one per deletion vector) at the target version.
    pub delete_files: usize,
    /// Times another sync won the metadata file first and this one continued after it.
    pub lost_races: u32,
    /// Delta snapshots loaded from the log's checkpoint (the others were advanced from a
    /// snapshot already held, reading only their commits): 0 for a post-commit sync that
    /// follows the previous one.
    pub snapshots_loaded: u32,
}

/// Syncs the Iceberg metadata of the table in `store` up to `target`.
///
/// # Errors
/// [`IcebergError::UnsupportedType`] for a schema Iceberg v2 cannot hold; storage and log
/// errors; [`IcebergError::CorruptMetadata`] if existing metadata is unreadable or belongs to
/// another table; [`IcebergError::Contended`] after losing the race too often.
pub fn sync(store: StoreRef, target: VersionSpec) -> Result<SyncReport> {
    sync_from(store, target, None)
}

/// The snapshot of `version`: advanced from `held` when that is of an earlier or the same
/// version (only the commits between are read), else loaded.
fn snapshot_of(
    store: &StoreRef,
    held: Option<&Snapshot>,
    version: Version,
    loaded: &mut u32,
) -> Result<Snapshot> {
    if let Some(h) = held.filter(|h| h.version() <= version)
        && let Ok(s) = h.advance_to(version)
    {
        return Ok(s);
    }
    *loaded += 1;
    Ok(Snapshot::load(
        store.clone(),
        VersionSpec::Version(version),
    )?)
}

/// As [`sync`], starting from a snapshot the caller already holds (a writer's read
/// snapshot, after its commit): the versions the sync needs from it on are built by applying
/// only their commits, instead of loading each one from the checkpoint. What is written is
/// the same as [`sync`] writes.
///
/// # Errors
/// As [`sync`].
pub fn sync_from(
    store: StoreRef,
    target: VersionSpec,
    held: Option<&Snapshot>,
) -> Result<SyncReport> {
    let mut report = SyncReport::default();
    let target = match target {
        VersionSpec::Version(v) => snapshot_of(&store, held, v, &mut report.snapshots_loaded)?,
        spec => {
            report.snapshots_loaded += 1;
            Snapshot::load(store.clone(), spec)?
        }
    };
    for attempt in 0..MAX_ATTEMPTS {
        let current = metadata::latest(store.as_ref())?;
        let mut state = State::open(&store, &target, current)?;
        let last = state.last_synced;
        // What the report says of the target, whoever synced it.
        let finish = |mut report: SyncReport, state: &State<'_>| {
            report.snapshot_id = state.snapshot_for(target.version());
            report.data_files = target.num_files();
            report.delete_files = target
                .files()
                .filter(|a| a.deletion_vector().is_some())
                .count();
            report
        };
        if last.is_some_and(|l| l >= target.version()) {
            return Ok(finish(report, &state));
        }
        let versions: Vec<Version> = match last {
            None => vec![target.version()],
            Some(l) => (l + 1..=target.version()).collect(),
        };
        let mut previous = match last {
            Some(l) => Some(snapshot_of(&store, held, l, &mut report.snapshots_loaded)?),
            None => None,
        };
        for v in &versions {
            let snap = if *v == target.version() {
                target.clone()
            } else {
                // Each version from the one before: only its commit is read.
                snapshot_of(
                    &store,
                    previous.as_ref().or(held),
                    *v,
                    &mut report.snapshots_loaded,
                )?
            };
            state.add_version(previous.as_ref(), &snap)?;
            previous = Some(snap);
        }
        let n = state.metadata_version + 1;
        if metadata::create(store.as_ref(), n, &state.metadata)? {
            report.synced_versions = versions;
            report.metadata_version = Some(n);
            return Ok(finish(report, &state));
        }
        report.lost_races = attempt + 1;
    }
    Err(IcebergError::Contended {
        attempts: MAX_ATTEMPTS,
    })
}

/// A manifest of the current Iceberg snapshot, decoded when a change touches it.
struct Held {
    file: ManifestFile,
    entries: Option<Vec<Entry>>,
}

/// The Iceberg side while a sync builds snapshots: the metadata JSON being extended and the
/// current snapshot's manifests.
struct State<'a> {
    store: &'a StoreRef,
    /// The table location as Iceberg paths spell it (no trailing slash).
    location: String,
    metadata: Value,
    metadata_version: u64,
    last_synced: Option<Version>,
    manifests: Vec<Held>,
    table_uuid: String,
}

fn sp(p: &str) -> Result<StorePath> {
    Ok(StorePath::parse(p)?)
}

fn corrupt(file: &str, reason: impl Into<String>) -> IcebergError {
    IcebergError::CorruptMetadata {
        file: file.to_string(),
        reason: reason.into(),
    }
}

/// The Iceberg location of a Delta `add.path` in a table at `location`: percent-decoded,
/// a local absolute URI as its path, a relative path under the location.
pub(crate) fn iceberg_path(location: &str, delta_path: &str) -> String {
    let decoded = percent_decode(delta_path).unwrap_or_else(|_| delta_path.to_string());
    if decoded.contains("://") || decoded.starts_with("file:") {
        return alluvium_storage::local_path(&decoded)
            .map(str::to_string)
            .unwrap_or(decoded);
    }
    if decoded.starts_with('/') {
        return decoded;
    }
    format!("{location}/{decoded}")
}

/// The table location as Iceberg files name it: a local table by its absolute path (what
/// pyiceberg and DuckDB open directly), a remote one by its URI.
pub(crate) fn location_of(snapshot: &Snapshot) -> String {
    let root = snapshot.root().as_str().trim_end_matches('/');
    alluvium_storage::local_path(root)
        .map(str::to_string)
        .unwrap_or_else(|| root.to_string())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn md5_hex(parts: &[&[u8]]) -> String {
    let mut h = Md5::new();
    for p in parts {
        h.update(p);
        h.update([0u8]);
    }
    hex(&h.finalize())
}

/// The Iceberg `table-uuid` of a Delta table: its `metaData.id` when that is a UUID (as
/// every engine writes it), else a name-based UUID (version 3, MD5) of it, since Iceberg
/// readers refuse metadata whose table-uuid is not a UUID (some Spark test tables carry
/// ids like `testId`).
pub(crate) fn table_uuid(delta_id: &str) -> String {
    let t = delta_id.trim();
    let groups: Vec<&str> = t.split('-').collect();
    let lens = [8, 4, 4, 4, 12];
    let is_uuid = groups.len() == 5
        && groups
            .iter()
            .zip(lens)
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()));
    if is_uuid {
        return t.to_ascii_lowercase();
    }
    let mut h = Md5::new();
    h.update(b"alluvium-iceberg:");
    h.update(delta_id.as_bytes());
    let mut b: [u8; 16] = h.finalize().into();
    b[6] = (b[6] & 0x0f) | 0x30;
    b[8] = (b[8] & 0x3f) | 0x80;
    let x = hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &x[..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..]
    )
}

/// A snapshot id that depends only on the table and the Delta version, so two syncs of the
/// same version agree.
fn snapshot_id(table_uuid: &str, version: Version) -> i64 {
    let mut h = Md5::new();
    h.update(table_uuid.as_bytes());
    h.update(version.to_be_bytes());
    let d = h.finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    let id = i64::from_be_bytes(b) & i64::MAX;
    if id == 0 { 1 } else { id }
}

impl<'a> State<'a> {
    fn open(
        store: &'a StoreRef,
        target: &Snapshot,
        current: Option<(u64, Value)>,
    ) -> Result<State<'a>> {
        let location = location_of(target);
        let table_uuid = table_uuid(&target.metadata().id);
        let Some((n, metadata)) = current else {
            return Ok(State {
                store,
                metadata: json!({
                    "format-version": 2,
                    "table-uuid": table_uuid,
                    "location": location,
                    "last-sequence-number": 0,
                    "last-updated-ms": 0,
                    "last-column-id": 0,
                    "schemas": [],
                    "current-schema-id": -1,
                    "partition-specs": [],
                    "default-spec-id": -1,
                    "last-partition-id": FIRST_PARTITION_FIELD_ID - 1,
                    "properties": {},
                    "current-snapshot-id": -1,
                    "refs": {},
                    "snapshots": [],
                    "snapshot-log": [],
                    "metadata-log": [],
                    "sort-orders": [{"order-id": 0, "fields": []}],
                    "default-sort-order-id": 0
                }),
                location,
                metadata_version: 0,
                last_synced: None,
                manifests: Vec::new(),
                table_uuid,
            });
        };
        let file = metadata::metadata_file(n);
        // The counters the sync increments: bounded here once, so that no metadata file
        // (they are the table's bytes) can make an increment overflow. Iceberg's ids are
        // ints.
        for (key, max) in [
            ("last-sequence-number", i64::MAX - 1),
            ("last-column-id", i64::from(i32::MAX) - 1),
            ("last-partition-id", i64::from(i32::MAX) - 1),
        ] {
            let v = metadata.get(key).and_then(Value::as_i64).unwrap_or(0);
            if !(0..=max).contains(&v) {
                return Err(corrupt(&file, format!("{key} {v} is out of range")));
            }
        }
        if metadata.get("table-uuid").and_then(Value::as_str) != Some(table_uuid.as_str()) {
            return Err(corrupt(
                &file,
                format!(
                    "belongs to table {}, not to this Delta table ({table_uuid}); delete metadata/ to sync afresh",
                    metadata.get("table-uuid").unwrap_or(&Value::Null)
                ),
            ));
        }
        let current_id = metadata
            .get("current-snapshot-id")
            .and_then(Value::as_i64)
            .unwrap_or(-1);
        let snapshot = metadata
            .get("snapshots")
            .and_then(Value::as_array)
            .and_then(|s| {
                s.iter()
                    .find(|s| s.get("snapshot-id").and_then(Value::as_i64) == Some(current_id))
            });
        let (last_synced, manifests) = match snapshot {
            None => (None, Vec::new()),
            Some(s) => {
                let version = s
                    .pointer(&format!("/summary/{DELTA_VERSION_KEY}"))
                    .and_then(Value::as_str)
                    .and_then(|v| v.parse::<Version>().ok())
                    .ok_or_else(|| corrupt(&file, "the current snapshot has no delta-version"))?;
                let list = s
                    .get("manifest-list")
                    .and_then(Value::as_str)
                    .ok_or_else(|| corrupt(&file, "the current snapshot has no manifest list"))?;
                let rel = relative(&location, list).ok_or_else(|| {
                    corrupt(&file, format!("manifest list {list} is outside the table"))
                })?;
                let bytes = store.get(&sp(&rel)?)?;
                let files = read_manifest_list(&bytes).map_err(|e| corrupt(&rel, e))?;
                (
                    Some(version),
                    files
                        .into_iter()
                        .map(|file| Held {
                            file,
                            entries: None,
                        })
                        .collect(),
                )
            }
        };
        Ok(State {
            store,
            location,
            metadata,
            metadata_version: n,
            last_synced,
            manifests,
            table_uuid,
        })
    }

    fn snapshot_for(&self, version: Version) -> Option<i64> {
        self.metadata
            .get("snapshots")?
            .as_array()?
            .iter()
            .find_map(|s| {
                let v = s
                    .pointer(&format!("/summary/{DELTA_VERSION_KEY}"))?
                    .as_str()?;
                (v.parse::<Version>().ok()? == version).then(|| s.get("snapshot-id")?.as_i64())?
            })
    }

    /// The Iceberg path of a Delta `add.path`.
    fn file_path(&self, delta_path: &str) -> String {
        iceberg_path(&self.location, delta_path)
    }

    fn put_named(&self, stem: &str, ext: &str, bytes: Vec<u8>) -> Result<(String, i64)> {
        let rel = format!("{METADATA_DIR}/{stem}-{}.{ext}", &md5_hex(&[&bytes])[..16]);
        let len = bytes.len() as i64;
        self.store.put(&sp(&rel)?, Bytes::from(bytes))?;
        Ok((format!("{}/{rel}", self.location), len))
    }

    /// Adds the Iceberg snapshot of Delta version `snap`, given the previous synced version.
    fn add_version(&mut self, previous: Option<&Snapshot>, snap: &Snapshot) -> Result<()> {
        let version = snap.version();
        let mapped =
            snap.column_mapping() != alluvium_txlog::table::column_mapping::ColumnMappingMode::None;
        let (schema_id, converted) = self.schema(snap, mapped)?;
        let spec = self.spec(snap, &converted)?;
        let seq = self.metadata["last-sequence-number"].as_i64().unwrap_or(0) + 1;
        let sid = snapshot_id(&self.table_uuid, version);
        let parent = self.metadata["current-snapshot-id"]
            .as_i64()
            .filter(|id| *id >= 0);
        let schema_json = self.schema_json(schema_id);

        // The diff of live files: (path, DV id) before and after.
        let before: HashMap<&str, FileRef<'_>> = previous
            .map(|p| p.files().map(|a| (a.path(), a)).collect())
            .unwrap_or_default();
        let after: HashMap<&str, FileRef<'_>> = snap.files().map(|a| (a.path(), a)).collect();
        let dv_id = |a: FileRef<'_>| a.deletion_vector().map(|d| d.unique_id());
        let mut added_data = Vec::new();
        let mut added_deletes = Vec::new();
        let mut removed_data: HashSet<String> = HashSet::new();
        let mut removed_deletes: HashSet<String> = HashSet::new();
        let mut summary = Counts::default();
        for (path, add) in &after {
            let old = before.get(path);
            if old.is_none() {
                let file = self.data_file(version, snap, *add, &converted, &spec)?;
                summary.added_records += file.record_count;
                added_data.push(file);
            }
            let old_dv = old.and_then(|o| dv_id(*o));
            if old_dv != dv_id(*add) {
                if let (Some(o), Some(_)) = (old, &old_dv) {
                    removed_deletes.insert(self.delete_file_path(*o));
                    summary.removed_delete_files += 1;
                }
                if add.deletion_vector().is_some() {
                    let file = self.delete_file(version, snap, *add, &spec)?;
                    summary.added_position_deletes += file.record_count;
                    added_deletes.push(file);
                }
            }
        }
        for (path, old) in &before {
            if !after.contains_key(path) {
                removed_data.insert(self.file_path(path));
                summary.deleted_records += match records_of(*old) {
                    Some(n) => n,
                    // As the entry counted it; a file already gone counts 0.
                    None => previous
                        .and_then(|p| footer_rows(p, *old).ok())
                        .unwrap_or(0),
                };
                if old.deletion_vector().is_some() {
                    removed_deletes.insert(self.delete_file_path(*old));
                    summary.removed_delete_files += 1;
                }
            }
        }
        summary.added_data_files = added_data.len();
        summary.deleted_data_files = removed_data.len();
        summary.added_delete_files = added_deletes.len();

        // Carry manifests over, rewriting those that hold a removed file.
        let mut list = Vec::new();
        let held = std::mem::take(&mut self.manifests);
        let mut next = Vec::new();
        for mut h in held {
            if h.file.files[0] == 0 && h.file.files[1] == 0 {
                continue; // only deleted entries: they were reported by an earlier snapshot
            }
            let removed = match h.file.content {
                Content::Data => &removed_data,
                Content::PositionDeletes => &removed_deletes,
            };
            if removed.is_empty() {
                list.push(h.file.clone());
                next.push(h);
                continue;
            }
            let entries = match h.entries.take() {
                Some(e) => e,
                None => {
                    let rel = relative(&self.location, &h.file.manifest_path).ok_or_else(|| {
                        corrupt(&h.file.manifest_path, "manifest outside the table")
                    })?;
                    let bytes = self.store.get(&sp(&rel)?)?;
                    read_manifest(&bytes).map_err(|e| corrupt(&rel, e))?
                }
            };
            if !entries
                .iter()
                .any(|e| e.status != Status::Deleted && removed.contains(&e.file.file_path))
            {
                list.push(h.file.clone());
                next.push(Held {
                    file: h.file,
                    entries: Some(entries),
                });
                continue;
            }
            let rewritten: Vec<Entry> = entries
                .into_iter()
                .filter(|e| e.status != Status::Deleted)
                .map(|mut e| {
                    if removed.contains(&e.file.file_path) {
                        e.status = Status::Deleted;
                        e.snapshot_id = sid;
                    } else {
                        e.status = Status::Existing;
                    }
                    e
                })
                .collect();
            let spec_for = self
                .spec_by_id(h.file.partition_spec_id)
                .unwrap_or_else(|| spec.clone());
            let file = self.write_manifest(
                &schema_json,
                schema_id,
                &spec_for,
                h.file.content,
                sid,
                seq,
                &rewritten,
            )?;
            list.push(file.clone());
            next.push(Held {
                file,
                entries: Some(rewritten),
            });
        }
        for (content, files) in [
            (Content::Data, added_data),
            (Content::PositionDeletes, added_deletes),
        ] {
            let mut files = files.into_iter().peekable();
            while files.peek().is_some() {
                let entries: Vec<Entry> = files
                    .by_ref()
                    .take(MANIFEST_ENTRIES)
                    .map(|file| Entry {
                        status: Status::Added,
                        snapshot_id: sid,
                        sequence_number: seq,
                        file_sequence_number: seq,
                        file,
                    })
                    .collect();
                let file = self.write_manifest(
                    &schema_json,
                    schema_id,
                    &spec,
                    content,
                    sid,
                    seq,
                    &entries,
                )?;
                list.push(file.clone());
                // Decoded again only if a later version of this run removes one of them.
                next.push(Held {
                    file,
                    entries: None,
                });
            }
        }
        self.manifests = next;
        let list_bytes = write_manifest_list(sid, parent, seq, &list);
        let (list_path, _) = self.put_named(&format!("snap-{sid}"), "avro", list_bytes)?;

        let timestamp = snap.timestamp_ms();
        let operation = match (
            summary.added_data_files + summary.added_delete_files > 0,
            summary.deleted_data_files + summary.removed_delete_files > 0,
        ) {
            (true, false) => "append",
            (false, true) => "delete",
            _ => "overwrite",
        };
        let dvs: Vec<FileRef<'_>> = snap
            .files()
            .filter(|a| a.deletion_vector().is_some())
            .collect();
        // The parent's total plus this version's change: parsing every file's statistics
        // again would make a one-commit sync cost as much as the table is large.
        let parent_total = parent
            .and_then(|id| {
                self.metadata["snapshots"]
                    .as_array()?
                    .iter()
                    .find(|s| s["snapshot-id"].as_i64() == Some(id))
            })
            .and_then(|s| {
                s.pointer("/summary/total-records")?
                    .as_str()?
                    .parse::<i64>()
                    .ok()
            });
        let total_records = match (parent, parent_total) {
            (_, Some(t)) => t + summary.added_records - summary.deleted_records,
            // The first snapshot: every live file was added.
            (None, None) => summary.added_records,
            (Some(_), None) => snap.files().map(|a| records_of(a).unwrap_or(0)).sum(),
        };
        let total_deletes: i64 = dvs
            .iter()
            .filter_map(|a| a.deletion_vector())
            .map(|d| d.cardinality)
            .sum();
        let summary_json = json!({
            "operation": operation,
            DELTA_VERSION_KEY: version.to_string(),
            DELTA_TIMESTAMP_KEY: timestamp.to_string(),
            "added-data-files": summary.added_data_files.to_string(),
            "deleted-data-files": summary.deleted_data_files.to_string(),
            "added-records": summary.added_records.to_string(),
            "deleted-records": summary.deleted_records.to_string(),
            "added-delete-files": summary.added_delete_files.to_string(),
            "removed-delete-files": summary.removed_delete_files.to_string(),
            "added-position-deletes": summary.added_position_deletes.to_string(),
            "total-data-files": snap.num_files().to_string(),
            "total-delete-files": dvs.len().to_string(),
            "total-records": total_records.to_string(),
            "total-position-deletes": total_deletes.to_string(),
            "total-equality-deletes": "0"
        });
        let mut snapshot = json!({
            "snapshot-id": sid,
            "sequence-number": seq,
            "timestamp-ms": timestamp,
            "manifest-list": list_path,
            "summary": summary_json,
            "schema-id": schema_id
        });
        if let Some(p) = parent {
            snapshot["parent-snapshot-id"] = json!(p);
        }
        let m = &mut self.metadata;
        push(m, "snapshots", snapshot);
        push(
            m,
            "snapshot-log",
            json!({"snapshot-id": sid, "timestamp-ms": timestamp}),
        );
        m["current-snapshot-id"] = json!(sid);
        m["refs"] = json!({"main": {"snapshot-id": sid, "type": "branch"}});
        m["last-sequence-number"] = json!(seq);
        let updated = m["last-updated-ms"].as_i64().unwrap_or(0).max(timestamp);
        m["last-updated-ms"] = json!(updated);
        self.last_synced = Some(version);
        Ok(())
    }

    /// Registers the schema of `snap` (a new schema id if it differs from the current one).
    fn schema(&mut self, snap: &Snapshot, mapped: bool) -> Result<(i64, Converted)> {
        let m = &mut self.metadata;
        let current_id = m["current-schema-id"].as_i64().unwrap_or(-1);
        let last = m["last-column-id"].as_i64().unwrap_or(0);
        let current = m["schemas"]
            .as_array()
            .and_then(|s| {
                s.iter()
                    .find(|s| s["schema-id"].as_i64() == Some(current_id))
            })
            .cloned();
        let known = current
            .as_ref()
            .map(|s| KnownIds::from_schema(s, mapped, last))
            .unwrap_or_else(|| KnownIds::starting_after(last));
        let converted = convert(snap.schema(), mapped, &known)?;
        let same = current
            .as_ref()
            .is_some_and(|s| s.get("fields") == converted.struct_json.get("fields"));
        let id = if same {
            current_id
        } else {
            if let Some(cur) = &current {
                check_promotions(cur, &converted.struct_json)?;
            }
            let id = m["schemas"]
                .as_array()
                .map(|s| {
                    s.iter()
                        .filter_map(|s| s["schema-id"].as_i64())
                        .max()
                        .unwrap_or(-1)
                        + 1
                })
                .unwrap_or(0);
            let mut schema = converted.struct_json.clone();
            schema["schema-id"] = json!(id);
            push(m, "schemas", schema);
            m["current-schema-id"] = json!(id);
            id
        };
        m["last-column-id"] = json!(last.max(converted.last_column_id));
        let mapping = serde_json::to_string(&converted.name_mapping).unwrap_or_default();
        m["properties"]["schema.name-mapping.default"] = json!(mapping);
        Ok((id, converted))
    }

    fn schema_json(&self, schema_id: i64) -> String {
        self.metadata["schemas"]
            .as_array()
            .and_then(|s| {
                s.iter()
                    .find(|s| s["schema-id"].as_i64() == Some(schema_id))
            })
            .map(Value::to_string)
            .unwrap_or_default()
    }

    fn spec_by_id(&self, id: i32) -> Option<PartitionSpec> {
        let specs = self.metadata["partition-specs"].as_array()?;
        let s = specs
            .iter()
            .find(|s| s["spec-id"].as_i64() == Some(i64::from(id)))?;
        let schemas = self.metadata["schemas"].as_array()?;
        let fields = s["fields"]
            .as_array()?
            .iter()
            .map(|f| {
                let source_id = f["source-id"].as_i64()?;
                let ty = schemas.iter().rev().find_map(|sc| {
                    sc["fields"]
                        .as_array()?
                        .iter()
                        .find(|c| c["id"].as_i64() == Some(source_id))
                        .and_then(|c| ice_type_of(&c["type"]))
                })?;
                let name = f["name"].as_str()?.to_string();
                Some(PartitionField {
                    value_key: name.clone(),
                    name,
                    source_id,
                    field_id: f["field-id"].as_i64()?,
                    ty,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(PartitionSpec {
            spec_id: id,
            fields,
        })
    }

    /// The partition spec of `snap` (a new spec id if it differs from the default one).
    fn spec(&mut self, snap: &Snapshot, converted: &Converted) -> Result<PartitionSpec> {
        let m = &mut self.metadata;
        let mut last_pid = m["last-partition-id"]
            .as_i64()
            .unwrap_or(FIRST_PARTITION_FIELD_ID - 1);
        // Partition field ids are kept per source column across specs.
        let mut known_pids: HashMap<i64, i64> = HashMap::new();
        for s in m["partition-specs"].as_array().into_iter().flatten() {
            for f in s["fields"].as_array().into_iter().flatten() {
                if let (Some(src), Some(fid)) = (f["source-id"].as_i64(), f["field-id"].as_i64()) {
                    known_pids.insert(src, fid);
                }
            }
        }
        let mut fields = Vec::new();
        for col in snap.partition_columns() {
            let top = converted
                .top
                .iter()
                .find(|t| t.name == *col)
                .cloned()
                .ok_or_else(|| IcebergError::Convert {
                    version: snap.version(),
                    path: String::new(),
                    reason: format!("partition column `{col}` is not a top-level column"),
                })?;
            let (name, value_key, source_id) = (top.name, top.physical_name, top.id);
            let ty = top.ty.ok_or_else(|| IcebergError::UnsupportedType {
                column: name.clone(),
                delta_type: "a nested type as a partition column".into(),
            })?;
            let field_id = *known_pids.entry(source_id).or_insert_with(|| {
                last_pid += 1;
                last_pid
            });
            fields.push(PartitionField {
                name,
                value_key,
                source_id,
                field_id,
                ty,
            });
        }
        let wanted: Vec<(i64, i64)> = fields.iter().map(|f| (f.source_id, f.field_id)).collect();
        let default_id = m["default-spec-id"].as_i64().unwrap_or(-1);
        let existing = m["partition-specs"].as_array().and_then(|specs| {
            specs.iter().find_map(|s| {
                let id = s["spec-id"].as_i64()?;
                let f: Vec<(i64, i64)> = s["fields"]
                    .as_array()?
                    .iter()
                    .map(|f| Some((f["source-id"].as_i64()?, f["field-id"].as_i64()?)))
                    .collect::<Option<_>>()?;
                (f == wanted).then_some(id)
            })
        });
        let spec_id = match existing {
            Some(id) => id,
            None => {
                let id = m["partition-specs"]
                    .as_array()
                    .map(|s| {
                        s.iter()
                            .filter_map(|s| s["spec-id"].as_i64())
                            .max()
                            .unwrap_or(-1)
                            + 1
                    })
                    .unwrap_or(0);
                let spec = PartitionSpec {
                    spec_id: id as i32,
                    fields: fields.clone(),
                };
                push(m, "partition-specs", spec.json());
                id
            }
        };
        if spec_id != default_id {
            m["default-spec-id"] = json!(spec_id);
        }
        m["last-partition-id"] = json!(last_pid);
        Ok(PartitionSpec {
            spec_id: spec_id as i32,
            fields,
        })
    }

    fn data_file(
        &self,
        version: Version,
        snap: &Snapshot,
        add: FileRef<'_>,
        converted: &Converted,
        spec: &PartitionSpec,
    ) -> Result<DataFile> {
        let partition = partition_tuple(version, add, spec)?;
        let stats = add
            .stats()
            .as_deref()
            .and_then(FileStats::parse)
            .unwrap_or_default();
        // Readers skip a file whose record_count is 0 without opening it: without Delta
        // statistics, the count comes from the file's Parquet footer.
        let records = match stats.num_records {
            Some(n) => n.max(0),
            None => footer_rows(snap, add).map_err(|reason| IcebergError::Convert {
                version,
                path: add.path().to_string(),
                reason,
            })?,
        };
        let mut value_counts = Vec::new();
        let mut null_counts = Vec::new();
        let mut lower = Vec::new();
        let mut upper = Vec::new();
        if stats.num_records.is_some() {
            for leaf in &converted.leaves {
                let id = leaf.id as i32;
                if let Some(n) = stats.null_count(&leaf.physical_path) {
                    null_counts.push((id, n));
                    value_counts.push((id, records));
                }
                // Bounds are kept even when not tight (after DV deletes): still bounds.
                if let Some(b) = stats
                    .min(&leaf.physical_path)
                    .and_then(|v| bound(v, leaf.ty, false))
                {
                    lower.push((id, b));
                }
                if let Some(b) = stats
                    .max(&leaf.physical_path)
                    .and_then(|v| bound(v, leaf.ty, true))
                {
                    upper.push((id, b));
                }
            }
        }
        Ok(DataFile {
            content: Content::Data,
            file_path: self.file_path(add.path()),
            partition,
            record_count: records,
            file_size_in_bytes: add.size(),
            value_counts,
            null_value_counts: null_counts,
            lower_bounds: lower,
            upper_bounds: upper,
            referenced_data_file: None,
        })
    }

    /// Where the delete file of `add`'s deletion vector lives, relative to the root.
    fn delete_file_rel(&self, add: FileRef<'_>) -> String {
        let dv = add
            .deletion_vector()
            .as_ref()
            .map(|d| d.unique_id())
            .unwrap_or_default();
        let key = md5_hex(&[self.file_path(add.path()).as_bytes(), dv.as_bytes()]);
        format!("{METADATA_DIR}/dv-{key}.parquet")
    }

    fn delete_file_path(&self, add: FileRef<'_>) -> String {
        format!("{}/{}", self.location, self.delete_file_rel(add))
    }

    fn delete_file(
        &self,
        version: Version,
        snap: &Snapshot,
        add: FileRef<'_>,
        spec: &PartitionSpec,
    ) -> Result<DataFile> {
        let Some(dv) = add.deletion_vector() else {
            return Err(IcebergError::Convert {
                version,
                path: add.path().to_string(),
                reason: "no deletion vector".into(),
            });
        };
        let data_path = self.file_path(add.path());
        let bitmap = read_deletion_vector(snap.store_ref(), dv)?;
        let bytes = position_delete_file(&data_path, &bitmap)?;
        let rel = self.delete_file_rel(add);
        let len = bytes.len() as i64;
        self.store.put(&sp(&rel)?, Bytes::from(bytes))?;
        let lo = bitmap.min().map(|p| (p as i64).to_le_bytes().to_vec());
        let hi = bitmap.max().map(|p| (p as i64).to_le_bytes().to_vec());
        let path_bytes = data_path.as_bytes().to_vec();
        Ok(DataFile {
            content: Content::PositionDeletes,
            file_path: format!("{}/{rel}", self.location),
            partition: partition_tuple(version, add, spec)?,
            record_count: bitmap.len() as i64,
            file_size_in_bytes: len,
            value_counts: Vec::new(),
            null_value_counts: Vec::new(),
            lower_bounds: [(crate::deletes::FILE_PATH_ID, path_bytes.clone())]
                .into_iter()
                .chain(lo.map(|b| (crate::deletes::POS_ID, b)))
                .collect(),
            upper_bounds: [(crate::deletes::FILE_PATH_ID, path_bytes)]
                .into_iter()
                .chain(hi.map(|b| (crate::deletes::POS_ID, b)))
                .collect(),
            referenced_data_file: Some(data_path),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn write_manifest(
        &self,
        schema_json: &str,
        schema_id: i64,
        spec: &PartitionSpec,
        content: Content,
        sid: i64,
        seq: i64,
        entries: &[Entry],
    ) -> Result<ManifestFile> {
        let bytes = write_manifest(
            &ManifestHeader {
                schema_json,
                schema_id,
                spec,
                content,
            },
            entries,
        );
        let (path, len) = self.put_named(&format!("{sid}-m"), "avro", bytes)?;
        let mut files = [0i32; 3];
        let mut rows = [0i64; 3];
        for e in entries {
            let i = match e.status {
                Status::Added => 0,
                Status::Existing => 1,
                Status::Deleted => 2,
            };
            files[i] += 1;
            rows[i] += e.file.record_count;
        }
        let min_seq = entries
            .iter()
            .filter(|e| e.status != Status::Deleted)
            .map(|e| e.sequence_number)
            .min()
            .unwrap_or(seq);
        Ok(ManifestFile {
            manifest_path: path,
            manifest_length: len,
            partition_spec_id: spec.spec_id,
            content,
            sequence_number: seq,
            min_sequence_number: min_seq,
            added_snapshot_id: sid,
            files,
            rows,
            partitions: summaries(spec, entries),
        })
    }
}

#[derive(Default)]
struct Counts {
    added_data_files: usize,
    deleted_data_files: usize,
    added_delete_files: usize,
    removed_delete_files: usize,
    added_records: i64,
    deleted_records: i64,
    added_position_deletes: i64,
}

/// Every primitive field of an Iceberg struct JSON by id: its name (the top-level column's
/// for nested ones) and type.
fn primitive_fields(t: &Value, column: Option<&str>, out: &mut HashMap<i64, (String, String)>) {
    let visit = |id: Option<i64>,
                 name: &str,
                 ty: &Value,
                 out: &mut HashMap<i64, (String, String)>| match (id, ty.as_str()) {
        (Some(id), Some(prim)) => {
            out.insert(id, (name.to_string(), prim.to_string()));
        }
        _ => primitive_fields(ty, Some(name), out),
    };
    match t["type"].as_str() {
        Some("struct") => {
            for f in t["fields"].as_array().into_iter().flatten() {
                let name = column.or(f["name"].as_str()).unwrap_or_default();
                visit(f["id"].as_i64(), name, &f["type"], out);
            }
        }
        Some("list") => visit(
            t["element-id"].as_i64(),
            column.unwrap_or_default(),
            &t["element"],
            out,
        ),
        Some("map") => {
            visit(
                t["key-id"].as_i64(),
                column.unwrap_or_default(),
                &t["key"],
                out,
            );
            visit(
                t["value-id"].as_i64(),
                column.unwrap_or_default(),
                &t["value"],
                out,
            );
        }
        _ => {}
    }
}

/// Whether Iceberg v2 promotes `from` to `to` (table spec, "Schema Evolution"): int to
/// long, float to double, a decimal to a wider precision of the same scale.
fn promotes(from: &str, to: &str) -> bool {
    let decimal = |t: &str| -> Option<(u32, u32)> {
        let (p, s) = t
            .strip_prefix("decimal(")?
            .strip_suffix(')')?
            .split_once(',')?;
        Some((p.trim().parse().ok()?, s.trim().parse().ok()?))
    };
    match (from, to) {
        ("int", "long") | ("float", "double") => true,
        _ => {
            matches!((decimal(from), decimal(to)), (Some((p1, s1)), Some((p2, s2))) if s1 == s2 && p2 >= p1)
        }
    }
}

/// Refuses a schema change Iceberg readers would misread: a field keeping its id with a
/// type Iceberg v2 cannot promote to (Delta's type widening also allows integer to double,
/// date to timestamp_ntz and decimal scale changes).
fn check_promotions(current: &Value, next: &Value) -> Result<()> {
    let (mut before, mut after) = (HashMap::new(), HashMap::new());
    primitive_fields(current, None, &mut before);
    primitive_fields(next, None, &mut after);
    let mut changed: Vec<(&i64, &(String, String))> = after.iter().collect();
    changed.sort_by_key(|(id, _)| **id);
    for (id, (column, to)) in changed {
        if let Some((_, from)) = before.get(id)
            && from != to
            && !promotes(from, to)
        {
            return Err(IcebergError::UnsupportedTypeChange {
                column: column.clone(),
                from: from.clone(),
                to: to.clone(),
            });
        }
    }
    Ok(())
}

/// The row count in a data file's Parquet footer (the footer alone is read).
fn footer_rows(snap: &Snapshot, add: FileRef<'_>) -> std::result::Result<i64, String> {
    let location = snap.file_location(add.path()).map_err(|e| e.to_string())?;
    let rows = footer_row_count(snap.store_ref(), &location, u64::try_from(add.size()).ok())
        .map_err(|e| e.to_string())?;
    i64::try_from(rows).map_err(|_| format!("{rows} rows do not fit a long"))
}

fn push(m: &mut Value, key: &str, v: Value) {
    if let Some(a) = m[key].as_array_mut() {
        a.push(v);
    } else {
        m[key] = json!([v]);
    }
}

/// `numRecords` of a file's statistics, if it has them.
fn records_of(a: FileRef<'_>) -> Option<i64> {
    a.stats()
        .as_deref()
        .and_then(FileStats::parse)
        .and_then(|s| s.num_records)
}

fn ice_type_of(v: &Value) -> Option<crate::schema::IceType> {
    use crate::schema::IceType;
    let s = v.as_str()?;
    Some(match s {
        "boolean" => IceType::Boolean,
        "int" => IceType::Int,
        "long" => IceType::Long,
        "float" => IceType::Float,
        "double" => IceType::Double,
        "date" => IceType::Date,
        "timestamp" => IceType::Timestamp,
        "timestamptz" => IceType::TimestampTz,
        "string" => IceType::String,
        "binary" => IceType::Binary,
        d => {
            let inner = d.strip_prefix("decimal(")?.strip_suffix(')')?;
            let (p, s) = inner.split_once(',')?;
            IceType::Decimal(p.trim().parse().ok()?, s.trim().parse().ok()?)
        }
    })
}

fn partition_tuple(version: Version, add: FileRef<'_>, spec: &PartitionSpec) -> Result<Vec<Datum>> {
    spec.fields
        .iter()
        .map(|f| {
            let text = add.partition_values().get(&f.value_key).flatten();
            f.value(text)
                .map(|(d, _)| d)
                .map_err(|reason| IcebergError::Convert {
                    version,
                    path: add.path().to_string(),
                    reason,
                })
        })
        .collect()
}

/// Per partition field: nulls seen, and the smallest and largest value.
fn summaries(spec: &PartitionSpec, entries: &[Entry]) -> Vec<FieldSummary> {
    let live: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.status != Status::Deleted)
        .collect();
    spec.fields
        .iter()
        .enumerate()
        .map(|(i, _)| {
            let mut s = FieldSummary::default();
            let mut lo: Option<&Datum> = None;
            let mut hi: Option<&Datum> = None;
            for e in &live {
                match e.file.partition.get(i) {
                    Some(Datum::Union(1, v)) => {
                        if lo.is_none_or(|l| less(v, l)) {
                            lo = Some(v);
                        }
                        if hi.is_none_or(|h| less(h, v)) {
                            hi = Some(v);
                        }
                    }
                    _ => s.contains_null = true,
                }
            }
            s.lower_bound = lo.and_then(binary);
            s.upper_bound = hi.and_then(binary);
            s
        })
        .collect()
}

fn less(a: &Datum, b: &Datum) -> bool {
    match (a, b) {
        (Datum::Boolean(a), Datum::Boolean(b)) => a < b,
        (Datum::Int(a), Datum::Int(b)) => a < b,
        (Datum::Long(a), Datum::Long(b)) => a < b,
        (Datum::Float(a), Datum::Float(b)) => a < b,
        (Datum::Double(a), Datum::Double(b)) => a < b,
        (Datum::String(a), Datum::String(b)) => a.as_bytes() < b.as_bytes(),
        (Datum::Bytes(a), Datum::Bytes(b)) => a < b,
        (Datum::Fixed(a), Datum::Fixed(b)) => fixed_value(a) < fixed_value(b),
        _ => false,
    }
}

fn fixed_value(b: &[u8]) -> i128 {
    let mut full = if b.first().is_some_and(|x| x & 0x80 != 0) {
        [0xffu8; 16]
    } else {
        [0u8; 16]
    };
    let n = b.len().min(16);
    full[16 - n..].copy_from_slice(&b[b.len() - n..]);
    i128::from_be_bytes(full)
}

fn binary(d: &Datum) -> Option<Vec<u8>> {
    Some(match d {
        Datum::Boolean(b) => vec![u8::from(*b)],
        Datum::Int(v) => v.to_le_bytes().to_vec(),
        Datum::Long(v) => v.to_le_bytes().to_vec(),
        Datum::Float(v) => v.to_le_bytes().to_vec(),
        Datum::Double(v) => v.to_le_bytes().to_vec(),
        Datum::String(s) => s.as_bytes().to_vec(),
        Datum::Bytes(b) => b.clone(),
        Datum::Fixed(b) => crate::bounds::decimal_bytes(fixed_value(b))?,
        _ => return None,
    })
}

/// The Delta versions mirrored by the Iceberg metadata in `store`, each with its snapshot
/// id, oldest first (for checks and tests).
///
/// # Errors
/// As [`metadata::latest`].
pub fn synced_versions(store: &dyn ObjectStore) -> Result<BTreeMap<Version, i64>> {
    let Some((_, m)) = metadata::latest(store)? else {
        return Ok(BTreeMap::new());
    };
    Ok(m["snapshots"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| {
            let v = s
                .pointer(&format!("/summary/{DELTA_VERSION_KEY}"))?
                .as_str()?
                .parse()
                .ok()?;
            Some((v, s["snapshot-id"].as_i64()?))
        })
        .collect())
}
