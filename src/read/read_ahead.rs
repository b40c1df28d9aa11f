//! Ordered read-ahead on the rayon pool: the one way commands decode files ahead of the
//! thread that consumes them (DML target reads, change-feed reads).
//!
//! Decoding is the costly part of these reads and files are independent, so files are
//! decoded on the pool while the calling thread consumes earlier ones, in task order. The
//! read-ahead slides: as soon as the consumer takes a result, the next task starts, so the
//! pool never idles waiting for the slowest file of a window or for the consumer. Memory
//! holds at most `depth` results ahead of the consumer.
//!
//! Two cases run in the foreground instead:
//! * called from a rayon worker (an embedder's pool): tasks go window by window with
//!   `par_iter`, because a worker blocked waiting for a job queued behind it could deadlock a
//!   small pool;
//! * a single task: it runs on the calling thread, and the pool is never started (a one-row
//!   DELETE in a fresh process does not pay for spawning worker threads).

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, sync_channel};

use rayon::prelude::*;

use crate::{Error, Result};

/// The work done for one task.
type ReadFn<T, U> = Arc<dyn Fn(T) -> Result<U> + Send + Sync>;

/// How many results may wait ahead of the consumer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Depth {
    /// This many (at least one).
    Fixed(usize),
    /// This many per thread of the current pool, asked of the pool only when more than one
    /// task is read (asking starts the global pool).
    PerThread(usize),
}

/// An iterator over `read(task)` for each task, in task order (see the module docs).
pub(crate) struct ReadAhead<T, U> {
    read: ReadFn<T, U>,
    queued: std::vec::IntoIter<T>,
    /// Tasks running on the pool, oldest first.
    ahead: VecDeque<Receiver<Result<U>>>,
    /// Results computed in the foreground, not yet taken.
    done: VecDeque<Result<U>>,
    depth: usize,
    foreground: bool,
}

impl<T, U> std::fmt::Debug for ReadAhead<T, U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadAhead")
            .field("queued", &self.queued.len())
            .field("ahead", &self.ahead.len())
            .field("done", &self.done.len())
            .field("depth", &self.depth)
            .field("foreground", &self.foreground)
            .finish()
    }
}

impl<T: Send + 'static, U: Send + 'static> ReadAhead<T, U> {
    /// Reads `tasks` with at most `depth` results ahead of the consumer. Nothing starts
    /// before the first call to `next`.
    pub(crate) fn new(
        tasks: Vec<T>,
        depth: Depth,
        read: impl Fn(T) -> Result<U> + Send + Sync + 'static,
    ) -> Self {
        let single = tasks.len() < 2;
        let foreground = single || rayon::current_thread_index().is_some();
        let depth = match depth {
            _ if single => 1,
            Depth::Fixed(n) => n,
            Depth::PerThread(n) => rayon::current_num_threads().saturating_mul(n),
        };
        ReadAhead {
            read: Arc::new(read),
            queued: tasks.into_iter(),
            ahead: VecDeque::new(),
            done: VecDeque::new(),
            depth: depth.max(1),
            foreground,
        }
    }

    /// Starts the next queued task on the pool; false when none is left.
    fn launch_next(&mut self) -> bool {
        let Some(task) = self.queued.next() else {
            return false;
        };
        let (tx, rx) = sync_channel(1);
        let read = self.read.clone();
        rayon::spawn(move || {
            // A panic on a spawned job would abort the process: it becomes this task's error.
            let result = catch_unwind(AssertUnwindSafe(|| read(task))).unwrap_or_else(|_| {
                Err(Error::InvalidArgument("a reading thread panicked".into()))
            });
            // The consumer may have stopped meanwhile: nobody wants the result then.
            let _ = tx.send(result);
        });
        self.ahead.push_back(rx);
        true
    }

    /// Computes the next window of tasks on the calling thread (and, for more than one, the
    /// current pool); false when none is left.
    fn fill_foreground(&mut self) -> bool {
        let window: Vec<T> = self.queued.by_ref().take(self.depth).collect();
        match window.len() {
            0 => return false,
            1 => {
                for task in window {
                    self.done.push_back((self.read)(task));
                }
            }
            _ => {
                let read = &self.read;
                let results: Vec<Result<U>> = window.into_par_iter().map(|t| read(t)).collect();
                self.done.extend(results);
            }
        }
        true
    }
}

impl<T: Send + 'static, U: Send + 'static> Iterator for ReadAhead<T, U> {
    type Item = Result<U>;

    fn next(&mut self) -> Option<Result<U>> {
        if self.foreground {
            if self.done.is_empty() && !self.fill_foreground() {
                return None;
            }
            return self.done.pop_front();
        }
        // Keep `depth` reads in flight, and refill the slot this call takes before waiting.
        while self.ahead.len() < self.depth && self.launch_next() {}
        let rx = self.ahead.pop_front()?;
        self.launch_next();
        Some(rx.recv().unwrap_or_else(|_| {
            Err(Error::InvalidArgument(
                "a reading thread stopped without a result".into(),
            ))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn squares(n: u64, depth: usize) -> Vec<u64> {
        ReadAhead::new((0..n).collect(), Depth::Fixed(depth), |i: u64| Ok(i * i))
            .collect::<Result<Vec<_>>>()
            .unwrap_or_default()
    }

    #[test]
    fn results_come_in_task_order_whatever_the_depth() {
        let want: Vec<u64> = (0..50).map(|i| i * i).collect();
        for depth in [0, 1, 2, 7, 50, 100] {
            assert_eq!(squares(50, depth), want, "depth {depth}");
        }
        assert!(squares(0, 4).is_empty());
        assert_eq!(squares(1, 4), vec![0]);
    }

    #[test]
    fn tasks_finishing_out_of_order_are_still_yielded_in_order() {
        // Early tasks sleep longest, so later ones finish first on the pool.
        let got: Vec<u64> = ReadAhead::new((0..8u64).collect(), Depth::PerThread(2), |i: u64| {
            std::thread::sleep(std::time::Duration::from_millis(8 - i));
            Ok(i)
        })
        .collect::<Result<Vec<_>>>()
        .unwrap_or_default();
        assert_eq!(got, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn an_error_is_yielded_at_its_place() {
        let got: Vec<Result<u64>> =
            ReadAhead::new((0..5u64).collect(), Depth::Fixed(2), |i: u64| {
                if i == 3 {
                    Err(Error::InvalidArgument(format!("task {i}")))
                } else {
                    Ok(i)
                }
            })
            .collect();
        assert_eq!(got.len(), 5);
        assert!(got[..3].iter().all(Result::is_ok));
        assert!(matches!(&got[3], Err(Error::InvalidArgument(m)) if m == "task 3"));
        assert!(got[4].is_ok());
    }

    #[test]
    fn a_panicking_task_is_an_error_not_a_hang() {
        let got: Vec<Result<u64>> =
            ReadAhead::new((0..3u64).collect(), Depth::Fixed(3), |i: u64| {
                if i == 1 {
                    panic!("boom");
                }
                Ok(i)
            })
            .collect();
        assert!(got[0].is_ok());
        assert!(matches!(&got[1], Err(Error::InvalidArgument(_))));
        assert!(got[2].is_ok());
    }

    #[test]
    fn on_a_rayon_worker_reads_run_in_the_foreground() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build();
        let Ok(pool) = pool else {
            return;
        };
        // One worker blocked on a job queued behind it would deadlock: this must finish.
        let got = pool.install(|| squares(20, 4));
        assert_eq!(got, (0..20).map(|i| i * i).collect::<Vec<_>>());
    }
}
