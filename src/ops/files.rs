//! Data files written elsewhere, committed at once (SPEC.md §36): the distributed-commit
//! contract of engines whose workers write files in parallel and whose driver commits them
//! once (Ray Data, Daft, Spark).
//!
//! 1. Each worker opens the table and writes its share with
//!    [`Table::write_data_files`]: data files of the table's schema and partitioning, with
//!    statistics, and their `add` actions back, not committed. An [`Add`] is serde
//!    serialisable (its JSON is the log's `add` action), so it travels to the driver as
//!    JSON.
//! 2. The driver commits every worker's adds in ONE commit with [`Table::commit_files`]
//!    (or stages them in a [`Transaction`](crate::Transaction) with
//!    [`add_written_files`](crate::Transaction::add_written_files)), after checking each
//!    add ([`check_adds`]): a path inside the table root (or under a location the caller
//!    allows), partition values that are the table's partition columns and parse as their
//!    types, statistics that are well formed and name only the table's columns, no row ids
//!    or deletion vector of its own, no path listed twice or already live.
//! 3. With an application transaction ([`WriteOptions::app_transaction`]) the commit is
//!    idempotent: a driver that retries after a failure it could not interpret is
//!    `Skipped` when its first attempt had landed.
//!
//! An overwrite may replace some partitions only
//! ([`CommitFilesOptions::replace_where`], deltalake's `partition_filters`), and an append
//! may remove live files in the same commit ([`CommitFilesOptions::removes`], deltalake's
//! `RemoveAction`s): both judge whole files, which are not read.
//!
//! A failed or refused commit deletes nothing: the files are the workers', and a retry may
//! still commit them. Files no commit references are VACUUM's to delete.

use std::collections::{HashMap, HashSet};

use crate::Snapshot;
use alluvium_datafile::sink::{FileSink, FileSinkOptions, SinkTable};
use alluvium_expr::{FileSummary, Predicate, all_match, parse_expr};
use alluvium_mvcc::Transaction;
use alluvium_storage::FileLocation;
use alluvium_txlog::FileRef;
use alluvium_txlog::actions::{Add, Remove};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::path::{canonical_path, resolve};
use alluvium_txlog::schema::{DataType, StructField, StructType};
use alluvium_txlog::stats::stat_scalar;
use serde_json::{Map, Value};

use crate::commit::{WriteOptions, WriteOutcome, outcome_if_done};
use crate::ops::write::overwrite_schema::stage_schema;
use crate::ops::write::remove_every_file;
use crate::rows::rules::ColumnRules;
use crate::rows::source::{self, IntoBatch};
use crate::rows::{Conform, feed, input, materializes};
use crate::{Error, FileRefusal, Result, Table};

/// What [`Table::commit_files`] does with the table's current files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CommitMode {
    /// Add the files to the table (a blind append).
    #[default]
    Append,
    /// Replace the table's contents: every live file is removed in the same commit, or,
    /// with [`CommitFilesOptions::replace_where`], those of the partitions it names.
    Overwrite,
}

