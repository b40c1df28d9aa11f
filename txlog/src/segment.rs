//! Log listing and log segments: which files reconstruct a version.

use std::collections::BTreeMap;

use alluvium_storage::ObjectStore;

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
    let listed = store.list_dir_from(Some(&log_dir()), &format!("{from:020}"))?;
    let mut files: Vec<LogFile> = listed.into_iter().filter_map(classify).collect();
    let commits: std::collections::BTreeSet<Version> = files
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .map(|f| f.version)
        .collect();
    let (Some(&lo), Some(&hi)) = (commits.first(), commits.last()) else {
        return Ok(files);
    };
    let missing: Vec<Version> = (lo..hi).filter(|v| !commits.contains(v)).collect();
    if missing.is_empty() || missing.len() as u64 > MAX_GAP_PROBES {
        return Ok(files);
    }
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
        if let Some(best) = best_checkpoint(version, &cands) {
            out.insert(version, best);
        }
    }
    out
}

/// Picks the preferred complete checkpoint among the files of one version: UUID-named
/// (greatest name) over multi-part (most parts) over classic. Empty files never count.
fn best_checkpoint(version: Version, cands: &[&LogFile]) -> Option<CheckpointFiles> {
    let nonempty = |f: &&&LogFile| f.meta.size > 0;
    let uuid = cands
        .iter()
        .filter(nonempty)
        .filter(|f| matches!(f.kind, LogFileKind::Checkpoint(CheckpointKind::Uuid { .. })))
        .max_by(|a, b| a.meta.path.cmp(&b.meta.path));
    if let Some(f) = uuid
        && let LogFileKind::Checkpoint(kind) = &f.kind
    {
        return Some(CheckpointFiles {
            version,
            kind: kind.clone(),
            files: vec![f.meta.clone()],
        });
    }
    let mut multi: BTreeMap<u32, BTreeMap<u32, &LogFile>> = BTreeMap::new();
    for f in cands.iter().filter(nonempty) {
        if let LogFileKind::Checkpoint(CheckpointKind::MultiPart { part, parts }) = f.kind {
            multi.entry(parts).or_default().insert(part, f);
        }
    }
    for (parts, set) in multi.iter().rev() {
        if set.len() == *parts as usize && set.keys().copied().eq(1..=*parts) {
            return Some(CheckpointFiles {
                version,
                kind: CheckpointKind::MultiPart {
                    part: 1,
                    parts: *parts,
                },
                files: set.values().map(|f| f.meta.clone()).collect(),
            });
        }
    }
    cands
        .iter()
        .filter(nonempty)
        .find(|f| matches!(f.kind, LogFileKind::Checkpoint(CheckpointKind::Classic)))
        .map(|f| CheckpointFiles {
            version,
            kind: CheckpointKind::Classic,
            files: vec![f.meta.clone()],
        })
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
        for (v, f) in tail {
            if *v != expected {
                return Err(LogError::NonContiguousLog {
                    after: if expected == 0 {
                        "the start of the log".into()
                    } else {
                        format!("version {}", expected - 1)
                    },
                    expected,
                    found: format!("version {v}"),
                });
            }
            segment_commits.push((*f).clone());
            expected = v + 1;
        }
        if expected <= end {
            if expected == 0 && segment_commits.is_empty() {
                let reason = match earliest_readable_version(files) {
                    Some(e) if e > end => format!("the earliest readable version is {e} (older log files were removed)"),
                    _ => "no checkpoint at or below it and version 0 is missing".to_string(),
                };
                return Err(LogError::VersionNotFound { version: end, reason });
            }
            return Err(LogError::NonContiguousLog {
                after: format!("version {}", expected.saturating_sub(1)),
                expected,
                found: "the end of the log".into(),
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
}
