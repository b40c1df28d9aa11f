//! OPTIMIZE (SPEC.md §16): compacting small files into files near a target size, optionally
//! clustering rows by a Z-order key, without ever blocking or failing concurrent appends.
//!
//! 1. **Plan** ([`plan`]): the live files of the partitions selected by a partition predicate
//!    are grouped by partition. Bin-packing takes the files below the target size (and any
//!    file with a deletion vector, which the rewrite purges), smallest first, into bins of
//!    at most the target size; a bin of one file without a deletion vector is left alone.
//!    Z-order takes every file of each partition as one bin.
//! 2. **Rewrite**: `alluvium_datafile::rewrite_files` reads each bin with its deletion
//!    vectors applied and writes new files. Bins are rewritten in parallel
//!    and committed in groups of at most `max_commit_bytes` input bytes, so an interrupted
//!    run keeps the groups already committed.
//! 3. **Commit** each group as one transaction: every input file read and removed, every
//!    output file added, all with `dataChange=false`, `operation=OPTIMIZE` and the metrics in
//!    `commitInfo`. A concurrent append never conflicts. When a concurrent commit removed an
//!    input file (`ConcurrentDeleteRead` / `ConcurrentDeleteDelete`), the bins whose inputs
//!    are all still live are committed again on the fresh snapshot and the others dropped
//!    (their output files deleted).
//!
//! The table's rows are the same multiset before and after; earlier versions keep their
//! files until VACUUM removes them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use alluvium_datafile::{TableLayout, discard, rewrite_files};
use alluvium_expr::{Expr, FileFilter, Predicate};
use alluvium_mvcc::{ConflictKind, MvccError, Snapshot, Transaction};
use alluvium_txlog::FileRef;
use alluvium_txlog::actions::{Add, Remove};
use rayon::prelude::*;
use serde_json::json;

use crate::{CommitFields, MaintenanceError, Result};

/// `delta.targetFileSize` when the table does not set it: 128 MiB.
pub const DEFAULT_OPTIMIZE_TARGET: u64 = 128 * 1024 * 1024;

/// Input bytes committed per OPTIMIZE commit by default: 10 GiB.
pub const DEFAULT_MAX_COMMIT_BYTES: u64 = 10 * 1024 * 1024 * 1024;

/// What to optimize.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OptimizeOptions {
    /// Only partitions matching this predicate (over partition columns only).
    pub partition_filter: Option<Expr>,
    /// Only these partitions (`column=value` pairs, sorted by column), as auto-compaction
    /// selects the partitions a commit wrote.
    pub only_partitions: Option<BTreeSet<PartitionKey>>,
    /// Target file size; `delta.targetFileSize`, then 128 MiB, when `None`.
    pub target_size: Option<u64>,
    /// Cluster rows by these columns (Z-order) instead of plain bin-packing.
    pub zorder_by: Vec<String>,
    /// Input bytes per commit: larger runs are split into several commits.
    pub max_commit_bytes: u64,
    /// Set to stop the run (Ctrl-C in a host program): checked before each bin is
    /// rewritten and before each commit. Bins of the unfinished commit group are dropped
    /// with their output files; groups committed before stay (each is whole). The run then
    /// fails with [`MaintenanceError::Interrupted`].
    pub interrupt: Option<Arc<AtomicBool>>,
    /// The embedder's `commitInfo` fields, on each commit; a name the engine writes itself
    /// fails the run before any file is rewritten.
    pub commit_fields: CommitFields,
    /// The Parquet codec of the rewritten files, named as `delta.parquet.compression.codec`
    /// names it (`zstd`, `zstd(9)`, `gzip(6)`, ...), in place of that table property for
    /// this run only (deltalake's `WriterProperties(compression=...)`). A name alluvium
    /// does not write fails the run before any file is rewritten.
    pub compression: Option<String>,
}

/// A partition: its `column=value` pairs as the log spells them, sorted by column.
pub type PartitionKey = Vec<(String, Option<String>)>;