/// Options of [`Table::commit_files`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct CommitFilesOptions {
    /// Append or overwrite.
    pub mode: CommitMode,
    /// With [`CommitMode::Overwrite`], the partitions replaced, as a predicate in the
    /// `--filter` language over partition columns only (`region = 'eu' AND day >=
    /// '2026-01-01'`): only the live files whose partition values satisfy it are removed,
    /// and every added file's partition values must satisfy it (as Delta's `replaceWhere`
    /// requires of new rows), else the commit is refused. The predicate is recorded in
    /// `commitInfo` as a replaceWhere write's is, and concurrent commits that add or remove
    /// files in those partitions conflict with it. `None` replaces the whole table.
    pub replace_where: Option<String>,
    /// With [`CommitMode::Append`], live files this commit removes, by their paths as the
    /// log names them (relative to the table root, or absolute URIs): deltalake's
    /// `RemoveAction`s, the files a job replaced with the ones it adds. Each must be live
    /// in the version committed on (a concurrent commit that removed one makes this one
    /// conflict); they are removed with `dataChange: true` and the store's time as their
    /// deletion timestamp (which VACUUM's retention counts from).
    pub removes: Vec<String>,
    /// With [`CommitMode::Overwrite`] of the whole table, the table's new schema, the one
    /// the files were written with (Delta's `overwriteSchema`, deltalake's
    /// `create_write_transaction` with another schema): committed in the same commit, the
    /// partition columns unchanged (they must be columns of it), the adds' statistics and
    /// partition values checked against it. Refused on a table with column mapping (files
    /// written elsewhere name their columns by the logical names, which a mapped schema
    /// does not read) and on a clustered one.
    pub schema: Option<StructType>,
    /// Absolute locations outside the table root under which added files may lie, as URI
    /// prefixes (`s3://bucket/shared/`, `file:///mnt/data/`). Empty by default: every
    /// file must be inside the table root.
    pub allowed_locations: Vec<String>,
    /// The write options that apply: the application transaction (idempotency),
    /// `userMetadata`, the embedder's `commitInfo` fields, the retry policy, a pinned read
    /// snapshot. `merge_schema`, `target_file_size` and `dv_files_only` do not apply.
    pub write: WriteOptions,
}

/// Builder-style setters: the struct is `#[non_exhaustive]`, so outside this crate it is
/// built from its `Default` with these.
impl CommitFilesOptions {
    /// Sets [`mode`](Self::mode).
    #[must_use]
    pub fn with_mode(mut self, mode: CommitMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets [`replace_where`](Self::replace_where).
    #[must_use]
    pub fn with_replace_where(mut self, predicate: impl Into<String>) -> Self {
        self.replace_where = Some(predicate.into());
        self
    }

    /// Sets [`schema`](Self::schema).
    #[must_use]
    pub fn with_schema(mut self, schema: StructType) -> Self {
        self.schema = Some(schema);
        self
    }

    /// Sets [`removes`](Self::removes).
    #[must_use]
    pub fn with_removes(mut self, paths: Vec<String>) -> Self {
        self.removes = paths;
        self
    }

    /// Sets [`allowed_locations`](Self::allowed_locations).
    #[must_use]
    pub fn with_allowed_locations(mut self, allowed_locations: Vec<String>) -> Self {
        self.allowed_locations = allowed_locations;
        self
    }

    /// Sets [`write`](Self::write).
    #[must_use]
    pub fn with_write(mut self, write: WriteOptions) -> Self {
        self.write = write;
        self
    }
}

impl Table {
    /// Writes `batches` as data files of the table, without committing them, and returns
    /// their `add` actions (with statistics) for a driver to commit with
    /// [`commit_files`](Self::commit_files): the worker's half of a distributed write
    /// (SPEC.md §36). The files have the latest version's schema and partitioning and the
    /// table's target file size; the batches are streamed as by [`append`](Self::append)
    /// (plain batches or a fallible source, see [`IntoBatch`]) and must fit the schema as
    /// an append's must (no schema evolution). `partition_by`, when given, must be the
    /// table's partition columns (a check that the worker writes the table it means to).
    ///
    /// # Errors
    /// A missing table; unsupported writer features; a table with identity columns (their
    /// values need one writer); `partition_by` other than the table's; schema mismatches,
    /// column-rule violations, the source's failure and storage errors, after which the
    /// files this call wrote are deleted.
    pub fn write_data_files<I>(
        &self,
        batches: I,
        partition_by: Option<&[String]>,
    ) -> Result<Vec<Add>>
    where
        I: IntoIterator,
        I::Item: IntoBatch,
    {
        let snapshot = self.snapshot()?;
        snapshot.check_writable()?;
        if let Some(asked) = partition_by {
            let table = snapshot.partition_columns();
            let same = asked.len() == table.len()
                && asked
                    .iter()
                    .zip(table)
                    .all(|(a, t)| a.eq_ignore_ascii_case(t));
            if !same {
                return Err(Error::InvalidArgument(format!(
                    "partition_by {asked:?} is not the table's partitioning {table:?}"
                )));
            }
        }
        let rules = ColumnRules::for_snapshot(&snapshot)?;
        if let Some(f) = snapshot
            .schema()
            .fields
            .iter()
            .find(|f| rules.is_identity(&f.name))
        {
            return Err(Error::InvalidArgument(format!(
                "column `{}` is an identity column: its values must come from one writer (append, or a transaction), not from files written apart",
                f.name
            )));
        }
        let configuration = snapshot.metadata().configuration.clone();
        let (adds, _) = write_table_files(self, &snapshot, &configuration, &rules, batches)?;
        Ok(adds)
    }

