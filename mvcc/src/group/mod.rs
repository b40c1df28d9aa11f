//! Group commit (SPEC.md §35): writers that share one table handle and append put their
//! files in one commit instead of one commit each, so a durable table takes as many
//! appends per second as its writers can write data files, not as many as it can fsync
//! commit files.
//!
//! 1. Each writer writes (and, on a durable store, fsyncs) its own data files, in
//!    parallel with the others, and builds an ordinary [`Transaction`] of them.
//! 2. [`GroupCommit::commit`] queues it (a *member*). The writer that finds no commit in
//!    flight leads: it drains the queue up to the limits ([`GroupCommitOptions`]) and
//!    commits the batch while the next members queue up behind it ([`queue`]). There is
//!    no timer: a writer alone leads at once and commits alone.
//! 3. The leader checks each member alone against the newest snapshot it knows (its
//!    schema, protocol and properties unchanged since the member read them, its files'
//!    partition values, row counts where row tracking needs them, its application
//!    version not yet committed): a member that fails a check fails (or is `Skipped`)
//!    alone, with its files deleted ([`member`]).
//! 4. The rest become ONE commit through the ordinary commit loop: one `commitInfo`
//!    (operation `WRITE`, `isBlindAppend: true`, the member count in
//!    `operationParameters.groupMembers`, the members' metrics summed), every member's
//!    `txn`, every member's files in queue order (row ids assigned across them as for any
//!    commit), the same conflict rules, retries, read-backs, in-commit timestamps and
//!    durability ([`commit`]).
//! 5. The outcome reaches every member: the version (and which member comes first, to run
//!    the post-commit work once), a conflict, `Skipped`, or an unknown outcome naming the
//!    group's `txnId`. The newest snapshot is published to the handle's cache, so the
//!    next writers start from it without reading the log.
//!
//! Only transactions that [`Transaction::can_join_group`] accepts are queued; anything
//! else commits alone, exactly as [`Transaction::commit`] does.

pub mod queue;
pub mod waits;

mod commit;
mod member;

use std::fmt;

use alluvium_storage::sync::Arc;
use alluvium_txlog::Version;
use alluvium_txlog::actions::Add;
use alluvium_txlog::path::TableRoot;

pub use queue::{BatchLimits, GroupQueue, QueueFull, Weight, WhenFull};

use crate::snapshot::{Snapshot, VersionedCache};
use crate::transaction::{CommitReport, Transaction};
use crate::{MvccError, Result};

/// How a table handle groups concurrent appends into commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct GroupCommitOptions {
    /// Whether appends may share commits at all (default true). Off, every write commits
    /// alone.
    pub enabled: bool,
    /// Most log actions (adds and application transactions) in one group commit (default
    /// 10,000). A single write with more commits alone.
    pub max_actions: usize,
    /// Most bytes of action JSON in one group commit, estimated from the actions' text
    /// (default 16 MiB). A single write with more commits alone.
    pub max_bytes: usize,
    /// Most writes waiting in the queue (default 1,024).
    pub queue_capacity: usize,
    /// What a write does when the queue is full (default: wait).
    pub when_full: WhenFull,
}

impl Default for GroupCommitOptions {
    fn default() -> Self {
        GroupCommitOptions {
            enabled: true,
            max_actions: 10_000,
            max_bytes: 16 << 20,
            queue_capacity: 1024,
            when_full: WhenFull::Block,
        }
    }
}

/// Builder-style setters: the struct is `#[non_exhaustive]`, so outside this crate it is
/// built from its `Default` with these.
impl GroupCommitOptions {
    /// Sets [`enabled`](Self::enabled).
    #[must_use]
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// Sets [`max_actions`](Self::max_actions).
    #[must_use]
    pub fn with_max_actions(mut self, max_actions: usize) -> Self {
        self.max_actions = max_actions;
        self
    }

    /// Sets [`max_bytes`](Self::max_bytes).
    #[must_use]
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// Sets [`queue_capacity`](Self::queue_capacity).
    #[must_use]
    pub fn with_queue_capacity(mut self, queue_capacity: usize) -> Self {
        self.queue_capacity = queue_capacity;
        self
    }

    /// Sets [`when_full`](Self::when_full).
    #[must_use]
    pub fn with_when_full(mut self, when_full: WhenFull) -> Self {
        self.when_full = when_full;
        self
    }
}

impl GroupCommitOptions {
    /// Every write commits alone.
    pub fn disabled() -> Self {
        GroupCommitOptions {
            enabled: false,
            ..Self::default()
        }
    }
}

/// What one group commit did, shared by its members.
#[derive(Debug)]
pub struct GroupSummary {
    /// The version committed.
    pub version: Version,
    /// The writes it holds.
    pub members: usize,
    /// Every file it added, in commit order (auto-compaction looks at their partitions).
    pub adds: Vec<Add>,
    /// The table at `version` (or later), when it could be read back; also published to
    /// the handle's snapshot cache.
    pub snapshot: Option<Snapshot>,
}

/// A member's share of a group commit.
#[derive(Debug, Clone)]
pub struct MemberCommit {
    /// The commit, as this member sees it: the group's version, attempts, winners and
    /// `txnId`, and this member's own files, bytes, write time and metrics.
    pub report: CommitReport,
    /// The member's place in the commit (0: first). The first runs the post-commit work
    /// (checkpoint, auto-compaction) for the whole group, so it runs once per version.
    pub position: usize,
    /// The group.
    pub group: std::sync::Arc<GroupSummary>,
}

