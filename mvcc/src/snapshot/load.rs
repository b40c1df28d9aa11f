//! Loading a snapshot: hint, listing, segment, checkpoint (with fallback), commits, replay.
//!
//! 1. Read `_last_checkpoint` (a hint) and list the log from its version, or from 0;
//!    meanwhile read the checkpoint the hint names, kept if the listing confirms it.
//! 2. Build the [`LogSegment`] for the target version. If the partial listing cannot build
//!    it (the hint was stale, pointed at a missing checkpoint, or the target is older),
//!    list from 0 and build again.
//! 3. Read the checkpoint. If it is unreadable (corrupt, truncated, deleted meanwhile),
//!    read another complete form of its version if there is one (a classic file beside a
//!    multi-part set), else exclude the version and rebuild the segment: the next older checkpoint, or JSON replay from 0
//!    when the log still has every commit.
//! 4. Read the commits after it in parallel and replay everything in order. A short tail
//!    (the commits after the hinted checkpoint, or the checkpoint's own commit for its
//!    `commitInfo`) is read right after the listing, on its task, while this thread
//!    decodes the checkpoint ([`PreRead`]).
//! 5. Refuse the snapshot if the protocol needs a reader feature alluvium lacks.

use std::sync::Arc;
use std::time::Instant;

use alluvium_storage::{ObjectStore, StoreRef};
use alluvium_txlog::LogError;
use alluvium_txlog::actions::{Action, CommitInfo};
use alluvium_txlog::checkpoint::{
    CheckpointFiles, LastCheckpointHint, read_last_checkpoint, visit_checkpoint,
};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::features::check_read_supported;
use alluvium_txlog::log_compaction::compare_with_commits;
use alluvium_txlog::log_path::{
    CheckpointKind, LogFile, LogFileKind, Version, log_file_name, log_path,
};
use alluvium_txlog::path::TableRoot;
use alluvium_txlog::properties::TableProperties;
use alluvium_txlog::replay::{Replay, TableState};
use alluvium_txlog::schema::StructType;
use alluvium_txlog::segment::{
    LogSegment, ReplayStep, check_compaction, checkpoint_forms, list_log_from, list_log_range,
    probe_commits_from,
};

use super::{Snapshot, SnapshotReport, VersionSpec, timestamps};
use crate::Result;

/// Lists the log from `from` up to version `until` (the whole rest without one), counting
/// the request.
fn list(
    store: &dyn ObjectStore,
    from: Version,
    until: Option<Version>,
    report: &mut SnapshotReport,
) -> Result<Vec<LogFile>> {
    report.list_calls += 1;
    Ok(list_log_range(store, from, until)?)
}

/// True for checkpoint failures that an older checkpoint (or JSON replay) can route around.
fn checkpoint_unusable(e: &LogError) -> bool {
    matches!(
        e,
        LogError::CorruptCheckpoint { .. } | LogError::MalformedCommit { .. }
    ) || e.is_not_found()
}

fn has_table(listing: &[LogFile]) -> bool {
    listing
        .iter()
        .any(|f| matches!(f.kind, LogFileKind::Commit | LogFileKind::Checkpoint(_)))
}

pub(super) fn load(store: StoreRef, spec: VersionSpec) -> Result<Snapshot> {
    let started = Instant::now();
    let requests_before = store.request_counts();
    let mut report = SnapshotReport::default();
    let target = match spec {
        VersionSpec::Latest => None,
        VersionSpec::Version(v) => Some(v),
        VersionSpec::Timestamp(ts) => Some(timestamps::version_at(&store, ts, &mut report)?),
    };
    let mut snapshot = load_version(store.clone(), target, &mut report)?;
    report.load_micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    report.requests = store.request_counts().since(&requests_before);
    snapshot.report = report;
    Ok(snapshot)
}