    /// Commits data files written elsewhere (by [`write_data_files`](Self::write_data_files)
    /// on workers, or by the embedder) in ONE commit, appending them or replacing the
    /// table's contents (or some partitions, [`CommitFilesOptions::replace_where`]) with
    /// them: the driver's half of a distributed write (SPEC.md §36). An append may also
    /// remove live files ([`CommitFilesOptions::removes`]). Every add and removal is checked
    /// first (see [`FileRefusal`]); one bad one refuses the whole commit. The files
    /// themselves are not read: their size and statistics are trusted once well formed.
    /// With `options.write.app_transaction` the commit is idempotent: a driver that runs
    /// again after its commit landed is `Skipped`.
    ///
    /// Nothing is deleted when the commit fails or is refused: the files stay for a retry
    /// (or for VACUUM, once no commit will reference them).
    ///
    /// # Errors
    /// [`Error::FileRefused`] naming the add or removal and why; a `replace_where` that
    /// does not parse, names a column that is not a partition column or comes without
    /// overwrite, and `removes` with overwrite ([`Error::InvalidArgument`]); the write
    /// options' refusals; the commit's errors (an overwrite conflicts with concurrent
    /// writes as [`overwrite`](Self::overwrite) does; append-only tables refuse removals).
    pub fn commit_files(
        &self,
        adds: Vec<Add>,
        options: &CommitFilesOptions,
    ) -> Result<WriteOutcome> {
        let snapshot = self.read_snapshot(&options.write)?;
        let replace = match (&options.replace_where, options.mode) {
            (None, _) => None,
            (Some(text), CommitMode::Overwrite) => {
                Some((replaced_partitions(&snapshot, text)?, text))
            }
            (Some(_), CommitMode::Append) => {
                return Err(Error::InvalidArgument(
                    "replace_where names the partitions an overwrite replaces: it needs mode overwrite".into(),
                ));
            }
        };
        if !options.removes.is_empty() && options.mode == CommitMode::Overwrite {
            return Err(Error::InvalidArgument(
                "an overwrite removes the files it replaces itself: removes go with mode append"
                    .into(),
            ));
        }
        if options.schema.is_some() && (options.mode != CommitMode::Overwrite || replace.is_some())
        {
            return Err(Error::InvalidArgument(
                "a new schema replaces the table's in an overwrite of the whole table: it needs mode overwrite and no replace_where".into(),
            ));
        }
        if options.schema.is_some() && snapshot.column_mapping() != ColumnMappingMode::None {
            return Err(Error::InvalidArgument(
                "the table maps its columns: files written elsewhere cannot take a new schema's physical names; overwrite it with rows instead".into(),
            ));
        }
        let mut txn = Transaction::new(snapshot.inner(), "WRITE");
        txn.set_parameter(
            "mode",
            match options.mode {
                CommitMode::Append => "Append",
                CommitMode::Overwrite => "Overwrite",
            },
        );
        txn.set_parameter(
            "partitionBy",
            serde_json::to_string(snapshot.partition_columns()).unwrap_or_default(),
        );
        if let Some((_, text)) = &replace {
            txn.set_parameter(
                "predicate",
                serde_json::to_string(&vec![text]).unwrap_or_default(),
            );
        }
        if let Some(done) = outcome_if_done(&mut txn, &snapshot, &options.write) {
            return Ok(done);
        }
        let new_schema = match &options.schema {
            Some(schema) => Some(
                stage_schema(
                    &snapshot,
                    &mut txn,
                    schema.clone(),
                    snapshot.partition_columns(),
                )?
                .0,
            ),
            None => None,
        };
        check_adds(
            &snapshot,
            new_schema.as_ref(),
            &adds,
            &options.allowed_locations,
            &HashSet::new(),
        )?;
        let removed = live_files_named(&snapshot, &options.removes)?;
        let now = self.store().now_ms();
        match (options.mode, &replace) {
            (CommitMode::Append, _) => {
                for a in &removed {
                    txn.read_file(a);
                    txn.remove_file(Remove::from_add(a, now, true));
                }
            }
            (CommitMode::Overwrite, None) => remove_every_file(&snapshot, &mut txn, now),
            (CommitMode::Overwrite, Some((pred, text))) => {
                for add in &adds {
                    let summary = FileSummary {
                        partition_values: &add.partition_values,
                        stats: None,
                    };
                    if !all_match(pred, &summary) {
                        return Err(Error::FileRefused {
                            path: add.path.clone(),
                            reason: FileRefusal::OutsideReplacedPartitions((*text).clone()),
                        });
                    }
                }
                // The predicate is exact on partition values: a file it keeps is replaced
                // whole, one it skips holds no row of the partitions.
                txn.read_predicate(pred.clone());
                let replaced: Vec<Add> = snapshot
                    .inner()
                    .files_matching(pred)
                    .map(|m| m.file.to_add())
                    .collect();
                for a in &replaced {
                    txn.read_file(a);
                    txn.remove_file(Remove::from_add(a, now, true));
                }
            }
        }
        set_file_metrics(&mut txn, &adds);
        for a in adds {
            txn.add_file(a);
        }
        // The workers' files: a retry may still commit them.
        txn.set_discard_on_failure(false);
        Ok(WriteOutcome::Committed(Box::new(
            self.commit_with_policy(txn)?,
        )))
    }
}

/// `text` parsed and bound as the predicate of the partitions an overwrite of files
/// written elsewhere replaces: over partition columns only, so that it judges whole files
/// from their partition values exactly.
///
/// # Errors
/// A predicate that does not parse or bind; one naming a column that is not a partition
/// column, or using an expression skipping cannot judge exactly ([`Error::InvalidArgument`]).
fn replaced_partitions(snapshot: &Snapshot, text: &str) -> Result<Predicate> {
    let pred = snapshot.inner().bind(&parse_expr(text)?)?;
    if !pred.only_partition_columns() {
        return Err(Error::InvalidArgument(format!(
            "replace_where {text} must compare partition columns ({:?}) with values: files written elsewhere are replaced whole, unread",
            snapshot.partition_columns()
        )));
    }
    Ok(pred)
}

/// The live files of `snapshot` that `paths` name (as the log does, relative or absolute),
/// in the order given.
///
/// # Errors
/// [`Error::FileRefused`] for a path that is not live ([`FileRefusal::NotLive`]) or is
/// listed twice.
fn live_files_named(snapshot: &Snapshot, paths: &[String]) -> Result<Vec<Add>> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let root = snapshot.root();
    let mut live: HashMap<String, FileRef<'_>> = snapshot
        .files()
        .map(|f| (canonical_path(f.path(), root).into_owned(), f))
        .collect();
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(paths.len());
    for path in paths {
        let key = canonical_path(path, root).into_owned();
        let refuse = |reason: FileRefusal| Error::FileRefused {
            path: path.clone(),
            reason,
        };
        if !seen.insert(key.clone()) {
            return Err(refuse(FileRefusal::DuplicatePath));
        }
        match live.remove(&key) {
            Some(f) => out.push(f.to_add()),
            None => return Err(refuse(FileRefusal::NotLive)),
        }
    }
    Ok(out)
}