impl Default for OptimizeOptions {
    fn default() -> Self {
        OptimizeOptions {
            partition_filter: None,
            only_partitions: None,
            target_size: None,
            zorder_by: Vec::new(),
            max_commit_bytes: DEFAULT_MAX_COMMIT_BYTES,
            interrupt: None,
            commit_fields: CommitFields::default(),
            compression: None,
        }
    }
}

/// Builder-style setters: the struct is `#[non_exhaustive]`, so outside this crate it is
/// built from its `Default` with these.
impl OptimizeOptions {
    /// Sets [`partition_filter`](Self::partition_filter) (a value, or an `Option`).
    #[must_use]
    pub fn with_partition_filter(mut self, partition_filter: impl Into<Option<Expr>>) -> Self {
        self.partition_filter = partition_filter.into();
        self
    }

    /// Sets [`only_partitions`](Self::only_partitions) (a value, or an `Option`).
    #[must_use]
    pub fn with_only_partitions(
        mut self,
        only_partitions: impl Into<Option<BTreeSet<PartitionKey>>>,
    ) -> Self {
        self.only_partitions = only_partitions.into();
        self
    }

    /// Sets [`compression`](Self::compression) (a codec name, or an `Option`).
    #[must_use]
    pub fn with_compression(mut self, compression: impl Into<Option<String>>) -> Self {
        self.compression = compression.into();
        self
    }

    /// Sets [`target_size`](Self::target_size) (a value, or an `Option`).
    #[must_use]
    pub fn with_target_size(mut self, target_size: impl Into<Option<u64>>) -> Self {
        self.target_size = target_size.into();
        self
    }

    /// Sets [`zorder_by`](Self::zorder_by).
    #[must_use]
    pub fn with_zorder_by(mut self, zorder_by: Vec<String>) -> Self {
        self.zorder_by = zorder_by;
        self
    }

    /// Sets [`max_commit_bytes`](Self::max_commit_bytes).
    #[must_use]
    pub fn with_max_commit_bytes(mut self, max_commit_bytes: u64) -> Self {
        self.max_commit_bytes = max_commit_bytes;
        self
    }

    /// Sets [`interrupt`](Self::interrupt) (a value, or an `Option`).
    #[must_use]
    pub fn with_interrupt(mut self, interrupt: impl Into<Option<Arc<AtomicBool>>>) -> Self {
        self.interrupt = interrupt.into();
        self
    }

    /// Sets [`commit_fields`](Self::commit_fields).
    #[must_use]
    pub fn with_commit_fields(mut self, fields: CommitFields) -> Self {
        self.commit_fields = fields;
        self
    }
}

/// A group of files of one partition rewritten together.
#[derive(Debug, Clone)]
pub struct Bin {
    /// The partition (`column=value` pairs as the log spells them), for reporting.
    pub partition: PartitionKey,
    /// The input files.
    pub files: Vec<Add>,
}

impl Bin {
    /// Total input bytes.
    pub fn bytes(&self) -> u64 {
        self.files
            .iter()
            .map(|f| u64::try_from(f.size).unwrap_or(0))
            .sum()
    }
}

/// The bins of an OPTIMIZE run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The bins, grouped by partition.
    pub bins: Vec<Bin>,
    /// On a clustered table (SPEC.md §29): the clustering columns (logical names) the bins
    /// are clustered by; their output files are marked clustered (`clusteringProvider`).
    pub clustering: Option<Vec<String>>,
    /// The target size used.
    pub target_size: u64,
    /// Live files in the selected partitions.
    pub considered_files: usize,
}