/// Loads `target` (the latest version when `None`).
pub(super) fn load_version(
    store: StoreRef,
    target: Option<Version>,
    report: &mut SnapshotReport,
) -> Result<Snapshot> {
    let root = TableRoot::new(store.root_uri());
    let hint =
        read_last_checkpoint(store.as_ref()).filter(|h| target.is_none_or(|t| h.version <= t));
    let mut from = hint.as_ref().map_or(0, |h| h.version);
    // A load of a given version lists only up to it. Whether what is missing below it was
    // cleaned up (a later checkpoint stands in for it) or is a gap is told by the later
    // files, so before reporting a failure the log is listed whole, once.
    let mut until = target;
    // The checkpoint the hint names is read while the log is listed: the listing decides
    // whether it is the one to use (the same files, and no newer complete checkpoint), and
    // when it is, the load costs the longer of the two rather than their sum. The listing's
    // task then reads the short tail the replay will need.
    let (listed, mut pre, (heads, mut early)) = match hint.as_ref() {
        Some(h) => {
            let (listed, early) = crate::par::join(
                || {
                    let listed = list_log_range(store.as_ref(), from, until);
                    let pre = match &listed {
                        Ok(l) => PreRead::tail(store.as_ref(), l, target, h.version),
                        Err(_) => PreRead::default(),
                    };
                    (listed, pre)
                },
                || hinted_checkpoint(store.as_ref(), &root, h),
            );
            let (listed, pre) = listed.unwrap_or_else(|| {
                (
                    Err(LogError::Invalid(
                        "the log listing stopped unexpectedly".into(),
                    )),
                    PreRead::default(),
                )
            });
            (listed, pre, early)
        }
        None => (
            list_log_range(store.as_ref(), from, until),
            PreRead::default(),
            (0, None),
        ),
    };
    report.list_calls += 1;
    report.head_calls += heads;
    let mut listing = listed?;
    let mut excluded: Vec<Version> = Vec::new();
    // The error of the last checkpoint skipped: when nothing else can reconstruct the
    // version, it says more than "no checkpoint and version 0 is missing".
    let mut checkpoint_error: Option<LogError> = None;
    loop {
        if !has_table(&listing) && from > 0 {
            from = 0;
            listing = list(store.as_ref(), 0, until, report)?;
        }
        if !has_table(&listing) {
            if until.take().is_some() {
                listing = list(store.as_ref(), from, None, report)?;
                continue;
            }
            return Err(LogError::TableNotFound {
                location: store.root_uri(),
            }
            .into());
        }
        let segment = match LogSegment::build(&listing, target, &excluded) {
            Ok(s) => s,
            Err(_) if from > 0 => {
                from = 0;
                listing = list(store.as_ref(), 0, until, report)?;
                continue;
            }
            Err(_) if until.is_some() => {
                until = None;
                listing = list(store.as_ref(), from, None, report)?;
                continue;
            }
            Err(e) => return Err(checkpoint_error.unwrap_or(e).into()),
        };
        let mut segment = segment;
        if let Some((files, replay)) = early.take()
            && segment
                .checkpoint
                .as_ref()
                .is_some_and(|cp| same_files(cp, &files))
        {
            report.checkpoint_files_read += u32::try_from(files.files.len()).unwrap_or(u32::MAX);
            return replay_segment(store, root, segment, replay, &mut pre, report);
        }
        let mut replay = Replay::new(root.clone());
        if let Some(cp) = segment.checkpoint.clone() {
            match visit_checkpoint(store.as_ref(), &cp, &mut replay) {
                Ok(()) => {
                    report.checkpoint_files_read +=
                        u32::try_from(cp.files.len()).unwrap_or(u32::MAX);
                }
                Err(e) if checkpoint_unusable(&e) => {
                    report
                        .skipped_checkpoints
                        .push(format!("version {}: {e}", cp.version));
                    // Another complete form of the same version (a rerun's classic file
                    // beside a multi-part set) holds the same state; tried in the listing's
                    // order of preference, so every reader settles on the same one.
                    if let Some((other, filled)) =
                        other_form(store.as_ref(), &root, &listing, &cp, report)
                    {
                        report.checkpoint_files_read +=
                            u32::try_from(other.files.len()).unwrap_or(u32::MAX);
                        segment.checkpoint = Some(other);
                        return replay_segment(store, root, segment, filled, &mut pre, report);
                    }
                    excluded.push(cp.version);
                    checkpoint_error = Some(e);
                    if from > 0 {
                        from = 0;
                        listing = list(store.as_ref(), 0, until, report)?;
                    }
                    continue;
                }
                Err(e) => return Err(e.into()),
            }
        }
        return replay_segment(store, root, segment, replay, &mut pre, report);
    }
}

