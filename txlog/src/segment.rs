//! Log listing and log segments: which files reconstruct a version.

use std::collections::BTreeMap;

use alluvium_storage::ObjectStore;

use crate::actions::Action;
use crate::checkpoint::CheckpointFiles;
use crate::log_path::{CheckpointKind, LogFile, LogFileKind, Version, classify, log_dir};
use crate::{LogError, Result};

/// Most missing commits between listed ones that are looked up one by one.
const MAX_GAP_PROBES: u64 = 64;

/// Lists the log files with version `>= from`, sorted by version then name.
///
/// A listing is not an atomic snapshot of a directory: on a local filesystem `readdir` may
/// return a commit created while it runs and miss one created just before it (storage
/// contract S4). Commits missing between the listed ones are therefore looked up directly;
/// only one that is still absent is a real gap (which segment building then reports).
///
/// # Errors
/// Storage errors.
pub fn list_log_from(store: &dyn ObjectStore, from: Version) -> Result<Vec<LogFile>> {
    list_log_range(store, from, None)
}

/// [`list_log_from`] that stops after version `until` (inclusive): the files a snapshot of
/// version `until` or earlier can use (commits, checkpoints and CRCs of those versions, and
/// the log compactions that start at or before it; a compaction reaching past it is listed
/// and left unused, as in a full listing). On a local filesystem the entries after it are
/// never `stat`ed, so time travel to an early version of a long log costs in proportion to
/// the versions it needs, bar one directory read.
///
/// # Errors
/// Storage errors.
pub fn list_log_range(
    store: &dyn ObjectStore,
    from: Version,
    until: Option<Version>,
) -> Result<Vec<LogFile>> {
    // Every file of version v, and every compaction starting at v, is named
    // `<v as 20 digits>.…`; names below `<until + 1 as 20 digits>` are exactly those with
    // v <= until. At u64::MAX there is no bound to place.
    let end = until
        .and_then(|u| u.checked_add(1))
        .map(|e| format!("{e:020}"));
    let listed = store.list_dir_range(Some(&log_dir()), &format!("{from:020}"), end.as_deref())?;
    let mut files: Vec<LogFile> = listed.into_iter().filter_map(classify).collect();
    let commits: std::collections::BTreeSet<Version> = files
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .map(|f| f.version)
        .collect();
    let (Some(&lo), Some(&hi)) = (commits.first(), commits.last()) else {
        return Ok(files);
    };
    // Counted before any version is enumerated: the span comes from file names, and one
    // named near `u64::MAX` must not make a listing walk (or collect) 2^64 versions.
    let listed_inside = u64::try_from(commits.len()).unwrap_or(u64::MAX);
    let missing_count = (hi - lo).saturating_sub(listed_inside.saturating_sub(1));
    if missing_count == 0 || missing_count > MAX_GAP_PROBES {
        return Ok(files);
    }
    let missing: Vec<Version> = (lo..hi).filter(|v| !commits.contains(v)).collect();
    let mut found = false;
    for v in missing {
        match store.head(&crate::log_path::commit_path(v)) {
            Ok(meta) => {
                files.push(LogFile {
                    version: v,
                    kind: LogFileKind::Commit,
                    meta,
                });
                found = true;
            }
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
    }
    if found {
        files.sort_by(|a, b| a.meta.path.cmp(&b.meta.path));
    }
    Ok(files)
}

/// The commit files from `from` on, when there are at most `limit` of them, found without
/// a listing: a HEAD per expected version, stopping at the first absent one.
///
/// Commits are created in version order (a writer only creates `v + 1` after reading
/// `v`), so the first absent version ends the log. This is how a snapshot refreshes on
/// stores where listing costs in proportion to the directory rather than to the new
/// entries ([`ObjectStore::lists_from_key_cheaply`]): `k` new commits cost `k + 1` HEADs.
///
/// Returns the commits found and the number of HEAD requests made, or `None` (after
/// `limit + 1` requests) when there are more than `limit`: list then.
///
/// # Errors
/// Storage errors other than not-found.
pub fn probe_commits_from(
    store: &dyn ObjectStore,
    from: Version,
    limit: usize,
) -> Result<(Option<Vec<LogFile>>, u32)> {
    let mut found = Vec::new();
    let mut heads = 0u32;
    let mut version = from;
    while found.len() <= limit {
        heads += 1;
        match store.head(&crate::log_path::commit_path(version)) {
            Ok(meta) => found.push(LogFile {
                version,
                kind: LogFileKind::Commit,
                meta,
            }),
            Err(e) if e.is_not_found() => return Ok((Some(found), heads)),
            Err(e) => return Err(e.into()),
        }
        version += 1;
    }
    Ok((None, heads))
}

/// The files that reconstruct one version of the table.
///
/// Invariants (SPEC.md §5):
/// 1. `commits` are exactly the versions `checkpoint.version + 1 ..= end_version` (or
///    `0 ..= end_version` without a checkpoint), ascending, with no gap.
/// 2. `checkpoint`, if any, is complete (every part present and non-empty) and its version
///    is `<= end_version`.
/// 3. `compactions` cover ranges strictly inside `checkpoint.version + 1 ..= end_version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSegment {
    /// The version this segment reconstructs.
    pub end_version: Version,
    /// The checkpoint replay starts from.
    pub checkpoint: Option<CheckpointFiles>,
    /// The commits after the checkpoint.
    pub commits: Vec<LogFile>,
    /// Log compaction files inside the commit range.
    pub compactions: Vec<LogFile>,
    /// The commit file of `end_version` when it was listed (also when `end_version` is the
    /// checkpoint's version): source of the version's timestamp and commitInfo.
    pub end_commit: Option<LogFile>,
}