/// Progress of a run, for progress bars.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Progress {
    /// The plan: this many input bytes to rewrite.
    Planned {
        /// Bins planned.
        bins: usize,
        /// Input bytes of all bins.
        bytes: u64,
    },
    /// A bin of this many input bytes was rewritten.
    BinDone {
        /// Input bytes of the bin.
        bytes: u64,
    },
    /// A commit landed.
    Committed {
        /// Its version.
        version: u64,
    },
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OptimizeReport {
    /// Versions committed, oldest first (none if there was nothing to do).
    pub versions: Vec<u64>,
    /// Files removed (rewritten).
    pub files_removed: usize,
    /// Files added.
    pub files_added: usize,
    /// Bytes removed.
    pub bytes_removed: u64,
    /// Bytes added.
    pub bytes_added: u64,
    /// Partitions with at least one rewritten bin.
    pub partitions_optimized: usize,
    /// Live files in the selected partitions when planning.
    pub considered_files: usize,
    /// Bins dropped because a concurrent commit removed one of their files.
    pub bins_dropped: usize,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

/// The partition of a file.
pub fn partition_key(add: FileRef<'_>) -> PartitionKey {
    let mut k: Vec<(String, Option<String>)> = add
        .partition_values()
        .iter()
        .map(|(c, v)| (c.to_string(), v.map(str::to_string)))
        .collect();
    k.sort();
    k
}

/// Binds a partition predicate; refuses one that reads data columns (OPTIMIZE selects
/// whole partitions).
fn partition_predicate(snapshot: &Snapshot, expr: &Expr) -> Result<Predicate> {
    let pred = snapshot.bind(expr)?;
    if !pred.only_partition_columns() {
        return Err(MaintenanceError::Refused(format!(
            "the OPTIMIZE filter `{expr}` must only use partition columns ({})",
            snapshot.partition_columns().join(", ")
        )));
    }
    Ok(pred)
}

/// Plans an OPTIMIZE run (see the module docs).
///
/// # Errors
/// [`MaintenanceError::Refused`] for a filter over data columns or a Z-order column that is
/// not a data column of the table; expression errors for a bad filter.
pub fn plan(snapshot: &Snapshot, options: &OptimizeOptions) -> Result<Plan> {
    let target = options
        .target_size
        .or_else(|| snapshot.properties().target_file_size())
        .unwrap_or(DEFAULT_OPTIMIZE_TARGET)
        .max(1);
    let clustering = clustering_plan(snapshot, options)?;
    if let Some(columns) = &clustering {
        return Ok(cluster_bins(snapshot, columns.clone(), target));
    }
    for c in &options.zorder_by {
        let Some(field) = snapshot.schema().field(c) else {
            return Err(MaintenanceError::Refused(format!(
                "Z-order column `{c}` is not in the table schema"
            )));
        };
        if snapshot
            .partition_columns()
            .iter()
            .any(|p| p.eq_ignore_ascii_case(&field.name))
        {
            return Err(MaintenanceError::Refused(format!(
                "Z-order column `{c}` is a partition column: files never mix its values"
            )));
        }
    }
    let filter = options
        .partition_filter
        .as_ref()
        .map(|f| partition_predicate(snapshot, f))
        .transpose()?;
    let mut partitions: BTreeMap<PartitionKey, Vec<FileRef<'_>>> = BTreeMap::new();
    let mut considered = 0;
    // The filter reads partition columns only: their values decide, no statistics are
    // parsed.
    let selected = filter.as_ref().map(FileFilter::new);
    for add in snapshot.files() {
        if selected.as_ref().is_some_and(|f| !f.may_match(add)) {
            continue;
        }
        let key = partition_key(add);
        if options
            .only_partitions
            .as_ref()
            .is_some_and(|only| !only.contains(&key))
        {
            continue;
        }
        considered += 1;
        partitions.entry(key).or_default().push(add);
    }
    let mut bins = Vec::new();
    for (partition, mut files) in partitions {
        if !options.zorder_by.is_empty() {
            files.sort_by(|a, b| a.path().cmp(b.path()));
            bins.push(Bin {
                partition,
                files: files.into_iter().map(|f| f.to_add()).collect(),
            });
            continue;
        }
        let size = |a: &FileRef<'_>| u64::try_from(a.size()).unwrap_or(0);
        let mut candidates: Vec<FileRef<'_>> = files
            .into_iter()
            .filter(|a| size(a) < target || a.deletion_vector().is_some())
            .collect();
        candidates.sort_by(|a, b| size(a).cmp(&size(b)).then(a.path().cmp(b.path())));
        let mut current: Vec<FileRef<'_>> = Vec::new();
        let mut current_bytes = 0u64;
        let close = |current: &mut Vec<FileRef<'_>>, bins: &mut Vec<Bin>| {
            let worth = current.len() > 1 || current.iter().any(|a| a.deletion_vector().is_some());
            if worth {
                bins.push(Bin {
                    partition: partition.clone(),
                    files: current.iter().map(|a| a.to_add()).collect(),
                });
            }
            current.clear();
        };
        for add in candidates {
            if !current.is_empty() && current_bytes + size(&add) > target {
                close(&mut current, &mut bins);
                current_bytes = 0;
            }
            current_bytes += size(&add);
            current.push(add);
        }
        close(&mut current, &mut bins);
    }
    Ok(Plan {
        bins,
        clustering: None,
        target_size: target,
        considered_files: considered,
    })
}