/// A commit file's actions, or why they could not be read.
type CommitRead = std::result::Result<Vec<Action>, LogError>;

/// Most commits [`PreRead::tail`] reads: a tail longer than this is read by the replay, a
/// window at a time, in parallel.
const PRE_READ_MAX: usize = 8;

/// Commit files read ahead of the replay, each taken (moved out) by the replay step that
/// needs it; reads it never takes are dropped with the load. A read that failed is kept
/// as its error, which surfaces only if the replay needs that file, as reading it then
/// would.
#[derive(Default)]
struct PreRead {
    files: Vec<(LogFile, Option<CommitRead>)>,
    /// Reads taken so far that succeeded.
    taken: u32,
}

impl PreRead {
    /// Reads what replaying the segment that `listing` gives for `target` will read, when
    /// that segment starts from checkpoint `hinted` (the one being read meanwhile) and
    /// needs at most [`PRE_READ_MAX`] commits and no compaction: the commits after the
    /// checkpoint, or, with none, the checkpoint version's own commit (its `commitInfo`
    /// and in-commit timestamp). Otherwise reads nothing.
    fn tail(
        store: &dyn ObjectStore,
        listing: &[LogFile],
        target: Option<Version>,
        hinted: Version,
    ) -> PreRead {
        let Ok(segment) = LogSegment::build(listing, target, &[]) else {
            return PreRead::default();
        };
        if segment.checkpoint.as_ref().map(|c| c.version) != Some(hinted)
            || !segment.compactions.is_empty()
            || segment.commits.len() > PRE_READ_MAX
        {
            return PreRead::default();
        }
        let files: Vec<&LogFile> = match (segment.commits.is_empty(), &segment.end_commit) {
            (true, Some(end)) => vec![end],
            _ => segment.commits.iter().collect(),
        };
        let read = read_commits(store, &files);
        PreRead {
            files: files
                .into_iter()
                .cloned()
                .zip(read.into_iter().map(Some))
                .collect(),
            taken: 0,
        }
    }

    /// The read of `file`, if it was read ahead and not taken yet.
    fn take(&mut self, file: &LogFile) -> Option<CommitRead> {
        let read = self
            .files
            .iter_mut()
            .find(|(f, _)| f.version == file.version && f.meta.path == file.meta.path)
            .and_then(|(_, read)| read.take());
        self.taken += u32::from(matches!(read, Some(Ok(_))));
        read
    }

    /// Reads `files` in order: those read ahead from here, the others from `store`.
    fn read(&mut self, store: &dyn ObjectStore, files: &[&LogFile]) -> Vec<CommitRead> {
        // Nothing was read ahead (no hint, a long tail, another checkpoint): every window
        // of a long replay reads as it did before.
        if self.files.is_empty() {
            return read_commits(store, files);
        }
        let mut ahead: Vec<Option<CommitRead>> = files.iter().map(|f| self.take(f)).collect();
        let missing: Vec<&LogFile> = files
            .iter()
            .zip(&ahead)
            .filter(|(_, a)| a.is_none())
            .map(|(f, _)| *f)
            .collect();
        let mut fetched = read_commits(store, &missing).into_iter();
        files
            .iter()
            .zip(ahead.iter_mut())
            .map(|(f, a)| {
                a.take().or_else(|| fetched.next()).unwrap_or_else(|| {
                    Err(LogError::Invalid(format!(
                        "{} was planned but not read",
                        f.meta.path
                    )))
                })
            })
            .collect()
    }
}