/// Every complete checkpoint in a listing, by version (best candidate per version).
pub fn complete_checkpoints(files: &[LogFile]) -> BTreeMap<Version, CheckpointFiles> {
    let mut by_version: BTreeMap<Version, Vec<&LogFile>> = BTreeMap::new();
    for f in files {
        if matches!(f.kind, LogFileKind::Checkpoint(_)) {
            by_version.entry(f.version).or_default().push(f);
        }
    }
    let mut out = BTreeMap::new();
    for (version, cands) in by_version {
        if let Some(best) = forms(version, &cands).into_iter().next() {
            out.insert(version, best);
        }
    }
    out
}

/// Every complete checkpoint of `version` in a listing, the preferred first (the one
/// [`complete_checkpoints`] picks), then the others in the same order of preference. A
/// rerun or a killed `checkpoint` leaves several forms of one version; when the preferred
/// one cannot be read, another still holds the version's state.
pub fn checkpoint_forms(files: &[LogFile], version: Version) -> Vec<CheckpointFiles> {
    let cands: Vec<&LogFile> = files
        .iter()
        .filter(|f| f.version == version && matches!(f.kind, LogFileKind::Checkpoint(_)))
        .collect();
    forms(version, &cands)
}

/// The complete checkpoints among the files of one version, in order of preference:
/// UUID-named (greatest name first), multi-part (most parts first), classic. Empty files
/// never count. The order is a function of the names alone, so every reader of one
/// listing picks the same.
fn forms(version: Version, cands: &[&LogFile]) -> Vec<CheckpointFiles> {
    let mut out = Vec::new();
    let nonempty: Vec<&LogFile> = cands.iter().copied().filter(|f| f.meta.size > 0).collect();
    let mut uuids: Vec<&LogFile> = nonempty
        .iter()
        .copied()
        .filter(|f| matches!(f.kind, LogFileKind::Checkpoint(CheckpointKind::Uuid { .. })))
        .collect();
    uuids.sort_by(|a, b| b.meta.path.cmp(&a.meta.path));
    for f in uuids {
        if let LogFileKind::Checkpoint(kind) = &f.kind {
            out.push(CheckpointFiles {
                version,
                kind: kind.clone(),
                files: vec![f.meta.clone()],
            });
        }
    }
    let mut multi: BTreeMap<u32, BTreeMap<u32, &LogFile>> = BTreeMap::new();
    for f in &nonempty {
        if let LogFileKind::Checkpoint(CheckpointKind::MultiPart { part, parts }) = f.kind {
            multi.entry(parts).or_default().insert(part, f);
        }
    }
    for (parts, set) in multi.iter().rev() {
        if set.len() == *parts as usize && set.keys().copied().eq(1..=*parts) {
            out.push(CheckpointFiles {
                version,
                kind: CheckpointKind::MultiPart {
                    part: 1,
                    parts: *parts,
                },
                files: set.values().map(|f| f.meta.clone()).collect(),
            });
        }
    }
    out.extend(
        nonempty
            .iter()
            .find(|f| matches!(f.kind, LogFileKind::Checkpoint(CheckpointKind::Classic)))
            .map(|f| CheckpointFiles {
                version,
                kind: CheckpointKind::Classic,
                files: vec![f.meta.clone()],
            }),
    );
    out
}