/// How a member's write ended, when it did not fail.
#[derive(Debug, Clone)]
pub enum MemberOutcome {
    /// Committed in the group's version (boxed: the report is large next to `Skipped`).
    Committed(Box<MemberCommit>),
    /// Not committed, its files deleted: the table already records this application
    /// version or a later one (idempotent writes).
    Skipped {
        /// The application id.
        app_id: String,
        /// The version the table records for it.
        recorded_version: i64,
        /// The table version at which that was read.
        table_version: Version,
    },
}

/// The group committer of one table handle (shared by its clones). See the module
/// documentation.
pub struct GroupCommit {
    cache: Arc<VersionedCache<Snapshot>>,
    options: GroupCommitOptions,
    queue: GroupQueue<Transaction, Result<MemberOutcome>>,
}

impl fmt::Debug for GroupCommit {
    /// Hand-written: neither the cached snapshot nor the queued members are printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupCommit")
            .field("options", &self.options)
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl GroupCommit {
    /// A committer for the handle whose snapshot cache is `cache`: it reads its base from
    /// there and publishes each committed version there.
    pub fn new(cache: Arc<VersionedCache<Snapshot>>, options: GroupCommitOptions) -> Self {
        GroupCommit {
            queue: GroupQueue::new(
                options.queue_capacity,
                options.when_full,
                BatchLimits {
                    max_actions: options.max_actions,
                    max_bytes: options.max_bytes,
                },
            ),
            cache,
            options,
        }
    }

    /// The options.
    pub fn options(&self) -> &GroupCommitOptions {
        &self.options
    }

    /// Commits `txn`, in a group with whatever other writes are queued when it is its
    /// turn, or alone when grouping is off or `txn` cannot join a group
    /// ([`Transaction::can_join_group`]; then exactly as [`Transaction::commit`], reported
    /// as a group of one).
    ///
    /// # Errors
    /// As [`Transaction::commit`], for the member (data files deleted after a definite
    /// failure, kept after an unknown outcome, whose `txnId` is the group's);
    /// [`MvccError::Busy`] when the queue is full and the handle refuses rather than
    /// waits (data files deleted); a conflict or refusal of this member alone (schema or
    /// protocol changed since it read them, its files do not fit the table).
    pub fn commit(&self, txn: Transaction) -> Result<MemberOutcome> {
        if !self.options.enabled || !txn.can_join_group() {
            return commit_alone(txn);
        }
        let weight = member::weight(&txn);
        let keys = txn
            .app_transactions()
            .iter()
            .map(|t| t.app_id.clone())
            .collect();
        match self.queue.submit(
            txn,
            weight,
            keys,
            |batch| commit::commit_batch(&self.cache, batch),
            orphan,
        ) {
            Ok(outcome) => outcome,
            Err((QueueFull { capacity }, txn)) => {
                // Never queued, never committed: its files go.
                let root = TableRoot::new(txn.store_uri());
                txn.discard_data_files(&root);
                Err(MvccError::Busy { capacity })
            }
        }
    }

    /// Commits `members` as ONE group now, as the leader of a batch does, without the queue
    /// (and without its limits): for a caller that holds several writes at once, and for
    /// tests that need a group of a known shape. Outcomes come in the order of `members`.
    /// A member that cannot join a group ([`Transaction::can_join_group`]), or that records
    /// an application id an earlier member records too, is refused with
    /// [`MvccError::InvalidOperation`] and its files are kept.
    pub fn commit_together(&self, members: Vec<Transaction>) -> Vec<Result<MemberOutcome>> {
        let mut seen = std::collections::HashSet::new();
        let mut outcomes: Vec<Option<Result<MemberOutcome>>> = Vec::with_capacity(members.len());
        let mut joining = Vec::with_capacity(members.len());
        for m in members {
            let ids: Vec<&str> = m
                .app_transactions()
                .iter()
                .map(|t| t.app_id.as_str())
                .collect();
            if !m.can_join_group() {
                outcomes.push(Some(Err(MvccError::InvalidOperation(
                    "this transaction cannot share a commit (not a blind append of operation WRITE with default options)".into(),
                ))));
            } else if let Some(id) = ids.iter().find(|id| seen.contains(**id)) {
                outcomes.push(Some(Err(MvccError::InvalidOperation(format!(
                    "application `{id}` is recorded by an earlier write of this group: two writes of one application never share a commit"
                )))));
            } else {
                seen.extend(ids.iter().map(|id| (*id).to_string()));
                outcomes.push(None);
                joining.push(m);
            }
        }
        let mut committed = commit::commit_batch(&self.cache, joining).into_iter();
        outcomes
            .into_iter()
            .map(|o| o.unwrap_or_else(|| committed.next().unwrap_or_else(orphan)))
            .collect()
    }

    /// Writes waiting in the queue now.
    pub fn queued(&self) -> usize {
        self.queue.queued()
    }
}

/// A write that cannot join a group, committed as [`Transaction::commit`] does.
fn commit_alone(txn: Transaction) -> Result<MemberOutcome> {
    let adds = txn.added_files().to_vec();
    let report = txn.commit()?;
    let group = std::sync::Arc::new(GroupSummary {
        version: report.version,
        members: 1,
        adds,
        snapshot: None,
    });
    Ok(MemberOutcome::Committed(Box::new(MemberCommit {
        report,
        position: 0,
        group,
    })))
}

/// The outcome of a member the leader produced none for; unreachable, since
/// `commit_batch` answers every member, but a member must never wait forever.
fn orphan() -> Result<MemberOutcome> {
    Err(MvccError::InvalidOperation(
        "internal error: the group commit gave this write no outcome; read the table to learn whether its files were committed".into(),
    ))
}