/// Most parts a hinted multi-part checkpoint is looked up with before the listing.
const MAX_HINTED_PARTS: u32 = 10_000;

/// The checkpoint `_last_checkpoint` names, found with a HEAD per file (the classic file,
/// or every part of a multi-part one) and read whole, with the number of HEADs made; no
/// checkpoint when the hint names a V2 checkpoint (its file name is not derivable) or more
/// than [`MAX_HINTED_PARTS`] parts, a file is absent or empty, or the read fails: the load
/// then reads what the listing picks, and reports its failures, as it would have without
/// the hint.
fn hinted_checkpoint(
    store: &dyn ObjectStore,
    root: &TableRoot,
    hint: &LastCheckpointHint,
) -> (u32, Option<(CheckpointFiles, Replay)>) {
    // The hint is untrusted input: a part count beyond any real checkpoint's is not
    // enumerated (the listing finds such a checkpoint anyway).
    let (kind, parts) = match (hint.v2_checkpoint.as_ref(), hint.parts) {
        (None, None) => (CheckpointKind::Classic, 1),
        (None, Some(parts)) if (1..=MAX_HINTED_PARTS).contains(&parts) => {
            (CheckpointKind::MultiPart { part: 1, parts }, parts)
        }
        _ => return (0, None),
    };
    let mut heads = 0u32;
    let mut files = Vec::new();
    for part in 1..=parts {
        heads += 1;
        let k = match kind {
            CheckpointKind::MultiPart { .. } => CheckpointKind::MultiPart { part, parts },
            _ => CheckpointKind::Classic,
        };
        let path = log_path(&log_file_name(hint.version, &LogFileKind::Checkpoint(k)));
        match store.head(&path) {
            Ok(meta) if meta.size > 0 => files.push(meta),
            _ => return (heads, None),
        }
    }
    let checkpoint = CheckpointFiles {
        version: hint.version,
        kind,
        files,
    };
    let mut replay = Replay::new(root.clone());
    match visit_checkpoint(store, &checkpoint, &mut replay) {
        Ok(()) => (heads, Some((checkpoint, replay))),
        Err(_) => (heads, None),
    }
}

/// Whether two descriptions of a checkpoint name the same files with the same sizes
/// (modification times are left out: a listing and a HEAD may report them at different
/// precisions).
fn same_files(a: &CheckpointFiles, b: &CheckpointFiles) -> bool {
    a.version == b.version
        && a.kind == b.kind
        && a.files.len() == b.files.len()
        && a.files
            .iter()
            .zip(&b.files)
            .all(|(x, y)| x.path == y.path && x.size == y.size)
}

/// The first complete checkpoint form of `failed`'s version, other than `failed`, that
/// reads, with the replay it filled; the forms that do not read are noted in `report`.
fn other_form(
    store: &dyn ObjectStore,
    root: &TableRoot,
    listing: &[LogFile],
    failed: &CheckpointFiles,
    report: &mut SnapshotReport,
) -> Option<(CheckpointFiles, Replay)> {
    for other in checkpoint_forms(listing, failed.version) {
        if other.files == failed.files {
            continue;
        }
        let mut replay = Replay::new(root.clone());
        match visit_checkpoint(store, &other, &mut replay) {
            Ok(()) => return Some((other, replay)),
            Err(e) => report
                .skipped_checkpoints
                .push(format!("version {}: {e}", other.version)),
        }
    }
    None
}

fn read_commit(
    store: &dyn ObjectStore,
    file: &LogFile,
) -> std::result::Result<Vec<Action>, LogError> {
    let bytes = store.get(&file.meta.path)?;
    decode_commit(file.meta.path.as_str(), &bytes)
}

