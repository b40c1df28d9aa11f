//! `sync`: folds the log versions not yet applied into `state/`, one bounded chunk at a
//! time, exactly once (SPEC.md §26.3).
//!
//! Per chunk:
//! 1. read `state/`'s latest snapshot S; the log versions applied so far are those up to
//!    the version of the `txn` of [`SYNC_APP_ID`] in S (none: nothing applied);
//! 2. read the next log commits (their data-change `add`s, in commit order) until the chunk
//!    holds at least `chunk_events` events or the log ends, and fold them per key
//!    ([`super::fold`]);
//! 3. MERGE the chunk's tombstones (keys whose latest event is a DELETE) into
//!    `tombstones/`, keeping per key the greatest order: a max-register, so applying it
//!    again, or from a sync that later loses its race, changes nothing it should not;
//! 4. read the tombstones of the chunk's keys; a key whose tombstone is not older than its
//!    latest chunk event becomes a DELETE at the tombstone;
//! 5. one MERGE into `state/` with S as its read snapshot and the `txn`
//!    (`SYNC_APP_ID`, last log version of the chunk) in the same commit. Its clauses only
//!    ever replace a row by a strictly newer event, so no interleaving of stale syncs can
//!    move a key backwards; a concurrent sync that committed the same `txn` since S makes
//!    the commit fail with a conflict, and the chunk is started again from step 1.
//!
//! A crash anywhere leaves at most tombstones that are already true of the log; the next
//! sync re-reads the chunk from the recorded `txn` and applies it once.

use alluvium::Snapshot;
use alluvium::{CmpOp, Expr, Literal};
use alluvium_txlog::actions::Action;
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::commit_path;
use arrow_array::Array;

use super::StateError;
use super::StateStore;
use super::fold::{ChunkFold, EventOrder, KeyMap, orders_by_key};
use super::layout::{DELETE_FLAG, EVENT_TIME, SEQ};
use super::report::SyncReport;
use crate::Result;
use alluvium::{AppTransaction, ScanBuilder, WriteOptions};

/// The `txn.appId` under which `state/` records the last log version applied.
pub const SYNC_APP_ID: &str = "alluvium.state.sync";

/// Up to this many distinct first-key values a tombstone read lists them (`IN`, pruning
/// files); above, it reads every tombstone file, keeping only the chunk's keys.
const MAX_IN_LIST: usize = 4096;

/// The log version `state/` has applied through, as recorded in `snapshot`.
pub(crate) fn synced_through(snapshot: &Snapshot) -> Option<u64> {
    snapshot
        .app_transaction_version(SYNC_APP_ID, snapshot.store().now_ms())
        .and_then(|v| u64::try_from(v).ok())
}

/// The data-change `add`s of log `version`, in commit order.
pub(crate) fn commit_adds(
    log: &Snapshot,
    version: u64,
) -> Result<Vec<alluvium_txlog::actions::Add>> {
    Ok(all_commit_adds(log, version)?
        .into_iter()
        .filter(|a| a.data_change)
        .collect())
}

/// Every `add` of log `version` (data-change or not), in commit order.
pub(crate) fn all_commit_adds(
    log: &Snapshot,
    version: u64,
) -> Result<Vec<alluvium_txlog::actions::Add>> {
    let path = commit_path(version);
    let bytes = log
        .store()
        .get(&path)
        .map_err(|e| StateError::LogVersionUnavailable {
            version,
            reason: e.to_string(),
        })?;
    Ok(decode_commit(path.as_str(), &bytes)?
        .into_iter()
        .filter_map(|a| match a {
            Action::Add(add) => Some(add),
            _ => None,
        })
        .collect())
}

/// `s.c`/`t.c`.
fn side(s: &str, c: &str) -> Expr {
    Expr::path([s, c])
}

/// `t.k1 = s.k1 AND ...`.
fn on_keys(keys: &[String]) -> Expr {
    let mut on: Option<Expr> = None;
    for k in keys {
        let eq = side("t", k).eq(side("s", k));
        on = Some(match on {
            Some(o) => o.and(eq),
            None => eq,
        });
    }
    on.unwrap_or(Expr::Literal(Literal::Boolean(false)))
}