/// `numFiles`, `numOutputRows` (when every file records its rows) and `numOutputBytes`.
fn set_file_metrics(txn: &mut Transaction, adds: &[Add]) {
    txn.set_metric("numFiles", adds.len());
    let rows: Option<i64> = adds
        .iter()
        .map(|a| alluvium_txlog::row_tracking::num_records(a).ok())
        .sum();
    if let Some(rows) = rows {
        txn.set_metric("numOutputRows", rows);
    }
    txn.set_metric("numOutputBytes", adds.iter().map(|a| a.size).sum::<i64>());
}

/// Writes `batches` as new files of `snapshot`'s table (its schema and partitioning, the
/// configuration given, the column rules applied to every batch); returns their adds and
/// the time spent. The files are deleted when it fails.
pub(crate) fn write_table_files<I>(
    table: &Table,
    snapshot: &Snapshot,
    configuration: &std::collections::HashMap<String, String>,
    rules: &ColumnRules,
    batches: I,
) -> Result<(Vec<Add>, std::time::Duration)>
where
    I: IntoIterator,
    I::Item: IntoBatch,
{
    let schema = snapshot.schema();
    let partitions = snapshot.partition_columns();
    let target = input::logical_schema(schema)?;
    let mut sink = FileSink::new(
        SinkTable {
            store: table.store().as_ref(),
            schema,
            partition_columns: partitions,
            configuration,
            column_mapping: snapshot.column_mapping(),
        },
        FileSinkOptions {
            target_size: None,
            data_change: true,
        },
    )?
    .materialize_partition_columns(materializes(snapshot))?;
    let fed = feed(
        &mut sink,
        source::batches(batches),
        &Conform {
            schema,
            partitions,
            target: &target,
            rules,
        },
        |_| Ok(()),
    );
    if let Err(e) = fed {
        sink.abort();
        return Err(e);
    }
    Ok(sink.finish()?)
}

