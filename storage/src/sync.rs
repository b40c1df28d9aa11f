//! Synchronisation shim: `std`/`parking_lot` types normally, loom's under
//! `cfg(alluvium_loom)`, so the loom models check the same code that ships. (A private cfg
//! name, so that dependencies which react to `cfg(loom)` are unaffected.)
//!
//! Everything in alluvium that shares state between threads imports its primitives from
//! here, never from `std::sync` directly.

#[cfg(not(alluvium_loom))]
mod imp {
    pub use std::sync::Arc;
    pub use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};

    /// A mutex without lock poisoning.
    #[derive(Debug, Default)]
    pub struct Mutex<T>(parking_lot::Mutex<T>);

    impl<T> Mutex<T> {
        /// Creates a mutex holding `value`.
        pub fn new(value: T) -> Self {
            Mutex(parking_lot::Mutex::new(value))
        }

        /// Locks the mutex.
        pub fn lock(&self) -> parking_lot::MutexGuard<'_, T> {
            self.0.lock()
        }
    }

    /// A reader-writer lock without lock poisoning.
    #[derive(Debug, Default)]
    pub struct RwLock<T>(parking_lot::RwLock<T>);

    impl<T> RwLock<T> {
        /// Creates a lock holding `value`.
        pub fn new(value: T) -> Self {
            RwLock(parking_lot::RwLock::new(value))
        }

        /// Shared access.
        pub fn read(&self) -> parking_lot::RwLockReadGuard<'_, T> {
            self.0.read()
        }

        /// Exclusive access.
        pub fn write(&self) -> parking_lot::RwLockWriteGuard<'_, T> {
            self.0.write()
        }
    }

    /// The guard [`Mutex::lock`] returns.
    pub type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;

    /// A condition variable to wait on with a [`Mutex`]'s guard.
    #[derive(Debug, Default)]
    pub struct Condvar(parking_lot::Condvar);

    impl Condvar {
        /// A condition variable nobody waits on yet.
        pub fn new() -> Self {
            Condvar(parking_lot::Condvar::new())
        }

        /// Releases `guard`, sleeps until notified (or spuriously woken), and locks again.
        /// Callers re-check their condition in a loop.
        pub fn wait<'a, T>(&self, mut guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
            self.0.wait(&mut guard);
            guard
        }

        /// Wakes one waiter, if any.
        pub fn notify_one(&self) {
            self.0.notify_one();
        }

        /// Wakes every waiter.
        pub fn notify_all(&self) {
            self.0.notify_all();
        }
    }

    /// Yields the current thread (a scheduling point under loom).
    pub fn yield_now() {
        std::thread::yield_now();
    }
}

#[cfg(alluvium_loom)]
mod imp {
    pub use loom::sync::Arc;
    pub use loom::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};

    /// A mutex without lock poisoning (loom-modelled).
    #[derive(Debug)]
    pub struct Mutex<T>(loom::sync::Mutex<T>);

    impl<T> Mutex<T> {
        /// Creates a mutex holding `value`.
        pub fn new(value: T) -> Self {
            Mutex(loom::sync::Mutex::new(value))
        }

        /// Locks the mutex.
        pub fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
            self.0.lock().unwrap_or_else(|e| e.into_inner())
        }
    }

    impl<T: Default> Default for Mutex<T> {
        fn default() -> Self {
            Mutex::new(T::default())
        }
    }

    /// A reader-writer lock without lock poisoning (loom-modelled).
    #[derive(Debug)]
    pub struct RwLock<T>(loom::sync::RwLock<T>);

    impl<T> RwLock<T> {
        /// Creates a lock holding `value`.
        pub fn new(value: T) -> Self {
            RwLock(loom::sync::RwLock::new(value))
        }

        /// Shared access.
        pub fn read(&self) -> loom::sync::RwLockReadGuard<'_, T> {
            self.0.read().unwrap_or_else(|e| e.into_inner())
        }

        /// Exclusive access.
        pub fn write(&self) -> loom::sync::RwLockWriteGuard<'_, T> {
            self.0.write().unwrap_or_else(|e| e.into_inner())
        }
    }

    /// The guard [`Mutex::lock`] returns.
    pub type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

    /// A condition variable to wait on with a [`Mutex`]'s guard (loom-modelled).
    #[derive(Debug, Default)]
    pub struct Condvar(loom::sync::Condvar);

    impl Condvar {
        /// A condition variable nobody waits on yet.
        pub fn new() -> Self {
            Condvar(loom::sync::Condvar::new())
        }

        /// Releases `guard`, sleeps until notified, and locks again.
        pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
            self.0.wait(guard).unwrap_or_else(|e| e.into_inner())
        }

        /// Wakes one waiter, if any.
        pub fn notify_one(&self) {
            self.0.notify_one();
        }

        /// Wakes every waiter.
        pub fn notify_all(&self) {
            self.0.notify_all();
        }
    }

    /// Yields the current thread (a scheduling point under loom).
    pub fn yield_now() {
        loom::thread::yield_now();
    }
}

pub use imp::*;