impl LogSegment {
    /// Builds the segment for `target` (the latest version when `None`) from a sorted
    /// listing of the log, ignoring checkpoints whose versions are in `exclude` (known to be
    /// unreadable).
    ///
    /// # Errors
    /// * [`LogError::VersionNotFound`] if `target` is beyond the latest version, or cannot be
    ///   reconstructed from the listed files;
    /// * [`LogError::NonContiguousLog`] if a commit between the checkpoint and the end is
    ///   missing.
    pub fn build(
        files: &[LogFile],
        target: Option<Version>,
        exclude: &[Version],
    ) -> Result<LogSegment> {
        let commits: BTreeMap<Version, &LogFile> = files
            .iter()
            .filter(|f| f.kind == LogFileKind::Commit)
            .map(|f| (f.version, f))
            .collect();
        let checkpoints = complete_checkpoints(files);
        let latest_commit = commits.keys().next_back().copied();
        let latest_checkpoint = checkpoints.keys().next_back().copied();
        let latest = match (latest_commit, latest_checkpoint) {
            (Some(a), Some(b)) => a.max(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => {
                return Err(LogError::VersionNotFound {
                    version: target.unwrap_or(0),
                    reason: "the log has no commits or checkpoints".into(),
                });
            }
        };
        let end = match target {
            Some(t) if t > latest => {
                return Err(LogError::VersionNotFound {
                    version: t,
                    reason: format!("the latest version is {latest}"),
                });
            }
            Some(t) => t,
            None => latest,
        };
        let checkpoint = checkpoints
            .range(..=end)
            .rev()
            .find(|(v, _)| !exclude.contains(v))
            .map(|(_, c)| c.clone());
        let first_needed = checkpoint.as_ref().map_or(0, |c| c.version + 1);
        let mut segment_commits = Vec::new();
        let mut expected = first_needed;
        let tail = if first_needed <= end {
            commits.range(first_needed..=end).collect()
        } else {
            Vec::new()
        };
        // A gap below the earliest readable version is the normal result of log cleanup
        // (or of a cleanup interrupted half-way): report the version as gone, naming the
        // earliest one that is not, rather than as a broken log.
        let removed = |end: Version| {
            earliest_readable_version(files)
                .filter(|e| *e > end)
                .map(|e| LogError::VersionNotFound {
                    version: end,
                    reason: format!(
                        "the earliest readable version is {e} (older log files were removed)"
                    ),
                })
        };
        for (v, f) in tail {
            if *v != expected {
                if let Some(e) = removed(end) {
                    return Err(e);
                }
                if let Some(e) = damaged_checkpoint(files, &commits, end) {
                    return Err(e);
                }
                return Err(LogError::NonContiguousLog {
                    after: expected.checked_sub(1),
                    expected,
                    found: Some(*v),
                });
            }
            segment_commits.push((*f).clone());
            expected = v + 1;
        }
        if expected <= end {
            if let Some(e) = removed(end) {
                return Err(e);
            }
            if let Some(e) = damaged_checkpoint(files, &commits, end) {
                return Err(e);
            }
            if expected == 0 && segment_commits.is_empty() {
                return Err(LogError::VersionNotFound {
                    version: end,
                    reason: "no checkpoint at or below it and version 0 is missing".into(),
                });
            }
            return Err(LogError::NonContiguousLog {
                after: Some(expected.saturating_sub(1)),
                expected,
                found: None,
            });
        }
        let compactions = files
            .iter()
            .filter(|f| matches!(f.kind, LogFileKind::Compaction { end: e } if f.version >= first_needed && e <= end))
            .cloned()
            .collect();
        let end_commit = commits.get(&end).map(|f| (*f).clone());
        Ok(LogSegment {
            end_version: end,
            checkpoint,
            commits: segment_commits,
            compactions,
            end_commit,
        })
    }
}

/// When `end` cannot be rebuilt for want of older commits: the checkpoint file that would
/// have stood in for them but is not complete (an empty file, a multi-part set with a part
/// missing or empty), as an error naming it and saying to restore it (nothing else holds
/// the state it stands for). A checkpoint stands in when its version is at
/// or above the one before the oldest of the contiguous commits ending at `end`; the
/// newest such is named. `None` when there is none (the gap itself is then the error).
fn damaged_checkpoint(
    files: &[LogFile],
    commits: &BTreeMap<Version, &LogFile>,
    end: Version,
) -> Option<LogError> {
    // The oldest version of the run of listed commits that ends at `end` (`end + 1` when
    // `end` itself is not listed).
    let mut oldest = end.checked_add(1)?;
    while oldest > 0 && commits.contains_key(&(oldest - 1)) {
        oldest -= 1;
    }
    let usable_from = oldest.saturating_sub(1);
    // Complete checkpoints were candidates already (one excluded as unreadable has its own
    // error, which the loader reports).
    let complete = complete_checkpoints(files);
    let newest = files
        .iter()
        .filter(|f| matches!(f.kind, LogFileKind::Checkpoint(_)))
        .filter(|f| f.version >= usable_from && f.version <= end)
        .filter(|f| !complete.contains_key(&f.version))
        .map(|f| f.version)
        .max()?;
    let parts: Vec<&LogFile> = files
        .iter()
        .filter(|f| f.version == newest && matches!(f.kind, LogFileKind::Checkpoint(_)))
        .collect();
    let first = parts.first()?;
    let (path, what, fix) = match parts.iter().find(|f| f.meta.size == 0) {
        Some(empty) => (
            empty.meta.path.to_string(),
            "the file is empty (0 bytes)",
            "restore that file",
        ),
        None => (
            first.meta.path.to_string(),
            "its set of parts is incomplete (a part is missing)",
            "restore the missing part",
        ),
    };
    let gone = match oldest {
        0 => String::new(),
        o => format!(" and the commits before version {o} are gone,"),
    };
    Some(LogError::CorruptCheckpoint {
        path,
        reason: format!(
            "{what}{gone} so version {end} cannot be rebuilt without the checkpoint of version {newest}; {fix} from a backup or copy of the table (nothing else holds the state it stands for)"
        ),
    })
}

/// One file to read during replay: a commit, or a log compaction file standing in for the
/// commits it covers (which remain the fallback if it cannot be read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayStep {
    /// One commit.
    Commit(LogFile),
    /// A compaction of `covers` (consecutive commits, in order).
    Compaction {
        /// The `x.y.compacted.json` file.
        file: LogFile,
        /// The commits `x ..= y` it reconciles.
        covers: Vec<LogFile>,
    },
}

