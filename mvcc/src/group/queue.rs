//! The queue of a group commit and the hand-off of its leadership (SPEC.md §35). Generic
//! over what is queued (`T`) and what each member gets back (`O`), so that the loom model
//! (`mvcc/tests/loom_group.rs`) checks this very code with stand-in members.
//!
//! The protocol, with no timer anywhere:
//! 1. A writer pushes its member and, when no batch is being committed (`leading` is
//!    false), becomes the leader at once: a writer alone never waits for company.
//! 2. Otherwise it sleeps on its own slot until a leader delivers its outcome, or hands it
//!    the leadership.
//! 3. The leader drains a batch from the front of the queue: members in order while the
//!    batch stays within the limits (the first member is always taken, however large), and
//!    skipping (leaving queued, in place) a member that shares a key with one already in
//!    the batch. It commits the batch with no lock held and delivers every outcome.
//! 4. If its own member was in the batch, it hands the leadership to the member now at the
//!    front (or clears `leading` when the queue is empty) and returns its outcome;
//!    otherwise it leads again, and its member is nearer the front each time.
//!
//! Invariants (checked by the loom model):
//! 1. At most one batch is being committed at any time.
//! 2. Every queued member is in exactly one batch, and its writer gets exactly the outcome
//!    the commit produced for it.
//! 3. While members are queued, a leader exists or has been handed the leadership, so no
//!    member is stranded.
//! 4. At most `capacity` members wait; a writer that finds the queue full waits for room
//!    ([`WhenFull::Block`]) or is refused without being queued ([`WhenFull::Busy`]).
//! 5. Two members that share a key are never in one batch.
//!
//! Every sleep here (a member awaiting its turn, a writer awaiting room) and every wake is
//! also told to the thread's observer, if it has one ([`waits`](super::waits); feature
//! `planted-bugs`, for the deterministic simulator; nothing is called without it).

use std::collections::{HashSet, VecDeque};

use alluvium_storage::sync::{Arc, Condvar, Mutex};

/// What a writer does when the group-commit queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WhenFull {
    /// Wait until a leader drains the queue (the default): back-pressure.
    #[default]
    Block,
    /// Fail at once with [`QueueFull`] (`MvccError::Busy` above this module), leaving the
    /// decision to the embedder.
    Busy,
}

/// How much a member weighs against a batch's limits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Weight {
    /// Log actions (adds and application transactions).
    pub actions: usize,
    /// Bytes of action JSON, estimated.
    pub bytes: usize,
}

/// The most one batch may weigh; a single member heavier than this is a batch of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLimits {
    /// Most actions per batch.
    pub max_actions: usize,
    /// Most bytes of action JSON per batch.
    pub max_bytes: usize,
}

/// The queue was full and the queue refuses rather than waits ([`WhenFull::Busy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueFull {
    /// The queue's capacity, in members.
    pub capacity: usize,
}

/// What a waiting writer is told.
enum Signal<O> {
    /// Nothing yet.
    Wait,
    /// Lead the next batch.
    Lead,
    /// The member's outcome.
    Done(O),
}

/// Where one writer waits.
struct Slot<O> {
    signal: Mutex<Signal<O>>,
    wake: Condvar,
}

impl<O> Slot<O> {
    fn new() -> Self {
        Slot {
            signal: Mutex::new(Signal::Wait),
            wake: Condvar::new(),
        }
    }

    /// The key naming this slot's wait to an observer ([`waits`](super::waits)).
    fn key(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    fn deliver(&self, signal: Signal<O>) {
        let mut guard = self.signal.lock();
        *guard = signal;
        // Told under the lock the sleeper checks its signal with, after the signal is set:
        // a sleeper that announced its sleep did so before this, and one that did not
        // will find the signal and not sleep.
        super::waits::wake(self.key());
        drop(guard);
        self.wake.notify_one();
    }

    /// Sleeps until told: `Some(outcome)`, or `None` to lead.
    fn await_turn(&self) -> Option<O> {
        let mut slept = false;
        let told = {
            let mut guard = self.signal.lock();
            loop {
                match std::mem::replace(&mut *guard, Signal::Wait) {
                    Signal::Wait => {
                        if !slept {
                            super::waits::will_wait(self.key());
                            slept = true;
                        }
                        guard = self.wake.wait(guard);
                    }
                    Signal::Lead => break None,
                    Signal::Done(o) => break Some(o),
                }
            }
        };
        if slept {
            // With no lock held: an observer may hold this thread until it may run.
            super::waits::resumed(self.key());
        }
        told
    }
}

/// A queued member.
struct Entry<T, O> {
    slot: Arc<Slot<O>>,
    item: T,
    weight: Weight,
    keys: Vec<String>,
}

struct State<T, O> {
    queue: VecDeque<Entry<T, O>>,
    /// A leader exists (committing, or handed the leadership and about to).
    leading: bool,
}

/// The bounded queue of one group committer. See the module documentation.
pub struct GroupQueue<T, O> {
    state: Mutex<State<T, O>>,
    /// Writers waiting for room ([`WhenFull::Block`]).
    room: Condvar,
    capacity: usize,
    when_full: WhenFull,
    limits: BatchLimits,
}

impl<T, O> std::fmt::Debug for GroupQueue<T, O> {
    /// Hand-written: the queued members are not printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupQueue")
            .field("capacity", &self.capacity)
            .field("when_full", &self.when_full)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl<T, O> GroupQueue<T, O> {
    /// A queue holding at most `capacity` members (at least one), batching within
    /// `limits`.
    pub fn new(capacity: usize, when_full: WhenFull, limits: BatchLimits) -> Self {
        GroupQueue {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                leading: false,
            }),
            room: Condvar::new(),
            capacity: capacity.max(1),
            when_full,
            limits,
        }
    }

