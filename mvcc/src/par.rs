//! Parallel map over a slice: rayon normally, sequential under the loom model checker
//! (whose primitives may only be touched from loom's own threads).

/// Maps `f` over `items`, in parallel where allowed; results keep the input order.
#[cfg(not(alluvium_loom))]
pub(crate) fn map<T, R, F>(items: &[T], f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync + Send,
{
    use rayon::prelude::*;
    // One item needs no pool (and asking rayon would start its threads).
    if items.len() < 2 {
        return items.iter().map(f).collect();
    }
    items.par_iter().map(f).collect()
}

/// Maps `f` over `items` sequentially (model checking).
#[cfg(alluvium_loom)]
pub(crate) fn map<T, R, F>(items: &[T], f: F) -> Vec<R>
where
    F: Fn(&T) -> R,
{
    items.iter().map(f).collect()
}

/// Maps `f` over owned `items`, in parallel where allowed; results keep the input order.
#[cfg(not(alluvium_loom))]
pub(crate) fn map_owned<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync + Send,
{
    use rayon::prelude::*;
    if items.len() < 2 {
        return items.into_iter().map(f).collect();
    }
    items.into_par_iter().map(f).collect()
}

/// Maps `f` over owned `items` sequentially (model checking).
#[cfg(alluvium_loom)]
pub(crate) fn map_owned<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    F: Fn(T) -> R,
{
    items.into_iter().map(f).collect()
}

/// Runs `a` as a task of rayon's current pool while the calling thread runs `b`; returns
/// both results. `a`'s comes back through the slot its task fills, hence the `Option`: it
/// is always `Some` (a panic in `a` resumes in the caller), and callers map a `None` to an
/// error rather than unwrap it. For two blocking tasks of a load (a
/// listing beside a checkpoint read): the caller keeps working on its own thread instead
/// of waiting for a pool thread to steal the second task. No thread is spawned beyond the
/// pool's: called on the only thread of a one-thread pool (inside its `install`, as the
/// simulator's actors run), `a` runs on that thread after `b`, so every storage call stays
/// on it.
#[cfg(not(alluvium_loom))]
pub(crate) fn join<A, B, RA, RB>(a: A, b: B) -> (Option<RA>, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB,
    RA: Send,
{
    let mut ra = None;
    let rb = rayon::in_place_scope(|scope| {
        let slot = &mut ra;
        scope.spawn(move |_| *slot = Some(a()));
        b()
    });
    (ra, rb)
}

/// Runs `a`, then `b` (model checking).
#[cfg(alluvium_loom)]
pub(crate) fn join<A, B, RA, RB>(a: A, b: B) -> (Option<RA>, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce() -> RB,
{
    (Some(a()), b())
}