impl LogSegment {
    /// The files to read to replay the commits of this segment, in order: the widest log
    /// compaction starting at each next version replaces the commits it covers (PROTOCOL.md
    /// "Log Compaction Files"); a compaction starting inside a chosen one is skipped.
    pub fn replay_plan(&self) -> Vec<ReplayStep> {
        let mut steps = Vec::with_capacity(self.commits.len());
        let mut i = 0;
        while let Some(commit) = self.commits.get(i) {
            let widest = self
                .compactions
                .iter()
                .filter_map(|c| match c.kind {
                    LogFileKind::Compaction { end } if c.version == commit.version => {
                        Some((end, c))
                    }
                    _ => None,
                })
                .max_by_key(|(end, _)| *end);
            let covered = widest.and_then(|(end, c)| {
                let n = usize::try_from(end - commit.version + 1).ok()?;
                let covers = self.commits.get(i..i + n)?;
                // Only a contiguous run of listed commits up to `end` may be replaced.
                (covers.last().map(|l| l.version) == Some(end)).then(|| (c, covers.to_vec()))
            });
            match covered {
                Some((file, covers)) if covers.len() > 1 => {
                    i += covers.len();
                    steps.push(ReplayStep::Compaction {
                        file: file.clone(),
                        covers,
                    });
                }
                _ => {
                    steps.push(ReplayStep::Commit(commit.clone()));
                    i += 1;
                }
            }
        }
        steps
    }
}

