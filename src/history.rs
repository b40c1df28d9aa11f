//! Commit history (`alluvium history`), with the gaps in the versions shown rather than
//! hidden: a version missing between listed commits, or below the oldest one with no
//! checkpoint standing in for it, is damage a reader of those versions would hit.

use alluvium_storage::ObjectStore;
use alluvium_txlog::actions::{Action, CommitInfo};
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::{LogFileKind, Version};
use alluvium_txlog::segment::{complete_checkpoints, list_log_from};
use rayon::prelude::*;
use std::ops::RangeInclusive;

use crate::{Result, Table};

impl Table {
    /// The `limit` newest commits (all when `None`), newest first, each with its version,
    /// timestamp and `commitInfo` (operation, parameters, metrics, ...).
    ///
    /// # Errors
    /// Storage errors, or a malformed commit file.
    pub fn history(&self, limit: Option<usize>) -> Result<Vec<CommitEntry>> {
        history(self.store().as_ref(), limit)
    }
}

/// One commit of the history.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CommitEntry {
    /// The version.
    pub version: Version,
    /// The commit timestamp: the in-commit timestamp when the commit has one, else the
    /// commit file's modification time made monotonic over the log.
    pub timestamp_ms: i64,
    /// The commit's `commitInfo`, if it has one.
    pub commit_info: Option<CommitInfo>,
    /// The versions missing from the log directly below this one: between the previous
    /// listed commit and this one, or, for the oldest commit, from version 0 when no
    /// complete checkpoint at or above the version before it stands in for them (log
    /// cleanup below a checkpoint is no gap).
    pub missing_below: Option<RangeInclusive<Version>>,
}

/// A listed commit: version, file, monotonic file time, the versions missing below it.
type Listed<'a> = (
    Version,
    &'a alluvium_storage::ObjectMeta,
    i64,
    Option<RangeInclusive<Version>>,
);

/// The `limit` newest commits (all when `None`), newest first, each with the gap in the
/// versions directly below it, if any.
///
/// # Errors
/// Storage errors, or a malformed commit file.
pub(crate) fn history(store: &dyn ObjectStore, limit: Option<usize>) -> Result<Vec<CommitEntry>> {
    let listing = list_log_from(store, 0)?;
    let checkpoints = complete_checkpoints(&listing);
    let mut commits: Vec<Listed<'_>> = Vec::new();
    let mut prev: Option<i64> = None;
    let mut prev_version: Option<Version> = None;
    for f in listing.iter().filter(|f| f.kind == LogFileKind::Commit) {
        // Monotonize file times: a time not after its predecessor's becomes predecessor + 1.
        let mut t = f.meta.last_modified_ms;
        if let Some(p) = prev
            && t <= p
        {
            t = p + 1;
        }
        prev = Some(t);
        let missing = match prev_version {
            Some(p) if f.version > p + 1 => Some(p + 1..=f.version - 1),
            Some(_) => None,
            // A checkpoint of the version before the oldest commit (or later) is where
            // readers start: what lies below it was cleaned up, not lost.
            None if f.version > 0 && checkpoints.range(f.version - 1..).next().is_none() => {
                Some(0..=f.version - 1)
            }
            None => None,
        };
        prev_version = Some(f.version);
        commits.push((f.version, &f.meta, t, missing));
    }
    commits.reverse();
    if let Some(n) = limit {
        commits.truncate(n);
    }
    commits
        .par_iter()
        .map(|(version, meta, file_time, missing_below)| {
            let bytes = store.get(&meta.path)?;
            let actions = decode_commit(meta.path.as_str(), &bytes)?;
            let commit_info = actions.into_iter().find_map(|a| match a {
                Action::CommitInfo(ci) => Some(ci),
                _ => None,
            });
            let timestamp_ms = commit_info
                .as_ref()
                .and_then(CommitInfo::in_commit_timestamp)
                .unwrap_or(*file_time);
            Ok(CommitEntry {
                version: *version,
                timestamp_ms,
                commit_info,
                missing_below: missing_below.clone(),
            })
        })
        .collect()
}