    /// The key naming the wait for room to an observer ([`waits`](super::waits)).
    fn room_key(&self) -> usize {
        std::ptr::from_ref(&self.room) as usize
    }

    /// Members waiting (queued, not yet drained into a batch).
    pub fn queued(&self) -> usize {
        self.state.lock().queue.len()
    }

    /// Queues `item` and returns its outcome: committed by whichever writer leads, perhaps
    /// this one. `keys` are the member's exclusive keys (no batch holds two members sharing
    /// one). `commit` is what this writer runs if it leads: it gets a batch (in queue order)
    /// and returns one outcome per member, in the same order; a missing outcome is filled
    /// with `orphan()`. Neither may panic: a panicking leader strands the members it
    /// drained.
    ///
    /// # Errors
    /// [`QueueFull`] when the queue is full and refuses ([`WhenFull::Busy`]), with the
    /// item, which was not queued.
    pub fn submit(
        &self,
        item: T,
        weight: Weight,
        keys: Vec<String>,
        commit: impl FnMut(Vec<T>) -> Vec<O>,
        orphan: impl Fn() -> O,
    ) -> Result<O, (QueueFull, T)> {
        let slot = Arc::new(Slot::new());
        let lead = {
            let mut st = self.state.lock();
            while st.queue.len() >= self.capacity {
                match self.when_full {
                    WhenFull::Busy => {
                        let full = QueueFull {
                            capacity: self.capacity,
                        };
                        return Err((full, item));
                    }
                    WhenFull::Block => {
                        super::waits::will_wait(self.room_key());
                        drop(self.room.wait(st));
                        // With no lock held: an observer may hold this thread until it
                        // may run; then the queue is looked at again.
                        super::waits::resumed(self.room_key());
                        st = self.state.lock();
                    }
                }
            }
            st.queue.push_back(Entry {
                slot: slot.clone(),
                item,
                weight,
                keys,
            });
            !std::mem::replace(&mut st.leading, true)
        };
        if !lead && let Some(outcome) = slot.await_turn() {
            return Ok(outcome);
        }
        Ok(self.lead(&slot, commit, orphan))
    }

    /// Leads batches until this writer's own member has been committed; then hands the
    /// leadership on.
    fn lead(
        &self,
        mine: &Arc<Slot<O>>,
        mut commit: impl FnMut(Vec<T>) -> Vec<O>,
        orphan: impl Fn() -> O,
    ) -> O {
        loop {
            let batch = {
                let mut st = self.state.lock();
                let batch = self.drain(&mut st);
                // Room was made for writers waiting on a full queue (told under the lock
                // they check for room with, as in `Slot::deliver`).
                super::waits::wake(self.room_key());
                batch
            };
            self.room.notify_all();
            let mut slots = Vec::with_capacity(batch.len());
            let mut items = Vec::with_capacity(batch.len());
            for e in batch {
                slots.push(e.slot);
                items.push(e.item);
            }
            let mut outcomes = commit(items).into_iter();
            let mut own = None;
            for slot in slots {
                let outcome = outcomes.next().unwrap_or_else(&orphan);
                if Arc::ptr_eq(&slot, mine) {
                    own = Some(outcome);
                } else {
                    slot.deliver(Signal::Done(outcome));
                }
            }
            if let Some(outcome) = own {
                let mut st = self.state.lock();
                match st.queue.front() {
                    Some(next) => next.slot.deliver(Signal::Lead),
                    None => st.leading = false,
                }
                return outcome;
            }
            // Our member was left for a later batch (limits, or a key already taken): it is
            // still queued, and we still lead.
        }
    }

    /// Takes the next batch off the queue (module documentation, step 3). Never empty
    /// while the queue is not: the front member is always taken.
    fn drain(&self, st: &mut State<T, O>) -> Vec<Entry<T, O>> {
        let mut batch: Vec<Entry<T, O>> = Vec::new();
        let mut total = Weight::default();
        let mut taken: HashSet<String> = HashSet::new();
        let mut i = 0;
        while i < st.queue.len() {
            let Some(e) = st.queue.get(i) else { break };
            if e.keys.iter().any(|k| taken.contains(k)) && !shares_keys() {
                i += 1;
                continue;
            }
            let actions = total.actions.saturating_add(e.weight.actions);
            let bytes = total.bytes.saturating_add(e.weight.bytes);
            if !batch.is_empty()
                && (actions > self.limits.max_actions || bytes > self.limits.max_bytes)
            {
                break;
            }
            let Some(e) = st.queue.remove(i) else { break };
            total = Weight { actions, bytes };
            taken.extend(e.keys.iter().cloned());
            batch.push(e);
        }
        batch
    }
}

