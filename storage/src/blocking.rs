//! The blocking bridge: how the synchronous storage contract drives `object_store`'s futures
//! on a tokio runtime, either one the store owns (the CLI's case) or the embedder's.
//!
//! No request spawns an OS thread. A caller outside any runtime blocks on the runtime
//! directly. A caller on a multi-thread runtime's thread (a worker, or inside its
//! `block_on`) blocks in place (`tokio::task::block_in_place`), which hands the thread's
//! other tasks to the remaining workers. A caller on a current-thread runtime cannot block
//! without stalling that runtime (and tokio refuses it), so it gets
//! [`StorageError::Unsupported`] instead of a hang or a panic.

use std::fmt;
use std::future::Future;

use tokio::runtime::{Handle, Runtime, RuntimeFlavor};

use crate::{Result, StorageError};

/// Worker threads of a runtime the store owns: they only drive I/O; the calling threads run
/// the request futures themselves.
const RUNTIME_WORKERS: usize = 2;

/// The runtime requests run on.
pub(crate) enum Bridge {
    /// A runtime the store started; shut down without blocking when dropped inside an async
    /// context (where a blocking shutdown would panic).
    Owned(Option<Runtime>),
    /// The embedder's multi-thread runtime.
    Shared(Handle),
}

impl Bridge {
    /// A bridge over `handle`, or over a runtime of the store's own if `None`; `what` names
    /// the store in errors.
    ///
    /// # Errors
    /// [`StorageError::InvalidConfig`] for a handle of a current-thread runtime (nothing
    /// would drive it while a caller blocks); [`StorageError::Io`] if the store's own
    /// runtime cannot start.
    pub(crate) fn new(handle: Option<Handle>, what: &str) -> Result<Bridge> {
        match handle {
            Some(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => Ok(Bridge::Shared(h)),
            Some(_) => Err(StorageError::InvalidConfig(format!(
                "{what}: the runtime handle must be of a multi-thread tokio runtime"
            ))),
            None => tokio::runtime::Builder::new_multi_thread()
                .worker_threads(RUNTIME_WORKERS)
                .thread_name("alluvium-io")
                .enable_all()
                .build()
                .map(|rt| Bridge::Owned(Some(rt)))
                .map_err(|e| StorageError::io("start I/O runtime", what, e)),
        }
    }

    fn handle(&self) -> Result<&Handle> {
        match self {
            Bridge::Owned(Some(rt)) => Ok(rt.handle()),
            Bridge::Owned(None) => Err(StorageError::Unsupported {
                op: "request",
                reason: "the store's runtime has shut down".into(),
            }),
            Bridge::Shared(h) => Ok(h),
        }
    }

    /// Runs `fut` to completion on the bridge's runtime, blocking the calling thread.
    ///
    /// # Errors
    /// The future's error; [`StorageError::Unsupported`] when called from a current-thread
    /// runtime (see the module docs).
    pub(crate) fn block_on<T>(&self, fut: impl Future<Output = Result<T>>) -> Result<T> {
        let handle = self.handle()?;
        let Ok(current) = Handle::try_current() else {
            return handle.block_on(fut);
        };
        if current.runtime_flavor() != RuntimeFlavor::MultiThread {
            return Err(StorageError::Unsupported {
                op: "request",
                reason: "alluvium's storage calls block; they cannot run on a current-thread \
                         tokio runtime (call them from a multi-thread runtime, from \
                         `spawn_blocking`, or from outside any runtime)"
                    .into(),
            });
        }
        // `block_in_place` leaves the runtime context for the closure, so the nested
        // `block_on` is allowed and runs the future on this very thread.
        tokio::task::block_in_place(|| handle.block_on(fut))
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if let Bridge::Owned(slot) = self
            && let Some(rt) = slot.take()
        {
            if Handle::try_current().is_ok() {
                rt.shutdown_background();
            } else {
                drop(rt);
            }
        }
    }
}

impl fmt::Debug for Bridge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bridge::Owned(_) => "Bridge::Owned",
            Bridge::Shared(_) => "Bridge::Shared",
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::thread::{self, ThreadId};
    use std::time::Duration;

    use super::*;

    /// A request stand-in that needs the runtime's timer, then says which thread ran it.
    async fn request() -> Result<ThreadId> {
        tokio::time::sleep(Duration::from_millis(1)).await;
        Ok(thread::current().id())
    }

    fn multi_thread(name: &str) -> Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(name)
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn callers_outside_a_runtime_block_on_the_stores_own() {
        let bridge = Bridge::new(None, "t").unwrap();
        assert_eq!(bridge.block_on(request()).unwrap(), thread::current().id());
    }

    #[test]
    fn callers_on_a_multi_thread_runtime_block_in_place_on_their_own_thread() {
        let caller = multi_thread("caller");
        let bridge = Arc::new(Bridge::new(None, "t").unwrap());
        // Inside the runtime's `block_on`, then on one of its workers: the request runs on
        // the calling thread itself (no helper thread is spawned).
        caller.block_on(async {
            assert_eq!(bridge.block_on(request()).unwrap(), thread::current().id());
        });
        let b = bridge.clone();
        caller
            .block_on(caller.spawn(async move {
                let worker = thread::current();
                assert_eq!(worker.name(), Some("caller"));
                assert_eq!(b.block_on(request()).unwrap(), worker.id());
            }))
            .unwrap();
        // Dropping the store's runtime inside an async context must not panic.
        caller.block_on(async move { drop(bridge) });
    }

    #[test]
    fn callers_on_a_current_thread_runtime_get_an_error_not_a_hang() {
        let caller = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let bridge = Bridge::new(None, "t").unwrap();
        let outcome = caller.block_on(async { bridge.block_on(request()) });
        assert!(
            matches!(
                outcome,
                Err(StorageError::Unsupported { op: "request", .. })
            ),
            "{outcome:?}"
        );
        caller.block_on(async move { drop(bridge) });
    }

    #[test]
    fn requests_run_on_the_embedders_runtime() {
        let embedder = multi_thread("embedder-io");
        let bridge = Bridge::new(Some(embedder.handle().clone()), "t").unwrap();
        // A task the request spawns lands on the embedder's workers.
        let worker = bridge
            .block_on(async {
                tokio::spawn(async { thread::current().name().map(String::from) })
                    .await
                    .map_err(|e| StorageError::io("join", "t", std::io::Error::other(e)))
            })
            .unwrap();
        assert_eq!(worker.as_deref(), Some("embedder-io"));
        // Dropping a shared bridge leaves the embedder's runtime running.
        drop(bridge);
        assert_eq!(embedder.block_on(async { 7 }), 7);

        let current = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert!(matches!(
            Bridge::new(Some(current.handle().clone()), "t"),
            Err(StorageError::InvalidConfig(_))
        ));
    }
}
