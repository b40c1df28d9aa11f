//! The leader's commit of one batch (SPEC.md §35): the members checked alone, the rest as
//! ONE transaction through the ordinary commit loop, and every member's outcome.
//!
//! The group transaction is built on the newest snapshot the handle or a member knows. It
//! is a blind append, so the commit loop rebases it past concurrent appends as it rebases
//! any blind append, and fails it on a concurrent protocol or metadata change (which fails
//! every member: their files were written for the old ones). A concurrent commit of one of
//! the members' application ids (`ConcurrentTransaction`) does not fail the group: the
//! leader reads the table again, marks the members whose application version is now
//! recorded `Skipped`, and commits the others. The group transaction keeps its files on
//! failure; the leader deletes each member's files when its outcome proves they were not
//! committed, and never when the outcome is unknown.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use alluvium_storage::sync::Arc;

use alluvium_txlog::actions::Action;

use super::{GroupSummary, MemberCommit, MemberOutcome, member};
use crate::snapshot::{Snapshot, VersionedCache};
use crate::transaction::commit::snapshot_after;
use crate::transaction::{CommitReport, Transaction};
use crate::{ConflictKind, MvccError, Result, RetryPolicy};

/// The `operationParameters` key holding the number of writes a group commit holds.
const GROUP_MEMBERS_PARAMETER: &str = "groupMembers";

/// Commits `members` (in queue order) and returns one outcome per member, in the same
/// order.
pub(super) fn commit_batch(
    cache: &VersionedCache<Snapshot>,
    members: Vec<Transaction>,
) -> Vec<Result<MemberOutcome>> {
    let started = Instant::now();
    let policy = RetryPolicy::default();
    let mut out: Vec<Option<Result<MemberOutcome>>> = std::iter::repeat_with(|| None)
        .take(members.len())
        .collect();
    let Some(mut base) = newest_base(cache, &members) else {
        return members
            .iter()
            .map(|_| {
                Err(MvccError::InvalidOperation(
                    "a group commit member must have read a snapshot".into(),
                ))
            })
            .collect();
    };
    let root = base.root().clone();
    loop {
        let pending: Vec<usize> = (0..members.len()).filter(|i| out[*i].is_none()).collect();
        // A member alone gets the full checks from the commit itself.
        let full = pending.len() > 1;
        for &i in &pending {
            if let Some(outcome) = member::check_member(&members[i], &base, full) {
                // Skipped or refused: never committed.
                members[i].discard_data_files(&root);
                out[i] = Some(outcome);
            }
        }
        let live: Vec<usize> = pending.into_iter().filter(|i| out[*i].is_none()).collect();
        if live.is_empty() {
            break;
        }
        let budget = policy.budget.saturating_sub(started.elapsed());
        let group = combine(&base, &members, &live, budget);
        match group.commit_returning_actions() {
            Ok((report, actions)) => {
                let snapshot = next_snapshot(&base, &report, actions);
                deliver(cache, snapshot, &members, &live, &report, &mut out);
                break;
            }
            Err(e)
                if e.conflict_kind() == Some(ConflictKind::ConcurrentTransaction)
                    && started.elapsed() < policy.budget =>
            {
                // A concurrent commit recorded a member's application id: read its version
                // again at the newest version and try again without the members it skips.
                match base.refresh() {
                    Ok(fresh) => base = fresh,
                    Err(_) => {
                        fail(e, &members, &live, &root, &mut out);
                        break;
                    }
                }
            }
            Err(e) => {
                fail(e, &members, &live, &root, &mut out);
                break;
            }
        }
    }
    out.into_iter()
        .map(|o| o.unwrap_or_else(super::orphan))
        .collect()
}

/// The newest snapshot the handle's cache or a member holds.
fn newest_base(cache: &VersionedCache<Snapshot>, members: &[Transaction]) -> Option<Snapshot> {
    let mut best: Option<Snapshot> = cache.get().map(|s| (*s).clone());
    for s in members.iter().filter_map(Transaction::read_snapshot) {
        if best.as_ref().is_none_or(|b| s.version() > b.version()) {
            best = Some(s.clone());
        }
    }
    best
}

