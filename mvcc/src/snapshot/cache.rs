//! A shared cache of the newest snapshot a table handle has seen (SPEC.md §8).
//!
//! Invariants (loom-checked in `mvcc/tests/loom_cache.rs`):
//! 1. A reader gets either nothing or a whole, immutable value that some thread published
//!    (values are `Arc`-shared, never mutated in place).
//! 2. The cached version never goes backwards: publishing an older value than the cached
//!    one is a no-op, so a thread that saw version v never later sees a version below v.

use alluvium_storage::sync::{Arc, Mutex};

/// Something with a version.
pub trait Versioned {
    /// The version.
    fn version(&self) -> u64;
}

impl Versioned for super::Snapshot {
    fn version(&self) -> u64 {
        super::Snapshot::version(self)
    }
}

/// The newest value published so far.
#[derive(Debug)]
pub struct VersionedCache<T> {
    slot: Mutex<Option<Arc<T>>>,
}

impl<T> Default for VersionedCache<T> {
    fn default() -> Self {
        VersionedCache {
            slot: Mutex::new(None),
        }
    }
}

impl<T: Versioned> VersionedCache<T> {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The newest value published, if any.
    pub fn get(&self) -> Option<Arc<T>> {
        self.slot.lock().clone()
    }

    /// Publishes `value` unless a newer (or equal) version is cached; returns the value now
    /// cached (the newest of the two).
    pub fn publish(&self, value: Arc<T>) -> Arc<T> {
        let mut slot = self.slot.lock();
        match slot.as_ref() {
            Some(current) if current.version() >= value.version() => current.clone(),
            _ => {
                *slot = Some(value.clone());
                value
            }
        }
    }
}