/// The clustering columns OPTIMIZE clusters by: those of a clustered table with clustering
/// columns, unless the run is auto-compaction (`only_partitions`), which stays bin-packing.
/// `None` for other tables and for a clustered table clustered by nothing.
///
/// # Errors
/// [`MaintenanceError::Refused`] for an explicit Z-order or partition filter on a clustered
/// table (Delta Spark refuses both: the clustering columns decide); an unreadable
/// clustering domain.
fn clustering_plan(snapshot: &Snapshot, options: &OptimizeOptions) -> Result<Option<Vec<String>>> {
    let paths = alluvium_txlog::clustering::clustering_columns(snapshot.protocol(), |d| {
        snapshot.state().domains().get(d)
    })?;
    let Some(paths) = paths else {
        return Ok(None);
    };
    if options.only_partitions.is_some() {
        return Ok(None);
    }
    if !options.zorder_by.is_empty() {
        return Err(MaintenanceError::Refused(
            "a clustered table is clustered by its clustering columns: Z-order is not allowed (change the clustering columns with cluster_by instead)".into(),
        ));
    }
    if options.partition_filter.is_some() {
        return Err(MaintenanceError::Refused(
            "a clustered table has no partitions to filter".into(),
        ));
    }
    if paths.is_empty() {
        return Ok(None);
    }
    let names = alluvium_txlog::clustering::logical_names(
        snapshot.schema(),
        snapshot.column_mapping(),
        &paths,
    )?;
    Ok(Some(names))
}

/// Whether `add` was clustered by `columns` by this clustering implementation: marked with
/// its provider and, when it carries the Z-cube tags, by the same columns.
fn clustered_by(add: FileRef<'_>, columns: &[String]) -> Option<bool> {
    use alluvium_txlog::clustering::{PROVIDER, ZCUBE_ZORDER_BY_TAG};
    let provider = add.clustering_provider()?;
    if provider != PROVIDER {
        return Some(false);
    }
    let by = add
        .tags()
        .as_ref()
        .and_then(|t| t.get(ZCUBE_ZORDER_BY_TAG).flatten());
    Some(match by {
        Some(json) => serde_json::from_str::<Vec<String>>(json).is_ok_and(|c| {
            c.len() == columns.len()
                && c.iter()
                    .zip(columns)
                    .all(|(a, b)| a.eq_ignore_ascii_case(b))
        }),
        None => true,
    })
}

/// Incremental clustering (PROTOCOL.md "Writer Requirements for Clustered Table", Delta
/// Spark's incremental clustering): one bin of every file not yet clustered (no
/// `clusteringProvider`); clustered files are left alone, those clustered by other columns
/// or another implementation included (the protocol lets an implementation recluster only
/// its own or unclustered files). Nothing to do when every file is clustered.
fn cluster_bins(snapshot: &Snapshot, columns: Vec<String>, target: u64) -> Plan {
    let mut files: Vec<Add> = snapshot
        .files()
        .filter(|a| clustered_by(*a, &columns).is_none())
        .map(|f| f.to_add())
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let bins = if files.is_empty() {
        Vec::new()
    } else {
        vec![Bin {
            partition: Vec::new(),
            files,
        }]
    };
    Plan {
        bins,
        clustering: Some(columns),
        target_size: target,
        considered_files: snapshot.num_files(),
    }
}

