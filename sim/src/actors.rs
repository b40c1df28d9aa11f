//! The actors: writers appending with application transactions, a DML actor (DV DELETE,
//! UPDATE, MERGE), a maintenance actor (OPTIMIZE, VACUUM lite and full, checkpoint, log
//! cleanup) and a reader. Each is a loop of operations whose choices come from the seed;
//! each records in the model what the engine answered. A crash of the actor's process
//! (any storage operation may be its last) makes it restart with a fresh table handle, as a
//! new process would; a writer then retries the same append with the same `appId` and
//! version, which must be skipped if the first attempt landed. The group's members are the
//! threads of one process sharing one handle with group commit on ([`Process`]): a crash
//! of any of them is the process's, so every member dies with it (the scheduler marks them
//! all crashed; a member asleep in the group-commit queue wakes when the dead leader's
//! commit fails, as its storage calls do) and restarts on the process's new handle; each
//! then retries as any writer does. The state-store actor's operations are in `kv`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use alluvium::arrow::array::{Array, ArrayRef, Int64Array, RecordBatch};
use alluvium::arrow::datatypes::{DataType, Field, Schema};
use alluvium::{
    AppTransaction, CheckpointConfig, ErrorKind, GroupCommitOptions, OptimizeOptions, RetryPolicy,
    ScanBuilder, Snapshot, StoreRef, Table, VacuumMode, VacuumOptions, VersionSpec, WriteOptions,
    WriteOutcome,
};

use crate::model::{Model, Row};
use crate::sched::Scheduler;
use crate::store::SimStore;

/// What an actor does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Appends batches as application `w<n>`.
    Writer(usize),
    /// Member `m` of the group: appends through the handle it shares with the other
    /// members (group commit on) as application `g<m/2>`, whose versions the application's
    /// threads draw from one counter (members 0 and 1 are one application).
    Member(usize),
    /// DELETE, UPDATE and MERGE of acknowledged rows.
    Dml,
    /// OPTIMIZE, VACUUM, checkpoints, log cleanup.
    Maintenance,
    /// Reads the latest and an older version.
    Reader,
    /// Puts events into the state store under `_kv` and syncs it (see `kv`).
    State,
}

/// How an operation ended, as the application can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The engine said it happened.
    Acked,
    /// It may or may not have happened.
    Unknown,
    /// It certainly did not happen.
    Failed,
}

/// Everything an actor needs.
pub(crate) struct Actor {
    pub(crate) id: usize,
    pub(crate) role: Role,
    pub(crate) ops: u32,
    pub(crate) sched: Arc<Scheduler>,
    pub(crate) store: Arc<SimStore>,
    pub(crate) model: Arc<Mutex<Model>>,
    pub(crate) pool: Arc<rayon::ThreadPool>,
    /// The process the group's members are threads of (one handle, several threads);
    /// `None` for every other actor.
    pub(crate) shared: Option<Arc<Process>>,
    /// The generation of the process's handle this member holds.
    pub(crate) generation: AtomicU64,
}

/// The process the group's members share: its table handle (group commit on, no thread
/// pool of its own, so each member's parallel sections run on the member's own pool, which
/// it is inside) and how many times the process restarted after a crash.
pub(crate) struct Process {
    store: Arc<SimStore>,
    handle: Mutex<(u64, Table)>,
}

impl Process {
    pub(crate) fn new(store: Arc<SimStore>) -> Process {
        let table = Table::from_store(store.clone() as StoreRef);
        Process {
            store,
            handle: Mutex::new((0, table)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, (u64, Table)> {
        self.handle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The handle of the running process and its generation.
    fn current(&self) -> (u64, Table) {
        let h = self.lock();
        (h.0, h.1.clone())
    }

    /// The handle after a crash that a member holding generation `held` saw: a new one,
    /// unless another member already restarted the process since (then that one).
    fn restart(&self, held: u64) -> (u64, Table) {
        let mut h = self.lock();
        if h.0 == held {
            *h = (held + 1, Table::from_store(self.store.clone() as StoreRef));
        }
        (h.0, h.1.clone())
    }
}

/// The table's schema: a row id and a value.
pub(crate) fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("v", DataType::Int64, false),
    ]))
}