/// The group transaction of the `live` members on `base`: the first member's operation and
/// parameters plus the member count, the members' metrics summed, their application
/// transactions and files in order; files kept on failure (see the module documentation).
fn combine(
    base: &Snapshot,
    members: &[Transaction],
    live: &[usize],
    budget: Duration,
) -> Transaction {
    let first = &members[live[0]];
    let mut group = Transaction::new(base, first.operation());
    for (k, v) in first.parameters() {
        group.set_parameter(k, v.clone());
    }
    group.set_parameter(GROUP_MEMBERS_PARAMETER, live.len().to_string());
    let mut metrics: BTreeMap<&str, Option<i64>> = BTreeMap::new();
    for &i in live {
        for (k, v) in members[i].metrics() {
            let n = v.as_str().and_then(|s| s.parse::<i64>().ok());
            let sum = metrics.entry(k.as_str()).or_insert(Some(0));
            *sum = match (*sum, n) {
                (Some(a), Some(b)) => a.checked_add(b),
                _ => None,
            };
        }
    }
    // A metric that is not a count in every member has no sum; it is left out.
    for (k, sum) in metrics {
        if let Some(sum) = sum {
            group.set_metric(k, sum);
        }
    }
    let mut write_time = Duration::ZERO;
    for &i in live {
        for a in members[i].added_files() {
            group.add_file(a.clone());
        }
        for t in members[i].app_transactions() {
            group.push_app_transaction(t.clone());
        }
        // The members wrote in parallel: the group waited for the slowest.
        write_time = write_time.max(members[i].write_time());
    }
    group.add_write_time(write_time);
    // One sync of the members' new file names for the whole group.
    if live.iter().any(|&i| members[i].names_deferred()) {
        group.set_names_deferred();
    }
    group.set_discard_on_failure(false);
    group.set_retry_policy(RetryPolicy {
        budget,
        ..RetryPolicy::default()
    });
    group
}

/// The table at the group's version: `base` advanced by the commit the group wrote, when
/// it landed right after `base` ([`snapshot_after`]); else `base` refreshed from the log.
/// `None` when that fails: the next writers then read the log themselves.
fn next_snapshot(base: &Snapshot, report: &CommitReport, actions: Vec<Action>) -> Option<Snapshot> {
    if report.version != base.version() + 1 {
        return base.refresh().ok();
    }
    snapshot_after(base, report, actions)
}

/// Every live member committed: publishes the newest snapshot to the handle's cache and
/// gives each member its share of the report.
fn deliver(
    cache: &VersionedCache<Snapshot>,
    snapshot: Option<Snapshot>,
    members: &[Transaction],
    live: &[usize],
    report: &CommitReport,
    out: &mut [Option<Result<MemberOutcome>>],
) {
    // The next writers start from the committed version without reading the log.
    if let Some(s) = &snapshot {
        cache.publish(Arc::new(s.clone()));
    }
    let adds = live
        .iter()
        .flat_map(|&i| members[i].added_files().iter().cloned())
        .collect();
    let group = std::sync::Arc::new(GroupSummary {
        version: report.version,
        members: live.len(),
        adds,
        snapshot,
    });
    for (position, &i) in live.iter().enumerate() {
        let m = &members[i];
        let own = CommitReport {
            group_members: live.len(),
            files_added: m.added_files().len(),
            files_removed: 0,
            bytes_added: m
                .added_files()
                .iter()
                .map(|a| u64::try_from(a.size).unwrap_or(0))
                .sum(),
            bytes_removed: 0,
            write_data: m.write_time(),
            operation_metrics: m
                .metrics()
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    )
                })
                .collect(),
            ..report.clone()
        };
        out[i] = Some(Ok(MemberOutcome::Committed(Box::new(MemberCommit {
            report: own,
            position,
            group: group.clone(),
        }))));
    }
}

/// The group commit failed: every live member gets the error (the same variant and
/// fields), and its files are deleted when the error proves nothing was committed.
fn fail(
    e: MvccError,
    members: &[Transaction],
    live: &[usize],
    root: &alluvium_txlog::path::TableRoot,
    out: &mut [Option<Result<MemberOutcome>>],
) {
    let uncommitted = matches!(
        e,
        MvccError::Conflict { .. }
            | MvccError::TableAlreadyExists { .. }
            | MvccError::RetryBudgetExhausted { .. }
            | MvccError::CommitWriteFailed { .. }
            | MvccError::InvalidOperation(_)
            | MvccError::ReservedColumn { .. }
            | MvccError::StorageCapabilityMissing { .. }
    );
    let mut errors: Vec<MvccError> = live.iter().skip(1).map(|_| e.duplicate()).collect();
    errors.insert(0, e);
    for (&i, err) in live.iter().zip(errors) {
        if uncommitted {
            members[i].discard_data_files(root);
        }
        out[i] = Some(Err(err));
    }
}
