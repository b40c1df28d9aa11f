//! Running engine calls with the GIL released, and stopping them on Ctrl-C.
//!
//! Every call that touches storage or decodes data goes through [`run`]: the GIL is
//! released for its whole duration, so other Python threads keep running (a counter thread
//! keeps counting during a 1M-row write). Python runs signal handlers only on the main
//! thread and only while it holds the GIL, so on the main thread the operation runs on a
//! worker thread while the calling thread wakes every [`POLL`] to run them
//! (`PyErr_CheckSignals`): on `KeyboardInterrupt` it raises the operation's [`Interrupt`]
//! flag, waits for the operation to stop (between files, bins or batches: scans, writes and
//! OPTIMIZE check it), and raises the `KeyboardInterrupt`. An operation that finished in
//! the meantime (its commit landed) returns its result: an interrupt never hides a commit.
//! Off the main thread no signal can arrive, and the operation runs on the calling thread.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pyo3::prelude::*;

/// How often the main thread runs Python's signal handlers while an operation runs.
const POLL: Duration = Duration::from_millis(25);

/// The Python thread id (`threading.get_ident()`) of the main thread.
static MAIN_THREAD: OnceLock<u64> = OnceLock::new();

/// Records the main thread's id (at import).
pub(crate) fn remember_main_thread(py: Python<'_>) -> PyResult<()> {
    let ident: u64 = py
        .import("threading")?
        .call_method0("main_thread")?
        .getattr("ident")?
        .extract()?;
    let _ = MAIN_THREAD.set(ident);
    Ok(())
}

fn on_main_thread(py: Python<'_>) -> bool {
    let current = py
        .import("threading")
        .and_then(|t| t.call_method0("get_ident"))
        .and_then(|i| i.extract::<u64>());
    matches!((current, MAIN_THREAD.get()), (Ok(c), Some(m)) if c == *m)
}

/// The flag an operation checks between units of work; raised on Ctrl-C.
#[derive(Debug, Clone, Default)]
pub(crate) struct Interrupt(Arc<AtomicBool>);

impl Interrupt {
    /// Whether the operation should stop.
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The flag itself, for options that take one (`OptimizeOptions::interrupt`).
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `f` with the GIL released (see the module documentation). `f` gets the
/// operation's [`Interrupt`]; its `PyResult` is returned as is, unless Ctrl-C arrived and
/// `f` failed, when the `KeyboardInterrupt` is raised instead of `f`'s error.
pub(crate) fn run<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(&Interrupt) -> PyResult<T> + Send,
{
    let interrupt = Interrupt::default();
    if !on_main_thread(py) {
        return py.detach(|| f(&interrupt));
    }
    let (result, signal) = py.detach(|| {
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let flag = interrupt.clone();
            // The worker wakes this thread when it is done, so a short call returns at once
            // rather than at the next poll. It raises `done` before waking this thread: its
            // thread is still running then (`is_finished` is false until it has exited),
            // and a wake-up that found the worker unfinished would be consumed, leaving
            // this thread parked for a whole poll after the call returned (every engine
            // call on the main thread, e.g. in a Ray task, took up to 25 ms longer).
            let done = &done;
            let waiter = std::thread::current();
            let worker = scope.spawn(move || {
                let r = f(&flag);
                done.store(true, Ordering::Release);
                waiter.unpark();
                r
            });
            let mut signal: Option<PyErr> = None;
            while !done.load(Ordering::Acquire) && !worker.is_finished() {
                std::thread::park_timeout(POLL);
                if signal.is_none()
                    && let Err(e) = Python::attach(|py| py.check_signals())
                {
                    interrupt.set();
                    signal = Some(e);
                }
            }
            let result = match worker.join() {
                Ok(r) => r,
                Err(_) => Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "alluvium: an internal operation panicked",
                )),
            };
            (result, signal)
        })
    });
    match (result, signal) {
        (Ok(value), _) => Ok(value),
        (Err(_), Some(signal)) => Err(signal),
        (Err(e), None) => Err(e),
    }
}
