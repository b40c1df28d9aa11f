//! The group-commit queue's waits, made visible to an observer (cargo feature
//! `planted-bugs`, for the deterministic simulator `alluvium-sim` only; never for
//! embedders).
//!
//! A member of a group commit sleeps on a condvar until a leader delivers its outcome or
//! hands it the leadership, and a writer finding the queue full sleeps until a leader makes
//! room ([`queue`](super::queue)). A scheduler that runs one thread at a time cannot see
//! those sleeps: it would keep the token with a thread that sleeps, and never give it to the
//! thread that would wake it. This module owns the three calls that tell it:
//! [`WaitObserver::will_wait`] (the calling thread is about to sleep until another wakes
//! it), [`WaitObserver::wake`] (the calling thread is about to wake the sleepers of a key)
//! and [`WaitObserver::resumed`] (a sleeper woke; it may block here until it may run
//! again). The observer is per thread ([`observe_thread`]), like the seeded ids: threads
//! that register none, and every build without the feature, call nothing (the functions
//! the queue calls are empty then).

/// Told about the group-commit queue's waits on the threads that registered it.
///
/// `key` names what is waited for (one member's slot, or the queue's room): equal keys
/// mean the same wait, for as long as somebody sleeps on it. Keys carry no order.
pub trait WaitObserver: Send + Sync {
    /// The calling thread is about to sleep until a thread calls [`wake`](Self::wake) with
    /// `key`. Called once per sleep, before it, while holding only the lock that the
    /// sleep releases (so the wake cannot be missed).
    fn will_wait(&self, key: usize);
    /// The calling thread is about to wake every thread sleeping on `key` (none, possibly).
    /// Called after it set what ends the sleep, under the lock the sleeper checks that
    /// with: so the [`will_wait`](Self::will_wait) of every sleep this wake ends came
    /// before it, and a thread that checks after it does not sleep.
    fn wake(&self, key: usize);
    /// The calling thread, which had said [`will_wait`](Self::will_wait) with `key`, woke;
    /// the observer may block it here until it may run again. Called with no lock of the
    /// queue held.
    fn resumed(&self, key: usize);
}

#[cfg(all(feature = "planted-bugs", not(alluvium_loom)))]
mod imp {
    use std::cell::RefCell;
    use std::sync::Arc;

    use super::WaitObserver;

    thread_local! {
        /// This thread's observer, if it registered one.
        static OBSERVER: RefCell<Option<Arc<dyn WaitObserver>>> = const { RefCell::new(None) };
    }

    /// Registers `observer` for the calling thread (`None`: removes it).
    pub fn observe_thread(observer: Option<Arc<dyn WaitObserver>>) {
        OBSERVER.with(|o| *o.borrow_mut() = observer);
    }

    fn with(f: impl FnOnce(&dyn WaitObserver)) {
        // Cloned out first: the observer may block, and must not do so inside the borrow.
        let observer = OBSERVER.with(|o| o.borrow().clone());
        if let Some(o) = observer {
            f(o.as_ref());
        }
    }

    pub(crate) fn will_wait(key: usize) {
        with(|o| o.will_wait(key));
    }

    pub(crate) fn wake(key: usize) {
        with(|o| o.wake(key));
    }

    pub(crate) fn resumed(key: usize) {
        with(|o| o.resumed(key));
    }
}

#[cfg(not(all(feature = "planted-bugs", not(alluvium_loom))))]
mod imp {
    // Without the feature (or under loom) nobody observes: nothing to call.
    #[inline(always)]
    pub(crate) fn will_wait(_key: usize) {}

    #[inline(always)]
    pub(crate) fn wake(_key: usize) {}

    #[inline(always)]
    pub(crate) fn resumed(_key: usize) {}
}

#[cfg(all(feature = "planted-bugs", not(alluvium_loom)))]
pub use imp::observe_thread;
pub(crate) use imp::{resumed, wake, will_wait};

#[cfg(all(test, feature = "planted-bugs", not(alluvium_loom)))]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    use super::super::queue::{BatchLimits, GroupQueue, Weight, WhenFull};
    use super::*;

    /// Records what each thread was told, in order.
    struct Log(Mutex<Vec<(&'static str, String, usize)>>);

    impl WaitObserver for Log {
        fn will_wait(&self, key: usize) {
            self.push("will_wait", key);
        }
        fn wake(&self, key: usize) {
            self.push("wake", key);
        }
        fn resumed(&self, key: usize) {
            self.push("resumed", key);
        }
    }

    impl Log {
        fn push(&self, what: &'static str, key: usize) {
            let name = std::thread::current().name().unwrap_or("").to_string();
            self.0.lock().unwrap().push((what, name, key));
        }
    }

    /// A member that sleeps while a leader commits says so before it sleeps; the leader
    /// wakes that same key (handing it the leadership) before it runs on; the member
    /// resumes after.
    #[test]
    fn a_sleeping_member_is_announced_woken_and_resumed() {
        let log = Arc::new(Log(Mutex::new(Vec::new())));
        let q: Arc<GroupQueue<u32, u32>> = Arc::new(GroupQueue::new(
            8,
            WhenFull::Block,
            BatchLimits {
                max_actions: 1,
                max_bytes: usize::MAX,
            },
        ));
        let inside = Arc::new(AtomicBool::new(false));
        let spawn = |name: &str, item: u32| {
            let (q, log, inside) = (q.clone(), log.clone(), inside.clone());
            std::thread::Builder::new()
                .name(name.to_string())
                .spawn(move || {
                    observe_thread(Some(log.clone()));
                    let weight = Weight {
                        actions: 1,
                        bytes: 1,
                    };
                    let out = q.submit(
                        item,
                        weight,
                        vec![],
                        |b| {
                            // The first leader commits only once the member sleeps.
                            if item == 1 {
                                inside.store(true, Ordering::SeqCst);
                                while !log.0.lock().unwrap().iter().any(|e| e.0 == "will_wait") {
                                    std::thread::yield_now();
                                }
                            }
                            b
                        },
                        || 0,
                    );
                    observe_thread(None);
                    out.unwrap()
                })
                .unwrap()
        };
        let leader = spawn("leader", 1);
        while !inside.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        let member = spawn("member", 2);
        assert_eq!(leader.join().unwrap(), 1);
        assert_eq!(member.join().unwrap(), 2);
        let events = log.0.lock().unwrap().clone();
        let slept: Vec<_> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| e.1 == "member" && e.0 != "wake")
            .collect();
        assert_eq!(slept.len(), 2, "{events:?}");
        let ((asleep, a), (resumed, b)) = (slept[0], slept[1]);
        assert_eq!((a.0, b.0, a.2), ("will_wait", "resumed", b.2), "{events:?}");
        let woke = events
            .iter()
            .position(|e| e.0 == "wake" && e.1 == "leader" && e.2 == a.2)
            .expect("the leader woke the member's key");
        assert!(asleep < woke && woke < resumed, "{events:?}");
    }
}