/// Reads and decodes `files` in parallel, results in order: the store's concurrent batch
/// read where it has one (object stores: many requests in flight, then decoding on rayon),
/// otherwise a read and decode per file on rayon.
fn read_commits(
    store: &dyn ObjectStore,
    files: &[&LogFile],
) -> Vec<std::result::Result<Vec<Action>, LogError>> {
    if !store.fetches_concurrently() {
        return crate::par::map(files, |f| read_commit(store, f));
    }
    let paths: Vec<_> = files.iter().map(|f| f.meta.path.clone()).collect();
    let fetched: Vec<_> = files.iter().zip(store.get_many(&paths)).collect();
    crate::par::map_owned(fetched, |(f, bytes)| {
        decode_commit(f.meta.path.as_str(), &bytes?)
    })
}

fn step_name(step: &ReplayStep) -> &str {
    match step {
        ReplayStep::Commit(f) | ReplayStep::Compaction { file: f, .. } => f.meta.path.as_str(),
    }
}

/// Commits read in parallel at a time during replay.
const COMMIT_WINDOW: usize = 1024;

fn replay_segment(
    store: StoreRef,
    root: TableRoot,
    segment: LogSegment,
    mut replay: Replay,
    pre: &mut PreRead,
    report: &mut SnapshotReport,
) -> Result<Snapshot> {
    // Commits (or log compactions standing in for runs of them) are read in parallel a
    // window at a time and applied in order, so a long JSON tail never sits in memory whole.
    let end = segment.end_version;
    let mut end_commit_info: Option<CommitInfo> = None;
    let mut end_read = false;
    let plan = segment.replay_plan();
    for window in plan.chunks(COMMIT_WINDOW) {
        // A compaction is read with the commits it covers (all listed, or the plan would
        // not use it): a compaction cut at a line boundary parses and looks whole, and only
        // its commits show what it lost (`log_compaction`).
        let mut files: Vec<&LogFile> = Vec::new();
        for step in window {
            match step {
                ReplayStep::Commit(f) => files.push(f),
                ReplayStep::Compaction { file, covers } => {
                    files.push(file);
                    files.extend(covers.iter());
                }
            }
        }
        let mut read = pre.read(store.as_ref(), &files).into_iter();
        let mut next = |f: &LogFile| {
            read.next().unwrap_or_else(|| {
                Err(LogError::Invalid(format!(
                    "{} was planned but not read",
                    f.meta.path
                )))
            })
        };
        for step in window {
            match step {
                ReplayStep::Commit(file) => {
                    let actions = next(file)?;
                    report.commits_read += 1;
                    if file.version == end {
                        end_read = true;
                        end_commit_info = find_commit_info(&actions);
                    }
                    replay.apply_all(actions);
                }
                ReplayStep::Compaction { file, covers } => {
                    // A compaction that parses but is not whole is as unusable as one that
                    // does not parse.
                    let compacted = next(file).and_then(|a| check_compaction(file, &a).map(|()| a));
                    let commits: Vec<std::result::Result<Vec<Action>, LogError>> =
                        covers.iter().map(&mut next).collect();
                    let compacted = match compacted {
                        Ok(actions) => {
                            let readable: Option<Vec<&[Action]>> = commits
                                .iter()
                                .map(|c| c.as_ref().ok().map(Vec::as_slice))
                                .collect();
                            match readable {
                                Some(c) => compare_with_commits(&root, &actions, c)
                                    .map(|()| actions)
                                    .map_err(|why| LogError::IncompleteCompaction {
                                        path: file.meta.path.to_string(),
                                        reason: format!("it disagrees with its commits: {why}"),
                                    }),
                                // A commit it covers is unreadable: the compaction, whole as
                                // far as it alone can tell, is what is left.
                                None => Ok(actions),
                            }
                        }
                        Err(e) => Err(e),
                    };
                    match compacted {
                        Ok(actions) => {
                            report.compactions_read += 1;
                            // First action per key wins within a compaction, as in a reverse
                            // (newest-first) replay: writers list the newest action of a key
                            // first when they keep more than one (the kernel golden tables
                            // do), and a fully reconciled file has one per key, where order
                            // does not matter. Applied forward, that means last to first.
                            replay.apply_all(actions.into_iter().rev());
                        }
                        // A compaction is only a shortcut: when it cannot be used, the
                        // commits it covers still can.
                        Err(e) => {
                            report
                                .skipped_compactions
                                .push(format!("{}: {e}", step_name(step)));
                            for (file, actions) in covers.iter().zip(commits) {
                                let actions = actions?;
                                report.commits_read += 1;
                                if file.version == end {
                                    end_read = true;
                                    end_commit_info = find_commit_info(&actions);
                                }
                                replay.apply_all(actions);
                            }
                        }
                    }
                }
            }
        }
    }
    let state = replay.finish(end)?;
    // The commit file of the end version was not replayed (a checkpoint or a compaction
    // covers it); read it for the version's commitInfo and in-commit timestamp.
    if !end_read
        && let Some(f) = segment.end_commit.as_ref()
        && let Ok(actions) = pre
            .take(f)
            .unwrap_or_else(|| read_commit(store.as_ref(), f))
    {
        report.commits_read += 1;
        end_commit_info = find_commit_info(&actions);
    }
    report.commits_read_ahead += pre.taken;
    let file_time = segment
        .end_commit
        .as_ref()
        .map(|f| f.meta.last_modified_ms)
        .or_else(|| {
            segment
                .checkpoint
                .as_ref()
                .and_then(|c| c.files.first())
                .map(|m| m.last_modified_ms)
        })
        .unwrap_or(0);
    finish_snapshot(
        store,
        root,
        state,
        end_commit_info,
        file_time,
        segment.checkpoint.as_ref().map(|c| c.version),
    )
}