/// Checks that the decoded actions of log compaction `file` can stand for the commits it
/// covers, as far as the file alone can tell. Trusting a compaction that is not whole would
/// silently drop the actions it lost, so every check here errs towards falling back:
/// * it must hold at least one action: a compaction exists to carry its commits' actions,
///   so an empty (or blank) file is a writer that died or a file that was cut off;
/// * one that starts at version 0 must hold a `protocol` and a `metaData` action, which
///   commit 0 always has and reconciliation never removes.
///
/// A file cut in the middle of a line does not reach this check: the line fails to parse.
/// A cut exactly at a line boundary after both of those actions leaves a file no different
/// from a whole one, which only a comparison with the commits could reveal (SPEC.md §10).
///
/// # Errors
/// [`LogError::IncompleteCompaction`] naming the file and what it lacks.
pub fn check_compaction(file: &LogFile, actions: &[Action]) -> Result<()> {
    let fail = |reason: &str| {
        Err(LogError::IncompleteCompaction {
            path: file.meta.path.to_string(),
            reason: reason.to_string(),
        })
    };
    if actions.is_empty() {
        return fail("it holds no actions");
    }
    if file.version == 0 {
        if !actions.iter().any(|a| matches!(a, Action::Protocol(_))) {
            return fail("it starts at version 0 but holds no protocol action");
        }
        if !actions.iter().any(|a| matches!(a, Action::Metadata(_))) {
            return fail("it starts at version 0 but holds no metaData action");
        }
    }
    Ok(())
}

/// The earliest version that can be reconstructed from a full listing of the log: 0 if
/// every commit from 0 to the latest is present, else the oldest complete checkpoint from
/// which the commits up to the latest are contiguous.
pub fn earliest_readable_version(files: &[LogFile]) -> Option<Version> {
    let commits: std::collections::BTreeSet<Version> = files
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .map(|f| f.version)
        .collect();
    let checkpoints = complete_checkpoints(files);
    let latest = commits
        .iter()
        .next_back()
        .copied()
        .max(checkpoints.keys().next_back().copied())?;
    // Walk down from the latest version while commits are contiguous.
    let mut lowest_contiguous = latest + 1;
    while lowest_contiguous > 0 && commits.contains(&(lowest_contiguous - 1)) {
        lowest_contiguous -= 1;
    }
    if lowest_contiguous == 0 {
        return Some(0);
    }
    // A checkpoint at c is usable if commits c+1..=latest are all present.
    checkpoints
        .keys()
        .copied()
        .filter(|c| *c + 1 >= lowest_contiguous && *c <= latest)
        .min()
}

#[cfg(test)]
mod tests {
    use alluvium_storage::{ObjectMeta, ObjectStore, StorePath};

    use super::*;
    use crate::log_path::parse_log_file_name;

    fn listing(names: &[(&str, u64)]) -> Vec<LogFile> {
        names
            .iter()
            .map(|(n, size)| {
                let (version, kind) = parse_log_file_name(n).unwrap();
                LogFile {
                    version,
                    kind,
                    meta: ObjectMeta {
                        path: StorePath::parse(format!("_delta_log/{n}")).unwrap(),
                        size: *size,
                        last_modified_ms: 0,
                    },
                }
            })
            .collect()
    }

    fn c(v: u64) -> String {
        format!("{v:020}.json")
    }

    /// (first, last) version of each replay step.
    fn plan(files: &[LogFile], end: Option<u64>) -> Vec<(u64, u64)> {
        LogSegment::build(files, end, &[])
            .unwrap()
            .replay_plan()
            .iter()
            .map(|s| match s {
                ReplayStep::Commit(f) => (f.version, f.version),
                ReplayStep::Compaction { file, covers } => {
                    assert_eq!(covers.first().unwrap().version, file.version);
                    (file.version, covers.last().unwrap().version)
                }
            })
            .collect()
    }

    #[test]
    fn replay_plan_uses_the_widest_compaction_inside_the_segment() {
        let mut names: Vec<(String, u64)> = (0..=12).map(|v| (c(v), 1)).collect();
        for (x, y) in [(1, 3), (1, 4), (3, 6), (7, 9), (10, 14)] {
            names.push((format!("{x:020}.{y:020}.compacted.json"), 1));
        }
        names.push((format!("{:020}.checkpoint.parquet", 7), 10));
        let refs: Vec<(&str, u64)> = names.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        let files = listing(&refs);
        // Widest at 1 wins; (3, 6) starts inside it; (10, 14) reaches past the end.
        assert_eq!(plan(&files, Some(6)), vec![(0, 0), (1, 4), (5, 5), (6, 6)]);
        // Past the checkpoint at 7: (7, 9) starts at the checkpoint, not after it.
        assert_eq!(
            plan(&files, None),
            vec![(8, 8), (9, 9), (10, 10), (11, 11), (12, 12)]
        );
        // A compaction ending exactly at the target is used.
        assert_eq!(plan(&files, Some(3)), vec![(0, 0), (1, 3)]);
    }