/// Whether the drain lets members that share a key into one batch: never, unless planted
/// bug (f) is switched on (feature `planted-bugs`; two `txn` of one application in one
/// commit).
fn shares_keys() -> bool {
    #[cfg(all(feature = "planted-bugs", not(alluvium_loom)))]
    if crate::planted::planted(crate::planted::Bug::GroupCommitSharesAppId) {
        return true;
    }
    false
}

#[cfg(all(test, not(alluvium_loom)))]
mod tests {
    use std::sync::Barrier;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::*;

    fn limits(actions: usize) -> BatchLimits {
        BatchLimits {
            max_actions: actions,
            max_bytes: usize::MAX,
        }
    }

    fn one() -> Weight {
        Weight {
            actions: 1,
            bytes: 10,
        }
    }

    #[test]
    fn a_lone_writer_leads_its_own_batch_at_once() {
        let q: GroupQueue<u32, u32> = GroupQueue::new(4, WhenFull::Busy, limits(10));
        let mut batches = Vec::new();
        for i in 0..3 {
            let out = q
                .submit(
                    i,
                    one(),
                    vec![],
                    |b| {
                        batches.push(b.clone());
                        b.iter().map(|x| x * 10).collect()
                    },
                    || u32::MAX,
                )
                .unwrap();
            assert_eq!(out, i * 10);
        }
        assert_eq!(batches, vec![vec![0], vec![1], vec![2]]);
    }

    /// Many writers: each gets its own outcome, every member is committed once, batches
    /// never overlap in time, respect the limit and never hold one key twice.
    #[test]
    fn concurrent_writers_share_batches_and_each_gets_its_outcome() {
        let q: Arc<GroupQueue<(usize, usize), usize>> =
            Arc::new(GroupQueue::new(64, WhenFull::Block, limits(5)));
        let busy = Arc::new(AtomicBool::new(false));
        let committed = Arc::new(std::sync::Mutex::new(Vec::new()));
        let batches = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..16)
            .map(|t| {
                let (q, busy, committed, batches) =
                    (q.clone(), busy.clone(), committed.clone(), batches.clone());
                std::thread::spawn(move || {
                    for i in 0..50 {
                        // Writers 0..4 share key "k": never two of them in one batch.
                        let keys = if t < 4 { vec!["k".to_string()] } else { vec![] };
                        let out = q
                            .submit(
                                (t, i),
                                one(),
                                keys,
                                |b: Vec<(usize, usize)>| {
                                    assert!(!busy.swap(true, Ordering::SeqCst), "two leaders");
                                    assert!(!b.is_empty() && b.len() <= 5);
                                    assert!(b.iter().filter(|(w, _)| *w < 4).count() <= 1);
                                    batches.fetch_add(1, Ordering::SeqCst);
                                    committed.lock().unwrap().extend(b.iter().copied());
                                    let out = b.iter().map(|(w, i)| w * 1000 + i).collect();
                                    busy.store(false, Ordering::SeqCst);
                                    out
                                },
                                || usize::MAX,
                            )
                            .unwrap();
                        assert_eq!(out, t * 1000 + i, "another member's outcome");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut all = committed.lock().unwrap().clone();
        all.sort_unstable();
        let expected: Vec<_> = (0..16).flat_map(|t| (0..50).map(move |i| (t, i))).collect();
        assert_eq!(all, expected, "every member committed exactly once");
        assert!(batches.load(Ordering::SeqCst) <= 16 * 50);
    }

    #[test]
    fn a_full_queue_refuses_when_busy_and_the_item_is_not_queued() {
        let q: Arc<GroupQueue<u32, u32>> = Arc::new(GroupQueue::new(1, WhenFull::Busy, limits(1)));
        // The leader blocks inside its commit until a second writer has queued and a
        // third has been refused.
        let inside = Arc::new(Barrier::new(2));
        let release = Arc::new(Barrier::new(2));
        let leader = {
            let (q, inside, release) = (q.clone(), inside.clone(), release.clone());
            std::thread::spawn(move || {
                q.submit(
                    1,
                    one(),
                    vec![],
                    |b| {
                        inside.wait();
                        release.wait();
                        b
                    },
                    || 0,
                )
            })
        };
        inside.wait();
        // The leader drained its member: the queue is empty, one member fits.
        let second = {
            let q = q.clone();
            std::thread::spawn(move || q.submit(2, one(), vec![], |b| b, || 0))
        };
        // Once the second is queued the queue is full: a third is refused, not queued.
        while q.queued() < 1 {
            std::thread::yield_now();
        }
        let refused = q.submit(3, one(), vec![], |b| b, || 0);
        assert_eq!(refused, Err((QueueFull { capacity: 1 }, 3)));
        assert_eq!(q.queued(), 1);
        release.wait();
        assert_eq!(leader.join().unwrap(), Ok(1));
        assert_eq!(second.join().unwrap(), Ok(2));
    }
}