/// Checks adds written elsewhere before they are committed on `snapshot` (module
/// documentation, step 2), against `schema` when the commit replaces the table's schema
/// with it. `staged` holds the canonical paths a transaction already adds.
///
/// # Errors
/// [`Error::FileRefused`] for the first add refused, naming it and why.
pub(crate) fn check_adds(
    snapshot: &Snapshot,
    schema: Option<&StructType>,
    adds: &[Add],
    allowed_locations: &[String],
    staged: &HashSet<String>,
) -> Result<()> {
    let root = snapshot.root();
    let mode = snapshot.column_mapping();
    let schema = schema.unwrap_or(snapshot.schema());
    let partition_fields: Vec<&StructField> = snapshot
        .partition_columns()
        .iter()
        .filter_map(|p| schema.field(p))
        .collect();
    let expected: Vec<String> = partition_fields
        .iter()
        .map(|f| mode.physical_name(f).to_string())
        .collect();
    let needs_rows = alluvium_txlog::row_tracking::must_assign(
        snapshot.protocol(),
        &snapshot.metadata().configuration,
    );
    let live: HashSet<String> = snapshot
        .files()
        .map(|a| canonical_path(a.path(), root).into_owned())
        .collect();
    let mut seen: HashSet<String> = HashSet::new();
    for add in adds {
        let refuse = |reason: FileRefusal| Error::FileRefused {
            path: add.path.clone(),
            reason,
        };
        check_new(add).map_err(refuse)?;
        match resolve(&add.path, root) {
            Err(e) => return Err(refuse(FileRefusal::InvalidPath(e.to_string()))),
            Ok(FileLocation::Table(_)) => {}
            Ok(FileLocation::External(uri)) => {
                if !allowed_locations.iter().any(|l| under(&uri, l)) {
                    return Err(refuse(FileRefusal::OutsideTable));
                }
            }
        }
        let key = canonical_path(&add.path, root).into_owned();
        if live.contains(&key) {
            return Err(refuse(FileRefusal::AlreadyLive));
        }
        if staged.contains(&key) || !seen.insert(key) {
            return Err(refuse(FileRefusal::DuplicatePath));
        }
        check_partition_values(add, &partition_fields, &expected, mode).map_err(refuse)?;
        check_stats(add.stats.as_deref(), schema, mode, needs_rows).map_err(refuse)?;
    }
    Ok(())
}

