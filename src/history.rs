//! Commit history (`alluvium history`).

use alluvium_storage::ObjectStore;
use alluvium_txlog::actions::{Action, CommitInfo};
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::{LogFileKind, Version};
use alluvium_txlog::segment::list_log_from;
use rayon::prelude::*;

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
pub struct CommitEntry {
    /// The version.
    pub version: Version,
    /// The commit timestamp: the in-commit timestamp when the commit has one, else the
    /// commit file's modification time made monotonic over the log.
    pub timestamp_ms: i64,
    /// The commit's `commitInfo`, if it has one.
    pub commit_info: Option<CommitInfo>,
}

/// The `limit` newest commits (all when `None`), newest first.
///
/// # Errors
/// Storage errors, or a malformed commit file.
pub(crate) fn history(store: &dyn ObjectStore, limit: Option<usize>) -> Result<Vec<CommitEntry>> {
    let listing = list_log_from(store, 0)?;
    let mut commits: Vec<(Version, &alluvium_storage::ObjectMeta, i64)> = Vec::new();
    let mut prev: Option<i64> = None;
    for f in listing.iter().filter(|f| f.kind == LogFileKind::Commit) {
        // Monotonize file times: a time not after its predecessor's becomes predecessor + 1.
        let mut t = f.meta.last_modified_ms;
        if let Some(p) = prev
            && t <= p
        {
            t = p + 1;
        }
        prev = Some(t);
        commits.push((f.version, &f.meta, t));
    }
    commits.reverse();
    if let Some(n) = limit {
        commits.truncate(n);
    }
    commits
        .par_iter()
        .map(|(version, meta, file_time)| {
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
            })
        })
        .collect()
}