/// Wraps a replayed state as a snapshot: refuses unsupported reader features and column
/// types, and works out the version's timestamp.
pub(super) fn finish_snapshot(
    store: StoreRef,
    root: TableRoot,
    state: TableState,
    end_commit_info: Option<CommitInfo>,
    file_time: i64,
    checkpoint_version: Option<Version>,
) -> Result<Snapshot> {
    check_read_supported(state.protocol())?;
    let schema = StructType::from_json(&state.metadata().schema_string)?;
    // Check every column type is readable now, so unsupported types fail the load rather
    // than a later scan.
    alluvium_txlog::schema::arrow_schema(&schema)?;
    let column_mapping = ColumnMappingMode::of(state.protocol(), state.metadata());
    let props = TableProperties(&state.metadata().configuration);
    let ict = timestamps::ict_applies(&props, state.version())
        .then(|| {
            end_commit_info
                .as_ref()
                .and_then(CommitInfo::in_commit_timestamp)
        })
        .flatten();
    Ok(Snapshot {
        store,
        root,
        checkpoint_version,
        state: Arc::new(state),
        schema: Arc::new(schema),
        column_mapping,
        timestamp_ms: ict.unwrap_or(file_time),
        commit_info: end_commit_info.map(Arc::new),
        report: SnapshotReport::default(),
    })
}

/// The snapshot of the latest version, built from `base` by applying only the commits
/// after it (SPEC.md §8): one listing from `base.version() + 1`, then those commits. No
/// checkpoint is read again.
/// Most new commits a refresh looks up one by one before it lists instead.
const REFRESH_PROBES: usize = 64;

