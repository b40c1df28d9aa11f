//! Request counting: how many storage requests of each kind an operation made.
//!
//! Remote stores count the HTTP requests they send (retries included); `CountingStore`
//! (feature `testing`) counts the calls made through it on any store. An operation's cost is the difference of
//! two readings ([`RequestCounts::since`]) taken around it. The counters belong to the store,
//! not to the operation: when several operations share a store at the same time, each
//! difference includes the others' requests made meanwhile.

use std::fmt;
use std::ops::Add;

use crate::sync::{AtomicU64, Ordering};

/// Requests of each kind, as counted by a store (all zeros for stores that do not count).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RequestCounts {
    /// Listings (one per page returned by a remote store).
    pub list: u64,
    /// Object reads, whole or ranged.
    pub get: u64,
    /// Metadata lookups.
    pub head: u64,
    /// Object writes (conditional or not; one per request of a multipart upload).
    pub put: u64,
    /// Deletions (a bulk delete request counts once, however many objects it names).
    pub delete: u64,
    /// Anything else a remote store sent (credential refreshes, for example).
    pub other: u64,
}

impl RequestCounts {
    /// The requests made since `earlier` was read from the same store (saturating, so a
    /// reading from another store cannot underflow).
    #[must_use]
    pub fn since(&self, earlier: &RequestCounts) -> RequestCounts {
        RequestCounts {
            list: self.list.saturating_sub(earlier.list),
            get: self.get.saturating_sub(earlier.get),
            head: self.head.saturating_sub(earlier.head),
            put: self.put.saturating_sub(earlier.put),
            delete: self.delete.saturating_sub(earlier.delete),
            other: self.other.saturating_sub(earlier.other),
        }
    }

    /// All requests.
    pub fn total(&self) -> u64 {
        self.list + self.get + self.head + self.put + self.delete + self.other
    }
}

impl Add for RequestCounts {
    type Output = RequestCounts;

    fn add(self, o: RequestCounts) -> RequestCounts {
        RequestCounts {
            list: self.list + o.list,
            get: self.get + o.get,
            head: self.head + o.head,
            put: self.put + o.put,
            delete: self.delete + o.delete,
            other: self.other + o.other,
        }
    }
}

impl fmt::Display for RequestCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "LIST {} GET {} HEAD {} PUT {} DELETE {}",
            self.list, self.get, self.head, self.put, self.delete
        )?;
        if self.other > 0 {
            write!(f, " other {}", self.other)?;
        }
        Ok(())
    }
}

/// The kind of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// A listing (page).
    List,
    /// A read.
    Get,
    /// A metadata lookup.
    Head,
    /// A write.
    Put,
    /// A deletion.
    Delete,
    /// Anything else.
    Other,
}

/// Thread-safe counters behind [`RequestCounts`].
#[derive(Debug)]
pub struct RequestCounters {
    list: AtomicU64,
    get: AtomicU64,
    head: AtomicU64,
    put: AtomicU64,
    delete: AtomicU64,
    other: AtomicU64,
}

impl Default for RequestCounters {
    fn default() -> Self {
        RequestCounters {
            list: AtomicU64::new(0),
            get: AtomicU64::new(0),
            head: AtomicU64::new(0),
            put: AtomicU64::new(0),
            delete: AtomicU64::new(0),
            other: AtomicU64::new(0),
        }
    }
}

impl RequestCounters {
    /// Counts `n` requests of `kind`.
    pub fn record(&self, kind: RequestKind, n: u64) {
        let counter = match kind {
            RequestKind::List => &self.list,
            RequestKind::Get => &self.get,
            RequestKind::Head => &self.head,
            RequestKind::Put => &self.put,
            RequestKind::Delete => &self.delete,
            RequestKind::Other => &self.other,
        };
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// The counts so far.
    pub fn read(&self) -> RequestCounts {
        RequestCounts {
            list: self.list.load(Ordering::Relaxed),
            get: self.get.load(Ordering::Relaxed),
            head: self.head.load(Ordering::Relaxed),
            put: self.put.load(Ordering::Relaxed),
            delete: self.delete.load(Ordering::Relaxed),
            other: self.other.load(Ordering::Relaxed),
        }
    }
}

#[cfg(all(test, not(alluvium_loom)))]
mod tests {
    use super::*;

    #[test]
    fn differences_and_sums() {
        let c = RequestCounters::default();
        c.record(RequestKind::List, 1);
        let before = c.read();
        c.record(RequestKind::Get, 3);
        c.record(RequestKind::Put, 1);
        let d = c.read().since(&before);
        assert_eq!(
            d,
            RequestCounts {
                get: 3,
                put: 1,
                ..Default::default()
            }
        );
        assert_eq!(d.total(), 4);
        assert_eq!((d + d).get, 6);
        assert_eq!(before.since(&c.read()), RequestCounts::default());
        assert_eq!(d.to_string(), "LIST 0 GET 3 HEAD 0 PUT 1 DELETE 0");
    }
}