    /// A cleanup interrupted after removing version 0 leaves 1..: version 1 is gone (typed
    /// VersionNotFound naming the earliest readable version), not a "broken log".
    #[test]
    fn versions_below_an_interrupted_cleanup_are_not_found() {
        let mut names: Vec<(String, u64)> = (1..=5).map(|v| (c(v), 1)).collect();
        names.push((format!("{:020}.checkpoint.parquet", 3), 10));
        let refs: Vec<(&str, u64)> = names.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        let files = listing(&refs);
        for target in [1, 2] {
            match LogSegment::build(&files, Some(target), &[]) {
                Err(LogError::VersionNotFound { version, reason }) => {
                    assert_eq!(version, target);
                    assert!(
                        reason.contains("earliest readable version is 3"),
                        "{reason}"
                    );
                }
                other => panic!("version {target}: {other:?}"),
            }
        }
        assert_eq!(
            LogSegment::build(&files, Some(3), &[]).unwrap().end_version,
            3
        );
        // Without the checkpoint, the gap at 0 is a broken log at every version.
        let no_checkpoint = listing(&refs[..5]);
        assert!(LogSegment::build(&no_checkpoint, None, &[]).is_err());
    }

    #[test]
    fn picks_newest_complete_checkpoint_and_contiguous_tail() {
        let mut names: Vec<(String, u64)> = (0..=12).map(|v| (c(v), 1)).collect();
        names.push((format!("{:020}.checkpoint.parquet", 5), 10));
        names.push((
            format!("{:020}.checkpoint.0000000001.0000000002.parquet", 10),
            10,
        ));
        let refs: Vec<(&str, u64)> = names.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        let files = listing(&refs);
        // The 2-part checkpoint at 10 is incomplete, so 5 is used.
        let seg = LogSegment::build(&files, None, &[]).unwrap();
        assert_eq!(seg.end_version, 12);
        assert_eq!(seg.checkpoint.as_ref().unwrap().version, 5);
        assert_eq!(seg.commits.first().unwrap().version, 6);
        assert_eq!(seg.commits.len(), 7);
        // Excluding 5 (unreadable) falls back to full replay.
        let seg = LogSegment::build(&files, None, &[5]).unwrap();
        assert!(seg.checkpoint.is_none());
        assert_eq!(seg.commits.len(), 13);
        // Time travel below the checkpoint.
        let seg = LogSegment::build(&files, Some(3), &[]).unwrap();
        assert_eq!(seg.end_version, 3);
        assert!(seg.checkpoint.is_none());
        assert!(matches!(
            LogSegment::build(&files, Some(13), &[]),
            Err(LogError::VersionNotFound { version: 13, .. })
        ));
    }

    /// The gap is reported with numbers (for callers) and the same text as ever (for people):
    /// a missing commit in the middle, at the start and at the end of the log.
    #[test]
    fn a_gap_names_its_versions_as_numbers() {
        let gap = |names: &[&str], end| match LogSegment::build(
            &listing(&names.iter().map(|n| (*n, 1)).collect::<Vec<_>>()),
            end,
            &[],
        ) {
            Err(e @ LogError::NonContiguousLog { .. }) => e,
            other => panic!("expected a gap, got {other:?}"),
        };
        let e = gap(&[&c(0), &c(1), &c(3)], None);
        assert!(matches!(
            e,
            LogError::NonContiguousLog {
                after: Some(1),
                expected: 2,
                found: Some(3)
            }
        ));
        assert_eq!(
            e.to_string(),
            "the log is not contiguous: expected version 2 after version 1, found version 3"
        );
        let e = gap(&[&c(1), &c(2)], None);
        assert!(matches!(
            e,
            LogError::NonContiguousLog {
                after: None,
                expected: 0,
                found: Some(1)
            }
        ));
        assert_eq!(
            e.to_string(),
            "the log is not contiguous: expected version 0 after the start of the log, found version 1"
        );
        let e = LogError::NonContiguousLog {
            after: Some(1),
            expected: 2,
            found: None,
        };
        assert_eq!(
            e.to_string(),
            "the log is not contiguous: expected version 2 after version 1, found the end of the log"
        );
    }

