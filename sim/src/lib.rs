//! A deterministic simulator for alluvium (issue 30): whole workloads of concurrent
//! writers, DML, maintenance and readers, under a seeded scheduler, over a simulated store
//! that injects errors, ambiguous puts, process crashes and machine crashes, checked at the
//! end by an oracle. One seed replays one run exactly: [`run_seed`] returns the hash of its
//! trace, and a failing seed is shrunk to the shortest failing prefix ([`minimise`]).
//!
//! What this crate owns:
//! * the simulated store ([`SimStore`]; `store`): the storage contract over an ordered map,
//!   object-store or local-fs durability per seed, faults per operation;
//! * the scheduler and the clock (`sched`): actors are OS threads but one runs at a time;
//!   every storage operation is a yield point where the seed picks the next actor;
//! * the actors (`actors`) and the model of what they were told (`model`);
//! * the state-store actor and its oracle (`kv`): on some seeds a keyed state store
//!   (`alluvium-state`) under the hidden directory `_kv`, whose final state is checked
//!   against the simulator's own fold of the events put;
//! * the oracle (`oracle`), independent of the engine's code: it reads the log with its
//!   own JSON parsing, replays it itself, and decodes the rows of a version itself
//!   (`decode`: data files through the `parquet` crate's Arrow reader, deletion vectors
//!   and checkpoints by hand), and judges the model and every reader's snapshot against
//!   that decode. The engine's own load and scan are compared with it as checks of the
//!   engine, never as the judge.
//!
//! What it must not know: the engine's internals. It drives alluvium only through the
//! public API (`Table`, scans, write options), plus what the cargo feature `planted-bugs`
//! adds for it: the planted-bug switch (`alluvium::planted`) that its tests turn on one bug
//! at a time to prove the oracle finds each, and the seeding of the engine's ids.
//!
//! Determinism. Each actor runs its whole body inside `install` of its own one-thread rayon
//! pool (threads `sim-actor-N`), and its `Table` uses that pool, so every storage call of
//! the actor, the engine's parallel sections included, happens on that one thread, which
//! knows its actor by a thread-local. The engine is configured for determinism: a retry
//! policy with no sleeping backoff and a budget of attempts (except for the group's
//! members, whose writes join a group only with the default policy: their backoff sleeps,
//! with the token, and changes no order), the store's clock simulated. The engine's UUIDs
//! (file names, transaction ids) come from a stream seeded per actor thread
//! (`alluvium::storage_ids`, with the same cargo feature as the planted bugs): the engine
//! visits files in name order (scans, OPTIMIZE, VACUUM), so with random names a run would
//! not be a function of its seed. The trace still numbers every
//! UUID by its first appearance, which keeps it readable.
//!
//! Group commit: on 2 seeds in 5, three writers (the group; members 0 and 1 one
//! application) share one table handle with group commit on, as threads of one process;
//! every other actor has its own handle (its own process). A crash of any member is the
//! process's: the scheduler marks every member crashed (a member asleep in the queue too:
//! it wakes when the dead leader's commit fails, for its calls fail as every call of a dead
//! process does, so no wait is left without a waker), and each restarts on the process's
//! one new handle. A member that sleeps in the
//! group-commit queue tells the scheduler through the engine's hook
//! (`alluvium::group_waits`, same cargo feature), which takes it out of the running until
//! the actor that wakes it says so; then it waits for the token like any actor. The shared
//! handle has no thread pool of its own, so each member's parallel sections run on the
//! member's own pool, and the leader commits the batch on its own thread.
//!
//! Long runs (for releases): `ALLUVIUM_SIM_SEEDS=0..100000 cargo test -p alluvium-sim
//! --release -- --ignored` runs the seeds of the range (see `tests/seeds.rs`), with 4–16
//! writers (the fixed 200 seeds keep 4–8, for the debug build's time).
#![deny(missing_docs)]

mod actors;
mod decode;
mod kv;
mod model;
mod oracle;
mod rng;
mod sched;
mod store;

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

pub use sched::FaultRates;
pub use store::SimStore;

use actors::{Actor, Role};
use model::Model;
use rng::Rng;
use sched::Scheduler;

/// How a run is sized.
#[derive(Debug, Clone)]
pub struct Config {
    /// Stop the run at this step by crashing everything (then check the oracle).
    pub max_steps: u64,
    /// Writers: between `writers.0` and `writers.1` (inclusive), chosen per seed; one fewer
    /// on a seed that runs a group.
    pub writers: (usize, usize),
    /// Appends per writer.
    pub appends: u32,
    /// Operations of the DML and reader actors each (twice as many for maintenance).
    pub others: u32,
    /// The share of seeds that run a group: `group_members` writers (as many appends each
    /// as the other writers) sharing one table handle with group commit on, members 0
    /// and 1 of one application.
    pub group_chance: f64,
    /// Members of the group, when a seed runs one.
    pub group_members: usize,
    /// The share of seeds that run the state actor (a keyed state store under `_kv`).
    pub state_chance: f64,
    /// Operations (puts and syncs) of the state actor.
    pub state_ops: u32,
    /// Fault rates.
    pub rates: FaultRates,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_steps: u64::MAX,
            writers: (4, 8),
            appends: 4,
            others: 5,
            group_chance: 0.4,
            group_members: 3,
            state_chance: 0.5,
            state_ops: 6,
            rates: FaultRates::default(),
        }
    }
}