/// Whether `uri` lies under the location `prefix` (whole path segments).
fn under(uri: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    !prefix.is_empty()
        && uri
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1)
}

/// What a new data file cannot carry.
fn check_new(add: &Add) -> std::result::Result<(), FileRefusal> {
    let bad = |why: &str| Err(FileRefusal::NotANewFile(why.to_string()));
    if add.deletion_vector.is_some() {
        return bad("it has a deletion vector");
    }
    if add.base_row_id.is_some() || add.default_row_commit_version.is_some() {
        return bad("it has row ids, which the commit assigns");
    }
    if !add.data_change {
        return bad("dataChange is false");
    }
    if add.size < 0 {
        return bad("its size is negative");
    }
    Ok(())
}

fn check_partition_values(
    add: &Add,
    fields: &[&StructField],
    expected: &[String],
    mode: ColumnMappingMode,
) -> std::result::Result<(), FileRefusal> {
    let found: Vec<String> = add
        .partition_values
        .iter()
        .map(|(k, _)| k.to_string())
        .collect();
    let mut sorted_found = found.clone();
    sorted_found.sort();
    let mut sorted_expected = expected.to_vec();
    sorted_expected.sort();
    if sorted_found != sorted_expected {
        return Err(FileRefusal::PartitionColumns {
            expected: expected.to_vec(),
            found,
        });
    }
    for f in fields {
        let physical = mode.physical_name(f);
        let value = add.partition_values.get(physical).flatten();
        let Some(ty) = f.data_type.as_primitive() else {
            continue;
        };
        alluvium_txlog::partition::parse_partition_value(&f.name, value, ty).map_err(|e| {
            FileRefusal::PartitionValue {
                column: f.name.clone(),
                reason: e.to_string(),
            }
        })?;
    }
    Ok(())
}

/// Checks a statistics string: a JSON object; `numRecords` a non-negative integer
/// (required where row tracking assigns row ids); `minValues`, `maxValues` and
/// `nullCount` objects that name only the table's columns (physical names, structs
/// nested), null counts non-negative integers no larger than `numRecords`, bounds values
/// of their column's type with the lower not above the upper; `tightBounds` a boolean.
fn check_stats(
    stats: Option<&str>,
    schema: &StructType,
    mode: ColumnMappingMode,
    needs_rows: bool,
) -> std::result::Result<(), FileRefusal> {
    let malformed = |why: String| Err(FileRefusal::MalformedStats(why));
    let Some(text) = stats else {
        if needs_rows {
            return malformed("numRecords is required: the table assigns row ids".into());
        }
        return Ok(());
    };
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(text) else {
        return malformed("not a JSON object".into());
    };
    let records = match obj.get("numRecords") {
        None | Some(Value::Null) if needs_rows => {
            return malformed("numRecords is required: the table assigns row ids".into());
        }
        None | Some(Value::Null) => None,
        Some(v) => match v.as_i64().filter(|n| *n >= 0) {
            Some(n) => Some(n),
            None => return malformed(format!("numRecords is {v}, not a count")),
        },
    };
    if let Some(v) = obj.get("tightBounds")
        && !v.is_boolean()
        && !v.is_null()
    {
        return malformed(format!("tightBounds is {v}, not a boolean"));
    }
    let section = |name: &str| -> std::result::Result<Option<&Map<String, Value>>, FileRefusal> {
        match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(_) => Err(FileRefusal::MalformedStats(format!(
                "{name} is not an object"
            ))),
        }
    };
    let mins = section("minValues")?;
    let maxs = section("maxValues")?;
    let nulls = section("nullCount")?;
    let mut path = Vec::new();
    check_level(&schema.fields, mode, &mut path, mins, maxs, nulls, records)
}

