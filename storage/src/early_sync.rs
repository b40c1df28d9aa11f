//! Making a big new file durable while it is still being written: a background
//! `fdatasync` of what has been written so far, so the closing fsync waits only for the tail.
//!
//! The write-out hint of [`crate::durable_write`] hands pages to the device early, but on a
//! virtual disk whose host caches writes (this project's test VM, and most cloud VMs) the
//! expensive part of an fsync is the cache flush it asks of the device, and a flush moves
//! every byte not yet flushed, hinted or not: on the test VM a 14 MB file took 15–20 ms to
//! fsync even 200 ms after its write-out had been started. A flush issued while the writer
//! is still encoding runs beside that work instead of after it. Measured on the test VM with
//! 14 MB written in four parts 12 ms apart: 70 ms with one fsync at the end, 57 ms with a
//! background `fdatasync` after each part.
//!
//! Contract:
//! * Durability rests only on the caller's closing fsync, as before; an early sync only
//!   makes that fsync shorter. It syncs the same open file description (a `dup` of the
//!   caller's descriptor).
//! * An early sync's error is never dropped: on Linux a failed fsync reports its error once
//!   per open file description and may mark the lost pages clean, so the closing fsync could
//!   succeed after it. [`EarlySync::finish`] waits for the sync in flight and returns the
//!   first error any of them had; the caller treats it as a failed fsync.
//! * At most one sync per file is in flight, and at most [`MAX_IN_FLIGHT`] in the process,
//!   each on its own short-lived thread (blocked in the kernel, not using a core): a write
//!   of thousands of partition files does not start thousands of threads. When no slot is
//!   free, or a thread cannot be started, the file simply waits for its closing fsync.

use std::fs::File;
use std::io;
// A process-wide slot count, not shared state that a loom model could reach: local files
// are outside the models, and a wrong count only changes when syncs start, never what is
// durable.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;

/// Bytes written since the last early sync before another is started: the write-out
/// hint's chunk, so a chunk not covered by a sync gets the hint instead.
pub(crate) const EARLY_SYNC_BYTES: u64 = crate::durable_write::CHUNK as u64;

/// Most early syncs in flight in the process at once.
pub(crate) const MAX_IN_FLIGHT: usize = 4;

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// Takes one of the process's [`MAX_IN_FLIGHT`] slots, if one is free.
fn take_slot() -> Option<Slot> {
    IN_FLIGHT
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < MAX_IN_FLIGHT).then_some(n + 1)
        })
        .ok()
        .map(|_| Slot)
}

/// A taken slot, given back when dropped (by the sync's thread, when it ends).
struct Slot;

impl Drop for Slot {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The early syncs of one file being written. See the module documentation.
#[derive(Debug, Default)]
pub(crate) struct EarlySync {
    /// Bytes of the file covered by the last sync started.
    started_at: u64,
    in_flight: Option<JoinHandle<io::Result<()>>>,
    /// The first error an early sync returned.
    failed: Option<io::Error>,
}

impl EarlySync {
    /// Called after each write, with the file's length so far: starts a sync of `file` when
    /// [`EARLY_SYNC_BYTES`] were written since the last one started and none is in flight.
    /// Returns whether it started one (else the caller may hint the write-out instead).
    pub(crate) fn after_write(&mut self, file: &File, written: u64) -> bool {
        if written.saturating_sub(self.started_at) < EARLY_SYNC_BYTES {
            return false;
        }
        if self.in_flight.as_ref().is_some_and(|h| !h.is_finished()) {
            return false;
        }
        self.reap();
        let Some(slot) = take_slot() else {
            return false;
        };
        let Ok(dup) = file.try_clone() else {
            return false;
        };
        let spawned = std::thread::Builder::new()
            .name("alluvium-sync".into())
            .spawn(move || {
                let _slot = slot;
                dup.sync_data()
            });
        match spawned {
            Ok(handle) => {
                self.in_flight = Some(handle);
                self.started_at = written;
                true
            }
            // The closure, and the slot with it, was dropped.
            Err(_) => false,
        }
    }