/// Marks the files a clustering run wrote (PROTOCOL.md "Writer Requirements for Clustered
/// Table": `clusteringProvider` set on clustered files) with Delta Spark's Z-cube tags: the
/// run's id and the columns clustered by.
fn mark_clustered(adds: Vec<Add>, columns: &[String], zcube: &str) -> Vec<Add> {
    use alluvium_txlog::clustering::{PROVIDER, ZCUBE_ID_TAG, ZCUBE_ZORDER_BY_TAG};
    adds.into_iter()
        .map(|mut a| {
            a.clustering_provider = Some(PROVIDER.into());
            let mut tags = a.tags.take().unwrap_or_default();
            tags.insert(ZCUBE_ID_TAG, Some(zcube.to_string()));
            tags.insert(ZCUBE_ZORDER_BY_TAG, Some(json!(columns).to_string()));
            a.tags = Some(tags);
            a
        })
        .collect()
}

/// Splits bins into commit groups of at most `budget` input bytes (a bin larger than the
/// budget is a group of its own).
fn commit_groups(bins: Vec<Bin>, budget: u64) -> Vec<Vec<Bin>> {
    let mut groups = Vec::new();
    let mut current = Vec::new();
    let mut bytes = 0u64;
    for bin in bins {
        let b = bin.bytes();
        if !current.is_empty() && bytes + b > budget {
            groups.push(std::mem::take(&mut current));
            bytes = 0;
        }
        bytes += b;
        current.push(bin);
    }
    if !current.is_empty() {
        groups.push(current);
    }
    groups
}

/// Whether every input of `bin` is still live in `snapshot`.
fn inputs_live(snapshot: &Snapshot, bin: &Bin) -> bool {
    bin.files.iter().all(|f| {
        snapshot
            .state()
            .file(&f.path, f.deletion_vector.as_deref())
            .is_some()
    })
}