/// A passing run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The hash of the canonical trace: equal for equal seeds.
    pub trace_hash: u64,
    /// Steps taken (storage operations and operation boundaries).
    pub steps: u64,
    /// The table's last version.
    pub versions: u64,
    /// Readers' snapshots the oracle checked against its own decode of their versions,
    /// and those it could not (older than the retention window with a file gone, or
    /// their commits removed below the checkpoint its replay starts from).
    pub reads: (u64, u64),
    /// Process crashes and machine crashes injected.
    pub crashes: (u64, u64),
    /// Whether the seed chose local-fs durability.
    pub local_fs: bool,
    /// Storage calls made by threads that were no actor while actors ran (0 when every
    /// engine call stayed on its actor's thread).
    pub unscheduled: u64,
    /// The state actor's puts acknowledged, puts retried after an attempt of unknown
    /// outcome, puts left unknown, and syncs acknowledged (zeros on a seed without it).
    pub state: (u64, u64, u64, u64),
    /// Simulated time the run spanned, in milliseconds.
    pub simulated_ms: i64,
    /// The canonical trace (one line per step).
    pub trace: Vec<String>,
}

/// A failing run.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The seed.
    pub seed: u64,
    /// The step limit of the run.
    pub max_steps: u64,
    /// The first violation the oracle found (or the panic).
    pub message: String,
    /// The canonical trace.
    pub trace: Vec<String>,
    /// Steps taken.
    pub steps: u64,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "seed {} (max_steps {}, {} steps): {}",
            self.seed, self.max_steps, self.steps, self.message
        )?;
        for line in &self.trace {
            writeln!(f, "  {line}")?;
        }
        Ok(())
    }
}

