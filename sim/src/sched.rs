//! The seeded scheduler: one actor runs at a time, and every storage operation is a point
//! where the running actor parks and the seed decides who runs next.
//!
//! Actors are OS threads (each runs its body on its own one-thread rayon pool, so the
//! engine's parallel sections run on that thread too). The token is `running` under one
//! mutex with one condvar, and no wait has a timeout: whoever does not hold the token waits
//! for it. The scheduler also owns the simulated clock (advanced 0–2 s per step, and by
//! explicit jumps while every actor is between operations, so that retention can expire
//! without overtaking an operation in flight), the fault plan of each step, and the trace.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::rng::Rng;

thread_local! {
    /// The actor the current thread runs (set at the start of its body); `None` on every
    /// other thread (setup and the oracle), whose storage calls pass unscheduled.
    static ACTOR: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Marks the current thread as running actor `id` (or none).
pub(crate) fn set_actor(id: Option<usize>) {
    ACTOR.with(|a| a.set(id));
}

fn current_actor() -> Option<usize> {
    ACTOR.with(Cell::get)
}

/// A fault injected into one storage operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// Fails without effect; `definite` errors prove it (no space), the others do not.
    ErrorBefore { definite: bool },
    /// Takes effect, then fails (a lost response: the ambiguous put).
    ErrorAfter,
    /// The actor's process dies before the operation takes effect.
    CrashBefore,
    /// The actor's process dies after the operation took effect, before it hears so.
    CrashAfter,
}

/// What a storage operation may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Not an actor's call (setup, oracle): run it, unscheduled and unrecorded.
    Free,
    /// Run it, with this fault if any.
    Run(Option<Fault>),
    /// The actor's process is dead: fail without effect.
    Dead,
    /// The machine crashed now (local-fs mode): lose what is not durable (the store tears
    /// with this random number), then fail without effect.
    MachineCrash(u64),
}

/// How often each fault is injected, per storage operation.
#[derive(Debug, Clone, Copy)]
pub struct FaultRates {
    /// Error before the effect.
    pub error_before: f64,
    /// Effect, then error.
    pub error_after: f64,
    /// Process crash of the running actor (before or after the effect, evenly).
    pub crash: f64,
    /// Machine crash (local-fs mode only).
    pub machine_crash: f64,
    /// Starting to drain at an operation boundary: actors reaching a boundary wait until
    /// all have, then the clock jumps 1–3 hours (past the file retention) with nothing in
    /// flight.
    pub long_jump: f64,
    /// A clock jump at an operation boundary, as long as no operation in flight then spans
    /// more than [`MAX_OPERATION_SPAN_MS`] of simulated time.
    pub clock_jump: f64,
}

impl Default for FaultRates {
    fn default() -> Self {
        FaultRates {
            error_before: 0.01,
            error_after: 0.01,
            crash: 0.006,
            machine_crash: 0.002,
            long_jump: 0.02,
            clock_jump: 0.15,
        }
    }
}

/// The longest simulated time one operation may span, clock jumps included: half the
/// table's file retention (1 hour). Delta's retention assumes that no transaction runs
/// longer than it; jumps never break that assumption, so VACUUM deleting a file an
/// operation in flight still needs is a finding, not an artefact.
pub(crate) const MAX_OPERATION_SPAN_MS: i64 = 30 * 60_000;

#[derive(Debug, Clone, Copy)]
struct Actor {
    crashed: bool,
    finished: bool,
    /// Held at an operation boundary while the scheduler drains for a long clock jump.
    held: bool,
    /// When its current operation began (simulated clock).
    op_start_ms: i64,
    /// Asleep in the group-commit queue on this key until another actor wakes it: not
    /// runnable.
    blocked: Option<usize>,
    /// The process the actor is a thread of, when it shares one with other actors (the
    /// group's members): a process crash kills every thread of it.
    process: Option<usize>,
}

