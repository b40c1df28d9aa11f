//! One member of a group commit, on its own: what it weighs against the batch limits, and
//! the checks that make a bad member fail alone instead of failing its group (SPEC.md
//! §35).

use alluvium_txlog::row_tracking as rt;

use super::MemberOutcome;
use super::queue::Weight;
use crate::snapshot::Snapshot;
use crate::transaction::Transaction;
use crate::{ConflictKind, MvccError, Result};

/// JSON bytes an action takes beyond its variable-length strings (field names, numbers,
/// punctuation), for the estimate of [`weight`].
const ACTION_OVERHEAD: usize = 160;

/// The member's actions (adds and application transactions) and an estimate of their JSON
/// size, from the lengths of the strings they carry: cheap, and close enough to bound a
/// commit file.
pub(super) fn weight(txn: &Transaction) -> Weight {
    let adds = txn.added_files();
    let txns = txn.app_transactions();
    let add_bytes: usize = adds
        .iter()
        .map(|a| {
            let partitions: usize = a
                .partition_values
                .iter()
                .map(|(k, v)| k.len() + v.map_or(4, str::len) + 6)
                .sum();
            ACTION_OVERHEAD + a.path.len() + a.stats.as_ref().map_or(0, String::len) + partitions
        })
        .sum();
    let txn_bytes: usize = txns.iter().map(|t| ACTION_OVERHEAD + t.app_id.len()).sum();
    Weight {
        actions: adds.len() + txns.len(),
        bytes: add_bytes + txn_bytes,
    }
}

/// Checks `member` alone against `base`, the snapshot the group commits on: `None` when
/// it may join the commit, else its outcome (its files are then the caller's to delete).
///
/// * The protocol and metadata (schema, partitioning, properties, constraints) must be
///   those the member read and wrote its files for: otherwise `ProtocolChanged` /
///   `MetadataChanged`, as a commit of its own would get from the commit that changed
///   them.
/// * It must pass the checks a commit of its own runs before writing (writer features,
///   append-only, partition values per file) and, where row tracking assigns row ids,
///   every file must record its row count. `full` says whether to run these: a member
///   that commits alone gets them from the commit itself.
/// * An application version the table already records (this version or a later one)
///   makes it `Skipped`.
pub(super) fn check_member(
    member: &Transaction,
    base: &Snapshot,
    full: bool,
) -> Option<Result<MemberOutcome>> {
    let Some(read) = member.read_snapshot() else {
        return Some(Err(MvccError::InvalidOperation(
            "a group commit member must have read a snapshot".into(),
        )));
    };
    if read.version() != base.version() {
        let changed = |kind: ConflictKind, what: &str| {
            Some(Err(MvccError::Conflict {
                kind,
                winning_version: base.version(),
                detail: format!(
                    "the {what} changed between version {} (read by the write) and version {}",
                    read.version(),
                    base.version()
                ),
            }))
        };
        if read.protocol() != base.protocol() {
            return changed(ConflictKind::ProtocolChanged, "protocol");
        }
        if read.metadata() != base.metadata() {
            return changed(
                ConflictKind::MetadataChanged,
                "metadata (schema, partitioning or properties)",
            );
        }
    }
    if full {
        if let Err(e) = member.validate() {
            return Some(Err(e));
        }
        if rt::must_assign(base.protocol(), &base.metadata().configuration)
            && let Some(Err(e)) = member
                .added_files()
                .iter()
                .map(rt::num_records)
                .find(std::result::Result::is_err)
        {
            return Some(Err(e.into()));
        }
    }
    let now = base.store().now_ms();
    for t in member.app_transactions() {
        if let Some(recorded) = base.app_transaction_version(&t.app_id, now)
            && recorded >= t.version
        {
            return Some(Ok(MemberOutcome::Skipped {
                app_id: t.app_id.clone(),
                recorded_version: recorded,
                table_version: base.version(),
            }));
        }
    }
    None
}
