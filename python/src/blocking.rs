//! Running engine calls with the GIL released, and stopping them on Ctrl-C.
//!
//! Every call that touches storage or decodes data goes through [`run`]: the GIL is
//! released for its whole duration, so other Python threads keep running (a counter thread
//! keeps counting during a 1M-row write). Python runs signal handlers only on the main
//! thread and only while it holds the GIL, which the operation does not hold, so a call on
//! the main thread takes Ctrl-C itself:
//!
//! * where SIGINT is Python's default (`signal.default_int_handler`, which raises
//!   `KeyboardInterrupt`), on Unix, the operation runs on the calling thread with a SIGINT
//!   handler of its own for its duration ([`sigint`]): the handler raises the operation's
//!   [`Interrupt`] flag and tells Python a SIGINT arrived (`PyErr_SetInterrupt`, which is
//!   async-signal-safe), and Python's handler is back in place when the call returns. No
//!   thread is started and no wake-up crosses threads, which on a busy machine cost short
//!   calls several times their own time (`benches/peers/python_main_thread.py`);
//! * otherwise (a handler of the program's own, which may choose not to raise) the
//!   operation runs on a worker thread while the calling thread wakes every [`POLL`] to run
//!   the handlers (`PyErr_CheckSignals`); on `KeyboardInterrupt` it raises the flag.
//!
//! Either way the operation stops at its next check (between files, bins or batches: scans,
//! writes and OPTIMIZE check it) and the call raises the `KeyboardInterrupt`. An operation
//! that finished in the meantime (its commit landed) returns its result: an interrupt never
//! hides a commit. Off the main thread no signal handler runs, and the operation runs on the
//! calling thread.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
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

/// Builtins the checks before every call use, looked up once: `_thread.get_ident`,
/// `_signal.getsignal` and `_signal.default_int_handler`. The C modules, not `threading`
/// and `signal`: their Python wrappers cost tens of microseconds a call (an import, and
/// `signal.getsignal` converting the handler to an enum through a caught exception), more
/// than a short operation's own work.
struct Builtins {
    get_ident: Py<PyAny>,
    getsignal: Py<PyAny>,
    default_int_handler: Py<PyAny>,
}

static BUILTINS: pyo3::sync::PyOnceLock<Builtins> = pyo3::sync::PyOnceLock::new();

fn builtins(py: Python<'_>) -> PyResult<&Builtins> {
    BUILTINS.get_or_try_init(py, || {
        let thread = py.import("_thread")?;
        let signal = py.import("_signal")?;
        Ok(Builtins {
            get_ident: thread.getattr("get_ident")?.unbind(),
            getsignal: signal.getattr("getsignal")?.unbind(),
            default_int_handler: signal.getattr("default_int_handler")?.unbind(),
        })
    })
}

fn on_main_thread(py: Python<'_>) -> bool {
    let current = builtins(py)
        .and_then(|b| b.get_ident.call0(py))
        .and_then(|i| i.extract::<u64>(py));
    matches!((current, MAIN_THREAD.get()), (Ok(c), Some(m)) if c == *m)
}

/// Whether SIGINT's Python handler is the default one, which raises `KeyboardInterrupt`
/// (not a program's own handler, `SIG_IGN` or `SIG_DFL`).
#[cfg(unix)]
fn sigint_is_pythons_default(py: Python<'_>) -> bool {
    let Ok(b) = builtins(py) else {
        return false;
    };
    match b.getsignal.call1(py, (2,)) {
        Ok(current) => current.is(&b.default_int_handler),
        Err(_) => false,
    }
}

#[cfg(unix)]
mod sigint {
    //! A SIGINT handler for the duration of one call on the main thread.
    //!
    //! Invariant: [`CURRENT`] is null or points at the flag of the innermost call in
    //! progress, whose [`Guard`] holds a reference to it and clears the pointer (restoring
    //! the outer call's) before it lets the flag go; the handler only loads the pointer and
    //! stores to the flag, both async-signal-safe.