#[derive(Debug)]
struct State {
    rng: Rng,
    running: Option<usize>,
    actors: Vec<Actor>,
    step: u64,
    max_steps: u64,
    stopped: bool,
    /// Draining: actors reaching a boundary are held until all are, then the clock jumps.
    draining: bool,
    local_fs: bool,
    rates: FaultRates,
    trace: Vec<String>,
    names: HashMap<String, usize>,
    unscheduled: u64,
    machine_crashes: u64,
    process_crashes: u64,
    /// Set when no actor could run while some had not finished (a wait the scheduler
    /// was not told about, or a wake it missed): the run is stopped and fails.
    deadlock: Option<String>,
}

/// The scheduler of one run.
#[derive(Debug)]
pub(crate) struct Scheduler {
    state: Mutex<State>,
    cv: Condvar,
    clock_ms: AtomicI64,
}

/// The simulated clock starts here (2023-11-14), like the engine's own test clocks.
pub(crate) const CLOCK_START_MS: i64 = 1_700_000_000_000;

/// Replaces every UUID in `s` by `#n`, `n` its order of first appearance in the run.
fn canonical(s: &str, names: &mut HashMap<String, usize>) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if i + 36 <= b.len() && is_uuid(&b[i..i + 36]) {
            let key = &s[i..i + 36];
            let n = names.len();
            let n = *names.entry(key.to_string()).or_insert(n);
            out.push_str(&format!("#{n}"));
            i += 36;
        } else {
            let ch = s[i..].chars().next().unwrap_or('?');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn is_uuid(b: &[u8]) -> bool {
    b.iter().enumerate().all(|(i, c)| match i {
        8 | 13 | 18 | 23 => *c == b'-',
        _ => c.is_ascii_hexdigit(),
    })
}

impl Scheduler {
    pub(crate) fn new(
        seed: u64,
        actors: usize,
        max_steps: u64,
        local_fs: bool,
        rates: FaultRates,
    ) -> Scheduler {
        Scheduler {
            state: Mutex::new(State {
                rng: Rng::new(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0xa11u64),
                running: None,
                actors: vec![
                    Actor {
                        crashed: false,
                        finished: false,
                        held: false,
                        op_start_ms: CLOCK_START_MS,
                        blocked: None,
                        process: None,
                    };
                    actors
                ],
                step: 0,
                max_steps,
                stopped: false,
                draining: false,
                local_fs,
                rates,
                trace: Vec::new(),
                names: HashMap::new(),
                unscheduled: 0,
                machine_crashes: 0,
                process_crashes: 0,
                deadlock: None,
            }),
            cv: Condvar::new(),
            clock_ms: AtomicI64::new(CLOCK_START_MS),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking actor is reported as a failure of the run; the state stays usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The simulated clock.
    pub(crate) fn now_ms(&self) -> i64 {
        self.clock_ms.load(Ordering::SeqCst)
    }

    /// Hands the token to a live actor chosen by the seed and waits until it comes back to
    /// `me`.
    fn pass_token<'a>(&'a self, mut st: MutexGuard<'a, State>, me: usize) -> MutexGuard<'a, State> {
        self.pick_next(&mut st);
        self.await_token(st, me)
    }

    /// Waits until the token is `me`'s, or the run is stopped (then every actor runs on
    /// without it: its storage calls fail, and its operations end).
    fn await_token<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        me: usize,
    ) -> MutexGuard<'a, State> {
        while st.running != Some(me) && !st.stopped {
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st
    }

    /// Gives the token to a live actor the seed picks, skipping actors held at a boundary
    /// while the scheduler drains and actors asleep in the group-commit queue; once every
    /// live actor is held, the clock takes a long jump (nothing is in flight) and all are
    /// released.
    fn pick_next(&self, st: &mut State) {
        let eligible = |st: &State| -> Vec<usize> {
            (0..st.actors.len())
                .filter(|i| {
                    let a = &st.actors[*i];
                    !a.finished && !a.held && a.blocked.is_none()
                })
                .collect()
        };
        let mut live = eligible(st);
        if live.is_empty() && st.draining {
            let jump = 3_600_000 + st.rng.below(7_200_000) as i64;
            self.clock_ms.fetch_add(jump, Ordering::SeqCst);
            let now = self.now_ms();
            for a in &mut st.actors {
                a.held = false;
                a.op_start_ms = now;
            }
            st.draining = false;
            let line = format!(
                "{} every actor between operations: clock +{}m",
                st.step,
                jump / 60_000
            );
            st.trace.push(line);
            live = eligible(st);
        }
        if live.is_empty() && st.actors.iter().any(|a| !a.finished) && !st.stopped {
            // Whoever could wake the sleepers is not running: fail the run rather than hang.
            let asleep: Vec<usize> = (0..st.actors.len())
                .filter(|i| st.actors[*i].blocked.is_some())
                .collect();
            st.deadlock = Some(format!(
                "deadlock at step {}: no actor can run (asleep in the group-commit queue: {asleep:?})",
                st.step
            ));
            st.stopped = true;
            for a in &mut st.actors {
                a.crashed = true;
            }
        }
        let pick = st.rng.below(live.len() as u64) as usize;
        st.running = live.get(pick).copied();
        self.cv.notify_all();
    }

    /// Waits for the first token (at the start of an actor's body).
    pub(crate) fn wait_turn(&self, me: usize) {
        let st = self.lock();
        drop(self.await_token(st, me));
    }

    /// Gives the first token (all actors exist).
    pub(crate) fn start(&self) {
        let mut st = self.lock();
        let n = st.actors.len() as u64;
        let first = st.rng.below(n) as usize;
        st.running = Some(first);
        self.cv.notify_all();
    }

    /// Marks `me` finished and passes the token on.
    pub(crate) fn finish(&self, me: usize) {
        let mut st = self.lock();
        if let Some(a) = st.actors.get_mut(me) {
            a.finished = true;
        }
        self.pick_next(&mut st);
    }

    /// Waits until every actor finished.
    pub(crate) fn wait_all_finished(&self) {
        let mut st = self.lock();
        while st.actors.iter().any(|a| !a.finished) {
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// One step: advances the clock, and stops the run (crashing everything) at
    /// `max_steps`. Returns whether the run is stopped.
    fn tick(&self, st: &mut State) -> bool {
        if st.stopped {
            return true;
        }
        st.step += 1;
        let dt = st.rng.below(2_001) as i64;
        self.clock_ms.fetch_add(dt, Ordering::SeqCst);
        if st.step >= st.max_steps {
            st.stopped = true;
            for a in &mut st.actors {
                a.crashed = true;
            }
            // Actors waiting for the token run on now.
            self.cv.notify_all();
            return true;
        }
        false
    }

    /// The gate of a storage operation `op` on `path` (see [`Gate`]).
    pub(crate) fn gate(&self, op: &str, path: &str) -> Gate {
        let Some(me) = current_actor() else {
            let mut st = self.lock();
            if st.actors.iter().any(|a| !a.finished) && st.running.is_some() {
                st.unscheduled += 1;
            }
            return Gate::Free;
        };
        let mut st = self.lock();
        if st.actors[me].crashed || st.stopped {
            return Gate::Dead;
        }
        st = self.pass_token(st, me);
        if st.actors[me].crashed {
            return Gate::Dead;
        }
        if self.tick(&mut st) {
            st.machine_crashes += u64::from(st.local_fs);
            let n = st.rng.next_u64();
            let line = format!("{} a{me} {op} {path} STOP", st.step);
            let line = canonical(&line, &mut st.names);
            st.trace.push(line);
            return if st.local_fs {
                Gate::MachineCrash(n)
            } else {
                Gate::Dead
            };
        }
        // One roll picks at most one fault, each kind taking its share of [0, 1).
        let r = st.rates;
        let roll = st.rng.next_u64() as f64 / u64::MAX as f64;
        let error_after = r.error_before + r.error_after;
        let crash = error_after + r.crash;
        let machine = crash + if st.local_fs { r.machine_crash } else { 0.0 };
        let fault = if roll < r.error_before {
            Some(Fault::ErrorBefore {
                definite: st.rng.chance(0.3),
            })
        } else if roll < error_after {
            Some(Fault::ErrorAfter)
        } else if roll < crash {
            // The process dies: every live thread of it (the group's members share one).
            let process = st.actors[me].process;
            st.actors[me].crashed = true;
            for i in 0..st.actors.len() {
                let a = &mut st.actors[i];
                if i != me && process.is_some() && a.process == process && !a.finished {
                    a.crashed = true;
                    let asleep = if a.blocked.is_some() { " (asleep)" } else { "" };
                    let line = format!("{} a{me} crash kills a{i}{asleep} too", st.step);
                    st.trace.push(line);
                }
            }
            st.process_crashes += 1;
            if st.rng.chance(0.5) {
                Some(Fault::CrashBefore)
            } else {
                Some(Fault::CrashAfter)
            }
        } else if roll < machine {
            for a in &mut st.actors {
                a.crashed = !a.finished;
            }
            st.machine_crashes += 1;
            let n = st.rng.next_u64();
            let line = format!("{} a{me} {op} {path} MACHINE-CRASH", st.step);
            let line = canonical(&line, &mut st.names);
            st.trace.push(line);
            return Gate::MachineCrash(n);
        } else {
            None
        };
        Gate::Run(fault)
    }

    /// Records the outcome of the step the running actor just took.
    pub(crate) fn record(&self, op: &str, path: &str, fault: Option<Fault>, outcome: &str) {
        let Some(me) = current_actor() else {
            return;
        };
        let mut st = self.lock();
        let line = match fault {
            Some(f) => format!("{} a{me} {op} {path} {outcome} [{f:?}]", st.step),
            None => format!("{} a{me} {op} {path} {outcome}", st.step),
        };
        let line = canonical(&line, &mut st.names);
        st.trace.push(line);
    }

    /// A yield point between two operations of actor `me`, which is about to start `what`.
    /// The clock may jump here, by at most what keeps every other actor's operation in
    /// flight within [`MAX_OPERATION_SPAN_MS`]. Returns whether the run is stopped (the
    /// actor should end).
    pub(crate) fn boundary(&self, me: usize, what: &str) -> bool {
        let mut st = self.lock();
        if st.stopped {
            return true;
        }
        let p = st.rates.long_jump;
        if !st.draining && st.rng.chance(p) {
            st.draining = true;
        }
        if st.draining {
            st.actors[me].held = true;
        }
        st = self.pass_token(st, me);
        if self.tick(&mut st) {
            return true;
        }
        let now = self.now_ms();
        let oldest = (0..st.actors.len())
            .filter(|i| *i != me && !st.actors[*i].finished)
            .map(|i| st.actors[i].op_start_ms)
            .min()
            .unwrap_or(now);
        let budget = MAX_OPERATION_SPAN_MS - (now - oldest);
        let mut jump = 0;
        let p = st.rates.clock_jump;
        if budget > 60_000 && st.rng.chance(p) {
            jump = 60_000 + st.rng.below((budget - 60_000) as u64) as i64;
            self.clock_ms.fetch_add(jump, Ordering::SeqCst);
        }
        st.actors[me].op_start_ms = now + jump;
        let line = if jump > 0 {
            format!("{} a{me} begin {what} (clock +{}s)", st.step, jump / 1_000)
        } else {
            format!("{} a{me} begin {what}", st.step)
        };
        st.trace.push(line);
        false
    }

    /// Makes actors `ids` threads of one process: a crash of any kills them all.
    pub(crate) fn share_process(&self, ids: &[usize]) {
        let mut st = self.lock();
        let process = ids.first().copied();
        for i in ids {
            if let Some(a) = st.actors.get_mut(*i) {
                a.process = process;
            }
        }
    }

    /// Whether `me` crashed (and clears it: the actor restarts now).
    pub(crate) fn take_crash(&self, me: usize) -> bool {
        let mut st = self.lock();
        let was = st.actors[me].crashed && !st.stopped;
        if !st.stopped {
            st.actors[me].crashed = false;
        }
        was || st.stopped
    }

    /// Whether the run is stopped.
    pub(crate) fn stopped(&self) -> bool {
        self.lock().stopped
    }

    /// A random number in `0..n` for the running actor's workload choices.
    pub(crate) fn below(&self, n: u64) -> u64 {
        self.lock().rng.below(n)
    }

    /// Ends the run for a reason other than its steps (an actor panicked): everything
    /// crashes and every actor winds down.
    pub(crate) fn abort(&self) {
        let mut st = self.lock();
        st.stopped = true;
        for a in &mut st.actors {
            a.crashed = true;
        }
        self.cv.notify_all();
    }

    /// The deadlock that stopped the run, if one did.
    pub(crate) fn deadlock(&self) -> Option<String> {
        self.lock().deadlock.clone()
    }

    /// Whether `me` holds the token, as every actor that runs does until the run stops (a
    /// crashed actor keeps it until its next boundary). If not, the run stops and fails
    /// rather than let two actors run: waiting for the token here could hang, since the
    /// queue's hooks are called with a queue lock held.
    fn holds_token(&self, st: &mut State, me: usize) -> bool {
        if st.stopped {
            return false;
        }
        if st.running == Some(me) {
            return true;
        }
        st.deadlock = Some(format!(
            "step {}: a{me} used the group-commit queue without the token",
            st.step
        ));
        st.stopped = true;
        for a in &mut st.actors {
            a.crashed = true;
        }
        self.cv.notify_all();
        false
    }

    /// The running actor `me` is about to sleep in the group-commit queue on `key`: it is
    /// not runnable until an actor wakes `key`, and the token passes on now.
    fn will_wait(&self, me: usize, key: usize) {
        let mut st = self.lock();
        if !self.holds_token(&mut st, me) {
            return;
        }
        st.actors[me].blocked = Some(key);
        let line = format!("{} a{me} waits in the group-commit queue", st.step);
        st.trace.push(line);
        self.pick_next(&mut st);
    }

    /// Actor `me` is about to wake every actor asleep on `key`: they are runnable again
    /// (each runs when the seed picks it).
    fn wake(&self, me: usize, key: usize) {
        let mut st = self.lock();
        let traced = self.holds_token(&mut st, me);
        for i in 0..st.actors.len() {
            if st.actors[i].blocked == Some(key) {
                st.actors[i].blocked = None;
                if traced {
                    let line = format!("{} a{me} wakes a{i}", st.step);
                    st.trace.push(line);
                }
            }
        }
    }

    /// Actor `me` woke from its sleep in the group-commit queue: it waits for the token.
    fn resumed(&self, me: usize) {
        let st = self.lock();
        drop(self.await_token(st, me));
    }

    /// The trace so far, the steps taken, crashes (process, machine) and unscheduled calls.
    pub(crate) fn results(&self) -> (Vec<String>, u64, u64, u64, u64) {
        let st = self.lock();
        (
            st.trace.clone(),
            st.step,
            st.process_crashes,
            st.machine_crashes,
            st.unscheduled,
        )
    }
}

/// The scheduler as the engine's observer of the group-commit queue's waits
/// (`alluvium::group_waits`), registered on every actor thread.
pub(crate) struct QueueWaits(pub(crate) std::sync::Arc<Scheduler>);

impl alluvium::group_waits::WaitObserver for QueueWaits {
    fn will_wait(&self, key: usize) {
        if let Some(me) = current_actor() {
            self.0.will_wait(me, key);
        }
    }

    fn wake(&self, key: usize) {
        if let Some(me) = current_actor() {
            self.0.wake(me, key);
        }
    }

    fn resumed(&self, _key: usize) {
        if let Some(me) = current_actor() {
            self.0.resumed(me);
        }
    }
}

/// FNV-1a over the trace lines (UUIDs already numbered by first appearance): stable
/// across runs, platforms and Rust versions.
pub(crate) fn hash_trace(trace: &[String]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for line in trace {
        for b in line.bytes().chain(std::iter::once(b'\n')) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_numbered_by_first_appearance() {
        let mut names = HashMap::new();
        let a = "part-00000-0f8fad5b-d9cb-469f-a165-70867728950e-c000.snappy.parquet";
        let b = "deletion_vector_7c9e6679-7425-40de-944b-e07fc1f90ae7.bin";
        assert_eq!(canonical(b, &mut names), "deletion_vector_#0.bin");
        assert_eq!(
            canonical(a, &mut names),
            "part-00000-#1-c000.snappy.parquet"
        );
        assert_eq!(canonical(b, &mut names), "deletion_vector_#0.bin");
    }
}