    #[test]
    fn gaps_after_the_checkpoint_are_errors_gaps_before_are_not() {
        let files = listing(&[
            (&c(0), 1),
            (&c(2), 1),
            ("00000000000000000002.checkpoint.parquet", 5),
            (&c(3), 1),
            (&c(5), 1),
        ]);
        assert!(matches!(
            LogSegment::build(&files, None, &[]),
            Err(LogError::NonContiguousLog { expected: 4, .. })
        ));
        let seg = LogSegment::build(&files, Some(3), &[]).unwrap();
        assert_eq!(seg.checkpoint.unwrap().version, 2);
        assert!(LogSegment::build(&files, Some(1), &[]).is_err());
    }

    #[test]
    fn empty_checkpoints_and_missing_start_are_refused() {
        let files = listing(&[("00000000000000000003.checkpoint.parquet", 0), (&c(4), 1)]);
        assert!(LogSegment::build(&files, None, &[]).is_err());
        let files = listing(&[("00000000000000000003.checkpoint.parquet", 9)]);
        let seg = LogSegment::build(&files, None, &[]).unwrap();
        assert_eq!(seg.end_version, 3);
        assert!(seg.commits.is_empty());
        assert!(LogSegment::build(&[], None, &[]).is_err());
    }

    /// Regression: a listing racing with commits can return a commit and miss its
    /// predecessor (seen with 8 processes appending on ext4); the lookup fills the hole, and
    /// only a commit that is really absent is a gap.
    #[test]
    fn listing_holes_are_filled_by_lookups() {
        #[derive(Debug)]
        struct Forgetful(alluvium_storage::InMemoryStore, String);
        impl ObjectStore for Forgetful {
            fn root_uri(&self) -> String {
                self.0.root_uri()
            }
            fn get(&self, p: &StorePath) -> alluvium_storage::Result<bytes::Bytes> {
                self.0.get(p)
            }
            fn get_range(
                &self,
                p: &StorePath,
                r: std::ops::Range<u64>,
            ) -> alluvium_storage::Result<bytes::Bytes> {
                self.0.get_range(p, r)
            }
            fn head(&self, p: &StorePath) -> alluvium_storage::Result<ObjectMeta> {
                self.0.head(p)
            }
            fn put_if_absent(
                &self,
                p: &StorePath,
                d: bytes::Bytes,
            ) -> alluvium_storage::Result<()> {
                self.0.put_if_absent(p, d)
            }
            fn put(&self, p: &StorePath, d: bytes::Bytes) -> alluvium_storage::Result<()> {
                self.0.put(p, d)
            }
            fn list_dir_from(
                &self,
                dir: Option<&StorePath>,
                start: &str,
            ) -> alluvium_storage::Result<Vec<ObjectMeta>> {
                Ok(self
                    .0
                    .list_dir_from(dir, start)?
                    .into_iter()
                    .filter(|m| m.path.as_str() != self.1)
                    .collect())
            }
            fn list_tree(
                &self,
                dir: Option<&StorePath>,
            ) -> alluvium_storage::Result<Vec<ObjectMeta>> {
                self.0.list_tree(dir)
            }
            fn delete(&self, p: &StorePath) -> alluvium_storage::Result<()> {
                self.0.delete(p)
            }
        }
        let store = Forgetful(
            alluvium_storage::InMemoryStore::new(),
            "_delta_log/00000000000000000002.json".into(),
        );
        for v in 0..5 {
            store
                .put(
                    &crate::log_path::commit_path(v),
                    bytes::Bytes::from_static(b"{}"),
                )
                .unwrap();
        }
        let files = list_log_from(&store, 0).unwrap();
        let versions: Vec<u64> = files.iter().map(|f| f.version).collect();
        assert_eq!(versions, vec![0, 1, 2, 3, 4]);
        assert!(LogSegment::build(&files, None, &[]).is_ok());
        // A commit that is really gone stays a gap.
        store.delete(&crate::log_path::commit_path(2)).unwrap();
        let files = list_log_from(&store, 0).unwrap();
        assert!(matches!(
            LogSegment::build(&files, None, &[]),
            Err(LogError::NonContiguousLog { expected: 2, .. })
        ));
    }