/// The commits from `from` on, contiguous: listed from `from` where listing from a key is
/// cheap, otherwise probed one HEAD per version (a local directory read costs in proportion
/// to the whole log, a probe in proportion to the new commits).
fn new_commits(
    store: &dyn ObjectStore,
    from: Version,
    report: &mut SnapshotReport,
) -> Result<Vec<LogFile>> {
    if !store.lists_from_key_cheaply() {
        let (found, heads) = probe_commits_from(store, from, REFRESH_PROBES)?;
        report.head_calls += heads;
        if let Some(found) = found {
            return Ok(found);
        }
    }
    report.list_calls += 1;
    let listing = list_log_from(store, from)?;
    let mut tail: Vec<LogFile> = Vec::new();
    for f in listing
        .into_iter()
        .filter(|f| f.kind == LogFileKind::Commit)
    {
        let expected = tail.last().map_or(from, |l| l.version + 1);
        if f.version != expected {
            return Err(LogError::NonContiguousLog {
                after: Some(expected - 1),
                expected,
                found: Some(f.version),
            }
            .into());
        }
        tail.push(f);
    }
    Ok(tail)
}

pub(super) fn refresh(base: &Snapshot) -> Result<Snapshot> {
    refresh_to(base, None)
}

/// [`refresh`], stopping at `bound` when given: the snapshot of exactly that version.
pub(super) fn refresh_to(base: &Snapshot, bound: Option<Version>) -> Result<Snapshot> {
    if let Some(b) = bound
        && b <= base.version()
    {
        if b == base.version() {
            return Ok(base.clone());
        }
        return Err(LogError::VersionNotFound {
            version: b,
            reason: format!(
                "a snapshot only advances: this one is of version {}",
                base.version()
            ),
        }
        .into());
    }
    let started = Instant::now();
    let store = base.store.clone();
    let requests_before = store.request_counts();
    let mut report = SnapshotReport::default();
    let mut tail = new_commits(store.as_ref(), base.version() + 1, &mut report)?;
    if let Some(b) = bound {
        tail.retain(|f| f.version <= b);
        let reached = tail.last().map_or(base.version(), |l| l.version);
        if reached != b {
            return Err(LogError::VersionNotFound {
                version: b,
                reason: format!("the latest version is {reached}"),
            }
            .into());
        }
    }
    let Some(last) = tail.last().cloned() else {
        return Ok(base.clone());
    };
    let files: Vec<&LogFile> = tail.iter().collect();
    let commits: Vec<Vec<Action>> = read_commits(store.as_ref(), &files)
        .into_iter()
        .collect::<std::result::Result<_, _>>()?;
    report.commits_read = u32::try_from(commits.len()).unwrap_or(u32::MAX);
    let end_commit_info = commits.last().and_then(|a| find_commit_info(a));
    let mut replay = Replay::from_state((*base.state).clone());
    for actions in commits {
        replay.apply_all(actions);
    }
    let state = replay.finish(last.version)?;
    let mut snapshot = finish_snapshot(
        store.clone(),
        base.root.clone(),
        state,
        end_commit_info,
        last.meta.last_modified_ms,
        base.checkpoint_version,
    )?;
    report.load_micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    report.requests = store.request_counts().since(&requests_before);
    snapshot.report = report;
    Ok(snapshot)
}

/// The snapshot of `base.version() + 1` whose commit this process has just written as
/// `actions`, built without reading it back: what [`refresh`] would build, `file_time`
/// standing for the commit file's modification time.
pub(super) fn advance(base: &Snapshot, actions: Vec<Action>, file_time: i64) -> Result<Snapshot> {
    let version = base.version() + 1;
    let end_commit_info = find_commit_info(&actions);
    let mut replay = Replay::from_state((*base.state).clone());
    replay.apply_all(actions);
    let state = replay.finish(version)?;
    finish_snapshot(
        base.store.clone(),
        base.root.clone(),
        state,
        end_commit_info,
        file_time,
        base.checkpoint_version,
    )
}

fn find_commit_info(actions: &[Action]) -> Option<CommitInfo> {
    actions.iter().find_map(|a| match a {
        Action::CommitInfo(ci) => Some(ci.clone()),
        _ => None,
    })
}