/// Runs OPTIMIZE on `snapshot`'s table (see the module docs).
///
/// # Errors
/// Unsupported writer features (before anything is written); planning errors; a rewrite
/// failure (after deleting what the failed group wrote; groups
/// committed before stay); a commit failure other than a conflict on input files
/// (`CommitOutcomeUnknown` keeps the group's files: the commit may have landed).
pub fn optimize(
    snapshot: &Snapshot,
    options: &OptimizeOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<OptimizeReport> {
    let started = Instant::now();
    // Before any file is rewritten: a refused commit would leave the rewrites behind.
    snapshot.check_writable()?;
    options.commit_fields.check()?;
    if let Some(codec) = &options.compression
        && alluvium_datafile::sink::parse_codec(codec).is_none()
    {
        return Err(MaintenanceError::Rewrite(
            alluvium_datafile::DataFileError::InvalidArgument(format!(
                "compression {codec:?} is not a codec alluvium writes"
            )),
        ));
    }
    let plan = plan(snapshot, options)?;
    let mut report = OptimizeReport {
        considered_files: plan.considered_files,
        ..Default::default()
    };
    progress(Progress::Planned {
        bins: plan.bins.len(),
        bytes: plan.bins.iter().map(Bin::bytes).sum(),
    });
    let mut partitions = BTreeSet::new();
    let mut base = snapshot.clone();
    let target = plan.target_size;
    let clustering = plan.clustering;
    let interrupted = || {
        options
            .interrupt
            .as_ref()
            .is_some_and(|i| i.load(Ordering::Relaxed))
    };
    for group in commit_groups(plan.bins, options.max_commit_bytes) {
        if interrupted() {
            return Err(MaintenanceError::Interrupted {
                committed: report.versions,
            });
        }
        // `base` moves on after every commit and may include concurrent commits: a bin
        // whose inputs one of them removed must not be rewritten (its rows would come back).
        let (group, gone): (Vec<Bin>, Vec<Bin>) =
            group.into_iter().partition(|bin| inputs_live(&base, bin));
        report.bins_dropped += gone.len();
        let mut layout = rewrite_layout(&base);
        if let Some(codec) = &options.compression {
            layout.configuration.insert(
                alluvium_txlog::properties::PARQUET_COMPRESSION_CODEC.into(),
                codec.clone(),
            );
        }
        let zorder_by = clustering.as_ref().unwrap_or(&options.zorder_by);
        // A bin not started before the interrupt is not rewritten (an empty output); the
        // group is then dropped whole below.
        let rewritten: Vec<std::result::Result<Vec<Add>, _>> = group
            .par_iter()
            .map(|bin| {
                if interrupted() {
                    return Ok(Vec::new());
                }
                let out = rewrite_files(&layout, &rewrite_inputs(&bin.files), zorder_by, target);
                progress(Progress::BinDone { bytes: bin.bytes() });
                match &clustering {
                    Some(columns) => out.map(|adds| {
                        mark_clustered(
                            adds,
                            columns,
                            &alluvium_storage::ids::new_uuid().to_string(),
                        )
                    }),
                    None => out,
                }
            })
            .collect();
        let mut outputs: Vec<(Bin, Vec<Add>)> = Vec::with_capacity(group.len());
        let mut failure = None;
        for (bin, out) in group.into_iter().zip(rewritten) {
            match out {
                Ok(adds) => outputs.push((bin, adds)),
                Err(e) => failure = Some(e),
            }
        }
        if let Some(e) = failure {
            for (_, adds) in &outputs {
                discard(base.store_ref(), adds);
            }
            return Err(MaintenanceError::Rewrite(e));
        }
        if interrupted() {
            for (_, adds) in &outputs {
                discard(base.store_ref(), adds);
            }
            return Err(MaintenanceError::Interrupted {
                committed: report.versions,
            });
        }
        loop {
            if outputs.is_empty() {
                break;
            }
            // The removes' deletion timestamp, on the store's clock.
            let now_ms = base.store().now_ms();
            let txn = optimize_transaction(
                &base,
                &outputs,
                options,
                clustering.as_deref(),
                target,
                now_ms,
            );
            match txn.commit() {
                Ok(r) => {
                    progress(Progress::Committed { version: r.version });
                    report.versions.push(r.version);
                    for (bin, adds) in &outputs {
                        partitions.insert(bin.partition.clone());
                        report.files_removed += bin.files.len();
                        report.bytes_removed += bin.bytes();
                        report.files_added += adds.len();
                        report.bytes_added += adds
                            .iter()
                            .map(|a| u64::try_from(a.size).unwrap_or(0))
                            .sum::<u64>();
                    }
                    base = base.refresh()?;
                    break;
                }
                Err(MvccError::Conflict {
                    kind: ConflictKind::ConcurrentDeleteRead | ConflictKind::ConcurrentDeleteDelete,
                    ..
                }) => {
                    base = base.refresh()?;
                    let before = outputs.len();
                    let (keep, drop): (Vec<_>, Vec<_>) = outputs
                        .into_iter()
                        .partition(|(bin, _)| inputs_live(&base, bin));
                    for (_, adds) in &drop {
                        discard(base.store_ref(), adds);
                    }
                    report.bins_dropped += drop.len();
                    outputs = keep;
                    if outputs.len() == before {
                        // Nothing to drop, yet it conflicted: give up rather than loop.
                        for (_, adds) in &outputs {
                            discard(base.store_ref(), adds);
                        }
                        return Err(MaintenanceError::Refused(
                            "OPTIMIZE kept conflicting although all its input files are live"
                                .into(),
                        ));
                    }
                }
                Err(e @ MvccError::CommitOutcomeUnknown { .. }) => return Err(e.into()),
                Err(e) => {
                    for (_, adds) in &outputs {
                        discard(base.store_ref(), adds);
                    }
                    return Err(e.into());
                }
            }
        }
    }
    report.partitions_optimized = partitions.len();
    report.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(report)
}

/// What the data-file layer needs to know about `snapshot`'s table.
fn table_layout(snapshot: &Snapshot) -> TableLayout {
    TableLayout::new(
        snapshot.store().clone(),
        snapshot.root().clone(),
        snapshot.schema().clone(),
        &alluvium_txlog::table::TableConfiguration::new(snapshot.protocol(), snapshot.metadata()),
    )
}

/// The layout rewrites read and write with: on a table with row tracking enabled, with
/// the hidden materialised row-id and row-commit-version columns, so every row keeps its
/// stable id and commit version in the new files (PROTOCOL.md "Row Tracking").
fn rewrite_layout(snapshot: &Snapshot) -> TableLayout {
    let layout = table_layout(snapshot);
    let enabled = alluvium_txlog::row_tracking::is_enabled(
        snapshot.protocol(),
        &snapshot.metadata().configuration,
    );
    match enabled.then(|| layout.with_row_tracking()).flatten() {
        Some(tracked) => tracked,
        None => layout,
    }
}

/// The files a bin's rewrite reads: the bin's own, with their deletion vectors (the rewrite
/// drops the rows they delete).
fn rewrite_inputs(files: &[Add]) -> std::borrow::Cow<'_, [Add]> {
    #[cfg(feature = "planted-bugs")]
    if alluvium_mvcc::planted::planted(alluvium_mvcc::planted::Bug::OptimizeDropsDeletionVector) {
        // Planted bug (e): the rewrite reads the files without their deletion vectors, so
        // the rows they deleted come back in the compacted file.
        return std::borrow::Cow::Owned(
            files
                .iter()
                .map(|a| Add {
                    deletion_vector: None,
                    ..a.clone()
                })
                .collect(),
        );
    }
    std::borrow::Cow::Borrowed(files)
}