fn batch(ids: &[i64], v: i64) -> alluvium::Result<RecordBatch> {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef,
            Arc::new(Int64Array::from(vec![v; ids.len()])),
        ],
    )
    .map_err(|e| alluvium::Error::InvalidArgument(e.to_string()))
}

/// The rows (id, value) a snapshot holds, sorted (duplicates kept).
pub(crate) fn rows_of(snapshot: Snapshot) -> alluvium::Result<Vec<(i64, i64)>> {
    let batches = ScanBuilder::new(snapshot)
        .with_columns(["id", "v"])
        .build()?
        .execute_to_vec()?;
    let mut rows = Vec::new();
    for b in &batches {
        let ids = b.column(0).as_any().downcast_ref::<Int64Array>();
        let vs = b.column(1).as_any().downcast_ref::<Int64Array>();
        if let (Some(ids), Some(vs)) = (ids, vs) {
            rows.extend((0..ids.len()).map(|i| (ids.value(i), vs.value(i))));
        }
    }
    rows.sort_unstable();
    Ok(rows)
}

/// The commit loop without wall-clock time: no sleeping backoff, a budget of attempts.
pub(crate) fn retry_policy() -> RetryPolicy {
    RetryPolicy::default()
        .with_initial_backoff(Duration::ZERO)
        .with_max_backoff(Duration::ZERO)
        .with_budget(Duration::from_secs(u64::from(u32::MAX)))
        .with_max_attempts(40)
}

fn classify<T>(r: &alluvium::Result<T>, crashed: bool) -> Outcome {
    classify_kind(r.as_ref().err().map(alluvium::Error::kind), crashed)
}

/// How an operation ended, from the kind of its error (`None`: it succeeded) and whether
/// the process crashed during it.
pub(crate) fn classify_kind(error: Option<ErrorKind>, crashed: bool) -> Outcome {
    match error {
        None => Outcome::Acked,
        Some(_) if crashed => Outcome::Unknown,
        Some(ErrorKind::CommitOutcomeUnknown) => Outcome::Unknown,
        Some(_) => Outcome::Failed,
    }
}