/// The source row is strictly newer than the target row.
fn newer() -> Expr {
    let st = side("s", EVENT_TIME);
    let tt = side("t", EVENT_TIME);
    st.clone().compare(CmpOp::Gt, tt.clone()).or(st
        .compare(CmpOp::Eq, tt)
        .and(side("s", SEQ).compare(CmpOp::Gt, side("t", SEQ))))
}

impl StateStore {
    /// Folds every log version not yet applied into `state/` (see the module docs of
    /// `alluvium::state` and SPEC.md §26.3): one MERGE per chunk of at most about
    /// [`StateOptions::chunk_events`](super::StateOptions) events (a log version is never
    /// split), each recording the last log version it applied as the `txn` of
    /// [`SYNC_APP_ID`]. Safe to run concurrently with producers and with other syncs:
    /// each event is applied exactly once.
    ///
    /// # Errors
    /// Storage and commit failures (what committed stays committed; run again to go on);
    /// [`StateError::TooManyConflicts`] when other syncs won the race too many times in a
    /// row; [`StateError::LogVersionUnavailable`] when a commit to fold was cleaned up.
    pub fn sync(&self) -> Result<SyncReport> {
        let mut report = SyncReport::default();
        let mut attempts: u32 = 0;
        loop {
            let state_snapshot = self.state.snapshot()?;
            let applied = synced_through(&state_snapshot);
            let start = applied.map_or(0, |v| v + 1);
            let log = self.log.snapshot()?;
            report.log_version = log.version();
            report.synced_through = applied;
            report.state_version = Some(state_snapshot.version());
            if start > log.version() {
                return Ok(report);
            }
            let mut fold = ChunkFold::new(&self.layout)?;
            let mut end = start;
            for v in start..=log.version() {
                let mut ordinal = 0u64;
                for add in commit_adds(&log, v)? {
                    for batch in log.read_whole_file(&add)? {
                        let n = batch.num_rows() as u64;
                        fold.add(batch, v, ordinal)?;
                        ordinal += n;
                    }
                }
                end = v;
                if fold.events() >= self.options.chunk_events as u64 {
                    break;
                }
            }
            match self.apply_chunk(&fold, &state_snapshot, end) {
                Ok(chunk) => {
                    attempts = 0;
                    report.chunks += 1;
                    report.events += fold.events();
                    report.keys += fold.keys() as u64;
                    report.inserted += chunk.inserted;
                    report.updated += chunk.updated;
                    report.deleted += chunk.deleted;
                    report.tombstones_written += chunk.tombstones;
                    report.synced_from.get_or_insert(start);
                    report.synced_through = Some(end);
                    report.state_version = Some(chunk.state_version);
                    self.compact_if_due(&mut report);
                }
                Err(e) if e.conflict_kind().is_some() || e.is_retryable() => {
                    attempts += 1;
                    report.conflicts_retried += 1;
                    if attempts > self.options.max_conflict_retries {
                        return Err(StateError::TooManyConflicts {
                            attempts,
                            version: start,
                        });
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Steps 3 to 5 of a chunk.
    fn apply_chunk(
        &self,
        fold: &ChunkFold,
        state_snapshot: &Snapshot,
        end: u64,
    ) -> Result<ChunkOutcome> {
        let keys = &self.layout.keys;
        let mut out = ChunkOutcome::default();
        if let Some(deletes) = fold.deletes()? {
            out.tombstones = deletes.num_rows() as u64;
            let mut cols: Vec<String> = keys.clone();
            cols.push(EVENT_TIME.into());
            cols.push(SEQ.into());
            let values: Vec<Expr> = cols.iter().map(|c| side("s", c)).collect();
            self.tombstones
                .merge(vec![deletes], on_keys(keys))
                .when_matched_update(
                    Some(newer()),
                    [(EVENT_TIME, side("s", EVENT_TIME)), (SEQ, side("s", SEQ))],
                )
                .when_not_matched_insert(None, cols, values)
                .execute(&WriteOptions::default())?;
        }
        let tombstones = if fold.keys() == 0 {
            KeyMap::new()
        } else {
            self.read_tombstones(fold)?
        };
        let app = AppTransaction::new(SYNC_APP_ID, end as i64);
        let Some(source) = fold.state_source(&tombstones)? else {
            // Versions without events (the log's creation, metadata changes): record the
            // progress alone, as one commit, unless another sync has moved on.
            let mut txn = self.state.transaction("STATE SYNC")?;
            if txn.app_version(SYNC_APP_ID) != synced_through(state_snapshot).map(|v| v as i64) {
                return Err(alluvium::Error::Mvcc(alluvium::MvccError::Conflict {
                    kind: alluvium::ConflictKind::ConcurrentTransaction,
                    winning_version: txn.snapshot().version(),
                    detail: format!(
                        "another sync applied log versions since version {}",
                        state_snapshot.version()
                    ),
                })
                .into());
            }
            txn.set_app_transaction(&app);
            out.state_version = txn.commit()?.version;
            return Ok(out);
        };
        let state_cols: Vec<String> = self
            .layout
            .state
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let updates: Vec<(String, Expr)> = state_cols
            .iter()
            .filter(|c| !keys.contains(c))
            .map(|c| (c.clone(), side("s", c)))
            .collect();
        let delete = side("s", DELETE_FLAG);
        let values: Vec<Expr> = state_cols.iter().map(|c| side("s", c)).collect();
        let outcome = self
            .state
            .merge(vec![source], on_keys(keys))
            .when_matched_delete(Some(delete.clone().and(newer())))
            .when_matched_update(Some(delete.clone().not().and(newer())), updates)
            .when_not_matched_insert(Some(delete.not()), state_cols, values)
            .execute(
                &WriteOptions::default()
                    .with_app_transaction(app)
                    .with_read_snapshot(state_snapshot.clone()),
            )?;
        let Some(summary) = outcome.outcome.report() else {
            // Skipped: the read snapshot already recorded this chunk (cannot happen with
            // the snapshot the chunk was chosen from; a conflict makes the caller re-read).
            return Err(alluvium::Error::Mvcc(alluvium::MvccError::Conflict {
                kind: alluvium::ConflictKind::ConcurrentTransaction,
                winning_version: state_snapshot.version(),
                detail: "the chunk was already applied".into(),
            })
            .into());
        };
        out.state_version = summary.version;
        out.inserted = outcome.metric("numTargetRowsInserted").unwrap_or(0);
        out.updated = outcome.metric("numTargetRowsUpdated").unwrap_or(0);
        out.deleted = outcome.metric("numTargetRowsDeleted").unwrap_or(0);
        Ok(out)
    }

    /// The tombstones of the fold's keys (and maybe of others), by key.
    fn read_tombstones(&self, fold: &ChunkFold) -> Result<KeyMap<EventOrder>> {
        let snapshot = self.tombstones.snapshot()?;
        let mut out = KeyMap::new();
        if snapshot.num_files() == 0 {
            return Ok(out);
        }
        let mut scan = ScanBuilder::new(snapshot.clone());
        let first = &self.layout.keys[0];
        let values = fold.first_key_values()?;
        if values.len() <= MAX_IN_LIST
            && let Some(prim) = snapshot
                .schema()
                .field(first)
                .and_then(|f| f.data_type.as_primitive())
        {
            let mut list = Vec::with_capacity(values.len());
            for i in 0..values.len() {
                list.push(super::read::key_literal(values.as_ref(), i, prim)?);
            }
            scan = scan.with_filter(Expr::column(first).is_in(list));
        }
        for batch in scan.build()?.execute() {
            orders_by_key(fold, &batch?, &mut out)?;
        }
        Ok(out)
    }
}

/// What one chunk did.
#[derive(Debug, Default)]
struct ChunkOutcome {
    state_version: u64,
    inserted: u64,
    updated: u64,
    deleted: u64,
    tombstones: u64,
}
