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