impl Actor {
    pub(crate) fn model(&self) -> MutexGuard<'_, Model> {
        self.model.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A fresh handle, as a new process opens the table: own cache, no group commit (one
    /// writer per process), the actor's one-thread pool. A member of the group takes its
    /// process's handle.
    fn table(&self) -> Table {
        if let Some(p) = &self.shared {
            let (g, t) = p.current();
            self.generation.store(g, Ordering::SeqCst);
            return t;
        }
        Table::from_store(self.store.clone() as StoreRef)
            .with_thread_pool(self.pool.clone())
            .with_group_commit(GroupCommitOptions::disabled())
    }

    fn options(&self) -> WriteOptions {
        WriteOptions::default().with_retry(retry_policy())
    }

    /// Takes a crash of the actor's process, if one happened: the handle is replaced (a
    /// member's by its restarted process's, the same for every member).
    fn crashed(&self, table: &mut Table) -> bool {
        let c = self.sched.take_crash(self.id);
        if c {
            *table = match &self.shared {
                Some(p) => {
                    let (g, t) = p.restart(self.generation.load(Ordering::SeqCst));
                    self.generation.store(g, Ordering::SeqCst);
                    t
                }
                None => self.table(),
            };
        }
        c
    }

    /// The actor's body.
    pub(crate) fn run(&self) {
        if self.role == Role::State {
            return self.run_kv();
        }
        let mut table = self.table();
        for n in 0..self.ops {
            match self.role {
                Role::Writer(w) => self.append(&mut table, w, i64::from(n) + 1),
                Role::Member(m) => self.member_append(&mut table, m, i64::from(n) + 1),
                Role::Dml => self.dml(&mut table),
                Role::Maintenance => self.maintain(&mut table),
                Role::Reader => self.read(&mut table),
                Role::State => {}
            }
            if self.sched.stopped() {
                break;
            }
        }
    }

    fn append(&self, table: &mut Table, w: usize, seq: i64) {
        if self.sched.boundary(self.id, "append") {
            return;
        }
        let rows = 1 + self.sched.below(3) as i64;
        let ids: Vec<i64> = (0..rows)
            .map(|j| (w as i64 + 1) * 1_000_000 + seq * 10 + j)
            .collect();
        let app = format!("w{w}");
        {
            let mut m = self.model();
            m.set(&ids, Row::Pending);
            m.set_value(&ids, 0);
        }
        let mut unknown = false;
        for _attempt in 0..6 {
            let r = batch(&ids, 0).and_then(|b| {
                table.append(
                    [b],
                    &self
                        .options()
                        .with_app_transaction(AppTransaction::new(app.clone(), seq)),
                )
            });
            let crashed = self.crashed(table);
            if self.settle_append(classify(&r, crashed), &ids, &app, seq, &mut unknown) {
                return;
            }
            // Retry the same append (same appId and version) as a restarted writer would.
            if self.sched.boundary(self.id, "retry append") {
                return;
            }
        }
    }

    /// Records one attempt of an append (`app` at `version`) in the model; true when the
    /// append is settled (acknowledged, or definitely failed with no earlier attempt of
    /// unknown outcome), false when it is to be retried. An attempt of unknown outcome
    /// marks `unknown`, so that a later definite failure still leaves the rows unknown.
    fn settle_append(
        &self,
        outcome: Outcome,
        ids: &[i64],
        app: &str,
        version: i64,
        unknown: &mut bool,
    ) -> bool {
        let mut model = self.model();
        match outcome {
            Outcome::Acked => {
                model.set(ids, Row::Acked);
                model.app_acked(app, version);
                true
            }
            Outcome::Failed if !*unknown => {
                model.set(ids, Row::Failed);
                true
            }
            Outcome::Failed | Outcome::Unknown => {
                *unknown = true;
                model.set(ids, Row::Unknown);
                model.app_unknown(app, version);
                false
            }
        }
    }

    /// One append of group member `m` (its `n`th): the version is the application's next,
    /// drawn when the append starts, so the application's two threads race with
    /// consecutive versions, and a later version committed first makes the engine skip
    /// the earlier one.
    fn member_append(&self, table: &mut Table, m: usize, n: i64) {
        if self.sched.boundary(self.id, "group append") {
            return;
        }
        let rows = 1 + self.sched.below(3) as i64;
        let ids: Vec<i64> = (0..rows)
            .map(|j| 500_000_000 + (m as i64) * 1_000_000 + n * 10 + j)
            .collect();
        let app = format!("g{}", m / 2);
        let version = {
            let mut model = self.model();
            model.set(&ids, Row::Pending);
            model.set_value(&ids, 0);
            model.next_app_version(&app)
        };
        let mut unknown = false;
        for _attempt in 0..6 {
            // Default options (the default retry policy): what lets a write join a group.
            let r = batch(&ids, 0).and_then(|b| {
                table.append(
                    [b],
                    &WriteOptions::default()
                        .with_app_transaction(AppTransaction::new(app.clone(), version)),
                )
            });
            let crashed = self.crashed(table);
            if let Ok(WriteOutcome::Skipped {
                recorded_version, ..
            }) = &r
                && *recorded_version != version
            {
                // The other thread's later version is recorded: this append is not in the
                // table now, unless an earlier attempt of unknown outcome landed before it.
                let to = if unknown { Row::Unknown } else { Row::Failed };
                self.model().set(&ids, to);
                return;
            }
            // Otherwise as any writer: skipped at its own version means it landed.
            if self.settle_append(classify(&r, crashed), &ids, &app, version, &mut unknown) {
                return;
            }
            if self.sched.boundary(self.id, "retry group append") {
                return;
            }
        }
    }

    fn dml(&self, table: &mut Table) {
        let kind = self.sched.below(3);
        let mut acked = self.model().acked_ids();
        // Wait (a bounded number of turns) for a writer to acknowledge a row.
        for _ in 0..30 {
            if !acked.is_empty() {
                break;
            }
            if self.sched.boundary(self.id, "dml (waiting for rows)") {
                return;
            }
            acked = self.model().acked_ids();
        }
        if acked.is_empty() {
            return;
        }
        let target = acked[self.sched.below(acked.len() as u64) as usize];
        match kind {
            0 => {
                if self.sched.boundary(self.id, "delete") {
                    return;
                }
                // Half the DELETEs write their deletion vector to a file (as Delta Spark
                // does), the others inline it in the log.
                let to_file = self.sched.below(2) == 0;
                let r = table.delete_str(
                    &format!("id = {target}"),
                    &self.options().with_dv_files_only(to_file),
                );
                let crashed = self.crashed(table);
                let mut m = self.model();
                match classify(&r, crashed) {
                    Outcome::Acked => m.set(&[target], Row::Deleted),
                    Outcome::Unknown if m.rows.get(&target) == Some(&Row::Acked) => {
                        m.set(&[target], Row::MaybeDeleted);
                    }
                    _ => {}
                }
            }
            1 => {
                if self.sched.boundary(self.id, "update") {
                    return;
                }
                let r = table.update_str(
                    "v = v + 1",
                    Some(&format!("id = {target}")),
                    &self.options(),
                );
                let crashed = self.crashed(table);
                // One DML actor: its operations are sequential, so the model applies
                // them in order; an unknown outcome keeps both possible values.
                let outcome = classify(&r, crashed);
                self.model().apply(target, outcome, |v| v + 1);
            }
            _ => {
                if self.sched.boundary(self.id, "merge") {
                    return;
                }
                let fresh: Vec<i64> = {
                    let m = self.model();
                    let base = 900_000_000 + m.rows.range(900_000_000..).count() as i64;
                    (base..base + 2).collect()
                };
                {
                    let mut m = self.model();
                    m.set(&fresh, Row::Pending);
                    m.set_value(&fresh, 7);
                }
                let mut ids = vec![target];
                ids.extend(&fresh);
                let r = batch(&ids, 7).and_then(|b| {
                    table
                        .merge([b], "t.id = s.id")
                        .when("MATCHED THEN UPDATE SET *")
                        .when("NOT MATCHED AND s.id >= 900000000 THEN INSERT *")
                        .execute(&self.options())
                });
                let crashed = self.crashed(table);
                let outcome = classify(&r, crashed);
                let to = match outcome {
                    Outcome::Acked => Row::Acked,
                    Outcome::Unknown => Row::Unknown,
                    Outcome::Failed => Row::Failed,
                };
                let mut m = self.model();
                m.set(&fresh, to);
                m.apply(target, outcome, |_| 7);
            }
        }
    }

    fn maintain(&self, table: &mut Table) {
        // OPTIMIZE (which leaves files for VACUUM) and VACUUM most often.
        let kind = [0, 0, 0, 1, 1, 2, 2, 3, 4][self.sched.below(9) as usize];
        let what = [
            "optimize",
            "vacuum lite",
            "vacuum full",
            "checkpoint",
            "log cleanup",
        ];
        if self.sched.boundary(self.id, what[kind as usize]) {
            return;
        }
        // Maintenance changes no row; the oracle judges what it leaves behind.
        let _ = match kind {
            0 => table.optimize(&OptimizeOptions::default()).map(|_| ()),
            1 => table
                .vacuum(&VacuumOptions::default().with_mode(VacuumMode::Lite))
                .map(|_| ()),
            2 => table
                .vacuum(&VacuumOptions::default().with_mode(VacuumMode::Full))
                .map(|_| ()),
            3 => table.checkpoint(&CheckpointConfig::default()).map(|_| ()),
            _ => table.cleanup_log(false).map(|_| ()),
        };
        self.crashed(table);
    }

    fn read(&self, table: &mut Table) {
        if self.sched.boundary(self.id, "read") {
            return;
        }
        let latest = table.snapshot();
        let version = latest.as_ref().map(Snapshot::version).ok();
        if let Ok(s) = latest
            && let Ok(ids) = rows_of(s.clone())
        {
            self.model().reads.push((s.version(), ids));
        }
        if let Some(v) = version.filter(|v| *v > 0) {
            let older = self.sched.below(v);
            if let Ok(s) = table.snapshot_at(VersionSpec::Version(older))
                && let Ok(ids) = rows_of(s)
            {
                self.model().reads.push((older, ids));
            }
        }
        self.crashed(table);
    }
}
