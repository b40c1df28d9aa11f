//! Object stores for alluvium: where the bytes of a table live.
//!
//! This crate owns the storage contract every other layer relies on and knows nothing about
//! Delta. A table is a directory-like namespace of immutable objects addressed by
//! table-relative [`StorePath`]s; the one mutable primitive the commit protocol needs is an
//! atomic [`ObjectStore::put_if_absent`].
//!
//! Backends:
//! * [`LocalFsStore`]: a directory on a local filesystem; put-if-absent is a fsynced temporary
//!   file hard-linked into place (the link fails if the name exists), then a directory fsync.
//! * [`InMemoryStore`]: a mutex-protected ordered map, used by tests, benches and the loom
//!   models (it routes its locking through the [`sync`] shim).
//!
//! The contract of each method is documented on [`ObjectStore`]; SPEC.md §2 restates it and
//! names the tests that check it.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod error;
mod faulty;
mod local;
mod location;
mod memory;
mod path;
mod store;
pub mod sync;

pub use error::{Result, StorageError};
pub use faulty::{Fault, FaultyStore};
pub use local::LocalFsStore;
pub use location::FileLocation;
pub use memory::InMemoryStore;
pub use path::StorePath;
pub use store::{ObjectMeta, ObjectStore, StoreRef};