/// Runs one seed and checks the oracle.
///
/// # Errors
/// The [`Failure`] the oracle (or a panic of an actor) reports.
pub fn run_seed(seed: u64, config: &Config) -> Result<Summary, Failure> {
    let mut setup = Rng::new(seed);
    let local_fs = setup.chance(0.5);
    let (lo, hi) = config.writers;
    let writers = lo + setup.below((hi.max(lo) - lo + 1) as u64) as usize;
    let interval = 2 + setup.below(7);
    let cdf = setup.chance(0.3);
    // Drawn apart from the choices above, so that adding the group left them as they were.
    let members = if Rng::new(seed ^ 0x67c0).chance(config.group_chance) {
        config.group_members
    } else {
        0
    };
    // A group's seed has one lone writer fewer (at least one): the group's appends take
    // its place, which keeps the run's length near that of the other seeds.
    let writers = if members > 0 {
        writers.saturating_sub(1).max(1)
    } else {
        writers
    };
    // Drawn apart from the choices above too, so that adding the state actor left them.
    let state = Rng::new(seed ^ 0x57a7).chance(config.state_chance);
    // A state seed has one lone writer fewer too (at least one), for the same reason.
    let writers = if state {
        writers.saturating_sub(1).max(1)
    } else {
        writers
    };
    let mut roles: Vec<Role> = (0..writers).map(Role::Writer).collect();
    roles.extend([Role::Dml, Role::Maintenance, Role::Reader]);
    roles.extend((0..members).map(Role::Member));
    if state {
        roles.push(Role::State);
    }

    let sched = Arc::new(Scheduler::new(
        seed,
        roles.len(),
        config.max_steps,
        local_fs,
        config.rates,
    ));
    let store = Arc::new(SimStore::new(sched.clone(), local_fs));
    let fail = |message: String, sched: &Scheduler| {
        let (trace, steps, ..) = sched.results();
        Failure {
            seed,
            max_steps: config.max_steps,
            message,
            trace,
            steps,
        }
    };
    // The table properties, spelled as a user sets them (the simulator drives the public
    // API only):
    let props = [
        // vocabulary: a table property set as a user would
        ("delta.enableDeletionVectors", "true".to_string()),
        // vocabulary: a table property set as a user would
        ("delta.checkpointInterval", interval.to_string()),
        (
            // vocabulary: a table property set as a user would
            "delta.deletedFileRetentionDuration",
            "interval 1 hours".to_string(),
        ),
        // vocabulary: a table property set as a user would
        ("delta.logRetentionDuration", "interval 2 hours".to_string()),
        // vocabulary: a table property set as a user would
        ("delta.enableChangeDataFeed", cdf.to_string()),
    ];
    // The engine's UUIDs (file names, transaction ids) come from the seed too: each
    // thread that works for the run draws them from its own seeded stream.
    alluvium::storage_ids::seed_thread(Some(seed ^ 0x5eed));
    let created = alluvium::Table::from_store(store.clone()).create(&actors::schema(), &[], props);
    let kv_created = if state { kv::create(&store) } else { Ok(()) };
    alluvium::storage_ids::seed_thread(None);
    created.map_err(|e| fail(format!("creating the table: {e}"), &sched))?;
    kv_created.map_err(|e| fail(e, &sched))?;

    // The group's handle: group commit on (the default), no thread pool of its own.
    let shared = (members > 0).then(|| Arc::new(actors::Process::new(store.clone())));
    let group: Vec<usize> = (0..roles.len())
        .filter(|i| matches!(roles[*i], Role::Member(_)))
        .collect();
    sched.share_process(&group);
    let model = Arc::new(Mutex::new(Model::default()));
    let panics = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut threads = Vec::new();
    for (i, role) in roles.iter().enumerate() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .thread_name(move |_| format!("sim-actor-{i}"))
            .build()
            .map_err(|e| fail(format!("building a pool: {e}"), &sched))?;
        let actor = Actor {
            id: i,
            role: *role,
            ops: match role {
                Role::Writer(_) | Role::Member(_) => config.appends,
                Role::Maintenance => 2 * config.others,
                Role::State => config.state_ops,
                _ => config.others,
            },
            sched: sched.clone(),
            store: store.clone(),
            model: model.clone(),
            pool: Arc::new(pool),
            shared: match role {
                Role::Member(_) => shared.clone(),
                _ => None,
            },
            generation: std::sync::atomic::AtomicU64::new(0),
        };
        let panics = panics.clone();
        threads.push(std::thread::spawn(move || {
            let pool = actor.pool.clone();
            pool.install(|| {
                sched::set_actor(Some(actor.id));
                alluvium::group_waits::observe_thread(Some(Arc::new(sched::QueueWaits(
                    actor.sched.clone(),
                ))));
                alluvium::storage_ids::seed_thread(Some(
                    seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (actor.id as u64 + 1),
                ));
                actor.sched.wait_turn(actor.id);
                let r = std::panic::catch_unwind(AssertUnwindSafe(|| actor.run()));
                if let Err(p) = r {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    panics
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(format!("actor {} panicked: {msg}", actor.id));
                    actor.sched.abort();
                }
                sched::set_actor(None);
                alluvium::group_waits::observe_thread(None);
                alluvium::storage_ids::seed_thread(None);
                actor.sched.finish(actor.id);
            });
        }));
    }
    sched.start();
    sched.wait_all_finished();
    for t in threads {
        let _ = t.join();
    }
    if let Some(p) = panics.lock().unwrap_or_else(|e| e.into_inner()).first() {
        return Err(fail(p.clone(), &sched));
    }
    if let Some(d) = sched.deadlock() {
        return Err(fail(d, &sched));
    }
    let mut model = std::mem::take(&mut *model.lock().unwrap_or_else(|e| e.into_inner()));
    model.settle_pending();
    let verdict = oracle::check(&store, &model, sched.now_ms()).map_err(|m| fail(m, &sched))?;
    if state {
        kv::check(&store, &model.kv).map_err(|m| fail(m, &sched))?;
    }
    let (trace, steps, process, machine, unscheduled) = sched.results();
    Ok(Summary {
        trace_hash: sched::hash_trace(&trace),
        steps,
        versions: verdict.last,
        reads: (verdict.reads_checked, verdict.reads_skipped),
        crashes: (process, machine),
        local_fs,
        unscheduled,
        state: (
            model.kv_counts.puts,
            model.kv_counts.retried,
            model.kv_counts.unknown,
            model.kv_counts.syncs,
        ),
        simulated_ms: sched.now_ms() - sched::CLOCK_START_MS,
        trace,
    })
}

/// For a failing seed, the shortest failing run found by binary search over the step
/// limit (a run stopped at step K crashes everything there, then faces the oracle): its
/// trace is the shortest failing trace. `None` if the seed passes.
pub fn minimise(seed: u64, config: &Config) -> Option<Failure> {
    let full = run_seed(seed, config).err()?;
    let (mut lo, mut hi) = (1, full.steps.max(1));
    let mut best = full;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let c = Config {
            max_steps: mid,
            ..config.clone()
        };
        match run_seed(seed, &c) {
            Err(f) => {
                hi = mid;
                best = f;
            }
            Ok(_) => lo = mid + 1,
        }
    }
    Some(best)
}

/// The seeds named by `ALLUVIUM_SIM_SEEDS` (`a..b`, or one number), or `default`.
pub fn seeds_from_env(default: std::ops::Range<u64>) -> std::ops::Range<u64> {
    let Ok(text) = std::env::var("ALLUVIUM_SIM_SEEDS") else {
        return default;
    };
    match text.split_once("..") {
        Some((a, b)) => match (a.trim().parse(), b.trim().parse()) {
            (Ok(a), Ok(b)) => a..b,
            _ => default,
        },
        None => text.trim().parse().map_or(default, |a: u64| a..a + 1),
    }
}
