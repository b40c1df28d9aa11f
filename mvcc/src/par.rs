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
