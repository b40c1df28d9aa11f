//! The commits of a version range, one action list per version, in version order: what a
//! change-data-feed reader walks (PROTOCOL.md "Change Data Files"; a reader needs each
//! version's own commit file, never a checkpoint, because checkpoints drop `cdc` actions
//! and reconcile the adds and removes of different versions).

use alluvium_storage::ObjectStore;
use rayon::prelude::*;

use crate::actions::Action;
use crate::commit::decode_commit;
use crate::log_path::{LogFile, LogFileKind, Version};
use crate::{LogError, Result};

/// The actions of one commit file.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionActions {
    /// The version the commit file creates.
    pub version: Version,
    /// The commit file's modification time (milliseconds since the epoch), as listed.
    pub file_time_ms: i64,
    /// Its actions, in file order.
    pub actions: Vec<Action>,
}

/// The actions of every commit `start..=end`, in version order, read from `listing` (a
/// listing of the log from at most `start`), the files decoded in parallel on the current
/// rayon pool.
///
/// # Errors
/// [`LogError::VersionNotFound`] naming the first version of the range whose commit file
/// is not in the listing (log cleanup removed it, or it was never written), with the
/// earliest listed commit; storage errors; a malformed commit naming the file.
pub fn commits_in_range(
    store: &dyn ObjectStore,
    listing: &[LogFile],
    start: Version,
    end: Version,
) -> Result<Vec<VersionActions>> {
    let mut files: Vec<&LogFile> = listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit && (start..=end).contains(&f.version))
        .collect();
    files.sort_by_key(|f| f.version);
    files.dedup_by_key(|f| f.version);
    let mut expected = start;
    for f in &files {
        if f.version != expected {
            break;
        }
        expected += 1;
    }
    if expected <= end {
        let earliest = listing
            .iter()
            .filter(|f| f.kind == LogFileKind::Commit)
            .map(|f| f.version)
            .min();
        return Err(LogError::VersionNotFound {
            version: expected,
            reason: match earliest {
                Some(e) if e > expected => format!(
                    "its commit file is gone (log cleanup keeps commits from version {e} on)"
                ),
                _ => "its commit file is missing from the log".into(),
            },
        });
    }
    files
        .par_iter()
        .map(|f| {
            let bytes = store.get(&f.meta.path)?;
            Ok(VersionActions {
                version: f.version,
                file_time_ms: f.meta.last_modified_ms,
                actions: decode_commit(f.meta.path.as_str(), &bytes)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::CommitInfo;
    use crate::commit::encode_commit;
    use crate::log_path::commit_path;
    use crate::segment::list_log_from;
    use alluvium_storage::InMemoryStore;

    fn store_with(versions: &[Version]) -> InMemoryStore {
        let store = InMemoryStore::new();
        for v in versions {
            let mut ci = CommitInfo::default();
            ci.set("v", *v);
            let bytes = encode_commit(&[Action::CommitInfo(ci)]).unwrap();
            store.put(&commit_path(*v), bytes.into()).unwrap();
        }
        store
    }

    #[test]
    fn reads_each_version_of_the_range_in_order() {
        let store = store_with(&[0, 1, 2, 3]);
        let listing = list_log_from(&store, 0).unwrap();
        let got = commits_in_range(&store, &listing, 1, 2).unwrap();
        assert_eq!(got.iter().map(|c| c.version).collect::<Vec<_>>(), [1, 2]);
        assert!(matches!(&got[0].actions[0], Action::CommitInfo(ci) if ci.0["v"] == 1));
    }

    #[test]
    fn a_cleaned_up_version_is_named() {
        let store = store_with(&[3, 4]);
        let listing = list_log_from(&store, 0).unwrap();
        let err = commits_in_range(&store, &listing, 2, 4).unwrap_err();
        assert!(
            matches!(&err, LogError::VersionNotFound { version: 2, reason } if reason.contains("from version 3")),
            "{err}"
        );
    }
}
