//! Appends through a shared table handle commit in groups (SPEC.md §35): the facade side
//! of [`alluvium_mvcc::group`]. Which writes may join a group, and the post-commit policy
//! run once per group version.

use alluvium_mvcc::Transaction;
use alluvium_mvcc::group::{MemberCommit, MemberOutcome};
use alluvium_txlog::properties::TableProperties;

use super::{WriteOptions, WriteOutcome};
use crate::report::{CommitSummary, PostCommit};
use crate::{Result, Table};

impl Table {
    /// Whether the write `txn` (with `options`) commits through the handle's group
    /// committer: a blind append the committer accepts
    /// ([`Transaction::can_join_group`]) whose options ask for nothing a shared commit
    /// cannot give it. A pinned read snapshot commits alone: its caller asked for the
    /// conflict checks from that version on.
    pub(crate) fn joins_group(&self, txn: &Transaction, options: &WriteOptions) -> bool {
        self.group_commit().options().enabled
            && options.read_snapshot.is_none()
            && txn.can_join_group()
    }

    /// Commits `txn` in a group, then, for the group's first member only, the post-commit
    /// policy of every write (a checkpoint when due at the group's version, log cleanup,
    /// auto-compaction of the partitions the whole group wrote).
    ///
    /// # Errors
    /// As [`alluvium_mvcc::GroupCommit::commit`].
    pub(crate) fn commit_in_group(&self, txn: Transaction) -> Result<WriteOutcome> {
        // What this writer saw before the group published a newer version: the Iceberg
        // sync (when the table asks for it) starts from it. Cheap: a snapshot shares its
        // state.
        let before = txn
            .read_snapshot()
            .cloned()
            .or_else(|| self.cached_snapshot().map(|s| (*s).clone()));
        let m = match self.group_commit().commit(txn)? {
            MemberOutcome::Committed(m) => *m,
            MemberOutcome::Skipped {
                app_id,
                recorded_version,
                table_version,
            } => {
                return Ok(WriteOutcome::Skipped {
                    app_id,
                    recorded_version,
                    table_version,
                });
            }
        };
        let MemberCommit {
            report,
            position,
            group,
        } = m;
        // The group's version, when the group built it (a refresh may have gone further).
        let committed = group
            .snapshot
            .as_ref()
            .filter(|s| s.version() == report.version)
            .map(|s| crate::Snapshot::from(s.clone()));
        if position != 0 {
            let mut summary = CommitSummary::new(report, PostCommit::default());
            summary.snapshot = committed;
            return Ok(WriteOutcome::Committed(Box::new(summary)));
        }
        // The group's version has the properties its members wrote under (a change would
        // have been a conflict), which the published snapshot carries.
        let (interval, auto_compact, iceberg) = match &group.snapshot {
            Some(s) => {
                let props = TableProperties(&s.metadata().configuration);
                (
                    Some(props.checkpoint_interval()),
                    props.auto_compact(),
                    alluvium_iceberg::sync_after_commit(&s.metadata().configuration),
                )
            }
            None => (None, true, false),
        };
        let mut post = match interval {
            Some(i) if !alluvium_compaction::checkpoint_due(i, report.version) => {
                PostCommit::default()
            }
            _ => self.post_commit(report.version),
        };
        if iceberg {
            post.iceberg_sync = Some(self.iceberg_after_commit(report.version, before.as_ref()));
        }
        let mut summary = CommitSummary::new(report, post);
        summary.snapshot = committed;
        if auto_compact {
            summary.auto_compaction = self.auto_compact(&group.adds);
        }
        Ok(WriteOutcome::Committed(Box::new(summary)))
    }
}