    /// Waits for the sync in flight, keeping its error.
    fn reap(&mut self) {
        if let Some(handle) = self.in_flight.take() {
            let outcome = handle
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the early sync's thread panicked")));
            if let Err(e) = outcome
                && self.failed.is_none()
            {
                self.failed = Some(e);
            }
        }
    }

    /// Waits for the sync in flight and returns the first error of any early sync. Call it
    /// before the closing fsync, and fail the file if it fails.
    ///
    /// # Errors
    /// The first early sync's error.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        self.reap();
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
impl EarlySync {
    /// Makes this file's syncs look as if one had failed with `e` (for the tests of callers).
    pub(crate) fn fail_with(&mut self, e: io::Error) {
        self.failed = Some(e);
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::time::{Duration, Instant};

    use super::*;

    /// Whether a sync starts at `written` within a few seconds of asking again: another
    /// test (the limit's) may hold every process slot for a moment, which only a refusal
    /// for another reason outlasts.
    fn starts(early: &mut EarlySync, file: &File, written: u64) -> bool {
        let give_up = Instant::now() + Duration::from_secs(5);
        loop {
            if early.after_write(file, written) {
                return true;
            }
            if Instant::now() > give_up {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn syncs_start_once_per_step_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = File::create_new(dir.path().join("f")).unwrap();
        let mut early = EarlySync::default();
        let step = usize::try_from(EARLY_SYNC_BYTES).unwrap();
        file.write_all(&vec![7u8; step - 1]).unwrap();
        assert!(
            !early.after_write(&file, EARLY_SYNC_BYTES - 1),
            "not a step yet"
        );
        file.write_all(&[7u8]).unwrap();
        assert!(
            starts(&mut early, &file, EARLY_SYNC_BYTES),
            "a step written"
        );
        early.finish().unwrap();
        assert!(
            !early.after_write(&file, 2 * EARLY_SYNC_BYTES - 1),
            "less than a step since the last start"
        );
        file.write_all(&vec![7u8; step]).unwrap();
        assert!(starts(&mut early, &file, 2 * EARLY_SYNC_BYTES));
        early.finish().unwrap();
        assert!(early.in_flight.is_none());
    }

    #[test]
    fn no_sync_starts_while_one_is_in_flight() {
        let dir = tempfile::tempdir().unwrap();
        let file = File::create_new(dir.path().join("f")).unwrap();
        let mut early = EarlySync::default();
        // A sync that ends only when the test lets it, or after two seconds (so that an
        // `after_write` that waited for it, instead of declining, fails the test rather than
        // hanging it).
        let (release, wait) = std::sync::mpsc::channel::<()>();
        early.in_flight = Some(std::thread::spawn(move || {
            let _ = wait.recv_timeout(Duration::from_secs(2));
            Ok(())
        }));
        assert!(
            !early.after_write(&file, 3 * EARLY_SYNC_BYTES),
            "a sync is in flight"
        );
        release.send(()).unwrap();
        while early.in_flight.as_ref().is_some_and(|h| !h.is_finished()) {
            std::thread::yield_now();
        }
        assert!(
            starts(&mut early, &file, 3 * EARLY_SYNC_BYTES),
            "and then one starts"
        );
        early.finish().unwrap();
    }

    #[test]
    fn an_early_syncs_error_is_returned_by_finish() {
        // A descriptor that cannot be synced: a pipe's write end (fdatasync of a pipe fails
        // with EINVAL), standing in for a device that failed a write-out.
        let (_read, write) = std::io::pipe().unwrap();
        let file = File::from(std::os::fd::OwnedFd::from(write));
        let mut early = EarlySync::default();
        assert!(starts(&mut early, &file, EARLY_SYNC_BYTES));
        assert!(
            early.finish().is_err(),
            "the error reaches the closing step"
        );
        assert!(early.finish().is_ok(), "and is reported once");
    }

    #[test]
    fn no_more_than_the_process_limit_are_in_flight() {
        let slots: Vec<Slot> = std::iter::from_fn(take_slot).take(64).collect();
        // Other tests may hold slots meanwhile, so only the bound is certain.
        assert!(slots.len() <= MAX_IN_FLIGHT, "{}", slots.len());
    }
}