    /// A listing up to a version holds every file of that version and before (checkpoints,
    /// CRCs, compactions starting there) and nothing of a later one.
    #[test]
    fn a_listing_up_to_a_version_holds_that_version_and_no_later_one() {
        let store = alluvium_storage::InMemoryStore::new();
        let names = [
            "00000000000000000003.checkpoint.parquet",
            "00000000000000000003.00000000000000000007.compacted.json",
            "00000000000000000005.checkpoint.0000000001.0000000002.parquet",
            "00000000000000000005.checkpoint.0000000002.0000000002.parquet",
            "00000000000000000005.crc",
            "00000000000000000006.checkpoint.parquet",
            "_last_checkpoint",
        ];
        for v in 0..10 {
            store
                .put(
                    &crate::log_path::commit_path(v),
                    bytes::Bytes::from_static(b"{}"),
                )
                .unwrap();
        }
        for n in names {
            store
                .put(
                    &StorePath::parse(format!("_delta_log/{n}")).unwrap(),
                    bytes::Bytes::from_static(b"x"),
                )
                .unwrap();
        }
        let bounded = list_log_range(&store, 2, Some(5)).unwrap();
        let whole = list_log_from(&store, 2).unwrap();
        let expected: Vec<&LogFile> = whole
            .iter()
            .filter(|f| f.meta.path.file_name() < "00000000000000000006")
            .collect();
        assert_eq!(bounded.iter().collect::<Vec<_>>(), expected);
        assert_eq!(
            bounded
                .iter()
                .filter(|f| f.kind == LogFileKind::Commit)
                .count(),
            4
        );
        assert!(bounded.iter().all(|f| f.version <= 5), "{bounded:?}");
        assert!(
            bounded
                .iter()
                .any(|f| f.meta.path.file_name().contains("compacted"))
        );
        assert_eq!(
            bounded.iter().filter(|f| f.version == 5).count(),
            4,
            "commit, both checkpoint parts and the CRC of version 5: {bounded:?}"
        );
        assert_eq!(
            list_log_range(&store, 0, Some(u64::MAX)).unwrap(),
            list_log_from(&store, 0).unwrap()
        );
    }

    /// A commit named with the largest version is one huge gap, not 2^63 versions to walk:
    /// the listing returns at once (it used to enumerate and collect them all).
    #[test]
    fn a_huge_version_gap_is_not_enumerated() {
        let store = alluvium_storage::InMemoryStore::new();
        let max = u64::try_from(i64::MAX).unwrap();
        for v in [0, 1, max] {
            store
                .put(
                    &crate::log_path::commit_path(v),
                    bytes::Bytes::from_static(b"{}"),
                )
                .unwrap();
        }
        let files = list_log_from(&store, 0).unwrap();
        let versions: Vec<u64> = files.iter().map(|f| f.version).collect();
        assert_eq!(versions, [0, 1, max]);
    }

    #[test]
    fn earliest_readable() {
        let files = listing(&[(&c(0), 1), (&c(1), 1), (&c(2), 1)]);
        assert_eq!(earliest_readable_version(&files), Some(0));
        let files = listing(&[
            ("00000000000000000002.checkpoint.parquet", 5),
            (&c(3), 1),
            ("00000000000000000004.checkpoint.parquet", 5),
            (&c(4), 1),
            (&c(5), 1),
        ]);
        assert_eq!(earliest_readable_version(&files), Some(2));
    }

    /// An empty compaction, and one from version 0 without protocol or metaData, is not
    /// whole; one from a later version needs neither.
    #[test]
    fn a_compaction_is_whole_only_with_what_its_range_must_hold() {
        use crate::commit::decode_commit;
        let files = listing(&[
            (
                "00000000000000000000.00000000000000000002.compacted.json",
                1,
            ),
            (
                "00000000000000000003.00000000000000000004.compacted.json",
                1,
            ),
        ]);
        let (from_zero, later) = (&files[0], &files[1]);
        let protocol = r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}"#;
        let metadata = r#"{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{}}}"#;
        let add = r#"{"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}"#;
        let actions = |lines: &[&str]| decode_commit("c", lines.join("\n").as_bytes()).unwrap();
        let whole = |f: &LogFile, lines: &[&str]| check_compaction(f, &actions(lines)).is_ok();
        assert!(!whole(from_zero, &[]));
        assert!(!whole(later, &[]));
        assert!(!whole(from_zero, &[add]));
        assert!(!whole(from_zero, &[add, protocol]));
        assert!(!whole(from_zero, &[add, metadata]));
        assert!(whole(from_zero, &[add, metadata, protocol]));
        assert!(whole(later, &[add]));
        let err = check_compaction(from_zero, &[]).unwrap_err().to_string();
        assert!(err.contains("00000000000000000000.00000000000000000002.compacted.json"));
    }
}