fn optimize_transaction(
    base: &Snapshot,
    outputs: &[(Bin, Vec<Add>)],
    options: &OptimizeOptions,
    clustering: Option<&[String]>,
    target: u64,
    now_ms: i64,
) -> Transaction {
    let mut txn = Transaction::new(base, "OPTIMIZE");
    txn.set_discard_on_failure(false);
    let mut removed_bytes = 0u64;
    let mut added_bytes = 0u64;
    let mut removed = 0usize;
    let mut added = 0usize;
    let mut partitions = BTreeSet::new();
    for (bin, adds) in outputs {
        partitions.insert(&bin.partition);
        for f in &bin.files {
            txn.read_file(f);
            txn.remove_file(Remove::from_add(f, now_ms, false));
            removed += 1;
            removed_bytes += u64::try_from(f.size).unwrap_or(0);
        }
        for a in adds {
            added += 1;
            added_bytes += u64::try_from(a.size).unwrap_or(0);
            txn.add_file(a.clone());
        }
    }
    let predicate = options
        .partition_filter
        .as_ref()
        .map_or_else(Vec::new, |p| vec![p.to_string()]);
    txn.set_parameter("predicate", json!(predicate).to_string());
    txn.set_parameter("zOrderBy", json!(options.zorder_by).to_string());
    if let Some(columns) = clustering {
        // As Delta Spark records a clustering run.
        txn.set_parameter("clusterBy", json!(columns).to_string());
        txn.set_parameter("isFull", false);
    }
    txn.set_parameter("targetSize", target.to_string());
    txn.set_metric("numRemovedFiles", removed);
    txn.set_metric("numAddedFiles", added);
    txn.set_metric("numRemovedBytes", removed_bytes);
    txn.set_metric("numAddedBytes", added_bytes);
    txn.set_metric("numPartitionsOptimized", partitions.len());
    txn.set_metric("numBins", outputs.len());
    options.commit_fields.apply(&mut txn);
    txn
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(sizes: &[u64]) -> Bin {
        Bin {
            partition: Vec::new(),
            files: sizes
                .iter()
                .enumerate()
                .map(|(i, s)| Add {
                    path: format!("f{i}"),
                    partition_values: Default::default(),
                    size: i64::try_from(*s).unwrap(),
                    modification_time: 0,
                    data_change: true,
                    stats: None,
                    tags: None,
                    deletion_vector: None,
                    base_row_id: None,
                    default_row_commit_version: None,
                    clustering_provider: None,
                })
                .collect(),
        }
    }

    #[test]
    fn commit_groups_respect_the_byte_budget() {
        let groups = commit_groups(vec![bin(&[40]), bin(&[40]), bin(&[40]), bin(&[200])], 100);
        let sizes: Vec<Vec<u64>> = groups
            .iter()
            .map(|g| g.iter().map(Bin::bytes).collect())
            .collect();
        assert_eq!(sizes, vec![vec![40, 40], vec![40], vec![200]]);
    }
}