    use std::ptr;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

    use super::Interrupt;

    /// The flag of the innermost call in progress on the main thread.
    static CURRENT: AtomicPtr<AtomicBool> = AtomicPtr::new(ptr::null_mut());

    extern "C" fn on_sigint(_signum: libc::c_int) {
        let flag = CURRENT.load(Ordering::SeqCst);
        if !flag.is_null() {
            // SAFETY: by the module invariant the flag outlives its place in CURRENT.
            unsafe { (*flag).store(true, Ordering::SeqCst) };
        }
        // SAFETY: Python documents PyErr_SetInterrupt as async-signal-safe and callable
        // without the GIL; it marks SIGINT as arrived, as Python's own handler would.
        unsafe { pyo3::ffi::PyErr_SetInterrupt() };
    }

    /// Puts the previous handler (and the outer call's flag) back when dropped.
    pub(super) struct Guard {
        previous: libc::sigaction,
        outer: *mut AtomicBool,
        _flag: Arc<AtomicBool>,
    }

    /// Installs the handler for a call whose flag is `interrupt`'s. `None` (and nothing
    /// changed) if the system refuses; the call then runs without it, as Python would run
    /// a C function.
    pub(super) fn install(interrupt: &Interrupt) -> Option<Guard> {
        let flag = interrupt.flag();
        let outer = CURRENT.swap(Arc::as_ptr(&flag).cast_mut(), Ordering::SeqCst);
        // SAFETY: plain C structs zero-initialised, then filled in as sigaction(2) asks;
        // SA_RESTART so that I/O in progress is resumed rather than failed with EINTR.
        let (installed, previous) = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            let rc = libc::sigaction(libc::SIGINT, &action, &mut previous);
            (rc == 0, previous)
        };
        if !installed {
            CURRENT.store(outer, Ordering::SeqCst);
            return None;
        }
        Some(Guard {
            previous,
            outer,
            _flag: flag,
        })
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            // SAFETY: restores the action sigaction(2) returned when this guard was made.
            unsafe { libc::sigaction(libc::SIGINT, &self.previous, ptr::null_mut()) };
            CURRENT.store(self.outer, Ordering::SeqCst);
        }
    }
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
    #[cfg(unix)]
    if sigint_is_pythons_default(py) {
        let result = {
            let _handler = sigint::install(&interrupt);
            py.detach(|| f(&interrupt))
        };
        // Our handler told Python of any SIGINT it caught: Python's handler runs here.
        let signal = py.check_signals().err();
        return match (result, signal) {
            (Ok(value), _) => Ok(value),
            (Err(_), Some(signal)) => Err(signal),
            (Err(e), None) => Err(e),
        };
    }
    let (result, signal) = py.detach(|| {
        std::thread::scope(|scope| {
            let flag = interrupt.clone();
            // The worker says when its operation is done, so the call returns at once rather
            // than at the next poll. (Waking on `unpark` and then asking `is_finished` lost
            // the wake-up whenever the worker had not yet exited: the thread was still
            // tearing down, and the call waited out a whole poll, 25 ms on every write.)
            let (done, finished) = std::sync::mpsc::channel::<()>();
            let worker = scope.spawn(move || {
                let r = f(&flag);
                let _ = done.send(());
                r
            });
            let mut signal: Option<PyErr> = None;
            loop {
                match finished.recv_timeout(POLL) {
                    // Done, or the worker panicked (the sender dropped): join it below.
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                    Err(RecvTimeoutError::Timeout) => {}
                }
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
    // A SIGINT that arrived after the last poll has not run its handler yet: run it now, as
    // the other path does, so it is settled here (a finished operation's result wins) and
    // not raised by Python just after the call returned, hiding a commit that landed.
    let signal = match signal {
        Some(signal) => Some(signal),
        None => py.check_signals().err(),
    };
    match (result, signal) {
        (Ok(value), _) => Ok(value),
        (Err(_), Some(signal)) => Err(signal),
        (Err(e), None) => Err(e),
    }
}
