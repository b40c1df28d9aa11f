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
//! * `RemoteStore` (cargo feature `object-store`): `s3://`, `gs://` and `az://` locations
//!   through the `object_store` crate, on a runtime the store owns or the embedder's
//!   ([`StorageOptions`]); no request spawns a thread.
//!
//! Bounded parallel requests on the caller's rayon pool: [`par::map_bounded`]. Fresh ids
//! for new files and transactions: [`ids::new_uuid`].
//!
//! Test doubles (cargo feature `testing`, for the tests of the crates above): `CountingStore`
//! counts calls by kind ([`RequestCounts`]); `FaultyStore` injects faults for the crash and
//! fault tests; `par::threads_named` counts a test pool's threads.
//!
//! The contract of each method is documented on [`ObjectStore`]; SPEC.md §2 restates it and
//! names the tests that check it.
//!
//! Stability: this crate is internal to alluvium. It is versioned with the workspace but
//! makes no semver promise of its own: its items change whenever the engine needs them to.
//! Embed alluvium through the `alluvium` facade crate, whose curated top-level API is the
//! one that is kept stable (its `internal-api` feature re-exports this crate for experts
//! who accept that).
#![deny(missing_docs)]
#![warn(unreachable_pub)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

#[cfg(feature = "object-store")]
mod blocking;
#[cfg(any(test, feature = "testing"))]
mod counting;
mod counts;
mod durable_write;
mod early_sync;
mod error;
#[cfg(any(test, feature = "testing"))]
mod faulty;
pub mod ids;
mod local;
mod local_list;
mod local_new_file;
mod local_reach;
mod location;
mod memory;
mod no_follow;
mod options;
pub mod par;
mod path;
mod prefix;
mod reach;
#[cfg(feature = "object-store")]
mod remote;
mod store;
pub mod sync;
mod temp_name;
mod uri;

#[cfg(any(test, feature = "testing"))]
pub use counting::CountingStore;
pub use counts::{RequestCounters, RequestCounts, RequestKind};
pub use error::{Result, StorageError};
#[cfg(any(test, feature = "testing"))]
pub use faulty::{Fault, FaultyStore};
pub use local::LocalFsStore;
pub use location::{FileLocation, FileLocationRef};
pub use memory::InMemoryStore;
pub use options::{PutIfAbsentSupport, REMOTE_SCHEMES, StorageOptions};
pub use path::{StorePath, StorePathRef};
pub use prefix::PrefixStore;
#[cfg(feature = "object-store")]
pub use remote::RemoteStore;
pub use store::{NewObjectWriter, ObjectMeta, ObjectStore, Publish, StoreRef};
pub use temp_name::is_temp_name;
pub use uri::{LocalRef, local_path, local_ref, remote_scheme};