/// One level of the statistics' column tree (see [`check_stats`]).
fn check_level(
    fields: &[StructField],
    mode: ColumnMappingMode,
    path: &mut Vec<String>,
    mins: Option<&Map<String, Value>>,
    maxs: Option<&Map<String, Value>>,
    nulls: Option<&Map<String, Value>>,
    records: Option<i64>,
) -> std::result::Result<(), FileRefusal> {
    let field_of = |key: &str| fields.iter().find(|f| mode.physical_name(f) == key);
    for section in [mins, maxs, nulls].into_iter().flatten() {
        if let Some(key) = section.keys().find(|k| field_of(k).is_none()) {
            let mut shown = path.clone();
            shown.push(key.clone());
            return Err(FileRefusal::UnknownStatsColumn(shown.join(".")));
        }
    }
    for f in fields {
        let key = mode.physical_name(f);
        path.push(key.to_string());
        let shown = path.join(".");
        let min = mins.and_then(|m| m.get(key)).filter(|v| !v.is_null());
        let max = maxs.and_then(|m| m.get(key)).filter(|v| !v.is_null());
        let null = nulls.and_then(|m| m.get(key)).filter(|v| !v.is_null());
        if let DataType::Struct(s) = &f.data_type {
            let (a, b, c) = (
                nested(min, "minValues", &shown)?,
                nested(max, "maxValues", &shown)?,
                nested(null, "nullCount", &shown)?,
            );
            check_level(&s.fields, mode, path, a, b, c, records)?;
            path.pop();
            continue;
        }
        if let Some(v) = null {
            let n = v.as_i64().filter(|n| *n >= 0).ok_or_else(|| {
                FileRefusal::MalformedStats(format!("nullCount of {shown} is {v}, not a count"))
            })?;
            if let Some(r) = records
                && n > r
            {
                return Err(FileRefusal::MalformedStats(format!(
                    "nullCount of {shown} is {n}, more than numRecords ({r})"
                )));
            }
        }
        if let Some(ty) = f.data_type.as_primitive() {
            let bound = |v: Option<&Value>, what: &str| match v {
                None => Ok(None),
                Some(v) => match stat_scalar(v, ty) {
                    Some(s) => Ok(Some(s)),
                    None if bounds_unused(ty, v) => Ok(None),
                    None => Err(FileRefusal::MalformedStats(format!(
                        "{what} of {shown} is {v}, not a value of type {}",
                        f.data_type
                    ))),
                },
            };
            let lo = bound(min, "minValues")?;
            let hi = bound(max, "maxValues")?;
            if let (Some(lo), Some(hi)) = (lo, hi)
                && lo.compare(&hi) == Some(std::cmp::Ordering::Greater)
            {
                return Err(FileRefusal::MalformedStats(format!(
                    "minValues of {shown} is above its maxValues"
                )));
            }
        }
        path.pop();
    }
    Ok(())
}

/// The statistics of a struct column's fields: an object, or nothing.
fn nested<'a>(
    v: Option<&'a Value>,
    what: &str,
    shown: &str,
) -> std::result::Result<Option<&'a Map<String, Value>>, FileRefusal> {
    match v {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(FileRefusal::MalformedStats(format!(
            "{what} of struct column {shown} is not an object"
        ))),
    }
}

/// Bounds readers never use, which a writer may record as it likes: those of booleans,
/// binaries, void and variant columns, and the non-finite floating-point bounds (`"NaN"`,
/// `"Infinity"`) some writers record as strings.
fn bounds_unused(ty: alluvium_txlog::schema::PrimitiveType, v: &Value) -> bool {
    use alluvium_txlog::schema::PrimitiveType as P;
    match ty {
        P::Boolean | P::Binary | P::Void | P::Variant => true,
        P::Float | P::Double => v.as_str().is_some_and(|s| s.parse::<f64>().is_ok()),
        _ => false,
    }
}
